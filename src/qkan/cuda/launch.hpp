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
// The backward's rows kernel: a lane takes RL batch rows (RL one of kRowLanes, backward_split's
// choice), a warp one input; a block 32·RL rows.
constexpr int kRowLanes[] = {8, 16};
constexpr int row_block(int rows_per_lane) { return 32 * rows_per_lane; }

/// The most shared memory a kernel's block asks for.
constexpr int kMaxSharedBytes = 200 * 1024;
/// A backward's sums per edge: its NS gradient slots, then ∂W (and a layer's S and G).
constexpr int edge_sum_count(int NS, bool layer) { return NS + (layer ? 3 : 1); }
/// The backward's per-edge shared-memory record stride: the record of KC values, then
/// (contraction, layer) W, pb, Wb; odd, so lanes reading their own records fall on distinct banks.
constexpr int backward_record_stride(int KC) { return (KC + 3) | 1; }
/// The rows kernel's edges per tile: 256 / RL with 4-byte values (32 at RL = 8), half that with
/// 8-byte values, so that two blocks share a multiprocessor's shared memory at reps 3.
constexpr int rows_edge_tile(int RL, std::size_t value_bytes) { return (value_bytes == 4 ? 256 : 128) / RL; }
/// The rows kernel's shared memory, in values: the block's gy tile [ET][32·RL + 1], then each
/// warp's own records [ET][KB], lanes' partials [NP][33] and edge sums [ET][NP | 1], then a
/// layer's silu and slope per thread and row [2][RL][kThreads]. (KC: record values, NP:
/// edge_sum_count.)
constexpr std::size_t rows_gy_values(int RL, std::size_t value_bytes) {
  return std::size_t(rows_edge_tile(RL, value_bytes)) * (row_block(RL) + 1);
}
constexpr std::size_t rows_warp_values(int RL, std::size_t value_bytes, int KC, int NP) {
  const std::size_t ET = rows_edge_tile(RL, value_bytes);
  return ET * backward_record_stride(KC) + std::size_t(NP) * 33 + ET * std::size_t(NP | 1);
}
constexpr std::size_t rows_shared_values(int RL, std::size_t value_bytes, int KC, int NP, bool layer) {
  return rows_gy_values(RL, value_bytes) + kWarps * rows_warp_values(RL, value_bytes, KC, NP) +
         (layer ? std::size_t(2) * RL * kThreads : 0);
}

/// Multiprocessors of the current device (a cheap attribute query, allowed during capture).
int multiprocessors();

/// The backward's plan: `row_lanes` rows per lane for a contraction or layer large enough to
/// fill the device with the lanes-along-rows kernel (kernels.cuh, backward_rows_kernel), whose
/// shared memory fits kMaxSharedBytes; otherwise (row_lanes = 0) backward_kernel, which splits
/// the edge rows over grid.z: eps rows per slice, `slices` slices. More than one slice (a small
/// layer) adds ∂x into a zeroed table atomically.
struct BackwardSplit {
  std::int64_t eps, slices;
  int row_lanes;
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

/// lockstep::cuda::check (src/core/cuda/runtime.hpp) under "qkan.cuda": throws naming `what`
/// when a CUDA call failed (DeviceMemoryExhausted for an allocation). (cudaError_t is an int
/// enum; taking int keeps this header free of the CUDA headers.)
void check(int cuda_error, const char* what);

}  // namespace lockstep::qkan::detail::cuda_lanes
