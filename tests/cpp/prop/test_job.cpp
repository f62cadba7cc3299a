// Runs as a library (job.hpp): a job in memory equals the runner driven by hand, its progress,
// an interrupt that leaves resumable files, a resumed job that ends where an uninterrupted one
// does, and the refusals.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "io_test_support.hpp"
#include "lockstep/prop/job.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"
#include "lockstep/prop/scan.hpp"

namespace lockstep::prop {
namespace {

using testing::TempDir;

// A soliton over 1 cm (tests/data/soliton.toml) and a scan of two peak powers: fractions of a
// second.
std::string scan_recipe() {
  std::ifstream in(std::string(LOCKSTEP_TEST_DATA) + "/soliton.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find("{p0}") == std::string::npos) throw std::runtime_error("tests/data/soliton.toml has no {p0}");
  for (auto at = text.find("{p0}"); at != std::string::npos; at = text.find("{p0}")) text.replace(at, 4, "500");
  return text + "[scan]\n\"pulse.peak_power\" = [\"400 W\", \"600 W\"]\n";
}
const std::string kScan = scan_recipe();

double max_difference(const std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double peak = 0, diff = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    peak = std::max(peak, std::abs(a[k]));
    diff = std::max(diff, std::abs(a[k] - b[k]));
  }
  return diff / peak;
}

TEST(Job, InMemoryEqualsTheRunnerDrivenByHand) {
  const Recipe recipe = parse_recipe(kScan, "scan.toml");
  Job job = Job::from_recipe(recipe, "scan", {});
  ASSERT_EQ(job.size(), 2u);
  EXPECT_TRUE(job.files()[0].empty());
  EXPECT_EQ(job.labels()[1], "peak_power=600W");
  job.run();

  // The same members through run_lockstep on the CPU engine, as one batch.
  std::vector<Member> members;
  std::vector<Member*> pointers;
  std::vector<const Config*> configs;
  for (const MemberSpec& spec : expand_members(recipe)) {
    const Grid grid(spec.config.grid);
    members.emplace_back(spec.config, initial_spectrum(spec.config.pulse, grid));
  }
  for (Member& m : members) {
    pointers.push_back(&m);
    configs.push_back(&m.config());
  }
  const auto engine = make_gnlse_engine(configs, members.front().tableau(), EngineOptions{});
  run_lockstep(pointers, *engine);
  for (std::size_t k = 0; k < members.size(); ++k) {
    EXPECT_TRUE(job.members()[k].finished());
    EXPECT_EQ(job.members()[k].ledger().accepted_steps, members[k].ledger().accepted_steps) << k;
    // To rounding: the job runs in chunks of steps, each starting with a fresh first stage
    // where the run by hand carries the FSAL stage over.
    EXPECT_LT(max_difference(job.members()[k].spectrum(), members[k].spectrum()), 1e-10) << k;
    EXPECT_EQ(job.result(k).label, job.labels()[k]);
    EXPECT_EQ(job.result(k).planes.z.size(), 11u);
  }
}

TEST(Job, ReportsProgressPerBatchAndFinishes) {
  Job job = Job::from_recipe(parse_recipe(kScan, "scan.toml"), "scan", {});
  JobOptions options;
  options.batch_memory_mib = 1e-6;  // a batch holds at least one member: two batches
  std::vector<JobProgress> seen;
  options.progress = [&](const JobProgress& p) { seen.push_back(p); };
  job.run(options);
  ASSERT_FALSE(seen.empty());
  int finished = 0;
  double last_z = 0;
  std::size_t last_batch = 1;
  for (const JobProgress& p : seen) {
    EXPECT_EQ(p.batches, 2u);
    EXPECT_EQ(p.members, 1u);
    EXPECT_DOUBLE_EQ(p.length, 0.01);
    if (p.batch != last_batch) last_z = 0;
    EXPECT_GE(p.z, last_z);
    last_z = p.z;
    last_batch = p.batch;
    finished += p.finished ? 1 : 0;
    if (p.finished) {
      EXPECT_EQ(p.steps, job.members()[p.batch - 1].ledger().accepted_steps);
    }
  }
  EXPECT_EQ(finished, 2);
  EXPECT_EQ(seen.back().batch, 2u);
}

TEST(Job, InterruptSavesResumableFilesThatEndAsAnUninterruptedRun) {
  TempDir dir;
  const Recipe recipe = parse_recipe(kScan, "scan.toml");
  Job whole = Job::from_recipe(recipe, "scan", dir.path() / "whole");
  whole.run();

  Job job = Job::from_recipe(recipe, "scan", dir.path() / "parts");
  std::atomic<bool> stop{false};
  JobOptions options;
  options.chunk_steps = 5;
  options.interrupt = &stop;
  options.progress = [&](const JobProgress& p) {
    if (p.steps >= 7) stop.store(true);
  };
  EXPECT_THROW(job.run(options), JobInterrupted);
  ASSERT_EQ(job.files().size(), 2u);
  for (const auto& file : job.files()) {
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    const ResultData d = read_result(file);
    EXPECT_LT(d.ledger.z, 0.01) << file;  // stopped part way (or not started)
  }
  EXPECT_GE(read_result(job.files()[0]).ledger.accepted_steps, 7);

  Job resumed = Job::resume(job.files(), &recipe);
  EXPECT_TRUE(resumed.rolled_forward().empty());
  resumed.run();
  for (std::size_t k = 0; k < 2; ++k) {
    const ResultData a = read_result(whole.files()[k]), b = read_result(resumed.files()[k]);
    EXPECT_EQ(a.ledger.accepted_steps, b.ledger.accepted_steps) << k;
    EXPECT_EQ(a.label, b.label);
    // The same steps; to rounding, as FFTW's measured plans may differ between engines.
    EXPECT_LT(max_difference(a.field_w, b.field_w), 1e-10) << k;
  }
}

TEST(Job, RefusesWhatNoBatchCouldRunWith) {
  const Recipe recipe = parse_recipe(kScan, "scan.toml");
  Job job = Job::from_recipe(recipe, "scan", {});
  JobOptions bad;
  bad.chunk_steps = 0;
  EXPECT_THROW(job.run(bad), std::invalid_argument);
  bad = {};
  bad.checkpoint_seconds = 0;
  EXPECT_THROW(job.run(bad), std::invalid_argument);
  bad = {};
  bad.engine.device = Device::cuda;
  bad.evaluation = Evaluation::per_member;
  EXPECT_THROW(job.run(bad), std::invalid_argument);
  EXPECT_THROW(Job::resume({}), std::invalid_argument);
  // A replayed schedule must end at the fibre's end.
  EXPECT_THROW(Job::from_recipe(recipe, "scan", {}, {0.002, 0.004}), std::invalid_argument);
}

TEST(Job, ResumeRefusesAFileTheRecipeDoesNotDescribe) {
  TempDir dir;
  const Recipe recipe = parse_recipe(kScan, "scan.toml");
  Job job = Job::from_recipe(recipe, "scan", dir.path());
  JobOptions options;
  std::atomic<bool> stop{true};  // stops after the first chunk
  options.interrupt = &stop;
  EXPECT_THROW(job.run(options), JobInterrupted);
  std::string other = kScan;
  other.replace(other.find("gamma = \"0.11 /W/m\""), 19, "gamma = \"0.12 /W/m\"");
  const Recipe changed = parse_recipe(other, "other.toml");
  try {
    Job::resume(job.files(), &changed);
    FAIL() << "a changed recipe was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gamma"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::prop
