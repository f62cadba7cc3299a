#include "lockstep/prop/member.hpp"

#include <cmath>

#include "lockstep/core/error.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.member";

void validate_stepping(const SteppingConfig& st, const Tableau& tableau) {
  if (!(st.rtol > 0) || !std::isfinite(st.rtol))
    invalid_argument(kWhere, "stepping.rtol = ", st.rtol, " must be finite and > 0");
  if (!(st.atol >= 0) || !std::isfinite(st.atol))
    invalid_argument(kWhere, "stepping.atol = ", st.atol, " must be finite and ≥ 0");
  if (st.adaptive && !tableau.has_error_estimate())
    invalid_argument(kWhere, "stepping.scheme = ", tableau.name,
                     " has no error estimate: it runs on a fixed schedule only (stepping.adaptive = false)");
  if (!(st.initial_step > 0) || !std::isfinite(st.initial_step))
    invalid_argument(kWhere, "stepping.initial_step = ", st.initial_step, " m must be finite and > 0");
  if (!(st.min_step >= 0) || !std::isfinite(st.min_step))
    invalid_argument(kWhere, "stepping.min_step = ", st.min_step, " m must be finite and ≥ 0");
  if (!(st.max_step >= 0) || !std::isfinite(st.max_step))
    invalid_argument(kWhere, "stepping.max_step = ", st.max_step, " m must be finite and ≥ 0");
  if (st.max_rejections < 1) invalid_argument(kWhere, "stepping.max_rejections = ", st.max_rejections, " must be ≥ 1");
}
}  // namespace

Member::Member(Config config, std::vector<Complex> spectrum)
    : config_(std::move(config)),
      schedule_(make_schedule(config_)),
      tableau_(&prop::tableau(config_.stepping.scheme)),
      spectrum_(std::move(spectrum)) {
  validate_stepping(config_.stepping, *tableau_);
  if (static_cast<std::int64_t>(spectrum_.size()) != config_.grid.points)
    invalid_argument(kWhere, "the input spectrum has ", spectrum_.size(),
                     " values, grid.points = ", config_.grid.points);
  for (const auto& v : spectrum_)
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
      invalid_argument(kWhere, "the input spectrum has a non-finite value");
}

Member Member::resume(Config config, std::vector<Complex> spectrum, Ledger ledger, Statistics statistics,
                      Planes planes) {
  Member m(std::move(config), std::move(spectrum));
  const double length = m.config_.fibre.length;
  if (!(ledger.z >= 0 && ledger.z <= length))
    invalid_argument(kWhere, "ledger.z = ", ledger.z, " m is outside [0, fibre.length = ", length, "]");
  if (planes.z.size() != planes.field_w.size() || planes.z.size() > m.schedule_.planes.size())
    invalid_argument(kWhere, "the saved planes do not match the configured planes");
  for (std::size_t i = 0; i < planes.z.size(); ++i) {
    if (std::abs(planes.z[i] - m.schedule_.planes[i]) > kSameZ * length)
      invalid_argument(kWhere, "saved plane ", i, " at z = ", planes.z[i], " m is not the configured plane at ",
                       m.schedule_.planes[i], " m");
    if (planes.field_w[i].size() != m.spectrum_.size())
      invalid_argument(kWhere, "saved plane ", i, " has ", planes.field_w[i].size(), " values");
  }
  const auto rows = statistics.z.size();
  for (const auto* column : {&statistics.dz, &statistics.error_norm, &statistics.energy, &statistics.photon_number,
                             &statistics.peak_power, &statistics.spectral_centroid})
    if (column->size() != rows) invalid_argument(kWhere, "the statistics columns differ in length");
  if (!m.config_.stepping.adaptive &&
      (ledger.schedule_position < 0 ||
       ledger.schedule_position > static_cast<std::int64_t>(m.schedule_.step_ends.size())))
    invalid_argument(kWhere, "ledger.schedule_position = ", ledger.schedule_position, " is outside the schedule of ",
                     m.schedule_.step_ends.size(), " steps");
  m.ledger_ = ledger;
  m.statistics_ = std::move(statistics);
  m.planes_ = std::move(planes);
  return m;
}

ErrorControl Member::error_control() const {
  return ErrorControl{config_.stepping.norm, config_.stepping.rtol, config_.stepping.atol};
}

bool Member::finished() const { return ledger_.z >= config_.fibre.length * (1 - kSameZ); }

}  // namespace lockstep::prop
