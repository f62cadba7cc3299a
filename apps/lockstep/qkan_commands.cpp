// `lockstep qkan ...`: QKAN models from the command line.
//   fit    trains a model on a built-in formula or on data files (.npy or .csv); writes the
//          model (safetensors, qkan's state_dict names), the loss history (CSV) and a PNG figure
//   eval   a model file and inputs -> outputs; with --targets, also the loss and, with
//          --gradients, its gradient with respect to every parameter (safetensors)
//   bench  times the model's forward, forward + backward and a training step
// Each runs on the CPU or, with --device cuda, on a CUDA device (the model's engine, model_engine.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "lockstep/core/csv.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/files.hpp"
#include "lockstep/core/npy.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/core/safetensors.hpp"
#include "lockstep/qkan/model_engine.hpp"
#include "lockstep/qkan/model.hpp"
#include "lockstep/qkan/optim.hpp"
#include "lockstep/qkan/plots.hpp"
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
    ansatz_opt = cmd.add_option("--ansatz", ansatz,
                                "Circuit ansatz: pz_encoding (pz), rpz_encoding (rpz), px_encoding (px), real, mix")
                     ->capture_default_str();
    preacts_opt =
        cmd.add_flag("--preacts-trainable", preacts_trainable, "The data angle is w·x + c (the encoding is on)");
    measure_opt = cmd.add_option("--measure", measure, "fast (|α| − |β|) or z (⟨Z⟩)")
                      ->check(CLI::IsMember({"fast", "z"}))
                      ->capture_default_str();
    activation_opt = cmd.add_option("--base-activation", base_activation, "silu, gelu, relu, tanh or sigmoid")
                         ->capture_default_str();
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

/// --device: where the model runs.
constexpr const char* kDeviceHelp =
    "Where the model runs: cpu, or cuda (a CUDA device; needs a build with CUDA and a visible GPU)";
Device parse_device(const std::string& name) { return name == "cuda" ? Device::cuda : Device::cpu; }
CLI::Option* add_device_option(CLI::App& cmd, std::string& device) {
  return cmd.add_option("--device", device, kDeviceHelp)->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
}

void write_text(const std::string& path, const std::string& text, std::string_view where) {
  write_file_atomically(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), where);
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os << std::setprecision(17) << v;
  return os.str();
}

bool has_extension(const std::string& path, std::string_view ext) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ext;
}

/// A data file's rows as (n, cols): .csv (numbers, optional header) or .npy (1-D is one column).
struct Rows {
  std::int64_t n = 0, cols = 0;
  std::vector<double> values;
  DType stored = DType::f64;  ///< the .npy file's element type (f64 for CSV)
};
Rows load_rows(const std::string& path, std::string_view where) {
  if (has_extension(path, ".csv")) {
    csv::Table t = csv::load(path);
    return {t.rows, t.cols, std::move(t.values), DType::f64};
  }
  npy::Array a = npy::load(path);
  if (a.shape.size() == 1) a.shape.push_back(1);
  if (a.shape.size() != 2)
    invalid_argument(where, path, " has shape ", to_string(a.shape), "; expected (rows, columns)");
  return {a.shape[0], a.shape[1], std::move(a.values), a.stored};
}

/// Writes (rows, cols) values as .csv when the path ends so, else as .npy of `dtype`.
void save_rows(const std::string& path, std::span<const double> values, std::int64_t rows, std::int64_t cols,
               DType dtype) {
  if (has_extension(path, ".csv")) csv::save(path, values, rows, cols);
  else npy::save(path, values, {rows, cols}, dtype);
}

std::vector<std::int64_t> parse_widths(const std::string& text, std::string_view where) {
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
    if (used != item.size() || v < 1)
      invalid_argument(where, "--widths wants positive integers like 1,5,1, got '", text, "'");
    w.push_back(v);
  }
  if (w.size() < 2) invalid_argument(where, "--widths needs at least two widths, got '", text, "'");
  return w;
}

// ---------------------------------------------------------------------------------------- fit

