// Tests for binlog/transaction_boundary.h: synthetic MySQL and MariaDB event
// sequences (reference section 8), then every file of the MariaDB corpus,
// whose transactions must match the manifests' "groups" exactly.

#include "binlog/transaction_boundary.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testutil/corpus.h"

namespace binlog {
namespace {

using Result = TransactionBoundaryParser::Result;
using ::binlog::testutil::CorpusFile;
using ::binlog::testutil::CorpusGroup;
using ::binlog::testutil::CorpusManifest;
using ::testing::ElementsAre;

// One synthetic event: header fields the parser looks at, and the body.
struct Ev {
  uint8_t type;
  std::string body;
  uint16_t flags = 0;
};

std::string QueryBody(absl::string_view query, absl::string_view db = "db") {
  std::string b(13, '\0');
  StoreLe32(&b[0], 42);  // thread id
  b[8] = static_cast<char>(db.size());
  b.append(db.data(), db.size());
  b.push_back('\0');
  b.append(query.data(), query.size());
  return b;
}

Ev Query(absl::string_view q) { return Ev{kQueryEvent, QueryBody(q)}; }
Ev MySqlGtid() { return Ev{kGtidEvent, std::string(42, '\x01')}; }
Ev AnonymousGtid() { return Ev{kAnonymousGtidEvent, std::string(42, '\0')}; }
Ev Xid() { return Ev{kXidEvent, std::string(8, '\x07')}; }
Ev TableMap() { return Ev{kTableMapEvent, std::string(20, '\x02')}; }
Ev WriteRows() { return Ev{kWriteRowsEvent, std::string(20, '\x03')}; }
Ev WriteRowsV1() { return Ev{kWriteRowsEventV1, std::string(20, '\x03')}; }
Ev Intvar() { return Ev{kIntvarEvent, std::string(9, '\x02')}; }
Ev XaPrepare() { return Ev{kXaPrepareEvent, std::string(13 + 8, '\0')}; }
Ev Payload() { return Ev{kTransactionPayloadEvent, std::string(30, '\x05')}; }
Ev AnnotateRows() {
  return Ev{kMariaAnnotateRowsEvent, "INSERT INTO t VALUES (1)"};
}
Ev Checkpoint() {
  return Ev{kMariaBinlogCheckpointEvent,
            std::string("\x12\0\0\0mariadb-bin.000001", 22)};
}
Ev GtidList() { return Ev{kMariaGtidListEvent, std::string(6, '\0')}; }

Ev MariaGtid(uint64_t seq, uint8_t flags2) {
  std::string b(19, '\0');
  StoreLe64(&b[0], seq);
  b[12] = static_cast<char>(flags2);
  return Ev{kMariaGtidEvent, b, kFlagSuppressUse};
}

std::vector<std::string> Seq(TransactionBoundaryParser* p,
                             const std::vector<Ev>& events) {
  std::vector<std::string> out;
  for (const Ev& e : events) {
    EventHeader h;
    h.type = e.type;
    h.flags = e.flags;
    h.event_size = static_cast<uint32_t>(kHeaderSize + e.body.size());
    out.push_back(BoundaryResultName(p->Feed(h, e.body)));
  }
  return out;
}

std::vector<std::string> Seq(const std::vector<Ev>& events) {
  TransactionBoundaryParser p(13);
  std::vector<std::string> out = Seq(&p, events);
  return out;
}

// --- MySQL ------------------------------------------------------------------

TEST(BoundaryMySqlTest, GtidBeginRowsXid) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("BEGIN"), TableMap(), WriteRows(),
                       Xid()}),
              ElementsAre("started", "inside", "inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, AnonymousGtidBeginCommitQuery) {
  EXPECT_THAT(Seq({AnonymousGtid(), Query("BEGIN"), Query("INSERT INTO t"),
                   Query("COMMIT")}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMySqlTest, GtidBeginRollbackQuery) {
  EXPECT_THAT(Seq({MySqlGtid(), Query("BEGIN"), Query("INSERT INTO t"),
                   Query("ROLLBACK")}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMySqlTest, GtidDdl) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("CREATE TABLE t (a INT)")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, GtidIntvarQuery) {
  EXPECT_THAT(
      Seq({MySqlGtid(), Intvar(), Query("INSERT INTO t VALUES (NULL)")}),
      ElementsAre("started", "inside", "ended"));
}

TEST(BoundaryMySqlTest, IntvarQueryWithoutGtid) {
  EXPECT_THAT(Seq({Intvar(), Query("INSERT INTO t VALUES (NULL)")}),
              ElementsAre("started", "ended"));
}

TEST(BoundaryMySqlTest, BeginCommitWithoutGtid) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {Query("BEGIN"), TableMap(), WriteRows(),
                       Query("COMMIT")}),
              ElementsAre("started", "inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, BeginXidWithoutGtid) {
  EXPECT_THAT(Seq({Query("BEGIN"), TableMap(), WriteRows(), Xid()}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMySqlTest, StandaloneStatementWithoutGtidEndsImmediately) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {Query("CREATE TABLE t (a INT)")}), ElementsAre("ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, GtidPayload) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Payload()}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, RollbackToSavepointIsNotAnEnd) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(
      Seq(&p, {MySqlGtid(), Query("BEGIN"), Query("SAVEPOINT sp1"),
               TableMap(), WriteRows(), Query("ROLLBACK TO sp1"),
               Query("rollback to savepoint sp1"), TableMap(), WriteRows(),
               Xid()}),
      ElementsAre("started", "inside", "inside", "inside", "inside", "inside",
                  "inside", "inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, QueryClassificationUsesExactBeginAndCommit) {
  // "BEGIN" and "COMMIT" are compared by exact length; other text that
  // starts with them is an ordinary statement.
  EXPECT_THAT(Seq({MySqlGtid(), Query("BEGIN"), Query("COMMIT_TABLE_X"),
                   Query("COMMIT")}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMySqlTest, XaPrepareEndsTheGroup) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("XA START X'31',X'',1"), TableMap(),
                       WriteRows(), Query("XA END X'31',X'',1"), XaPrepare()}),
              ElementsAre("started", "inside", "inside", "inside", "inside",
                          "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, XaCommitAndXaRollbackAreOneStatementGroups) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("XA COMMIT X'31',X'',1"),
                       MySqlGtid(), Query("XA ROLLBACK X'32',X'',1")}),
              ElementsAre("started", "ended", "started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, UnknownTypeWithoutIgnorableFlagIsUnexpected) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {Ev{100, "xyz"}}), ElementsAre("unexpected"));
  EXPECT_TRUE(p.outside());
  // Inside a transaction it also resets the parser.
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("BEGIN"), Ev{100, "xyz"}}),
              ElementsAre("started", "inside", "unexpected"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, UnknownTypeWithIgnorableFlagIsSkipped) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {Ev{100, "xyz", kFlagIgnorable}}),
              ElementsAre("outside"));
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("BEGIN"),
                       Ev{100, "xyz", kFlagIgnorable}, WriteRows(), Xid()}),
              ElementsAre("started", "inside", "inside", "inside", "ended"));
}

