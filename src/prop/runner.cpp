#include "lockstep/prop/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "lockstep/core/error.hpp"
#include "host_engine.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.runner";
using clock = std::chrono::steady_clock;

// The stepping settings that must agree within a batch (the tolerances may differ).
bool same_stepping(const SteppingConfig& a, const SteppingConfig& b) {
  return a.scheme == b.scheme && a.adaptive == b.adaptive && a.initial_step == b.initial_step &&
         a.min_step == b.min_step && a.max_step == b.max_step && a.max_rejections == b.max_rejections &&
         a.policy == b.policy;
}
}  // namespace

bool lockstep_compatible(const Member& a, const Member& b) {
  const Config &ca = a.config(), &cb = b.config();
  return ca.grid == cb.grid && same_stepping(ca.stepping, cb.stepping) && ca.fibre.length == cb.fibre.length &&
         a.schedule() == b.schedule() && a.ledger().z == b.ledger().z &&
         a.ledger().schedule_position == b.ledger().schedule_position;
}

std::vector<std::vector<std::size_t>> select_batch(std::span<const Member* const> members,
                                                   std::int64_t memory_budget_bytes, const EngineOptions& engine) {
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const Member& m = *members[i];
    const std::int64_t bytes = engine_bytes_per_member(engine, m.tableau(), m.config().grid.points);
    bool placed = false;
    for (auto& batch : batches) {
      const Member& head = *members[batch.front()];
      const auto size = static_cast<std::int64_t>(batch.size());
      if (lockstep_compatible(head, m) && (size + 1) * bytes <= memory_budget_bytes) {
        batch.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) batches.push_back({i});
  }
  return batches;
}

// One run of a batch: the stepper, the bookkeeping of accepted and rejected trials.
class LockstepRun {
 public:
  LockstepRun(std::span<Member* const> members, Engine& engine, const RunOptions& options)
      : members_(members),
        engine_(engine),
        options_(options),
        count_(static_cast<std::int64_t>(members.size())),
        start_(clock::now()) {
    const Member& head = *members_[0];
    for (std::int64_t i = 0; i < count_; ++i) {
      Member& m = member(i);
      if (i > 0 && !lockstep_compatible(head, m))
        invalid_argument(kWhere, "member ", i, " cannot run in lockstep with member 0 (grid, scheme, ",
                         "schedule, stepping settings or position differ)");
      if (m.tableau().name != engine.tableau().name)
        invalid_argument(kWhere, "member ", i, " uses ", m.tableau().name, ", the engine ", engine.tableau().name);
      if (static_cast<std::int64_t>(m.spectrum_.size()) != engine.points())
        invalid_argument(kWhere, "member ", i, " has ", m.spectrum_.size(), " points, the engine ", engine.points());
      engine_.load(i, m.spectrum_.data(), m.error_control());
      if (m.ledger_.z == 0 && m.statistics_.z.empty()) record_row(i, 0, 0, 0);
      if (m.ledger_.z == 0 && m.planes_.z.empty()) {
        m.planes_.z.push_back(0);
        m.planes_.field_w.push_back(m.spectrum_);
      }
    }
    length_ = head.config_.fibre.length;
    tol_ = kSameZ * length_;
  }

  // Runs to the end (or options.max_steps); the members' fields are brought back from the
  // engine at the end, and after a failure the last accepted ones.
  void run() {
    try {
      if (member(0).config_.stepping.adaptive) run_adaptive();
      else run_fixed();
    } catch (...) {
      // A trial started ahead is finished (its candidate dropped), so that the engine takes calls
      // again; an error of its own gives way to the one being thrown.
      if (started_h_) {
        started_h_.reset();
        try {
          engine_.finish_trial();
        } catch (...) {
        }
      }
      read_spectra();
      throw;
    }
    read_spectra();
  }

 private:
  Member& member(std::int64_t i) const { return *members_[static_cast<std::size_t>(i)]; }
  const std::vector<double>& planes() const { return member(0).schedule_.planes; }

  std::string name(std::int64_t i) const {
    return "member " + std::to_string(i) + " (noise seed " + std::to_string(member(i).config_.pulse.noise_seed) + ")";
  }

