// N(Ã) of one member evaluated by one thread block in shared memory: the whole operator of
// nonlinear.hpp — the transform to time, |A|², the Raman convolution through a real transform
// of the intensity, the Kerr–Raman product, the transform back and iγs(ω) — with the field
// loaded once and N stored once, through the caller's `load` and `store` (the device kernel
// forms the stage input from its terms in `load` and writes N or k = D·N in `store`, so a
// stage is one pass over global memory; the cuFFT path moves the row through global memory
// between every transform and element-wise pass: about 14 rows of traffic per evaluation).
//
// Transforms: Stockham autosort (natural order in and out, no bit reversal), radix 8 per pass
// and one last pass of radix 2 or 4; each of the n/8 threads computes its butterflies' DFTs in
// registers, so a pass moves every value through shared memory once (read before a barrier,
// written after it: one buffer suffices). Shared memory is padded by one value in 8, which
// makes the strided accesses of every pass free of bank conflicts. Unnormalised, in the
// convention of grid.hpp (to time: e^{−i}, FFTW_FORWARD; to spectrum: e^{+i}, computed as the
// conjugate of the forward transform of the conjugate). The intensity r (n reals) is packed
// as z_m = r_{2m} + i·r_{2m+1} and transformed at n/2 points; its spectrum X_k (k ≤ n/2) is
// unpacked, multiplied by conj(H_R) as the host's real transform does, and repacked so that
// one inverse transform at n/2 points gives the convolution (derivation at
// unpack_raman_repack). The first pass of a transform reads its input through a function (the
// stage input from global memory, |A|² from the field, the Kerr–Raman product) and the last
// one writes through a function (N to global memory), so no pass of its own does either.
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

/// Values of a transform each thread holds in registers between the two halves of a pass; a
/// block has n/kValues threads, at most kMaxThreads.
inline constexpr int kValues = 8;
/// The radix of a transform's passes, 2^kRadixBits (the last pass: what remains).
inline constexpr int kRadixBits = 3;
inline constexpr int kMaxThreads = 1024;

/// The shared-memory index of value i (one pad value after every 8).
LOCKSTEP_HD unsigned padded(unsigned i) { return i + (i >> 3); }

/// Shared memory of a block for n points: the field and, with Raman, the packed intensity, padded.
template <class R>
constexpr std::int64_t shared_bytes(std::int64_t n, bool raman) {
  const std::int64_t values = n + n / 8 + (raman ? n / 2 + n / 16 : 0);
  return values * static_cast<std::int64_t>(sizeof(Complex2<R>));
}

/// Whether one block can evaluate members of n points: n a power of two with 16 ≤ n ≤
/// kValues·kMaxThreads, the field (and with Raman the packed intensity) fitting `shared_bytes`
/// of shared memory.
template <class R>
constexpr bool fits(std::int64_t n, bool raman, std::int64_t available_bytes) {
  if (n < 16 || (n & (n - 1)) != 0 || n > std::int64_t{kValues} * kMaxThreads) return false;
  return shared_bytes<R>(n, raman) <= available_bytes;
}

namespace detail {

/// e^{−2πik/16} for k < 16.
template <class R>
LOCKSTEP_HD Complex2<R> unit16(int k) {
  constexpr double c1 = 0.92387953251128675613, s1 = 0.38268343236508977173, h = 0.70710678118654752440;
  const double c[16] = {1, c1, h, s1, 0, -s1, -h, -c1, -1, -c1, -h, -s1, 0, s1, h, c1};
  const double s[16] = {0, -s1, -h, -c1, -1, -c1, -h, -s1, 0, s1, h, c1, 1, c1, h, s1};
  return {static_cast<R>(c[k]), static_cast<R>(s[k])};
}

/// x·e^{−2πik/N} for a constant k, N ≤ 16: the multiplications by 1 and −i left out.
template <class R, int N>
LOCKSTEP_HD Complex2<R> rotate(Complex2<R> x, int k) {
  const int k16 = k * (16 / N);
  if (k16 == 0) return x;
  if (k16 == 4) return {x.y, -x.x};
  return mul(x, unit16<R>(k16));
}

/// The forward DFT of N ≤ 16 values in registers, natural order in and out (radix-2 decimation
/// in time; every index is a constant once the loops unroll).
template <class R, int N>
LOCKSTEP_HD void dft(Complex2<R>* v) {
  Complex2<R> t[N];
  constexpr int bits = N == 2 ? 1 : N == 4 ? 2 : N == 8 ? 3 : 4;
  LOCKSTEP_UNROLL
  for (int i = 0; i < N; ++i) {
    int r = 0;
    LOCKSTEP_UNROLL
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    t[i] = v[r];
  }
  LOCKSTEP_UNROLL
  for (int stage = 0; stage < bits; ++stage) {
    const int len = 2 << stage;  // (a linear loop counter: the compiler unrolls it)
    LOCKSTEP_UNROLL
    for (int i = 0; i < N; i += len) {
      LOCKSTEP_UNROLL
      for (int k = 0; k < len / 2; ++k) {
        const Complex2<R> u = t[i + k], x = rotate<R, N>(t[i + k + len / 2], k * (N / len));
        t[i + k] = add(u, x);
        t[i + k + len / 2] = sub(u, x);
      }
    }
  }
  LOCKSTEP_UNROLL
  for (int i = 0; i < N; ++i) v[i] = t[i];
}

}  // namespace detail

