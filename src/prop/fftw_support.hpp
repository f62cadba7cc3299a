// FFTW helpers shared by the physics modules. The FFTW planner is not thread-safe: every plan
// creation and destruction in lockstep_prop holds fftw_planner_mutex().
#pragma once

#include <fftw3.h>

#include <complex>
#include <cstdint>
#include <mutex>

namespace lockstep::prop {

std::mutex& fftw_planner_mutex();

// Measured plans (flags without FFTW_ESTIMATE) take seconds at the larger sizes; what FFTW learns
// while measuring (its wisdom) is kept in a file and read by the next process, which then plans
// in milliseconds and, with the same plans, computes the same bits. The file is read before
// every plan, measured or estimated: an estimated plan takes the measured plan of its problem
// where the wisdom has one, so two processes plan alike only if they see the same wisdom. The file is
// $LOCKSTEP_FFTW_WISDOM, or $XDG_CACHE_HOME/lockstep (else ~/.cache/lockstep) named by the FFTW
// version and the CPU model; LOCKSTEP_FFTW_WISDOM=off keeps none. A file that cannot be read or
// written is no error: plans are then measured as without it. Both calls need the planner mutex.

/// Reads the wisdom file (its path is settled at the first call).
void load_fftw_wisdom();
/// Writes the wisdom file when plans since the last read or write added to it.
void save_fftw_wisdom();

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
