#include "lockstep/prop/physics_problem.hpp"

#include <algorithm>

#include "lockstep/core/backend.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/prop/cuda_engine.hpp"
#include "lockstep/prop/stepper.hpp"
#include "host_engine.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.physics_problem";

// build_summary() (backend.hpp) names the propagation engine's backends; every program that
// makes a GNLSE engine links this unit.
const bool kReported =
    (report_in_build_summary(+[] { return std::string("propagation: CPU") + cuda_engine_summary(); }), true);

const GridConfig& first_grid(std::span<const Config* const> configs) {
  if (configs.empty() || configs[0] == nullptr) invalid_argument(kWhere, "no member configurations");
  return configs[0]->grid;
}
}  // namespace

BatchPhysics make_batch_physics(std::span<const Config* const> configs) {
  BatchPhysics batch{Grid(first_grid(configs)), {}, {}};
  const GridConfig& g = configs[0]->grid;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config* c = configs[i];
    if (c == nullptr) invalid_argument(kWhere, "member ", i, " has no configuration");
    if (c->grid != g) invalid_argument(kWhere, "member ", i, " has another grid than member 0");
    batch.physics.push_back(make_physics(*c, batch.grid));
    batch.windows.push_back(make_windows(c->window, batch.grid));
  }
  return batch;
}

PhysicsProblem::PhysicsProblem(std::span<const Config* const> configs, int threads)
    : PhysicsProblem(make_batch_physics(configs), threads) {}

PhysicsProblem::PhysicsProblem(BatchPhysics batch, int threads)
    : grid_(std::move(batch.grid)), physics_(std::move(batch.physics)), windows_(std::move(batch.windows)) {
  for (std::size_t i = 0; i < physics_.size(); ++i) {
    transforms_.push_back(std::make_unique<SpectralTransform>(grid_.size()));
    fields_.emplace_back(static_cast<std::size_t>(grid_.size()));
  }
  for (const auto& p : physics_) pointers_.push_back(&p);
  batch_ = std::make_unique<NonlinearBatch>(grid_, members(), threads);
}

const MemberPhysics& PhysicsProblem::physics(std::int64_t member) const {
  if (member < 0 || member >= members()) invalid_argument(kWhere, "member ", member, " outside [0, ", members(), ")");
  return physics_[static_cast<std::size_t>(member)];
}

std::span<const Complex> PhysicsProblem::linear(std::int64_t member) const { return physics(member).linear; }

void PhysicsProblem::nonlinear(std::int64_t first, std::int64_t count, const Complex* in, Complex* out) {
  if (first < 0 || count < 1 || first + count > members())
    invalid_argument(kWhere, "members [", first, ", ", first + count, ") outside [0, ", members(), ")");
  batch_->evaluate(std::span<const MemberPhysics* const>(pointers_).subspan(static_cast<std::size_t>(first),
                                                                            static_cast<std::size_t>(count)),
                   in, out);
}

std::int64_t PhysicsProblem::ffts_per_evaluation(std::int64_t member) const {
  return batch_->ffts_per_evaluation(physics(member));
}

FieldMeasures PhysicsProblem::measure(std::int64_t member, const Complex* spectrum) {
  (void)physics(member);
  const auto m = static_cast<std::size_t>(member);
  return prop::measure(spectrum, grid_, *transforms_[m], fields_[m].data());
}

bool PhysicsProblem::apply_windows(std::int64_t member, Complex* spectrum) {
  (void)physics(member);
  const Windows& w = windows_[static_cast<std::size_t>(member)];
  if (w.time.empty() && w.frequency.empty()) return false;
  prop::apply_windows(w, *transforms_[static_cast<std::size_t>(member)], spectrum);
  return true;
}

std::int64_t engine_bytes_per_member(const EngineOptions& options, const Tableau& tableau, std::int64_t points) {
  return options.device == Device::cuda ? cuda_engine_bytes_per_member(tableau, points, options.precision, options.cuda)
                                        : Stepper::bytes_per_member(tableau, points);
}

void check_engine_options(const EngineOptions& options) {
  if (options.device == Device::cuda) return require_cuda_engine();
  if (options.precision != DType::f64)
    invalid_argument(kWhere, "float32 propagation runs on CUDA only (the CPU engine is float64)");
}

std::unique_ptr<Engine> make_gnlse_engine(std::span<const Config* const> configs, const Tableau& tableau,
                                          const EngineOptions& options) {
  check_engine_options(options);
  if (options.device == Device::cuda) return make_cuda_engine(configs, tableau, options.precision, options.cuda);
  return std::make_unique<HostEngine>(tableau, std::make_unique<PhysicsProblem>(configs, options.threads));
}

void run_gnlse(std::span<Member* const> members, const RunOptions& options, const EngineOptions& engine) {
  std::vector<const Config*> configs;
  for (const Member* m : members) {
    if (m == nullptr) invalid_argument(kWhere, "a member is null");
    configs.push_back(&m->config());
  }
  if (configs.empty()) invalid_argument(kWhere, "no members to run");
  const auto run_engine = make_gnlse_engine(configs, members[0]->tableau(), engine);
  run_lockstep(members, *run_engine, options);
}

void run_gnlse(std::vector<Member>& members, const RunOptions& options, const EngineOptions& engine) {
  std::vector<Member*> pointers;
  for (Member& m : members) pointers.push_back(&m);
  run_gnlse(pointers, options, engine);
}

}  // namespace lockstep::prop
