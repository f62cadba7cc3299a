#include "units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <system_error>
#include <utility>

#include "lockstep/core/error.hpp"

namespace lockstep::prop::io {

namespace {

using Prefixed = std::pair<std::string_view, int>;  // unit name, decimal exponent
constexpr std::array<Prefixed, 7> kTimeUnits{
    {{"s", 0}, {"ms", -3}, {"us", -6}, {"ns", -9}, {"ps", -12}, {"fs", -15}, {"as", -18}}};
constexpr std::array<Prefixed, 6> kLengthUnits{{{"m", 0}, {"km", 3}, {"cm", -2}, {"mm", -3}, {"um", -6}, {"nm", -9}}};
constexpr std::array<Prefixed, 5> kPowerUnits{{{"W", 0}, {"mW", -3}, {"kW", 3}, {"MW", 6}, {"GW", 9}}};
constexpr std::array<Prefixed, 6> kPressureUnits{
    {{"Pa", 0}, {"hPa", 2}, {"kPa", 3}, {"MPa", 6}, {"mbar", 2}, {"bar", 5}}};
constexpr std::array<Prefixed, 7> kEnergyUnits{
    {{"J", 0}, {"kJ", 3}, {"mJ", -3}, {"uJ", -6}, {"nJ", -9}, {"pJ", -12}, {"fJ", -15}}};
constexpr double kAtmospherePa = 101325.0;      // exact, by definition
constexpr long double kZeroCelsiusK = 273.15L;  // exact, by definition (as a decimal)

template <std::size_t N> std::optional<int> lookup(const std::array<Prefixed, N>& table, std::string_view name) {
  for (const auto& [unit, exponent] : table)
    if (unit == name) return exponent;
  return std::nullopt;
}

/// Removes spaces, '*' and '·', spells micro as 'u' (both the micro sign and Greek mu) and the
/// degree sign as "deg" ("°C" → "degC").
std::string normalise(std::string_view unit) {
  std::string out;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    const auto rest = unit.substr(i);
    if (rest.starts_with("\xC2\xB5") || rest.starts_with("\xCE\xBC")) {  // µ (U+00B5), μ (U+03BC)
      out += 'u';
      ++i;
    } else if (rest.starts_with("\xC2\xB7")) {  // ·
      ++i;
    } else if (rest.starts_with("\xC2\xB0")) {  // ° (U+00B0)
      out += "deg";
      ++i;
    } else if (unit[i] != ' ' && unit[i] != '*' && unit[i] != '\t') {
      out += unit[i];
    }
  }
  return out;
}

/// "/x" or "1/x" → x; otherwise nullopt.
std::optional<std::string_view> reciprocal_of(std::string_view u) {
  if (u.starts_with("1/")) return u.substr(2);
  if (u.starts_with("/")) return u.substr(1);
  return std::nullopt;
}

std::optional<Unit> parse_nonlinearity(std::string_view u) {
  if (u == "W^-1m^-1") return Unit{0};
  if (u == "W^-1km^-1") return Unit{-3};
  const auto den = reciprocal_of(u);
  if (!den) return std::nullopt;
  std::string_view length;
  if (den->starts_with("W/")) length = den->substr(2);
  else if (den->starts_with("(W") && den->ends_with(")")) length = den->substr(2, den->size() - 3);
  else return std::nullopt;
  if (const auto e = lookup(kLengthUnits, length)) return Unit{-*e};
  return std::nullopt;
}

std::optional<Unit> parse_per_length(std::string_view u) {
  if (const auto den = reciprocal_of(u))
    if (const auto e = lookup(kLengthUnits, *den)) return Unit{-*e};
  return std::nullopt;
}

std::optional<Unit> parse_dispersion(std::string_view u, int order) {
  const auto caret = u.find('^'), slash = u.find('/');
  if (caret == std::string_view::npos || slash == std::string_view::npos || slash < caret) return std::nullopt;
  const auto time = lookup(kTimeUnits, u.substr(0, caret));
  const auto length = lookup(kLengthUnits, u.substr(slash + 1));
  if (!time || !length) return std::nullopt;
  const auto k = u.substr(caret + 1, slash - caret - 1);
  if (k != "k") {
    int written = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), written);
    if (ec != std::errc{} || end != k.data() + k.size() || written != order) return std::nullopt;
  }
  return Unit{*time * order - *length};
}

