// The CUDA engine against the CPU engine (label gpu: needs an NVIDIA GPU).
//  - one trial, acceptance, dense output and measures of mixed batches (Raman or not, shock or
//    not, windows, several tolerances and norms) for every scheme, float64 and float32;
//  - whole runs: the Dudley case (docs/PROPAGATION.md §5.7) adaptive and on a fixed RK4IP schedule,
//    on the cuFFT path and with the fused evaluation of N, and a 64-member shot-noise ensemble,
//    CUDA runner against the CPU reference runner.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/core/backend.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"

namespace lp = lockstep::prop;
using Complex = std::complex<double>;
using lockstep::DType;

namespace {

// ‖a − b‖₂ / ‖b‖₂
double relative_difference(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += std::norm(a[i] - b[i]);
    s += std::norm(b[i]);
  }
  return std::sqrt(d / s);
}

// Members on a smaller grid than Dudley's (2^11 points) that differ in what the kernels
// distinguish: Raman or not, self-steepening or not, windows, γ, tolerances and norm kinds, and
// shot noise (seeded). Without windows, an FSAL scheme's acceptance takes the measures the
// trial made of the candidate (no transform of its own).
std::vector<lp::Config> mixed_configs(lp::Scheme scheme, bool windows = true) {
  std::vector<lp::Config> out;
  for (int i = 0; i < 5; ++i) {
    lp::Config c;
    c.grid.points = 2048;
    c.grid.time_window = 4e-12;
    c.fibre.length = 0.02;
    c.stepping.scheme = scheme;
    c.stepping.adaptive = scheme != lp::Scheme::rk4ip;
    c.pulse.shot_noise = true;
    c.pulse.noise_seed = 11 + static_cast<std::uint64_t>(i);
    c.fibre.gamma = 0.11 * (1 + 0.1 * i);
    c.stepping.norm = static_cast<lp::ErrorNorm>(i % 3);
    c.stepping.rtol = 1e-6 * (1 + i);
    if (i == 1) c.fibre.raman = lp::RamanModel::none, c.fibre.raman_fraction = 0;
    if (i == 2) c.fibre.self_steepening = false;
    if (i == 3 && windows) c.window.time_edge = 0.1, c.window.frequency_edge = 0.05;
    if (i == 4) c.fibre.raman = lp::RamanModel::lin_agrawal, c.fibre.raman_fraction = 0.245;
    out.push_back(c);
  }
  return out;
}

struct Batch {
  std::vector<lp::Config> configs;
  std::vector<const lp::Config*> pointers;
  std::vector<std::vector<Complex>> spectra;
  explicit Batch(std::vector<lp::Config> c) : configs(std::move(c)) {
    for (const auto& x : configs) {
      pointers.push_back(&x);
      spectra.push_back(lp::initial_spectrum(x.pulse, lp::Grid(x.grid)));
    }
  }
  lp::ErrorControl control(std::size_t i) const {
    return {configs[i].stepping.norm, configs[i].stepping.rtol, configs[i].stepping.atol};
  }
};

// Rows of every member, filled by an engine's read (complete after finish_reads()).
struct Rows {
  std::vector<std::vector<Complex>> rows;
  std::vector<Complex*> pointers;
  explicit Rows(const lp::Engine& e)
      : rows(static_cast<std::size_t>(e.members()), std::vector<Complex>(static_cast<std::size_t>(e.points()))) {
    for (auto& r : rows) pointers.push_back(r.data());
  }
};

struct TrialCase {
  lp::Scheme scheme;
  DType precision;
  bool graphs;                          // trials replayed as CUDA graphs
  bool fused = false;                   // each evaluation of N as one kernel (CudaOptions::fused_evaluation)
  bool windows = true;                  // member 3 has time and frequency windows
  int lanes = lp::CudaOptions{}.lanes;  // ranges of members whose fused trials run concurrently
  bool concurrent = true;               // false: the ranges one after another (chunks)
};

class CudaTrial : public ::testing::TestWithParam<TrialCase> {};

