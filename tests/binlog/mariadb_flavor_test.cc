// The MariaDB 10.11 flavor of the log (Options::flavor = kMariaDB): file
// layout (Format_description, Gtid_list, Binlog_checkpoint), MariaDB GTIDs
// assigned in commit order per domain, commit_id per commit group, XA and
// DDL flags, gtid_strict_mode, the binlog GTID state across rotation, crash
// and purge, and the files as the real mariadb-binlog reads them.

#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/strings/str_split.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/xid_recovery.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/statement_events.h"
#include "binlog/transaction_boundary.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace {

using testing_util::FindMariadbBinlog;
using testing_util::NewTempDir;
using testing_util::RunCommand;
using testing_util::ReadFile;

constexpr uint32_t kTs = 1700000000;

Options MariaOptions() {
  Options o;
  o.flavor = LogFlavor::kMariaDB;
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

// A MariaDB transaction: the Gtid event (no BEGIN), one statement, Xid.
void BuildMariaTxn(TransactionBuffer* txn, uint64_t id, size_t payload,
                   const CommitGtid& g = CommitGtid(), uint32_t server_id = 1) {
  txn->Clear();
  txn->AppendMariaCommitGtid(kTs, server_id, g);
  std::string q = absl::StrCat("INSERT INTO t VALUES (", id, ") /* ");
  while (q.size() < payload) q.push_back(static_cast<char>('a' + q.size() % 26));
  q += " */";
  AppendQuery(txn, kTs, server_id, 7, "db", q);
  AppendXid(txn, kTs, server_id, id);
}

CommitGtid InDomain(uint32_t domain) {
  CommitGtid g;
  g.has_domain_id = true;
  g.domain_id = domain;
  return g;
}

struct MariaSeen {
  uint64_t file = 0;
  uint64_t offset = 0;
  uint64_t end = 0;  // end of its transaction
  uint32_t server_id = 0;
  uint16_t header_flags = 0;
  uint32_t event_size = 0;
  MariaGtid g;
};

struct MariaContents {
  std::vector<MariaSeen> gtids;
  std::map<uint64_t, MariaGtidState> gtid_list;   // file -> its Gtid_list
  std::map<uint64_t, std::string> checkpoint;     // file -> named file
  std::vector<std::vector<uint8_t>> header_types;  // per file, before txns
};

MariaContents ReadMariaLog(const std::string& dir) {
  MariaContents out;
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  Event ev;
  absl::Status s;
  TransactionBoundaryParser parser;
  uint64_t file = 0;
  bool in_header = false;
  while ((s = (*reader)->Next(&ev)).ok()) {
    if (ev.file_number != file) {
      file = ev.file_number;
      out.header_types.emplace_back();
      in_header = true;
    }
    if (ev.header.type == kMariaGtidListEvent) {
      auto st = MariaGtidState::DecodeGtidListBody(ev.body());
      EXPECT_TRUE(st.ok()) << st.status();
      if (st.ok()) out.gtid_list[file] = *st;
    }
    if (ev.header.type == kMariaBinlogCheckpointEvent) {
      auto name = DecodeBinlogCheckpoint(ev.body());
      EXPECT_TRUE(name.ok()) << name.status();
      if (name.ok()) out.checkpoint[file] = std::string(*name);
    }
    if (ev.header.type == kMariaGtidEvent) {
      in_header = false;
      auto g = DecodeMariaGtid(ev.body());
      EXPECT_TRUE(g.ok()) << g.status();
      MariaSeen m;
      m.file = file;
      m.offset = ev.offset;
      m.server_id = ev.header.server_id;
      m.header_flags = ev.header.flags;
      m.event_size = ev.header.event_size;
      if (g.ok()) m.g = *g;
      out.gtids.push_back(m);
    }
    if (in_header) out.header_types.back().push_back(ev.header.type);
    auto r = parser.Feed(ev.header, ev.body());
    EXPECT_NE(r, TransactionBoundaryParser::Result::kUnexpected)
        << "file " << file << " offset " << ev.offset;
    if (r == TransactionBoundaryParser::Result::kEnded && !out.gtids.empty()) {
      out.gtids.back().end = ev.end_offset;
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  return out;
}

std::string CorpusFile(const std::string& rel) {
  const char* src = std::getenv("TEST_SRCDIR");
  return absl::StrCat(src ? src : ".", "/binlog_storage/tests/data/mariadb/", rel);
}

// ---------------------------------------------------------------------------
// File layout

TEST(MariadbFlavorTest, FilesStartAsMariaDbWritesThem) {
  std::string dir = NewTempDir("maria_layout");
  Options o = MariaOptions();
  o.now_seconds = [] { return kTs; };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    BuildMariaTxn(&t, 1, 40);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    // FDE 4..256, Gtid_list 256..285 (empty), Binlog_checkpoint naming
    // this file 285..325, the Gtid event (42 bytes: no commit_id alone).
    EXPECT_EQ(p->start, 325u);
    EXPECT_EQ(t.data().size(), p->end - p->start);
    ASSERT_TRUE((*log)->Rotate().ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::string f1 = ReadFile(absl::StrCat(dir, "/binlog.000001"));
  std::string corpus = ReadFile(CorpusFile("s1-row-crc32/binlogs/mariadb-bin.000002"));
  ASSERT_GT(corpus.size(), 256u);
  ASSERT_GT(f1.size(), 325u);
  // Format_description: 252 bytes, binlog v4, MariaDB's post-header array
  // and the checksum-alg byte, byte for byte as the corpus' (written by
  // MariaDB 10.11.19 with CRC32).
  EXPECT_EQ(f1[4 + kTypeOffset], static_cast<char>(kFormatDescriptionEvent));
  EXPECT_EQ(LoadLe32(f1.data() + 4 + kEventSizeOffset), 252u);
  EXPECT_EQ(LoadLe32(f1.data() + 4 + kLogPosOffset), 256u);
  EXPECT_EQ(LoadLe16(f1.data() + 4 + kFdeBinlogVersionOffset), 4u);
  EXPECT_EQ(std::string(f1.data() + 4 + kFdeServerVersionOffset),
            "10.11.19-MariaDB-log");
  EXPECT_EQ(f1.substr(4 + kFdeHeaderLenOffset, 1 + 171 + 1),
            corpus.substr(4 + kFdeHeaderLenOffset, 1 + 171 + 1));
  EXPECT_EQ(MariaDb1011PostHeaderLengths(), corpus.substr(4 + kFdePostHeaderOffset, 171));
  EXPECT_EQ(f1[4 + kFlagsOffset], 0) << "in-use flag cleared at rotation";
  // Gtid_list (empty: 29 bytes, like the corpus' empty list in its first
  // file) and Binlog_checkpoint.
  EXPECT_EQ(f1[256 + kTypeOffset], static_cast<char>(kMariaGtidListEvent));
  EXPECT_EQ(LoadLe32(f1.data() + 256 + kEventSizeOffset), 29u);
  EXPECT_EQ(LoadLe16(f1.data() + 256 + kFlagsOffset), 0u);
  EXPECT_EQ(f1[285 + kTypeOffset], static_cast<char>(kMariaBinlogCheckpointEvent));
  auto name = DecodeBinlogCheckpoint(absl::string_view(f1).substr(285 + 19, 4 + 13));
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "binlog.000001");
  // The Gtid event: header flag LOG_EVENT_SUPPRESS_USE_F, 19-byte body,
  // FL_TRANSACTIONAL | FL_ALLOW_PARALLEL (InnoDB DML, as the corpus), no
  // BEGIN after it.
  MariaContents c = ReadMariaLog(dir);
  ASSERT_EQ(c.gtids.size(), 1u);
  EXPECT_EQ(c.gtids[0].offset, 325u);
  EXPECT_EQ(c.gtids[0].event_size, 42u);
  EXPECT_EQ(c.gtids[0].header_flags, kFlagSuppressUse);
  EXPECT_EQ(c.gtids[0].g.flags2, 0x0C);
  EXPECT_EQ(c.gtids[0].g.ToString(c.gtids[0].server_id), "0-1-1");
  EXPECT_FALSE(c.gtids[0].g.has_commit_id);
  std::vector<uint8_t> header = {kFormatDescriptionEvent, kMariaGtidListEvent,
                                       kMariaBinlogCheckpointEvent};
  ASSERT_EQ(c.header_types.size(), 2u);
  EXPECT_EQ(c.header_types[0], header);
  header.push_back(kStopEvent);  // the second file holds no transaction
  EXPECT_EQ(c.header_types[1], header);
  // The second file's Gtid_list holds the state of the first.
  EXPECT_EQ(c.gtid_list[2].StateToString(), "0-1-1");
  EXPECT_EQ(c.checkpoint[2], "binlog.000002");
}

TEST(MariadbFlavorTest, MySqlDefaultsAreUnchanged) {
  std::string dir = NewTempDir("maria_mysql_default");
  Options o;
  o.preallocate = io::PreallocMode::kNone;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_TRUE((*log)->mariadb_gtid_state().empty());
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::string f1 = ReadFile(absl::StrCat(dir, "/binlog.000001"));
  // MySQL 8.4's files (Options::mysql_layout k84).
  EXPECT_EQ(std::string(f1.data() + 4 + kFdeServerVersionOffset), "8.4.6");
  EXPECT_EQ(LoadLe32(f1.data() + 4 + kEventSizeOffset), 123u);
  EXPECT_EQ(f1[127 + kTypeOffset], static_cast<char>(kPreviousGtidsEvent));
}

TEST(MariadbFlavorTest, CompressionIsRefused) {
  Options o = MariaOptions();
  o.compression = io::Codec::kZstd;
  auto log = Binlog::Open(NewTempDir("maria_zstd"), "binlog", o);
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(log.status())) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "Transaction_payload"))
      << log.status();
}