TEST(BoundaryMySqlTest, FileLevelEventsAreOutside) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {Ev{kFormatDescriptionEvent, std::string(100, '\0')},
                       Ev{kPreviousGtidsEvent, std::string(8, '\0')},
                       Ev{kRotateEvent,
                          std::string("\4\0\0\0\0\0\0\0b.000002", 16)},
                       Ev{kStopEvent, ""}}),
              ElementsAre("outside", "outside", "outside", "outside"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, GtidInsideOpenTransactionIsUnexpected) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("BEGIN"), WriteRows(), MySqlGtid()}),
              ElementsAre("started", "inside", "inside", "unexpected"));
}

TEST(BoundaryMySqlTest, UnexpectedGtidStartsTheNextTransaction) {
  // As MySQL's parser: the GTID is reported, and the parser continues in
  // the transaction it opens (tools/file_walker.cc relies on this). Note:
  // transaction_boundary.h says kUnexpected resets the parser to
  // "outside", which is true only for the non-GTID cases.
  TransactionBoundaryParser p(13);
  ASSERT_THAT(Seq(&p, {MySqlGtid(), Query("BEGIN"), WriteRows(), MySqlGtid()}),
              ElementsAre("started", "inside", "inside", "unexpected"));
  EXPECT_FALSE(p.outside());
  EXPECT_THAT(Seq(&p, {Query("BEGIN"), WriteRows(), Xid()}),
              ElementsAre("inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMySqlTest, ConsecutiveTransactions) {
  EXPECT_THAT(Seq({MySqlGtid(), Query("BEGIN"), WriteRows(), Xid(),
                   MySqlGtid(), Query("DROP TABLE t"), MySqlGtid(), Payload()}),
              ElementsAre("started", "inside", "inside", "ended", "started",
                          "ended", "started", "ended"));
}

TEST(BoundaryMySqlTest, ResetForgetsOpenTransaction) {
  TransactionBoundaryParser p(13);
  Seq(&p, {MySqlGtid(), Query("BEGIN"), WriteRows()});
  EXPECT_FALSE(p.outside());
  p.Reset();
  EXPECT_TRUE(p.outside());
  EXPECT_THAT(Seq(&p, {MySqlGtid(), Query("DROP TABLE t")}),
              ElementsAre("started", "ended"));
}

TEST(BoundaryMySqlTest, QueryPostHeaderLengthIsHonoured) {
  // With a 15-byte post-header the text starts two bytes later.
  std::string body = QueryBody("BEGIN");
  body.insert(13, 2, '\0');
  TransactionBoundaryParser p(15);
  EventHeader h;
  h.type = kQueryEvent;
  EXPECT_EQ(p.Feed(h, body), Result::kStarted);
  h.type = kXidEvent;
  EXPECT_EQ(p.Feed(h, std::string(8, '\0')), Result::kEnded);
}

TEST(BoundaryMySqlTest, ResultNames) {
  EXPECT_STREQ(BoundaryResultName(Result::kOutside), "outside");
  EXPECT_STREQ(BoundaryResultName(Result::kStarted), "started");
  EXPECT_STREQ(BoundaryResultName(Result::kInside), "inside");
  EXPECT_STREQ(BoundaryResultName(Result::kEnded), "ended");
  EXPECT_STREQ(BoundaryResultName(Result::kUnexpected), "unexpected");
}

// --- MariaDB ----------------------------------------------------------------

TEST(BoundaryMariaDbTest, StandaloneGtidEndsAfterOneStatement) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(1, 0x29), Query("CREATE TABLE t (a INT)")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
  EXPECT_THAT(Seq(&p, {MariaGtid(2, kMariaGtidStandalone),
                       Query("DROP TABLE t")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, StandaloneGtidWithPreStatementEvents) {
  EXPECT_THAT(
      Seq({MariaGtid(1, 0x29), Intvar(), Query("CREATE TABLE t2 SELECT 1")}),
      ElementsAre("started", "inside", "ended"));
}

TEST(BoundaryMariaDbTest, TransactionalGroupEndsAtXid) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(3, 0x0c), AnnotateRows(), TableMap(),
                       WriteRowsV1(), WriteRowsV1(), Xid()}),
              ElementsAre("started", "inside", "inside", "inside", "inside",
                          "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, StatementGroupEndsAtXid) {
  EXPECT_THAT(Seq({MariaGtid(5, 0x0c), Intvar(),
                   Query("INSERT INTO t VALUES (NULL)"), Xid()}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMariaDbTest, NonTransactionalGroupEndsAtCommitQuery) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(6, 0x08), Intvar(), Intvar(),
                       Query("INSERT INTO myisam_t VALUES (NULL)"),
                       Query("COMMIT")}),
              ElementsAre("started", "inside", "inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, ExplicitBeginAfterGtidStaysInside) {
  EXPECT_THAT(Seq({MariaGtid(6, 0x08), Query("BEGIN"), Query("INSERT"),
                   Query("COMMIT")}),
              ElementsAre("started", "inside", "inside", "ended"));
}

TEST(BoundaryMariaDbTest, XaPreparedGroupEndsAtXaPrepare) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(56, 0x4c), AnnotateRows(), TableMap(),
                       WriteRowsV1(), AnnotateRows(), TableMap(),
                       WriteRowsV1(), Query("XA END X'7669',X'',1"),
                       XaPrepare()}),
              ElementsAre("started", "inside", "inside", "inside", "inside",
                          "inside", "inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, XaCommitGroupWithCompletedXaFlag) {
  // FL_COMPLETED_XA alone (no FL_STANDALONE): the group is the one query.
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(57, kMariaGtidCompletedXa),
                       Query("XA COMMIT X'7669',X'',1")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
  // As the server writes it (0x8d = COMPLETED_XA | ALLOW_PARALLEL |
  // TRANSACTIONAL | STANDALONE).
  EXPECT_THAT(Seq(&p, {MariaGtid(58, 0x8d), Query("XA COMMIT X'7669',X'',1")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, XaRollbackGroupWithCompletedXaFlag) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {MariaGtid(60, kMariaGtidCompletedXa),
                       Query("XA ROLLBACK X'7669',X'',1")}),
              ElementsAre("started", "ended"));
  EXPECT_TRUE(p.outside());
}

