// Right-hand sides with known solutions, for testing the stepper and the runners without the
// GNLSE operators.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "lockstep/prop/problem.hpp"

namespace lockstep::prop::testing {

/// Each point i of member m obeys dA/dz = (iβ_i − α/2) A + iγ_m |A|² A, whose solution is
///   A(z) = A(0) e^{(iβ_i − α/2) z} e^{iγ |A(0)|² (1 − e^{−αz})/α}.
/// L is diagonal and N is point-wise, but the interaction picture still sees a nonlinear ODE
/// (the phase of A_I rotates at a rate ∝ |A_I|²), so the scheme's order shows.
class PointwiseKerr : public Problem {
 public:
  struct Params {
    double gamma = 1, alpha = 0.3, beta_scale = 2;
  };
  PointwiseKerr(std::int64_t points, std::vector<Params> members) : n_(points), params_(std::move(members)) {
    for (const auto& p : params_) {
      std::vector<Complex> l(static_cast<std::size_t>(n_));
      for (std::int64_t i = 0; i < n_; ++i) l[static_cast<std::size_t>(i)] = Complex(-p.alpha / 2, beta(p, i));
      linear_.push_back(std::move(l));
    }
  }
  static double beta(const Params& p, std::int64_t i) {
    return p.beta_scale * std::sin(0.37 * static_cast<double>(i) + 0.2);
  }
  std::int64_t points() const override { return n_; }
  std::int64_t members() const override { return static_cast<std::int64_t>(params_.size()); }
  std::span<const Complex> linear(std::int64_t m) const override { return linear_[static_cast<std::size_t>(m)]; }
  void nonlinear(std::int64_t first, std::int64_t count, const Complex* in, Complex* out) override {
    ++calls;
    for (std::int64_t r = 0; r < count; ++r) {
      const double g = params_[static_cast<std::size_t>(first + r)].gamma;
      for (std::int64_t i = 0; i < n_; ++i) {
        const Complex a = in[r * n_ + i];
        out[r * n_ + i] = Complex(0, g * std::norm(a)) * a;
      }
    }
  }
  std::int64_t ffts_per_evaluation(std::int64_t) const override { return 2; }
  FieldMeasures measure(std::int64_t, const Complex* s) override {
    FieldMeasures m{0, 0, 0, 0};
    for (std::int64_t i = 0; i < n_; ++i) {
      m.energy += std::norm(s[i]);
      m.photon_number += std::norm(s[i]) / (10.0 + static_cast<double>(i));
      m.peak_power = std::max(m.peak_power, std::norm(s[i]));
    }
    return m;
  }
  bool apply_windows(std::int64_t, Complex*) override { return false; }

  /// The exact solution of member m at z from `initial`.
  std::vector<Complex> exact(std::int64_t m, const std::vector<Complex>& initial, double z) const {
    const auto& p = params_[static_cast<std::size_t>(m)];
    std::vector<Complex> out(initial.size());
    const double length = p.alpha > 0 ? (1 - std::exp(-p.alpha * z)) / p.alpha : z;
    for (std::int64_t i = 0; i < n_; ++i) {
      const Complex a = initial[static_cast<std::size_t>(i)];
      out[static_cast<std::size_t>(i)] =
          a * std::exp(Complex(-p.alpha / 2 * z, beta(p, i) * z + p.gamma * std::norm(a) * length));
    }
    return out;
  }

  std::int64_t calls = 0;

 private:
  std::int64_t n_;
  std::vector<Params> params_;
  std::vector<std::vector<Complex>> linear_;
};

/// A smooth input spectrum with amplitudes of order one.
inline std::vector<Complex> smooth_spectrum(std::int64_t n, double scale = 1.0) {
  std::vector<Complex> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / static_cast<double>(n);
    v[static_cast<std::size_t>(i)] = scale * Complex(1.0 + 0.5 * std::cos(6.0 * x), 0.3 * std::sin(4.0 * x));
  }
  return v;
}

/// Largest |a − b| / max|b|.
inline double relative_error(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

}  // namespace lockstep::prop::testing