struct FitArgs {
  std::string formula = "j0like";
  std::vector<double> range = {0.0, 1.0};
  std::int64_t n_train = 1000, n_test = 1000;
  std::string train_x, train_y, test_x, test_y;  // data files instead of a formula
  std::string widths;                            // "1,1"; default [inputs, 1] (or classes)
  int reps = 3;
  bool freeze_extras = false;
  qkan::FitOptions fit;
  std::string loss = "mse";
  std::string dtype = "f64";
  std::string device = "cpu";
  std::string output = "qkan_fit.safetensors", history = "qkan_fit_history.csv", plot;
  std::string activations_plot;  // figure of every edge's learned function; empty: none
  std::string init;              // start from this model file's weights instead of a fresh initialisation
  std::string summary;           // JSON with the final losses, evaluations and time
  int threads = 0;
  ModelFlags flags;
  CLI::Option *widths_opt = nullptr, *reps_opt = nullptr, *plot_opt = nullptr;
};

qkan::Dataset load_dataset(const FitArgs& a) {
  qkan::Dataset d;
  if (a.train_x.empty() && a.train_y.empty() && a.test_x.empty() && a.test_y.empty()) {
    if (a.range.size() != 2) invalid_argument("qkan fit", "--range wants two numbers, lo and hi");
    return qkan::make_dataset(a.formula, a.range[0], a.range[1], a.n_train, a.n_test, a.fit.seed);
  }
  if (a.train_x.empty() || a.train_y.empty() || a.test_x.empty() || a.test_y.empty())
    invalid_argument("qkan fit", "data from files needs all of --train-x, --train-y, --test-x, --test-y");
  Rows tx = load_rows(a.train_x, "qkan fit"), ty = load_rows(a.train_y, "qkan fit");
  Rows vx = load_rows(a.test_x, "qkan fit"), vy = load_rows(a.test_y, "qkan fit");
  if (ty.n != tx.n || vy.n != vx.n || vx.cols != tx.cols || vy.cols != ty.cols)
    invalid_argument("qkan fit", "the data files disagree: train x ", tx.n, "x", tx.cols, ", y ", ty.n, "x", ty.cols,
                     "; test x ", vx.n, "x", vx.cols, ", y ", vy.n, "x", vy.cols);
  d.n_in = tx.cols, d.n_out = ty.cols, d.n_train = tx.n, d.n_test = vx.n;
  d.train_x = std::move(tx.values), d.train_y = std::move(ty.values);
  d.test_x = std::move(vx.values), d.test_y = std::move(vy.values);
  return d;
}

/// The figure of the fit on the test rows (the training rows when there are none): for one
/// input and one output the curves over x; otherwise predicted against true values (for
/// cross-entropy, the predicted class against the true one).
void write_plot(const FitArgs& a, const qkan::Model& model, const qkan::Dataset& d, qkan::Loss loss,
                const qkan::History& h) {
  const bool test = d.n_test > 0;
  const std::vector<double>& x = test ? d.test_x : d.train_x;
  const std::vector<double>& t = test ? d.test_y : d.train_y;
  const std::int64_t n = test ? d.n_test : d.n_train, O = model.widths.back();
  const std::vector<double> y = qkan::forward(model, x, n);
  qkan::FitPlotData p;
  p.title = a.train_x.empty() ? "qkan fit: " + a.formula
                              : "qkan fit: " + std::filesystem::path(a.train_x).filename().string();
  p.title += test ? " (test rows)" : " (training rows)";
  if (loss == qkan::Loss::cross_entropy) {
    for (std::int64_t r = 0; r < n; ++r) {
      p.target.push_back(t[r]);
      p.prediction.push_back(
          double(std::max_element(y.begin() + r * O, y.begin() + (r + 1) * O) - (y.begin() + r * O)));
    }
    p.loss_name = "cross-entropy";
  } else {
    if (d.n_in == 1 && O == 1) p.x = x;
    p.target = t, p.prediction = y;
    p.loss_name = "MSE";
  }
  p.train_loss = h.train_loss, p.test_loss = test ? h.test_loss : std::vector<double>{};
  qkan::write_fit_plot(a.plot, p);
}

