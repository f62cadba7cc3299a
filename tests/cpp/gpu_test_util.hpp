// The GPU tests' guard (lockstep_cuda_tests, CTest label "gpu"): without a usable CUDA device
// every test fails in SetUp with a message saying so, never passes vacuously.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace lockstep::test {

/// Fails the running test (fatally, when called from SetUp) when no CUDA device is usable.
inline void require_gpu() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  ASSERT_EQ(e, cudaSuccess) << "no usable CUDA device: cudaGetDeviceCount: " << cudaGetErrorName(e) << " ("
                            << cudaGetErrorString(e) << "). These tests need an NVIDIA GPU; scripts/test.sh "
                            << "leaves the CTest label 'gpu' out on machines without one.";
  ASSERT_GT(n, 0) << "no CUDA device visible. These tests need an NVIDIA GPU.";
}

template <class Base> class WithGpu : public Base {
 protected:
  void SetUp() override { require_gpu(); }
};

}  // namespace lockstep::test