// Four steps (FSAL from the second on, windows applied in between; step lengths repeated and
// changed, so captured trials replay with new h and rows) on both engines: norms, finiteness,
// evaluations, solutions, dense output and measures agree.
TEST_P(CudaTrial, MatchesHostEngine) {
  const auto [scheme, precision, graphs, fused, windows, lanes, concurrent] = GetParam();
  Batch b(mixed_configs(scheme, windows));
  if (fused && !lp::cuda_fused_evaluation_available(b.configs[0].grid.points, precision))
    GTEST_SKIP() << "this build has no fused evaluation of N (cuFFTDx for sm_90)";
  const lp::Tableau& tableau = lp::tableau(scheme);
  auto host = lp::make_gnlse_engine(b.pointers, tableau, {lockstep::Device::cpu, DType::f64, 0, {}});
  auto cuda = lp::make_gnlse_engine(b.pointers, tableau,
                                    {lockstep::Device::cuda, precision, 0, {graphs, fused, lanes, concurrent}});
  for (std::size_t i = 0; i < b.configs.size(); ++i) {
    host->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
    cuda->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
  }
  const double tol = precision == DType::f64 ? 1e-11 : 2e-4;
  for (std::int64_t i = 0; i < host->members(); ++i) {
    const lp::FieldMeasures a = host->measures(i), c = cuda->measures(i);
    EXPECT_NEAR(c.energy, a.energy, tol * a.energy);
    EXPECT_NEAR(c.photon_number, a.photon_number, tol * a.photon_number);
    EXPECT_NEAR(c.peak_power, a.peak_power, tol * a.peak_power);
    EXPECT_NEAR(c.spectral_centroid, a.spectral_centroid, tol * 1e-3 * a.spectral_centroid);
  }
  const std::vector<double> steps{2e-4, 3e-4, 3e-4, 2.5e-4};
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const double h = steps[step];
    host->trial(h, lp::Evaluation::batched);
    cuda->trial(h, lp::Evaluation::batched);
    for (std::int64_t i = 0; i < host->members(); ++i) {
      SCOPED_TRACE("member " + std::to_string(i) + ", h " + std::to_string(h));
      // The CUDA engine hands N(candidate) to the next step for the whole batch or not at all:
      // a member's window (member 3) makes every member re-evaluate the first stage.
      if (step == 0 || !windows) {
        EXPECT_EQ(cuda->evaluations(i), host->evaluations(i));
      } else {
        EXPECT_EQ(cuda->evaluations(i), tableau.stages());
      }
      EXPECT_TRUE(cuda->finite(i));
      if (tableau.has_error_estimate()) {
        // The error estimate is a small difference of stage values: float32 keeps fewer digits.
        const double norm_tol = precision == DType::f64 ? 1e-6 : 0.3;
        EXPECT_NEAR(cuda->norm(i), host->norm(i), norm_tol * std::max(host->norm(i), 1e-3));
      } else {
        EXPECT_TRUE(std::isnan(cuda->norm(i)));
      }
    }
    host->accept();
    cuda->accept();
    // Three reads in flight at once on the CUDA engine (more than its two plane slots).
    Rows hs(*host), cs(*cuda), hd(*host), cd(*cuda), hd2(*host), cd2(*cuda);
    const bool dense = tableau.has_dense_output();
    for (lp::Engine* e : {host.get(), cuda.get()}) {
      const bool on_host = e == host.get();
      e->read_solutions((on_host ? hs : cs).pointers);
      if (dense) {
        e->read_dense_output(0.37, (on_host ? hd : cd).pointers);
        e->read_dense_output(0.81, (on_host ? hd2 : cd2).pointers);
      }
      e->finish_reads();
    }
    for (std::size_t i = 0; i < hs.rows.size(); ++i) {
      EXPECT_LT(relative_difference(cs.rows[i], hs.rows[i]), tol) << "member " << i;
      if (!dense) continue;
      EXPECT_LT(relative_difference(cd.rows[i], hd.rows[i]), tol) << "member " << i;
      EXPECT_LT(relative_difference(cd2.rows[i], hd2.rows[i]), tol) << "member " << i;
    }
    for (std::int64_t i = 0; i < host->members(); ++i) {
      const lp::FieldMeasures a = host->measures(i), c = cuda->measures(i);
      EXPECT_NEAR(c.energy, a.energy, tol * a.energy);
      EXPECT_NEAR(c.photon_number, a.photon_number, tol * a.photon_number);
      EXPECT_NEAR(c.peak_power, a.peak_power, 10 * tol * a.peak_power);
      EXPECT_NEAR(c.spectral_centroid, a.spectral_centroid, tol * 1e-3 * a.spectral_centroid);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, CudaTrial,
    ::testing::Values(
        TrialCase{lp::Scheme::rk4ip, DType::f64, true}, TrialCase{lp::Scheme::erk43ip, DType::f64, true},
        TrialCase{lp::Scheme::dp54ip, DType::f64, true}, TrialCase{lp::Scheme::rk4ip, DType::f32, true},
        TrialCase{lp::Scheme::dp54ip, DType::f32, true}, TrialCase{lp::Scheme::rk4ip, DType::f64, false},
        TrialCase{lp::Scheme::dp54ip, DType::f64, false}, TrialCase{lp::Scheme::dp54ip, DType::f32, false},
        TrialCase{lp::Scheme::rk4ip, DType::f64, true, true}, TrialCase{lp::Scheme::erk43ip, DType::f64, true, true},
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, true}, TrialCase{lp::Scheme::dp54ip, DType::f32, true, true},
        TrialCase{lp::Scheme::rk4ip, DType::f64, false, true},
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, false, false},
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, true, false},
        TrialCase{lp::Scheme::dp54ip, DType::f32, false, true, false},
        // One lane; one lane per member (5); 3 lanes of 2, 2, 1.
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, true, true, 1},
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, true, false, 5},
        TrialCase{lp::Scheme::rk4ip, DType::f64, false, true, true, 3},
        TrialCase{lp::Scheme::erk43ip, DType::f64, true, true, true, 3},
        // Chunks: 3 ranges one after another, replayed and launched.
        TrialCase{lp::Scheme::dp54ip, DType::f64, true, true, false, 3, false},
        TrialCase{lp::Scheme::rk4ip, DType::f64, false, true, true, 3, false}));

