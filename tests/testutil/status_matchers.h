// File: tests/testutil/status_matchers.h
//
// gmock matchers for absl::Status and absl::StatusOr<T> (the pinned abseil,
// 20220623, ships none):
//
//   EXPECT_THAT(s, IsOk());
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss));
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("line 3")));
//   ASSERT_OK(s);  EXPECT_OK(s);
//   ASSERT_OK_AND_ASSIGN(auto v, FunctionReturningStatusOr());
//
// Every matcher accepts both absl::Status and absl::StatusOr<T>.
//
// Thread safety: thread-safe (stateless matchers).

#ifndef BINLOG_TESTS_TESTUTIL_STATUS_MATCHERS_H_
#define BINLOG_TESTS_TESTUTIL_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace binlog {
namespace testutil {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }

template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// Polymorphic implementation of IsOk().
class IsOkMatcherImpl {
 public:
  template <typename T>
  bool MatchAndExplain(const T& value,
                       ::testing::MatchResultListener* listener) const {
    const absl::Status& s = GetStatus(value);
    if (!s.ok()) *listener << "which has status " << s;
    return s.ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

// Polymorphic implementation of StatusIs(code, message_matcher).
class StatusIsMatcherImpl {
 public:
  StatusIsMatcherImpl(absl::StatusCode code,
                      ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename T>
  bool MatchAndExplain(const T& value,
                       ::testing::MatchResultListener* listener) const {
    const absl::Status& s = GetStatus(value);
    *listener << "which has status " << s;
    if (s.code() != code_) {
      *listener << " (code " << absl::StatusCodeToString(s.code())
                << ", expected " << absl::StatusCodeToString(code_) << ")";
      return false;
    }
    std::string message(s.message());
    ::testing::StringMatchResultListener inner;
    if (!message_.MatchAndExplain(message, &inner)) {
      *listener << " whose message does not match";
      if (!inner.str().empty()) *listener << ", " << inner.str();
      return false;
    }
    return true;
  }

  void DescribeTo(std::ostream* os) const {
    *os << "has status code " << absl::StatusCodeToString(code_)
        << " and a message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have status code " << absl::StatusCodeToString(code_)
        << " or has a message that ";
    message_.DescribeNegationTo(os);
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

}  // namespace internal

// Matches an OK absl::Status or an absl::StatusOr<T> holding a value.
inline ::testing::PolymorphicMatcher<internal::IsOkMatcherImpl> IsOk() {
  return ::testing::MakePolymorphicMatcher(internal::IsOkMatcherImpl());
}

// Matches a status (or the status of a StatusOr) with code `code` whose
// message matches `message_matcher` (a matcher or a value for equality).
template <typename MessageMatcher>
::testing::PolymorphicMatcher<internal::StatusIsMatcherImpl> StatusIs(
    absl::StatusCode code, MessageMatcher&& message_matcher) {
  return ::testing::MakePolymorphicMatcher(internal::StatusIsMatcherImpl(
      code, ::testing::MatcherCast<const std::string&>(
                std::forward<MessageMatcher>(message_matcher))));
}

// Matches a status (or the status of a StatusOr) with code `code`.
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcherImpl> StatusIs(
    absl::StatusCode code) {
  return StatusIs(code, ::testing::A<const std::string&>());
}

}  // namespace testutil
}  // namespace binlog

#define EXPECT_OK(expr) EXPECT_THAT((expr), ::binlog::testutil::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::binlog::testutil::IsOk())

// ASSERT_OK_AND_ASSIGN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>),
// fails the test (returning from the enclosing void function) if it is not
// OK, and otherwise moves its value into `lhs`, which may be a declaration
// (`auto x`, `Foo x`) or an existing lvalue.
#define BINLOG_TESTUTIL_CONCAT_INNER_(a, b) a##b
#define BINLOG_TESTUTIL_CONCAT_(a, b) BINLOG_TESTUTIL_CONCAT_INNER_(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                     \
  ASSERT_OK_AND_ASSIGN_IMPL_(                                               \
      BINLOG_TESTUTIL_CONCAT_(binlog_testutil_statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr)         \
  auto statusor = (expr);                                       \
  ASSERT_TRUE(statusor.ok()) << #expr << ": " << statusor.status(); \
  lhs = std::move(statusor).value()

#endif  // BINLOG_TESTS_TESTUTIL_STATUS_MATCHERS_H_
