// The CUDA engine's kernels and their launchers (launch.hpp). A member's row m starts at m·n;
// indices into the rows are 64-bit. Every element-wise kernel loops over rows (blockIdx.y) and
// over the points of a row (blockIdx.x), so no thread divides a 64-bit index to find its
// member and point. On the H200 these passes move data at 3.4-4.2 TB/s, about the copy rate.
#include <algorithm>
#include <cstdint>

#include "launch.hpp"
#include "stage_math.cuh"

namespace lockstep::prop::cuda {

/// Member m (rows strided over grid.y) and point k of its row of n (strided over grid.x).
#define LOCKSTEP_ROWS(m, rows) for (std::int64_t m = blockIdx.y; m < (rows); m += gridDim.y)
#define LOCKSTEP_POINTS(k, n)                                                         \
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < (n); \
       k += std::int64_t{blockDim.x} * gridDim.x)

template <class R>
__global__ void combine_kernel(Combination<R> c, const int* group, C<R>* out, std::int64_t n, std::int64_t rows) {
  const R h = step_of(c);
  LOCKSTEP_ROWS(m, rows) {
    const int g = group[m];
    LOCKSTEP_POINTS(k, n) out[m * n + k] = combine_at<R>(c, h, m * n + k, k, g);
  }
}

template <class R>
__global__ void exponentials_kernel(const double2* linear, Exponents e, C<R>* out, std::int64_t n, std::int64_t rows) {
  LOCKSTEP_ROWS(gd, rows) LOCKSTEP_POINTS(k, n) {  // rows: groups × count
    const std::int64_t i = gd * n + k, d = gd % e.count, g = gd / e.count;
    const double2 l = linear[g * n + k];
    double s, c;
    sincos(l.y * e.x[d], &s, &c);
    const double a = exp(l.x * e.x[d]);
    out[i] = make<R>(static_cast<R>(a * c), static_cast<R>(a * s));
  }
}

/// r = |a|²
template <class R> __global__ void intensity_kernel(const C<R>* a, R* r, std::int64_t n, std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) LOCKSTEP_POINTS(k, n) r[m * n + k] = norm2<R>(a[m * n + k]);
}

/// h ← h · conj(H_R) of the member's group (half spectra of n/2 + 1 values).
template <class R>
__global__ void raman_kernel(C<R>* h, const C<R>* response, const int* group, std::int64_t half, std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) {
    const C<R>* hr = response + group[m] * half;
    LOCKSTEP_POINTS(k, half) {
      C<R> x = h[m * half + k];
      const C<R> y = hr[k];
      pointwise::multiply_conj(x.x, x.y, y.x, y.y);
      h[m * half + k] = x;
    }
  }
}

/// a ← a · (kerr_m |a|² + raman_m r), r = nullptr without Raman.
template <class R>
__global__ void kerr_raman_kernel(C<R>* a, const R* r, const R* kerr, const R* raman, std::int64_t n,
                                  std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) {
    const R kerr_m = kerr[m], raman_m = raman[m];
    LOCKSTEP_POINTS(k, n) {
      const std::int64_t i = m * n + k;
      const C<R> v = a[i];
      const R g = pointwise::kerr_raman_factor<R>(norm2<R>(v), kerr_m, raman_m, r ? r[i] : R(0));
      a[i] = make<R>(v.x * g, v.y * g);
    }
  }
}

/// N = i·g·a with g = γ s(ω) of the member's group, into the rows `out` asks for.
template <class R>
__global__ void finish_stage_kernel(const C<R>* a, const R* gamma_shock, const int* group, StageOutput<R> out,
                                    std::int64_t n, std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) {
    const int g = group[m];
    LOCKSTEP_POINTS(k, n) {
      const std::int64_t i = m * n + k;
      store_stage<R>(out, times_i<R>(a[i], gamma_shock[g * n + k]), i, k, g);
    }
  }
}

