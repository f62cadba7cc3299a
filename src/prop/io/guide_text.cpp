#include "lockstep/prop/guide_text.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>

#include "lockstep/core/error.hpp"
#include "units.hpp"

namespace lockstep::prop::guide {

namespace {

constexpr const char* kWhere = "prop.mode";

/// A required field's value with a unit of `q` (bare numbers in `si_unit`).
double quantity(const std::string& text, io::Quantity q, std::string_view si_unit, std::string_view field) {
  if (text.empty()) invalid_argument(kWhere, field, ": required");
  return io::parse_quantity(text, q, si_unit, field, kWhere);
}

/// One of `names` (their index), "" giving `fallback`.
template <std::size_t N>
std::size_t choice(const std::string& text, const std::array<std::string_view, N>& names, std::size_t fallback,
                   std::string_view field) {
  if (text.empty()) return fallback;
  for (std::size_t i = 0; i < N; ++i)
    if (text == names[i]) return i;
  std::string accepted;
  for (std::size_t i = 0; i < N; ++i) accepted += (i ? " or " : "") + std::string(names[i]);
  invalid_argument(kWhere, field, ": '", text, "' is not ", accepted);
}

/// A real number written in full (std::from_chars, no leading '+'), finite.
double real_part(std::string_view number, std::string_view text) {
  const bool plus = number.starts_with('+');
  if (plus) number.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc{} || end != number.data() + number.size() || (plus && number.starts_with('-')))
    invalid_argument(kWhere, "cladding_index: '", text, "' is not a complex index such as 1.45 or 1.45+0.001i");
  if (!std::isfinite(value)) invalid_argument(kWhere, "cladding_index: '", text, "' has a part that is not finite");
  return value;
}

}  // namespace

capillary::Complex parse_complex_index(std::string_view text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) invalid_argument(kWhere, "cladding_index: empty");
  double re = 0, im = 0;
  if (s.back() == 'i' || s.back() == 'j') {
    s.pop_back();
    // The imaginary part starts at the last sign that is not an exponent's and not the first
    // character; without one the whole text is imaginary.
    std::size_t split = std::string::npos;
    for (std::size_t k = s.size(); k-- > 1;)
      if ((s[k] == '+' || s[k] == '-') && s[k - 1] != 'e' && s[k - 1] != 'E') {
        split = k;
        break;
      }
    if (split == std::string::npos) {
      im = real_part(s, text);
    } else {
      re = real_part(std::string_view(s).substr(0, split), text);
      std::string_view imaginary = std::string_view(s).substr(split);
      im = imaginary == "+" ? 1.0 : imaginary == "-" ? -1.0 : real_part(imaginary, text);
    }
  } else {
    re = real_part(s, text);
  }
  if (im < 0)
    invalid_argument(kWhere, "cladding_index: '", text,
                     "' has a negative imaginary part (gain); a lossy wall has Im n > 0 (fields go as e^{i(βz − ωt)})");
  return {re, im};
}

Query parse_query(const QueryText& t) {
  Query q;
  if (t.gas.empty()) invalid_argument(kWhere, "gas: required (He, Ne, Ar, Kr, Xe, N2 or air)");
  try {
    q.species = gas::species_from_name(t.gas);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    if (const auto close = what.find("] "); what.starts_with('[') && close != std::string::npos)
      what = what.substr(close + 2);
    invalid_argument(kWhere, "gas: ", what);
  }
  q.pressure = quantity(t.pressure, io::Quantity::pressure, "Pa", "pressure");
  q.capillary.radius = quantity(t.radius, io::Quantity::length, "m", "radius");
  q.wavelength = quantity(t.wavelength, io::Quantity::length, "m", "wavelength");
  if (!t.temperature.empty()) q.temperature = quantity(t.temperature, io::Quantity::temperature, "K", "temperature");
  constexpr std::array<std::string_view, 2> kModels{"full", "reduced"};
  q.capillary.form =
      choice(t.model, kModels, 0, "model") == 0 ? capillary::ModeForm::full : capillary::ModeForm::reduced;
  if (!t.cladding_index.empty())
    q.capillary.cladding = capillary::Cladding::fixed_index(parse_complex_index(t.cladding_index));
  constexpr std::array<std::string_view, 2> kHelium{"ermolov", "borzsonyi"};
  q.helium = choice(t.helium, kHelium, gas::kDefaultHeliumForm == gas::HeliumForm::ermolov ? 0 : 1, "helium") == 0
                 ? gas::HeliumForm::ermolov
                 : gas::HeliumForm::borzsonyi;
  if (!t.search_min.empty()) q.search_min = quantity(t.search_min, io::Quantity::length, "m", "search_min");
  if (!t.search_max.empty()) q.search_max = quantity(t.search_max, io::Quantity::length, "m", "search_max");
  constexpr std::array<std::string_view, 2> kShapes{"sech", "gaussian"};
  const std::size_t shape = choice(t.shape, kShapes, 0, "shape");
  if (t.energy.empty() != t.duration.empty())
    invalid_argument(kWhere, t.energy.empty() ? "duration" : "energy", ": a pulse needs both energy and duration");
  if (!t.energy.empty()) {
    Pulse p;
    p.energy = quantity(t.energy, io::Quantity::energy, "J", "energy");
    p.fwhm = quantity(t.duration, io::Quantity::time, "s", "duration");
    p.shape = shape == 0 ? PulseShape::sech : PulseShape::gaussian;
    q.pulse = p;
  }
  return q;
}

}  // namespace lockstep::prop::guide
