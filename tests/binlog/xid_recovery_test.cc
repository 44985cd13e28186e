// Two-phase-commit recovery: Binlog::BeginRecovery / PendingRecovery
// (binlog/xid_recovery.h), the XA identifier helpers, and
// Options::flush_engine_logs (the rotation barrier).

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/statement_events.h"
#include "binlog/xid_recovery.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::WriteFile;

constexpr uint32_t kTs = 1700000000;

const Uuid& ServerUuid() {
  static const Uuid u = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  return u;
}

Options BaseOptions() {
  Options o;
  o.server_uuid = ServerUuid();
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

// GTID, BEGIN, a statement, Xid.
void BuildXidTxn(TransactionBuffer* t, uint64_t xid) {
  t->Clear();
  t->AppendCommitGtid(kTs, 1, CommitGtid());
  AppendQuery(t, kTs, 1, 7, "db", "BEGIN");
  AppendQuery(t, kTs, 1, 7, "db", absl::StrCat("INSERT INTO t VALUES (", xid, ")"));
  AppendXid(t, kTs, 1, xid);
}

// GTID, a DDL Query carrying its XID (Q_DDL_LOGGED_WITH_XID).
void BuildDdlTxn(TransactionBuffer* t, uint64_t xid) {
  t->Clear();
  CommitGtid g;
  g.isolated = true;
  t->AppendCommitGtid(kTs, 1, g);
  AppendQueryWithStatusVars(t, kTs, 1, 7, "db", "CREATE TABLE t2 (a INT)",
                            DdlXidStatusVar(xid, /*mariadb=*/false));
}

XaId Xa(const std::string& gtrid) {
  XaId x;
  x.format_id = 1;
  x.gtrid = gtrid;
  x.bqual = "b";
  return x;
}

// XA START .. XA END, XA PREPARE (as MySQL 8.0 logs it).
void BuildXaPrepare(TransactionBuffer* t, const XaId& x) {
  t->Clear();
  t->AppendCommitGtid(kTs, 1, CommitGtid());
  AppendQuery(t, kTs, 1, 7, "db", absl::StrCat("XA START ", x.ToString()));
  AppendQuery(t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
  AppendQuery(t, kTs, 1, 7, "db", absl::StrCat("XA END ", x.ToString()));
  ASSERT_TRUE(AppendXaPrepare(t, kTs, 1, x.format_id, x.gtrid, x.bqual, false).ok());
}

// XA COMMIT / XA ROLLBACK in a transaction of its own.
void BuildXaCompletion(TransactionBuffer* t, const XaId& x, bool commit) {
  t->Clear();
  t->AppendCommitGtid(kTs, 1, CommitGtid());
  AppendQuery(t, kTs, 1, 7, "db",
              absl::StrCat(commit ? "XA COMMIT " : "XA ROLLBACK ", x.ToString()));
}

TEST(XaIdTest, TextFormRoundTripsAndCompletionsParse) {
  XaId x = Xa("gtrid-1");
  EXPECT_EQ(x.ToString(), "X'67747269642d31',X'62',1");
  auto p = ParseXaId(x.ToString());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, x);
  p = ParseXaId("'abc'");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gtrid, "abc");
  EXPECT_EQ(p->bqual, "");
  EXPECT_EQ(p->format_id, 1u);
  p = ParseXaId("X'6162',X'',7");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gtrid, "ab");
  EXPECT_EQ(p->format_id, 7u);
  EXPECT_FALSE(ParseXaId("X'616'").ok());     // odd hex
  EXPECT_FALSE(ParseXaId("X'61' junk").ok());
  EXPECT_FALSE(ParseXaId(absl::StrCat("'", std::string(65, 'a'), "'")).ok());

  XaId got;
  bool commit = false;
  EXPECT_TRUE(ParseXaCompletion("XA COMMIT X'6162',X'63',1", &got, &commit));
  EXPECT_TRUE(commit);
  EXPECT_EQ(got.gtrid, "ab");
  EXPECT_TRUE(ParseXaCompletion("xa rollback 'q'", &got, &commit));
  EXPECT_FALSE(commit);
  EXPECT_TRUE(ParseXaCompletion("XA COMMIT 'q' ONE PHASE", &got, &commit));
  EXPECT_TRUE(commit);
  EXPECT_FALSE(ParseXaCompletion("XA START 'q'", &got, &commit));
  EXPECT_FALSE(ParseXaCompletion("XA COMMITTED 'q'", &got, &commit));
  EXPECT_FALSE(ParseXaCompletion("COMMIT", &got, &commit));
}

