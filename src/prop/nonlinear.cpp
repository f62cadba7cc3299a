#include "lockstep/prop/nonlinear.hpp"

#include <algorithm>
#include <vector>

#include "fftw_support.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/core/parallel.hpp"
#include "lockstep/prop/transform.hpp"
#include "pointwise.hpp"

namespace lockstep::prop {

namespace {

constexpr const char* kWhere = "prop.nonlinear";

fftw_plan plan(void* p) { return static_cast<fftw_plan>(p); }

/// Scratch rows are padded to a multiple of 8 values (128 bytes) so that every row has the
/// alignment of the first, the one the plans were made for.
std::int64_t padded(std::int64_t n) { return (n + 7) / 8 * 8; }

// The element-wise passes work on interleaved doubles: std::complex's operator* (NaN
// recovery through __muldc3) and std::norm (through std::abs) are far slower than the plain
// arithmetic the finite fields here need. Each pass is compiled for AVX2 as well as the
// baseline, picked at load time (GCC function multi-versioning).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define LOCKSTEP_PASS __attribute__((target_clones("avx2", "default")))
#else
#define LOCKSTEP_PASS
#endif

/// a_j ← a_j · |a_j|² · scale
LOCKSTEP_PASS void kerr_pass(double* a, std::int64_t n, double scale) {
  for (std::int64_t j = 0; j < n; ++j) {
    const double re = a[2 * j], im = a[2 * j + 1];
    const double g = pointwise::kerr_raman_factor(pointwise::intensity(re, im), scale, 0.0, 0.0);
    a[2 * j] = re * g;
    a[2 * j + 1] = im * g;
  }
}

/// r_j ← |a_j|²
LOCKSTEP_PASS void intensity_pass(const double* a, double* r, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) r[j] = pointwise::intensity(a[2 * j], a[2 * j + 1]);
}

/// x_k ← x_k · conj(y_k)
LOCKSTEP_PASS void multiply_conj_pass(double* x, const double* y, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) pointwise::multiply_conj(x[2 * k], x[2 * k + 1], y[2 * k], y[2 * k + 1]);
}

/// a_j ← a_j · (kerr·|a_j|² + raman·r_j)
LOCKSTEP_PASS void kerr_raman_pass(double* a, const double* r, std::int64_t n, double kerr, double raman) {
  for (std::int64_t j = 0; j < n; ++j) {
    const double re = a[2 * j], im = a[2 * j + 1];
    const double g = pointwise::kerr_raman_factor(pointwise::intensity(re, im), kerr, raman, r[j]);
    a[2 * j] = re * g;
    a[2 * j + 1] = im * g;
  }
}

/// out_k ← i·g_k · a_k (g real: γ times the shock factor)
LOCKSTEP_PASS void factor_pass(const double* a, const double* g, double* out, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) pointwise::times_i(a[2 * k], a[2 * k + 1], g[k], out[2 * k], out[2 * k + 1]);
}

double* re_im(std::complex<double>* p) { return reinterpret_cast<double*>(p); }
const double* re_im(const std::complex<double>* p) { return reinterpret_cast<const double*>(p); }

}  // namespace

NonlinearBatch::NonlinearBatch(const Grid& grid, std::int64_t capacity, int threads, PlanRigor rigor)
    : n_(grid.size()), capacity_(capacity), threads_(threads > 0 ? threads : num_threads()) {
  if (capacity < 1) invalid_argument(kWhere, "capacity = ", capacity, " must be ≥ 1");
  // Per thread: the field row a (n complex values), the intensity r (n reals, in the room of
  // n/2 complex values) and its half spectrum h (n/2 + 1 complex values), each padded.
  stride_ = padded(n_) + padded(n_ / 2) + padded(n_ / 2 + 1);
  scratch_ = fftw_alloc_complex_array(stride_ * threads_, kWhere);
  std::complex<double>* plan_input = nullptr;
  try {
    plan_input = fftw_alloc_complex_array(n_, kWhere);
    const bool measure = rigor == PlanRigor::measure && n_ <= (std::int64_t{1} << 16);
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    Rows rows = thread_rows(0);
    to_time_ = plan_dft_1d(n_, plan_input, rows.a, FFTW_FORWARD, flags, kWhere);
    to_time_inplace_ = plan_dft_1d(n_, rows.a, rows.a, FFTW_FORWARD, flags, kWhere);
    to_spectrum_inplace_ = plan_dft_1d(n_, rows.a, rows.a, FFTW_BACKWARD, flags, kWhere);
    intensity_forward_ = plan_r2c_1d(n_, rows.r, rows.h, flags, kWhere);
    intensity_backward_ = plan_c2r_1d(n_, rows.h, rows.r, flags, kWhere);
    input_alignment_ = fftw_alignment_of(reinterpret_cast<double*>(plan_input));
  } catch (...) {
    fftw_free(plan_input);
    destroy_plans();
    fftw_free(scratch_);
    throw;
  }
  fftw_free(plan_input);
  std::fill(scratch_, scratch_ + stride_ * threads_, std::complex<double>{});
}

