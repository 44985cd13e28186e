// commit_bench's directory names (benchmarks/commit_bench.h PointDirName):
// two points that differ in any key get different directories, so that
// --keep never lets one point delete another's files.

#include <functional>
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

}  // namespace
}  // namespace commit_bench
