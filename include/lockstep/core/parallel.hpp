// Threads for the CPU kernels (OpenMP underneath when the build has it).
#pragma once

#include <cstdint>
#include <functional>

namespace lockstep {

/// Threads the CPU kernels use: set_num_threads(n), else OMP_NUM_THREADS, else all hardware threads.
int num_threads();
/// Sets the thread count for later calls; n < 1 throws std::invalid_argument.
void set_num_threads(int n);

/// Runs body(task, thread) for task in [0, tasks), spread over min(threads, tasks) threads
/// with dynamic scheduling; threads <= 0 means num_threads(). `thread` is in
/// [0, num_threads()) and identifies per-thread scratch. The first exception thrown by a body
/// is rethrown on the calling thread.
void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t task, int thread)>& body, int threads = 0);

}  // namespace lockstep
