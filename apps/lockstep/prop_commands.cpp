// `lockstep prop ...`: pulse propagation from the command line.
//   run     a recipe (default: the built-in Dudley supercontinuum) — one member, a scan or an
//           ensemble — advanced in lockstep batches; one HDF5 result file per member,
//           checkpointed while it runs, and its figures
//   scan    the same, for a recipe that has a [scan] or an [ensemble] (refuses one without)
//   resume  continues result files written by an interrupted run
//   plot    the figures of result files
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "commands.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/core/progress.hpp"
#include "lockstep/prop/config_hash.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/member.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/plots.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/result_file.hpp"
#include "lockstep/prop/runner.hpp"
#include "lockstep/prop/scan.hpp"
#include "lockstep/prop/transform.hpp"

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

/// What a run advances: members with their files and labels, and the recipe they came from.
struct Job {
  std::string recipe_text;
  std::vector<std::string> labels;
  std::vector<fs::path> files;
  std::vector<Member> members;
  bool ensemble = false;       ///< shot-noise members of one configuration: a coherence figure too
  bool files_written = false;  ///< every member's file holds its current state (a resumed job)
};

std::string file_stem(const std::string& base, const std::string& label) {
  if (label.empty()) return base;
  std::string s = base + "_";
  for (char ch : label) s += (ch == '=' ? '-' : ch == ',' ? '_' : ch == '/' ? '_' : ch);
  return s;
}

ResultData result_of(const Job& job, std::size_t k) {
  const Member& m = job.members[k];
  ResultData d;
  d.recipe = job.recipe_text;
  d.label = job.labels[k];
  d.config = m.config();
  d.statistics = m.statistics();
  d.ledger = m.ledger();
  d.planes = m.planes();
  d.field_w = m.spectrum();
  return d;
}

/// |Ã|² of a spectrum in FFT order, on the ascending ω grid.
std::vector<double> ascending_power(const Grid& grid, const std::vector<std::complex<double>>& spectrum) {
  std::vector<double> p(spectrum.size());
  for (std::int64_t k = 0; k < grid.size(); ++k) p[k] = std::norm(spectrum[grid.ascending_to_fft(k)]);
  return p;
}

std::vector<double> wavelengths(const Grid& grid) {
  std::vector<double> lambda = grid.omega_ascending();
  for (double& w : lambda) w = 2 * std::numbers::pi * kSpeedOfLight / w;
  return lambda;
}

/// The figures of one result: spectral and temporal evolution, and the final spectrum.
void write_figures(const ResultData& d, const fs::path& stem) {
  if (d.planes.z.size() < 2) return;  // nothing propagated yet
  const Grid grid(d.config.grid);
  const std::vector<double> lambda = wavelengths(grid);
  std::vector<std::vector<double>> spectra, power;
  SpectralTransform transform(grid.size());
  std::vector<std::complex<double>> field(static_cast<std::size_t>(grid.size()));
  for (const auto& plane : d.planes.field_w) {
    spectra.push_back(ascending_power(grid, plane));
    transform.to_time(plane.data(), field.data());
    std::vector<double> p(field.size());
    for (std::size_t j = 0; j < field.size(); ++j) p[j] = std::norm(field[j]);
    power.push_back(std::move(p));
  }
  WavelengthPlotOptions wo;
  wo.title = d.label;
  write_spectral_evolution(stem.string() + "_spectral.png", d.planes.z, lambda, spectra, wo);
  TemporalPlotOptions to;
  to.title = d.label;
  to.decibels = true;
  write_temporal_evolution(stem.string() + "_temporal.png", d.planes.z, grid.t(), power, to);
  std::vector<std::vector<double>> ends_db;
  for (const auto* s : {&spectra.front(), &spectra.back()}) {
    double peak = 0;
    for (double v : *s) peak = std::max(peak, v);
    std::vector<double> db(s->size());
    for (std::size_t k = 0; k < s->size(); ++k) db[k] = 10 * std::log10(std::max((*s)[k], peak * 1e-30) / peak);
    ends_db.push_back(std::move(db));
  }
  WavelengthPlotOptions so;
  so.title = d.label;
  char zlabel[64];
  std::snprintf(zlabel, sizeof zlabel, "z = %.4g m", d.planes.z.back());
  write_spectrum(stem.string() + "_spectrum.png", lambda, ends_db, {"input", zlabel}, so);
}

