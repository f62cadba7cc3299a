// Built when LOCKSTEP_CUDA is off: the same public functions, answering "no CUDA".
#include "lockstep/core/backend.hpp"

namespace lockstep {
bool cuda_available() { return false; }
}  // namespace lockstep
