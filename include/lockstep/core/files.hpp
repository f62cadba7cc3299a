// Whole-file reads and crash-safe whole-file writes, for the file formats of lockstep.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace lockstep {

/// The bytes of a file; std::runtime_error prefixed with [where] if it cannot be read.
std::vector<std::uint8_t> read_file(const std::filesystem::path& path, std::string_view where);

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a crash or
/// kill leaves either the old file or the new one, never a partial one.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes,
                           std::string_view where);

}  // namespace lockstep
