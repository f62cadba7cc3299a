#include "lockstep/prop/grid.hpp"

#include <cmath>
#include <numbers>

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

Grid::Grid(const GridConfig& config) : n_(config.points) {
  constexpr const char* where = "prop.grid";
  if (n_ < 16 || n_ % 2 != 0 || n_ > (std::int64_t{1} << 28))
    invalid_argument(where, "grid.points = ", n_, " must be even and in [16, 2^28]");
  if (!std::isfinite(config.time_window) || config.time_window <= 0)
    invalid_argument(where, "grid.time_window = ", config.time_window, " s must be finite and > 0");
  if (!std::isfinite(config.center_wavelength) || config.center_wavelength <= 0)
    invalid_argument(where, "grid.center_wavelength = ", config.center_wavelength, " m must be finite and > 0");
  dt_ = config.time_window / static_cast<double>(n_);
  domega_ = 2 * std::numbers::pi / config.time_window;
  omega0_ = 2 * std::numbers::pi * kSpeedOfLight / config.center_wavelength;
  if (domega_ * static_cast<double>(n_ / 2) >= omega0_)
    invalid_argument(where, "the frequency window (±", domega_ * static_cast<double>(n_ / 2),
                     " rad/s) reaches zero or negative absolute frequency around ω0 = ", omega0_,
                     " rad/s: use fewer points or a wider time window");
  t_.resize(static_cast<std::size_t>(n_));
  omega_.resize(static_cast<std::size_t>(n_));
  for (std::int64_t j = 0; j < n_; ++j) {
    t_[static_cast<std::size_t>(j)] = static_cast<double>(j - n_ / 2) * dt_;
    const std::int64_t k = j < n_ / 2 ? j : j - n_;
    omega_[static_cast<std::size_t>(j)] = static_cast<double>(k) * domega_;
  }
}

std::vector<double> Grid::omega_ascending() const {
  std::vector<double> out(static_cast<std::size_t>(n_));
  for (std::int64_t k = 0; k < n_; ++k)
    out[static_cast<std::size_t>(k)] = omega0_ + omega_[static_cast<std::size_t>(ascending_to_fft(k))];
  return out;
}

std::vector<double> Grid::wavelengths() const {
  std::vector<double> out = omega_ascending();
  for (double& w : out) w = 2 * std::numbers::pi * kSpeedOfLight / w;
  return out;
}

}  // namespace lockstep::prop