/// The figure of every edge's learned function, each layer's edges sampled at 200 points across
/// the range its inputs take on the training rows.
void write_activations(const std::string& path, const qkan::Model& model, const qkan::Dataset& d) {
  std::vector<qkan::ActivationCurve> curves;
  std::vector<double> inputs = d.train_x;  // the inputs of layer k, (n_train, widths[k])
  for (std::size_t k = 0; k < model.layers.size(); ++k) {
    const auto [lo, hi] = std::minmax_element(inputs.begin(), inputs.end());
    const double a = *lo, b = *hi > *lo ? *hi : *lo + 1;
    std::vector<double> x(200);
    for (std::size_t s = 0; s < x.size(); ++s) x[s] = a + (b - a) * double(s) / double(x.size() - 1);
    const std::vector<double> f = qkan::edge_functions(model, k, x);
    const std::int64_t O = model.layers[k].out, I = model.layers[k].in;
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t i = 0; i < I; ++i) {
        qkan::ActivationCurve c;
        c.layer = static_cast<int>(k), c.input = static_cast<int>(i), c.output = static_cast<int>(o), c.x = x;
        for (std::size_t s = 0; s < x.size(); ++s) c.y.push_back(f[(s * O + o) * I + i]);
        curves.push_back(std::move(c));
      }
    if (k + 1 < model.layers.size()) {  // the next layer's inputs: this layer's outputs
      const qkan::Model layer{model.options, model.reps, {model.widths[k], model.widths[k + 1]}, {model.layers[k]}};
      inputs = qkan::forward(layer, inputs, d.n_train);
    }
  }
  qkan::write_activations_plot(path, curves, "learned activations");
}

