#include "lockstep/qkan/model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "lockstep/core/error.hpp"

namespace lockstep::qkan {

using lockstep::to_string;

namespace {

constexpr std::string_view kWhere = "qkan.model";

/// The values of `name`, which must have shape `want`.
std::vector<double> take(const safetensors::File& f, const std::string& name, const Shape& want) {
  const auto it = f.tensors.find(name);
  if (it == f.tensors.end()) invalid_argument(kWhere, "the model file has no tensor '", name, "'");
  if (it->second.shape != want)
    invalid_argument(kWhere, "'", name, "' has shape ", to_string(it->second.shape), ", expected ", to_string(want));
  return safetensors::to_values<double>(it->second, name);
}

}  // namespace

Activation parse_activation(std::string_view name) {
  if (name == "silu") return Activation::silu;
  if (name == "gelu") return Activation::gelu;
  if (name == "relu") return Activation::relu;
  if (name == "tanh") return Activation::tanh;
  if (name == "sigmoid") return Activation::sigmoid;
  invalid_argument(kWhere, "unknown base activation '", name, "'; supported: silu, gelu, relu, tanh, sigmoid");
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::silu: return "silu";
    case Activation::gelu: return "gelu";
    case Activation::relu: return "relu";
    case Activation::tanh: return "tanh";
    case Activation::sigmoid: return "sigmoid";
  }
  invalid_argument(kWhere, "unknown activation value");
}

double activate(Activation a, double x) {
  switch (a) {
    case Activation::silu: return x / (1 + std::exp(-x));
    case Activation::gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::relu: return x > 0 ? x : 0;
    case Activation::tanh: return std::tanh(x);
    case Activation::sigmoid: return 1 / (1 + std::exp(-x));
  }
  invalid_argument(kWhere, "unknown activation value");
}

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// d activate / dx.
double activate_slope(Activation a, double x) {
  switch (a) {
    case Activation::silu: {
      const double s = sigmoid(x);
      return s * (1 + x * (1 - s));
    }
    case Activation::gelu: return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    case Activation::relu: return x > 0 ? 1 : 0;
    case Activation::tanh: {
      const double t = std::tanh(x);
      return 1 - t * t;
    }
    case Activation::sigmoid: {
      const double s = sigmoid(x);
      return s * (1 - s);
    }
  }
  invalid_argument(kWhere, "unknown activation value");
}

Options solver_options(const Model& m) {
  Options opt;
  opt.ansatz = m.options.ansatz;
  opt.reps = m.reps;
  opt.preacts_trainable = m.options.preacts_trainable;
  opt.fast_measure = m.options.fast_measure;
  return opt;
}

std::vector<double> effective_weight(const LayerParams& L) {  // W = pw·mask
  std::vector<double> W(L.mask.size());
  for (std::size_t k = 0; k < W.size(); ++k) W[k] = L.postact_weights[k] * L.mask[k];
  return W;
}

struct LayerViews {
  ConstTensor theta, w, c;
};
LayerViews views(const Model& m, const LayerParams& L) {
  const std::int64_t R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  return {const_view(L.theta.data(), {L.out, L.in, R, K}), const_view(L.preacts_weight.data(), {L.out, L.in, m.reps}),
          const_view(L.preacts_bias.data(), {L.out, L.in, m.reps})};
}

std::vector<double> layer_forward(const Model& m, const LayerParams& L, const std::vector<double>& in, std::int64_t B) {
  const std::int64_t I = L.in, O = L.out;
  const std::vector<double> W = effective_weight(L);
  const LayerViews v = views(m, L);
  std::vector<double> y(B * O);
  contract_forward(solver_options(m), const_view(in.data(), {B, I}), v.theta, v.w, v.c, const_view(W.data(), {O, I}),
                   mut_view(y.data(), {B, O}));
  std::vector<double> bias(O, 0.0), base(I);  // Σ_i pb·pw·mask, then the base branch
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t i = 0; i < I; ++i) bias[o] += L.postact_bias[o * I + i] * W[o * I + i];
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t i = 0; i < I; ++i) base[i] = activate(m.options.base_activation, in[b * I + i]);
    for (std::int64_t o = 0; o < O; ++o) {
      double s = bias[o];
      for (std::int64_t i = 0; i < I; ++i) s += base[i] * L.base_weight[o * I + i] * L.mask[o * I + i];
      y[b * O + o] += s;
    }
  }
  return y;
}

