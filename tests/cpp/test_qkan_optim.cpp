// The optimizers on problems with known minima: a random symmetric positive-definite quadratic
// (minimum A⁻¹b, solved here by Cholesky) and Rosenbrock's function (minimum (1, 1)); Adam's
// first step, which is lr·sign(g) exactly up to eps.
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

TEST(Lbfgs, SolvesAQuadratic) {
  const Quadratic q(12, 3);
  std::vector<double> x(12, 0.0);
  Lbfgs opt(x.size(), LbfgsOptions{});
  for (int s = 0; s < 5; ++s) opt.step(x, q);
  EXPECT_LT(max_diff(x, q.xstar), 1e-7);
  EXPECT_LE(opt.evaluations(), 100);
}

TEST(Lbfgs, FindsRosenbrocksMinimum) {
  std::vector<double> x = {-1.2, 1.0};
  Lbfgs opt(2, LbfgsOptions{});
  for (int s = 0; s < 20; ++s) opt.step(x, rosenbrock);
  EXPECT_NEAR(x[0], 1.0, 1e-6);
  EXPECT_NEAR(x[1], 1.0, 1e-6);
}

TEST(Lbfgs, StopsOnANonFiniteObjective) {
  std::vector<double> x = {1.0};
  Lbfgs opt(1, LbfgsOptions{});
  EXPECT_THROW(opt.step(x, [](std::span<const double>, std::span<double> g) { g[0] = 1; return std::nan(""); }),
               std::runtime_error);
  EXPECT_THROW(Lbfgs(1, LbfgsOptions{.lr = -1}), std::invalid_argument);
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