TEST(MariadbFlavorTest, AFileHeaderCallbackGetsTheStateAndOpenRecoversFromIt) {
  std::string dir = NewTempDir("maria_header_cb");
  Options o = MariaOptions();
  std::vector<std::string> seen;
  o.file_header = [&seen](const FileHeaderContext& ctx, TransactionBuffer* t) {
    EXPECT_EQ(ctx.previous_gtids->ToString(), "");
    if (ctx.mariadb_gtid_state == nullptr) {
      return absl::InternalError("no MariaDB state for a kMariaDB log");
    }
    seen.push_back(ctx.mariadb_gtid_state->StateToString());
    AppendMariaGtidList(t, kTs, 1, *ctx.mariadb_gtid_state);
    AppendBinlogCheckpoint(t, kTs, 1, ctx.file_name);
    return absl::OkStatus();
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    for (int i = 0; i < 3; ++i) {
      BuildMariaTxn(&t, i, 30, InDomain(5));
      ASSERT_TRUE((*log)->Commit(&t).ok());
    }
    ASSERT_TRUE((*log)->Rotate().ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"", "5-1-3"}));
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "5-1-3");
  EXPECT_EQ(seen.back(), "5-1-3");  // the third file's header
}

// ---------------------------------------------------------------------------
// GTIDs in commit order

