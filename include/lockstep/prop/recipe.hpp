// Recipes: TOML files that describe a propagation (one member, a parameter scan or a noise
// ensemble) in lab units. The schema — every key, its unit, default and meaning — is
// docs/RECIPES.md; examples/dudley.toml gives the built-in defaults explicitly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

/// One axis of a parameter scan: a scalar key and its values.
struct ScanAxis {
  std::string key;                  ///< the Config field, e.g. "pulse.peak_power"
  std::vector<std::string> values;  ///< each value in canonical form (SI), e.g. "\"5000 W\""
  std::vector<std::string> labels;  ///< each value as written, without spaces, e.g. "5kW"
};

/// A shot-noise ensemble: `members` copies of every configuration, member i with shot noise
/// on and noise_seed = seed + i.
struct Ensemble {
  std::int64_t members = 0;  ///< 0: no ensemble
  std::uint64_t seed = 0;
};

struct Recipe {
  Config config;               ///< the configuration (before scan values and ensemble seeds)
  std::vector<ScanAxis> scan;  ///< in the order written; empty: no scan
  Ensemble ensemble;
  std::string text;       ///< the recipe as given
  std::string canonical;  ///< serialize_config(config)
};

/// Parses a recipe. `source_name` names it in messages; relative file paths in it (the user
/// pulse file) are resolved against the directory of `source_name`. Every error is a
/// std::invalid_argument "[prop.recipe] <key path>: <what is wrong> (<source>:<line>)".
Recipe parse_recipe(std::string_view text, std::string_view source_name);

/// Reads and parses a recipe file (std::runtime_error when it cannot be read).
Recipe load_recipe(const std::filesystem::path& path);

/// Checks every field of `config` (ranges, finiteness, table shapes, a grid that holds the
/// pulse); std::invalid_argument "[prop.recipe] <key>: ..." for the first violation.
void validate_config(const Config& config);

}  // namespace lockstep::prop
