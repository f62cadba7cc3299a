// `lockstep qkan ...`: QKAN models from the command line.
//   fit    trains a model on a built-in formula or on .npy data; writes the model (safetensors,
//          qkan's state_dict names) and the loss history (CSV)
//   eval   a model file and inputs (.npy, (B, I)) -> outputs (.npy, (B, O), the inputs' dtype)
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"
#include "lockstep/core/npy.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/core/safetensors.hpp"
#include "lockstep/qkan/model.hpp"
#include "lockstep/qkan/train.hpp"

namespace lockstep::cli {

namespace {

/// The options a model file does not store, as command-line flags with qkan's defaults.
struct ModelFlags {
  std::string ansatz = "pz_encoding";
  bool preacts_trainable = false;
  std::string measure = "fast";
  std::string base_activation = "silu";
  CLI::Option *ansatz_opt = nullptr, *preacts_opt = nullptr, *measure_opt = nullptr, *activation_opt = nullptr;

  void add_to(CLI::App& cmd) {
    ansatz_opt = cmd.add_option("--ansatz", ansatz, "Circuit ansatz: pz_encoding (pz), rpz_encoding (rpz), px_encoding (px), real, mix")
                     ->capture_default_str();
    preacts_opt = cmd.add_flag("--preacts-trainable", preacts_trainable, "The data angle is w·x + c (the encoding is on)");
    measure_opt = cmd.add_option("--measure", measure, "fast (|α| − |β|) or z (⟨Z⟩)")
                      ->check(CLI::IsMember({"fast", "z"}))
                      ->capture_default_str();
    activation_opt = cmd.add_option("--base-activation", base_activation, "silu, gelu, relu, tanh or sigmoid")->capture_default_str();
  }
  qkan::ModelOptions options() const {
    qkan::ModelOptions o;
    o.ansatz = qkan::parse_ansatz(ansatz);
    o.preacts_trainable = preacts_trainable;
    o.fast_measure = measure == "fast";
    o.base_activation = qkan::parse_activation(base_activation);
    return o;
  }
  /// For a model file: the options its metadata records (lockstep writes them; qkan does not),
  /// overridden by the flags given on the command line.
  qkan::ModelOptions options_for(const safetensors::File& file) const {
    qkan::ModelOptions o = qkan::options_from_metadata(file, options());
    const qkan::ModelOptions given = options();
    if (ansatz_opt->count()) o.ansatz = given.ansatz;
    if (preacts_opt->count()) o.preacts_trainable = given.preacts_trainable;
    if (measure_opt->count()) o.fast_measure = given.fast_measure;
    if (activation_opt->count()) o.base_activation = given.base_activation;
    return o;
  }
};

struct FitArgs {
  std::string formula = "j0like";
  std::vector<double> range = {0.0, 1.0};
  std::int64_t n_train = 1000, n_test = 1000;
  std::string train_x, train_y, test_x, test_y;  // .npy data instead of a formula
  std::string widths;                            // "1,1"; default [inputs, 1] (or classes)
  int reps = 3;
  bool freeze_extras = false;
  qkan::FitOptions fit;
  std::string loss = "mse";
  std::string dtype = "f64";
  std::string output = "qkan_fit.safetensors", history = "qkan_fit_history.csv";
  std::string init;     // start from this model file's weights instead of a fresh initialisation
  std::string summary;  // JSON with the final losses, evaluations and time
  int threads = 0;
  ModelFlags flags;
  CLI::Option *widths_opt = nullptr, *reps_opt = nullptr;
};

std::vector<std::int64_t> parse_widths(const std::string& text) {
  std::vector<std::int64_t> w;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1) invalid_argument("qkan fit", "--widths wants positive integers like 1,5,1, got '", text, "'");
    w.push_back(v);
  }
  if (w.size() < 2) invalid_argument("qkan fit", "--widths needs at least two widths, got '", text, "'");
  return w;
}

/// Rows of an .npy file as (n, cols): a 1-D file is one column.
std::vector<double> load_rows(const std::string& path, std::int64_t& n, std::int64_t& cols) {
  npy::Array a = npy::load(path);
  if (a.shape.size() == 1) a.shape.push_back(1);
  if (a.shape.size() != 2) invalid_argument("qkan fit", path, " has shape ", to_string(a.shape), "; expected (n, columns)");
  n = a.shape[0], cols = a.shape[1];
  return std::move(a.values);
}

