// Expanding a recipe's [scan] and [ensemble] into the members of a run.
#pragma once

#include <string>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/recipe.hpp"

namespace lockstep::prop {

/// One member of a run: its configuration and a label naming what distinguishes it.
struct MemberSpec {
  std::string label;  ///< e.g. "peak_power=5kW,gamma=0.11,member=3"; empty for a single run
  Config config;
};

/// The Cartesian product of the scan axes (in the order written, the last axis varying
/// fastest), each point repeated for every ensemble member (member index fastest). Labels join
/// "name=value" of every axis (name: the key's last component; value: as written, without
/// spaces) and "member=i". Without scan and ensemble: one member, the recipe's configuration,
/// with an empty label. Every member's configuration is validated (a combination of values
/// may not fit together): std::invalid_argument "[prop.scan] member '<label>': ...".
std::vector<MemberSpec> expand_members(const Recipe& recipe);

}  // namespace lockstep::prop
