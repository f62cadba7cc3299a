// Members and runners on the analytic problem: batched = reference = alone, the fixed-schedule
// policies, adaptive runs, planes, taking a member out of a batch, resuming, divergence.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "analytic_problems.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/runner.hpp"
#include "lockstep/prop/stepper.hpp"
#include "same_run.hpp"

namespace lp = lockstep::prop;
using lp::Complex;
using lp::testing::expect_same_run;
using lp::testing::PointwiseKerr;

namespace {

constexpr std::int64_t kPoints = 16;
const std::vector<PointwiseKerr::Params> kParams = {{1.0, 0.3, 2}, {0.5, 0.0, 1}, {2.0, 1.0, 3}};

lp::Config make_config(lp::Scheme scheme, bool adaptive, std::uint64_t seed = 0) {
  lp::Config c;
  c.grid.points = kPoints;
  c.fibre.length = 2.0;
  c.pulse.noise_seed = seed;
  c.output.n_save = 5;
  c.stepping.scheme = scheme;
  c.stepping.adaptive = adaptive;
  c.stepping.fixed_steps = 40;
  c.stepping.rtol = 1e-6;
  c.stepping.atol = 1e-10;
  c.stepping.initial_step = 1e-3;
  return c;
}

std::vector<Complex> input(std::size_t m) {
  return lp::testing::smooth_spectrum(kPoints, 1.0 + 0.1 * static_cast<double>(m));
}

std::vector<lp::Member> make_members(lp::Scheme scheme, bool adaptive, std::size_t count) {
  std::vector<lp::Member> members;
  for (std::size_t m = 0; m < count; ++m) members.emplace_back(make_config(scheme, adaptive, m), input(m));
  return members;
}

std::vector<lp::Member*> pointers(std::vector<lp::Member>& members) {
  std::vector<lp::Member*> p;
  for (auto& m : members) p.push_back(&m);
  return p;
}

void run(std::vector<lp::Member>& members, std::vector<PointwiseKerr::Params> params, lp::Evaluation evaluation,
         std::int64_t max_steps = 0) {
  PointwiseKerr problem(kPoints, std::move(params));
  lp::RunOptions options;
  options.evaluation = evaluation;
  options.max_steps = max_steps;
  auto p = pointers(members);
  lp::run_lockstep(p, problem, options);
}

// Bit-identical fields, planes and statistics rows.
void expect_identical(const lp::Member& a, const lp::Member& b, const std::string& what) {
  ASSERT_EQ(a.spectrum(), b.spectrum()) << what;
  ASSERT_EQ(a.planes().z, b.planes().z) << what;
  ASSERT_EQ(a.planes().field_w, b.planes().field_w) << what;
  ASSERT_EQ(a.statistics().z, b.statistics().z) << what;
  ASSERT_EQ(a.statistics().dz, b.statistics().dz) << what;
  ASSERT_EQ(a.statistics().energy, b.statistics().energy) << what;
  EXPECT_EQ(a.ledger().accepted_steps, b.ledger().accepted_steps) << what;
  EXPECT_EQ(a.ledger().rejected_steps, b.ledger().rejected_steps) << what;
  EXPECT_EQ(a.ledger().z, b.ledger().z) << what;
}

}  // namespace

TEST(Runner, FixedScheduleBatchedEqualsReferenceEqualsAlone) {
  // Equality is bit-for-bit: every member's arithmetic is the same sequence of operations
  // whichever way the trials are grouped (the element-wise passes run per member, and the
  // analytic N is per row).
  for (auto scheme : {lp::Scheme::rk4ip, lp::Scheme::erk43ip, lp::Scheme::dp54ip}) {
    auto batched = make_members(scheme, false, 3), reference = make_members(scheme, false, 3);
    run(batched, kParams, lp::Evaluation::batched);
    run(reference, kParams, lp::Evaluation::per_member);
    for (std::size_t m = 0; m < 3; ++m) {
      std::vector<lp::Member> alone;
      alone.emplace_back(make_config(scheme, false, m), input(m));
      run(alone, {kParams[m]}, lp::Evaluation::batched);
      expect_identical(batched[m], reference[m], "batched vs reference");
      expect_identical(batched[m], alone[0], "batched vs alone");
      EXPECT_EQ(batched[m].ledger().accepted_steps, 40);
      EXPECT_EQ(batched[m].planes().z, (std::vector<double>{0, 0.5, 1.0, 1.5, 2.0}));
    }
  }
}

