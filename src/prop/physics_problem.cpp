#include "lockstep/prop/physics_problem.hpp"

#include <algorithm>

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.physics_problem";

const GridConfig& first_grid(std::span<const Config* const> configs) {
  if (configs.empty() || configs[0] == nullptr) invalid_argument(kWhere, "no member configurations");
  return configs[0]->grid;
}
}  // namespace

PhysicsProblem::PhysicsProblem(std::span<const Config* const> configs, int threads)
    : grid_(first_grid(configs)), transform_(grid_.size()) {
  const GridConfig& g = configs[0]->grid;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config* c = configs[i];
    if (c == nullptr) invalid_argument(kWhere, "member ", i, " has no configuration");
    if (c->grid.points != g.points || c->grid.time_window != g.time_window ||
        c->grid.center_wavelength != g.center_wavelength)
      invalid_argument(kWhere, "member ", i, " has another grid than member 0");
    if (c->window.time_edge != 0 || c->window.frequency_edge != 0)
      invalid_argument(kWhere, "member ", i, ": window.time_edge / window.frequency_edge are not ",
                       "available in the runners yet; set them to 0");
    physics_.push_back(make_physics(*c, grid_));
  }
  for (const auto& p : physics_) pointers_.push_back(&p);
  batch_ = std::make_unique<NonlinearBatch>(grid_, members(), threads);
  omega_absolute_ = grid_.omega();
  for (double& w : omega_absolute_) w += grid_.omega0();
  field_.resize(static_cast<std::size_t>(grid_.size()));
}

const MemberPhysics& PhysicsProblem::physics(std::int64_t member) const {
  if (member < 0 || member >= members())
    invalid_argument(kWhere, "member ", member, " outside [0, ", members(), ")");
  return physics_[static_cast<std::size_t>(member)];
}

std::span<const Complex> PhysicsProblem::linear(std::int64_t member) const {
  return physics(member).linear;
}

void PhysicsProblem::nonlinear(std::int64_t first, std::int64_t count, const Complex* in, Complex* out) {
  if (first < 0 || count < 1 || first + count > members())
    invalid_argument(kWhere, "members [", first, ", ", first + count, ") outside [0, ", members(), ")");
  batch_->evaluate(std::span<const MemberPhysics* const>(pointers_).subspan(
                       static_cast<std::size_t>(first), static_cast<std::size_t>(count)),
                   in, out);
}

std::int64_t PhysicsProblem::ffts_per_evaluation(std::int64_t member) const {
  return batch_->ffts_per_evaluation(physics(member));
}

Measures PhysicsProblem::measure(std::int64_t member, const Complex* spectrum) {
  (void)physics(member);
  const std::int64_t n = grid_.size();
  const double scale = grid_.dt() / static_cast<double>(n);
  Measures m;
  double weighted = 0, total = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const double p = std::norm(spectrum[k]);
    const double w = omega_absolute_[static_cast<std::size_t>(k)];
    total += p;
    weighted += w * p;
    m.photon_number += p / (kHbar * w);
  }
  m.energy = scale * total;
  m.photon_number *= scale;
  m.spectral_centroid = total > 0 ? weighted / total : grid_.omega0();
  transform_.to_time(spectrum, field_.data());
  for (const auto& a : field_) m.peak_power = std::max(m.peak_power, std::norm(a));
  return m;
}

bool PhysicsProblem::apply_windows(std::int64_t member, Complex*) {
  (void)physics(member);
  return false;
}

}  // namespace lockstep::prop
