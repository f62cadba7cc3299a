// Runs as a library (job.hpp).
#include "lockstep/prop/job.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>

#include "lockstep/core/error.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"
#include "lockstep/prop/scan.hpp"

namespace lockstep::prop {

namespace {

namespace fs = std::filesystem;
constexpr const char* kWhere = "prop";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string member_file_stem(const std::string& base, const std::string& label) {
  if (label.empty()) return base;
  std::string s = base + "_";
  for (char ch : label) s += (ch == '=' ? '-' : ch == ',' ? '_' : ch == '/' ? '_' : ch);
  return s;
}

std::vector<double> accepted_step_ends(const fs::path& result) {
  std::vector<double> ends;
  for (double z : read_result(result).statistics.z)
    if (z > 0) ends.push_back(z);  // the statistics may start with the input at z = 0
  if (ends.empty()) invalid_argument(kWhere, result.string(), " holds no accepted step");
  return ends;
}

Job Job::from_recipe(const Recipe& recipe, const std::string& base, const fs::path& output_dir,
                     const std::vector<double>& schedule) {
  Job job;
  job.recipe_text_ = recipe.text;
  job.ensemble_ = recipe.ensemble.members > 1 && recipe.scan.empty();
  if (!output_dir.empty()) fs::create_directories(output_dir);
  for (MemberSpec& spec : expand_members(recipe)) {
    if (!schedule.empty()) {
      if (std::abs(schedule.back() - spec.config.fibre.length) > 1e-12 * spec.config.fibre.length)
        invalid_argument(kWhere, "the replayed schedule ends at z = ", schedule.back(), " m, but the fibre is ",
                         spec.config.fibre.length, " m long");
      spec.config.stepping.adaptive = false;
      spec.config.stepping.schedule = schedule;
    }
    const Grid grid(spec.config.grid);
    std::vector<std::complex<double>> spectrum = initial_spectrum(spec.config.pulse, grid);
    job.files_.push_back(output_dir.empty() ? fs::path() : output_dir / (member_file_stem(base, spec.label) + ".h5"));
    job.labels_.push_back(spec.label);
    job.members_.emplace_back(std::move(spec.config), std::move(spectrum));
  }
  return job;
}

Job Job::resume(const std::vector<fs::path>& files, const Recipe* recipe) {
  if (files.empty()) invalid_argument(kWhere, "no result files to resume");
  Job job;
  std::vector<MemberSpec> specs;
  if (recipe) specs = expand_members(*recipe);
  job.rolled_forward_ = roll_forward_staged(files);
  for (const fs::path& file : files) {
    ResultData d = read_result(file);
    if (recipe) {
      const MemberSpec* spec = nullptr;
      for (const MemberSpec& s : specs)
        if (s.label == d.label) spec = &s;
      if (!spec)
        invalid_argument(kWhere, file.string(), " holds member '", d.label, "', which the recipe does not describe");
      check_resumable(spec->config, d);
    }
    job.recipe_text_ = d.recipe;
    job.labels_.push_back(d.label);
    job.files_.push_back(file);
    job.members_.push_back(
        Member::resume(d.config, std::move(d.field_w), d.ledger, std::move(d.statistics), std::move(d.planes)));
  }
  job.files_written_ = true;
  bool noise = job.members_.size() > 1;
  for (const Member& m : job.members_) noise = noise && m.config().pulse.shot_noise;
  job.ensemble_ = noise;
  return job;
}

ResultData Job::result(std::size_t k) const {
  const Member& m = members_.at(k);
  ResultData d;
  d.recipe = recipe_text_;
  d.label = labels_[k];
  d.config = m.config();
  d.statistics = m.statistics();
  d.ledger = m.ledger();
  d.planes = m.planes();
  d.field_w = m.spectrum();
  return d;
}

// The batch's files, changed together: every one staged, then every one committed (so a kill
// leaves them at one checkpoint, or at two that roll_forward_staged brings back to one).
void Job::checkpoint(const std::vector<std::size_t>& batch) const {
  for (std::size_t k : batch)
    if (!files_[k].empty()) stage_result(files_[k], result(k));
  for (std::size_t k : batch)
    if (!files_[k].empty()) commit_result(files_[k]);
}

std::string Job::file_list(const std::vector<std::size_t>& batch) const {
  std::string out;
  for (std::size_t k : batch)
    if (!files_[k].empty()) out += (out.empty() ? "" : " ") + files_[k].string();
  return out.empty() ? "kept in memory" : out;
}

// Advances the members of one batch to the end of their fibre on one engine, checkpointing
// their files every options.checkpoint_seconds and when the batch ends. On an error the files
// are checkpointed (what was recorded is kept) and the error passes on unchanged.
void Job::run_batch(const std::vector<std::size_t>& batch, std::size_t index, std::size_t batches,
                    const JobOptions& options) {
  std::vector<Member*> members;
  std::vector<const Config*> configs;
  for (std::size_t k : batch) {
    members.push_back(&members_[k]);
    configs.push_back(&members_[k].config());
  }
  Member& lead = *members.front();
  try {
    const auto engine = make_gnlse_engine(configs, lead.tableau(), options.engine);
    JobProgress state;
    state.batch = index;
    state.batches = batches;
    state.members = batch.size();
    state.length = lead.config().fibre.length;
    const auto started = std::chrono::steady_clock::now();
    RunOptions run;
    run.evaluation = options.evaluation;
    run.max_steps = options.chunk_steps;
    std::int64_t steps_before_chunk = 0;
    if (options.progress)
      run.progress = [&](double z, std::int64_t steps, double) {
        state.z = z;
        state.steps = steps_before_chunk + steps;
        const double seconds = seconds_since(started);
        state.steps_per_second = seconds > 0 ? static_cast<double>(state.steps) / seconds : 0.0;
        options.progress(state);
      };
    // Checkpoints take at most a tenth of the run: the interval is the larger of
    // checkpoint_seconds and ten times the last checkpoint's duration.
    double interval = options.checkpoint_seconds;
    auto last_save = std::chrono::steady_clock::now();
    while (!lead.finished()) {
      const std::int64_t before = lead.ledger().accepted_steps;
      run_lockstep(members, *engine, run);
      steps_before_chunk += lead.ledger().accepted_steps - before;
      if (options.interrupt && options.interrupt->load()) {
        checkpoint(batch);
        throw JobInterrupted("[prop] interrupted at z = " + std::to_string(lead.z()) +
                             " m; the result files are saved and resumable");
      }
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_save).count() >= interval) {
        checkpoint(batch);
        last_save = std::chrono::steady_clock::now();
        interval = std::max(options.checkpoint_seconds, 10 * std::chrono::duration<double>(last_save - now).count());
      }
    }
    checkpoint(batch);
    if (options.progress) {
      state.z = lead.z();
      state.steps = steps_before_chunk;
      state.finished = true;
      options.progress(state);
    }
  } catch (const JobInterrupted&) {
    throw;
  } catch (...) {
    checkpoint(batch);  // keep what was recorded
    throw;
  }
}

