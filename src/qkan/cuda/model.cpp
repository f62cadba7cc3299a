// CudaModel, CudaBatch and CudaAdam (cuda_model.hpp): device memory, the parameters' layout,
// and the model's forward and backward as calls of the contracted CUDA solver between the
// kernels of model_kernels.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "lockstep/core/error.hpp"
#include "lockstep/qkan/cuda_model.hpp"
#include "src/core/cuda/runtime.hpp"
#include "src/qkan/cuda/launch.hpp"
#include "src/qkan/cuda/model_kernels.hpp"

namespace lockstep::qkan {

namespace {

constexpr std::string_view kWhere = "qkan.cuda_model";
namespace kernels = detail::cuda_model;

// Every call of the model runs on the legacy default stream (cuda_model.hpp), which orders
// the synchronous copies below with the kernels.
constexpr cudaStream_t kStream = nullptr;

void check(cudaError_t e, const char* what) { cuda::check(e, kWhere, what); }

using DeviceMemory = cuda::GrowingBuffer;

/// Room for n values of T in `memory`.
template <class T> T* reserve(DeviceMemory& memory, std::int64_t n) {
  return memory.template reserve<T>(n, kStream, kWhere);
}

void to_device(void* to, const void* from, std::size_t bytes) {
  if (bytes) check(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), "copying to the device");
}
void to_host(void* to, const void* from, std::size_t bytes) {
  if (bytes) check(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToHost), "copying from the device");
}

/// A layer's parameter tensors, in the order of the flat layout below.
constexpr std::array<std::vector<double> LayerParams::*, 7> kFields = {
    &LayerParams::theta,           &LayerParams::preacts_weight, &LayerParams::preacts_bias, &LayerParams::base_weight,
    &LayerParams::postact_weights, &LayerParams::postact_bias,   &LayerParams::mask};
enum FieldIndex { kTheta, kW, kC, kBaseWeight, kPostactWeights, kPostactBias, kMask };

/// Where a tensor lies in the flat parameter array, and whether it trains.
struct Field {
  std::size_t at = 0, n = 0;
  bool trains = false;
};
using LayerLayout = std::array<Field, kFields.size()>;

}  // namespace

// --------------------------------------------------------------------------------------------
// State

struct CudaBatch::State {
  DeviceMemory x, targets;
  std::int64_t rows = 0, width = 0, outputs = 0;
  bool has_targets = false;
  Loss kind = Loss::mse;
};

CudaBatch::CudaBatch() : state_(std::make_unique<State>()) {}
CudaBatch::~CudaBatch() = default;
CudaBatch::CudaBatch(CudaBatch&&) noexcept = default;
CudaBatch& CudaBatch::operator=(CudaBatch&&) noexcept = default;

namespace {

/// One precision's device buffers: per layer its tables in T, its solver gradients in T and
/// one batch's activations; the batch's input in T and the backward's dL/dy, dL/dx.
template <class T> struct Buffers {
  struct Layer {
    DeviceMemory theta, w, c, W, base_w, bias;  // tables
    DeviceMemory gtheta, gw, gc, gW;            // the solver's gradients
    DeviceMemory base, slope, out;              // (rows, in), (rows, in), (rows, out)
  };
  std::vector<Layer> layers;
  DeviceMemory x, gy, gx;
};

}  // namespace

struct CudaModel::State {
  Model host;
  std::vector<LayerLayout> layout;  ///< trainable tensors first (all layers), then the others
  std::size_t n_params = 0, n_trainable = 0;
  DeviceMemory params, grad;  ///< double: every parameter; the trainable ones' gradient
  DeviceMemory terms, loss;   ///< per-row loss terms, the loss
  bool tables_stale = true;   ///< the T tables lag params (after upload or an Adam step)
  bool has_gradient = false;
  Buffers<float> f32;
  Buffers<double> f64;

  template <class T> Buffers<T>& buffers() {
    if constexpr (std::is_same_v<T, float>) return f32;
    else return f64;
  }
  const double* param(std::size_t layer, FieldIndex f) const { return params.as<double>() + layout[layer][f].at; }
  /// The gradient's slot of a trainable tensor, nullptr for one that does not train.
  double* grad_of(std::size_t layer, FieldIndex f) const {
    const Field& field = layout[layer][f];
    return field.trains ? grad.as<double>() + field.at : nullptr;
  }
  std::vector<double> flat(const Model& m) const {
    std::vector<double> v(n_params);
    for (std::size_t k = 0; k < layout.size(); ++k)
      for (std::size_t f = 0; f < kFields.size(); ++f) {
        const std::vector<double>& src = m.layers[k].*kFields[f];
        std::copy(src.begin(), src.end(), v.begin() + layout[k][f].at);
      }
    return v;
  }
};

