// The optimizers on problems with known minima: a random symmetric positive-definite quadratic
// (minimum A⁻¹b, solved here by Cholesky) and Rosenbrock's function (minimum (1, 1)); the
// strong-Wolfe line search on 1-D functions with known minimisers, its conditions checked from
// their definitions; Adam's first step, which is lr·sign(g) exactly up to eps.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lockstep/qkan/optim.hpp"

namespace lockstep::qkan {
namespace {

struct Quadratic {
  int n;
  std::vector<double> A, b, xstar;
  explicit Quadratic(int n_, std::uint64_t seed) : n(n_), A(n_ * n_), b(n_), xstar(n_) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> N;
    std::vector<double> M(n * n);
    for (auto& v : M) v = N(rng);
    for (int i = 0; i < n; ++i)  // A = MᵀM/n + I: eigenvalues in about [1, 5]
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k < n; ++k) s += M[k * n + i] * M[k * n + j];
        A[i * n + j] = s / n + (i == j);
      }
    for (auto& v : b) v = N(rng);
    std::vector<double> L(n * n, 0.0), z(n);  // Cholesky A = LLᵀ, then solve
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = A[i * n + j];
        for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
        L[i * n + j] = i == j ? std::sqrt(s) : s / L[j * n + j];
      }
    for (int i = 0; i < n; ++i) {
      double s = b[i];
      for (int k = 0; k < i; ++k) s -= L[i * n + k] * z[k];
      z[i] = s / L[i * n + i];
    }
    for (int i = n; i-- > 0;) {
      double s = z[i];
      for (int k = i + 1; k < n; ++k) s -= L[k * n + i] * xstar[k];
      xstar[i] = s / L[i * n + i];
    }
  }
  double operator()(std::span<const double> x, std::span<double> g) const {
    double f = 0;
    for (int i = 0; i < n; ++i) {
      double Ax = 0;
      for (int j = 0; j < n; ++j) Ax += A[i * n + j] * x[j];
      g[i] = Ax - b[i];
      f += 0.5 * x[i] * Ax - b[i] * x[i];
    }
    return f;
  }
};

double rosenbrock(std::span<const double> x, std::span<double> g) {
  const double a = 1 - x[0], c = x[1] - x[0] * x[0];
  g[0] = -2 * a - 400 * x[0] * c;
  g[1] = 200 * c;
  return a * a + 100 * c * c;
}

double max_diff(std::span<const double> a, std::span<const double> b) {
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) m = std::max(m, std::abs(a[k] - b[k]));
  return m;
}

/// Tight tolerances: stop on the gradient (1e-10) only, so the tests below see how close the
/// optimizer gets, not where torch's default tolerances would stop it.
LbfgsOptions tight() {
  LbfgsOptions o;
  o.tolerance_grad = 1e-10;
  o.tolerance_change = 0;
  return o;
}

TEST(Lbfgs, SolvesAQuadratic) {
  const Quadratic q(12, 3);
  std::vector<double> x(12, 0.0);
  Lbfgs opt(x.size(), tight());
  for (int s = 0; s < 5; ++s) opt.step(x, q);
  // |x − x*| <= |g| / λ_min with λ_min >= 1 (A = MᵀM/n + I). The line search compares values
  // of f (~1 here), so it stops resolving decreases once g²/λ falls under f's rounding (~2e-16):
  // |g| ~ 3e-8, and |x − x*| below ~1e-7.
  EXPECT_LT(max_diff(x, q.xstar), 1e-7);
  // Exact line searches would need at most n = 12 iterations; strong-Wolfe steps a few more.
  EXPECT_LE(opt.evaluations(), 60);
}

TEST(Lbfgs, FindsRosenbrocksMinimum) {
  std::vector<double> x = {-1.2, 1.0};
  Lbfgs opt(2, tight());
  for (int s = 0; s < 20; ++s) opt.step(x, rosenbrock);
  // The Hessian at (1, 1) has eigenvalues ~0.4 and ~1000: |g| <= 1e-10 puts x within ~3e-10.
  EXPECT_NEAR(x[0], 1.0, 1e-8);
  EXPECT_NEAR(x[1], 1.0, 1e-8);
  EXPECT_LE(opt.evaluations(), 150);  // typical L-BFGS with a Wolfe search: ~50
}

