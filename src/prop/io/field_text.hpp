// The canonical TOML text of Config field values (SI units, shortest exact decimals), shared by
// the serialisation, config_differences and the scan axes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config_fields.hpp"
#include "lockstep/core/error.hpp"
#include "units.hpp"

namespace lockstep::prop::io {

/// A real as TOML: a float literal for ratios ("0.18", "-0.0", "1e-06"), a string with the SI
/// unit otherwise ("\"1.25e-11 s\""); `order` is β's order for dispersion.
std::string render_real(double value, Quantity q, int order);

template <class T> std::string render_value(const T& value, Quantity q, std::string_view key) {
  if constexpr (std::is_same_v<T, double>) {
    return render_real(value, q, 0);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_enum_v<T>) {
    const auto name = enum_name(value);
    if (name.empty())
      invalid_argument("prop.config", key, ": value ", static_cast<long long>(value), " is not a named choice");
    return "\"" + std::string(name) + "\"";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    static_assert(std::is_same_v<T, std::vector<double>>, "a Config field of a type the table cannot handle");
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += ", ";
      out += render_real(value[i], q, static_cast<int>(i) + 2);
    }
    return out + "]";
  }
}

}  // namespace lockstep::prop::io
