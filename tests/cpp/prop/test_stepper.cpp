// The interaction-picture stepper on a problem with a known solution (analytic_problems.hpp):
// convergence orders, the embedded error estimates, FSAL, dense output, batch independence;
// the error norms and the controller.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analytic_problems.hpp"
#include "lockstep/prop/controller.hpp"
#include "lockstep/prop/stepper.hpp"

namespace lp = lockstep::prop;
using lp::Complex;
using lp::testing::PointwiseKerr;

namespace {

constexpr std::int64_t kPoints = 16;

// Global error after `steps` equal steps over [0, length] from the smooth spectrum.
double global_error(const lp::Tableau& tab, int steps, double length) {
  PointwiseKerr problem(kPoints, {{}});
  lp::Stepper stepper(tab, problem);
  const auto y0 = lp::testing::smooth_spectrum(kPoints, 1.2);
  stepper.load(0, y0.data(), {});
  const double h = length / steps;
  for (int k = 0; k < steps; ++k) {
    stepper.trial(0, 1, h);
    stepper.accept(0);
  }
  std::vector<Complex> y(stepper.solution(0), stepper.solution(0) + kPoints);
  return lp::testing::relative_error(y, problem.exact(0, y0, length));
}

// Error norm (raw RMS of the estimate: rtol = 1, atol = 0) of one step of length h.
double estimate(const lp::Tableau& tab, double h) {
  PointwiseKerr problem(kPoints, {{}});
  lp::Stepper stepper(tab, problem);
  const auto y0 = lp::testing::smooth_spectrum(kPoints, 1.2);
  stepper.load(0, y0.data(), {lp::ErrorNorm::rms, 1.0, 0.0});
  stepper.trial(0, 1, h);
  return stepper.norm(0);
}

}  // namespace

TEST(Stepper, ConvergenceOrderOfEachScheme) {
  // Halving h divides the global error by 2^p. The ratio approaches 2^p as h → 0; in the step
  // ranges below (nonlinear phase ≈ 3 rad over 2 length units; DP5 is pre-asymptotic below ~100
  // steps) the measured ratios are within ±10 % of 2^p, and neighbouring orders are a factor 2
  // apart, so ±25 % bands separate them. DP5's errors stay ≥ 1e-12, above round-off.
  struct Case {
    const lp::Tableau* tab;
    double expected;
    int steps;
  };
  for (const Case& c : {Case{&lp::rk4ip_tableau(), 16, 16}, Case{&lp::erk43ip_tableau(), 16, 16},
                        Case{&lp::dp54ip_tableau(), 32, 128}}) {
    const double e1 = global_error(*c.tab, c.steps, 2.0), e2 = global_error(*c.tab, 2 * c.steps, 2.0),
                 e3 = global_error(*c.tab, 4 * c.steps, 2.0);
    EXPECT_GT(e1 / e2, 0.75 * c.expected) << c.tab->name << " " << e1 << " " << e2;
    EXPECT_LT(e1 / e2, 1.25 * c.expected) << c.tab->name;
    EXPECT_GT(e2 / e3, 0.75 * c.expected) << c.tab->name << " " << e2 << " " << e3;
    EXPECT_LT(e2 / e3, 1.25 * c.expected) << c.tab->name;
  }
}

TEST(Stepper, EmbeddedEstimateScalesWithTheEmbeddedOrder) {
  // The estimate is the local error of the embedded solution: O(h^(p̂+1)), so halving h divides
  // it by 16 (ERK4(3)) or 32 (DP5(4)); same ±25 % bands as above.
  for (const lp::Tableau* tab : {&lp::erk43ip_tableau(), &lp::dp54ip_tableau()}) {
    const double ratio = estimate(*tab, 0.2) / estimate(*tab, 0.1);
    const double expected = std::pow(2.0, tab->embedded_order + 1);
    EXPECT_GT(ratio, 0.75 * expected) << tab->name;
    EXPECT_LT(ratio, 1.25 * expected) << tab->name;
  }
  EXPECT_TRUE(std::isnan(estimate(lp::rk4ip_tableau(), 0.1)));  // no estimate: NaN diagnostic
}

