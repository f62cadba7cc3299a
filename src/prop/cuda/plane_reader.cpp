// Planes on their way to the host (plane_reader.hpp).
#include "plane_reader.hpp"

#include "lockstep/core/error.hpp"

namespace lockstep::prop::cuda {

namespace {
constexpr const char* kWhere = "prop.cuda_engine";
namespace rt = ::lockstep::cuda;
void check(cudaError_t e, const char* what) { rt::check(e, kWhere, what); }
}  // namespace

template <class R>
PlaneReader<R>::Slot::Slot(std::int64_t members, std::int64_t points_, cudaStream_t stream)
    : device(members * points_, stream, kWhere),
      host(members * points_, kWhere),
      ready(kWhere),
      done(kWhere),
      points(points_) {}

template <class R> void CUDART_CB PlaneReader<R>::Slot::write_rows(void* p) {
  const auto& slot = *static_cast<const Slot*>(p);
  for (std::size_t i = 0; i < slot.rows.size(); ++i) {
    const C<R>* from = slot.host.get() + static_cast<std::int64_t>(i) * slot.points;
    Complex* to = slot.rows[i];
    for (std::int64_t k = 0; k < slot.points; ++k) to[k] = Complex(from[k].x, from[k].y);
  }
}

template <class R>
PlaneReader<R>::PlaneReader(std::int64_t members, std::int64_t points, cudaStream_t stream)
    : members_(members), copy_stream_(kWhere) {
  for (int k = 0; k < 2; ++k) slots_.push_back(std::make_unique<Slot>(members, points, stream));
}

template <class R> PlaneReader<R>::~PlaneReader() { cudaStreamSynchronize(copy_stream_.get()); }

template <class R> C<R>* PlaneReader<R>::claim(std::span<Complex* const> rows) {
  if (static_cast<std::int64_t>(rows.size()) != members_)
    invalid_argument(kWhere, rows.size(), " rows for ", members_, " members");
  Slot& slot = *slots_[next_++ % slots_.size()];
  check(cudaEventSynchronize(slot.done.get()), "plane copy");
  slot.rows.assign(rows.begin(), rows.end());
  claimed_ = &slot;
  return slot.device.get();
}

template <class R> void PlaneReader<R>::send(cudaStream_t stream) {
  if (!claimed_) runtime_failure(kWhere, "a plane sent before it was claimed");
  Slot& slot = *claimed_;
  claimed_ = nullptr;
  const cudaStream_t copy = copy_stream_.get();
  check(cudaEventRecord(slot.ready.get(), stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(copy, slot.ready.get(), 0), "cudaStreamWaitEvent");
  check(cudaMemcpyAsync(slot.host.get(), slot.device.get(), sizeof(C<R>) * static_cast<std::size_t>(slot.device.size()),
                        cudaMemcpyDeviceToHost, copy),
        "plane copy");
  check(cudaLaunchHostFunc(copy, &Slot::write_rows, &slot), "cudaLaunchHostFunc");
  check(cudaEventRecord(slot.done.get(), copy), "cudaEventRecord");
}

template <class R> void PlaneReader<R>::finish() { check(cudaStreamSynchronize(copy_stream_.get()), "plane copies"); }

template class PlaneReader<float>;
template class PlaneReader<double>;

}  // namespace lockstep::prop::cuda
