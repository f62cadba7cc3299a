// Built when CUDA is off: the CUDA entry points exist and refuse with a clear error.
#include "lockstep/core/error.hpp"
#include "lockstep/qkan/cuda_model.hpp"
#include "src/qkan/problem.hpp"

namespace lockstep::qkan::detail {

namespace {
[[noreturn]] void no_cuda() { runtime_failure("qkan.cuda", "this build of lockstep has no CUDA backend"); }
}  // namespace

void cuda_forward(const Problem&, void*) { no_cuda(); }
void cuda_backward(const Problem&, const void*, const GradPtrs&) { no_cuda(); }
void cuda_zero(void*, std::size_t, void*) { no_cuda(); }

}  // namespace lockstep::qkan::detail

namespace lockstep::qkan {

namespace {
[[noreturn]] void no_cuda_model() {
  runtime_failure("qkan.cuda_model",
                  "cannot run the model on CUDA: this build of lockstep has no CUDA backend "
                  "(configured with LOCKSTEP_CUDA=OFF or without nvcc)");
}
}  // namespace

struct CudaBatch::State {};
struct CudaModel::State {};
struct CudaAdam::State {};

CudaBatch::CudaBatch() : state_(std::make_unique<State>()) {}
CudaBatch::~CudaBatch() = default;
CudaBatch::CudaBatch(CudaBatch&&) noexcept = default;
CudaBatch& CudaBatch::operator=(CudaBatch&&) noexcept = default;

// No CudaModel (and so no CudaAdam) can be made: the other members are never reached.
CudaModel::CudaModel(const Model&) { no_cuda_model(); }
CudaModel::~CudaModel() = default;
CudaModel::CudaModel(CudaModel&&) noexcept = default;
CudaModel& CudaModel::operator=(CudaModel&&) noexcept = default;
void CudaModel::load(CudaBatch&, std::span<const double>, std::int64_t, std::span<const double>, Loss) const {
  no_cuda_model();
}
std::vector<double> CudaModel::forward(const CudaBatch&) { no_cuda_model(); }
double CudaModel::loss(const CudaBatch&) { no_cuda_model(); }
double CudaModel::loss_and_gradient(const CudaBatch&) { no_cuda_model(); }
std::vector<LayerParams> CudaModel::gradient() const { no_cuda_model(); }
void CudaModel::upload(const Model&) { no_cuda_model(); }
void CudaModel::download(Model&) { no_cuda_model(); }

CudaAdam::CudaAdam(const CudaModel&, AdamOptions) { no_cuda_model(); }
CudaAdam::~CudaAdam() = default;
CudaAdam::CudaAdam(CudaAdam&&) noexcept = default;
CudaAdam& CudaAdam::operator=(CudaAdam&&) noexcept = default;
void CudaAdam::step(CudaModel&) { no_cuda_model(); }

}  // namespace lockstep::qkan