template <class R>
struct NonlinearBlock {
  using C = Complex2<R>;

  // One member's rows (global memory) …
  const R* gamma_shock;  // γ s(ω), n values
  const C* raman;        // H_R, n/2 + 1 values; nullptr: no Raman term
  R kerr, raman_weight;  // (1 − f_R)/n³ and f_R/n⁴ (the unnormalised transforms' factors)
  // … the tables of the grid …
  const C* twiddle;  // e^{−2πik/n}, k < n
  int log2n;
  // … and shared memory (padded).
  C* a;  // n values
  C* z;  // n/2 values (with Raman)

  /// N of the spectrum Ã_j = load(j) (n values, FFT order), handed to store(k, N_k). Every one
  /// of the n/kValues threads of the block calls this with its index `tid`; `barrier` synchronises
  /// them.
  template <class Load, class Store, class Barrier>
  LOCKSTEP_HD void evaluate(int tid, Load&& load, Store&& store, Barrier&& barrier) {
    const unsigned size = 1u << log2n, half = size / 2;
    auto to = [](C* x) { return [x](unsigned i, C v) { x[padded(i)] = v; }; };
    // A·n in natural order.
    transform(log2n, false, tid, load, to(a), barrier);
    if (raman) {
      transform(
          log2n - 1, false, tid,
          [&](unsigned m) {
            const C p = a[padded(2 * m)], q = a[padded(2 * m + 1)];
            return C{p.x * p.x + p.y * p.y, q.x * q.x + q.y * q.y};
          },
          to(z), barrier);
      for (unsigned k = tid; k <= half / 2; k += size / kValues) unpack_raman_repack(k, half);
      barrier();
      transform(log2n - 1, true, tid, [&](unsigned m) { return z[padded(m)]; }, to(z), barrier);  // y_{2m} + i·y_{2m+1}
    }
    transform(
        log2n, true, tid,
        [&](unsigned j) {
          const C v = a[padded(j)];
          R g = kerr * (v.x * v.x + v.y * v.y);
          if (raman) {
            const C y = z[padded(j / 2)];
            g += raman_weight * ((j & 1u) ? y.y : y.x);
          }
          return scale(v, g);
        },
        [&](unsigned k, C v) { store(k, times_i(scale(v, gamma_shock[k]))); }, barrier);
  }

 private:
  // One Stockham pass of radix Radix over a transform of `count` points whose sub-transforms
  // have length ns: butterfly j reads x[j + r·count/Radix] (through `load`), turns them by
  // w^r, w = e^{−2πi(j mod ns)/(ns·Radix)}, takes their DFT and writes output r at
  // (j / ns)·ns·Radix + j mod ns + r·ns (through `store`). Each thread keeps its butterflies'
  // values in registers across the barrier between reading and writing, so reads and writes
  // may share one buffer. inverse: the conjugate of the forward transform of the conjugate.
  template <int Radix, class Load, class Store, class Barrier>
  LOCKSTEP_HD void pass(unsigned count, unsigned ns, bool inverse, int tid, Load&& load, Store&& store,
                        Barrier&& barrier) const {
    constexpr int kPerThread = kValues / Radix;
    const unsigned butterflies = count / Radix, threads = (1u << log2n) / kValues;
    // Twiddle w^r = twiddle[r·base], e^{−2πi/(ns·Radix)} at the table's step n/(ns·Radix).
    const unsigned step = (1u << log2n) / (ns * Radix);
    C v[kPerThread][Radix];
    LOCKSTEP_UNROLL
    for (int q = 0; q < kPerThread; ++q) {
      const unsigned j = static_cast<unsigned>(tid) + static_cast<unsigned>(q) * threads;
      if (j >= butterflies) break;
      LOCKSTEP_UNROLL
      for (int r = 0; r < Radix; ++r) {
        const C x = load(j + static_cast<unsigned>(r) * butterflies);
        v[q][r] = inverse ? conj(x) : x;
      }
      if (ns > 1) {
        // w^r straight from the table, each used at once (few registers live beside the values).
        const unsigned base = (j % ns) * step;
        LOCKSTEP_UNROLL
        for (int r = 1; r < Radix; ++r) v[q][r] = mul(v[q][r], twiddle[static_cast<unsigned>(r) * base]);
      }
      detail::dft<R, Radix>(v[q]);
    }
    barrier();
    LOCKSTEP_UNROLL
    for (int q = 0; q < kPerThread; ++q) {
      const unsigned j = static_cast<unsigned>(tid) + static_cast<unsigned>(q) * threads;
      if (j >= butterflies) break;
      const unsigned out = (j / ns) * ns * Radix + j % ns;
      LOCKSTEP_UNROLL
      for (int r = 0; r < Radix; ++r) store(out + static_cast<unsigned>(r) * ns, inverse ? conj(v[q][r]) : v[q][r]);
    }
    barrier();
  }

