// The GPU tests' guard (lockstep_cuda_tests, CTest label "gpu"): without a usable CUDA device
// every test fails in SetUp with a message saying so, never passes vacuously.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <algorithm>

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

/// Device memory in use, in MiB, and how it was read.
struct DeviceMemoryReading {
  std::int64_t mib = 0;
  bool this_process = false;  ///< true: this process's own use; false: the whole device's
};

/// The device memory this process uses, as nvidia-smi reports it per process, so that other
/// processes sharing the GPU (a stress run's copies) do not move it; where nvidia-smi lists no
/// processes (some containers), the whole device's use (cudaMemGetInfo), which they do move.
inline DeviceMemoryReading device_memory_in_use() {
  DeviceMemoryReading r;
  if (FILE* p =
          popen("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null", "r")) {
    char line[256];
    const long me = static_cast<long>(getpid());
    while (std::fgets(line, sizeof line, p)) {
      long pid = 0, mib = 0;
      if (std::sscanf(line, "%ld, %ld", &pid, &mib) == 2 && pid == me) {
        r.mib = mib;
        r.this_process = true;
      }
    }
    pclose(p);
  }
  if (r.this_process) return r;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
    r.mib = static_cast<std::int64_t>((total_bytes - free_bytes) / 1048576);
  return r;
}

/// Holds device memory until destroyed: all that is free but `leave_mib` MiB, in 64 MiB pieces
/// (another process holding the GPU's memory, as this process sees it).
class DeviceMemoryHog {
 public:
  explicit DeviceMemoryHog(std::int64_t leave_mib) {
    constexpr std::size_t kPiece = std::size_t{64} << 20;
    for (;;) {
      std::size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) break;
      const std::size_t leave = static_cast<std::size_t>(leave_mib) << 20;
      if (free_bytes <= leave) break;
      const std::size_t take = std::min(kPiece, free_bytes - leave);
      void* p = nullptr;
      if (cudaMalloc(&p, take) != cudaSuccess) {
        cudaGetLastError();
        break;
      }
      pieces_.push_back(p);
      if (take < kPiece) break;
    }
  }
  DeviceMemoryHog(const DeviceMemoryHog&) = delete;
  DeviceMemoryHog& operator=(const DeviceMemoryHog&) = delete;
  ~DeviceMemoryHog() {
    for (void* p : pieces_) cudaFree(p);
  }

 private:
  std::vector<void*> pieces_;
};

}  // namespace lockstep::test
