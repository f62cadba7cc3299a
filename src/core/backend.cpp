#include "lockstep/core/backend.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "lockstep/core/parallel.hpp"

namespace lockstep {

namespace {

struct Reports {
  std::mutex mutex;
  std::vector<std::string (*)()> describe;
};

// A function-local static: engines register from their own static initialisers, whose order
// against this unit's is unspecified.
Reports& reports() {
  static Reports r;
  return r;
}

}  // namespace

const char* version() { return LOCKSTEP_VERSION; }

std::string build_summary() {
  std::string line = std::string("lockstep ") + version() + ": CUDA " + (LOCKSTEP_WITH_CUDA ? "on" : "off") + ", " +
                     std::to_string(num_threads()) + " threads";
  Reports& r = reports();
  const std::lock_guard lock(r.mutex);
  for (auto* describe : r.describe) line += ", " + describe();
  return line;
}

void report_in_build_summary(std::string (*describe)()) {
  Reports& r = reports();
  const std::lock_guard lock(r.mutex);
  if (std::find(r.describe.begin(), r.describe.end(), describe) == r.describe.end()) r.describe.push_back(describe);
}

}  // namespace lockstep
