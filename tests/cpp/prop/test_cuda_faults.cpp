// The CUDA engine under faults (label gpu): device memory held by someone else, and failed or
// interrupted calls that must leave nothing behind.
//  - CudaMemoryExhausted.*: the engine refuses a batch that does not fit with a
//    DeviceMemoryExhausted that names what it needs and what is free, and fails cleanly (never a
//    crash) where the memory runs out in its allocations; afterwards engines run as before.
//    These take the device's memory on purpose, so a stress run of concurrent copies leaves
//    them out (scripts/test_gpu.sh): the copies beside them would run out too.
//  - CudaLeaks.*: 1000 failed or interrupted calls leave the device memory this process uses
//    where it was.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../gpu_test_util.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"

namespace lp = lockstep::prop;
using Complex = std::complex<double>;
using lockstep::DType;

namespace {

struct Batch {
  std::vector<lp::Config> configs;
  std::vector<const lp::Config*> pointers;
  std::vector<std::vector<Complex>> spectra;
  Batch(int members, std::int64_t points) {
    for (int i = 0; i < members; ++i) {
      lp::Config c;
      c.grid.points = points;
      c.grid.time_window = 2e-15 * static_cast<double>(points);  // 2 fs samples
      c.fibre.length = 0.02;
      c.pulse.shot_noise = true;
      c.pulse.noise_seed = 1 + static_cast<std::uint64_t>(i);
      configs.push_back(c);
    }
    for (const auto& c : configs) {
      pointers.push_back(&c);
      spectra.push_back(lp::initial_spectrum(c.pulse, lp::Grid(c.grid)));
    }
  }
  void load(lp::Engine& e) const {
    for (std::size_t i = 0; i < configs.size(); ++i)
      e.load(static_cast<std::int64_t>(i), spectra[i].data(), {configs[i].stepping.norm, 1e-6, 0});
  }
};

const lp::Tableau& dp54() { return lp::tableau(lp::Scheme::dp54ip); }

// One trial and a read on a fresh engine: the solutions come back finite and non-zero.
void expect_engine_runs(const Batch& b, const lp::CudaOptions& options) {
  auto e = lp::make_cuda_engine(b.pointers, dp54(), DType::f64, options);
  b.load(*e);
  e->trial(1e-4, lp::Evaluation::batched);
  e->accept();
  std::vector<std::vector<Complex>> rows(b.configs.size(), std::vector<Complex>(static_cast<std::size_t>(e->points())));
  std::vector<Complex*> pointers;
  for (auto& r : rows) pointers.push_back(r.data());
  e->read_solutions(pointers);
  e->finish_reads();
  for (const auto& r : rows) {
    double sum = 0;
    for (const Complex& v : r) sum += std::norm(v);
    EXPECT_TRUE(std::isfinite(sum) && sum > 0);
  }
}

using CudaMemoryExhausted = lockstep::test::WithGpu<::testing::Test>;
using CudaLeaks = lockstep::test::WithGpu<::testing::Test>;

TEST_F(CudaMemoryExhausted, EngineRefusesABatchThatDoesNotFitAndNamesTheNeed) {
  const Batch b(128, 8192);  // about 500 MiB on either path
  {
    const lockstep::test::DeviceMemoryHog hog(256);
    try {
      lp::make_cuda_engine(b.pointers, dp54());
      FAIL() << "a batch of 128 members was made with 256 MiB free";
    } catch (const lockstep::DeviceMemoryExhausted& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("128 members of 8192 points need about"), std::string::npos) << what;
      EXPECT_NE(what.find("MiB are free"), std::string::npos) << what;
    }
  }
  expect_engine_runs(b, {});
}

