// The fused path against the reference path on fresh random inputs: every ansatz × measurement
// × encoding × table layout × precision, plain and contracted, forward and backward (all
// gradients). Odd sizes and B past the fused chunk (64 rows) exercise the SIMD and chunk tails.
// If the fused path is not available these tests fail with the library's exception (by design:
// they are the fused path's acceptance tests).
#include "lockstep/core/parallel.hpp"
#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

class FusedVsReference : public ::testing::TestWithParam<Config> {};

TEST_P(FusedVsReference, PlainForward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t) {
    using T = decltype(tag);
    EXPECT_EQ(qkan::solve_output_shape(cfg.options(Path::fused), in.xv(), in.thetav(), in.wv(), in.cv()),
              cfg.plain_shape());
    const Guarded<T> ref = run_solve(in, Path::reference);
    const Guarded<T> got = run_solve(in, Path::fused);
    EXPECT_TRUE(all_close("postacts", got, ref, tol<T>.fwd_abs, 0));
  });
}

TEST_P(FusedVsReference, PlainBackward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const Guarded<T> gout = random_like<T>(cfg.plain_shape(), seed + 1);
    const GradSet<T> ref = run_solve_backward(in, Path::reference, gout);
    const GradSet<T> got = run_solve_backward(in, Path::fused, gout);
    expect_grads_close(got, ref, tol<T>.grad_abs, tol<T>.grad_rel);
  });
}

TEST_P(FusedVsReference, ContractForward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t) {
    using T = decltype(tag);
    const Guarded<T> ref = run_contract(in, Path::reference);
    const Guarded<T> got = run_contract(in, Path::fused);
    EXPECT_TRUE(all_close("y", got, ref, contract_atol(in), 0));
  });
}

TEST_P(FusedVsReference, ContractBackward) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 1);
    const GradSet<T> ref = run_contract_backward(in, Path::reference, gy);
    const GradSet<T> got = run_contract_backward(in, Path::fused, gy);
    expect_grads_close(got, ref, tol<T>.grad_abs, tol<T>.grad_rel);
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, FusedVsReference, ::testing::ValuesIn(fused_vs_reference_grid()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });

// ---------------------------------------------------------------------------------------------
// Near the poles (qkan_test_util.hpp, near_pole_config): computing the fast measurement from the
// Bloch vector as z / √(1 + r), r = √(n_x² + n_y²), keeps full precision; √(1 − z²) does not.

class FusedNearPoles : public ::testing::TestWithParam<PoleParam> {};

TEST_P(FusedNearPoles, FastMeasureKeepsItsAccuracy) {
  const auto [dtype, ansatz] = GetParam();
  with_inputs(near_pole_config(dtype, ansatz), [&](auto tag, auto& in, std::uint64_t) {
    using T = decltype(tag);
    make_near_pole(in);
    const Guarded<T> ref = run_solve(in, Path::reference);
    const Guarded<T> got = run_solve(in, Path::fused);
    EXPECT_TRUE(all_close("postacts", got, ref, tol<T>.fwd_abs, 0));
    const Guarded<T> g = random_like<T>(in.cfg.plain_shape(), 7);
    expect_grads_close(run_solve_backward(in, Path::fused, g), run_solve_backward(in, Path::reference, g),
                       tol<T>.grad_abs, tol<T>.grad_rel);
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, FusedNearPoles, near_pole_params(), near_pole_name);

// ---------------------------------------------------------------------------------------------
// The fused path's results do not depend on the thread count (forward bitwise; backward up to
// the order of the per-thread double sums), and Path::automatic runs it.

class FusedThreads : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override { saved_ = num_threads(); }
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_P(FusedThreads, ResultsIndependentOfThreadCount) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const Guarded<T> gout = random_like<T>(cfg.plain_shape(), seed + 1);
    const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 2);
    set_num_threads(1);
    const Guarded<T> post1 = run_solve(in, Path::fused), y1 = run_contract(in, Path::fused);
    const GradSet<T> gp1 = run_solve_backward(in, Path::fused, gout), gc1 = run_contract_backward(in, Path::fused, gy);
    for (int nt : {2, 3, 7}) {
      SCOPED_TRACE(::testing::Message() << nt << " threads");
      set_num_threads(nt);
      EXPECT_TRUE(identical("postacts", run_solve(in, Path::fused), post1));
      EXPECT_TRUE(identical("y", run_contract(in, Path::fused), y1));
      expect_grads_close(run_solve_backward(in, Path::fused, gout), gp1, tol<T>.same, 0);
      expect_grads_close(run_contract_backward(in, Path::fused, gy), gc1, tol<T>.same, 0);
    }
  });
}

TEST_P(FusedThreads, AutomaticRunsFused) {
  const Config cfg = GetParam();
  with_inputs(cfg, [&](auto /*tag*/, const auto& in, std::uint64_t) {
    EXPECT_EQ(qkan::explain(cfg.options(Path::automatic), cfg.dtype).path, Path::fused);
    EXPECT_TRUE(identical("postacts", run_solve(in, Path::automatic), run_solve(in, Path::fused)));
    EXPECT_TRUE(identical("y", run_contract(in, Path::automatic), run_contract(in, Path::fused)));
  });
}

std::vector<Config> thread_configs() {
  std::vector<Config> out;
  for (Ansatz a : {Ansatz::pz, Ansatz::real, Ansatz::rpz})
    for (DType d : {DType::f32, DType::f64}) {
      Config c;
      c.ansatz = a;
      c.preacts_trainable = true;
      c.dtype = d;
      c.B = 333;
      c.I = 6;
      c.O = 4;
      out.push_back(c);
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Qkan, FusedThreads, ::testing::ValuesIn(thread_configs()),
                         [](const ::testing::TestParamInfo<Config>& info) { return info.param.name(); });

}  // namespace
}  // namespace lockstep::test