/// rows ← rows · window of the member's group, for members whose flag is set.
template <class R>
__global__ void window_kernel(C<R>* values, const R* window, const int* group, const unsigned char* flag, R scale,
                              std::int64_t n, std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) {
    if (!flag[m]) continue;
    const R* w = window + group[m] * n;
    LOCKSTEP_POINTS(k, n) {
      const std::int64_t i = m * n + k;
      const R wk = w[k] * scale;
      values[i] = make<R>(values[i].x * wk, values[i].y * wk);
    }
  }
}

/// to ← from for members whose flag is set.
template <class R>
__global__ void copy_flagged_kernel(const C<R>* from, C<R>* to, const unsigned char* flag, std::int64_t n,
                                    std::int64_t rows) {
  LOCKSTEP_ROWS(m, rows) {
    if (!flag[m]) continue;
    LOCKSTEP_POINTS(k, n) to[m * n + k] = from[m * n + k];
  }
}

/// Per member m (one block each): the error estimate formed on the fly from `error` (frames =
/// 0 and directs = 0: no estimate), the norm of controller.hpp, and whether the candidate is
/// finite. out[2m] = norm (NaN without estimate), out[2m + 1] = 1 if finite else 0.
/// kind: 0 weak, 1 max, 2 rms (ErrorNorm's order).
template <class R>
__global__ void __launch_bounds__(kReduceThreads)
    norms_kernel(Combination<R> error, bool estimated, const int* group, const C<R>* y0, const C<R>* y1,
                 const int* kind, const double* rtol, const double* atol, double* out, std::int64_t n) {
  __shared__ double shared[5 * kReduceThreads / 32];
  const std::int64_t m = blockIdx.x;
  const int g = group[m];
  const double rt = rtol[m], at = atol[m];
  const R h = step_of(error);
  NormSums sums;
  for (std::int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    const std::int64_t i = m * n + k;
    const double q = power(y1[i]);
    if (!estimated) {
      sums.candidate += q;
      continue;
    }
    const double p = power(y0[i]), e = power(combine_at<R>(error, h, i, k, g));
    sums.add_ends(p, q);
    sums.error += e;
    sums.add_scaled(e, p, q, rt, at);
  }
  sums.store<kReduceThreads>(shared, estimated, kind[m], rt, at, n, out + 2 * m);
}

/// Per member m (one block each) the measures of measures.hpp from the spectrum y and the time
/// samples a = n·A: out[4m ..] = energy, photon number, peak power, spectral centroid.
template <class R>
__global__ void __launch_bounds__(kReduceThreads)
    measures_kernel(const C<R>* y, const C<R>* a, const double* omega, double omega0, double dt, double hbar,
                    double* out, std::int64_t n) {
  __shared__ double shared[4 * kReduceThreads / 32];
  const std::int64_t m = blockIdx.x;
  MeasureSums sums;
  for (std::int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    const std::int64_t i = m * n + k;
    sums.add_spectral(power(y[i]), omega[k], omega0);
    sums.add_temporal(power(a[i]));
  }
  sums.store<kReduceThreads>(shared, out + 4 * m, n, omega0, dt, hbar);
}

namespace {
constexpr int kThreads = 256;

// The grid of an element-wise pass over `rows` rows of n values: the points of a row over x,
// the rows over y (at most CUDA's 65535; the kernels stride over more).
dim3 grid_for(std::int64_t n, std::int64_t rows) {
  const std::int64_t x = std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 65535);
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 65535)));
}
}  // namespace

