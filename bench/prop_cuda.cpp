// CUDA benchmark of the propagation engine: Dudley members (shot noise, 2^13 points) on a
// fixed RK4IP schedule and adaptive DP5(4)-IP, for several batch sizes, with each trial
// replayed as a CUDA graph ("graph"), launched kernel by kernel ("launches") and, where the
// build has it, with each evaluation of N fused into one kernel, replayed ("fused") or launched
// kernel by kernel ("fused-launches", for profilers that see launches only), the fused trial
// as one range of members or four instead of the default two lanes ("fused-lanes1",
// "fused-lanes4", CudaOptions::lanes), or as four or eight ranges one after another
// ("fused-chunks4", "fused-chunks8", CudaOptions::concurrent_lanes = false), or with another
// share of L2 prefetched than the default ("fused-prefetch0", "fused-prefetch25",
// "fused-prefetch75", "fused-prefetch100", "fused-lanes1-prefetch0", CudaOptions::l2_prefetch):
// member-steps per second, the time the same transforms take alone (the floor: batched cuFFT
// plans made as the engine makes them, timed with CUDA events) and the ratio floor / measured.
// Also the float32 error against float64 on the whole Dudley case.
//
//   lockstep_prop_cuda_bench [output.json = bench/results/prop_cuda.json] [batch sizes = 1,16,256,1024,4096]
//                            [variants = graph,launches,fused]
//
// Steps are timed after two warm-up steps, from the timed run's first accepted step to its
// last, including everything a run does per step (the statistics' measures, the norms copied
// back) and not the run's start and end (loading the members, reading them back; reported
// apart as run_s); planes: only the two ends (n_save = 2), so the timing is the stepping's.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep/core/files.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"
#include "src/prop/cuda/fft_plan.hpp"

namespace lp = lockstep::prop;
using clock_type = std::chrono::steady_clock;

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "prop_cuda_bench: %s failed\n", what);
    std::exit(1);
  }
}

lp::Config dudley(lp::Scheme scheme, std::uint64_t seed) {
  lp::Config c;
  c.stepping.scheme = scheme;
  c.stepping.adaptive = scheme != lp::Scheme::rk4ip;
  c.stepping.fixed_steps = 2000;
  c.output.n_save = 2;
  c.pulse.shot_noise = true;
  c.pulse.noise_seed = seed;
  return c;
}

// Seconds per call of the transforms of one N evaluation (two complex, one real pair) and of
// one complex transform, batched over `members` rows of n points, with the engine's plans.
struct FftTimes {
  double evaluation, complex;
};
FftTimes time_transforms(std::int64_t n, std::int64_t members) {
  const lp::cuda::FftPlan z2z_plan(CUFFT_Z2Z, n, members, nullptr), d2z_plan(CUFFT_D2Z, n, members, nullptr),
      z2d_plan(CUFFT_Z2D, n, members, nullptr);
  const cufftHandle z2z = z2z_plan.get(), d2z = d2z_plan.get(), z2d = z2d_plan.get();
  double2 *a = nullptr, *b = nullptr, *h = nullptr;
  double* r = nullptr;
  const auto rows = static_cast<std::size_t>(n * members);
  check(cudaMalloc(&a, rows * sizeof(double2)) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc(&b, rows * sizeof(double2)) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc(&r, rows * sizeof(double)) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc(&h, static_cast<std::size_t>((n / 2 + 1) * members) * sizeof(double2)) == cudaSuccess, "cudaMalloc");
  cudaMemset(a, 0, rows * sizeof(double2));
  cudaMemset(r, 0, rows * sizeof(double));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const int reps = members >= 256 ? 20 : 200;
  auto timed = [&](auto&& body) {
    body();
    cudaEventRecord(start);
    for (int i = 0; i < reps; ++i) body();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return ms * 1e-3 / reps;
  };
  FftTimes t;
  t.evaluation = timed([&] {
    cufftExecZ2Z(z2z, b, a, CUFFT_FORWARD);
    cufftExecD2Z(d2z, r, h);
    cufftExecZ2D(z2d, h, r);
    cufftExecZ2Z(z2z, a, a, CUFFT_INVERSE);
  });
  t.complex = timed([&] { cufftExecZ2Z(z2z, b, a, CUFFT_FORWARD); });
  check(cudaGetLastError() == cudaSuccess, "transforms");
  cudaFree(a);
  cudaFree(b);
  cudaFree(r);
  cudaFree(h);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return t;
}

