// The raw-x circuit as a trigonometric polynomial (a cheaper exact form, docs/QKAN.md §1), for the
// contracted forward on CUDA.
//
// With raw x, every data gate of an ansatz with full-angle data rotations (pz, rpz, mix; not
// px's arccos, not `real`) turns the Bloch vector by x + (a θ offset) about the data axis, so
// the final Bloch vector of an edge is a trigonometric polynomial of degree L = reps in x:
//   n_m(x) = a_m0 + Σ_{k=1..L} a_mk cos kx + b_mk sin kx,      m = x, y, z.
// Its 3(2L + 1) coefficients, the edge's *Fourier record*, are built once per edge from θ; an
// evaluation is then 2L fused multiply-adds per component over the harmonics (cos kx, sin kx)
// of its row, computed once per (b, i) and shared over the edges, with no rotation chain.
//
// Only values use this form. The backward keeps the chain's state-free walk: its gradients
// need n's transverse part to the rounding of a rotation near the poles, where the fast
// measure's slope grows like 1/r, and a sum of harmonics that cancels to r ≈ 0 only gives it
// to the rounding of the coefficients.
#pragma once

#include <cmath>

#include "src/core/hd.hpp"
#include "src/qkan/edge_math.hpp"

namespace lockstep::qkan::detail {

/// Whether the ansatz, with or without the encoding, has the Fourier form.
constexpr LOCKSTEP_HD bool has_fourier_form(Ansatz a, bool encoding) {
  return !encoding && a != Ansatz::real && a != Ansatz::px;
}

/// Coefficients per component: a_0, then (a_k, b_k) for k = 1..L at 2k − 1, 2k.
constexpr LOCKSTEP_HD int fourier_width(int L) { return 2 * L + 1; }
/// Values in a Fourier record: three components.
constexpr LOCKSTEP_HD int fourier_record_size(int L) { return 3 * fourier_width(L); }

/// Writes the Fourier record of one edge from its rotation-chain record `chain` (raw x;
/// schedule.hpp's layout: n0, then per rep the offset's and the constant gates' cos and sin):
/// r[m·W + j], W = fourier_width(L), the coefficients of n_m in the order above.
///
/// Built on complex coefficients z_mk (n_m = Σ_{|k|≤L} z_mk e^{ikx}, z_{m,−k} = conj z_mk, so
/// a_k = 2 Re z_k, b_k = −2 Im z_k), starting from the prefix state n0 (a constant). A constant
/// gate rotates every harmonic's pair (z_u, z_v) by its angle. The data gate R_D(x + φ)
/// multiplies p = n_u + i n_v by e^{i(x + φ)}; with P_j = z_uj + i z_vj, Q_j = z_uj − i z_vj
/// (P_{−1} = conj Q_1) and ω = e^{iφ}:
///   z'_uk = (ω P_{k−1} + conj(ω) Q_{k+1}) / 2,   z'_vk = (ω P_{k−1} − conj(ω) Q_{k+1}) / 2i.
/// K bounds the harmonics held (0..L, and one zero past the degree): K = L + 2 with L compiled
/// in keeps the coefficients in registers.
template <class M, class T, int K = kFusedMaxReps + 2>
LOCKSTEP_HD void build_fourier_record(Ansatz a, int L, const T* chain, T* r) {
  const Schedule s = generic_schedule(a);
  M zr[3][K], zi[3][K];
  for (int m = 0; m < 3; ++m)
    for (int k = 0; k < K; ++k) zr[m][k] = zi[m][k] = M(0);
  for (int m = 0; m < 3; ++m) zr[m][0] = M(chain[m]);
  const int u = (s.data_axis + 1) % 3, v = (s.data_axis + 2) % 3;
  const T* q = chain + 3;
  for (int l = 0; l < L; ++l, q += 2 + 2 * s.nconst) {  // degree l -> l + 1
    const M wc = q[0], ws = q[1];
    M nur[K], nui[K], nvr[K], nvi[K];
    for (int k = 0; k <= l + 1; ++k) {
      // P_{k−1} (conj Q_1 at k = 0) and Q_{k+1}
      const M pr = k == 0 ? zr[u][1] + zi[v][1] : zr[u][k - 1] - zi[v][k - 1];
      const M pi = k == 0 ? zr[v][1] - zi[u][1] : zi[u][k - 1] + zr[v][k - 1];
      const M qr = zr[u][k + 1] + zi[v][k + 1], qi = zi[u][k + 1] - zr[v][k + 1];
      const M ar = wc * pr - ws * pi, ai = wc * pi + ws * pr;  // ω P
      const M br = wc * qr + ws * qi, bi = wc * qi - ws * qr;  // conj(ω) Q
      nur[k] = (ar + br) / 2, nui[k] = (ai + bi) / 2;
      nvr[k] = (ai - bi) / 2, nvi[k] = (br - ar) / 2;
    }
    for (int k = 0; k <= l + 1; ++k) zr[u][k] = nur[k], zi[u][k] = nui[k], zr[v][k] = nvr[k], zi[v][k] = nvi[k];
    for (int j = 0; j < s.nconst; ++j) {  // the constant gates, on harmonics 0..l + 1
      const int cu = (s.const_axis[j] + 1) % 3, cv = (s.const_axis[j] + 2) % 3;
      const M c = q[2 + 2 * j], sn = q[3 + 2 * j];
      for (int k = 0; k <= l + 1; ++k) {
        const M ur = c * zr[cu][k] - sn * zr[cv][k], ui = c * zi[cu][k] - sn * zi[cv][k];
        zr[cv][k] = sn * zr[cu][k] + c * zr[cv][k];
        zi[cv][k] = sn * zi[cu][k] + c * zi[cv][k];
        zr[cu][k] = ur, zi[cu][k] = ui;
      }
    }
  }
  const int W = fourier_width(L);
  for (int m = 0; m < 3; ++m) {
    r[m * W] = static_cast<T>(zr[m][0]);
    for (int k = 1; k <= L; ++k) {
      r[m * W + 2 * k - 1] = static_cast<T>(2 * zr[m][k]);
      r[m * W + 2 * k] = static_cast<T>(-2 * zi[m][k]);
    }
  }
}

/// cos kx and sin kx for k = 1..L from c = cos x, s = sin x (angle addition; the error grows
/// like k ulp, a few ulp at the compiled reps).
template <int L, class T> struct Harmonics { T c[L], s[L]; };
template <int L, class T> LOCKSTEP_HD Harmonics<L, T> harmonics(T c, T s) {
  Harmonics<L, T> h;
  h.c[0] = c, h.s[0] = s;
  LOCKSTEP_UNROLL
  for (int k = 1; k < L; ++k) {
    h.c[k] = std::fma(h.c[k - 1], c, -h.s[k - 1] * s);
    h.s[k] = std::fma(h.s[k - 1], c, h.c[k - 1] * s);
  }
  return h;
}

/// Σ_j coef[j]·φ_j over the harmonics h, coef in the record's order (a_0, a_1, b_1, ...).
template <int L, class T> LOCKSTEP_HD T fourier_sum(const T* coef, const Harmonics<L, T>& h) {
  T acc = coef[0];
  LOCKSTEP_UNROLL
  for (int k = 0; k < L; ++k) acc = std::fma(coef[2 * k + 1], h.c[k], std::fma(coef[2 * k + 2], h.s[k], acc));
  return acc;
}

}  // namespace lockstep::qkan::detail
