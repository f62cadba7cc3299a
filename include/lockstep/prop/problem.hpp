// The right-hand side a stepper advances: ∂Ã/∂z = L(ω) Ã + N(Ã) for a batch of members.
//
// The stepper and the runners see the physics only through this interface, so they can be
// tested on analytic problems; physics_problem.hpp adapts the GNLSE operators to it.
#pragma once

#include <complex>
#include <cstdint>
#include <span>

#include "lockstep/prop/measures.hpp"

namespace lockstep::prop {

using Complex = std::complex<double>;

/// The problems of the members of one batch, indexed 0 … members() − 1. Spectra are rows of
/// points() values in FFT order. measure() and apply_windows() may run concurrently for
/// different members (the runners thread their per-member bookkeeping).
class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::int64_t points() const = 0;
  virtual std::int64_t members() const = 0;
  /// L(ω) of `member`, FFT order, 1/m (imaginary part: dispersion; real part: −loss/2).
  virtual std::span<const Complex> linear(std::int64_t member) const = 0;
  /// out = N(in) for members [first, first + count): `count` contiguous rows each. A row's
  /// result must not depend on `first` and `count` (a member's output is the same alone or in a
  /// batch).
  virtual void nonlinear(std::int64_t first, std::int64_t count, const Complex* in, Complex* out) = 0;
  /// One-dimensional FFTs one evaluation of N costs for `member` (the ledger counts them).
  virtual std::int64_t ffts_per_evaluation(std::int64_t member) const = 0;
  /// The statistics' measures of `member`'s spectrum.
  virtual FieldMeasures measure(std::int64_t member, const Complex* spectrum) = 0;
  /// Applies `member`'s configured windows to `spectrum` in place after an accepted step;
  /// returns whether anything was changed (false: no windows configured).
  virtual bool apply_windows(std::int64_t member, Complex* spectrum) = 0;
};

}  // namespace lockstep::prop
