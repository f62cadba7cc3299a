#include "spline.hpp"

#include <algorithm>
#include <utility>

namespace lockstep::prop {

CubicSpline::CubicSpline(std::vector<double> x, std::vector<double> y)
    : x_(std::move(x)), y_(std::move(y)), m_(x_.size(), 0.0) {
  // Tridiagonal system for the interior second derivatives (natural ends: m_0 = m_{n−1} = 0),
  // solved by the Thomas algorithm; diagonally dominant, so no pivoting is needed.
  const std::size_t n = x_.size();
  if (n < 3) return;
  std::vector<double> diag(n, 0.0), rhs(n, 0.0);
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double h0 = x_[i] - x_[i - 1], h1 = x_[i + 1] - x_[i];
    diag[i] = 2 * (h0 + h1);
    rhs[i] = 6 * ((y_[i + 1] - y_[i]) / h1 - (y_[i] - y_[i - 1]) / h0);
  }
  for (std::size_t i = 2; i + 1 < n; ++i) {
    const double lower = x_[i] - x_[i - 1];  // couples m_{i−1} and m_i
    const double w = lower / diag[i - 1];
    diag[i] -= w * lower;
    rhs[i] -= w * rhs[i - 1];
  }
  for (std::size_t i = n - 2; i >= 1; --i) {
    const double upper = x_[i + 1] - x_[i];
    m_[i] = (rhs[i] - upper * m_[i + 1]) / diag[i];
  }
}

namespace {
/// The interval [x[i], x[i+1]] holding `at`, the end intervals extended outwards.
std::size_t bracket(const std::vector<double>& x, double at) {
  const auto it = std::upper_bound(x.begin(), x.end(), at);
  const auto i = static_cast<std::size_t>(std::max<std::ptrdiff_t>(it - x.begin() - 1, 0));
  return std::min(i, x.size() - 2);
}
}  // namespace

std::size_t CubicSpline::interval(double x) const { return bracket(x_, x); }

double CubicSpline::operator()(double x) const {
  const std::size_t i = interval(x);
  const double h = x_[i + 1] - x_[i];
  const double a = (x_[i + 1] - x) / h, b = (x - x_[i]) / h;
  return a * y_[i] + b * y_[i + 1] + ((a * a * a - a) * m_[i] + (b * b * b - b) * m_[i + 1]) * h * h / 6;
}

double CubicSpline::derivative(double x) const {
  const std::size_t i = interval(x);
  const double h = x_[i + 1] - x_[i];
  const double a = (x_[i + 1] - x) / h, b = (x - x_[i]) / h;
  return (y_[i + 1] - y_[i]) / h + ((1 - 3 * a * a) * m_[i] + (3 * b * b - 1) * m_[i + 1]) * h / 6;
}

double linear_interpolate(const std::vector<double>& x, const std::vector<double>& y, double at) {
  const std::size_t i = bracket(x, at);
  const double w = (at - x[i]) / (x[i + 1] - x[i]);
  return (1 - w) * y[i] + w * y[i + 1];
}

}  // namespace lockstep::prop
