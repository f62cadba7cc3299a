#include "lockstep/prop/transform.hpp"

#include <algorithm>

#include "fftw_support.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::prop {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

namespace {
/// Around a plan's creation: the wisdom file read before every plan (an estimated plan, too,
/// takes a measured plan of its problem where the wisdom has one) and written after a measured one.
class WisdomScope {
 public:
  explicit WisdomScope(unsigned flags) : measured_((flags & FFTW_ESTIMATE) == 0) { load_fftw_wisdom(); }
  ~WisdomScope() {
    if (measured_) save_fftw_wisdom();
  }
  WisdomScope(const WisdomScope&) = delete;
  WisdomScope& operator=(const WisdomScope&) = delete;

 private:
  bool measured_;
};
}  // namespace

std::complex<double>* fftw_alloc_complex_array(std::int64_t count, const char* where) {
  auto* p = reinterpret_cast<std::complex<double>*>(fftw_alloc_complex(static_cast<std::size_t>(count)));
  if (p == nullptr) runtime_failure(where, "fftw_alloc_complex failed for ", count, " values");
  return p;
}

fftw_plan plan_dft_1d(std::int64_t n, std::complex<double>* in, std::complex<double>* out, int sign, unsigned flags,
                      const char* where) {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  const WisdomScope wisdom(flags);
  fftw_plan p = fftw_plan_dft_1d(static_cast<int>(n), as_fftw(in), as_fftw(out), sign, flags);
  if (p == nullptr) runtime_failure(where, "FFTW could not plan a transform of length ", n);
  return p;
}

fftw_plan plan_r2c_1d(std::int64_t n, double* in, std::complex<double>* out, unsigned flags, const char* where) {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  const WisdomScope wisdom(flags);
  fftw_plan p = fftw_plan_dft_r2c_1d(static_cast<int>(n), in, as_fftw(out), flags);
  if (p == nullptr) runtime_failure(where, "FFTW could not plan a real transform of length ", n);
  return p;
}

fftw_plan plan_c2r_1d(std::int64_t n, std::complex<double>* in, double* out, unsigned flags, const char* where) {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  const WisdomScope wisdom(flags);
  fftw_plan p = fftw_plan_dft_c2r_1d(static_cast<int>(n), as_fftw(in), out, flags);
  if (p == nullptr) runtime_failure(where, "FFTW could not plan a real transform of length ", n);
  return p;
}

void destroy_plan(fftw_plan plan) {
  if (plan == nullptr) return;
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  fftw_destroy_plan(plan);
}

SpectralTransform::SpectralTransform(std::int64_t points) : n_(points) {
  constexpr const char* where = "prop.transform";
  if (n_ < 1) invalid_argument(where, "points = ", n_, " must be ≥ 1");
  buffer_ = fftw_alloc_complex_array(n_, where);
  try {
    backward_ = plan_dft_1d(n_, buffer_, buffer_, FFTW_BACKWARD, FFTW_ESTIMATE, where);
    forward_ = plan_dft_1d(n_, buffer_, buffer_, FFTW_FORWARD, FFTW_ESTIMATE, where);
  } catch (...) {
    destroy_plan(static_cast<fftw_plan>(backward_));
    fftw_free(buffer_);
    throw;
  }
}

SpectralTransform::~SpectralTransform() {
  destroy_plan(static_cast<fftw_plan>(forward_));
  destroy_plan(static_cast<fftw_plan>(backward_));
  fftw_free(buffer_);
}

void SpectralTransform::to_spectrum(const std::complex<double>* field, std::complex<double>* spectrum) {
  std::copy(field, field + n_, buffer_);
  fftw_execute(static_cast<fftw_plan>(backward_));
  std::copy(buffer_, buffer_ + n_, spectrum);
}

void SpectralTransform::to_time(const std::complex<double>* spectrum, std::complex<double>* field) {
  std::copy(spectrum, spectrum + n_, buffer_);
  fftw_execute(static_cast<fftw_plan>(forward_));
  const double scale = 1.0 / static_cast<double>(n_);
  for (std::int64_t j = 0; j < n_; ++j) field[j] = buffer_[j] * scale;
}

}  // namespace lockstep::prop