TEST(MariadbFlavorTest, SeqNosAreOrderedAndGapFreePerDomainAcrossRotations) {
  std::string dir = NewTempDir("maria_concurrent");
  Options o = MariaOptions();
  o.max_file_size = 32 << 10;  // many rotations
  o.gtid_domain_id = 7;
  constexpr int kThreads = 64;
  constexpr int kPerThread = 30;
  // Domains: Options::gtid_domain_id (7) and two chosen by the caller.
  auto domain_of = [](int t) { return t % 3 == 0 ? 7u : t % 3 == 1 ? 1u : 2u; };
  std::mutex mu;
  std::vector<CommitPosition> positions;
  std::vector<std::vector<AssignedIdentity>> groups;
  o.on_group_commit = [&](const GroupCommitInfo& info) {
    std::vector<AssignedIdentity> ids;
    for (const CommittedTransaction& t : info.txns) ids.push_back(t.identity);
    std::lock_guard<std::mutex> l(mu);
    groups.push_back(ids);
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        TransactionBuffer txn;
        for (int i = 0; i < kPerThread; ++i) {
          CommitGtid g;
          if (domain_of(t) != 7) g = InDomain(domain_of(t));
          BuildMariaTxn(&txn, t * 1000 + i, 60 + (i * 37) % 300, g);
          auto pos = (*log)->Commit(&txn);
          ASSERT_TRUE(pos.ok()) << pos.status();
          EXPECT_TRUE(pos->identity.mariadb);
          EXPECT_EQ(pos->identity.domain_id, domain_of(t));
          std::lock_guard<std::mutex> l(mu);
          positions.push_back(*pos);
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_GT((*log)->stats().rotations, 5u);
    // 22 threads in domain 7 (t % 3 == 0), 21 each in 1 and 2.
    EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(),
              absl::StrCat("1-1-", 21 * kPerThread, ",2-1-", 21 * kPerThread,
                           ",7-1-", 22 * kPerThread));
    ASSERT_TRUE((*log)->Close().ok());
  }
  MariaContents c = ReadMariaLog(dir);
  ASSERT_EQ(c.gtids.size(), static_cast<size_t>(kThreads * kPerThread));
  MariaGtidState before;
  std::map<uint32_t, uint64_t> last_seq;
  uint64_t file = 0;
  for (const MariaSeen& s : c.gtids) {
    SCOPED_TRACE(absl::StrCat("file ", s.file, " offset ", s.offset));
    if (s.file != file) {
      file = s.file;
      // Each file's Gtid_list is the state of every file before it, and its
      // Binlog_checkpoint names the file itself.
      EXPECT_EQ(c.gtid_list[file], before);
      EXPECT_EQ(c.checkpoint[file], BinlogFileName("binlog", file));
    }
    EXPECT_EQ(s.server_id, 1u);
    EXPECT_EQ(s.g.seq_no, ++last_seq[s.g.domain_id]);  // ordered, gap-free
    before.Add(s.g.domain_id, s.server_id, s.g.seq_no);
  }
  EXPECT_EQ(last_seq.size(), 3u);
  // Commit returned what the file holds.
  std::map<std::pair<uint64_t, uint64_t>, const MariaSeen*> by_pos;
  for (const MariaSeen& s : c.gtids) by_pos[{s.file, s.offset}] = &s;
  for (const CommitPosition& p : positions) {
    auto it = by_pos.find({p.file_number, p.start});
    ASSERT_NE(it, by_pos.end());
    const MariaSeen& s = *it->second;
    EXPECT_EQ(p.identity.seq_no, s.g.seq_no);
    EXPECT_EQ(p.identity.domain_id, s.g.domain_id);
    EXPECT_EQ(p.identity.server_id, s.server_id);
    EXPECT_EQ(p.identity.commit_id, s.g.has_commit_id ? s.g.commit_id : 0);
    EXPECT_EQ(p.end, s.end);
    // 42 bytes without a commit_id, 44 with one, as MariaDB writes them.
    EXPECT_EQ(s.event_size, s.g.has_commit_id ? 44u : 42u);
  }
  // commit_id: one per group of more than one transaction, shared by its
  // transactions, different across groups; none for a group of one.
  std::set<uint64_t> ids;
  size_t multi = 0;
  for (const auto& grp : groups) {
    ASSERT_FALSE(grp.empty());
    if (grp.size() == 1) {
      EXPECT_EQ(grp[0].commit_id, 0u);
      continue;
    }
    ++multi;
    EXPECT_NE(grp[0].commit_id, 0u);
    for (const AssignedIdentity& id : grp) EXPECT_EQ(id.commit_id, grp[0].commit_id);
    EXPECT_TRUE(ids.insert(grp[0].commit_id).second) << "commit_id reused";
  }
  EXPECT_GT(multi, 0u) << "64 committers never formed a group";
  // The ordered-commit callback saw every transaction with its GTID, in
  // log order.
  std::vector<std::pair<uint32_t, uint64_t>> in_callbacks, in_file;
  for (const auto& grp : groups) {
    for (const AssignedIdentity& id : grp) {
      EXPECT_TRUE(id.mariadb);
      EXPECT_EQ(id.server_id, 1u);
      in_callbacks.push_back({id.domain_id, id.seq_no});
    }
  }
  for (const MariaSeen& s : c.gtids) in_file.push_back({s.g.domain_id, s.g.seq_no});
  EXPECT_EQ(in_callbacks, in_file);
}

