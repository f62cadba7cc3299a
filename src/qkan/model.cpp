#include "lockstep/qkan/model.hpp"

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

std::vector<double> forward(const Model& m, std::span<const double> x, std::int64_t B) {
  if (m.widths.size() < 2 || m.layers.size() + 1 != m.widths.size())
    invalid_argument(kWhere, "the model has ", m.layers.size(), " layers for ", m.widths.size(), " widths");
  if (static_cast<std::int64_t>(x.size()) != B * m.widths[0])
    invalid_argument(kWhere, "x has ", x.size(), " values, expected B·", m.widths[0], " = ", B * m.widths[0]);
  Options opt;
  opt.ansatz = m.options.ansatz;
  opt.reps = m.reps;
  opt.preacts_trainable = m.options.preacts_trainable;
  opt.fast_measure = m.options.fast_measure;
  const std::int64_t R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  std::vector<double> in(x.begin(), x.end());
  for (const LayerParams& L : m.layers) {
    const std::int64_t I = L.in, O = L.out;
    std::vector<double> W(O * I), y(B * O);
    for (std::int64_t k = 0; k < O * I; ++k) W[k] = L.postact_weights[k] * L.mask[k];
    contract_forward(opt, const_view(in.data(), {B, I}), const_view(L.theta.data(), {O, I, R, K}),
                     const_view(L.preacts_weight.data(), {O, I, m.reps}), const_view(L.preacts_bias.data(), {O, I, m.reps}),
                     const_view(W.data(), {O, I}), mut_view(y.data(), {B, O}));
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
    in = std::move(y);
  }
  return in;
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

}  // namespace lockstep::qkan
