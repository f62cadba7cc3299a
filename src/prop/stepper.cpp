#include "lockstep/prop/stepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lockstep/core/error.hpp"
#include "exponentials.hpp"
#include "lockstep/core/parallel.hpp"
#include "member_threads.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.stepper";

std::size_t idx(std::int64_t i) { return static_cast<std::size_t>(i); }

/// a·b written out: std::complex's operator* checks every product for infinities and NaN (a
/// branch per point that keeps the loops scalar); a non-finite field is caught by the
/// finiteness flag of the trial instead.
inline Complex times(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// out[i] += w · row[i] for i in [0, n).
void add_scaled(Complex* out, double w, const Complex* row, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] += w * row[i];
}
}  // namespace

Stepper::Stepper(const Tableau& tableau, Problem& problem)
    : tableau_(tableau), problem_(problem), members_(problem.members()), n_(problem.points()), plan_(tableau) {
  if (members_ < 1) invalid_argument(kWhere, "a stepper needs at least one member");
  if (n_ < 1) invalid_argument(kWhere, "the problem has no points");
  const int s = plan_.stages;
  const auto rows = idx(members_ * n_);
  y_.assign(rows, Complex{});
  candidate_.assign(rows, Complex{});
  frame_.assign(rows, Complex{});
  inputs_.assign(rows, Complex{});
  scratch_.assign(rows, Complex{});
  n_values_.assign(idx(s) * rows, Complex{});
  k_values_.assign(idx(s) * rows, Complex{});
  // Group the members by L(ω) (compared value by value).
  group_.assign(idx(members_), 0);
  for (std::int64_t m = 0; m < members_; ++m) {
    const auto l = problem_.linear(m);
    if (static_cast<std::int64_t>(l.size()) != n_)
      invalid_argument(kWhere, "member ", m, ": L(ω) has ", l.size(), " values, expected ", n_);
    std::int64_t g = 0;
    for (; g < static_cast<std::int64_t>(representative_.size()); ++g) {
      const auto r = problem_.linear(representative_[idx(g)]);
      if (std::equal(l.begin(), l.end(), r.begin())) break;
    }
    if (g == static_cast<std::int64_t>(representative_.size())) representative_.push_back(m);
    group_[idx(m)] = g;
  }
  const auto groups = representative_.size();
  exponentials_.assign(plan_.deltas.size() * groups * idx(n_), Complex{});
  cached_h_.assign(groups, std::numeric_limits<double>::quiet_NaN());
  trial_h_.assign(idx(members_), 0.0);
  norm_.assign(idx(members_), std::numeric_limits<double>::quiet_NaN());
  finite_.assign(idx(members_), 0);
  fsal_ready_.assign(idx(members_), 0);
  fsal_pending_.assign(idx(members_), 0);
  control_.assign(idx(members_), ErrorControl{});
  evaluations_.assign(idx(members_), 0);
}

void Stepper::load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) {
  control_[idx(member)] = control;
  replace(member, spectrum);
}

void Stepper::replace(std::int64_t member, const Complex* spectrum) {
  if (member < 0 || member >= members_) invalid_argument(kWhere, "member ", member, " is outside [0, ", members_, ")");
  std::copy(spectrum, spectrum + n_, row(y_, member));
  fsal_ready_[idx(member)] = 0;
  fsal_pending_[idx(member)] = 0;
}

void Stepper::update_exponentials(int group, double h, std::int64_t begin, std::int64_t end) {
  const std::int64_t member = representative_[idx(group)];
  const auto linear = problem_.linear(member);
  for (std::size_t d = 0; d < plan_.deltas.size(); ++d) {
    Complex* e = exponentials_.data() +
                 (group * static_cast<std::int64_t>(plan_.deltas.size()) + static_cast<std::int64_t>(d)) * n_;
    // e^{−x} as the reciprocal of an already computed e^{x}: a division instead of an exp.
    const auto mirror = std::find(plan_.deltas.begin(), plan_.deltas.begin() + static_cast<long>(d), -plan_.deltas[d]);
    if (mirror != plan_.deltas.begin() + static_cast<long>(d)) {
      const Complex* m = exponential(member, static_cast<int>(mirror - plan_.deltas.begin()));
      for (std::int64_t i = begin; i < end; ++i) {
        const double re = m[i].real(), im = m[i].imag(), inverse = 1 / (re * re + im * im);
        e[i] = {re * inverse, -im * inverse};
      }
      continue;
    }
    interaction_exponentials(linear.data() + begin, plan_.deltas[d] * h, e + begin, end - begin);
  }
}

