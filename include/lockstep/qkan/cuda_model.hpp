// A QKAN model (model.hpp) evaluated and trained on a CUDA device: its parameters, activations
// and gradients live in device memory; the circuits run on the contracted CUDA solver, the layer
// sums, base activations, losses and Adam on small kernels of their own. Per evaluation only the
// loss (a scalar) comes back to the host, so a training step with CudaAdam copies no parameters.
//
// The host Model stays the parameters' source of truth for files: upload() copies its values
// to the device, download() copies the device's back (after training, before saving).
//
// Numbers follow the CPU model's: the circuits, layer sums and stored activations in
// options.compute's precision, the parameters, losses and the gradient's batch sums in double.
// They agree with the CPU's to rounding, not bit for bit (the solver's batch sums use atomics,
// so repeated CUDA evaluations may differ in the last bits).
//
// Synchronisation: every call runs on the legacy default stream of the current device, which
// orders the calls with each other and with the process's blocking streams. A call reads the
// caller's spans before it returns and returns once its results are on the host (forward, the
// losses, download) or queued (the rest). Device memory grows with the largest batch and is
// freed with the model; a call that fails (a bad shape, memory exhausted) leaves the model
// usable and holds nothing more than before.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lockstep/qkan/model.hpp"
#include "lockstep/qkan/optim.hpp"

namespace lockstep::qkan {

/// Rows of inputs and, for a loss, its targets, in device memory: a data set uploaded once and
/// evaluated again and again. Filled by CudaModel::load.
class CudaBatch {
 public:
  CudaBatch();
  ~CudaBatch();
  CudaBatch(CudaBatch&&) noexcept;
  CudaBatch& operator=(CudaBatch&&) noexcept;

  struct State;  ///< defined in src/qkan/cuda/model.cpp
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

class CudaModel {
 public:
  /// Copies `model`'s parameters to the current CUDA device. Throws std::runtime_error saying
  /// why when CUDA cannot run it (a build without the CUDA backend, no visible device) and
  /// std::invalid_argument for an inconsistent model.
  explicit CudaModel(const Model& model);
  ~CudaModel();
  CudaModel(CudaModel&&) noexcept;
  CudaModel& operator=(CudaModel&&) noexcept;

  /// Uploads B rows into `batch` (reusing its memory when it is large enough): x (B,
  /// widths[0]); targets as loss() takes them for `kind`, or empty for a batch only forward()
  /// reads. Targets are checked here (sizes, class indices), as loss() would.
  void load(CudaBatch& batch, std::span<const double> x, std::int64_t B, std::span<const double> targets = {},
            Loss kind = Loss::mse) const;

  /// model(x) for the batch's rows, (B, widths.back()) on the host.
  std::vector<double> forward(const CudaBatch& batch);
  /// The loss (the kind the batch was loaded for) of the batch, as qkan::loss.
  double loss(const CudaBatch& batch);
  /// The loss, as qkan::loss_and_gradient; the gradient stays on the device (gradient(),
  /// CudaAdam::step read it).
  double loss_and_gradient(const CudaBatch& batch);
  /// The last loss_and_gradient's gradient, shaped as qkan::loss_and_gradient writes it (zeros
  /// for what does not train).
  std::vector<LayerParams> gradient() const;

  /// Copies `model`'s parameter values to the device; it must have this model's options and shapes.
  void upload(const Model& model);
  /// Copies the device's parameter values into `model` (and this object's host copy).
  void download(Model& model);

  struct State;  ///< defined in src/qkan/cuda/model.cpp
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// Adam (as Adam in optim.hpp, the same update per parameter) on a CudaModel's trainable
/// parameters, with its moments in device memory: one fused kernel per step.
class CudaAdam {
 public:
  CudaAdam(const CudaModel& model, AdamOptions options);
  ~CudaAdam();
  CudaAdam(CudaAdam&&) noexcept;
  CudaAdam& operator=(CudaAdam&&) noexcept;

  /// One update of the model's parameters from its last loss_and_gradient.
  void step(CudaModel& model);

  struct State;  ///< defined in src/qkan/cuda/model.cpp
 private:
  std::unique_ptr<State> state_;
};

}  // namespace lockstep::qkan
