// The recipe reader: TOML → Config, with units, defaults, and a message naming the key for
// every mistake.
#include "lockstep/prop/recipe.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <toml++/toml.h>
#include <type_traits>
#include <vector>

#include "config_fields.hpp"
#include "field_text.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"
#include "lockstep/core/npy.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/physics.hpp"
#include "recipe_fields.hpp"
#include "units.hpp"

namespace lockstep::prop {

namespace {

using io::Quantity;
constexpr const char* kWhere = "prop.recipe";
constexpr std::string_view kDefaultBetasUnit = "ps^k/m";
constexpr std::array<std::string_view, 6> kSections{"grid", "fibre", "pulse", "window", "stepping", "output"};
// Recipe keys that are not Config fields: they shape how other keys are read.
constexpr std::array<std::string_view, 2> kExtraKeys{"fibre.betas_unit", "pulse.user_file"};
constexpr std::array<std::string_view, 2> kEnsembleKeys{"members", "seed"};

/// Where a value sits, for messages: " (recipe.toml:12)".
struct Source {
  std::string_view name;
  std::string at(const toml::node& node) const {
    const auto line = node.source().begin.line;
    if (line == 0) return name.empty() ? "" : " (" + std::string(name) + ")";
    return " (" + std::string(name) + ":" + std::to_string(line) + ")";
  }
};

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date or time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// "; did you mean 'fibre.length'?" for the closest candidate, or "" when none is close. A
/// candidate also matches on its last component, so "pulse.gamma" finds "fibre.gamma".
std::string suggestion(std::string_view key, const std::vector<std::string>& candidates) {
  const auto last = [](std::string_view k) { return k.substr(k.rfind('.') + 1); };
  std::size_t best = std::string::npos;
  std::string best_key;
  for (const auto& c : candidates) {
    const std::size_t d = std::min(edit_distance(key, c), edit_distance(last(key), last(c)));
    if (d < best) {
      best = d;
      best_key = c;
    }
  }
  if (best_key.empty() || best > std::max<std::size_t>(2, last(key).size() / 3)) return "";
  return "; did you mean '" + best_key + "'?";
}

std::vector<std::string> known_keys() {
  std::vector<std::string> keys;
  io::for_each_config_field([&](const auto& field) { keys.emplace_back(field.key); });
  for (auto k : kExtraKeys) keys.emplace_back(k);
  return keys;
}

bool is_extra_key(std::string_view key) {
  return std::find(kExtraKeys.begin(), kExtraKeys.end(), key) != kExtraKeys.end();
}

bool is_known_key(std::string_view key) {
  bool known = std::find(kExtraKeys.begin(), kExtraKeys.end(), key) != kExtraKeys.end();
  io::for_each_config_field([&](const auto& field) { known = known || field.key == key; });
  return known;
}

/// A real value: a number in `default_unit`, or a string "<number> [unit]".
double read_real(const toml::node& node, Quantity q, std::string_view default_unit, int order, std::string_view key,
                 const Source& src) {
  if (q == Quantity::ratio) {
    double v = 0;
    if (const auto i = node.as_integer()) v = static_cast<double>(i->get());
    else if (const auto f = node.as_floating_point()) v = f->get();
    else invalid_argument(kWhere, key, ": expected a plain number, got ", type_name(node), src.at(node));
    if (!std::isfinite(v)) invalid_argument(kWhere, key, ": must be finite, got ", v, src.at(node));
    return v;
  }
  std::string number;
  std::string_view unit_text = default_unit;
  if (const auto s = node.as_string()) {
    const auto [num, written_unit] = io::split_value(s->get());
    if (num.empty()) invalid_argument(kWhere, key, ": '", s->get(), "' is not a number with a unit", src.at(node));
    number = std::string(num);
    if (!written_unit.empty()) unit_text = written_unit;
  } else {
    if (const auto i = node.as_integer()) {
      number = std::to_string(i->get());
    } else if (const auto f = node.as_floating_point()) {
      if (!std::isfinite(f->get())) invalid_argument(kWhere, key, ": must be finite, got ", f->get(), src.at(node));
      number = io::shortest(f->get());  // the decimal as written, for the exact unit scaling
    } else {
      invalid_argument(kWhere, key, ": expected a number or a string with a unit, got ", type_name(node), src.at(node));
    }
  }
  try {
    return io::scale_decimal(number, io::parse_unit(unit_text, q, order, key), key);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(e.what() + src.at(node));
  }
}

template <class T>
void read_into(T& out, const toml::node& node, Quantity q, std::string_view default_unit, std::string_view key,
               const Source& src) {
  if constexpr (std::is_same_v<T, double>) {
    out = read_real(node, q, default_unit, 0, key, src);
  } else if constexpr (std::is_same_v<T, bool>) {
    const auto b = node.as_boolean();
    if (!b) invalid_argument(kWhere, key, ": expected true or false, got ", type_name(node), src.at(node));
    out = b->get();
  } else if constexpr (std::is_enum_v<T>) {
    std::string names, given;
    std::vector<std::string> candidates;
    for (const auto& [value, name] : io::EnumNames<T>::values) {
      names += (names.empty() ? "\"" : ", \"") + std::string(name) + "\"";
      candidates.emplace_back(name);
    }
    const auto s = node.as_string();
    if (!s) invalid_argument(kWhere, key, ": expected one of ", names, ", got ", type_name(node), src.at(node));
    for (const auto& [value, name] : io::EnumNames<T>::values)
      if (name == s->get()) {
        out = value;
        return;
      }
    invalid_argument(kWhere, key, ": '", s->get(), "' is not one of ", names, suggestion(s->get(), candidates),
                     src.at(node));
  } else if constexpr (std::is_integral_v<T>) {
    const auto i = node.as_integer();
    if (!i) invalid_argument(kWhere, key, ": expected an integer, got ", type_name(node), src.at(node));
    const std::int64_t v = i->get();
    if constexpr (std::is_unsigned_v<T>) {
      if (v < 0) invalid_argument(kWhere, key, ": must be ≥ 0, got ", v, src.at(node));
    } else if constexpr (sizeof(T) < sizeof(std::int64_t)) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        invalid_argument(kWhere, key, ": ", v, " is out of range", src.at(node));
    }
    out = static_cast<T>(v);
  } else {
    static_assert(std::is_same_v<T, std::vector<double>>);
    const auto array = node.as_array();
    if (!array) invalid_argument(kWhere, key, ": expected an array, got ", type_name(node), src.at(node));
    out.clear();
    for (std::size_t i = 0; i < array->size(); ++i) {
      const std::string element = std::string(key) + "[" + std::to_string(i) + "]";
      out.push_back(read_real(*array->get(i), q, default_unit, static_cast<int>(i) + 2, element, src));
    }
  }
}

const toml::node* find(const toml::table& root, std::string_view section, std::string_view name) {
  const auto* table = root.get_as<toml::table>(section);
  return table ? table->get(name) : nullptr;
}

/// The user pulse from a CSV file (columns T in fs, Re A and Im A in √W; '#' comments and one
/// header line allowed) or a .npy array of shape (n, 3) in the same units.
void read_user_file(PulseConfig& pulse, const std::filesystem::path& path, std::string_view key) {
  pulse.user_time.clear();
  pulse.user_re.clear();
  pulse.user_im.clear();
  const io::Unit fs = io::parse_unit("fs", Quantity::time, 0, key);
  const std::string where = std::string(key) + " '" + path.string() + "'";
  if (path.extension() == ".npy") {
    npy::Array array;
    try {
      array = npy::load(path);
    } catch (const std::exception& e) {
      invalid_argument(kWhere, where, ": ", e.what());
    }
    if (array.shape.size() != 2 || array.shape[1] != 3)
      invalid_argument(kWhere, where, ": expected an array of shape (n, 3): T (fs), Re A, Im A (sqrt(W))");
    for (std::size_t r = 0; r < array.values.size() / 3; ++r) {
      for (int c = 0; c < 3; ++c)
        if (!std::isfinite(array.values[3 * r + c]))
          invalid_argument(kWhere, where, ": row ", r, " holds a non-finite value");
      pulse.user_time.push_back(io::scale_decimal(io::shortest(array.values[3 * r]), fs, key));
      pulse.user_re.push_back(array.values[3 * r + 1]);
      pulse.user_im.push_back(array.values[3 * r + 2]);
    }
    return;
  }
  if (path.extension() != ".csv") invalid_argument(kWhere, where, ": expected a .csv or .npy file");
  std::ifstream in(path);
  if (!in) invalid_argument(kWhere, where, ": cannot open the file");
  const auto trim = [](std::string_view cell) {
    while (!cell.empty() && std::isspace(static_cast<unsigned char>(cell.front()))) cell.remove_prefix(1);
    while (!cell.empty() && std::isspace(static_cast<unsigned char>(cell.back()))) cell.remove_suffix(1);
    return cell;
  };
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::vector<std::string_view> cells;
    std::string_view rest = line;
    for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos; rest.remove_prefix(comma + 1))
      cells.push_back(trim(rest.substr(0, comma)));
    cells.push_back(trim(rest));
    if (cells.size() == 1 && cells[0].empty()) continue;
    // One header line ("t_fs, re, im") may precede the data.
    if (pulse.user_time.empty() && io::split_value(cells[0]).number.empty()) continue;
    const std::string at = where + " line " + std::to_string(number);
    if (cells.size() != 3)
      invalid_argument(kWhere, at, ": expected 3 columns (T in fs, Re A, Im A in sqrt(W)), got ", cells.size());
    pulse.user_time.push_back(io::scale_decimal(cells[0], fs, at));
    pulse.user_re.push_back(io::scale_decimal(cells[1], io::Unit{}, at));
    pulse.user_im.push_back(io::scale_decimal(cells[2], io::Unit{}, at));
  }
}