void run_fit(FitArgs a) {
  if (a.threads > 0) set_num_threads(a.threads);
  a.fit.device = parse_device(a.device);
  if (!a.plot_opt->count()) a.plot = std::filesystem::path(a.output).replace_extension(".png").string();
  const qkan::Loss loss = qkan::parse_loss(a.loss);
  const qkan::Dataset d = load_dataset(a);
  std::int64_t outputs = d.n_out;
  if (loss == qkan::Loss::cross_entropy) {
    if (d.n_out != 1)
      invalid_argument("qkan fit", "cross_entropy wants one target column of class indices, got ", d.n_out);
    double top = 0;
    for (double c : d.train_y) top = std::max(top, c);
    outputs = static_cast<std::int64_t>(top) + 1;
  }
  const std::vector<std::int64_t> widths =
      a.widths.empty() ? std::vector<std::int64_t>{d.n_in, outputs} : parse_widths(a.widths, "qkan fit");
  qkan::ModelOptions trains = a.flags.options();  // the initialisation depends on what trains
  trains.ba_trainable = trains.postact_weight_trainable = trains.postact_bias_trainable = !a.freeze_extras;
  qkan::Model model;
  if (a.init.empty()) {
    model = qkan::init_model(widths, a.reps, trains, a.fit.seed);
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
  for (std::size_t k = 0; k < h.train_loss.size(); ++k)
    csv << k + 1 << ',' << h.train_loss[k] << ',' << h.test_loss[k] << '\n';
  write_text(a.history, csv.str(), "qkan fit");
  if (!a.plot.empty()) write_plot(a, model, d, loss, h);
  if (!a.activations_plot.empty()) write_activations(a.activations_plot, model, d);
  const double train = h.train_loss.empty() ? NAN : h.train_loss.back(),
               test = h.test_loss.empty() ? NAN : h.test_loss.back();
  if (!a.summary.empty()) {
    std::ostringstream js;
    js << "{\"steps\": " << h.train_loss.size() << ", \"train_loss\": " << json_number(train)
       << ", \"test_loss\": " << json_number(test) << ", \"evaluations\": " << h.evaluations
       << ", \"seconds\": " << json_number(h.seconds) << ", \"dtype\": \"" << a.dtype << "\", \"device\": \""
       << a.device << "\", \"threads\": " << num_threads() << "}\n";
    write_text(a.summary, js.str(), "qkan fit");
  }
  std::cout << "qkan fit: train loss " << train << ", test loss " << test << ", " << h.evaluations
            << " loss+gradient evaluations in " << h.seconds << " s -> " << a.output << ", " << a.history
            << (a.plot.empty() ? "" : ", " + a.plot) << "\n";
}

// --------------------------------------------------------------------------------------- eval

struct EvalArgs {
  std::string model, input, output, targets, gradients, loss = "mse", device = "cpu";
  ModelFlags flags;
};

/// The loss's gradient with respect to every tensor the loss depends on, by qkan's state_dict
/// names, in float64; the loss itself in the metadata ("loss", "loss_kind").
safetensors::File gradient_file(const qkan::Model& model, const std::vector<qkan::LayerParams>& g, double value,
                                const std::string& kind) {
  safetensors::File f;
  f.metadata = {{"loss", json_number(value)}, {"loss_kind", kind}};
  const bool encoding = qkan::encoding_active(model.options.ansatz, model.options.preacts_trainable);
  const std::int64_t R = qkan::theta_rows(model.options.ansatz, model.reps), K = qkan::theta_cols(model.options.ansatz);
  for (std::size_t k = 0; k < g.size(); ++k) {
    const std::string p = "layers." + std::to_string(k) + ".";
    const std::int64_t O = model.layers[k].out, I = model.layers[k].in;
    f.tensors[p + "theta"] = safetensors::from_values<double>(g[k].theta, {O, I, R, K});
    if (encoding) {
      f.tensors[p + "preacts_weight"] = safetensors::from_values<double>(g[k].preacts_weight, {O, I, model.reps});
      f.tensors[p + "preacts_bias"] = safetensors::from_values<double>(g[k].preacts_bias, {O, I, model.reps});
    }
    f.tensors[p + "base_weight"] = safetensors::from_values<double>(g[k].base_weight, {O, I});
    f.tensors[p + "postact_weights"] = safetensors::from_values<double>(g[k].postact_weights, {O, I});
    f.tensors[p + "postact_bias"] = safetensors::from_values<double>(g[k].postact_bias, {O, I});
  }
  return f;
}

void run_eval(const EvalArgs& a) {
  const safetensors::File file = safetensors::load(a.model);
  qkan::Model model = qkan::from_safetensors(file, a.flags.options_for(file));
  const Rows x = load_rows(a.input, "qkan eval");
  if (x.cols != model.widths.front())
    invalid_argument("qkan eval", a.input, " has ", x.cols, " columns; the model takes ", model.widths.front(),
                     " inputs");
  const std::int64_t B = x.n;
  // Every tensor the loss depends on gets its gradient, whatever trains in a fit.
  if (!a.targets.empty())
    model.options.ba_trainable = model.options.postact_weight_trainable = model.options.postact_bias_trainable = true;
  const auto engine = qkan::make_model_engine(model, parse_device(a.device));
  const auto rows = engine->make_rows();
  engine->load(*rows, x.values, B);
  const std::vector<double> y = engine->forward(*rows);
  save_rows(a.output, y, B, model.widths.back(), x.stored);
  std::cerr << "qkan eval: " << B << " rows through widths [";
  for (std::size_t k = 0; k < model.widths.size(); ++k) std::cerr << (k ? ", " : "") << model.widths[k];
  std::cerr << "], reps " << model.reps << " on " << a.device << " -> " << a.output << "\n";
  if (a.targets.empty()) return;
  const qkan::Loss kind = qkan::parse_loss(a.loss);
  const Rows t = load_rows(a.targets, "qkan eval");
  const std::int64_t want = kind == qkan::Loss::mse ? model.widths.back() : 1;
  if (t.n != B || t.cols != want)
    invalid_argument("qkan eval", a.targets, " has ", t.n, "x", t.cols, " values; expected ", B, "x", want, " for ",
                     a.loss);
  engine->load(*rows, x.values, B, t.values, kind);
  const double value = engine->loss_and_gradient(*rows);
  const std::vector<qkan::LayerParams>& g = engine->gradient();
  std::cout << std::setprecision(17) << "loss " << value << "\n";
  if (!a.gradients.empty()) {
    safetensors::save(a.gradients, gradient_file(model, g, value, a.loss));
    std::cerr << "qkan eval: the loss's gradients -> " << a.gradients << "\n";
  }
}

// -------------------------------------------------------------------------------------- bench

struct BenchArgs {
  std::string widths = "64,64";
  std::int64_t batch = 1024;
  int reps = 3, repeats = 20, warmup = 2, threads = 0;
  std::string dtype = "f32", device = "cpu", json;
  ModelFlags flags;
};

struct Timing {
  std::string what;
  double median_s = 0, min_s = 0;
};

/// Median and minimum over `repeats` timed calls after `warmup` untimed ones.
template <class F> Timing time_calls(const std::string& what, int warmup, int repeats, F&& call) {
  for (int k = 0; k < warmup; ++k) call();
  std::vector<double> s(repeats);
  for (double& v : s) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    v = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(s.begin(), s.end());
  return {what, s[s.size() / 2], s.front()};
}

void run_bench(const BenchArgs& a) {
  if (a.threads > 0) set_num_threads(a.threads);
  const std::vector<std::int64_t> widths = parse_widths(a.widths, "qkan bench");
  qkan::ModelOptions mo = a.flags.options();
  mo.ba_trainable = mo.postact_weight_trainable = mo.postact_bias_trainable = true;
  mo.compute = a.dtype == "f32" ? DType::f32 : DType::f64;
  qkan::Model model = qkan::init_model(widths, a.reps, mo, 0);
  const std::int64_t B = a.batch, I = widths.front(), O = widths.back();
  std::vector<double> x(B * I), t(B * O);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.37 * double(k));  // deterministic, in [-1, 1]
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = std::cos(0.11 * double(k));
  std::int64_t circuits = 0;
  for (std::size_t k = 0; k + 1 < widths.size(); ++k) circuits += B * widths[k] * widths[k + 1];
  double sink = 0;  // keeps the results alive
  std::vector<Timing> rows;
  // Each call returns once its result is on the host (forward's outputs, the loss); on CUDA an
  // Adam step is queued, and the next call waits for it.
  const auto engine = qkan::make_model_engine(model, parse_device(a.device));
  const auto batch = engine->make_rows();
  engine->load(*batch, x, B, t);
  const auto adam = engine->make_adam(qkan::AdamOptions{});
  rows.push_back(time_calls("forward", a.warmup, a.repeats, [&] { sink += engine->forward(*batch)[0]; }));
  rows.push_back(
      time_calls("forward+backward", a.warmup, a.repeats, [&] { sink += engine->loss_and_gradient(*batch); }));
  rows.push_back(time_calls("training step (Adam)", a.warmup, a.repeats, [&] {
    sink += engine->loss_and_gradient(*batch);
    adam->step();
  }));
  if (!std::isfinite(sink)) runtime_failure("qkan bench", "the benchmark's results are not finite");

  std::cout << "qkan bench: widths " << a.widths << ", batch " << B << ", reps " << a.reps << ", " << a.flags.ansatz
            << ", " << a.dtype << ", "
            << (a.device == "cuda" ? std::string("cuda") : std::to_string(num_threads()) + " threads") << "; "
            << circuits << " circuits per forward\n";
  std::cout << std::left << std::setw(24) << "what" << std::right << std::setw(14) << "median ms" << std::setw(14)
            << "min ms" << std::setw(18) << "ns per circuit"
            << "\n";
  for (const Timing& r : rows)
    std::cout << std::left << std::setw(24) << r.what << std::right << std::fixed << std::setprecision(4)
              << std::setw(14) << 1e3 * r.median_s << std::setw(14) << 1e3 * r.min_s << std::setprecision(2)
              << std::setw(18) << 1e9 * r.median_s / double(circuits) << "\n";
  if (!a.json.empty()) {
    std::ostringstream js;
    js << "{\"widths\": [";
    for (std::size_t k = 0; k < widths.size(); ++k) js << (k ? ", " : "") << widths[k];
    js << "], \"batch\": " << B << ", \"reps\": " << a.reps << ", \"ansatz\": \"" << a.flags.ansatz
       << "\", \"dtype\": \"" << a.dtype << "\", \"device\": \"" << a.device << "\", \"threads\": " << num_threads()
       << ", \"repeats\": " << a.repeats << ", \"circuits\": " << circuits << ", \"timings\": [";
    for (std::size_t k = 0; k < rows.size(); ++k)
      js << (k ? ", " : "") << "{\"what\": \"" << rows[k].what << "\", \"median_s\": " << json_number(rows[k].median_s)
         << ", \"min_s\": " << json_number(rows[k].min_s) << "}";
    js << "]}\n";
    write_text(a.json, js.str(), "qkan bench");
  }
}

}  // namespace

