#include "lockstep/qkan/optim.hpp"

#include <algorithm>
#include <cmath>

#include "lockstep/core/error.hpp"

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

}  // namespace

Adam::Adam(std::size_t n, AdamOptions o) : o_(o), m_(n, 0.0), v_(n, 0.0) {
  if (!(o.lr > 0) || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps > 0))
    invalid_argument("qkan.adam", "needs lr > 0, 0 <= beta1, beta2 < 1 and eps > 0");
}

void Adam::step(std::span<double> p, std::span<const double> g) {
  if (p.size() != m_.size() || g.size() != m_.size())
    invalid_argument("qkan.adam", "made for ", m_.size(), " parameters, given ", p.size(), " and ", g.size(), " gradients");
  ++t_;
  const double c1 = 1 - std::pow(o_.beta1, double(t_)), c2 = 1 - std::pow(o_.beta2, double(t_));
  for (std::size_t k = 0; k < p.size(); ++k) {
    m_[k] = o_.beta1 * m_[k] + (1 - o_.beta1) * g[k];
    v_[k] = o_.beta2 * v_[k] + (1 - o_.beta2) * g[k] * g[k];
    p[k] -= o_.lr * (m_[k] / c1) / (std::sqrt(v_[k] / c2) + o_.eps);
  }
}

Lbfgs::Lbfgs(std::size_t n, LbfgsOptions o) : o_(o), n_(n) {
  if (!(o.lr > 0) || o.max_iter < 1 || o.history < 1)
    invalid_argument("qkan.lbfgs", "needs lr > 0, max_iter >= 1 and history >= 1");
}

double Lbfgs::step(std::span<double> x, const Objective& f) {
  if (x.size() != n_) invalid_argument("qkan.lbfgs", "made for ", n_, " parameters, given ", x.size());
  std::vector<double> g(n_), d(n_), x_new(n_), g_new(n_), alpha(o_.history);
  auto eval = [&](std::span<const double> at, std::span<double> grad) {
    ++evals_;
    const double v = f(at, grad);
    if (!std::isfinite(v)) runtime_failure("qkan.lbfgs", "the objective is not finite (", v, ")");
    return v;
  };
  double loss = eval(x, g);
  for (int it = 0; it < o_.max_iter; ++it) {
    if (max_abs(g) <= o_.tolerance_grad) break;
    // Direction d = −H·g by the two-loop recursion over the stored pairs (newest last).
    for (std::size_t k = 0; k < n_; ++k) d[k] = -g[k];
    const std::size_t m = s_.size();
    for (std::size_t j = m; j-- > 0;) {
      alpha[j] = rho_[j] * dot(s_[j], d);
      for (std::size_t k = 0; k < n_; ++k) d[k] -= alpha[j] * y_[j][k];
    }
    if (m > 0) {
      const double gamma = dot(s_.back(), y_.back()) / dot(y_.back(), y_.back());
      for (double& v : d) v *= gamma;
    }
    for (std::size_t j = 0; j < m; ++j) {
      const double beta = rho_[j] * dot(y_[j], d);
      for (std::size_t k = 0; k < n_; ++k) d[k] += (alpha[j] - beta) * s_[j][k];
    }
    double slope = dot(g, d);
    if (slope >= 0) {  // not a descent direction (lost curvature): restart from −g
      s_.clear(), y_.clear(), rho_.clear();
      for (std::size_t k = 0; k < n_; ++k) d[k] = -g[k];
      slope = dot(g, d);
    }
    // The first step of a fresh history is scaled to the gradient, as torch does.
    double t = o_.lr;
    if (m == 0) {
      double l1 = 0;  // > 0: max |g| passed the tolerance test above
      for (double v : g) l1 += std::abs(v);
      t = std::min(1.0, 1.0 / l1) * o_.lr;
    }
    double loss_new = 0;
    for (int tries = 0;; ++tries) {
      for (std::size_t k = 0; k < n_; ++k) x_new[k] = x[k] + t * d[k];
      loss_new = eval(x_new, g_new);
      if (!o_.line_search || loss_new <= loss + 1e-4 * t * slope || tries == 30) break;
      t *= 0.5;
    }
    if (o_.line_search && loss_new > loss) break;  // no decrease found along d
    // Curvature pair s = x_new − x, y = g_new − g, kept when y·s > 0.
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
    if (step_size <= o_.tolerance_change || change < o_.tolerance_change) break;
  }
  return loss;
}

}  // namespace lockstep::qkan
