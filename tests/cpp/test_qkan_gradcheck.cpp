// Backward of the reference path against central finite differences of its forward, float64:
// objective J = Σ g·out with a random cotangent g, for every ansatz × measurement × encoding,
// natural and grouped tables, plain and contracted. w and c are always passed, so without
// the encoding their (zero) gradients are checked too.
#include "qkan_test_util.hpp"

namespace lockstep::test {
namespace {

using Param = std::tuple<AnsatzEnc, bool, Group, bool>;  // ansatz/encoding, fast, layout, contract

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [ae, fast, group, contract] = info.param;
  return std::string(short_name(ae.ansatz)) +
         (qkan::encoding_active(ae.ansatz, ae.preacts_trainable) ? "_enc" : "_raw") + (fast ? "_fast_" : "_z_") +
         to_string(group) + (contract ? "_contract" : "_plain");
}

class GradCheck : public ::testing::TestWithParam<Param> {};

TEST_P(GradCheck, ReferenceMatchesFiniteDifferences) {
  const auto [ae, fast, group, contract] = GetParam();
  Config cfg;
  cfg.ansatz = ae.ansatz;
  cfg.preacts_trainable = ae.preacts_trainable;
  cfg.fast = fast;
  cfg.group = group;
  cfg.dtype = DType::f64;
  cfg.reps = 2;
  cfg.B = 3;
  cfg.I = 3;
  cfg.O = 2;
  const std::uint64_t seed = seed_of(current_test_name());
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Inputs<double> in = make_inputs<double>(cfg, seed);
  const Shape out_shape = contract ? Shape{cfg.B, cfg.O} : cfg.plain_shape();
  const Guarded<double> g = random_like<double>(out_shape, seed + 1);

  auto objective = [&] {
    const Guarded<double> out = contract ? run_contract(in, Path::reference) : run_solve(in, Path::reference);
    double J = 0;
    for (std::size_t k = 0; k < out.size(); ++k) J += g[k] * out[k];
    return J;
  };
  const GradSet<double> an =
      contract ? run_contract_backward(in, Path::reference, g) : run_solve_backward(in, Path::reference, g);

  auto check = [&](const char* name, Guarded<double>& param, const std::optional<Guarded<double>>& grad) {
    ASSERT_TRUE(grad.has_value()) << name;
    Guarded<double> fd(param.shape());
    for (std::size_t k = 0; k < param.size(); ++k) {
      const double v = param[k];
      param[k] = v + kFdStep;
      const double jp = objective();
      param[k] = v - kFdStep;
      const double jm = objective();
      param[k] = v;
      fd[k] = (jp - jm) / (2 * kFdStep);
    }
    EXPECT_TRUE(all_close(name, *grad, fd, kFdAbs * std::max(1.0, fd.max_abs()), kFdRel));
  };
  check("grad x", in.x, an.x);
  check("grad theta", in.theta, an.theta);
  check("grad preacts_weight", in.w, an.w);
  check("grad preacts_bias", in.c, an.c);
  if (contract) check("grad weight", in.W, an.W);
}

INSTANTIATE_TEST_SUITE_P(Qkan, GradCheck,
                         ::testing::Combine(::testing::ValuesIn(all_ansatz_encodings()), ::testing::Bool(),
                                            ::testing::Values(Group::natural, Group::grouped, Group::mixed),
                                            ::testing::Bool()),
                         param_name);

}  // namespace
}  // namespace lockstep::test
