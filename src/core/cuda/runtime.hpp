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
#include <vector>
#include <string_view>
#include <utility>

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

/// A stream of its own (cudaStreamNonBlocking), destroyed with the object.
class Stream {
 public:
  Stream() = default;
  explicit Stream(std::string_view where) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), where, "cudaStreamCreate");
  }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    std::swap(stream_, o.stream_);
    return *this;
  }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// An event without timing, destroyed with the object.
class Event {
 public:
  explicit Event(std::string_view where) {
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), where, "cudaEventCreate");
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// An instantiated graph, destroyed with the object.
class GraphExec {
 public:
  explicit GraphExec(cudaGraphExec_t exec) : exec_(exec) {}
  GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    std::swap(exec_, o.exec_);
    return *this;
  }
  ~GraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

/// Device memory of `count` values of T, freed with the object.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// `count` values, zeroed on `stream`: the zeros come before whatever is queued there next.
  DeviceBuffer(std::int64_t count, cudaStream_t stream, std::string_view where) : count_(count) {
    if (count <= 0) return;
    check(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()), where, "cudaMalloc");
    check(cudaMemsetAsync(data_, 0, bytes(), stream), where, "cudaMemsetAsync");
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  T* get() const { return data_; }
  std::int64_t size() const { return count_; }
  /// Copies `host` (size() values) in on `stream`; returns once the device holds them.
  void upload(const std::vector<T>& host, cudaStream_t stream, std::string_view where) {
    if (static_cast<std::int64_t>(host.size()) != count_)
      runtime_failure(where, "an upload of ", host.size(), " values into ", count_);
    if (count_ == 0) return;
    check(cudaMemcpyAsync(data_, host.data(), bytes(), cudaMemcpyHostToDevice, stream), where, "upload");
    check(cudaStreamSynchronize(stream), where, "upload");
  }

 private:
  std::size_t bytes() const { return sizeof(T) * static_cast<std::size_t>(count_); }
  T* data_ = nullptr;
  std::int64_t count_ = 0;
};

/// Page-locked host memory of `count` values of T (asynchronous copies), freed with the object.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::int64_t count, std::string_view where) {
    check(cudaMallocHost(reinterpret_cast<void**>(&data_), sizeof(T) * static_cast<std::size_t>(count)), where,
          "cudaMallocHost");
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  T* get() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  T* data_ = nullptr;
};

}  // namespace lockstep::cuda
