// The fused evaluation of N (launch.hpp): one thread block per member forms the stage input,
// transforms it, forms the Kerr and Raman products and transforms back with cuFFTDx's block
// transforms, so that the member's row crosses global memory once in and once out, instead of
// the ~14 row passes of the cuFFT path (engine.cpp's evaluate).
//
// Every transform is a complex one of n points, in cuFFTDx's register layout: element j of
// thread t is point t + j·stride, in time and in frequency alike, so the element-wise steps
// between transforms need no exchange. The Raman convolution h_R ⊛ |a|² is the cuFFT path's
// D2Z / Z2D pair done as complex transforms of m = n/2 points (raman_convolution below): the real
// line x = |a|² packed as z_p = x_{2p} + i x_{2p+1}, its spectrum X_k = E_k + W^k O_k
// (W = e^{−2πi/n}) unpacked from Z_k and Z_{m−k}, multiplied by conj(H_k), packed back and
// transformed back to y_{2p} + i y_{2p+1}. That is half the work of a full complex pair; the
// packing, the pairing of k with m − k and the unpacking are exchanges through the transforms'
// workspace. While the pair runs, a waits in shared memory behind that workspace, so that a
// thread holds one field's points at a time.
//
// The measures of an accepted step (fused_measures) take the same transform: one block per
// member reads the spectrum once and finds the peak power in registers, with no time row. An
// evaluation can also measure its stage input (StageOutput::measures: the FSAL stage's input is
// the candidate), with the transform it makes anyway, and form the error norm (StageOutput::error:
// the FSAL stage's N completes the estimate whose other terms its input already read).
//
// The transforms are generated for sm_90 (CMake builds this file only for that architecture)
// and sizes n = 2^10 … 2^13 (float32: … 2^12; see with_size).
#include <cufftdx.hpp>

#include <algorithm>
#include <type_traits>

#include "launch.hpp"
#include "lockstep/core/error.hpp"
#include "src/core/cuda/runtime.hpp"
#include "stage_math.cuh"

