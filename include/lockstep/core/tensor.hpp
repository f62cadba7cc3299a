// Dtype-tagged views of dense, row-major (C-contiguous) arrays owned by the caller.
// The library never allocates or frees the memory behind a view.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace lockstep {

enum class DType { f32, f64 };

/// Where a view's memory lives. CUDA memory is device memory of the current device.
enum class Device { cpu, cuda };

const char* to_string(DType dtype);
const char* to_string(Device device);
std::size_t size_of(DType dtype);
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }

using Shape = std::vector<std::int64_t>;

/// "(3,4,2)"
std::string to_string(const Shape& shape);

/// Number of elements; throws std::overflow_error past 2^63.
std::int64_t numel(const Shape& shape);

/// Read-only view. A view with neither data nor shape is "not given" (an optional input); a
/// zero-size view may have a null pointer (as empty torch tensors do).
struct ConstTensor {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Device device = Device::cpu;

  bool given() const { return data != nullptr || !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  template <class T> const T* as() const { return static_cast<const T*>(data); }
};

/// Writable view. A view with neither data nor shape is "not wanted" (an output to skip).
struct MutTensor {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Device device = Device::cpu;

  bool given() const { return data != nullptr || !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  template <class T> T* as() const { return static_cast<T*>(data); }
  ConstTensor view() const { return {data, dtype, shape, device}; }
};

template <class T> ConstTensor const_view(const T* data, Shape shape, Device device = Device::cpu) {
  return {data, dtype_of<T>(), std::move(shape), device};
}
template <class T> MutTensor mut_view(T* data, Shape shape, Device device = Device::cpu) {
  return {data, dtype_of<T>(), std::move(shape), device};
}

}  // namespace lockstep
