// Whole-file reads and crash-safe whole-file writes, for the file formats of lockstep.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

namespace lockstep {

/// The bytes of a file; std::runtime_error prefixed with [where] if it cannot be read.
std::vector<std::uint8_t> read_file(const std::filesystem::path& path, std::string_view where);

/// "<path>.tmp": where a file is staged before it replaces `path`.
std::filesystem::path staged_path(const std::filesystem::path& path);

/// Writes the concatenation of `parts` to staged_path(path) (replacing one a killed writer
/// left) and flushes it to disk; `path` itself is untouched until commit_staged_file.
/// std::runtime_error prefixed with [where] when writing fails; the staged file is then removed.
void stage_file(const std::filesystem::path& path, std::initializer_list<std::span<const std::uint8_t>> parts,
                std::string_view where);
/// Renames the staged file over `path` and flushes the directory.
void commit_staged_file(const std::filesystem::path& path, std::string_view where);

/// stage_file, then commit_staged_file: a crash, kill or power loss leaves either the old file
/// or the new one, never a partial one. std::runtime_error prefixed with [where] when writing
/// fails; the old file is then untouched and the temporary one removed.
void write_file_atomically(const std::filesystem::path& path,
                           std::initializer_list<std::span<const std::uint8_t>> parts, std::string_view where);
/// The same for one block of bytes.
inline void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes,
                                  std::string_view where) {
  write_file_atomically(path, {bytes}, where);
}

}  // namespace lockstep
