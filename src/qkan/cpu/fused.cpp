// The fused CPU path: threads over batch chunks, SIMD lanes over the batch, the Bloch-vector
// forms of schedule.hpp, the state-free backward and the contraction inside the kernel.
// Highway compiles this file once per x86 target and dispatches at run time.
//
// Work split: a task is a chunk of NB = 64 batch rows. Its x rows are transposed into
// scratch as [i][b] so a SIMD vector holds one input for consecutive b. The loop is i outer,
// edge o inner, lanes innermost: data trig of raw x (cos x, sin x) is computed once per (b, i)
// and shared over every o and rep; per-edge constants (θ trig, n0) come from edge records built
// once per call. A contraction accumulates y[b, o] in a [o][b] scratch block; a backward keeps
// ∂x[b, i] in registers over o, reduces the per-edge sums (∂θ, ∂w, ∂c, ∂W) over the chunk's lanes
// first and then into the thread's own double-precision slots; the threads' slots are summed
// and folded into the tables at the end. Nothing of size B·O·I is ever allocated.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/qkan/cpu/fused.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/aligned_allocator.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "lockstep/core/parallel.hpp"
#include "src/core/simd_math-inl.hpp"
#include "src/qkan/cpu/edge_tables.hpp"
#include "src/qkan/schedule.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::qkan::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr std::int64_t NB = 64;  // batch rows per task

/// Threads worth starting: below ~2^17 circuits a call takes tens of µs, less than waking a
/// thread team costs (the 1×1 quick-start layer, B = 1000, ran 1.4× slower on two threads).
inline int threads_for(const Problem& p) { return p.B * p.O * p.I < (std::int64_t{1} << 17) ? 1 : num_threads(); }

using lockstep::HWY_NAMESPACE::sin_cos;  // src/core/simd_math-inl.hpp

/// 1/√v, correctly rounded square root and division (Highway's approximate reciprocal square
/// root is too coarse for float64 results).
template <class D, class V> HWY_INLINE V inv_sqrt(D d, V v) { return hn::Div(hn::Set(d, 1), hn::Sqrt(v)); }

}  // namespace lockstep::qkan::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#include "src/qkan/circuit-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::qkan::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---------------------------------------------------------------------------------------------
// The outer loops, shared by every ansatz.

template <class T> struct Inputs {
  const Problem& p;
  const T* x;
  const T* W;
  const T* rec;
  int KC;
};

/// Copies rows [b0, b0 + nb) of a row-major (B, n) array into dst as [k][NB], zero-padded.
template <class T> void load_transposed(const T* src, std::int64_t n, std::int64_t b0, std::int64_t nb, T* dst) {
  for (std::int64_t k = 0; k < n; ++k) {
    T* row = dst + k * NB;
    for (std::int64_t b = 0; b < nb; ++b) row[b] = src[(b0 + b) * n + k];
    for (std::int64_t b = nb; b < NB; ++b) row[b] = T(0);
  }
}
template <class T> void store_transposed(const T* src, std::int64_t n, std::int64_t b0, std::int64_t nb, T* dst) {
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t k = 0; k < n; ++k) dst[(b0 + b) * n + k] = src[k * NB + b];
}

template <class Circ, class T> void forward_kernel(const Inputs<T>& in, T* out) {
  const Problem& p = in.p;
  using D = hn::ScalableTag<T>;
  const D d;
  constexpr std::int64_t N = HWY_LANES(T);
  constexpr std::int64_t NV = NB / N;
  const std::int64_t tasks = (p.B + NB - 1) / NB;
  const bool contract = p.kind == Kind::contract;
  const int nt = threads_for(p);
  std::vector<hwy::AlignedFreeUniquePtr<T[]>> xs(nt), acc(nt);
  parallel_for(
      tasks,
      [&](std::int64_t task, int th) {
        const std::int64_t b0 = task * NB, nb = std::min(NB, p.B - b0);
        if (!xs[th]) {
          xs[th] = hwy::AllocateAligned<T>(p.I * NB);
          if (contract) acc[th] = hwy::AllocateAligned<T>(p.O * NB);
        }
        T* xt = xs[th].get();
        T* yt = contract ? acc[th].get() : nullptr;
        load_transposed(in.x, p.I, b0, nb, xt);
        if (contract) std::fill(yt, yt + p.O * NB, T(0));
        HWY_ALIGN T lanes[N];
        for (std::int64_t i = 0; i < p.I; ++i) {
          Prep<hn::Vec<D>> pr[NV];
          for (std::int64_t v = 0; v < NV; ++v) pr[v] = Circ::prep(d, hn::Load(d, xt + i * NB + v * N), p.reps);
          for (std::int64_t oe = 0; oe < p.O_edges; ++oe) {
            const T* rec = in.rec + (oe * p.I + i) * in.KC;
            for (std::int64_t v = 0; v < NV && v * N < nb; ++v) {
              const auto val = Circ::forward(d, rec, p.reps, pr[v], p.fast_measure);
              if (!contract) {
                hn::Store(val, d, lanes);
                const std::int64_t bl = std::min(N, nb - v * N);
                for (std::int64_t k = 0; k < bl; ++k) out[((b0 + v * N + k) * p.O_edges + oe) * p.I + i] = lanes[k];
              } else if (p.O_edges == p.O) {
                T* a = yt + oe * NB + v * N;
                hn::Store(hn::MulAdd(hn::Set(d, in.W[oe * p.I + i]), val, hn::Load(d, a)), d, a);
              } else {  // one circuit per (b, i) shared by every output o
                for (std::int64_t o = 0; o < p.O; ++o) {
                  T* a = yt + o * NB + v * N;
                  hn::Store(hn::MulAdd(hn::Set(d, in.W[o * p.I + i]), val, hn::Load(d, a)), d, a);
                }
              }
            }
          }
        }
        if (contract) store_transposed(yt, p.O, b0, nb, out);
      },
      nt);
}