/// Reads a field's value from a node into `config`; returns the canonical text of the value.
std::string read_field(Config& config, std::string_view key, const toml::node& node, std::string_view betas_unit,
                       const Source& src) {
  std::string canonical;
  bool found = false;
  io::for_each_config_field([&](const auto& field) {
    if (field.key != key) return;
    found = true;
    auto& value = field.access(config);
    const auto unit = field.quantity == Quantity::dispersion ? betas_unit : field.default_unit;
    read_into(value, node, field.quantity, unit, key, src);
    canonical = io::render_value(value, field.quantity, key);
  });
  if (!found) invalid_argument(kWhere, key, ": not a configuration key", suggestion(key, known_keys()));
  return canonical;
}

bool is_scalar_field(std::string_view key) {
  bool scalar = false;
  io::for_each_config_field([&](const auto& field) {
    if (field.key == key)
      scalar = !std::is_same_v<io::field_type<std::remove_cvref_t<decltype(field)>>, std::vector<double>>;
  });
  return scalar;
}

/// An error message without its "[prop.recipe] " prefix, to be wrapped in another.
std::string_view without_prefix(std::string_view message) {
  const auto end = message.find("] ");
  return message.starts_with('[') && end != std::string_view::npos ? message.substr(end + 2) : message;
}

