// The batched cuFFT plans of the CUDA engine (engine.cpp), also made by its benchmark
// (bench/prop_cuda.cpp) so that its FFT floor times exactly these plans.
#pragma once

#include <cufft.h>

#include <cstdint>

#include "lockstep/core/error.hpp"

namespace lockstep::prop::cuda {

/// A batched one-dimensional cuFFT plan of `batch` rows of n points, bound to `stream`: complex
/// rows of n values, real rows of n, half spectra of n/2 + 1.
class FftPlan {
 public:
  FftPlan(cufftType type, std::int64_t n, std::int64_t batch, cudaStream_t stream) {
    if (cufftCreate(&plan_) != CUFFT_SUCCESS) runtime_failure(kWhere, "cufftCreate failed");
    long long size = n;
    const long long in_dist = type == CUFFT_Z2D || type == CUFFT_C2R ? n / 2 + 1 : n;
    const long long out_dist = type == CUFFT_D2Z || type == CUFFT_R2C ? n / 2 + 1 : n;
    std::size_t work = 0;
    const cufftResult r =
        cufftMakePlanMany64(plan_, 1, &size, nullptr, 1, in_dist, nullptr, 1, out_dist, type, batch, &work);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(plan_);
      runtime_failure(kWhere, "cufftMakePlanMany64 (", n, " points, ", batch, " rows): cuFFT error ", static_cast<int>(r));
    }
    cufftSetStream(plan_, stream);
  }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  ~FftPlan() { cufftDestroy(plan_); }
  cufftHandle get() const { return plan_; }

 private:
  static constexpr const char* kWhere = "prop.cuda_fft";
  cufftHandle plan_ = 0;
};

}  // namespace lockstep::prop::cuda
