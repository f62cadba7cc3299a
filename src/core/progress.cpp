#include "lockstep/core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace lockstep {

namespace {
std::string format_seconds(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  }
  return buf;
}
}  // namespace

Progress::Progress(std::string label, double total, std::string unit, bool enabled, std::FILE* out)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(enabled && out != nullptr),
      tty_(out != nullptr && isatty(fileno(out))),
      out_(out),
      start_(clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(double done, const std::string& detail) {
  if (!enabled_ || finished_) return;
  done_ = done;
  detail_ = detail;
  const auto now = clock::now();
  // A terminal line is redrawn ~10 times a second; a log gets a line every 5 s.
  const double min_gap = tty_ ? 0.1 : 5.0;
  if (std::chrono::duration<double>(now - last_draw_).count() < min_gap) return;
  last_draw_ = now;
  draw(false);
}

void Progress::finish(const std::string& detail) {
  if (!enabled_ || finished_) return;
  if (!detail.empty()) detail_ = detail;
  if (total_ > 0) done_ = std::max(done_, 0.0);
  draw(true);
  finished_ = true;
}

void Progress::draw(bool final_line) {
  const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  std::string line = label_;
  if (total_ > 0) {
    const double frac = std::clamp(done_ / total_, 0.0, 1.0);
    constexpr int width = 24;
    const int filled = int(frac * width + 0.5);
    line += " [" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
    char buf[96];
    std::snprintf(buf, sizeof buf, " %5.1f%%", 100 * frac);
    line += buf;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, " %.6g %s, %.3g %s/s, %s", done_, unit_.c_str(), rate, unit_.c_str(),
                format_seconds(elapsed).c_str());
  line += buf;
  if (total_ > 0 && !final_line && rate > 0) line += ", ETA " + format_seconds((total_ - done_) / rate);
  if (!detail_.empty()) line += ", " + detail_;
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

}  // namespace lockstep
