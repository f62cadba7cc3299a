#include "lockstep/prop/controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lockstep/core/error.hpp"
#include "pointwise.hpp"

namespace lockstep::prop {

double error_norm(const ErrorControl& control, const std::complex<double>* err, const std::complex<double>* y0,
                  const std::complex<double>* y1, std::int64_t n) {
  switch (control.norm) {
    case ErrorNorm::weak: {
      double e2 = 0, a2 = 0, b2 = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        e2 += std::norm(err[i]);
        a2 += std::norm(y0[i]);
        b2 += std::norm(y1[i]);
      }
      return pointwise::weak_norm(e2, a2, b2, control.rtol, control.atol);
    }
    case ErrorNorm::max:
    case ErrorNorm::rms: {
      double largest = 0, sum = 0;
      bool finite = true;
      for (std::int64_t i = 0; i < n; ++i) {
        const double r =
            pointwise::scaled_error(std::norm(err[i]), std::norm(y0[i]), std::norm(y1[i]), control.rtol, control.atol);
        finite = finite && std::isfinite(r);
        largest = std::max(largest, r);
        sum += r * r;
      }
      if (!finite) return std::numeric_limits<double>::quiet_NaN();
      return control.norm == ErrorNorm::max ? largest : std::sqrt(sum / static_cast<double>(n));
    }
  }
  invalid_argument("prop.error_norm", "stepping.norm has an unknown value");
}

StepController::StepController(int embedded_order) : k_(embedded_order + 1) {
  if (embedded_order < 1) invalid_argument("prop.controller", "an adaptive run needs a scheme with an error estimate");
  beta1_ = 0.12 * 5 / k_;
  beta2_ = -0.04 * 5 / k_;
}

double StepController::after_accept(double dz, double err, double previous_err, bool after_rejection) const {
  // A zero error (a linear problem solved exactly) must not make the factor infinite.
  const double e = std::max(err, 1e-12), p = std::max(previous_err, 1e-12);
  double factor = std::pow(kTarget / e, beta1_) * std::pow(kTarget / p, beta2_);
  factor = std::clamp(factor, kMinFactor, kMaxFactor);
  if (after_rejection) factor = std::min(factor, 1.0);
  return dz * factor;
}

double StepController::after_reject(double dz, double err) const {
  if (!std::isfinite(err)) return dz / 2;
  return dz * std::max(kMinRejectFactor, kSafety * std::pow(err, -1.0 / k_));
}

}  // namespace lockstep::prop