CudaModel::~CudaModel() = default;
CudaModel::CudaModel(CudaModel&&) noexcept = default;
CudaModel& CudaModel::operator=(CudaModel&&) noexcept = default;

namespace {

/// Fails unless a CUDA device is usable.
void require_device() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess)
    runtime_failure(kWhere,
                    "cannot run the model on CUDA: no usable CUDA device (cudaGetDeviceCount: ", cudaGetErrorString(e),
                    ")");
  if (n == 0) runtime_failure(kWhere, "cannot run the model on CUDA: no CUDA device is visible");
}

/// The flat layout of m's parameters, after checking every tensor's size.
std::vector<LayerLayout> layout_of(const Model& m, std::size_t& n_params, std::size_t& n_trainable) {
  const ModelOptions& o = m.options;
  if (m.widths.size() < 2 || m.layers.size() + 1 != m.widths.size())
    invalid_argument(kWhere, "the model has ", m.layers.size(), " layers for ", m.widths.size(), " widths");
  if (o.compute != DType::f32 && o.compute != DType::f64) invalid_argument(kWhere, "unknown compute precision");
  const bool enc = encoding_active(o.ansatz, o.preacts_trainable);
  const std::array<bool, kFields.size()> trains = {
      true, enc, enc, o.ba_trainable, o.postact_weight_trainable, o.postact_bias_trainable, false};
  const std::int64_t RK = theta_rows(o.ansatz, m.reps) * theta_cols(o.ansatz);
  std::vector<LayerLayout> layout(m.layers.size());
  for (std::size_t k = 0; k < m.layers.size(); ++k) {
    const LayerParams& L = m.layers[k];
    if (L.in != m.widths[k] || L.out != m.widths[k + 1])
      invalid_argument(kWhere, "layer ", k, " is ", L.in, " -> ", L.out, " but the widths say ", m.widths[k], " -> ",
                       m.widths[k + 1]);
    const std::int64_t E = L.in * L.out;
    const std::array<std::int64_t, kFields.size()> sizes = {E * RK, E * m.reps, E * m.reps, E, E, E, E};
    for (std::size_t f = 0; f < kFields.size(); ++f) {
      if (static_cast<std::int64_t>((L.*kFields[f]).size()) != sizes[f])
        invalid_argument(kWhere, "layer ", k, " has a parameter tensor (number ", f,
                         " of theta, preacts_weight, "
                         "preacts_bias, base_weight, postact_weights, postact_bias, mask) of ",
                         (L.*kFields[f]).size(), " values, expected ", sizes[f]);
      layout[k][f].n = static_cast<std::size_t>(sizes[f]);
      layout[k][f].trains = trains[f];
    }
  }
  std::size_t at = 0;
  for (bool training : {true, false}) {
    for (LayerLayout& l : layout)
      for (Field& f : l)
        if (f.trains == training) f.at = at, at += f.n;
    if (training) n_trainable = at;
  }
  n_params = at;
  return layout;
}

template <class T> ConstTensor in_view(const T* p, Shape shape) {
  return const_view<T>(p, std::move(shape), Device::cuda);
}
template <class T> MutTensor out_view(T* p, Shape shape) { return mut_view<T>(p, std::move(shape), Device::cuda); }

/// The T tables of every layer from the double parameters.
template <class T> void refresh_tables(CudaModel::State& s) {
  Buffers<T>& buf = s.buffers<T>();
  buf.layers.resize(s.layout.size());
  for (std::size_t k = 0; k < s.layout.size(); ++k) {
    typename Buffers<T>::Layer& b = buf.layers[k];
    const LayerLayout& l = s.layout[k];
    const std::int64_t O = s.host.layers[k].out, I = s.host.layers[k].in;
    kernels::convert(s.param(k, kTheta), reserve<T>(b.theta, l[kTheta].n), l[kTheta].n, nullptr);
    kernels::convert(s.param(k, kW), reserve<T>(b.w, l[kW].n), l[kW].n, nullptr);
    kernels::convert(s.param(k, kC), reserve<T>(b.c, l[kC].n), l[kC].n, nullptr);
    kernels::layer_tables(s.param(k, kPostactWeights), s.param(k, kPostactBias), s.param(k, kBaseWeight),
                          s.param(k, kMask), O, I, reserve<T>(b.W, O * I), reserve<T>(b.base_w, O * I),
                          reserve<T>(b.bias, O), nullptr);
  }
  s.tables_stale = false;
}

