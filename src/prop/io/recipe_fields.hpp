// Reading single Config fields from TOML values, for the recipe reader and the scan expansion.
#pragma once

#include <string_view>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop::io {

/// Sets the field `key` ("pulse.peak_power") of `config` from a canonical TOML value text
/// (ScanAxis::values); std::invalid_argument naming the key when it does not fit.
void assign_field(Config& config, std::string_view key, std::string_view canonical_value);

}  // namespace lockstep::prop::io
