#include "lockstep/core/files.hpp"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "lockstep/core/error.hpp"

namespace lockstep {

std::vector<std::uint8_t> read_file(const std::filesystem::path& path, std::string_view where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) runtime_failure(where, "cannot open '", path.string(), "' for reading");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) runtime_failure(where, "error reading '", path.string(), "'");
  return bytes;
}

void write_file_atomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes,
                           std::string_view where) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) runtime_failure(where, "cannot open '", tmp.string(), "' for writing");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ignored);
      runtime_failure(where, "error writing '", tmp.string(), "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ignored);
    runtime_failure(where, "cannot move '", tmp.string(), "' to '", path.string(), "': ", ec.message());
  }
}

}  // namespace lockstep
