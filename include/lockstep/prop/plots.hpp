// Figures of propagation results, from plain arrays in SI units: the spectral and temporal
// evolution over z (heat maps), spectra, and the spectral coherence |g12(λ)|. Each has a
// *_figure function (the figure, to adjust or inspect) and a write_* function (a PNG file,
// written atomically). Non-finite values are left out.
//
// Wavelength grids may come in either order (a grid ascending in ω is descending in λ);
// non-finite and non-positive wavelengths (ω ≤ 0 on a wide grid) are dropped with their values.
// Spectral values are drawn as given, per unit frequency (no conversion to per unit λ).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/core/plot.hpp"

namespace lockstep::prop {

/// Options of the figures over wavelength.
struct WavelengthPlotOptions {
  /// dB below the peak shown: the colour range of the spectral evolution, the y range of
  /// spectra; also what the automatic wavelength range keeps.
  double dynamic_range_db = 40;
  /// Shown wavelengths [lo, hi], m. Default: where the spectrum (the maximum over z, over
  /// spectra) lies within dynamic_range_db of its peak, widened by 5% each side.
  std::optional<std::pair<double, double>> wavelength_range_m{};
  std::string title{};  ///< over the figure; empty: none
};

/// Options of the temporal evolution.
struct TemporalPlotOptions {
  bool decibels = false;         ///< colour = power in dB relative to the peak (else linear, W or kW)
  double dynamic_range_db = 40;  ///< the colour range in dB
  /// Shown delays [lo, hi], s. Default: where the power (maximum over z) lies within
  /// dynamic_range_db of its peak in dB (within 1% of it on a linear scale), widened by 5%
  /// each side.
  std::optional<std::pair<double, double>> time_range_s{};
  std::string title{};
};

/// Spectral evolution: x = wavelength (nm), y = z (mm below 1 m, else m), colour = 10·log10 of
/// spectra[i][k] relative to the largest value (inferno, clipped at −dynamic_range_db).
/// z (m, strictly ascending) has one entry per plane; spectra[i] (|Ã|², any unit) has one value
/// per wavelength (m). std::invalid_argument, naming the argument, for empty or mismatched data.
plot::Figure spectral_evolution_figure(const std::vector<double>& z, const std::vector<double>& wavelength,
                                       const std::vector<std::vector<double>>& spectra,
                                       const WavelengthPlotOptions& options = {});
void write_spectral_evolution(const std::filesystem::path& path, const std::vector<double>& z,
                              const std::vector<double>& wavelength, const std::vector<std::vector<double>>& spectra,
                              const WavelengthPlotOptions& options = {});

/// Temporal evolution: x = delay T (ps), y = z, colour = power[i][j] = |A(z_i, T_j)|² (W),
/// linear or in dB (viridis). t (s) strictly ascending.
plot::Figure temporal_evolution_figure(const std::vector<double>& z, const std::vector<double>& t,
                                       const std::vector<std::vector<double>>& power,
                                       const TemporalPlotOptions& options = {});
void write_temporal_evolution(const std::filesystem::path& path, const std::vector<double>& z,
                              const std::vector<double>& t, const std::vector<std::vector<double>>& power,
                              const TemporalPlotOptions& options = {});

/// Spectra in dB (one line each, labelled by labels[i]; labels empty or one per spectrum) over
/// wavelength (nm); y from dynamic_range_db below the highest value to just above it.
plot::Figure spectrum_figure(const std::vector<double>& wavelength, const std::vector<std::vector<double>>& spectra_db,
                             const std::vector<std::string>& labels = {}, const WavelengthPlotOptions& options = {});
void write_spectrum(const std::filesystem::path& path, const std::vector<double>& wavelength,
                    const std::vector<std::vector<double>>& spectra_db, const std::vector<std::string>& labels = {},
                    const WavelengthPlotOptions& options = {});

/// Coherence: two panels over wavelength (nm), the mean spectrum in dB on top, |g12| (0 to 1)
/// below.
plot::Figure coherence_figure(const std::vector<double>& wavelength, const std::vector<double>& g12,
                              const std::vector<double>& mean_spectrum_db, const WavelengthPlotOptions& options = {});
void write_coherence(const std::filesystem::path& path, const std::vector<double>& wavelength,
                     const std::vector<double>& g12, const std::vector<double>& mean_spectrum_db,
                     const WavelengthPlotOptions& options = {});

}  // namespace lockstep::prop