namespace lockstep::prop::cuda {
namespace {

template <class R, unsigned N, cufftdx::fft_direction D>
using BlockTransform =
    decltype(cufftdx::Size<N>() + cufftdx::Precision<R>() + cufftdx::Type<cufftdx::fft_type::c2c>() +
             cufftdx::Direction<D>() + cufftdx::FFTsPerBlock<1>() + cufftdx::SM<900>() + cufftdx::Block());

// The m = n/2-point transforms of the Raman pair, on the threads of the n-point ones.
template <class R, unsigned M, unsigned PointsPerThread, cufftdx::fft_direction D>
using HalfTransform = decltype(cufftdx::Size<M>() + cufftdx::Precision<R>() + cufftdx::Type<cufftdx::fft_type::c2c>() +
                               cufftdx::Direction<D>() + cufftdx::ElementsPerThread<PointsPerThread>() +
                               cufftdx::FFTsPerBlock<1>() + cufftdx::SM<900>() + cufftdx::Block());

template <class R, unsigned N> struct Transforms {
  using Forward = BlockTransform<R, N, cufftdx::fft_direction::forward>;
  using Inverse = BlockTransform<R, N, cufftdx::fft_direction::inverse>;
  using Value = typename Forward::value_type;
  static constexpr unsigned points_per_thread = Forward::elements_per_thread;
  static constexpr unsigned stride = Forward::stride;
  static constexpr unsigned threads = Forward::block_dim.x;
  using HalfForward = HalfTransform<R, N / 2, points_per_thread / 2, cufftdx::fft_direction::forward>;
  using HalfInverse = HalfTransform<R, N / 2, points_per_thread / 2, cufftdx::fft_direction::inverse>;
  /// The transforms' workspace, which between transforms holds the Raman pair's exchanges (a
  /// line of n reals or n/2 complex values).
  static constexpr unsigned workspace =
      std::max({Forward::shared_memory_size, Inverse::shared_memory_size, HalfForward::shared_memory_size,
                HalfInverse::shared_memory_size, static_cast<unsigned>(N * sizeof(R))});
  template <class F> static constexpr bool same_layout(unsigned per_thread) {
    return F::elements_per_thread == per_thread && F::stride == stride && F::block_dim.x == threads &&
           F::block_dim.y == 1 && !F::requires_workspace;
  }
  static_assert(same_layout<Forward>(points_per_thread) && same_layout<Inverse>(points_per_thread) &&
                    same_layout<HalfForward>(points_per_thread / 2) && same_layout<HalfInverse>(points_per_thread / 2),
                "every transform shares one register layout: element j of thread t is point t + j·stride");
  static_assert(workspace >= 5 * threads / 32 * sizeof(double), "the block reductions fit the workspace");
  /// Dynamic shared memory: the workspace, and with Raman a's row kept behind it.
  static constexpr unsigned shared_bytes(bool raman) { return workspace + (raman ? N * sizeof(Value) : 0u); }
};

__device__ __forceinline__ void sin_cos_pi(double x, double* s, double* c) { sincospi(x, s, c); }
__device__ __forceinline__ void sin_cos_pi(float x, float* s, float* c) { sincospif(x, s, c); }

/// The Raman convolution y = h_R ⊛ x (unnormalised: IDFT(DFT(x)·conj(H)), real part, as the
/// cuFFT path's pair gives it) of the real line x = |a|² of the block's member: x[j] is point
/// t + j·stride of thread t on entry, y[j] the same point on return. `line` is the workspace.
template <class R, unsigned N>
__device__ void raman_convolution(R (&x)[Transforms<R, N>::points_per_thread], const C<R>* hr, unsigned char* line) {
  using T = Transforms<R, N>;
  using V = typename T::Value;
  constexpr unsigned M = N / 2, Q = T::points_per_thread / 2, S = T::stride;
  R* reals = reinterpret_cast<R*>(line);
  V* packed = reinterpret_cast<V*>(line);
  const unsigned t = threadIdx.x;
  __syncthreads();  // the workspace is free
#pragma unroll
  for (unsigned j = 0; j < T::points_per_thread; ++j) reals[t + j * S] = x[j];
  __syncthreads();
  V z[T::HalfForward::storage_size];
#pragma unroll
  for (unsigned q = 0; q < Q; ++q) z[q] = packed[t + q * S];  // z_p = x_{2p} + i x_{2p+1}
  // z transformed, then parked in the workspace, where every thread reads any point of it.
  const auto transform_and_park = [&](auto transform) {
    __syncthreads();  // the workspace is free
    transform.execute(z, line);
    __syncthreads();
#pragma unroll
    for (unsigned q = 0; q < Q; ++q) packed[t + q * S] = z[q];
    __syncthreads();
  };
  transform_and_park(typename T::HalfForward());
#pragma unroll
  for (unsigned q = 0; q < Q; ++q) {
    const unsigned k = t + q * S;
    const C<R> zk = make<R>(z[q].x, z[q].y);
    const V zm = packed[(M - k) % M];
    // X_k = E_k + W^k O_k and conj(X_{m−k}) = E_k − W^k O_k, from E_k = (Z_k + conj Z_{m−k})/2,
    // O_k = (Z_k − conj Z_{m−k})/2i.
    const C<R> e = make<R>((zk.x + zm.x) / 2, (zk.y - zm.y) / 2);
    const C<R> o = make<R>((zk.y + zm.y) / 2, (zm.x - zk.x) / 2);
    R s, c;
    sin_cos_pi(static_cast<R>(2 * k) / static_cast<R>(N), &s, &c);
    const C<R> wo = mul<R>(make<R>(c, -s), o);
    // Y_k = X_k conj(H_k); conj(Y_{m−k}) = conj(X_{m−k}) H_{m−k}. The real inverse reads only
    // the real parts of Y_0 and Y_m.
    C<R> yk = mul<R>(make<R>(e.x + wo.x, e.y + wo.y), make<R>(hr[k].x, -hr[k].y));
    C<R> ym = mul<R>(make<R>(e.x - wo.x, e.y - wo.y), hr[M - k]);
    if (k == 0) yk.y = ym.y = R(0);
    // Z'_k = Y_k + Y_{k+m} + i W^{−k} (Y_k − Y_{k+m}), Y_{k+m} = conj(Y_{m−k}): the spectrum of
    // y_{2p} + i y_{2p+1}.
    const C<R> f = mul<R>(make<R>(-s, c), make<R>(yk.x - ym.x, yk.y - ym.y));
    z[q] = V{yk.x + ym.x + f.x, yk.y + ym.y + f.y};
  }
  transform_and_park(typename T::HalfInverse());
#pragma unroll
  for (unsigned j = 0; j < T::points_per_thread; ++j) x[j] = reals[t + j * S];
}

/// The rows a combination may read: kMaxTerms frame rows, kMaxTerms direct ones, frame_y0 and
/// direct_y0.
template <class R> constexpr unsigned kCombinationRows = 2 * Combination<R>::kMaxTerms + 2;

/// Asks L2 for the first `bytes` (a multiple of 16) from `offset` on of row q of those c may
/// read (nothing where c reads no such row, or q ≥ kCombinationRows), with cp.async.bulk.prefetch
/// (sm_90: one instruction a row, nothing waits on it). The term loops unroll, so that no
/// parameter array is indexed at run time.
template <class R>
__device__ __forceinline__ void prefetch_row(const Combination<R>& c, std::int64_t offset, unsigned bytes, unsigned q) {
  constexpr int K = Combination<R>::kMaxTerms;
  const auto ask = [&](const C<R>* row) {
    if (row)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(__cvta_generic_to_global(row + offset)),
                   "r"(bytes)
                   : "memory");
  };
#pragma unroll
  for (int r = 0; r < K; ++r) {
    if (q == static_cast<unsigned>(r) && r < c.frames) ask(c.frame[r]);
    if (q == static_cast<unsigned>(K + r) && r < c.directs) ask(c.direct[r]);
  }
  if (q == 2 * K) ask(c.frame_y0);
  if (q == 2 * K + 1) ask(c.direct_y0);
}

// Norm: out.error is set (a template parameter, so that the other evaluations keep the
// registers the norm's code would take: at 2^13 float64 points they already spill).
template <class R, unsigned N, bool Raman, bool Norm>
__global__ void __launch_bounds__(Transforms<R, N>::threads, 1)
    fused_evaluation_kernel(Combination<R> input, StageOutput<R> out, const int* group, const C<R>* response,
                            const R* gamma_shock, const R* kerr, const R* raman, std::int64_t ahead,
                            unsigned prefetch_bytes) {
  using T = Transforms<R, N>;
  using V = typename T::Value;
  constexpr unsigned P = T::points_per_thread;
  extern __shared__ __align__(16) unsigned char shared[];
  const std::int64_t m = blockIdx.x;
  const int g = group[m];
  const R h = step_of(input);
  const MeasureTarget& target = out.measures;
  MeasureSums sums;  // of the stage input, where out.measures asks for them
  V a[T::Forward::storage_size];
#pragma unroll
  for (unsigned j = 0; j < P; ++j) {
    const std::int64_t k = threadIdx.x + j * T::stride, i = m * N + k;
    const C<R> v = combine_at<R>(input, h, i, k, g);
    if (out.input) store_row(out.input, i, v);
    if (target.out) sums.add_spectral(power(v), target.omega[k], target.omega0);
    // The partial estimate reads the rows the input just read (in L1).
    if constexpr (Norm) store_row(out.error.scratch, i, combine_at<R>(out.error.partial, h, i, k, g));
    a[j] = V{v.x, v.y};
  }
  if (prefetch_bytes) {
    // Memory would idle through the transforms: the rows of the member whose block follows this
    // one, and those this block's candidate reads at its end, are fetched into L2 meanwhile. The
    // first threads ask for the former, the last threads for the latter, a row each.
    static_assert(T::threads >= kCombinationRows<R>, "a thread for every row a combination may read");
    if (m + ahead < gridDim.x) prefetch_row(input, (m + ahead) * N, prefetch_bytes, threadIdx.x);
    if (out.candidate) prefetch_row(out.solution, m * N, prefetch_bytes, T::threads - 1 - threadIdx.x);
  }
  typename T::Forward().execute(a, shared);  // a = n·A
  if (target.out) {
#pragma unroll
    for (unsigned j = 0; j < P; ++j) sums.add_temporal(power(a[j]));
    // The workspace serves the reduction (its first barrier frees it; the next user of the
    // workspace starts with a barrier).
    sums.store<T::threads>(reinterpret_cast<double*>(shared), target.out + 4 * m, N, target.omega0, target.dt,
                           target.hbar);
  }
  [[maybe_unused]] R r[P];  // the Raman term h_R ⊛ |a|² (unnormalised as a)
  if constexpr (Raman) {
    V* kept = reinterpret_cast<V*>(shared + T::workspace);
#pragma unroll
    for (unsigned j = 0; j < P; ++j) {
      kept[threadIdx.x + j * T::stride] = a[j];
      r[j] = pointwise::intensity(a[j].x, a[j].y);
    }
    raman_convolution<R, N>(r, response + g * std::int64_t{N / 2 + 1}, shared);
#pragma unroll
    for (unsigned j = 0; j < P; ++j) a[j] = kept[threadIdx.x + j * T::stride];  // this thread's own points
  }
  const R kerr_m = kerr[m], raman_m = raman[m];
#pragma unroll
  for (unsigned j = 0; j < P; ++j) {
    const R intensity = pointwise::intensity(a[j].x, a[j].y);
    const R s = pointwise::kerr_raman_factor<R>(intensity, kerr_m, raman_m, Raman ? r[j] : R(0));
    a[j] = V{a[j].x * s, a[j].y * s};
  }
  __syncthreads();
  typename T::Inverse().execute(a, shared);
  const R* gs = gamma_shock + g * std::int64_t{N};
#pragma unroll
  for (unsigned j = 0; j < P; ++j) {
    const std::int64_t k = threadIdx.x + j * T::stride, i = m * N + k;
    store_stage<R>(out, times_i<R>(make<R>(a[j].x, a[j].y), gs[k]), i, k, g);
  }
  if constexpr (Norm) {
    // After the stores, from rows (the thread's own points, N and y1 just written, the partial
    // estimate parked in the prologue): nothing of the norm lives across the transforms, whose
    // registers at 2^13 float64 points are already short.
    const ErrorTarget<R>& error = out.error;
    const R hw = h * error.fsal_weight;
    const int kind = error.kind[m];
    const double rt = error.rtol[m], at = error.atol[m];
    NormSums norm;
#pragma unroll
    for (unsigned j = 0; j < P; ++j) {
      const std::int64_t i = m * N + threadIdx.x + j * T::stride;
      const C<R> n = out.n[i], p = error.scratch[i];
      const double e = power(make<R>(p.x + hw * n.x, p.y + hw * n.y)), y0 = power(error.y0[i]), y1 = power(error.y1[i]);
      norm.add_ends(y0, y1);
      norm.error += e;
      if (kind != 0) norm.add_scaled(e, y0, y1, rt, at);
    }
    // The workspace serves the reduction (its first barrier frees it).
    norm.store<T::threads>(reinterpret_cast<double*>(shared), true, kind, rt, at, N, error.out + 2 * m);
  }
}

// measures_kernel (kernels.cu) without the time row: the block reads its member's spectrum
// once, sums the spectral measures and transforms it to time in registers for the peak.
template <class R, unsigned N>
__global__ void __launch_bounds__(Transforms<R, N>::threads)
    fused_measures_kernel(const C<R>* y, const double* omega, double omega0, double dt, double hbar, double* out) {
  using T = Transforms<R, N>;
  using V = typename T::Value;
  extern __shared__ __align__(16) unsigned char shared[];
  const std::int64_t m = blockIdx.x;
  MeasureSums sums;
  V a[T::Forward::storage_size];
#pragma unroll
  for (unsigned j = 0; j < T::points_per_thread; ++j) {
    const unsigned k = threadIdx.x + j * T::stride;
    const C<R> v = y[m * N + k];
    sums.add_spectral(power(v), omega[k], omega0);
    a[j] = V{v.x, v.y};
  }
  typename T::Forward().execute(a, shared);  // a = n·A
#pragma unroll
  for (unsigned j = 0; j < T::points_per_thread; ++j) sums.add_temporal(power(a[j]));
  // The transform's workspace serves the reduction (store's first barrier frees it).
  sums.store<T::threads>(reinterpret_cast<double*>(shared), out + 4 * m, N, omega0, dt, hbar);
}

/// Calls f(std::integral_constant<unsigned, n>) for an n supported in precision R; false for
/// any other. float32 at 8192 points is left out: with Raman, N came out 0.14 (complex pair, H200)
/// and 0.09 (real pair, H100) away from the cuFFT path on the test's random inputs, while the same
/// kernel without Raman and every other size and precision agreed to rounding
/// (tests/cpp/prop/test_cuda_fused_evaluation.cpp), racecheck found no hazard, and the float32
/// Dudley case through it agreed with float64 as closely as the cuFFT path's (4.4e-4 against
/// 4.3e-4): something the band-limited Dudley fields do not excite; not understood.
template <class R, class F> bool with_size(std::int64_t n, F&& f) {
  switch (n) {
    case 1024: f(std::integral_constant<unsigned, 1024>{}); return true;
    case 2048: f(std::integral_constant<unsigned, 2048>{}); return true;
    case 4096: f(std::integral_constant<unsigned, 4096>{}); return true;
    case 8192:
      if constexpr (std::is_same_v<R, float>) {
        return false;
      } else {
        f(std::integral_constant<unsigned, 8192>{});
        return true;
      }
    default: return false;
  }
}

/// How many rows a combination reads.
template <class R> int rows_read(const Combination<R>& c) {
  return c.frames + c.directs + (c.frame_y0 ? 1 : 0) + (c.direct_y0 ? 1 : 0);
}

void check(cudaError_t e, const char* what) { ::lockstep::cuda::check(e, "prop.cuda_fused", what); }

}  // namespace

