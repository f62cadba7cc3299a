// `lockstep qkan ...`: QKAN models from the command line.
//   eval   a model file (safetensors, qkan's state_dict names) and inputs (.npy, (B, I)) ->
//          outputs (.npy, (B, O), in the inputs' dtype)
#include <iostream>
#include <string>

#include "commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/npy.hpp"
#include "lockstep/core/safetensors.hpp"
#include "lockstep/qkan/model.hpp"

namespace lockstep::cli {

namespace {

/// The options a model file does not store, as command-line flags with qkan's defaults.
struct ModelFlags {
  std::string ansatz = "pz_encoding";
  bool preacts_trainable = false;
  std::string measure = "fast";
  std::string base_activation = "silu";

  void add_to(CLI::App& cmd) {
    cmd.add_option("--ansatz", ansatz, "Circuit ansatz: pz_encoding (pz), rpz_encoding (rpz), px_encoding (px), real, mix")
        ->capture_default_str();
    cmd.add_flag("--preacts-trainable", preacts_trainable, "The data angle is w·x + c (the encoding is on)");
    cmd.add_option("--measure", measure, "fast (|α| − |β|) or z (⟨Z⟩)")
        ->check(CLI::IsMember({"fast", "z"}))
        ->capture_default_str();
    cmd.add_option("--base-activation", base_activation, "silu, gelu, relu, tanh or sigmoid")->capture_default_str();
  }
  qkan::ModelOptions options() const {
    qkan::ModelOptions o;
    o.ansatz = qkan::parse_ansatz(ansatz);
    o.preacts_trainable = preacts_trainable;
    o.fast_measure = measure == "fast";
    o.base_activation = qkan::parse_activation(base_activation);
    return o;
  }
};

struct EvalArgs {
  std::string model, input, output;
  ModelFlags flags;
};

void run_eval(const EvalArgs& a) {
  const qkan::Model model = qkan::from_safetensors(safetensors::load(a.model), a.flags.options());
  const npy::Array x = npy::load(a.input);
  if (x.shape.size() != 2 || x.shape[1] != model.widths.front())
    invalid_argument("qkan eval", a.input, " has shape ", to_string(x.shape), "; the model takes (B, ",
                     model.widths.front(), ")");
  const std::int64_t B = x.shape[0];
  const std::vector<double> y = qkan::forward(model, x.values, B);
  npy::save(a.output, y, {B, model.widths.back()}, x.stored);
  std::cerr << "qkan eval: " << B << " rows through widths [";
  for (std::size_t k = 0; k < model.widths.size(); ++k) std::cerr << (k ? ", " : "") << model.widths[k];
  std::cerr << "], reps " << model.reps << " -> " << a.output << "\n";
}

}  // namespace

void add_qkan_commands(CLI::App& app) {
  auto* qkan = app.add_subcommand("qkan", "QKAN models: evaluate a model file on inputs");
  qkan->require_subcommand(1);
  auto args = std::make_shared<EvalArgs>();
  auto* eval = qkan->add_subcommand("eval", "Evaluate a model (safetensors, qkan's state_dict) on inputs (.npy, (B, I))");
  eval->add_option("--model", args->model, "Model file (.safetensors)")->required()->check(CLI::ExistingFile);
  eval->add_option("--input", args->input, "Inputs, a float32 or float64 .npy of shape (B, I)")->required()->check(CLI::ExistingFile);
  eval->add_option("--output", args->output, "Where to write the outputs (.npy, (B, O), the inputs' dtype)")->required();
  args->flags.add_to(*eval);
  eval->callback([args] { run_eval(*args); });
}

}  // namespace lockstep::cli