/// The value as written, for labels: "5 kW" → "5kW", 0.11 → "0.11".
std::string label_text(const toml::node& node) {
  std::string text;
  if (const auto s = node.as_string()) text = s->get();
  else if (const auto i = node.as_integer()) text = std::to_string(i->get());
  else if (const auto f = node.as_floating_point()) text = io::shortest(f->get());
  else if (const auto b = node.as_boolean()) text = b->get() ? "true" : "false";
  std::erase_if(text, [](char c) { return c == ' ' || c == ',' || c == '='; });
  return text;
}

/// The scan axes, flattened ("pulse.peak_power" quoted, or written as nested tables), in the
/// order they appear in the recipe.
void collect_scan(const toml::table& table, const std::string& prefix,
                  std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [k, node] : table) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto sub = node.as_table()) collect_scan(*sub, key, out);
    else out.emplace_back(key, &node);
  }
}

/// The Config keys a recipe writes in its sections (not [scan] or [ensemble]).
std::vector<std::string> written_keys(const toml::table& root) {
  std::vector<std::string> keys;
  for (const auto section : kSections)
    if (const auto* table = root.get_as<toml::table>(section))
      for (const auto& [name, value] : *table) keys.push_back(std::string(section) + "." + std::string(name.str()));
  return keys;
}

