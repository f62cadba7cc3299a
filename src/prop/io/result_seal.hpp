// The seal of a result file: a 512-byte HDF5 user block in front of the HDF5 data holding the
// data's length and SHA-256, so truncation and corruption are found before HDF5 reads a byte.
// This is what makes the reader safe on damaged files: HDF5 1.10 itself, given damaged
// metadata, can crash or loop forever (random byte flips behind a valid seal did both in our
// trials), so damaged bytes must never reach it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace lockstep::prop::io {

inline constexpr std::size_t kSealSize = 512;  ///< an HDF5 user block size (a power of 2 ≥ 512)

/// The seal of `hdf5_image` (an HDF5 file without a user block): the file is the seal followed by
/// the image, where HDF5 and h5py find the superblock at offset 512.
std::array<std::uint8_t, kSealSize> seal(std::span<const std::uint8_t> hdf5_image);

/// The HDF5 part of sealed file bytes after checking length and checksum; std::invalid_argument
/// "[prop.result] <source>: ..." saying what is wrong otherwise.
std::span<const std::uint8_t> unseal(std::span<const std::uint8_t> file, std::string_view source);

}  // namespace lockstep::prop::io
