// Small helpers shared by the propagation engine's tests.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::prop::testing {

/// What f() throws as std::invalid_argument, or a text saying it threw none.
template <class F> std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

/// RMS width of |a|² over the times t.
inline double rms_width(const std::vector<std::complex<double>>& a, const std::vector<double>& t) {
  double s0 = 0, s1 = 0, s2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double p = std::norm(a[i]);
    s0 += p;
    s1 += p * t[i];
    s2 += p * t[i] * t[i];
  }
  const double mean = s1 / s0;
  return std::sqrt(s2 / s0 - mean * mean);
}

}  // namespace lockstep::prop::testing