TEST(Stepper, EvaluationsPerStepAndFsal) {
  PointwiseKerr problem(kPoints, {{}});
  const auto y0 = lp::testing::smooth_spectrum(kPoints);
  struct Case {
    const lp::Tableau* tab;
    int first, later;
  };
  for (const Case& c :
       {Case{&lp::rk4ip_tableau(), 4, 4}, Case{&lp::erk43ip_tableau(), 5, 4}, Case{&lp::dp54ip_tableau(), 7, 6}}) {
    lp::Stepper stepper(*c.tab, problem);
    stepper.load(0, y0.data(), {});
    stepper.trial(0, 1, 0.1);
    EXPECT_EQ(stepper.evaluations(0), c.first) << c.tab->name;
    stepper.trial(0, 1, 0.05);  // a rejected trial keeps the FSAL state as it was
    EXPECT_EQ(stepper.evaluations(0), c.first) << c.tab->name;
    stepper.accept(0);
    stepper.trial(0, 1, 0.1);
    EXPECT_EQ(stepper.evaluations(0), c.later) << c.tab->name;
    stepper.replace(0, y0.data());  // a changed field (a window) needs a fresh first stage
    stepper.trial(0, 1, 0.1);
    EXPECT_EQ(stepper.evaluations(0), c.first) << c.tab->name;
  }
}

TEST(Stepper, FsalReuseEqualsFreshEvaluation) {
  // The handed-over N(y_{n+1}) is the same evaluation a fresh first stage makes: bit-identical.
  PointwiseKerr problem(kPoints, {{}, {}});
  const auto y0 = lp::testing::smooth_spectrum(kPoints);
  lp::Stepper stepper(lp::dp54ip_tableau(), problem);
  stepper.load(0, y0.data(), {});
  stepper.load(1, y0.data(), {});
  stepper.trial(0, 2, 0.1);
  stepper.accept(0);
  stepper.accept(1);
  stepper.replace(1, stepper.solution(1));
  stepper.trial(0, 2, 0.07);
  for (std::int64_t i = 0; i < kPoints; ++i) EXPECT_EQ(stepper.candidate(0)[i], stepper.candidate(1)[i]);
}

TEST(Stepper, DenseOutputOfDp5) {
  PointwiseKerr problem(kPoints, {{}});
  const auto y0 = lp::testing::smooth_spectrum(kPoints, 1.2);
  lp::Stepper stepper(lp::dp54ip_tableau(), problem);
  stepper.load(0, y0.data(), {});
  const double h = 0.1;
  stepper.trial(0, 1, h);
  stepper.accept(0);
  std::vector<Complex> out(kPoints);
  // θ = 0 and 1 reproduce the step's ends to round-off (a few ulps after e^{L(θ−1)h}).
  stepper.dense_output(0, 0.0, out.data());
  EXPECT_LT(lp::testing::relative_error(out, y0), 1e-14);
  stepper.dense_output(0, 1.0, out.data());
  std::vector<Complex> y1(stepper.solution(0), stepper.solution(0) + kPoints);
  EXPECT_LT(lp::testing::relative_error(out, y1), 1e-14);
  // Inside: a fourth-order interpolant, local error O(h^5) ≈ 1e-5 here (the step's own error is
  // ≈ 1e-8). The bound 1e-4 fails for an interpolant of order ≤ 2 (≈ h³ = 1e-3).
  for (double theta : {0.25, 0.5, 0.8}) {
    stepper.dense_output(0, theta, out.data());
    EXPECT_LT(lp::testing::relative_error(out, problem.exact(0, y0, theta * h)), 1e-4) << theta;
  }
}