/// Backward of one layer given gy = dL/dy (B, O): its parameter gradients into g (zeros for
/// what does not train) and, when gx is given, dL/d(its input).
void layer_backward(const Model& m, const LayerParams& L, const std::vector<double>& in, std::int64_t B,
                    const std::vector<double>& gy, LayerParams& g, std::vector<double>* gx) {
  const std::int64_t I = L.in, O = L.out;
  const ModelOptions& mo = m.options;
  const bool encoding = encoding_active(mo.ansatz, mo.preacts_trainable);
  const std::vector<double> W = effective_weight(L);
  const LayerViews v = views(m, L);
  g.in = I, g.out = O;
  g.theta.assign(L.theta.size(), 0.0);
  g.preacts_weight.assign(L.preacts_weight.size(), 0.0);
  g.preacts_bias.assign(L.preacts_bias.size(), 0.0);
  for (auto* t : {&g.base_weight, &g.postact_weights, &g.postact_bias, &g.mask}) t->assign(O * I, 0.0);
  std::vector<double> gW(O * I, 0.0);
  if (gx) gx->assign(B * I, 0.0);
  Grads grads;
  const std::int64_t R = theta_rows(mo.ansatz, m.reps), K = theta_cols(mo.ansatz);
  grads.theta = mut_view(g.theta.data(), {O, I, R, K});
  if (encoding) {
    grads.w = mut_view(g.preacts_weight.data(), {O, I, m.reps});
    grads.c = mut_view(g.preacts_bias.data(), {O, I, m.reps});
  }
  if (mo.postact_weight_trainable) grads.W = mut_view(gW.data(), {O, I});
  if (gx) grads.x = mut_view(gx->data(), {B, I});
  contract_backward(solver_options(m), const_view(in.data(), {B, I}), v.theta, v.w, v.c, const_view(W.data(), {O, I}),
                    const_view(gy.data(), {B, O}), grads);
  std::vector<double> colsum(O, 0.0);  // Σ_b gy[b, o]: the pb term's gradient
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t o = 0; o < O; ++o) colsum[o] += gy[b * O + o];
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t i = 0; i < I; ++i) {
      const std::int64_t k = o * I + i;
      if (mo.postact_weight_trainable) g.postact_weights[k] = (gW[k] + colsum[o] * L.postact_bias[k]) * L.mask[k];
      if (mo.postact_bias_trainable) g.postact_bias[k] = colsum[o] * W[k];
    }
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < I; ++i) {
      const double xv = in[b * I + i];
      if (mo.ba_trainable) {
        const double a = activate(mo.base_activation, xv);
        for (std::int64_t o = 0; o < O; ++o) g.base_weight[o * I + i] += gy[b * O + o] * a * L.mask[o * I + i];
      }
      if (gx) {
        double s = 0;
        for (std::int64_t o = 0; o < O; ++o) s += gy[b * O + o] * L.base_weight[o * I + i] * L.mask[o * I + i];
        (*gx)[b * I + i] += s * activate_slope(mo.base_activation, xv);
      }
    }
}

void check_batch(const Model& m, std::span<const double> x, std::int64_t B) {
  if (m.widths.size() < 2 || m.layers.size() + 1 != m.widths.size())
    invalid_argument(kWhere, "the model has ", m.layers.size(), " layers for ", m.widths.size(), " widths");
  if (B < 0 || static_cast<std::int64_t>(x.size()) != B * m.widths[0])
    invalid_argument(kWhere, "x has ", x.size(), " values, expected B·", m.widths[0], " = ", B * m.widths[0]);
}