TEST(Runner, AdaptiveLockstepBatchedEqualsReference) {
  // The batch takes the steps of its largest norm, so a member's steps depend on its batch:
  // compare the batched runner with the reference runner on the same batch (bit-identical, as
  // above), and check every member meets its tolerance against the exact solution.
  for (auto scheme : {lp::Scheme::erk43ip, lp::Scheme::dp54ip}) {
    auto batched = make_members(scheme, true, 3), reference = make_members(scheme, true, 3);
    run(batched, kParams, lp::Evaluation::batched);
    run(reference, kParams, lp::Evaluation::per_member);
    PointwiseKerr problem(kPoints, kParams);
    for (std::size_t m = 0; m < 3; ++m) {
      expect_identical(batched[m], reference[m], "batched vs reference");
      // All members took the same steps.
      EXPECT_EQ(batched[m].statistics().dz, batched[0].statistics().dz);
      // Global error vs the exact solution: local errors ≤ rtol·‖y‖ accumulate over ~100 steps
      // with error growth of order one; 1e-4 leaves room for that and fails if tolerances are
      // ignored (a few default-size steps give ~1e-2).
      const auto exact = problem.exact(static_cast<std::int64_t>(m), input(m), 2.0);
      EXPECT_LT(lp::testing::relative_error(batched[m].spectrum(), exact), 1e-4) << lp::tableau(scheme).name;
      for (double norm : std::vector<double>(batched[m].statistics().error_norm.begin() + 1,
                                             batched[m].statistics().error_norm.end()))
        EXPECT_LE(norm, 1.0);
    }
    // Planes are at exact z; DP5 interpolates them (dense output), ERK4(3) shortens steps.
    EXPECT_EQ(batched[0].planes().z, (std::vector<double>{0, 0.5, 1.0, 1.5, 2.0}));
    const auto exact_mid = problem.exact(0, input(0), 1.0);
    EXPECT_LT(lp::testing::relative_error(batched[0].planes().field_w[2], exact_mid), 1e-4);
  }
}

TEST(Runner, LedgerCountsAndProgress) {
  auto members = make_members(lp::Scheme::dp54ip, false, 2);
  PointwiseKerr problem(kPoints, {kParams[0], kParams[1]});
  lp::RunOptions options;
  std::vector<double> zs;
  options.progress = [&](double z, std::int64_t steps, double rate) {
    zs.push_back(z);
    EXPECT_EQ(steps, static_cast<std::int64_t>(zs.size()));
    EXPECT_GE(rate, 0.0);
  };
  auto p = pointers(members);
  lp::run_lockstep(p, problem, options);
  ASSERT_EQ(zs.size(), 40u);
  EXPECT_EQ(zs.back(), 2.0);
  const auto& l = members[1].ledger();
  EXPECT_EQ(l.accepted_steps, 40);
  EXPECT_EQ(l.rejected_steps, 0);
  EXPECT_EQ(l.rhs_evaluations, 7 + 39 * 6);  // FSAL: 6 new evaluations per step after the first
  EXPECT_EQ(l.ffts, 2 * l.rhs_evaluations);
  EXPECT_EQ(l.schedule_position, 40);
  EXPECT_EQ(l.z, 2.0);
  EXPECT_GT(l.wall_time, 0.0);
  // Statistics: the input row plus one per accepted step.
  EXPECT_EQ(members[1].statistics().z.size(), 41u);
  EXPECT_EQ(members[1].statistics().z.front(), 0.0);
  EXPECT_TRUE(members[1].finished());
}

