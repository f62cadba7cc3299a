#include <cuda_runtime.h>

#include "lockstep/core/backend.hpp"

namespace lockstep {
bool cuda_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
}  // namespace lockstep
