// The fused CUDA kernels and their launchers: one circuit per thread at a time, the
// per-element math of circuit-inl.hpp and edge_math.hpp (shared with the CPU path), the
// contraction and every gradient reduction inside the block. Launches go on the caller's
// stream; nothing here synchronises or allocates, so calls can be captured in CUDA graphs.
// Included by the per-(ansatz, dtype) instantiation units (instantiate.cu.in); dispatch.cpp
// picks the instantiation.
//
// Four kernels, each with its thread roles described above it:
//   solve_forward_kernel     the plain (B, O', I) output: lanes along inputs, so stores coalesce;
//   contract_forward_kernel  the layer's y = Σ_i post·W: one batch row per thread, every thread
//                            of a warp on the same edge, y summed in registers (a small layer's
//                            input slices in shared memory; atomics only where a small layer of
//                            many inputs splits them over grid.z); with raw x and reps compiled
//                            in, the circuit's value in its Fourier form (ContractCircuit);
//   backward_kernel          both backwards: lanes along inputs, warps along rows; ∂x summed
//                            over edges in registers (over grid.z's edge slices of a small
//                            layer by atomics), per-edge batch sums over rows in registers,
//                            over warps in shared memory, one atomic per block;
//   backward_rows_kernel     the backward of a contraction or layer that fills the device: lanes
//                            along rows, a warp per input, per-edge batch sums over the warp's
//                            lanes in its own shared memory (backward_split picks it, and 8 or
//                            16 rows per lane).
// Edge records (θ trig, the prefix state n0; edge_math.hpp) are built in shared memory once per
// block and input chunk ("θ trig once per edge per block"); a thread computes the data trig
// (cos x, sin x) once per (b, i) it handles and shares it over the edges.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "lockstep/core/error.hpp"
#include "src/qkan/activation_math.hpp"
#include "src/qkan/cuda/launch.hpp"
#include "src/qkan/edge_math.hpp"

namespace lockstep::qkan::detail::cuda_lanes {
// The data-gate trig of circuit-inl.hpp, for one circuit per thread (D is Scalar<float|double>).
template <class D> __host__ __device__ __forceinline__ void sin_cos(D, float a, float& c, float& s) {
#ifdef __CUDA_ARCH__
  sincosf(a, &s, &c);
#else
  c = std::cos(a), s = std::sin(a);
#endif
}
template <class D> __host__ __device__ __forceinline__ void sin_cos(D, double a, double& c, double& s) {
#ifdef __CUDA_ARCH__
  sincos(a, &s, &c);
#else
  c = std::cos(a), s = std::sin(a);
#endif
}
/// 1/√v: float32 by the hardware reciprocal square root (a few ulp; the fast measure's only
/// square root on the value path), float64 correctly rounded.
template <class D> __host__ __device__ __forceinline__ float inv_sqrt(D, float v) {
#ifdef __CUDA_ARCH__
  return rsqrtf(v);
#else
  return 1.0f / std::sqrt(v);
#endif
}
template <class D> __host__ __device__ __forceinline__ double inv_sqrt(D, double v) { return 1.0 / std::sqrt(v); }
}  // namespace lockstep::qkan::detail::cuda_lanes

#include "src/qkan/circuit-inl.hpp"
#include "src/qkan/fourier_math.hpp"