TEST(CudaEngine, RefusesPerMemberEvaluation) {
  Batch b(mixed_configs(lp::Scheme::rk4ip));
  auto cuda = lp::make_cuda_engine(b.pointers, lp::tableau(lp::Scheme::rk4ip));
  for (std::size_t i = 0; i < b.configs.size(); ++i)
    cuda->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
  EXPECT_THROW(cuda->trial(1e-4, lp::Evaluation::per_member), std::invalid_argument);
  EXPECT_THROW(cuda->trial(-1, lp::Evaluation::batched), std::invalid_argument);
}

TEST(CudaEngine, RefusesFewerThanOneLane) {
  Batch b(mixed_configs(lp::Scheme::rk4ip));
  EXPECT_THROW(lp::make_cuda_engine(b.pointers, lp::tableau(lp::Scheme::rk4ip), DType::f64, {true, true, 0}),
               std::invalid_argument);
}

TEST(CudaEngine, RefusesAnL2PrefetchOutsideZeroToOne) {
  Batch b(mixed_configs(lp::Scheme::rk4ip));
  for (const double share : {-0.1, 1.5, std::nan("")})
    EXPECT_THROW(
        lp::make_cuda_engine(b.pointers, lp::tableau(lp::Scheme::rk4ip), DType::f64, {true, true, 2, true, share}),
        std::invalid_argument)
        << share;
}