TEST(Runner, FixedPolicies) {
  // Eight steps over the whole fibre are far too long for rtol = 1e-6 (but stable).
  auto configure = [](lp::FixedPolicy policy) {
    std::vector<lp::Member> members;
    for (std::size_t m = 0; m < 2; ++m) {
      auto c = make_config(lp::Scheme::dp54ip, false, m);
      c.stepping.fixed_steps = 8;
      c.stepping.policy = policy;
      members.emplace_back(c, input(m));
    }
    return members;
  };
  const std::vector<PointwiseKerr::Params> params = {kParams[0], kParams[2]};

  auto record = configure(lp::FixedPolicy::record);
  run(record, params, lp::Evaluation::batched);
  for (const auto& m : record) {
    const auto& norms = m.statistics().error_norm;
    const auto violations = std::count_if(norms.begin() + 1, norms.end(), [](double n) { return n > 1; });
    EXPECT_GT(violations, 0);
    EXPECT_EQ(m.ledger().tolerance_violations, violations);
    EXPECT_EQ(m.ledger().accepted_steps, 8);
    EXPECT_EQ(m.ledger().z, 2.0);
  }

  auto fail = configure(lp::FixedPolicy::fail);
  try {
    run(fail, params, lp::Evaluation::batched);
    FAIL() << "policy fail did not throw";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("member "), std::string::npos) << what;
    EXPECT_NE(what.find("z = 0"), std::string::npos) << what;
    EXPECT_NE(what.find("policy = fail"), std::string::npos) << what;
  }
  EXPECT_EQ(fail[0].ledger().accepted_steps, 0);
  EXPECT_EQ(fail[0].planes().z.size(), 1u);  // the input plane stays recorded

  auto subdivide = configure(lp::FixedPolicy::subdivide);
  run(subdivide, params, lp::Evaluation::batched);
  PointwiseKerr problem(kPoints, params);
  for (std::size_t m = 0; m < 2; ++m) {
    const auto& s = subdivide[m];
    EXPECT_GT(s.ledger().accepted_steps, 8);
    EXPECT_GT(s.ledger().rejected_steps, 0);
    EXPECT_EQ(s.ledger().tolerance_violations, 0);
    EXPECT_EQ(s.planes().z, (std::vector<double>{0, 0.5, 1.0, 1.5, 2.0}));
    const auto exact = problem.exact(static_cast<std::int64_t>(m), input(m), 2.0);
    EXPECT_LT(lp::testing::relative_error(s.spectrum(), exact),
              0.1 * lp::testing::relative_error(record[m].spectrum(), exact));
  }
  // Both members took the same (subdivided) steps.
  EXPECT_EQ(subdivide[0].statistics().dz, subdivide[1].statistics().dz);
}

TEST(Runner, MemberTakenOutOfABatchContinuesAlone) {
  // Fixed schedule: the member continued alone equals the member the batch carried on with.
  auto uninterrupted = make_members(lp::Scheme::erk43ip, false, 3);
  run(uninterrupted, kParams, lp::Evaluation::batched);
  auto interrupted = make_members(lp::Scheme::erk43ip, false, 3);
  run(interrupted, kParams, lp::Evaluation::batched, 10);
  EXPECT_EQ(interrupted[1].ledger().accepted_steps, 10);
  std::vector<lp::Member> alone{interrupted[1]};
  run(alone, {kParams[1]}, lp::Evaluation::batched);
  expect_identical(alone[0], uninterrupted[1], "taken out");
}

TEST(Runner, ResumedMemberEqualsUninterrupted) {
  // Adaptive, alone: the controller's memory (next_dz, previous_error) is in the ledger, so a
  // member rebuilt from (config, field, ledger, statistics, planes) continues bit-identically.
  for (auto scheme : {lp::Scheme::erk43ip, lp::Scheme::dp54ip}) {
    auto whole = make_members(scheme, true, 1);
    run(whole, {kParams[2]}, lp::Evaluation::batched);
    auto part = make_members(scheme, true, 1);
    run(part, {kParams[2]}, lp::Evaluation::batched, 25);
    ASSERT_LT(part[0].z(), 2.0);
    std::vector<lp::Member> resumed;
    resumed.push_back(lp::Member::resume(part[0].config(), part[0].spectrum(), part[0].ledger(), part[0].statistics(),
                                         part[0].planes()));
    run(resumed, {kParams[2]}, lp::Evaluation::batched);
    expect_identical(resumed[0], whole[0], lp::tableau(scheme).name);
    // The resumed run re-evaluates the FSAL stage once.
    EXPECT_EQ(resumed[0].ledger().rhs_evaluations, whole[0].ledger().rhs_evaluations + 1);
  }
}

