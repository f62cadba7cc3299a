// The CUDA engine's block-local evaluation of N (src/prop/cuda/block_nonlinear.hpp) run on the
// host: the same phases, threads emulated by std::threads and a std::barrier, against the
// plain FFTW reference nonlinear_reference. This checks its transforms (every mix of radices:
// n = 2^4 … 2^13), the packed real transform of the intensity and the Raman product; the
// device kernel runs exactly this code, with the block's n/8 threads.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/nonlinear.hpp"
#include "lockstep/prop/physics.hpp"
#include "src/prop/cuda/block_nonlinear.hpp"

namespace lp = lockstep::prop;
namespace lb = lockstep::prop::block;
using Complex = std::complex<double>;

namespace {

struct Case {
  std::int64_t points;
  lp::RamanModel raman;
  bool shock;
};

class BlockNonlinear : public ::testing::TestWithParam<Case> {};

template <class R>
std::vector<lb::Complex2<R>> to_pairs(const std::vector<Complex>& v) {
  std::vector<lb::Complex2<R>> out;
  for (const Complex& c : v) out.push_back({static_cast<R>(c.real()), static_cast<R>(c.imag())});
  return out;
}

template <class R>
std::vector<Complex> evaluate(const lp::MemberPhysics& p, const std::vector<Complex>& in) {
  const std::int64_t n = p.points;
  int log2n = 0;
  while ((std::int64_t{1} << log2n) < n) ++log2n;
  std::vector<Complex> tw;
  for (std::int64_t k = 0; k < n; ++k) tw.push_back(std::polar(1.0, -2 * M_PI * static_cast<double>(k) / static_cast<double>(n)));
  const auto twiddle = to_pairs<R>(tw), input = to_pairs<R>(in);
  const auto raman = to_pairs<R>(p.has_raman() ? p.raman_spectrum : std::vector<Complex>{});
  std::vector<R> gs(p.gamma_shock.begin(), p.gamma_shock.end());
  // Shared memory as the kernel lays it out (padded), poisoned: a value read before it is
  // written shows.
  const lb::Complex2<R> poison{std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN()};
  std::vector<lb::Complex2<R>> output(static_cast<std::size_t>(n), poison);
  std::vector<lb::Complex2<R>> shared(static_cast<std::size_t>(lb::shared_bytes<R>(n, true)) / sizeof(lb::Complex2<R>), poison);
  const double nd = static_cast<double>(n);
  lb::NonlinearBlock<R> block{gs.data(), p.has_raman() ? raman.data() : nullptr,
                              static_cast<R>((1 - p.raman_fraction) / (nd * nd * nd)),
                              static_cast<R>(p.raman_fraction / (nd * nd * nd * nd)), twiddle.data(), log2n,
                              shared.data(), shared.data() + n + n / 8};
  const int threads = static_cast<int>(n / lb::kValues);
  std::barrier sync(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      block.evaluate(
          t, [&](unsigned j) { return input[j]; }, [&](unsigned k, lb::Complex2<R> v) { output[k] = v; },
          [&] { sync.arrive_and_wait(); });
    });
  for (auto& th : pool) th.join();
  std::vector<Complex> out;
  for (const auto& c : output) out.emplace_back(c.x, c.y);
  return out;
}

TEST_P(BlockNonlinear, MatchesTheReference) {
  const Case c = GetParam();
  lp::Config config;
  config.grid.points = c.points;
  config.grid.time_window = 12.5e-12 * static_cast<double>(c.points) / 8192.0;
  config.fibre.raman = c.raman;
  config.fibre.raman_fraction = lp::default_raman_fraction(c.raman);
  config.fibre.self_steepening = c.shock;
  const lp::Grid grid(config.grid);
  const lp::MemberPhysics p = lp::make_physics(config, grid);
  // A random spectrum of the Dudley field's scale (|Ã| ~ n·√P0).
  std::mt19937_64 rng(static_cast<std::uint64_t>(c.points) * 7 + static_cast<std::uint64_t>(c.raman));
  std::normal_distribution<double> normal;
  std::vector<Complex> in;
  for (std::int64_t k = 0; k < c.points; ++k) in.emplace_back(100 * normal(rng), 100 * normal(rng));
  std::vector<Complex> expected(in.size());
  lp::nonlinear_reference(p, grid, in.data(), expected.data());
  double scale = 0;
  for (const Complex& e : expected) scale = std::max(scale, std::abs(e));
  const auto got = evaluate<double>(p, in);
  double worst = 0;
  for (std::size_t k = 0; k < in.size(); ++k) worst = std::max(worst, std::abs(got[k] - expected[k]));
  EXPECT_LT(worst, 1e-12 * scale);
  const auto single = evaluate<float>(p, in);
  double worst_single = 0;
  for (std::size_t k = 0; k < in.size(); ++k) worst_single = std::max(worst_single, std::abs(single[k] - expected[k]));
  EXPECT_LT(worst_single, 2e-5 * scale);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BlockNonlinear,
                         ::testing::Values(Case{16, lp::RamanModel::blow_wood, true},
                                           Case{32, lp::RamanModel::none, false},
                                           Case{64, lp::RamanModel::lin_agrawal, true},
                                           Case{128, lp::RamanModel::blow_wood, false},
                                           Case{256, lp::RamanModel::blow_wood, true},
                                           Case{2048, lp::RamanModel::none, true},
                                           Case{2048, lp::RamanModel::lin_agrawal, false},
                                           Case{4096, lp::RamanModel::hollenbeck_cantrell, true},
                                           Case{8192, lp::RamanModel::blow_wood, true},
                                           Case{8192, lp::RamanModel::hollenbeck_cantrell, true}));

TEST(BlockNonlinear, Fits) {
  EXPECT_TRUE(lb::fits<double>(8192, true, 227 * 1024));
  EXPECT_FALSE(lb::fits<float>(16384, false, 1 << 30));  // more than 1024 threads
  EXPECT_TRUE(lb::fits<float>(8192, true, 227 * 1024));
  EXPECT_FALSE(lb::fits<double>(8192, true, 210 * 1024));
  EXPECT_FALSE(lb::fits<double>(6000, false, 227 * 1024));
  EXPECT_FALSE(lb::fits<double>(8, false, 227 * 1024));
}

}  // namespace