  // A transform of 2^bits points (inverse: e^{+i}) from `load` to `store`: passes of radix 8,
  // the last of radix 2^(bits mod 3) when that is not 0; the passes between go through
  // `x` = whichever shared buffer `store` writes (its reads and writes happen in separate
  // phases of each pass).
  template <class Load, class Store, class Barrier>
  LOCKSTEP_HD void transform(int bits, bool inverse, int tid, Load&& load, Store&& store, Barrier&& barrier) const {
    const unsigned count = 1u << bits;
    const int passes = (bits + kRadixBits - 1) / kRadixBits;
    // The buffer between passes: the one `store` fills. Both transforms of the field write a,
    // those of the intensity z; the field's inverse ends in global memory but starts from a.
    C* x = bits == log2n ? a : z;
    auto from_x = [x](unsigned i) { return x[padded(i)]; };
    auto to_x = [x](unsigned i, C v) { x[padded(i)] = v; };
    // The last pass's radix decides the pass functions made: first and middle passes are of
    // radix 8.
    const int last_bits = bits % kRadixBits == 0 ? kRadixBits : bits % kRadixBits;
    unsigned ns = 1;
    if (passes == 1) {
      last_pass(last_bits, count, ns, inverse, tid, load, store, barrier);
      return;
    }
    constexpr int kRadix = 1 << kRadixBits;
    pass<kRadix>(count, ns, inverse, tid, load, to_x, barrier);
    for (int p = 1; p + 1 < passes; ++p) pass<kRadix>(count, ns <<= kRadixBits, inverse, tid, from_x, to_x, barrier);
    last_pass(last_bits, count, ns << kRadixBits, inverse, tid, from_x, store, barrier);
  }

  template <class Load, class Store, class Barrier>
  LOCKSTEP_HD void last_pass(int radix_bits, unsigned count, unsigned ns, bool inverse, int tid, Load&& load,
                             Store&& store, Barrier&& barrier) const {
    if (radix_bits == 1) {
      pass<2>(count, ns, inverse, tid, load, store, barrier);
    } else if (radix_bits == 2 || kRadixBits == 2) {
      pass<4>(count, ns, inverse, tid, load, store, barrier);
    } else {
      pass<8>(count, ns, inverse, tid, load, store, barrier);
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
    const C zk = z[padded(k)], zc = conj(z[padded(kc)]);
    const C e = scale(add(zk, zc), R(0.5));
    const C o = scale(times_i(sub(zc, zk)), R(0.5));  // −i(Z_k − conj Z_{N−k})/2
    const C w = twiddle[k];
    const C wo = mul(w, o);
    const C xk = add(e, wo), xc = conj(sub(e, wo));
    const C yk = mul(xk, conj(raman[k])), yc = mul(xc, conj(raman[kc]));
    const C wc = conj(w);
    // Z'_k and Z'_{N−k} (the latter: the same formula with k ↔ N − k, W^{N−k} = −conj(W^k)).
    z[padded(k)] = add(add(yk, conj(yc)), mul(times_i(sub(yk, conj(yc))), wc));
    if (kc != k) z[padded(kc)] = sub(add(yc, conj(yk)), mul(times_i(sub(yc, conj(yk))), w));
  }
};

}  // namespace lockstep::prop::block
