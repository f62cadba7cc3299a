// 64-bit indexing: a contracted forward over B·O·I > 2^31 circuits (fused path, float32, the
// cheap `real` ansatz) whose first and last rows match the reference path run on those rows
// alone. Needs the fused path: the reference would take far too long, so this fails if the
// fused path is unavailable.
#include <chrono>

#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

TEST(QkanLarge, ContractPast2To31Circuits) {
  Config cfg;
  cfg.ansatz = Ansatz::real;
  cfg.preacts_trainable = false;
  cfg.fast = false;
  cfg.dtype = DType::f32;
  cfg.B = 65536 + 3;
  cfg.I = 256;
  cfg.O = 128;
  ASSERT_GT(cfg.B * cfg.O * cfg.I, std::int64_t(1) << 31);
  const qkan::Dispatch d = qkan::explain(cfg.options(Path::automatic), cfg.dtype);
  ASSERT_EQ(d.path, Path::fused) << "the fused path is required here: " << d.reason;

  const std::uint64_t seed = seed_of(current_test_name());
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const Inputs<float> in = make_inputs<float>(cfg, seed);
  const auto t0 = std::chrono::steady_clock::now();
  const Guarded<float> y = run_contract(in, Path::fused);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fused contract forward, B*O*I = %lld: %.2f s\n", static_cast<long long>(cfg.B * cfg.O * cfg.I), secs);
  ASSERT_TRUE(y.guards_intact());

  // Reference on rows [b0, b0 + n) alone.
  auto check_rows = [&](std::int64_t b0, std::int64_t n) {
    SCOPED_TRACE(::testing::Message() << "rows " << b0 << ".." << b0 + n - 1);
    Inputs<float> part = in;
    part.cfg.B = n;
    part.x = Guarded<float>({n, cfg.I});
    for (std::int64_t k = 0; k < n * cfg.I; ++k) part.x[k] = in.x[b0 * cfg.I + k];
    const Guarded<float> ref = run_contract(part, Path::reference);
    Guarded<float> got({n, cfg.O});
    for (std::int64_t k = 0; k < n * cfg.O; ++k) got[k] = y[b0 * cfg.O + k];
    EXPECT_TRUE(all_close("y", got, ref, contract_atol(in), 0));
  };
  check_rows(cfg.B - 3, 3);
  check_rows(0, 1);
  check_rows(32768, 1);
  // Every element was written.
  for (std::size_t k = 0; k < y.size(); ++k) ASSERT_TRUE(std::isfinite(y[k])) << "y " << index_string(y.shape(), k);
}

TEST(QkanLarge, ContractBackwardPast2To31Circuits) {
  // ∂x of the last rows against the reference on those rows alone (∂θ, ∂W sum over the
  // whole batch and have no row-local oracle; they must be finite).
  Config cfg;
  cfg.ansatz = Ansatz::real;
  cfg.fast = false;
  cfg.dtype = DType::f32;
  cfg.B = 65536 + 3;
  cfg.I = 256;
  cfg.O = 128;
  const qkan::Dispatch d = qkan::explain(cfg.options(Path::automatic), cfg.dtype);
  ASSERT_EQ(d.path, Path::fused) << "the fused path is required here: " << d.reason;
  const std::uint64_t seed = seed_of(current_test_name());
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const Inputs<float> in = make_inputs<float>(cfg, seed);
  const Guarded<float> gy = random_like<float>({cfg.B, cfg.O}, seed + 1);
  const auto t0 = std::chrono::steady_clock::now();
  const GradSet<float> g = run_contract_backward(in, Path::fused, gy, {true, true, false, false, true});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fused contract backward, B*O*I = %lld: %.2f s\n", static_cast<long long>(cfg.B * cfg.O * cfg.I), secs);
  const std::int64_t n = 3, b0 = cfg.B - n;
  Inputs<float> part = in;
  part.cfg.B = n;
  part.x = Guarded<float>({n, cfg.I});
  for (std::int64_t k = 0; k < n * cfg.I; ++k) part.x[k] = in.x[b0 * cfg.I + k];
  Guarded<float> gpart({n, cfg.O});
  for (std::int64_t k = 0; k < n * cfg.O; ++k) gpart[k] = gy[b0 * cfg.O + k];
  const GradSet<float> ref = run_contract_backward(part, Path::reference, gpart, {true, false, false, false, false});
  Guarded<float> got({n, cfg.I});
  for (std::int64_t k = 0; k < n * cfg.I; ++k) got[k] = (*g.x)[b0 * cfg.I + k];
  EXPECT_TRUE(
      all_close("grad x", got, *ref.x, tol<float>.grad_abs * std::max(1.0, ref.x->max_abs()), tol<float>.grad_rel));
  for (const auto* t : {&*g.x, &*g.theta, &*g.W}) {
    ASSERT_TRUE(t->guards_intact());
    for (std::size_t k = 0; k < t->size(); ++k)
      ASSERT_TRUE(std::isfinite((*t)[k])) << to_string(t->shape()) << " " << k;
  }
}

}  // namespace
}  // namespace lockstep::test
