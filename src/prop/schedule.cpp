#include "lockstep/prop/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.schedule";

// Sorts and merges positions closer than kSameZ·length, keeping the first of a cluster from
// `preferred` when it has one (planes win over step ends).
std::vector<double> merge(std::vector<double> preferred, std::vector<double> others, double length) {
  const double tol = kSameZ * length;
  std::vector<double> all = preferred;
  for (double z : others) {
    const bool near = std::any_of(preferred.begin(), preferred.end(), [&](double p) { return std::abs(p - z) <= tol; });
    if (!near) all.push_back(z);
  }
  std::sort(all.begin(), all.end());
  std::vector<double> out;
  for (double z : all)
    if (out.empty() || z - out.back() > tol) out.push_back(z);
  return out;
}
}  // namespace

Schedule make_schedule(const Config& config) {
  const double length = config.fibre.length;
  if (!std::isfinite(length) || length <= 0)
    invalid_argument(kWhere, "fibre.length = ", length, " m must be finite and > 0");
  Schedule s;
  std::vector<double> planes;
  if (config.output.save_z.empty()) {
    const int n = config.output.n_save;
    if (n < 2) invalid_argument(kWhere, "output.n_save = ", n, " must be ≥ 2 (both ends are saved)");
    for (int k = 0; k < n; ++k) planes.push_back(k == n - 1 ? length : length * static_cast<double>(k) / (n - 1));
  } else {
    for (double z : config.output.save_z) {
      if (!std::isfinite(z) || z < 0 || z > length * (1 + kSameZ))
        invalid_argument(kWhere, "output.save_z contains ", z, " m, outside [0, fibre.length = ", length, " m]");
      planes.push_back(std::min(z, length));
    }
    planes.push_back(0);
    planes.push_back(length);
  }
  // Both ends exactly: drop anything merged into them first.
  std::erase_if(planes, [&](double z) { return z <= kSameZ * length || z >= length * (1 - kSameZ); });
  planes.push_back(0);
  planes.push_back(length);
  s.planes = merge(planes, {}, length);
  s.planes.front() = 0;
  s.planes.back() = length;

  const auto& st = config.stepping;
  if (st.adaptive) return s;
  std::vector<double> ends;
  if (st.schedule.empty()) {
    if (st.fixed_steps < 1) invalid_argument(kWhere, "stepping.fixed_steps = ", st.fixed_steps, " must be ≥ 1");
    for (std::int64_t k = 1; k <= st.fixed_steps; ++k)
      ends.push_back(k == st.fixed_steps ? length
                                         : length * static_cast<double>(k) / static_cast<double>(st.fixed_steps));
  } else {
    double previous = 0;
    for (std::size_t i = 0; i < st.schedule.size(); ++i) {
      const double z = st.schedule[i];
      if (!std::isfinite(z) || z <= previous)
        invalid_argument(kWhere, "stepping.schedule[", i, "] = ", z,
                         " m: step ends must be finite, > 0 and strictly ascending");
      previous = z;
    }
    if (std::abs(st.schedule.back() - length) > kSameZ * length)
      invalid_argument(kWhere, "stepping.schedule ends at ", st.schedule.back(), " m, not at fibre.length = ", length,
                       " m");
    ends = st.schedule;
    ends.back() = length;
  }
  std::vector<double> later_planes(s.planes.begin() + 1, s.planes.end());
  s.step_ends = merge(later_planes, ends, length);
  return s;
}

}  // namespace lockstep::prop
