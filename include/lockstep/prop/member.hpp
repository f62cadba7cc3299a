// A member of a propagation: one configuration, its field and everything it has recorded.
//
// The state in a Member is complete: the field at ledger().z, the controller's memory
// (ledger().next_dz, previous_error), the schedule position, the statistics and the planes.
// A member can therefore leave a batch and continue alone, and the result files restore it
// with Member::resume.
#pragma once

#include <complex>
#include <vector>

#include "lockstep/prop/config.hpp"
#include "lockstep/prop/controller.hpp"
#include "lockstep/prop/record.hpp"
#include "lockstep/prop/schedule.hpp"
#include "lockstep/prop/tableau.hpp"

namespace lockstep::prop {

class Member {
 public:
  using Complex = std::complex<double>;

  /// A member at z = 0 with the input spectrum Ã(0, ω) (FFT order, grid.points values).
  /// Validates the stepping and output configuration (std::invalid_argument naming the field).
  Member(Config config, std::vector<Complex> spectrum);
  /// A member continued from a saved state: `spectrum` is the field at ledger.z; the records
  /// are those written so far (their counters continue).
  static Member resume(Config config, std::vector<Complex> spectrum, Ledger ledger, Statistics statistics,
                       Planes planes);

  const Config& config() const { return config_; }
  const Schedule& schedule() const { return schedule_; }
  const Tableau& tableau() const { return *tableau_; }
  ErrorControl error_control() const;
  /// Ã(z, ω) at z = ledger().z, FFT order.
  const std::vector<Complex>& spectrum() const { return spectrum_; }
  /// One row per accepted step, after a first row for the input field (z = 0, dz = 0, error
  /// norm 0) that the first run adds, so drifts read as last row against first.
  const Statistics& statistics() const { return statistics_; }
  const Ledger& ledger() const { return ledger_; }
  /// Saved planes (FFT order); the first run adds the input at z = 0.
  const Planes& planes() const { return planes_; }
  double z() const { return ledger_.z; }
  /// Whether the member has reached the end of the fibre.
  bool finished() const;

 private:
  friend class LockstepRun;
  Config config_;
  Schedule schedule_;
  const Tableau* tableau_;
  std::vector<Complex> spectrum_;
  Statistics statistics_;
  Ledger ledger_;
  Planes planes_;
};

}  // namespace lockstep::prop