/// The loss of outputs y (B, O) and, when gy is given, dL/dy.
double loss_of(std::span<const double> y, std::span<const double> t, std::int64_t B, std::int64_t O, Loss kind,
               std::vector<double>* gy) {
  if (gy) gy->assign(y.size(), 0.0);
  double total = 0;
  if (kind == Loss::mse) {
    if (static_cast<std::int64_t>(t.size()) != B * O)
      invalid_argument(kWhere, "mse targets have ", t.size(), " values, expected B·O = ", B * O);
    const double n = double(B * O);
    for (std::size_t k = 0; k < y.size(); ++k) {
      const double d = y[k] - t[k];
      total += d * d;
      if (gy) (*gy)[k] = 2 * d / n;
    }
    return total / n;
  }
  if (static_cast<std::int64_t>(t.size()) != B) invalid_argument(kWhere, "cross-entropy targets have ", t.size(), " values, expected B = ", B);
  for (std::int64_t b = 0; b < B; ++b) {
    const double c = t[b];
    if (!(c >= 0 && c < double(O) && c == std::floor(c)))
      invalid_argument(kWhere, "cross-entropy target ", c, " of row ", b, " is not a class index in [0, ", O, ")");
    const double* row = y.data() + b * O;
    const double mx = *std::max_element(row, row + O);
    double z = 0;
    for (std::int64_t o = 0; o < O; ++o) z += std::exp(row[o] - mx);
    total += mx + std::log(z) - row[static_cast<std::int64_t>(c)];
    if (gy)
      for (std::int64_t o = 0; o < O; ++o)
        (*gy)[b * O + o] = (std::exp(row[o] - mx) / z - (o == static_cast<std::int64_t>(c) ? 1 : 0)) / double(B);
  }
  return total / double(B);
}

}  // namespace

Loss parse_loss(std::string_view name) {
  if (name == "mse") return Loss::mse;
  if (name == "cross_entropy" || name == "ce") return Loss::cross_entropy;
  invalid_argument(kWhere, "unknown loss '", name, "'; supported: mse, cross_entropy");
}

std::vector<double> forward(const Model& m, std::span<const double> x, std::int64_t B) {
  check_batch(m, x, B);
  std::vector<double> in(x.begin(), x.end());
  for (const LayerParams& L : m.layers) in = layer_forward(m, L, in, B);
  return in;
}

double loss(const Model& m, std::span<const double> x, std::span<const double> targets, std::int64_t B, Loss kind) {
  return loss_of(forward(m, x, B), targets, B, m.widths.back(), kind, nullptr);
}

double loss_and_gradient(const Model& m, std::span<const double> x, std::span<const double> targets, std::int64_t B,
                         Loss kind, std::vector<LayerParams>& grad) {
  check_batch(m, x, B);
  std::vector<std::vector<double>> inputs{std::vector<double>(x.begin(), x.end())};
  for (const LayerParams& L : m.layers) inputs.push_back(layer_forward(m, L, inputs.back(), B));
  std::vector<double> gy;
  const double value = loss_of(inputs.back(), targets, B, m.widths.back(), kind, &gy);
  grad.resize(m.layers.size());
  for (std::size_t k = m.layers.size(); k-- > 0;) {
    std::vector<double> gx;
    layer_backward(m, m.layers[k], inputs[k], B, gy, grad[k], k > 0 ? &gx : nullptr);
    gy = std::move(gx);
  }
  return value;
}

