// `lockstep prop ...`: pulse propagation from the command line.
//   run     a recipe (default: the built-in Dudley supercontinuum) — one member, a scan or an
//           ensemble — advanced in lockstep batches; one HDF5 result file per member,
//           checkpointed while it runs, and its figures
//   scan    the same, for a recipe that has a [scan] or an [ensemble] (refuses one without)
//   resume  continues result files written by an interrupted run
//   plot    the figures of result files
//   mode    the guide calculator (prop_mode.cpp)
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/progress.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/job.hpp"
#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/plots.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/result_file.hpp"

namespace lockstep::cli {

namespace {

namespace fs = std::filesystem;
using namespace lockstep::prop;

constexpr const char* kWhere = "prop";

/// Set by SIGINT / SIGTERM: the run stops after the current chunk of steps, saving every member.
std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

/// Raised when a run stops on SIGINT / SIGTERM after saving; main() reports it.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunFlags {
  std::string output_dir = "prop_out";
  double checkpoint_seconds = 30;
  double batch_memory_mib = 0;  ///< 0: 4096 MiB on the CPU, 80% of the free device memory on CUDA
  std::string evaluation = "batched";
  std::string device = "cpu";
  std::string precision = "f64";
  int threads = 0;
  std::int64_t chunk_steps = 20;
  bool quiet = false;
  bool no_plots = false;
  std::string replay;  ///< a result file whose accepted steps become a fixed schedule

