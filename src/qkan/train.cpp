#include "lockstep/qkan/train.hpp"

#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "lockstep/core/error.hpp"
#include "lockstep/core/progress.hpp"
#include "lockstep/qkan/model_engine.hpp"
#include "lockstep/qkan/optim.hpp"

namespace lockstep::qkan {

namespace {

constexpr std::string_view kWhere = "qkan.fit";

struct Formula {
  const char* name;
  int arity;
  double (*f)(const double* x);
};
const Formula kFormulas[] = {
    {"j0like", 1, [](const double* x) { return x[0] == 0 ? 1.0 : std::sin(20 * x[0]) / (20 * x[0]); }},
    {"sin", 1, [](const double* x) { return std::sin(M_PI * x[0]); }},
    {"exp_sin", 2, [](const double* x) { return std::exp(std::sin(M_PI * x[0]) + x[1] * x[1]); }},
    {"product", 2, [](const double* x) { return x[0] * x[1]; }},
    {"sum_squares", 3, [](const double* x) { return x[0] * x[0] + x[1] * x[1] + x[2] * x[2]; }},
};

const Formula& formula(std::string_view name) {
  for (const Formula& f : kFormulas)
    if (name == f.name) return f;
  std::string known;
  for (const Formula& f : kFormulas) known += (known.empty() ? "" : ", ") + std::string(f.name);
  invalid_argument(kWhere, "unknown formula '", name, "'; built in: ", known);
}

/// Visits the trainable parameter vectors of `model` (or of a gradient shaped like it) in the
/// order trainable_values documents.
template <class Layers, class F> void for_trainable(const ModelOptions& o, Layers& layers, F&& f) {
  const bool enc = encoding_active(o.ansatz, o.preacts_trainable);
  for (auto& L : layers) {
    f(L.theta);
    if (enc) f(L.preacts_weight), f(L.preacts_bias);
    if (o.ba_trainable) f(L.base_weight);
    if (o.postact_weight_trainable) f(L.postact_weights);
    if (o.postact_bias_trainable) f(L.postact_bias);
  }
}

}  // namespace

Dataset make_dataset(std::string_view name, double lo, double hi, std::int64_t n_train, std::int64_t n_test,
                     std::uint64_t seed) {
  const Formula& f = formula(name);
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    invalid_argument(kWhere, "the input range [", lo, ", ", hi, "] is empty or not finite");
  if (n_train < 1 || n_test < 0) invalid_argument(kWhere, "needs at least one training row and no negative count");
  Dataset d;
  d.n_in = f.arity, d.n_out = 1, d.n_train = n_train, d.n_test = n_test;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  auto draw = [&](std::int64_t n, std::vector<double>& x, std::vector<double>& y) {
    x.resize(n * f.arity), y.resize(n);
    for (std::int64_t r = 0; r < n; ++r) {
      for (int k = 0; k < f.arity; ++k) x[r * f.arity + k] = u(rng);
      y[r] = f.f(&x[r * f.arity]);
    }
  };
  draw(n_train, d.train_x, d.train_y);
  draw(n_test, d.test_x, d.test_y);
  return d;
}

Model init_model(const std::vector<std::int64_t>& widths, int reps, const ModelOptions& options, std::uint64_t seed) {
  if (widths.size() < 2) invalid_argument(kWhere, "a model needs at least two widths, got ", widths.size());
  for (std::int64_t w : widths)
    if (w < 1) invalid_argument(kWhere, "widths must be >= 1");
  if (reps < 1 || reps > 64) invalid_argument(kWhere, "reps must be in [1, 64], got ", reps);
  Model m;
  m.options = options;
  m.reps = reps;
  m.widths = widths;
  std::mt19937_64 rng(seed);
  const std::int64_t R = theta_rows(options.ansatz, reps), K = theta_cols(options.ansatz);
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) {
    LayerParams L;
    L.in = widths[k], L.out = widths[k + 1];
    const std::int64_t E = L.in * L.out;
    std::normal_distribution<double> N(0.0, std::sqrt(2.0 / double((L.in + L.out) * R * K)));
    L.theta.resize(E * R * K);
    for (double& v : L.theta) v = N(rng);
    L.preacts_weight.assign(E * reps, 1.0);
    L.preacts_bias.assign(E * reps, 0.0);
    L.base_weight.assign(E, options.ba_trainable ? 0.5 : 0.0);
    L.postact_weights.assign(E, 1.0);
    L.postact_bias.assign(E, 0.0);
    L.mask.assign(E, 1.0);
    m.layers.push_back(std::move(L));
  }
  return m;
}