TEST(Lbfgs, FixedStepsWithoutALineSearch) {
  const Quadratic q(6, 4);
  std::vector<double> x(6, 0.0);
  LbfgsOptions o = tight();
  o.line_search = LineSearch::none;
  o.lr = 0.5;  // half of every quasi-Newton step: still converges, geometrically
  Lbfgs opt(x.size(), o);
  for (int s = 0; s < 10; ++s) opt.step(x, q);
  EXPECT_LT(max_diff(x, q.xstar), 1e-9);
}

TEST(Lbfgs, StopsOnANonFiniteObjective) {
  std::vector<double> x = {1.0};
  Lbfgs opt(1, LbfgsOptions{});
  EXPECT_THROW(opt.step(x,
                        [](std::span<const double>, std::span<double> g) {
                          g[0] = 1;
                          return std::nan("");
                        }),
               std::runtime_error);
  LbfgsOptions bad;
  bad.lr = -1;
  EXPECT_THROW(Lbfgs(1, bad), std::invalid_argument);
  bad = LbfgsOptions{};
  bad.max_eval = 0;
  EXPECT_THROW(Lbfgs(1, bad), std::invalid_argument);
}

/// f(x) = x³/3 − x along d = 1 from 0: f'(t) = t² − 1, the minimiser t = 1.
double cubic(std::span<const double> x, std::span<double> g) {
  g[0] = x[0] * x[0] - 1;
  return x[0] * x[0] * x[0] / 3 - x[0];
}

/// Both strong Wolfe conditions, checked here from their definitions.
void expect_wolfe(const Objective& f, double x0, double t, const WolfeOptions& o) {
  std::vector<double> g0(1), g(1);
  const double f0 = f(std::vector<double>{x0}, g0), ft = f(std::vector<double>{x0 + t}, g);
  EXPECT_LE(ft, f0 + o.c1 * t * g0[0]) << "sufficient decrease at t = " << t;
  EXPECT_LE(std::abs(g[0]), o.c2 * std::abs(g0[0])) << "curvature at t = " << t;
}

TEST(StrongWolfe, ZoomsOntoTheCubicsMinimiserInOneInterpolation) {
  // t0 = 2 fails sufficient decrease (f(2) = 2/3 > 0), so [0, 2] brackets; the cubic through
  // the two ends is f itself, whose minimiser t = 1 has f' = 0: two evaluations in all.
  const std::vector<double> x = {0.0}, d = {1.0}, g0 = {-1.0};
  std::vector<double> g(1);
  const LineSearchResult r = strong_wolfe_search(cubic, x, d, 0.0, g0, 2.0, g);
  EXPECT_TRUE(r.wolfe);
  EXPECT_EQ(r.evaluations, 2);
  EXPECT_NEAR(r.t, 1.0, 1e-12);
  EXPECT_NEAR(r.loss, -2.0 / 3.0, 1e-12);
  EXPECT_NEAR(g[0], 0.0, 1e-11);
}

TEST(StrongWolfe, ExtrapolatesFromAShortFirstStep) {
  // f = (x − 10)² from 0 with t0 = 0.1: each trial may grow the step at most 10×, and with
  // c2 = 0.5 neither t = 0.1 (|f'| = 19.8) nor t = 1 (18) is flat enough against |f'(0)| = 20,
  // so the search reaches the minimiser t = 10 on its third evaluation (the cubic fit is exact).
  auto f = [](std::span<const double> x, std::span<double> g) {
    g[0] = 2 * (x[0] - 10);
    return (x[0] - 10) * (x[0] - 10);
  };
  const std::vector<double> x = {0.0}, d = {1.0}, g0 = {-20.0};
  std::vector<double> g(1);
  WolfeOptions o;
  o.c2 = 0.5;
  const LineSearchResult r = strong_wolfe_search(f, x, d, 100.0, g0, 0.1, g, o);
  EXPECT_TRUE(r.wolfe);
  EXPECT_EQ(r.evaluations, 3);
  EXPECT_NEAR(r.t, 10.0, 1e-9);
  expect_wolfe(f, 0.0, r.t, o);
}

