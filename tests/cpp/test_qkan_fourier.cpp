// The Fourier form of the raw-x circuit (src/qkan/fourier_math.hpp), in double, against an
// independent rotation chain: n(x) from the record, dn_z/dx from its slope coefficients, and the
// fold's virtual cotangents, which must carry an edge's batch sums to the same θ gradient.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "src/qkan/fourier_math.hpp"

namespace lockstep::qkan::detail {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

/// θ (L + 1 rows of two columns) and the chain's final Bloch vector at x, gate by gate.
struct Edge {
  Ansatz ansatz;
  int L;
  std::vector<double> theta;
  double th(int row, int col) const { return theta[row * 2 + col]; }

  std::array<double, 3> state(double x) const {
    const Schedule s = generic_schedule(ansatz);
    int axes[3], cols[3];
    const int np = prefix_gates(s, axes, cols);
    double n[3] = {1, 0, 0};
    for (int k = 0; k < np; ++k) bloch_rotate<double>(n, axes[k], th(0, cols[k]));
    for (int l = 0; l < L; ++l) {
      bloch_rotate<double>(n, s.data_axis, x + (s.offset_col >= 0 ? th(l + 1, s.offset_col) : 0.0));
      for (int k = 0; k < s.nconst; ++k) bloch_rotate<double>(n, s.const_axis[k], th(l + 1, s.const_col[k]));
    }
    return {n[0], n[1], n[2]};
  }

  /// The Fourier record (3 rows of 2L + 1) and dn_z/dx's coefficients (2L).
  void record(std::vector<double>& r, std::vector<double>& dz) const {
    std::vector<double> chain(3 + L * (2 + 2 * generic_schedule(ansatz).nconst));
    build_record<double>(
        ansatz, L, false, [&](int row, int col) { return th(row, col); }, [](int) { return 0.0; },
        [](int) { return 0.0; }, chain.data());
    r.assign(3 * fourier_width(L), 0.0);
    dz.assign(2 * L, 0.0);
    build_fourier_record<double>(ansatz, L, chain.data(), r.data(), dz.data());
  }
};

Edge random_edge(Ansatz a, int L, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> angle(-M_PI, M_PI);
  Edge e{a, L, std::vector<double>(2 * (L + 1))};
  for (double& t : e.theta) t = angle(rng);
  return e;
}

template <int L> void check_form(Ansatz a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> xs(-7.0, 7.0), unit(-1.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const Edge e = random_edge(a, L, rng);
    std::vector<double> r, dz;
    e.record(r, dz);
    constexpr int W = fourier_width(L);
    for (int t = 0; t < 20; ++t) {
      const double x = xs(rng);
      const Harmonics<L, double> h = harmonics<L>(std::cos(x), std::sin(x));
      const auto n = e.state(x);
      for (int m = 0; m < 3; ++m) EXPECT_NEAR(fourier_sum(r.data() + m * W, h), n[m], 1e-13) << "component " << m << " at x = " << x;
      double slope = 0;
      for (int k = 0; k < L; ++k) slope += dz[2 * k] * h.c[k] + dz[2 * k + 1] * h.s[k];
      const double step = 1e-5, fd = (e.state(x + step)[2] - e.state(x - step)[2]) / (2 * step);
      EXPECT_NEAR(slope, fd, 1e-8) << "dn_z/dx at x = " << x;
    }

    // The fold: virtual cotangents at the nodes reproduce the sums S_j = Σ_b gz_b φ_j(x_b)
    // and with them the θ gradient Σ_b gz_b ∂z(x_b)/∂θ (central differences of the chain).
    std::vector<double> rows(9), gz(rows.size());
    for (std::size_t b = 0; b < rows.size(); ++b) rows[b] = xs(rng), gz[b] = unit(rng);
    double S[W] = {};
    for (std::size_t b = 0; b < rows.size(); ++b) {
      const Harmonics<L, double> h = harmonics<L>(std::cos(rows[b]), std::sin(rows[b]));
      S[0] += gz[b];
      for (int k = 0; k < L; ++k) S[2 * k + 1] += gz[b] * h.c[k], S[2 * k + 2] += gz[b] * h.s[k];
    }
    std::vector<double> nodes(W), gq(W);
    double back[W] = {};
    for (int q = 0; q < W; ++q) {
      nodes[q] = kTwoPi * q / W;
      const Harmonics<L, double> hq = harmonics<L>(std::cos(nodes[q]), std::sin(nodes[q]));
      gq[q] = virtual_cotangent(S, hq);
      back[0] += gq[q];
      for (int k = 0; k < L; ++k) back[2 * k + 1] += gq[q] * hq.c[k], back[2 * k + 2] += gq[q] * hq.s[k];
    }
    for (int j = 0; j < W; ++j) EXPECT_NEAR(back[j], S[j], 1e-12) << "sum " << j;
    for (std::size_t p = 0; p < e.theta.size(); ++p) {
      auto loss = [&](const std::vector<double>& xv, const std::vector<double>& g, double dt) {
        Edge moved = e;
        moved.theta[p] += dt;
        double sum = 0;
        for (std::size_t b = 0; b < xv.size(); ++b) sum += g[b] * moved.state(xv[b])[2];
        return sum;
      };
      const double step = 1e-5;
      const double direct = (loss(rows, gz, step) - loss(rows, gz, -step)) / (2 * step);
      const double virt = (loss(nodes, gq, step) - loss(nodes, gq, -step)) / (2 * step);
      EXPECT_NEAR(virt, direct, 1e-8) << "theta entry " << p;
    }
  }
}

TEST(FourierForm, PzMatchesTheRotationChain) {
  check_form<1>(Ansatz::pz, 1);
  check_form<3>(Ansatz::pz, 2);
  check_form<5>(Ansatz::pz, 3);
}
TEST(FourierForm, MixMatchesTheRotationChain) {
  check_form<2>(Ansatz::mix, 4);
  check_form<3>(Ansatz::mix, 5);
}
TEST(FourierForm, RpzMatchesTheRotationChain) { check_form<3>(Ansatz::rpz, 6); }

TEST(FourierForm, AppliesToFullAngleDataGatesWithRawX) {
  EXPECT_TRUE(has_fourier_form(Ansatz::pz, false));
  EXPECT_TRUE(has_fourier_form(Ansatz::mix, false));
  EXPECT_FALSE(has_fourier_form(Ansatz::pz, true));
  EXPECT_FALSE(has_fourier_form(Ansatz::px, false));
  EXPECT_FALSE(has_fourier_form(Ansatz::real, false));
}

}  // namespace
}  // namespace lockstep::qkan::detail