void NonlinearBatch::destroy_plans() {
  for (void* p : {to_time_, to_time_inplace_, to_spectrum_inplace_, intensity_forward_, intensity_backward_})
    destroy_plan(plan(p));
  to_time_ = to_time_inplace_ = to_spectrum_inplace_ = intensity_forward_ = intensity_backward_ = nullptr;
}

NonlinearBatch::~NonlinearBatch() {
  destroy_plans();
  fftw_free(scratch_);
}

NonlinearBatch::Rows NonlinearBatch::thread_rows(int thread) const {
  std::complex<double>* base = scratch_ + stride_ * thread;
  return {base, reinterpret_cast<double*>(base + padded(n_)), base + padded(n_) + padded(n_ / 2)};
}

std::int64_t NonlinearBatch::ffts_per_evaluation(const MemberPhysics& physics) const {
  return physics.has_raman() ? 4 : 2;
}

void NonlinearBatch::check(std::span<const MemberPhysics* const> physics) const {
  const auto count = static_cast<std::int64_t>(physics.size());
  if (count > capacity_) invalid_argument(kWhere, count, " members exceed the batch capacity ", capacity_);
  for (std::int64_t m = 0; m < count; ++m) {
    const MemberPhysics* p = physics[static_cast<std::size_t>(m)];
    if (p == nullptr) invalid_argument(kWhere, "member ", m, " has no physics (null pointer)");
    if (p->points != n_ || static_cast<std::int64_t>(p->gamma_shock.size()) != n_ ||
        (p->has_raman() && static_cast<std::int64_t>(p->raman_spectrum.size()) != n_))
      invalid_argument(kWhere, "member ", m, "'s physics has ", p->points, " points but the batch grid has ", n_);
  }
}

void NonlinearBatch::evaluate_member(const MemberPhysics& p, const std::complex<double>* in, std::complex<double>* out,
                                     int thread) {
  const Rows rows = thread_rows(thread);
  std::complex<double>* a = rows.a;
  auto* in_mutable = const_cast<std::complex<double>*>(in);  // out-of-place c2c preserves its input
  if (fftw_alignment_of(reinterpret_cast<double*>(in_mutable)) == input_alignment_) {
    fftw_execute_dft(plan(to_time_), as_fftw(in_mutable), as_fftw(a));
  } else {
    std::copy(in, in + n_, a);
    fftw_execute_dft(plan(to_time_inplace_), as_fftw(a), as_fftw(a));
  }
  // a = n·A (FFTW_FORWARD is unnormalised); the scales below fold the 1/n factors in.
  const double n = static_cast<double>(n_);
  const double n3 = n * n * n;
  if (!p.has_raman()) {
    kerr_pass(re_im(a), n_, 1.0 / n3);  // A|A|² = a|a|²/n³
  } else {
    // The intensity is real: its convolution runs through FFTW's real transforms
    // (pointwise::multiply_conj says why the product takes conj(H_R)).
    intensity_pass(re_im(a), rows.r, n_);  // r = n²|A|²
    fftw_execute_dft_r2c(plan(intensity_forward_), rows.r, as_fftw(rows.h));
    multiply_conj_pass(re_im(rows.h), re_im(p.raman_spectrum.data()), n_ / 2 + 1);
    fftw_execute_dft_c2r(plan(intensity_backward_), as_fftw(rows.h), rows.r);  // n³·(h_R ⊛ |A|²)
    const double f = p.raman_fraction;
    kerr_raman_pass(re_im(a), rows.r, n_, (1 - f) / n3, f / (n3 * n));
  }
  fftw_execute_dft(plan(to_spectrum_inplace_), as_fftw(a), as_fftw(a));
  factor_pass(re_im(a), p.gamma_shock.data(), re_im(out), n_);
}

