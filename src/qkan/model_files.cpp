// Models in safetensors files of qkan's state_dict (model.hpp): reading with every tensor's shape
// and values checked, writing with the model's options in the metadata.
#include <algorithm>
#include <cmath>
#include <string>

#include "lockstep/core/error.hpp"
#include "lockstep/qkan/model.hpp"

namespace lockstep::qkan {

using lockstep::to_string;

namespace {

constexpr std::string_view kWhere = "qkan.model";

/// The values of `name`, which must have shape `want` and finite values.
std::vector<double> take(const safetensors::File& f, const std::string& name, const Shape& want) {
  const auto it = f.tensors.find(name);
  if (it == f.tensors.end()) invalid_argument(kWhere, "the model file has no tensor '", name, "'");
  if (it->second.shape != want)
    invalid_argument(kWhere, "'", name, "' has shape ", to_string(it->second.shape), ", expected ", to_string(want));
  std::vector<double> v = safetensors::to_values<double>(it->second, name);
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      invalid_argument(kWhere, "'", name, "' holds a non-finite value (", v[k], ") at index ", k);
  return v;
}

}  // namespace

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
      invalid_argument(kWhere, "'", p, "preacts_weight' has shape ", to_string(pre->second.shape),
                       ", expected (out, in, reps)");
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
  // Strict, as torch's load_state_dict: a tensor the model does not read means the file is not
  // the model it seems to be (another architecture, a missing layer between others, damage).
  for (const auto& [name, tensor] : f.tensors) {
    const auto dot = name.find('.', 7);
    std::size_t layer = m.layers.size();
    if (name.starts_with("layers.") && dot != std::string::npos) {
      const std::string index = name.substr(7, dot - 7);
      if (!index.empty() && index.size() < 10 &&
          std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }))
        layer = std::stoul(index);
    }
    const std::string field = dot == std::string::npos ? "" : name.substr(dot + 1);
    const bool known = field == "theta" || field == "preacts_weight" || field == "preacts_bias" ||
                       field == "base_weight" || field == "postact_weights" || field == "postact_bias" ||
                       field == "mask";
    if (layer >= m.layers.size() || !known || name != "layers." + std::to_string(layer) + "." + field)
      invalid_argument(kWhere, "the model file has a tensor '", name, "' that is not a parameter of a ",
                       m.layers.size(), "-layer QKAN model");
  }
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
  if (const auto it = f.metadata.find("base_activation"); it != f.metadata.end())
    o.base_activation = parse_activation(it->second);
  flag("preacts_trainable", o.preacts_trainable);
  flag("fast_measure", o.fast_measure);
  flag("ba_trainable", o.ba_trainable);
  flag("postact_weight_trainable", o.postact_weight_trainable);
  flag("postact_bias_trainable", o.postact_bias_trainable);
  return o;
}

}  // namespace lockstep::qkan