void Stepper::combine(const Consumer& consumer, std::int64_t member, double h, Complex* out) const {
  // Gather the rows and the weights (times h) once.
  constexpr int kMaxTerms = 16;
  const Complex* frame_rows[kMaxTerms];
  const Complex* direct_rows[kMaxTerms];
  double frame_w[kMaxTerms], direct_w[kMaxTerms];
  const int nf = static_cast<int>(consumer.frame.size()), nd = static_cast<int>(consumer.direct.size());
  if (nf > kMaxTerms || nd > kMaxTerms) runtime_failure(kWhere, "a tableau with more than 16 stages");
  for (int t = 0; t < nf; ++t) {
    frame_rows[t] = k_row(consumer.frame[idx(t)].stage, member);
    frame_w[t] = h * consumer.frame[idx(t)].weight;
  }
  for (int t = 0; t < nd; ++t) {
    direct_rows[t] = n_row(consumer.direct[idx(t)].stage, member);
    direct_w[t] = h * consumer.direct[idx(t)].weight;
  }
  const Complex* y = row(y_, member);
  const Complex* a_i = row(frame_, member);
  const Complex* e = consumer.exponential >= 0 ? exponential(member, consumer.exponential) : nullptr;
  const bool has_frame = consumer.frame_y0 || nf > 0;
  // One streaming (vectorisable) pass per term over `out`, which accumulates; the sums per point
  // are formed in the same order as one loop over the terms per point would.
  const std::int64_t n = n_;
  if (has_frame) {
    if (consumer.frame_y0) std::copy(a_i, a_i + n, out);
    else std::fill(out, out + n, Complex{});
    for (int t = 0; t < nf; ++t) add_scaled(out, frame_w[t], frame_rows[t], n);
    if (e)
      for (std::int64_t i = 0; i < n; ++i) out[i] = times(out[i], e[i]);
    if (consumer.direct_y0)
      for (std::int64_t i = 0; i < n; ++i) out[i] += y[i];
  } else if (consumer.direct_y0) {
    std::copy(y, y + n, out);
  } else {
    std::fill(out, out + n, Complex{});
  }
  for (int t = 0; t < nd; ++t) add_scaled(out, direct_w[t], direct_rows[t], n);
}

void Stepper::evaluate(int stage, std::int64_t first, std::int64_t count, const Complex* inputs) {
  problem_.nonlinear(first, count, inputs + first * n_, n_row(stage, first));
}

