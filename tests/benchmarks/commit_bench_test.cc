// commit_bench's directory names (benchmarks/commit_bench.h PointDirName):
// two points that differ in any key get different directories, so that
// --keep never lets one point delete another's files. And its reader lag
// samples (ReaderLagSampler): one per group and reader, batches included.

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/commit_bench.h"
#include "gtest/gtest.h"

namespace commit_bench {
namespace {

TEST(PointDirNameTest, EveryKeyOfAPointNamesItsDirectory) {
  PointConfig base;
  base.system = "binlog";
  base.readers = 8;  // reader_api counts only with readers
  base.ack = "semisync";  // the ack settings count only with semisync
  // One change per field of PointConfig.
  const std::vector<std::pair<std::string, std::function<void(PointConfig*)>>>
      changes = {
          {"system", [](PointConfig* p) { p->system = "naive-group"; }},
          {"threads", [](PointConfig* p) { p->threads = 64; }},
          {"payload", [](PointConfig* p) { p->payload = 4096; }},
          {"sync_every", [](PointConfig* p) { p->sync_every = 0; }},
          {"readers", [](PointConfig* p) { p->readers = 64; }},
          {"rep", [](PointConfig* p) { p->rep = 2; }},
          {"prealloc", [](PointConfig* p) { p->prealloc = "none"; }},
          {"reader_wake_us", [](PointConfig* p) { p->reader_wake_us = 0; }},
          {"reader_wakeups_per_s",
           [](PointConfig* p) { p->reader_wakeups_per_s = 0; }},
          {"reader_api", [](PointConfig* p) { p->reader_api = "batch"; }},
          {"ack", [](PointConfig* p) { p->ack = "none"; }},
          {"ack_delay_us", [](PointConfig* p) { p->ack_delay_us = 7; }},
          {"ack_timeout_ms", [](PointConfig* p) { p->ack_timeout_ms = 7; }},
          {"workload", [](PointConfig* p) { p->workload = "sysbench"; }},
          {"compression", [](PointConfig* p) { p->compression = "zstd"; }},
          {"gtid", [](PointConfig* p) { p->gtid = "assigned"; }},
          {"flavor", [](PointConfig* p) { p->flavor = "mariadb"; }},
          {"dependency", [](PointConfig* p) { p->dependency = "writeset"; }},
          {"zero_ahead", [](PointConfig* p) { p->zero_ahead = 100; }},
          {"encryption", [](PointConfig* p) { p->encryption = "on"; }},
          {"background_rotation",
           [](PointConfig* p) { p->background_rotation = "off"; }},
      };
  std::set<std::string> names = {PointDirName(base)};
  for (const auto& change : changes) {
    PointConfig p = base;
    change.second(&p);
    EXPECT_TRUE(names.insert(PointDirName(p)).second)
        << change.first << " does not change the directory: "
        << PointDirName(p);
  }
  // Values closer than any rounding (zero_ahead in bytes, not KiB).
  PointConfig a = base, b = base;
  a.zero_ahead = 1000;
  b.zero_ahead = 1001;
  EXPECT_NE(PointDirName(a), PointDirName(b));
}

// The case found: two points of one run that differ only in flavor.
TEST(PointDirNameTest, FlavorsOfOnePointGetTheirOwnDirectories) {
  PointConfig mysql;
  mysql.system = "binlog";
  PointConfig mariadb = mysql;
  mariadb.flavor = "mariadb";
  EXPECT_NE(PointDirName(mysql), PointDirName(mariadb));
}

// The samplers' clock in these tests.
int64_t fake_now_ns = 0;
int64_t FakeNow() { return fake_now_ns; }

// Groups 1-3 end at keys 100, 200, 300, recorded at 1, 2, 3 ms.
void RecordThreeGroups(GroupMarks* marks) {
  marks->Record(1, 100, 1000000);
  marks->Record(2, 200, 2000000);
  marks->Record(3, 300, 3000000);
}

// A batch reader that reads the three groups in one batch at 10 ms gets a
// sample for each (9, 8 and 7 ms), not only for the last group.
TEST(ReaderLagSamplerTest, ABatchOverSeveralGroupsSamplesEachGroup) {
  auto marks = std::make_unique<GroupMarks>();
  RecordThreeGroups(marks.get());
  ReaderLagSampler s(&FakeNow);
  fake_now_ns = 10000000;
  s.Observe(*marks, 300, /*txn_end=*/true, /*measuring=*/true);
  EXPECT_EQ(s.lag().count(), 3u);
  EXPECT_EQ(s.lag().max(), 9000u);
  // The next batch, past group 3: nothing more until group 4 is recorded.
  fake_now_ns = 11000000;
  s.Observe(*marks, 350, true, true);
  EXPECT_EQ(s.lag().count(), 3u);
  EXPECT_FALSE(s.overrun());
}

// A decoded reader sees every event: one sample per group end, and the
// events inside a group give none, nor read the clock (a clock read per
// event would be most of a decoded reader's cost).
int clock_reads = 0;
int64_t CountingNow() {
  ++clock_reads;
  return fake_now_ns;
}

TEST(ReaderLagSamplerTest, EventsSampleEachGroupAtItsEnd) {
  auto marks = std::make_unique<GroupMarks>();
  RecordThreeGroups(marks.get());
  ReaderLagSampler s(&CountingNow);
  clock_reads = 0;
  fake_now_ns = 1500000;
  s.Observe(*marks, 50, false, true);   // inside group 1
  EXPECT_EQ(clock_reads, 0);
  s.Observe(*marks, 100, true, true);   // group 1: 0.5 ms
  EXPECT_EQ(clock_reads, 1);
  fake_now_ns = 4000000;
  s.Observe(*marks, 150, true, true);   // inside group 2
  EXPECT_EQ(clock_reads, 1);
  s.Observe(*marks, 200, true, true);   // group 2: 2 ms
  fake_now_ns = 4500000;
  s.Observe(*marks, 300, true, true);   // group 3: 1.5 ms
  EXPECT_EQ(s.lag().count(), 3u);
  EXPECT_EQ(s.lag().max(), 2000u);
  EXPECT_EQ(clock_reads, 3);
}

// Reads that come before their group's record (the callback runs after
// the publish) count as lag 0 once the record is seen, whether the read
// ended at the group's end or went past it.
TEST(ReaderLagSamplerTest, ReadsBeforeTheRecordCountAsZero) {
  auto marks = std::make_unique<GroupMarks>();
  ReaderLagSampler s(&FakeNow);
  fake_now_ns = 500000;
  s.Observe(*marks, 200, true, true);  // groups 1 and 2, unrecorded
  EXPECT_EQ(s.lag().count(), 0u);
  RecordThreeGroups(marks.get());
  s.ResolveAll(*marks, true);
  EXPECT_EQ(s.lag().count(), 2u);
  EXPECT_EQ(s.lag().max(), 0u);
  // Group 3, read later at 3.5 ms.
  fake_now_ns = 3500000;
  s.Observe(*marks, 300, true, true);
  EXPECT_EQ(s.lag().count(), 3u);
  EXPECT_EQ(s.lag().max(), 500u);
}

// Outside the measured window reads are followed but not sampled.
TEST(ReaderLagSamplerTest, NotMeasuringFollowsWithoutSamples) {
  auto marks = std::make_unique<GroupMarks>();
  RecordThreeGroups(marks.get());
  ReaderLagSampler s(&FakeNow);
  fake_now_ns = 10000000;
  s.Observe(*marks, 200, true, /*measuring=*/false);
  EXPECT_EQ(s.lag().count(), 0u);
  fake_now_ns = 10000000;
  s.Observe(*marks, 300, true, true);
  EXPECT_EQ(s.lag().count(), 1u);  // group 3 only
}

}  // namespace
}  // namespace commit_bench