template <class R> bool fused_evaluation_supported(std::int64_t n) {
  return with_size<R>(n, [](auto) {});
}

template <class R> int prepare_fused_evaluation(std::int64_t n, bool raman) {
  int resident = 0;
  const bool known = with_size<R>(n, [&](auto size) {
    constexpr unsigned N = decltype(size)::value;
    using T = Transforms<R, N>;
    const auto allow = [](auto kernel, bool with_raman) {
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(T::shared_bytes(with_raman))),
            "cudaFuncSetAttribute");
    };
    allow(fused_evaluation_kernel<R, N, false, false>, false);
    allow(fused_evaluation_kernel<R, N, false, true>, false);
    allow(fused_evaluation_kernel<R, N, true, false>, true);
    allow(fused_evaluation_kernel<R, N, true, true>, true);
    allow(fused_measures_kernel<R, N>, false);
    const auto kernel =
        raman ? fused_evaluation_kernel<R, N, true, false> : fused_evaluation_kernel<R, N, false, false>;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, static_cast<int>(T::threads),
                                                        T::shared_bytes(raman)),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  });
  if (!known) invalid_argument("prop.cuda_fused", "no fused evaluation of N for ", n, " points");
  return resident;
}

template <class R>
void fused_evaluation(const Combination<R>& input, const StageOutput<R>& out, const int* group,
                      const C<R>* raman_response, const R* gamma_shock, const R* kerr, const R* raman, std::int64_t n,
                      std::int64_t rows, const Prefetch& prefetch, cudaStream_t stream) {
  const bool known = with_size<R>(n, [&](auto size) {
    constexpr unsigned N = decltype(size)::value;
    using T = Transforms<R, N>;
    const int asked = rows_read(input) + (out.candidate ? rows_read(out.solution) : 0);
    const std::int64_t share = asked > 0 ? prefetch.budget / asked : 0;
    const auto bytes = static_cast<unsigned>(std::min<std::int64_t>(share, N * sizeof(C<R>)) / 16 * 16);
    const auto launch = [&](auto kernel, bool with_raman) {
      kernel<<<static_cast<unsigned>(rows), T::threads, T::shared_bytes(with_raman), stream>>>(
          input, out, group, raman_response, gamma_shock, kerr, raman, prefetch.ahead, bytes);
    };
    const bool norm = out.error.out != nullptr;
    if (raman_response)
      norm ? launch(fused_evaluation_kernel<R, N, true, true>, true)
           : launch(fused_evaluation_kernel<R, N, true, false>, true);
    else
      norm ? launch(fused_evaluation_kernel<R, N, false, true>, false)
           : launch(fused_evaluation_kernel<R, N, false, false>, false);
  });
  if (!known) invalid_argument("prop.cuda_fused", "no fused evaluation of N for ", n, " points");
}

