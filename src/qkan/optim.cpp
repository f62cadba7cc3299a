#include "lockstep/qkan/optim.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"
#include "src/qkan/adam_math.hpp"

namespace lockstep::qkan {

namespace {

double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}
double max_abs(std::span<const double> a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}
/// out = x + t·d. The line search and L-BFGS both place points through this one function, so
/// the point L-BFGS moves to is bit for bit the one the search evaluated.
void advance(std::span<const double> x, double t, std::span<const double> d, std::span<double> out) {
  for (std::size_t k = 0; k < x.size(); ++k) out[k] = x[k] + t * d[k];
}

/// A trial point of a line search: step, objective, directional derivative.
struct Trial {
  double t, f, slope;
};

/// The minimiser of the cubic that interpolates values and slopes at a and b (Nocedal & Wright,
/// eq. 3.59), clamped to [lo, hi]; the middle of [lo, hi] when that cubic has no minimiser.
double cubic_minimizer(const Trial& a, const Trial& b, double lo, double hi) {
  const double mid = 0.5 * (lo + hi);
  if (a.t == b.t) return mid;
  const double d1 = a.slope + b.slope - 3 * (a.f - b.f) / (a.t - b.t);
  const double disc = d1 * d1 - a.slope * b.slope;
  if (!(disc >= 0)) return mid;
  const double d2 = std::copysign(std::sqrt(disc), b.t - a.t);
  const double t = b.t - (b.t - a.t) * (b.slope + d2 - d1) / (b.slope - a.slope + 2 * d2);
  return std::isfinite(t) ? std::clamp(t, lo, hi) : mid;
}

}  // namespace

namespace detail {
void check_adam_options(const AdamOptions& o) {
  if (!(o.lr > 0) || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps > 0))
    invalid_argument("qkan.adam", "needs lr > 0, 0 <= beta1, beta2 < 1 and eps > 0");
}
AdamStep adam_step(const AdamOptions& o, long t) {
  return {o.lr, o.beta1, o.beta2, o.eps, 1 - std::pow(o.beta1, double(t)), 1 - std::pow(o.beta2, double(t))};
}
}  // namespace detail

Adam::Adam(std::size_t n, AdamOptions o) : o_(o), m_(n, 0.0), v_(n, 0.0) { detail::check_adam_options(o); }

void Adam::step(std::span<double> p, std::span<const double> g) {
  if (p.size() != m_.size() || g.size() != m_.size())
    invalid_argument("qkan.adam", "made for ", m_.size(), " parameters, given ", p.size(), " and ", g.size(),
                     " gradients");
  const detail::AdamStep s = detail::adam_step(o_, ++t_);
  for (std::size_t k = 0; k < p.size(); ++k) detail::adam_update(p[k], g[k], m_[k], v_[k], s);
}

LineSearchResult strong_wolfe_search(const Objective& f, std::span<const double> x, std::span<const double> d,
                                     double loss0, std::span<const double> grad0, double t0, std::span<double> grad,
                                     const WolfeOptions& o) {
  constexpr std::string_view where = "qkan.strong_wolfe";
  const std::size_t n = x.size();
  if (d.size() != n || grad0.size() != n || grad.size() != n)
    invalid_argument(where, "x, d, grad0 and grad must have one size; got ", n, ", ", d.size(), ", ", grad0.size(),
                     ", ", grad.size());
  if (!(o.c1 > 0 && o.c1 < o.c2 && o.c2 < 1) || o.max_evaluations < 1)
    invalid_argument(where, "needs 0 < c1 < c2 < 1 and max_evaluations >= 1");
  if (!(t0 > 0)) invalid_argument(where, "the first trial step must be > 0, got ", t0);
  const double slope0 = dot(grad0, d);
  if (!(slope0 < 0)) invalid_argument(where, "d is not a descent direction (grad0·d = ", slope0, ")");
  const double span_scale = max_abs(d);  // converts a step width into max |Δx|

  LineSearchResult r;
  std::vector<double> xt(n), g_new(n), g_prev(grad0.begin(), grad0.end()), g_lo(n);
  auto probe = [&](double t) {
    advance(x, t, d, xt);
    ++r.evaluations;
    const double v = f(xt, g_new);
    if (!std::isfinite(v)) runtime_failure(where, "the objective is not finite (", v, ") at step ", t);
    return Trial{t, v, dot(g_new, d)};
  };
  auto sufficient = [&](const Trial& p) { return p.f <= loss0 + o.c1 * p.t * slope0; };
  auto curvature = [&](const Trial& p) { return std::abs(p.slope) <= -o.c2 * slope0; };
  auto finish = [&](const Trial& p, std::span<const double> g, bool wolfe) {
    std::copy(g.begin(), g.end(), grad.begin());
    r.t = p.t, r.loss = p.f, r.wolfe = wolfe;
    return r;
  };

  // Bracketing (algorithm 3.5): grow the step until the interval between the previous and the
  // current trial holds a point satisfying both conditions. `lo` ends as the end with the lower
  // value that satisfies sufficient decrease, `hi` the other end.
  Trial prev{0, loss0, slope0}, lo{}, hi{};
  double t = t0;
  for (;;) {
    const Trial cur = probe(t);
    if (!sufficient(cur) || (r.evaluations > 1 && cur.f >= prev.f)) {
      lo = prev, hi = cur;
      g_lo.swap(g_prev);
      break;
    }
    if (curvature(cur)) return finish(cur, g_new, true);
    if (cur.slope >= 0) {  // past a minimiser along d
      lo = cur, hi = prev;
      g_lo.swap(g_new);
      break;
    }
    // cur lies below every earlier trial, so it is the best point when the budget ends here.
    if (r.evaluations >= o.max_evaluations) return finish(cur, g_new, false);
    // Still descending: extrapolate, at least a little and at most 10× further.
    t = cubic_minimizer(prev, cur, cur.t + 0.01 * (cur.t - prev.t), 10 * cur.t);
    prev = cur;
    g_prev.swap(g_new);
  }

  // Zoom (algorithm 3.6): shrink [lo, hi] around a point satisfying both conditions. Trials
  // come from the cubic through the two ends, kept 10% of the width away from either end so
  // the interval shrinks by at least that much per evaluation.
  while (r.evaluations < o.max_evaluations) {
    const double a = std::min(lo.t, hi.t), b = std::max(lo.t, hi.t), margin = 0.1 * (b - a);
    if ((b - a) * span_scale < o.tolerance_change) break;
    const Trial cur = probe(cubic_minimizer(lo, hi, a + margin, b - margin));
    if (!sufficient(cur) || cur.f >= lo.f) {
      hi = cur;
      continue;
    }
    if (curvature(cur)) return finish(cur, g_new, true);
    if (cur.slope * (hi.t - lo.t) >= 0) hi = lo;  // the minimiser lies between lo and cur
    lo = cur;
    g_lo.swap(g_new);
  }
  return finish(lo, g_lo, false);
}

