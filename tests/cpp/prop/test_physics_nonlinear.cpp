// The nonlinear operator: the reference against N written out by hand (direct DFT with the
// convention's sign, explicit circular convolution in time), the batch against the reference
// for mixed physics and any member count, the conservation laws that hold exactly on the grid,
// and the batch's validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "lockstep/prop/nonlinear.hpp"

namespace lockstep::prop {
namespace {

using Spectrum = std::vector<Complex>;

Config config_with(std::int64_t points, double window, RamanModel raman, bool shock, double gamma) {
  Config c;
  c.grid.points = points;
  c.grid.time_window = window;
  c.fibre.raman = raman;
  c.fibre.raman_fraction = default_raman_fraction(raman);
  c.fibre.self_steepening = shock;
  c.fibre.gamma = gamma;
  return c;
}

/// Random spectrum with normal real and imaginary parts of standard deviation `scale`.
Spectrum random_spectrum(std::int64_t n, std::mt19937_64& rng, double scale) {
  std::normal_distribution<double> normal(0.0, scale);
  Spectrum s(static_cast<std::size_t>(n));
  for (Complex& v : s) v = Complex(normal(rng), normal(rng));
  return s;
}

/// Ã_k = Σ_j A_j e^{+2πi jk/n} (grid.hpp's convention: FFTW_BACKWARD), directly.
Spectrum direct_dft(const Spectrum& a, int sign) {
  const std::size_t n = a.size();
  Spectrum out(n);
  for (std::size_t k = 0; k < n; ++k) {
    Complex sum = 0;
    for (std::size_t j = 0; j < n; ++j)
      sum += a[j] *
             std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n));
    out[k] = sum;
  }
  return out;
}

double max_abs(const Spectrum& s) {
  double m = 0;
  for (const Complex& v : s) m = std::max(m, std::abs(v));
  return m;
}

/// N written out: A by the inverse DFT, the Raman convolution as an explicit circular sum over
/// the lag weights, the product, the forward DFT and the spectral factor.
Spectrum by_hand(const MemberPhysics& p, const Spectrum& in) {
  const std::size_t n = in.size();
  Spectrum a = direct_dft(in, -1);
  for (Complex& v : a) v /= static_cast<double>(n);
  std::vector<double> intensity(n);
  for (std::size_t j = 0; j < n; ++j) intensity[j] = std::norm(a[j]);
  Spectrum product(n);
  for (std::size_t j = 0; j < n; ++j) {
    double delayed = 0;
    if (p.has_raman())
      for (std::size_t m = 0; m < n; ++m) delayed += p.raman_time[m] * intensity[(j + n - m) % n];
    product[j] = a[j] * ((1 - p.raman_fraction) * intensity[j] + p.raman_fraction * delayed);
  }
  Spectrum out = direct_dft(product, +1);
  for (std::size_t k = 0; k < n; ++k) out[k] *= Complex(0, p.gamma * p.shock[k]);
  return out;
}

TEST(PhysicsNonlinear, ReferenceEqualsTheOperatorWrittenOut) {
  std::mt19937_64 rng(20261203);
  for (RamanModel raman : {RamanModel::none, RamanModel::blow_wood, RamanModel::hollenbeck_cantrell}) {
    for (bool shock : {false, true}) {
      // 64 points over 0.5 ps: dt ≈ 7.8 fs, coarse but a valid grid for the identity checked.
      const Config c = config_with(64, 0.5e-12, raman, shock, 0.11);
      const Grid grid(c.grid);
      const MemberPhysics p = make_physics(c, grid);
      const Spectrum in = random_spectrum(grid.size(), rng, 30.0);
      Spectrum got(in.size());
      nonlinear_reference(p, grid, in.data(), got.data());
      const Spectrum want = by_hand(p, in);
      // O(n²) sums of products: rounding ≈ n·ε relative to the largest value.
      for (std::size_t k = 0; k < in.size(); ++k)
        ASSERT_NEAR(std::abs(got[k] - want[k]), 0.0, 1e-12 * max_abs(want))
            << "raman " << static_cast<int>(raman) << " shock " << shock << " k " << k;
    }
  }
}

TEST(PhysicsNonlinear, WithoutRamanItIsIGammaTimesTheKerrTerm) {
  // The plain Kerr case checked separately: N = iγ F{|A|²A} with F the e^{+i} sum.
  std::mt19937_64 rng(7);
  const Config c = config_with(32, 0.5e-12, RamanModel::none, false, 0.5);
  const Grid grid(c.grid);
  const MemberPhysics p = make_physics(c, grid);
  const Spectrum in = random_spectrum(32, rng, 10.0);
  Spectrum a = direct_dft(in, -1), kerr(32);
  for (std::size_t j = 0; j < 32; ++j) kerr[j] = std::norm(a[j] / 32.0) * a[j] / 32.0;
  Spectrum want = direct_dft(kerr, +1);
  for (Complex& v : want) v *= Complex(0, 0.5);
  NonlinearBatch batch(grid, 1, 1);
  const MemberPhysics* members[] = {&p};
  Spectrum got(32);
  batch.evaluate(members, in.data(), got.data());
  for (std::size_t k = 0; k < 32; ++k) EXPECT_NEAR(std::abs(got[k] - want[k]), 0.0, 1e-12 * max_abs(want));
}