/// The coherence figure of an ensemble: |g12| of the members' final spectra.
void write_coherence_figure(const Job& job, const fs::path& path) {
  if (job.members.size() < 2) return;
  const Grid grid(job.members.front().config().grid);
  std::vector<std::vector<std::complex<double>>> finals;
  for (const Member& m : job.members) finals.push_back(m.spectrum());
  const std::vector<double> g12 = coherence(finals, grid);
  std::vector<double> mean(static_cast<std::size_t>(grid.size()), 0.0);
  for (const auto& s : finals) {
    const std::vector<double> p = ascending_power(grid, s);
    for (std::size_t k = 0; k < p.size(); ++k) mean[k] += p[k] / static_cast<double>(finals.size());
  }
  double peak = 0;
  for (double v : mean) peak = std::max(peak, v);
  for (double& v : mean) v = 10 * std::log10(std::max(v, peak * 1e-30) / peak);
  WavelengthPlotOptions o;
  o.title = "coherence of " + std::to_string(job.members.size()) + " shot-noise members";
  write_coherence(path, wavelengths(grid), g12, mean, o);
}

/// The batch's files, changed together: every one staged, then every one committed (so a kill
/// leaves them at one checkpoint, or at two that resume_files brings back to one).
void checkpoint(const Job& job, const std::vector<std::size_t>& batch) {
  for (std::size_t k : batch) stage_result(job.files[k], result_of(job, k));
  for (std::size_t k : batch) commit_result(job.files[k]);
}

/// The result files of a run's member indices, for messages.
std::string file_list(const Job& job, const std::vector<std::size_t>& batch) {
  std::string out;
  for (std::size_t k : batch) out += (out.empty() ? "" : " ") + job.files[k].string();
  return out;
}

/// Advances the members of one batch to the end of their fibre on one engine, checkpointing
/// their result files every flags.checkpoint_seconds and when the batch ends. On an error, the
/// files are checkpointed (what was recorded is kept) and the error passes on unchanged.
void run_batch(Job& job, const std::vector<std::size_t>& batch, const std::string& label,
               const EngineOptions& engine_options, const RunFlags& flags) {
  std::vector<Member*> members;
  std::vector<const Config*> configs;
  for (std::size_t k : batch) {
    members.push_back(&job.members[k]);
    configs.push_back(&job.members[k].config());
  }
  try {
    const auto engine = make_gnlse_engine(configs, members.front()->tableau(), engine_options);
    const double length = members.front()->config().fibre.length;
    Progress progress(label, length, "m", !flags.quiet);
    std::int64_t steps_done = 0;
    RunOptions options;
    options.evaluation = flags.evaluation == "reference" ? Evaluation::per_member : Evaluation::batched;
    options.max_steps = flags.chunk_steps;
    const auto started = std::chrono::steady_clock::now();
    options.progress = [&](double z, std::int64_t steps, double) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double total = static_cast<double>(steps_done + steps);
      char detail[96];
      std::snprintf(detail, sizeof detail, "%.0f steps, %.1f steps/s", total, seconds > 0 ? total / seconds : 0.0);
      progress.update(z, detail);
    };
    // Checkpoints take at most a tenth of the run: the interval is the larger of
    // --checkpoint and ten times the last checkpoint's duration (a large batch writes many files).
    double interval = flags.checkpoint_seconds;
    auto last_save = std::chrono::steady_clock::now();
    while (!members.front()->finished()) {
      const std::int64_t before = members.front()->ledger().accepted_steps;
      run_lockstep(members, *engine, options);
      steps_done += members.front()->ledger().accepted_steps - before;
      if (g_interrupted.load()) {
        checkpoint(job, batch);
        throw Interrupted("interrupted at z = " + std::to_string(members.front()->z()) +
                          " m; the result files are saved: continue with 'lockstep prop resume " +
                          job.files[batch.front()].string() + " ...'");
      }
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_save).count() >= interval) {
        checkpoint(job, batch);
        last_save = std::chrono::steady_clock::now();
        interval = std::max(flags.checkpoint_seconds, 10 * std::chrono::duration<double>(last_save - now).count());
      }
    }
    checkpoint(job, batch);
    progress.finish(std::to_string(steps_done) + " steps");
  } catch (const Interrupted&) {
    throw;
  } catch (...) {
    checkpoint(job, batch);  // keep what was recorded
    throw;
  }
}