TEST(MariadbFlavorTest, StrictModeRefusesOutOfOrderSeqNos) {
  for (bool strict : {true, false}) {
    SCOPED_TRACE(strict ? "strict" : "not strict");
    Options o = MariaOptions();
    o.gtid_strict_mode = strict;
    auto log = Binlog::Open(NewTempDir("maria_strict"), "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    CommitGtid a;  // a replica applying its source's 0-2-10
    a.kind = CommitGtid::Kind::kAssigned;
    a.domain_id = 0;
    a.seq_no = 10;
    BuildMariaTxn(&t, 1, 20, a, /*server_id=*/2);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->identity.server_id, 2u);
    EXPECT_EQ(p->identity.seq_no, 10u);
    // The next local GTID follows it.
    BuildMariaTxn(&t, 2, 20);
    p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->identity.seq_no, 11u);
    // 0-2-5 is out of order.
    a.seq_no = 5;
    BuildMariaTxn(&t, 3, 20, a, 2);
    p = (*log)->Commit(&t);
    if (strict) {
      ASSERT_FALSE(p.ok());
      EXPECT_TRUE(absl::IsAlreadyExists(p.status())) << p.status();
      EXPECT_TRUE(absl::StrContains(p.status().message(), "0-2-5")) << p.status();
      EXPECT_TRUE(absl::StrContains(p.status().message(), "gtid_strict_mode"));
      EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "0-2-10,0-1-11");
      // Refused alone: the log goes on.
      BuildMariaTxn(&t, 4, 20);
      p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_EQ(p->identity.seq_no, 12u);
    } else {
      ASSERT_TRUE(p.ok()) << p.status();
      // As MariaDB: 0-2-5 is the domain's position now; the next local
      // seq_no still follows the highest.
      EXPECT_EQ((*log)->mariadb_gtid_state().ToString(), "0-2-5");
      BuildMariaTxn(&t, 4, 20);
      p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_EQ(p->identity.seq_no, 12u);
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
}

// ---------------------------------------------------------------------------
// XA and DDL

