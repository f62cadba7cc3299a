// The CUDA engine's tables (cuda_engine.hpp): the batch's physics and error controls on the
// device, as the kernels of launch.hpp read them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "launch.hpp"
#include "lockstep/prop/controller.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "src/core/cuda/runtime.hpp"

namespace lockstep::prop::cuda {

/// The physics of a batch on the device. Members whose arrays (L(ω), γs(ω), H_R, windows) are
/// equal share one group, so that each array is stored once per group (a shot-noise ensemble
/// is one group); per member, its group, the Kerr and Raman coefficients of the evaluation of N
/// (with the transforms' 1/n scaling folded in) and whether its windows apply.
template <class R> struct DevicePhysics {
  /// Queues the zero fills and uploads on `stream` (each upload waits for it).
  DevicePhysics(const BatchPhysics& batch, cudaStream_t stream);

  std::int64_t members = 0, points = 0, groups = 0;
  bool raman = false, frequency_windows = false, time_windows = false;
  // Per member
  ::lockstep::cuda::DeviceBuffer<int> group;
  ::lockstep::cuda::DeviceBuffer<R> kerr, raman_coefficient;
  ::lockstep::cuda::DeviceBuffer<unsigned char> has_frequency_window, has_time_window;
  // Per group (points values each; the Raman response n/2 + 1)
  ::lockstep::cuda::DeviceBuffer<double2> linear;
  ::lockstep::cuda::DeviceBuffer<R> gamma_shock, frequency_window, time_window;
  ::lockstep::cuda::DeviceBuffer<C<R>> raman_response;
  // The grid's ω
  ::lockstep::cuda::DeviceBuffer<double> omega;
};

/// Each member's error control (controller.hpp) on the device: set() on the host, upload()
/// before the trial that reads it.
class DeviceErrorControls {
 public:
  DeviceErrorControls(std::int64_t members, cudaStream_t stream);
  void set(std::int64_t member, const ErrorControl& control);
  /// Copies the controls in on `stream` where set() changed them; returns once the device holds them.
  void upload(cudaStream_t stream);
  const int* kind() const { return kind_.get(); }
  const double* rtol() const { return rtol_.get(); }
  const double* atol() const { return atol_.get(); }

 private:
  std::vector<ErrorControl> controls_;
  bool changed_ = true;
  ::lockstep::cuda::DeviceBuffer<int> kind_;
  ::lockstep::cuda::DeviceBuffer<double> rtol_, atol_;
};

}  // namespace lockstep::prop::cuda
