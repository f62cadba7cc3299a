// The fused kernels (the evaluation of N, the measures) in a build without cuFFTDx for sm_90
// (cufftdx.cmake): supported for no size, so the engine never launches them.
#include "launch.hpp"
#include "lockstep/core/error.hpp"

namespace lockstep::prop::cuda {
namespace {
constexpr const char* kUnavailable = "this build has no fused kernels (they need cuFFTDx and sm_90)";
}  // namespace

template <class R> bool fused_evaluation_supported(std::int64_t) { return false; }

template <class R> int prepare_fused_evaluation(std::int64_t, bool) {
  runtime_failure("prop.cuda_fused", kUnavailable);
}

template <class R>
void fused_evaluation(const Combination<R>&, const StageOutput<R>&, const int*, const C<R>*, const R*, const R*,
                      const R*, std::int64_t, std::int64_t, const Prefetch&, cudaStream_t) {
  runtime_failure("prop.cuda_fused", kUnavailable);
}

template <class R>
void fused_measures(const C<R>*, const double*, double, double, double, double*, std::int64_t, std::int64_t,
                    cudaStream_t) {
  runtime_failure("prop.cuda_fused", kUnavailable);
}

template bool fused_evaluation_supported<float>(std::int64_t);
template bool fused_evaluation_supported<double>(std::int64_t);
template int prepare_fused_evaluation<float>(std::int64_t, bool);
template int prepare_fused_evaluation<double>(std::int64_t, bool);
template void fused_evaluation<float>(const Combination<float>&, const StageOutput<float>&, const int*, const C<float>*,
                                      const float*, const float*, const float*, std::int64_t, std::int64_t,
                                      const Prefetch&, cudaStream_t);
template void fused_evaluation<double>(const Combination<double>&, const StageOutput<double>&, const int*,
                                       const C<double>*, const double*, const double*, const double*, std::int64_t,
                                       std::int64_t, const Prefetch&, cudaStream_t);

template void fused_measures<float>(const C<float>*, const double*, double, double, double, double*, std::int64_t,
                                    std::int64_t, cudaStream_t);
template void fused_measures<double>(const C<double>*, const double*, double, double, double, double*, std::int64_t,
                                     std::int64_t, cudaStream_t);

}  // namespace lockstep::prop::cuda
