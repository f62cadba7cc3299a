// build_summary(): the core's line, and what engines register in it.
#include <gtest/gtest.h>

#include <string>

#include "lockstep/core/backend.hpp"

namespace {

std::string describe_test_engine() { return "test engine reports"; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(BuildSummary, NamesTheVersionAndCuda) {
  const std::string line = lockstep::build_summary();
  EXPECT_EQ(line.rfind(std::string("lockstep ") + lockstep::version(), 0), 0u) << line;
  EXPECT_EQ(count(line, "CUDA on") + count(line, "CUDA off"), 1u) << line;
}

TEST(BuildSummary, CarriesARegisteredReportOnce) {
  EXPECT_EQ(count(lockstep::build_summary(), "test engine reports"), 0u);
  lockstep::report_in_build_summary(&describe_test_engine);
  lockstep::report_in_build_summary(&describe_test_engine);
  EXPECT_EQ(count(lockstep::build_summary(), ", test engine reports"), 1u) << lockstep::build_summary();
}

}  // namespace
