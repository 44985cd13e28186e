// MySQL 8.4 through the log (binlog/log.h, binlog/options.h): 8.4 files
// by default and 8.0 files on request, the flavor and layout that belong to
// a log's files, tagged GTIDs from Commit to recovery and the GTID readers,
// and WRITESET logical clocks computed in commit order under concurrency.

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/rows_writer.h"
#include "binlog/statement_events.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;

const Uuid& ServerUuid() {
  static const Uuid u = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  return u;
}
const Uuid& SourceUuid() {
  static const Uuid u = *Uuid::Parse("11111111-2222-3333-4444-555555555555");
  return u;
}

Options BaseOptions() {
  Options o;
  o.server_uuid = ServerUuid();
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

Tag T(const char* text) { return *Tag::Parse(text); }

// BEGIN, Xid after a CommitGtid.
void BuildTxn(TransactionBuffer* txn, uint64_t xid, const CommitGtid& g) {
  txn->Clear();
  txn->AppendCommitGtid(1700000000, 1, g);
  AppendQuery(txn, 1700000000, 1, 7, "db", "BEGIN");
  AppendXid(txn, 1700000000, 1, xid);
}

CommitGtid Automatic(const char* tag = "") {
  CommitGtid g;
  if (*tag != '\0') g.tag = T(tag);
  return g;
}

// The Format_description of every file of the log, by file number.
std::map<uint64_t, FormatDescription> Fdes(const std::string& dir) {
  std::map<uint64_t, FormatDescription> out;
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  Event ev;
  while ((*reader)->Next(&ev).ok()) {
    if (ev.header.type == kFormatDescriptionEvent) {
      out[ev.file_number] = (*reader)->format_description();
    }
  }
  return out;
}

TEST(MySql84Test, DefaultFilesAreMySql84sAndK80IsSelectable) {
  for (MySqlLayout layout : {MySqlLayout::k84, MySqlLayout::k80}) {
    std::string dir = NewTempDir("m84_layout");
    Options o = BaseOptions();
    if (layout == MySqlLayout::k80) o.mysql_layout = MySqlLayout::k80;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    BuildTxn(&t, 1, Automatic());
    ASSERT_TRUE((*log)->Commit(&t).ok());
    ASSERT_TRUE((*log)->Close().ok());
    auto fdes = Fdes(dir);
    ASSERT_EQ(fdes.size(), 1u);
    const FormatDescription& fde = fdes.begin()->second;
    if (layout == MySqlLayout::k84) {
      EXPECT_EQ(fde.server_version, "8.4.6");
      EXPECT_EQ(fde.post_header_len.size(), 42u);
    } else {
      EXPECT_EQ(fde.server_version, "8.0.36");
      EXPECT_EQ(fde.post_header_len.size(), 41u);
    }
  }
}

TEST(MySql84Test, TaggedGtidsFromCommitToRecoveryAndReaders) {
  std::string dir = NewTempDir("m84_tags");
  io::FaultInjectionFileSystem fs;
  Options o = BaseOptions();
  o.file_system = &fs;
  const std::string u = ServerUuid().ToString();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    // AUTOMATIC, AUTOMATIC:blue (its own GNO sequence), AUTOMATIC again.
    BuildTxn(&t, 1, Automatic());
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->identity.gno, 1);
    EXPECT_TRUE(p->identity.tag.empty());
    BuildTxn(&t, 2, Automatic("Blue"));  // tags are normalized to lower case
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->identity.gno, 1);
    EXPECT_EQ(p->identity.tag.str(), "blue");
    BuildTxn(&t, 3, Automatic("blue"));
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->identity.gno, 2);
    BuildTxn(&t, 4, Automatic());
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->identity.gno, 2);
    // An assigned tagged GTID must be acquired, as an untagged one.
    CommitGtid a;
    a.kind = CommitGtid::Kind::kAssigned;
    a.uuid = SourceUuid();
    a.tag = T("red");
    a.gno = 5;
    BuildTxn(&t, 5, a);
    EXPECT_TRUE(absl::IsFailedPrecondition((*log)->Commit(&t).status()));
    ASSERT_TRUE((*log)->AcquireGtid(Tsid(SourceUuid(), T("red")), 5).ok());
    EXPECT_TRUE(absl::IsAlreadyExists(
        (*log)->AcquireGtid(Tsid(SourceUuid(), T("red")), 5)));
    BuildTxn(&t, 5, a);
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(absl::IsAlreadyExists(
        (*log)->AcquireGtid(Tsid(SourceUuid(), T("red")), 5)));
    ASSERT_TRUE((*log)->Rotate().ok());
    BuildTxn(&t, 6, Automatic("blue"));
    ASSERT_TRUE((*log)->Commit(&t).ok());
    const std::string want = absl::StrCat(SourceUuid().ToString(), ":red:5,\n", u,
                                          ":1-2:blue:1-3");
    EXPECT_EQ((*log)->executed_gtids().ToString(",\n"), want);
    fs.Freeze();  // crash: the last file stays in use
    EXPECT_FALSE((*log)->Close().ok());
  }
  fs.ResetState();
  // The files hold Gtid_tagged events and a tagged Previous_gtids.
  {
    auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions(), &fs);
    ASSERT_TRUE(reader.ok());
    Event ev;
    int tagged = 0;
    GtidSet previous2;
    while ((*reader)->Next(&ev).ok()) {
      if (ev.header.type == kGtidTaggedEvent) {
        auto g = DecodeMySqlGtidTaggedEvent(ev.body());
        ASSERT_TRUE(g.ok()) << g.status();
        ++tagged;
      }
      if (ev.header.type == kPreviousGtidsEvent && ev.file_number == 2) {
        previous2 = *GtidSet::DecodePreviousGtidsBody(ev.body());
      }
    }
    EXPECT_EQ(tagged, 4);
    EXPECT_EQ(previous2.ToString(",\n"),
              absl::StrCat(SourceUuid().ToString(), ":red:5,\n", u, ":1-2:blue:1-2"));
  }
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ((*log)->executed_gtids().ToString(",\n"),
              absl::StrCat(SourceUuid().ToString(), ":red:5,\n", u, ":1-2:blue:1-3"));
    TransactionBuffer t;
    BuildTxn(&t, 7, Automatic("blue"));
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->identity.gno, 4);
    // A replica that has everything but blue:3-4 gets exactly those.
    GtidSet have;
    have.AddInterval(Tsid(ServerUuid()), 1, 2);
    have.AddInterval(Tsid(ServerUuid(), T("blue")), 1, 2);
    have.Add(Tsid(SourceUuid(), T("red")), 5);
    auto r = (*log)->NewGtidReader(have, ReaderOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<int64_t> got;
    Event ev;
    while ((*r)->Next(&ev).ok()) {
      if (IsMySqlGtidEventType(ev.header.type)) {
        auto g = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
        ASSERT_TRUE(g.ok());
        EXPECT_EQ(g->tag.str(), "blue");
        got.push_back(g->gno);
      }
    }
    EXPECT_EQ(got, (std::vector<int64_t>{3, 4}));
    r->reset();
    ASSERT_TRUE((*log)->Close().ok());
  }
}