// How the engine launches a trial: replayed as a CUDA graph or kernel by kernel, on which path,
// in how many lanes.
struct Variant {
  const char* name;
  lp::CudaOptions options;
};
constexpr Variant kVariants[] = {{"graph", {true, false}},
                                 {"launches", {false, false}},
                                 {"fused", {true, true}},
                                 {"fused-launches", {false, true}},
                                 {"fused-lanes1", {true, true, 1}},
                                 {"fused-lanes4", {true, true, 4}},
                                 {"fused-chunks4", {true, true, 4, false}},
                                 {"fused-chunks8", {true, true, 8, false}},
                                 {"fused-prefetch0", {true, true, 2, true, 0.0}},
                                 {"fused-prefetch25", {true, true, 2, true, 0.25}},
                                 {"fused-prefetch75", {true, true, 2, true, 0.75}},
                                 {"fused-prefetch100", {true, true, 2, true, 1.0}},
                                 {"fused-lanes1-prefetch0", {true, true, 1, true, 0.0}}};

// Times `steps` accepted steps of `members` members after two warm-up steps.
std::string time_scheme(const char* name, lp::Scheme scheme, std::int64_t members, std::int64_t steps,
                        const FftTimes& fft, const Variant& variant) {
  std::vector<lp::Config> configs;
  for (std::int64_t i = 0; i < members; ++i) configs.push_back(dudley(scheme, 1 + static_cast<std::uint64_t>(i)));
  std::vector<lp::Member> batch;
  std::vector<lp::Member*> pointers;
  std::vector<const lp::Config*> config_pointers;
  for (const auto& c : configs) batch.emplace_back(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)));
  for (auto& m : batch) pointers.push_back(&m);
  for (const auto& c : configs) config_pointers.push_back(&c);
  lp::EngineOptions options;
  options.device = lockstep::Device::cuda;
  options.cuda = variant.options;
  auto engine = lp::make_gnlse_engine(config_pointers, lp::tableau(scheme), options);
  lp::RunOptions warm, timed;
  warm.max_steps = 2;
  timed.max_steps = steps;
  // The stepping is timed from the first accepted step of the timed run to its last, through
  // the runner's progress call (made after each acceptance's bookkeeping), so that the run's
  // start and end (every member loaded into the engine, its spectrum read back into host rows)
  // are left out; `run_s` is the whole run with them.
  struct Mark {
    clock_type::time_point time;
    lp::Ledger ledger;
  };
  std::vector<Mark> marks;
  timed.progress = [&](double, std::int64_t, double) { marks.push_back({clock_type::now(), batch[0].ledger()}); };
  lp::run_lockstep(pointers, *engine, warm);
  const auto start = clock_type::now();
  lp::run_lockstep(pointers, *engine, timed);
  const double run_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  check(marks.size() >= 2, "the timed run's steps");
  const Mark &first = marks.front(), &last = marks.back();
  const double seconds = std::chrono::duration<double>(last.time - first.time).count();
  const auto accepted = last.ledger.accepted_steps - first.ledger.accepted_steps;
  const auto evaluations = last.ledger.rhs_evaluations - first.ledger.rhs_evaluations;
  // The runner books each trial's wall time (launch to synchronisation) in equal shares to
  // the members' ledgers; the rest of `seconds` is the acceptances (measures) and bookkeeping.
  const double trials = (last.ledger.wall_time - first.ledger.wall_time) * static_cast<double>(members);
  // The transforms these steps made: those of every evaluation, one complex transform per
  // accepted step (the peak power of the statistics).
  const double floor = static_cast<double>(evaluations) * fft.evaluation + static_cast<double>(accepted) * fft.complex;
  const double rate = static_cast<double>(members * accepted) / seconds;
  std::ostringstream o;
  o << "{\"scheme\": \"" << name << "\", \"variant\": \"" << variant.name << "\", \"accepted_steps\": " << accepted
    << ", \"rejected_steps\": " << last.ledger.rejected_steps - first.ledger.rejected_steps
    << ", \"evaluations_per_member\": " << evaluations << ", \"seconds\": " << seconds << ", \"trial_s\": " << trials
    << ", \"run_s\": " << run_seconds << ", \"member_steps_per_s\": " << rate << ", \"fft_floor_s\": " << floor
    << ", \"floor_member_steps_per_s\": " << static_cast<double>(members * accepted) / floor
    << ", \"ratio_to_floor\": " << floor / seconds << "}";
  std::printf(
      "  %-6s %-14s %5lld members: %8.4f s (trials %.4f s; whole run %.4f s) for %lld steps, %.4g member-steps/s, "
      "FFT floor %.4f s (ratio %.2f)\n",
      name, variant.name, static_cast<long long>(members), seconds, trials, run_seconds,
      static_cast<long long>(accepted), rate, floor, floor / seconds);
  std::fflush(stdout);
  return o.str();
}