Model from_safetensors(const safetensors::File& f, const ModelOptions& options) {
  Model m;
  m.options = options;
  for (std::size_t k = 0;; ++k) {
    const std::string p = "layers." + std::to_string(k) + ".";
    const auto theta = f.tensors.find(p + "theta");
    if (theta == f.tensors.end()) break;
    const Shape& ts = theta->second.shape;
    if (ts.size() != 4)
      invalid_argument(kWhere, "'", p, "theta' has shape ", to_string(ts),
                       "; expected the natural (out, in, R', k) (grouped θ is not supported in model files)");
    const std::int64_t O = ts[0], I = ts[1];
    const auto pre = f.tensors.find(p + "preacts_weight");
    if (pre == f.tensors.end()) invalid_argument(kWhere, "the model file has no tensor '", p, "preacts_weight'");
    if (pre->second.shape.size() != 3 || pre->second.shape[2] < 1)
      invalid_argument(kWhere, "'", p, "preacts_weight' has shape ", to_string(pre->second.shape), ", expected (out, in, reps)");
    const int reps = static_cast<int>(pre->second.shape[2]);
    if (k == 0) {
      m.reps = reps;
      m.widths.push_back(I);
    } else if (reps != m.reps) {
      invalid_argument(kWhere, "'", p, "preacts_weight' has ", reps, " reps but layer 0 has ", m.reps);
    } else if (I != m.widths.back()) {
      invalid_argument(kWhere, "layer ", k, " takes ", I, " inputs but layer ", k - 1, " gives ", m.widths.back());
    }
    LayerParams L;
    L.in = I, L.out = O;
    L.theta = take(f, p + "theta", {O, I, theta_rows(options.ansatz, reps), theta_cols(options.ansatz)});
    L.preacts_weight = take(f, p + "preacts_weight", {O, I, reps});
    L.preacts_bias = take(f, p + "preacts_bias", {O, I, reps});
    L.base_weight = take(f, p + "base_weight", {O, I});
    L.postact_weights = take(f, p + "postact_weights", {O, I});
    L.postact_bias = take(f, p + "postact_bias", {O, I});
    L.mask = take(f, p + "mask", {O, I});
    m.widths.push_back(O);
    m.layers.push_back(std::move(L));
  }
  if (m.layers.empty()) invalid_argument(kWhere, "the model file has no 'layers.0.theta'");
  return m;
}

safetensors::File to_safetensors(const Model& m, DType dtype) {
  safetensors::File f;
  const ModelOptions& o = m.options;
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  f.metadata = {{"ansatz", qkan::to_string(o.ansatz)},
                {"preacts_trainable", flag(o.preacts_trainable)},
                {"fast_measure", flag(o.fast_measure)},
                {"base_activation", to_string(o.base_activation)},
                {"ba_trainable", flag(o.ba_trainable)},
                {"postact_weight_trainable", flag(o.postact_weight_trainable)},
                {"postact_bias_trainable", flag(o.postact_bias_trainable)}};
  auto put = [&](const std::string& name, const std::vector<double>& v, Shape shape) {
    if (dtype == DType::f64) {
      f.tensors[name] = safetensors::from_values<double>(v, std::move(shape));
    } else {
      const std::vector<float> vf(v.begin(), v.end());
      f.tensors[name] = safetensors::from_values<float>(vf, std::move(shape));
    }
  };
  const std::int64_t R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  for (std::size_t k = 0; k < m.layers.size(); ++k) {
    const LayerParams& L = m.layers[k];
    const std::string p = "layers." + std::to_string(k) + ".";
    put(p + "theta", L.theta, {L.out, L.in, R, K});
    put(p + "preacts_weight", L.preacts_weight, {L.out, L.in, m.reps});
    put(p + "preacts_bias", L.preacts_bias, {L.out, L.in, m.reps});
    put(p + "base_weight", L.base_weight, {L.out, L.in});
    put(p + "postact_weights", L.postact_weights, {L.out, L.in});
    put(p + "postact_bias", L.postact_bias, {L.out, L.in});
    put(p + "mask", L.mask, {L.out, L.in});
  }
  return f;
}

ModelOptions options_from_metadata(const safetensors::File& f, ModelOptions o) {
  auto flag = [&](const char* key, bool& out) {
    const auto it = f.metadata.find(key);
    if (it == f.metadata.end()) return;
    if (it->second != "true" && it->second != "false")
      invalid_argument(kWhere, "model metadata '", key, "' is '", it->second, "', expected true or false");
    out = it->second == "true";
  };
  if (const auto it = f.metadata.find("ansatz"); it != f.metadata.end()) o.ansatz = parse_ansatz(it->second);
  if (const auto it = f.metadata.find("base_activation"); it != f.metadata.end()) o.base_activation = parse_activation(it->second);
  flag("preacts_trainable", o.preacts_trainable);
  flag("fast_measure", o.fast_measure);
  flag("ba_trainable", o.ba_trainable);
  flag("postact_weight_trainable", o.postact_weight_trainable);
  flag("postact_bias_trainable", o.postact_bias_trainable);
  return o;
}

}  // namespace lockstep::qkan