TEST(BoundaryMariaDbTest, ControlEventsBetweenGroupsAreOutside) {
  TransactionBoundaryParser p(13);
  EXPECT_THAT(Seq(&p, {GtidList(), Checkpoint(), MariaGtid(1, 0x0c),
                       Query("INSERT"), Xid(), Checkpoint()}),
              ElementsAre("outside", "outside", "started", "inside", "ended",
                          "outside"));
}

TEST(BoundaryMariaDbTest, CheckpointInsideGroupIsInside) {
  EXPECT_THAT(Seq({MariaGtid(1, 0x0c), TableMap(), Checkpoint(), WriteRowsV1(),
                   Xid()}),
              ElementsAre("started", "inside", "inside", "inside", "ended"));
}

TEST(BoundaryMariaDbTest, GtidInsideOpenGroupIsUnexpected) {
  EXPECT_THAT(Seq({MariaGtid(1, 0x0c), TableMap(), MariaGtid(2, 0x0c)}),
              ElementsAre("started", "inside", "unexpected"));
}

TEST(BoundaryMariaDbTest, UnexpectedGtidStartsTheNextGroup) {
  // See BoundaryMySqlTest.UnexpectedGtidStartsTheNextTransaction.
  TransactionBoundaryParser p(13);
  ASSERT_THAT(Seq(&p, {MariaGtid(1, 0x0c), TableMap(), MariaGtid(2, 0x0c)}),
              ElementsAre("started", "inside", "unexpected"));
  EXPECT_FALSE(p.outside());
  EXPECT_THAT(Seq(&p, {TableMap(), WriteRowsV1(), Xid()}),
              ElementsAre("inside", "inside", "ended"));
  EXPECT_TRUE(p.outside());
  // A standalone GTID after an unfinished group ends with its statement.
  ASSERT_THAT(Seq(&p, {MariaGtid(3, 0x0c), TableMap(), MariaGtid(4, 0x29)}),
              ElementsAre("started", "inside", "unexpected"));
  EXPECT_THAT(Seq(&p, {Query("DROP TABLE t")}), ElementsAre("ended"));
  EXPECT_TRUE(p.outside());
}

