// Planes on their way from the CUDA engine to the host (read_solutions, read_dense_output).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "launch.hpp"
#include "lockstep/prop/transform.hpp"  // Complex
#include "src/core/cuda/runtime.hpp"

namespace lockstep::prop::cuda {

/// A plane (one row per member) is copied on the device first, on the stepping stream, so that
/// the stepping goes on; then to page-locked memory on a copy stream of the reader's own, and
/// into the caller's rows by a host function of that stream. Two slots, used in turn, made at
/// construction so that a read never allocates: the reads after a failure bring the last
/// accepted fields back, and must not fail for want of memory themselves.
template <class R> class PlaneReader {
 public:
  /// Slots for `members` rows of `points` values, zeroed on `stream`.
  PlaneReader(std::int64_t members, std::int64_t points, cudaStream_t stream);
  /// Waits for every plane still on its way.
  ~PlaneReader();
  PlaneReader(const PlaneReader&) = delete;
  PlaneReader& operator=(const PlaneReader&) = delete;

  /// The device rows of the next slot, for the caller's `rows` (one per member; they must stay
  /// valid until finish()); waits where that slot's last plane is still on its way (rare: a plane
  /// takes milliseconds to cross, planes are many steps apart).
  C<R>* claim(std::span<Complex* const> rows);
  /// Sends the slot claimed last, whose device rows are written by what `stream` holds so far,
  /// to its caller's rows, and returns.
  void send(cudaStream_t stream);
  /// Returns once every plane sent is in its rows.
  void finish();

 private:
  struct Slot {
    ::lockstep::cuda::DeviceBuffer<C<R>> device;
    ::lockstep::cuda::PinnedBuffer<C<R>> host;
    ::lockstep::cuda::Event ready, done;  // the device copy is made; the rows are written
    std::vector<Complex*> rows;
    std::int64_t points = 0;
    Slot(std::int64_t members, std::int64_t points, cudaStream_t stream);
    static void CUDART_CB write_rows(void* slot);
  };

  std::int64_t members_;
  ::lockstep::cuda::Stream copy_stream_;  // declared before the slots, so that it outlives them
  std::vector<std::unique_ptr<Slot>> slots_;
  std::size_t next_ = 0;
  Slot* claimed_ = nullptr;
};

}  // namespace lockstep::prop::cuda