TEST(Stepper, BatchedTrialEqualsTrialsOneByOne) {
  // Each member's stages, exponentials and norm are its own: bit-identical whichever way.
  std::vector<PointwiseKerr::Params> params = {{1.0, 0.3, 2}, {0.5, 0.0, 1}, {2.0, 1.0, 3}};
  for (const lp::Tableau* tab : {&lp::rk4ip_tableau(), &lp::erk43ip_tableau(), &lp::dp54ip_tableau()}) {
    PointwiseKerr problem(kPoints, params);
    lp::Stepper batched(*tab, problem), single(*tab, problem);
    for (std::int64_t m = 0; m < 3; ++m) {
      const auto y0 = lp::testing::smooth_spectrum(kPoints, 1.0 + 0.1 * static_cast<double>(m));
      batched.load(m, y0.data(), {});
      single.load(m, y0.data(), {});
    }
    for (int step = 0; step < 3; ++step) {
      batched.trial(0, 3, 0.05);
      for (std::int64_t m = 0; m < 3; ++m) single.trial(m, 1, 0.05);
      for (std::int64_t m = 0; m < 3; ++m) {
        EXPECT_EQ(batched.norm(m) == single.norm(m) || std::isnan(single.norm(m)), true);
        for (std::int64_t i = 0; i < kPoints; ++i)
          ASSERT_EQ(batched.candidate(m)[i], single.candidate(m)[i]) << tab->name << " m " << m;
        batched.accept(m);
        single.accept(m);
      }
    }
  }
}

TEST(ErrorNorm, Definitions) {
  const std::vector<Complex> err = {{3e-7, 0}, {0, 4e-7}};
  const std::vector<Complex> y0 = {{1, 0}, {0, 2}}, y1 = {{0, 2}, {1, 0}};
  const double rtol = 1e-6, atol = 1e-8;
  // weak: ‖err‖ = 5e-7; max(‖y0‖, ‖y1‖) = √5.
  EXPECT_NEAR(lp::error_norm({lp::ErrorNorm::weak, rtol, atol}, err.data(), y0.data(), y1.data(), 2),
              5e-7 / (rtol * std::sqrt(5.0)), 1e-12);
  // point-wise scales: atol + rtol·2 for both points.
  const double r0 = 3e-7 / (atol + 2 * rtol), r1 = 4e-7 / (atol + 2 * rtol);
  EXPECT_NEAR(lp::error_norm({lp::ErrorNorm::max, rtol, atol}, err.data(), y0.data(), y1.data(), 2), r1, 1e-12);
  EXPECT_NEAR(lp::error_norm({lp::ErrorNorm::rms, rtol, atol}, err.data(), y0.data(), y1.data(), 2),
              std::sqrt((r0 * r0 + r1 * r1) / 2), 1e-12);
  const std::vector<Complex> bad = {{NAN, 0}, {0, 0}};
  for (auto norm : {lp::ErrorNorm::weak, lp::ErrorNorm::max, lp::ErrorNorm::rms})
    EXPECT_FALSE(std::isfinite(lp::error_norm({norm, rtol, atol}, bad.data(), y0.data(), y1.data(), 2)));
}

TEST(StepController, PiGainsAndRejection) {
  const lp::StepController dp5(4), erk(3);
  // At the target on both errors the step is kept.
  EXPECT_NEAR(dp5.after_accept(1e-3, 0.8, 0.8, false), 1e-3, 1e-18);
  // β1 = 0.12, β2 = −0.04 for order 5: err 0.1 after 0.8 → (8)^0.12.
  EXPECT_NEAR(dp5.after_accept(1.0, 0.1, 0.8, false), std::pow(8.0, 0.12), 1e-12);
  EXPECT_NEAR(dp5.after_accept(1.0, 0.8, 0.1, false), std::pow(8.0, -0.04), 1e-12);
  // Order 4 scales the gains by 5/4.
  EXPECT_NEAR(erk.after_accept(1.0, 0.1, 0.8, false), std::pow(8.0, 0.15), 1e-12);
  // Growth is capped at 5 and, right after a rejection, at 1.
  EXPECT_EQ(dp5.after_accept(1.0, 0.0, 0.8, false), 5.0);
  EXPECT_EQ(dp5.after_accept(1.0, 1e-6, 0.8, true), 1.0);
  // Rejection: max(0.1, 0.9 err^(−1/k)).
  EXPECT_NEAR(dp5.after_reject(1.0, 2.0), 0.9 * std::pow(2.0, -0.2), 1e-15);
  EXPECT_NEAR(erk.after_reject(1.0, 2.0), 0.9 * std::pow(2.0, -0.25), 1e-15);
  EXPECT_EQ(dp5.after_reject(1.0, 1e9), 0.1);
  EXPECT_EQ(dp5.after_reject(1.0, NAN), 0.5);
  EXPECT_THROW(lp::StepController(0), std::invalid_argument);
}
