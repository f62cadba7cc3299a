// The CUDA launchers, one per (ansatz, encoding, dtype, compiled reps): declared here for the
// dispatcher (dispatch.cpp), defined in kernels.cuh and instantiated per (ansatz, dtype) in
// the units CMake makes from instantiate.cu.in, so they compile in parallel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lockstep/core/error.hpp"
#include "src/qkan/problem.hpp"

namespace lockstep::qkan::detail::cuda_lanes {

// The kernels' thread roles (kernels.cuh): 8 warps per block, each on TB batch rows; the
// backward's lanes take one input each of a chunk of kChunk.
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int TB = 8;            // batch rows per warp
constexpr int BB = kWarps * TB;  // batch rows per block
constexpr int kChunk = 32;       // inputs per chunk (one per lane)
// The backward's rows kernel: a lane takes kRowLanes batch rows, a warp one input.
constexpr int kRowLanes = 8;
constexpr int kRowBlock = 32 * kRowLanes;  // batch rows per block

/// Multiprocessors of the current device (a cheap attribute query, allowed during capture).
int multiprocessors();

/// The backward's plan: `rows`, a contraction or layer large enough to fill the device with
/// the lanes-along-rows kernel (kernels.cuh, backward_rows_kernel); otherwise backward_kernel,
/// which splits the edge rows over grid.z: eps rows per slice, `slices` slices. More than one
/// slice (a small layer) adds ∂x into a zeroed table atomically.
struct BackwardSplit {
  std::int64_t eps, slices;
  bool rows;
};
BackwardSplit backward_split(const Problem& p);

/// A table of `bytes` bytes at ptr (4-byte aligned, a multiple of 4 bytes; null: none).
struct ZeroSpan {
  void* ptr;
  std::size_t bytes;
};
constexpr int kMaxZeroSpans = 8;
/// Zeroes up to kMaxZeroSpans tables on `stream` in one kernel launch (zero_tables.cu).
void zero_tables(const ZeroSpan* spans, int n, void* stream);

/// RC: reps compiled in (loops unrolled), or 0 for any reps.
template <Ansatz A, bool Enc, class T, int RC> void launch_forward(const Problem& p, void* out);
/// `split` is backward_split(p), computed once by the caller, which zeroes ∂x when it slices.
template <Ansatz A, bool Enc, class T, int RC>
void launch_backward(const Problem& p, const void* grad_out, const GradPtrs& g, const BackwardSplit& split);

/// Throws std::runtime_error naming `what` when a CUDA call failed. (cudaError_t is an int
/// enum; taking int keeps this header free of the CUDA headers.)
void check(int cuda_error, const char* what);

}  // namespace lockstep::qkan::detail::cuda_lanes