// --- The MariaDB corpus -----------------------------------------------------

struct Txn {
  uint64_t start = 0;
  uint64_t end = 0;
  bool complete = false;
};

std::string Describe(const std::vector<Txn>& v, size_t i) {
  if (i >= v.size()) return "(none)";
  std::ostringstream os;
  os << "[" << v[i].start << ", " << v[i].end << ") "
     << (v[i].complete ? "complete" : "incomplete");
  return os.str();
}

class BoundaryCorpusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = testutil::LoadCorpusManifest();
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = new CorpusManifest(*std::move(m));
  }
  static void TearDownTestSuite() {
    delete manifest_;
    manifest_ = nullptr;
  }
  static CorpusManifest* manifest_;
};
CorpusManifest* BoundaryCorpusTest::manifest_ = nullptr;

TEST_F(BoundaryCorpusTest, TransactionsMatchManifestGroups) {
  ASSERT_NE(manifest_, nullptr);
  size_t files = 0;
  size_t groups = 0;
  for (const CorpusFile& f : manifest_->files) {
    SCOPED_TRACE(f.scenario + "/" + f.name);
    ++files;
    auto bytes = testutil::ReadFileToString(
        testutil::CorpusBinlogPath(f.scenario, f.name));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    testutil::FileWalk w = testutil::WalkBinlogFile(*bytes);
    ASSERT_TRUE(w.magic_ok);
    ASSERT_FALSE(w.events.empty());
    EXPECT_FALSE(w.bogus_size);
    EXPECT_EQ(w.end, f.parsed_end);
    EXPECT_EQ(w.partial_tail, f.parsed_end != f.size);

    // The query post-header length comes from the file's FDE.
    auto fd = DecodeFormatDescription(w.events[0].bytes);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_EQ(fd->PostHeaderLen(kQueryEvent), 13);
    TransactionBoundaryParser parser(fd->PostHeaderLen(kQueryEvent));
    bool checksums = fd->has_checksums();

    std::vector<Txn> got;
    std::vector<std::string> problems;
    bool open = false;
    uint64_t open_start = 0;
    uint64_t last_end = 0;
    for (const testutil::WalkedEvent& e : w.events) {
      EventHeader h = DecodeHeader(e.bytes);
      Result r = parser.Feed(h, EventBody(e.bytes, checksums));
      uint64_t end = e.offset + e.size;
      last_end = end;
      switch (r) {
        case Result::kOutside:
          if (open) {
            problems.push_back("outside while a transaction is open at " +
                               std::to_string(e.offset));
          }
          break;
        case Result::kStarted:
          if (open) {
            problems.push_back("started while open at " +
                               std::to_string(e.offset));
          }
          open = true;
          open_start = e.offset;
          break;
        case Result::kInside:
          if (!open) {
            problems.push_back("inside with no open transaction at " +
                               std::to_string(e.offset) + " (type " +
                               std::to_string(e.type) + ")");
          }
          break;
        case Result::kEnded:
          got.push_back(Txn{open ? open_start : e.offset, end, true});
          open = false;
          break;
        case Result::kUnexpected:
          problems.push_back("unexpected " +
                             std::string(EventTypeName(e.type)) + " at " +
                             std::to_string(e.offset));
          open = false;
          break;
      }
    }
    if (open) got.push_back(Txn{open_start, last_end, false});
    EXPECT_THAT(problems, ::testing::IsEmpty());

    std::vector<Txn> want;
    for (const CorpusGroup& g : manifest_->GroupsOf(f.scenario, f.name)) {
      want.push_back(Txn{g.start, g.end, g.complete});
    }
    groups += want.size();
    EXPECT_EQ(got.size(), want.size());
    // Report the first few differences in detail.
    int reported = 0;
    for (size_t i = 0; i < std::max(got.size(), want.size()) && reported < 5;
         ++i) {
      bool same = i < got.size() && i < want.size() &&
                  got[i].start == want[i].start && got[i].end == want[i].end &&
                  got[i].complete == want[i].complete;
      if (!same) {
        ADD_FAILURE() << "transaction #" << i << ": parser "
                      << Describe(got, i) << ", manifest " << Describe(want, i);
        ++reported;
      }
    }
  }
  // Every file and every group of the manifests was compared (counts of a
  // regenerated corpus vary a little; see tests/data/mariadb/README.md).
  EXPECT_EQ(files, manifest_->files.size());
  EXPECT_EQ(groups, manifest_->groups.size());
  EXPECT_GE(files, 19u);
  EXPECT_GT(groups, 1000u);
}

