#include "lockstep/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace lockstep {

namespace {
std::atomic<int> g_threads{0};  // 0: default_threads()

/// OMP_NUM_THREADS when set, else every hardware thread. Not omp_get_max_threads(): a host
/// program (torch, for one) may lower that for its own pool, which would silently shrink ours.
int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

int num_threads() {
  const int n = g_threads.load();
  if (n > 0) return n;
  static const int fallback = default_threads();
  return fallback;
}

void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("[core.set_num_threads] n must be >= 1, got " + std::to_string(n));
  g_threads.store(n);
}

void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t, int)>& body, int threads) {
  if (tasks <= 0) return;
  const int limit = threads > 0 ? std::min(threads, num_threads()) : num_threads();
  const int nt = static_cast<int>(std::min<std::int64_t>(limit, tasks));
  if (nt == 1) {
    for (std::int64_t t = 0; t < tasks; ++t) body(t, 0);
    return;
  }
  std::exception_ptr first;
  std::mutex m;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
  for (std::int64_t t = 0; t < tasks; ++t) {
    try {
#ifdef _OPENMP
      body(t, omp_get_thread_num());
#else
      body(t, 0);
#endif
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace lockstep
