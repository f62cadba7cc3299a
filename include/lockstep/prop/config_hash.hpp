// The canonical form of a Config, its SHA-256 hash, and the list of fields two Configs differ
// in. The hash decides whether a result file may be resumed under a recipe (result_file.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

/// SHA-256 (FIPS 180-4) of `bytes`, as 64 lowercase hexadecimal digits.
std::string sha256_hex(std::span<const std::uint8_t> bytes);
std::string sha256_hex(std::string_view text);

/// The canonical serialisation: a TOML recipe with every Config field that applies (a
/// capillary's keys for a capillary only, a fibre's coefficients for such a fibre only,
/// pulse.energy or pulse.peak_power; fibre.type and pulse.wavelength only when not at their
/// defaults), sections and keys in a fixed order, every value in SI units as the shortest
/// decimal that reads back to the same double ("time_window = \"1.25e-11 s\""). It is a valid
/// recipe: parse_config (or parse_recipe) gives back every field that applies bit for bit.
/// Throws std::invalid_argument naming the field when an enum holds a value outside its named
/// set.
std::string serialize_config(const Config& config);

/// Reads a canonical serialisation (or any recipe without [scan] and [ensemble]) back;
/// std::invalid_argument naming `source_name` and the key when it is not valid.
Config parse_config(std::string_view text, std::string_view source_name);

/// SHA-256 of serialize_config(config): equal hashes ⇔ every field that applies equal.
std::string config_hash(const Config& config);

/// The fields where `a` and `b` differ, in canonical order, each as
/// "fibre.gamma: 0.11 /W/m vs 0.12 /W/m" (vectors: the first differing element, or the
/// lengths; "fibre.gas: (not used) vs He" for a field that applies to one of them only).
/// Empty iff config_hash(a) == config_hash(b).
std::vector<std::string> config_differences(const Config& a, const Config& b);

}  // namespace lockstep::prop