template <class T> struct BackwardOut {
  T* dx;
  bool want_params;  ///< θ, w or c gradients
  bool want_W;
};

template <class Circ, class T>
void backward_kernel(const Inputs<T>& in, const T* gout, const BackwardOut<T>& want, std::vector<double>& slots_out,
                     std::vector<double>& dW_out) {
  const Problem& p = in.p;
  using D = hn::ScalableTag<T>;
  using V = hn::Vec<D>;
  const D d;
  constexpr std::int64_t N = HWY_LANES(T);
  constexpr std::int64_t NV = NB / N;
  const std::int64_t tasks = (p.B + NB - 1) / NB;
  const bool contract = p.kind == Kind::contract;
  const int NS = edge_slot_count(p);
  const std::int64_t edges = p.O_edges * p.I;
  const int nt = threads_for(p);
  struct Scratch {
    hwy::AlignedFreeUniquePtr<T[]> xt, gt, dxt;
    std::vector<double> slots, dW;
  };
  std::vector<Scratch> scr(nt);
  parallel_for(
      tasks,
      [&](std::int64_t task, int th) {
        const std::int64_t b0 = task * NB, nb = std::min(NB, p.B - b0);
        Scratch& s = scr[th];
        if (!s.xt) {
          s.xt = hwy::AllocateAligned<T>(p.I * NB);
          s.dxt = hwy::AllocateAligned<T>(p.I * NB);
          if (contract) s.gt = hwy::AllocateAligned<T>(p.O * NB);
          s.slots.assign(want.want_params ? edges * NS : 0, 0.0);
          s.dW.assign(want.want_W ? p.O * p.I : 0, 0.0);
        }
        load_transposed(in.x, p.I, b0, nb, s.xt.get());
        if (contract) load_transposed(gout, p.O, b0, nb, s.gt.get());
        HWY_ALIGN T lanes[N];
        constexpr int kMaxSlots = 3 + kFusedMaxReps * 4;
        for (std::int64_t i = 0; i < p.I; ++i) {
          Prep<V> pr[NV];
          V dx[NV];
          for (std::int64_t v = 0; v < NV; ++v) {
            pr[v] = Circ::prep(d, hn::Load(d, s.xt.get() + i * NB + v * N), p.reps);
            dx[v] = hn::Zero(d);
          }
          for (std::int64_t oe = 0; oe < p.O_edges; ++oe) {
            const T* rec = in.rec + (oe * p.I + i) * in.KC;
            V sl[kMaxSlots];
            for (int k = 0; k < NS; ++k) sl[k] = hn::Zero(d);
            for (std::int64_t v = 0; v < NV && v * N < nb; ++v) {
              // The cotangent of this circuit: ∂post = gy[b, o]·W[o, i] summed over the outputs it feeds.
              V g;
              if (!contract) {
                const std::int64_t bl = std::min(N, nb - v * N);
                for (std::int64_t k = 0; k < N; ++k)
                  lanes[k] = k < bl ? gout[((b0 + v * N + k) * p.O_edges + oe) * p.I + i] : T(0);
                g = hn::Load(d, lanes);
              } else if (p.O_edges == p.O) {
                g = hn::Mul(hn::Load(d, s.gt.get() + oe * NB + v * N), hn::Set(d, in.W[oe * p.I + i]));
              } else {
                g = hn::Zero(d);
                for (std::int64_t o = 0; o < p.O; ++o)
                  g = hn::MulAdd(hn::Load(d, s.gt.get() + o * NB + v * N), hn::Set(d, in.W[o * p.I + i]), g);
              }
              const V val = Circ::backward(d, rec, p.reps, pr[v], p.fast_measure, g, sl, dx[v]);
              if (want.want_W) {  // ∂W[o, i] = Σ_b gy[b, o]·post[b, o, i]
                const std::int64_t o_lo = p.O_edges == p.O ? oe : 0, o_hi = p.O_edges == p.O ? oe + 1 : p.O;
                for (std::int64_t o = o_lo; o < o_hi; ++o)
                  s.dW[o * p.I + i] +=
                      hn::GetLane(hn::SumOfLanes(d, hn::Mul(hn::Load(d, s.gt.get() + o * NB + v * N), val)));
              }
            }
            if (want.want_params) {
              double* dst = s.slots.data() + (oe * p.I + i) * NS;
              for (int k = 0; k < NS; ++k) dst[k] += hn::GetLane(hn::SumOfLanes(d, sl[k]));
            }
          }
          for (std::int64_t v = 0; v < NV; ++v) hn::Store(dx[v], d, s.dxt.get() + i * NB + v * N);
        }
        if (want.dx) store_transposed(s.dxt.get(), p.I, b0, nb, want.dx);
      },
      nt);
  slots_out.assign(want.want_params ? edges * NS : 0, 0.0);
  dW_out.assign(want.want_W ? p.O * p.I : 0, 0.0);
  for (const Scratch& s : scr) {
    for (std::size_t k = 0; k < s.slots.size(); ++k) slots_out[k] += s.slots[k];
    for (std::size_t k = 0; k < s.dW.size(); ++k) dW_out[k] += s.dW[k];
  }
}

