// make_gnlse_engine: the one place that picks the engine; what it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lockstep/core/backend.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/runner.hpp"
#include "same_run.hpp"

namespace lp = lockstep::prop;

namespace {

TEST(EngineChoice, CpuRefusesFloat32) {
  const lp::Config c;
  const lp::Config* p = &c;
  try {
    lp::make_gnlse_engine(std::span<const lp::Config* const>(&p, 1), lp::tableau(c.stepping.scheme),
                          {lockstep::Device::cpu, lockstep::DType::f32, 1, {}});
    FAIL() << "float32 on the CPU was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA only"), std::string::npos) << e.what();
  }
}

TEST(EngineChoice, CudaWithoutDeviceIsAClearError) {
  if (lockstep::cuda_available()) GTEST_SKIP() << "a CUDA device is visible: lockstep_prop_cuda_tests cover it";
  lp::Config c;
  c.grid.points = 256;
  const lp::Config* p = &c;
  try {
    lp::make_gnlse_engine(std::span<const lp::Config* const>(&p, 1), lp::tableau(c.stepping.scheme),
                          {lockstep::Device::cuda, lockstep::DType::f64, 0, {}});
    FAIL() << "a CUDA engine was made without CUDA";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST(EngineChoice, HostEngineRunsTheGnlse) {
  lp::Config c;
  c.grid.points = 512;
  c.fibre.length = 1e-3;
  c.output.n_save = 2;
  std::vector<lp::Member> a{lp::Member(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)))}, b = a;
  lp::run_gnlse(a);
  std::vector<const lp::Config*> configs{&c};
  auto engine = lp::make_gnlse_engine(configs, lp::tableau(c.stepping.scheme), {});
  // One engine through several runs of 3 steps (as the CLI's checkpointed chunks): the same
  // steps as one run (expect_same_run: equal to rounding, each engine planning its own FFTW
  // transforms).
  lp::Member* m = &b[0];
  lp::RunOptions chunk;
  chunk.max_steps = 3;
  int runs = 0;
  for (; !b[0].finished() && runs < 1000; ++runs) lp::run_lockstep(std::span<lp::Member* const>(&m, 1), *engine, chunk);
  EXPECT_GT(runs, 1);
  lp::testing::expect_same_run(b[0], a[0], "in chunks of 3 steps");
}

}  // namespace
