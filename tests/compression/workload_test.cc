// The benchmark workload generator writes well-formed transactions: valid
// event framing (read back through Reader), one transaction per Next() by
// the boundary parser, MySQL 8.0 Gtid events whose transaction_length is
// right, and the rows/sizes the options ask for.

#include "benchmarks/workload.h"

#include <string>

#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace bench {
namespace {

class WorkloadTest : public ::testing::TestWithParam<Workload> {};

TEST_P(WorkloadTest, TransactionsAreWellFormed) {
  WorkloadOptions o;
  o.kind = GetParam();
  o.min_rows = 1;
  o.max_rows = 20;
  WorkloadGenerator gen(o);
  TransactionBuffer txn;
  for (int i = 0; i < 200; ++i) {
    gen.Next(&txn);
    TransactionBoundaryParser parser;
    absl::string_view rest = txn.data();
    int rows_events = 0, ended = 0;
    size_t n = 0;
    while (!rest.empty()) {
      EventHeader h = DecodeHeader(rest);
      ASSERT_GE(h.event_size, kHeaderSize + kChecksumSize);
      ASSERT_LE(h.event_size, rest.size());
      absl::string_view ev = rest.substr(0, h.event_size);
      absl::string_view body = EventBody(ev, true);
      auto r = parser.Feed(h, body);
      if (r == TransactionBoundaryParser::Result::kEnded) ++ended;
      EXPECT_NE(r, TransactionBoundaryParser::Result::kUnexpected);
      if (n == 0) {
        ASSERT_EQ(h.type, kAnonymousGtidEvent);
        absl::string_view len = body.substr(49);
        uint64_t total;
        ASSERT_TRUE(ConsumePackedInt(&len, &total));
        EXPECT_EQ(total, txn.size());
      }
      if (h.type == kQueryEvent) {
        auto q = DecodeQuery(body, 13);
        ASSERT_TRUE(q.ok()) << q.status();
        EXPECT_EQ(q->query, "BEGIN");
      }
      if (h.type == kWriteRowsEvent || h.type == kUpdateRowsEvent ||
          h.type == kDeleteRowsEvent) {
        ++rows_events;
      }
      rest.remove_prefix(h.event_size);
      ++n;
    }
    EXPECT_EQ(ended, 1);
    if (GetParam() != Workload::kRandom) {
      EXPECT_GE(rows_events, 1);
      EXPECT_LE(rows_events, 20);
    }
  }
}

TEST_P(WorkloadTest, LogOfGeneratedTransactionsReadsBack) {
  std::string dir = testing_util::NewTempDir("workload");
  Options lo;
  lo.compression = io::Codec::kZstd;
  lo.sync_policy = SyncPolicy::kNever;
  WorkloadOptions o;
  o.kind = GetParam();
  WorkloadGenerator gen(o);
  {
    auto log = Binlog::Open(dir, "binlog", lo);
    ASSERT_TRUE(log.ok());
    TransactionBuffer txn;
    for (int i = 0; i < 100; ++i) {
      gen.Next(&txn);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  absl::Status s;
  int xids = 0;
  while ((s = (*r)->Next(&ev)).ok()) xids += ev.header.type == kXidEvent;
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(xids, 100);
}

TEST(WorkloadSizeTest, SysbenchRowsHaveSysbenchSizes) {
  WorkloadOptions o;
  o.kind = Workload::kSysbench;
  o.min_rows = o.max_rows = 4;  // one of each statement kind
  WorkloadGenerator gen(o);
  TransactionBuffer txn;
  gen.Next(&txn);
  // Gtid 80, BEGIN 80, 4 x Table_map 67, 2 x Update_rows 416 (two
  // 190-byte images), Delete_rows and Write_rows 225, Xid 31 (CRC32 on).
  EXPECT_EQ(txn.size(), 80u + 80 + 4 * 67 + 2 * 416 + 2 * 225 + 31);
}

INSTANTIATE_TEST_SUITE_P(Kinds, WorkloadTest,
                         ::testing::Values(Workload::kRandom, Workload::kSysbench,
                                           Workload::kWide),
                         [](const ::testing::TestParamInfo<Workload>& i) {
                           return std::string(WorkloadName(i.param));
                         });

}  // namespace
}  // namespace bench
}  // namespace binlog