TEST(MariadbFlavorTest, XaAndDdlCarryTheirFlagsAndXids) {
  std::string dir = NewTempDir("maria_xa_ddl");
  Options o = MariaOptions();
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer t;
  // DDL: FL_STANDALONE | FL_ALLOW_PARALLEL | FL_DDL (0x29, as the corpus'
  // CREATE TABLE), its XID in Q_XID, no Xid event.
  CommitGtid ddl;
  ddl.isolated = true;
  t.AppendMariaCommitGtid(kTs, 1, ddl);
  AppendMariaDdlQuery(&t, kTs, 1, 5, "shop", "CREATE TABLE t (id INT) ENGINE=InnoDB", 77);
  ASSERT_TRUE((*log)->Commit(&t).ok());
  // XA PREPARE: FL_PREPARED_XA with the xid; ends with XA_prepare.
  CommitGtid xa;
  xa.xa = CommitGtid::Xa::kPrepared;
  xa.xa_format_id = 1;
  xa.xa_gtrid = "vis-xa-1";
  xa.xa_bqual = "b";
  t.Clear();
  t.AppendMariaCommitGtid(kTs, 1, xa);
  AppendQuery(&t, kTs, 1, 5, "shop", "INSERT INTO t VALUES (1)");
  AppendQuery(&t, kTs, 1, 5, "shop", "XA END X'7669732d78612d31',X'62',1");
  ASSERT_TRUE(AppendXaPrepare(&t, kTs, 1, 1, "vis-xa-1", "b", /*one_phase=*/false).ok());
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->identity.seq_no, 2u);
  // XA COMMIT: FL_COMPLETED_XA | FL_STANDALONE with the xid; one statement.
  xa.xa = CommitGtid::Xa::kCompleted;
  t.Clear();
  t.AppendMariaCommitGtid(kTs, 1, xa);
  AppendQuery(&t, kTs, 1, 5, "shop", "XA COMMIT X'7669732d78612d31',X'62',1");
  ASSERT_TRUE((*log)->Commit(&t).ok());
  // Bad xids are refused.
  xa.xa_gtrid = "";
  t.Clear();
  t.AppendMariaCommitGtid(kTs, 1, xa);
  AppendQuery(&t, kTs, 1, 5, "shop", "XA COMMIT X'',X'62',1");
  auto bad = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  xa.xa_gtrid = std::string(65, 'g');
  t.Clear();
  t.AppendMariaCommitGtid(kTs, 1, xa);
  AppendQuery(&t, kTs, 1, 5, "shop", "XA COMMIT 'x'");
  bad = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  ASSERT_TRUE((*log)->Close().ok());

  MariaContents c = ReadMariaLog(dir);
  ASSERT_EQ(c.gtids.size(), 3u);
  EXPECT_EQ(c.gtids[0].g.flags2, 0x29);
  EXPECT_EQ(c.gtids[0].event_size, 42u);
  EXPECT_EQ(c.gtids[1].g.flags2, MariaGtid::kFlagPreparedXa |
                                     MariaGtid::kFlagAllowParallel |
                                     MariaGtid::kFlagTransactional);  // 0x4C
  EXPECT_TRUE(c.gtids[1].g.has_xid);
  EXPECT_EQ(c.gtids[1].g.xid_format_id, 1u);
  EXPECT_EQ(c.gtids[1].g.xid_gtrid, "vis-xa-1");
  EXPECT_EQ(c.gtids[1].g.xid_bqual, "b");
  // No commit_id: the xid follows flags2 (19 + 13 + 6 + 9 + 4 bytes).
  EXPECT_EQ(c.gtids[1].event_size, 51u);
  EXPECT_EQ(c.gtids[2].g.flags2, MariaGtid::kFlagCompletedXa |
                                     MariaGtid::kFlagAllowParallel |
                                     MariaGtid::kFlagTransactional |
                                     MariaGtid::kFlagStandalone);  // 0x8D
  EXPECT_EQ(c.gtids[2].g.xid_gtrid, "vis-xa-1");
  // The DDL's Q_XID reads back with the library's decoder.
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(reader.ok());
  Event ev;
  bool found = false;
  while ((*reader)->Next(&ev).ok()) {
    if (ev.header.type != kQueryEvent) continue;
    auto q = DecodeQuery(ev.body(), 13);
    ASSERT_TRUE(q.ok());
    if (!absl::StartsWith(q->query, "CREATE TABLE")) continue;
    auto vars = DecodeQueryStatusVars(q->status_vars);
    ASSERT_TRUE(vars.ok()) << vars.status();
    uint64_t xid = 0;
    EXPECT_TRUE(vars->xid(&xid));
    EXPECT_EQ(xid, 77u);
    EXPECT_EQ(q->db, "shop");
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(MariadbFlavorTest, CallerFlagsAndAGroupsXaTransactionsWithCommitId) {
  std::string dir = NewTempDir("maria_group_xa");
  Options o = MariaOptions();
  // The first group waits in the flush stage until the three others are
  // queued behind it in the pipeline (LogStats::queued_requests), so those
  // form one group of three.
  std::atomic<bool> release{false};
  std::atomic<int> group_calls{0};
  o.before_group_write = [&](const GroupCommitInfo&) {
    if (group_calls.fetch_add(1) == 0) {
      while (!release.load()) std::this_thread::yield();
    }
    return absl::OkStatus();
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  std::thread first([&] {
    TransactionBuffer t;
    CommitGtid g;  // a MyISAM-like statement that waited, not parallel
    g.transactional = false;
    g.allow_parallel = false;
    g.waited = true;
    BuildMariaTxn(&t, 1, 20, g);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->identity.commit_id, 0u);
  });
  while (group_calls.load() == 0) std::this_thread::yield();
  std::vector<std::thread> rest;
  std::vector<CommitPosition> pos(3);
  for (int i = 0; i < 3; ++i) {
    rest.emplace_back([&, i] {
      TransactionBuffer t;
      CommitGtid xa;
      xa.xa = CommitGtid::Xa::kCompleted;
      xa.xa_format_id = 7;
      xa.xa_gtrid = absl::StrCat("gtrid-", i);
      xa.xa_bqual = i == 0 ? "" : "bq";
      t.AppendMariaCommitGtid(kTs, 1, xa);
      XaId id;
      id.format_id = xa.xa_format_id;
      id.gtrid = xa.xa_gtrid;
      id.bqual = xa.xa_bqual;
      AppendQuery(&t, kTs, 1, 5, "db", absl::StrCat("XA COMMIT ", id.ToString()));
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      pos[i] = *p;
    });
  }
  // The state itself, not a delay: the three are queued (a 60 s bound
  // turns a hand-off that never happens into a failure).
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while ((*log)->stats().queued_requests < 3) {
    if (absl::Now() > deadline) {
      ADD_FAILURE() << "the three committers never queued: "
                    << (*log)->stats().queued_requests;
      break;
    }
    std::this_thread::yield();
  }
  release = true;
  first.join();
  for (auto& t : rest) t.join();
  ASSERT_TRUE((*log)->Close().ok());
  MariaContents c = ReadMariaLog(dir);
  ASSERT_EQ(c.gtids.size(), 4u);
  EXPECT_EQ(c.gtids[0].g.flags2, MariaGtid::kFlagWaited);
  EXPECT_FALSE(c.gtids[0].g.has_commit_id);
  for (size_t i = 1; i < 4; ++i) {
    SCOPED_TRACE(i);
    const MariaSeen& s = c.gtids[i];
    EXPECT_TRUE(s.g.has_commit_id);
    EXPECT_EQ(s.g.commit_id, c.gtids[1].g.commit_id);
    EXPECT_NE(s.g.commit_id, 0u);
    EXPECT_TRUE(s.g.has_xid);
    EXPECT_EQ(s.g.xid_format_id, 7u);
    // seq_no, domain, flags2, commit_id, then the xid.
    EXPECT_EQ(s.event_size, 19u + 21 + 6 + s.g.xid_gtrid.size() +
                                s.g.xid_bqual.size() + 4);
  }
  std::set<std::string> gtrids;
  for (size_t i = 1; i < 4; ++i) gtrids.insert(c.gtids[i].g.xid_gtrid);
  EXPECT_EQ(gtrids, (std::set<std::string>{"gtrid-0", "gtrid-1", "gtrid-2"}));
  for (const CommitPosition& p : pos) {
    EXPECT_EQ(p.identity.commit_id, c.gtids[1].g.commit_id);
  }
  // The commit_id is the group's (file number << 32) | start offset.
  EXPECT_EQ(c.gtids[1].g.commit_id, (uint64_t{1} << 32) | c.gtids[1].offset);
}

TEST(MariadbFlavorTest, CallerEncodedGtidsAreCountedOnlyByOpen) {
  std::string dir = NewTempDir("maria_caller_gtid");
  Options o = MariaOptions();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    std::string body(19, '\0');
    StoreLe64(&body[0], 42);
    StoreLe32(&body[8], 3);
    body[12] = 0x0C;
    t.AppendEvent(kMariaGtidEvent, 1, kTs, kFlagSuppressUse, body);
    AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
    AppendXid(&t, kTs, 1, 1);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    EXPECT_TRUE((*log)->mariadb_gtid_state().empty());
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "3-1-42");
}

