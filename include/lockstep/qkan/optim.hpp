// Optimizers over a flat vector of parameters: Adam and L-BFGS with a backtracking (Armijo)
// line search, following torch.optim's definitions and defaults where they have them.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <span>
#include <vector>

namespace lockstep::qkan {

/// An objective: the loss at `params`, its gradient written into `grad` (same size).
using Objective = std::function<double(std::span<const double> params, std::span<double> grad)>;

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

/// Adam (Kingma & Ba, torch.optim.Adam without weight decay or amsgrad).
class Adam {
 public:
  Adam(std::size_t n, AdamOptions options);
  /// One update of `params` from `grad`.
  void step(std::span<double> params, std::span<const double> grad);

 private:
  AdamOptions o_;
  std::vector<double> m_, v_;
  long t_ = 0;
};

struct LbfgsOptions {
  double lr = 1;                  ///< scales every step, as torch's
  int max_iter = 20;              ///< iterations per step()
  int history = 100;              ///< curvature pairs kept
  double tolerance_grad = 1e-7;   ///< stop when max |grad| falls below
  double tolerance_change = 1e-9; ///< stop when a step or loss change falls below
  bool line_search = true;        ///< backtracking Armijo search along each direction (else fixed lr)
};

/// L-BFGS (Nocedal & Wright, algorithm 7.4; the two-loop recursion), keeping its history
/// across calls of step() like torch.optim.LBFGS.
class Lbfgs {
 public:
  Lbfgs(std::size_t n, LbfgsOptions options);
  /// Up to max_iter iterations from `params` (updated in place); returns the loss at the
  /// params it leaves, and counts objective evaluations into evaluations().
  double step(std::span<double> params, const Objective& f);
  long evaluations() const { return evals_; }

 private:
  LbfgsOptions o_;
  std::size_t n_;
  std::deque<std::vector<double>> s_, y_;
  std::deque<double> rho_;
  long evals_ = 0;
};

}  // namespace lockstep::qkan
