// Cost of one nonlinear right-hand side (NonlinearBatch::evaluate) against the bare transforms
// it needs, run with the same plans and threads (NonlinearBatch::transforms_only); and, for the
// choice of threading, the same transforms through FFTW's own threads over one many-transform
// plan. Prints one JSON object per member count.
//
//   lockstep_prop_rhs_bench [points = 8192] [repetitions = 20] [blocks = 50] [members ... = 1 16]
//
// Physics: the Dudley case (Blow–Wood Raman, self-steepening): 4 transforms per member.
// Times are the best of `blocks` blocks of `repetitions` calls, the variants taking turns block
// by block: on a shared machine the least disturbed blocks measure the code.
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "lockstep/core/parallel.hpp"
#include "lockstep/prop/nonlinear.hpp"

namespace {

using lockstep::prop::Complex;

/// Seconds per call of each of `calls`: blocks of `reps` calls, the callables taking turns
/// block by block (so that they see the same background load), the best of `blocks` blocks.
std::vector<double> seconds_per_call(int reps, int blocks, const std::vector<std::function<void()>>& calls) {
  std::vector<double> best(calls.size(), 1e300);
  for (const auto& call : calls) call();  // warm up
  for (int block = 0; block < blocks; ++block) {
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) calls[c]();
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      best[c] = std::min(best[c], took.count() / reps);
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lockstep::prop;
  const std::int64_t points = argc > 1 ? std::atoll(argv[1]) : 8192;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  const int blocks = argc > 3 ? std::atoi(argv[3]) : 50;
  std::vector<std::int64_t> counts;
  for (int i = 4; i < argc; ++i) counts.push_back(std::atoll(argv[i]));
  if (counts.empty()) counts = {1, 16};

  Config config;
  config.grid.points = points;
  const Grid grid(config.grid);
  const MemberPhysics physics = make_physics(config, grid);
  const int threads = lockstep::num_threads();
  fftw_init_threads();

  for (const std::int64_t members : counts) {
    const auto size = static_cast<std::size_t>(members * points);
    auto* in = reinterpret_cast<Complex*>(fftw_alloc_complex(size));
    auto* out = reinterpret_cast<Complex*>(fftw_alloc_complex(size));
    auto* rows = reinterpret_cast<Complex*>(fftw_alloc_complex(size));
    std::mt19937_64 rng(1);
    std::normal_distribution<double> normal(0.0, 30.0);
    for (std::size_t i = 0; i < size; ++i) in[i] = Complex(normal(rng), normal(rng));
    std::copy(in, in + size, rows);

    // FFTW's threads over one many-transform plan, for the threading comparison. Planned before
    // the batch and reset to one thread after: the batch's plans must be single-threaded.
    fftw_plan_with_nthreads(threads);
    const int n = static_cast<int>(points);
    fftw_plan many_forward =
        fftw_plan_many_dft(1, &n, static_cast<int>(members), reinterpret_cast<fftw_complex*>(rows), nullptr, 1, n,
                           reinterpret_cast<fftw_complex*>(rows), nullptr, 1, n, FFTW_FORWARD, FFTW_MEASURE);
    fftw_plan many_backward =
        fftw_plan_many_dft(1, &n, static_cast<int>(members), reinterpret_cast<fftw_complex*>(rows), nullptr, 1, n,
                           reinterpret_cast<fftw_complex*>(rows), nullptr, 1, n, FFTW_BACKWARD, FFTW_MEASURE);
    fftw_plan_with_nthreads(1);
    std::copy(in, in + size, rows);

    NonlinearBatch batch(grid, members);
    std::vector<const MemberPhysics*> batch_physics(static_cast<std::size_t>(members), &physics);
    const std::int64_t ffts = members * batch.ffts_per_evaluation(physics);

    // Each FFTW-threads call starts from fresh rows (the transforms are unnormalised: repeated,
    // the values would overflow); the copy's own time is subtracted.
    const std::vector<double> t =
        seconds_per_call(reps, blocks,
                         {[&] { batch.evaluate(batch_physics, in, out); },
                          [&] { batch.transforms_only(batch_physics, rows); }, [&] { std::copy(in, in + size, rows); },
                          [&] {
                            std::copy(in, in + size, rows);
                            fftw_execute(many_forward);
                            fftw_execute(many_backward);
                            fftw_execute(many_forward);
                            fftw_execute(many_backward);
                          }});
    const double evaluate = t[0], bare = t[1], fftw_threads = t[3] - t[2];
    std::printf(
        "{\"n\": %lld, \"members\": %lld, \"threads\": %d, \"ffts_per_evaluation\": %lld, "
        "\"evaluate_s\": %.4e, \"bare_ffts_s\": %.4e, \"ratio\": %.3f, "
        "\"fftw_threads_many_plan_ffts_s\": %.4e}\n",
        static_cast<long long>(points), static_cast<long long>(members), threads, static_cast<long long>(ffts),
        evaluate, bare, evaluate / bare, fftw_threads);
    fftw_destroy_plan(many_forward);
    fftw_destroy_plan(many_backward);
    fftw_free(in);
    fftw_free(out);
    fftw_free(rows);
  }
  fftw_cleanup_threads();
  return 0;
}
