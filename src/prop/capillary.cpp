#include "lockstep/prop/capillary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "lockstep/core/error.hpp"
#include "lockstep/prop/grid.hpp"  // kSpeedOfLight

namespace lockstep::prop::capillary {

namespace {
constexpr const char* kWhere = "prop.capillary";

bool finite(Complex z) { return std::isfinite(z.real()) && std::isfinite(z.imag()); }

/// Nodes and weights of n-point Gauss–Legendre quadrature on [−1, 1] (Newton on P_n from the
/// Chebyshev guesses; converged to rounding).
template <int N> struct GaussLegendre {
  std::array<double, N> x{}, w{};
  GaussLegendre() {
    for (int i = 0; i < N; ++i) {
      double t = std::cos(std::numbers::pi * (i + 0.75) / (N + 0.5));
      double dp = 1;
      for (int iteration = 0; iteration < 100; ++iteration) {
        double p0 = 1, p1 = t;  // P_0, P_1
        for (int k = 2; k <= N; ++k) {
          const double p2 = ((2 * k - 1) * t * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = N * (t * p1 - p0) / (t * t - 1);
        const double step = p1 / dp;
        t -= step;
        if (std::abs(step) < 1e-16) break;
      }
      x[i] = t;
      w[i] = 2 / ((1 - t * t) * dp * dp);
    }
  }
};

double compute_area_factor() {
  // ∫₀¹ r J0(u r)⁴ dr: an entire integrand of degree-like growth (u r ≤ 2.4), which 48
  // Gauss–Legendre points integrate to rounding.
  static const GaussLegendre<48> rule;
  double integral = 0;
  for (int i = 0; i < 48; ++i) {
    const double r = 0.5 * (rule.x[i] + 1);
    const double j0 = std::cyl_bessel_j(0.0, kHE11Zero * r);
    integral += 0.5 * rule.w[i] * r * j0 * j0 * j0 * j0;
  }
  const double j1 = std::cyl_bessel_j(1.0, kHE11Zero);
  return 2 * std::numbers::pi * 0.25 * j1 * j1 * j1 * j1 / integral;
}

void check_radius(double radius) {
  if (!std::isfinite(radius) || !(radius > 0))
    invalid_argument(kWhere, "core radius ", radius, " m must be finite and > 0");
}
}  // namespace

double fused_silica_index(double wavelength) {
  if (!std::isfinite(wavelength) || wavelength < kSilicaMinWavelength || wavelength > kSilicaMaxWavelength)
    invalid_argument(kWhere, "wavelength ", wavelength, " m is outside the range of Malitson's fused-silica form (",
                     kSilicaMinWavelength, " m to ", kSilicaMaxWavelength,
                     " m); give the cladding a fixed index there");
  const double l2 = (wavelength * 1e6) * (wavelength * 1e6);  // µm²
  constexpr double b[] = {0.6961663, 0.4079426, 0.8974794};
  constexpr double c[] = {0.0684043, 0.1162414, 9.896161};  // µm
  double n2 = 1;
  for (int i = 0; i < 3; ++i) n2 += b[i] * l2 / (l2 - c[i] * c[i]);
  return std::sqrt(n2);
}

Complex cladding_index(const Cladding& cladding, double wavelength) {
  switch (cladding.kind) {
    case Cladding::Kind::silica: return {fused_silica_index(wavelength), 0.0};
    case Cladding::Kind::fixed:
      if (!finite(cladding.index) || cladding.index.imag() < 0)
        invalid_argument(kWhere, "cladding index (", cladding.index.real(), ", ", cladding.index.imag(),
                         ") must be finite with a non-negative imaginary part");
      return cladding.index;
  }
  invalid_argument(kWhere, "cladding kind ", static_cast<int>(cladding.kind), " is neither silica nor fixed");
}

Complex wall_term(Complex cladding_index) {
  if (!finite(cladding_index))
    invalid_argument(kWhere, "cladding index (", cladding_index.real(), ", ", cladding_index.imag(),
                     ") must be finite");
  const Complex eps = cladding_index * cladding_index;
  if (eps == Complex(1.0, 0.0)) invalid_argument(kWhere, "a cladding of index 1 does not guide (v = ∞)");
  return (eps + 1.0) / (2.0 * std::sqrt(eps - 1.0));
}

Complex effective_index_excess(const Capillary& capillary, double omega, double core_chi1) {
  check_radius(capillary.radius);
  if (!std::isfinite(omega) || !(omega > 0))
    invalid_argument(kWhere, "angular frequency ", omega, " rad/s must be finite and > 0");
  if (!std::isfinite(core_chi1) || !(core_chi1 > -1))
    invalid_argument(kWhere, "core susceptibility ", core_chi1, " must be finite and > -1");
  const double wavelength = 2 * std::numbers::pi * kSpeedOfLight / omega;
  const Complex v = wall_term(cladding_index(capillary.cladding, wavelength));
  const double ka = omega / kSpeedOfLight * capillary.radius;
  const double s = kHE11Zero / ka;  // u / (k a)
  const Complex i(0.0, 1.0);
  switch (capillary.form) {
    case ModeForm::full: {
      // √(1 + x) − 1 = x / (1 + √(1 + x)): Re √ ≥ 0, so the denominator does not cancel.
      const Complex f = 1.0 - i * v / ka;
      const Complex x = core_chi1 - s * s * f * f;
      return x / (1.0 + std::sqrt(1.0 + x));
    }
    case ModeForm::reduced: return core_chi1 / 2 - s * s / 2 + i * s * s * v / ka;
  }
  invalid_argument(kWhere, "mode form ", static_cast<int>(capillary.form), " is neither full nor reduced");
}

Complex effective_index(const Capillary& capillary, double omega, double core_chi1) {
  return 1.0 + effective_index_excess(capillary, omega, core_chi1);
}

double propagation_constant(const Capillary& capillary, double omega, double core_chi1) {
  return omega / kSpeedOfLight * effective_index(capillary, omega, core_chi1).real();
}

double power_loss(const Capillary& capillary, double omega, double core_chi1) {
  return 2 * omega / kSpeedOfLight * effective_index(capillary, omega, core_chi1).imag();
}

double to_db_per_metre(double alpha) { return 10 * alpha / std::numbers::ln10; }

double effective_area_factor() {
  static const double factor = compute_area_factor();
  return factor;
}

double effective_area(double radius) {
  check_radius(radius);
  return effective_area_factor() * radius * radius;
}

// ---- Pressure along the guide ------------------------------------------------------------------

PressureProfile::PressureProfile(std::vector<double> z, std::vector<double> p) : z_(std::move(z)), p_(std::move(p)) {
  if (z_.size() != p_.size())
    invalid_argument(kWhere, "pressure profile: ", z_.size(), " positions but ", p_.size(), " pressures");
  if (z_.size() < 2) invalid_argument(kWhere, "pressure profile: ", z_.size(), " points, at least 2 needed");
  for (std::size_t k = 0; k < z_.size(); ++k) {
    if (!std::isfinite(z_[k])) invalid_argument(kWhere, "pressure profile: z[", k, "] = ", z_[k], " m is not finite");
    if (!std::isfinite(p_[k]) || p_[k] < 0)
      invalid_argument(kWhere, "pressure profile: p[", k, "] = ", p_[k], " Pa must be finite and ≥ 0");
    if (k > 0 && !(z_[k] > z_[k - 1]))
      invalid_argument(kWhere, "pressure profile: z[", k, "] = ", z_[k], " m must exceed z[", k - 1, "] = ", z_[k - 1],
                       " m (strictly increasing)");
  }
}

PressureProfile PressureProfile::gradient(double p0, double p1, double length) {
  if (!std::isfinite(length) || !(length > 0))
    invalid_argument(kWhere, "guide length ", length, " m must be finite and > 0");
  return PressureProfile({0.0, length}, {p0, p1});
}

double PressureProfile::operator()(double z) const {
  if (!std::isfinite(z) || z < z_.front() || z > z_.back())
    invalid_argument(kWhere, "z = ", z, " m is outside the pressure profile [", z_.front(), ", ", z_.back(), "] m");
  // The piece [z_k, z_{k+1}] holding z (the last piece for z = back()).
  const auto k = static_cast<std::size_t>(std::upper_bound(z_.begin(), z_.end() - 1, z) - z_.begin()) - 1;
  const double t = (z - z_[k]) / (z_[k + 1] - z_[k]);
  const double a = p_[k] * p_[k], b = p_[k + 1] * p_[k + 1];
  return std::sqrt(std::max(0.0, a + t * (b - a)));
}

double number_density(const PressureProfile& profile, gas::Species species, double z, double temperature) {
  return gas::number_density(species, profile(z), temperature);
}

}  // namespace lockstep::prop::capillary
