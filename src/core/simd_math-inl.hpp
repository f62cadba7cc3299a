// SIMD math shared by the CPU kernels of both engines, compiled per Highway target: include it
// after <hwy/highway.h> inside a file that Highway compiles once per target (foreach_target.h).
// The include guard toggles per target, as Highway's -inl headers do.
#if defined(LOCKSTEP_CORE_SIMD_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_CORE_SIMD_MATH_INL_H_
#undef LOCKSTEP_CORE_SIMD_MATH_INL_H_
#else
#define LOCKSTEP_CORE_SIMD_MATH_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cmath>
#include <cstddef>

HWY_BEFORE_NAMESPACE();
namespace lockstep::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// cos a and sin a. Highway's polynomials are valid for |a| <= 39000; lanes past that (rare,
/// and meaningful in float64) are recomputed with std::cos / std::sin instead of returning
/// garbage.
template <class D, class V> HWY_INLINE void sin_cos(D d, V a, V& c, V& s) {
  using T = hn::TFromD<D>;
  c = hn::Cos(d, a);
  s = hn::Sin(d, a);
  if (HWY_UNLIKELY(!hn::AllFalse(d, hn::Gt(hn::Abs(a), hn::Set(d, T(39000)))))) {
    constexpr std::size_t N = HWY_LANES(T);
    HWY_ALIGN T av[N], cv[N], sv[N];
    hn::Store(a, d, av);
    hn::Store(c, d, cv);
    hn::Store(s, d, sv);
    for (std::size_t k = 0; k < N; ++k)
      if (std::abs(av[k]) > T(39000)) {
        cv[k] = std::cos(av[k]);
        sv[k] = std::sin(av[k]);
      }
    c = hn::Load(d, cv);
    s = hn::Load(d, sv);
  }
}

}  // namespace lockstep::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // LOCKSTEP_CORE_SIMD_MATH_INL_H_
