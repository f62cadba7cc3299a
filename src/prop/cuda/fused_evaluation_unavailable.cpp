// The fused evaluation of N in a build without cuFFTDx for sm_90 (cufftdx.cmake): supported for
// no size, so the engine never launches it.
#include "launch.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::prop::cuda {

template <class R>
bool fused_evaluation_supported(std::int64_t) {
  return false;
}

template <class R>
void prepare_fused_evaluation(std::int64_t) {
  runtime_failure("prop.cuda_fused", "this build has no fused evaluation of N (it needs cuFFTDx and sm_90)");
}

template <class R>
void fused_evaluation(const Combination<R>&, const StageOutput<R>&, const int*, const C<R>*, const R*, const R*,
                      const R*, std::int64_t, std::int64_t, cudaStream_t) {
  runtime_failure("prop.cuda_fused", "this build has no fused evaluation of N (it needs cuFFTDx and sm_90)");
}

template bool fused_evaluation_supported<float>(std::int64_t);
template bool fused_evaluation_supported<double>(std::int64_t);
template void prepare_fused_evaluation<float>(std::int64_t);
template void prepare_fused_evaluation<double>(std::int64_t);
template void fused_evaluation<float>(const Combination<float>&, const StageOutput<float>&, const int*,
                                      const C<float>*, const float*, const float*, const float*, std::int64_t,
                                      std::int64_t, cudaStream_t);
template void fused_evaluation<double>(const Combination<double>&, const StageOutput<double>&, const int*,
                                       const C<double>*, const double*, const double*, const double*, std::int64_t,
                                       std::int64_t, cudaStream_t);

}  // namespace lockstep::prop::cuda