  void add_to(CLI::App& cmd, bool with_output) {
    if (with_output)
      cmd.add_option("-o,--output", output_dir, "Directory of the result files and figures")->capture_default_str();
    cmd.add_option("--checkpoint", checkpoint_seconds,
                   "Seconds between checkpoints of the result files (each a complete file, written and renamed; "
                   "longer when writing them would take more than a tenth of the run)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd.add_option("--batch-memory", batch_memory_mib,
                   "Working memory of one lockstep batch, MiB (caps its members); 0: 4096 on the CPU, 80% of the "
                   "free device memory on CUDA")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd.add_option("--device", device, "cpu, or cuda: the whole batch on the current NVIDIA GPU")
        ->check(CLI::IsMember({"cpu", "cuda"}))
        ->capture_default_str();
    cmd.add_option("--precision", precision, "f64, or f32 (CUDA only): the fields and transforms in single precision")
        ->check(CLI::IsMember({"f64", "f32"}))
        ->capture_default_str();
    cmd.add_option("--evaluation", evaluation,
                   "batched: one nonlinear evaluation per stage over the whole batch; reference: each member in turn "
                   "(CPU only)")
        ->check(CLI::IsMember({"batched", "reference"}))
        ->capture_default_str();
    cmd.add_option("--threads", threads, "CPU threads (0: all)")->check(CLI::NonNegativeNumber)->capture_default_str();
    if (with_output)
      cmd.add_option("--replay", replay,
                     "Step on a fixed schedule: the step ends of an earlier run's result file (.h5)")
          ->check(CLI::ExistingFile);
    cmd.add_flag("--quiet", quiet, "No progress line");
    cmd.add_flag("--no-plots", no_plots, "Write no figures");
  }
};

/// |Ã|² of a spectrum in FFT order, on the ascending ω grid.
std::vector<double> ascending_power(const Grid& grid, const std::vector<std::complex<double>>& spectrum) {
  std::vector<double> p(spectrum.size());
  for (std::int64_t k = 0; k < grid.size(); ++k) p[k] = std::norm(spectrum[grid.ascending_to_fft(k)]);
  return p;
}

/// 10·log10(v / max v), floored 300 dB below the peak (zero power included).
std::vector<double> decibels_of_peak(std::vector<double> v) {
  double peak = 0;
  for (double x : v) peak = std::max(peak, x);
  for (double& x : v) x = 10 * std::log10(std::max(x, peak * 1e-30) / peak);
  return v;
}

/// The figures of one result: spectral and temporal evolution, and the final spectrum, from
/// the arrays its file stores (result_arrays).
void write_figures(const ResultData& d, const fs::path& stem) {
  if (d.planes.z.size() < 2) return;  // nothing propagated yet
  const ResultArrays a = result_arrays(d);
  const std::size_t n = a.t.size();
  const std::vector<double>& lambda = a.wavelength;
  std::vector<std::vector<double>> spectra, power;
  for (std::size_t p = 0; p < d.planes.z.size(); ++p) {
    std::vector<double> s(n), q(n);
    for (std::size_t k = 0; k < n; ++k) {
      s[k] = std::norm(a.Ew[p * n + k]);
      q[k] = std::norm(a.Et[p * n + k]);
    }
    spectra.push_back(std::move(s));
    power.push_back(std::move(q));
  }
  WavelengthPlotOptions wo;
  wo.title = d.label;
  write_spectral_evolution(stem.string() + "_spectral.png", d.planes.z, lambda, spectra, wo);
  TemporalPlotOptions to;
  to.title = d.label;
  to.decibels = true;
  write_temporal_evolution(stem.string() + "_temporal.png", d.planes.z, a.t, power, to);
  const std::vector<std::vector<double>> ends_db = {decibels_of_peak(spectra.front()),
                                                    decibels_of_peak(spectra.back())};
  WavelengthPlotOptions so;
  so.title = d.label;
  char zlabel[64];
  std::snprintf(zlabel, sizeof zlabel, "z = %.4g m", d.planes.z.back());
  write_spectrum(stem.string() + "_spectrum.png", lambda, ends_db, {"input", zlabel}, so);
}

/// The coherence figure of an ensemble: |g12| of the members' final spectra.
void write_coherence_figure(const Job& job, const fs::path& path) {
  if (job.size() < 2) return;
  const Grid grid(job.members().front().config().grid);
  std::vector<std::vector<std::complex<double>>> finals;
  for (const Member& m : job.members()) finals.push_back(m.spectrum());
  const std::vector<double> g12 = coherence(finals, grid);
  std::vector<double> mean(static_cast<std::size_t>(grid.size()), 0.0);
  for (const auto& s : finals) {
    const std::vector<double> p = ascending_power(grid, s);
    for (std::size_t k = 0; k < p.size(); ++k) mean[k] += p[k] / static_cast<double>(finals.size());
  }
  WavelengthPlotOptions o;
  o.title = "coherence of " + std::to_string(job.size()) + " shot-noise members";
  write_coherence(path, grid.wavelengths(), g12, decibels_of_peak(mean), o);
}

/// The job's run with the CLI's flags: a progress line per batch, SIGINT / SIGTERM stopping it
/// after the current chunk of steps with every file saved.
void advance(Job& job, const RunFlags& flags) {
  JobOptions options;
  options.engine.device = flags.device == "cuda" ? Device::cuda : Device::cpu;
  options.engine.precision = flags.precision == "f32" ? DType::f32 : DType::f64;
  options.engine.threads = flags.threads;
  if (options.engine.device == Device::cuda && flags.evaluation == "reference")
    invalid_argument(kWhere, "--evaluation reference runs on the CPU only (on CUDA, --batch-memory caps the batch)");
  options.evaluation = flags.evaluation == "reference" ? Evaluation::per_member : Evaluation::batched;
  options.batch_memory_mib = flags.batch_memory_mib;
  options.checkpoint_seconds = flags.checkpoint_seconds;
  options.chunk_steps = flags.chunk_steps;
  std::unique_ptr<Progress> progress;
  std::size_t progress_batch = 0;
  options.progress = [&](const JobProgress& p) {
    if (!progress || progress_batch != p.batch) {
      std::string label = "prop";
      if (p.batches > 1) label += " batch " + std::to_string(p.batch) + "/" + std::to_string(p.batches);
      if (p.members > 1) label += " (" + std::to_string(p.members) + " members)";
      progress = std::make_unique<Progress>(label, p.length, "m", !flags.quiet);
      progress_batch = p.batch;
    }
    if (p.finished) {
      progress->finish(std::to_string(p.steps) + " steps");
      progress.reset();
      return;
    }
    char detail[96];
    std::snprintf(detail, sizeof detail, "%lld steps, %.1f steps/s", static_cast<long long>(p.steps),
                  p.steps_per_second);
    progress->update(p.z, detail);
  };
  g_interrupted.store(false);
  options.interrupt = &g_interrupted;
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  struct RestoreSignals {
    decltype(previous_int) i, t;
    ~RestoreSignals() { std::signal(SIGINT, i), std::signal(SIGTERM, t); }
  } restore{previous_int, previous_term};
  try {
    job.run(options);
  } catch (const JobInterrupted& e) {
    throw Interrupted(std::string(e.what()) + ": continue with 'lockstep prop resume " + job.files().front().string() +
                      (job.size() > 1 ? " ...'" : "'"));
  }
}

void write_all_figures(const Job& job, const RunFlags& flags) {
  if (flags.no_plots) return;
  // An ensemble's members differ only by their noise: the first member's figures and the
  // coherence stand for all of them (thousands of members would otherwise spend longer
  // drawing than propagating). `prop plot` draws any member's.
  const std::size_t drawn = job.ensemble() ? 1 : job.size();
  for (std::size_t k = 0; k < drawn; ++k) {
    fs::path stem = job.files()[k];
    stem.replace_extension();
    write_figures(job.result(k), stem);
  }
  if (job.ensemble()) {
    fs::path path = job.files().front().parent_path() / "coherence.png";
    write_coherence_figure(job, path);
  }
}

void report(const Job& job) {
  for (std::size_t k = 0; k < job.size(); ++k) {
    const Member& m = job.members()[k];
    const Ledger& l = m.ledger();
    const Statistics& s = m.statistics();
    double drift = 0;
    if (!s.photon_number.empty() && s.photon_number.front() != 0) {
      const double n0 = s.photon_number.front();
      for (double n : s.photon_number) drift = std::max(drift, std::abs(n / n0 - 1));
    }
    std::printf("%s: z = %.6g m, %lld steps (%lld rejected), %lld RHS evaluations, photon-number drift %.2e, %.2f s\n",
                job.files()[k].string().c_str(), l.z, static_cast<long long>(l.accepted_steps),
                static_cast<long long>(l.rejected_steps), static_cast<long long>(l.rhs_evaluations), drift,
                l.wall_time);
  }
}

/// The members of a recipe (the built-in Dudley case when `recipe_path` is empty); with
/// `replay`, each steps on the schedule of that earlier run (its accepted step ends).
Job job_from_recipe(const std::string& recipe_path, const std::string& output_dir, const std::string& replay) {
  Recipe recipe;
  std::string base = "dudley";
  if (recipe_path.empty()) {
    recipe.config = Config{};
    recipe.text = serialize_config(recipe.config);
  } else {
    recipe = load_recipe(recipe_path);
    base = fs::path(recipe_path).stem().string();
  }
  std::vector<double> schedule;
  if (!replay.empty()) schedule = accepted_step_ends(replay);
  return Job::from_recipe(recipe, base, output_dir, schedule);
}

void run_recipe(const std::string& recipe_path, const RunFlags& flags, bool require_scan) {
  Job job = job_from_recipe(recipe_path, flags.output_dir, flags.replay);
  if (require_scan && job.size() < 2)
    invalid_argument(kWhere, "'prop scan' needs a recipe with a [scan] or an [ensemble] section; ", recipe_path,
                     " describes one member (use 'prop run')");
  advance(job, flags);
  write_all_figures(job, flags);
  report(job);
}

void resume_files(const std::vector<std::string>& files, const std::string& recipe_path, const RunFlags& flags) {
  Recipe recipe;
  if (!recipe_path.empty()) recipe = load_recipe(recipe_path);
  Job job = Job::resume(std::vector<fs::path>(files.begin(), files.end()), recipe_path.empty() ? nullptr : &recipe);
  // A kill during a batch checkpoint's renames: its remaining files were staged, complete.
  if (const auto& rolled = job.rolled_forward(); !rolled.empty())
    std::fprintf(stderr, "prop resume: %zu file(s) completed from the checkpoint a kill interrupted (%s ...)\n",
                 rolled.size(), rolled.front().string().c_str());
  advance(job, flags);
  write_all_figures(job, flags);
  report(job);
}

void plot_files(const std::vector<std::string>& files, const std::string& output_dir) {
  for (const std::string& file : files) {
    const ResultData d = read_result(file);
    fs::path stem = output_dir.empty() ? fs::path(file) : fs::path(output_dir) / fs::path(file).filename();
    stem.replace_extension();
    if (!output_dir.empty()) fs::create_directories(output_dir);
    write_figures(d, stem);
    std::printf("%s: %s_{spectral,temporal,spectrum}.png\n", file.c_str(), stem.string().c_str());
  }
}

}  // namespace