/// The batch's rows through every layer: each layer's base activation (and its slope past
/// layer 0 when `slopes`, for the backward) and output.
template <class T> void forward_on_device(CudaModel::State& s, const CudaBatch::State& batch, bool slopes) {
  if (s.tables_stale) refresh_tables<T>(s);
  Buffers<T>& buf = s.buffers<T>();
  const Model& m = s.host;
  const Options opt = solver_options(m);
  const std::int64_t B = batch.rows, R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  kernels::convert(batch.x.as<double>(), reserve<T>(buf.x, B * m.widths[0]), B * m.widths[0], nullptr);
  const T* in = buf.x.template as<T>();
  for (std::size_t k = 0; k < m.layers.size(); ++k) {
    typename Buffers<T>::Layer& b = buf.layers[k];
    const std::int64_t I = m.layers[k].in, O = m.layers[k].out;
    T* slope = slopes && k > 0 ? reserve<T>(b.slope, B * I) : nullptr;
    kernels::activate(m.options.base_activation, in, reserve<T>(b.base, B * I), slope, B * I, nullptr);
    T* y = reserve<T>(b.out, B * O);
    contract_forward(opt, in_view(in, {B, I}), in_view(b.theta.template as<T>(), {O, I, R, K}),
                     in_view(b.w.template as<T>(), {O, I, m.reps}), in_view(b.c.template as<T>(), {O, I, m.reps}),
                     in_view(b.W.template as<T>(), {O, I}), out_view(y, {B, O}));
    kernels::add_bias_and_base(y, b.bias.template as<T>(), b.base.template as<T>(), b.base_w.template as<T>(), B, O, I,
                               nullptr);
    in = y;
  }
}

/// Queues the loss terms of the forward's output (and dL/dy into gy when given) and their sum
/// into s.loss.
template <class T> void loss_on_device(CudaModel::State& s, const CudaBatch::State& batch, T* gy) {
  const std::int64_t B = batch.rows, O = s.host.widths.back();
  const double n = batch.kind == Loss::mse ? double(B * O) : double(B);
  double* terms = reserve<double>(s.terms, B);
  kernels::loss_terms(s.buffers<T>().layers.back().out.template as<T>(), batch.targets.as<double>(), B, O,
                      batch.kind == Loss::cross_entropy, n, gy, terms, nullptr);
  kernels::sum_terms(terms, B, n, reserve<double>(s.loss, 1), nullptr);
}

/// The loss, once everything queued before has run: the one copy back per evaluation.
double read_loss(const CudaModel::State& s) {
  double value = 0;
  to_host(&value, s.loss.as<double>(), sizeof value);
  return value;
}

/// The backward through every layer from dL/d(model output) in buf.gy, into s.grad.
template <class T> void backward_on_device(CudaModel::State& s, const CudaBatch::State& batch) {
  Buffers<T>& buf = s.buffers<T>();
  const Model& m = s.host;
  const Options opt = solver_options(m);
  const bool enc = encoding_active(m.options.ansatz, m.options.preacts_trainable);
  const std::int64_t B = batch.rows, R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  T* gy = buf.gy.template as<T>();
  T* gx = buf.gx.template as<T>();
  for (std::size_t k = m.layers.size(); k-- > 0;) {
    typename Buffers<T>::Layer& b = buf.layers[k];
    const LayerLayout& l = s.layout[k];
    const std::int64_t I = m.layers[k].in, O = m.layers[k].out;
    const T* in = k == 0 ? buf.x.template as<T>() : buf.layers[k - 1].out.template as<T>();
    Grads grads;
    grads.theta = out_view(reserve<T>(b.gtheta, l[kTheta].n), {O, I, R, K});
    if (enc) {
      grads.w = out_view(reserve<T>(b.gw, l[kW].n), {O, I, m.reps});
      grads.c = out_view(reserve<T>(b.gc, l[kC].n), {O, I, m.reps});
    }
    if (l[kPostactWeights].trains) grads.W = out_view(reserve<T>(b.gW, O * I), {O, I});
    if (k > 0) grads.x = out_view(gx, {B, I});
    contract_backward(opt, in_view(in, {B, I}), in_view(b.theta.template as<T>(), {O, I, R, K}),
                      in_view(b.w.template as<T>(), {O, I, m.reps}), in_view(b.c.template as<T>(), {O, I, m.reps}),
                      in_view(b.W.template as<T>(), {O, I}), in_view(static_cast<const T*>(gy), {B, O}), grads);
    kernels::convert(b.gtheta.template as<T>(), s.grad_of(k, kTheta), l[kTheta].n, nullptr);
    if (enc) {
      kernels::convert(b.gw.template as<T>(), s.grad_of(k, kW), l[kW].n, nullptr);
      kernels::convert(b.gc.template as<T>(), s.grad_of(k, kC), l[kC].n, nullptr);
    }
    // The layer sum: y += Σ_i (pb·W + base·bw·mask) (see model.cpp's chunk_backward).
    kernels::edge_gradients(gy, b.base.template as<T>(), l[kPostactWeights].trains ? b.gW.template as<T>() : nullptr,
                            s.param(k, kPostactWeights), s.param(k, kPostactBias), s.param(k, kMask), B, O, I,
                            s.grad_of(k, kBaseWeight), s.grad_of(k, kPostactWeights), s.grad_of(k, kPostactBias),
                            nullptr);
    if (k > 0) {
      kernels::add_base_gradient(gy, b.base_w.template as<T>(), b.slope.template as<T>(), gx, B, O, I, nullptr);
      std::swap(gy, gx);
    }
  }
}

