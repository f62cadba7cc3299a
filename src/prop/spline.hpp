// Interpolation of tabulated data (β(ω), loss(ω), user pulse samples): a natural cubic spline
// and piecewise-linear interpolation. Callers validate the tables (finite, strictly
// ascending abscissae) first.
#pragma once

#include <cstddef>
#include <vector>

namespace lockstep::prop {

/// Natural cubic spline through (x_i, y_i): twice continuously differentiable, second
/// derivative zero at both ends. Needs ≥ 3 points, x strictly ascending.
class CubicSpline {
 public:
  CubicSpline(std::vector<double> x, std::vector<double> y);
  /// Value at `x` (x within [x_0, x_last]).
  double operator()(double x) const;
  /// First derivative at `x`.
  double derivative(double x) const;

 private:
  std::size_t interval(double x) const;
  std::vector<double> x_, y_, m_;  // m_: second derivatives at the knots
};

/// Piecewise-linear interpolation of (x, y) at `at` (x strictly ascending, at within range).
double linear_interpolate(const std::vector<double>& x, const std::vector<double>& y, double at);

}  // namespace lockstep::prop
