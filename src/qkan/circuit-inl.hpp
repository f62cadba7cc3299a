// One QKAN circuit in its Bloch-vector form (schedule.hpp): forward, and the state-free
// backward. Written once over a "lane descriptor" D and a value type V:
//   - the CPU path instantiates it with Highway vector tags (one circuit per SIMD lane;
//     MulAdd, Set, Sqrt, ... are Highway's, found by argument-dependent lookup);
//   - the CUDA path with Scalar<float> / Scalar<double> (one circuit per thread; the scalar
//     overloads below).
// A backend declares sin_cos(d, a, c, s) (cos and sin of a) and inv_sqrt(d, v) (1/√v) in the
// namespace below before including this file.
//
// On the CPU this file is re-included once per Highway target (Highway's per-target include
// guard), inside that target's namespace and attributes; under CUDA it is included once, into
// namespace `cuda_lanes`.
#include <cmath>
#include <limits>
#include <type_traits>

#include "src/core/hd.hpp"
#include "src/qkan/schedule.hpp"

#if defined(LOCKSTEP_QKAN_CIRCUIT_INL_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_QKAN_CIRCUIT_INL_
#undef LOCKSTEP_QKAN_CIRCUIT_INL_
#else
#define LOCKSTEP_QKAN_CIRCUIT_INL_
#endif

