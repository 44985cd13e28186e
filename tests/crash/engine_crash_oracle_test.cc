// The checker of //tests:engine_crash_test shown able to fail.
//
// The example server with EngineServerOptions::engine_commit_first commits
// in the engine before writing the binlog (the wrong order). Killed at the
// point between the two (a pause point of the server, so the kill lands
// there every time), it leaves a transaction committed in the engine that
// the binlog does not have: the checker must report it. The right order,
// killed at the corresponding points (after the engine prepare, before the
// binlog write; and after the binlog write, between engine commits), must
// pass the same checks.
//
// This binary is also the server child (--child), like engine_crash_test.

#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/crash/engine_crash_harness.h"

namespace binlog {
namespace engine_crash {
namespace {

struct FixedRun {
  std::vector<std::string> violations;
  Totals totals;
};

FixedRun RunFixed(bool engine_commit_first, const std::string& point, int hit,
                  uint64_t seed) {
  IterationConfig cfg;
  cfg.self = SelfPath();
  cfg.dir = NewServerDir();
  cfg.seed = seed;
  cfg.engine_commit_first = engine_commit_first;
  cfg.fixed = FixedKill{point, hit};
  std::vector<Acked> acked;
  FixedRun run;
  std::string summary;
  run.violations = RunIteration(cfg, &acked, &run.totals, &summary);
  RemoveServerDir(cfg.dir);
  return run;
}

bool HasEngineOnly(const std::vector<std::string>& v) {
  for (const std::string& s : v) {
    if (absl::StrContains(s, "is committed in the engine but not in the binlog")) {
      return true;
    }
  }
  return false;
}

TEST(EngineCrashOracleTest, EngineCommitBeforeBinlogWriteIsCaught) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    for (int hit : {1, 7}) {
      FixedRun r = RunFixed(/*engine_commit_first=*/true,
                            "commit:engine_committed_before_binlog", hit, seed);
      EXPECT_TRUE(HasEngineOnly(r.violations))
          << "seed " << seed << " hit " << hit << ": the checker said:\n  "
          << absl::StrJoin(r.violations, "\n  ");
    }
  }
}

// Killed after the engine prepare, before the binlog write: the restart
// rolls the transaction back, and everything holds.
TEST(EngineCrashOracleTest, RightOrderKilledAfterPrepareHolds) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    FixedRun r = RunFixed(/*engine_commit_first=*/false, "commit:prepared", 7,
                          seed);
    EXPECT_THAT(r.violations, ::testing::IsEmpty()) << "seed " << seed;
    EXPECT_GE(r.totals.prepared_rolled_back, 1u) << "seed " << seed;
  }
}

// Killed after the group is durable in the binlog, before its engine
// commits: the restart commits the prepared transactions, and everything
// holds.
TEST(EngineCrashOracleTest, RightOrderKilledBeforeEngineCommitHolds) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    FixedRun r = RunFixed(/*engine_commit_first=*/false, "commit:group_durable",
                          7, seed);
    EXPECT_THAT(r.violations, ::testing::IsEmpty()) << "seed " << seed;
    EXPECT_GE(r.totals.prepared_committed, 1u) << "seed " << seed;
  }
}

// Killed between the engine commits of a group.
TEST(EngineCrashOracleTest, RightOrderKilledBetweenEngineCommitsHolds) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    FixedRun r = RunFixed(/*engine_commit_first=*/false,
                          "commit:engine_committed", 7, seed);
    EXPECT_THAT(r.violations, ::testing::IsEmpty()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace engine_crash
}  // namespace binlog

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // takes the --gtest_* flags
  absl::ParseCommandLine(argc, argv);     // the harness's child flags
  binlog::engine_crash::MaybeRunChild();
  return RUN_ALL_TESTS();
}
