// The time and frequency grids of a propagation, and the sign and FFT convention.
//
// Convention (fixed here, used everywhere): the physical field is
//     E(z, t) = Re[ A(z, T) e^{i(β0 z − ω0 t)} ],
// so a spectral component at absolute frequency ω oscillates as e^{−iωt}, and
//     Ã_k = Σ_j A_j e^{+2πi jk/n}        (FFTW_BACKWARD over the array index j, unnormalised)
//     A_j = (1/n) Σ_k Ã_k e^{−2πi jk/n}  (FFTW_FORWARD, divided by n)
// i.e. the sampled form of Ã(ω) = ∫ A(T) e^{+i(ω−ω0)T} dT. With T_j = (j − n/2)·dt each bin
// differs from that sum over T_j by the constant phase (−1)^k, which no |Ã|², energy, photon
// number or nonlinear term sees.
// With it, dispersion is ∂Ã/∂z = i β(ω) Ã, self-phase modulation advances the phase by +γ|A|²z,
// and a positive ω − ω0 is bluer (shorter wavelength). Spectra are stored in FFT order
// (k = 0, 1, …, n/2−1, −n/2, …, −1) inside the numerics.
#pragma once

#include <cstdint>
#include <vector>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

/// Speed of light in vacuum, m/s.
inline constexpr double kSpeedOfLight = 299792458.0;
/// Reduced Planck constant, J·s.
inline constexpr double kHbar = 1.054571817e-34;

class Grid {
 public:
  /// Validates `config` (std::invalid_argument naming the field) and builds the grids.
  explicit Grid(const GridConfig& config);

  std::int64_t size() const { return n_; }
  double dt() const { return dt_; }          ///< s
  double domega() const { return domega_; }  ///< rad/s, 2π / time_window
  double omega0() const { return omega0_; }  ///< rad/s, the carrier
  /// T_j = (j − n/2)·dt, s, ascending (T = 0 at index n/2).
  const std::vector<double>& t() const { return t_; }
  /// ω_k − ω0 in FFT order, rad/s.
  const std::vector<double>& omega() const { return omega_; }
  /// Absolute ω in ascending order, rad/s (the result files' grid).
  std::vector<double> omega_ascending() const;
  /// 2πc/ω of omega_ascending(), in its order (so descending), m.
  std::vector<double> wavelengths() const;
  /// Index into FFT order of the k-th ascending frequency (an fftshift).
  std::int64_t ascending_to_fft(std::int64_t k) const { return (k + n_ / 2) % n_; }

 private:
  std::int64_t n_;
  double dt_, domega_, omega0_;
  std::vector<double> t_, omega_;
};

}  // namespace lockstep::prop
