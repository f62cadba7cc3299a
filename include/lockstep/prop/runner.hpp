// Runners: advance a batch of members through one step schedule (docs/PROPAGATION.md §3).
//
// Every trial (z, dz) is computed for all members of the batch; the batch norm is the largest
// member norm. Adaptive runs accept a trial iff that norm is ≤ 1 and control dz from it, so
// every member meets its own tolerance on every step; fixed schedules treat the norm as a
// diagnostic and apply the configured policy when it exceeds 1 (RK4IP has no error estimate:
// its norm is NaN, recorded as such, and no policy ever applies). A batch of one member is a
// member run alone.
//
// Save planes: a fixed schedule contains them. An adaptive run with a dense-output scheme
// (DP5(4)) interpolates planes inside a step without shortening it; other schemes shorten the
// step that would cross a plane so that it ends on it. Either way planes are at exact z.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "lockstep/prop/engine.hpp"
#include "lockstep/prop/member.hpp"
#include "lockstep/prop/problem.hpp"

namespace lockstep::prop {

struct RunOptions {
  Evaluation evaluation = Evaluation::batched;
  /// Fixed schedule, policy subdivide: how many times a step may be halved.
  int max_subdivisions = 8;
  /// Stop after this many accepted steps (0: run to the end of the fibre). A fixed schedule
  /// stops at the first step end of the schedule reached after them.
  std::int64_t max_steps = 0;
  /// Called after every accepted step with the batch's z (m), its accepted steps in this run
  /// and the rate (accepted steps per second of this run).
  std::function<void(double z, std::int64_t steps, double rate)> progress;
};

/// Advances `members` together (problem member i is members[i]) until they reach the end of
/// the fibre or options.max_steps. The members must be runnable in lockstep (see select_batch)
/// and at the same z. Throws std::runtime_error naming the member and z when a run diverges
/// (non-finite field, a step below stepping.min_step, too many consecutive rejections) or when
/// the fixed-schedule policy is `fail`; what was recorded before stays in the members.
void run_lockstep(std::span<Member* const> members, Engine& engine, const RunOptions& options = {});
/// The same on the CPU: the Stepper over `problem` (HostEngine).
void run_lockstep(std::span<Member* const> members, Problem& problem, const RunOptions& options = {});

/// Whether two members can run in one batch: identical grid, scheme, fibre length, planes and
/// stepping settings except the tolerances (each member keeps its own rtol, atol and norm);
/// for fixed schedules the identical schedule; and the same position (z, schedule position).
bool lockstep_compatible(const Member& a, const Member& b);

/// Groups members into batches that can run in lockstep, in order of first appearance, each
/// capped so that its working memory (engine_bytes_per_member of `engine`) stays within
/// `memory_budget_bytes` (a batch holds at least one member). Returns indices into `members`.
std::vector<std::vector<std::size_t>> select_batch(std::span<const Member* const> members,
                                                   std::int64_t memory_budget_bytes, const EngineOptions& engine = {});

}  // namespace lockstep::prop
