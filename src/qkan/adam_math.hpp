// One parameter's Adam update (torch.optim.Adam without weight decay or amsgrad), shared by the
// CPU optimizer (optim.cpp) and the CUDA one (cuda/model_kernels.cu). C++17: CUDA units include it.
#pragma once

#include <cmath>

#include "src/core/hd.hpp"

namespace lockstep::qkan {
struct AdamOptions;  // optim.hpp
}  // namespace lockstep::qkan

namespace lockstep::qkan::detail {

/// The step's constants: the learning rate, the moments' decay rates, ε, and the bias
/// corrections 1 − β₁ᵗ and 1 − β₂ᵗ of step t.
struct AdamStep {
  double lr, beta1, beta2, eps, c1, c2;
};

/// Throws std::invalid_argument unless lr > 0, 0 <= β₁, β₂ < 1 and ε > 0.
void check_adam_options(const AdamOptions& o);

/// The constants of step t (1, 2, ...).
AdamStep adam_step(const AdamOptions& o, long t);

LOCKSTEP_HD void adam_update(double& p, double g, double& m, double& v, const AdamStep& s) {
  m = s.beta1 * m + (1 - s.beta1) * g;
  v = s.beta2 * v + (1 - s.beta2) * g * g;
  p -= s.lr * (m / s.c1) / (std::sqrt(v / s.c2) + s.eps);
}

}  // namespace lockstep::qkan::detail
