// One member's field between time and frequency with the convention of grid.hpp:
//     spectrum Ã = FFTW_BACKWARD(A) (unnormalised),  field A = FFTW_FORWARD(Ã) / n,
// arrays of n = grid.size() values, time samples in grid order (T_j = (j − n/2)·dt), spectra in
// FFT order. The transform runs over the array index j, so relative to the sum over T_j written
// in grid.hpp each bin carries a factor e^{+iΔω_k·n·dt/2} = (−1)^k: a fixed phase per bin that
// no |Ã|², energy, photon number or nonlinear term sees. For setup, measures and tests; the hot
// path is NonlinearBatch (nonlinear.hpp).
#pragma once

#include <complex>
#include <cstdint>

#include "lockstep/prop/grid.hpp"

namespace lockstep::prop {

using Complex = std::complex<double>;

/// Plans once (FFTW_ESTIMATE, over internal aligned buffers); the transforms accept any
/// pointers (copied through the buffers) and may alias (in == out). Not for concurrent use of
/// one object from several threads; separate objects are independent.
class SpectralTransform {
 public:
  explicit SpectralTransform(std::int64_t points);
  ~SpectralTransform();
  SpectralTransform(const SpectralTransform&) = delete;
  SpectralTransform& operator=(const SpectralTransform&) = delete;

  std::int64_t size() const { return n_; }
  /// spectrum = FFTW_BACKWARD(field), unnormalised.
  void to_spectrum(const std::complex<double>* field, std::complex<double>* spectrum);
  /// field = FFTW_FORWARD(spectrum) / n.
  void to_time(const std::complex<double>* spectrum, std::complex<double>* field);

 private:
  std::int64_t n_;
  std::complex<double>* buffer_ = nullptr;
  void* backward_ = nullptr;  // fftw_plan
  void* forward_ = nullptr;
};

}  // namespace lockstep::prop
