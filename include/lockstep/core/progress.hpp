// A progress reporter for long runs: one line on stderr, redrawn in place on a terminal and
// printed at most every few seconds otherwise (logs stay readable), with rate and ETA.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace lockstep {

class Progress {
 public:
  /// `label` prefixes the line; `total` is the amount of work in `unit`s (0: unknown total).
  /// `enabled == false` makes every call a no-op (quiet mode).
  Progress(std::string label, double total, std::string unit, bool enabled = true, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Reports that `done` units are complete; `detail` is appended (e.g. "loss 3.1e-3").
  /// Cheap to call often: it redraws at most ~10 times per second.
  void update(double done, const std::string& detail = {});
  /// Draws the final line and ends it with a newline (idempotent; the destructor calls it).
  void finish(const std::string& detail = {});

 private:
  void draw(bool final_line);
  using clock = std::chrono::steady_clock;
  std::string label_, unit_, detail_;
  double total_, done_ = 0;
  bool enabled_, tty_, finished_ = false;
  std::FILE* out_;
  clock::time_point start_, last_draw_;
};

}  // namespace lockstep