// A member whose start holds a NaN: its candidate is not finite and its norm NaN, on every
// path (the FSAL evaluation forms the norms on the fused one), while the others' stay finite.
TEST(CudaEngine, FlagsANonFiniteCandidate) {
  for (const lp::Scheme scheme : {lp::Scheme::dp54ip, lp::Scheme::erk43ip, lp::Scheme::rk4ip}) {
    for (const bool fused : {false, true}) {
      SCOPED_TRACE(std::string(lp::tableau(scheme).name) + (fused ? ", fused" : ", cuFFT path"));
      Batch b(mixed_configs(scheme, false));
      b.spectra[2][17] = Complex(std::nan(""), 0);
      auto cuda = lp::make_gnlse_engine(b.pointers, lp::tableau(scheme),
                                        {lockstep::Device::cuda, DType::f64, 0, {true, fused, 2}});
      for (std::size_t i = 0; i < b.configs.size(); ++i)
        cuda->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
      for (const double h : {2e-4, 2e-4}) {  // the second trial starts from the FSAL stage
        cuda->trial(h, lp::Evaluation::batched);
        for (std::int64_t i = 0; i < cuda->members(); ++i) {
          EXPECT_EQ(cuda->finite(i), i != 2) << "member " << i;
          if (i == 2) {
            EXPECT_TRUE(std::isnan(cuda->norm(i)));
          }
        }
        cuda->accept();
      }
    }
  }
}

lp::Member dudley_member(const lp::Config& c) { return lp::Member(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid))); }

// The final spectrum, the planes and the statistics of the Dudley case on both runners.
void compare_runs(const lp::Config& config, double tol, int step_slack, const lp::CudaOptions& options) {
  std::vector<lp::Member> cpu{dudley_member(config)}, gpu{dudley_member(config)};
  lp::run_gnlse(cpu);
  lp::run_gnlse(gpu, {}, {lockstep::Device::cuda, DType::f64, 0, options});
  const lp::Member &a = cpu[0], &c = gpu[0];
  EXPECT_NEAR(static_cast<double>(c.ledger().accepted_steps), static_cast<double>(a.ledger().accepted_steps),
              step_slack);
  ASSERT_EQ(c.planes().z.size(), a.planes().z.size());
  double worst = 0;
  for (std::size_t p = 0; p < a.planes().z.size(); ++p) {
    EXPECT_DOUBLE_EQ(c.planes().z[p], a.planes().z[p]);
    worst = std::max(worst, relative_difference(c.planes().field_w[p], a.planes().field_w[p]));
  }
  const double final_difference = relative_difference(c.spectrum(), a.spectrum());
  std::printf("steps CPU %lld, CUDA %lld; final spectrum relative difference %.3g, worst plane %.3g\n",
              static_cast<long long>(a.ledger().accepted_steps), static_cast<long long>(c.ledger().accepted_steps),
              final_difference, worst);
  EXPECT_LT(final_difference, tol);
  EXPECT_LT(worst, tol);
  const auto& sa = a.statistics();
  const auto& sc = c.statistics();
  EXPECT_NEAR(sc.photon_number.back(), sa.photon_number.back(), 1e-6 * sa.photon_number.back());
  EXPECT_NEAR(sc.energy.back(), sa.energy.back(), 1e-6 * sa.energy.back());
}

// The Dudley case adaptive and on a fixed RK4IP schedule, on the cuFFT path (fused evaluation
// off) and with the fused evaluation (the default where the build has it).
lp::Config dudley_fixed() {
  lp::Config c;
  c.stepping.scheme = lp::Scheme::rk4ip;
  c.stepping.adaptive = false;
  c.stepping.fixed_steps = 4000;
  return c;
}
constexpr lp::CudaOptions kCufftPath{true, false};

TEST(CudaRunner, DudleyAdaptiveMatchesCpu) {
  // Adaptive runs: differences at the level of the rounding can move a step's acceptance, so
  // the two runs may take slightly different steps; each meets rtol = 1e-6 on every step.
  compare_runs(lp::Config{}, 1e-4, 30, kCufftPath);
}

TEST(CudaRunner, DudleyFixedRk4ipMatchesCpu) { compare_runs(dudley_fixed(), 1e-7, 0, kCufftPath); }

TEST(CudaRunner, DudleyFusedEvaluationMatchesCpu) {
  if (!lp::cuda_fused_evaluation_available(lp::Config{}.grid.points))
    GTEST_SKIP() << "this build has no fused evaluation of N (cuFFTDx for sm_90)";
  compare_runs(lp::Config{}, 1e-4, 30, {});
  compare_runs(dudley_fixed(), 1e-7, 0, {});
}

