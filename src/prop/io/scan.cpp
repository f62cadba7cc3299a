#include "lockstep/prop/scan.hpp"

#include <string>

#include "lockstep/core/error.hpp"
#include "recipe_fields.hpp"

namespace lockstep::prop {

namespace {

/// An axis's name in labels: the key's last component ("pulse.peak_power" → "peak_power").
std::string axis_name(const std::string& key) { return key.substr(key.rfind('.') + 1); }

}  // namespace

std::vector<MemberSpec> expand_members(const Recipe& recipe) {
  const auto& axes = recipe.scan;
  std::vector<MemberSpec> points{{"", recipe.config}};
  // Row-major product: for each axis in order, every current point is split into one point
  // per value, so the last axis varies fastest.
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<MemberSpec> next;
    next.reserve(points.size() * axes[a].values.size());
    for (const auto& point : points)
      for (std::size_t v = 0; v < axes[a].values.size(); ++v) {
        MemberSpec member = point;
        io::assign_field(member.config, axes[a].key, axes[a].values[v]);
        member.label += (member.label.empty() ? "" : ",") + axis_name(axes[a].key) + "=" + axes[a].labels[v];
        next.push_back(std::move(member));
      }
    points = std::move(next);
  }
  if (recipe.ensemble.members > 0) {
    std::vector<MemberSpec> members;
    members.reserve(points.size() * static_cast<std::size_t>(recipe.ensemble.members));
    for (const auto& point : points)
      for (std::int64_t i = 0; i < recipe.ensemble.members; ++i) {
        MemberSpec member = point;
        member.config.pulse.shot_noise = true;
        member.config.pulse.noise_seed = recipe.ensemble.seed + static_cast<std::uint64_t>(i);
        member.label += (member.label.empty() ? "" : ",") + std::string("member=") + std::to_string(i);
        members.push_back(std::move(member));
      }
    points = std::move(members);
  }
  for (const auto& member : points) {
    try {
      validate_config(member.config);
    } catch (const std::invalid_argument& e) {
      invalid_argument("prop.scan", "member '", member.label, "': ", e.what());
    }
  }
  return points;
}

}  // namespace lockstep::prop
