#include "lockstep/prop/pulse.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "lockstep/core/error.hpp"
#include "spline.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.pulse";

void validate(const PulseConfig& p, const Grid& grid) {
  if (!std::isfinite(p.energy) || p.energy < 0)
    invalid_argument(kWhere, "pulse.energy = ", p.energy, " J must be finite and ≥ 0 (0: launch by peak power)");
  if (!(p.energy > 0) && (!std::isfinite(p.peak_power) || p.peak_power < 0))
    invalid_argument(kWhere, "pulse.peak_power = ", p.peak_power, " W must be finite and ≥ 0");
  if (!std::isfinite(p.wavelength) || p.wavelength < 0)
    invalid_argument(kWhere, "pulse.wavelength = ", p.wavelength, " m must be finite and ≥ 0 (0: the grid's)");
  if (!std::isfinite(p.chirp)) invalid_argument(kWhere, "pulse.chirp = ", p.chirp, " must be finite");
  const double half = grid.dt() * static_cast<double>(grid.size() / 2);
  if (!std::isfinite(p.delay) || std::abs(p.delay) >= half)
    invalid_argument(kWhere, "pulse.delay = ", p.delay, " s must lie inside the time window (±", half, " s)");
  if (p.shape != PulseShape::user) return;
  const std::size_t count = p.user_time.size();
  if (p.user_re.size() != count || p.user_im.size() != count)
    invalid_argument(kWhere, "pulse.user_time, pulse.user_re and pulse.user_im must have equal lengths (", count, ", ",
                     p.user_re.size(), ", ", p.user_im.size(), ")");
  if (count < 3) invalid_argument(kWhere, "pulse.user_time has ", count, " samples; at least 3 are needed");
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(p.user_time[i]) || !std::isfinite(p.user_re[i]) || !std::isfinite(p.user_im[i]))
      invalid_argument(kWhere, "pulse.user_time/user_re/user_im sample ", i, " is not finite");
    if (i > 0 && !(p.user_time[i] > p.user_time[i - 1]))
      invalid_argument(kWhere, "pulse.user_time must be strictly ascending: sample ", i, " (", p.user_time[i],
                       " s) does not exceed sample ", i - 1);
  }
  const double first = grid.t().front(), last = grid.t().back();
  if (p.user_time.front() < first || p.user_time.back() > last)
    invalid_argument(kWhere, "pulse.user_time spans [", p.user_time.front(), ", ", p.user_time.back(),
                     "] s, which does not fit the time window [", first, ", ", last, "] s");
}

/// Refuses a field whose intensity at either edge of the window exceeds 1e-6 of its peak.
void check_fits(const std::vector<std::complex<double>>& a) {
  const std::size_t n = a.size(), edge = std::max<std::size_t>(1, n / 100);
  double peak = 0, at_edge = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double i = std::norm(a[j]);
    peak = std::max(peak, i);
    if (j < edge || j >= n - edge) at_edge = std::max(at_edge, i);
  }
  if (at_edge > 1e-6 * peak)
    invalid_argument(kWhere, "the pulse does not fit the time window: |A|² at the window's edge is ", at_edge / peak,
                     " of its peak (at most 1e-6 allowed); widen grid.time_window, shorten "
                     "the pulse or move pulse.delay");
}

/// exp(−ln 2 · (2d/E)^6) for d ∈ [0, E] into a taper of width E; 1 before it.
double taper(double distance_into_edge, double width) {
  if (distance_into_edge <= 0) return 1.0;
  const double x = 2 * distance_into_edge / width;
  const double x2 = x * x;
  return std::exp(-std::numbers::ln2 * x2 * x2 * x2);
}

std::vector<double> window_along(const std::vector<double>& axis, double half_width, double edge, const char* field) {
  if (!std::isfinite(edge) || edge < 0 || edge > 0.5)
    invalid_argument(kWhere, field, " = ", edge, " must be finite and in [0, 0.5]");
  if (edge == 0) return {};
  const double width = edge * 2 * half_width;
  std::vector<double> w(axis.size());
  for (std::size_t i = 0; i < axis.size(); ++i) w[i] = taper(std::abs(axis[i]) - (half_width - width), width);
  return w;
}

}  // namespace

double pulse_t0(const PulseConfig& pulse) {
  if (!std::isfinite(pulse.fwhm) || pulse.fwhm <= 0)
    invalid_argument(kWhere, "pulse.fwhm = ", pulse.fwhm, " s must be finite and > 0");
  switch (pulse.shape) {
    case PulseShape::sech: return pulse.fwhm / (2 * std::acosh(std::numbers::sqrt2));
    case PulseShape::gaussian: return pulse.fwhm / (2 * std::sqrt(std::numbers::ln2));
    case PulseShape::user: break;
  }
  invalid_argument(kWhere, "pulse.shape = user has no T0");
}

double energy_per_peak_power(const PulseConfig& pulse) {
  const double t0 = pulse_t0(pulse);
  // ∫ sech²(T/T0) dT = 2 T0;  ∫ exp(−T²/T0²) dT = √π T0 (the chirp leaves |A|² alone).
  return pulse.shape == PulseShape::sech ? 2 * t0 : std::sqrt(std::numbers::pi) * t0;
}

