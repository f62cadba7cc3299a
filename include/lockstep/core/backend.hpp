// What this build has: its version, CUDA, and what each engine linked into the program reports.
#pragma once

#include <string>

namespace lockstep {

/// True when the library was built with CUDA and a CUDA device is visible.
bool cuda_available();
/// The version string, e.g. "0.1.0".
const char* version();
/// One line describing the build: the version, CUDA on/off and the threads, then what each
/// engine linked into the program reports (e.g. QKAN its SIMD target), in registration order.
std::string build_summary();

/// Adds `describe`'s text to build_summary(): an engine registers it once, from a static
/// object of a unit that every program using the engine links. Safe during static
/// initialisation; a function registered twice is reported once.
void report_in_build_summary(std::string (*describe)());

}  // namespace lockstep