void add_qkan_commands(CLI::App& app) {
  auto* qkan = app.add_subcommand("qkan", "QKAN models: train, evaluate and time them");
  qkan->require_subcommand(1);

  auto fa = std::make_shared<FitArgs>();
  auto* fit = qkan->add_subcommand(
      "fit", "Train a model on a built-in formula (default: sin(20x)/(20x) on [0, 1]) or on data files (.npy or .csv)");
  fit->add_option("--formula", fa->formula, "Built-in target: j0like, sin, exp_sin, product, sum_squares")
      ->capture_default_str();
  fit->add_option("--range", fa->range, "Input range of the formula's variables: lo hi")
      ->expected(2)
      ->capture_default_str();
  fit->add_option("--train", fa->n_train, "Training rows drawn from the formula")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fit->add_option("--test", fa->n_test, "Test rows drawn from the formula")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  fit->add_option("--train-x", fa->train_x, "Training inputs (.npy or .csv, (n, I)) instead of a formula")
      ->check(CLI::ExistingFile);
  fit->add_option("--train-y", fa->train_y,
                  "Training targets (.npy or .csv, (n, O), or class indices for cross_entropy)")
      ->check(CLI::ExistingFile);
  fit->add_option("--test-x", fa->test_x, "Test inputs (.npy or .csv)")->check(CLI::ExistingFile);
  fit->add_option("--test-y", fa->test_y, "Test targets (.npy or .csv)")->check(CLI::ExistingFile);
  fa->widths_opt = fit->add_option("--widths", fa->widths, "Layer widths, e.g. 1,5,1 (default: inputs, outputs)");
  fa->reps_opt =
      fit->add_option("--reps", fa->reps, "Circuit repetitions")->check(CLI::Range(1, 64))->capture_default_str();
  fit->add_option("--init", fa->init,
                  "Start from this model file's weights (safetensors) instead of a seeded initialisation")
      ->check(CLI::ExistingFile);
  fit->add_flag("--freeze-extras", fa->freeze_extras,
                "Train θ (and w, c) only: base weight, postact weights and bias stay fixed");
  fit->add_option("--optimizer", fa->fit.optimizer, "lbfgs or adam")
      ->check(CLI::IsMember({"lbfgs", "adam"}))
      ->capture_default_str();
  fit->add_option("--steps", fa->fit.steps, "Optimizer steps")->check(CLI::Range(0, 100000000))->capture_default_str();
  fit->add_option("--lr", fa->fit.lr, "Learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  fit->add_option("--batch", fa->fit.batch, "Rows per step (-1: all)")->capture_default_str();
  fit->add_option("--loss", fa->loss, "mse or cross_entropy")
      ->check(CLI::IsMember({"mse", "cross_entropy"}))
      ->capture_default_str();
  fit->add_option("--dtype", fa->dtype, "Compute precision: f64, or f32 (qkan.QKAN's default)")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  add_device_option(*fit, fa->device);
  fit->add_option("--seed", fa->fit.seed, "Seed of the data, the initialisation and the batches")
      ->capture_default_str();
  fit->add_option("--output", fa->output, "Model file to write (safetensors)")->capture_default_str();
  fit->add_option("--history", fa->history, "Loss history to write (CSV: step, train, test)")->capture_default_str();
  fa->plot_opt =
      fit->add_option("--plot", fa->plot,
                      "Figure of the fit and the loss history to write (PNG; default: --output's path with .png, "
                      "qkan_fit.png; \"\" for none)");
  fit->add_option("--activations-plot", fa->activations_plot,
                  "Also write a figure of every edge's learned function, a panel per layer (PNG)");
  fit->add_option("--summary", fa->summary, "Also write the final losses, evaluations and time as JSON to this file");
  fit->add_option("--threads", fa->threads, "CPU threads (default: OMP_NUM_THREADS, else every core)")
      ->check(CLI::PositiveNumber);
  fit->add_flag(
      "--quiet", [fa](std::int64_t) { fa->fit.progress = false; }, "No progress line");
  fa->flags.preacts_trainable = true;  // the quick start's configuration; --no-preacts-trainable turns it off
  fa->flags.add_to(*fit);
  fit->add_flag("--no-preacts-trainable{false}", fa->flags.preacts_trainable,
                "Raw x as the data angle (the encoding off)");
  fit->callback([fa] { run_fit(*fa); });

  auto ea = std::make_shared<EvalArgs>();
  auto* eval = qkan->add_subcommand(
      "eval", "Evaluate a model (safetensors, qkan's state_dict) on inputs (.npy or .csv, (B, I))");
  eval->add_option("--model", ea->model, "Model file (.safetensors)")->required()->check(CLI::ExistingFile);
  eval->add_option("--input", ea->input, "Inputs: a float32 or float64 .npy, or a .csv, of shape (B, I)")
      ->required()
      ->check(CLI::ExistingFile);
  eval->add_option("--output", ea->output, "Where to write the outputs, (B, O): .csv, or .npy in the inputs' dtype")
      ->required();
  auto* targets = eval->add_option("--targets", ea->targets,
                                   "Targets (.npy or .csv): also print the loss of the outputs against them")
                      ->check(CLI::ExistingFile);
  eval->add_option("--loss", ea->loss, "mse or cross_entropy (targets are class indices)")
      ->check(CLI::IsMember({"mse", "cross_entropy"}))
      ->capture_default_str()
      ->needs(targets);
  eval->add_option(
          "--gradients", ea->gradients,
          "Write the loss's gradient with respect to every parameter here (safetensors, qkan's names, float64)")
      ->needs(targets);
  add_device_option(*eval, ea->device);
  ea->flags.add_to(*eval);
  eval->callback([ea] { run_eval(*ea); });

  auto ba = std::make_shared<BenchArgs>();
  auto* bench = qkan->add_subcommand("bench", "Time the model's forward, forward + backward and an Adam training step");
  bench->add_option("--widths", ba->widths, "Layer widths, e.g. 64,64 or 8,16,1")->capture_default_str();
  bench->add_option("--batch", ba->batch, "Rows per call")->check(CLI::PositiveNumber)->capture_default_str();
  bench->add_option("--reps", ba->reps, "Circuit repetitions")->check(CLI::Range(1, 64))->capture_default_str();
  bench->add_option("--dtype", ba->dtype, "Compute precision: f32 or f64")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  bench->add_option("--threads", ba->threads, "CPU threads (default: OMP_NUM_THREADS, else every core)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--repeats", ba->repeats, "Timed calls per measurement (the median is reported)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  bench->add_option("--warmup", ba->warmup, "Untimed calls first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  bench->add_option("--json", ba->json, "Also write the results as JSON to this file");
  add_device_option(*bench, ba->device);
  ba->flags.add_to(*bench);
  bench->callback([ba] { run_bench(*ba); });
}

}  // namespace lockstep::cli