TEST(XidRecoveryTest, CleanCloseNeedsNoRecovery) {
  std::string dir = NewTempDir("xid_clean");
  {
    auto log = Binlog::Open(dir, "binlog", BaseOptions());
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    BuildXidTxn(&t, 1);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_FALSE((*pending)->scan().in_use);
  EXPECT_TRUE((*pending)->scan().xids.empty());
  EXPECT_TRUE((*pending)->scan().files.empty());
  auto log = (*pending)->Finish();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->ListFiles().size(), 2u);
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1"));
  ASSERT_TRUE((*log)->Close().ok());
}

// Commits a mix of transactions, then cuts power; the last transaction
// (XID 500) is torn by cutting 3 bytes off the file. Returns the last
// file's path.
std::string CrashedLogWithEveryKind(const std::string& dir, const Options& base) {
  io::FaultInjectionFileSystem fs;
  Options o = base;
  o.file_system = &fs;
  std::string last_path;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    EXPECT_TRUE(log.ok());
    TransactionBuffer t;
    for (uint64_t x = 1; x <= 5; ++x) {
      BuildXidTxn(&t, x);
      EXPECT_TRUE((*log)->Commit(&t).ok());
    }
    BuildDdlTxn(&t, 6);
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("g1"));  // stays prepared
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("g2"));
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXaCompletion(&t, Xa("g2"), /*commit=*/true);
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("g3"));
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXaCompletion(&t, Xa("g3"), /*commit=*/false);
    EXPECT_TRUE((*log)->Commit(&t).ok());
    BuildXidTxn(&t, 500);
    auto p = (*log)->Commit(&t);
    EXPECT_TRUE(p.ok());
    last_path = io::JoinPath(dir, BinlogFileName("binlog", p->file_number));
    fs.Freeze();
    EXPECT_FALSE((*log)->Close().ok());
  }
  std::string bytes = ReadFile(last_path);
  WriteFile(last_path, bytes.substr(0, bytes.size() - 3));
  return last_path;
}

TEST(XidRecoveryTest, ReportsCompleteTransactionsDdlAndXaButNotATornOne) {
  std::string dir = NewTempDir("xid_kinds");
  std::string last = CrashedLogWithEveryKind(dir, BaseOptions());
  const std::string before = ReadFile(last);
  auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  const XidRecoveryScan& s = (*pending)->scan();
  EXPECT_TRUE(s.in_use);
  ASSERT_EQ(s.files.size(), 1u);
  EXPECT_EQ(s.files[0], "binlog.000001");
  EXPECT_EQ(s.last_file, "binlog.000001");
  EXPECT_EQ(s.xids, (std::set<uint64_t>{1, 2, 3, 4, 5, 6}));  // not 500 (torn)
  ASSERT_EQ(s.xa.size(), 3u);
  ASSERT_NE(s.FindXa(Xa("g1")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("g1"))->state, XaState::kPrepared);
  ASSERT_NE(s.FindXa(Xa("g2")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("g2"))->state, XaState::kCommitted);
  ASSERT_NE(s.FindXa(Xa("g3")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("g3"))->state, XaState::kRolledBack);
  EXPECT_EQ(s.FindXa(Xa("g4")), nullptr);
  // 11 complete transactions (GNO 1-11); the torn one (GNO 12) is not.
  EXPECT_EQ(s.gtids.ToString(), absl::StrCat(ServerUuid().ToString(), ":1-11"));
  EXPECT_EQ(s.valid_end + s.bytes_to_cut, before.size());
  EXPECT_GT(s.bytes_to_cut, 0u);
  EXPECT_FALSE(s.reason.empty());
  // The scan changed nothing.
  EXPECT_EQ(ReadFile(last), before);
  auto log = (*pending)->Finish();
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(ReadFile(last).size(), s.valid_end);
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1-11"));
  EXPECT_EQ((*log)->recovery().valid_end, s.valid_end);
  ASSERT_TRUE((*log)->Close().ok());
}