  void read_spectra() {
    std::vector<Complex*> rows;
    for (std::int64_t i = 0; i < count_; ++i) rows.push_back(member(i).spectrum_.data());
    engine_.read_solutions(rows);
    engine_.finish_reads();  // and every plane before them
  }

  // Starts the trial of a step of length h for every member (finished by trial(h)).
  void start_trial(double h) {
    trial_start_ = clock::now();
    engine_.start_trial(h, options_.evaluation);
    started_h_ = h;
  }

  // Finishes the trial of a step of length h, the one started ahead or one started now, and
  // books its evaluations; returns its wall time (start to finish).
  double trial(double h) {
    if (!started_h_) start_trial(h);
    if (*started_h_ != h) runtime_failure(kWhere, "the trial started ahead was of ", *started_h_, " m, not ", h, " m");
    started_h_.reset();
    engine_.finish_trial();
    for (std::int64_t i = 0; i < count_; ++i) {
      Ledger& l = member(i).ledger_;
      const int evals = engine_.evaluations(i);
      l.rhs_evaluations += evals;
      l.ffts += evals * engine_.ffts_per_evaluation(i);
    }
    return std::chrono::duration<double>(clock::now() - trial_start_).count();
  }

  // The largest member norm (NaN when the scheme has none) and the member that has it; the
  // candidate of some member is non-finite when `finite` comes back false.
  struct BatchNorm {
    double norm = std::numeric_limits<double>::quiet_NaN();
    std::int64_t worst = 0;
    bool finite = true;
  };
  BatchNorm batch_norm() const {
    const bool estimated = engine_.tableau().has_error_estimate();
    BatchNorm b;
    if (estimated) b.norm = 0;
    for (std::int64_t i = 0; i < count_; ++i) {
      const double n = engine_.norm(i);
      if (!engine_.finite(i) || (estimated && !std::isfinite(n))) {
        if (b.finite) b.worst = i;
        b.finite = false;
      } else if (estimated && n > b.norm) {
        b.norm = n;
        if (b.finite) b.worst = i;
      }
    }
    return b;
  }

  void record_row(std::int64_t i, double z, double dz, double norm) {
    Member& m = member(i);
    const FieldMeasures mm = engine_.measures(i);
    Statistics& s = m.statistics_;
    s.z.push_back(z);
    s.dz.push_back(dz);
    s.error_norm.push_back(norm);
    s.energy.push_back(mm.energy);
    s.photon_number.push_back(mm.photon_number);
    s.peak_power.push_back(mm.peak_power);
    s.spectral_centroid.push_back(mm.spectral_centroid);
  }

  // Appends one plane at z to every member, its rows filled by `read`.
  template <class Read> void save_plane(double z, Read&& read) {
    std::vector<Complex*> rows;
    for (std::int64_t i = 0; i < count_; ++i) {
      Planes& p = member(i).planes_;
      p.z.push_back(z);
      p.field_w.emplace_back(static_cast<std::size_t>(engine_.points()));
      rows.push_back(p.field_w.back().data());
    }
    read(std::span<Complex* const>(rows));
  }

