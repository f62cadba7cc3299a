// The interaction picture's exponentials exp(x·L(ω)) over a grid (exponentials.hpp), in SIMD
// lanes: Highway compiles this file once per x86 target and dispatches at run time. They are
// rebuilt at every new step length, once per distinct stage offset, and with the C library's
// scalar exp and sincos they took as long as the FFTs of the nonlinear operator.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/prop/exponentials.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>

#include "exponentials.hpp"
#include "src/core/simd_math-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::prop::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// out[0, N) = exp(x·in[0, N)) for one vector of N values (interleaved re, im).
template <class D> HWY_INLINE void exponentials_of_vector(D d, const double* in, double x, double* out) {
  hn::Vec<D> re, im, c, s;
  hn::LoadInterleaved2(d, in, re, im);
  const auto vx = hn::Set(d, x);
  // Exp is valid up to 706: beyond, e^{x Re L} overflows in double anyway (a gain that large is
  // no physical step).
  const auto magnitude = hn::Exp(d, hn::Mul(vx, re));
  lockstep::HWY_NAMESPACE::sin_cos(d, hn::Mul(vx, im), c, s);
  hn::StoreInterleaved2(hn::Mul(magnitude, c), hn::Mul(magnitude, s), d, out);
}

void Exponentials(const std::complex<double>* linear, double x, std::complex<double>* out, std::int64_t n) {
  const hn::ScalableTag<double> d;
  constexpr std::int64_t N = HWY_LANES(double);
  const auto* in = reinterpret_cast<const double*>(linear);
  auto* to = reinterpret_cast<double*>(out);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) exponentials_of_vector(d, in + 2 * i, x, to + 2 * i);
  if (i == n) return;
  // The tail through the same lanes, so that a value's bits do not depend on where a range
  // of the grid (a thread's share) ends.
  HWY_ALIGN double tail_in[2 * N] = {}, tail_out[2 * N];
  std::copy(in + 2 * i, in + 2 * n, tail_in);
  exponentials_of_vector(d, tail_in, x, tail_out);
  std::copy(tail_out, tail_out + 2 * (n - i), to + 2 * i);
}

}  // namespace lockstep::prop::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep::prop {
HWY_EXPORT(Exponentials);

void interaction_exponentials(const std::complex<double>* linear, double x, std::complex<double>* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(Exponentials)(linear, x, out, n);
}
}  // namespace lockstep::prop
#endif