void NonlinearBatch::evaluate(std::span<const MemberPhysics* const> physics, const std::complex<double>* in,
                              std::complex<double>* out) {
  check(physics);
  // The lambda captures one reference, so std::function holds it without allocating.
  struct Job {
    NonlinearBatch* self;
    std::span<const MemberPhysics* const> physics;
    const std::complex<double>* in;
    std::complex<double>* out;
  } job{this, physics, in, out};
  parallel_for(
      static_cast<std::int64_t>(physics.size()),
      [&job](std::int64_t m, int thread) {
        const std::int64_t offset = m * job.self->n_;
        job.self->evaluate_member(*job.physics[static_cast<std::size_t>(m)], job.in + offset, job.out + offset, thread);
      },
      threads_);
}

void NonlinearBatch::transforms_only(std::span<const MemberPhysics* const> physics, std::complex<double>* rows) {
  check(physics);
  struct Job {
    NonlinearBatch* self;
    std::span<const MemberPhysics* const> physics;
    std::complex<double>* rows;
  } job{this, physics, rows};
  parallel_for(
      static_cast<std::int64_t>(physics.size()),
      [&job](std::int64_t m, int thread) {
        NonlinearBatch& s = *job.self;
        const Rows rows = s.thread_rows(thread);
        fftw_execute_dft(plan(s.to_time_), as_fftw(job.rows + m * s.n_), as_fftw(rows.a));
        if (job.physics[static_cast<std::size_t>(m)]->has_raman()) {
          fftw_execute_dft_r2c(plan(s.intensity_forward_), rows.r, as_fftw(rows.h));
          fftw_execute_dft_c2r(plan(s.intensity_backward_), as_fftw(rows.h), rows.r);
        }
        fftw_execute_dft(plan(s.to_spectrum_inplace_), as_fftw(rows.a), as_fftw(rows.a));
      },
      threads_);
}

void nonlinear_reference(const MemberPhysics& physics, const Grid& grid, const std::complex<double>* in,
                         std::complex<double>* out) {
  const std::int64_t n = grid.size();
  if (physics.points != n)
    invalid_argument("prop.nonlinear_reference", "the physics has ", physics.points, " points but the grid has ", n);
  const auto un = static_cast<std::size_t>(n);
  SpectralTransform transform(n);

  std::vector<std::complex<double>> field(un);
  transform.to_time(in, field.data());

  std::vector<double> intensity(un);
  for (std::size_t j = 0; j < un; ++j) intensity[j] = std::norm(field[j]);

  std::vector<double> response(un, 0.0);  // f_R-weighted mix of instantaneous and delayed parts
  for (std::size_t j = 0; j < un; ++j) response[j] = (1 - physics.raman_fraction) * intensity[j];
  if (physics.has_raman()) {
    std::vector<std::complex<double>> spectrum(un), convolution(un);
    for (std::size_t j = 0; j < un; ++j) spectrum[j] = intensity[j];
    transform.to_spectrum(spectrum.data(), spectrum.data());
    for (std::size_t k = 0; k < un; ++k) spectrum[k] *= physics.raman_spectrum[k];
    transform.to_time(spectrum.data(), convolution.data());
    for (std::size_t j = 0; j < un; ++j) response[j] += physics.raman_fraction * convolution[j].real();
  }

  std::vector<std::complex<double>> product(un);
  for (std::size_t j = 0; j < un; ++j) product[j] = field[j] * response[j];
  transform.to_spectrum(product.data(), out);
  for (std::size_t k = 0; k < un; ++k) out[k] *= physics.nonlinear_factor[k];
}

}  // namespace lockstep::prop
