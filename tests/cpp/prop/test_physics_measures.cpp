// Measures of a field (energy both ways, photon number, peak power, spectral centroid) and the
// first-order coherence of an ensemble.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/pulse.hpp"

namespace lockstep::prop {
namespace {

using Field = std::vector<Complex>;

TEST(PhysicsMeasures, EnergyPhotonsPeakAndCentroid) {
  const Grid grid(GridConfig{});
  const auto n = static_cast<std::size_t>(grid.size());
  PulseConfig p;
  p.delay = 1e-12;
  const Field a = initial_field(p, grid);
  Field s(n);
  SpectralTransform transform(grid.size());
  transform.to_spectrum(a.data(), s.data());
  // Parseval in the convention: the two energies agree to rounding.
  const double e = energy_of_field(a.data(), grid);
  EXPECT_NEAR(energy_of_spectrum(s.data(), grid), e, 1e-13 * e);
  EXPECT_NEAR(e, 2 * p.peak_power * pulse_t0(p), 1e-9 * e);  // 2 P0 T0 for a sech
  // A transform-limited sech is symmetric about ω0: centroid ω0 (to rounding of the sum), and
  // its photon number is energy / ħω0 up to the second moment of the spectrum, (Δω_rms/ω0)²,
  // ≈ 4e-4 here, which sets the tolerance.
  EXPECT_NEAR(spectral_centroid(s.data(), grid), grid.omega0(), 1e-12 * grid.omega0());
  const double photons = photon_number(s.data(), grid);
  EXPECT_NEAR(photons, e / (kHbar * grid.omega0()), 1e-3 * photons);
  EXPECT_GT(photons, e / (kHbar * grid.omega0()));  // 1/ω is convex: Jensen
  Field scratch(n);
  const FieldMeasures m = measure(s.data(), grid, transform, scratch.data());
  EXPECT_NEAR(m.peak_power, p.peak_power, 1e-3 * p.peak_power);  // the peak falls between samples
  EXPECT_EQ(m.peak_power, peak_power(scratch.data(), grid));
  EXPECT_EQ(m.energy, energy_of_spectrum(s.data(), grid));
  EXPECT_EQ(m.photon_number, photons);
  // One spectral bin: centroid at its frequency, photon number = energy / ħω of that bin.
  Field line(n, Complex(0, 0));
  const std::size_t k = 37;
  line[k] = Complex(3e5, -2e5);
  const double w = grid.omega0() + grid.omega()[k];
  EXPECT_NEAR(spectral_centroid(line.data(), grid), w, 1e-15 * w);
  EXPECT_NEAR(photon_number(line.data(), grid), energy_of_spectrum(line.data(), grid) / (kHbar * w), 1e-12 * photons);
  Field zero(n, Complex(0, 0));
  EXPECT_EQ(spectral_centroid(zero.data(), grid), grid.omega0());
  EXPECT_EQ(photon_number(zero.data(), grid), 0.0);
}

TEST(PhysicsMeasures, CoherenceOfIdenticalAndOfRandomMembers) {
  const Grid grid(GridConfig{4096, 8e-12, 835e-9});
  const auto n = static_cast<std::size_t>(grid.size());
  PulseConfig p;
  const Field pulse = initial_spectrum(p, grid);
  // Identical members: |g12| = 1 wherever there is power.
  const std::vector<Field> same(5, pulse);
  const std::vector<double> g_same = coherence(same, grid);
  ASSERT_EQ(g_same.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(grid.ascending_to_fft(static_cast<std::int64_t>(i)));
    if (std::norm(pulse[k]) > 1e-20 * std::norm(pulse[0])) {
      ASSERT_NEAR(g_same[i], 1.0, 1e-12) << i;
    }
  }
  // Members with independent uniform phases and equal moduli: with S = Σ e^{iφ_m},
  // |g12| = | |S|² − M | / (M(M−1)). For large M, |S|²/M is exponentially distributed with
  // mean 1, so E|g12| ≈ E|X − 1|/(M − 1) = (2/e)/(M − 1) (≈ 0.039 for M = 20, the scale of
  // 1/√pairs = 0.073). Averaged over 4096 frequencies the statistical error is ≈ 1%; the
  // large-M approximation adds a few %: tolerance 10%.
  const int members = 20;
  std::mt19937_64 rng(99);
  std::vector<Field> random(members, Field(n));
  for (auto& f : random)
    for (std::size_t k = 0; k < n; ++k) f[k] = std::polar(2.0, 2 * std::numbers::pi * uniform_from_bits(rng()));
  const std::vector<double> g = coherence(random, grid);
  double mean = 0;
  for (double v : g) mean += v / static_cast<double>(n);
  const double expected = 2 / std::numbers::e / (members - 1);
  EXPECT_NEAR(mean, expected, 0.1 * expected);
  // Ascending order: a member with power only in the lowest frequency bin (FFT index n/2).
  std::vector<Field> low(2, Field(n, Complex(0, 0)));
  low[0][n / 2] = low[1][n / 2] = 1;
  const std::vector<double> g_low = coherence(low, grid);
  EXPECT_EQ(g_low[0], 1.0);
  EXPECT_EQ(g_low[1], 0.0);
  // Validation.
  EXPECT_THROW(coherence(std::vector<Field>(1, pulse), grid), std::invalid_argument);
  std::vector<Field> bad{pulse, Field(10)};
  EXPECT_THROW(coherence(bad, grid), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::prop
