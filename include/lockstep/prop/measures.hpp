// Measures of a field for the statistics of every accepted step, and the first-order coherence
// of an ensemble. Spectra in FFT order (grid.hpp's convention: Ã = FFTW_BACKWARD of A, so
// Parseval reads Σ_j |A_j|² dt = (dt/n) Σ_k |Ã_k|²).
#pragma once

#include <complex>
#include <span>
#include <vector>

#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/transform.hpp"

namespace lockstep::prop {

/// Energy ∫|A|² dT from time samples, J: dt·Σ|A_j|².
double energy_of_field(const std::complex<double>* field, const Grid& grid);

/// Energy from the spectrum, J: (dt/n)·Σ|Ã_k|² (equal to energy_of_field by Parseval).
double energy_of_spectrum(const std::complex<double>* spectrum, const Grid& grid);

/// Photon number Σ_k (dt/n)|Ã_k|² / (ħω_k), ω_k absolute: the discrete form of
/// (1/2π)∫|Ã_c(ω)|²/(ħω) dω with Ã_c = dt·Ã (dimensionless: a count of photons). Conserved
/// by the GNLSE with Raman and self-steepening.
double photon_number(const std::complex<double>* spectrum, const Grid& grid);

/// Peak power max_j |A_j|², W.
double peak_power(const std::complex<double>* field, const Grid& grid);

/// Spectral centroid Σ ω_k|Ã_k|² / Σ|Ã_k|² over absolute ω_k, rad/s; ω0 for a zero spectrum.
double spectral_centroid(const std::complex<double>* spectrum, const Grid& grid);

/// The four per-step statistics of one spectrum.
struct FieldMeasures {
  double energy;             ///< J
  double photon_number;      ///< photons
  double peak_power;         ///< W
  double spectral_centroid;  ///< rad/s, absolute
};

/// All four, the time field through `transform` into `scratch` (n values, not aliasing
/// `spectrum`): no allocation.
FieldMeasures measure(const std::complex<double>* spectrum, const Grid& grid, SpectralTransform& transform,
                      std::complex<double>* scratch);

/// First-order coherence at zero delay of an ensemble of M ≥ 2 spectra (Dudley, Genty & Coen,
/// Rev. Mod. Phys. 78, 1135 (2006)):
///     |g12(ω)| = |⟨Ã_i*(ω) Ã_j(ω)⟩_{i≠j}| / ⟨|Ã(ω)|²⟩,
/// the numerator averaged over all M(M−1) ordered pairs (computed as |Σ_i Ã_i|² − Σ_i |Ã_i|²),
/// the denominator over the members. Returned on the ascending ω grid (Grid::omega_ascending);
/// 0 where the mean power is 0. std::invalid_argument for M < 2 or a spectrum of another size.
std::vector<double> coherence(std::span<const std::vector<std::complex<double>>> spectra, const Grid& grid);

}  // namespace lockstep::prop