#if defined(__CUDACC__)
#define LOCKSTEP_LANES_NS cuda_lanes
#else
#define LOCKSTEP_LANES_NS HWY_NAMESPACE
HWY_BEFORE_NAMESPACE();
#endif
namespace lockstep::qkan::detail::LOCKSTEP_LANES_NS {

/// The descriptor of plain scalars: one circuit per call.
template <class Lane> struct Scalar { using T = Lane; };

template <class T> using if_real = std::enable_if_t<std::is_floating_point_v<T>, int>;
template <class T> LOCKSTEP_HD T Set(Scalar<T>, T v) { return v; }
template <class T> LOCKSTEP_HD T Zero(Scalar<T>) { return T(0); }
template <class T, if_real<T> = 0> LOCKSTEP_HD T MulAdd(T a, T b, T c) { return std::fma(a, b, c); }      // a·b + c
template <class T, if_real<T> = 0> LOCKSTEP_HD T MulSub(T a, T b, T c) { return std::fma(a, b, -c); }     // a·b − c
template <class T, if_real<T> = 0> LOCKSTEP_HD T NegMulAdd(T a, T b, T c) { return std::fma(-a, b, c); }  // c − a·b
template <class T, if_real<T> = 0> LOCKSTEP_HD T Mul(T a, T b) { return a * b; }
template <class T, if_real<T> = 0> LOCKSTEP_HD T Add(T a, T b) { return a + b; }
template <class T, if_real<T> = 0> LOCKSTEP_HD T Div(T a, T b) { return a / b; }
template <class T, if_real<T> = 0> LOCKSTEP_HD T Neg(T a) { return -a; }
template <class T, if_real<T> = 0> LOCKSTEP_HD T Max(T a, T b) { return a > b ? a : b; }
template <class T, if_real<T> = 0> LOCKSTEP_HD T Sqrt(T a) { return std::sqrt(a); }

/// Rotates (n[u], n[v]) by (c, s): the Bloch rotation about `axis`.
template <int axis, class V> LOCKSTEP_HD void rot(V* n, V c, V s) {
  constexpr int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const V nu = MulSub(c, n[u], Mul(s, n[v]));
  n[v] = MulAdd(s, n[u], Mul(c, n[v]));
  n[u] = nu;
}
/// The inverse rotation (transpose).
template <int axis, class V> LOCKSTEP_HD void unrot(V* n, V c, V s) {
  constexpr int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const V nu = MulAdd(c, n[u], Mul(s, n[v]));
  n[v] = NegMulAdd(s, n[u], Mul(c, n[v]));
  n[u] = nu;
}

/// unrot for a w whose z component is zero (the walk's first gate: w = n × (0, 0, gz)): the
/// products with that zero are left out, which the compiler may not do (0·inf is NaN).
template <int axis, class V> LOCKSTEP_HD void unrot_flat(V* w, V c, V s) {
  if constexpr (axis == 0) {  // (u, v) = (y, z)
    w[2] = Neg(Mul(s, w[1]));
    w[1] = Mul(c, w[1]);
  } else if constexpr (axis == 1) {  // (u, v) = (z, x)
    w[2] = Mul(s, w[0]);
    w[0] = Mul(c, w[0]);
  } else {  // about z: w_z stays zero
    unrot<axis>(w, c, s);
  }
}

/// r = √(1 − z²) of the final Bloch vector, taken as √(n_x² + n_y²): accurate near the poles,
/// where 1 − z² cancels (z = 1 − 1e-8 would lose half the digits).
template <class V> LOCKSTEP_HD V transverse(V nx, V ny) { return Sqrt(MulAdd(nx, nx, Mul(ny, ny))); }

/// Measurement of the final Bloch vector n: fast = |α| − |β| = z / √(1 + r), else ⟨Z⟩ = z.
/// (inv_sqrt is the backend's 1/√v.)
template <class D, class V> LOCKSTEP_HD V measure(D d, V nx, V ny, V nz, bool fast) {
  if (!fast) return nz;
  return Mul(nz, inv_sqrt(d, Add(Set(d, typename D::T(1)), transverse(nx, ny))));
}
/// The measurement and its slope d measure / dz, from two reciprocal square roots and no
/// division: with ρ = 1/√(r²) (r² guarded, so r → 0 gives a large finite value, times a
/// vanishing a × n, not inf·0), r = r²·ρ (as accurate near the poles as transverse) and
/// d fast/dz = √(1 + r) / (2r) = (1 + r)·q·ρ/2, q = 1/√(1 + r).
template <class D, class V> LOCKSTEP_HD V measure_with_slope(D d, const V* n, bool fast, V& slope) {
  using T = typename D::T;
  if (!fast) {
    slope = Set(d, T(1));
    return n[2];
  }
  const V r2 = MulAdd(n[0], n[0], Mul(n[1], n[1]));
  const V rho = inv_sqrt(d, Max(r2, Set(d, std::numeric_limits<T>::min())));
  const V one_r = MulAdd(r2, rho, Set(d, T(1)));
  const V q = inv_sqrt(d, one_r);  // 1 / √(1 + r)
  slope = Mul(Mul(one_r, q), Mul(rho, Set(d, T(0.5))));
  return Mul(n[2], q);
}

/// Per-(b, i) data values shared over edges: raw x gives (cos x, sin x) for the generic
/// ansätze and (cos Lx, sin Lx) for `real`; with the encoding only x itself is used.
template <class V> struct Prep { V x, c, s; };

// ---------------------------------------------------------------------------------------------
// Generic ansätze (pz, rpz, px, mix). `rec` is the edge record and `slots` the per-edge
// gradient sums, both laid out as schedule.hpp says.
template <Ansatz A, bool Enc> struct Generic {
  static constexpr Schedule S = ScheduleOf<A>::value;
  static constexpr int kDataAxis = S.data_axis;
  static constexpr bool kOffset = S.offset_col >= 0;
  static constexpr int kStride = 2 + 2 * S.nconst;                  // record values per rep
  static constexpr int kSlotStride = 1 + S.nconst + (Enc ? 1 : 0);  // gradient slots per rep
  static constexpr int slot_count(int reps) { return 3 + reps * kSlotStride; }

  template <class D, class V> static LOCKSTEP_HD Prep<V> prep(D d, V x, int /*reps*/) {
    Prep<V> pr{x, x, x};
    if constexpr (!Enc) sin_cos(d, x, pr.c, pr.s);
    return pr;
  }

  /// Cos/sin of a rep's data rotation from its record q (kFirst: rep 0). With raw x, rep 0's θ
  /// offset is part of the prefix state n0 (build_record), so rep 0's data gate is R(x) itself.
  template <bool kFirst, class D, class V>
  static LOCKSTEP_HD void data_trig(D d, const typename D::T* q, const Prep<V>& pr, V& c, V& s) {
    using T = typename D::T;
    if constexpr (Enc) {
      const V e = MulAdd(Set(d, q[0]), pr.x, Set(d, q[1]));
      if constexpr (S.arccos) {
        c = e;  // cos(arccos e) = e, sin(arccos e) = √(1 − e²) ≥ 0; NaN for |e| > 1 by policy
        s = Sqrt(NegMulAdd(e, e, Set(d, T(1))));
      } else {
        sin_cos(d, e, c, s);
      }
    } else if constexpr (kOffset && !kFirst) {  // angle addition with the cached θ trig
      const V oc = Set(d, q[0]), os = Set(d, q[1]);
      c = MulSub(pr.c, oc, Mul(pr.s, os));
      s = MulAdd(pr.s, oc, Mul(pr.c, os));
    } else {
      c = pr.c;
      s = pr.s;
    }
  }

  template <class D, class V> static LOCKSTEP_HD void const_gates(D d, const typename D::T* q, V* n) {
    rot<S.const_axis[0]>(n, Set(d, q[2]), Set(d, q[3]));
    if constexpr (S.nconst > 1) rot<S.const_axis[1]>(n, Set(d, q[4]), Set(d, q[5]));
  }

  /// Whether rep 0's data gate takes another form than the others' (raw x with an offset):
  /// only then is it compiled apart (a peeled rep costs registers in the encoded forward).
  static constexpr bool kFirstRepDiffers = kOffset && !Enc;

  /// Applies rep l's gates (record q) to n, with its data-gate trig into c, s (kFirst: l = 0).
  template <bool kFirst, class D, class V>
  static LOCKSTEP_HD void apply_rep(D d, const typename D::T* q, const Prep<V>& pr, V* n, V& c, V& s) {
    data_trig<kFirst>(d, q, pr, c, s);
    rot<kDataAxis>(n, c, s);
    const_gates(d, q, n);
  }

  template <class D, class V>
  static LOCKSTEP_HD V forward(D d, const typename D::T* rec, int reps, const Prep<V>& pr, bool fast) {
    V n[3] = {Set(d, rec[0]), Set(d, rec[1]), Set(d, rec[2])};
    const typename D::T* q = rec + 3;
    const int l0 = kFirstRepDiffers ? 1 : 0;
    if constexpr (kFirstRepDiffers) {  // reps >= 1 (Problem's check)
      V c, s;
      apply_rep<true>(d, q, pr, n, c, s);
      q += kStride;
    }
    LOCKSTEP_UNROLL
    for (int l = l0; l < reps; ++l, q += kStride) {
      V c, s;
      apply_rep<false>(d, q, pr, n, c, s);
    }
    return measure(d, n[0], n[1], n[2], fast);
  }

  /// Un-applies a constant gate from w; kFirst: the walk's first gate, where w_z = 0.
  template <bool kFirst, int axis, class V> static LOCKSTEP_HD void unrot_gate(V* w, V c, V s) {
    if constexpr (kFirst) unrot_flat<axis>(w, c, s);
    else unrot<axis>(w, c, s);
  }

  /// Un-applies rep l's gates (record q, data-gate trig cs) from w, adding its terms into its
  /// slots sl and dx (kLast: l = reps − 1, the walk's first rep).
  template <bool kLast, class D, class V>
  static LOCKSTEP_HD void unwind_rep(D d, const typename D::T* q, const Prep<V>& pr, const V* cs, V* w, V* sl, V& dx) {
    constexpr int a0 = S.const_axis[0], a1 = S.const_axis[1];  // constants, not reads of S
    if constexpr (S.nconst > 1) {
      sl[2] = Add(sl[2], w[a1]);
      unrot_gate<kLast, a1>(w, Set(d, q[4]), Set(d, q[5]));
    }
    sl[1] = Add(sl[1], w[a0]);
    unrot_gate<kLast && S.nconst == 1, a0>(w, Set(d, q[2]), Set(d, q[3]));
    V de = w[kDataAxis];
    unrot<kDataAxis>(w, cs[0], cs[1]);
    if constexpr (S.arccos) de = Neg(Div(de, cs[1]));  // d arccos(e)/de = −1/√(1−e²)
    sl[0] = Add(sl[0], de);
    if constexpr (Enc) {
      sl[1 + S.nconst] = MulAdd(pr.x, de, sl[1 + S.nconst]);
      dx = MulAdd(Set(d, q[0]), de, dx);
    } else {
      dx = Add(dx, de);
    }
  }

  /// Recomputes the forward, then walks the gates backwards, un-applying each. The walk carries
  /// w = n × g, the state crossed with its cotangent: a rotation R maps both n and g, hence w,
  /// so one vector un-applied per gate replaces two, and a gate's d out/dφ = g·(a × n) = a·w is
  /// the component of w along its axis. Adds per-circuit terms into `slots` and d out/dx into
  /// dx; returns the forward value.
  template <class D, class V>
  static LOCKSTEP_HD V backward(D d, const typename D::T* rec, int reps, const Prep<V>& pr, bool fast, V gout, V* slots,
                                V& dx) {
    V n[3] = {Set(d, rec[0]), Set(d, rec[1]), Set(d, rec[2])};
    V cs[kFusedMaxReps][2];  // data-gate trig of each rep, reused by the reverse walk
    const typename D::T* q = rec + 3;
    const int l0 = kFirstRepDiffers ? 1 : 0;
    if constexpr (kFirstRepDiffers) apply_rep<true>(d, q, pr, n, cs[0][0], cs[0][1]);  // reps >= 1
    LOCKSTEP_UNROLL
    for (int l = l0; l < reps; ++l) apply_rep<false>(d, q + l * kStride, pr, n, cs[l][0], cs[l][1]);
    V slope;
    const V out = measure_with_slope(d, n, fast, slope);
    const V gz = Mul(gout, slope);  // g = (0, 0, gz)
    V w[3] = {Mul(n[1], gz), Neg(Mul(n[0], gz)), Zero(d)};
    V* sl = slots + 3;
    unwind_rep<true>(d, q + (reps - 1) * kStride, pr, cs[reps - 1], w, sl + (reps - 1) * kSlotStride, dx);
    LOCKSTEP_UNROLL
    for (int l = reps - 2; l >= 0; --l) unwind_rep<false>(d, q + l * kStride, pr, cs[l], w, sl + l * kSlotStride, dx);
    for (int k = 0; k < 3; ++k) slots[k] = Add(slots[k], w[k]);
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// `real`: ⟨Z⟩ = σ sin S, σ = (−1)^{L+1}, S = Σ_l e_l − Θ.
template <bool Enc> struct Real {
  static constexpr int slot_count(int /*reps*/) { return Enc ? 2 : 1; }
  template <class D, class V> static LOCKSTEP_HD Prep<V> prep(D d, V x, int reps) {
    Prep<V> pr{x, x, x};
    if constexpr (!Enc) sin_cos(d, Mul(Set(d, static_cast<typename D::T>(reps)), x), pr.c, pr.s);
    return pr;
  }
  /// sin S and cos S.
  template <class D, class V>
  static LOCKSTEP_HD void trig(D d, const typename D::T* rec, const Prep<V>& pr, V& sS, V& cS) {
    if constexpr (Enc) {
      sin_cos(d, MulAdd(Set(d, rec[0]), pr.x, Set(d, rec[1])), cS, sS);
    } else {  // S = Lx − Θ
      const V cT = Set(d, rec[0]), sT = Set(d, rec[1]);
      sS = MulSub(pr.s, cT, Mul(pr.c, sT));
      cS = MulAdd(pr.c, cT, Mul(pr.s, sT));
    }
  }
  /// The Bloch vector stays in the x-z plane: (cos S, 0, σ sin S); r = |cos S|.
  template <class D, class V>
  static LOCKSTEP_HD void state(D d, const typename D::T* rec, int reps, const Prep<V>& pr, V* n, V& sign) {
    V sS, cS;
    trig(d, rec, pr, sS, cS);
    sign = Set(d, static_cast<typename D::T>((reps % 2) ? 1 : -1));
    n[0] = cS;
    n[1] = Zero(d);
    n[2] = Mul(sign, sS);
  }
  template <class D, class V>
  static LOCKSTEP_HD V forward(D d, const typename D::T* rec, int reps, const Prep<V>& pr, bool fast) {
    V n[3], sign;
    state(d, rec, reps, pr, n, sign);
    return measure(d, n[0], n[1], n[2], fast);
  }
  template <class D, class V>
  static LOCKSTEP_HD V backward(D d, const typename D::T* rec, int reps, const Prep<V>& pr, bool fast, V gout, V* slots,
                                V& dx) {
    V n[3], sign, slope;
    state(d, rec, reps, pr, n, sign);
    const V out = measure_with_slope(d, n, fast, slope);
    const V dS = Mul(Mul(gout, slope), Mul(sign, n[0]));
    slots[0] = Add(slots[0], dS);
    if constexpr (Enc) {
      slots[1] = MulAdd(pr.x, dS, slots[1]);
      dx = MulAdd(Set(d, rec[0]), dS, dx);
    } else {
      dx = MulAdd(Set(d, static_cast<typename D::T>(reps)), dS, dx);
    }
    return out;
  }
};

template <Ansatz A, bool Enc> using CircuitOf = std::conditional_t<A == Ansatz::real, Real<Enc>, Generic<A, Enc>>;

}  // namespace lockstep::qkan::detail::LOCKSTEP_LANES_NS
#if !defined(__CUDACC__)
HWY_AFTER_NAMESPACE();
#endif
#undef LOCKSTEP_LANES_NS
#endif  // per-target include guard
