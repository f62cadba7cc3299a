// A QKAN model (docs/QKAN.md §4): layers of widths[k] -> widths[k+1] edges, each
//   y[b,o] = Σ_i (post[b,o,i] + pb[o,i])·pw[o,i]·mask[o,i] + Σ_i base(x[b,i])·bw[o,i]·mask[o,i]
// with post the circuit solver's output, computed here by the contracted solver (no (B, O, I)
// tensor). Parameters carry `qkan`'s QKANLayer names and natural shapes, so a model trained
// with `qkan` loads from its state_dict saved as safetensors, and the other way round.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "lockstep/core/safetensors.hpp"
#include "lockstep/qkan/activation.hpp"
#include "lockstep/qkan/solver.hpp"

namespace lockstep::qkan {

/// One layer's parameters in float64, row-major, qkan's names and natural shapes.
struct LayerParams {
  std::int64_t in = 0, out = 0;
  std::vector<double> theta;            ///< theta (out, in, R', k)
  std::vector<double> preacts_weight;   ///< preacts_weight (out, in, reps)
  std::vector<double> preacts_bias;     ///< preacts_bias (out, in, reps)
  std::vector<double> base_weight;      ///< base_weight (out, in)
  std::vector<double> postact_weights;  ///< postact_weights (out, in)
  std::vector<double> postact_bias;     ///< postact_bias (out, in)
  std::vector<double> mask;             ///< mask (out, in)
};

/// What a model file does not store: the circuit options (ansatz, fast measure, whether the
/// encoding w·x + c is on — it also makes w and c trainable; reps is read from the file), the
/// base activation and which of the other parameters train. Defaults are qkan.QKAN's. θ always
/// trains; the mask never does.
struct ModelOptions {
  Ansatz ansatz = Ansatz::pz;
  bool preacts_trainable = false;
  bool fast_measure = true;
  Activation base_activation = Activation::silu;
  bool ba_trainable = false;              ///< base_weight
  bool postact_weight_trainable = false;  ///< postact_weights
  bool postact_bias_trainable = false;    ///< postact_bias
  /// Precision of the evaluation (circuits, layer sums, activations stored): f64, or f32 as
  /// qkan.QKAN computes by default. Parameters, losses and gradients' sums over chunks stay
  /// double. Not stored in model files.
  DType compute = DType::f64;
};

struct Model {
  ModelOptions options;
  int reps = 3;
  std::vector<std::int64_t> widths;
  std::vector<LayerParams> layers;
};

/// Memory that repeated evaluations of one model reuse: buffers per batch chunk, and the first
/// layer's base activation of the last batch seen, kept while that batch's values stay the same.
/// Training evaluates one small batch thousands of times, where allocating those buffers and
/// recomputing that activation would cost as much as the circuits do. A workspace serves one
/// call at a time; it may be reused with other batches and models (it notices).
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;

  struct State;  ///< defined in model.cpp
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// y = model(x) for x (B, widths[0]) row-major; returns (B, widths.back()). Runs on the CPU in
/// options.compute's precision (the fused kernels). Large batches are split into row chunks
/// (of at least 2^16 circuits) run on num_threads() threads; a row's result does not depend on
/// the split. `workspace`: memory to reuse, nullptr for a temporary one.
std::vector<double> forward(const Model& model, std::span<const double> x, std::int64_t B,
                            Workspace* workspace = nullptr);

/// The contracted solver's options for `model`'s layers (its ansatz, reps, encoding and
/// measure; the legacy default stream): the CPU and the CUDA model evaluate through them.
Options solver_options(const Model& model);

/// The training losses, as torch's: mse is the mean of (y − target)² over all B·O values;
/// cross_entropy the mean over rows of −log softmax(y)[target], targets class indices in [0, O).
enum class Loss { mse, cross_entropy };
Loss parse_loss(std::string_view name);

/// Throws std::invalid_argument unless x holds B rows of the model's widths[0] inputs (B ≥ 0).
void check_inputs(const Model& model, std::span<const double> x, std::int64_t B);

/// Throws std::invalid_argument unless `targets` suit loss() for B rows of `model`: B·O values
/// for mse, B class indices (integral values in [0, O)) for cross-entropy.
void check_targets(const Model& model, std::span<const double> targets, std::int64_t B, Loss kind);

/// The loss of the model on a batch: x (B, widths[0]); targets (B, O) for mse, (B) class
/// indices (integral values) for cross_entropy. The per-row terms are summed in one fixed order.
double loss(const Model& model, std::span<const double> x, std::span<const double> targets, std::int64_t B, Loss kind,
            Workspace* workspace = nullptr);

/// The loss and its gradient with respect to every trainable parameter, written into `grad`
/// (resized to the model's layers; a parameter that does not train gets zeros): the solver's
/// state-free backward plus the layer sum's and the base branch's. The loss is bit for bit
/// loss()'s; the gradient sums the row chunks' in chunk order, so it reproduces bit for bit for
/// one thread count.
double loss_and_gradient(const Model& model, std::span<const double> x, std::span<const double> targets, std::int64_t B,
                         Loss kind, std::vector<LayerParams>& grad, Workspace* workspace = nullptr);

/// The learned function of every edge of layer `layer` at the inputs x (S values, each fed to
/// every input): out[s, o, i] = (post[s,o,i] + pb[o,i])·pw[o,i]·mask[o,i] + base(x[s])·bw[o,i]·mask[o,i],
/// shape (S, O, I) row-major, so a layer's output is the sum over i of its edges' functions of
/// their inputs. Float64, the plain solver.
std::vector<double> edge_functions(const Model& model, std::size_t layer, std::span<const double> x);

/// The model in a safetensors file of qkan's state_dict ("layers.{k}.theta", ...). Widths and
/// reps come from the shapes; every layer must have all seven tensors (F32 or F64) in natural
/// shapes with finite values and consistent widths, and the file no other tensor, or
/// std::invalid_argument names what is wrong.
Model from_safetensors(const safetensors::File& file, const ModelOptions& options);
/// The state_dict of `model` in `dtype` (F32 or F64), ready for safetensors::save, with the
/// model's options in the file's metadata (keys "ansatz", "preacts_trainable", "fast_measure",
/// "base_activation", "ba_trainable", "postact_weight_trainable", "postact_bias_trainable").
safetensors::File to_safetensors(const Model& model, DType dtype);

/// `defaults` with every option the file's metadata names replaced by its value (files written
/// by qkan carry none); a malformed value is a std::invalid_argument naming the key. Other
/// metadata keys are ignored (other writers add their own).
ModelOptions options_from_metadata(const safetensors::File& file, ModelOptions defaults);

}  // namespace lockstep::qkan
