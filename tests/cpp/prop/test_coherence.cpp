// docs/PROPAGATION.md §5.8: the first-order coherence |g12(λ)| of the Dudley supercontinuum from 20
// shot-noise members run as one lockstep batch (adaptive DP5(4)-IP, rtol 1e-6). About 6 min of
// CPU (the batch steps at its largest member norm): label "slow".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"

namespace lp = lockstep::prop;

TEST(Coherence, DudleyEnsembleIsCoherentInTheCentre) {
  constexpr int kMembers = 20;
  std::vector<lp::Member> members;
  for (int i = 0; i < kMembers; ++i) {
    lp::Config c;  // the Dudley case
    c.pulse.shot_noise = true;
    c.pulse.noise_seed = static_cast<std::uint64_t>(1000 + i);
    c.output.n_save = 2;
    members.emplace_back(c, lp::initial_spectrum(c.pulse, lp::Grid(c.grid)));
  }
  lp::run_gnlse(members);

  const lp::Grid grid(members[0].config().grid);
  std::vector<std::vector<std::complex<double>>> spectra;
  for (const auto& m : members) spectra.push_back(m.spectrum());
  const auto g12 = lp::coherence(spectra, grid);  // ascending ω
  // The ensemble's mean spectrum on the ascending grid, in dB of its peak.
  std::vector<double> mean(static_cast<std::size_t>(grid.size()), 0.0);
  for (const auto& s : spectra)
    for (std::int64_t k = 0; k < grid.size(); ++k)
      mean[static_cast<std::size_t>(k)] += std::norm(s[static_cast<std::size_t>(grid.ascending_to_fft(k))]);
  const double top = *std::max_element(mean.begin(), mean.end());
  double centre = 0, wings = 0;
  int n_centre = 0, n_wings = 0;
  for (std::size_t k = 0; k < mean.size(); ++k) {
    const double db = 10 * std::log10(mean[k] / top);
    if (db >= -20) {
      centre += g12[k];
      ++n_centre;
    } else if (db >= -60 && db < -40) {
      wings += g12[k];
      ++n_wings;
    }
  }
  ASSERT_GT(n_centre, 100);
  ASSERT_GT(n_wings, 100);
  centre /= n_centre;
  wings /= n_wings;
  RecordProperty("mean_g12_centre", std::to_string(centre));
  RecordProperty("mean_g12_wings", std::to_string(wings));
  // Dudley, Genty & Coen (Fig. 17 and §V): for a 50 fs pump the supercontinuum stays highly
  // coherent across its bandwidth (|g12| ≈ 1), degrading where the spectrum is weak, the noise
  // there being comparable to the signal. Measured: mean |g12| 0.92 where the mean spectrum is
  // within 20 dB of its peak, 0.80 in the −40 … −60 dB wings. Bounds (20 members leave a
  // sampling spread of a few 0.01): ≥ 0.85 in the centre, and the wings lower by ≥ 0.05.
  EXPECT_GE(centre, 0.85);
  EXPECT_LT(wings, centre - 0.05);
}
