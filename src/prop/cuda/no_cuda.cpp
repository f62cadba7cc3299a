// The CUDA engine's entry points in a build without CUDA: a clear error, never a crash.
#include "lockstep/core/error.hpp"
#include "lockstep/prop/cuda_engine.hpp"

namespace lockstep::prop {

void require_cuda_engine() {
  runtime_failure("prop.cuda_engine", "this build of lockstep has no CUDA (configure with -DLOCKSTEP_CUDA=ON)");
}

std::unique_ptr<Engine> make_cuda_engine(std::span<const Config* const>, const Tableau&, DType, const CudaOptions&) {
  runtime_failure("prop.cuda_engine", "this build of lockstep has no CUDA (configure with -DLOCKSTEP_CUDA=ON)");
}

std::int64_t cuda_engine_bytes_per_member(const Tableau&, std::int64_t, DType, const CudaOptions&) {
  runtime_failure("prop.cuda_engine", "this build of lockstep has no CUDA (configure with -DLOCKSTEP_CUDA=ON)");
}

std::string cuda_engine_summary() { return {}; }

std::int64_t cuda_free_memory() { return 0; }

bool cuda_fused_evaluation_available(std::int64_t, DType) { return false; }

}  // namespace lockstep::prop