std::vector<double> trainable_values(const Model& m) {
  std::vector<double> out;
  for_trainable(m.options, m.layers, [&](const std::vector<double>& v) { out.insert(out.end(), v.begin(), v.end()); });
  return out;
}

void set_trainable_values(Model& m, std::span<const double> values) {
  std::size_t at = 0;
  for_trainable(m.options, m.layers, [&](std::vector<double>& v) {
    if (at + v.size() > values.size()) invalid_argument(kWhere, "too few values for the model's trainable parameters");
    std::copy(values.begin() + at, values.begin() + at + v.size(), v.begin());
    at += v.size();
  });
  if (at != values.size()) invalid_argument(kWhere, values.size(), " values for ", at, " trainable parameters");
}

std::vector<double> trainable_gradient(const Model& m, const std::vector<LayerParams>& grad) {
  std::vector<double> out;
  for_trainable(m.options, grad, [&](const std::vector<double>& v) { out.insert(out.end(), v.begin(), v.end()); });
  return out;
}

namespace {

/// Rows of one step: the host copy, and whether they are the whole training set in order.
struct StepRows {
  const std::vector<double>& x;
  const std::vector<double>& y;
  std::int64_t rows;
  bool whole;
};

LbfgsOptions lbfgs_options(const FitOptions& o) {
  LbfgsOptions lo;
  lo.lr = o.lr, lo.max_iter = o.lbfgs_max_iter, lo.history = o.lbfgs_history;
  lo.tolerance_grad = lo.tolerance_change = o.lbfgs_tolerance;
  return lo;
}

/// A fit's evaluations and updates on the model's engine (model_engine.hpp), the data sets
/// loaded into it once. Adam keeps its moments beside the engine's parameters; L-BFGS keeps its
/// state on the host and hands the engine the parameters it tries (on CUDA a copy up per
/// evaluation and the gradient down).
class Training {
 public:
  Training(Model& m, const Dataset& d, const FitOptions& o)
      : m_(m),
        o_(o),
        engine_(make_model_engine(m, o.device)),
        train_(engine_->make_rows()),
        test_(engine_->make_rows()),
        step_(engine_->make_rows()),
        lbfgs_(trainable_values(m).size(), lbfgs_options(o)) {
    engine_->load(*train_, d.train_x, d.n_train, d.train_y, o.loss);
    if (d.n_test) engine_->load(*test_, d.test_x, d.n_test, d.test_y, o.loss);
    if (o.optimizer == "adam") adam_ = engine_->make_adam(AdamOptions{.lr = o.lr});
  }

  /// The loss at the current parameters on the rows, and its gradient for adam_step.
  double loss_and_gradient(const StepRows& r) { return engine_->loss_and_gradient(rows(r)); }
  void adam_step() { adam_->step(); }
  /// One L-BFGS step on the rows; the loss at the parameters it leaves.
  double lbfgs_step(const StepRows& r) {
    ModelRows& b = rows(r);
    std::vector<double> params = trainable_values(m_);
    const double v = lbfgs_.step(params, [&](std::span<const double> p, std::span<double> g) {
      set_trainable_values(m_, p);
      engine_->reload();
      const double value = engine_->loss_and_gradient(b);
      const std::vector<double> flat = trainable_gradient(m_, engine_->gradient());
      std::copy(flat.begin(), flat.end(), g.begin());
      return value;
    });
    set_trainable_values(m_, params);
    engine_->reload();
    return v;
  }
  long lbfgs_evaluations() const { return lbfgs_.evaluations(); }
  double train_loss() { return engine_->loss(*train_); }
  double test_loss() { return engine_->loss(*test_); }
  /// The engine's parameters into the model.
  void store() { engine_->store(); }

