// Physical quantities of the recipe keys and their units. Values with a unit are written as
// strings ("15 cm", "-11.830 ps^2/km"); bare numbers are in the key's documented default unit.
//
// Exactness: every unit except the dB ones, atm, Torr and degC is a power of ten of the SI unit,
// and the scaling is done on the decimal text (the exponent is shifted, then the text is read
// once), so "15 cm" gives exactly the double nearest to 0.15 — the same as the literal 0.15 in
// config.hpp. The others multiply (dB, atm, Torr) or add (degC: + 273.15, in extended precision)
// once after that.
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
  pressure,           ///< Pa; hPa, kPa, MPa, mbar, bar, atm and Torr accepted
  temperature,        ///< K; degC (°C) accepted
  energy,             ///< J
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
/// betas_unit = "ps^k/m"). Throws std::invalid_argument "[<where>] <key>: ..." naming the
/// accepted units when `unit` is not one of them.
Unit parse_unit(std::string_view unit, Quantity q, int order, std::string_view key,
                std::string_view where = "prop.recipe");

/// The SI value of the decimal number `number` (as written) in `unit`, exactly rounded when
/// the unit's factor is 1 and its offset 0. Throws "[<where>] <key>: ..." when `number` is not
/// a finite decimal number.
double scale_decimal(std::string_view number, const Unit& unit, std::string_view key,
                     std::string_view where = "prop.recipe");

/// Shortest text that reads back to exactly `value` ("0.15", "1.25e-11", "-0").
std::string shortest(double value);

/// Splits "15 cm" into number text and unit text (either may be empty).
struct ValueText {
  std::string_view number, unit;
};
ValueText split_value(std::string_view text);

/// A value written as text, "<number> [unit]" ("5 bar", "800 nm", "0.5 mJ", "20 degC") or a bare
/// number in `default_unit`, as the SI value of `q` (a scalar quantity; not dispersion). The
/// command line and Python read their values with it. Throws "[<where>] <key>: ..." for text
/// that is not a number, a unit that is not one of `q`'s, or a non-finite value.
double parse_quantity(std::string_view text, Quantity q, std::string_view default_unit, std::string_view key,
                      std::string_view where);

}  // namespace lockstep::prop::io