// A transaction opened by a Gtid_tagged_log_event (MySQL 8.4, type 42)
// counts with its tag: the recovered set is the TSID's, not the UUID's.
TEST(XidRecoveryTest, ATaggedGtidEventCountsUnderItsTag) {
  std::string dir = NewTempDir("xid_tagged");
  io::FaultInjectionFileSystem fs;
  Options o = BaseOptions();
  o.file_system = &fs;
  std::string last_path;
  const Uuid source = *Uuid::Parse("77d1902c-01da-11f1-9a41-908d6e5f6e8d");
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    for (uint64_t x = 1; x <= 3; ++x) {
      t.Clear();
      MySqlGtidEvent g;
      g.uuid = source;
      g.tag = *Tag::Parse("Blue");
      g.gno = static_cast<int64_t>(x + 6);
      g.sequence_number = static_cast<int64_t>(x);
      t.AppendEvent(kGtidTaggedEvent, 1, kTs, 0, EncodeMySqlGtidTaggedEventBody(g));
      AppendQuery(&t, kTs, 1, 7, "db", "BEGIN");
      AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
      AppendXid(&t, kTs, 1, x);
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      last_path = io::JoinPath(dir, BinlogFileName("binlog", p->file_number));
    }
    fs.Freeze();
    EXPECT_FALSE((*log)->Close().ok());
  }
  std::string bytes = ReadFile(last_path);
  WriteFile(last_path, bytes.substr(0, bytes.size() - 3));  // the third is torn
  auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  const XidRecoveryScan& s = (*pending)->scan();
  EXPECT_EQ(s.xids, (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(s.gtids.ToString(), "77d1902c-01da-11f1-9a41-908d6e5f6e8d:blue:7-8");
}

TEST(XidRecoveryTest, AScanWithoutFinishLeavesTheSameSetForTheNextStart) {
  std::string dir = NewTempDir("xid_rescan");
  std::string last = CrashedLogWithEveryKind(dir, BaseOptions());
  const std::string before = ReadFile(last);
  XidRecoveryScan first;
  {
    auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
    ASSERT_TRUE(pending.ok()) << pending.status();
    first = (*pending)->scan();
    // While it is pending, the log is locked.
    auto other = Binlog::Open(dir, "binlog", BaseOptions());
    EXPECT_TRUE(absl::IsUnavailable(other.status())) << other.status();
    // The server "crashes" here: no Finish.
  }
  EXPECT_EQ(ReadFile(last), before);
  EXPECT_NE(static_cast<uint8_t>(before[kInUseFlagFileOffset]) & kFlagBinlogInUse, 0);
  auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  const XidRecoveryScan& again = (*pending)->scan();
  EXPECT_EQ(again.xids, first.xids);
  EXPECT_EQ(again.gtids, first.gtids);
  ASSERT_EQ(again.xa.size(), first.xa.size());
  for (size_t i = 0; i < first.xa.size(); ++i) {
    EXPECT_EQ(again.xa[i].xid, first.xa[i].xid);
    EXPECT_EQ(again.xa[i].state, first.xa[i].state);
  }
  EXPECT_EQ(again.valid_end, first.valid_end);
  auto log = (*pending)->Finish();
  ASSERT_TRUE(log.ok());
  auto twice = (*pending)->Finish();
  EXPECT_TRUE(absl::IsFailedPrecondition(twice.status())) << twice.status();
  ASSERT_TRUE((*log)->Close().ok());
  // Finished: the file is clean now, and the next start has nothing to do.
  EXPECT_EQ(static_cast<uint8_t>(ReadFile(last)[kInUseFlagFileOffset]) & kFlagBinlogInUse,
            0);
  auto next = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE((*next)->scan().in_use);
}

TEST(XidRecoveryTest, PowerCutsDuringFinishNeverLoseTheSet) {
  // Cut power at every file-system step of Finish: each next start either
  // still reports the same XIDs (nothing was cleared yet) or finds a clean
  // file whose transactions are intact (the cut and the flag were durable).
  std::string dir0 = NewTempDir("xid_finish_cuts_seed");
  CrashedLogWithEveryKind(dir0, BaseOptions());
  for (uint64_t step = 0;; ++step) {
    std::string dir = NewTempDir("xid_finish_cuts");
    ASSERT_EQ(std::system(absl::StrCat("cp -a '", dir0, "/.' '", dir, "/'").c_str()), 0);
    io::FaultInjectionFileSystem fs;
    Options o = BaseOptions();
    o.file_system = &fs;
    std::set<uint64_t> expected;
    bool finished = false;
    {
      auto pending = Binlog::BeginRecovery(dir, "binlog", o);
      ASSERT_TRUE(pending.ok()) << pending.status();
      expected = (*pending)->scan().xids;
      fs.FreezeAfter(step);
      auto log = (*pending)->Finish();
      finished = log.ok() && !fs.frozen();
      if (log.ok()) (*log)->Close().IgnoreError();
    }
    // The power goes: what was not synced is lost, in part, torn, or in
    // random sectors (each step with another model).
    fs.Freeze();
    io::PowerLossOptions loss;
    const io::PowerLossOptions::Data kModels[] = {
        io::PowerLossOptions::Data::kDropUnsynced,
        io::PowerLossOptions::Data::kKeepRandomPrefix,
        io::PowerLossOptions::Data::kTearLastSector,
        io::PowerLossOptions::Data::kRandomSectors};
    loss.data = kModels[step % 4];
    loss.seed = step * 7919 + 1;
    ASSERT_TRUE(fs.SimulatePowerLoss(loss).ok());
    o.file_system = nullptr;
    auto pending = Binlog::BeginRecovery(dir, "binlog", o);
    ASSERT_TRUE(pending.ok()) << "step " << step << ": " << pending.status();
    if ((*pending)->scan().in_use && (*pending)->scan().files.back() == "binlog.000001") {
      EXPECT_EQ((*pending)->scan().xids, expected) << "step " << step;
    } else {
      // The recovered file is clean: its transactions must all be there.
      auto r = Reader::OpenFiles({io::JoinPath(dir, "binlog.000001")}, ReaderOptions());
      ASSERT_TRUE(r.ok());
      Event ev;
      std::set<uint64_t> xids;
      absl::Status s;
      while ((s = (*r)->Next(&ev)).ok()) {
        if (ev.header.type == kXidEvent) xids.insert(*DecodeXid(ev.body()));
      }
      EXPECT_TRUE(absl::IsOutOfRange(s)) << "step " << step << ": " << s;
      std::set<uint64_t> plain = expected;
      plain.erase(6);  // the DDL's XID is in a Query event
      EXPECT_EQ(xids, plain) << "step " << step;
    }
    if (finished) {
      // Finish has several durable steps (cut, sync, flag, sync, new
      // file, index): the loop cut power inside each of them.
      EXPECT_GE(step, 5u);
      break;
    }
    ASSERT_LT(step, 200u);
  }
}

TEST(XidRecoveryTest, CompressedTransactionsAreExpandedForTheirXids) {
  std::string dir = NewTempDir("xid_zstd");
  Options o = BaseOptions();
  o.compression = io::Codec::kZstd;
  o.compression_threshold = 1;
  io::FaultInjectionFileSystem fs;
  o.file_system = &fs;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    for (uint64_t x = 10; x < 14; ++x) {
      BuildXidTxn(&t, x);
      ASSERT_TRUE((*log)->Commit(&t).ok());
      EXPECT_TRUE(t.compressed());
    }
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  o.file_system = nullptr;
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ((*pending)->scan().xids, (std::set<uint64_t>{10, 11, 12, 13}));
  EXPECT_EQ((*pending)->scan().gtids.ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1-4"));
}

TEST(XidRecoveryTest, ACheckpointNamingAnEarlierFileExtendsTheScan) {
  // MariaDB's rule: recovery scans from the file the last Binlog_checkpoint
  // names. Here a file_header callback writes a checkpoint naming the file
  // before (as a MariaDB server does while that file's transactions are not
  // yet durable in the engine).
  std::string dir = NewTempDir("xid_checkpoint");
  io::FaultInjectionFileSystem fs;
  Options o = BaseOptions();
  o.file_system = &fs;
  o.file_header = [](const FileHeaderContext& ctx, TransactionBuffer* t) {
    t->AppendEvent(kPreviousGtidsEvent, 1, kTs, 0,
                   ctx.previous_gtids->EncodePreviousGtidsBody());
    uint64_t named = ctx.file_number > 1 ? ctx.file_number - 1 : ctx.file_number;
    t->AppendEvent(kMariaBinlogCheckpointEvent, 1, kTs, 0,
                   EncodeBinlogCheckpointBody(BinlogFileName("binlog", named)));
    return absl::OkStatus();
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    BuildXidTxn(&t, 1);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    ASSERT_TRUE((*log)->Rotate().ok());  // file 2 names file 1
    ASSERT_TRUE((*log)->Rotate().ok());  // file 3 names file 2
    BuildXidTxn(&t, 2);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    ASSERT_TRUE((*log)->Rotate().ok());  // file 4 names file 3
    BuildXidTxn(&t, 3);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("m1"));
    ASSERT_TRUE((*log)->Commit(&t).ok());
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  ASSERT_TRUE(pending.ok()) << pending.status();
  const XidRecoveryScan& s = (*pending)->scan();
  EXPECT_EQ(s.files, (std::vector<std::string>{"binlog.000003", "binlog.000004"}));
  EXPECT_EQ(s.xids, (std::set<uint64_t>{2, 3}));
  ASSERT_NE(s.FindXa(Xa("m1")), nullptr);
  EXPECT_EQ(s.gtids.ToString(), absl::StrCat(ServerUuid().ToString(), ":2-4"));
}

TEST(XidRecoveryTest, ACheckpointNamingAMissingFileIsRefused) {
  std::string dir = NewTempDir("xid_checkpoint_missing");
  io::FaultInjectionFileSystem fs;
  Options o = BaseOptions();
  o.file_system = &fs;
  o.file_header = [](const FileHeaderContext& ctx, TransactionBuffer* t) {
    t->AppendEvent(kPreviousGtidsEvent, 1, kTs, 0,
                   ctx.previous_gtids->EncodePreviousGtidsBody());
    t->AppendEvent(kMariaBinlogCheckpointEvent, 1, kTs, 0,
                   EncodeBinlogCheckpointBody("binlog.000099"));
    return absl::OkStatus();
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    BuildXidTxn(&t, 1);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  EXPECT_TRUE(absl::IsNotFound(pending.status())) << pending.status();
}

// Commits `build`'s transactions, cuts power, and returns the scan of the
// next start.
template <typename Build>
XidRecoveryScan ScanAfterCrash(const std::string& dir, Options o, Build build) {
  io::FaultInjectionFileSystem fs;
  o.file_system = &fs;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    EXPECT_TRUE(log.ok()) << log.status();
    build(log->get());
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  o.file_system = nullptr;
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  EXPECT_TRUE(pending.ok()) << pending.status();
  return pending.ok() ? (*pending)->scan() : XidRecoveryScan();
}

TEST(XidRecoveryTest, OnePhaseXaCommitIsCommittedAndATornXaPrepareIsNotReported) {
  std::string dir = NewTempDir("xid_one_phase");
  std::string last;
  XidRecoveryScan s = ScanAfterCrash(dir, BaseOptions(), [&](Binlog* log) {
    TransactionBuffer t;
    t.AppendCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA START ", Xa("one").ToString()));
    AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA END ", Xa("one").ToString()));
    ASSERT_TRUE(AppendXaPrepare(&t, kTs, 1, 1, "one", "b", /*one_phase=*/true).ok());
    ASSERT_TRUE(log->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("torn"));
    auto p = log->Commit(&t);
    ASSERT_TRUE(p.ok());
    last = io::JoinPath(dir, BinlogFileName("binlog", p->file_number));
  });
  ASSERT_NE(s.FindXa(Xa("one")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("one"))->state, XaState::kCommitted);
  ASSERT_NE(s.FindXa(Xa("torn")), nullptr);  // complete so far
  // Tear the XA_prepare event of the last transaction: not reported.
  std::string bytes = ReadFile(last);
  WriteFile(last, bytes.substr(0, bytes.size() - 5));
  auto pending = Binlog::BeginRecovery(dir, "binlog", BaseOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ((*pending)->scan().FindXa(Xa("torn")), nullptr);
  ASSERT_NE((*pending)->scan().FindXa(Xa("one")), nullptr);
  EXPECT_GT((*pending)->scan().bytes_to_cut, 0u);
}

TEST(XidRecoveryTest, AnXaPrepareInAnEarlierFileIsNotScannedAgain) {
  // The documented limit (binlog/xid_recovery.h, "XA transactions"): after
  // a rotation the XA PREPARE is in a file no scan reads; the engine's own
  // "prepared in the log" mark decides.
  std::string dir = NewTempDir("xid_xa_rotated");
  XidRecoveryScan s = ScanAfterCrash(dir, BaseOptions(), [](Binlog* log) {
    TransactionBuffer t;
    BuildXaPrepare(&t, Xa("early"));
    ASSERT_TRUE(log->Commit(&t).ok());
    ASSERT_TRUE(log->Rotate().ok());
    BuildXidTxn(&t, 1);
    ASSERT_TRUE(log->Commit(&t).ok());
  });
  EXPECT_TRUE(s.in_use);
  EXPECT_EQ(s.files, (std::vector<std::string>{"binlog.000002"}));
  EXPECT_EQ(s.FindXa(Xa("early")), nullptr);
  EXPECT_EQ(s.xids, (std::set<uint64_t>{1}));
}

TEST(XidRecoveryTest, CompressedQueriesCarryDdlXidsAndXaCompletions) {
  // MariaDB's Query_compressed (165): status variables in the clear, the
  // statement compressed.
  std::string dir = NewTempDir("xid_query_compressed");
  auto compressed_query = [](TransactionBuffer* t, absl::string_view text,
                             absl::string_view vars) {
    // Build a Query event, then swap its statement for the compressed
    // block and its type for 165.
    std::string block = MariaCompress(text);
    AppendQueryWithStatusVars(t, kTs, 1, 7, "db", block, vars);
    size_t i = t->appended_event_count() - 1;
    char* type = const_cast<char*>(t->appended_data().data()) + t->appended_event_offset(i) + 4;
    *type = static_cast<char>(kMariaQueryCompressedEvent);
  };
  XidRecoveryScan s = ScanAfterCrash(dir, BaseOptions(), [&](Binlog* log) {
    TransactionBuffer t;
    t.AppendCommitGtid(kTs, 1, CommitGtid());
    compressed_query(&t, "CREATE TABLE big (a INT)", DdlXidStatusVar(77, /*mariadb=*/true));
    ASSERT_TRUE(log->Commit(&t).ok());
    BuildXaPrepare(&t, Xa("z"));
    ASSERT_TRUE(log->Commit(&t).ok());
    t.Clear();
    t.AppendCommitGtid(kTs, 1, CommitGtid());
    compressed_query(&t, absl::StrCat("XA ROLLBACK ", Xa("z").ToString()), "");
    ASSERT_TRUE(log->Commit(&t).ok());
  });
  EXPECT_EQ(s.xids, (std::set<uint64_t>{77}));
  ASSERT_NE(s.FindXa(Xa("z")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("z"))->state, XaState::kRolledBack);
}

TEST(XidRecoveryTest, OpenRefusesAnInUseLogWhenTheServerHasAnEngine) {
  std::string dir = NewTempDir("xid_open_refuses");
  Options o = BaseOptions();
  o.flush_engine_logs = [] { return absl::OkStatus(); };
  ScanAfterCrash(dir, o, [](Binlog* log) {
    TransactionBuffer t;
    BuildXidTxn(&t, 5);
    ASSERT_TRUE(log->Commit(&t).ok());
  });
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "BeginRecovery"));
  // Nothing changed: the scan still reports the transaction.
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ((*pending)->scan().xids, (std::set<uint64_t>{5}));
  // Without an engine, Open recovers as always.
  pending->reset();
  auto plain = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE((*plain)->Close().ok());
}

Options MariaOptions() {
  Options o;
  o.flavor = LogFlavor::kMariaDB;
  o.server_id = 1;
  o.gtid_domain_id = 0;
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

CommitGtid MariaXa(CommitGtid::Xa state, const std::string& gtrid) {
  CommitGtid g;
  g.xa = state;
  g.xa_format_id = 1;
  g.xa_gtrid = gtrid;
  g.xa_bqual = "b";
  return g;
}

TEST(XidRecoveryTest, MariaDbFilesReportXidsDdlXidsXaFlagsAndGtids) {
  std::string dir = NewTempDir("xid_mariadb");
  XidRecoveryScan s = ScanAfterCrash(dir, MariaOptions(), [](Binlog* log) {
    TransactionBuffer t;
    t.AppendMariaCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (0)");
    AppendXid(&t, kTs, 1, 100);
    ASSERT_TRUE(log->Commit(&t).ok());
    // The checkpoint of the new file names that file: only it is scanned.
    ASSERT_TRUE(log->Rotate().ok());
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
    AppendXid(&t, kTs, 1, 1);
    ASSERT_TRUE(log->Commit(&t).ok());
    CommitGtid ddl;
    ddl.isolated = true;
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, ddl);
    AppendMariaDdlQuery(&t, kTs, 1, 7, "db", "CREATE TABLE t2 (a INT)", 2);
    ASSERT_TRUE(log->Commit(&t).ok());
    for (const char* g : {"p1", "p2", "p3"}) {
      t.Clear();
      t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kPrepared, g));
      AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (2)");
      AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA END ", Xa(g).ToString()));
      ASSERT_TRUE(AppendXaPrepare(&t, kTs, 1, 1, g, "b", false).ok());
      ASSERT_TRUE(log->Commit(&t).ok());
    }
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kCompleted, "p2"));
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA COMMIT ", Xa("p2").ToString()));
    ASSERT_TRUE(log->Commit(&t).ok());
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kCompleted, "p3"));
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA ROLLBACK ", Xa("p3").ToString()));
    ASSERT_TRUE(log->Commit(&t).ok());
  });
  EXPECT_TRUE(s.in_use);
  EXPECT_EQ(s.files, (std::vector<std::string>{"binlog.000002"}));
  EXPECT_EQ(s.xids, (std::set<uint64_t>{1, 2}));
  ASSERT_NE(s.FindXa(Xa("p1")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("p1"))->state, XaState::kPrepared);
  ASSERT_NE(s.FindXa(Xa("p2")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("p2"))->state, XaState::kCommitted);
  ASSERT_NE(s.FindXa(Xa("p3")), nullptr);
  EXPECT_EQ(s.FindXa(Xa("p3"))->state, XaState::kRolledBack);
  ASSERT_EQ(s.mariadb_gtids.size(), 7u);
  for (size_t i = 0; i < s.mariadb_gtids.size(); ++i) {
    EXPECT_EQ(s.mariadb_gtids[i].domain_id, 0u);
    EXPECT_EQ(s.mariadb_gtids[i].server_id, 1u);
    EXPECT_EQ(s.mariadb_gtids[i].seq_no, i + 2);  // 1 is in binlog.000001
  }
  EXPECT_TRUE(s.gtids.empty());
}

