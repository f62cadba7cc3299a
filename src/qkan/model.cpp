// The CPU model's evaluation (model.hpp): a batch split into row chunks on threads, each chunk
// through every layer (the contracted solver, the layer sums, the base activations) and back;
// losses and gradients summed in a fixed order. Files: model_files.cpp; the losses' checks:
// model_loss.cpp; the activations: activation.cpp.
#include "lockstep/qkan/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "lockstep/core/error.hpp"
#include "lockstep/core/parallel.hpp"
#include "src/qkan/activation_math.hpp"
#include "src/qkan/loss_math.hpp"

namespace lockstep::qkan {

namespace {
constexpr std::string_view kWhere = "qkan.model";
}  // namespace

using detail::with_activation;

/// What the evaluations keep between calls (see Workspace): buffers in the compute precision T.
template <class T> struct Buffers {
  /// Per-layer tables shared by every chunk of a call, in T.
  struct Tables {
    std::vector<T> theta, w, c;  ///< the circuit parameters
    std::vector<T> W;            ///< pw·mask, the contraction weight (O, I)
    std::vector<T> base_w;       ///< bw·mask (O, I)
    std::vector<T> bias;         ///< Σ_i pb·pw·mask (O)
  };
  /// One chunk's rows through the model: per layer its base activation (and slope) and its
  /// output; the backward's buffers and the chunk's share of the gradient.
  struct Chunk {
    std::vector<std::vector<T>> base, slope, out;
    std::vector<T> gy, gx, gtheta, gw, gc, gW;
    std::vector<LayerParams> grad;
  };
  std::vector<Tables> tables;
  std::vector<Chunk> chunks;
  std::vector<T> x;  ///< the batch in T (float32 only; float64 reads the caller's x)
};

struct Workspace::State {
  Buffers<float> f32;
  Buffers<double> f64;
  std::vector<double> row_loss;
  // The batch whose first-layer base activation (and float32 copy) the chunks hold; valid
  // while all of these match.
  std::vector<double> cached_x;
  Activation cached_activation = Activation::silu;
  DType cached_dtype = DType::f64;
  std::int64_t cached_width = 0;
  std::size_t cached_chunks = 0;
  bool cache_valid = false;

