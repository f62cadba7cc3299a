// What a member records while it runs: statistics per accepted step, the ledger (the
// accounting that makes a run auditable and resumable) and the saved planes. Plain data,
// shared by the runners (which fill it) and the result files (which store and restore it).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace lockstep::prop {

/// One row per accepted step, in SI units.
struct Statistics {
  std::vector<double> z;                  ///< m, end of the step
  std::vector<double> dz;                 ///< m
  std::vector<double> error_norm;         ///< the step's error norm (≤ 1 when accepted adaptively)
  std::vector<double> energy;             ///< J, ∫|A|² dT
  std::vector<double> photon_number;      ///< ∝ ∫|Ã|²/ω dω (the conserved quantity with Raman and shock)
  std::vector<double> peak_power;         ///< W, max |A|²
  std::vector<double> spectral_centroid;  ///< rad/s, absolute ω weighted by |Ã|²
};

/// The accounting of a run. Counters are cumulative over the member's whole life (a resumed
/// run continues them).
struct Ledger {
  std::int64_t accepted_steps = 0;
  std::int64_t rejected_steps = 0;
  std::int64_t rhs_evaluations = 0;       ///< N(Ã) evaluations
  std::int64_t ffts = 0;                  ///< one-dimensional transforms of this member's field
  std::int64_t schedule_position = 0;     ///< fixed schedule: index of the next step end
  std::int64_t tolerance_violations = 0;  ///< fixed schedule steps whose norm exceeded 1
  double wall_time = 0;                   ///< s, this member's share of the runner's wall time
  double z = 0;                           ///< m, how far the member has propagated
  double next_dz = 0;                     ///< m, the controller's next trial step (adaptive)
  double previous_error = 1;              ///< the PI controller's memory (adaptive)
};

/// Saved planes: Ã(z, ω) with ω in FFT order inside the numerics; the result files reorder
/// to the ascending ω grid.
struct Planes {
  std::vector<double> z;                                   ///< m
  std::vector<std::vector<std::complex<double>>> field_w;  ///< one spectrum per plane
};

}  // namespace lockstep::prop