// ---------------------------------------------------------------------------------------------
// The one dispatch point from run-time (ansatz, encoding, dtype) to the templates.

template <class T, template <Ansatz, bool> class Fn, class... Args>
void with_circuit(const Problem& p, Args&&... args) {
  const bool e = p.encoding;
  switch (p.ansatz) {
    case Ansatz::pz:
      return e ? Fn<Ansatz::pz, true>::template run<T>(args...) : Fn<Ansatz::pz, false>::template run<T>(args...);
    case Ansatz::rpz: return Fn<Ansatz::rpz, true>::template run<T>(args...);
    case Ansatz::px: return Fn<Ansatz::px, true>::template run<T>(args...);
    case Ansatz::mix:
      return e ? Fn<Ansatz::mix, true>::template run<T>(args...) : Fn<Ansatz::mix, false>::template run<T>(args...);
    case Ansatz::real:
      return e ? Fn<Ansatz::real, true>::template run<T>(args...) : Fn<Ansatz::real, false>::template run<T>(args...);
  }
  throw std::invalid_argument("[qkan.fused] unknown ansatz");
}

template <Ansatz A, bool Enc> struct Forward {
  template <class T> static void run(const Inputs<T>& in, void* out) {
    forward_kernel<CircuitOf<A, Enc>, T>(in, static_cast<T*>(out));
  }
};
template <Ansatz A, bool Enc> struct Backward {
  template <class T>
  static void run(const Inputs<T>& in, const void* gout, const BackwardOut<T>& want, std::vector<double>& slots,
                  std::vector<double>& dW) {
    backward_kernel<CircuitOf<A, Enc>, T>(in, static_cast<const T*>(gout), want, slots, dW);
  }
};

template <class T> void forward_typed(const Problem& p, void* out) {
  const std::vector<T> rec = build_edge_records<T>(p);
  const Inputs<T> in{p, static_cast<const T*>(p.x), static_cast<const T*>(p.W), rec.data(), edge_record_size(p)};
  with_circuit<T, Forward>(p, in, out);
}

template <class T> void backward_typed(const Problem& p, const void* gout, const GradPtrs& g) {
  const std::vector<T> rec = build_edge_records<T>(p);
  const Inputs<T> in{p, static_cast<const T*>(p.x), static_cast<const T*>(p.W), rec.data(), edge_record_size(p)};
  const BackwardOut<T> want{static_cast<T*>(g.x), g.theta || g.w || g.c, g.W != nullptr};
  if (!want.dx && !want.want_params && !want.want_W) return;
  std::vector<double> slots, dW;
  with_circuit<T, Backward>(p, in, gout, want, slots, dW);
  if (want.want_params) fold_edge_slots(p, slots.data(), g.theta, g.w, g.c);
  for (std::size_t k = 0; k < dW.size(); ++k) static_cast<T*>(g.W)[k] = static_cast<T>(dW[k]);
}

void FusedForward(const Problem& p, void* out) {
  if (p.dtype == DType::f32) forward_typed<float>(p, out);
  else forward_typed<double>(p, out);
}
void FusedBackward(const Problem& p, const void* gout, const GradPtrs& g) {
  if (p.dtype == DType::f32) backward_typed<float>(p, gout, g);
  else backward_typed<double>(p, gout, g);
}
const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace lockstep::qkan::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep::qkan::detail {
HWY_EXPORT(FusedForward);
HWY_EXPORT(FusedBackward);
HWY_EXPORT(TargetName);

void fused_forward(const Problem& p, void* out) { HWY_DYNAMIC_DISPATCH(FusedForward)(p, out); }
void fused_backward(const Problem& p, const void* gout, const GradPtrs& g) {
  HWY_DYNAMIC_DISPATCH(FusedBackward)(p, gout, g);
}
const char* fused_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
const char* fused_unsupported(const Problem& p) {
  if (p.reps > kFusedMaxReps) return "the fused kernels implement reps <= 16";
  return nullptr;
}
}  // namespace lockstep::qkan::detail
#endif