/// Mixed physics of a parameter scan: Raman models, shock on/off, γ.
std::vector<MemberPhysics> mixed_physics(std::int64_t points, double window) {
  std::vector<MemberPhysics> out;
  out.push_back(make_physics(config_with(points, window, RamanModel::blow_wood, true, 0.11), Grid({points, window})));
  out.push_back(make_physics(config_with(points, window, RamanModel::none, false, 0.02), Grid({points, window})));
  out.push_back(make_physics(config_with(points, window, RamanModel::lin_agrawal, true, 1.3), Grid({points, window})));
  out.push_back(
      make_physics(config_with(points, window, RamanModel::hollenbeck_cantrell, false, 0.11), Grid({points, window})));
  out.push_back(make_physics(config_with(points, window, RamanModel::none, true, 0.11), Grid({points, window})));
  return out;
}

void expect_batch_matches_reference(std::int64_t count, std::int64_t capacity, int threads, std::size_t offset,
                                    PlanRigor rigor = PlanRigor::measure) {
  const std::int64_t n = 1024;
  const double window = 2e-12;
  const Grid grid({n, window});
  const std::vector<MemberPhysics> kinds = mixed_physics(n, window);
  std::vector<const MemberPhysics*> members;
  for (std::int64_t m = 0; m < count; ++m) members.push_back(&kinds[static_cast<std::size_t>(m * 3 % 5)]);
  std::mt19937_64 rng(static_cast<std::uint64_t>(1000 * count + threads));
  // Rows laid out contiguously, `offset` values into the buffers (an offset changes the
  // alignment the batch sees, so both of its input paths run).
  Spectrum in(offset + static_cast<std::size_t>(count * n)), out(in.size());
  for (std::int64_t m = 0; m < count; ++m) {
    const Spectrum row = random_spectrum(n, rng, 50.0 * static_cast<double>(m + 1));
    std::copy(row.begin(), row.end(), in.begin() + static_cast<std::ptrdiff_t>(offset + m * n));
  }
  NonlinearBatch batch(grid, capacity, threads, rigor);
  batch.evaluate(members, in.data() + offset, out.data() + offset);
  for (std::int64_t m = 0; m < count; ++m) {
    Spectrum want(static_cast<std::size_t>(n));
    nonlinear_reference(*members[static_cast<std::size_t>(m)], grid, in.data() + offset + m * n, want.data());
    const double scale = max_abs(want);
    double worst = 0;
    for (std::int64_t k = 0; k < n; ++k)
      worst = std::max(worst,
                       std::abs(out[offset + static_cast<std::size_t>(m * n + k)] - want[static_cast<std::size_t>(k)]));
    // Same transforms in a different order of scaling: a few ulp of FFT rounding (≈ log2 n · ε).
    EXPECT_LE(worst, 1e-12 * scale) << "member " << m << " of " << count << ", threads " << threads;
  }
}

TEST(PhysicsNonlinear, BatchEqualsReferenceForMixedPhysics) {
  for (int threads : {1, 2}) {
    expect_batch_matches_reference(1, 1, threads, 0);
    expect_batch_matches_reference(3, 3, threads, 0);
    expect_batch_matches_reference(16, 16, threads, 0);
  }
  expect_batch_matches_reference(3, 16, 2, 0);  // a subset of the capacity
  expect_batch_matches_reference(3, 3, 2, 1);   // rows shifted by one value
  expect_batch_matches_reference(16, 16, 2, 0, PlanRigor::estimate);
}

TEST(PhysicsNonlinear, RepeatedEvaluationIsDeterministic) {
  const Grid grid({512, 1e-12});
  const std::vector<MemberPhysics> kinds = mixed_physics(512, 1e-12);
  std::vector<const MemberPhysics*> members{&kinds[0], &kinds[2], &kinds[0], &kinds[3]};
  std::mt19937_64 rng(3);
  Spectrum in(4 * 512);
  for (Complex& v : in) v = Complex(std::normal_distribution<double>(0, 20)(rng), 0.5);
  Spectrum first(in.size()), second(in.size());
  NonlinearBatch batch(grid, 4, 2, PlanRigor::estimate);
  batch.evaluate(members, in.data(), first.data());
  batch.evaluate(members, in.data(), second.data());
  EXPECT_EQ(first, second);
  // In place (out = in): the same values.
  Spectrum in_place = in;
  batch.evaluate(members, in_place.data(), in_place.data());
  EXPECT_EQ(in_place, first);
  EXPECT_EQ(batch.ffts_per_evaluation(kinds[0]), 4);
  EXPECT_EQ(batch.ffts_per_evaluation(kinds[1]), 2);
}

