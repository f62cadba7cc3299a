// Which backends this build has.
#pragma once

#include <string>

namespace lockstep {

/// True when the library was built with CUDA and a CUDA device is visible.
bool cuda_available();
/// The version string, e.g. "0.1.0".
const char* version();
/// One line describing the build: version, CUDA on/off, the SIMD targets compiled in and the one chosen.
std::string build_summary();

}  // namespace lockstep