template <class T> double loss_and_gradient_on_device(CudaModel::State& s, const CudaBatch::State& batch) {
  forward_on_device<T>(s, batch, true);
  std::int64_t widest = 0;
  for (std::int64_t w : s.host.widths) widest = std::max(widest, w);
  Buffers<T>& buf = s.buffers<T>();
  T* gy = reserve<T>(buf.gy, batch.rows * widest);
  reserve<T>(buf.gx, batch.rows * widest);
  reserve<double>(s.grad, static_cast<std::int64_t>(s.n_trainable));
  loss_on_device<T>(s, batch, gy);
  backward_on_device<T>(s, batch);
  s.has_gradient = true;
  return read_loss(s);
}

/// The batch must suit the model (and, for a loss, carry targets).
void check_batch(const CudaModel::State& s, const CudaBatch::State& b, bool loss) {
  if (b.width != s.host.widths.front())
    invalid_argument(kWhere, "the batch has rows of ", b.width, " inputs; the model takes ", s.host.widths.front());
  if (!loss) return;
  if (!b.has_targets) invalid_argument(kWhere, "the batch was loaded without targets; a loss needs them");
  if (b.outputs != s.host.widths.back())
    invalid_argument(kWhere, "the batch's targets were checked for ", b.outputs, " outputs; the model gives ",
                     s.host.widths.back());
  if (b.rows == 0) invalid_argument(kWhere, "the loss of an empty batch is undefined");
}

}  // namespace

// --------------------------------------------------------------------------------------------
// CudaModel

CudaModel::CudaModel(const Model& model) : state_(std::make_unique<State>()) {
  require_device();
  State& s = *state_;
  s.layout = layout_of(model, s.n_params, s.n_trainable);
  s.host = model;
  const std::vector<double> flat = s.flat(model);
  to_device(reserve<double>(s.params, static_cast<std::int64_t>(s.n_params)), flat.data(),
            flat.size() * sizeof(double));
}

void CudaModel::load(CudaBatch& batch, std::span<const double> x, std::int64_t B, std::span<const double> targets,
                     Loss kind) const {
  const Model& m = state_->host;
  const std::int64_t I = m.widths.front(), O = m.widths.back();
  check_inputs(m, x, B);
  CudaBatch::State& b = batch.state();
  b.has_targets = !targets.empty();
  if (!targets.empty()) {
    check_targets(m, targets, B, kind);
    to_device(reserve<double>(b.targets, static_cast<std::int64_t>(targets.size())), targets.data(),
              targets.size_bytes());
  }
  to_device(reserve<double>(b.x, B * I), x.data(), x.size_bytes());
  b.rows = B, b.width = I, b.outputs = O, b.kind = kind;
}

std::vector<double> CudaModel::forward(const CudaBatch& batch) {
  State& s = *state_;
  const CudaBatch::State& b = batch.state();
  check_batch(s, b, false);
  const std::int64_t n = b.rows * s.host.widths.back();
  if (b.rows == 0) return {};
  auto run = [&](auto t) {
    using T = decltype(t);
    forward_on_device<T>(s, b, false);
    std::vector<T> y(n);
    to_host(y.data(), s.buffers<T>().layers.back().out.template as<T>(), y.size() * sizeof(T));
    return std::vector<double>(y.begin(), y.end());
  };
  return s.host.options.compute == DType::f32 ? run(float{}) : run(double{});
}

double CudaModel::loss(const CudaBatch& batch) {
  State& s = *state_;
  const CudaBatch::State& b = batch.state();
  check_batch(s, b, true);
  auto run = [&](auto t) {
    using T = decltype(t);
    forward_on_device<T>(s, b, false);
    loss_on_device<T>(s, b, nullptr);
    return read_loss(s);
  };
  return s.host.options.compute == DType::f32 ? run(float{}) : run(double{});
}

