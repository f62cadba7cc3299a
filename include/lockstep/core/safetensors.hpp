// The safetensors file format, as PyTorch's `safetensors.torch` writes it: an 8-byte
// little-endian header length N, a JSON header of N bytes naming each tensor's dtype, shape and
// byte range ("data_offsets", relative to the data region) plus an optional "__metadata__"
// object of strings, then the data region, the tensors' raw little-endian bytes back to back.
// QKAN models are stored in it (the names and shapes of `qkan`'s state_dict).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/tensor.hpp"

namespace lockstep::safetensors {

/// One tensor: its safetensors dtype name ("F32", "F64", "I64", "BF16", ...), shape and bytes.
struct Tensor {
  std::string dtype;
  Shape shape;
  std::vector<std::uint8_t> bytes;

  bool operator==(const Tensor&) const = default;
};

struct File {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  ///< the header's "__metadata__"

  bool operator==(const File&) const = default;
};

/// Largest header accepted, in bytes (the reference implementation's limit).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

/// Bytes per element of a safetensors dtype name; std::invalid_argument for an unknown name.
std::size_t dtype_size(std::string_view dtype);

/// Parses the bytes of a whole file. Every inconsistency (truncation, a header length past the
/// end or over kMaxHeaderBytes, malformed JSON, an unknown dtype, a shape whose size disagrees
/// with its byte range, overlapping ranges, holes or trailing bytes in the data region) is a
/// std::invalid_argument naming `source` and, where there is one, the tensor.
File parse(std::span<const std::uint8_t> bytes, std::string_view source);

/// Reads and parses a file (std::runtime_error if it cannot be read).
File load(const std::filesystem::path& path);

/// The bytes of a file: the header (tensors in name order, padded with spaces to a multiple of
/// 8 bytes), then the data. std::invalid_argument if a tensor's bytes disagree with its shape.
std::vector<std::uint8_t> serialize(const File& file);

/// Writes `file` to `path` atomically: a temporary file beside it, then a rename over it, so a
/// crash or kill never leaves a partial file at `path`.
void save(const std::filesystem::path& path, const File& file);

/// A tensor of F32 (float) or F64 (double) values.
template <class T> Tensor from_values(std::span<const T> values, Shape shape);

/// The values of an F32 or F64 tensor as T (converting between the two); std::invalid_argument
/// naming `name` for any other dtype.
template <class T> std::vector<T> to_values(const Tensor& t, std::string_view name);

}  // namespace lockstep::safetensors