template <class R>
void fused_measures(const C<R>* y, const double* omega, double omega0, double dt, double hbar, double* out,
                    std::int64_t members, std::int64_t n, cudaStream_t stream) {
  const bool known = with_size<R>(n, [&](auto size) {
    constexpr unsigned N = decltype(size)::value;
    using T = Transforms<R, N>;
    fused_measures_kernel<R, N><<<static_cast<unsigned>(members), T::threads, T::shared_bytes(false), stream>>>(
        y, omega, omega0, dt, hbar, out);
  });
  if (!known) invalid_argument("prop.cuda_fused", "no fused measures for ", n, " points");
}

#define LOCKSTEP_PROP_FUSED(R)                                                                                       \
  template bool fused_evaluation_supported<R>(std::int64_t);                                                         \
  template int prepare_fused_evaluation<R>(std::int64_t, bool);                                                      \
  template void fused_evaluation<R>(const Combination<R>&, const StageOutput<R>&, const int*, const C<R>*, const R*, \
                                    const R*, const R*, std::int64_t, std::int64_t, const Prefetch&, cudaStream_t);  \
  template void fused_measures<R>(const C<R>*, const double*, double, double, double, double*, std::int64_t,         \
                                  std::int64_t, cudaStream_t);
LOCKSTEP_PROP_FUSED(float)
LOCKSTEP_PROP_FUSED(double)

}  // namespace lockstep::prop::cuda
