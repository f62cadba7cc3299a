#include "lockstep/core/backend.hpp"

#include "lockstep/core/parallel.hpp"
#include "../qkan/problem.hpp"

namespace lockstep {

const char* version() { return LOCKSTEP_VERSION; }

std::string build_summary() {
  return std::string("lockstep ") + version() + ": CUDA " + (LOCKSTEP_WITH_CUDA ? "on" : "off") +
         ", CPU SIMD target " + qkan::detail::fused_target() + ", " + std::to_string(num_threads()) +
         " threads";
}

}  // namespace lockstep