std::optional<Unit> try_parse(const std::string& u, Quantity q, int order) {
  switch (q) {
    case Quantity::time:
      if (const auto e = lookup(kTimeUnits, u)) return Unit{*e};
      return std::nullopt;
    case Quantity::length:
      if (const auto e = lookup(kLengthUnits, u)) return Unit{*e};
      return std::nullopt;
    case Quantity::power:
      if (const auto e = lookup(kPowerUnits, u)) return Unit{*e};
      return std::nullopt;
    case Quantity::nonlinearity: return parse_nonlinearity(u);
    case Quantity::attenuation:
      if (u.starts_with("dB/"))
        if (const auto e = lookup(kLengthUnits, std::string_view(u).substr(3)))
          return Unit{-*e, std::numbers::ln10 / 10};  // dB of power per length → α
      return parse_per_length(u);
    case Quantity::wavenumber:
      if (u.starts_with("rad/")) return parse_per_length(std::string_view(u).substr(3));
      return parse_per_length(u);
    case Quantity::angular_frequency:
      if (u.starts_with("rad/"))
        if (const auto e = lookup(kTimeUnits, std::string_view(u).substr(4))) return Unit{-*e};
      return std::nullopt;
    case Quantity::amplitude:
      if (u == "sqrt(W)") return Unit{0};
      return std::nullopt;
    case Quantity::dispersion: return parse_dispersion(u, order);
    case Quantity::pressure:
      if (const auto e = lookup(kPressureUnits, u)) return Unit{*e};
      if (u == "atm") return Unit{0, kAtmospherePa};
      if (u == "Torr") return Unit{0, kAtmospherePa / 760};
      return std::nullopt;
    case Quantity::temperature:
      if (u == "K") return Unit{0};
      if (u == "degC") return Unit{0, 1.0, kZeroCelsiusK};
      return std::nullopt;
    case Quantity::energy:
      if (const auto e = lookup(kEnergyUnits, u)) return Unit{*e};
      return std::nullopt;
    case Quantity::count:
    case Quantity::seed:
    case Quantity::flag:
    case Quantity::choice:
    case Quantity::ratio: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view describe(Quantity q) {
  switch (q) {
    case Quantity::time: return "a time (s, ms, us, ns, ps, fs, as)";
    case Quantity::length: return "a length (m, km, cm, mm, um, nm)";
    case Quantity::power: return "a power (W, mW, kW, MW, GW)";
    case Quantity::nonlinearity: return "a nonlinear coefficient (/W/m, /W/km, 1/(W m), 1/(W km))";
    case Quantity::attenuation: return "an attenuation (dB/km, dB/m, /m, /km)";
    case Quantity::wavenumber: return "a propagation constant (/m, /mm, /um, rad/m)";
    case Quantity::angular_frequency: return "an angular frequency (rad/s, rad/ps, rad/fs)";
    case Quantity::amplitude: return "a field amplitude (sqrt(W))";
    case Quantity::dispersion: return "a dispersion coefficient (<time>^k/<length>, e.g. ps^2/km)";
    case Quantity::pressure: return "a pressure (Pa, hPa, kPa, MPa, mbar, bar, atm, Torr)";
    case Quantity::temperature: return "a temperature (K, degC)";
    case Quantity::energy: return "an energy (J, kJ, mJ, uJ, nJ, pJ, fJ)";
    case Quantity::count: return "an integer";
    case Quantity::seed: return "a non-negative integer";
    case Quantity::flag: return "true or false";
    case Quantity::choice: return "a name";
    case Quantity::ratio: return "a plain number";
  }
  return "a value";
}

}  // namespace

bool has_unit(Quantity q) {
  switch (q) {
    case Quantity::count:
    case Quantity::seed:
    case Quantity::flag:
    case Quantity::choice:
    case Quantity::ratio: return false;
    default: return true;
  }
}

std::string si_unit(Quantity q, int order) {
  switch (q) {
    case Quantity::time: return "s";
    case Quantity::length: return "m";
    case Quantity::power: return "W";
    case Quantity::nonlinearity: return "/W/m";
    case Quantity::attenuation: return "/m";
    case Quantity::wavenumber: return "/m";
    case Quantity::angular_frequency: return "rad/s";
    case Quantity::amplitude: return "sqrt(W)";
    case Quantity::dispersion: return "s^" + std::to_string(order) + "/m";
    case Quantity::pressure: return "Pa";
    case Quantity::temperature: return "K";
    case Quantity::energy: return "J";
    default: return "";
  }
}

Unit parse_unit(std::string_view unit, Quantity q, int order, std::string_view key, std::string_view where) {
  const std::string u = normalise(unit);
  if (const auto parsed = try_parse(u, q, order)) return *parsed;
  if (q == Quantity::dispersion && u.find('^') != std::string::npos)
    invalid_argument(where, key, ": unit '", unit, "' does not fit β", order, ": expected s^", order,
                     "/m or another <time>^", order, "/<length> (or ^k)");
  // Name the dimension the unit does have, when it has one.
  for (Quantity other :
       {Quantity::time, Quantity::length, Quantity::power, Quantity::nonlinearity, Quantity::attenuation,
        Quantity::angular_frequency, Quantity::amplitude, Quantity::pressure, Quantity::temperature, Quantity::energy})
    if (other != q && try_parse(u, other, order))
      invalid_argument(where, key, ": unit '", unit, "' is ", describe(other), ", expected ", describe(q));
  invalid_argument(where, key, ": unknown unit '", unit, "', expected ", describe(q));
}

double scale_decimal(std::string_view number, const Unit& unit, std::string_view key, std::string_view where) {
  const auto bad = [&](std::string_view why) { invalid_argument(where, key, ": '", number, "' is not ", why); };
  // A plain decimal: [sign] digits [. digits] [e [sign] digits]. from_chars alone would also
  // accept "inf" and "nan".
  std::size_t i = 0, digits = 0;
  if (i < number.size() && (number[i] == '-' || number[i] == '+')) ++i;
  const std::size_t mantissa_start = i;
  for (; i < number.size() && std::isdigit(static_cast<unsigned char>(number[i])); ++i) ++digits;
  if (i < number.size() && number[i] == '.')
    for (++i; i < number.size() && std::isdigit(static_cast<unsigned char>(number[i])); ++i) ++digits;
  if (digits == 0) bad("a number");
  const std::size_t mantissa_end = i;
  long exponent = 0;
  if (i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
    ++i;
    const char* first = number.data() + i + (i < number.size() && number[i] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, number.data() + number.size(), exponent);
    if (ec != std::errc{} || end != number.data() + number.size()) bad("a number");
    i = number.size();
  }
  if (i != number.size()) bad("a number");
  if (exponent > 100000 || exponent < -100000) bad("a number in the range of double");
  // "+" is not accepted by from_chars; the sign is applied afterwards.
  std::string text(number.substr(mantissa_start, mantissa_end - mantissa_start));
  text += 'e';
  text += std::to_string(exponent + unit.exponent);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) bad("a number in the range of double");
  if (ec != std::errc{} || end != text.data() + text.size()) bad("a number");
  if (number[0] == '-') value = -value;
  value *= unit.factor;
  // An offset (degC only; adding +0 would turn -0 into +0) is added once, in extended
  // precision, so that "20 degC" is the double nearest to 293.15 (as the literal in config.hpp).
  if (unit.offset != 0) value = static_cast<double>(static_cast<long double>(value) + unit.offset);
  if (!std::isfinite(value)) bad("a finite number");
  return value;
}

std::string shortest(double value) {
  std::array<char, 32> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), ec == std::errc{} ? end : buffer.data());
}

ValueText split_value(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  text = text.substr(b, e - b);
  // The number ends at the first character that cannot continue it; "e" belongs to the number
  // only when a digit (or a sign and a digit) follows, so "5 dB/km" and "3e2 m" split right.
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '-' || text[j] == '+')) ++j;
    if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      i = j;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    }
  }
  std::size_t u = i;
  while (u < text.size() && std::isspace(static_cast<unsigned char>(text[u]))) ++u;
  return {text.substr(0, i), text.substr(u)};
}

double parse_quantity(std::string_view text, Quantity q, std::string_view default_unit, std::string_view key,
                      std::string_view where) {
  const auto [number, written_unit] = split_value(text);
  if (number.empty()) invalid_argument(where, key, ": '", text, "' is not a number with a unit");
  const std::string_view unit = written_unit.empty() ? default_unit : written_unit;
  return scale_decimal(number, parse_unit(unit, q, 0, key, where), key, where);
}

}  // namespace lockstep::prop::io
