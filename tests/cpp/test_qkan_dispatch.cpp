// The one dispatch point: explain() names the path a call takes and why; Path::automatic takes
// the fused path where it is implemented and falls back to the reference (bit for bit) where not
// (reps > kFusedMaxReps); Path::fused refuses what it does not implement.
#include "lockstep/core/backend.hpp"
#include "qkan_test_util.hpp"
#include "src/qkan/problem.hpp"  // kFusedMaxReps

namespace lockstep::test {
namespace {

constexpr int kMaxReps = qkan::detail::kFusedMaxReps;
static_assert(kMaxReps == 16, "the brief and these tests assume the fused kernels stop at reps = 16");

using Param = std::tuple<DType, AnsatzEnc>;
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [dtype, ae] = info.param;
  return std::string(short_name(dtype)) + "_" + short_name(ae.ansatz) +
         (qkan::encoding_active(ae.ansatz, ae.preacts_trainable) ? "_enc" : "_raw");
}

class Dispatch : public ::testing::TestWithParam<Param> {};

TEST_P(Dispatch, ExplainNamesThePath) {
  const auto [dtype, ae] = GetParam();
  Options opt;
  opt.ansatz = ae.ansatz;
  opt.preacts_trainable = ae.preacts_trainable;
  for (int reps : {1, 3, kMaxReps}) {
    SCOPED_TRACE(::testing::Message() << "reps " << reps);
    opt.reps = reps;
    for (Path p : {Path::automatic, Path::fused}) {
      opt.path = p;
      const qkan::Dispatch d = qkan::explain(opt, dtype);
      EXPECT_EQ(d.path, Path::fused) << qkan::to_string(p) << ": " << d.reason;
      EXPECT_NE(d.reason.find(qkan::to_string(ae.ansatz)), std::string::npos) << d.reason;
      EXPECT_NE(d.reason.find(lockstep::to_string(dtype)), std::string::npos) << d.reason;
    }
    opt.path = Path::reference;
    const qkan::Dispatch d = qkan::explain(opt, dtype);
    EXPECT_EQ(d.path, Path::reference);
    EXPECT_NE(d.reason.find("requested"), std::string::npos) << d.reason;
  }
}

TEST_P(Dispatch, TooManyRepsForFused) {
  const auto [dtype, ae] = GetParam();
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = ae.preacts_trainable;
  cfg.dtype = dtype;
  cfg.reps = kMaxReps + 1;
  cfg.B = 9;
  cfg.I = 3;
  cfg.O = 2;
  // explain: automatic falls back and says why; fused is refused.
  const qkan::Dispatch d = qkan::explain(cfg.options(Path::automatic), dtype);
  EXPECT_EQ(d.path, Path::reference);
  EXPECT_NE(d.reason.find("reps"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find(std::to_string(kMaxReps)), std::string::npos) << d.reason;
  EXPECT_THROW(qkan::explain(cfg.options(Path::fused), dtype), std::invalid_argument);

  for_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::uint64_t seed = seed_of(current_test_name());
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Inputs<T> in = make_inputs<T>(cfg, seed);
    // Path::fused: invalid_argument naming the limit, before any output is written.
    Guarded<T> post(cfg.plain_shape());
    try {
      qkan::solve_forward(cfg.options(Path::fused), in.xv(), in.thetav(), in.wv(), in.cv(), post.mut());
      ADD_FAILURE() << "Path::fused with reps = " << cfg.reps << " did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("reps"), std::string::npos) << e.what();
    }
    for (std::size_t k = 0; k < post.size(); ++k) ASSERT_TRUE(std::isnan(post[k]));
    Guarded<T> y({cfg.B, cfg.O});
    EXPECT_THROW(
        qkan::contract_forward(cfg.options(Path::fused), in.xv(), in.thetav(), in.wv(), in.cv(), in.Wv(), y.mut()),
        std::invalid_argument);
    const Guarded<T> gy = random_like<T>({cfg.B, cfg.O}, seed + 1);
    {
      // Refused before anything is written, gradients included (w/c too, which are zero
      // without the encoding).
      GradSet<T> g = alloc_grads(in, Want::all(), true);
      EXPECT_THROW(qkan::contract_backward(cfg.options(Path::fused), in.xv(), in.thetav(), in.wv(), in.cv(), in.Wv(),
                                           gy.view(), g.grads()),
                   std::invalid_argument);
      for (const auto* t : {&g.x, &g.theta, &g.w, &g.c, &g.W})
        for (std::size_t k = 0; k < (*t)->size(); ++k)
          ASSERT_TRUE(std::isnan((**t)[k])) << "gradient " << to_string((*t)->shape()) << " written before the error";
    }
    // Path::automatic: the reference results exactly.
    EXPECT_TRUE(identical("postacts", run_solve(in, Path::automatic), run_solve(in, Path::reference)));
    EXPECT_TRUE(identical("y", run_contract(in, Path::automatic), run_contract(in, Path::reference)));
    const GradSet<T> a = run_contract_backward(in, Path::automatic, gy),
                     r = run_contract_backward(in, Path::reference, gy);
    expect_grads_close(a, r, 0, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Qkan, Dispatch,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64),
                                            ::testing::ValuesIn(all_ansatz_encodings())),
                         param_name);

TEST(DispatchMisc, ExplainRejectsUnknownPath) {
  // The dispatch switch has no silent default: an out-of-range Path value is an error.
  Options opt;
  opt.path = static_cast<Path>(9);
  EXPECT_THROW(qkan::explain(opt, DType::f32), std::invalid_argument);
}

// The solver registers the SIMD target its CPU kernels chose in build_summary(), and explain()
// names the same target.
TEST(DispatchMisc, BuildSummaryNamesTheSimdTarget) {
  const std::string line = build_summary();
  const auto at = line.find("CPU SIMD target ");
  ASSERT_NE(at, std::string::npos) << line;
  EXPECT_EQ(line.find("CPU SIMD target ", at + 1), std::string::npos) << line;
  const std::string target = line.substr(at + 16, line.find(',', at) - at - 16);
  EXPECT_FALSE(target.empty()) << line;
  const std::string reason = qkan::explain(Options{}, DType::f64).reason;
  EXPECT_NE(reason.find(target), std::string::npos) << reason;
}

}  // namespace
}  // namespace lockstep::test