/// Advances every member of the job to the end of its fibre, batch by batch. Every member's
/// result file is written before the first batch starts (a resumed job's files already are),
/// so a run stopped at any point (killed, out of memory, an error) leaves a valid, resumable
/// file for every member. A batch whose
/// engine finds too little device memory (another process may hold it) is split in two and
/// retried, down to one member; a batch that fails otherwise, or a member that does not fit
/// alone, is reported after the other batches have run to their end.
void advance(Job& job, const RunFlags& flags) {
  if (flags.threads > 0) set_num_threads(flags.threads);
  EngineOptions engine_options;
  engine_options.device = flags.device == "cuda" ? Device::cuda : Device::cpu;
  engine_options.precision = flags.precision == "f32" ? DType::f32 : DType::f64;
  engine_options.threads = flags.threads;
  if (engine_options.device == Device::cuda && flags.evaluation == "reference")
    invalid_argument(kWhere, "--evaluation reference runs on the CPU only (on CUDA, --batch-memory caps the batch)");
  double budget_mib = flags.batch_memory_mib;
  if (budget_mib == 0)
    budget_mib =
        engine_options.device == Device::cuda ? 0.8 * static_cast<double>(cuda_free_memory()) / 1048576.0 : 4096.0;
  std::vector<const Member*> all;
  for (const Member& m : job.members) all.push_back(&m);
  const auto batches = select_batch(all, static_cast<std::int64_t>(budget_mib * 1048576.0), engine_options);
  check_engine_options(engine_options);  // before any file is written: no batch could run
  for (std::size_t k = 0; !job.files_written && k < job.members.size(); ++k)
    if (!job.members[k].finished()) write_result(job.files[k], result_of(job, k));
  g_interrupted.store(false);
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  struct RestoreSignals {
    decltype(previous_int) i, t;
    ~RestoreSignals() { std::signal(SIGINT, i), std::signal(SIGTERM, t); }
  } restore{previous_int, previous_term};

  std::deque<std::vector<std::size_t>> queue(batches.begin(), batches.end());
  std::vector<std::string> failures;
  std::size_t done = 0, total = batches.size();
  while (!queue.empty()) {
    const std::vector<std::size_t> batch = std::move(queue.front());
    queue.pop_front();
    ++done;
    if (job.members[batch.front()].finished()) continue;  // resumed files that had ended
    std::string label = "prop";
    if (total > 1) label += " batch " + std::to_string(done) + "/" + std::to_string(total);
    if (batch.size() > 1) label += " (" + std::to_string(batch.size()) + " members)";
    try {
      run_batch(job, batch, label, engine_options, flags);
    } catch (const Interrupted&) {
      throw;
    } catch (const DeviceMemoryExhausted& e) {
      if (batch.size() == 1) {
        failures.push_back(std::string(e.what()) + " (" + file_list(job, batch) + ")");
        continue;
      }
      // Halves, in order, in place of the batch: each resumes where the batch stopped.
      const auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
      queue.emplace_front(middle, batch.end());
      queue.emplace_front(batch.begin(), middle);
      --done;
      ++total;
      std::fprintf(stderr, "%s: %s; retrying as batches of %zu and %zu members\n", label.c_str(), e.what(),
                   batch.size() / 2, batch.size() - batch.size() / 2);
    } catch (const std::exception& e) {
      failures.push_back(std::string(e.what()) + " (what was computed is saved in " + file_list(job, batch) + ")");
    }
  }
  if (!failures.empty()) {
    std::string text;
    for (const std::string& f : failures) text += "\n  " + f;
    runtime_failure(kWhere, failures.size(), failures.size() == 1 ? " batch" : " batches", " of the run failed; ",
                    "the other batches ran to their end, and every result file is saved and resumable with ",
                    "'lockstep prop resume':", text);
  }
}

void write_all_figures(const Job& job, const RunFlags& flags) {
  if (flags.no_plots) return;
  // An ensemble's members differ only by their noise: the first member's figures and the
  // coherence stand for all of them (thousands of members would otherwise spend longer
  // drawing than propagating). `prop plot` draws any member's.
  const std::size_t drawn = job.ensemble ? 1 : job.members.size();
  for (std::size_t k = 0; k < drawn; ++k) {
    fs::path stem = job.files[k];
    stem.replace_extension();
    write_figures(result_of(job, k), stem);
  }
  if (job.ensemble) {
    fs::path path = job.files.front().parent_path() / "coherence.png";
    write_coherence_figure(job, path);
  }
}

