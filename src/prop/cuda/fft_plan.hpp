// The batched cuFFT plans of the CUDA engine (engine.cpp), also made by its benchmark
// (bench/prop_cuda.cpp) so that its FFT floor times exactly these plans, and the transforms of
// one precision on them.
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
      if (r == CUFFT_ALLOC_FAILED)
        device_memory_exhausted(kWhere, "cufftMakePlanMany64 (", n, " points, ", batch, " rows): out of device memory");
      runtime_failure(kWhere, "cufftMakePlanMany64 (", n, " points, ", batch, " rows): cuFFT error ",
                      static_cast<int>(r));
    }
    if (cufftSetStream(plan_, stream) != CUFFT_SUCCESS) {
      cufftDestroy(plan_);
      runtime_failure(kWhere, "cufftSetStream failed");
    }
  }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  ~FftPlan() { cufftDestroy(plan_); }
  cufftHandle get() const { return plan_; }
  /// Throws std::runtime_error naming `what` unless r is CUFFT_SUCCESS.
  static void check(cufftResult r, const char* what) {
    if (r != CUFFT_SUCCESS) runtime_failure(kWhere, what, ": cuFFT error ", static_cast<int>(r));
  }

 private:
  static constexpr const char* kWhere = "prop.cuda_fft";
  cufftHandle plan_ = 0;
};

/// The transforms of one precision, throwing on a cuFFT error. FFTW_FORWARD (e^{−i}) is
/// CUFFT_FORWARD, FFTW_BACKWARD CUFFT_INVERSE; both unnormalised, as the host engine's.
template <class R> struct Fft;
template <> struct Fft<double> {
  static constexpr cufftType c2c = CUFFT_Z2Z, r2c = CUFFT_D2Z, c2r = CUFFT_Z2D;
  static void complex(cufftHandle p, double2* in, double2* out, int dir) {
    FftPlan::check(cufftExecZ2Z(p, in, out, dir), "cufftExecZ2Z");
  }
  static void forward_real(cufftHandle p, double* in, double2* out) {
    FftPlan::check(cufftExecD2Z(p, in, out), "cufftExecD2Z");
  }
  static void inverse_real(cufftHandle p, double2* in, double* out) {
    FftPlan::check(cufftExecZ2D(p, in, out), "cufftExecZ2D");
  }
};
template <> struct Fft<float> {
  static constexpr cufftType c2c = CUFFT_C2C, r2c = CUFFT_R2C, c2r = CUFFT_C2R;
  static void complex(cufftHandle p, float2* in, float2* out, int dir) {
    FftPlan::check(cufftExecC2C(p, in, out, dir), "cufftExecC2C");
  }
  static void forward_real(cufftHandle p, float* in, float2* out) {
    FftPlan::check(cufftExecR2C(p, in, out), "cufftExecR2C");
  }
  static void inverse_real(cufftHandle p, float2* in, float* out) {
    FftPlan::check(cufftExecC2R(p, in, out), "cufftExecC2R");
  }
};

}  // namespace lockstep::prop::cuda
