// N(Ã) of one member evaluated by one thread block in shared memory: the whole operator of
// nonlinear.hpp — the transform to time, |A|², the Raman convolution through a real transform
// of the intensity, the Kerr–Raman product, the transform back and iγs(ω) — with the field
// loaded once and N stored once, through the caller's `load` and `store` (the device kernel
// forms the stage input from its terms in `load` and writes N or k = D·N in `store`, so a
// stage is one pass over global memory; the cuFFT path moves the row through global memory
// between every transform and element-wise pass: about 14 rows of traffic per evaluation).
//
// Transforms: radix-2 decimation in time over bit-reversed input (stages fused in pairs),
// unnormalised, in the
// convention of grid.hpp (to time: e^{−i}, FFTW_FORWARD; to spectrum: e^{+i}). The intensity
// r (n reals) is packed as z_m = r_{2m} + i·r_{2m+1} and transformed at n/2 points; its
// spectrum X_k (k ≤ n/2) is unpacked, multiplied by conj(H_R) as the host's real transform
// does, and repacked so that one inverse transform at n/2 points gives the convolution
// (derivation at unpack_raman_repack). Shared memory: n complex values for the field and,
// with Raman, n/2 for the intensity.
//
// The code is host and device code: `evaluate` takes the thread index, the thread count and a
// barrier, so the device kernel (kernels.cu) and a host test (std::barrier over std::threads)
// run the same phases.
#pragma once

#include <cstdint>

#include "src/core/hd.hpp"

