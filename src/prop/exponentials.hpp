// The interaction picture's exponentials of the host stepper.
#pragma once

#include <complex>
#include <cstdint>

namespace lockstep::prop {

/// out[i] = exp(x·linear[i]) = e^{x Re L}·(cos x Im L + i sin x Im L) for i in [0, n), in SIMD
/// lanes (Highway's Exp, Sin and Cos: within 3 ulp of the correctly rounded values; phases past
/// ±39000 rad from the C library). A value's bits do not depend on n or on its position.
void interaction_exponentials(const std::complex<double>* linear, double x, std::complex<double>* out, std::int64_t n);

}  // namespace lockstep::prop