TEST(MySql84Test, TagsAreRefusedWhereTheFilesCannotHoldThem) {
  TransactionBuffer t;
  {
    std::string dir = NewTempDir("m84_tag80");
    Options o = BaseOptions();
    o.mysql_layout = MySqlLayout::k80;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    BuildTxn(&t, 1, Automatic("blue"));
    EXPECT_TRUE(absl::IsInvalidArgument((*log)->Commit(&t).status()));
    ASSERT_TRUE((*log)->Close().ok());
  }
  {
    std::string dir = NewTempDir("m84_taganon");
    auto log = Binlog::Open(dir, "binlog", BaseOptions());
    ASSERT_TRUE(log.ok());
    CommitGtid g;
    g.kind = CommitGtid::Kind::kAnonymous;
    g.tag = T("blue");
    BuildTxn(&t, 1, g);
    EXPECT_TRUE(absl::IsInvalidArgument((*log)->Commit(&t).status()));
    ASSERT_TRUE((*log)->Close().ok());
  }
  EXPECT_TRUE(absl::IsInvalidArgument(Tag::Parse("1blue").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Tag::Parse(std::string(33, 'a')).status()));
}

TEST(MySql84Test, ALogKeepsTheFlavorOfItsFiles) {
  const std::string dir = NewTempDir("m84_flavor");
  {
    Options o = BaseOptions();
    o.mysql_layout = MySqlLayout::k80;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  {
    // Another flavor: refused, nothing changed.
    Options o = BaseOptions();
    o.flavor = LogFlavor::kMariaDB;
    o.server_id = 1;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
    EXPECT_NE(log.status().message().find("MariaDB"), std::string::npos);
    EXPECT_NE(log.status().message().find("MySQL 8.0"), std::string::npos);
  }
  {
    // 8.0 files continued as 8.4: an upgrade at the next file.
    auto log = Binlog::Open(dir, "binlog", BaseOptions());
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto fdes = Fdes(dir);
  ASSERT_EQ(fdes.size(), 2u);
  EXPECT_EQ(fdes[1].post_header_len.size(), 41u);
  EXPECT_EQ(fdes[2].post_header_len.size(), 42u);
  {
    // 8.4 files continued as 8.0: refused.
    Options o = BaseOptions();
    o.mysql_layout = MySqlLayout::k80;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
  }
  {
    // A MariaDB log continued as MySQL: refused.
    const std::string mdir = NewTempDir("m84_flavor_maria");
    Options m = BaseOptions();
    m.flavor = LogFlavor::kMariaDB;
    m.server_id = 1;
    auto log = Binlog::Open(mdir, "binlog", m);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->Close().ok());
    auto again = Binlog::Open(mdir, "binlog", BaseOptions());
    EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  }
  {
    // The flavor comes from the files' Format_description layout, not the
    // server version string (the caller's choice): a MariaDB log whose
    // version lacks "MariaDB" reopens as MariaDB and is refused as MySQL.
    const std::string mdir = NewTempDir("m84_flavor_maria_version");
    Options m = BaseOptions();
    m.flavor = LogFlavor::kMariaDB;
    m.server_id = 1;
    m.server_version = "10.11.6-log";
    for (int i = 0; i < 2; ++i) {
      auto log = Binlog::Open(mdir, "binlog", m);
      ASSERT_TRUE(log.ok()) << i << ": " << log.status();
      ASSERT_TRUE((*log)->Close().ok());
    }
    auto again = Binlog::Open(mdir, "binlog", BaseOptions());
    EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  }
}

// WRITESET in commit order, with real concurrency: threads update rows of
// a small table (hot keys), each holding the row's lock from before it
// builds the transaction until Commit returns (as an engine's row lock
// does). In every file, a transaction that changed a row another one
// changed before it must depend on it (last_committed >= the earlier one's
// sequence_number): then every order the clocks allow applies the updates
// of each row in log order. Rotations and a tiny history (overflow) are in
// the mix; writeset clocks must also beat commit order somewhere.
TEST(MySql84Test, WritesetClocksOrderEveryConflictUnderConcurrency) {
  for (size_t history : {size_t{25000}, size_t{5}}) {
    const std::string dir = NewTempDir("m84_writeset");
    Options o = BaseOptions();
    o.max_file_size = 64 << 10;  // rotations
    o.writeset_history_size = history;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TableDef def;
    def.table_id = 70;
    def.schema = "db";
    def.table = "kv";
    ColumnDef c;
    c.type = kColLong;
    def.columns = {c, c};
    def.primary_key = {0};
    constexpr int kKeys = 16;
    constexpr int kThreads = 8;
    constexpr int kPerThread = 150;
    std::vector<std::mutex> row_locks(kKeys);
    std::vector<int64_t> values(kKeys, 0);  // guarded by row_locks
    struct Logged {
      uint64_t file;
      int64_t seq, lc;
      int key;
    };
    std::mutex logged_mu;
    std::vector<Logged> logged;
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th) {
      threads.emplace_back([&, th] {
        auto rows = RowsWriter::Create(RowsWriterOptions());
        if (!rows.ok()) {
          failed = true;
          return;
        }
        auto table = rows->DescribeTable(def);
        std::mt19937_64 rng(th + 1);
        std::unique_ptr<TransactionBuffer> txn = (*log)->NewTransactionBuffer();
        for (int i = 0; i < kPerThread && !failed; ++i) {
          const int key = static_cast<int>(rng() % kKeys);
          std::lock_guard<std::mutex> row(row_locks[key]);
          txn->Clear();
          txn->AppendCommitGtid(1700000000, 1, CommitGtid());
          AppendQuery(txn.get(), 1700000000, 1, 7, "db", "BEGIN");
          bool ok = rows->BeginStatement(txn.get(), 1700000000).ok() &&
                    rows->Update(*table, {Value::Int(key), Value::Int(values[key])},
                                 {Value::Int(key), Value::Int(values[key] + 1)})
                        .ok() &&
                    rows->EndStatement().ok();
          AppendXid(txn.get(), 1700000000, 1, 1);
          auto p = ok ? (*log)->Commit(txn.get()) : absl::InternalError("rows");
          if (!p.ok()) {
            failed = true;
            return;
          }
          ++values[key];
          std::lock_guard<std::mutex> l(logged_mu);
          logged.push_back(Logged{p->file_number, p->identity.sequence_number,
                                  p->identity.last_committed, key});
        }
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_FALSE(failed);
    ASSERT_TRUE((*log)->Close().ok());
    std::sort(logged.begin(), logged.end(), [](const Logged& a, const Logged& b) {
      return a.file != b.file ? a.file < b.file : a.seq < b.seq;
    });
    // The newest earlier writer of each key in the current file.
    std::map<int, int64_t> last_writer;
    uint64_t file = 0;
    int64_t prev_seq = 0;
    for (const Logged& t : logged) {
      if (t.file != file) {
        file = t.file;
        last_writer.clear();
        prev_seq = 0;
      }
      ASSERT_EQ(t.seq, prev_seq + 1) << "sequence numbers are gap-free per file";
      prev_seq = t.seq;
      ASSERT_LT(t.lc, t.seq);
      auto it = last_writer.find(t.key);
      if (it != last_writer.end()) {
        ASSERT_GE(t.lc, it->second)
            << "file " << t.file << ": transaction " << t.seq << " changed key " << t.key
            << " after transaction " << it->second << " but has last_committed " << t.lc;
      }
      last_writer[t.key] = t.seq;
    }
    EXPECT_EQ(logged.size(), static_cast<size_t>(kThreads * kPerThread));
  }
}

// Serially (commit order: each transaction depends on the one before it),
// writeset clocks let a transaction on other rows depend only on the last
// writer of its rows, never below the history's floor (1 in a new file, as
// MySQL's): T1..T5 on keys 1, 2, 3, 1, 2 get last_committed 0, 1, 1, 1, 2
// with 8.4's default, 0, 1, 2, 3, 4 under commit order.
TEST(MySql84Test, WritesetIsTheDefaultFor84FilesAndCommitOrderFor80) {
  for (MySqlLayout layout : {MySqlLayout::k84, MySqlLayout::k80}) {
    const std::string dir = NewTempDir("m84_ws_default");
    Options o = BaseOptions();
    o.mysql_layout = layout;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TableDef def;
    def.table_id = 70;
    def.schema = "db";
    def.table = "kv";
    ColumnDef c;
    c.type = kColLong;
    def.columns = {c, c};
    def.primary_key = {0};
    auto rows = RowsWriter::Create(RowsWriterOptions());
    ASSERT_TRUE(rows.ok());
    auto table = rows->DescribeTable(def);
    ASSERT_TRUE(table.ok());
    std::unique_ptr<TransactionBuffer> txn = (*log)->NewTransactionBuffer();
    std::vector<int64_t> lcs;
    for (int key : {1, 2, 3, 1, 2}) {
      txn->Clear();
      txn->AppendCommitGtid(1700000000, 1, CommitGtid());
      AppendQuery(txn.get(), 1700000000, 1, 7, "db", "BEGIN");
      ASSERT_TRUE(rows->BeginStatement(txn.get(), 1700000000).ok());
      ASSERT_TRUE(rows->Insert(*table, {Value::Int(key * 10 + static_cast<int>(lcs.size())),
                                        Value::Int(0)}).ok());
      ASSERT_TRUE(rows->Update(*table, {Value::Int(key), Value::Int(0)},
                               {Value::Int(key), Value::Int(1)}).ok());
      ASSERT_TRUE(rows->EndStatement().ok());
      AppendXid(txn.get(), 1700000000, 1, 1);
      auto p = (*log)->Commit(txn.get());
      ASSERT_TRUE(p.ok()) << p.status();
      lcs.push_back(p->identity.last_committed);
    }
    ASSERT_TRUE((*log)->Close().ok());
    if (layout == MySqlLayout::k84) {
      EXPECT_EQ(lcs, (std::vector<int64_t>{0, 1, 1, 1, 2}));
    } else {
      EXPECT_EQ(lcs, (std::vector<int64_t>{0, 1, 2, 3, 4}));
    }
  }
}

}  // namespace
}  // namespace binlog
