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

/// Where a field applies. A field that does not apply to a configuration is left out of its
/// canonical form (so the canonical form, and the hash, of a configuration without capillary
/// or energy is what it was before those fields existed) and is refused in a recipe that
/// writes it.
enum class Scope {
  always,        ///< every configuration
  coefficients,  ///< fibre.type = coefficients (β_k or tables, loss, γ, Raman parameters)
  capillary,     ///< fibre.type = capillary
  helium,        ///< a capillary filled with He
  wall_index,    ///< a capillary with cladding = index
  peak_power,    ///< launched by peak power (pulse.energy = 0)
  energy,        ///< launched by energy (pulse.energy > 0)
  optional,      ///< every configuration; written only when it differs from the default
};

/// One Config field: its key (section.member: the recipe key and the canonical name), what it
/// measures, the unit of a bare number in a recipe, its accessor (works on Config and on
/// const Config) and where it applies.
template <class Access> struct Field {
  std::string_view key;
  Quantity quantity;
  std::string_view default_unit;  ///< "" for quantities without units
  Access access;
  Scope scope = Scope::always;

  std::string_view section() const { return key.substr(0, key.find('.')); }
  std::string_view name() const { return key.substr(key.find('.') + 1); }
};

#define LOCKSTEP_SCOPED_FIELD(section, member, quantity, unit, scope)                                 \
  Field {                                                                                             \
#section "." #member, Quantity::quantity, unit, [](auto& c) -> auto& { return c.section.member; } \
    , Scope::scope                                                                                    \
  }
#define LOCKSTEP_CONFIG_FIELD(section, member, quantity, unit) \
  LOCKSTEP_SCOPED_FIELD(section, member, quantity, unit, always)