double float32_error() {
  lp::Config c;
  std::vector<lp::Member> a{lp::Member(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)))}, b = a;
  lp::run_gnlse(a, {}, {lockstep::Device::cuda, lockstep::DType::f64, 0, {}});
  lp::run_gnlse(b, {}, {lockstep::Device::cuda, lockstep::DType::f32, 0, {}});
  double d = 0, s = 0;
  for (std::size_t k = 0; k < a[0].spectrum().size(); ++k) {
    d += std::norm(a[0].spectrum()[k] - b[0].spectrum()[k]);
    s += std::norm(a[0].spectrum()[k]);
  }
  return std::sqrt(d / s);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "bench/results/prop_cuda.json";
  std::vector<std::int64_t> sizes{1, 16, 256, 1024, 4096};
  if (argc > 2) {
    sizes.clear();
    std::stringstream list(argv[2]);
    for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoll(item));
  }
  std::vector<std::string> variants{"graph", "launches", "fused"};
  if (argc > 3) {
    variants.clear();
    std::stringstream list(argv[3]);
    for (std::string item; std::getline(list, item, ',');) variants.push_back(item);
  }
  for (const std::string& name : variants)
    if (std::none_of(std::begin(kVariants), std::end(kVariants), [&](const Variant& v) { return name == v.name; })) {
      std::fprintf(stderr, "prop_cuda_bench: unknown variant '%s'; known:", name.c_str());
      for (const Variant& v : kVariants) std::fprintf(stderr, " %s", v.name);
      std::fprintf(stderr, "\n");
      return 2;
    }
  cudaDeviceProp prop{};
  int device = 0;
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  std::printf("device: %s\n", prop.name);
  const std::int64_t n = lp::Config{}.grid.points;
  std::ostringstream json;
  json << "{\n  \"device\": \"" << prop.name << "\",\n  \"points\": " << n << ",\n  \"runs\": [\n";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::int64_t m = sizes[i];
    const FftTimes fft = time_transforms(n, m);
    // Enough steps for ≥ 0.2 s of stepping at every size.
    const std::int64_t steps = std::max<std::int64_t>(50, std::min<std::int64_t>(400, 200000 / m));
    json << "    {\"members\": " << m << ", \"fft_evaluation_s\": " << fft.evaluation
         << ", \"fft_complex_s\": " << fft.complex;
    for (const Variant& v : kVariants) {
      if (std::find(variants.begin(), variants.end(), v.name) == variants.end()) continue;
      if (v.options.fused_evaluation && !lp::cuda_fused_evaluation_available(n)) {
        std::printf("  %s: not in this build (no fused evaluation of N for %lld points)\n", v.name,
                    static_cast<long long>(n));
        continue;
      }
      json << ",\n     \"rk4ip_" << v.name << "\": " << time_scheme("rk4ip", lp::Scheme::rk4ip, m, steps, fft, v)
           << ",\n     \"dp54ip_" << v.name << "\": " << time_scheme("dp54ip", lp::Scheme::dp54ip, m, steps, fft, v);
    }
    json << "}" << (i + 1 < sizes.size() ? "," : "") << "\n";
  }
  const double f32 = float32_error();
  std::printf("float32 against float64, Dudley case: final spectrum relative L2 difference %.3g\n", f32);
  json << "  ],\n  \"float32_dudley_relative_difference\": " << f32 << "\n}\n";
  const std::string text = json.str();
  lockstep::write_file_atomically(
      out, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
      "prop_cuda_bench");
  std::printf("wrote %s\n", out.c_str());
}