namespace {
// dA/dz = |A|² A blows up at z = 1/(2|A(0)|²) < 0.3 for these inputs.
class BlowUp : public PointwiseKerr {
 public:
  using PointwiseKerr::PointwiseKerr;
  void nonlinear(std::int64_t, std::int64_t count, const Complex* in, Complex* out) override {
    for (std::int64_t i = 0; i < count * points(); ++i) out[i] = std::norm(in[i]) * in[i];
  }
};
}  // namespace

TEST(Runner, DivergingRunStopsWithAClearError) {
  for (bool adaptive : {false, true}) {
    std::vector<lp::Member> members;
    auto c = make_config(lp::Scheme::dp54ip, adaptive);
    c.stepping.min_step = 1e-8;
    members.emplace_back(c, input(1));
    BlowUp problem(kPoints, {kParams[0]});
    auto p = pointers(members);
    try {
      lp::run_lockstep(p, problem);
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("member 0"), std::string::npos) << what;
      EXPECT_NE(what.find(adaptive ? "min_step" : "non-finite"), std::string::npos) << what;
    }
    // What was recorded stays: the input plane and the accepted steps before the blow-up.
    EXPECT_EQ(members[0].planes().z.front(), 0.0);
    EXPECT_GT(members[0].ledger().accepted_steps, 0);
    EXPECT_LT(members[0].z(), 0.3);
    EXPECT_EQ(members[0].statistics().z.size(), static_cast<std::size_t>(members[0].ledger().accepted_steps + 1));
  }
}

namespace {
// Passes every call to a CPU GNLSE engine and counts the trials started and finished, failing
// the test where a call comes while a trial is open that the Engine contract forbids then.
class CountingEngine final : public lp::Engine {
 public:
  explicit CountingEngine(std::unique_ptr<lp::Engine> inner) : inner_(std::move(inner)) {}
  const lp::Tableau& tableau() const override { return inner_->tableau(); }
  std::int64_t members() const override { return inner_->members(); }
  std::int64_t points() const override { return inner_->points(); }
  void load(std::int64_t m, const Complex* s, const lp::ErrorControl& c) override {
    closed("load");
    inner_->load(m, s, c);
  }
  void start_trial(double h, lp::Evaluation e) override {
    closed("start_trial");
    ++started;
    inner_->start_trial(h, e);
  }
  void finish_trial() override {
    ++finished;
    inner_->finish_trial();
  }
  int evaluations(std::int64_t m) const override { return inner_->evaluations(m); }
  std::int64_t ffts_per_evaluation(std::int64_t m) const override { return inner_->ffts_per_evaluation(m); }
  double norm(std::int64_t m) const override {
    closed("norm");
    return inner_->norm(m);
  }
  bool finite(std::int64_t m) const override {
    closed("finite");
    return inner_->finite(m);
  }
  void accept() override {
    closed("accept");
    inner_->accept();
  }
  lp::FieldMeasures measures(std::int64_t m) override { return inner_->measures(m); }
  void read_solutions(std::span<Complex* const> rows) override {
    closed("read_solutions");
    inner_->read_solutions(rows);
  }
  void read_dense_output(double theta, std::span<Complex* const> rows) override {
    closed("read_dense_output");
    inner_->read_dense_output(theta, rows);
  }
  void finish_reads() override { inner_->finish_reads(); }

  bool open() const { return started > finished; }
  int started = 0, finished = 0;

 private:
  void closed(const char* call) const { EXPECT_FALSE(open()) << call << " while a trial is open"; }
  std::unique_ptr<lp::Engine> inner_;
};

lp::Config small_gnlse(bool adaptive) {
  lp::Config c;
  c.grid.points = 512;
  c.fibre.length = 1e-3;
  c.output.n_save = 4;
  c.stepping.adaptive = adaptive;
  c.stepping.fixed_steps = 12;
  return c;
}
}  // namespace