TEST(MariadbFlavorTest, AnUnreadableGtidListIsDataLossNamingTheFile) {
  std::string dir = NewTempDir("maria_bad_list");
  Options o = MariaOptions();
  o.checksums = false;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  // The Gtid_list's count word (file offset 256 + 19) claims 5 entries.
  std::string path = absl::StrCat(dir, "/binlog.000001");
  std::string f = ReadFile(path);
  ASSERT_EQ(f[256 + kTypeOffset], static_cast<char>(kMariaGtidListEvent));
  StoreLe32(&f[256 + kHeaderSize], 5);
  testing_util::WriteFile(path, f);
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsDataLoss(log.status())) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "binlog.000001"));
  EXPECT_TRUE(absl::StrContains(log.status().message(), "Gtid_list"));
}

TEST(MariadbFlavorTest, MisuseIsRefused) {
  TransactionBuffer t;
  {
    // A MariaDB Gtid in a MySQL log and the reverse.
    Options my;
    my.preallocate = io::PreallocMode::kNone;
    auto log = Binlog::Open(NewTempDir("maria_misuse_mysql"), "binlog", my);
    ASSERT_TRUE(log.ok());
    BuildMariaTxn(&t, 1, 10);
    auto p = (*log)->Commit(&t);
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  }
  auto log = Binlog::Open(NewTempDir("maria_misuse"), "binlog", MariaOptions());
  ASSERT_TRUE(log.ok());
  t.Clear();
  CommitGtid anon;
  anon.kind = CommitGtid::Kind::kAnonymous;
  t.AppendCommitGtid(kTs, 1, anon);
  AppendQuery(&t, kTs, 1, 7, "db", "BEGIN");
  AppendXid(&t, kTs, 1, 1);
  auto p = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  BuildMariaTxn(&t, 1, 10, anon);
  p = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  CommitGtid zero;
  zero.kind = CommitGtid::Kind::kAssigned;
  BuildMariaTxn(&t, 1, 10, zero);
  p = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  // Not first.
  t.Clear();
  AppendQuery(&t, kTs, 1, 7, "db", "BEGIN");
  t.AppendMariaCommitGtid(kTs, 1, CommitGtid());
  AppendXid(&t, kTs, 1, 1);
  p = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  // A transaction that does not end.
  t.Clear();
  t.AppendMariaCommitGtid(kTs, 1, CommitGtid());
  AppendQuery(&t, kTs, 1, 7, "db", "INSERT INTO t VALUES (1)");
  p = (*log)->Commit(&t);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_TRUE((*log)->mariadb_gtid_state().empty());
}

// ---------------------------------------------------------------------------
// State across crash and purge

TEST(MariadbFlavorTest, StateSurvivesCloseCrashAndPurge) {
  std::string dir = NewTempDir("maria_reopen");
  Options o = MariaOptions();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    for (int i = 0; i < 10; ++i) {
      BuildMariaTxn(&t, i, 40, InDomain(i % 2));
      ASSERT_TRUE((*log)->Commit(&t).ok());
      if (i == 4) {
        ASSERT_TRUE((*log)->Rotate().ok());
      }
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  io::FaultInjectionFileSystem fs;
  o.file_system = &fs;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "0-1-5,1-1-5");
    EXPECT_TRUE((*log)->mariadb_purged_gtid_state().empty());
    TransactionBuffer t;
    for (int i = 0; i < 3; ++i) {
      CommitGtid a;  // a replica's transactions from server 9, domain 3
      a.kind = CommitGtid::Kind::kAssigned;
      a.domain_id = 3;
      a.seq_no = 100 + i;
      BuildMariaTxn(&t, 100 + i, 40, a, 9);
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
    }
    BuildMariaTxn(&t, 200, 40);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    fs.Freeze();  // crash: no Stop event, the file stays in use
    EXPECT_FALSE((*log)->Close().ok());
  }
  fs.ResetState();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_TRUE(log.ok() && (*log)->recovery().recovered);
    // The crashed file's Gtid_list plus its complete transactions.
    EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(),
              "0-1-6,1-1-5,3-9-102");
    TransactionBuffer t;
    BuildMariaTxn(&t, 300, 40);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->identity.seq_no, 7u);
    // Purge the first two files: the purged state is the third's
    // Gtid_list.
    auto n = (*log)->PurgeTo(3);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 2);
    EXPECT_EQ((*log)->mariadb_purged_gtid_state().StateToString(), "0-1-5,1-1-5");
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->mariadb_purged_gtid_state().StateToString(), "0-1-5,1-1-5");
  EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "0-1-7,1-1-5,3-9-102");
}

// An event as a server writes it at `offset` (log_pos and CRC32 filled).
std::string EventAt(uint8_t type, uint16_t flags, absl::string_view body,
                    uint64_t offset) {
  std::string ev(kHeaderSize + body.size() + kChecksumSize, '\0');
  EventHeader h;
  h.timestamp = kTs;
  h.type = type;
  h.server_id = 1;
  h.event_size = static_cast<uint32_t>(ev.size());
  h.log_pos = static_cast<uint32_t>(offset + ev.size());
  h.flags = flags;
  EncodeHeader(h, ev.data());
  std::memcpy(&ev[kHeaderSize], body.data(), body.size());
  StoreLe32(&ev[ev.size() - kChecksumSize], ComputeEventChecksum(ev));
  return ev;
}

