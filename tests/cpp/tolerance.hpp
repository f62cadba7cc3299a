// Per-precision tolerances of the QKAN tests: the one place they are set.
//
// Forward values lie in [-1, 1]; a contraction's tolerance is scaled by Σ_i |W[o, i]|.
// Gradients are compared as |got - ref| <= grad_abs·max(1, max|ref|) + grad_rel·|ref|, i.e.
// relative to the magnitude of the whole gradient tensor (parameter gradients are sums over
// the batch, so their elements differ widely in size).
#pragma once

namespace lockstep::test {

struct Tolerance {
  double fwd_abs;   ///< forward values, absolute
  double grad_abs;  ///< gradients, times max(1, max |ref|) of the tensor
  double grad_rel;  ///< gradients, times |ref| of the element
  double same;      ///< "same computation" comparisons (e.g. thread count, skipped grads), times max(1, max |ref|)
};

template <class T> struct Tol;
template <> struct Tol<float> { static constexpr Tolerance value{2e-5, 5e-5, 1e-4, 2e-6}; };
template <> struct Tol<double> { static constexpr Tolerance value{1e-11, 1e-10, 1e-9, 1e-13}; };
template <class T> inline constexpr Tolerance tol = Tol<T>::value;

/// Whole models on CUDA against the CPU in the same precision (several layers, sums over
/// inputs and batch rows, float32's approximate division and square root on the device): each
/// value's |got - ref| <= tolerance·max(1e-30, max |ref| of its tensor). `value`: outputs and
/// losses; `grad`: gradients (sums over the batch of products of rounded factors).
struct ModelTolerance {
  double value, grad;
};
template <class T> struct ModelTol;
template <> struct ModelTol<float> { static constexpr ModelTolerance value{1e-4, 1e-3}; };
template <> struct ModelTol<double> { static constexpr ModelTolerance value{1e-11, 1e-10}; };
template <class T> inline constexpr ModelTolerance model_tol = ModelTol<T>::value;

/// Central finite differences (float64, reference path): step and acceptance
/// |fd - analytic| <= fd_rel·|analytic| + fd_abs·max(1, max |analytic|).
inline constexpr double kFdStep = 1e-5;
inline constexpr double kFdRel = 1e-6;
inline constexpr double kFdAbs = 1e-8;

/// Documented reference values (docs/QKAN.md §1) carry 10 decimals.
inline constexpr double kDocAbs = 1e-10;

}  // namespace lockstep::test
