// Built when CUDA is off: the CUDA entry points exist and refuse with a clear error.
#include "lockstep/core/error.hpp"
#include "src/qkan/problem.hpp"

namespace lockstep::qkan::detail {

namespace {
[[noreturn]] void no_cuda() { runtime_failure("qkan.cuda", "this build of lockstep has no CUDA backend"); }
}  // namespace

void cuda_forward(const Problem&, void*) { no_cuda(); }
void cuda_backward(const Problem&, const void*, const GradPtrs&) { no_cuda(); }
void cuda_zero(void*, std::size_t, void*) { no_cuda(); }

}  // namespace lockstep::qkan::detail