TEST(MariadbFlavorTest, RecoveryCountsOnlyCompleteTransactions) {
  std::string dir = NewTempDir("maria_torn");
  io::FaultInjectionFileSystem fs;
  Options o = MariaOptions();
  o.file_system = &fs;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    for (int i = 0; i < 4; ++i) {
      BuildMariaTxn(&t, i, 30);
      ASSERT_TRUE((*log)->Commit(&t).ok());
    }
    fs.Freeze();  // crash
    EXPECT_FALSE((*log)->Close().ok());
  }
  fs.ResetState();
  // The crash left a transaction half written: its Gtid event (0-1-5) and
  // a statement, no Xid.
  std::string path = absl::StrCat(dir, "/binlog.000001");
  std::string f = ReadFile(path);
  std::string gtid_body(19, '\0');
  StoreLe64(&gtid_body[0], 5);
  gtid_body[12] = 0x0C;
  std::string tail = EventAt(kMariaGtidEvent, kFlagSuppressUse, gtid_body, f.size());
  TransactionBuffer q;
  AppendQuery(&q, kTs, 1, 7, "db", "INSERT INTO t VALUES (5)");
  std::string qbody(q.data().substr(kHeaderSize, q.data().size() - kHeaderSize - kChecksumSize));
  tail += EventAt(kQueryEvent, 0, qbody, f.size() + tail.size());
  testing_util::WriteFile(path, f + tail);
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE((*log)->recovery().recovered);
  EXPECT_EQ((*log)->recovery().events_cut, 2u);
  EXPECT_EQ((*log)->mariadb_gtid_state().StateToString(), "0-1-4");
  TransactionBuffer t;
  BuildMariaTxn(&t, 9, 30);
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->identity.seq_no, 5u);  // 0-1-5 was never acknowledged
}

// ---------------------------------------------------------------------------
// The real mariadb-binlog


class MariadbBinlogReadsFlavorTest : public ::testing::TestWithParam<bool> {};

