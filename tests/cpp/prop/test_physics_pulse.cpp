// Input pulses (sech and Gaussian width and peak, chirp, delay, user samples), the soliton
// order, shot noise (one photon per mode, statistics over seeds, determinism), the windows and
// every validation error of the pulse and window configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>

#include "lockstep/prop/measures.hpp"
#include "lockstep/prop/pulse.hpp"

namespace lockstep::prop {
namespace {

using Field = std::vector<Complex>;

/// A grid of 2^14 points over 10 ps (dt ≈ 0.61 fs) at 300 nm (the frequency window must stay
/// on positive absolute frequencies).
GridConfig fine_grid() { return {1 << 14, 10e-12, 300e-9}; }

/// Intensity FWHM of sampled |A|², the half-maximum crossings found by linear interpolation.
double measured_fwhm(const Field& a, const Grid& grid) {
  std::vector<double> p(a.size());
  for (std::size_t j = 0; j < a.size(); ++j) p[j] = std::norm(a[j]);
  const std::size_t top = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
  const double half = p[top] / 2;
  std::size_t l = top, r = top;
  while (p[l] > half) --l;
  while (p[r] > half) ++r;
  const double tl = grid.t()[l] + grid.dt() * (half - p[l]) / (p[l + 1] - p[l]);
  const double tr = grid.t()[r - 1] + grid.dt() * (p[r - 1] - half) / (p[r - 1] - p[r]);
  return tr - tl;
}

TEST(PhysicsPulse, SechAndGaussianHaveTheirWidthPeakAndDelay) {
  const Grid grid(fine_grid());
  for (PulseShape shape : {PulseShape::sech, PulseShape::gaussian}) {
    PulseConfig p;
    p.shape = shape;
    p.peak_power = 2.5e3;
    p.fwhm = 120e-15;
    p.delay = 40 * grid.dt();  // on a sample, so the peak is sampled exactly
    const Field a = initial_field(p, grid);
    // Linear interpolation of the crossings: error ≈ dt²·|P''|/(8|P'|) at the half maximum,
    // ≈ 1e-4 of the FWHM here (dt/FWHM ≈ 5e-3).
    EXPECT_NEAR(measured_fwhm(a, grid), 120e-15, 1e-3 * 120e-15) << static_cast<int>(shape);
    const auto j0 = static_cast<std::size_t>(grid.size() / 2 + 40);
    EXPECT_NEAR(std::norm(a[j0]), 2.5e3, 1e-12 * 2.5e3);
    EXPECT_EQ(*std::max_element(a.begin(), a.end(), [](Complex x, Complex y) { return std::norm(x) < std::norm(y); }),
              a[j0]);
    // Energy: 2 P0 T0 (sech), √π P0 T0 (Gaussian); the sum over samples of a smooth, decayed
    // pulse is spectrally accurate.
    const double t0 = pulse_t0(p);
    const double expected = shape == PulseShape::sech ? 2 * 2.5e3 * t0 : std::sqrt(std::numbers::pi) * 2.5e3 * t0;
    EXPECT_NEAR(energy_of_field(a.data(), grid), expected, 1e-10 * expected);
  }
  PulseConfig p;
  EXPECT_NEAR(pulse_t0(p), 50e-15 / 1.7627, 1e-4 * 50e-15 / 1.7627);
  p.shape = PulseShape::gaussian;
  EXPECT_NEAR(pulse_t0(p), 50e-15 / 1.6651, 1e-4 * 50e-15 / 1.6651);
}

TEST(PhysicsPulse, ChirpKeepsTheIntensityAndBroadensTheSpectrum) {
  const Grid grid(fine_grid());
  PulseConfig p;
  p.shape = PulseShape::gaussian;
  p.fwhm = 100e-15;
  const Field plain = initial_field(p, grid);
  p.chirp = -3;
  const Field chirped = initial_field(p, grid);
  const double t0 = pulse_t0(p);
  for (std::size_t j = 0; j < plain.size(); j += 97) {
    ASSERT_NEAR(std::norm(chirped[j]), std::norm(plain[j]), 1e-12 * p.peak_power);
    if (std::norm(plain[j]) > 1e-3 * p.peak_power) {
      const double x = grid.t()[j] / t0;
      ASSERT_NEAR(std::remainder(std::arg(chirped[j]) - (3 * x * x / 2), 2 * std::numbers::pi), 0.0, 1e-9);
    }
  }
  // A chirped Gaussian's rms spectral width is √(1 + C²) times the unchirped one.
  auto rms_width = [&](const Field& a) {
    Field s(a.size());
    SpectralTransform(grid.size()).to_spectrum(a.data(), s.data());
    double m0 = 0, m2 = 0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      m0 += std::norm(s[k]);
      m2 += std::norm(s[k]) * grid.omega()[k] * grid.omega()[k];
    }
    return std::sqrt(m2 / m0);
  };
  EXPECT_NEAR(rms_width(chirped) / rms_width(plain), std::sqrt(10.0), 1e-9);
}

TEST(PhysicsPulse, SolitonOrderOfTheDudleyCase) {
  // docs/PROPAGATION.md §5.7: 50 fs sech at 10 kW, γ = 0.11 /W/m, β2 = −11.830 ps²/km: N ≈ 8.7.
  const Config c;
  EXPECT_NEAR(soliton_order(c.fibre, c.pulse), 8.65, 0.02);
  FibreConfig f = c.fibre;
  PulseConfig p = c.pulse;
  p.peak_power = std::abs(f.betas[0]) / (f.gamma * pulse_t0(p) * pulse_t0(p));  // N = 1
  EXPECT_NEAR(soliton_order(f, p), 1.0, 1e-14);
  f.betas = {};
  EXPECT_THROW(soliton_order(f, p), std::invalid_argument);
}

TEST(PhysicsPulse, UserSamplesAreInterpolatedAndZeroOutside) {
  const Grid grid(fine_grid());
  // A Gaussian sampled on 121 uneven times over ±1.2 ps: the spline error for a smooth
  // function on spacing h ≤ 22 fs is at most (5/384)h⁴ max|f⁽⁴⁾| = (5/384)h⁴·3/T0⁴ ≈ 9e-5 of
  // the amplitude with T0 = 100 fs (2.7e-3 for 30, 9e-4 for 10); tolerance twice that.
  PulseConfig p;
  p.shape = PulseShape::user;
  const double t0 = 100e-15;
  for (int i = 0; i <= 120; ++i) {
    const double u = -1 + 2.0 * i / 120;
    const double t = 1.2e-12 * (u + 0.1 * std::sin(std::numbers::pi * u) / std::numbers::pi);
    p.user_time.push_back(t);
    p.user_re.push_back(30 * std::exp(-t * t / (2 * t0 * t0)));
    p.user_im.push_back(-10 * std::exp(-t * t / (2 * t0 * t0)));
  }
  const Field a = initial_field(p, grid);
  for (std::size_t j = 0; j < a.size(); ++j) {
    const double t = grid.t()[j];
    if (t < p.user_time.front() || t > p.user_time.back()) {
      ASSERT_EQ(a[j], Complex(0, 0)) << "outside the samples";
    } else {
      const double g = std::exp(-t * t / (2 * t0 * t0));
      ASSERT_NEAR(a[j].real(), 30 * g, 5.4e-3) << t;
      ASSERT_NEAR(a[j].imag(), -10 * g, 1.8e-3) << t;
    }
  }
}

/// Expects initial_field to refuse `p` with a message containing `text`.
void expect_refused(const PulseConfig& p, const Grid& grid, const std::string& text) {
  try {
    (void)initial_field(p, grid);
    ADD_FAILURE() << "accepted a pulse that should fail with: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(PhysicsPulse, EveryValidationError) {
  const Grid grid(GridConfig{});  // 8192 points over 12.5 ps
  auto with = [](auto edit) {
    PulseConfig p;
    edit(p);
    return p;
  };
  expect_refused(with([](PulseConfig& p) { p.peak_power = -1; }), grid, "pulse.peak_power");
  expect_refused(with([](PulseConfig& p) { p.peak_power = NAN; }), grid, "pulse.peak_power");
  expect_refused(with([](PulseConfig& p) { p.fwhm = 0; }), grid, "pulse.fwhm");
  expect_refused(with([](PulseConfig& p) { p.chirp = INFINITY; }), grid, "pulse.chirp");
  expect_refused(with([](PulseConfig& p) { p.delay = 7e-12; }), grid, "pulse.delay");
  // Fields that do not fit: a 3 ps sech in a 12.5 ps window, a pulse near the edge.
  expect_refused(with([](PulseConfig& p) { p.fwhm = 3e-12; }), grid, "does not fit the time window");
  expect_refused(with([](PulseConfig& p) { p.delay = 6.1e-12; }), grid, "does not fit the time window");
  // User samples.
  auto user = [](PulseConfig& p, std::vector<double> t) {
    p.shape = PulseShape::user;
    p.user_time = t;
    p.user_re.assign(t.size(), 0.0);
    p.user_im.assign(t.size(), 0.0);
  };
  expect_refused(with([&](PulseConfig& p) {
                   user(p, {-1e-12, 0, 1e-12});
                   p.user_im.pop_back();
                 }),
                 grid, "equal lengths");
  expect_refused(with([&](PulseConfig& p) { user(p, {-1e-12, 1e-12}); }), grid, "at least 3");
  expect_refused(with([&](PulseConfig& p) { user(p, {-1e-12, 1e-12, 0}); }), grid, "strictly ascending");
  expect_refused(with([&](PulseConfig& p) {
                   user(p, {-1e-12, 0, 1e-12});
                   p.user_re[1] = NAN;
                 }),
                 grid, "not finite");
  expect_refused(with([&](PulseConfig& p) { user(p, {-1e-12, 0, 8e-12}); }), grid, "does not fit the time window");
  expect_refused(with([&](PulseConfig& p) {
                   user(p, {-6.2e-12, 0, 6.2e-12});
                   p.user_re = {1, 1, 1};  // flat: still large at the edges
                 }),
                 grid, "does not fit the time window");
  PulseConfig p;
  p.shape = PulseShape::user;
  EXPECT_THROW(pulse_t0(p), std::invalid_argument);
}

TEST(PhysicsPulse, ShotNoiseIsOnePhotonPerMode) {
  const Grid grid(GridConfig{2048, 4e-12, 835e-9});
  const auto n = static_cast<std::size_t>(grid.size());
  // Alone, every bin holds exactly one photon (ħω_k of energy).
  Field noise(n);
  add_shot_noise(noise, grid, 1);
  for (std::size_t k = 0; k < n; ++k) {
    const double photons =
        std::norm(noise[k]) * grid.dt() / static_cast<double>(n) / (kHbar * (grid.omega0() + grid.omega()[k]));
    ASSERT_NEAR(photons, 1.0, 1e-12) << "bin " << k;
  }
  EXPECT_NEAR(photon_number(noise.data(), grid), static_cast<double>(n), 1e-9 * static_cast<double>(n));
  // Over a weak pulse (tens of photons in its strongest bins), the noise adds one photon per mode
  // on average: the cross term 2Re(conj(P_k)N_k) has zero mean and standard deviation
  // √(2p_k) photons for a bin with p_k photons, so the mean over S seeds of bin k is
  // 1 ± √(2p_k/S). Check every bin against 5 standard deviations (plus rounding).
  PulseConfig p;
  p.fwhm = 200e-15;
  p.peak_power = 3e-4;  // ≈ 300 photons in all
  p.shot_noise = false;
  const Field pulse = initial_spectrum(p, grid);
  const int seeds = 400;
  std::vector<double> mean_added(n, 0.0);
  for (int s = 0; s < seeds; ++s) {
    Field with_noise = pulse;
    add_shot_noise(with_noise, grid, static_cast<std::uint64_t>(1000 + s));
    for (std::size_t k = 0; k < n; ++k) mean_added[k] += (std::norm(with_noise[k]) - std::norm(pulse[k])) / seeds;
  }
  double most = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double per_photon = kHbar * (grid.omega0() + grid.omega()[k]) * static_cast<double>(n) / grid.dt();
    const double pulse_photons = std::norm(pulse[k]) / per_photon;
    most = std::max(most, pulse_photons);
    ASSERT_NEAR(mean_added[k] / per_photon, 1.0, 5 * std::sqrt(2 * pulse_photons / seeds) + 1e-9) << "bin " << k;
  }
  EXPECT_GT(most, 10.0) << "the pulse must be strong enough for the cross term to matter";
}

TEST(PhysicsPulse, ShotNoiseIsDeterministicBySeed) {
  const Grid grid(GridConfig{1024, 2e-12, 835e-9});
  PulseConfig p;
  p.shot_noise = true;
  p.noise_seed = 42;
  const Field a = initial_spectrum(p, grid), b = initial_spectrum(p, grid);
  EXPECT_EQ(a, b);
  p.noise_seed = 43;
  const Field c = initial_spectrum(p, grid);
  std::size_t differing = 0;
  for (std::size_t k = 0; k < a.size(); ++k) differing += a[k] != c[k];
  EXPECT_EQ(differing, a.size()) << "another seed changes every bin";
  // The phases are uniform: |mean of e^{iφ}| over n bins is ~1/√n.
  Field noise(a.size());
  add_shot_noise(noise, grid, 7);
  Complex mean = 0;
  for (const Complex& v : noise) mean += v / std::abs(v) / static_cast<double>(noise.size());
  EXPECT_LT(std::abs(mean), 5 / std::sqrt(static_cast<double>(noise.size())));
  // Platform independence rests on std::mt19937_64, fully specified by the standard (its
  // 10000th output from the default seed is required to be 9981545732273789042), and on
  // uniform_from_bits, exact integer-to-double arithmetic.
  std::mt19937_64 rng;
  rng.discard(9999);
  EXPECT_EQ(rng(), 9981545732273789042ULL);
  EXPECT_EQ(uniform_from_bits(0), 0.0);
  EXPECT_EQ(uniform_from_bits(~std::uint64_t{0}), 1.0 - 0x1.0p-53);
  EXPECT_EQ(uniform_from_bits(std::uint64_t{1} << 63), 0.5);
  Field wrong(10);
  EXPECT_THROW(add_shot_noise(wrong, grid, 1), std::invalid_argument);
}

TEST(PhysicsPulse, WindowsTaperOnlyTheEdges) {
  const Grid grid(GridConfig{4096, 8e-12, 835e-9});
  const Windows none = make_windows({}, grid);
  EXPECT_TRUE(none.time.empty());
  EXPECT_TRUE(none.frequency.empty());
  const Windows w = make_windows({0.1, 0.2}, grid);
  ASSERT_EQ(w.time.size(), 4096u);
  ASSERT_EQ(w.frequency.size(), 4096u);
  const double half_t = 2048 * grid.dt(), half_w = 2048 * grid.domega();
  for (std::size_t j = 0; j < 4096; ++j) {
    const double t = std::abs(grid.t()[j]), dw = std::abs(grid.omega()[j]);
    if (t <= half_t - 0.2 * half_t) {
      ASSERT_EQ(w.time[j], 1.0) << j;
    }
    if (dw <= half_w - 0.4 * half_w) {
      ASSERT_EQ(w.frequency[j], 1.0) << j;
    }
    ASSERT_GT(w.time[j], 0.0);
    ASSERT_LE(w.time[j], 1.0);
  }
  // T = −X (index 0) is the very end of the axis: 2⁻⁶⁴; half-way into the taper: ½.
  EXPECT_NEAR(w.time[0], std::pow(2.0, -64), 1e-30);
  const auto mid = static_cast<std::size_t>(std::lround(0.1 * 2048));  // T = −X + E/2, E = 0.2X
  EXPECT_NEAR(w.time[mid], 0.5, 0.01);
  // Applied to a spectrum: a centred pulse is untouched, a field at the time edge is removed.
  SpectralTransform transform(grid.size());
  PulseConfig p;
  Field s = initial_spectrum(p, grid);
  const Field before = s;
  apply_windows(w, transform, s.data());
  double worst = 0, scale = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    worst = std::max(worst, std::abs(s[k] - before[k]));
    scale = std::max(scale, std::abs(before[k]));
  }
  EXPECT_LT(worst, 1e-12 * scale);
  Field edge(4096, Complex(0, 0));
  edge[3] = 1;  // a spike at T ≈ −X
  transform.to_spectrum(edge.data(), edge.data());
  apply_windows(make_windows({0.1, 0.0}, grid), transform, edge.data());
  EXPECT_LT(energy_of_spectrum(edge.data(), grid), 1e-30 * grid.dt());
  for (double bad : {-0.1, 0.6, static_cast<double>(NAN)}) {
    EXPECT_THROW(make_windows({bad, 0.0}, grid), std::invalid_argument);
    EXPECT_THROW(make_windows({0.0, bad}, grid), std::invalid_argument);
  }
  try {
    make_windows({0.0, 0.7}, grid);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("window.frequency_edge"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::prop
