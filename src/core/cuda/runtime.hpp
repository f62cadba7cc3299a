// CUDA runtime plumbing for the engines' host code: the error check, device and page-locked
// buffers, streams, events and graph executables, each released with its owner.
//
// Ordering. Every operation here that touches device memory runs on a stream its caller names.
// Nothing runs on the legacy default stream: work there is not ordered with streams created
// with cudaStreamNonBlocking (how the engines make theirs), so a zero fill queued there could
// land after a kernel on an engine stream had written the buffer and wipe it. On an idle GPU
// the fill runs first; on a shared one it need not, and that is a wrong answer, not an error.
// cudaMemcpy from pageable memory has the same gap: it may return before the device holds the
// data. So buffers are zeroed with cudaMemsetAsync and filled with cudaMemcpyAsync on the
// caller's stream, and an upload waits for its stream before it returns.
//
// C++17: CUDA units include this header too.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/error.hpp"

namespace lockstep::cuda {

/// Throws unless e is cudaSuccess: DeviceMemoryExhausted for an allocation that failed, else
/// std::runtime_error, naming `where` and `what`. The failed call's error is cleared (it is not
/// sticky), so that a later cudaGetLastError() does not report it again.
inline void check(cudaError_t e, std::string_view where, std::string_view what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();
  if (e == cudaErrorMemoryAllocation) {
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    device_memory_exhausted(where, what, ": out of device memory (", free_bytes / 1048576, " MiB of ",
                            total_bytes / 1048576, " MiB free)");
  }
  runtime_failure(where, what, ": ", cudaGetErrorString(e));
}

/// A runtime handle (memory, stream, event, graph executable) released by `Release` with the
/// object.
template <class Handle, cudaError_t (*Release)(Handle)> class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  Owned(Owned&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }
  ~Owned() {
    if (handle_) Release(handle_);
  }
  Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

/// An instantiated graph.
using GraphExec = Owned<cudaGraphExec_t, cudaGraphExecDestroy>;

/// A stream of its own (cudaStreamNonBlocking).
class Stream : public Owned<cudaStream_t, cudaStreamDestroy> {
 public:
  Stream() = default;
  explicit Stream(std::string_view where) : Owned(create(where)) {}

 private:
  static cudaStream_t create(std::string_view where) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), where, "cudaStreamCreate");
    return s;
  }
};

/// An event without timing.
class Event : public Owned<cudaEvent_t, cudaEventDestroy> {
 public:
  explicit Event(std::string_view where) : Owned(create(where)) {}

 private:
  static cudaEvent_t create(std::string_view where) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), where, "cudaEventCreate");
    return e;
  }
};

/// Device memory of `count` values of T, freed with the object.
template <class T> class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// `count` values, zeroed on `stream`: the zeros come before whatever is queued there next.
  DeviceBuffer(std::int64_t count, cudaStream_t stream, std::string_view where) : count_(count) {
    if (count <= 0) return;
    void* p = nullptr;
    if (const cudaError_t e = cudaMalloc(&p, bytes()); e != cudaSuccess)
      check(e, where, "cudaMalloc of " + std::to_string(bytes() / 1048576) + " MiB");
    memory_ = Owned<void*, cudaFree>(p);
    check(cudaMemsetAsync(p, 0, bytes(), stream), where, "cudaMemsetAsync");
  }
  T* get() const { return static_cast<T*>(memory_.get()); }
  std::int64_t size() const { return count_; }
  /// Copies `host` (size() values) in on `stream`; returns once the device holds them.
  void upload(const std::vector<T>& host, cudaStream_t stream, std::string_view where) {
    if (static_cast<std::int64_t>(host.size()) != count_)
      runtime_failure(where, "an upload of ", host.size(), " values into ", count_);
    if (count_ == 0) return;
    check(cudaMemcpyAsync(get(), host.data(), bytes(), cudaMemcpyHostToDevice, stream), where, "upload");
    check(cudaStreamSynchronize(stream), where, "upload");
  }

 private:
  std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(count_); }
  Owned<void*, cudaFree> memory_;
  std::int64_t count_ = 0;
};

/// Device memory that only grows, for buffers sized by the calls (a model's batches): reserve()
/// keeps the memory while it holds `count` values of T, and replaces it (the contents lost, the
/// new memory zeroed on `stream`) when it does not. The old memory is freed first.
class GrowingBuffer {
 public:
  template <class T> T* reserve(std::int64_t count, cudaStream_t stream, std::string_view where) {
    const auto bytes = count * static_cast<std::int64_t>(sizeof(T));
    if (bytes > buffer_.size()) {
      buffer_ = {};
      buffer_ = DeviceBuffer<unsigned char>(bytes, stream, where);
    }
    return as<T>();
  }
  template <class T> T* as() const { return reinterpret_cast<T*>(buffer_.get()); }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

/// Page-locked host memory of `count` values of T (asynchronous copies), freed with the object.
template <class T> class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::int64_t count, std::string_view where) {
    void* p = nullptr;
    check(cudaMallocHost(&p, sizeof(T) * static_cast<std::size_t>(count)), where, "cudaMallocHost");
    memory_ = Owned<void*, cudaFreeHost>(p);
  }
  T* get() const { return static_cast<T*>(memory_.get()); }
  explicit operator bool() const { return memory_.get() != nullptr; }

 private:
  Owned<void*, cudaFreeHost> memory_;
};

}  // namespace lockstep::cuda
