// PLACEHOLDER while the fused kernels are written: reports itself unsupported.
#include "../problem.hpp"
namespace lockstep::qkan::detail {
void fused_forward(const Problem&, void*) {}
void fused_backward(const Problem&, const void*, const GradPtrs&) {}
const char* fused_unsupported(const Problem&) { return "fused kernels not built yet"; }
const char* fused_target() { return "none"; }
}
