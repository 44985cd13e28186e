// The crash oracle (crash_test_util.h) shown to fail: a log the oracle
// accepts is damaged by hand, one way per violation kind, and the oracle
// must report exactly that kind (and nothing else). The log is written by
// the library without checksums (so byte changes stay invisible to the
// reader and only the oracle's own comparisons can see them) and without
// preallocation (no zero tails); one case turns checksums on to check that
// the reader's report reaches the oracle's result.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/crash/crash_test_util.h"

namespace binlog {
namespace {

using crash_test::AckedTxn;
using crash_test::VerifyLog;
using crash_test::VerifyResult;
using crash_test::ViolationKind;

// A closed log of `n` transactions (ids 1..n), every one acknowledged, in
// one file (binlog.000001), followed by a Stop event.
struct TestLog {
  std::string dir;
  std::vector<AckedTxn> acked;
  bool checksums = false;

  std::string file() const { return dir + "/binlog.000001"; }
  std::string Read() const { return testing_util::ReadFile(file()); }
  void Write(const std::string& bytes) const {
    testing_util::WriteFile(file(), bytes);
  }
  VerifyResult Verify(const std::vector<AckedTxn>& acks) const {
    return VerifyLog(dir, "binlog", acks, /*purge_floor=*/0);
  }
  VerifyResult Verify() const { return Verify(acked); }
};

Options LogOptions(bool checksums) {
  Options o;
  o.checksums = checksums;
  o.preallocate = io::PreallocMode::kNone;
  o.max_file_size = 1 << 20;
  return o;
}

// `extra(log, txn)` may commit more (unacknowledged) transactions before
// the Close.
template <typename Extra>
TestLog WriteLog(const std::string& tag, int n, bool checksums, Extra extra) {
  TestLog t;
  t.dir = testing_util::NewTempDir(tag);
  t.checksums = checksums;
  auto log = Binlog::Open(t.dir, "binlog", LogOptions(checksums));
  if (!log.ok()) {
    ADD_FAILURE() << log.status();
    return t;
  }
  TransactionBuffer txn(checksums);
  for (uint64_t id = 1; id <= static_cast<uint64_t>(n); ++id) {
    crash_test::BuildTxn(&txn, id);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) {
      ADD_FAILURE() << pos.status();
      return t;
    }
    t.acked.push_back(AckedTxn{id, *pos, std::string(txn.data())});
  }
  extra(log->get(), &txn);
  absl::Status s = (*log)->Close();
  if (!s.ok()) ADD_FAILURE() << s;
  return t;
}

TestLog WriteLog(const std::string& tag, int n, bool checksums = false) {
  return WriteLog(tag, n, checksums, [](Binlog*, TransactionBuffer*) {});
}

// The event boundaries of the transaction at [start, end) of `bytes`.
std::vector<uint64_t> EventStarts(const std::string& bytes, uint64_t start,
                                  uint64_t end) {
  std::vector<uint64_t> out;
  for (uint64_t at = start; at < end;) {
    out.push_back(at);
    at += LoadLe32(bytes.data() + at + kEventSizeOffset);
  }
  return out;
}

std::vector<std::string> KindNames(const VerifyResult& r) {
  std::vector<std::string> out;
  for (ViolationKind k : r.violation_kinds) {
    out.push_back(crash_test::ViolationKindName(k));
  }
  return out;
}

// Exactly `kind` (one or more times), no other violation, no reader error,
// no torn tail, no damaged unacknowledged transaction.
void ExpectOnly(const VerifyResult& r, ViolationKind kind) {
  ASSERT_FALSE(r.violations.empty())
      << "the oracle reported nothing; expected "
      << crash_test::ViolationKindName(kind);
  for (size_t i = 0; i < r.violations.size(); ++i) {
    EXPECT_EQ(r.violation_kinds[i], kind)
        << r.violations[i] << " (kinds: " << absl::StrJoin(KindNames(r), ",")
        << ")";
  }
  EXPECT_TRUE(r.read_errors.empty());
  EXPECT_TRUE(r.torn_tails.empty());
  EXPECT_TRUE(r.corrupted.empty());
}

TEST(OracleSensitivityTest, TheUndamagedLogIsClean) {
  TestLog t = WriteLog("clean", 6);
  VerifyResult r = t.Verify();
  EXPECT_TRUE(r.violations.empty()) << absl::StrJoin(r.violations, "\n");
  EXPECT_TRUE(r.read_errors.empty());
  EXPECT_TRUE(r.torn_tails.empty());
  EXPECT_TRUE(r.corrupted.empty());
  EXPECT_EQ(r.acked_checked, 6u);
  EXPECT_EQ(r.acked_present.size(), 6u);
  EXPECT_TRUE(crash_test::CheckClosedFilesEnd(t.dir, "binlog", false).empty());
}

// The writer was told position P; the transaction is elsewhere.
TEST(OracleSensitivityTest, AcknowledgedTransactionMoved) {
  TestLog t = WriteLog("moved", 6);
  // The log as if transactions 3 and 4 had been written in the other
  // order: the acknowledgement of 3 names where 4 is now, and 4 where 3 is.
  std::vector<AckedTxn> acks = t.acked;
  std::swap(acks[2].pos, acks[3].pos);
  acks[2].bytes.clear();  // position-dependent bytes: compare positions
  acks[3].bytes.clear();
  VerifyResult r = t.Verify(acks);
  ExpectOnly(r, ViolationKind::kAckedMoved);
  EXPECT_EQ(r.violations.size(), 2u) << absl::StrJoin(r.violations, "\n");
}

// A byte of the Gtid event changed: every event still reads and the
// transaction's content is right, only the bytes differ.
TEST(OracleSensitivityTest, AcknowledgedTransactionBytesChanged) {
  TestLog t = WriteLog("bytes", 6);
  std::string bytes = t.Read();
  bytes[t.acked[2].pos.start + kHeaderSize + 1] ^= 0x40;  // a SID byte
  t.Write(bytes);
  VerifyResult r = t.Verify();
  ExpectOnly(r, ViolationKind::kAckedBytesDiffer);
  EXPECT_EQ(r.violations.size(), 1u);
  EXPECT_TRUE(absl::StrContains(r.violations[0], "transaction 3 "))
      << r.violations[0];
}

// A byte of the Rows_query text changed: the content is not what the
// writer built.
TEST(OracleSensitivityTest, AcknowledgedTransactionDamaged) {
  TestLog t = WriteLog("damaged", 6);
  std::string bytes = t.Read();
  const AckedTxn& a = t.acked[4];
  std::vector<uint64_t> ev = EventStarts(bytes, a.pos.start, a.pos.end);
  ASSERT_EQ(ev.size(), 4u);
  bytes[ev[2] + kHeaderSize + 3] ^= 0x01;  // Rows_query text
  t.Write(bytes);
  VerifyResult r = t.Verify();
  // Damaged (not "missing": it is there, damaged).
  ASSERT_EQ(r.violations.size(), 2u) << absl::StrJoin(r.violations, "\n");
  EXPECT_EQ(r.violation_kinds[0], ViolationKind::kAckedDamaged);
  EXPECT_TRUE(absl::StrContains(r.violations[0], "transaction 5 "));
  // ...and, found damaged, it is not among the intact ones.
  EXPECT_EQ(r.violation_kinds[1], ViolationKind::kAckedMissing);
  EXPECT_EQ(r.missing_acked, std::vector<uint64_t>{5});
  EXPECT_TRUE(r.corrupted.empty());  // reported as acknowledged damage
}

// With checksums the same damage is the reader's to report: it must reach
// the result (read_errors), and the transactions it hides are missing.
TEST(OracleSensitivityTest, DamageUnderChecksumsIsAReaderError) {
  TestLog t = WriteLog("damaged_crc", 6, /*checksums=*/true);
  std::string bytes = t.Read();
  const AckedTxn& a = t.acked[4];
  std::vector<uint64_t> ev = EventStarts(bytes, a.pos.start, a.pos.end);
  bytes[ev[2] + kHeaderSize + 3] ^= 0x01;
  t.Write(bytes);
  VerifyResult r = t.Verify();
  EXPECT_EQ(r.read_errors.size(), 1u);
  // The reader stops inside transaction 5: it is damaged (cut off by the
  // error), and neither it nor 6 is there intact.
  ASSERT_EQ(r.violations.size(), 3u) << absl::StrJoin(r.violations, "\n");
  EXPECT_EQ(r.violation_kinds[0], ViolationKind::kAckedDamaged);
  EXPECT_EQ(r.violation_kinds[1], ViolationKind::kAckedMissing);
  EXPECT_EQ(r.violation_kinds[2], ViolationKind::kAckedMissing);
  EXPECT_EQ(r.missing_acked, (std::vector<uint64_t>{5, 6}));
}

// The transaction is not in the log at all: the file was cut at an event
// boundary before the last acknowledged transaction.
TEST(OracleSensitivityTest, AcknowledgedTransactionMissing) {
  TestLog t = WriteLog("missing", 6);
  std::string bytes = t.Read();
  bytes.resize(t.acked[5].pos.start);
  t.Write(bytes);
  VerifyResult r = t.Verify();
  ExpectOnly(r, ViolationKind::kAckedMissing);
  EXPECT_EQ(r.missing_acked, std::vector<uint64_t>{6});
}

// The same transaction twice.
TEST(OracleSensitivityTest, DuplicatedTransaction) {
  TestLog t = WriteLog("dup", 4, false, [](Binlog* log, TransactionBuffer* txn) {
    crash_test::BuildTxn(txn, 2);  // id 2 again, never acknowledged
    ASSERT_TRUE(log->Commit(txn).ok());
  });
  VerifyResult r = t.Verify();
  ExpectOnly(r, ViolationKind::kDuplicate);
  EXPECT_TRUE(absl::StrContains(r.violations[0], "transaction 2 appears twice"))
      << r.violations[0];
}

// A partial unacknowledged transaction is visible (BEGIN, no Rows_query):
// the oracle lists it as damaged for the harness to judge, and no power cut
// explains it.
TEST(OracleSensitivityTest, PartialUnacknowledgedTransactionVisible) {
  TestLog t = WriteLog("partial", 4, false, [](Binlog* log, TransactionBuffer* txn) {
    txn->Clear();
    AppendAnonymousGtid(txn, 1700000000, 1, 0, 1);
    AppendQuery(txn, 1700000000, 1, 7, "db", "BEGIN");
    AppendXid(txn, 1700000000, 1, 99);
    ASSERT_TRUE(log->Commit(txn).ok());
  });
  VerifyResult r = t.Verify();
  EXPECT_TRUE(r.violations.empty()) << absl::StrJoin(r.violations, "\n");
  ASSERT_EQ(r.corrupted.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(r.corrupted[0].bytes, "malformed"))
      << r.corrupted[0].bytes;
  EXPECT_FALSE(r.corrupted[0].checksums);
  EXPECT_FALSE(crash_test::DamageExplainedByLoss(r.corrupted[0], t.file(), {}));
}

// The power-loss harness tolerates damage only where a cut tore that very
// file, without checksums.
TEST(OracleSensitivityTest, DamageIsExplainedOnlyByATornFileWithoutChecksums) {
  crash_test::FoundTxn d;
  d.file = 3;
  d.bytes = "Rows_query differs";
  d.checksums = false;
  const std::string file = "/d/binlog.000003";
  const std::set<std::string> torn = {file};
  EXPECT_TRUE(crash_test::DamageExplainedByLoss(d, file, torn));
  // A cleanly closed file (synced whole: no cut reverted it).
  EXPECT_FALSE(crash_test::DamageExplainedByLoss(d, file, {}));
  EXPECT_FALSE(crash_test::DamageExplainedByLoss(d, file, {"/d/binlog.000002"}));
  d.checksums = true;  // a reader would have reported it
  EXPECT_FALSE(crash_test::DamageExplainedByLoss(d, file, torn));
}

// The Stop event torn in a file whose in-use flag is clear: a torn tail
// where the file claims a clean close. The reader refuses it (DataLoss: a
// clean file has no torn tail), and both the oracle and the closed-file end
// check report it.
TEST(OracleSensitivityTest, TornTailInAFileThatClaimsACleanClose) {
  TestLog t = WriteLog("torn", 4);
  std::string bytes = t.Read();
  ASSERT_GT(bytes.size(), t.acked.back().pos.end + 5);
  bytes.resize(bytes.size() - 5);  // inside the Stop event
  t.Write(bytes);
  VerifyResult r = t.Verify();
  EXPECT_TRUE(r.violations.empty()) << absl::StrJoin(r.violations, "\n");
  ASSERT_EQ(r.read_errors.size(), 1u);
  EXPECT_FALSE(r.read_errors[0].in_use);
  EXPECT_TRUE(absl::StrContains(crash_test::ReadErrorViolation(r.read_errors[0]),
                                "(in-use flag clear)"));
  EXPECT_EQ(r.acked_checked, 4u);  // everything before the tail was read
  std::vector<std::string> v =
      crash_test::CheckClosedFilesEnd(t.dir, "binlog", false);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(absl::StrContains(v[0], "in-use flag clear")) << v[0];
  EXPECT_TRUE(absl::StrContains(v[0], "ends inside an event header")) << v[0];
}

// A file whose flag is clear ending at an event boundary inside a
// transaction (cut before the last transaction's Xid, Stop gone): no torn
// tail, only the closed-file end check sees it; the oracle lists the cut
// transaction as damaged ("ends with its file"), which no cut explains in
// a file no cut tore.
TEST(OracleSensitivityTest, ClosedFileEndingInsideATransaction) {
  TestLog t = WriteLog("inside", 4, false, [](Binlog* log, TransactionBuffer* txn) {
    crash_test::BuildTxn(txn, 5);  // unacknowledged
    ASSERT_TRUE(log->Commit(txn).ok());
  });
  std::string bytes = t.Read();
  const uint64_t start = t.acked.back().pos.end;  // transaction 5
  std::vector<uint64_t> ev = EventStarts(bytes, start, bytes.size());
  ASSERT_GE(ev.size(), 4u);
  bytes.resize(ev[3]);  // Gtid, BEGIN, Rows_query of 5; no Xid, no Stop
  t.Write(bytes);
  std::vector<std::string> v =
      crash_test::CheckClosedFilesEnd(t.dir, "binlog", false);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(absl::StrContains(v[0], "ends inside a transaction")) << v[0];
  VerifyResult r = t.Verify();
  EXPECT_TRUE(r.violations.empty()) << absl::StrJoin(r.violations, "\n");
  EXPECT_TRUE(r.torn_tails.empty());
  ASSERT_EQ(r.corrupted.size(), 1u);
  EXPECT_EQ(r.corrupted[0].bytes, crash_test::kEndsWithItsFile);
  EXPECT_FALSE(crash_test::DamageExplainedByLoss(r.corrupted[0], t.file(), {}));
}

}  // namespace
}  // namespace binlog
