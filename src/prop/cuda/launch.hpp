// The CUDA engine's kernels (kernels.cu) as host functions, for engine.cpp: this header is
// C++17 and names only CUDA's vector types, so the engine itself compiles as C++20 host code.
// Every launcher runs asynchronously on `stream`; rows are (members × n) arrays, `rows` their
// number.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

namespace lockstep::prop::cuda {

template <class R> struct ComplexOf;
template <> struct ComplexOf<double> { using type = double2; };
template <> struct ComplexOf<float> { using type = float2; };
template <class R> using C = typename ComplexOf<R>::type;

/// A linear combination of rows at one node: D ⊙ (Y_f + h Σ_f w_f F_f) + Y_d + h Σ_d w_d G_d,
/// with D the member group's exponential row (none: 1), Y_f and Y_d optional rows of weight 1
/// (the step's start, directly or in the interaction frame) and h read on the device from
/// `step` (nullptr: 1), so that a captured trial replays for any step length.
template <class R> struct Combination {
  static constexpr int kMaxTerms = 8;
  const C<R>* frame_y0 = nullptr;
  const C<R>* direct_y0 = nullptr;
  int frames = 0, directs = 0;
  const C<R>* frame[kMaxTerms];
  R frame_weight[kMaxTerms];
  const C<R>* direct[kMaxTerms];
  R direct_weight[kMaxTerms];
  const double* step = nullptr;
  const C<R>* exponential = nullptr;  // group g's row at exponential + g·group_stride
  std::int64_t group_stride = 0;
};

/// Where the measures of rows go (measures.hpp's, as measures() computes them): out[4m ..] for
/// member m, from the grid's ω (n values), ω0, dt and ħ.
struct MeasureTarget {
  double* out = nullptr;
  const double* omega = nullptr;
  double omega0 = 0, dt = 0, hbar = 0;
};

/// The error norm of controller.hpp formed by an FSAL stage's evaluation, whose input is the
/// candidate y1, so that no pass of its own reads the error's rows again: the estimate is
/// `partial` (the error's combination without the FSAL stage's term, formed with the input
/// from the same rows and parked in `scratch`) plus h·fsal_weight·N, N the evaluation's
/// result. out[2m], out[2m + 1] as norms() writes them; y0 the step's start; kind, rtol and
/// atol per member.
template <class R> struct ErrorTarget {
  double* out = nullptr;  // nullptr: no norm
  Combination<R> partial;
  R fsal_weight = 0;
  C<R>* scratch = nullptr;
  const C<R>* y0 = nullptr;
  const C<R>* y1 = nullptr;
  const int* kind = nullptr;
  const double* rtol = nullptr;
  const double* atol = nullptr;
};

/// Where an evaluation of N puts its results, each optional (nullptr: not written): the stage
/// input it evaluated, N, k = D ⊙ N with D the group's row of `k_exponential`, the candidate
/// `solution` + h·solution_weight·N (the last stage of a tableau whose solution takes that
/// stage's N as a direct term: no pass of its own forms the candidate), and the measures of the
/// stage input (the FSAL stage's input is the candidate: the acceptance needs no transform),
/// and the error norm (ErrorTarget; fused_evaluation only).
template <class R> struct StageOutput {
  C<R>* input = nullptr;
  C<R>* n = nullptr;
  C<R>* k = nullptr;
  const C<R>* k_exponential = nullptr;  // group g's row at k_exponential + g·group_stride
  std::int64_t group_stride = 0;
  C<R>* candidate = nullptr;
  Combination<R> solution;  // the solution's other terms
  R solution_weight = 0;
  MeasureTarget measures;
  ErrorTarget<R> error;
};

/// The members from `first` on of a combination whose rows hold n points per member: every row
/// pointer moved on by `first` rows (the exponentials are per group and stay), so that a kernel
/// over those members sees them as members 0, 1, ….
template <class R> Combination<R> from_member(Combination<R> c, std::int64_t first, std::int64_t n) {
  const std::int64_t offset = first * n;
  if (c.frame_y0) c.frame_y0 += offset;
  if (c.direct_y0) c.direct_y0 += offset;
  for (int t = 0; t < c.frames; ++t) c.frame[t] += offset;
  for (int t = 0; t < c.directs; ++t) c.direct[t] += offset;
  return c;
}

/// The same for the rows (and measures) an evaluation writes.
template <class R> StageOutput<R> from_member(StageOutput<R> s, std::int64_t first, std::int64_t n) {
  const std::int64_t offset = first * n;
  for (C<R>** row : {&s.input, &s.n, &s.k, &s.candidate})
    if (*row) *row += offset;
  s.solution = from_member(s.solution, first, n);
  if (s.measures.out) s.measures.out += 4 * first;
  ErrorTarget<R>& e = s.error;
  if (e.out) {
    e.out += 2 * first;
    e.partial = from_member(e.partial, first, n);
    e.scratch += offset;
    e.y0 += offset;
    e.y1 += offset;
    e.kind += first;
    e.rtol += first;
    e.atol += first;
  }
  return s;
}

/// out[g, d, k] = e^{L[g, k]·x_d} for the exponents x_d (already times h), computed in double.
struct Exponents {
  static constexpr int kMax = 16;
  int count = 0;
  double x[kMax];
};

constexpr int kReduceThreads = 256;

/// out = the combination at every point of every member (group: each member's group).
template <class R>
void combine(const Combination<R>& c, const int* group, C<R>* out, std::int64_t n, std::int64_t rows,
             cudaStream_t stream);
/// out[g, d, k] = e^{L[g, k]·x_d} for groups × e.count × n values.
template <class R>
void exponentials(const double2* linear, const Exponents& e, C<R>* out, std::int64_t n, std::int64_t groups,
                  cudaStream_t stream);
/// r = |a|²
template <class R> void intensity(const C<R>* a, R* r, std::int64_t n, std::int64_t rows, cudaStream_t stream);
/// h ← h · conj(H_R of the member's group), rows of `half` values.
template <class R>
void raman_product(C<R>* h, const C<R>* response, const int* group, std::int64_t half, std::int64_t rows,
                   cudaStream_t stream);
/// a ← a · (kerr_m |a|² + raman_m r); r = nullptr: no Raman term.
template <class R>
void kerr_raman(C<R>* a, const R* r, const R* kerr, const R* raman, std::int64_t n, std::int64_t rows,
                cudaStream_t stream);
/// N = i·g·a, g = γ s(ω) of the member's group, into `out`'s rows.
template <class R>
void finish_stage(const C<R>* a, const R* gamma_shock, const int* group, const StageOutput<R>& out, std::int64_t n,
                  std::int64_t rows, cudaStream_t stream);
/// values ← values · scale · window of the member's group, for the members whose flag is set.
template <class R>
void window(C<R>* values, const R* window, const int* group, const unsigned char* flag, R scale, std::int64_t n,
            std::int64_t rows, cudaStream_t stream);
/// to ← from for the members whose flag is set.
template <class R>
void copy_flagged(const C<R>* from, C<R>* to, const unsigned char* flag, std::int64_t n, std::int64_t rows,
                  cudaStream_t stream);
/// Per member (one block each): the error norm of controller.hpp with the estimate formed on
/// the fly from `error` (estimated = false: no estimate, norm NaN) and whether the candidate
/// y1 is finite: out[2m] = norm, out[2m + 1] = 1 or 0. kind: ErrorNorm as int.
template <class R>
void norms(const Combination<R>& error, bool estimated, const int* group, const C<R>* y0, const C<R>* y1,
           const int* kind, const double* rtol, const double* atol, double* out, std::int64_t members, std::int64_t n,
           cudaStream_t stream);
/// Per member (one block each) measures.hpp's measures from the spectrum y and the time samples
/// a = n·A: out[4m ..] = energy, photon number, peak power, spectral centroid.
template <class R>
void measures(const C<R>* y, const C<R>* a, const double* omega, double omega0, double dt, double hbar, double* out,
              std::int64_t members, std::int64_t n, cudaStream_t stream);

/// The fused evaluation's L2 prefetch (CudaOptions::l2_prefetch): as its transforms start, the
/// block of member m asks L2 for the stage rows of member m + ahead, whose block takes a
/// multiprocessor next (blocks start in index order, `ahead` of them resident at once), and for
/// the rows its own candidate reads after the transforms: the first `bytes` of each member's
/// part of each row, bytes = budget / rows (a multiple of 16, at most a row). budget 0: none.
struct Prefetch {
  std::int64_t ahead = 0;
  std::int64_t budget = 0;  // bytes per block
};

/// Whether this build has the fused evaluation of N (fused_evaluation.cu) for rows of n points
/// in precision R.
template <class R> bool fused_evaluation_supported(std::int64_t n);
/// Sets the fused kernels' shared-memory limits for n points (once, before any launch or
/// capture); returns how many blocks of the evaluation kernel (with the Raman term or not) a
/// multiprocessor holds at once.
template <class R> int prepare_fused_evaluation(std::int64_t n, bool raman);
/// One evaluation of N for every member in one kernel: the stage input `input` formed, its
/// transform to time, a ← a · (kerr_m |a|² + raman_m h_R ⊛ |a|²) (raman_response = nullptr: no
/// Raman term), the transform back and N = i·γs(ω)·a into `out`, as the cuFFT path's
/// combine, transforms, intensity, raman_product, kerr_raman and finish_stage compute them.
template <class R>
void fused_evaluation(const Combination<R>& input, const StageOutput<R>& out, const int* group,
                      const C<R>* raman_response, const R* gamma_shock, const R* kerr, const R* raman, std::int64_t n,
                      std::int64_t rows, const Prefetch& prefetch, cudaStream_t stream);
/// measures() in one kernel, for n where fused_evaluation_supported<R>(n): a thread block per
/// member reads the spectrum y once and transforms it to time in registers (no time row).
template <class R>
void fused_measures(const C<R>* y, const double* omega, double omega0, double dt, double hbar, double* out,
                    std::int64_t members, std::int64_t n, cudaStream_t stream);

}  // namespace lockstep::prop::cuda
