// QKAN on CUDA under faults (label gpu, run alone): 1000 CUDA models made, used and dropped with
// failed calls among them (targets of the wrong size, a model of other shapes uploaded, a batch
// of the wrong width) leave the device memory this process uses where it was.
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu_test_util.hpp"
#include "lockstep/qkan/ansatz.hpp"
#include "lockstep/qkan/cuda_model.hpp"

namespace lockstep::test {
namespace {

qkan::Model small_model(const std::vector<std::int64_t>& widths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  qkan::Model m;
  m.options.ba_trainable = m.options.postact_weight_trainable = m.options.postact_bias_trainable = true;
  m.reps = 3;
  m.widths = widths;
  const std::int64_t RK = qkan::theta_rows(m.options.ansatz, m.reps) * qkan::theta_cols(m.options.ansatz);
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
    qkan::LayerParams L;
    L.in = widths[k], L.out = widths[k + 1];
    const std::int64_t E = L.in * L.out;
    for (auto [field, n] : {std::pair{&qkan::LayerParams::theta, E * RK},
                            {&qkan::LayerParams::preacts_weight, E * 3},
                            {&qkan::LayerParams::preacts_bias, E * 3},
                            {&qkan::LayerParams::base_weight, E},
                            {&qkan::LayerParams::postact_weights, E},
                            {&qkan::LayerParams::postact_bias, E},
                            {&qkan::LayerParams::mask, E}}) {
      (L.*field).resize(static_cast<std::size_t>(n));
      for (double& v : L.*field) v = field == &qkan::LayerParams::mask ? 1.0 : u(rng);
    }
    m.layers.push_back(std::move(L));
  }
  return m;
}

using CudaModelLeaks = WithGpu<::testing::Test>;

TEST_F(CudaModelLeaks, FailedCallsLeaveNoDeviceMemory) {
  const qkan::Model model = small_model({4, 16, 3}, 1), other = small_model({4, 8, 3}, 2);
  const std::int64_t B = 257;
  std::vector<double> x(B * 4, 0.25), y(B * 3, 0.5), wrong(B * 2, 0.5);
  const auto round = [&](int i) {
    qkan::CudaModel cuda(model);
    qkan::CudaBatch batch, narrow;
    cuda.load(batch, x, B, y, qkan::Loss::mse);
    EXPECT_TRUE(std::isfinite(cuda.loss_and_gradient(batch)));
    switch (i % 3) {
      case 0: EXPECT_THROW(cuda.load(batch, x, B, wrong, qkan::Loss::mse), std::invalid_argument); break;
      case 1: EXPECT_THROW(cuda.upload(other), std::invalid_argument); break;
      default: EXPECT_THROW(cuda.load(narrow, wrong, B), std::invalid_argument);
    }
    EXPECT_EQ(cuda.forward(batch).size(), static_cast<std::size_t>(B * 3));  // still usable
  };
  for (int i = 0; i < 3; ++i) round(i);  // the kernels' first use loads them: memory that stays
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const DeviceMemoryReading before = device_memory_in_use();
  for (int i = 0; i < 1000; ++i) round(i);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const DeviceMemoryReading after = device_memory_in_use();
  std::printf("device memory in use (%s): %lld MiB before, %lld MiB after 1000 models with failed calls\n",
              before.this_process ? "this process" : "whole device", static_cast<long long>(before.mib),
              static_cast<long long>(after.mib));
  EXPECT_LE(after.mib - before.mib, 4);
}

}  // namespace
}  // namespace lockstep::test