// With next to nothing free, the estimate may let a small batch through and an allocation
// (cudaMalloc, cudaMallocHost's device side, cuFFT's plan, a stream) then fail: a
// DeviceMemoryExhausted or another std::runtime_error, never a crash; engines run afterwards.
TEST_F(CudaMemoryExhausted, AllocationsThatFailLeaveTheProcessUsable) {
  const Batch b(4, 2048);
  for (const bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused" : "cuFFT path");
    int refused = 0;
    for (const std::int64_t leave_mib : {0, 1, 2, 4, 8}) {
      const lockstep::test::DeviceMemoryHog hog(leave_mib);
      try {
        expect_engine_runs(b, {true, fused});
      } catch (const lockstep::DeviceMemoryExhausted& e) {
        ++refused;
        std::printf("%lld MiB left: %s\n", static_cast<long long>(leave_mib), e.what());
      } catch (const std::runtime_error& e) {
        ++refused;
        std::printf("%lld MiB left (not typed as exhausted memory): %s\n", static_cast<long long>(leave_mib), e.what());
      }
    }
    EXPECT_GT(refused, 0) << "no call ran out of memory: the hog did not take it";
    expect_engine_runs(b, {true, fused});
  }
}

// 1000 failed or interrupted calls: a trial left in flight when the engine goes (an error
// between start_trial and finish_trial), reads left in flight, a step length refused, a read
// refused for its row count, and a construction refused for its options; on both paths.
TEST_F(CudaLeaks, FailedAndInterruptedCallsLeaveNoDeviceMemory) {
  const Batch b(5, 2048);
  const auto round = [&](int kind, bool fused) {
    const lp::CudaOptions options{true, fused};
    switch (kind) {
      case 0: {  // destroyed with a trial in flight
        auto e = lp::make_cuda_engine(b.pointers, dp54(), DType::f64, options);
        b.load(*e);
        e->start_trial(1e-4, lp::Evaluation::batched);
        break;
      }
      case 1: {  // destroyed with reads in flight (the rows outlive the engine, as they must)
        std::vector<Complex> rows(static_cast<std::size_t>(5 * 2048));
        auto e = lp::make_cuda_engine(b.pointers, dp54(), DType::f64, options);
        b.load(*e);
        e->trial(1e-4, lp::Evaluation::batched);
        e->accept();
        std::vector<Complex*> pointers;
        for (int i = 0; i < 5; ++i) pointers.push_back(rows.data() + i * e->points());
        e->read_solutions(pointers);
        e->read_dense_output(0.5, pointers);
        break;  // the destructor waits for the rows
      }
      case 2: {  // a refused step length, then a refused read
        auto e = lp::make_cuda_engine(b.pointers, dp54(), DType::f64, options);
        b.load(*e);
        EXPECT_THROW(e->trial(-1, lp::Evaluation::batched), std::invalid_argument);
        std::vector<Complex*> too_few(2, nullptr);
        EXPECT_THROW(e->read_solutions(too_few), std::invalid_argument);
        break;
      }
      default:  // a construction refused
        EXPECT_THROW(lp::make_cuda_engine(b.pointers, dp54(), DType::f64, {true, fused, 0}), std::invalid_argument);
    }
  };
  // Warm-up: the first use of each path loads its kernels and cuFFT's, memory that stays.
  for (const bool fused : {true, false})
    for (int kind = 0; kind < 4; ++kind) round(kind, fused);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const lockstep::test::DeviceMemoryReading before = lockstep::test::device_memory_in_use();
  for (int i = 0; i < 1000; ++i) round(i % 4, (i / 4) % 2 == 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const lockstep::test::DeviceMemoryReading after = lockstep::test::device_memory_in_use();
  std::printf("device memory in use (%s): %lld MiB before, %lld MiB after 1000 failed or interrupted calls\n",
              before.this_process ? "this process" : "whole device", static_cast<long long>(before.mib),
              static_cast<long long>(after.mib));
  // A leak of a stage row per call (160 KiB here) would add 156 MiB.
  EXPECT_LE(after.mib - before.mib, 4);
}

}  // namespace
