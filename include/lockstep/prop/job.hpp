// Runs as a library: the members of a recipe, or of result files to continue, advanced to the end
// of their fibre in lockstep batches, with a result file per member that is written before the
// first batch starts and checkpointed while it runs, so that a run stopped at any point (an
// interrupt, a kill, an error, the device's memory taken by another process) leaves every file
// valid and resumable. The CLI's `prop run`, `prop scan` and `prop resume` and Python's
// lockstep.prop are shells over it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/prop/engine.hpp"
#include "lockstep/prop/member.hpp"
#include "lockstep/prop/recipe.hpp"
#include "lockstep/prop/result_file.hpp"

namespace lockstep::prop {

/// Where a batch of a running job stands (JobOptions::progress).
struct JobProgress {
  std::size_t batch = 0, batches = 0;  ///< this batch (1-based) of how many (a split batch counts twice)
  std::size_t members = 0;             ///< members in this batch
  double z = 0, length = 0;            ///< the batch's position and its fibre's length, m
  std::int64_t steps = 0;              ///< accepted steps of this batch in this run
  double steps_per_second = 0;
  bool finished = false;  ///< the batch has reached the end of its fibre (its last call)
};

struct JobOptions {
  EngineOptions engine;  ///< device, precision, CPU threads (threads > 0 also sets lockstep's thread count)
  /// batched: one evaluation of N per stage over the whole batch; per_member: each member in
  /// turn (CPU only).
  Evaluation evaluation = Evaluation::batched;
  /// Working memory of one batch, MiB (caps its members); 0: 4096 on the CPU, 80 % of the free
  /// device memory on CUDA.
  double batch_memory_mib = 0;
  /// Seconds between checkpoints of a batch's files; longer where writing them takes more than
  /// a tenth of the run.
  double checkpoint_seconds = 30;
  /// Accepted steps between two looks at `interrupt` and the checkpoint clock.
  std::int64_t chunk_steps = 20;
  /// Called from the running thread after every accepted step and when a batch finishes.
  std::function<void(const JobProgress&)> progress;
  /// Set (by a signal handler, another thread or `progress`) to stop the run after the current
  /// chunk of steps: every file is saved and resumable, then run() throws JobInterrupted.
  const std::atomic<bool>* interrupt = nullptr;
  /// Messages for the user while the run goes on (a batch split for want of device memory);
  /// none: they go to stderr.
  std::function<void(const std::string&)> notice;
};

/// Thrown by Job::run when JobOptions::interrupt stopped it; the files are saved.
struct JobInterrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Job {
 public:
  /// The members of `recipe` (expand_members), each starting from its input pulse. With an
  /// `output_dir`, member k's result file is output_dir / "<base>[_<label>].h5" (the directory is
  /// made); without one, the job keeps its results in memory only. With `schedule` (the step
  /// ends of an earlier run, accepted_step_ends), every member steps on it instead of adaptively;
  /// it must end at the fibre's end.
  static Job from_recipe(const Recipe& recipe, const std::string& base, const std::filesystem::path& output_dir,
                         const std::vector<double>& schedule = {});
  /// The members of result files written by an interrupted run, continued where they stopped.
  /// A batch checkpoint that a kill interrupted is completed first (roll_forward_staged;
  /// rolled_forward() names those files). With `recipe`, every file's member must be one the
  /// recipe describes, with the same configuration (std::invalid_argument naming what differs).
  static Job resume(const std::vector<std::filesystem::path>& files, const Recipe* recipe = nullptr);

  /// Advances every member to the end of its fibre, batch by batch (select_batch). The files of
  /// members not yet written are written before the first batch. A batch whose engine finds too
  /// little device memory is split in two and retried, down to one member; a batch that fails
  /// otherwise, or a member that does not fit alone, is reported (std::runtime_error listing
  /// each failure and its files) after the other batches have run to their end. What a failed
  /// batch computed is saved. std::invalid_argument for options that no batch could run with,
  /// before any file is written.
  void run(const JobOptions& options = {});

  std::size_t size() const { return members_.size(); }
  const std::vector<Member>& members() const { return members_; }
  const std::vector<std::string>& labels() const { return labels_; }
  /// Member k's result file (empty paths: a job in memory).
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const std::vector<std::filesystem::path>& rolled_forward() const { return rolled_forward_; }
  /// The recipe text the members came from.
  const std::string& recipe_text() const { return recipe_text_; }
  /// Whether the members are the shot-noise members of one configuration (an ensemble).
  bool ensemble() const { return ensemble_; }
  /// Member k as its result file holds it.
  ResultData result(std::size_t k) const;

 private:
  void checkpoint(const std::vector<std::size_t>& batch) const;
  void run_batch(const std::vector<std::size_t>& batch, std::size_t index, std::size_t batches,
                 const JobOptions& options);
  std::string file_list(const std::vector<std::size_t>& batch) const;

  std::string recipe_text_;
  std::vector<std::string> labels_;
  std::vector<std::filesystem::path> files_;
  std::vector<Member> members_;
  std::vector<std::filesystem::path> rolled_forward_;
  bool ensemble_ = false;
  bool files_written_ = false;  ///< every member's file holds its current state (a resumed job)
};

/// The accepted step ends (z > 0) of a result file, as Job::from_recipe's `schedule` takes them
/// (a run replayed on an earlier run's steps). std::invalid_argument when it holds none.
std::vector<double> accepted_step_ends(const std::filesystem::path& result);

/// The file stem of a member: `base`, and "_<label>" with '=' → '-', ',' and '/' → '_'.
std::string member_file_stem(const std::string& base, const std::string& label);

}  // namespace lockstep::prop
