// The input field, shot noise and the absorbing windows of a propagation (docs/PROPAGATION.md §1).
// Time samples in grid order (T_j = (j − n/2)·dt), spectra in FFT order with the convention of
// grid.hpp (Ã = FFTW_BACKWARD of the time samples).
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/transform.hpp"

namespace lockstep::prop {

/// T0 of a sech (FWHM / (2 acosh √2) = FWHM / 1.7627) or Gaussian (FWHM / (2√ln 2) =
/// FWHM / 1.6651) pulse, s. std::invalid_argument for PulseShape::user or a bad fwhm.
double pulse_t0(const PulseConfig& pulse);

/// Energy of a sech or Gaussian pulse of unit peak power, J/W (= s): ∫|A|²dT / P0 = 2 T0
/// (sech) or √π T0 (Gaussian). std::invalid_argument for a user pulse or a bad fwhm.
double energy_per_peak_power(const PulseConfig& pulse);

/// The peak power P0 the pulse is launched with, W: pulse.peak_power, or, when pulse.energy
/// is given (> 0), E / energy_per_peak_power (sech: E/(2 T0) = 0.8814 E/FWHM; Gaussian:
/// E/(√π T0) = 0.9394 E/FWHM). std::invalid_argument for a user pulse.
double launch_peak_power(const PulseConfig& pulse);

/// ΔΩ = ω_p − ω0 of the pulse's carrier against the grid's, rad/s (0 without pulse.wavelength).
double carrier_offset(const PulseConfig& pulse, const Grid& grid);

/// Soliton order N = √(γ P0 T0² / |β2|) of the pulse in the fibre (β2 = fibre.betas[0], P0 =
/// launch_peak_power). std::invalid_argument when β2 is missing or zero, or for a capillary.
double soliton_order(const FibreConfig& fibre, const PulseConfig& pulse);

/// A(0, T) on the grid, √W, without noise. With τ = T − delay and P0 = launch_peak_power:
///   sech:     √P0 sech(τ/T0) e^{−iCτ²/(2T0²)}
///   gaussian: √P0 e^{−(1+iC)τ²/(2T0²)}
///   user:     the samples (user_re + i·user_im at user_time), natural cubic spline, zero outside;
///             with pulse.energy, scaled so that Σ|A_j|² dt equals it.
/// With pulse.wavelength, times e^{−iΔΩτ} (ΔΩ = carrier_offset: the carrier moved to ω0 + ΔΩ).
/// Validates the pulse (std::invalid_argument naming the field: peak_power ≥ 0, fwhm > 0, finite
/// chirp, delay inside the window; user samples of equal length, ≥ 3, finite, strictly
/// ascending times inside the window) and refuses a field that does not fit the window: |A|² on
/// the outermost 1% of samples at either edge above 1e-6 of its peak.
std::vector<std::complex<double>> initial_field(const PulseConfig& pulse, const Grid& grid);

/// The input spectrum: FFTW_BACKWARD of initial_field, plus shot noise seeded with
/// pulse.noise_seed when pulse.shot_noise.
std::vector<std::complex<double>> initial_spectrum(const PulseConfig& pulse, const Grid& grid);

/// Adds one photon per mode to `spectrum` (FFT order, n = grid.size() values): to bin k a
/// value of modulus √(ħω_k·n/dt) = n·√(ħω_k/τ_w) (ω_k absolute, τ_w the time window) and phase
/// 2πu_k. In the convention the energy of bin k is (dt/n)|Ã_k|², so each noise term alone
/// carries exactly ħω_k, one photon; in continuous units (dt·Ã_k) its modulus is √(ħω_k/Δν)
/// with Δν = 1/τ_w the bin width in Hz. The u_k come from std::mt19937_64 seeded with `seed`,
/// one draw per bin in FFT order, mapped to [0, 1) by uniform_from_bits: the same seed gives
/// the same noise on every platform.
void add_shot_noise(std::span<std::complex<double>> spectrum, const Grid& grid, std::uint64_t seed);

/// The top 53 bits of a 64-bit draw as a double in [0, 1) (exact, platform independent).
inline double uniform_from_bits(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// Super-Gaussian absorbing windows. A window tapers the outer `edge` fraction of its axis at
/// each end: 1 on |x| ≤ X − E (X the half-width, E = edge·2X), then
///     w = exp(−ln 2 · (2(|x| − X + E)/E)^6),
/// ½ half-way into the taper and 2⁻⁶⁴ ≈ 5e-20 at the end of the axis; flat to the fifth
/// derivative where the taper starts. Time axis: T_j, X = n·dt/2; frequency axis: Δω in FFT
/// order, X = n·Δω/2.
struct Windows {
  std::vector<double> time;       ///< per time sample; empty when window.time_edge = 0
  std::vector<double> frequency;  ///< per spectral bin (FFT order); empty when frequency_edge = 0
};

/// Validates `window` (each edge finite and in [0, 0.5], std::invalid_argument naming it).
Windows make_windows(const WindowConfig& window, const Grid& grid);

/// Applies the windows to a spectrum in place: the frequency window directly, the time
/// window between `transform.to_time` and `transform.to_spectrum`. No-op for empty windows.
void apply_windows(const Windows& windows, SpectralTransform& transform, std::complex<double>* spectrum);

}  // namespace lockstep::prop
