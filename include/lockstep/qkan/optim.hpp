// Optimizers over a flat vector of parameters: Adam, and L-BFGS with a strong-Wolfe line search
// (cubic interpolation), following torch.optim's definitions, defaults and stopping rules where
// they have them, so that runs of the two take comparable steps.
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

struct WolfeOptions {
  double c1 = 1e-4;                ///< sufficient decrease: f(t) <= f(0) + c1·t·f'(0)
  double c2 = 0.9;                 ///< curvature: |f'(t)| <= c2·|f'(0)|
  int max_evaluations = 25;        ///< objective evaluations per search
  double tolerance_change = 1e-9;  ///< stop when the bracket is narrower than this (in max |t·d|)
};

struct LineSearchResult {
  double t = 0;     ///< the step taken (0 when no point below f(0) was found)
  double loss = 0;  ///< the objective at x + t·d
  int evaluations = 0;
  bool wolfe = false;  ///< whether t satisfies both strong Wolfe conditions
};

/// A step t > 0 along the descent direction d from x that satisfies the strong Wolfe conditions,
/// by Nocedal & Wright's algorithms 3.5 (bracketing, extrapolating from t0 by cubic
/// interpolation) and 3.6 (zoom, safeguarded cubic interpolation). `loss0` and `grad0` are the
/// objective and gradient at x; grad0·d must be negative. On return `grad` holds the gradient at
/// x + t·d. When the evaluation budget or the bracket's width runs out first, the lowest point
/// seen is returned (wolfe = false). Non-finite objective values throw std::runtime_error.
LineSearchResult strong_wolfe_search(const Objective& f, std::span<const double> x, std::span<const double> d,
                                     double loss0, std::span<const double> grad0, double t0, std::span<double> grad,
                                     const WolfeOptions& options = {});

enum class LineSearch {
  none,          ///< fixed steps of lr along each direction
  strong_wolfe,  ///< strong_wolfe_search starting from lr
};

struct LbfgsOptions {
  double lr = 1;                   ///< the first trial step of each line search (the fixed step without one)
  int max_iter = 20;               ///< iterations per step()
  int max_eval = -1;               ///< objective evaluations per step(); -1: max_iter·5/4, as torch
  int history = 100;               ///< curvature pairs kept
  double tolerance_grad = 1e-7;    ///< stop when max |grad| is at most this
  double tolerance_change = 1e-9;  ///< stop when max |step|, |loss change| or −grad·direction falls below
  LineSearch line_search = LineSearch::strong_wolfe;
  WolfeOptions wolfe{};  ///< the line search's own settings (torch's: independent of the above)
};

/// L-BFGS (Nocedal & Wright, algorithm 7.4; the two-loop recursion), keeping its history
/// across calls of step() like torch.optim.LBFGS. The very first step is scaled to
/// min(1, 1/|g|₁)·lr, as torch's.
class Lbfgs {
 public:
  Lbfgs(std::size_t n, LbfgsOptions options);
  /// Evaluates the objective at `params`, then up to max_iter iterations (updating `params` in
  /// place) until one of the stopping rules holds; returns the loss at the params it leaves
  /// (the value the objective gave there) and counts evaluations into evaluations().
  double step(std::span<double> params, const Objective& f);
  long evaluations() const { return evals_; }

 private:
  /// d = −H·g by the two-loop recursion over the stored pairs (newest last).
  void direction(std::span<const double> g, std::span<double> d);

  LbfgsOptions o_;
  std::size_t n_;
  std::deque<std::vector<double>> s_, y_;
  std::deque<double> rho_;
  std::vector<double> alpha_;
  long evals_ = 0;
  bool started_ = false;
};

}  // namespace lockstep::qkan
