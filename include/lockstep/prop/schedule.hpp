// Where a member saves planes and, on a fixed schedule, where its steps end.
#pragma once

#include <vector>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

struct Schedule {
  /// Save planes, m, ascending, always including 0 and the fibre length.
  std::vector<double> planes;
  /// Fixed schedule: the step ends, m, ascending, the last one the fibre length, containing every
  /// plane after 0. Empty for an adaptive run.
  std::vector<double> step_ends;
  bool operator==(const Schedule&) const = default;
};

/// Two positions closer than this fraction of the fibre length are the same plane or step end.
inline constexpr double kSameZ = 1e-12;

/// The schedule of `config` (output.n_save or output.save_z; stepping.fixed_steps or
/// stepping.schedule). Throws std::invalid_argument naming the offending field.
Schedule make_schedule(const Config& config);

}  // namespace lockstep::prop