void Stepper::trial(std::int64_t first, std::int64_t count, double h) {
  if (first < 0 || count < 1 || first + count > members_)
    invalid_argument(kWhere, "members [", first, ", ", first + count, ") outside [0, ", members_, ")");
  if (!(h > 0) || !std::isfinite(h)) invalid_argument(kWhere, "step length ", h, " m must be > 0");
  const int s = plan_.stages;
  auto for_members = [&](auto&& body) { for_each_member(first, count, n_, [&](std::int64_t m, int) { body(m); }); };
  // k_j of one member, right after N_j (the pass runs in the next stage's region).
  auto make_k = [&](int stage, std::int64_t m) {
    if (!plan_.k_needed[idx(stage)] || plan_.k_exponential[idx(stage)] < 0) return;
    const Complex* e = exponential(m, plan_.k_exponential[idx(stage)]);
    const Complex* nv = n_row(stage, m);
    Complex* k = k_values_.data() + (stage * members_ + m) * n_;
    for (std::int64_t i = 0; i < n_; ++i) k[i] = times(e[i], nv[i]);
  };

  // The exponentials of the groups in this range, then per member the FSAL hand-over and
  // A_I = D(σh) Ã_n.
  std::vector<int> stale;
  for (std::int64_t m = first; m < first + count; ++m) {
    const int g = static_cast<int>(group_[idx(m)]);
    if (cached_h_[idx(g)] != h && std::find(stale.begin(), stale.end(), g) == stale.end()) stale.push_back(g);
  }
  // Split into point ranges as well, so that one shared group is computed by every thread;
  // threaded under the same rule as the passes over members.
  const bool threaded = count * n_ >= kMinThreadedValues;
  const std::int64_t chunks = threaded ? num_threads() : 1;
  const auto tasks = static_cast<std::int64_t>(stale.size()) * chunks;
  auto update = [&](std::int64_t t, int) {
    const std::int64_t c = t % chunks;
    update_exponentials(stale[idx(t / chunks)], h, n_ * c / chunks, n_ * (c + 1) / chunks);
  };
  if (threaded) {
    parallel_for(tasks, update);
  } else {
    for (std::int64_t t = 0; t < tasks; ++t) update(t, 0);
  }
  for (int g : stale) cached_h_[idx(g)] = h;
  for_members([&](std::int64_t m) {
    trial_h_[idx(m)] = h;
    if (fsal_pending_[idx(m)]) {
      std::copy(n_row(s - 1, m), n_row(s - 1, m) + n_, n_row(0, m));
      fsal_pending_[idx(m)] = 0;
      fsal_ready_[idx(m)] = 1;
    }
    evaluations_[idx(m)] = fsal_ready_[idx(m)] ? s - 1 : s;
    const Complex* y = row(y_, m);
    Complex* a_i = row(frame_, m);
    if (plan_.frame_exponential < 0) {
      std::copy(y, y + n_, a_i);
    } else {
      const Complex* e = exponential(m, plan_.frame_exponential);
      for (std::int64_t i = 0; i < n_; ++i) a_i[i] = times(e[i], y[i]);
    }
  });

  // Stage 1 at z_n, for the runs of members without an FSAL evaluation.
  for (std::int64_t m = first; m < first + count;) {
    if (fsal_ready_[idx(m)]) {
      ++m;
      continue;
    }
    std::int64_t end = m;
    while (end < first + count && !fsal_ready_[idx(end)]) ++end;
    evaluate(0, m, end - m, y_.data());
    m = end;
  }

  // One element-wise region per stage: the previous stage's k, then this stage's input.
  for (int i = 1; i < s; ++i) {
    const bool is_fsal = plan_.fsal_stage && i == s - 1;
    for_members([&](std::int64_t m) {
      make_k(i - 1, m);
      if (is_fsal) {
        combine(plan_.solution, m, h, row(candidate_, m));
      } else {
        combine(plan_.stage_inputs[idx(i)], m, h, row(inputs_, m));
      }
    });
    evaluate(i, first, count, is_fsal ? candidate_.data() : inputs_.data());
  }

  // The last k, the solution (unless the FSAL stage made it), finiteness and the error norm.
  for_members([&](std::int64_t m) {
    make_k(s - 1, m);
    if (!plan_.fsal_stage) combine(plan_.solution, m, h, row(candidate_, m));
    const Complex* c = row(candidate_, m);
    double sum = 0;
    for (std::int64_t i = 0; i < n_; ++i) sum += std::norm(c[i]);
    finite_[idx(m)] = std::isfinite(sum) ? 1 : 0;
    if (tableau_.has_error_estimate()) {
      Complex* err = row(scratch_, m);
      combine(plan_.error, m, h, err);
      norm_[idx(m)] = error_norm(control_[idx(m)], err, row(y_, m), c, n_);
    } else {
      norm_[idx(m)] = std::numeric_limits<double>::quiet_NaN();
    }
  });
}

void Stepper::accept(std::int64_t member) {
  Complex* y = row(y_, member);
  const Complex* c = row(candidate_, member);
  std::copy(c, c + n_, y);
  fsal_ready_[idx(member)] = 0;
  fsal_pending_[idx(member)] = plan_.fsal_stage ? 1 : 0;
}

void Stepper::dense_output(std::int64_t member, double theta, Complex* out) const {
  if (!tableau_.has_dense_output()) invalid_argument(kWhere, tableau_.name, " has no dense output");
  if (!(theta >= 0 && theta <= 1)) invalid_argument(kWhere, "θ = ", theta, " outside [0, 1]");
  const double h = trial_h_[idx(member)];
  const auto w = tableau_.dense_weights(theta);
  const Complex* a_i = row(frame_, member);
  std::copy(a_i, a_i + n_, out);
  for (int j = 0; j < plan_.stages; ++j) {
    if (w[idx(j)] == 0) continue;
    const Complex* k = k_row(j, member);
    const double hw = h * w[idx(j)];
    for (std::int64_t i = 0; i < n_; ++i) out[i] += hw * k[i];
  }
  const auto linear = problem_.linear(member);
  const double x = (theta - plan_.sigma) * h;
  for (std::int64_t i = 0; i < n_; ++i) {
    const Complex l = linear[idx(i)] * x;
    out[i] *= std::exp(l.real()) * Complex(std::cos(l.imag()), std::sin(l.imag()));
  }
}

std::int64_t Stepper::bytes_per_member(const Tableau& tableau, std::int64_t points) {
  // y, candidate, A_I, stage input, error; N_j and k_j per stage; at most 2s + 1 exponentials.
  const std::int64_t s = tableau.stages();
  return (5 + 2 * s + 2 * s + 1) * points * static_cast<std::int64_t>(sizeof(Complex));
}

}  // namespace lockstep::prop
