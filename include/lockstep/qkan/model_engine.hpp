// A QKAN model's backend: where its parameters live and its evaluations run. One interface,
// ModelEngine, with a host sibling (the CPU model, model.hpp) and a CUDA one (CudaModel,
// cuda_model.hpp), and one factory that chooses by device, so that a caller — training, the CLI —
// never branches on the device.
//
// An engine is made for one Model, which it keeps a reference to: the model must outlive it.
// The host engine evaluates the model's own values; the CUDA engine holds a copy on the device,
// so after changing the model's values a caller calls reload(), and store() brings the engine's
// values back into the model (after training, before saving). On the host both do nothing.
//
// Numbers: the host engine's are model.hpp's bit for bit; the CUDA engine's agree with them to
// rounding (cuda_model.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lockstep/core/tensor.hpp"
#include "lockstep/qkan/model.hpp"
#include "lockstep/qkan/optim.hpp"

namespace lockstep::qkan {

/// Rows of inputs and, for a loss, their targets, loaded into an engine once and evaluated again
/// and again (a data set, a mini-batch). Made by the engine that evaluates them.
class ModelRows {
 public:
  virtual ~ModelRows() = default;
  /// The number of rows loaded.
  virtual std::int64_t rows() const = 0;
};

/// An optimizer whose state lives with the engine's parameters.
class ModelOptimizer {
 public:
  virtual ~ModelOptimizer() = default;
  /// One update of the engine's trainable parameters from its last loss_and_gradient.
  virtual void step() = 0;
};

class ModelEngine {
 public:
  virtual ~ModelEngine() = default;

  virtual Device device() const = 0;

  /// Empty rows for this engine.
  virtual std::unique_ptr<ModelRows> make_rows() const = 0;
  /// Loads B rows into `rows` (made by this engine; its memory reused where it is large
  /// enough): x (B, widths[0]); targets as loss() takes them for `kind` (check_targets), or
  /// empty for rows only forward() reads. std::invalid_argument for sizes or targets that do
  /// not suit the model.
  virtual void load(ModelRows& rows, std::span<const double> x, std::int64_t B, std::span<const double> targets = {},
                    Loss kind = Loss::mse) = 0;

  /// model(x) for the rows, (B, widths.back()) on the host.
  virtual std::vector<double> forward(ModelRows& rows) = 0;
  /// The loss (of the kind the rows were loaded for), as qkan::loss.
  virtual double loss(ModelRows& rows) = 0;
  /// The loss, as qkan::loss_and_gradient; the gradient stays with the engine (gradient(), an
  /// optimizer's step).
  virtual double loss_and_gradient(ModelRows& rows) = 0;
  /// The last loss_and_gradient's gradient, shaped as qkan::loss_and_gradient writes it (zeros
  /// for what does not train); valid until the next call of the engine.
  virtual const std::vector<LayerParams>& gradient() = 0;

  /// Takes the model's current parameter values (after the caller changed them).
  virtual void reload() = 0;
  /// Writes the engine's parameter values into the model.
  virtual void store() = 0;

  /// Adam over the model's trainable parameters, its moments beside them.
  virtual std::unique_ptr<ModelOptimizer> make_adam(const AdamOptions& options) = 0;
};

/// The engine for `model` on `device`: the CPU model or the CUDA model. std::runtime_error for
/// CUDA in a build without it or without a visible device; std::invalid_argument for an
/// inconsistent model.
std::unique_ptr<ModelEngine> make_model_engine(Model& model, Device device);

}  // namespace lockstep::qkan
