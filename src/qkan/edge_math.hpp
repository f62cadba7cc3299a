// Per-edge math shared by every backend (schedule.hpp's layouts):
//   build_record  θ / w / c of one edge -> its constant record (θ trig, the prefix state n0)
//   fold_edge     one edge's gradient slots -> its θ / w / c gradient contributions
// Both are written over a math type M (double on the CPU, the kernel's precision under CUDA)
// and accessor callables, so the CPU tables and the CUDA blocks compute the same thing.
#pragma once

#include <cmath>

#include "src/core/hd.hpp"
#include "src/qkan/schedule.hpp"

namespace lockstep::qkan::detail {

/// The generic schedule of an ansatz other than `real` (callers check).
constexpr LOCKSTEP_HD Schedule generic_schedule(Ansatz a) {
  switch (a) {
    case Ansatz::rpz: return ScheduleOf<Ansatz::rpz>::value;
    case Ansatz::px: return ScheduleOf<Ansatz::px>::value;
    case Ansatz::mix: return ScheduleOf<Ansatz::mix>::value;
    default: return ScheduleOf<Ansatz::pz>::value;
  }
}

constexpr LOCKSTEP_HD int edge_record_size(Ansatz a, int reps) {
  return a == Ansatz::real ? real_record_size() : record_size(generic_schedule(a), reps);
}
constexpr LOCKSTEP_HD int edge_slot_count(Ansatz a, int reps, bool enc) {
  return a == Ansatz::real ? real_slot_count(enc) : slot_count(generic_schedule(a), reps, enc);
}

/// Rotates n by φ about `axis`. Components are named by constant indices only (a switch, not
/// n[(axis + 1) % 3]), so the CUDA compiler keeps n in registers.
template <class M> LOCKSTEP_HD void bloch_rotate(M (&n)[3], int axis, M phi) {
  const M c = std::cos(phi), s = std::sin(phi);
  auto turn = [&](M& u, M& v) {
    const M nu = c * u - s * v;
    v = s * u + c * v;
    u = nu;
  };
  switch (axis) {
    case kX: turn(n[1], n[2]); break;
    case kY: turn(n[2], n[0]); break;
    default: turn(n[0], n[1]); break;
  }
}

/// The component of W along `axis` (by constant indices, as above).
template <class M> LOCKSTEP_HD M axis_component(const M (&W)[3], int axis) {
  switch (axis) {
    case kX: return W[0];
    case kY: return W[1];
    default: return W[2];
  }
}

/// The prefix gates (axis, θ column of row 0), in time order; returns their count.
LOCKSTEP_HD int prefix_gates(const Schedule& s, int axes[3], int cols[3]) {
  int n = 0;
  if (s.offset_col >= 0) {
    axes[n] = s.data_axis;
    cols[n++] = s.offset_col;
  }
  for (int k = 0; k < s.nconst; ++k) {
    axes[n] = s.const_axis[k];
    cols[n++] = s.const_col[k];
  }
  return n;
}

/// Whether rep 0's data-gate offset R_D(θ[1][off]) is applied to the prefix state n0 rather than
/// added to rep 0's data angle: with raw x it commutes with R_D(x), so the record stores
/// n0 = R_D(θ[1][off])·(prefix) and the offset (cos, sin) = (1, 0) for rep 0, and the circuits
/// skip rep 0's angle addition. The slots W0 are then taken at that n0 (fold_edge un-rotates
/// them); rep 0's offset gradient stays its Σ de_0 (the walk's w_D is unchanged by R_D).
constexpr LOCKSTEP_HD bool offset_in_prefix(const Schedule& s, bool enc) { return !enc && s.offset_col >= 0; }

/// Writes the record of one edge into r. th(row, col) reads its θ; w(l), c(l) its preacts
/// (read only with the encoding active).
template <class M, class T, class ThetaAt, class WAt, class CAt>
LOCKSTEP_HD void build_record(Ansatz a, int reps, bool enc, ThetaAt th, WAt w, CAt c, T* r) {
  if (a == Ansatz::real) {
    M theta_sum = 0, w_sum = 0, c_sum = 0;
    for (int l = 0; l < reps; ++l) {
      theta_sum += th(l, 0);
      if (enc) {
        w_sum += w(l);
        c_sum += c(l);
      }
    }
    r[0] = static_cast<T>(enc ? w_sum : std::cos(theta_sum));
    r[1] = static_cast<T>(enc ? c_sum - theta_sum : std::sin(theta_sum));
    return;
  }
  const Schedule s = generic_schedule(a);
  int axes[3], cols[3];
  const int np = prefix_gates(s, axes, cols);
  M n[3] = {1, 0, 0};
  LOCKSTEP_UNROLL
  for (int k = 0; k < np; ++k) bloch_rotate<M>(n, axes[k], th(0, cols[k]));
  const bool folded = offset_in_prefix(s, enc);
  if (folded) bloch_rotate<M>(n, s.data_axis, th(1, s.offset_col));
  for (int k = 0; k < 3; ++k) r[k] = static_cast<T>(n[k]);
  T* q = r + 3;
  for (int l = 0; l < reps; ++l) {
    const M off = s.offset_col >= 0 && !(folded && l == 0) ? M(th(l + 1, s.offset_col)) : M(0);
    if (enc) {
      q[0] = static_cast<T>(w(l));
      q[1] = static_cast<T>(c(l) + off);
    } else {
      q[0] = static_cast<T>(std::cos(off));
      q[1] = static_cast<T>(std::sin(off));
    }
    for (int k = 0; k < s.nconst; ++k) {
      const M phi = th(l + 1, s.const_col[k]);
      q[2 + 2 * k] = static_cast<T>(std::cos(phi));
      q[3 + 2 * k] = static_cast<T>(std::sin(phi));
    }
    q += 2 + 2 * s.nconst;
  }
}

/// Turns one edge's slots `sl` into gradient contributions: add_theta(row, col, v) for its θ
/// (`want_theta`), add_w(l, v) and add_c(l, v) for its preacts (encoding only). The fold is
/// linear in the slots, so partial sums over the batch may be folded separately and added.
template <class M, class ThetaAt, class AddTheta, class AddW, class AddC>
LOCKSTEP_HD void fold_edge(Ansatz a, int reps, bool enc, const M* sl, ThetaAt th, bool want_theta, AddTheta add_theta,
                           AddW add_w, AddC add_c) {
  if (a == Ansatz::real) {
    for (int l = 0; l < reps; ++l) {
      if (want_theta) add_theta(l, 0, -sl[0]);
      if (enc) {
        add_c(l, sl[0]);
        add_w(l, sl[1]);
      }
    }
    return;
  }
  const Schedule s = generic_schedule(a);
  if (want_theta) {
    // Prefix gradients from W0 = Σ_b n0 × (cotangent at n0): walk the prefix gates backwards;
    // a gate's dφ is the component of W (= n × g after it) along its axis, then W is un-rotated.
    int axes[3], cols[3];
    const int np = prefix_gates(s, axes, cols);
    M W[3] = {sl[0], sl[1], sl[2]};
    if (offset_in_prefix(s, enc)) bloch_rotate<M>(W, s.data_axis, -th(1, s.offset_col));
    LOCKSTEP_UNROLL
    for (int k = np - 1; k >= 0; --k) {
      add_theta(0, cols[k], axis_component(W, axes[k]));
      bloch_rotate<M>(W, axes[k], -th(0, cols[k]));
    }
  }
  const M* q = sl + 3;
  for (int l = 0; l < reps; ++l) {
    if (want_theta) {
      if (s.offset_col >= 0) add_theta(l + 1, s.offset_col, q[0]);
      for (int k = 0; k < s.nconst; ++k) add_theta(l + 1, s.const_col[k], q[1 + k]);
    }
    if (enc) {
      add_c(l, q[0]);
      add_w(l, q[1 + s.nconst]);
    }
    q += 1 + s.nconst + (enc ? 1 : 0);
  }
}

}  // namespace lockstep::qkan::detail
