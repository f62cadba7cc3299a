// The GNLSE of a batch of members as the stepper's Problem: each member's L(ω) and physics
// from its configuration (physics.hpp), N evaluated for the whole batch by one NonlinearBatch.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/engine.hpp"
#include "lockstep/prop/member.hpp"
#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/nonlinear.hpp"
#include "lockstep/prop/physics.hpp"
#include "lockstep/prop/problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"
#include "lockstep/prop/transform.hpp"

namespace lockstep::prop {

/// The physics and windows of the members of one batch (one configuration each).
struct BatchPhysics {
  Grid grid;
  std::vector<MemberPhysics> physics;
  std::vector<Windows> windows;
};
/// Validates `configs` (at least one, none null, all on member 0's grid; std::invalid_argument
/// naming the member) and builds each member's physics and windows on that grid.
BatchPhysics make_batch_physics(std::span<const Config* const> configs);

class PhysicsProblem : public Problem {
 public:
  /// The problems of `configs` (one member each), which must share one grid configuration.
  /// `threads` as NonlinearBatch's (≤ 0: lockstep::num_threads()).
  explicit PhysicsProblem(std::span<const Config* const> configs, int threads = 0);

  std::int64_t points() const override { return grid_.size(); }
  std::int64_t members() const override { return static_cast<std::int64_t>(physics_.size()); }
  std::span<const Complex> linear(std::int64_t member) const override;
  void nonlinear(std::int64_t first, std::int64_t count, const Complex* in, Complex* out) override;
  std::int64_t ffts_per_evaluation(std::int64_t member) const override;
  /// measures.hpp's four measures (one inverse transform for the peak power).
  FieldMeasures measure(std::int64_t member, const Complex* spectrum) override;
  /// The member's super-Gaussian windows (pulse.hpp), when configured.
  bool apply_windows(std::int64_t member, Complex* spectrum) override;

  const Grid& grid() const { return grid_; }
  const MemberPhysics& physics(std::int64_t member) const;

 private:
  PhysicsProblem(BatchPhysics batch, int threads);

  Grid grid_;
  std::vector<MemberPhysics> physics_;
  std::vector<const MemberPhysics*> pointers_;
  std::unique_ptr<NonlinearBatch> batch_;
  std::vector<Windows> windows_;
  // Per member, so that members are measured and windowed concurrently.
  std::vector<std::unique_ptr<SpectralTransform>> transforms_;
  std::vector<std::vector<Complex>> fields_;  // scratch for measure()
};

/// Checks that `options` name an engine this build and machine can make, before anything is
/// built for it: std::invalid_argument for float32 on the CPU; std::runtime_error for CUDA in a
/// build without it or without a visible device. make_gnlse_engine checks the same.
void check_engine_options(const EngineOptions& options);

/// The engine `options` selects for the GNLSE of `configs` (one member each, one grid, all
/// stepping with `tableau`): on the CPU the Stepper over a PhysicsProblem, on CUDA the CUDA
/// engine (cuda_engine.hpp). std::invalid_argument for float32 on the CPU; std::runtime_error
/// for CUDA in a build without it or without a visible device.
std::unique_ptr<Engine> make_gnlse_engine(std::span<const Config* const> configs, const Tableau& tableau,
                                          const EngineOptions& options = {});

/// Runs `members` as one lockstep batch on the GNLSE of their configurations: the engine of
/// `engine` made for them, then run_lockstep with `options`.
void run_gnlse(std::span<Member* const> members, const RunOptions& options = {}, const EngineOptions& engine = {});
/// The same for every member of `members`.
void run_gnlse(std::vector<Member>& members, const RunOptions& options = {}, const EngineOptions& engine = {});

}  // namespace lockstep::prop