  template <class T> Buffers<T>& buffers() {
    if constexpr (std::is_same_v<T, float>) return f32;
    else return f64;
  }
};

Workspace::Workspace() : state_(std::make_unique<State>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;

namespace {

/// Circuits per chunk at least: about a millisecond of work. A thread's share must be long
/// next to waking it, and next to waiting for it when the machine's cores are busy elsewhere
/// (a 2-core machine under load took 100× longer per call when the quick start's 1000 circuits
/// were split over two threads).
constexpr std::int64_t kMinChunkCircuits = std::int64_t{1} << 16;

std::int64_t chunk_count(const Model& m, std::int64_t B) {
  std::int64_t edges = 0;
  for (const LayerParams& L : m.layers) edges += L.in * L.out;
  return std::clamp<std::int64_t>(std::min(B, B * edges / kMinChunkCircuits), 1, num_threads());
}
std::int64_t chunk_begin(std::int64_t c, std::int64_t chunks, std::int64_t B) { return B * c / chunks; }

void check_batch(const Model& m, std::span<const double> x, std::int64_t B) {
  if (m.widths.size() < 2 || m.layers.size() + 1 != m.widths.size())
    invalid_argument(kWhere, "the model has ", m.layers.size(), " layers for ", m.widths.size(), " widths");
  check_inputs(m, x, B);
  if (m.options.compute != DType::f32 && m.options.compute != DType::f64)
    invalid_argument(kWhere, "unknown compute precision");
}

template <class T> void convert(const std::vector<double>& from, std::vector<T>& to) {
  to.assign(from.begin(), from.end());
}

/// Σ_k a[k·sa]·b[k·sb] in double, over four interleaved partial sums (a fixed order, so the
/// result is reproducible; four chains of additions run in parallel where one would wait on
/// each add's latency). b == nullptr sums a alone.
template <class A, class B>
double strided_dot(const A* a, std::int64_t sa, const B* b, std::int64_t sb, std::int64_t n) {
  double acc[4] = {0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int j = 0; j < 4; ++j) acc[j] += double(a[(k + j) * sa]) * (b ? double(b[(k + j) * sb]) : 1.0);
  for (; k < n; ++k) acc[k % 4] += double(a[k * sa]) * (b ? double(b[k * sb]) : 1.0);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/// Sets up the workspace for a call on B rows of x: the layer tables, the chunks, and whether
/// the chunks' first-layer base activation (and T copy of x) is still that of x. Returns that
/// last answer; when it is no, the cache stays invalid until the call's chunks have all run
/// (cache_filled).
template <class T> bool prepare(const Model& m, std::span<const double> x, std::int64_t B, Workspace::State& ws) {
  Buffers<T>& buf = ws.buffers<T>();
  buf.tables.resize(m.layers.size());
  for (std::size_t k = 0; k < m.layers.size(); ++k) {
    const LayerParams& L = m.layers[k];
    typename Buffers<T>::Tables& t = buf.tables[k];
    const std::int64_t I = L.in, O = L.out;
    convert(L.theta, t.theta), convert(L.preacts_weight, t.w), convert(L.preacts_bias, t.c);
    t.W.resize(O * I), t.base_w.resize(O * I), t.bias.resize(O);
    std::vector<double> bias(O, 0.0);
    for (std::int64_t e = 0; e < O * I; ++e) {
      const double W = L.postact_weights[e] * L.mask[e];
      t.W[e] = static_cast<T>(W);
      t.base_w[e] = static_cast<T>(L.base_weight[e] * L.mask[e]);
      bias[e / I] += L.postact_bias[e] * W;
    }
    convert(bias, t.bias);
  }
  const std::size_t chunks = static_cast<std::size_t>(chunk_count(m, B));
  const bool reuse = ws.cache_valid && ws.cached_chunks == chunks &&
                     ws.cached_activation == m.options.base_activation && ws.cached_dtype == dtype_of<T>() &&
                     ws.cached_width == m.widths.front() && ws.cached_x.size() == x.size() &&
                     std::equal(x.begin(), x.end(), ws.cached_x.begin(), [](double a, double b) {  // bitwise, NaN too
                       return std::memcmp(&a, &b, sizeof a) == 0;
                     });
  buf.chunks.resize(chunks);
  for (auto& ch : buf.chunks)
    ch.base.resize(m.layers.size()), ch.slope.resize(m.layers.size()), ch.out.resize(m.layers.size());
  if (!reuse) {
    ws.cache_valid = false;
    ws.cached_x.assign(x.begin(), x.end());
    ws.cached_chunks = chunks;
    ws.cached_activation = m.options.base_activation;
    ws.cached_dtype = dtype_of<T>();
    ws.cached_width = m.widths.front();
    if constexpr (std::is_same_v<T, float>) convert(ws.cached_x, buf.x);
  }
  ws.row_loss.resize(B);
  return reuse;
}

/// Every chunk has computed the first-layer base activation of the batch prepare() recorded.
void cache_filled(Workspace::State& ws) { ws.cache_valid = true; }

/// The batch's rows from r0 in T: the caller's x for float64, the workspace's copy for float32.
template <class T>
const T* batch_rows(const Workspace::State& ws, std::span<const double> x, std::int64_t r0, std::int64_t I) {
  if constexpr (std::is_same_v<T, float>) return ws.f32.x.data() + r0 * I;
  else return x.data() + r0 * I;
}

/// Runs `rows` rows (starting at x0) through every layer into ch.out, keeping each layer's
/// base activation, and its slope when `slopes` (the backward needs them past layer 0).
/// Activations are computed in double and rounded to T.
template <class T>
void chunk_forward(const Model& m, const Buffers<T>& buf, typename Buffers<T>::Chunk& ch, const T* x0,
                   std::int64_t rows, bool base0_valid, bool slopes) {
  const Options opt = solver_options(m);
  const Activation act = m.options.base_activation;
  const std::int64_t R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  const T* in = x0;
  for (std::size_t k = 0; k < m.layers.size(); ++k) {
    const typename Buffers<T>::Tables& t = buf.tables[k];
    const std::int64_t I = m.layers[k].in, O = m.layers[k].out, n = rows * I;
    std::vector<T>& base = ch.base[k];
    if (k > 0 && slopes) {
      std::vector<T>& slope = ch.slope[k];
      base.resize(n), slope.resize(n);
      with_activation(act, [&](auto a) {
        for (std::int64_t e = 0; e < n; ++e) {
          double s = 0;
          base[e] = static_cast<T>(detail::activate_one<decltype(a)::value, true>(in[e], s));
          slope[e] = static_cast<T>(s);
        }
      });
    } else if (k > 0 || !base0_valid) {
      base.resize(n);
      with_activation(act, [&](auto a) {
        double unused = 0;
        for (std::int64_t e = 0; e < n; ++e)
          base[e] = static_cast<T>(detail::activate_one<decltype(a)::value, false>(in[e], unused));
      });
    }
    std::vector<T>& y = ch.out[k];
    y.resize(rows * O);
    contract_forward(opt, const_view(in, {rows, I}), const_view(t.theta.data(), {O, I, R, K}),
                     const_view(t.w.data(), {O, I, m.reps}), const_view(t.c.data(), {O, I, m.reps}),
                     const_view(t.W.data(), {O, I}), mut_view(y.data(), {rows, O}));
    // y += bias + Σ_i base·bw·mask, rows innermost (contiguous, so vectorised, for O = I = 1).
    for (std::int64_t o = 0; o < O; ++o) {
      const T bias = t.bias[o];
      for (std::int64_t b = 0; b < rows; ++b) y[b * O + o] += bias;
      for (std::int64_t i = 0; i < I; ++i) {
        const T w = t.base_w[o * I + i];
        for (std::int64_t b = 0; b < rows; ++b) y[b * O + o] += base[b * I + i] * w;
      }
    }
    in = y.data();
  }
}

/// One row's loss term (loss_math.hpp); check_targets checked the cross-entropy's class index.
template <class T> double row_loss(const T* y, const double* t, std::int64_t O, Loss kind, double n, T* gy) {
  if (kind == Loss::mse) return detail::mse_row<T>(y, t, O, n, gy);
  return detail::cross_entropy_row<T>(y, static_cast<std::int64_t>(t[0]), O, n, gy);
}

/// row_loss over `rows` rows of outputs y and targets t into terms[0, rows) and gy, the loss
/// kind decided once for the chunk rather than per row.
template <class T>
void chunk_loss(const T* y, const double* t, std::int64_t rows, std::int64_t O, Loss kind, double n, T* gy,
                double* terms) {
  if (kind == Loss::mse) {
    for (std::int64_t b = 0; b < rows; ++b) terms[b] = row_loss<T>(y + b * O, t + b * O, O, Loss::mse, n, gy + b * O);
  } else {
    for (std::int64_t b = 0; b < rows; ++b)
      terms[b] = row_loss<T>(y + b * O, t + b, O, Loss::cross_entropy, n, gy + b * O);
  }
}

double loss_normaliser(const Model& m, std::int64_t B, Loss kind) {
  return kind == Loss::mse ? double(B * m.widths.back()) : double(B);
}

double sum_of_terms(const std::vector<double>& terms, double n) {
  return strided_dot<double, double>(terms.data(), 1, nullptr, 0, static_cast<std::int64_t>(terms.size())) / n;
}

/// The backward of one chunk given ch.gy = dL/d(model output) for its rows: every layer's
/// parameter gradients into ch.grad in double (zeros for what does not train).
template <class T>
void chunk_backward(const Model& m, const Buffers<T>& buf, typename Buffers<T>::Chunk& ch, const T* x0,
                    std::int64_t rows) {
  const ModelOptions& mo = m.options;
  const Options opt = solver_options(m);
  const bool encoding = encoding_active(mo.ansatz, mo.preacts_trainable);
  const std::int64_t R = theta_rows(mo.ansatz, m.reps), K = theta_cols(mo.ansatz);
  ch.grad.resize(m.layers.size());
  for (std::size_t k = m.layers.size(); k-- > 0;) {
    const LayerParams& L = m.layers[k];
    const typename Buffers<T>::Tables& t = buf.tables[k];
    LayerParams& g = ch.grad[k];
    const std::int64_t I = L.in, O = L.out;
    const T* in = k == 0 ? x0 : ch.out[k - 1].data();
    const std::vector<T>& gy = ch.gy;
    g.in = I, g.out = O;
    g.preacts_weight.assign(L.preacts_weight.size(), 0.0);
    g.preacts_bias.assign(L.preacts_bias.size(), 0.0);
    for (auto* v : {&g.base_weight, &g.postact_weights, &g.postact_bias, &g.mask}) v->assign(O * I, 0.0);
    Grads grads;
    ch.gtheta.resize(L.theta.size());
    grads.theta = mut_view(ch.gtheta.data(), {O, I, R, K});
    if (encoding) {
      ch.gw.resize(L.preacts_weight.size()), ch.gc.resize(L.preacts_bias.size());
      grads.w = mut_view(ch.gw.data(), {O, I, m.reps});
      grads.c = mut_view(ch.gc.data(), {O, I, m.reps});
    }
    if (mo.postact_weight_trainable) {
      ch.gW.resize(O * I);
      grads.W = mut_view(ch.gW.data(), {O, I});
    }
    if (k > 0) {
      ch.gx.resize(rows * I);
      grads.x = mut_view(ch.gx.data(), {rows, I});
    }
    contract_backward(opt, const_view(in, {rows, I}), const_view(t.theta.data(), {O, I, R, K}),
                      const_view(t.w.data(), {O, I, m.reps}), const_view(t.c.data(), {O, I, m.reps}),
                      const_view(t.W.data(), {O, I}), const_view(gy.data(), {rows, O}), grads);
    g.theta.assign(ch.gtheta.begin(), ch.gtheta.end());
    if (encoding) {
      g.preacts_weight.assign(ch.gw.begin(), ch.gw.end());
      g.preacts_bias.assign(ch.gc.begin(), ch.gc.end());
    }
    // The layer sum: y += Σ_i (pb·W + base·bw·mask), so dL/dpw = (∂W + Σ_b gy·pb)·mask, dL/dpb
    // = Σ_b gy·W, dL/dbw = Σ_b gy·base·mask, and the base branch adds gy·bw·mask·base' to dL/dx.
    if (mo.postact_weight_trainable || mo.postact_bias_trainable) {
      std::vector<double> colsum(O);
      for (std::int64_t o = 0; o < O; ++o) colsum[o] = strided_dot<T, T>(gy.data() + o, O, nullptr, 0, rows);
      for (std::int64_t e = 0; e < O * I; ++e) {
        const double cs = colsum[e / I];
        if (mo.postact_weight_trainable) g.postact_weights[e] = (ch.gW[e] + cs * L.postact_bias[e]) * L.mask[e];
        if (mo.postact_bias_trainable) g.postact_bias[e] = cs * L.postact_weights[e] * L.mask[e];
      }
    }
    const std::vector<T>& base = ch.base[k];
    if (mo.ba_trainable)
      for (std::int64_t o = 0; o < O; ++o)
        for (std::int64_t i = 0; i < I; ++i)
          g.base_weight[o * I + i] = strided_dot(gy.data() + o, O, base.data() + i, I, rows) * L.mask[o * I + i];
    if (k > 0) {
      const std::vector<T>& slope = ch.slope[k];
      for (std::int64_t b = 0; b < rows; ++b)
        for (std::int64_t i = 0; i < I; ++i) {
          T s = 0;
          for (std::int64_t o = 0; o < O; ++o) s += gy[b * O + o] * t.base_w[o * I + i];
          ch.gx[b * I + i] += s * slope[b * I + i];
        }
      ch.gy.swap(ch.gx);
    }
  }
}

/// grad = Σ over chunks of their gradients, in chunk order.
template <class T> void sum_chunk_gradients(const Buffers<T>& buf, std::vector<LayerParams>& grad) {
  grad = buf.chunks[0].grad;
  auto add = [](std::vector<double>& a, const std::vector<double>& b) {
    for (std::size_t e = 0; e < a.size(); ++e) a[e] += b[e];
  };
  for (std::size_t c = 1; c < buf.chunks.size(); ++c)
    for (std::size_t k = 0; k < grad.size(); ++k) {
      const LayerParams& from = buf.chunks[c].grad[k];
      LayerParams& to = grad[k];
      add(to.theta, from.theta), add(to.preacts_weight, from.preacts_weight), add(to.preacts_bias, from.preacts_bias);
      add(to.base_weight, from.base_weight), add(to.postact_weights, from.postact_weights);
      add(to.postact_bias, from.postact_bias);
    }
}

template <class T>
std::vector<double> forward_in(const Model& m, std::span<const double> x, std::int64_t B, Workspace::State& ws) {
  const bool base0_valid = prepare<T>(m, x, B, ws);
  Buffers<T>& buf = ws.buffers<T>();
  const std::int64_t chunks = static_cast<std::int64_t>(buf.chunks.size()), I = m.widths.front(), O = m.widths.back();
  std::vector<double> y(B * O);
  parallel_for(chunks, [&](std::int64_t c, int) {
    const std::int64_t r0 = chunk_begin(c, chunks, B), rows = chunk_begin(c + 1, chunks, B) - r0;
    typename Buffers<T>::Chunk& ch = buf.chunks[c];
    chunk_forward<T>(m, buf, ch, batch_rows<T>(ws, x, r0, I), rows, base0_valid, false);
    std::copy(ch.out.back().begin(), ch.out.back().end(), y.begin() + r0 * O);
  });
  cache_filled(ws);
  return y;
}

template <class T>
double loss_and_gradient_in(const Model& m, std::span<const double> x, std::span<const double> targets, std::int64_t B,
                            Loss kind, std::vector<LayerParams>& grad, Workspace::State& ws) {
  const bool base0_valid = prepare<T>(m, x, B, ws);
  Buffers<T>& buf = ws.buffers<T>();
  const std::int64_t chunks = static_cast<std::int64_t>(buf.chunks.size()), I = m.widths.front(), O = m.widths.back();
  const std::int64_t tcols = kind == Loss::mse ? O : 1;
  const double n = loss_normaliser(m, B, kind);
  // Rows are independent up to the parameter gradients' sums over the batch, so each chunk runs
  // forward, loss and backward on its own rows; the chunks' gradients are summed afterwards.
  parallel_for(chunks, [&](std::int64_t c, int) {
    const std::int64_t r0 = chunk_begin(c, chunks, B), rows = chunk_begin(c + 1, chunks, B) - r0;
    typename Buffers<T>::Chunk& ch = buf.chunks[c];
    const T* x0 = batch_rows<T>(ws, x, r0, I);
    chunk_forward<T>(m, buf, ch, x0, rows, base0_valid, true);
    ch.gy.resize(rows * O);
    chunk_loss<T>(ch.out.back().data(), targets.data() + r0 * tcols, rows, O, kind, n, ch.gy.data(),
                  ws.row_loss.data() + r0);
    chunk_backward<T>(m, buf, ch, x0, rows);
  });
  cache_filled(ws);
  sum_chunk_gradients(buf, grad);
  return sum_of_terms(ws.row_loss, n);
}

}  // namespace

Options solver_options(const Model& m) {
  Options opt;
  opt.ansatz = m.options.ansatz;
  opt.reps = m.reps;
  opt.preacts_trainable = m.options.preacts_trainable;
  opt.fast_measure = m.options.fast_measure;
  return opt;
}

std::vector<double> forward(const Model& m, std::span<const double> x, std::int64_t B, Workspace* workspace) {
  check_batch(m, x, B);
  std::optional<Workspace> temporary;  // only when the caller brings none (it allocates)
  Workspace::State& ws = (workspace ? *workspace : temporary.emplace()).state();
  return m.options.compute == DType::f32 ? forward_in<float>(m, x, B, ws) : forward_in<double>(m, x, B, ws);
}

double loss(const Model& m, std::span<const double> x, std::span<const double> targets, std::int64_t B, Loss kind,
            Workspace* workspace) {
  check_batch(m, x, B);
  check_targets(m, targets, B, kind);
  std::optional<Workspace> temporary;
  Workspace& ws = workspace ? *workspace : temporary.emplace();
  const std::vector<double> y = forward(m, x, B, &ws);
  const std::int64_t O = m.widths.back(), tcols = kind == Loss::mse ? O : 1;
  std::vector<double>& terms = ws.state().row_loss;
  for (std::int64_t b = 0; b < B; ++b)
    terms[b] = row_loss<double>(y.data() + b * O, targets.data() + b * tcols, O, kind, 1, nullptr);
  return sum_of_terms(terms, loss_normaliser(m, B, kind));
}

double loss_and_gradient(const Model& m, std::span<const double> x, std::span<const double> targets, std::int64_t B,
                         Loss kind, std::vector<LayerParams>& grad, Workspace* workspace) {
  check_batch(m, x, B);
  check_targets(m, targets, B, kind);
  if (B == 0) invalid_argument(kWhere, "the loss of an empty batch is undefined");
  std::optional<Workspace> temporary;  // only when the caller brings none (it allocates)
  Workspace::State& ws = (workspace ? *workspace : temporary.emplace()).state();
  return m.options.compute == DType::f32 ? loss_and_gradient_in<float>(m, x, targets, B, kind, grad, ws)
                                         : loss_and_gradient_in<double>(m, x, targets, B, kind, grad, ws);
}

std::vector<double> edge_functions(const Model& m, std::size_t layer, std::span<const double> x) {
  if (layer >= m.layers.size())
    invalid_argument(kWhere, "layer ", layer, " of a model with ", m.layers.size(), " layers");
  const LayerParams& L = m.layers[layer];
  const std::int64_t S = static_cast<std::int64_t>(x.size()), I = L.in, O = L.out;
  const std::int64_t R = theta_rows(m.options.ansatz, m.reps), K = theta_cols(m.options.ansatz);
  std::vector<double> xs(S * I), post(S * O * I);
  for (std::int64_t s = 0; s < S; ++s) std::fill_n(xs.begin() + s * I, I, x[s]);
  Options opt = solver_options(m);
  opt.out_dim = O;
  solve_forward(opt, const_view(xs.data(), {S, I}), const_view(L.theta.data(), {O, I, R, K}),
                const_view(L.preacts_weight.data(), {O, I, m.reps}), const_view(L.preacts_bias.data(), {O, I, m.reps}),
                mut_view(post.data(), {S, O, I}));
  for (std::int64_t s = 0; s < S; ++s) {
    const double base = activate(m.options.base_activation, x[s]);
    for (std::int64_t e = 0; e < O * I; ++e) {
      double& v = post[s * O * I + e];
      v = ((v + L.postact_bias[e]) * L.postact_weights[e] + base * L.base_weight[e]) * L.mask[e];
    }
  }
  return post;
}

}  // namespace lockstep::qkan