Lbfgs::Lbfgs(std::size_t n, LbfgsOptions o) : o_(o), n_(n), alpha_(std::max(o.history, 1)) {
  if (!(o.lr > 0) || o.max_iter < 1 || o.history < 1 || o.max_eval == 0 || o.max_eval < -1 ||
      !(o.tolerance_grad >= 0) || !(o.tolerance_change >= 0))
    invalid_argument("qkan.lbfgs",
                     "needs lr > 0, max_iter >= 1, history >= 1, max_eval >= 1 (or -1) and tolerances >= 0");
}

void Lbfgs::direction(std::span<const double> g, std::span<double> d) {
  for (std::size_t k = 0; k < n_; ++k) d[k] = -g[k];
  const std::size_t m = s_.size();
  for (std::size_t j = m; j-- > 0;) {
    alpha_[j] = rho_[j] * dot(s_[j], d);
    for (std::size_t k = 0; k < n_; ++k) d[k] -= alpha_[j] * y_[j][k];
  }
  if (m > 0) {  // H0 = γ·I with γ = s·y / y·y of the newest pair
    const double gamma = dot(s_.back(), y_.back()) / dot(y_.back(), y_.back());
    for (double& v : d) v *= gamma;
  }
  for (std::size_t j = 0; j < m; ++j) {
    const double beta = rho_[j] * dot(y_[j], d);
    for (std::size_t k = 0; k < n_; ++k) d[k] += (alpha_[j] - beta) * s_[j][k];
  }
}

double Lbfgs::step(std::span<double> x, const Objective& f) {
  if (x.size() != n_) invalid_argument("qkan.lbfgs", "made for ", n_, " parameters, given ", x.size());
  const int max_eval = o_.max_eval > 0 ? o_.max_eval : o_.max_iter * 5 / 4;
  std::vector<double> g(n_), d(n_), x_new(n_), g_new(n_);
  int evals = 0;
  auto eval = [&](std::span<const double> at, std::span<double> grad) {
    ++evals;
    const double v = f(at, grad);
    if (!std::isfinite(v)) runtime_failure("qkan.lbfgs", "the objective is not finite (", v, ")");
    return v;
  };
  double loss = eval(x, g);
  for (int it = 0; it < o_.max_iter && max_abs(g) > o_.tolerance_grad; ++it) {
    direction(g, d);
    double slope = dot(g, d);
    if (slope >= 0) {  // not a descent direction (curvature lost to rounding): restart from −g
      s_.clear(), y_.clear(), rho_.clear();
      for (std::size_t k = 0; k < n_; ++k) d[k] = -g[k];
      slope = dot(g, d);
    }
    if (slope > -o_.tolerance_change) break;
    // A fresh history's first step is scaled to the gradient, as torch's very first step.
    double t = o_.lr;
    if (s_.empty()) {
      double l1 = 0;  // > 0: max |g| passed the tolerance test
      for (double v : g) l1 += std::abs(v);
      t = std::min(1.0, 1.0 / l1) * o_.lr;
    }
    double loss_new = 0;
    if (o_.line_search == LineSearch::strong_wolfe) {
      const LineSearchResult r = strong_wolfe_search(f, x, d, loss, g, t, g_new, o_.wolfe);
      evals += r.evaluations;
      if (r.t == 0) break;  // no point below the current one along d
      t = r.t, loss_new = r.loss;
      advance(x, t, d, x_new);
    } else {
      advance(x, t, d, x_new);
      loss_new = eval(x_new, g_new);
    }
    // Curvature pair s = x_new − x, y = g_new − g, kept when y·s > 0 (the strong Wolfe
    // conditions guarantee it up to rounding).
    std::vector<double> s(n_), y(n_);
    for (std::size_t k = 0; k < n_; ++k) s[k] = x_new[k] - x[k], y[k] = g_new[k] - g[k];
    const double ys = dot(y, s);
    if (ys > 1e-10) {
      if (static_cast<int>(s_.size()) == o_.history) s_.pop_front(), y_.pop_front(), rho_.pop_front();
      s_.push_back(std::move(s));
      y_.push_back(std::move(y));
      rho_.push_back(1 / ys);
    }
    const double change = std::abs(loss_new - loss), step_size = t * max_abs(d);
    std::copy(x_new.begin(), x_new.end(), x.begin());
    g.swap(g_new);
    loss = loss_new;
    if (evals >= max_eval || step_size <= o_.tolerance_change || change < o_.tolerance_change) break;
  }
  evals_ += evals;
  return loss;
}

}  // namespace lockstep::qkan