// Where the build has no fused evaluation for the grid (here 1536 points; also float32 at 8192
// points, fused_evaluation.cu's with_size says why), the engine asked for it takes the cuFFT
// path: its trial matches the CPU engine's.
TEST(CudaEngine, FusedEvaluationFallsBackWhereUnavailable) {
  EXPECT_FALSE(lp::cuda_fused_evaluation_available(1536));
  EXPECT_FALSE(lp::cuda_fused_evaluation_available(lp::Config{}.grid.points, DType::f32));
  std::vector<lp::Config> configs = mixed_configs(lp::Scheme::rk4ip);
  for (lp::Config& c : configs) c.grid.points = 1536;
  Batch b(configs);
  const lp::Tableau& tableau = lp::tableau(lp::Scheme::rk4ip);
  auto host = lp::make_gnlse_engine(b.pointers, tableau, {lockstep::Device::cpu, DType::f64, 0, {}});
  auto cuda = lp::make_gnlse_engine(b.pointers, tableau, {lockstep::Device::cuda, DType::f64, 0, {true, true}});
  for (std::size_t i = 0; i < b.configs.size(); ++i) {
    host->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
    cuda->load(static_cast<std::int64_t>(i), b.spectra[i].data(), b.control(i));
  }
  Rows hs(*host), cs(*cuda);
  for (lp::Engine* e : {host.get(), cuda.get()}) {
    e->trial(2e-4, lp::Evaluation::batched);
    e->accept();
    e->read_solutions((e == host.get() ? hs : cs).pointers);
    e->finish_reads();
  }
  for (std::size_t i = 0; i < hs.rows.size(); ++i)
    EXPECT_LT(relative_difference(cs.rows[i], hs.rows[i]), 1e-11) << "member " << i;
}

TEST(CudaRunner, ShotNoiseEnsembleMatchesCpu) {
  // 64 members of the Dudley case with shot noise over its first 5 cm (where the coherence
  // starts to drop), CUDA (default options: the fused evaluation where the build has it)
  // against the CPU runner (batched; its equality with the per-member reference is
  // test_runner.cpp's). Both take the same steps: the batch norm decides.
  std::vector<lp::Member> cpu, gpu;
  for (int i = 0; i < 64; ++i) {
    lp::Config c;
    c.fibre.length = 0.05;
    c.output.n_save = 5;
    c.pulse.shot_noise = true;
    c.pulse.noise_seed = 1 + static_cast<std::uint64_t>(i);
    cpu.push_back(dudley_member(c));
    gpu.push_back(dudley_member(c));
  }
  lp::run_gnlse(cpu);
  lp::run_gnlse(gpu, {}, {lockstep::Device::cuda, DType::f64, 0, {}});
  EXPECT_EQ(gpu[0].ledger().accepted_steps, cpu[0].ledger().accepted_steps);
  double worst = 0;
  std::vector<std::vector<Complex>> a, c;
  for (int i = 0; i < 64; ++i) {
    worst = std::max(worst, relative_difference(gpu[static_cast<std::size_t>(i)].spectrum(),
                                                cpu[static_cast<std::size_t>(i)].spectrum()));
    a.push_back(cpu[static_cast<std::size_t>(i)].spectrum());
    c.push_back(gpu[static_cast<std::size_t>(i)].spectrum());
  }
  std::printf("64 members: worst final spectrum relative difference %.3g\n", worst);
  EXPECT_LT(worst, 1e-6);
  const lp::Grid grid(lp::Config{}.grid);
  const auto ga = lp::coherence(a, grid), gc = lp::coherence(c, grid);
  double coherence_difference = 0;
  for (std::size_t k = 0; k < ga.size(); ++k)
    coherence_difference = std::max(coherence_difference, std::abs(ga[k] - gc[k]));
  EXPECT_LT(coherence_difference, 1e-6);
}

}  // namespace