void run_fit(FitArgs a) {
  if (a.threads > 0) set_num_threads(a.threads);
  const qkan::Loss loss = qkan::parse_loss(a.loss);
  qkan::Dataset d;
  if (!a.train_x.empty() || !a.train_y.empty()) {
    if (a.train_x.empty() || a.train_y.empty() || a.test_x.empty() || a.test_y.empty())
      invalid_argument("qkan fit", "data from files needs all of --train-x, --train-y, --test-x, --test-y");
    std::int64_t ny = 0, cy = 0, nty = 0, cty = 0, ctx = 0;
    d.train_x = load_rows(a.train_x, d.n_train, d.n_in);
    d.train_y = load_rows(a.train_y, ny, cy);
    d.test_x = load_rows(a.test_x, d.n_test, ctx);
    d.test_y = load_rows(a.test_y, nty, cty);
    if (ny != d.n_train || nty != d.n_test || ctx != d.n_in || cy != cty)
      invalid_argument("qkan fit", "the data files disagree: train x ", d.n_train, "x", d.n_in, ", y ", ny, "x", cy,
                       "; test x ", d.n_test, "x", ctx, ", y ", nty, "x", cty);
    d.n_out = cy;
  } else {
    if (a.range.size() != 2) invalid_argument("qkan fit", "--range wants two numbers, lo and hi");
    d = qkan::make_dataset(a.formula, a.range[0], a.range[1], a.n_train, a.n_test, a.fit.seed);
  }
  std::int64_t outputs = d.n_out;
  if (loss == qkan::Loss::cross_entropy) {
    double top = 0;
    for (double c : d.train_y) top = std::max(top, c);
    outputs = static_cast<std::int64_t>(top) + 1;
  }
  const std::vector<std::int64_t> widths = a.widths.empty() ? std::vector<std::int64_t>{d.n_in, outputs} : parse_widths(a.widths);
  qkan::Model model;
  if (a.init.empty()) {
    model = qkan::init_model(widths, a.reps, a.flags.options(), a.fit.seed);
  } else {
    const safetensors::File file = safetensors::load(a.init);
    model = qkan::from_safetensors(file, a.flags.options_for(file));
    if (a.widths_opt->count() && model.widths != widths)
      invalid_argument("qkan fit", "--widths ", a.widths, " disagrees with the widths of --init ", a.init);
    if (a.reps_opt->count() && model.reps != a.reps)
      invalid_argument("qkan fit", "--reps ", a.reps, " disagrees with the ", model.reps, " reps of --init ", a.init);
  }
  qkan::ModelOptions& mo = model.options;
  mo.ba_trainable = mo.postact_weight_trainable = mo.postact_bias_trainable = !a.freeze_extras;
  mo.compute = a.dtype == "f32" ? DType::f32 : DType::f64;
  a.fit.loss = loss;
  const qkan::History h = qkan::fit(model, d, a.fit);
  safetensors::save(a.output, qkan::to_safetensors(model, DType::f32));
  std::ostringstream csv;
  csv << "step,train_loss,test_loss\n";
  csv.precision(9);
  for (std::size_t k = 0; k < h.train_loss.size(); ++k) csv << k + 1 << ',' << h.train_loss[k] << ',' << h.test_loss[k] << '\n';
  const std::string text = csv.str();
  write_file_atomically(a.history, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), "qkan fit");
  if (!a.summary.empty()) {
    std::ostringstream js;
    js.precision(17);
    auto number = [&](double v) { return std::isfinite(v) ? (std::ostringstream() << std::setprecision(17) << v).str() : "null"; };
    js << "{\"steps\": " << h.train_loss.size() << ", \"train_loss\": " << number(h.train_loss.empty() ? NAN : h.train_loss.back())
       << ", \"test_loss\": " << number(h.test_loss.empty() ? NAN : h.test_loss.back()) << ", \"evaluations\": " << h.evaluations
       << ", \"seconds\": " << number(h.seconds) << ", \"dtype\": \"" << a.dtype << "\", \"threads\": " << num_threads()
       << "}\n";
    const std::string text = js.str();
    write_file_atomically(a.summary, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), "qkan fit");
  }
  std::cout << "qkan fit: train loss " << (h.train_loss.empty() ? NAN : h.train_loss.back()) << ", test loss "
            << (h.test_loss.empty() ? NAN : h.test_loss.back()) << ", " << h.evaluations << " loss+gradient evaluations in "
            << h.seconds << " s -> " << a.output << ", " << a.history << "\n";
}

struct EvalArgs {
  std::string model, input, output;
  ModelFlags flags;
};

