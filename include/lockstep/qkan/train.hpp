// Training QKAN models from C++: function-fitting data sets like qkan.create_dataset, upstream's
// initialisation, and a seeded fit loop (Adam or L-BFGS, mini-batches, loss history).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/qkan/model.hpp"

namespace lockstep::qkan {

/// Rows of inputs (n × n_in) and targets (n × n_out) for training and testing, row-major.
struct Dataset {
  std::int64_t n_in = 0, n_out = 0, n_train = 0, n_test = 0;
  std::vector<double> train_x, train_y, test_x, test_y;
};

/// The built-in formulas, by name: "j0like" sin(20x)/(20x) (1 variable, the quick start's),
/// "sin" sin(πx), "exp_sin" exp(sin(πx₀) + x₁²), "product" x₀·x₁, "sum_squares" Σ xᵢ².
/// Inputs uniform in [lo, hi] per variable, labels the formula, from one seeded generator:
/// the train rows first, then the test rows (as qkan.create_dataset draws them; the numbers
/// differ from torch's generator).
Dataset make_dataset(std::string_view formula, double lo, double hi, std::int64_t n_train, std::int64_t n_test,
                     std::uint64_t seed);

/// A model initialised as qkan.QKAN: θ Xavier-normal over (out, in, R', k) (std
/// √(2 / ((in + out)·R'·k))), w = 1, c = 0, base_weight 0.5 when it trains else 0, postact
/// weights 1, bias 0, mask 1.
Model init_model(const std::vector<std::int64_t>& widths, int reps, const ModelOptions& options, std::uint64_t seed);

/// The trainable parameters as one flat vector, in a fixed order (per layer: θ, then w and c
/// when the encoding is on, then base_weight, postact_weights, postact_bias when they train).
std::vector<double> trainable_values(const Model& model);
void set_trainable_values(Model& model, std::span<const double> values);
/// The matching entries of a gradient from loss_and_gradient.
std::vector<double> trainable_gradient(const Model& model, const std::vector<LayerParams>& grad);

struct FitOptions {
  std::string optimizer = "lbfgs";  ///< "lbfgs" or "adam"
  int steps = 100;                  ///< optimizer steps (L-BFGS: each up to max_iter iterations)
  double lr = 5e-2;
  std::int64_t batch = -1;  ///< rows per step, -1 for the whole training set
  int lbfgs_history = 10;
  int lbfgs_max_iter = 20;
  /// L-BFGS's tolerance_grad and tolerance_change. The quick start's 1e-32: a step stops early
  /// only once the loss or the gradient stops changing at all.
  double lbfgs_tolerance = 1e-32;
  Loss loss = Loss::mse;
  std::uint64_t seed = 0;  ///< shuffles the mini-batches
  bool progress = true;    ///< a progress line on stderr
  /// Where the model is evaluated: the CPU, or a CUDA device (CudaModel, cuda_model.hpp), where
  /// Adam's steps run on the device too and only losses come back; L-BFGS keeps its state on
  /// the host there, copying the parameters to the device and the gradient back per evaluation.
  Device device = Device::cpu;
};

struct History {
  std::vector<double> train_loss, test_loss;  ///< after each step
  long evaluations = 0;                       ///< loss + gradient evaluations
  double seconds = 0;
};

/// Trains `model` in place; the same inputs and seed give the same result bit for bit on one
/// machine's CPU (on CUDA, to rounding: the device's batch sums use atomics). Non-finite losses
/// stop it with std::runtime_error (the model keeps its last values). Device::cuda throws
/// std::runtime_error when CUDA cannot run (see CudaModel).
History fit(Model& model, const Dataset& data, const FitOptions& options);

}  // namespace lockstep::qkan
