// The propagation engine's math at one point of a member's row, written once for the host
// passes (nonlinear.cpp, controller.cpp, measures.cpp) and the CUDA kernels (cuda/kernels.cu,
// cuda/fused_evaluation.cu), so that the CPU engine is the CUDA engine's reference by
// construction. A complex value travels as its two parts: the host works on interleaved
// doubles and std::complex, the device on float2/double2.
#pragma once

#include <cmath>

#include "src/core/hd.hpp"

namespace lockstep::prop::pointwise {

/// |a|² of a = re + i·im.
template <class R> LOCKSTEP_HD R intensity(R re, R im) { return re * re + im * im; }

/// The factor that multiplies the field in the nonlinear product at one point:
/// kerr·|a|² + raman·r, with r the Raman convolution h_R ⊛ |a|² there (0 without Raman).
/// kerr = (1 − f_R)·s and raman = f_R·s' carry the transforms' scales s, s'.
template <class R> LOCKSTEP_HD R kerr_raman_factor(R intensity, R kerr, R raman, R r) {
  return kerr * intensity + raman * r;
}

/// x ← x·conj(y): the intensity's half spectrum times the Raman response's. The real
/// transforms' forward sign is e^{−i}; for real signals their spectrum is the conjugate of the
/// convention's, so the product takes conj(H_R) and gives the same circular convolution.
template <class R> LOCKSTEP_HD void multiply_conj(R& xr, R& xi, R yr, R yi) {
  const R re = xr * yr + xi * yi, im = xi * yr - xr * yi;
  xr = re;
  xi = im;
}

/// N = i·s·a at one point (s real: γ times the shock factor there): (re, im) of the result.
template <class R> LOCKSTEP_HD void times_i(R re, R im, R s, R& out_re, R& out_im) {
  out_re = -s * im;
  out_im = s * re;
}

/// A point's scaled error |err| / (atol + rtol·max(|y0|, |y1|)) (controller.hpp's max and rms
/// norms) from the squared magnitudes of the error estimate and the solutions at both ends.
LOCKSTEP_HD double scaled_error(double err2, double y0_2, double y1_2, double rtol, double atol) {
  return sqrt(err2) / (atol + rtol * fmax(sqrt(y0_2), sqrt(y1_2)));
}

/// The weak norm ‖err‖ / (rtol·max(‖y0‖, ‖y1‖, atol)) from the rows' sums of squares.
LOCKSTEP_HD double weak_norm(double err2_sum, double y0_2_sum, double y1_2_sum, double rtol, double atol) {
  return sqrt(err2_sum) / (rtol * fmax(fmax(sqrt(y0_2_sum), sqrt(y1_2_sum)), atol));
}

/// A spectral point's share of the photon number before the grid's scale: |Ã|² / (ω0 + Δω).
LOCKSTEP_HD double photons_at(double power, double omega0, double omega) { return power / (omega0 + omega); }

// The measures of measures.hpp from a row's sums over its n spectral points Ã_k (n·dt the
// window): the energy from Σ|Ã_k|², the photon number from Σ photons_at, the spectral centroid
// from Σ|Ã_k|² and Σ|Ã_k|²·Δω_k (Δω weighted, ω0 added after: the sum of the offsets keeps its
// digits).
LOCKSTEP_HD double energy_from(double total, double n, double dt) { return total * dt / n; }
LOCKSTEP_HD double photons_from(double photons, double n, double dt, double hbar) { return photons * dt / (n * hbar); }
LOCKSTEP_HD double centroid_from(double total, double weighted, double omega0) {
  return total > 0 ? omega0 + weighted / total : omega0;
}

}  // namespace lockstep::prop::pointwise