double launch_peak_power(const PulseConfig& pulse) {
  if (pulse.shape == PulseShape::user)
    invalid_argument(kWhere, "a user pulse has no launch peak power of its own (its samples give A)");
  if (pulse.energy > 0) return pulse.energy / energy_per_peak_power(pulse);
  return pulse.peak_power;
}

double carrier_offset(const PulseConfig& pulse, const Grid& grid) {
  if (!(pulse.wavelength > 0)) return 0.0;
  return 2 * std::numbers::pi * kSpeedOfLight / pulse.wavelength - grid.omega0();
}

double soliton_order(const FibreConfig& fibre, const PulseConfig& pulse) {
  if (fibre.type != FibreType::coefficients)
    invalid_argument(kWhere, "the soliton order is computed from fibre.betas[0], which a capillary does not have");
  if (fibre.betas.empty() || fibre.betas[0] == 0 || !std::isfinite(fibre.betas[0]))
    invalid_argument(kWhere, "the soliton order needs a finite, non-zero β2 (fibre.betas[0])");
  const double t0 = pulse_t0(pulse);
  return std::sqrt(std::abs(fibre.gamma) * launch_peak_power(pulse) * t0 * t0 / std::abs(fibre.betas[0]));
}

std::vector<std::complex<double>> initial_field(const PulseConfig& pulse, const Grid& grid) {
  validate(pulse, grid);
  const auto n = static_cast<std::size_t>(grid.size());
  std::vector<std::complex<double>> a(n);
  if (pulse.shape == PulseShape::user) {
    const CubicSpline re(pulse.user_time, pulse.user_re), im(pulse.user_time, pulse.user_im);
    for (std::size_t j = 0; j < n; ++j) {
      const double t = grid.t()[j];
      if (t >= pulse.user_time.front() && t <= pulse.user_time.back()) a[j] = {re(t), im(t)};
    }
    if (pulse.energy > 0) {  // scaled to the energy on the grid, Σ|A_j|² dt
      double energy = 0;
      for (const auto& v : a) energy += std::norm(v);
      energy *= grid.dt();
      if (!(energy > 0)) invalid_argument(kWhere, "the user pulse is zero on the grid: it cannot carry pulse.energy");
      const double scale = std::sqrt(pulse.energy / energy);
      for (auto& v : a) v *= scale;
    }
  } else {
    const double t0 = pulse_t0(pulse), amplitude = std::sqrt(launch_peak_power(pulse));
    for (std::size_t j = 0; j < n; ++j) {
      const double x = (grid.t()[j] - pulse.delay) / t0;
      const double envelope = pulse.shape == PulseShape::sech ? 1 / std::cosh(x) : std::exp(-x * x / 2);
      a[j] = amplitude * envelope * std::polar(1.0, -pulse.chirp * x * x / 2);
    }
  }
  // A carrier at ω0 + ΔΩ: the component at ΔΩ appears in A(T) as e^{−iΔΩ T} (grid.hpp), with
  // the phase referred to the pulse's centre.
  if (const double offset = carrier_offset(pulse, grid); offset != 0)
    for (std::size_t j = 0; j < n; ++j) a[j] *= std::polar(1.0, -offset * (grid.t()[j] - pulse.delay));
  check_fits(a);
  return a;
}

std::vector<std::complex<double>> initial_spectrum(const PulseConfig& pulse, const Grid& grid) {
  std::vector<std::complex<double>> spectrum = initial_field(pulse, grid);
  SpectralTransform(grid.size()).to_spectrum(spectrum.data(), spectrum.data());
  if (pulse.shot_noise) add_shot_noise(spectrum, grid, pulse.noise_seed);
  return spectrum;
}

void add_shot_noise(std::span<std::complex<double>> spectrum, const Grid& grid, std::uint64_t seed) {
  if (static_cast<std::int64_t>(spectrum.size()) != grid.size())
    invalid_argument(kWhere, "shot noise for a spectrum of ", spectrum.size(), " values on a grid of ", grid.size());
  std::mt19937_64 rng(seed);
  const double per_bin = static_cast<double>(grid.size()) / grid.dt();  // n/dt
  for (std::size_t k = 0; k < spectrum.size(); ++k) {
    const double omega = grid.omega0() + grid.omega()[k];
    const double phase = 2 * std::numbers::pi * uniform_from_bits(rng());
    spectrum[k] += std::polar(std::sqrt(kHbar * omega * per_bin), phase);
  }
}

Windows make_windows(const WindowConfig& window, const Grid& grid) {
  const double n_half = static_cast<double>(grid.size() / 2);
  Windows w;
  w.time = window_along(grid.t(), n_half * grid.dt(), window.time_edge, "window.time_edge");
  w.frequency = window_along(grid.omega(), n_half * grid.domega(), window.frequency_edge, "window.frequency_edge");
  return w;
}

void apply_windows(const Windows& windows, SpectralTransform& transform, std::complex<double>* spectrum) {
  const auto n = static_cast<std::size_t>(transform.size());
  if (!windows.frequency.empty())
    for (std::size_t k = 0; k < n; ++k) spectrum[k] *= windows.frequency[k];
  if (!windows.time.empty()) {
    transform.to_time(spectrum, spectrum);
    for (std::size_t j = 0; j < n; ++j) spectrum[j] *= windows.time[j];
    transform.to_spectrum(spectrum, spectrum);
  }
}

}  // namespace lockstep::prop