/// The scope of a Config field's key.
io::Scope scope_of(std::string_view key) {
  io::Scope scope = io::Scope::always;
  io::for_each_config_field([&](const auto& field) {
    if (field.key == key) scope = field.scope;
  });
  return scope;
}

/// Refuses a key the recipe writes (or scans) that does not apply to `config`: the coefficients
/// of a capillary, the gas of a fibre given by coefficients, both a peak power and an energy.
void require_applies(std::string_view key, const Config& config, const std::string& where, const Source& src,
                     const toml::node& node) {
  const io::Scope scope = scope_of(key);
  if (!io::applies(scope, config)) invalid_argument(kWhere, where, ": ", io::scope_rule(scope), src.at(node));
}

std::vector<ScanAxis> read_scan(const toml::table& scan, const toml::table& root, const Config& base,
                                std::string_view betas_unit, const Source& src) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  collect_scan(scan, "", entries);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto pa = a.second->source().begin, pb = b.second->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  const std::vector<std::string> written = written_keys(root);
  const auto scanned = [&](std::string_view key) {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == key; });
  };
  std::vector<ScanAxis> axes;
  for (const auto& [key, node] : entries) {
    const std::string path = "scan." + key;
    if (!is_known_key(key) || std::find(kExtraKeys.begin(), kExtraKeys.end(), key) != kExtraKeys.end())
      invalid_argument(kWhere, path, ": '", key, "' is not a configuration key", suggestion(key, known_keys()),
                       src.at(*node));
    if (!is_scalar_field(key))
      invalid_argument(kWhere, path, ": only single-valued keys can be scanned", src.at(*node));
    if (key == "fibre.type")
      invalid_argument(kWhere, path,
                       ": cannot be scanned (the keys that apply differ between fibre types): write one recipe per "
                       "type",
                       src.at(*node));
    if (key == "pulse.energy" && scanned("pulse.peak_power"))
      invalid_argument(kWhere, path, ": pulse.peak_power is scanned as well; launch by one of them", src.at(*node));
    const auto array = node->as_array();
    if (!array || array->empty())
      invalid_argument(kWhere, path, ": expected a non-empty array of values", src.at(*node));
    ScanAxis axis{key, {}, {}};
    for (std::size_t i = 0; i < array->size(); ++i) {
      const std::string element = path + "[" + std::to_string(i) + "]";
      Config trial = base;
      axis.values.push_back(read_field(trial, key, *array->get(i), betas_unit, src));
      axis.labels.push_back(label_text(*array->get(i)));
      if (key == "pulse.energy" && !(trial.pulse.energy > 0))
        invalid_argument(kWhere, element, ": must be > 0, got ", trial.pulse.energy, " J", src.at(*array->get(i)));
      if (key == "pulse.wavelength" && !(trial.pulse.wavelength > 0))
        invalid_argument(kWhere, element, ": must be > 0, got ", trial.pulse.wavelength, " m", src.at(*array->get(i)));
      require_applies(key, trial, path, src, *node);
      // Every key the recipe writes must still apply with this value (a helium Sellmeier form
      // may stay for the other gases of a scan over fibre.gas).
      for (const auto& other : written)
        if (is_known_key(other) && scope_of(other) != io::Scope::helium && !is_extra_key(other) &&
            !io::applies(scope_of(other), trial))
          invalid_argument(kWhere, element, ": with this value, ", other,
                           " (given in the recipe) no longer applies: ", io::scope_rule(scope_of(other)),
                           src.at(*array->get(i)));
      try {
        validate_config(trial);
      } catch (const std::invalid_argument& e) {
        invalid_argument(kWhere, element, ": with this value, ", without_prefix(e.what()), src.at(*array->get(i)));
      }
    }
    for (const auto& other : axes)
      if (other.key == key) invalid_argument(kWhere, path, ": scanned twice", src.at(*node));
    axes.push_back(std::move(axis));
  }
  return axes;
}

