// The canonical serialisation of a Config, its hash and field-by-field differences.
#include <string>

#include "config_fields.hpp"
#include "field_text.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/recipe.hpp"

namespace lockstep::prop {

namespace io {

std::string render_real(double value, Quantity q, int order) {
  std::string text = shortest(value);
  if (!has_unit(q)) {
    // A TOML float needs a fraction or an exponent ("-0" would read back as the integer 0).
    if (text.find_first_of(".eE") == std::string::npos && text.find_first_of("ni") == std::string::npos) text += ".0";
    return text;
  }
  return "\"" + text + " " + si_unit(q, q == Quantity::dispersion ? order : 0) + "\"";
}

}  // namespace io

std::string serialize_config(const Config& config) {
  std::string out = "# lockstep.prop configuration, SI units\n";
  std::string_view section;
  io::for_each_config_field([&](const auto& field) {
    if (field.section() != section) {
      section = field.section();
      out += "\n[" + std::string(section) + "]\n";
    }
    if (!io::written(field, config)) return;
    out += std::string(field.name()) + " = " + io::render_value(field.access(config), field.quantity, field.key) + "\n";
  });
  return out;
}

Config parse_config(std::string_view text, std::string_view source_name) {
  Recipe recipe = parse_recipe(text, source_name);
  if (!recipe.scan.empty() || recipe.ensemble.members > 0)
    invalid_argument("prop.config", source_name, ": a single configuration has no [scan] or [ensemble]");
  return std::move(recipe.config);
}

std::string config_hash(const Config& config) { return sha256_hex(serialize_config(config)); }

namespace {

/// A canonical value for people: without the TOML quotes of a string.
std::string unquoted(std::string text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

}  // namespace

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  std::vector<std::string> out;
  io::for_each_config_field([&](const auto& field) {
    const auto& va = field.access(a);
    const auto& vb = field.access(b);
    using T = std::remove_cvref_t<decltype(va)>;
    const std::string key(field.key);
    // A field that applies to one configuration only (a capillary's gas, a launch energy) is
    // "not used" in the other; one that applies to neither does not count.
    const bool in_a = io::applies(field.scope, a), in_b = io::applies(field.scope, b);
    if (!in_a && !in_b) return;
    if (in_a != in_b) {
      const auto text = [&](bool used, const T& v) {
        return used ? unquoted(io::render_value(v, field.quantity, field.key)) : std::string("(not used)");
      };
      out.push_back(key + ": " + text(in_a, va) + " vs " + text(in_b, vb));
      return;
    }
    if constexpr (std::is_same_v<T, std::vector<double>>) {
      if (va.size() != vb.size()) {
        out.push_back(key + ": " + std::to_string(va.size()) + " values vs " + std::to_string(vb.size()) + " values");
        return;
      }
      for (std::size_t i = 0; i < va.size(); ++i) {
        const int order = static_cast<int>(i) + 2;
        const auto ta = io::render_real(va[i], field.quantity, order);
        const auto tb = io::render_real(vb[i], field.quantity, order);
        if (ta != tb) {
          out.push_back(key + "[" + std::to_string(i) + "]: " + unquoted(ta) + " vs " + unquoted(tb));
          return;
        }
      }
    } else {
      const auto ta = io::render_value(va, field.quantity, field.key);
      const auto tb = io::render_value(vb, field.quantity, field.key);
      if (ta != tb) out.push_back(key + ": " + unquoted(ta) + " vs " + unquoted(tb));
    }
  });
  return out;
}

}  // namespace lockstep::prop