TEST_F(BoundaryCorpusTest, CrashedFileEndsInsideAnOpenTransaction) {
  ASSERT_NE(manifest_, nullptr);
  ASSERT_EQ(manifest_->partial_events.size(), 1u);
  const auto& pe = manifest_->partial_events[0];
  auto bytes = testutil::ReadFileToString(
      testutil::CorpusBinlogPath(pe.scenario, pe.file));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  testutil::FileWalk w = testutil::WalkBinlogFile(*bytes);
  EXPECT_TRUE(w.partial_tail);
  EXPECT_EQ(w.end, pe.pos);
  EXPECT_EQ(bytes->size() - pe.pos, pe.available_bytes);
  EXPECT_EQ(LoadLe32(bytes->data() + pe.pos + kEventSizeOffset),
            pe.declared_size);
  TransactionBoundaryParser parser(13);
  uint64_t last_boundary = 4;
  for (const testutil::WalkedEvent& e : w.events) {
    Result r = parser.Feed(DecodeHeader(e.bytes), EventBody(e.bytes, true));
    if (r == Result::kEnded || (r == Result::kOutside && parser.outside())) {
      last_boundary = e.offset + e.size;
    }
  }
  EXPECT_FALSE(parser.outside());
  // Recovery would truncate here: the end of the last complete group (the
  // start of the unfinished GTID 0-1-59 group).
  EXPECT_EQ(last_boundary, 826u);
}

}  // namespace
}  // namespace binlog
