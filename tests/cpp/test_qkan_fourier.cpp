// The Fourier form of the raw-x circuit (src/qkan/fourier_math.hpp), which the contracted
// CUDA forward evaluates, in double against an independent rotation chain, gate by gate.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "src/qkan/fourier_math.hpp"

namespace lockstep::qkan::detail {
namespace {

/// θ (L + 1 rows of two columns) and the chain's final Bloch vector at x.
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

  /// The Fourier record: 3 rows of 2L + 1 coefficients.
  std::vector<double> record() const {
    std::vector<double> chain(edge_record_size(ansatz, L));
    build_record<double>(
        ansatz, L, false, [&](int row, int col) { return th(row, col); }, [](int) { return 0.0; },
        [](int) { return 0.0; }, chain.data());
    std::vector<double> r(fourier_record_size(L), 0.0);
    build_fourier_record<double>(ansatz, L, chain.data(), r.data());
    return r;
  }
};

template <int L> void check_form(Ansatz a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(-M_PI, M_PI), xs(-7.0, 7.0);
  for (int trial = 0; trial < 5; ++trial) {
    Edge e{a, L, std::vector<double>(2 * (L + 1))};
    for (double& t : e.theta) t = angle(rng);
    const std::vector<double> r = e.record();
    constexpr int W = fourier_width(L);
    for (int t = 0; t < 20; ++t) {
      const double x = t == 0 ? 0.0 : xs(rng);
      const Harmonics<L, double> h = harmonics<L>(std::cos(x), std::sin(x));
      const auto n = e.state(x);
      for (int m = 0; m < 3; ++m)
        EXPECT_NEAR(fourier_sum(r.data() + m * W, h), n[m], 1e-13) << "component " << m << " at x = " << x;
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
  EXPECT_TRUE(has_fourier_form(Ansatz::rpz, false));
  EXPECT_TRUE(has_fourier_form(Ansatz::mix, false));
  EXPECT_FALSE(has_fourier_form(Ansatz::pz, true));
  EXPECT_FALSE(has_fourier_form(Ansatz::px, false));
  EXPECT_FALSE(has_fourier_form(Ansatz::real, false));
}

}  // namespace
}  // namespace lockstep::qkan::detail
