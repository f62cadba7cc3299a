// Physical quantities of the recipe keys and their units. Values with a unit are written as
// strings ("15 cm", "-11.830 ps^2/km"); bare numbers are in the key's documented default unit.
//
// Exactness: every unit except the dB ones, atm, Torr and degC is a power of ten of the SI unit,
// and the scaling is done on the decimal text (the exponent is shifted, then the text is read
// once), so "15 cm" gives exactly the double nearest to 0.15 — the same as the literal 0.15 in
// config.hpp. atm and Torr multiply by their factor once; degC adds 273.15 K once (rounded).
#pragma once

#include <string>
#include <string_view>

namespace lockstep::prop::io {

/// What a Config field measures: decides its units, its TOML type and its canonical form.
enum class Quantity {
  count,              ///< an integer without unit
  seed,               ///< a non-negative integer
  flag,               ///< a boolean
  choice,             ///< one of an enum's names
  ratio,              ///< a dimensionless real (a plain number)
  time,               ///< s
  length,             ///< m
  power,              ///< W
  nonlinearity,       ///< 1/(W·m)
  attenuation,        ///< 1/m of power; dB/km and dB/m accepted
  dispersion,         ///< s^k/m (β_k; k is given by the position in the list)
  angular_frequency,  ///< rad/s
  wavenumber,         ///< 1/m (a propagation constant)
  amplitude,          ///< √W
  energy,             ///< J
  pressure,           ///< Pa
  temperature,        ///< K (degC accepted)
};

/// True for the quantities whose values carry units (strings in a recipe).
bool has_unit(Quantity q);

/// The SI unit the canonical form writes, e.g. "s", "/W/m", "s^3/m" (dispersion of order k).
std::string si_unit(Quantity q, int order = 0);

/// A parsed unit: value_SI = number · 10^exponent · factor + offset.
struct Unit {
  int exponent = 0;
  double factor = 1.0;     ///< 1 except for the dB units, atm and Torr
  long double offset = 0;  ///< 0 except for degC (273.15 K, added in extended precision)
};

/// Parses `unit` as a unit of `q`. Dispersion units are "<time>^<k>/<length>" for β_k of
/// order `order`, where the written k must equal `order` or be the letter k (as in
/// betas_unit = "ps^k/m"). Throws std::invalid_argument "[prop.recipe] <key>: ..." naming the
/// accepted units when `unit` is not one of them.
Unit parse_unit(std::string_view unit, Quantity q, int order, std::string_view key);

/// The SI value of the decimal number `number` (as written) in `unit`, exactly rounded when
/// the unit's factor is 1. Throws naming `key` when `number` is not a finite decimal number.
double scale_decimal(std::string_view number, const Unit& unit, std::string_view key);

/// Shortest text that reads back to exactly `value` ("0.15", "1.25e-11", "-0").
std::string shortest(double value);

/// Splits "15 cm" into number text and unit text (either may be empty).
struct ValueText {
  std::string_view number, unit;
};
ValueText split_value(std::string_view text);

}  // namespace lockstep::prop::io
