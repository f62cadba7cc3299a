// Error norms of a trial step and the step-size controller of adaptive runs (docs/PROPAGATION.md §2).
#pragma once

#include <complex>
#include <cstdint>

#include "lockstep/prop/config.hpp"

namespace lockstep::prop {

/// How a member measures a trial's error (its own tolerances: members of one batch may differ).
struct ErrorControl {
  ErrorNorm norm = ErrorNorm::weak;
  double rtol = 1e-6;
  double atol = 1e-10;
};

/// The error norm of a trial (accept iff ≤ 1) from the error estimate `err`, the solution at the
/// start `y0` and the candidate `y1` (n values each, in the stored spectral units):
///   weak: ‖err‖₂ / (rtol·max(‖y0‖₂, ‖y1‖₂, atol))
///   max:  max_i |err_i| / (atol + rtol·max(|y0_i|, |y1_i|))
///   rms:  sqrt(mean_i (|err_i| / (atol + rtol·max(|y0_i|, |y1_i|)))²)   (Hairer)
/// Non-finite inputs give a non-finite norm.
double error_norm(const ErrorControl& control, const std::complex<double>* err, const std::complex<double>* y0,
                  const std::complex<double>* y1, std::int64_t n);

/// The PI step-size controller. With k = (embedded order + 1), the error of a trial scales as
/// dz^k, and the gains are those of docs/PROPAGATION.md §2 for k = 5 scaled by 5/k:
///   accepted: dz_next = dz · clamp((target/err)^β1 · (target/err_prev)^β2, 0.2, 5),
///             β1 = 0.12·5/k, β2 = −0.04·5/k, target 0.8, and at most dz after a rejection;
///   rejected: dz_next = dz · max(0.1, safety · err^(−1/k)), safety 0.9;
///   non-finite error: dz_next = dz / 2.
class StepController {
 public:
  explicit StepController(int embedded_order);
  double after_accept(double dz, double err, double previous_err, bool after_rejection) const;
  double after_reject(double dz, double err) const;

  static constexpr double kTarget = 0.8;
  static constexpr double kSafety = 0.9;
  static constexpr double kMinFactor = 0.2, kMaxFactor = 5.0, kMinRejectFactor = 0.1;

 private:
  double k_, beta1_, beta2_;
};

}  // namespace lockstep::prop
