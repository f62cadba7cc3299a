// The one table of Config fields. Every field of lockstep::prop::Config appears here exactly
// once, in the canonical order; the recipe reader, the canonical serialisation (hence the
// configuration hash), config_differences and the tests all iterate this table, so a new
// Config field is one line here (tests/cpp/prop/test_config_hash.cpp fails until it is).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <utility>

#include "lockstep/prop/config.hpp"
#include "units.hpp"

namespace lockstep::prop::io {

/// One Config field: its key (section.member: the recipe key and the canonical name), what it
/// measures, the unit of a bare number in a recipe, and its accessor (works on Config and on
/// const Config).
template <class Access> struct Field {
  std::string_view key;
  Quantity quantity;
  std::string_view default_unit;  ///< "" for quantities without units
  Access access;

  std::string_view section() const { return key.substr(0, key.find('.')); }
  std::string_view name() const { return key.substr(key.find('.') + 1); }
};

#define LOCKSTEP_CONFIG_FIELD(section, member, quantity, unit)                                        \
  Field {                                                                                             \
#section "." #member, Quantity::quantity, unit, [](auto& c) -> auto& { return c.section.member; } \
  }

// Default units are those of the lab (ps windows, nm wavelengths, fs pulses, dB/km loss);
// dispersion's default unit comes from fibre.betas_unit (recipe.cpp).
inline constexpr auto kConfigFields = std::tuple{
    LOCKSTEP_CONFIG_FIELD(grid, points, count, ""),
    LOCKSTEP_CONFIG_FIELD(grid, time_window, time, "ps"),
    LOCKSTEP_CONFIG_FIELD(grid, center_wavelength, length, "nm"),
    LOCKSTEP_CONFIG_FIELD(fibre, length, length, "m"),
    LOCKSTEP_CONFIG_FIELD(fibre, betas, dispersion, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, beta_table_omega, angular_frequency, "rad/s"),
    LOCKSTEP_CONFIG_FIELD(fibre, beta_table_beta, wavenumber, "/m"),
    LOCKSTEP_CONFIG_FIELD(fibre, loss, attenuation, "dB/km"),
    LOCKSTEP_CONFIG_FIELD(fibre, loss_table_omega, angular_frequency, "rad/s"),
    LOCKSTEP_CONFIG_FIELD(fibre, loss_table_alpha, attenuation, "/m"),
    LOCKSTEP_CONFIG_FIELD(fibre, gamma, nonlinearity, "/W/m"),
    LOCKSTEP_CONFIG_FIELD(fibre, self_steepening, flag, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, raman, choice, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, raman_fraction, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, raman_tau1, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(fibre, raman_tau2, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(fibre, raman_fb, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, raman_taub, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(pulse, shape, choice, ""),
    LOCKSTEP_CONFIG_FIELD(pulse, peak_power, power, "W"),
    LOCKSTEP_CONFIG_FIELD(pulse, fwhm, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(pulse, chirp, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(pulse, delay, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(pulse, user_time, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(pulse, user_re, amplitude, "sqrt(W)"),
    LOCKSTEP_CONFIG_FIELD(pulse, user_im, amplitude, "sqrt(W)"),
    LOCKSTEP_CONFIG_FIELD(pulse, shot_noise, flag, ""),
    LOCKSTEP_CONFIG_FIELD(pulse, noise_seed, seed, ""),
    LOCKSTEP_CONFIG_FIELD(window, time_edge, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(window, frequency_edge, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, scheme, choice, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, adaptive, flag, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, rtol, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, atol, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, norm, choice, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, initial_step, length, "m"),
    LOCKSTEP_CONFIG_FIELD(stepping, min_step, length, "m"),
    LOCKSTEP_CONFIG_FIELD(stepping, max_step, length, "m"),
    LOCKSTEP_CONFIG_FIELD(stepping, max_rejections, count, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, fixed_steps, count, ""),
    LOCKSTEP_CONFIG_FIELD(stepping, schedule, length, "m"),
    LOCKSTEP_CONFIG_FIELD(stepping, policy, choice, ""),
    LOCKSTEP_CONFIG_FIELD(output, n_save, count, ""),
    LOCKSTEP_CONFIG_FIELD(output, save_z, length, "m"),
};

#undef LOCKSTEP_CONFIG_FIELD

inline constexpr std::size_t kConfigFieldCount = std::tuple_size_v<decltype(kConfigFields)>;

/// Calls f(field) for every field, in the canonical order.
template <class F> void for_each_config_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, kConfigFields);
}

/// The value type of a field (double, std::int64_t, std::vector<double>, an enum, ...).
template <class F>
using field_type = std::remove_cvref_t<decltype(std::declval<const F&>().access(std::declval<Config&>()))>;

/// The names of an enum's values in recipes and files.
template <class E> struct EnumNames;
template <> struct EnumNames<RamanModel> {
  static constexpr std::array<std::pair<RamanModel, std::string_view>, 4> values{
      {{RamanModel::none, "none"},
       {RamanModel::blow_wood, "blow-wood"},
       {RamanModel::lin_agrawal, "lin-agrawal"},
       {RamanModel::hollenbeck_cantrell, "hollenbeck-cantrell"}}};
};
template <> struct EnumNames<PulseShape> {
  static constexpr std::array<std::pair<PulseShape, std::string_view>, 3> values{
      {{PulseShape::sech, "sech"}, {PulseShape::gaussian, "gaussian"}, {PulseShape::user, "user"}}};
};
template <> struct EnumNames<Scheme> {
  static constexpr std::array<std::pair<Scheme, std::string_view>, 3> values{
      {{Scheme::rk4ip, "rk4ip"}, {Scheme::erk43ip, "erk43ip"}, {Scheme::dp54ip, "dp54ip"}}};
};
template <> struct EnumNames<ErrorNorm> {
  static constexpr std::array<std::pair<ErrorNorm, std::string_view>, 3> values{
      {{ErrorNorm::weak, "weak"}, {ErrorNorm::max, "max"}, {ErrorNorm::rms, "rms"}}};
};
template <> struct EnumNames<FixedPolicy> {
  static constexpr std::array<std::pair<FixedPolicy, std::string_view>, 3> values{
      {{FixedPolicy::record, "record"}, {FixedPolicy::fail, "fail"}, {FixedPolicy::subdivide, "subdivide"}}};
};

/// The name of `value`; empty for a value outside the enum's named set.
template <class E> std::string_view enum_name(E value) {
  for (const auto& [v, name] : EnumNames<E>::values)
    if (v == value) return name;
  return {};
}

}  // namespace lockstep::prop::io