namespace lockstep::qkan::detail::cuda_lanes {

/// The raw-x circuit's value in its Fourier form (fourier_math.hpp), reps = L compiled in: the
/// record is n's three coefficient rows, the per-(b, i) data its harmonics.
template <Ansatz A, int L> struct Fourier {
  static constexpr int kRecord = fourier_record_size(L);
  static constexpr int kChainRecord = edge_record_size(A, L);

  template <class D, class V> static __device__ Harmonics<L, V> prep(D d, V x, int /*reps*/) {
    V c, s;
    sin_cos(d, x, c, s);
    return harmonics<L>(c, s);
  }
  template <class D, class V>
  static __device__ V forward(D d, const V* rec, int /*reps*/, const Harmonics<L, V>& h, bool fast) {
    constexpr int W = fourier_width(L);
    const V z = fourier_sum(rec + 2 * W, h);
    return fast ? measure(d, fourier_sum(rec, h), fourier_sum(rec + W, h), z, true) : z;
  }
};

/// The circuit form of the contracted forward: the Fourier form where the ansatz has one and
/// reps is compiled in (its harmonics in registers), unless the block slices its inputs (small
/// layers, whose latency the longer record build would add to); else the rotation chain. The
/// one choice of form; the plain forward and the backwards run the chain.
template <Ansatz A, bool Enc, int RC, bool Sliced>
using ContractCircuit = std::conditional_t<(has_fourier_form(A, Enc) && RC > 0 && !Sliced),
                                           Fourier<A, (RC > 0 ? RC : 1)>, CircuitOf<A, Enc>>;
template <class Circ> constexpr bool is_fourier = false;
template <Ansatz A, int L> constexpr bool is_fourier<Fourier<A, L>> = true;
/// Record values per edge of the circuit form Circ, given the chain's (Args::KC).
template <class Circ> __host__ __device__ constexpr int record_size_of(int chain_record) {
  if constexpr (is_fourier<Circ>) return Circ::kRecord;
  else return chain_record;
}

/// Everything a kernel reads, by value (kernel parameters).
template <class T> struct Args {
  std::int64_t B, I, O, O_edges;
  int reps, R, K, KC, KCp, NS;
  bool encoding, fast, contract, layer;
  TableLayout theta_layout, pre_layout;
  const T *x, *theta, *w, *c, *W;
  const T *pb, *bw, *mask;  // layer only (mask may be null: ones)
};

/// Calls f with the measure: a compile-time constant (std::true_type / std::false_type) where
/// reps are compiled in (RC > 0), so that a thread's circuits form one basic block; the run-time
/// flag in the any-reps kernels, whose code would double and spill.
template <int RC, class F> __device__ __forceinline__ void with_measure(bool fast, F&& f) {
  if constexpr (RC > 0) {
    if (fast) f(std::true_type{});
    else f(std::false_type{});
  } else {
    f(fast);
  }
}

template <class T> Args<T> args_of(const Problem& p) {
  Args<T> a;
  a.B = p.B, a.I = p.I, a.O = p.O, a.O_edges = p.O_edges;
  a.reps = p.reps, a.R = p.R, a.K = p.K;
  a.KC = edge_record_size(p.ansatz, p.reps);
  a.KCp = a.KC | 1;  // an odd stride keeps lanes reading their records on distinct banks
  a.NS = edge_slot_count(p.ansatz, p.reps, p.encoding);
  a.encoding = p.encoding, a.fast = p.fast_measure, a.contract = p.kind == Kind::contract, a.layer = p.layer;
  a.theta_layout = p.theta_layout, a.pre_layout = p.pre_layout;
  a.x = static_cast<const T*>(p.x), a.theta = static_cast<const T*>(p.theta);
  a.w = static_cast<const T*>(p.w), a.c = static_cast<const T*>(p.c), a.W = static_cast<const T*>(p.W);
  a.pb = static_cast<const T*>(p.pb), a.bw = static_cast<const T*>(p.bw), a.mask = static_cast<const T*>(p.mask);
  return a;
}

/// The weights of edge (o, i) in y: the contraction weight W, and for a layer (Problem::layer)
/// W = pw·mask with the postact bias pb and the base weight Wb = bw·mask; a plain contraction
/// has pb = Wb = 0.
template <class T> struct EdgeWeights { T W, pb, Wb; };
template <class T>
__device__ __forceinline__ EdgeWeights<T> edge_weights(const Args<T>& a, std::int64_t o, std::int64_t i) {
  const std::int64_t k = o * a.I + i;
  if (!a.layer) return {a.W[k], T(0), T(0)};
  const T m = a.mask ? a.mask[k] : T(1);
  return {a.W[k] * m, a.pb[k], a.bw[k] * m};
}
/// A fused layer's base activation, SiLU, in T (and its slope).
template <class T> __device__ __forceinline__ T silu(T x) {
  T unused;
  return activate_value<Activation::silu, false>(x, unused);
}
template <class T> __device__ __forceinline__ T silu(T x, T& slope) {
  return activate_value<Activation::silu, true>(x, slope);
}

/// Writes the rotation-chain record (edge_math.hpp) of edge (o, i) at `reps` into dst.
template <Ansatz A, class T>
__device__ __forceinline__ void build_chain_record(const Args<T>& a, int reps, std::int64_t o, std::int64_t i, T* dst) {
  const T* th = a.theta + a.theta_layout.row(o, i) * a.R * a.K;
  const std::int64_t prow = a.encoding ? a.pre_layout.row(o, i) * a.reps : 0;
  build_record<T>(
      A, reps, a.encoding, [&](int row, int col) { return th[row * a.K + col]; }, [&](int l) { return a.w[prow + l]; },
      [&](int l) { return a.c[prow + l]; }, dst);
}

/// Builds the records of edges (o_edge0 + e, i0 + il), e < n_edges, il < n_i, into
/// rec + (e·n_i + il)·stride.
template <Ansatz A, class T>
__device__ void build_records(const Args<T>& a, std::int64_t o_edge0, int n_edges, std::int64_t i0, int n_i, int stride,
                              T* rec) {
  for (int k = threadIdx.x; k < n_edges * n_i; k += blockDim.x) {
    const int e = k / n_i, il = k % n_i;
    const std::int64_t i = i0 + il;
    if (i >= a.I) continue;
    build_chain_record<A>(a, a.reps, o_edge0 + e, i, rec + k * stride);
  }
}

// ---------------------------------------------------------------------------------------------
// Plain forward (B, O', I). Lane l of a warp handles input i0 + l of the current chunk of 32
// (so a warp's stores are contiguous row segments), the warp TB consecutive rows; the block
// covers BB rows and kEdgeRows edge rows o (grid.y), whose kEdgeRows·32 records it builds per
// chunk, one per thread.
constexpr int kEdgeRows = kThreads / kChunk;
template <Ansatz A, bool Enc, class T, int RC>
__global__ void __launch_bounds__(kThreads) solve_forward_kernel(Args<T> a, T* out) {
  using Circ = CircuitOf<A, Enc>;
  const Scalar<T> d;
  const int reps = RC > 0 ? RC : a.reps;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* rec = reinterpret_cast<T*>(smem_raw);  // [kEdgeRows][32][KCp]
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t b0 = blockIdx.x * std::int64_t(BB) + warp * TB;
  const std::int64_t o0 = blockIdx.y * std::int64_t(kEdgeRows);
  const int n_edges = int(std::min<std::int64_t>(kEdgeRows, a.O_edges - o0));
  for (std::int64_t i0 = 0; i0 < a.I; i0 += kChunk) {
    __syncthreads();  // the previous chunk's records are no longer read
    build_records<A>(a, o0, n_edges, i0, kChunk, a.KCp, rec);
    __syncthreads();
    const std::int64_t i = i0 + lane;
    if (i >= a.I) continue;
    Prep<T> pr[TB];
    LOCKSTEP_UNROLL
    for (int t = 0; t < TB; ++t) pr[t] = Circ::prep(d, b0 + t < a.B ? a.x[(b0 + t) * a.I + i] : T(0), reps);
    for (int e = 0; e < n_edges; ++e) {
      const T* r = rec + (e * kChunk + lane) * a.KCp;
      LOCKSTEP_UNROLL
      for (int t = 0; t < TB; ++t) {
        const std::int64_t b = b0 + t;
        const T v = Circ::forward(d, r, reps, pr[t], a.fast);
        if (b < a.B) out[(b * a.O_edges + o0 + e) * a.I + i] = v;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Contracted forward y[b, o] = Σ_i post[b, o, i]·W[o, i], and for a layer
// y[b, o] = Σ_i W·(post + pb) + Wb·silu(x[b, i]) (EdgeWeights). Thread roles: the block's
// threads form S input slices of RB = kThreads / S batch rows each (S = 1 for all but small
// layers); thread t owns row b = blockIdx.x·RB + t % RB and accumulates y[b, o] for the block's
// m <= EO outputs in registers over the inputs of its slice (every S-th input of each chunk of
// ic). With S = 1 there is no reduction across threads; otherwise the S partial sums meet in
// shared memory at the end, in a fixed order. All threads of a warp (RB >= 32) evaluate the
// same edge (o, i) at the same time, so its record, with W, pb and Wb in the slots after it, is
// a shared-memory broadcast read in 16-byte loads, and a thread's data trig (and silu(x)) is
// computed once per (b, i) for all m outputs.
// With O' = 1 (g == I) one circuit per (b, i) feeds every output. A small layer of more than
// 16 inputs splits them over grid.z instead of inside the block (`ips` inputs per z slice; the
// launcher says why); the z slices then add their partial sums into a zeroed y atomically.
constexpr int EO = 16;                                        ///< most outputs per block (y accumulators per thread)
template <class T> constexpr int kVec = 16 / int(sizeof(T));  ///< values per 16-byte load
/// Slots per edge in the contracted forward's shared memory: the record, W, pb, Wb, padded to
/// 16 bytes.
template <class T> constexpr int padded(int KC) { return (KC + 3 + kVec<T> - 1) / kVec<T> * kVec<T>; }

/// Copies N values (N a multiple of kVec<T>, 16-byte aligned) into registers.
template <int N, class T> __device__ __forceinline__ void load_record(const T* src, T (&dst)[N]) {
  using V = std::conditional_t<sizeof(T) == 4, float4, double2>;
  LOCKSTEP_UNROLL
  for (int k = 0; k < N / kVec<T>; ++k) *reinterpret_cast<V*>(dst + k * kVec<T>) = reinterpret_cast<const V*>(src)[k];
}

/// Sliced: S (a run-time argument, 1 otherwise) input slices in the block. Not sliced, the S = 1
/// kernel compiles as if the slices were not there (at large shapes the loop's registers count).
template <Ansatz A, bool Enc, class T, int RC, bool Sliced>
__global__ void __launch_bounds__(kThreads)
    contract_forward_kernel(Args<T> a, T* y, int n_out, int ic, int ips, int s_arg) {
  using Circ = ContractCircuit<A, Enc, RC, Sliced>;
  constexpr int KC = RC > 0 ? record_size_of<Circ>(edge_record_size(A, RC)) : 0;
  constexpr int KS = RC > 0 ? padded<T>(KC) : 0;
  const Scalar<T> d;
  const int reps = RC > 0 ? RC : a.reps;
  const int kc = RC > 0 ? KC : a.KC, ks = RC > 0 ? KS : padded<T>(kc);
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* rec = reinterpret_cast<T*>(smem_raw);  // [ic][EO][ks]: edge (o0 + e, i0 + il) at (il·EO + e)·ks, W, pb, Wb at +kc
  const int S = Sliced ? s_arg : 1, RB = kThreads / S;
  const int row = Sliced ? int(threadIdx.x) % RB : int(threadIdx.x), slice = Sliced ? int(threadIdx.x) / RB : 0;
  T* xs = rec + ic * EO * ks;  // [ic][RB + 1]
  const std::int64_t b = blockIdx.x * std::int64_t(RB) + row;
  const std::int64_t o0 = blockIdx.y * std::int64_t(n_out);
  const int m = int(std::min<std::int64_t>(n_out, a.O - o0));
  const bool shared_edge = a.O_edges == 1;
  T acc[EO];
  LOCKSTEP_UNROLL
  for (int e = 0; e < EO; ++e) acc[e] = T(0);

  const std::int64_t i_begin = blockIdx.z * std::int64_t(ips), i_end = std::min<std::int64_t>(a.I, i_begin + ips);
  for (std::int64_t i0 = i_begin; i0 < i_end; i0 += ic) {
    const int n_i = int(std::min<std::int64_t>(ic, i_end - i0));
    __syncthreads();  // the previous chunk is no longer read
    for (int k = threadIdx.x; k < n_i * m; k += kThreads) {
      const int il = k / m, e = k % m;
      const std::int64_t i = i0 + il, o = shared_edge ? 0 : o0 + e;
      T* r = rec + (il * EO + e) * ks;
      if (!shared_edge || e == 0) {
        if constexpr (is_fourier<Circ>) {
          T chain[Circ::kChainRecord];
          build_chain_record<A>(a, reps, o, i, chain);
          build_fourier_record<T, T, RC + 2>(A, RC, chain, r);
        } else {
          build_chain_record<A>(a, reps, o, i, r);
        }
      }
      const EdgeWeights<T> ew = edge_weights(a, o0 + e, i);
      r[kc] = ew.W, r[kc + 1] = ew.pb, r[kc + 2] = ew.Wb;
    }
    for (int k = threadIdx.x; k < RB * n_i; k += kThreads) {  // x tile, read row by row
      const int r = k / n_i, il = k % n_i;
      const std::int64_t bb = blockIdx.x * std::int64_t(RB) + r;
      xs[il * (RB + 1) + r] = bb < a.B ? a.x[bb * a.I + i0 + il] : T(0);
    }
    __syncthreads();
    for (int il = slice; il < n_i; il += S) {
      const T xv = xs[il * (RB + 1) + row];
      const auto pr = Circ::prep(d, xv, reps);
      const T* rl = rec + il * EO * ks;
      // The circuit of the record at src, its weights (W, pb, Wb) into wt.
      auto eval_m = [&](const T* src, T(&wt)[3], bool fast) {
        if constexpr (RC > 0) {
          T r[KS];
          load_record(src, r);
          wt[0] = r[KC], wt[1] = r[KC + 1], wt[2] = r[KC + 2];
          return Circ::forward(d, r, reps, pr, fast);
        } else {
          wt[0] = src[kc], wt[1] = src[kc + 1], wt[2] = src[kc + 2];
          // a.fast, not `fast`: passing the parameter through made this kernel spill.
          return Circ::forward(d, src, reps, pr, a.fast);
        }
      };
      // The loops, with or without the layer's terms; with reps compiled in, the measure too
      // (fast_c a constant: the EO circuits then form one basic block).
      auto accumulate = [&](auto layer, auto fast_c) {
        constexpr bool L = decltype(layer)::value;
        auto eval = [&](const T* src, T(&wt)[3]) { return eval_m(src, wt, bool(fast_c)); };
        T sx = T(0);
        if constexpr (L) sx = silu(xv);
        auto add = [&](T& acc_e, T v, const T(&wt)[3]) {
          if constexpr (L) acc_e = std::fma(wt[0], v + wt[1], std::fma(wt[2], sx, acc_e));
          else acc_e = std::fma(wt[0], v, acc_e);
        };
        if (shared_edge) {
          T w0[3];
          const T v = eval(rl, w0);
          LOCKSTEP_UNROLL
          for (int e = 0; e < EO; ++e)
            if (e < m) {
              const T* q = rl + e * ks + kc;
              const T wt[3] = {q[0], q[1], q[2]};
              add(acc[e], v, wt);
            }
        } else if (m == EO) {  // the common case, without per-output checks
          LOCKSTEP_UNROLL
          for (int e = 0; e < EO; ++e) {
            T wt[3];
            const T v = eval(rl + e * ks, wt);
            add(acc[e], v, wt);
          }
        } else {
          LOCKSTEP_UNROLL
          for (int e = 0; e < EO; ++e)
            if (e < m) {
              T wt[3];
              const T v = eval(rl + e * ks, wt);
              add(acc[e], v, wt);
            }
        }
      };
      auto with_layer = [&](auto layer) { with_measure<RC>(a.fast, [&](auto fast_c) { accumulate(layer, fast_c); }); };
      if (a.layer) with_layer(std::true_type{});
      else with_layer(std::false_type{});
    }
  }
  auto store = [&](std::int64_t bb, int e, T v) {
    if (gridDim.z > 1) atomicAdd(y + bb * a.O + o0 + e, v);
    else y[bb * a.O + o0 + e] = v;
  };
  if constexpr (!Sliced) {
    if (b >= a.B) return;
    LOCKSTEP_UNROLL
    for (int e = 0; e < EO; ++e)
      if (e < m) store(b, e, acc[e]);
  } else {
    // The slices' partial sums, [S][EO][RB + 1] over the records and x tile, summed in slice
    // order by threads that walk the outputs of a row together (contiguous stores).
    T* red = reinterpret_cast<T*>(smem_raw);
    __syncthreads();  // the last chunk is no longer read
    LOCKSTEP_UNROLL
    for (int e = 0; e < EO; ++e)
      if (e < m) red[(slice * EO + e) * (RB + 1) + row] = acc[e];
    __syncthreads();
    for (int k = threadIdx.x; k < RB * m; k += kThreads) {
      const int r = k / m, e = k % m;
      const std::int64_t bb = blockIdx.x * std::int64_t(RB) + r;
      if (bb >= a.B) continue;
      T v = T(0);
      for (int sl = 0; sl < S; ++sl) v += red[(sl * EO + e) * (RB + 1) + r];
      store(bb, e, v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Backward. Thread roles as in the plain forward: lane l handles input i = i0 + l of the
// block's chunk of 32 (grid.y), warp w the TB rows b0 = blockIdx.x·BB + w·TB.. of the block's
// BB; the block walks every edge row o, EOB at a time, so ∂x[b, i] (a sum over o) stays in
// registers and is stored once. The per-edge sums over the batch (the slots of edge_math.hpp
// plus ∂W[o, i]) are summed over a thread's TB rows in registers, written per warp to shared
// memory, summed over the warps by the folding threads, folded into θ / w / c terms and added
// to the tables with one atomic per value per block. (Shared-memory float atomics would be
// compare-and-swap loops on this hardware; the per-warp partials avoid them.) A small layer,
// whose row tiles × input chunks leave the multiprocessors idle, also splits its edge rows over
// grid.z (`eps` per slice); the slices then add their ∂x into a zeroed table atomically.
// A layer (Problem::layer) adds two per-edge batch sums, S = Σ_b gy·silu(x) and G = Σ_b gy,
// folded with ∂W into the gradients of the postact weights and bias and the base weight
// (add_weight_grads), and the base branch's Σ_o gy·Wb·silu'(x) into ∂x; each thread keeps
// silu and its slope of its own (b, i) in shared memory (no barrier: no other thread reads them).
template <class T> struct GradArgs {
  const T* gout;
  T *dx, *dtheta, *dw, *dc, *dW;
  T *dpb, *dbw;  // layer only; dW is then the postact weights' gradient
};

/// Adds edge (o, i)'s batch sums into the weight gradients: dW = Σ_b gy·post, and for a layer
/// S = Σ_b gy·silu(x) and G = Σ_b gy (y's terms W·(post + pb) + Wb·silu(x), W = pw·mask,
/// Wb = bw·mask).
template <class T>
__device__ __forceinline__ void add_weight_grads(const Args<T>& a, const GradArgs<T>& g, std::int64_t o, std::int64_t i,
                                                 T dW, T S, T G) {
  const std::int64_t k = o * a.I + i;
  if (!a.layer) {
    if (g.dW) atomicAdd(g.dW + k, dW);
    return;
  }
  const T m = a.mask ? a.mask[k] : T(1);
  if (g.dW) atomicAdd(g.dW + k, m * std::fma(a.pb[k], G, dW));
  if (g.dpb) atomicAdd(g.dpb + k, a.W[k] * m * G);
  if (g.dbw) atomicAdd(g.dbw + k, m * S);
}

/// Batch sums per edge in the backward kernels: the NS slots, then ∂W and a layer's S and G.
template <class T> __host__ __device__ int edge_sum_count(const Args<T>& a) { return edge_sum_count(a.NS, a.layer); }

/// Adds one edge's batch sums — its NS slots, then ∂W and a layer's S, G — into the gradient
/// tables: the slots folded into θ / w / c (edge_math.hpp), the rest by add_weight_grads where
/// `weights` (a shared circuit's ∂W is added per output instead). One atomic per value.
template <Ansatz A, class T>
__device__ void add_edge_grads(const Args<T>& a, const GradArgs<T>& g, int reps, std::int64_t o, std::int64_t i,
                               const T* sum, int NS, bool weights) {
  if (g.dtheta || g.dw || g.dc) {
    const std::int64_t trow = a.theta_layout.row(o, i) * a.R * a.K;
    const std::int64_t prow = a.encoding ? a.pre_layout.row(o, i) * a.reps : 0;
    fold_edge<T>(
        A, reps, a.encoding, sum, [&](int row, int col) { return a.theta[trow + row * a.K + col]; },
        g.dtheta != nullptr, [&](int row, int col, T v) { atomicAdd(g.dtheta + trow + row * a.K + col, v); },
        [&](int l, T v) {
          if (g.dw) atomicAdd(g.dw + prow + l, v);
        },
        [&](int l, T v) {
          if (g.dc) atomicAdd(g.dc + prow + l, v);
        });
  }
  if (weights && (g.dW || g.dpb || g.dbw))
    add_weight_grads(a, g, o, i, sum[NS], a.layer ? sum[NS + 1] : T(0), a.layer ? sum[NS + 2] : T(0));
}

/// Where a circuit's cotangent comes from; fixed per launch and a template parameter of the
/// backward kernel, so its inner loop carries no per-row branches on it:
///   plain     the plain solve's gout[b, o', i];
///   shared    a contraction with one circuit per (b, i) (O' = 1): Σ_o gy[b, o]·W[o, i];
///   contract  a contraction: gy[b, o]·W[o, i];
///   layer     a layer: gy[b, o]·W[o, i], plus its S, G sums and its base branch's ∂x.
enum class Feed { plain, shared, contract, layer };

template <Ansatz A, bool Enc, class T, int RC, Feed F>
__global__ void __launch_bounds__(kThreads, 2) backward_kernel(Args<T> a, GradArgs<T> g, int EOB, int eps) {
  using Circ = CircuitOf<A, Enc>;
  constexpr bool kWeighted = F == Feed::contract || F == Feed::layer;  // per-edge W from the record tile
  constexpr int kMaxNS = 3 + kFusedMaxReps * 4;                        // slots, any reps
  constexpr int NSC = RC > 0 ? Circ::slot_count(RC) : kMaxNS;          // slots, compiled (registers)
  const Scalar<T> d;
  const int reps = RC > 0 ? RC : a.reps;
  const int NS = a.NS, NP = edge_sum_count(a);
  const int KB = backward_record_stride(a.KC);
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* rec = reinterpret_cast<T*>(smem_raw);      // [EOB][32][KB]: record, W, pb, Wb
  T* part = rec + EOB * kChunk * KB;            // [kWarps][EOB][NP][32]: slots, dW (, S, G)
  T* gy_s = part + kWarps * EOB * kChunk * NP;  // [EOB][BB]: gy of the block's rows (contraction)
  T* act_s = gy_s + BB * EOB;                   // layer: [2][BB][32]: silu(x), silu'(x)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t bb0 = blockIdx.x * std::int64_t(BB), b0 = bb0 + warp * TB;
  const std::int64_t i0 = blockIdx.y * std::int64_t(kChunk), i = i0 + lane;
  const bool active = i < a.I;
  const bool want_weights = g.dW || g.dpb || g.dbw;
  const bool want_sums = g.dtheta || g.dw || g.dc || (want_weights && F != Feed::shared);
  // This thread's own silu(x), silu'(x) of row t (no barrier: no other thread reads them).
  auto act = [&](int t, int k) -> T& { return act_s[(k * BB + warp * TB + t) * kChunk + lane]; };

  Prep<T> pr[TB];
  T dx[TB];
  T gshared[TB];  // Feed::shared: Σ_o gy[b, o]·W[o, i]
  LOCKSTEP_UNROLL
  for (int t = 0; t < TB; ++t) {
    const std::int64_t b = b0 + t;
    const bool ok = active && b < a.B;
    const T xv = ok ? a.x[b * a.I + i] : T(0);
    pr[t] = Circ::prep(d, xv, reps);
    dx[t] = gshared[t] = T(0);
    T slope = T(0);
    if (a.layer) {
      act(t, 0) = silu(xv, slope);
      act(t, 1) = slope;
    }
    if (F == Feed::shared && ok) {
      T gb = T(0);  // layer: Σ_o gy[b, o]·Wb[o, i]
      for (std::int64_t o = 0; o < a.O; ++o) {
        const EdgeWeights<T> ew = edge_weights(a, o, i);
        gshared[t] = std::fma(g.gout[b * a.O + o], ew.W, gshared[t]);
        gb = std::fma(g.gout[b * a.O + o], ew.Wb, gb);
      }
      dx[t] = gb * slope;
    }
  }
  T post[F == Feed::shared ? TB : 1];  // Feed::shared: the one circuit's values, for ∂W

  const std::int64_t oe_begin = blockIdx.z * std::int64_t(eps),
                     oe_end = std::min<std::int64_t>(a.O_edges, oe_begin + eps);
  for (std::int64_t oe0 = oe_begin; oe0 < oe_end; oe0 += EOB) {
    const int n_edges = int(std::min<std::int64_t>(EOB, oe_end - oe0));
    __syncthreads();  // the previous tile's records and partials are no longer read
    build_records<A>(a, oe0, n_edges, i0, kChunk, KB, rec);
    if constexpr (kWeighted) {
      for (int k = threadIdx.x; k < n_edges * kChunk; k += kThreads) {
        const std::int64_t ii = i0 + k % kChunk;
        const EdgeWeights<T> ew = ii < a.I ? edge_weights(a, oe0 + k / kChunk, ii) : EdgeWeights<T>{T(0), T(0), T(0)};
        T* r = rec + k * KB + a.KC;
        r[0] = ew.W, r[1] = ew.pb, r[2] = ew.Wb;
      }
      for (int k = threadIdx.x; k < BB * n_edges; k += kThreads) {  // read along rows of gy
        const int row = k / n_edges, e = k % n_edges;
        const std::int64_t b = bb0 + row;
        gy_s[e * BB + row] = b < a.B ? g.gout[b * a.O + oe0 + e] : T(0);
      }
    }
    __syncthreads();
    for (int e = 0; e < n_edges; ++e) {
      const std::int64_t oe = oe0 + e;
      const T* r = rec + (e * kChunk + lane) * KB;
      const T* gy = gy_s + e * BB + warp * TB;
      T W = T(0), Wb = T(0);
      if constexpr (kWeighted) W = r[a.KC], Wb = r[a.KC + 2];
      T sl[NSC];
      LOCKSTEP_UNROLL
      for (int k = 0; k < NSC; ++k) sl[k] = T(0);
      T dWp = T(0), Sp = T(0), Gp = T(0);  // Σ_b gy[b, o]·post[b, o, i] (, ·silu(x[b, i]), Σ_b gy[b, o])
      // Rows past B (and lanes past I) run on x = 0 with a zero cotangent: nothing they add is
      // stored or changes a sum.
      LOCKSTEP_UNROLL
      for (int t = 0; t < TB; ++t) {
        T gin;  // the cotangent of this circuit
        if constexpr (F == Feed::plain) {
          const std::int64_t b = b0 + t;
          gin = active && b < a.B ? g.gout[(b * a.O_edges + oe) * a.I + i] : T(0);
        } else if constexpr (F == Feed::shared) {
          gin = gshared[t];
        } else {
          gin = gy[t] * W;
        }
        const T v = Circ::backward(d, r, reps, pr[t], a.fast, gin, sl, dx[t]);
        if constexpr (kWeighted) dWp = std::fma(gy[t], v, dWp);
        if constexpr (F == Feed::layer) {
          dx[t] = std::fma(gy[t] * Wb, act(t, 1), dx[t]);
          Sp = std::fma(gy[t], act(t, 0), Sp);
          Gp += gy[t];
        }
        if constexpr (F == Feed::shared) post[t] = v;
      }
      if (want_sums) {
        T* dst = part + (warp * EOB + e) * NP * kChunk + lane;
        LOCKSTEP_UNROLL  // constant indices keep sl in registers
            for (int k = 0; k < NSC; ++k) if (k < NS) dst[k * kChunk] = sl[k];
        dst[NS * kChunk] = dWp;
        if (a.layer) dst[(NS + 1) * kChunk] = Sp, dst[(NS + 2) * kChunk] = Gp;
      }
    }
    if (!want_sums) continue;
    __syncthreads();
    for (int k = threadIdx.x; k < n_edges * kChunk; k += kThreads) {
      const int e = k / kChunk, l = k % kChunk;
      const std::int64_t o = oe0 + e, ii = i0 + l;
      if (ii >= a.I) continue;
      T sum[kMaxNS + 3];  // folded once per edge and block: local memory is fine here
      for (int s = 0; s < NP; ++s) {
        T acc = T(0);
        for (int w = 0; w < kWarps; ++w) acc += part[((w * EOB + e) * NP + s) * kChunk + l];
        sum[s] = acc;
      }
      add_edge_grads<A>(a, g, reps, o, ii, sum, NS, F != Feed::shared);
    }
  }
  if constexpr (F == Feed::shared) {  // one circuit fed every output: ∂W[o, i] = Σ_b gy[b, o]·post[b, i]
    if (want_weights && active)
      for (std::int64_t o = 0; o < a.O; ++o) {
        T dW = T(0), S = T(0), G = T(0);
        LOCKSTEP_UNROLL
        for (int t = 0; t < TB; ++t) {
          if (b0 + t >= a.B) continue;
          const T gy = g.gout[(b0 + t) * a.O + o];
          dW = std::fma(gy, post[t], dW);
          if (a.layer) S = std::fma(gy, act(t, 0), S), G += gy;
        }
        add_weight_grads(a, g, o, i, dW, S, G);
      }
  }
  if (g.dx && active) LOCKSTEP_UNROLL
  for (int t = 0; t < TB; ++t) {
    if (b0 + t >= a.B) continue;
    if (gridDim.z > 1) atomicAdd(g.dx + (b0 + t) * a.I + i, dx[t]);
    else g.dx[(b0 + t) * a.I + i] = dx[t];
  }
}

// ---------------------------------------------------------------------------------------------
// Backward of a contraction or a layer at large shapes, lanes along batch rows. Warp w of a
// block takes input i = blockIdx.y·kWarps + w, its lane l the RL rows
// b = blockIdx.x·32·RL + t·32 + l (t < RL); the block walks every edge row o, ET at a time. So:
//   - ∂x[b, i] (a sum over o) stays in registers, as in backward_kernel;
//   - all lanes of a warp evaluate the same edge (o, i): its record is a shared-memory broadcast,
//     built by lane e for edge o0 + e of the tile, in the warp's own records (no block barrier);
//   - an edge's batch sums are its 32 lanes' partials, added in the warp's own shared memory
//     (NP stores, then each value's 32 partials added by one lane, or by two and a shuffle
//     where NP ≤ 16), once per edge and 32·RL rows —
//     not, as in backward_kernel, per edge, 64 rows and 8 warps behind two block barriers;
//   - after a tile, lane e folds edge o0 + e (every lane busy), one atomic per value per block.
// The block's rows share gy: a tile gy[b, o0 .. o0 + ET) read once per block along rows.
// backward_split routes a contraction or layer here when its row blocks × input warps fill the
// device, with RL = 16 where blocks of 512 rows still do, else 8 (kRowLanes); smaller layers
// keep backward_kernel and its grid.z split. More rows per lane spread an edge's record, sums
// and fold over more evaluations, but need a longer gy tile: fewer edges per tile
// (rows_edge_tile) keep two blocks on a multiprocessor. Shared-memory layout: launch.hpp,
// rows_shared_values.

template <Ansatz A, bool Enc, class T, int RC, Feed F, int RL>
__global__ void __launch_bounds__(kThreads, 2) backward_rows_kernel(Args<T> a, GradArgs<T> g) {
  static_assert(F == Feed::contract || F == Feed::layer, "the rows kernel serves contractions and layers");
  using Circ = CircuitOf<A, Enc>;
  constexpr int ET = rows_edge_tile(RL, sizeof(T)), kRows = row_block(RL);
  constexpr int kMaxNS = 3 + kFusedMaxReps * 4;
  constexpr int NSC = RC > 0 ? Circ::slot_count(RC) : kMaxNS;
  constexpr bool kLayer = F == Feed::layer;
  const Scalar<T> d;
  const int reps = RC > 0 ? RC : a.reps;
  const int NS = a.NS, NP = edge_sum_count(a), NPs = NP | 1;
  const int KB = backward_record_stride(a.KC);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* gy_s = reinterpret_cast<T*>(smem_raw);  // the layout of rows_shared_values
  const std::size_t warp_values = rows_warp_values(RL, sizeof(T), a.KC, NP);
  T* rec = gy_s + rows_gy_values(RL, sizeof(T)) + warp * warp_values;  // record, W, pb, Wb
  T* part = rec + ET * KB;                                             // the lanes' partials
  T* sums = part + NP * 33;                                            // the tile's edge sums
  T* act_s = gy_s + rows_gy_values(RL, sizeof(T)) + kWarps * warp_values;
  auto act = [&](int t, int k) -> T& { return act_s[(k * RL + t) * kThreads + threadIdx.x]; };

  const std::int64_t b0 = blockIdx.x * std::int64_t(kRows) + lane;
  const std::int64_t i = blockIdx.y * std::int64_t(kWarps) + warp;
  const bool active = i < a.I;
  const bool want_weights = g.dW || g.dpb || g.dbw;
  const bool want_sums = g.dtheta || g.dw || g.dc || want_weights;

  Prep<T> pr[RL];
  T dx[RL];
  LOCKSTEP_UNROLL
  for (int t = 0; t < RL; ++t) {
    const std::int64_t b = b0 + t * 32;
    const T xv = active && b < a.B ? a.x[b * a.I + i] : T(0);
    pr[t] = Circ::prep(d, xv, reps);
    dx[t] = T(0);
    if constexpr (kLayer) {
      T slope;
      act(t, 0) = silu(xv, slope);
      act(t, 1) = slope;
    }
  }

  for (std::int64_t o0 = 0; o0 < a.O; o0 += ET) {
    const int n_edges = int(std::min<std::int64_t>(ET, a.O - o0));
    __syncthreads();                                            // every warp is done with the previous tile's gy
    for (int k = threadIdx.x; k < kRows * ET; k += kThreads) {  // along rows of gy
      const int row = k / ET, e = k % ET;
      const std::int64_t b = blockIdx.x * std::int64_t(kRows) + row;
      gy_s[e * (kRows + 1) + row] = b < a.B && e < n_edges ? g.gout[b * a.O + o0 + e] : T(0);
    }
    if (active && lane < n_edges) {
      const std::int64_t o = o0 + lane;
      T* r = rec + lane * KB;
      build_chain_record<A>(a, reps, o, i, r);
      const EdgeWeights<T> ew = edge_weights(a, o, i);
      r[a.KC] = ew.W, r[a.KC + 1] = ew.pb, r[a.KC + 2] = ew.Wb;
    }
    __syncthreads();  // gy and the records are in place
    if (!active) continue;
    for (int e = 0; e < n_edges; ++e) {
      const T* r = rec + e * KB;
      const T* gy = gy_s + e * (kRows + 1) + lane;
      const T W = r[a.KC], Wb = r[a.KC + 2];
      T sl[NSC];
      LOCKSTEP_UNROLL
      for (int k = 0; k < NSC; ++k) sl[k] = T(0);
      T dWp = T(0), Sp = T(0), Gp = T(0);
      // Rows past B run on x = 0 with a zero cotangent: nothing they add changes a sum. With
      // reps compiled in, so is the measure (`fast` a constant: the RL circuits then form one
      // basic block).
      auto rows = [&](auto fast) {
        LOCKSTEP_UNROLL
        for (int t = 0; t < RL; ++t) {
          const T gyv = gy[t * 32];
          const T v = Circ::backward(d, r, reps, pr[t], bool(fast), gyv * W, sl, dx[t]);
          dWp = std::fma(gyv, v, dWp);
          if constexpr (kLayer) {
            dx[t] = std::fma(gyv * Wb, act(t, 1), dx[t]);
            Sp = std::fma(gyv, act(t, 0), Sp);
            Gp += gyv;
          }
        }
      };
      with_measure<RC>(a.fast, rows);
      if (!want_sums) continue;
      LOCKSTEP_UNROLL  // constant indices keep sl in registers
          for (int k = 0; k < NSC; ++k) if (k < NS) part[k * 33 + lane] = sl[k];
      part[NS * 33 + lane] = dWp;
      if constexpr (kLayer) part[(NS + 1) * 33 + lane] = Sp, part[(NS + 2) * 33 + lane] = Gp;
      __syncwarp();
      if (NP <= 16) {  // two lanes per value, 16 partials each, then one shuffle
        const int k = lane % 16, h = lane / 16;
        T acc = T(0);
        if (k < NP) LOCKSTEP_UNROLL
        for (int l = 0; l < 16; ++l) acc += part[k * 33 + h * 16 + l];
        acc += __shfl_xor_sync(0xffffffffu, acc, 16);
        if (h == 0 && k < NP) sums[e * NPs + k] = acc;
      } else {
        for (int k = lane; k < NP; k += 32) {  // long records: NP may pass 32
          T acc = T(0);
          LOCKSTEP_UNROLL
          for (int l = 0; l < 32; ++l) acc += part[k * 33 + l];
          sums[e * NPs + k] = acc;
        }
      }
      __syncwarp();  // part is free again; sums of edge e are in place
    }
    if (!want_sums || lane >= n_edges) continue;
    add_edge_grads<A>(a, g, reps, o0 + lane, i, sums + lane * NPs, NS, true);
  }
  if (g.dx && active) LOCKSTEP_UNROLL
  for (int t = 0; t < RL; ++t)
    if (b0 + t * 32 < a.B) g.dx[(b0 + t * 32) * a.I + i] = dx[t];
}

// ---------------------------------------------------------------------------------------------
// Launchers.

template <class K> inline void allow_shared(K kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
          "setting the shared-memory size");
}

inline unsigned grid_dim(std::int64_t n, const char* what) {
  if (n > 2147483647) invalid_argument("qkan.cuda", what, " needs ", n, " blocks, more than a grid holds");
  return unsigned(n);
}

template <Ansatz A, bool Enc, class T, int RC> void launch_forward(const Problem& p, void* out) {
  const Args<T> a = args_of<T>(p);
  if (!a.contract) {
    const std::size_t bytes = std::size_t(kEdgeRows) * kChunk * a.KCp * sizeof(T);
    const dim3 grid(grid_dim((a.B + BB - 1) / BB, "the batch"),
                    grid_dim((a.O_edges + kEdgeRows - 1) / kEdgeRows, "the outputs"));
    if (grid.y > 65535) invalid_argument("qkan.cuda", "O = ", a.O_edges, " is more outputs than the grid holds");
    auto kernel = solve_forward_kernel<A, Enc, T, RC>;
    allow_shared(kernel, bytes);
    kernel<<<grid, kThreads, bytes, static_cast<cudaStream_t>(p.stream)>>>(a, static_cast<T*>(out));
    check(cudaGetLastError(), "launching the forward kernel");
    return;
  }
  // A small layer trades data-trig reuse and per-block work for parallelism while its grid has
  // fewer than 2 blocks per multiprocessor: first the outputs per block, halved from EO down to
  // kMinOut; then the inputs. A layer of at most kInBlockInputs inputs slices them inside the
  // block (S slices of kThreads / S rows, each slice at least one input), which leaves y
  // without a memset or atomics. A wider layer splits them over grid.z instead, at least
  // kMinInputs per slice, so that each block builds the records of its own inputs only (on the
  // H200 in-block slices made the (1024, 64, 64) forward 23 -> 30 us); those slices add into a
  // zeroed y atomically.
  constexpr int kMinOut = 4, kMaxS = 8, kInBlockInputs = 16, kMinInputs = 2;
  const std::int64_t want_blocks = 2 * std::int64_t(multiprocessors());
  auto blocks_for = [&](int n_out, int S) {
    return (a.B + kThreads / S - 1) / (kThreads / S) * ((a.O + n_out - 1) / n_out);
  };
  int n_out = EO, S = 1;
  while (n_out > kMinOut && blocks_for(n_out, S) < want_blocks) n_out /= 2;
  std::int64_t ips = a.I;
  if (a.I <= kInBlockInputs) {
    while (S < kMaxS && 2 * S <= a.I && blocks_for(n_out, S) < want_blocks) S *= 2;
  } else {
    const std::int64_t blocks = blocks_for(n_out, S);
    const std::int64_t slices_wanted = std::min<std::int64_t>((want_blocks + blocks - 1) / blocks, 65535);
    ips = std::max<std::int64_t>((a.I + slices_wanted - 1) / slices_wanted, kMinInputs);
  }
  const std::int64_t slices = (a.I + ips - 1) / ips;
  // Inputs per chunk: up to 16, fewer where the records are long (large reps, float64), so a
  // block's shared memory stays under 48 KiB and several blocks share a multiprocessor; with
  // S > 1 the same memory then holds the slices' partial sums.
  const int ks = padded<T>(S > 1 ? record_size_of<ContractCircuit<A, Enc, RC, true>>(a.KC)
                                 : record_size_of<ContractCircuit<A, Enc, RC, false>>(a.KC)),
            RB = kThreads / S;
  auto bytes_for = [&](int ic) { return std::size_t(ic * EO * ks + ic * (RB + 1)) * sizeof(T); };
  int ic = 16;
  while (ic > 1 && bytes_for(ic) > 48 * 1024) ic /= 2;
  ic = int(std::min<std::int64_t>(ic, ips));
  const std::size_t red_bytes = S > 1 ? std::size_t(S) * EO * (RB + 1) * sizeof(T) : 0;
  const std::size_t bytes = std::max(bytes_for(ic), red_bytes);
  const dim3 grid(grid_dim((a.B + RB - 1) / RB, "the batch"), grid_dim((a.O + n_out - 1) / n_out, "the outputs"),
                  unsigned(slices));
  if (grid.y > 65535) invalid_argument("qkan.cuda", "O = ", a.O, " is more outputs than the grid holds");
  if (slices > 1) cuda_zero(out, std::size_t(a.B * a.O) * sizeof(T), p.stream);  // the z slices add into y
  auto kernel = S > 1 ? contract_forward_kernel<A, Enc, T, RC, true> : contract_forward_kernel<A, Enc, T, RC, false>;
  allow_shared(kernel, bytes);
  kernel<<<grid, kThreads, bytes, static_cast<cudaStream_t>(p.stream)>>>(a, static_cast<T*>(out), n_out, ic, int(ips),
                                                                         S);
  check(cudaGetLastError(), "launching the forward kernel");
}

/// The parameter-gradient tables, and ∂x where backward_split slices the edge rows, must be
/// zero on entry (cuda_backward zeroes them).
template <Ansatz A, bool Enc, class T, int RC>
void launch_backward(const Problem& p, const void* gout, const GradPtrs& gp, const BackwardSplit& split) {
  const Args<T> a = args_of<T>(p);
  const GradArgs<T> g{static_cast<const T*>(gout), static_cast<T*>(gp.x), static_cast<T*>(gp.theta),
                      static_cast<T*>(gp.w),       static_cast<T*>(gp.c), static_cast<T*>(gp.W),
                      static_cast<T*>(gp.pb),      static_cast<T*>(gp.bw)};
  if (split.row_lanes > 0) {
    auto launch = [&](auto feed, auto lanes) {
      constexpr int RL = decltype(lanes)::value;
      const std::size_t bytes = rows_shared_values(RL, sizeof(T), a.KC, edge_sum_count(a), a.layer) * sizeof(T);
      const dim3 grid(grid_dim((a.B + row_block(RL) - 1) / row_block(RL), "the batch"),
                      grid_dim((a.I + kWarps - 1) / kWarps, "the inputs"));
      if (grid.y > 65535) invalid_argument("qkan.cuda", "I = ", a.I, " is more inputs than the grid holds");
      auto kernel = backward_rows_kernel<A, Enc, T, RC, decltype(feed)::value, RL>;
      allow_shared(kernel, bytes);
      kernel<<<grid, kThreads, bytes, static_cast<cudaStream_t>(p.stream)>>>(a, g);
    };
    auto with_lanes = [&](auto feed) {
      static_assert(kRowLanes[0] == 8 && kRowLanes[1] == 16, "one instantiation per entry of kRowLanes");
      if (split.row_lanes == 16) launch(feed, std::integral_constant<int, 16>{});
      else launch(feed, std::integral_constant<int, 8>{});
    };
    if (a.layer) with_lanes(std::integral_constant<Feed, Feed::layer>{});
    else with_lanes(std::integral_constant<Feed, Feed::contract>{});
    check(cudaGetLastError(), "launching the backward kernel");
    return;
  }
  // Edges per tile: up to 8, fewer where records and per-warp partials are long, keeping the
  // block's shared memory under 110 KiB (two blocks share a multiprocessor's 228 KiB). The
  // tile's records and fold are a per-tile cost over its edges × 8 rows per thread.
  const int NP = edge_sum_count(a);
  const std::size_t per_edge = (std::size_t(kChunk) * (backward_record_stride(a.KC) + kWarps * NP) + BB) * sizeof(T);
  const std::size_t fixed = a.layer ? std::size_t(BB) * kChunk * 2 * sizeof(T) : 0;  // silu, silu' per (b, i)
  const int EOB = int(
      std::clamp<std::int64_t>(std::int64_t((110 * 1024 - fixed) / per_edge), 1, std::min<std::int64_t>(8, split.eps)));
  const std::size_t bytes = fixed + EOB * per_edge;
  if (bytes > kMaxSharedBytes) invalid_argument("qkan.cuda", "reps ", p.reps, " needs too much shared memory");
  const dim3 grid(grid_dim((a.B + BB - 1) / BB, "the batch"), grid_dim((a.I + kChunk - 1) / kChunk, "the inputs"),
                  unsigned(split.slices));
  if (grid.y > 65535) invalid_argument("qkan.cuda", "I = ", a.I, " is more inputs than the grid holds");
  auto launch = [&](auto feed) {
    auto kernel = backward_kernel<A, Enc, T, RC, decltype(feed)::value>;
    allow_shared(kernel, bytes);
    kernel<<<grid, kThreads, bytes, static_cast<cudaStream_t>(p.stream)>>>(a, g, EOB, int(split.eps));
  };
  if (!a.contract) launch(std::integral_constant<Feed, Feed::plain>{});
  else if (a.O_edges == 1) launch(std::integral_constant<Feed, Feed::shared>{});
  else if (a.layer) launch(std::integral_constant<Feed, Feed::layer>{});
  else launch(std::integral_constant<Feed, Feed::contract>{});
  check(cudaGetLastError(), "launching the backward kernel");
}

}  // namespace lockstep::qkan::detail::cuda_lanes