double CudaModel::loss_and_gradient(const CudaBatch& batch) {
  State& s = *state_;
  const CudaBatch::State& b = batch.state();
  check_batch(s, b, true);
  return s.host.options.compute == DType::f32 ? loss_and_gradient_on_device<float>(s, b)
                                              : loss_and_gradient_on_device<double>(s, b);
}

std::vector<LayerParams> CudaModel::gradient() const {
  const State& s = *state_;
  if (!s.has_gradient) invalid_argument(kWhere, "no gradient yet: call loss_and_gradient first");
  std::vector<double> flat(s.n_trainable);
  to_host(flat.data(), s.grad.as<double>(), flat.size() * sizeof(double));
  std::vector<LayerParams> g(s.layout.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    g[k].in = s.host.layers[k].in, g[k].out = s.host.layers[k].out;
    for (std::size_t f = 0; f < kFields.size(); ++f) {
      const Field& field = s.layout[k][f];
      std::vector<double>& v = g[k].*kFields[f];
      if (field.trains) v.assign(flat.begin() + field.at, flat.begin() + field.at + field.n);
      else v.assign(field.n, 0.0);
    }
  }
  return g;
}

void CudaModel::upload(const Model& model) {
  State& s = *state_;
  std::size_t n_params = 0, n_trainable = 0;
  const std::vector<LayerLayout> layout = layout_of(model, n_params, n_trainable);
  const bool same =
      layout.size() == s.layout.size() &&
      std::equal(layout.begin(), layout.end(), s.layout.begin(), [](const LayerLayout& a, const LayerLayout& b) {
        for (std::size_t f = 0; f < a.size(); ++f)
          if (a[f].at != b[f].at || a[f].n != b[f].n || a[f].trains != b[f].trains) return false;
        return true;
      });
  if (!same) invalid_argument(kWhere, "upload() takes a model of the same shapes and trainable parameters");
  s.host = model;
  const std::vector<double> flat = s.flat(model);
  to_device(s.params.as<double>(), flat.data(), flat.size() * sizeof(double));
  s.tables_stale = true;
}

void CudaModel::download(Model& model) {
  State& s = *state_;
  if (model.widths != s.host.widths || model.reps != s.host.reps || model.options.ansatz != s.host.options.ansatz)
    invalid_argument(kWhere, "download() writes into a model of the same widths, reps and ansatz");
  std::vector<double> flat(s.n_params);
  to_host(flat.data(), s.params.as<double>(), flat.size() * sizeof(double));
  for (std::size_t k = 0; k < s.layout.size(); ++k)
    for (std::size_t f = 0; f < kFields.size(); ++f) {
      const Field& field = s.layout[k][f];
      std::vector<double>& v = s.host.layers[k].*kFields[f];
      v.assign(flat.begin() + field.at, flat.begin() + field.at + field.n);
    }
  model.layers = s.host.layers;
}

// --------------------------------------------------------------------------------------------
// CudaAdam

struct CudaAdam::State {
  AdamOptions options;
  DeviceMemory moments;  ///< the first moments m, then the second v: 2n values
  std::size_t n = 0;
  long t = 0;
};

CudaAdam::CudaAdam(const CudaModel& model, AdamOptions options) : state_(std::make_unique<State>()) {
  detail::check_adam_options(options);
  State& s = *state_;
  s.options = options;
  s.n = model.state().n_trainable;
  if (s.n == 0) return;
  check(cudaMemset(reserve<double>(s.moments, 2 * static_cast<std::int64_t>(s.n)), 0, 2 * s.n * sizeof(double)),
        "zeroing Adam's moments");
}
CudaAdam::~CudaAdam() = default;
CudaAdam::CudaAdam(CudaAdam&&) noexcept = default;
CudaAdam& CudaAdam::operator=(CudaAdam&&) noexcept = default;

void CudaAdam::step(CudaModel& model) {
  State& s = *state_;
  CudaModel::State& ms = model.state();
  if (ms.n_trainable != s.n)
    invalid_argument("qkan.adam", "made for ", s.n, " parameters, given a model with ", ms.n_trainable);
  if (!ms.has_gradient) invalid_argument("qkan.adam", "the model has no gradient yet: call loss_and_gradient first");
  double* m = s.moments.as<double>();
  kernels::adam(ms.params.as<double>(), ms.grad.as<double>(), m, m + s.n, static_cast<std::int64_t>(s.n),
                detail::adam_step(s.options, ++s.t), nullptr);
  ms.tables_stale = true;
}

}  // namespace lockstep::qkan
