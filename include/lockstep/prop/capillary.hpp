// The HE11 mode of a gas-filled hollow capillary (docs/GAS.md), after Marcatili and Schmeltzer,
// Bell Syst. Tech. J. 43, 1783 (1964), and the gas pressure along a guide filled from its ends.
// Pure host functions; SI units (m, rad/s, Pa). Caller mistakes throw std::invalid_argument
// ("[prop.capillary] …"). Complex indices follow grid.hpp's convention: a field goes as
// e^{i(βz − ωt)}, so a positive imaginary part of an index is loss.
#pragma once

#include <complex>
#include <vector>

#include "lockstep/prop/gas.hpp"

namespace lockstep::prop::capillary {

using Complex = std::complex<double>;

/// u of HE11: the first zero of J0.
inline constexpr double kHE11Zero = 2.4048255576957724;

/// Refractive index of fused silica at `wavelength` (m) from Malitson's Sellmeier form (J. Opt.
/// Soc. Am. 55, 1205 (1965), 20 °C): real, i.e. absorption neglected. Measured, and accepted
/// here, from 0.21 µm to 3.71 µm; std::invalid_argument outside (give the cladding a fixed
/// index there).
double fused_silica_index(double wavelength);
inline constexpr double kSilicaMinWavelength = 0.21e-6;  ///< m
inline constexpr double kSilicaMaxWavelength = 3.71e-6;  ///< m

/// The capillary wall: fused silica (fused_silica_index at each wavelength) or a fixed complex
/// index n + iκ (κ ≥ 0) at every wavelength.
struct Cladding {
  enum class Kind { silica, fixed };
  Kind kind = Kind::silica;
  Complex index{1.45, 0.0};  ///< used when kind == fixed

  static Cladding silica() { return {}; }
  static Cladding fixed_index(Complex n) { return {Kind::fixed, n}; }
};

/// The wall's index at `wavelength` (m).
Complex cladding_index(const Cladding& cladding, double wavelength);

/// The wall term of the HE11 loss, v = (ε_cl + 1) / (2 √(ε_cl − 1)), ε_cl = n_cl²
/// (principal square root). std::invalid_argument if n_cl is not finite or ε_cl = 1.
Complex wall_term(Complex cladding_index);

/// Which expression of the effective index: the full square root, or its first-order
/// expansion in (ε_co − 1) and 1/(k a) (docs/GAS.md).
enum class ModeForm { full, reduced };

/// A hollow capillary of core radius `radius` (m).
struct Capillary {
  double radius = 0;
  Cladding cladding;
  ModeForm form = ModeForm::full;
};

/// Complex effective index of HE11 at angular frequency `omega` (rad/s) with the core gas's
/// linear susceptibility `core_chi1` (ε_co = 1 + χ1, e.g. gas::susceptibility), k = ω/c:
///   full:    n_eff = √(ε_co − (u/(k a))² (1 − i v/(k a))²)
///   reduced: n_eff = 1 + χ1/2 − u²/(2 (k a)²) + i u² v/(k a)³
/// std::invalid_argument unless radius > 0, omega > 0 and χ1 > −1 are finite (and the
/// cladding valid at that wavelength).
Complex effective_index(const Capillary& capillary, double omega, double core_chi1);

/// n_eff − 1, the same index without the cancellation of forming n_eff first: for the full form
/// x / (1 + √(1 + x)) with x = ε_co − 1 − (u/(k a))² (1 − i v/(k a))², for the reduced form
/// χ1/2 − u²/(2 (k a)²) + i u² v/(k a)³. Accurate to rounding relative to itself (n_eff − 1 is
/// 1e-6 … 1e-3 in practice), so differences and derivatives of β can be taken from it.
/// effective_index is 1 + this. Same arguments and errors as effective_index.
Complex effective_index_excess(const Capillary& capillary, double omega, double core_chi1);

/// β(ω) = (ω/c) Re n_eff, 1/m.
double propagation_constant(const Capillary& capillary, double omega, double core_chi1);

/// Power attenuation α(ω) = 2 (ω/c) Im n_eff, 1/m (power ∝ e^{−αz}).
double power_loss(const Capillary& capillary, double omega, double core_chi1);

/// α in dB/m: 10 α / ln 10.
double to_db_per_metre(double alpha);

/// A_eff / a² of HE11 (mode-averaged nonlinearity): 2π (¼ J1(u)⁴) / ∫₀¹ r J0(u r)⁴ dr, the
/// integral by 48-point Gauss–Legendre quadrature (computed once; ≈ 1.5).
double effective_area_factor();

/// A_eff = effective_area_factor() · a², m². std::invalid_argument unless radius > 0 is finite.
double effective_area(double radius);

/// Gas pressure along a guide filled from its ends (viscous flow): between neighbouring points
/// (z_k, p_k), (z_{k+1}, p_{k+1})
///   p(z) = √(p_k² + (z − z_k)/(z_{k+1} − z_k) · (p_{k+1}² − p_k²)).
class PressureProfile {
 public:
  /// Points z (m, strictly increasing, ≥ 2 of them) and p (Pa, ≥ 0), all finite;
  /// std::invalid_argument naming the offending point otherwise.
  PressureProfile(std::vector<double> z, std::vector<double> p);
  /// Two ends: p0 at z = 0, p1 at z = length (> 0).
  static PressureProfile gradient(double p0, double p1, double length);
  /// Constant pressure p over [0, length].
  static PressureProfile constant(double p, double length) { return gradient(p, p, length); }

  /// p(z), Pa, for z within [front(), back()] (std::invalid_argument outside).
  double operator()(double z) const;
  double front() const { return z_.front(); }  ///< first z, m
  double back() const { return z_.back(); }    ///< last z, m
  const std::vector<double>& z() const { return z_; }
  const std::vector<double>& p() const { return p_; }

 private:
  std::vector<double> z_, p_;
};

/// ρ(z) = ρ(p(z), T) of `species` along the profile, 1/m³ (gas::number_density).
double number_density(const PressureProfile& profile, gas::Species species, double z,
                      double temperature = gas::kDefaultTemperature);

}  // namespace lockstep::prop::capillary