void run_eval(const EvalArgs& a) {
  const safetensors::File file = safetensors::load(a.model);
  const qkan::Model model = qkan::from_safetensors(file, a.flags.options_for(file));
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
  auto* qkan = app.add_subcommand("qkan", "QKAN models: train them and evaluate them");
  qkan->require_subcommand(1);

  auto fa = std::make_shared<FitArgs>();
  auto* fit = qkan->add_subcommand("fit", "Train a model on a built-in formula (default: sin(20x)/(20x) on [0, 1]) or on .npy data");
  fit->add_option("--formula", fa->formula, "Built-in target: j0like, sin, exp_sin, product, sum_squares")->capture_default_str();
  fit->add_option("--range", fa->range, "Input range of the formula's variables: lo hi")->expected(2)->capture_default_str();
  fit->add_option("--train", fa->n_train, "Training rows drawn from the formula")->check(CLI::PositiveNumber)->capture_default_str();
  fit->add_option("--test", fa->n_test, "Test rows drawn from the formula")->check(CLI::NonNegativeNumber)->capture_default_str();
  fit->add_option("--train-x", fa->train_x, "Training inputs (.npy, (n, I)) instead of a formula")->check(CLI::ExistingFile);
  fit->add_option("--train-y", fa->train_y, "Training targets (.npy, (n, O), or class indices for cross_entropy)")->check(CLI::ExistingFile);
  fit->add_option("--test-x", fa->test_x, "Test inputs (.npy)")->check(CLI::ExistingFile);
  fit->add_option("--test-y", fa->test_y, "Test targets (.npy)")->check(CLI::ExistingFile);
  fa->widths_opt = fit->add_option("--widths", fa->widths, "Layer widths, e.g. 1,5,1 (default: inputs, outputs)");
  fa->reps_opt = fit->add_option("--reps", fa->reps, "Circuit repetitions")->check(CLI::Range(1, 64))->capture_default_str();
  fit->add_option("--init", fa->init, "Start from this model file's weights (safetensors) instead of a seeded initialisation")
      ->check(CLI::ExistingFile);
  fit->add_flag("--freeze-extras", fa->freeze_extras, "Train θ (and w, c) only: base weight, postact weights and bias stay fixed");
  fit->add_option("--optimizer", fa->fit.optimizer, "lbfgs or adam")->check(CLI::IsMember({"lbfgs", "adam"}))->capture_default_str();
  fit->add_option("--steps", fa->fit.steps, "Optimizer steps")->check(CLI::Range(0, 100000000))->capture_default_str();
  fit->add_option("--lr", fa->fit.lr, "Learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  fit->add_option("--batch", fa->fit.batch, "Rows per step (-1: all)")->capture_default_str();
  fit->add_option("--loss", fa->loss, "mse or cross_entropy")->check(CLI::IsMember({"mse", "cross_entropy"}))->capture_default_str();
  fit->add_option("--dtype", fa->dtype, "Compute precision: f64, or f32 (qkan.QKAN's default)")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  fit->add_option("--seed", fa->fit.seed, "Seed of the data, the initialisation and the batches")->capture_default_str();
  fit->add_option("--output", fa->output, "Model file to write (safetensors)")->capture_default_str();
  fit->add_option("--history", fa->history, "Loss history to write (CSV: step, train, test)")->capture_default_str();
  fit->add_option("--summary", fa->summary, "Also write the final losses, evaluations and time as JSON to this file");
  fit->add_option("--threads", fa->threads, "CPU threads (default: OMP_NUM_THREADS, else every core)")->check(CLI::PositiveNumber);
  fit->add_flag("--quiet", [fa](std::int64_t) { fa->fit.progress = false; }, "No progress line");
  fa->flags.preacts_trainable = true;  // the quick start's configuration; --no-preacts-trainable turns it off
  fa->flags.add_to(*fit);
  fit->add_flag("--no-preacts-trainable{false}", fa->flags.preacts_trainable, "Raw x as the data angle (the encoding off)");
  fit->callback([fa] { run_fit(*fa); });

  auto args = std::make_shared<EvalArgs>();
  auto* eval = qkan->add_subcommand("eval", "Evaluate a model (safetensors, qkan's state_dict) on inputs (.npy, (B, I))");
  eval->add_option("--model", args->model, "Model file (.safetensors)")->required()->check(CLI::ExistingFile);
  eval->add_option("--input", args->input, "Inputs, a float32 or float64 .npy of shape (B, I)")->required()->check(CLI::ExistingFile);
  eval->add_option("--output", args->output, "Where to write the outputs (.npy, (B, O), the inputs' dtype)")->required();
  args->flags.add_to(*eval);
  eval->callback([args] { run_eval(*args); });
}

}  // namespace lockstep::cli