/// Re Σ_k conj(Ã_k) N_k w_k relative to Σ_k |Ã_k||N_k| w_k.
double relative_rate(const Spectrum& a, const Spectrum& n, const std::vector<double>& weight) {
  double re = 0, size = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    re += (std::conj(a[k]) * n[k]).real() * weight[k];
    size += std::abs(a[k]) * std::abs(n[k]) * weight[k];
  }
  return re / size;
}

TEST(PhysicsNonlinear, DiscreteConservationLaws) {
  // By Parseval, Σ_k conj(Ã_k) F{g}_k = n Σ_j conj(A_j) g_j. With g = A·R and R real
  // ((1−f_R)|A|² + f_R h_R ⊛ |A|², a real circular convolution), that is n Σ_j |A_j|² R_j,
  // real, so:
  //  - without shock, N = iγ F{g}: Re Σ conj(Ã) N = 0 (energy), with and without Raman;
  //  - with shock, N_k = iγ (ω_k/ω0) F{g}_k: Re Σ conj(Ã_k) N_k / ω_k = 0 (photon number),
  //    with and without Raman.
  // Both hold to rounding on the grid; the energy rate with shock does not vanish.
  const std::int64_t n = 2048;
  const double window = 4e-12;
  const Grid grid({n, window});
  std::vector<double> ones(static_cast<std::size_t>(n), 1.0), per_photon(ones.size());
  for (std::size_t k = 0; k < ones.size(); ++k) per_photon[k] = 1 / (grid.omega0() + grid.omega()[k]);
  std::mt19937_64 rng(11);
  for (RamanModel raman : {RamanModel::none, RamanModel::blow_wood}) {
    const MemberPhysics plain = make_physics(config_with(n, window, raman, false, 0.11), grid);
    const MemberPhysics shock = make_physics(config_with(n, window, raman, true, 0.11), grid);
    // A chirped, off-centre pulse in the spectrum of random phases: no symmetry helps.
    const Spectrum in = random_spectrum(n, rng, 40.0);
    Spectrum np(in.size()), ns(in.size());
    const MemberPhysics* members[] = {&plain, &shock};
    Spectrum both_in(2 * in.size()), both_out(2 * in.size());
    std::copy(in.begin(), in.end(), both_in.begin());
    std::copy(in.begin(), in.end(), both_in.begin() + n);
    NonlinearBatch batch(grid, 2, 1, PlanRigor::estimate);
    batch.evaluate(members, both_in.data(), both_out.data());
    std::copy(both_out.begin(), both_out.begin() + n, np.begin());
    std::copy(both_out.begin() + n, both_out.end(), ns.begin());
    EXPECT_LT(std::abs(relative_rate(in, np, ones)), 1e-13) << "energy, raman " << static_cast<int>(raman);
    EXPECT_LT(std::abs(relative_rate(in, ns, per_photon)), 1e-13) << "photons, raman " << static_cast<int>(raman);
    EXPECT_GT(std::abs(relative_rate(in, ns, ones)), 1e-6) << "energy is not conserved with shock";
  }
}

TEST(PhysicsNonlinear, BatchValidation) {
  const Grid grid({256, 1e-12});
  const Grid other({512, 1e-12});
  EXPECT_THROW(NonlinearBatch(grid, 0), std::invalid_argument);
  NonlinearBatch batch(grid, 2, 1, PlanRigor::estimate);
  EXPECT_EQ(batch.capacity(), 2);
  EXPECT_EQ(batch.points(), 256);
  Config c;
  c.grid = {256, 1e-12};
  const MemberPhysics p = make_physics(c, grid);
  c.grid = {512, 1e-12};
  const MemberPhysics wrong = make_physics(c, other);
  Spectrum in(3 * 512), out(in.size());
  const MemberPhysics* three[] = {&p, &p, &p};
  EXPECT_THROW(batch.evaluate(three, in.data(), out.data()), std::invalid_argument);
  const MemberPhysics* null_member[] = {&p, nullptr};
  EXPECT_THROW(batch.evaluate(null_member, in.data(), out.data()), std::invalid_argument);
  const MemberPhysics* wrong_size[] = {&wrong};
  EXPECT_THROW(batch.evaluate(wrong_size, in.data(), out.data()), std::invalid_argument);
  EXPECT_THROW(nonlinear_reference(wrong, grid, in.data(), out.data()), std::invalid_argument);
  // An empty batch is a no-op.
  batch.evaluate({}, in.data(), out.data());
}

}  // namespace
}  // namespace lockstep::prop
