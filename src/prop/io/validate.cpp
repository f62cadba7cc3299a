// Validation of a whole Config: every range, shape and the fit of the pulse in the grid.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include "config_fields.hpp"
#include "field_text.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/prop/capillary.hpp"
#include "lockstep/prop/gas.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/recipe.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.recipe";

template <class... Parts> void require(bool ok, std::string_view key, Parts&&... parts) {
  if (!ok) invalid_argument(kWhere, key, ": ", std::forward<Parts>(parts)...);
}

/// Empty, or at least two strictly ascending values.
void require_ascending(const std::vector<double>& values, std::string_view key) {
  for (std::size_t i = 1; i < values.size(); ++i)
    require(values[i] > values[i - 1], key, "must be strictly ascending, but element ", i, " (", values[i],
            ") follows ", values[i - 1]);
}

void require_table(const std::vector<double>& omega, const std::vector<double>& values, std::string_view omega_key,
                   std::string_view values_key) {
  require(omega.size() == values.size(), values_key, "has ", values.size(), " values but ", omega_key, " has ",
          omega.size());
  require(omega.empty() || omega.size() >= 2, omega_key, "a table needs at least 2 points");
  require_ascending(omega, omega_key);
  require(omega.empty() || omega.front() > 0, omega_key, "absolute angular frequencies must be > 0");
}

/// An error message without its "[prop.gas] " prefix, to be wrapped in the recipe's.
std::string_view without_prefix(std::string_view message) {
  const auto end = message.find("] ");
  return message.starts_with('[') && end != std::string_view::npos ? message.substr(end + 2) : message;
}

/// The capillary: the gas's state inside the equation of state's domain, the wall, no Raman,
/// and a frequency window (lo … hi rad/s) below the gas's Sellmeier resonances.
void validate_capillary(const FibreConfig& f, double lo, double hi) {
  require(f.radius > 0, "fibre.radius", "must be > 0, got ", f.radius, " m");
  require(f.temperature >= gas::kMinTemperature && f.temperature <= gas::kMaxTemperature, "fibre.temperature",
          "must be in [", gas::kMinTemperature, ", ", gas::kMaxTemperature,
          "] K (the domain of the equations of state), got ", f.temperature, " K");
  require(f.pressure >= 0 && f.pressure <= gas::kMaxPressure, "fibre.pressure", "must be in [0, ",
          gas::kMaxPressure / gas::kBar, "] bar, got ", f.pressure / gas::kBar, " bar");
  try {
    gas::number_density(f.gas, f.pressure, f.temperature);
  } catch (const std::invalid_argument& e) {
    require(false, "fibre.pressure", without_prefix(e.what()));
  }
  require(f.raman == RamanModel::none, "fibre.raman",
          "a gas-filled capillary has no Raman response here (the noble gases have none; the rotational Raman "
          "response of N2 and air is not modelled yet): use \"none\" or leave the key out");
  if (f.cladding == CladdingKind::index) {
    require(f.cladding_index > 0, "fibre.cladding_index", "must be > 0, got ", f.cladding_index);
    require(f.cladding_extinction >= 0, "fibre.cladding_extinction", "must be ≥ 0 (absorption), got ",
            f.cladding_extinction);
    try {
      capillary::wall_term({f.cladding_index, f.cladding_extinction});
    } catch (const std::invalid_argument& e) {
      require(false, "fibre.cladding_index", without_prefix(e.what()));
    }
  }
  // The gas's Sellmeier form is refused at and beyond its resonances (the shortest wavelength
  // of the grid must lie above them).
  const double shortest = 2 * std::numbers::pi * kSpeedOfLight / hi;
  try {
    gas::sellmeier(f.gas, shortest, f.helium_sellmeier);
  } catch (const std::invalid_argument& e) {
    require(false, "grid.points", "the frequency window [", lo, ", ", hi, "] rad/s reaches ", shortest,
            " m, beyond the validity of the Sellmeier form of fibre.gas (", without_prefix(e.what()),
            "): use fewer points, a wider grid.time_window or a longer grid.center_wavelength");
  }
}

}  // namespace