void Job::run(const JobOptions& options) {
  if (!(options.checkpoint_seconds > 0)) invalid_argument(kWhere, "checkpoint_seconds must be > 0");
  if (!(options.batch_memory_mib >= 0)) invalid_argument(kWhere, "batch_memory_mib must be ≥ 0");
  if (options.chunk_steps < 1) invalid_argument(kWhere, "chunk_steps must be ≥ 1");
  const EngineOptions& engine = options.engine;
  if (engine.device == Device::cuda && options.evaluation == Evaluation::per_member)
    invalid_argument(kWhere,
                     "the per-member evaluation runs on the CPU only (on CUDA, the batch memory caps the batch)");
  if (engine.threads > 0) set_num_threads(engine.threads);
  double budget_mib = options.batch_memory_mib;
  if (budget_mib == 0)
    budget_mib = engine.device == Device::cuda ? 0.8 * static_cast<double>(cuda_free_memory()) / 1048576.0 : 4096.0;
  std::vector<const Member*> all;
  for (const Member& m : members_) all.push_back(&m);
  const auto batches = select_batch(all, static_cast<std::int64_t>(budget_mib * 1048576.0), engine);
  check_engine_options(engine);  // before any file is written: no batch could run
  for (std::size_t k = 0; !files_written_ && k < members_.size(); ++k)
    if (!members_[k].finished() && !files_[k].empty()) write_result(files_[k], result(k));
  files_written_ = true;
  const auto notice = [&](const std::string& text) {
    if (options.notice) options.notice(text);
    else std::fprintf(stderr, "%s\n", text.c_str());
  };

  std::deque<std::vector<std::size_t>> queue(batches.begin(), batches.end());
  std::vector<std::string> failures;
  std::size_t done = 0, total = batches.size();
  while (!queue.empty()) {
    const std::vector<std::size_t> batch = std::move(queue.front());
    queue.pop_front();
    ++done;
    if (members_[batch.front()].finished()) continue;  // resumed files that had ended
    try {
      run_batch(batch, done, total, options);
    } catch (const JobInterrupted&) {
      throw;
    } catch (const DeviceMemoryExhausted& e) {
      if (batch.size() == 1) {
        failures.push_back(std::string(e.what()) + " (" + file_list(batch) + ")");
        continue;
      }
      // Halves, in order, in place of the batch: each resumes where the batch stopped.
      const auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
      queue.emplace_front(middle, batch.end());
      queue.emplace_front(batch.begin(), middle);
      --done;
      ++total;
      notice("prop batch " + std::to_string(done + 1) + "/" + std::to_string(total - 1) + ": " + e.what() +
             "; retrying as batches of " + std::to_string(batch.size() / 2) + " and " +
             std::to_string(batch.size() - batch.size() / 2) + " members");
    } catch (const std::exception& e) {
      failures.push_back(std::string(e.what()) + " (what was computed is saved: " + file_list(batch) + ")");
    }
  }
  if (!failures.empty()) {
    std::string text;
    for (const std::string& f : failures) text += "\n  " + f;
    runtime_failure(kWhere, failures.size(), failures.size() == 1 ? " batch" : " batches", " of the run failed; ",
                    "the other batches ran to their end, and every result file is saved and resumable ",
                    "('lockstep prop resume', lockstep.prop.resume):", text);
  }
}

}  // namespace lockstep::prop
