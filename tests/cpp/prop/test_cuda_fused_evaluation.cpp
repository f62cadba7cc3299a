// The CUDA engine's fused evaluation of N (src/prop/cuda/fused_evaluation.cu) against the cuFFT
// path's launchers that it replaces (label gpu): fresh random stage terms, exponentials, Raman
// responses, γs(ω) and coefficients, two member groups; every supported grid, float32 and
// float64, with and without Raman. The stage input it writes, N and k = D·N must agree. The
// fused measures likewise against the cuFFT path's transform and measures kernel.
#include <cuda_runtime.h>
#include <cufft.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/prop/cuda/fft_plan.hpp"
#include "src/prop/cuda/launch.hpp"

namespace cuda = lockstep::prop::cuda;

namespace {

// A failed CUDA call ends the test (GoogleTest reports the exception), as cuda::Fft's do.
void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A device array filled from / read back to the host.
template <class T> struct Device {
  T* p = nullptr;
  std::size_t size = 0;
  explicit Device(std::size_t n) : size(n) { ok(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc"); }
  explicit Device(const std::vector<T>& host) : Device(host.size()) {
    ok(cudaMemcpy(p, host.data(), size * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() { cudaFree(p); }
  std::vector<T> read() const {
    std::vector<T> host(size);
    ok(cudaMemcpy(host.data(), p, size * sizeof(T), cudaMemcpyDeviceToHost), "read back");
    return host;
  }
};

// Largest relative L2 difference of member rows of n values.
template <class Cx> double worst_member_difference(const std::vector<Cx>& a, const std::vector<Cx>& b, std::int64_t n) {
  double worst = 0;
  const auto points = static_cast<std::size_t>(n);
  for (std::size_t row = 0; row * points < a.size(); ++row) {
    double d = 0, s = 0;
    for (std::size_t k = 0; k < points; ++k) {
      const Cx u = a[row * points + k], v = b[row * points + k];
      d += std::pow(double(u.x) - v.x, 2) + std::pow(double(u.y) - v.y, 2);
      s += double(v.x) * v.x + double(v.y) * v.y;
    }
    worst = std::max(worst, std::sqrt(d / s));
  }
  return worst;
}

template <class R> void compare(std::int64_t n, bool raman) {
  using Cx = cuda::C<R>;
  if (!cuda::fused_evaluation_supported<R>(n))
    GTEST_SKIP() << "this build has no fused evaluation of N for " << n << " points";
  constexpr std::int64_t members = 5, groups = 2;
  const std::int64_t total = members * n, half = n / 2 + 1;
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  auto complex_rows = [&](std::int64_t count, double scale) {
    std::vector<Cx> v(static_cast<std::size_t>(count));
    for (Cx& c : v) c = Cx{R(scale * normal(random)), R(scale * normal(random))};
    return v;
  };
  auto phases = [&](std::int64_t count) {  // unit-modulus rows, as e^{L·x} of a lossless fibre
    std::vector<Cx> v(static_cast<std::size_t>(count));
    for (Cx& c : v) {
      const double phi = 3.0 * normal(random);
      c = Cx{R(std::cos(phi)), R(std::sin(phi))};
    }
    return v;
  };
  auto reals = [&](std::int64_t count, double mean, double spread) {
    std::vector<R> v(static_cast<std::size_t>(count));
    for (R& x : v) x = R(mean + spread * normal(random));
    return v;
  };
  // Spectra of size ~1/√n per point, so that a = n·A is of order one.
  const double amplitude = 1.0 / std::sqrt(static_cast<double>(n));
  const Device<Cx> y(complex_rows(total, amplitude)), k1(complex_rows(total, amplitude)),
      k2(complex_rows(total, amplitude));
  const Device<Cx> frame_exponential(phases(groups * n)), k_exponential(phases(groups * n));
  const Device<Cx> response(complex_rows(groups * half, 1.0 / static_cast<double>(n)));
  const Device<R> gamma_shock(reals(groups * n, 1.0, 0.1)), kerr(reals(members, 0.8, 0.05)),
      raman_coefficient(reals(members, 0.2, 0.05));
  std::vector<int> group_host(members);
  for (std::int64_t m = 0; m < members; ++m) group_host[static_cast<std::size_t>(m)] = static_cast<int>(m % groups);
  const Device<int> group(group_host);
  const Device<double> step(std::vector<double>{0.3});

  // D ⊙ (y + h·0.5·k1) + h·0.25·k2, D of the member's group
  cuda::Combination<R> input;
  input.frame_y0 = y.p;
  input.frames = 1;
  input.frame[0] = k1.p;
  input.frame_weight[0] = R(0.5);
  input.directs = 1;
  input.direct[0] = k2.p;
  input.direct_weight[0] = R(0.25);
  input.step = step.p;
  input.exponential = frame_exponential.p;
  input.group_stride = n;

  Device<Cx> in_ref(total), n_ref(total), k_ref(total), in_fused(total), n_fused(total), k_fused(total);
  auto output = [&](Device<Cx>& in, Device<Cx>& nn, Device<Cx>& kk) {
    cuda::StageOutput<R> out;
    out.input = in.p;
    out.n = nn.p;
    out.k = kk.p;
    out.k_exponential = k_exponential.p;
    out.group_stride = n;
    return out;
  };
  const cudaStream_t stream = nullptr;
  const R* raman_coefficients = raman_coefficient.p;

  // The cuFFT path, as CudaEngine::evaluate runs it.
  {
    Device<Cx> time(total);
    Device<R> intensity(total);
    Device<Cx> spectrum(members * half);
    const cuda::FftPlan c2c(cuda::Fft<R>::c2c, n, members, stream), r2c(cuda::Fft<R>::r2c, n, members, stream),
        c2r(cuda::Fft<R>::c2r, n, members, stream);
    cuda::combine<R>(input, group.p, in_ref.p, n, members, stream);
    cuda::Fft<R>::complex(c2c.get(), in_ref.p, time.p, CUFFT_FORWARD);
    const R* r = nullptr;
    if (raman) {
      cuda::intensity<R>(time.p, intensity.p, n, members, stream);
      cuda::Fft<R>::forward_real(r2c.get(), intensity.p, spectrum.p);
      cuda::raman_product<R>(spectrum.p, response.p, group.p, half, members, stream);
      cuda::Fft<R>::inverse_real(c2r.get(), spectrum.p, intensity.p);
      r = intensity.p;
    }
    cuda::kerr_raman<R>(time.p, r, kerr.p, raman_coefficients, n, members, stream);
    cuda::Fft<R>::complex(c2c.get(), time.p, time.p, CUFFT_INVERSE);
    cuda::finish_stage<R>(time.p, gamma_shock.p, group.p, output(in_ref, n_ref, k_ref), n, members, stream);
    ok(cudaDeviceSynchronize(), "cuFFT path");
  }
  ASSERT_GE(cuda::prepare_fused_evaluation<R>(n, raman), 1);
  // With the L2 prefetch on (two members ahead, whole rows): a hint that must change nothing
  // and touch no memory outside the rows (memcheck runs these cases).
  const cuda::Prefetch prefetch{2, std::int64_t{1} << 24};
  cuda::fused_evaluation<R>(input, output(in_fused, n_fused, k_fused), group.p, raman ? response.p : nullptr,
                            gamma_shock.p, kerr.p, raman_coefficients, n, members, prefetch, stream);
  ok(cudaGetLastError(), "fused evaluation launch");
  ok(cudaDeviceSynchronize(), "fused evaluation");

  // The stage input is the same arithmetic in both; the transforms differ in their rounding.
  const double tol = sizeof(R) == 8 ? 1e-12 : 2e-5;
  EXPECT_LT(worst_member_difference(in_fused.read(), in_ref.read(), n), sizeof(R) == 8 ? 1e-15 : 1e-7);
  const double dn = worst_member_difference(n_fused.read(), n_ref.read(), n);
  const double dk = worst_member_difference(k_fused.read(), k_ref.read(), n);
  EXPECT_LT(dn, tol);
  EXPECT_LT(dk, tol);
  std::printf("%s, %lld points, %s Raman: N %.3g, k %.3g apart (relative L2, worst member)\n",
              sizeof(R) == 8 ? "float64" : "float32", static_cast<long long>(n), raman ? "with" : "without", dn, dk);
}

// The fused measures against the cuFFT path's transform and measures kernel: fresh random
// spectra and frequency offsets; every measure of every member within rounding.
template <class R> void compare_measures(std::int64_t n) {
  using Cx = cuda::C<R>;
  if (!cuda::fused_evaluation_supported<R>(n))
    GTEST_SKIP() << "this build has no fused measures for " << n << " points";
  constexpr std::int64_t members = 5;
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  std::vector<Cx> spectra(static_cast<std::size_t>(members * n));
  for (Cx& c : spectra) c = Cx{R(normal(random)), R(normal(random))};
  std::vector<double> omega_host(static_cast<std::size_t>(n));
  for (double& w : omega_host) w = 1e14 * normal(random);
  const double omega0 = 2.3e15, dt = 1e-15, hbar = 1.054571817e-34;
  const Device<Cx> y(spectra);
  const Device<double> omega(omega_host);
  Device<Cx> time(spectra.size());
  Device<double> reference(4 * members), fused(4 * members);
  const cudaStream_t stream = nullptr;
  const cuda::FftPlan c2c(cuda::Fft<R>::c2c, n, members, stream);
  cuda::Fft<R>::complex(c2c.get(), y.p, time.p, CUFFT_FORWARD);
  cuda::measures<R>(y.p, time.p, omega.p, omega0, dt, hbar, reference.p, members, n, stream);
  cuda::prepare_fused_evaluation<R>(n, false);
  cuda::fused_measures<R>(y.p, omega.p, omega0, dt, hbar, fused.p, members, n, stream);
  ok(cudaGetLastError(), "fused measures launch");
  ok(cudaDeviceSynchronize(), "measures");
  const std::vector<double> a = fused.read(), b = reference.read();
  // The spectral sums see the same values in another order; the peak, transforms that round
  // differently.
  const double tol = sizeof(R) == 8 ? 1e-12 : 1e-5;
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_GT(std::abs(b[i]), 0.0) << "measure " << i % 4 << " of member " << i / 4;
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  }
  EXPECT_LT(worst, tol);
  std::printf("%s, %lld points: measures %.3g apart (relative, worst)\n", sizeof(R) == 8 ? "float64" : "float32",
              static_cast<long long>(n), worst);
}

class FusedEvaluation : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(FusedEvaluation, MeasuresMatchCufftPathFloat64) { compare_measures<double>(GetParam()); }

TEST_P(FusedEvaluation, MeasuresMatchCufftPathFloat32) { compare_measures<float>(GetParam()); }

TEST_P(FusedEvaluation, MatchesCufftPathFloat64) {
  compare<double>(GetParam(), true);
  compare<double>(GetParam(), false);
}

TEST_P(FusedEvaluation, MatchesCufftPathFloat32) {
  compare<float>(GetParam(), true);
  compare<float>(GetParam(), false);
}

INSTANTIATE_TEST_SUITE_P(Grids, FusedEvaluation, ::testing::Values(1024, 2048, 4096, 8192),
                         [](const ::testing::TestParamInfo<std::int64_t>& info) {
                           return std::to_string(info.param) + "points";
                         });

}  // namespace
