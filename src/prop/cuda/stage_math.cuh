// Device functions shared by the CUDA engine's kernels (kernels.cu) and its fused evaluation
// of N (fused_evaluation.cu): complex arithmetic, a stage input formed at one point, and the
// store of an evaluation's results.
#pragma once

#include <cstdint>

#include "launch.hpp"

namespace lockstep::prop::cuda {

template <class R> __device__ __forceinline__ C<R> make(R x, R y) { return {x, y}; }
template <class R> __device__ __forceinline__ C<R> mul(C<R> a, C<R> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
template <class R> __device__ __forceinline__ R norm2(C<R> a) { return a.x * a.x + a.y * a.y; }

/// h of a combination (combine_at's `h`), read once per thread.
template <class R>
__device__ __forceinline__ R step_of(const Combination<R>& c) {
  return c.step ? static_cast<R>(*c.step) : R(1);
}

template <class R>
__device__ __forceinline__ C<R> combine_at(const Combination<R>& c, R h, std::int64_t i, std::int64_t k, int group) {
  C<R> acc = make<R>(0, 0);
  // The term loops unroll over kMaxTerms with the counts as predicates (no loop whose trip
  // count is known only at run time).
  if (c.frame_y0 || c.frames > 0) {
#pragma unroll
    for (int t = 0; t < Combination<R>::kMaxTerms; ++t) {
      if (t >= c.frames) break;
      const C<R> v = c.frame[t][i];
      acc.x += c.frame_weight[t] * v.x;
      acc.y += c.frame_weight[t] * v.y;
    }
    acc.x *= h;
    acc.y *= h;
    if (c.frame_y0) {
      acc.x += c.frame_y0[i].x;
      acc.y += c.frame_y0[i].y;
    }
    if (c.exponential) acc = mul<R>(acc, c.exponential[group * c.group_stride + k]);
  }
  C<R> direct = make<R>(0, 0);
#pragma unroll
  for (int t = 0; t < Combination<R>::kMaxTerms; ++t) {
    if (t >= c.directs) break;
    const C<R> v = c.direct[t][i];
    direct.x += c.direct_weight[t] * v.x;
    direct.y += c.direct_weight[t] * v.y;
  }
  acc.x += h * direct.x;
  acc.y += h * direct.y;
  if (c.direct_y0) {
    acc.x += c.direct_y0[i].x;
    acc.y += c.direct_y0[i].y;
  }
  return acc;
}

/// Writes N = v at point k of member m (row index i) into the rows `out` asks for.
template <class R>
__device__ __forceinline__ void store_stage(const StageOutput<R>& out, C<R> v, std::int64_t i, std::int64_t k,
                                            int group) {
  if (out.n) out.n[i] = v;
  if (out.k) out.k[i] = mul<R>(v, out.k_exponential[group * out.group_stride + k]);
}

}  // namespace lockstep::prop::cuda
