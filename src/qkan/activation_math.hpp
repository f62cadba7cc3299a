// The base activations of a QKAN layer (docs/QKAN.md §4) and their slopes, per element, shared by
// the CPU model (model.cpp) and the CUDA model (cuda/model_kernels.cu). The activation is a
// template argument, picked by with_activation below. C++17: CUDA units include it.
#pragma once

#include <cmath>
#include <type_traits>

#include "lockstep/qkan/activation.hpp"
#include "lockstep/core/error.hpp"
#include "src/core/hd.hpp"

namespace lockstep::qkan::detail {

/// The activation of x and, when kSlope, its derivative into `slope`, in the precision V, from
/// one exponential where the activation needs one (gelu is the exact, erf form, as torch's
/// default).
template <Activation A, bool kSlope, class V> LOCKSTEP_HD V activate_value(V x, V& slope) {
  const V one = 1;
  if constexpr (A == Activation::silu) {
    const V s = one / (one + std::exp(-x));
    if constexpr (kSlope) slope = s * (one + x * (one - s));
    return x * s;
  } else if constexpr (A == Activation::gelu) {
    const V cdf = V(0.5) * (one + std::erf(x * V(M_SQRT1_2)));
    if constexpr (kSlope) slope = cdf + x * std::exp(V(-0.5) * x * x) * V(0.5 * M_2_SQRTPI * M_SQRT1_2);
    return x * cdf;
  } else if constexpr (A == Activation::relu) {
    if constexpr (kSlope) slope = x > 0 ? one : V(0);
    return x > 0 ? x : V(0);
  } else if constexpr (A == Activation::tanh) {
    const V t = std::tanh(x);
    if constexpr (kSlope) slope = one - t * t;
    return t;
  } else {
    static_assert(A == Activation::sigmoid);
    const V s = one / (one + std::exp(-x));
    if constexpr (kSlope) slope = s * (one - s);
    return s;
  }
}

/// activate_value in double, the models' precision.
template <Activation A, bool kSlope> LOCKSTEP_HD double activate_one(double x, double& slope) {
  return activate_value<A, kSlope>(x, slope);
}

/// The one dispatch point from an activation value to the functions above:
/// f(std::integral_constant<Activation, A>{}).
template <class F> decltype(auto) with_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::silu: return f(std::integral_constant<Activation, Activation::silu>{});
    case Activation::gelu: return f(std::integral_constant<Activation, Activation::gelu>{});
    case Activation::relu: return f(std::integral_constant<Activation, Activation::relu>{});
    case Activation::tanh: return f(std::integral_constant<Activation, Activation::tanh>{});
    case Activation::sigmoid: return f(std::integral_constant<Activation, Activation::sigmoid>{});
  }
  invalid_argument("qkan.model", "unknown activation value; supported: silu, gelu, relu, tanh, sigmoid");
}

}  // namespace lockstep::qkan::detail
