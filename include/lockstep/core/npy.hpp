// NumPy's .npy files (format versions 1.0–3.0) of float32 or float64 arrays in C order: the
// data sets and outputs of the command-line tool, read and written without NumPy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "lockstep/core/tensor.hpp"

namespace lockstep::npy {

/// An array read from a .npy file, its values converted to double.
struct Array {
  Shape shape;
  std::vector<double> values;
  DType stored = DType::f64;  ///< the file's element type
};

/// Parses a whole file's bytes: little-endian '<f4' or '<f8' in C order ('|' or '=' on this
/// little-endian host too). Anything else — another dtype, Fortran order, a malformed or
/// truncated header, a data size that disagrees with the shape — is a std::invalid_argument
/// naming `source`.
Array parse(std::span<const std::uint8_t> bytes, std::string_view source);
Array load(const std::filesystem::path& path);

/// Writes values (C order) as '<f4' (dtype f32) or '<f8', format 1.0, atomically (a temporary
/// file beside `path`, then a rename).
void save(const std::filesystem::path& path, std::span<const double> values, const Shape& shape, DType dtype);

}  // namespace lockstep::npy
