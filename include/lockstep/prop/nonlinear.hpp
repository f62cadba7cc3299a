// The nonlinear operator of the GNLSE over a batch of members (the hot path: the steppers call
// it once per stage for every member together):
//
//     N(Ã) = i γ s(ω) · F{ A · [ (1−f_R)|A|² + f_R (h_R ⊛ |A|²) ] },   A = F⁻¹{Ã},
//
// with F = FFTW_BACKWARD and F⁻¹ = FFTW_FORWARD / n (grid.hpp), spectra in FFT order.
#pragma once

#include <complex>
#include <cstdint>
#include <span>

#include "lockstep/prop/grid.hpp"
#include "lockstep/prop/physics.hpp"

namespace lockstep::prop {

/// Evaluates N for up to `capacity` members on one grid. Members may differ in γ, f_R, H_R and
/// self-steepening; several rows may share one MemberPhysics. Work is spread over the members
/// with lockstep::parallel_for, each thread running single-threaded one-dimensional FFTW plans
/// on its own scratch rows (measured faster on 2 cores than FFTW's threads over a
/// many-transform plan, see bench/prop_rhs.cpp), so any count 1..capacity costs only what it
/// uses. Plans are made once, in the constructor; evaluate() allocates nothing.
///
/// Planning (PlanRigor): FFTW_MEASURE makes the transforms of 2^13 points about 1.6× faster than
/// FFTW_ESTIMATE (2^16: 1.2×) but costs about 2 s of planning at 2^13 (2^16: 7 s), once per
/// process and size (FFTW keeps the wisdom). PlanRigor::measure (the default) measures up to
/// 2^16 points and estimates above; PlanRigor::estimate always estimates (short runs, tests).
///
/// Per member: A by one complex transform; without Raman one pass forms |A|²A; with Raman one
/// pass forms |A|² (real), a real-to-complex transform, one pass over the n/2 + 1 values
/// multiplies by H_R, a complex-to-real transform gives h_R ⊛ |A|², one pass forms the Kerr +
/// Raman product; a complex transform back and one pass applies iγ·s(ω) while writing `out`.
/// All rows stay in cache between their transforms. The plans assume FFTW's default of one
/// thread per plan (fftw_plan_with_nthreads(1)).
enum class PlanRigor { measure, estimate };

class NonlinearBatch {
 public:
  /// threads ≤ 0: lockstep::num_threads() at construction. Throws std::invalid_argument for
  /// capacity < 1.
  NonlinearBatch(const Grid& grid, std::int64_t capacity, int threads = 0, PlanRigor rigor = PlanRigor::measure);
  ~NonlinearBatch();
  NonlinearBatch(const NonlinearBatch&) = delete;
  NonlinearBatch& operator=(const NonlinearBatch&) = delete;

  /// out[m] = N(in[m]) for m < physics.size() (≤ capacity). `in` and `out` hold rows of n
  /// spectral values (FFT order), row m at m·n; `out` may be `in` itself (each row is read
  /// whole before its result is written) but must not overlap it otherwise. Each MemberPhysics
  /// must belong to this grid's size. Rows aligned as fftw_malloc aligns are read directly;
  /// others are copied first (same result). One call at a time per object (the scratch rows
  /// are the object's).
  void evaluate(std::span<const MemberPhysics* const> physics, const std::complex<double>* in,
                std::complex<double>* out);

  /// One-dimensional transforms per member per evaluation: 2 without Raman, 4 with (of which
  /// two are real transforms of the intensity, about half the cost of a complex one).
  std::int64_t ffts_per_evaluation(const MemberPhysics& physics) const;

  /// Runs exactly the transforms evaluate() runs for `physics` (same plans, same threads, on
  /// `rows`, which it overwrites) and none of the element-wise work: the cost floor that
  /// bench/prop_rhs.cpp compares evaluate() against.
  void transforms_only(std::span<const MemberPhysics* const> physics, std::complex<double>* rows);

  std::int64_t points() const { return n_; }
  std::int64_t capacity() const { return capacity_; }

 private:
  struct Rows {
    std::complex<double>* a;  // the field (n values)
    double* r;                // the intensity and its convolution (n reals)
    std::complex<double>* h;  // the intensity's half spectrum (n/2 + 1 values)
  };
  Rows thread_rows(int thread) const;
  void check(std::span<const MemberPhysics* const> physics) const;
  void evaluate_member(const MemberPhysics& p, const std::complex<double>* in, std::complex<double>* out, int thread);
  void destroy_plans();

  std::int64_t n_, capacity_;
  int threads_;
  std::int64_t stride_ = 0;                  // scratch values per thread
  std::complex<double>* scratch_ = nullptr;  // per thread: Rows
  // fftw_plan handles (kept opaque here so that fftw3.h stays out of the public headers):
  void* to_time_ = nullptr;              // FFTW_FORWARD, out of place (input row → a)
  void* to_time_inplace_ = nullptr;      // FFTW_FORWARD in place (misaligned input, copied to a)
  void* to_spectrum_inplace_ = nullptr;  // FFTW_BACKWARD in place
  void* intensity_forward_ = nullptr;    // r2c, r → h
  void* intensity_backward_ = nullptr;   // c2r, h → r
  int input_alignment_ = 0;              // fftw_alignment_of the planned input
};

/// The same operator for one member written plainly (one plan per call, separate loops, the
/// Raman convolution through H_R): the reference the batch is tested against.
void nonlinear_reference(const MemberPhysics& physics, const Grid& grid, const std::complex<double>* in,
                         std::complex<double>* out);

}  // namespace lockstep::prop
