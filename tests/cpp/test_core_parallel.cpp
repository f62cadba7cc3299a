// The thread pool: every task runs once, thread ids are in range, the first exception of a body
// reaches the caller, bad thread counts are refused.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "lockstep/core/parallel.hpp"

namespace lockstep {
namespace {

class Parallel : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_ = num_threads();
    set_num_threads(GetParam());
  }
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_P(Parallel, EveryTaskRunsOnceOnAValidThread) {
  EXPECT_EQ(num_threads(), GetParam());
  for (std::int64_t tasks : {0, 1, 2, 7, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(tasks));
    std::atomic<int> bad_thread{0};
    parallel_for(tasks, [&](std::int64_t t, int th) {
      hits[static_cast<std::size_t>(t)]++;
      if (th < 0 || th >= num_threads()) bad_thread++;
    });
    for (std::int64_t t = 0; t < tasks; ++t) EXPECT_EQ(hits[static_cast<std::size_t>(t)].load(), 1) << "task " << t;
    EXPECT_EQ(bad_thread.load(), 0);
  }
}

TEST_P(Parallel, NegativeTaskCountIsANoOp) {
  int calls = 0;
  parallel_for(-5, [&](std::int64_t, int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST_P(Parallel, ExceptionPropagates) {
  std::atomic<int> ran{0};
  try {
    parallel_for(100, [&](std::int64_t t, int) {
      ran++;
      if (t == 37) throw std::runtime_error("task 37 failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 37 failed");
  }
  EXPECT_GE(ran.load(), 1);
  // The pool is still usable afterwards.
  std::atomic<int> n{0};
  parallel_for(10, [&](std::int64_t, int) { n++; });
  EXPECT_EQ(n.load(), 10);
}

TEST_P(Parallel, ExceptionTypeIsKept) {
  EXPECT_THROW(parallel_for(50,
                            [](std::int64_t t, int) {
                              if (t % 7 == 3) throw std::invalid_argument("bad");
                            }),
               std::invalid_argument);
  EXPECT_THROW(parallel_for(3, [](std::int64_t, int) { throw 42; }), int);
}

INSTANTIATE_TEST_SUITE_P(Core, Parallel, ::testing::Values(1, 2, 3, 8));

TEST(ParallelSettings, BadThreadCountsThrow) {
  const int before = num_threads();
  EXPECT_GE(before, 1);
  for (int n : {0, -1, -1000}) {
    try {
      set_num_threads(n);
      ADD_FAILURE() << "set_num_threads(" << n << ") did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("n must be >= 1"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(num_threads(), before);
}

}  // namespace
}  // namespace lockstep
