// The guide calculator's query as text (guide.hpp), the way `lockstep prop mode` and
// lockstep.prop.mode take it: values with units as recipes write them ("5 bar", "75 um",
// "800 nm", "30 fs", "0.5 mJ", "20 degC"; docs/RECIPES.md) or bare numbers in SI units, and
// names for the choices. In lockstep_prop_io (it reads units with the recipes' parser).
#pragma once

#include <string>
#include <string_view>

#include "lockstep/prop/guide.hpp"

namespace lockstep::prop::guide {

/// Every field is text; an empty one is not given (its default applies).
struct QueryText {
  std::string gas;             ///< He, Ne, Ar, Kr, Xe, N2 or air (any case); required
  std::string pressure;        ///< Pa, hPa, kPa, MPa, mbar, bar, atm, Torr; bare: Pa; required
  std::string radius;          ///< core radius: m, cm, mm, um, nm; bare: m; required
  std::string wavelength;      ///< λ0, a length; bare: m; required
  std::string temperature;     ///< K or degC (°C); bare: K; default 20 °C
  std::string model;           ///< full (default) or reduced
  std::string cladding_index;  ///< default: fused silica; else a complex index (parse_complex_index)
  std::string energy;          ///< pulse energy, J, kJ, mJ, uJ, nJ, pJ, fJ; bare: J
  std::string duration;        ///< intensity FWHM, s … as; bare: s (energy and duration: both or neither)
  std::string shape;           ///< sech (default) or gaussian
  std::string helium;          ///< helium's Sellmeier form: ermolov (default) or borzsonyi
  std::string search_min;      ///< the search window's ends, lengths; default 0.21 um and 3.71 um
  std::string search_max;
};

/// Reads `text` into a Query (calculate() checks the rest). std::invalid_argument
/// "[prop.mode] <field>: …" naming the field: a missing required field, an unknown name, a value
/// that is not a number with a unit of the right kind, energy without duration or the reverse.
Query parse_query(const QueryText& text);

/// A complex refractive index n + iκ written as "1.45", "1.45+0.001i", "1.45 - 2e-3j" or "5.6i":
/// a real part, an imaginary part ending in i or j, or both (spaces ignored).
/// std::invalid_argument "[prop.mode] cladding_index: …" for other text or a non-finite part;
/// a negative imaginary part (gain) is refused too.
capillary::Complex parse_complex_index(std::string_view text);

}  // namespace lockstep::prop::guide