void report(const Job& job) {
  for (std::size_t k = 0; k < job.members.size(); ++k) {
    const Member& m = job.members[k];
    const Ledger& l = m.ledger();
    const Statistics& s = m.statistics();
    double drift = 0;
    if (!s.photon_number.empty() && s.photon_number.front() != 0) {
      const double n0 = s.photon_number.front();
      for (double n : s.photon_number) drift = std::max(drift, std::abs(n / n0 - 1));
    }
    std::printf("%s: z = %.6g m, %lld steps (%lld rejected), %lld RHS evaluations, photon-number drift %.2e, %.2f s\n",
                job.files[k].string().c_str(), l.z, static_cast<long long>(l.accepted_steps),
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
  Job job;
  job.recipe_text = recipe.text;
  job.ensemble = recipe.ensemble.members > 1 && recipe.scan.empty();
  std::vector<double> replayed;
  if (!replay.empty()) {
    for (double z : read_result(replay).statistics.z)
      if (z > 0) replayed.push_back(z);  // the statistics may start with the input at z = 0
    if (replayed.empty()) invalid_argument(kWhere, "--replay ", replay, " holds no accepted step");
  }
  fs::create_directories(output_dir);
  for (MemberSpec& spec : expand_members(recipe)) {
    if (!replayed.empty()) {
      if (std::abs(replayed.back() - spec.config.fibre.length) > 1e-12 * spec.config.fibre.length)
        invalid_argument(kWhere, "--replay ", replay, " ends at z = ", replayed.back(), " m, but the fibre is ",
                         spec.config.fibre.length, " m long");
      spec.config.stepping.adaptive = false;
      spec.config.stepping.schedule = replayed;
    }
    const Grid grid(spec.config.grid);
    std::vector<std::complex<double>> spectrum = initial_spectrum(spec.config.pulse, grid);
    job.files.push_back(fs::path(output_dir) / (file_stem(base, spec.label) + ".h5"));
    job.labels.push_back(spec.label);
    job.members.emplace_back(std::move(spec.config), std::move(spectrum));
  }
  return job;
}

void run_recipe(const std::string& recipe_path, const RunFlags& flags, bool require_scan) {
  Job job = job_from_recipe(recipe_path, flags.output_dir, flags.replay);
  if (require_scan && job.members.size() < 2)
    invalid_argument(kWhere, "'prop scan' needs a recipe with a [scan] or an [ensemble] section; ", recipe_path,
                     " describes one member (use 'prop run')");
  advance(job, flags);
  write_all_figures(job, flags);
  report(job);
}

void resume_files(const std::vector<std::string>& files, const std::string& recipe_path, const RunFlags& flags) {
  Job job;
  std::vector<MemberSpec> specs;
  if (!recipe_path.empty()) specs = expand_members(load_recipe(recipe_path));
  // A kill during a batch checkpoint's renames: its remaining files are staged, complete.
  const std::vector<fs::path> rolled = roll_forward_staged(std::vector<fs::path>(files.begin(), files.end()));
  if (!rolled.empty())
    std::fprintf(stderr, "prop resume: %zu file(s) completed from the checkpoint a kill interrupted (%s ...)\n",
                 rolled.size(), rolled.front().string().c_str());
  for (const std::string& file : files) {
    ResultData d = read_result(file);
    if (!recipe_path.empty()) {
      const MemberSpec* spec = nullptr;
      for (const MemberSpec& s : specs)
        if (s.label == d.label) spec = &s;
      if (!spec)
        invalid_argument(kWhere, file, " holds member '", d.label, "', which ", recipe_path, " does not describe");
      check_resumable(spec->config, d);
    }
    job.recipe_text = d.recipe;
    job.labels.push_back(d.label);
    job.files.push_back(file);
    job.members.push_back(
        Member::resume(d.config, std::move(d.field_w), d.ledger, std::move(d.statistics), std::move(d.planes)));
  }
  job.files_written = true;
  bool noise = job.members.size() > 1;
  for (const Member& m : job.members) noise = noise && m.config().pulse.shot_noise;
  job.ensemble = noise;
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
}

bool is_interruption(const std::exception& e) { return dynamic_cast<const Interrupted*>(&e) != nullptr; }

}  // namespace lockstep::cli
