// FFTW wisdom kept between processes (fftw_support.hpp): measured plans are paid once per machine.
#include <fftw3.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "fftw_support.hpp"

namespace lockstep::prop {
namespace {

namespace fs = std::filesystem;

/// Letters, digits, '.', '-' and '_' of `text`, other runs as one '_'.
std::string file_name_part(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  return out.empty() ? "unknown" : out;
}

/// The CPU's model name from /proc/cpuinfo: wisdom measured on one CPU is no guide on another,
/// and a home directory may be shared by the nodes of a cluster.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 1);
    }
  return "cpu";
}

/// The wisdom file, or "" for none (see fftw_support.hpp).
std::string wisdom_path() {
  if (const char* set = std::getenv("LOCKSTEP_FFTW_WISDOM")) {
    const std::string v = set;
    return v == "off" || v == "0" || v == "none" ? std::string() : v;
  }
  fs::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) dir = fs::path(home) / ".cache";
  else return {};
  const std::string name = "fftw-" + file_name_part(fftw_version) + "-" + file_name_part(cpu_model()) + ".wisdom";
  return (dir / "lockstep" / name).string();
}

std::string exported_wisdom() {
  std::unique_ptr<char, decltype(&std::free)> text(fftw_export_wisdom_to_string(), &std::free);
  return text ? std::string(text.get()) : std::string();
}

struct WisdomFile {
  bool opened = false;
  std::string path;   ///< "" when the cache is off or could not be written
  std::string saved;  ///< the wisdom as last read or written
};

WisdomFile& wisdom_file() {
  static WisdomFile w;
  return w;
}

}  // namespace

void load_fftw_wisdom() {
  WisdomFile& w = wisdom_file();
  if (!w.opened) w.path = wisdom_path();
  w.opened = true;
  if (w.path.empty()) return;
  // Read before every measured plan, so that a long-lived process (a notebook) finds the plans
  // that other processes measured meanwhile. No file yet, or an unreadable one: plans are measured.
  fftw_import_wisdom_from_filename(w.path.c_str());
  w.saved = exported_wisdom();
}

void save_fftw_wisdom() {
  WisdomFile& w = wisdom_file();
  if (w.path.empty() || exported_wisdom() == w.saved) return;
  // Another process may have added plans since: merge them, then replace the file by renaming a
  // complete copy over it, so that no process reads half a file.
  fftw_import_wisdom_from_filename(w.path.c_str());
  const std::string text = exported_wisdom();
  std::error_code error;
  fs::create_directories(fs::path(w.path).parent_path(), error);
  const std::string part = w.path + ".part" + std::to_string(::getpid());
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) error = std::make_error_code(std::errc::io_error);
  }
  if (!error) fs::rename(part, w.path, error);
  if (error) {
    fs::remove(part, error);
    w.path.clear();  // a cache that cannot be written is not tried again
    return;
  }
  w.saved = text;
}

}  // namespace lockstep::prop
