// TransactionScan (binlog/transaction_scan.h): the one walk of a log file by
// transactions that recovery, the relay log, the GTID scans and retention
// share. Each stop reason, the valid end, the visitor's controls and the
// classifier override, on files the log writes and then damages.

#include "binlog/transaction_scan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace internal {
namespace {

using testing_util::BuildTransaction;
using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::WriteFile;
using Result = TransactionScan::Result;

class TransactionScanTest : public ::testing::Test {
 protected:
  // Writes `n` transactions into a fresh log, closes it, and returns the
  // path of its first file; ends_[i] is where transaction i ends.
  std::string WriteLog(int n, bool checksums = true) {
    dir_ = NewTempDir("txn_scan");
    Options o;
    o.checksums = checksums;
    o.preallocate = io::PreallocMode::kNone;
    auto log = Binlog::Open(dir_, "b", o);
    EXPECT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn(checksums);
    for (int i = 0; i < n; ++i) {
      BuildTransaction(&txn, i + 1, 100);
      auto r = (*log)->Commit(&txn);
      EXPECT_TRUE(r.ok()) << r.status();
      ends_.push_back(r->end);
    }
    EXPECT_TRUE((*log)->Close().ok());
    return dir_ + "/b.000001";
  }

  // The file as a crash leaves it: in use (the Reader tolerates a torn
  // tail only there). The Format_description's checksum does not cover
  // the flag.
  static std::string InUse(std::string data) {
    data[kInUseFlagFileOffset] |= kFlagBinlogInUse;
    return data;
  }

  static ReaderOptions Verify() {
    ReaderOptions ro;
    ro.checksum_mode = ChecksumMode::kVerify;
    ro.payloads = PayloadMode::kRaw;
    return ro;
  }

  // Runs a scan that records every event it sees.
  TransactionScan Scan(const std::string& path, std::vector<Result>* seen = nullptr) {
    auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
    EXPECT_TRUE(t.ok()) << t.status();
    absl::Status s = t->Run([&](const Event&, Result r) -> absl::StatusOr<ScanNext> {
      if (seen != nullptr) seen->push_back(r);
      return ScanNext::kContinue;
    });
    EXPECT_TRUE(s.ok()) << s;
    return std::move(*t);
  }