 private:
  ModelRows& rows(const StepRows& r) {
    if (r.whole) return *train_;
    engine_->load(*step_, r.x, r.rows, r.y, o_.loss);
    return *step_;
  }

  Model& m_;
  const FitOptions& o_;
  std::unique_ptr<ModelEngine> engine_;
  std::unique_ptr<ModelRows> train_, test_, step_;
  std::unique_ptr<ModelOptimizer> adam_;
  Lbfgs lbfgs_;
};

History fit_with(Model& m, const Dataset& d, const FitOptions& o, std::int64_t batch) {
  const std::int64_t tcols = o.loss == Loss::mse ? d.n_out : 1;
  History h;
  const auto t0 = std::chrono::steady_clock::now();
  Training training(m, d, o);
  std::vector<std::int64_t> order(d.n_train);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed);
  std::vector<double> bx, by;
  const StepRows rows{bx, by, batch, batch == d.n_train};
  auto take_batch = [&](std::int64_t start) {  // rows order[start .. start + batch)
    bx.resize(batch * d.n_in), by.resize(batch * tcols);
    for (std::int64_t r = 0; r < batch; ++r) {
      const std::int64_t src = order[(start + r) % d.n_train];
      std::copy_n(d.train_x.begin() + src * d.n_in, d.n_in, bx.begin() + r * d.n_in);
      std::copy_n(d.train_y.begin() + src * tcols, tcols, by.begin() + r * tcols);
    }
  };
  auto non_finite = [&](int step) {
    training.store();
    runtime_failure(kWhere, "the loss became non-finite at step ", step);
  };
  Progress bar("fit", o.steps, "steps", o.progress);
  std::int64_t cursor = 0;
  long adam_evaluations = 0;
  for (int step = 0; step < o.steps; ++step) {
    if (batch < d.n_train && cursor % d.n_train == 0) std::shuffle(order.begin(), order.end(), rng);
    take_batch(cursor);
    cursor += batch;
    double train_loss = NAN;
    if (o.optimizer == "adam") {
      ++adam_evaluations;
      if (!std::isfinite(training.loss_and_gradient(rows))) non_finite(step);
      training.adam_step();
    } else {
      train_loss = training.lbfgs_step(rows);
    }
    // On the whole training set, L-BFGS's last value is the training loss at params, bit for
    // bit as loss() computes it (the same rows in the same order); otherwise evaluate it.
    if (o.optimizer == "adam" || batch < d.n_train) train_loss = training.train_loss();
    h.train_loss.push_back(train_loss);
    h.test_loss.push_back(d.n_test ? training.test_loss() : NAN);
    if (!std::isfinite(h.train_loss.back())) non_finite(step);
    char detail[96];
    std::snprintf(detail, sizeof detail, "train %.3e  test %.3e", h.train_loss.back(), h.test_loss.back());
    bar.update(step + 1, detail);
  }
  bar.finish();
  training.store();
  h.evaluations = adam_evaluations + training.lbfgs_evaluations();
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

}  // namespace

History fit(Model& m, const Dataset& d, const FitOptions& o) {
  if (d.n_in != m.widths.front() || (o.loss == Loss::mse && d.n_out != m.widths.back()))
    invalid_argument(kWhere, "the data has ", d.n_in, " inputs and ", d.n_out, " targets per row; the model takes ",
                     m.widths.front(), " and gives ", m.widths.back());
  if (o.steps < 0) invalid_argument(kWhere, "steps must be >= 0");
  if (o.optimizer != "lbfgs" && o.optimizer != "adam")
    invalid_argument(kWhere, "unknown optimizer '", o.optimizer, "'; supported: lbfgs, adam");
  const std::int64_t batch = o.batch < 0 ? d.n_train : std::min<std::int64_t>(o.batch, d.n_train);
  if (batch < 1) invalid_argument(kWhere, "batch must be >= 1 or -1 (the whole training set)");
  return fit_with(m, d, o, batch);
}

}  // namespace lockstep::qkan