TEST(StrongWolfe, MeetsBothConditionsOnAWigglyFunction) {
  // f = x² + sin(5x)·0.5 has many local slopes; from several starts and first steps the
  // returned t must satisfy both conditions (checked independently above).
  auto f = [](std::span<const double> x, std::span<double> g) {
    g[0] = 2 * x[0] + 2.5 * std::cos(5 * x[0]);
    return x[0] * x[0] + 0.5 * std::sin(5 * x[0]);
  };
  for (double x0 : {-3.0, -1.0, 2.0, 4.0})
    for (double t0 : {1e-3, 0.1, 1.0, 10.0}) {
      std::vector<double> g0(1), g(1);
      const double f0 = f(std::vector<double>{x0}, g0);
      const std::vector<double> d = {-g0[0]};  // steepest descent, unnormalised
      const LineSearchResult r = strong_wolfe_search(f, std::vector<double>{x0}, d, f0, g0, t0, g);
      SCOPED_TRACE(::testing::Message() << "x0 " << x0 << " t0 " << t0);
      ASSERT_TRUE(r.wolfe);
      EXPECT_LE(r.evaluations, 25);
      // Along d: φ(t) = f(x0 + t·d), φ'(t) = f'(x0 + t·d)·d.
      std::vector<double> gt(1);
      const double ft = f(std::vector<double>{x0 + r.t * d[0]}, gt);
      EXPECT_EQ(ft, r.loss);
      EXPECT_EQ(gt[0], g[0]);
      EXPECT_LE(ft, f0 + 1e-4 * r.t * g0[0] * d[0]);
      EXPECT_LE(std::abs(gt[0] * d[0]), 0.9 * std::abs(g0[0] * d[0]));
    }
}

TEST(StrongWolfe, ReturnsTheStartWhenTheBudgetEndsBeforeADecrease) {
  const std::vector<double> x = {0.0}, d = {1.0}, g0 = {-1.0};
  std::vector<double> g(1);
  WolfeOptions o;
  o.max_evaluations = 1;
  const LineSearchResult r = strong_wolfe_search(cubic, x, d, 0.0, g0, 2.0, g, o);
  EXPECT_FALSE(r.wolfe);
  EXPECT_EQ(r.t, 0.0);
  EXPECT_EQ(r.loss, 0.0);
  EXPECT_EQ(g[0], -1.0);
  EXPECT_THROW(strong_wolfe_search(cubic, x, std::vector<double>{-1.0}, 0.0, g0, 1.0, g), std::invalid_argument);
  EXPECT_THROW(strong_wolfe_search(cubic, x, d, 0.0, g0, 0.0, g), std::invalid_argument);
}

TEST(Adam, FirstStepIsLrTimesSignOfTheGradient) {
  std::vector<double> x = {1.0, -2.0, 3.0}, g = {0.3, -7.0, 1e-3};
  Adam opt(3, AdamOptions{.lr = 0.01, .eps = 1e-12});
  opt.step(x, g);
  EXPECT_NEAR(x[0], 1.0 - 0.01, 1e-12);
  EXPECT_NEAR(x[1], -2.0 + 0.01, 1e-12);
  EXPECT_NEAR(x[2], 3.0 - 0.01, 1e-9);
  EXPECT_THROW(opt.step(std::span<double>(x.data(), 2), g), std::invalid_argument);
}

TEST(Adam, ConvergesOnAQuadratic) {
  const Quadratic q(8, 5);
  std::vector<double> x(8, 0.0), g(8);
  Adam opt(8, AdamOptions{.lr = 0.05});
  for (int s = 0; s < 4000; ++s) {
    q(x, g);
    opt.step(x, g);
  }
  EXPECT_LT(max_diff(x, q.xstar), 1e-4);
}

}  // namespace
}  // namespace lockstep::qkan
