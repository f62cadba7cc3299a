// Device functions shared by the CUDA engine's kernels (kernels.cu) and its fused kernels
// (fused_evaluation.cu): complex arithmetic, a stage input formed at one point, the nonlinear
// factors and the store of an evaluation's results, block reductions and the measures' sums.
#pragma once

#include <cstdint>

#include "launch.hpp"
#include "src/prop/pointwise.hpp"

namespace lockstep::prop::cuda {

template <class R> __device__ __forceinline__ C<R> make(R x, R y) { return {x, y}; }
template <class R> __device__ __forceinline__ C<R> mul(C<R> a, C<R> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
template <class R> __device__ __forceinline__ R norm2(C<R> a) { return pointwise::intensity(a.x, a.y); }
/// |v|² in double precision, for sums over a row (v: any complex with members x and y).
template <class V> __device__ __forceinline__ double power(const V& v) {
  return static_cast<double>(v.x) * v.x + static_cast<double>(v.y) * v.y;
}

// Stage rows are read once and written once in an evaluation, which for a batch streams several
// times L2's size through it: loads and stores take the streaming (evict-first) hint, so that
// they do not push out of L2 the rows the fused evaluation's prefetch brought in for the members
// that come next (docs/PERFORMANCE.md: 5-8% of the trial at 1024 members).
template <class V> __device__ __forceinline__ V load_row(const V* row, std::int64_t i) { return __ldcs(row + i); }
template <class V> __device__ __forceinline__ void store_row(V* row, std::int64_t i, V v) { __stcs(row + i, v); }

/// h of a combination (combine_at's `h`), read once per thread.
template <class R> __device__ __forceinline__ R step_of(const Combination<R>& c) {
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
      const C<R> v = load_row(c.frame[t], i);
      acc.x += c.frame_weight[t] * v.x;
      acc.y += c.frame_weight[t] * v.y;
    }
    acc.x *= h;
    acc.y *= h;
    if (c.frame_y0) {
      const C<R> y = load_row(c.frame_y0, i);
      acc.x += y.x;
      acc.y += y.y;
    }
    if (c.exponential) acc = mul<R>(acc, c.exponential[group * c.group_stride + k]);
  }
  C<R> direct = make<R>(0, 0);
#pragma unroll
  for (int t = 0; t < Combination<R>::kMaxTerms; ++t) {
    if (t >= c.directs) break;
    const C<R> v = load_row(c.direct[t], i);
    direct.x += c.direct_weight[t] * v.x;
    direct.y += c.direct_weight[t] * v.y;
  }
  acc.x += h * direct.x;
  acc.y += h * direct.y;
  if (c.direct_y0) {
    const C<R> y = load_row(c.direct_y0, i);
    acc.x += y.x;
    acc.y += y.y;
  }
  return acc;
}

/// N = i·s·a at one point, s = γ s(ω) there (pointwise::times_i).
template <class R> __device__ __forceinline__ C<R> times_i(C<R> a, R s) {
  C<R> v;
  pointwise::times_i(a.x, a.y, s, v.x, v.y);
  return v;
}

/// Writes N = v at point k of member m (row index i) into the rows `out` asks for.
template <class R>
__device__ __forceinline__ void store_stage(const StageOutput<R>& out, C<R> v, std::int64_t i, std::int64_t k,
                                            int group) {
  if (out.n) store_row(out.n, i, v);
  if (out.k) store_row(out.k, i, mul<R>(v, out.k_exponential[group * out.group_stride + k]));
  if (out.candidate) {
    const R h = step_of(out.solution), w = h * out.solution_weight;
    const C<R> c = combine_at<R>(out.solution, h, i, k, group);
    store_row(out.candidate, i, make<R>(c.x + w * v.x, c.y + w * v.y));
  }
}

