// Helpers for the tests of lockstep_prop_io.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <filesystem>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace lockstep::prop::testing {

/// Converts to anything: counts the members of an aggregate by brace initialisation.
struct AnyMember {
  template <class T> operator T() const;  // declared only: used in unevaluated contexts
};

template <class T, std::size_t... I> constexpr bool brace_initialisable(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyMember{})...}; };
}

/// The number of members of the aggregate T (its fields; none of them is itself an aggregate
/// that brace elision could split).
template <class T, std::size_t N = 0> constexpr std::size_t member_count() {
  if constexpr (brace_initialisable<T>(std::make_index_sequence<N + 1>{})) return member_count<T, N + 1>();
  else return N;
}

/// A fresh random seed for each run, shown in the test's output; LOCKSTEP_TEST_SEED=<that
/// number> runs the test on it again.
inline std::uint64_t fresh_seed() {
  const char* given = std::getenv("LOCKSTEP_TEST_SEED");
  const std::uint64_t seed = given ? std::strtoull(given, nullptr, 10)
                                   : (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

/// A fresh directory under the system temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() / ("lockstep_io_" + std::string(info->test_suite_name()) + "_" +
                                                      info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace lockstep::prop::testing
