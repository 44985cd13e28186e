// Linked into a gtest binary, fails the run when BINLOG_EXPECTED_TESTS is
// set and the number of tests that ran differs from it. For targets that
// select their tests with --gtest_filter: a renamed test would otherwise
// leave the filter matching nothing, and a run of no tests passes.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace binlog {
namespace testing_util {
namespace {

class ExpectedTestCount : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    const char* want = std::getenv("BINLOG_EXPECTED_TESTS");
    if (want == nullptr || *want == '\0') return;
    const int expected = std::atoi(want);
    const int ran = unit.test_to_run_count();
    if (ran == expected) return;
    std::fprintf(stderr,
                 "expected_test_count: %d tests ran, BINLOG_EXPECTED_TESTS "
                 "is %d (a --gtest_filter that no longer matches?)\n",
                 ran, expected);
    std::fflush(stderr);
    std::_Exit(1);
  }
};

// Registered before main (gtest owns the listener).
const bool registered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ExpectedTestCount);
  return true;
}();

}  // namespace
}  // namespace testing_util
}  // namespace binlog
