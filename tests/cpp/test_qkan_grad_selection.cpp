// Requesting a subset of the gradients gives the same values as requesting all of them, writes
// nothing outside the requested views (canaries), and without the encoding the w/c gradients
// are exactly zero (and w, c may be omitted altogether).
#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

using Param = std::tuple<Path, DType, AnsatzEnc, bool>;  // path, dtype, ansatz/encoding, contract

class GradSelection : public ::testing::TestWithParam<Param> {};

TEST_P(GradSelection, SubsetsMatchAll) {
  const auto [path, dtype, ae, contract] = GetParam();
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = ae.preacts_trainable;
  cfg.dtype = dtype;
  cfg.B = 77;
  cfg.I = 5;
  cfg.O = 3;
  with_inputs(cfg, [&](auto tag, const auto& in, std::uint64_t seed) {
    using T = decltype(tag);
    const Guarded<T> g = random_like<T>(contract ? Shape{cfg.B, cfg.O} : cfg.plain_shape(), seed + 1);
    auto run = [&](Want want) {
      return contract ? run_contract_backward(in, path, g, want) : run_solve_backward(in, path, g, want);
    };
    const GradSet<T> all = run(Want::all());
    const std::vector<std::pair<const char*, Want>> subsets = {
        {"theta", {false, true, false, false, false}}, {"W", {false, false, false, false, true}},
        {"x", {true, false, false, false, false}},     {"w,c", {false, false, true, true, false}},
        {"c", {false, false, false, true, false}},     {"x,W", {true, false, false, false, true}},
        {"theta,w", {false, true, true, false, false}}};
    // The reference path is serial and deterministic; the fused path may sum its per-thread
    // partial gradients in a different order from call to call.
    const double scale = path == Path::reference ? 0.0 : tol<T>.same;
    for (const auto& [name, want] : subsets) {
      SCOPED_TRACE(::testing::Message() << "only " << name);
      const GradSet<T> some = run(want);
      EXPECT_EQ(some.x.has_value(), want.x);
      GradSet<T> expected;
      if (want.x) expected.x = all.x;
      if (want.theta) expected.theta = all.theta;
      if (want.w) expected.w = all.w;
      if (want.c) expected.c = all.c;
      if (want.W && contract) expected.W = all.W;
      expect_grads_close(some, expected, scale, 0);
    }
    // No gradient at all: a valid no-op.
    EXPECT_NO_THROW(run(Want::none()));
  });
}

class GradSelectionRaw : public ::testing::TestWithParam<Param> {};

TEST_P(GradSelectionRaw, PreactGradsZeroWithoutEncoding) {
  const auto [path, dtype, ae, contract] = GetParam();
  ASSERT_FALSE(qkan::encoding_active(ae.ansatz, ae.preacts_trainable));
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = false;
  cfg.dtype = dtype;
  cfg.B = 41;
  cfg.I = 4;
  cfg.O = 3;
  with_inputs(cfg, [&](auto tag, const auto& with, std::uint64_t seed) {
    using T = decltype(tag);
    Inputs<T> without = with;
    without.pass_pre = false;
    const Guarded<T> g = random_like<T>(contract ? Shape{cfg.B, cfg.O} : cfg.plain_shape(), seed + 1);
    auto run = [&](const Inputs<T>& in) {
      return contract ? run_contract_backward(in, path, g) : run_solve_backward(in, path, g);
    };
    const GradSet<T> a = run(with), b = run(without);
    ASSERT_TRUE(a.w && a.c);
    EXPECT_FALSE(b.w || b.c);
    const Guarded<T> zeros(cfg.pre_shape(), T(0));
    EXPECT_TRUE(identical("grad preacts_weight", *a.w, zeros));
    EXPECT_TRUE(identical("grad preacts_bias", *a.c, zeros));
    GradSet<T> a_rest = a;
    a_rest.w.reset();
    a_rest.c.reset();
    expect_grads_close(a_rest, b, path == Path::reference ? 0.0 : tol<T>.same, 0);
    // The forward ignores w and c too.
    const Guarded<T> fa = contract ? run_contract(with, path) : run_solve(with, path);
    const Guarded<T> fb = contract ? run_contract(without, path) : run_solve(without, path);
    EXPECT_TRUE(identical("forward", fa, fb));
  });
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [path, dtype, ae, contract] = info.param;
  return std::string(qkan::to_string(path)) + "_" + short_name(dtype) + "_" + short_name(ae.ansatz) +
         (qkan::encoding_active(ae.ansatz, ae.preacts_trainable) ? "_enc" : "_raw") +
         (contract ? "_contract" : "_plain");
}

INSTANTIATE_TEST_SUITE_P(Qkan, GradSelection,
                         ::testing::Combine(::testing::Values(Path::reference, Path::fused),
                                            ::testing::Values(DType::f32, DType::f64),
                                            ::testing::ValuesIn(all_ansatz_encodings()), ::testing::Bool()),
                         param_name);

// The ansätze that can run without the encoding (rpz always encodes; px needs it).
INSTANTIATE_TEST_SUITE_P(Qkan, GradSelectionRaw,
                         ::testing::Combine(::testing::Values(Path::reference, Path::fused),
                                            ::testing::Values(DType::f32, DType::f64),
                                            ::testing::Values(AnsatzEnc{Ansatz::pz, false},
                                                              AnsatzEnc{Ansatz::real, false},
                                                              AnsatzEnc{Ansatz::mix, false}),
                                            ::testing::Bool()),
                         param_name);

}  // namespace
}  // namespace lockstep::test