/// Block-wide reductions of Count doubles per thread over a block of Threads threads (a
/// multiple of 32), all at once (two barriers): v[q] summed, or its maximum where bit q of
/// `maxima` is set (of values ≥ 0); the results in thread 0's v. Every thread calls it;
/// `shared` holds Count·Threads/32 doubles and may be in use before the call (the first
/// barrier protects it).
template <int Threads, int Count>
__device__ inline void block_reduce(double (&v)[Count], unsigned maxima, double* shared) {
  static_assert(Threads % 32 == 0 && Threads <= 1024);
  constexpr int warps = Threads / 32;
  const auto combine = [&v, maxima](int offset) {
#pragma unroll
    for (int q = 0; q < Count; ++q) {
      const double o = __shfl_down_sync(0xffffffffu, v[q], offset);
      v[q] = (maxima >> q & 1u) ? fmax(v[q], o) : v[q] + o;
    }
  };
  for (int offset = 16; offset > 0; offset /= 2) combine(offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
#pragma unroll
    for (int q = 0; q < Count; ++q) shared[q * warps + warp] = v[q];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int q = 0; q < Count; ++q) v[q] = lane < warps ? shared[q * warps + lane] : 0.0;
  for (int offset = 16; offset > 0; offset /= 2) combine(offset);
}

/// One member's sums behind controller.hpp's error norms, accumulated point by point in each
/// thread: |y1|² of the candidate y1 (its finiteness), and with an estimate |y0|² and |err|²
/// (the weak norm) and the point's scaled error |err| / (atol + rtol·max(|y0|, |y1|)) (max and
/// rms).
struct NormSums {
  double candidate = 0, error = 0, start = 0, largest = 0, scaled = 0;

  __device__ void add_ends(double y0, double y1) {
    start += y0;
    candidate += y1;
  }
  __device__ void add_scaled(double err, double y0, double y1, double rtol, double atol) {
    const double r = pointwise::scaled_error(err, y0, y1, rtol, atol);
    largest = fmax(largest, r);  // fmax drops a NaN: the sum below carries it
    scaled += r * r;
  }

  /// Reduces the sums over the block and writes out[0] = the norm of `kind` (ErrorNorm as int;
  /// NaN without an estimate, and for max and rms when the sum is not finite), out[1] = 1 if
  /// the candidate is finite, else 0 (thread 0), for rows of n points. `shared` holds
  /// 5·Threads/32 doubles and may be in use before the call (block_reduce).
  template <int Threads>
  __device__ void store(double* shared, bool estimated, int kind, double rtol, double atol, std::int64_t n,
                        double* out) {
    double v[5] = {candidate, error, start, largest, scaled};
    block_reduce<Threads>(v, 1u << 3, shared);
    if (threadIdx.x != 0) return;
    double norm = nan("");
    if (estimated && kind == 0) norm = pointwise::weak_norm(v[1], v[2], v[0], rtol, atol);
    else if (estimated && isfinite(v[4])) norm = kind == 1 ? v[3] : sqrt(v[4] / static_cast<double>(n));
    out[0] = norm;
    out[1] = isfinite(v[0]) ? 1.0 : 0.0;
  }
};

/// One member's sums behind measures.hpp's measures, accumulated point by point in each
/// thread: the spectral ones from |Ã_k|², the peak from the time samples |a_j|² (a = n·A).
struct MeasureSums {
  double total = 0, photons = 0, weighted = 0, peak = 0;

  __device__ void add_spectral(double power, double omega, double omega0) {
    total += power;
    photons += pointwise::photons_at(power, omega0, omega);
    weighted += power * omega;
  }
  __device__ void add_temporal(double power) { peak = fmax(peak, power); }

  /// Reduces the sums over the block and writes out[0..3] = energy, photon number, peak
  /// power, spectral centroid (thread 0), for rows of n points. `shared` holds 4·Threads/32
  /// doubles and may be in use before the call (block_reduce).
  template <int Threads>
  __device__ void store(double* shared, double* out, std::int64_t n, double omega0, double dt, double hbar) {
    double v[4] = {total, photons, weighted, peak};
    block_reduce<Threads>(v, 1u << 3, shared);  // the peak is a maximum
    if (threadIdx.x == 0) {
      const double nn = static_cast<double>(n);
      out[0] = pointwise::energy_from(v[0], nn, dt);
      out[1] = pointwise::photons_from(v[1], nn, dt, hbar);
      out[2] = v[3] / (nn * nn);  // a = n·A
      out[3] = pointwise::centroid_from(v[0], v[2], omega0);
    }
  }
};

}  // namespace lockstep::prop::cuda