TEST(XidRecoveryTest, AMariaDbXaCompletionWithoutItsStatementIsRefused) {
  // Commit refuses what recovery could not read (one set of rules), and
  // recovery refuses such a file written by someone else rather than guess.
  std::string dir = NewTempDir("xid_mariadb_unreadable_xa");
  Options o = MariaOptions();
  io::FaultInjectionFileSystem fs;
  o.file_system = &fs;
  std::string gtid_event;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kCompleted, "q"));
    AppendQuery(&t, kTs, 1, 7, "db", "DO 1");
    auto p = (*log)->Commit(&t);
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kCompleted, "q"));
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA ROLLBACK ", Xa("other").ToString()));
    p = (*log)->Commit(&t);
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
    t.Clear();
    t.AppendMariaCommitGtid(kTs, 1, MariaXa(CommitGtid::Xa::kCompleted, "q"));
    AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("XA COMMIT ", Xa("q").ToString()));
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    // The Gtid event as written: reused below, caller-encoded, before a
    // statement that is not an XA completion.
    gtid_event = std::string(t.data().substr(0, t.event_offset(1)));
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  {
    auto pending = Binlog::BeginRecovery(dir, "binlog", o);
    ASSERT_TRUE(pending.ok()) << pending.status();
    ASSERT_NE((*pending)->scan().FindXa(Xa("q")), nullptr);
    EXPECT_EQ((*pending)->scan().FindXa(Xa("q"))->state, XaState::kCommitted);
    auto log = (*pending)->Finish();
    ASSERT_TRUE(log.ok());
    // A transaction another writer encoded: its Gtid flagged
    // FL_COMPLETED_XA, then a statement that says nothing of the XA.
    TransactionBuffer t;
    ASSERT_TRUE(t.AppendEncodedEvent(gtid_event).ok());
    AppendQuery(&t, kTs, 1, 7, "db", "DO 1");
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  EXPECT_TRUE(absl::IsDataLoss(pending.status())) << pending.status();
  EXPECT_TRUE(absl::StrContains(pending.status().message(), "FL_COMPLETED_XA"))
      << pending.status();
}