// Default units are those of the lab (ps windows, nm wavelengths, fs pulses, dB/km loss);
// dispersion's default unit comes from fibre.betas_unit (recipe.cpp).
inline constexpr auto kConfigFields = std::tuple{
    LOCKSTEP_CONFIG_FIELD(grid, points, count, ""),
    LOCKSTEP_CONFIG_FIELD(grid, time_window, time, "ps"),
    LOCKSTEP_CONFIG_FIELD(grid, center_wavelength, length, "nm"),
    LOCKSTEP_CONFIG_FIELD(fibre, length, length, "m"),
    LOCKSTEP_SCOPED_FIELD(fibre, type, choice, "", optional),
    LOCKSTEP_SCOPED_FIELD(fibre, betas, dispersion, "", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, beta_table_omega, angular_frequency, "rad/s", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, beta_table_beta, wavenumber, "/m", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, loss, attenuation, "dB/km", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, loss_table_omega, angular_frequency, "rad/s", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, loss_table_alpha, attenuation, "/m", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, gamma, nonlinearity, "/W/m", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, gas, choice, "", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, pressure, pressure, "bar", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, temperature, temperature, "K", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, radius, length, "um", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, mode_model, choice, "", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, cladding, choice, "", capillary),
    LOCKSTEP_SCOPED_FIELD(fibre, cladding_index, ratio, "", wall_index),
    LOCKSTEP_SCOPED_FIELD(fibre, cladding_extinction, ratio, "", wall_index),
    LOCKSTEP_SCOPED_FIELD(fibre, helium_sellmeier, choice, "", helium),
    LOCKSTEP_CONFIG_FIELD(fibre, self_steepening, flag, ""),
    LOCKSTEP_CONFIG_FIELD(fibre, raman, choice, ""),
    LOCKSTEP_SCOPED_FIELD(fibre, raman_fraction, ratio, "", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, raman_tau1, time, "fs", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, raman_tau2, time, "fs", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, raman_fb, ratio, "", coefficients),
    LOCKSTEP_SCOPED_FIELD(fibre, raman_taub, time, "fs", coefficients),
    LOCKSTEP_CONFIG_FIELD(pulse, shape, choice, ""),
    LOCKSTEP_SCOPED_FIELD(pulse, peak_power, power, "W", peak_power),
    LOCKSTEP_SCOPED_FIELD(pulse, energy, energy, "uJ", energy),
    LOCKSTEP_CONFIG_FIELD(pulse, fwhm, time, "fs"),
    LOCKSTEP_CONFIG_FIELD(pulse, chirp, ratio, ""),
    LOCKSTEP_CONFIG_FIELD(pulse, delay, time, "fs"),
    LOCKSTEP_SCOPED_FIELD(pulse, wavelength, length, "nm", optional),
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
#undef LOCKSTEP_SCOPED_FIELD

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
template <> struct EnumNames<FibreType> {
  static constexpr std::array<std::pair<FibreType, std::string_view>, 2> values{
      {{FibreType::coefficients, "coefficients"}, {FibreType::capillary, "capillary"}}};
};
template <> struct EnumNames<gas::Species> {
  static constexpr std::array<std::pair<gas::Species, std::string_view>, 7> values{{{gas::Species::He, "He"},
                                                                                    {gas::Species::Ne, "Ne"},
                                                                                    {gas::Species::Ar, "Ar"},
                                                                                    {gas::Species::Kr, "Kr"},
                                                                                    {gas::Species::Xe, "Xe"},
                                                                                    {gas::Species::N2, "N2"},
                                                                                    {gas::Species::air, "air"}}};
};
template <> struct EnumNames<capillary::ModeForm> {
  static constexpr std::array<std::pair<capillary::ModeForm, std::string_view>, 2> values{
      {{capillary::ModeForm::full, "full"}, {capillary::ModeForm::reduced, "reduced"}}};
};
template <> struct EnumNames<CladdingKind> {
  static constexpr std::array<std::pair<CladdingKind, std::string_view>, 2> values{
      {{CladdingKind::silica, "silica"}, {CladdingKind::index, "index"}}};
};
template <> struct EnumNames<gas::HeliumForm> {
  static constexpr std::array<std::pair<gas::HeliumForm, std::string_view>, 2> values{
      {{gas::HeliumForm::ermolov, "ermolov"}, {gas::HeliumForm::borzsonyi, "borzsonyi"}}};
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

/// Whether a field of `scope` applies to `config` (is accepted in a recipe that gives it).
inline bool applies(Scope scope, const Config& config) {
  const FibreConfig& f = config.fibre;
  switch (scope) {
    case Scope::always:
    case Scope::optional: return true;
    case Scope::coefficients: return f.type == FibreType::coefficients;
    case Scope::capillary: return f.type == FibreType::capillary;
    case Scope::helium: return f.type == FibreType::capillary && f.gas == gas::Species::He;
    case Scope::wall_index: return f.type == FibreType::capillary && f.cladding == CladdingKind::index;
    case Scope::peak_power: return !(config.pulse.energy > 0);
    case Scope::energy: return config.pulse.energy > 0;
  }
  return true;
}

/// Whether the canonical form writes `field` of `config`: where it applies, and an optional
/// field only when it differs from its default.
template <class F> bool written(const F& field, const Config& config) {
  if (field.scope != Scope::optional) return applies(field.scope, config);
  static const Config defaults{};
  return field.access(config) != field.access(defaults);
}

/// Why a field of `scope` does not apply, for messages ("applies to ... only").
inline std::string_view scope_rule(Scope scope) {
  switch (scope) {
    case Scope::coefficients:
      return "applies to fibre.type = \"coefficients\" only (a capillary's dispersion, loss and nonlinearity "
             "follow from its gas and its mode; its Raman response is none)";
    case Scope::capillary: return "applies to fibre.type = \"capillary\" only";
    case Scope::helium: return "applies to a capillary filled with He (fibre.gas = \"He\") only";
    case Scope::wall_index: return "applies to a capillary with fibre.cladding = \"index\" only";
    case Scope::peak_power:
    case Scope::energy: return "give either pulse.peak_power or pulse.energy, not both";
    case Scope::always:
    case Scope::optional: break;
  }
  return "";
}

/// The name of `value`; empty for a value outside the enum's named set.
template <class E> std::string_view enum_name(E value) {
  for (const auto& [v, name] : EnumNames<E>::values)
    if (v == value) return name;
  return {};
}

}  // namespace lockstep::prop::io