TEST_P(MariadbBinlogReadsFlavorTest, VerifiesAndPrintsTheAssignedGtids) {
  const bool checksums = GetParam();
  const std::string tool = FindMariadbBinlog();
  if (tool.empty()) {
    GTEST_SKIP() << "mariadb-binlog not installed";
  }
  std::string dir = NewTempDir("maria_compat");
  Options o = MariaOptions();
  o.checksums = checksums;
  o.max_file_size = 16384;
  std::mutex mu;
  std::vector<CommitPosition> positions;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    std::vector<std::thread> threads;
    for (int th = 0; th < 8; ++th) {
      threads.emplace_back([&, th] {
        TransactionBuffer t(checksums);
        for (int i = 0; i < 30; ++i) {
          const int id = th * 100 + i;
          if (i % 10 == 9) {
            CommitGtid ddl = InDomain(th % 2);
            ddl.isolated = true;
            t.Clear();
            t.AppendMariaCommitGtid(kTs, 1, ddl);
            AppendMariaDdlQuery(&t, kTs, 1, 5, "db",
                                absl::StrCat("CREATE TABLE t", id, " (id INT)"), id);
          } else {
            BuildMariaTxn(&t, id, 20 + (id * 41) % 500, InDomain(th % 2));
          }
          auto p = (*log)->Commit(&t);
          ASSERT_TRUE(p.ok()) << p.status();
          std::lock_guard<std::mutex> l(mu);
          positions.push_back(*p);
        }
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::map<std::pair<uint64_t, uint64_t>, const CommitPosition*> by_pos;
  for (const CommitPosition& p : positions) by_pos[{p.file_number, p.start}] = &p;
  auto files = io::FileSystem::Default()->ListDirectory(dir);
  ASSERT_TRUE(files.ok());
  int checked = 0;
  size_t gtids_printed = 0;
  for (const std::string& name : *files) {
    uint64_t n;
    if (!ParseBinlogFileName("binlog", name, &n)) continue;
    SCOPED_TRACE(name);
    std::string path = absl::StrCat(dir, "/", name);
    std::string out;
    int rc = RunCommand(absl::StrCat(tool, " --verify-binlog-checksum '", path, "'"), &out);
    EXPECT_EQ(rc, 0) << out.substr(0, 4000);
    EXPECT_FALSE(absl::StrContains(out, "ERROR")) << out.substr(0, 4000);
    EXPECT_FALSE(absl::StrContains(out, "not closed properly"));
    EXPECT_TRUE(absl::StrContains(out, "Gtid list [")) << out.substr(0, 2000);
    EXPECT_TRUE(absl::StrContains(out, absl::StrCat("Binlog checkpoint ", name)));
    // "# at <offset>" then the event line "... GTID D-S-N [cid=C] trans|ddl".
    std::vector<absl::string_view> lines = absl::StrSplit(out, '\n');
    uint64_t at = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      absl::string_view line = lines[i];
      if (absl::StartsWith(line, "# at ")) {
        at = std::strtoull(std::string(line.substr(5)).c_str(), nullptr, 10);
        continue;
      }
      // The Gtid event takes the place of BEGIN: mariadb-binlog prints
      // START TRANSACTION for it, and no BEGIN query follows.
      EXPECT_NE(line, "BEGIN") << "at " << at;
      size_t g = line.find("\tGTID ");
      if (g == absl::string_view::npos) continue;
      auto it = by_pos.find({n, at});
      ASSERT_NE(it, by_pos.end()) << line;
      const AssignedIdentity& id = it->second->identity;
      std::string want = absl::StrCat("GTID ", id.domain_id, "-", id.server_id,
                                      "-", id.seq_no);
      if (id.commit_id != 0) absl::StrAppend(&want, " cid=", id.commit_id);
      EXPECT_TRUE(absl::StartsWith(line.substr(g + 1), want)) << line << " want " << want;
      ++gtids_printed;
    }
    ++checked;
  }
  EXPECT_GE(checked, 3);
  EXPECT_EQ(gtids_printed, positions.size());
}

INSTANTIATE_TEST_SUITE_P(Checksums, MariadbBinlogReadsFlavorTest, ::testing::Bool());

// ---------------------------------------------------------------------------
// A MariaDB replica connecting with its GTID position

// Commits domain 0 seq 1..12 and domain 1 seq 1..6 interleaved, rotating
// every 5 transactions. Returns the GTIDs in log order.
std::vector<std::string> TwoDomainLog(Binlog* log) {
  std::vector<std::string> order;
  TransactionBuffer t;
  for (int i = 0; i < 18; ++i) {
    CommitGtid g;
    g.has_domain_id = true;
    g.domain_id = i % 3 == 2 ? 1 : 0;
    BuildMariaTxn(&t, i, 20, g);
    auto p = log->Commit(&t);
    EXPECT_TRUE(p.ok()) << p.status();
    order.push_back(absl::StrCat(p->identity.domain_id, "-", p->identity.server_id, "-",
                                 p->identity.seq_no));
    if (i % 5 == 4) {
      EXPECT_TRUE(log->Rotate().ok());
    }
  }
  return order;
}

std::vector<std::string> ReadGtids(GtidReader* r) {
  std::vector<std::string> out;
  Event ev;
  absl::Status s;
  while ((s = r->Next(&ev)).ok()) {
    if (ev.header.type != kMariaGtidEvent) continue;
    auto g = DecodeMariaGtid(ev.body());
    EXPECT_TRUE(g.ok());
    out.push_back(g->ToString(ev.header.server_id));
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  return out;
}

TEST(MariadbFlavorTest, AReplicaAtAGtidPositionGetsExactlyWhatItLacks) {
  std::string dir = NewTempDir("maria_gtid_reader");
  auto log = Binlog::Open(dir, "binlog", MariaOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  std::vector<std::string> order = TwoDomainLog(log->get());
  ASSERT_EQ(order.size(), 18u);
  struct Case {
    std::string position;
    uint64_t first_file;  // where the reader must start
  };
  for (const Case& c : {Case{"", 1}, Case{"0-1-7", 1}, Case{"0-1-7,1-1-3", 3},
                        Case{"0-1-12,1-1-6", 4}, Case{"0-1-10,1-1-6", 4}, Case{"0-1-4,1-1-1", 2}}) {
    auto position = MariaGtidState::Parse(c.position);
    ASSERT_TRUE(position.ok());
    auto r = (*log)->NewMariaGtidReader(*position, ReaderOptions());
    ASSERT_TRUE(r.ok()) << c.position << ": " << r.status();
    Event ev;
    ASSERT_TRUE((*r)->Next(&ev).ok());
    EXPECT_EQ(ev.file_number, c.first_file) << c.position;
    std::vector<std::string> got = ReadGtids(r->get());
    std::vector<std::string> want;
    for (const std::string& g : order) {
      uint32_t d = static_cast<uint32_t>(g[0] - '0');
      uint64_t seq = std::stoull(g.substr(g.rfind('-') + 1));
      MariaGtidListEntry at;
      if (!position->Position(d, &at) || seq > at.seq_no) want.push_back(g);
    }
    EXPECT_EQ(got, want) << c.position;
  }
  // A position the log never had, and the wrong kind of reader.
  auto ahead = (*log)->NewMariaGtidReader(*MariaGtidState::Parse("0-1-99"), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(ahead.status())) << ahead.status();
  auto unknown = (*log)->NewMariaGtidReader(*MariaGtidState::Parse("5-1-1"), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(unknown.status())) << unknown.status();
  auto mysql = (*log)->NewGtidReader(GtidSet(), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(mysql.status())) << mysql.status();
  // Purge the first two files: a replica that lacks their transactions is
  // refused; one that has them starts in the third.
  ASSERT_EQ(*(*log)->PurgeTo(3), 2);
  auto old = (*log)->NewMariaGtidReader(*MariaGtidState::Parse("0-1-2"), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(old.status())) << old.status();
  EXPECT_TRUE(absl::StrContains(old.status().message(), "purged")) << old.status();
  auto fresh = (*log)->NewMariaGtidReader(MariaGtidState(), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(fresh.status())) << fresh.status();
  auto ok = (*log)->NewMariaGtidReader(*MariaGtidState::Parse("0-1-7,1-1-3"), ReaderOptions());
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_TRUE((*log)->Close().ok());
}

// Without gtid_strict_mode a lower seq_no may be logged after a higher one
// of the same domain and server (MariaDB logs it, and its dump sends it):
// 0-1-10, 0-1-20, 0-1-15, across a rotation too. A GTID reader returns
// every one of them, from the start and from a position before them.
TEST(MariadbFlavorTest, ALowerSeqNoLoggedLaterIsReturned) {
  Options o = MariaOptions();
  o.gtid_strict_mode = false;
  auto log = Binlog::Open(NewTempDir("maria_gtid_reader_lower"), "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer t;
  uint64_t id = 0;
  for (uint64_t seq : {5, 10, 20, 15, 30, 12}) {
    CommitGtid g;
    g.kind = CommitGtid::Kind::kAssigned;
    g.domain_id = 0;
    g.seq_no = seq;
    BuildMariaTxn(&t, ++id, 20, g);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    if (seq == 20) {
      ASSERT_TRUE((*log)->Rotate().ok());
    }
  }
  for (const char* position : {"", "0-1-5"}) {
    SCOPED_TRACE(position);
    auto r = (*log)->NewMariaGtidReader(*MariaGtidState::Parse(position), ReaderOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<std::string> want = {"0-1-10", "0-1-20", "0-1-15", "0-1-30", "0-1-12"};
    if (position[0] == '\0') want.insert(want.begin(), "0-1-5");
    EXPECT_EQ(ReadGtids(r->get()), want);
  }
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(MariadbFlavorTest, AMySqlLogRefusesAMariaDbReplica) {
  std::string dir = NewTempDir("maria_gtid_reader_mysql");
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok());
  auto r = (*log)->NewMariaGtidReader(MariaGtidState(), ReaderOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog
