// The fused path's view of an ansatz (docs/QKAN.md §1, "cheaper exact forms"): the circuit acts on
// the Bloch vector n, starting at (1,0,0) after H. Every ansatz but `real` is
//   prefix:  [R_D(θ[0][off])] then the constant gates of θ row 0      -> n0, a per-edge constant
//   rep l:   R_D(e_l + θ[l+1][off])  then the constant gates of θ row l+1
// with D the data axis, `off` the θ column merged into the data rotation (pz only: adjacent Z
// rotations merge), and the constant gates a list of rotations (axis, θ column). px's data gate
// is RX(arccos e): cos = e, sin = √(1 − e²), no trig. `real` collapses to one sinusoid,
// ⟨Z⟩ = (−1)^{L+1} sin(Σ e_l − Σ θ_l), and has its own kernel.
//
// Bloch rotations by φ about axis a ∈ {X=0, Y=1, Z=2} act on the cyclic pair (u, v) =
// ((a+1) mod 3, (a+2) mod 3): u' = c·u − s·v, v' = s·u + c·v; a × n = −n_v ê_u + n_u ê_v.
#pragma once

#include "lockstep/qkan/ansatz.hpp"
#include "src/core/hd.hpp"

namespace lockstep::qkan::detail {

/// Largest reps the fused kernels implement (their per-rep trig lives in fixed-size arrays).
inline constexpr int kFusedMaxReps = 16;

enum Axis : int { kX = 0, kY = 1, kZ = 2 };

struct Schedule {
  int data_axis;
  int offset_col;  ///< θ column merged into the data rotation, or -1
  int nconst;      ///< constant gates per rep (and in the prefix)
  int const_axis[2];
  int const_col[2];
  bool arccos;  ///< px: the data gate is RX(arccos e)
};

template <Ansatz A> struct ScheduleOf;
template <> struct ScheduleOf<Ansatz::pz> { static constexpr Schedule value{kZ, 0, 1, {kY, 0}, {1, 0}, false}; };
template <> struct ScheduleOf<Ansatz::rpz> { static constexpr Schedule value{kZ, -1, 1, {kY, 0}, {0, 0}, false}; };
template <> struct ScheduleOf<Ansatz::px> { static constexpr Schedule value{kX, -1, 1, {kZ, 0}, {0, 0}, true}; };
template <> struct ScheduleOf<Ansatz::mix> { static constexpr Schedule value{kY, -1, 2, {kZ, kX}, {0, 1}, false}; };

/// Layout of the per-edge constant record (T values) and gradient slots (double), generic ansätze:
///   record: n0[3], then per rep: d0, d1, (cos, sin) of each constant gate
///           with d0, d1 = cos, sin of θ[l+1][off] for raw x, or w_l, c_l + θ[l+1][off] when encoding;
///           with raw x, rep 0's offset turns n0 instead, and its d0, d1 = 1, 0 (offset_in_prefix)
///   slots:  W0[3] (Σ_b n0 × cotangent at n0), then per rep: Σ de_l, Σ dφ of each constant gate,
///           and Σ x·de_l when encoding
/// `real`:   record: cos Θ, sin Θ (raw, Θ = Σ θ_l) or Σ w_l, Σ c_l − Θ (encoding); slots: Σ dS, Σ x·dS.
constexpr LOCKSTEP_HD int record_size(const Schedule& s, int reps) { return 3 + reps * (2 + 2 * s.nconst); }
constexpr LOCKSTEP_HD int slot_count(const Schedule& s, int reps, bool enc) {
  return 3 + reps * (1 + s.nconst + (enc ? 1 : 0));
}
constexpr LOCKSTEP_HD int real_record_size() { return 2; }
constexpr LOCKSTEP_HD int real_slot_count(bool enc) { return enc ? 2 : 1; }

}  // namespace lockstep::qkan::detail