Ensemble read_ensemble(const toml::table& table, const Source& src) {
  Ensemble ensemble;
  for (const auto& [k, node] : table) {
    const std::string key = "ensemble." + std::string(k.str());
    if (k.str() == "members") {
      const auto v = node.as_integer();
      if (!v) invalid_argument(kWhere, key, ": expected an integer, got ", type_name(node), src.at(node));
      if (v->get() < 1 || v->get() > 1'000'000)
        invalid_argument(kWhere, key, ": must be in [1, 1000000], got ", v->get(), src.at(node));
      ensemble.members = v->get();
    } else if (k.str() == "seed") {
      const auto v = node.as_integer();
      if (!v) invalid_argument(kWhere, key, ": expected an integer, got ", type_name(node), src.at(node));
      if (v->get() < 0) invalid_argument(kWhere, key, ": must be ≥ 0, got ", v->get(), src.at(node));
      ensemble.seed = static_cast<std::uint64_t>(v->get());
    } else {
      std::vector<std::string> candidates;
      for (auto e : kEnsembleKeys) candidates.push_back("ensemble." + std::string(e));
      invalid_argument(kWhere, key, ": unknown key", suggestion(key, candidates), src.at(node));
    }
  }
  if (ensemble.members == 0) invalid_argument(kWhere, "ensemble.members: missing (the number of members)");
  return ensemble;
}

}  // namespace

namespace io {

void assign_field(Config& config, std::string_view key, std::string_view canonical_value) {
  const std::string text = "v = " + std::string(canonical_value);
  toml::table table;
  try {
    table = toml::parse(std::string_view(text), std::string_view(key));
  } catch (const toml::parse_error& e) {
    invalid_argument(kWhere, key, ": '", canonical_value, "' is not a value: ", e.description());
  }
  read_field(config, key, *table.get("v"), "s^k/m", Source{});
}

}  // namespace io

