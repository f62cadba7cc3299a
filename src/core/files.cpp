#include "lockstep/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "lockstep/core/error.hpp"

namespace lockstep {

namespace {

/// Closes a file descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string reason() { return std::strerror(errno); }

}  // namespace

std::vector<std::uint8_t> read_file(const std::filesystem::path& path, std::string_view where) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) runtime_failure(where, "cannot open '", path.string(), "' for reading: ", reason());
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) runtime_failure(where, "cannot read '", path.string(), "': ", reason());
  if (!S_ISREG(info.st_mode)) runtime_failure(where, "'", path.string(), "' is not a regular file");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {  // the size may change under us: read until end of file
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) runtime_failure(where, "error reading '", path.string(), "': ", reason());
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

std::filesystem::path staged_path(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  return tmp;
}

void stage_file(const std::filesystem::path& path, std::initializer_list<std::span<const std::uint8_t>> parts,
                std::string_view where) {
  const std::filesystem::path tmp = staged_path(path);
  std::error_code ignored;
  {
    Descriptor file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (file.fd < 0) runtime_failure(where, "cannot create '", tmp.string(), "': ", reason());
    const auto fail = [&](const char* what) {
      const std::string why = reason();
      std::filesystem::remove(tmp, ignored);
      runtime_failure(where, what, " '", tmp.string(), "': ", why);
    };
    for (const auto bytes : parts)
      for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail("cannot write");
        done += static_cast<std::size_t>(n);
      }
    // On disk before the rename: after a power loss the name holds the old file or the new one.
    if (::fsync(file.fd) != 0) fail("cannot flush");
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0) fail("cannot close");
  }
}

void commit_staged_file(const std::filesystem::path& path, std::string_view where) {
  const std::filesystem::path tmp = staged_path(path);
  std::error_code ec, ignored;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ignored);
    runtime_failure(where, "cannot move '", tmp.string(), "' to '", path.string(), "': ", ec.message());
  }
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  Descriptor directory{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (directory.fd >= 0) ::fsync(directory.fd);  // best effort: the rename is durable once the directory is
}

void write_file_atomically(const std::filesystem::path& path,
                           std::initializer_list<std::span<const std::uint8_t>> parts, std::string_view where) {
  stage_file(path, parts, where);
  commit_staged_file(path, where);
}

}  // namespace lockstep