template <class R>
void combine(const Combination<R>& c, const int* group, C<R>* out, std::int64_t n, std::int64_t rows,
             cudaStream_t stream) {
  combine_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(c, group, out, n, rows);
}
template <class R>
void exponentials(const double2* linear, const Exponents& e, C<R>* out, std::int64_t n, std::int64_t groups,
                  cudaStream_t stream) {
  const std::int64_t rows = groups * e.count;
  if (rows > 0) exponentials_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(linear, e, out, n, rows);
}
template <class R> void intensity(const C<R>* a, R* r, std::int64_t n, std::int64_t rows, cudaStream_t stream) {
  intensity_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(a, r, n, rows);
}
template <class R>
void raman_product(C<R>* h, const C<R>* response, const int* group, std::int64_t half, std::int64_t rows,
                   cudaStream_t stream) {
  raman_kernel<R><<<grid_for(half, rows), kThreads, 0, stream>>>(h, response, group, half, rows);
}
template <class R>
void kerr_raman(C<R>* a, const R* r, const R* kerr, const R* raman, std::int64_t n, std::int64_t rows,
                cudaStream_t stream) {
  kerr_raman_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(a, r, kerr, raman, n, rows);
}
template <class R>
void finish_stage(const C<R>* a, const R* gamma_shock, const int* group, const StageOutput<R>& out, std::int64_t n,
                  std::int64_t rows, cudaStream_t stream) {
  finish_stage_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(a, gamma_shock, group, out, n, rows);
}
template <class R>
void window(C<R>* values, const R* w, const int* group, const unsigned char* flag, R scale, std::int64_t n,
            std::int64_t rows, cudaStream_t stream) {
  window_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(values, w, group, flag, scale, n, rows);
}
template <class R>
void copy_flagged(const C<R>* from, C<R>* to, const unsigned char* flag, std::int64_t n, std::int64_t rows,
                  cudaStream_t stream) {
  copy_flagged_kernel<R><<<grid_for(n, rows), kThreads, 0, stream>>>(from, to, flag, n, rows);
}
template <class R>
void norms(const Combination<R>& error, bool estimated, const int* group, const C<R>* y0, const C<R>* y1,
           const int* kind, const double* rtol, const double* atol, double* out, std::int64_t members, std::int64_t n,
           cudaStream_t stream) {
  norms_kernel<R><<<static_cast<unsigned>(members), kReduceThreads, 0, stream>>>(error, estimated, group, y0, y1, kind,
                                                                                 rtol, atol, out, n);
}
template <class R>
void measures(const C<R>* y, const C<R>* a, const double* omega, double omega0, double dt, double hbar, double* out,
              std::int64_t members, std::int64_t n, cudaStream_t stream) {
  measures_kernel<R>
      <<<static_cast<unsigned>(members), kReduceThreads, 0, stream>>>(y, a, omega, omega0, dt, hbar, out, n);
}

#define LOCKSTEP_PROP_LAUNCHERS(R)                                                                                     \
  template void combine<R>(const Combination<R>&, const int*, C<R>*, std::int64_t, std::int64_t, cudaStream_t);        \
  template void exponentials<R>(const double2*, const Exponents&, C<R>*, std::int64_t, std::int64_t, cudaStream_t);    \
  template void intensity<R>(const C<R>*, R*, std::int64_t, std::int64_t, cudaStream_t);                               \
  template void raman_product<R>(C<R>*, const C<R>*, const int*, std::int64_t, std::int64_t, cudaStream_t);            \
  template void kerr_raman<R>(C<R>*, const R*, const R*, const R*, std::int64_t, std::int64_t, cudaStream_t);          \
  template void finish_stage<R>(const C<R>*, const R*, const int*, const StageOutput<R>&, std::int64_t, std::int64_t,  \
                                cudaStream_t);                                                                         \
  template void window<R>(C<R>*, const R*, const int*, const unsigned char*, R, std::int64_t, std::int64_t,            \
                          cudaStream_t);                                                                               \
  template void copy_flagged<R>(const C<R>*, C<R>*, const unsigned char*, std::int64_t, std::int64_t, cudaStream_t);   \
  template void norms<R>(const Combination<R>&, bool, const int*, const C<R>*, const C<R>*, const int*, const double*, \
                         const double*, double*, std::int64_t, std::int64_t, cudaStream_t);                            \
  template void measures<R>(const C<R>*, const C<R>*, const double*, double, double, double, double*, std::int64_t,    \
                            std::int64_t, cudaStream_t);
LOCKSTEP_PROP_LAUNCHERS(float)
LOCKSTEP_PROP_LAUNCHERS(double)

}  // namespace lockstep::prop::cuda