void add_prop_commands(CLI::App& app) {
  auto* prop = app.add_subcommand("prop", "Nonlinear pulse propagation (GNLSE), many members in lockstep");
  prop->require_subcommand(1);

  auto* run = prop->add_subcommand("run", "Run a recipe (default: the built-in Dudley supercontinuum)");
  auto run_flags = std::make_shared<RunFlags>();
  auto run_recipe_path = std::make_shared<std::string>();
  run->add_option("recipe", *run_recipe_path, "Recipe (TOML, see docs/RECIPES.md); none: the built-in Dudley case")
      ->check(CLI::ExistingFile);
  run_flags->add_to(*run, true);
  run->callback([=] { run_recipe(*run_recipe_path, *run_flags, false); });

  auto* scan = prop->add_subcommand("scan", "Run a recipe's parameter scan or shot-noise ensemble in lockstep batches");
  auto scan_flags = std::make_shared<RunFlags>();
  auto scan_recipe_path = std::make_shared<std::string>();
  scan->add_option("recipe", *scan_recipe_path, "Recipe with a [scan] or [ensemble] section")
      ->required()
      ->check(CLI::ExistingFile);
  scan_flags->add_to(*scan, true);
  scan->callback([=] { run_recipe(*scan_recipe_path, *scan_flags, true); });

  auto* resume = prop->add_subcommand("resume", "Continue result files of an interrupted run to the end of the fibre");
  auto resume_flags = std::make_shared<RunFlags>();
  auto resume_paths = std::make_shared<std::vector<std::string>>();
  auto resume_recipe = std::make_shared<std::string>();
  resume->add_option("files", *resume_paths, "Result files (.h5) written by 'prop run' or 'prop scan'")
      ->required()
      ->check(CLI::ExistingFile);
  resume
      ->add_option(
          "--recipe", *resume_recipe,
          "Continue only if this recipe describes the same configuration (refusals name the fields that differ)")
      ->check(CLI::ExistingFile);
  resume_flags->add_to(*resume, false);
  resume->callback([=] { resume_files(*resume_paths, *resume_recipe, *resume_flags); });

  auto* plot = prop->add_subcommand(
      "plot", "Write the figures of result files (spectral and temporal evolution, final spectrum)");
  auto plot_paths = std::make_shared<std::vector<std::string>>();
  auto plot_dir = std::make_shared<std::string>();
  plot->add_option("files", *plot_paths, "Result files (.h5)")->required()->check(CLI::ExistingFile);
  plot->add_option("-o,--output", *plot_dir, "Directory of the figures (default: beside each file)");
  plot->callback([=] { plot_files(*plot_paths, *plot_dir); });

  add_mode_command(*prop);
}

bool is_interruption(const std::exception& e) { return dynamic_cast<const Interrupted*>(&e) != nullptr; }

}  // namespace lockstep::cli