Recipe parse_recipe(std::string_view text, std::string_view source_name) {
  const Source src{source_name};
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto at = e.source().begin;
    invalid_argument(kWhere, source_name, ":", at.line, ":", at.column, ": not valid TOML: ", e.description());
  }
  // Every key must be known before any is read, so a typo is reported as such.
  std::vector<std::string> sections(kSections.begin(), kSections.end());
  sections.emplace_back("scan");
  sections.emplace_back("ensemble");
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (std::find(sections.begin(), sections.end(), key) == sections.end()) {
      std::vector<std::string> candidates = known_keys();
      candidates.insert(candidates.end(), sections.begin(), sections.end());
      invalid_argument(kWhere, key, ": unknown ", node.is_table() ? "section" : "key", suggestion(key, candidates),
                       src.at(node));
    }
    if (!node.is_table())
      invalid_argument(kWhere, key, ": expected a [", key, "] section, got ", type_name(node), src.at(node));
    if (key == "scan" || key == "ensemble") continue;
    for (const auto& [name, value] : *node.as_table()) {
      const std::string full = key + "." + std::string(name.str());
      if (!is_known_key(full))
        invalid_argument(kWhere, full, ": unknown key", suggestion(full, known_keys()), src.at(value));
    }
  }

  Recipe recipe;
  recipe.text = std::string(text);
  Config& config = recipe.config;
  std::string betas_unit(kDefaultBetasUnit);
  if (const auto* node = find(root, "fibre", "betas_unit")) {
    const auto s = node->as_string();
    if (!s)
      invalid_argument(kWhere, "fibre.betas_unit: expected a string such as \"ps^k/m\", got ", type_name(*node),
                       src.at(*node));
    if (s->get().find("^k") == std::string::npos)
      invalid_argument(kWhere, "fibre.betas_unit: '", s->get(), "' must be <time>^k/<length>, e.g. \"ps^k/m\"",
                       src.at(*node));
    io::parse_unit(s->get(), Quantity::dispersion, 2, "fibre.betas_unit");
    betas_unit = s->get();
  }
  io::for_each_config_field([&](const auto& field) {
    if (const auto* node = find(root, field.section(), field.name()))
      read_field(config, field.key, *node, betas_unit, src);
  });
  FibreConfig& fibre = config.fibre;
  // Defaults that follow from other keys: a capillary has no Raman response; a wall index
  // given alone makes the wall that index; each Raman model has its usual fraction.
  if (fibre.type == FibreType::capillary && !find(root, "fibre", "raman")) fibre.raman = RamanModel::none;
  if (!find(root, "fibre", "cladding") &&
      (find(root, "fibre", "cladding_index") || find(root, "fibre", "cladding_extinction")))
    fibre.cladding = CladdingKind::index;
  if (!find(root, "fibre", "raman_fraction")) fibre.raman_fraction = default_raman_fraction(fibre.raman);
  // A launch energy, when given, is the launch (0 would mean "by peak power").
  if (const auto* node = find(root, "pulse", "energy"); node && !(config.pulse.energy > 0))
    invalid_argument(kWhere, "pulse.energy: must be > 0, got ", config.pulse.energy, " J", src.at(*node));
  if (const auto* node = find(root, "pulse", "wavelength"); node && !(config.pulse.wavelength > 0))
    invalid_argument(kWhere, "pulse.wavelength: must be > 0, got ", config.pulse.wavelength, " m", src.at(*node));
  // Every key written must apply: no coefficients for a capillary, no gas for a fibre given by
  // its coefficients, not both a peak power and an energy.
  io::for_each_config_field([&](const auto& field) {
    if (const auto* node = find(root, field.section(), field.name()))
      require_applies(field.key, config, std::string(field.key), src, *node);
  });
  if (const auto* node = find(root, "fibre", "betas_unit"); node && fibre.type != FibreType::coefficients)
    invalid_argument(kWhere, "fibre.betas_unit: ", io::scope_rule(io::Scope::coefficients), src.at(*node));
  if (const auto* node = find(root, "pulse", "user_file")) {
    const auto s = node->as_string();
    if (!s) invalid_argument(kWhere, "pulse.user_file: expected a file path, got ", type_name(*node), src.at(*node));
    if (find(root, "pulse", "user_time") || find(root, "pulse", "user_re") || find(root, "pulse", "user_im"))
      invalid_argument(kWhere, "pulse.user_file: give either the file or user_time/user_re/user_im", src.at(*node));
    std::filesystem::path path(s->get());
    if (path.is_relative()) path = std::filesystem::path(source_name).parent_path() / path;
    read_user_file(config.pulse, path, "pulse.user_file");
  }
  validate_config(config);
  if (const auto* scan = root.get_as<toml::table>("scan"))
    recipe.scan = read_scan(*scan, root, config, betas_unit, src);
  if (const auto* ensemble = root.get_as<toml::table>("ensemble")) recipe.ensemble = read_ensemble(*ensemble, src);
  recipe.canonical = serialize_config(config);
  return recipe;
}

Recipe load_recipe(const std::filesystem::path& path) {
  const auto bytes = read_file(path, kWhere);
  return parse_recipe(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path.string());
}

}  // namespace lockstep::prop
