// FFTW helpers shared by the physics modules. The FFTW planner is not thread-safe: every plan
// creation and destruction in lockstep_prop holds fftw_planner_mutex().
#pragma once

#include <fftw3.h>

#include <complex>
#include <cstdint>
#include <mutex>

namespace lockstep::prop {

std::mutex& fftw_planner_mutex();

inline fftw_complex* as_fftw(std::complex<double>* p) { return reinterpret_cast<fftw_complex*>(p); }

/// fftw_malloc'ed array of `count` complex values (SIMD aligned); throws on failure.
std::complex<double>* fftw_alloc_complex_array(std::int64_t count, const char* where);

/// A one-dimensional complex transform of length n, planned over `in` and `out` (which it may
/// overwrite while planning, unless `flags` has FFTW_ESTIMATE); throws when FFTW refuses.
fftw_plan plan_dft_1d(std::int64_t n, std::complex<double>* in, std::complex<double>* out, int sign, unsigned flags,
                      const char* where);

/// Real-to-complex (n reals → n/2 + 1 values, sign e^{−i}) and complex-to-real (sign e^{+i},
/// destroys its input) transforms of length n.
fftw_plan plan_r2c_1d(std::int64_t n, double* in, std::complex<double>* out, unsigned flags, const char* where);
fftw_plan plan_c2r_1d(std::int64_t n, std::complex<double>* in, double* out, unsigned flags, const char* where);

void destroy_plan(fftw_plan plan);

}  // namespace lockstep::prop
