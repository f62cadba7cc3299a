// The training losses of one row (model.hpp's Loss), shared by the CPU model (model.cpp) and
// the CUDA model (cuda/model_kernels.cu): the row's term in double and, when gy is given, its
// gradient divided by n (the loss is the terms' sum over n). C++17: CUDA units include it.
#pragma once

#include <cmath>
#include <cstdint>

#include "src/core/hd.hpp"

namespace lockstep::qkan::detail {

/// Σ_o (y_o − t_o)², and gy_o = 2(y_o − t_o)/n.
template <class T> LOCKSTEP_HD double mse_row(const T* y, const double* t, std::int64_t O, double n, T* gy) {
  const double slope = 2 / n;
  double s = 0;
  for (std::int64_t o = 0; o < O; ++o) {
    const double d = double(y[o]) - t[o];
    s += d * d;
    if (gy) gy[o] = static_cast<T>(slope * d);
  }
  return s;
}

/// −log softmax(y)[target] = max y + log Σ_o exp(y_o − max y) − y_target, and
/// gy_o = (softmax(y)_o − [o = target])/n. The caller checks that target is in [0, O).
template <class T>
LOCKSTEP_HD double cross_entropy_row(const T* y, std::int64_t target, std::int64_t O, double n, T* gy) {
  double mx = double(y[0]);
  for (std::int64_t o = 1; o < O; ++o)
    if (double(y[o]) > mx) mx = double(y[o]);
  double z = 0;
  for (std::int64_t o = 0; o < O; ++o) z += exp(double(y[o]) - mx);
  if (gy)
    for (std::int64_t o = 0; o < O; ++o)
      gy[o] = static_cast<T>((exp(double(y[o]) - mx) / z - (o == target ? 1 : 0)) / n);
  return mx + log(z) - double(y[target]);
}

}  // namespace lockstep::qkan::detail
