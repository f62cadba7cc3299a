// The Raman responses on the grid: normalisation H_R(0) = 1, causal layout, the discrete
// Blow–Wood and Lin–Agrawal spectra against their closed forms on a fine grid (which also fixes
// the sign of the Raman gain in the project's convention), Hollenbeck–Cantrell's gain peak.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "lockstep/prop/physics.hpp"

namespace lockstep::prop {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

MemberPhysics physics_for(RamanModel model, const Config& base = Config{}) {
  Config c = base;
  c.fibre.raman = model;
  c.fibre.raman_fraction = default_raman_fraction(model);
  return make_physics(c, Grid(c.grid));
}

/// A fine grid (dt = 0.5 fs) for comparisons with closed forms; the carrier at 250 nm keeps the
/// frequency window on positive absolute frequencies, which the grid demands.
Config fine_config() {
  Config c;
  c.grid.points = 1 << 14;
  c.grid.time_window = (1 << 14) * 0.5e-15;
  c.grid.center_wavelength = 250e-9;
  return c;
}

/// Closed-form Blow–Wood spectrum in the convention H(Δω) = ∫ h(t) e^{+iΔω t} dt (physics.hpp).
Complex blow_wood_spectrum(double tau1, double tau2, double w) {
  const double a = 1 / tau2, b = 1 / tau1, s = a * a + b * b;
  return s / Complex(s - w * w, -2 * a * w);
}

/// Closed form of the boson-peak part: ∫ (2τb − t)/τb² e^{−t/τb} e^{iωt} dt = (2τb σ − 1)/(τb σ)²,
/// σ = 1/τb − iω.
Complex boson_spectrum(double taub, double w) {
  const Complex sigma(1 / taub, -w);
  return (2 * taub * sigma - 1.0) / ((taub * sigma) * (taub * sigma));
}

TEST(PhysicsRaman, EveryModelIsNormalisedAndCausal) {
  for (RamanModel model : {RamanModel::blow_wood, RamanModel::lin_agrawal, RamanModel::hollenbeck_cantrell}) {
    const MemberPhysics p = physics_for(model);
    ASSERT_TRUE(p.has_raman());
    const auto n = static_cast<std::size_t>(p.points);
    ASSERT_EQ(p.raman_time.size(), n);
    ASSERT_EQ(p.raman_spectrum.size(), n);
    // H_R(0) is the sum of the n/2 weights: 1 up to the rounding of that sum.
    EXPECT_NEAR(p.raman_spectrum[0].real(), 1.0, 1e-13) << static_cast<int>(model);
    EXPECT_NEAR(p.raman_spectrum[0].imag(), 0.0, 1e-15) << static_cast<int>(model);
    for (std::size_t m = n / 2; m < n; ++m) ASSERT_EQ(p.raman_time[m], 0.0) << "negative lag " << m;
    // The response spreads over many samples (dt ≈ 1.5 fs; it is not a delta) and decays
    // within the window.
    EXPECT_LT(*std::max_element(p.raman_time.begin(), p.raman_time.end()), 0.2);
    EXPECT_LT(std::abs(p.raman_time[n / 2 - 1]), 1e-20);
  }
}

TEST(PhysicsRaman, BlowWoodMatchesItsClosedFormAndGainsToTheRed) {
  const Config c = fine_config();
  const Grid grid(c.grid);
  const MemberPhysics p = physics_for(RamanModel::blow_wood, c);
  const double tau1 = c.fibre.raman_tau1, tau2 = c.fibre.raman_tau2;
  // Error of the sampled transform (Poisson summation): h is continuous with h(0) = 0 but its
  // slope jumps from 0 to h'(0) = a² + b², so the aliases H(Δω + 2πj/dt) ≈ −(a²+b²)dt²/(2πj)²
  // add up to ε = (a² + b²)dt²/12 ≈ 1.6e-4; the unit-sum normalisation turns that into an
  // error ≈ ε|1 − H| ≤ 3ε over the band (|H| ≤ 1.6).
  const double a = 1 / tau2, b = 1 / tau1;
  const double eps = (a * a + b * b) * grid.dt() * grid.dt() / 12;
  double worst = 0;
  for (std::size_t k = 1; k < static_cast<std::size_t>(grid.size()); ++k) {
    const double w = grid.omega()[k];
    if (std::abs(w) > kTwoPi * 60e12) continue;  // the Raman band and well beyond
    const Complex exact = blow_wood_spectrum(tau1, tau2, w);
    worst = std::max(worst, std::abs(p.raman_spectrum[k] - exact));
    // The sign: Im H_R > 0 above the carrier, < 0 below (gain on the red side, physics.hpp).
    if (w > 0) {
      ASSERT_GT(p.raman_spectrum[k].imag(), 0.0) << "Δω = " << w;
    } else {
      ASSERT_LT(p.raman_spectrum[k].imag(), 0.0) << "Δω = " << w;
    }
  }
  EXPECT_LT(worst, 3 * eps);
  EXPECT_GT(worst, 0.05 * eps) << "the error estimate should describe the actual error";
  // The closed form's own sign, at the gain peak Δω ≈ 1/τ1.
  EXPECT_GT(blow_wood_spectrum(tau1, tau2, 1 / tau1).imag(), 1.0);
}

TEST(PhysicsRaman, LinAgrawalMatchesItsClosedForm) {
  const Config c = fine_config();
  const Grid grid(c.grid);
  const MemberPhysics p = physics_for(RamanModel::lin_agrawal, c);
  const double fb = c.fibre.raman_fb, taub = c.fibre.raman_taub;
  // As for Blow–Wood with the slope jump (1−f_b)(a²+b²) − 3f_b/τb² (< a² + b²); the boson part
  // jumps at t = 0 (h_b(0) = 2/τb), which the trapezoidal weight at the lag 0 handles to
  // second order (the ±j aliases of that jump cancel pairwise).
  const double a = 1 / c.fibre.raman_tau2, b = 1 / c.fibre.raman_tau1;
  const double eps = (a * a + b * b) * grid.dt() * grid.dt() / 12;
  double worst = 0;
  for (std::size_t k = 1; k < static_cast<std::size_t>(grid.size()); ++k) {
    const double w = grid.omega()[k];
    if (std::abs(w) > kTwoPi * 60e12) continue;
    const Complex exact =
        (1 - fb) * blow_wood_spectrum(c.fibre.raman_tau1, c.fibre.raman_tau2, w) + fb * boson_spectrum(taub, w);
    worst = std::max(worst, std::abs(p.raman_spectrum[k] - exact));
  }
  EXPECT_LT(worst, 3 * eps);
  // The boson peak raises the low-frequency gain above Blow–Wood's: at 2 THz, Im H_LA > Im H_BW.
  const double w2 = kTwoPi * 2e12;
  const auto k2 = static_cast<std::size_t>(std::lround(w2 / grid.domega()));
  const MemberPhysics bw = physics_for(RamanModel::blow_wood, c);
  EXPECT_GT(p.raman_spectrum[k2].imag(), 1.2 * bw.raman_spectrum[k2].imag());
}

TEST(PhysicsRaman, HollenbeckCantrellGainPeaksNear13THz) {
  const Config c = fine_config();
  const Grid grid(c.grid);
  const MemberPhysics p = physics_for(RamanModel::hollenbeck_cantrell, c);
  // Silica's Raman gain peaks near 440 cm⁻¹ (13.2 THz); the 13-mode fit reproduces that.
  double best = 0, where = 0;
  for (std::size_t k = 1; k < static_cast<std::size_t>(grid.size()); ++k) {
    const double w = grid.omega()[k];
    if (w <= 0 || w > kTwoPi * 60e12) continue;
    EXPECT_GT(p.raman_spectrum[k].imag(), 0.0) << "gain to the red at Δω = " << w;
    if (p.raman_spectrum[k].imag() > best) best = p.raman_spectrum[k].imag(), where = w;
  }
  EXPECT_GT(where / kTwoPi, 12.5e12);
  EXPECT_LT(where / kTwoPi, 14.5e12);
  // h(t) itself: causal, zero at t = 0; the narrowest mode (497 cm⁻¹, Lorentzian 8.17 cm⁻¹,
  // Gaussian 24.5 cm⁻¹) rings for picoseconds, and everything has decayed by 10 ps.
  FibreConfig f;
  f.raman = RamanModel::hollenbeck_cantrell;
  EXPECT_EQ(raman_response(f, -1e-15), 0.0);
  EXPECT_EQ(raman_response(f, 0.0), 0.0);
  EXPECT_GT(raman_response(f, 10e-15), 0.0);
  EXPECT_LT(std::abs(raman_response(f, 10e-12)), 1e-6 * std::abs(raman_response(f, 10e-15)));
}

}  // namespace
}  // namespace lockstep::prop