  // Accepts every member's candidate as the field at z1 (= z0 + h): planes inside the step (dense
  // output) and at its end, windows, statistics and the ledger. The members of a batch save
  // the same planes (they share schedule and position). With `ahead` (and options.max_steps
  // allowing one more step), the trial of the next step (of that length) is started before the
  // statistics and the ledger are written, so that the device computes it meanwhile (for 1024
  // members that bookkeeping took about 90 us a step, 2 % of a DP5(4)-IP trial at 2^13 points
  // on an H100).
  void accept(double z0, double z1, double h, double seconds, std::optional<double> ahead) {
    const double share = seconds / static_cast<double>(count_);
    const auto& pl = planes();
    engine_.accept();
    auto p = member(0).planes_.z.size();
    for (; p < pl.size() && pl[p] < z1 - tol_; ++p) {
      if (!engine_.tableau().has_dense_output())
        runtime_failure(kWhere, "plane at ", pl[p], " m skipped by a step from ", z0, " to ", z1, " m");
      save_plane(pl[p], [&](std::span<Complex* const> rows) { engine_.read_dense_output((pl[p] - z0) / h, rows); });
    }
    if (p < pl.size() && pl[p] <= z1 + tol_)
      save_plane(pl[p], [&](std::span<Complex* const> rows) { engine_.read_solutions(rows); });
    // The next trial rewrites the norms.
    norms_.resize(static_cast<std::size_t>(count_));
    for (std::int64_t i = 0; i < count_; ++i) norms_[static_cast<std::size_t>(i)] = engine_.norm(i);
    if (ahead && step_allowed(steps_ + 1)) start_trial(*ahead);
    // On a fixed schedule: the step ends reached (not yet the end of a step being subdivided).
    const auto& ends = member(0).schedule_.step_ends;
    const auto position = member(0).config_.stepping.adaptive
                              ? std::int64_t{0}
                              : std::upper_bound(ends.begin(), ends.end(), z1 + tol_) - ends.begin();
    for (std::int64_t i = 0; i < count_; ++i) {
      record_row(i, z1, h, norms_[static_cast<std::size_t>(i)]);
      Ledger& l = member(i).ledger_;
      ++l.accepted_steps;
      l.z = z1;
      l.schedule_position = position;
      l.wall_time += share;
    }
    ++steps_;
    if (options_.progress) {
      const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
      options_.progress(z1, steps_, elapsed > 0 ? static_cast<double>(steps_) / elapsed : 0.0);
    }
  }

  void reject(double seconds) {
    const double share = seconds / static_cast<double>(count_);
    for (std::int64_t i = 0; i < count_; ++i) {
      ++member(i).ledger_.rejected_steps;
      member(i).ledger_.wall_time += share;
    }
  }

  // An adaptive step from z: the proposal dz (capped by stepping.max_step), or up to the fibre
  // end or, without dense output, the next plane when it would reach them (`shortened` when
  // that made it shorter).
  struct AdaptiveStep {
    double h, z1;
    bool shortened;
  };
  AdaptiveStep adaptive_step(double z, double dz) const {
    const SteppingConfig& st = member(0).config_.stepping;
    dz = std::min(dz, st.max_step > 0 ? st.max_step : length_);
    double z1 = z + dz;
    bool shortened = false;
    if (z1 >= length_ - tol_) {
      z1 = length_;
      shortened = z1 - z < dz;
    }
    if (!engine_.tableau().has_dense_output()) {
      const auto& pl = planes();
      const auto next = std::upper_bound(pl.begin(), pl.end(), z + tol_);
      if (next != pl.end() && z1 >= *next - tol_) {
        shortened = shortened || *next < z1;
        z1 = *next;
      }
    }
    return {z1 - z, z1, shortened};
  }

  // Whether options.max_steps lets the run take a step after `taken` steps.
  bool step_allowed(std::int64_t taken) const { return options_.max_steps <= 0 || taken < options_.max_steps; }

  void run_adaptive() {
    const SteppingConfig& st = member(0).config_.stepping;
    const StepController controller(engine_.tableau().embedded_order);
    double dz = std::numeric_limits<double>::infinity(), previous = 0;
    for (std::int64_t i = 0; i < count_; ++i) {
      const Ledger& l = member(i).ledger_;
      dz = std::min(dz, l.next_dz > 0 ? l.next_dz : st.initial_step);
      previous = std::max(previous, l.previous_error);
    }
    double z = member(0).ledger_.z;
    int rejections = 0;
    while (z < length_ - tol_ && step_allowed(steps_)) {
      const AdaptiveStep step = adaptive_step(z, dz);
      const double h = step.h;
      const double seconds = trial(h);
      const BatchNorm b = batch_norm();
      if (!b.finite || b.norm > 1) {
        reject(seconds);
        if (++rejections > st.max_rejections)
          runtime_failure(kWhere, name(b.worst), ": ", rejections, " consecutive rejected steps at z = ", z,
                          " m (last dz = ", h, " m, error norm ", b.norm, b.finite ? "" : ", non-finite field", ")");
        dz = controller.after_reject(h, b.finite ? b.norm : std::numeric_limits<double>::quiet_NaN());
        if (st.min_step > 0 && dz < st.min_step)
          runtime_failure(kWhere, name(b.worst), ": the step fell to ", dz,
                          " m, below stepping.min_step = ", st.min_step, " m, at z = ", z, " m");
        continue;
      }
      double next = controller.after_accept(h, b.norm, previous, rejections > 0);
      // A step shortened to meet a plane or the end says little about the step the controller
      // had proposed: keep that proposal when it is larger.
      if (step.shortened) next = std::max(next, dz);
      dz = next;
      previous = b.norm;
      rejections = 0;
      // The controller's memory is in the ledger before the step is booked, so that a run
      // interrupted by the booking's progress call resumes as it would have gone on.
      for (std::int64_t i = 0; i < count_; ++i) {
        member(i).ledger_.next_dz = dz;
        member(i).ledger_.previous_error = previous;
      }
      // The next step's trial goes ahead of this step's bookkeeping.
      std::optional<double> ahead;
      if (step.z1 < length_ - tol_) ahead = adaptive_step(step.z1, dz).h;
      accept(z, step.z1, h, seconds, ahead);
      z = step.z1;
    }
  }