TEST(Runner, StartsTheNextTrialBeforeBookingAStep) {
  // The runner books an accepted step (statistics, ledger, progress) while the next trial runs;
  // the result is that of run_gnlse, which makes its own engine.
  for (bool adaptive : {false, true}) {
    const lp::Config c = small_gnlse(adaptive);
    std::vector<lp::Member> a{lp::Member(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)))}, b = a;
    lp::run_gnlse(a);
    std::vector<const lp::Config*> configs{&c};
    CountingEngine engine(lp::make_gnlse_engine(configs, lp::tableau(c.stepping.scheme), {}));
    std::int64_t booked_ahead = 0, steps = 0;
    lp::RunOptions options;
    options.progress = [&](double z, std::int64_t s, double) {
      steps = s;
      booked_ahead += engine.open();
      EXPECT_EQ(engine.open(), z < c.fibre.length) << "step " << s;
    };
    lp::Member* m = &b[0];
    lp::run_lockstep(std::span<lp::Member* const>(&m, 1), engine, options);
    EXPECT_EQ(engine.started, engine.finished);
    EXPECT_EQ(booked_ahead, steps - 1);
    expect_same_run(b[0], a[0], adaptive ? "adaptive" : "fixed");
  }
}

TEST(Runner, InterruptedWhileATrialRunsAheadKeepsTheLastAcceptedStep) {
  // A progress callback that throws (an interrupted run) while the next trial is open: the trial
  // is finished and dropped, the member holds the field and ledger of its last accepted step,
  // and the same engine continues the run to the end, as a run never interrupted goes.
  for (bool adaptive : {false, true}) {
    const std::string what = adaptive ? "adaptive" : "fixed";
    const lp::Config c = small_gnlse(adaptive);
    std::vector<lp::Member> a{lp::Member(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)))}, b = a;
    lp::run_gnlse(a);
    std::vector<const lp::Config*> configs{&c};
    CountingEngine engine(lp::make_gnlse_engine(configs, lp::tableau(c.stepping.scheme), {}));
    lp::Member* m = &b[0];
    lp::RunOptions interrupted;
    interrupted.progress = [&](double, std::int64_t s, double) {
      if (s == 3) throw std::runtime_error("interrupted");
    };
    EXPECT_THROW(lp::run_lockstep(std::span<lp::Member* const>(&m, 1), engine, interrupted), std::runtime_error);
    EXPECT_EQ(engine.started, engine.finished) << what;
    EXPECT_EQ(b[0].ledger().accepted_steps, 3) << what;
    EXPECT_EQ(b[0].statistics().z.size(), 4u) << what;
    EXPECT_EQ(b[0].z(), b[0].statistics().z.back()) << what;
    if (!adaptive) {
      EXPECT_EQ(b[0].ledger().schedule_position, 3) << what;
    }
    lp::run_lockstep(std::span<lp::Member* const>(&m, 1), engine, {});
    EXPECT_TRUE(b[0].finished()) << what;
    expect_same_run(b[0], a[0], what + ", interrupted and continued");
  }
}

TEST(Runner, SelectBatchGroupsCompatibleMembers) {
  std::vector<lp::Member> members;
  members.emplace_back(make_config(lp::Scheme::dp54ip, true, 0), input(0));
  members.emplace_back(make_config(lp::Scheme::erk43ip, true, 1), input(1));
  members.emplace_back(make_config(lp::Scheme::dp54ip, true, 2), input(2));
  auto tighter = make_config(lp::Scheme::dp54ip, true, 3);
  tighter.stepping.rtol = 1e-9;  // tolerances may differ within a batch
  members.emplace_back(tighter, input(3));
  auto other_planes = make_config(lp::Scheme::dp54ip, true, 4);
  other_planes.output.n_save = 3;
  members.emplace_back(other_planes, input(4));
  auto fixed = make_config(lp::Scheme::dp54ip, false, 5);
  members.emplace_back(fixed, input(5));
  auto fixed_other = make_config(lp::Scheme::dp54ip, false, 6);
  fixed_other.stepping.fixed_steps = 41;
  members.emplace_back(fixed_other, input(6));
  std::vector<const lp::Member*> p;
  for (const auto& m : members) p.push_back(&m);
  const auto batches = select_batch(p, std::int64_t{1} << 30);
  EXPECT_EQ(batches, (std::vector<std::vector<std::size_t>>{{0, 2, 3}, {1}, {4}, {5}, {6}}));
  // A budget of two members' memory splits the first batch.
  const auto bytes = lp::Stepper::bytes_per_member(lp::dp54ip_tableau(), kPoints);
  const auto capped = select_batch(p, 2 * bytes);
  EXPECT_EQ(capped.front(), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(capped[1], (std::vector<std::size_t>{1}));
  EXPECT_EQ(capped[2], (std::vector<std::size_t>{3}));
  // The runner refuses an incompatible batch.
  PointwiseKerr problem(kPoints, {kParams[0], kParams[1]});
  std::vector<lp::Member*> bad = {&members[0], &members[1]};
  EXPECT_THROW(lp::run_lockstep(bad, problem), std::invalid_argument);
}

TEST(Runner, ConfigurationErrorsNameTheField) {
  auto expect_message = [](lp::Config c, const std::string& field) {
    try {
      lp::Member m(c, input(0));
      FAIL() << "accepted " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto c = make_config(lp::Scheme::rk4ip, true);
  expect_message(c, "stepping.scheme");  // RK4IP has no error estimate
  c = make_config(lp::Scheme::dp54ip, true);
  c.stepping.rtol = 0;
  expect_message(c, "stepping.rtol");
  c = make_config(lp::Scheme::dp54ip, false);
  c.stepping.schedule = {0.5, 0.4, 2.0};
  expect_message(c, "stepping.schedule");
  c.stepping.schedule = {0.5, 1.0};
  expect_message(c, "stepping.schedule");
  c = make_config(lp::Scheme::dp54ip, true);
  c.output.save_z = {3.0};
  expect_message(c, "output.save_z");
  c = make_config(lp::Scheme::dp54ip, true);
  c.fibre.length = -1;
  expect_message(c, "fibre.length");
  EXPECT_THROW(lp::Member(make_config(lp::Scheme::dp54ip, true), std::vector<Complex>(3)), std::invalid_argument);
}

TEST(Schedule, ExplicitScheduleGetsThePlanes) {
  auto c = make_config(lp::Scheme::dp54ip, false);
  c.stepping.schedule = {0.3, 0.9, 2.0};
  c.output.save_z = {0.5, 0.9};
  const auto s = lp::make_schedule(c);
  EXPECT_EQ(s.planes, (std::vector<double>{0, 0.5, 0.9, 2.0}));
  EXPECT_EQ(s.step_ends, (std::vector<double>{0.3, 0.5, 0.9, 2.0}));
}

TEST(Runner, ReplayedScheduleReproducesTheAdaptiveRun) {
  // A fixed schedule replaying an adaptive run's step ends (statistics z after the input row)
  // takes the same steps, so it gives the same field bit for bit (planes only at both ends, so
  // none is added to the schedule).
  auto adaptive_config = make_config(lp::Scheme::dp54ip, true);
  adaptive_config.output.n_save = 2;
  std::vector<lp::Member> adaptive;
  adaptive.emplace_back(adaptive_config, input(0));
  run(adaptive, {kParams[2]}, lp::Evaluation::batched);
  auto replay_config = adaptive_config;
  replay_config.stepping.adaptive = false;
  const auto& z = adaptive[0].statistics().z;
  replay_config.stepping.schedule.assign(z.begin() + 1, z.end());
  std::vector<lp::Member> replay;
  replay.emplace_back(replay_config, input(0));
  run(replay, {kParams[2]}, lp::Evaluation::batched);
  EXPECT_EQ(replay[0].ledger().accepted_steps, adaptive[0].ledger().accepted_steps);
  EXPECT_EQ(replay[0].spectrum(), adaptive[0].spectrum());
  EXPECT_EQ(replay[0].ledger().tolerance_violations, 0);
}
