// docs/PROPAGATION.md §5.7: the Dudley–Genty–Coen supercontinuum (Rev. Mod. Phys. 78, 1135 (2006),
// Fig. 3), which is the configuration's default: 835 nm, sech of 50 fs FWHM at 10 kW, 0.15 m,
// β2…β10, γ = 0.11 /W/m, Blow–Wood Raman, self-steepening, 2^13 points over 12.5 ps, 200
// planes; adaptive DP5(4)-IP at rtol 1e-6. One run takes ~7 s of CPU (~2700 steps), so the
// checks are one test (CTest runs every test in its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "lockstep/prop/physics_problem.hpp"
#include "lockstep/prop/pulse.hpp"
#include "lockstep/prop/runner.hpp"

namespace lp = lockstep::prop;

namespace {

lp::Member run_dudley() {
  const lp::Config config;  // the defaults are the Dudley case
  lp::Member m(config, lp::initial_spectrum(config.pulse, lp::Grid(config.grid)));
  lp::Member* p = &m;
  lp::run_gnlse(std::span<lp::Member* const>(&p, 1));
  return m;
}

// The wavelengths (nm) between which the spectrum stays within `db` of its peak.
std::pair<double, double> span_at(const std::vector<std::complex<double>>& spectrum, const lp::Grid& grid, double db) {
  const auto omega = grid.omega_ascending();
  double top = 0;
  for (const auto& v : spectrum) top = std::max(top, std::norm(v));
  double lo = INFINITY, hi = 0;
  for (std::int64_t k = 0; k < grid.size(); ++k) {
    if (std::norm(spectrum[static_cast<std::size_t>(grid.ascending_to_fft(k))]) < top * std::pow(10.0, -db / 10))
      continue;
    const double lambda = 2 * std::numbers::pi * lp::kSpeedOfLight / omega[static_cast<std::size_t>(k)] * 1e9;
    lo = std::min(lo, lambda);
    hi = std::max(hi, lambda);
  }
  return {lo, hi};
}

}  // namespace

TEST(Dudley, Supercontinuum) {
  const lp::Member dudley = run_dudley();
  const auto& s = dudley.statistics();
  // Photon number is the invariant with Raman and shock; its drift is the accuracy monitor.
  // Measured 7e-6 at rtol = 1e-6 over ~2700 steps; bound 1e-4.
  const double drift = std::abs(s.photon_number.back() / s.photon_number.front() - 1);
  RecordProperty("photon_number_drift", std::to_string(drift));
  RecordProperty("accepted_steps", std::to_string(dudley.ledger().accepted_steps));
  RecordProperty("rejected_steps", std::to_string(dudley.ledger().rejected_steps));
  EXPECT_LT(drift, 1e-4);
  // Energy is not conserved (the Raman shift): it falls by several per cent, far above the drift.
  EXPECT_LT(s.energy.back() / s.energy.front(), 0.97);
  EXPECT_EQ(dudley.z(), 0.15);

  // The output spectrum of Fig. 3 spans about 500–1300 nm at −40 dB (measured here: 493–1314 nm),
  // from an input spanning about 800–870 nm. Bounds: below 550 nm and above 1250 nm.
  const lp::Grid grid(dudley.config().grid);
  const auto in = span_at(dudley.planes().field_w.front(), grid, 40);
  const auto out = span_at(dudley.spectrum(), grid, 40);
  RecordProperty("span_40dB_nm", std::to_string(out.first) + " " + std::to_string(out.second));
  EXPECT_GT(in.first, 780.0);
  EXPECT_LT(in.second, 900.0);
  EXPECT_LT(out.first, 550.0);
  EXPECT_GT(out.second, 1250.0);

  // The N ≈ 8.7 soliton compresses to its highest peak power near the fission length
  // L_fiss ≈ L_D/N = 68 mm / 8.7 ≈ 7.8 mm (measured: 7.3 mm, ~4 P0), then breaks up. L_D/N is a
  // scaling estimate; ±2.5 mm around it and a compression of at least 3× P0.
  const auto peak = std::max_element(s.peak_power.begin(), s.peak_power.end());
  const double z_peak = s.z[static_cast<std::size_t>(peak - s.peak_power.begin())];
  RecordProperty("z_of_max_peak_power_mm", std::to_string(z_peak * 1e3));
  EXPECT_NEAR(z_peak, 7.8e-3, 2.5e-3);
  EXPECT_GT(*peak, 3 * 10e3);
  // After fission the peak power stays well below that maximum.
  EXPECT_LT(s.peak_power.back(), 0.8 * *peak);

  // 200 planes at their exact positions, the last one the output field.
  const auto& planes = dudley.planes();
  ASSERT_EQ(planes.z.size(), 200u);
  for (std::size_t k = 0; k < 200; ++k)
    EXPECT_EQ(planes.z[k], k == 199 ? 0.15 : 0.15 * static_cast<double>(k) / 199) << k;
  EXPECT_EQ(planes.field_w.back(), dudley.spectrum());
}