  // One step of a fixed schedule from z0 to z1, halved under the subdivide policy; `next`: the
  // length of the schedule's step after it, if any, whose trial its acceptance starts.
  void fixed_step(double z0, double z1, int depth, std::optional<double> next) {
    const SteppingConfig& st = member(0).config_.stepping;
    const double h = z1 - z0;
    const double seconds = trial(h);
    const BatchNorm b = batch_norm();
    if (!b.finite)
      runtime_failure(kWhere, name(b.worst), " diverged: non-finite field in the step from z = ", z0, " m to ", z1,
                      " m");
    if (b.norm > 1) {
      if (st.policy == FixedPolicy::fail)
        runtime_failure(kWhere, name(b.worst), ": error norm ", b.norm, " > 1 in the step from z = ", z0, " m to ", z1,
                        " m (stepping.policy = fail)");
      if (st.policy == FixedPolicy::subdivide && depth < options_.max_subdivisions) {
        reject(seconds);
        const double mid = z0 + h / 2;
        fixed_step(z0, mid, depth + 1, std::nullopt);
        fixed_step(mid, z1, depth + 1, next);
        return;
      }
      for (std::int64_t i = 0; i < count_; ++i)
        if (engine_.norm(i) > 1) ++member(i).ledger_.tolerance_violations;
    }
    accept(z0, z1, h, seconds, next);
  }

  void run_fixed() {
    const auto& ends = member(0).schedule_.step_ends;
    // accept() moves the ledger's schedule_position on.
    for (auto position = static_cast<std::size_t>(member(0).ledger_.schedule_position);
         position < ends.size() && step_allowed(steps_);
         position = static_cast<std::size_t>(member(0).ledger_.schedule_position)) {
      std::optional<double> next;
      if (position + 1 < ends.size()) next = ends[position + 1] - ends[position];
      fixed_step(member(0).ledger_.z, ends[position], 0, next);
    }
  }

  std::span<Member* const> members_;
  Engine& engine_;
  const RunOptions& options_;
  std::int64_t count_;
  clock::time_point start_;
  double length_ = 0, tol_ = 0;
  std::int64_t steps_ = 0;
  std::optional<double> started_h_;  // the step length of a trial started ahead
  clock::time_point trial_start_;
  std::vector<double> norms_;  // of the step being booked
};

void run_lockstep(std::span<Member* const> members, Engine& engine, const RunOptions& options) {
  if (members.empty()) invalid_argument(kWhere, "no members to run");
  if (engine.members() != static_cast<std::int64_t>(members.size()))
    invalid_argument(kWhere, "the engine has ", engine.members(), " members, the batch ", members.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i] == nullptr) invalid_argument(kWhere, "member ", i, " is null");
  LockstepRun(members, engine, options).run();
}

void run_lockstep(std::span<Member* const> members, Problem& problem, const RunOptions& options) {
  if (members.empty()) invalid_argument(kWhere, "no members to run");
  if (members[0] == nullptr) invalid_argument(kWhere, "member 0 is null");
  HostEngine engine(members[0]->tableau(), problem);
  run_lockstep(members, engine, options);
}

}  // namespace lockstep::prop
