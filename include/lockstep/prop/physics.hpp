// Per-member physics of the GNLSE (docs/PROPAGATION.md §1), sampled on the member's grid:
//
//     ∂Ã/∂z = L(ω) Ã + N(Ã)
//     L(ω)  = i Σ_{k≥2} β_k Δω^k/k! − α(ω)/2                  (or from a β(ω) table)
//     N(Ã)  = i γ s(ω) F{ A · [ (1−f_R)|A|² + f_R (h_R ⊛ |A|²) ] }
//
// with Δω = ω − ω0, s(ω) = 1 + Δω/ω0 (self-steepening) or 1, and the convention of grid.hpp
// (Ã = FFTW_BACKWARD of the time samples, A = FFTW_FORWARD / n; arrays in FFT order).
//
// Raman response and the sign of the Raman gain. With that convention a spectral component at
// Δω appears in A(T) as e^{−iΔω T}, and the response spectrum is
//     H_R(Δω) = ∫_0^∞ h_R(t) e^{+iΔω t} dt ,   (h_R ⊛ I)(T) = ∫_0^∞ h_R(s) I(T−s) ds.
// For Blow–Wood, with a = 1/τ2, b = 1/τ1:
//     H_R(Δω) = (a² + b²) / (a² + b² − Δω² − 2iaΔω)
//             = (τ1² + τ2²) / (τ1² + τ2² − τ1²τ2²Δω² − 2iτ1²τ2Δω),
// so Im H_R(Δω) > 0 for Δω > 0 (and < 0 below). A weak wave at ω_p − Ω beside a strong pump
// at ω_p grows at the rate γ f_R |A_p|² Im H_R(Ω) (field), Ω > 0: the red (Stokes) side gains,
// the blue side is absorbed, and the spectral centroid of a soliton moves to lower ω with z.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/grid.hpp"

namespace lockstep::prop {

using Complex = std::complex<double>;

/// Everything the nonlinear operator and the linear propagator of one member need, on its grid.
/// Spectral arrays have `points` entries in FFT order (grid.hpp).
struct MemberPhysics {
  std::int64_t points = 0;
  /// L(ω) = i(β(ω) − β0 − β1Δω) − α(ω)/2, 1/m. Taylor: i Σ β_k Δω^k/k! − α/2.
  std::vector<Complex> linear;
  double gamma = 0;           ///< γ, 1/(W·m)
  double raman_fraction = 0;  ///< f_R (0 without Raman: then the Raman arrays are empty)
  /// s(ω): 1 + Δω/ω0 with self-steepening, else all ones (dimensionless).
  std::vector<double> shock;
  /// i γ s(ω), 1/(W·m): the spectral factor in front of F{...}.
  std::vector<Complex> nonlinear_factor;
  /// γ s(ω), 1/(W·m): the same factor without the i (the batch's last pass uses it).
  std::vector<double> gamma_shock;
  /// The discrete Raman response as convolution weights: index m holds the weight of the lag
  /// m·dt (m < n/2; the upper half, negative lags, is zero: causal): h_R(m·dt)·dt with the
  /// trapezoidal ½ at m = 0, rescaled to sum to 1 (dimensionless):
  /// (h_R ⊛ I)_j = Σ_m raman_time[m] · I_{(j−m) mod n}.
  std::vector<double> raman_time;
  /// H_R(Δω) = Σ_m raman_time[m] e^{+iΔω m dt} (FFTW_BACKWARD of raman_time), FFT order; H_R(0) = 1.
  std::vector<Complex> raman_spectrum;

  bool has_raman() const { return raman_fraction > 0; }
};

/// Builds one member's physics from `config.fibre` on `grid`. Validates the fibre
/// configuration first (std::invalid_argument naming the field): length > 0; finite β_k, γ,
/// loss ≥ 0; tables of equal length (≥ 4 points for β, ≥ 2 for loss), finite, strictly
/// ascending in ω and covering the grid's absolute frequencies; f_R in [0, 1]; Raman times > 0;
/// f_b in [0, 1].
/// β(ω) tables are interpolated with a natural cubic spline (β0 = β(ω0) and β1 = β'(ω0) from
/// the same spline); loss tables linearly (no overshoot below zero between samples).
///
/// A capillary (fibre.type = capillary, docs/GAS.md §6) samples the HE11 mode at every grid
/// frequency: with β(ω) = (ω/c) Re n_eff(ω) and α(ω) = 2 (ω/c) Im n_eff(ω)
/// (capillary::effective_index, the core's χ1 from the gas's Sellmeier form at the density
/// ρ(p, T), the wall from capillary_wall_index),
///     L(ω) = i (β(ω) − β(ω0) − β1(ω0) Δω) − α(ω)/2 ,   β1(ω0) = β'(ω0) (a sixth-order central
///     difference, step 10⁻³ ω0),
/// and γ = capillary_gamma. No Raman response (fibre.raman must be none). The gas's state,
/// the radius and the wall are validated by lockstep::prop::gas and ::capillary; a grid that
/// reaches a resonance of the gas's Sellmeier form is refused naming the frequency window.
MemberPhysics make_physics(const Config& config, const Grid& grid);

/// The capillary wall's complex index at `wavelength` (m): fibre.cladding = index gives
/// cladding_index + i·cladding_extinction; silica gives Malitson's fused-silica index, held at
/// its value at the nearer end of the form's range (0.21 µm, 3.71 µm) outside it.
Complex capillary_wall_index(const FibreConfig& fibre, double wavelength);

/// γ of a gas-filled capillary at the carrier ω0 (rad/s), 1/(W·m): the mode-averaged Kerr
/// nonlinearity n2(λ0) ω0 / (c A_eff), n2 = gas::kerr_n2 of the fill at (p, T), A_eff =
/// capillary::effective_area(radius) (docs/GAS.md §6).
double capillary_gamma(const FibreConfig& fibre, double omega0);

/// The usual f_R of each model: 0 (none), 0.18 (Blow–Wood), 0.245 (Lin–Agrawal), 0.18
/// (Hollenbeck–Cantrell).
double default_raman_fraction(RamanModel model);

/// The continuous Raman response h_R(t) of `fibre.raman` (1/s, unit integral for Blow–Wood
/// and Lin–Agrawal; Hollenbeck–Cantrell in arbitrary units), 0 for t < 0 and for
/// RamanModel::none.
double raman_response(const FibreConfig& fibre, double t);

}  // namespace lockstep::prop