namespace lockstep::prop::block {

/// A complex value laid out as CUDA's double2/float2 (and std::complex).
template <class R>
struct alignas(2 * sizeof(R)) Complex2 {
  R x, y;
};

template <class R> LOCKSTEP_HD Complex2<R> add(Complex2<R> a, Complex2<R> b) { return {a.x + b.x, a.y + b.y}; }
template <class R> LOCKSTEP_HD Complex2<R> sub(Complex2<R> a, Complex2<R> b) { return {a.x - b.x, a.y - b.y}; }
template <class R> LOCKSTEP_HD Complex2<R> mul(Complex2<R> a, Complex2<R> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
template <class R> LOCKSTEP_HD Complex2<R> conj(Complex2<R> a) { return {a.x, -a.y}; }
template <class R> LOCKSTEP_HD Complex2<R> scale(Complex2<R> a, R s) { return {a.x * s, a.y * s}; }
/// i·a
template <class R> LOCKSTEP_HD Complex2<R> times_i(Complex2<R> a) { return {-a.y, a.x}; }

/// j with its lowest `bits` bits reversed.
LOCKSTEP_HD unsigned reverse_bits(unsigned j, int bits) {
#if defined(__CUDA_ARCH__)
  return __brev(j) >> (32 - bits);
#else
  unsigned r = 0;
  for (int b = 0; b < bits; ++b, j >>= 1) r = (r << 1) | (j & 1u);
  return r;
#endif
}

/// Whether one block can evaluate members of n points: n a power of two, 16 ≤ n, and the
/// field (and with Raman the packed intensity) fitting `shared_bytes` of shared memory.
template <class R>
constexpr bool fits(std::int64_t n, bool raman, std::int64_t shared_bytes) {
  if (n < 16 || (n & (n - 1)) != 0 || n > (std::int64_t{1} << 30)) return false;
  const std::int64_t values = raman ? n + n / 2 : n;
  return values * static_cast<std::int64_t>(sizeof(Complex2<R>)) <= shared_bytes;
}

template <class R>
struct NonlinearBlock {
  using C = Complex2<R>;

  // One member's rows (global memory) …
  const R* gamma_shock;  // γ s(ω), n values
  const C* raman;        // H_R, n/2 + 1 values; nullptr: no Raman term
  R kerr, raman_weight;  // (1 − f_R)/n³ and f_R/n⁴ (the unnormalised transforms' factors)
  // … the tables of the grid …
  const C* twiddle;  // e^{−2πik/n}, k < n/2
  int log2n;
  // … and shared memory.
  C* a;  // n values
  C* z;  // n/2 values (with Raman)

  std::int64_t n() const { return std::int64_t{1} << log2n; }

  /// N of the spectrum Ã_j = load(j) (n values, FFT order), handed to store(k, N_k). Every
  /// thread of the block calls this with its index `tid` of `threads`; `barrier` synchronises
  /// them.
  template <class Load, class Store, class Barrier>
  LOCKSTEP_HD void evaluate(int tid, int threads, Load&& load, Store&& store, Barrier&& barrier) {
    const unsigned size = 1u << log2n, half = size / 2;
    // The field, bit-reversed on the way in; A·n in natural order after the forward transform.
    for (unsigned j = tid; j < size; j += threads) a[reverse_bits(j, log2n)] = load(j);
    barrier();
    transform(a, log2n, false, tid, threads, barrier);
    if (raman) {
      for (unsigned m = tid; m < half; m += threads) {
        const C p = a[2 * m], q = a[2 * m + 1];
        z[reverse_bits(m, log2n - 1)] = {p.x * p.x + p.y * p.y, q.x * q.x + q.y * q.y};
      }
      barrier();
      transform(z, log2n - 1, false, tid, threads, barrier);
      for (unsigned k = tid; k <= half / 2; k += threads) unpack_raman_repack(k, half);
      barrier();
      bit_reverse(z, log2n - 1, tid, threads);
      barrier();
      transform(z, log2n - 1, true, tid, threads, barrier);  // z_m = y_{2m} + i·y_{2m+1}
    }
    for (unsigned j = tid; j < size; j += threads) {
      const C v = a[j];
      R g = kerr * (v.x * v.x + v.y * v.y);
      if (raman) {
        const C y = z[j / 2];
        g += raman_weight * ((j & 1u) ? y.y : y.x);
      }
      a[j] = scale(v, g);
    }
    barrier();
    bit_reverse(a, log2n, tid, threads);
    barrier();
    transform(a, log2n, true, tid, threads, barrier);
    for (unsigned k = tid; k < size; k += threads) store(k, times_i(scale(a[k], gamma_shock[k])));
  }

 private:
  // In-place swap of x[j] and x[rev(j)] for a transform of 2^bits points.
  LOCKSTEP_HD void bit_reverse(C* x, int bits, int tid, int threads) const {
    const unsigned count = 1u << bits;
    for (unsigned j = tid; j < count; j += threads) {
      const unsigned r = reverse_bits(j, bits);
      if (j < r) {
        const C t = x[j];
        x[j] = x[r];
        x[r] = t;
      }
    }
  }

  // The radix-2 stages of a transform of 2^bits points over bit-reversed x (inverse: e^{+i}),
  // two stages per pass where they pair up (each thread keeps the four values of both stages in
  // registers: the same arithmetic, half the shared-memory traffic and barriers), each pass
  // followed by a barrier. Twiddles of the full n-point table: e^{∓2πij/(2h)} = twiddle[j·n/(2h)].
  template <class Barrier>
  LOCKSTEP_HD void transform(C* x, int bits, bool inverse, int tid, int threads, Barrier&& barrier) const {
    auto twiddle_at = [&](unsigned index) {
      const C w = twiddle[index];
      return inverse ? conj(w) : w;
    };
    int s = 0;
    for (; s + 1 < bits; s += 2) {
      const unsigned h = 1u << s, stride = 1u << (log2n - 1 - s), quads = 1u << (bits - 2);
      for (unsigned b = tid; b < quads; b += threads) {
        const unsigned j = b & (h - 1), i0 = ((b >> s) << (s + 2)) | j;
        C x0 = x[i0], x1 = x[i0 + h], x2 = x[i0 + 2 * h], x3 = x[i0 + 3 * h];
        const C w = twiddle_at(j * stride), wa = twiddle_at(j * (stride / 2)), wb = twiddle_at((j + h) * (stride / 2));
        C v = mul(x1, w);  // stage s: pairs (0, 1) and (2, 3)
        x1 = sub(x0, v);
        x0 = add(x0, v);
        v = mul(x3, w);
        x3 = sub(x2, v);
        x2 = add(x2, v);
        v = mul(x2, wa);  // stage s + 1: pairs (0, 2) and (1, 3)
        x2 = sub(x0, v);
        x0 = add(x0, v);
        v = mul(x3, wb);
        x3 = sub(x1, v);
        x1 = add(x1, v);
        x[i0] = x0;
        x[i0 + h] = x1;
        x[i0 + 2 * h] = x2;
        x[i0 + 3 * h] = x3;
      }
      barrier();
    }
    if (s < bits) {  // an odd stage count: the last stage alone
      const unsigned h = 1u << s, stride = 1u << (log2n - 1 - s), pairs = 1u << (bits - 1);
      for (unsigned b = tid; b < pairs; b += threads) {
        const unsigned j = b & (h - 1), i0 = ((b >> s) << (s + 1)) | j, i1 = i0 + h;
        const C u = x[i0], v = mul(x[i1], twiddle_at(j * stride));
        x[i0] = add(u, v);
        x[i1] = sub(u, v);
      }
      barrier();
    }
  }

  // The Raman convolution between the two half-length transforms, for the pair (k, N − k),
  // N = n/2, W = e^{−2πi/n}:
  //   unpack   X_k = E_k + W^k O_k,  E_k = (Z_k + conj Z_{N−k})/2,  O_k = −i(Z_k − conj Z_{N−k})/2,
  //            X_{N−k} = conj(E_k − W^k O_k)   (X_0 = Re Z_0 + Im Z_0, X_N = Re Z_0 − Im Z_0);
  //   product  Y_k = X_k · conj(H_R(k))        (Y_0, Y_N real, as a complex-to-real transform reads them);
  //   repack   Z'_k = (Y_k + conj Y_{N−k}) + i (Y_k − conj Y_{N−k}) conj(W^k),
  //            so that the inverse transform of Z' at N points is y_{2m} + i y_{2m+1}, y the
  //            n-point inverse real transform of Y.
  LOCKSTEP_HD void unpack_raman_repack(unsigned k, unsigned half) {
    if (k == 0) {
      const C z0 = z[0];
      const R y0 = (z0.x + z0.y) * raman[0].x;     // Re(X_0 conj H_0), X_0 real
      const R yn = (z0.x - z0.y) * raman[half].x;  // Re(X_N conj H_N), X_N real
      z[0] = {y0 + yn, y0 - yn};
      return;
    }
    const unsigned kc = half - k;
    const C zk = z[k], zc = conj(z[kc]);
    const C e = scale(add(zk, zc), R(0.5));
    const C o = scale(times_i(sub(zc, zk)), R(0.5));  // −i(Z_k − conj Z_{N−k})/2
    const C w = twiddle[k];
    const C wo = mul(w, o);
    const C xk = add(e, wo), xc = conj(sub(e, wo));
    const C yk = mul(xk, conj(raman[k])), yc = mul(xc, conj(raman[kc]));
    const C wc = conj(w);
    // Z'_k and Z'_{N−k} (the latter: the same formula with k ↔ N − k, W^{N−k} = −conj(W^k)).
    z[k] = add(add(yk, conj(yc)), mul(times_i(sub(yk, conj(yc))), wc));
    if (kc != k) z[kc] = sub(add(yc, conj(yk)), mul(times_i(sub(yc, conj(yk))), w));
  }
};

}  // namespace lockstep::prop::block