void validate_config(const Config& c) {
  // Every real, and every element of every list, is finite.
  io::for_each_config_field([&](const auto& field) {
    const auto& value = field.access(c);
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<T, double>) {
      require(std::isfinite(value), field.key, "must be finite, got ", value);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      for (std::size_t i = 0; i < value.size(); ++i)
        require(std::isfinite(value[i]), std::string(field.key) + "[" + std::to_string(i) + "]", "must be finite, got ",
                value[i]);
    } else if constexpr (std::is_enum_v<T>) {
      require(!io::enum_name(value).empty(), field.key, "value ", static_cast<long long>(value),
              " is not a named choice");
    }
  });

  const auto& g = c.grid;
  require(g.points % 2 == 0, "grid.points", "must be even, got ", g.points);
  require(g.points >= 16, "grid.points", "too few points: ", g.points, " (at least 16)");
  require(g.points <= (std::int64_t{1} << 28), "grid.points", "too many points: ", g.points, " (at most 2^28)");
  require(g.time_window > 0, "grid.time_window", "must be > 0, got ", g.time_window, " s");
  require(g.center_wavelength > 0, "grid.center_wavelength", "must be > 0, got ", g.center_wavelength, " m");
  // The rule of Grid's constructor, checked without building the grids (2^28 points would
  // allocate gigabytes): the frequency window must stay at positive absolute frequencies.
  const double half_span = 2 * std::numbers::pi / g.time_window * static_cast<double>(g.points / 2);
  const double omega0 = 2 * std::numbers::pi * kSpeedOfLight / g.center_wavelength;
  require(half_span < omega0, "grid.points", "the frequency window (±", half_span,
          " rad/s) reaches zero or negative absolute frequency around ω0 = ", omega0,
          " rad/s: use fewer points or a wider grid.time_window");
  const double dt = g.time_window / static_cast<double>(g.points);

  const double lo = omega0 - half_span, hi = omega0 + half_span - 2 * std::numbers::pi / g.time_window;

  const auto& f = c.fibre;
  require(f.length > 0, "fibre.length", "must be > 0, got ", f.length, " m");
  if (f.type == FibreType::capillary) {
    validate_capillary(f, lo, hi);
  } else {
    require_table(f.beta_table_omega, f.beta_table_beta, "fibre.beta_table_omega", "fibre.beta_table_beta");
    require(f.loss >= 0, "fibre.loss", "must be ≥ 0, got ", f.loss, " /m");
    require_table(f.loss_table_omega, f.loss_table_alpha, "fibre.loss_table_omega", "fibre.loss_table_alpha");
    for (std::size_t i = 0; i < f.loss_table_alpha.size(); ++i)
      require(f.loss_table_alpha[i] >= 0, "fibre.loss_table_alpha[" + std::to_string(i) + "]", "must be ≥ 0, got ",
              f.loss_table_alpha[i]);
    require(f.gamma >= 0, "fibre.gamma", "must be ≥ 0, got ", f.gamma, " /W/m");
    require(f.raman_fraction >= 0 && f.raman_fraction <= 1, "fibre.raman_fraction", "must be in [0, 1], got ",
            f.raman_fraction);
    require(f.raman_tau1 > 0, "fibre.raman_tau1", "must be > 0, got ", f.raman_tau1, " s");
    require(f.raman_tau2 > 0, "fibre.raman_tau2", "must be > 0, got ", f.raman_tau2, " s");
    require(f.raman_fb >= 0 && f.raman_fb <= 1, "fibre.raman_fb", "must be in [0, 1], got ", f.raman_fb);
    require(f.raman_taub > 0, "fibre.raman_taub", "must be > 0, got ", f.raman_taub, " s");
  }

  const auto& p = c.pulse;
  const double half_window = g.time_window / 2;
  require(p.energy >= 0, "pulse.energy", "must be > 0 (or 0: launch by pulse.peak_power), got ", p.energy, " J");
  if (!(p.energy > 0)) require(p.peak_power > 0, "pulse.peak_power", "must be > 0, got ", p.peak_power, " W");
  require(p.fwhm > 0, "pulse.fwhm", "must be > 0, got ", p.fwhm, " s");
  require(p.wavelength >= 0, "pulse.wavelength", "must be > 0 (or 0: grid.center_wavelength), got ", p.wavelength,
          " m");
  if (p.wavelength > 0) {
    // The carrier, and 5 spectral widths either side of it (a transform-limited Gaussian's
    // intensity FWHM, 4 ln 2 / fwhm rad/s, times √(1 + C²) for the chirp), lie in the window.
    const double carrier = 2 * std::numbers::pi * kSpeedOfLight / p.wavelength;
    const double width =
        p.shape == PulseShape::user ? 0.0 : 5 * 4 * std::numbers::ln2 / p.fwhm * std::sqrt(1 + p.chirp * p.chirp);
    require(carrier - width > lo && carrier + width < hi, "pulse.wavelength", "the pulse's spectrum (carrier ", carrier,
            " rad/s, ±", width, " rad/s for 5 spectral widths) does not fit the frequency window [", lo, ", ", hi,
            "] rad/s: move grid.center_wavelength or use more grid.points");
  }
  // Seeds are TOML integers in the canonical form, hence below 2^63.
  require(p.noise_seed <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), "pulse.noise_seed",
          "must be < 2^63, got ", p.noise_seed);
  if (p.shape == PulseShape::user) {
    require(p.user_time.size() >= 2, "pulse.user_time", "a user pulse needs at least 2 samples (or pulse.user_file)");
    require(p.user_re.size() == p.user_time.size(), "pulse.user_re", "has ", p.user_re.size(),
            " values but pulse.user_time has ", p.user_time.size());
    require(p.user_im.size() == p.user_time.size(), "pulse.user_im", "has ", p.user_im.size(),
            " values but pulse.user_time has ", p.user_time.size());
    require_ascending(p.user_time, "pulse.user_time");
    require(p.user_time.front() >= -half_window && p.user_time.back() < half_window, "pulse.user_time", "the field (",
            p.user_time.front(), " s to ", p.user_time.back(), " s) does not fit the time window [", -half_window,
            " s, ", half_window, " s)");
  } else {
    require(p.user_time.empty() && p.user_re.empty() && p.user_im.empty(), "pulse.user_time",
            "a user field is given but pulse.shape is not \"user\"");
    // The pulse must decay inside the window: 5 FWHM on either side leave < 1e-7 of the peak
    // intensity (sech² at 8.8 T0) at the edges.
    require(std::abs(p.delay) + 5 * p.fwhm <= half_window, "grid.time_window",
            "too small for the pulse: |delay| + 5·fwhm = ", std::abs(p.delay) + 5 * p.fwhm,
            " s must fit in half the window (", half_window, " s)");
    require(p.fwhm >= 3 * dt, "pulse.fwhm", p.fwhm, " s spans fewer than 3 samples (dt = ", dt,
            " s): use more grid.points or a smaller grid.time_window");
  }

  const auto& w = c.window;
  require(w.time_edge >= 0 && w.time_edge <= 0.5, "window.time_edge", "must be in [0, 0.5], got ", w.time_edge);
  require(w.frequency_edge >= 0 && w.frequency_edge <= 0.5, "window.frequency_edge", "must be in [0, 0.5], got ",
          w.frequency_edge);

  const auto& s = c.stepping;
  require(s.rtol > 0 && s.rtol < 1, "stepping.rtol", "must be in (0, 1), got ", s.rtol);
  require(s.atol > 0, "stepping.atol", "must be > 0, got ", s.atol);
  require(s.initial_step > 0 && s.initial_step <= f.length, "stepping.initial_step",
          "must be in (0, fibre.length], got ", s.initial_step, " m");
  require(s.min_step >= 0, "stepping.min_step", "must be ≥ 0, got ", s.min_step, " m");
  require(s.max_step >= 0, "stepping.max_step", "must be ≥ 0 (0: the fibre length), got ", s.max_step, " m");
  require(s.max_step == 0 || s.min_step <= s.max_step, "stepping.min_step", "(", s.min_step,
          " m) exceeds stepping.max_step (", s.max_step, " m)");
  require(s.max_rejections >= 1, "stepping.max_rejections", "must be ≥ 1, got ", s.max_rejections);
  require(s.fixed_steps >= 1, "stepping.fixed_steps", "must be ≥ 1, got ", s.fixed_steps);
  if (!s.schedule.empty()) {
    require(s.schedule.front() > 0, "stepping.schedule", "step ends must be > 0, got ", s.schedule.front(), " m");
    require_ascending(s.schedule, "stepping.schedule");
    // The last step end is the fibre length up to the rounding of a replayed sum of steps.
    require(std::abs(s.schedule.back() - f.length) <= 1e-12 * f.length, "stepping.schedule",
            "must end at fibre.length (", f.length, " m), ends at ", s.schedule.back(), " m");
  }

  const auto& o = c.output;
  require(o.n_save >= 2, "output.n_save", "must be ≥ 2 (both ends), got ", o.n_save);
  require_ascending(o.save_z, "output.save_z");
  require(o.save_z.empty() || (o.save_z.front() >= 0 && o.save_z.back() <= f.length), "output.save_z",
          "planes must lie in [0, fibre.length]");
}

}  // namespace lockstep::prop
