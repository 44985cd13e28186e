// Tests for tests/testutil/status_matchers.h.

#include "tests/testutil/status_matchers.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace binlog {
namespace testutil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Value(int v) { return v; }
absl::StatusOr<int> Error() { return absl::DataLossError("bad line 3"); }

TEST(StatusMatchersTest, IsOkOnStatus) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::InternalError("x"), Not(IsOk()));
}

TEST(StatusMatchersTest, IsOkOnStatusOr) {
  EXPECT_THAT(Value(1), IsOk());
  EXPECT_THAT(Error(), Not(IsOk()));
}

TEST(StatusMatchersTest, StatusIsCode) {
  EXPECT_THAT(absl::DataLossError("m"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(absl::DataLossError("m"),
              Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_THAT(Error(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(Value(2), StatusIs(absl::StatusCode::kOk));
  EXPECT_THAT(Value(2), Not(StatusIs(absl::StatusCode::kDataLoss)));
}

TEST(StatusMatchersTest, StatusIsCodeAndMessage) {
  EXPECT_THAT(Error(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("line 3")));
  EXPECT_THAT(Error(), StatusIs(absl::StatusCode::kDataLoss, "bad line 3"));
  EXPECT_THAT(Error(), Not(StatusIs(absl::StatusCode::kDataLoss,
                                    HasSubstr("line 4"))));
  EXPECT_THAT(Error(), Not(StatusIs(absl::StatusCode::kNotFound,
                                    HasSubstr("line 3"))));
}

TEST(StatusMatchersTest, DescriptionsNameCodeAndMessage) {
  auto m = StatusIs(absl::StatusCode::kDataLoss, HasSubstr("x"));
  std::string d = ::testing::DescribeMatcher<absl::Status>(m);
  EXPECT_THAT(d, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(d, HasSubstr("\"x\""));
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(m, absl::NotFoundError("nope"),
                                             &listener));
  EXPECT_THAT(listener.str(), HasSubstr("NOT_FOUND"));
}

TEST(StatusMatchersTest, Macros) {
  EXPECT_OK(absl::OkStatus());
  ASSERT_OK(Value(3));
  ASSERT_OK_AND_ASSIGN(int v, Value(4));
  EXPECT_EQ(v, 4);
  ASSERT_OK_AND_ASSIGN(v, Value(5));
  EXPECT_EQ(v, 5);
  ASSERT_OK_AND_ASSIGN(auto p, absl::StatusOr<std::unique_ptr<int>>(
                                   std::make_unique<int>(6)));
  EXPECT_EQ(*p, 6);
}

bool reached_after_failed_assign = false;

void AssignFromError() {
  ASSERT_OK_AND_ASSIGN(int v, Error());
  (void)v;
  reached_after_failed_assign = true;
}

TEST(StatusMatchersTest, AssertOkAndAssignFailsAndReturns) {
  reached_after_failed_assign = false;
  EXPECT_FATAL_FAILURE(AssignFromError(), "bad line 3");
  EXPECT_FALSE(reached_after_failed_assign);
}

TEST(StatusMatchersTest, AssertOkFailureShowsTheStatus) {
  EXPECT_FATAL_FAILURE(ASSERT_OK(Error()), "bad line 3");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(absl::NotFoundError("gone")), "gone");
}

}  // namespace
}  // namespace testutil
}  // namespace binlog
