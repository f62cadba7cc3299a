// The CUDA launchers, one per (ansatz, encoding, dtype, compiled reps): declared here for the
// dispatcher (dispatch.cpp), defined in kernels.cuh and instantiated per (ansatz, dtype) in
// the units CMake makes from instantiate.cu.in, so they compile in parallel.
#pragma once

#include <cstddef>

#include "lockstep/core/error.hpp"
#include "src/qkan/problem.hpp"

namespace lockstep::qkan::detail::cuda_lanes {

/// RC: reps compiled in (loops unrolled), or 0 for any reps.
template <Ansatz A, bool Enc, class T, int RC> void launch_forward(const Problem& p, void* out);
template <Ansatz A, bool Enc, class T, int RC>
void launch_backward(const Problem& p, const void* grad_out, const GradPtrs& g);

/// Throws std::runtime_error naming `what` when a CUDA call failed. (cudaError_t is an int
/// enum; taking int keeps this header free of the CUDA headers.)
void check(int cuda_error, const char* what);

}  // namespace lockstep::qkan::detail::cuda_lanes
