// The linear operator L(ω) of make_physics: the Taylor path against the formula written out,
// the β(ω)-table path against the Taylor path (frame removal included), tabulated loss, the
// shock factor, and every validation error of the fibre configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lockstep/prop/physics.hpp"

namespace lockstep::prop {
namespace {

Config small_config() {
  Config c;
  c.grid.points = 256;
  c.grid.time_window = 2e-12;  // dt ≈ 7.8 fs
  return c;
}

/// β(Δω) − β0 − β1Δω of the Taylor coefficients, written with pow and factorials.
double taylor_direct(const std::vector<double>& betas, double dw) {
  double sum = 0;
  for (std::size_t j = 0; j < betas.size(); ++j)
    sum += betas[j] * std::pow(dw, static_cast<double>(j + 2)) / std::tgamma(static_cast<double>(j + 3));
  return sum;
}

TEST(PhysicsLinear, TaylorOperatorMatchesTheFormula) {
  Config c = small_config();
  c.fibre.loss = 0.37;
  const Grid grid(c.grid);
  const MemberPhysics p = make_physics(c, grid);
  ASSERT_EQ(p.points, grid.size());
  ASSERT_EQ(static_cast<std::int64_t>(p.linear.size()), grid.size());
  double scale = 0;
  for (double w : grid.omega()) scale = std::max(scale, std::abs(taylor_direct(c.fibre.betas, w)));
  for (std::size_t k = 0; k < p.linear.size(); ++k) {
    const double w = grid.omega()[k];
    // Horner-free sum against pow/tgamma: both are within a few ulp per term.
    EXPECT_NEAR(p.linear[k].imag(), taylor_direct(c.fibre.betas, w), 1e-13 * scale) << "k = " << k;
    EXPECT_DOUBLE_EQ(p.linear[k].real(), -0.37 / 2) << "k = " << k;
  }
  EXPECT_EQ(p.linear[0], Complex(-0.37 / 2, 0.0));  // Δω = 0: no phase
}

TEST(PhysicsLinear, BetaTableReproducesTheTaylorOperatorAndRemovesTheFrame) {
  Config c = small_config();
  const Grid grid(c.grid);
  const MemberPhysics taylor = make_physics(c, grid);

  // Full β(ω) of the same series plus a large β0 and β1 (the frame), tabulated on a grid 1.5×
  // wider than the simulation's so the natural spline's end effects stay outside it.
  const double beta0 = 7.5e6, beta1 = 4.9e-9;  // 1/m, s/m (silica-like near 835 nm)
  const double span = 1.5 * grid.domega() * static_cast<double>(grid.size() / 2);
  const int points = 2001;
  const double h = 2 * span / (points - 1);
  for (int i = 0; i < points; ++i) {
    const double dw = -span + h * i;
    c.fibre.beta_table_omega.push_back(grid.omega0() + dw);
    c.fibre.beta_table_beta.push_back(beta0 + beta1 * dw + taylor_direct(c.fibre.betas, dw));
  }
  const MemberPhysics table = make_physics(c, grid);

  // Interpolation error of a cubic spline: |s − β| ≤ (5/384) h⁴ max|β⁽⁴⁾| for values, and
  // (1/24) h³ max|β⁽⁴⁾| for the slope β1 at ω0, which the frame removal turns into an error
  // growing like |Δω|. Add the rounding of β0 ≈ 7.5e6 (≈ 1e-9 1/m per evaluation).
  double m4 = 0;
  for (double dw = -span; dw <= span; dw += h) {
    double d4 = 0;
    for (std::size_t j = 2; j < c.fibre.betas.size(); ++j)
      d4 += c.fibre.betas[j] * std::pow(dw, static_cast<double>(j - 2)) / std::tgamma(static_cast<double>(j - 1));
    m4 = std::max(m4, std::abs(d4));
  }
  const double max_dw = grid.domega() * static_cast<double>(grid.size() / 2);
  const double tol = 2 * ((5.0 / 384) * std::pow(h, 4) * m4 + std::pow(h, 3) * m4 / 24 * max_dw) + 1e-8;
  double worst = 0, scale = 0;
  for (std::size_t k = 0; k < taylor.linear.size(); ++k) {
    worst = std::max(worst, std::abs(table.linear[k] - taylor.linear[k]));
    scale = std::max(scale, std::abs(taylor.linear[k]));
  }
  EXPECT_LE(worst, tol) << "scale of L: " << scale;
  EXPECT_LT(tol, 1e-6 * scale) << "the bound itself must be a meaningful test";
  // Frame removal: no residual phase at ω0 and no residual group delay.
  EXPECT_NEAR(table.linear[0].imag(), 0.0, 1e-8);
  const double slope = (table.linear[1].imag() - table.linear[grid.size() - 1].imag()) / (2 * grid.domega());
  EXPECT_NEAR(slope, 0.0, 1e-6 * beta1);
}

TEST(PhysicsLinear, LossTableIsInterpolatedLinearly) {
  Config c = small_config();
  const Grid grid(c.grid);
  const double lo = grid.omega0() - 2 * grid.domega() * static_cast<double>(grid.size());
  const double hi = grid.omega0() + 2 * grid.domega() * static_cast<double>(grid.size());
  // α linear in ω: linear interpolation is exact (to rounding).
  auto alpha = [&](double w) { return 0.2 + 3e-15 * (w - lo); };
  c.fibre.loss_table_omega = {lo, grid.omega0(), hi};
  c.fibre.loss_table_alpha = {alpha(lo), alpha(grid.omega0()), alpha(hi)};
  const MemberPhysics p = make_physics(c, grid);
  for (std::size_t k = 0; k < p.linear.size(); ++k)
    EXPECT_NEAR(p.linear[k].real(), -alpha(grid.omega0() + grid.omega()[k]) / 2, 1e-14) << "k = " << k;
}

TEST(PhysicsLinear, ShockFactorAndNonlinearFactor) {
  Config c = small_config();
  c.fibre.gamma = 0.25;
  const Grid grid(c.grid);
  MemberPhysics p = make_physics(c, grid);
  for (std::size_t k = 0; k < p.shock.size(); ++k) {
    const double s = 1 + grid.omega()[k] / grid.omega0();
    EXPECT_DOUBLE_EQ(p.shock[k], s);
    EXPECT_EQ(p.nonlinear_factor[k], Complex(0, 0.25 * s));
  }
  c.fibre.self_steepening = false;
  p = make_physics(c, grid);
  for (std::size_t k = 0; k < p.shock.size(); ++k) {
    EXPECT_EQ(p.shock[k], 1.0);
    EXPECT_EQ(p.nonlinear_factor[k], Complex(0, 0.25));
  }
}

TEST(PhysicsLinear, RamanFractionFollowsTheModel) {
  Config c = small_config();
  const Grid grid(c.grid);
  c.fibre.raman = RamanModel::none;
  c.fibre.raman_fraction = 0.3;  // ignored without a model
  MemberPhysics p = make_physics(c, grid);
  EXPECT_EQ(p.raman_fraction, 0.0);
  EXPECT_FALSE(p.has_raman());
  EXPECT_TRUE(p.raman_spectrum.empty());
  c.fibre.raman = RamanModel::lin_agrawal;
  c.fibre.raman_fraction = default_raman_fraction(RamanModel::lin_agrawal);
  p = make_physics(c, grid);
  EXPECT_EQ(p.raman_fraction, 0.245);
  EXPECT_EQ(default_raman_fraction(RamanModel::blow_wood), 0.18);
  EXPECT_EQ(default_raman_fraction(RamanModel::hollenbeck_cantrell), 0.18);
  EXPECT_EQ(default_raman_fraction(RamanModel::none), 0.0);
}

/// Expects make_physics to refuse the configuration with a message naming `field`.
void expect_refused(const Config& c, const std::string& field) {
  const Grid grid(c.grid);
  try {
    (void)make_physics(c, grid);
    ADD_FAILURE() << "accepted a configuration with a bad " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(PhysicsLinear, EveryValidationErrorNamesItsField) {
  const Config base = small_config();
  const Grid grid(base.grid);
  const double w0 = grid.omega0(), wide = 4 * grid.domega() * static_cast<double>(grid.size());
  auto with = [&](auto edit) {
    Config c = base;
    edit(c);
    return c;
  };
  expect_refused(with([](Config& c) { c.fibre.length = -1; }), "fibre.length");
  expect_refused(with([](Config& c) { c.fibre.length = 0; }), "fibre.length");
  expect_refused(with([](Config& c) { c.fibre.length = NAN; }), "fibre.length");
  expect_refused(with([](Config& c) { c.fibre.betas[3] = INFINITY; }), "fibre.betas[3]");
  expect_refused(with([](Config& c) { c.fibre.gamma = NAN; }), "fibre.gamma");
  expect_refused(with([](Config& c) { c.fibre.loss = -0.1; }), "fibre.loss");
  expect_refused(with([](Config& c) { c.fibre.raman_fraction = 1.5; }), "fibre.raman_fraction");
  expect_refused(with([](Config& c) { c.fibre.raman_fraction = -0.01; }), "fibre.raman_fraction");
  expect_refused(with([](Config& c) { c.fibre.raman_tau1 = 0; }), "fibre.raman_tau1");
  expect_refused(with([](Config& c) { c.fibre.raman_tau2 = -3e-15; }), "fibre.raman_tau2");
  expect_refused(with([](Config& c) {
                   c.fibre.raman = RamanModel::lin_agrawal;
                   c.fibre.raman_fb = -0.1;
                 }),
                 "fibre.raman_fb");
  expect_refused(with([](Config& c) {
                   c.fibre.raman = RamanModel::lin_agrawal;
                   c.fibre.raman_taub = NAN;
                 }),
                 "fibre.raman_taub");
  // β tables.
  auto table = [&](Config& c, std::vector<double> omega) {
    c.fibre.beta_table_omega = omega;
    c.fibre.beta_table_beta.assign(omega.size(), 1.0);
  };
  expect_refused(with([&](Config& c) {
                   table(c, {w0 - wide, w0 - wide / 2, w0, w0 + wide});
                   c.fibre.beta_table_beta.pop_back();
                 }),
                 "fibre.beta_table_omega");
  expect_refused(with([&](Config& c) { table(c, {w0 - wide, w0, w0 + wide}); }), "fibre.beta_table_omega");
  expect_refused(with([&](Config& c) { table(c, {w0 - wide, w0, w0, w0 + wide}); }), "strictly ascending");
  expect_refused(with([&](Config& c) { table(c, {w0 - wide, w0 + wide / 2, w0, w0 + wide}); }), "strictly ascending");
  expect_refused(with([&](Config& c) { table(c, {w0 - wide, w0 - 1, w0, w0 + 1}); }), "the grid needs");
  expect_refused(with([&](Config& c) {
                   table(c, {w0 - wide, w0 - 1, w0, w0 + wide});
                   c.fibre.beta_table_beta[1] = NAN;
                 }),
                 "not finite");
  // Loss tables.
  expect_refused(with([&](Config& c) {
                   c.fibre.loss_table_omega = {w0 - wide, w0 + wide};
                   c.fibre.loss_table_alpha = {0.1, -0.1};
                 }),
                 "fibre.loss_table_alpha[1]");
  expect_refused(with([&](Config& c) {
                   c.fibre.loss_table_omega = {w0, w0 + wide};
                   c.fibre.loss_table_alpha = {0.1, 0.1};
                 }),
                 "fibre.loss_table_omega");
  expect_refused(with([&](Config& c) {
                   c.fibre.loss_table_omega = {w0 - wide};
                   c.fibre.loss_table_alpha = {0.1};
                 }),
                 "at least 2");
}

}  // namespace
}  // namespace lockstep::prop
