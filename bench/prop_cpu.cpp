// CPU benchmark of the propagation engine (issue 5): the Dudley case at 2^13 points per scheme
// and tolerance (wall time, steps, RHS evaluations, photon-number drift), and the batched
// runner against running members one by one on 16 shot-noise members.
//
//   lockstep_prop_cpu_bench [output.json = bench/results/prop_cpu.json] [batch length m = 0.02]
//
// The batch comparison propagates over a shortened fibre (default 2 cm: through the soliton
// fission, the expensive part) so that the 2 × 16 runs fit in a few minutes; the per-scheme
// runs use the full 0.15 m. The JSON records the threads, OMP_WAIT_POLICY and the load average:
// on a shared machine whose other work occupies a core, OpenMP's default spinning wait makes
// the batched (threaded) runner several times slower; OMP_WAIT_POLICY=passive avoids that.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lockstep/core/files.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"

namespace lp = lockstep::prop;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Runs `members` as one batch; returns the wall time.
double run_batch(std::vector<lp::Member>& members) {
  const auto start = clock_type::now();
  lp::run_gnlse(members);
  return seconds_since(start);
}

lp::Member dudley_member(const lp::Config& config) {
  return lp::Member(config, lp::initial_spectrum(config.pulse, lp::Grid(config.grid)));
}

// The 1-minute load average (/proc/loadavg), or −1: the machine is shared, and other work on its
// cores changes threaded timings far more than single-threaded ones.
double load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  double load = -1;
  if (f) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

double drift(const lp::Member& m) {
  const auto& s = m.statistics();
  return s.photon_number.back() / s.photon_number.front() - 1;
}

std::string scheme_run(const char* scheme_name, lp::Scheme scheme, bool adaptive, double rtol, std::int64_t steps) {
  lp::Config c;
  c.stepping.scheme = scheme;
  c.stepping.adaptive = adaptive;
  c.stepping.rtol = rtol;
  c.stepping.fixed_steps = steps;
  std::vector<lp::Member> members{dudley_member(c)};
  const double wall = run_batch(members);
  const auto& l = members[0].ledger();
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"scheme\": \"%s\", \"adaptive\": %s, \"rtol\": %.1e, \"fixed_steps\": %lld, "
                "\"wall_s\": %.3f, \"accepted_steps\": %lld, \"rejected_steps\": %lld, "
                "\"rhs_evaluations\": %lld, \"ffts\": %lld, \"photon_number_drift\": %.3e}",
                scheme_name, adaptive ? "true" : "false", adaptive ? rtol : 0.0,
                static_cast<long long>(adaptive ? 0 : steps), wall, static_cast<long long>(l.accepted_steps),
                static_cast<long long>(l.rejected_steps), static_cast<long long>(l.rhs_evaluations),
                static_cast<long long>(l.ffts), drift(members[0]));
  std::fprintf(stderr, "%s\n", line);
  return line;
}

std::vector<lp::Member> noise_members(double length, bool adaptive, std::int64_t steps) {
  std::vector<lp::Member> members;
  for (int i = 0; i < 16; ++i) {
    lp::Config c;
    c.fibre.length = length;
    c.pulse.shot_noise = true;
    c.pulse.noise_seed = static_cast<std::uint64_t>(i + 1);
    c.stepping.adaptive = adaptive;
    c.stepping.fixed_steps = steps;
    c.output.n_save = 20;
    members.push_back(dudley_member(c));
  }
  return members;
}

// One by one against one batch of 16, for an adaptive and a fixed schedule.
std::string batch_comparison(double length, bool adaptive, std::int64_t steps) {
  auto alone = noise_members(length, adaptive, steps);
  double alone_wall = 0;
  std::int64_t alone_steps = 0;
  for (auto& m : alone) {
    std::vector<lp::Member> one{m};
    alone_wall += run_batch(one);
    alone_steps += one[0].ledger().accepted_steps;
  }
  auto batch = noise_members(length, adaptive, steps);
  const double batch_wall = run_batch(batch);
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"members\": 16, \"length_m\": %.3f, \"adaptive\": %s, \"fixed_steps\": %lld, "
                "\"one_by_one_wall_s\": %.3f, \"one_by_one_mean_steps\": %.1f, \"batched_wall_s\": %.3f, "
                "\"batched_steps\": %lld, \"throughput_ratio\": %.3f, \"threads\": %d}",
                length, adaptive ? "true" : "false", static_cast<long long>(adaptive ? 0 : steps), alone_wall,
                static_cast<double>(alone_steps) / 16.0, batch_wall,
                static_cast<long long>(batch[0].ledger().accepted_steps), alone_wall / batch_wall,
                lockstep::num_threads());
  std::fprintf(stderr, "%s\n", line);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string output = argc > 1 ? argv[1] : "bench/results/prop_cpu.json";
  const double batch_length = argc > 2 ? std::atof(argv[2]) : 0.02;
  try {
    const double load_before = load_average();
    std::vector<std::string> schemes = {
        scheme_run("dp54ip", lp::Scheme::dp54ip, true, 1e-5, 0),
        scheme_run("dp54ip", lp::Scheme::dp54ip, true, 1e-6, 0),
        scheme_run("dp54ip", lp::Scheme::dp54ip, true, 1e-7, 0),
        scheme_run("erk43ip", lp::Scheme::erk43ip, true, 1e-5, 0),
        scheme_run("erk43ip", lp::Scheme::erk43ip, true, 1e-6, 0),
        scheme_run("rk4ip", lp::Scheme::rk4ip, false, 1e-6, 4000),
        scheme_run("rk4ip", lp::Scheme::rk4ip, false, 1e-6, 8000),
    };
    std::vector<std::string> batches = {batch_comparison(batch_length, true, 0),
                                        batch_comparison(batch_length, false, 1000)};
    const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
    char environment[256];
    std::snprintf(environment, sizeof environment,
                  "  \"threads\": %d, \"omp_wait_policy\": \"%s\", \"load_average_before\": %.2f, "
                  "\"load_average_after\": %.2f,\n",
                  lockstep::num_threads(), wait_policy ? wait_policy : "", load_before, load_average());
    std::string json = "{\n  \"case\": \"Dudley supercontinuum, 2^13 points, 12.5 ps\",\n";
    json += environment;
    json += "  \"schemes\": [\n";
    for (std::size_t i = 0; i < schemes.size(); ++i)
      json += "    " + schemes[i] + (i + 1 < schemes.size() ? ",\n" : "\n");
    json += "  ],\n  \"batched_vs_one_by_one\": [\n";
    for (std::size_t i = 0; i < batches.size(); ++i)
      json += "    " + batches[i] + (i + 1 < batches.size() ? ",\n" : "\n");
    json += "  ]\n}\n";
    lockstep::write_file_atomically(
        output, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()),
        "bench.prop_cpu");
    std::printf("%s", json.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