TEST(FlushEngineLogsTest, RunsAfterEveryEarlierCallbackAtEachRotationAndClose) {
  std::string dir = NewTempDir("flush_engine_logs");
  Options o = BaseOptions();
  o.max_file_size = 8192;
  std::atomic<uint64_t> written{0}, done{0};
  std::atomic<int> calls{0}, violations{0};
  o.before_group_write = [&](const GroupCommitInfo& info) {
    written.fetch_add(info.transactions);
    return absl::OkStatus();
  };
  o.on_group_commit = [&](const GroupCommitInfo& info) {
    std::this_thread::yield();
    done.fetch_add(info.transactions);
  };
  o.flush_engine_logs = [&]() {
    calls.fetch_add(1);
    // Every transaction written so far has had its ordered-commit callback.
    if (written.load() != done.load()) violations.fetch_add(1);
    return absl::OkStatus();
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      TransactionBuffer t;
      for (int j = 0; j < 200; ++j) {
        BuildXidTxn(&t, i * 1000 + j);
        ASSERT_TRUE((*log)->Commit(&t).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE((*log)->Rotate().ok());
  const uint64_t rotations = (*log)->stats().rotations;
  EXPECT_GT(rotations, 10u);
  EXPECT_EQ(calls.load(), static_cast<int>(rotations));
  ASSERT_TRUE((*log)->Close().ok());
  EXPECT_EQ(calls.load(), static_cast<int>(rotations) + 1);
  EXPECT_EQ(violations.load(), 0);
}

TEST(FlushEngineLogsTest, AFailureFailsTheRotationOrTheCloseAndKeepsTheFileInUse) {
  std::string dir = NewTempDir("flush_engine_logs_fail");
  Options o = BaseOptions();
  std::atomic<bool> fail{true};
  o.flush_engine_logs = [&]() {
    return fail.load() ? absl::UnavailableError("engine log flush failed")
                       : absl::OkStatus();
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    BuildXidTxn(&t, 1);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    absl::Status r = (*log)->Rotate();
    EXPECT_TRUE(absl::IsUnavailable(r)) << r;
    EXPECT_NE(r.message().find("flush_engine_logs"), absl::string_view::npos);
    BuildXidTxn(&t, 2);
    EXPECT_TRUE(absl::IsFailedPrecondition((*log)->Commit(&t).status()));
    (*log)->Close().IgnoreError();
  }
  {
    auto pending = Binlog::BeginRecovery(dir, "binlog", o);
    ASSERT_TRUE(pending.ok()) << pending.status();
    EXPECT_TRUE((*pending)->scan().in_use);
    EXPECT_EQ((*pending)->scan().xids, (std::set<uint64_t>{1}));
    auto log = (*pending)->Finish();
    ASSERT_TRUE(log.ok());
    absl::Status c = (*log)->Close();  // the hook still fails
    EXPECT_TRUE(absl::IsUnavailable(c)) << c;
  }
  fail = false;
  auto pending = Binlog::BeginRecovery(dir, "binlog", o);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_TRUE((*pending)->scan().in_use);  // the failed Close left it in use
  EXPECT_EQ((*pending)->scan().last_file, "binlog.000002");
}

}  // namespace
}  // namespace binlog