  std::string dir_;
  std::vector<uint64_t> ends_;
};

TEST_F(TransactionScanTest, CleanFileEndsAtItsLastEvent) {
  std::string path = WriteLog(3);
  std::vector<Result> seen;
  TransactionScan t = Scan(path, &seen);
  EXPECT_EQ(t.stop(), ScanStop::kEnd);
  EXPECT_EQ(t.valid_end(), ReadFile(path).size());
  EXPECT_EQ(t.pending(), 0u);
  EXPECT_FALSE(t.damaged());
  EXPECT_EQ(t.reason(), "end of file");
  EXPECT_FALSE(t.format_description().in_use);
  EXPECT_GT(t.header_end(), kMagicSize);
  // Three transactions of four events each, each started and ended once.
  int started = 0, ended = 0;
  for (Result r : seen) {
    started += r == Result::kStarted;
    ended += r == Result::kEnded;
  }
  EXPECT_EQ(started, 3);
  EXPECT_EQ(ended, 3);
}

TEST_F(TransactionScanTest, AFileEndingInsideATransactionHasPendingEvents) {
  std::string path = WriteLog(2);
  std::string data = ReadFile(path);
  // Keep transaction 2's Gtid and BEGIN only: cut at the start of its
  // Rows_query event. Find it by walking the events after ends_[0].
  uint64_t off = ends_[0];
  for (int i = 0; i < 2; ++i) off += LoadLe32(data.data() + off + kEventSizeOffset);
  WriteFile(path, data.substr(0, off));
  TransactionScan t = Scan(path);
  EXPECT_EQ(t.stop(), ScanStop::kEnd);
  EXPECT_EQ(t.valid_end(), ends_[0]);
  EXPECT_EQ(t.pending(), 2u);
  EXPECT_FALSE(t.damaged());
  EXPECT_EQ(t.reason(), "file ends inside a transaction");
}

TEST_F(TransactionScanTest, APartialEventIsATornTail) {
  std::string path = WriteLog(2);
  std::string data = ReadFile(path);
  WriteFile(path, InUse(data.substr(0, ends_[0] + 10)));  // 10 bytes of a header
  TransactionScan t = Scan(path);
  EXPECT_EQ(t.stop(), ScanStop::kTornTail);
  EXPECT_TRUE(t.partial());
  EXPECT_TRUE(t.damaged());
  EXPECT_EQ(t.bad_at(), ends_[0]);
  EXPECT_EQ(t.valid_end(), ends_[0]);
}

TEST_F(TransactionScanTest, ZerosAfterTheLastEventAreATornTailButNotPartial) {
  std::string path = WriteLog(1);
  std::string data = ReadFile(path);
  WriteFile(path, InUse(data + std::string(4096, '\0')));
  TransactionScan t = Scan(path);
  EXPECT_EQ(t.stop(), ScanStop::kTornTail);
  EXPECT_FALSE(t.partial());
  EXPECT_TRUE(t.damaged());
  EXPECT_EQ(t.bad_at(), data.size());
  EXPECT_EQ(t.valid_end(), data.size());
}

TEST_F(TransactionScanTest, ABadChecksumIsDamageWithTheReadersError) {
  std::string path = WriteLog(3);
  std::string data = ReadFile(path);
  // Flip a byte in the middle of transaction 2's events.
  data[ends_[0] + 40] ^= 0x5a;
  WriteFile(path, data);
  TransactionScan t = Scan(path);
  ASSERT_EQ(t.stop(), ScanStop::kDamaged) << t.reason();
  EXPECT_TRUE(absl::IsDataLoss(t.reader_error()));
  EXPECT_TRUE(t.damaged());
  EXPECT_EQ(t.valid_end(), ends_[0]);
  EXPECT_GE(t.bad_at(), ends_[0]);
  EXPECT_LT(t.bad_at(), ends_[1]);
}

TEST_F(TransactionScanTest, AnEventThatFitsNoTransactionStopsTheScan) {
  // Without checksums a damaged type byte passes the reader: an Xid
  // turned into a second Gtid inside a transaction.
  std::string path = WriteLog(2, /*checksums=*/false);
  std::string data = ReadFile(path);
  // Walk transaction 2's events to its last one (the Xid).
  uint64_t off = ends_[0], last = off;
  while (off < ends_[1]) {
    last = off;
    off += LoadLe32(data.data() + off + kEventSizeOffset);
  }
  data[last + 4] = static_cast<char>(kAnonymousGtidEvent);
  WriteFile(path, data);
  TransactionScan t = Scan(path);
  ASSERT_EQ(t.stop(), ScanStop::kUnexpected) << t.reason();
  EXPECT_EQ(t.bad_at(), last);
  EXPECT_EQ(t.valid_end(), ends_[0]);
  EXPECT_TRUE(t.damaged());
  EXPECT_NE(t.reason().find(absl::StrCat("at offset ", last)), std::string::npos)
      << t.reason();
}

TEST_F(TransactionScanTest, TolerantScanGoesPastEventsThatFitNoTransaction) {
  std::string path = WriteLog(3, /*checksums=*/false);
  std::string data = ReadFile(path);
  uint64_t off = ends_[0], last = off;
  while (off < ends_[1]) {
    last = off;
    off += LoadLe32(data.data() + off + kEventSizeOffset);
  }
  data[last + 4] = static_cast<char>(kAnonymousGtidEvent);
  WriteFile(path, data);
  auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
  ASSERT_TRUE(t.ok()) << t.status();
  t->set_tolerate_unexpected(true);
  int unexpected = 0, ended = 0;
  ASSERT_TRUE(t->Run([&](const Event&, Result r) -> absl::StatusOr<ScanNext> {
                 unexpected += r == Result::kUnexpected;
                 ended += r == Result::kEnded;
                 return ScanNext::kContinue;
               }).ok());
  EXPECT_EQ(t->stop(), ScanStop::kEnd);
  // The damaged Xid (a Gtid inside transaction 2) and transaction 3's Gtid
  // (inside the transaction the first opened, as the parser recovers).
  EXPECT_EQ(unexpected, 2);
  EXPECT_EQ(ended, 2);  // transactions 1 and 3
}

TEST_F(TransactionScanTest, TheVisitorCanStopRefuseOrFail) {
  std::string path = WriteLog(3);
  {
    auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
    ASSERT_TRUE(t.ok());
    int n = 0;
    ASSERT_TRUE(t->Run([&](const Event&, Result r) -> absl::StatusOr<ScanNext> {
                   ++n;
                   return r == Result::kEnded ? ScanNext::kStop : ScanNext::kContinue;
                 }).ok());
    EXPECT_EQ(t->stop(), ScanStop::kStopped);
    EXPECT_EQ(n, 4 + 1) << "Previous_gtids, then one transaction";
  }
  {
    auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(t->Run([&](const Event& ev, Result) -> absl::StatusOr<ScanNext> {
                   return ev.offset >= ends_[1] ? ScanNext::kUnexpected
                                                : ScanNext::kContinue;
                 }).ok());
    EXPECT_EQ(t->stop(), ScanStop::kUnexpected);
    EXPECT_EQ(t->bad_at(), ends_[1]);
    EXPECT_EQ(t->valid_end(), ends_[1]);
  }
  {
    auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
    ASSERT_TRUE(t.ok());
    absl::Status s = t->Run([&](const Event&, Result) -> absl::StatusOr<ScanNext> {
      return absl::DataLossError("refused");
    });
    EXPECT_TRUE(absl::IsDataLoss(s));
    EXPECT_EQ(s.message(), "refused");
  }
}

TEST_F(TransactionScanTest, TheCallersClassifierReplacesTheParser) {
  std::string path = WriteLog(2);
  auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
  ASSERT_TRUE(t.ok());
  int events = 0;
  ASSERT_TRUE(t->Run([](const Event&) { return Result::kInside; },
                     [&](const Event&, Result r) -> absl::StatusOr<ScanNext> {
                       EXPECT_EQ(r, Result::kInside);
                       ++events;
                       return ScanNext::kContinue;
                     }).ok());
  // Previous_gtids, two transactions of four events, the Stop event.
  EXPECT_EQ(events, 1 + 2 * 4 + 1);
  EXPECT_EQ(t->valid_end(), t->header_end());  // nothing ever left a transaction
  EXPECT_EQ(t->pending(), static_cast<uint64_t>(events));
}

TEST_F(TransactionScanTest, AnUnreadableFormatDescriptionIsDataLossNamingTheFile) {
  std::string path = WriteLog(1);
  std::string data = ReadFile(path);
  data[kMagicSize + kHeaderSize + 3] ^= 0x11;  // inside the FDE body
  WriteFile(path, data);
  auto t = TransactionScan::Open(io::FileSystem::Default(), path, Verify());
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsDataLoss(t.status())) << t.status();
  EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status();
  EXPECT_NE(t.status().message().find("Format_description"), std::string::npos);
}

TEST_F(TransactionScanTest, AMissingFileIsNotDataLoss) {
  auto t = TransactionScan::Open(io::FileSystem::Default(), "/nonexistent/b.000001",
                                 Verify());
  ASSERT_FALSE(t.ok());
  EXPECT_FALSE(absl::IsDataLoss(t.status())) << t.status();
}

}  // namespace
}  // namespace internal
}  // namespace binlog
