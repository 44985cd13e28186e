// Transaction identity assigned by the log in commit order: GTIDs, logical
// clocks, commit timestamps, transaction_length, the GTID state the log
// keeps (executed, purged, owned) and the per-transaction callback info.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/reader.h"
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

// BEGIN, a Rows_query event of `payload` bytes, Xid, after a CommitGtid.
void BuildIdentityTxn(TransactionBuffer* txn, uint64_t id, size_t payload,
                      const CommitGtid& g = CommitGtid()) {
  txn->Clear();
  txn->AppendCommitGtid(1700000000, 1, g);
  AppendQuery(txn, 1700000000, 1, 7, "db", "BEGIN");
  std::string text = absl::StrCat("txn ", id, " ");
  text.resize(std::max(payload, text.size()), 'x');
  char* body = txn->AppendEvent(kRowsQueryEvent, 1, 1700000000, kFlagIgnorable,
                                text.size() + 1);
  body[0] = static_cast<char>(std::min<size_t>(text.size(), 255));
  std::memcpy(body + 1, text.data(), text.size());
  AppendXid(txn, 1700000000, 1, id);
}

Options BaseOptions() {
  Options o;
  o.server_uuid = ServerUuid();
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

struct GtidSeen {
  uint64_t file;
  uint64_t offset;
  MySqlGtidEvent g;
  uint64_t txn_bytes;  // bytes from the Gtid event to the transaction's end
};

struct LogContents {
  std::vector<GtidSeen> gtids;
  std::map<uint64_t, GtidSet> previous;  // file -> its Previous_gtids
};

LogContents ReadLog(const std::string& dir, PayloadMode payloads = PayloadMode::kRaw) {
  LogContents out;
  ReaderOptions ro;
  ro.payloads = payloads;
  auto reader = Reader::OpenDirectory(dir, "binlog", ro);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  Event ev;
  absl::Status s;
  while ((s = (*reader)->Next(&ev)).ok()) {
    if (ev.header.type == kPreviousGtidsEvent) {
      auto set = GtidSet::DecodePreviousGtidsBody(ev.body());
      EXPECT_TRUE(set.ok()) << set.status();
      out.previous[ev.file_number] = *set;
    } else if (ev.header.type == kGtidEvent || ev.header.type == kAnonymousGtidEvent) {
      auto g = DecodeMySqlGtidEvent(ev.body());
      EXPECT_TRUE(g.ok()) << g.status();
      out.gtids.push_back(GtidSeen{ev.file_number, ev.offset, *g, 0});
    } else if (ev.header.type == kXidEvent ||
               ev.header.type == kTransactionPayloadEvent) {
      if (!out.gtids.empty() && out.gtids.back().txn_bytes == 0 &&
          out.gtids.back().file == ev.file_number) {
        out.gtids.back().txn_bytes = ev.end_offset - out.gtids.back().offset;
      }
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  return out;
}

TEST(IdentityTest, GtidsAndClocksStayOrderedAndGapFreeUnderConcurrencyAndRotation) {
  std::string dir = NewTempDir("identity_concurrent");
  Options o = BaseOptions();
  o.max_file_size = 64 << 10;  // many rotations
  constexpr int kThreads = 64;
  constexpr int kPerThread = 40;
  std::mutex mu;
  std::vector<CommitPosition> positions;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        TransactionBuffer txn;
        for (int i = 0; i < kPerThread; ++i) {
          BuildIdentityTxn(&txn, t * 1000 + i, 100 + (i * 37) % 400);
          txn.set_commit_parent((*log)->CommitClock());  // "prepare"
          auto pos = (*log)->Commit(&txn);
          ASSERT_TRUE(pos.ok()) << pos.status();
          std::lock_guard<std::mutex> l(mu);
          positions.push_back(*pos);
        }
      });
    }
    for (auto& th : threads) th.join();
    GtidSet want;
    want.AddInterval(ServerUuid(), 1, kThreads * kPerThread);
    EXPECT_EQ((*log)->executed_gtids(), want);
    EXPECT_GT((*log)->stats().rotations, 5u);
    ASSERT_TRUE((*log)->Close().ok());
  }
  LogContents c = ReadLog(dir);
  ASSERT_EQ(c.gtids.size(), static_cast<size_t>(kThreads * kPerThread));
  GtidSet before;
  int64_t expect_gno = 1;
  uint64_t file = 0;
  int64_t expect_seq = 0;
  uint64_t last_ts = 0;
  for (const GtidSeen& s : c.gtids) {
    SCOPED_TRACE(absl::StrCat("file ", s.file, " offset ", s.offset));
    if (s.file != file) {
      // Previous_gtids of each file = every GTID before it.
      EXPECT_EQ(c.previous[s.file], before);
      file = s.file;
      expect_seq = 0;
    }
    EXPECT_EQ(s.g.uuid, ServerUuid());
    EXPECT_EQ(s.g.gno, expect_gno++);
    EXPECT_EQ(s.g.sequence_number, ++expect_seq);
    EXPECT_GE(s.g.last_committed, 0);
    EXPECT_LT(s.g.last_committed, s.g.sequence_number);
    EXPECT_TRUE(s.g.has_transaction_length);
    EXPECT_EQ(s.g.transaction_length, s.txn_bytes);
    EXPECT_EQ(s.g.immediate_server_version, 80406u);
    EXPECT_GE(s.g.immediate_commit_timestamp, last_ts);
    last_ts = s.g.immediate_commit_timestamp;
    before.Add(s.g.uuid, s.g.gno);
  }
  // What Commit returned agrees with the file.
  std::map<std::pair<uint64_t, uint64_t>, const GtidSeen*> by_pos;
  for (const GtidSeen& s : c.gtids) by_pos[{s.file, s.offset}] = &s;
  for (const CommitPosition& p : positions) {
    auto it = by_pos.find({p.file_number, p.start});
    ASSERT_NE(it, by_pos.end());
    EXPECT_EQ(p.identity.gno, it->second->g.gno);
    EXPECT_EQ(p.identity.sequence_number, it->second->g.sequence_number);
    EXPECT_EQ(p.identity.last_committed, it->second->g.last_committed);
    EXPECT_EQ(p.end - p.start, it->second->txn_bytes);
  }
}

TEST(IdentityTest, LastCommittedFollowsTheCommitClock) {
  std::string dir = NewTempDir("identity_clock");
  auto log = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok());
  TransactionBuffer a, b, c, d;
  // b and c "prepare" before a commits: they may run in parallel with it.
  BuildIdentityTxn(&a, 1, 50);
  BuildIdentityTxn(&b, 2, 50);
  BuildIdentityTxn(&c, 3, 50);
  const uint64_t before = (*log)->CommitClock();
  b.set_commit_parent(before);
  c.set_commit_parent(before);
  auto pa = (*log)->Commit(&a);
  auto pb = (*log)->Commit(&b);
  auto pc = (*log)->Commit(&c);
  ASSERT_TRUE(pa.ok() && pb.ok() && pc.ok());
  EXPECT_EQ(pa->identity.sequence_number, 1);
  EXPECT_EQ(pb->identity.last_committed, 0);
  EXPECT_EQ(pc->identity.last_committed, 0);
  // d prepares now: everything before it committed.
  BuildIdentityTxn(&d, 4, 50);
  auto pd = (*log)->Commit(&d);  // clock taken when Commit is entered
  ASSERT_TRUE(pd.ok());
  EXPECT_EQ(pd->identity.sequence_number, 4);
  EXPECT_EQ(pd->identity.last_committed, 3);
  // A parent clock from an earlier file becomes 0; one in the future is
  // clamped below the transaction's own number.
  ASSERT_TRUE((*log)->Rotate().ok());
  // In file 2: a parent clock in the future is clamped below the
  // transaction's own number; one from file 1 means "nothing in this file".
  BuildIdentityTxn(&b, 6, 50);
  b.set_commit_parent((uint64_t{2} << 32) | 99);
  pb = (*log)->Commit(&b);
  ASSERT_TRUE(pb.ok());
  EXPECT_EQ(pb->identity.sequence_number, 1);
  EXPECT_EQ(pb->identity.last_committed, 0);
  BuildIdentityTxn(&a, 5, 50);
  a.set_commit_parent((uint64_t{1} << 32) | 1);  // file 1, sequence 1
  pa = (*log)->Commit(&a);
  ASSERT_TRUE(pa.ok());
  EXPECT_EQ(pa->identity.sequence_number, 2);
  EXPECT_EQ(pa->identity.last_committed, 0);
  BuildIdentityTxn(&c, 7, 50);
  c.set_commit_parent((uint64_t{2} << 32) | 99);
  pc = (*log)->Commit(&c);
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(pc->identity.sequence_number, 3);
  EXPECT_EQ(pc->identity.last_committed, 2);
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(IdentityTest, IsolatedTransactionsRunAlone) {
  std::string dir = NewTempDir("identity_isolated");
  auto log = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok());
  const uint64_t start_clock = (*log)->CommitClock();
  std::vector<int64_t> lc;
  for (int i = 0; i < 5; ++i) {
    TransactionBuffer t;
    CommitGtid g;
    g.isolated = i == 2;  // a DDL
    BuildIdentityTxn(&t, i, 40, g);
    t.set_commit_parent(start_clock);  // all "prepared" at the start
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    lc.push_back(p->identity.last_committed);
  }
  // 1,2 depend on nothing; the DDL (3) on everything before; 4,5 on it.
  EXPECT_EQ(lc, (std::vector<int64_t>{0, 0, 2, 3, 3}));
}

TEST(IdentityTest, AssignedGtidsAreAcquiredOnceAndAutomaticOnesSkipThem) {
  std::string dir = NewTempDir("identity_assigned");
  auto log = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok());
  const Uuid source = *Uuid::Parse("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  EXPECT_TRUE((*log)->AcquireGtid(source, 7).ok());
  EXPECT_EQ((*log)->AcquireGtid(source, 7).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ((*log)->AcquireGtid(source, 0).code(), absl::StatusCode::kInvalidArgument);
  TransactionBuffer t;
  CommitGtid g;
  g.kind = CommitGtid::Kind::kAssigned;
  g.uuid = source;
  g.gno = 8;  // not acquired
  BuildIdentityTxn(&t, 1, 40, g);
  EXPECT_EQ((*log)->Commit(&t).status().code(), absl::StatusCode::kFailedPrecondition);
  g.gno = 7;
  g.original_commit_timestamp_us = 1600000000000000;
  g.original_server_version = 80030;
  BuildIdentityTxn(&t, 2, 40, g);
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->identity.uuid, source);
  EXPECT_EQ(p->identity.gno, 7);
  EXPECT_EQ((*log)->AcquireGtid(source, 7).code(), absl::StatusCode::kAlreadyExists);
  // Our own GNO 2 acquired by a replica thread: automatic GTIDs skip it.
  EXPECT_TRUE((*log)->AcquireGtid(ServerUuid(), 2).ok());
  std::vector<int64_t> gnos;
  for (int i = 0; i < 3; ++i) {
    BuildIdentityTxn(&t, 10 + i, 40);
    auto q = (*log)->Commit(&t);
    ASSERT_TRUE(q.ok());
    gnos.push_back(q->identity.gno);
  }
  EXPECT_EQ(gnos, (std::vector<int64_t>{1, 3, 4}));
  (*log)->ReleaseGtid(ServerUuid(), 2);
  BuildIdentityTxn(&t, 20, 40);
  auto q = (*log)->Commit(&t);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->identity.gno, 2);  // gaps are filled first, as MySQL does
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1-4,", source.ToString(), ":7"));
  ASSERT_TRUE((*log)->Close().ok());
  // The original timestamp and version are in the event.
  LogContents c = ReadLog(dir);
  ASSERT_GE(c.gtids.size(), 1u);
  EXPECT_EQ(c.gtids[0].g.original_commit_timestamp, 1600000000000000u);
  EXPECT_EQ(c.gtids[0].g.original_server_version, 80030u);
  EXPECT_EQ(c.gtids[0].g.immediate_server_version, 80406u);
  EXPECT_EQ(c.gtids[0].g.transaction_length, c.gtids[0].txn_bytes);
}

TEST(IdentityTest, GtidStateSurvivesCloseCrashAndPurge) {
  std::string dir = NewTempDir("identity_reopen");
  Options o = BaseOptions();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    for (int i = 0; i < 10; ++i) {
      BuildIdentityTxn(&t, i, 40);
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
    EXPECT_EQ((*log)->executed_gtids().ToString(),
              absl::StrCat(ServerUuid().ToString(), ":1-10"));
    EXPECT_TRUE((*log)->purged_gtids().empty());
    TransactionBuffer t;
    for (int i = 0; i < 3; ++i) {
      BuildIdentityTxn(&t, 100 + i, 40);
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->identity.gno, 11 + i);
    }
    fs.Freeze();  // crash: no Stop event, the file stays in use
    EXPECT_FALSE((*log)->Close().ok());
  }
  fs.ResetState();
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ((*log)->executed_gtids().ToString(),
              absl::StrCat(ServerUuid().ToString(), ":1-13"));
    // Purge the first two files: their GTIDs are now purged.
    auto n = (*log)->PurgeTo(3);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 2);
    EXPECT_EQ((*log)->purged_gtids().ToString(),
              absl::StrCat(ServerUuid().ToString(), ":1-10"));
    ASSERT_TRUE((*log)->Close().ok());
  }
}

// binlog/log.h: Gtid events the caller encodes itself are written as they
// are but are not the log's identity: executed_gtids() and the next file's
// Previous_gtids leave them out; Open counts those of the last file only.
TEST(IdentityTest, GtidEventsTheCallerEncodesAreNotTracked) {
  std::string dir = NewTempDir("identity_caller_gtids");
  const Uuid other = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  Options o = BaseOptions();
  auto commit_raw = [&](Binlog* log, int64_t gno) {
    TransactionBuffer t;
    AppendGtid(&t, 1700000000, 1, other.bytes, gno, gno - 1, gno);
    AppendXid(&t, 1700000000, 1, static_cast<uint64_t>(gno));
    auto p = log->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_FALSE(t.identity().assigned);
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    for (int64_t g = 1; g <= 3; ++g) commit_raw(log->get(), g);
    EXPECT_TRUE((*log)->executed_gtids().empty());
    ASSERT_TRUE((*log)->Rotate().ok());
    commit_raw(log->get(), 4);
    ASSERT_TRUE((*log)->Close().ok());
  }
  LogContents c = ReadLog(dir);
  ASSERT_EQ(c.gtids.size(), 4u);
  for (const GtidSeen& g : c.gtids) EXPECT_EQ(g.g.uuid, other);
  ASSERT_EQ(c.previous.count(2), 1u);
  EXPECT_TRUE(c.previous[2].empty()) << c.previous[2].ToString();
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(other.ToString(), ":4"));
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(IdentityTest, AnAcquiredNextGnoIsSkippedAndCommittedOnce) {
  std::string dir = NewTempDir("identity_acquired_next");
  auto log = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->AcquireGtid(ServerUuid(), 1).ok());  // the next automatic GNO
  TransactionBuffer t;
  BuildIdentityTxn(&t, 1, 40);
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->identity.gno, 2);
  CommitGtid g;
  g.kind = CommitGtid::Kind::kAssigned;
  g.uuid = ServerUuid();
  g.gno = 1;
  BuildIdentityTxn(&t, 2, 40, g);
  p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->identity.gno, 1);
  // Committing the same GTID again is refused.
  BuildIdentityTxn(&t, 3, 40, g);
  EXPECT_FALSE((*log)->Commit(&t).ok());
  BuildIdentityTxn(&t, 4, 40);
  p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->identity.gno, 3);
  ASSERT_TRUE((*log)->Close().ok());
  LogContents c = ReadLog(dir);
  std::vector<int64_t> gnos;
  for (const GtidSeen& s : c.gtids) gnos.push_back(s.g.gno);
  EXPECT_EQ(gnos, (std::vector<int64_t>{2, 1, 3}));
}

TEST(IdentityTest, CompressedTransactionsCountTheirStoredBytes) {
  std::string dir = NewTempDir("identity_zstd");
  Options o = BaseOptions();
  o.compression = io::Codec::kZstd;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    for (int i = 0; i < 5; ++i) {
      BuildIdentityTxn(&t, i, 5000);
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(t.compressed());
      EXPECT_EQ(p->identity.gno, i + 1);
    }
    // A replicated transaction: original timestamp and version present.
    const Uuid source = *Uuid::Parse("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
    ASSERT_TRUE((*log)->AcquireGtid(source, 9).ok());
    CommitGtid g;
    g.kind = CommitGtid::Kind::kAssigned;
    g.uuid = source;
    g.gno = 9;
    g.original_commit_timestamp_us = 1600000000000000;  // low byte 0x00
    g.original_server_version = 80030;
    BuildIdentityTxn(&t, 9, 5000, g);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(t.compressed());
    ASSERT_TRUE((*log)->Close().ok());
  }
  LogContents c = ReadLog(dir);
  ASSERT_EQ(c.gtids.size(), 6u);
  for (const GtidSeen& s : c.gtids) {
    EXPECT_EQ(s.g.transaction_length, s.txn_bytes);
    EXPECT_LT(s.txn_bytes, 5000u);
  }
  EXPECT_EQ(c.gtids[5].g.original_commit_timestamp, 1600000000000000u);
  EXPECT_EQ(c.gtids[5].g.original_server_version, 80030u);
  EXPECT_EQ(c.gtids[5].g.immediate_server_version, 80406u);
  EXPECT_EQ(c.gtids[5].g.gno, 9);
}

TEST(IdentityTest, CallbacksSeeEachTransactionWithItsCookieAndIdentity) {
  std::string dir = NewTempDir("identity_callbacks");
  Options o = BaseOptions();
  io::FaultInjectionFileSystem fs;
  o.file_system = &fs;
  std::mutex mu;
  std::vector<void*> before_write;
  std::vector<std::pair<void*, int64_t>> committed;
  std::string order;  // 'H' hook, 'W' a write of the log file, in time order
  o.before_group_write = [&](const GroupCommitInfo& g) {
    std::lock_guard<std::mutex> l(mu);
    for (const CommittedTransaction& t : g.txns) before_write.push_back(t.cookie);
    order.push_back('H');
    return absl::OkStatus();
  };
  o.on_group_commit = [&](const GroupCommitInfo& g) {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(g.txns.size(), g.transactions);
    for (const CommittedTransaction& t : g.txns) {
      committed.push_back({t.cookie, t.identity.gno});
    }
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  const std::string path = io::JoinPath(dir, "binlog.000001");
  fs.SetOpHook([&](io::FaultOp op, const std::string& p) {
    if (op != io::FaultOp::kWrite || p != path) return;
    std::lock_guard<std::mutex> l(mu);
    order.push_back('W');
  });
  int cookies[20];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < 5; ++i) {
        BuildIdentityTxn(&txn, t * 5 + i, 60);
        txn.set_cookie(&cookies[t * 5 + i]);
        ASSERT_TRUE((*log)->Commit(&txn).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  fs.SetOpHook(nullptr);
  ASSERT_TRUE((*log)->Close().ok());
  // Each group: the hook, then the group's one write (the flush stage runs
  // one group at a time).
  ASSERT_FALSE(order.empty());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i], i % 2 == 0 ? 'H' : 'W') << order;
  }
  ASSERT_EQ(committed.size(), 20u);
  std::vector<void*> seen;
  for (size_t i = 0; i < committed.size(); ++i) {
    EXPECT_EQ(committed[i].second, static_cast<int64_t>(i + 1));  // log order
    seen.push_back(committed[i].first);
  }
  EXPECT_EQ(before_write, seen);  // the same transactions, in the same order
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(IdentityTest, AFailingBeforeWriteHookFailsTheGroupAndWritesNothing) {
  std::string dir = NewTempDir("identity_hook_fails");
  Options o = BaseOptions();
  o.before_group_write = [](const GroupCommitInfo&) {
    return absl::UnavailableError("engine log flush failed");
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  CommitPosition end = (*log)->VisibleEnd();
  TransactionBuffer t;
  BuildIdentityTxn(&t, 1, 60);
  auto p = (*log)->Commit(&t);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnavailable) << p.status();
  EXPECT_EQ((*log)->VisibleEnd().end, end.end);
  EXPECT_FALSE((*log)->executed_gtids().Contains(ServerUuid(), 1));
}

TEST(IdentityTest, MisuseIsRefused) {
  std::string dir = NewTempDir("identity_misuse");
  Options o = BaseOptions();
  o.server_uuid = Uuid();
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  TransactionBuffer t;
  BuildIdentityTxn(&t, 1, 40);  // automatic without a server UUID
  EXPECT_EQ((*log)->Commit(&t).status().code(), absl::StatusCode::kInvalidArgument);
  t.Clear();
  AppendQuery(&t, 1, 1, 1, "db", "BEGIN");
  t.AppendCommitGtid(1, 1, CommitGtid());  // not the first event
  AppendXid(&t, 1, 1, 1);
  EXPECT_EQ((*log)->Commit(&t).status().code(), absl::StatusCode::kInvalidArgument);
  // Anonymous needs no UUID and still gets the clocks.
  CommitGtid anon;
  anon.kind = CommitGtid::Kind::kAnonymous;
  BuildIdentityTxn(&t, 2, 40, anon);
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->identity.gno, 0);
  EXPECT_EQ(p->identity.sequence_number, 1);
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog

namespace binlog {
namespace {

std::vector<int64_t> ReadGnos(GtidReader* r) {
  std::vector<int64_t> gnos;
  Event ev;
  absl::Status s;
  while ((s = r->Next(&ev)).ok()) {
    if (ev.header.type == kGtidEvent) {
      gnos.push_back(DecodeMySqlGtidEvent(ev.body())->gno);
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  return gnos;
}

TEST(GtidReaderTest, AReplicaGetsExactlyTheTransactionsItLacks) {
  std::string dir = NewTempDir("gtid_reader");
  Options o = BaseOptions();
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  TransactionBuffer t;
  for (int i = 1; i <= 100; ++i) {
    BuildIdentityTxn(&t, i, 40);
    ASSERT_TRUE((*log)->Commit(&t).ok());
    if (i % 20 == 0) {
      ASSERT_TRUE((*log)->Rotate().ok());
    }
  }
  auto have = GtidSet::Parse(absl::StrCat(ServerUuid().ToString(), ":1-37:50-60"));
  ASSERT_TRUE(have.ok());
  auto r = (*log)->NewGtidReader(*have, ReaderOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<int64_t> want;
  for (int64_t g = 38; g <= 100; ++g) {
    if (g < 50 || g > 60) want.push_back(g);
  }
  EXPECT_EQ(ReadGnos(r->get()), want);
  // It started in the file of GNO 21-40 (binlog.000002), not the first.
  EXPECT_EQ((*r)->skipped_transactions(), 37u - 20u + 11u);
  // A replica with nothing reads everything; one that is complete, nothing.
  auto all = (*log)->NewGtidReader(GtidSet(), ReaderOptions());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(ReadGnos(all->get()).size(), 100u);
  auto none = (*log)->NewGtidReader((*log)->executed_gtids(), ReaderOptions());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(ReadGnos(none->get()).empty());
  // More of this server's GTIDs than the log has.
  auto more = GtidSet::Parse(absl::StrCat(ServerUuid().ToString(), ":1-101"));
  EXPECT_EQ((*log)->NewGtidReader(*more, ReaderOptions()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // After a purge, a replica that lacks purged GTIDs is refused.
  ASSERT_TRUE((*log)->PurgeTo(3).ok());
  auto old = GtidSet::Parse(absl::StrCat(ServerUuid().ToString(), ":1-30"));
  auto refused = (*log)->NewGtidReader(*old, ReaderOptions());
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find(":31-40"), std::string::npos)
      << refused.status();
  ASSERT_TRUE((*log)->Close().ok());
}

// Tagged GTIDs (MySQL 8.4's Gtid_tagged_log_event, type 42): the reader
// skips the ones the replica has by (UUID, tag, GNO), and the same GNO
// untagged or under another tag is another GTID.
TEST(GtidReaderTest, TaggedTransactionsAreSkippedByTheirTsid) {
  std::string dir = NewTempDir("gtid_reader_tagged");
  auto log = Binlog::Open(dir, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok());
  const Uuid source = *Uuid::Parse("77d1902c-01da-11f1-9a41-908d6e5f6e8d");
  TransactionBuffer t;
  std::string file;
  for (const char* tag : {"blue", "red"}) {
    for (int64_t gno = 1; gno <= 3; ++gno) {
      t.Clear();
      MySqlGtidEvent g;
      g.uuid = source;
      g.tag = *Tag::Parse(tag);
      g.gno = gno;
      t.AppendEvent(kGtidTaggedEvent, 1, 1700000000, 0,
                    EncodeMySqlGtidTaggedEventBody(g));
      AppendQuery(&t, 1700000000, 1, 7, "db", "BEGIN");
      AppendXid(&t, 1700000000, 1, static_cast<uint64_t>(gno));
      auto p = (*log)->Commit(&t);
      ASSERT_TRUE(p.ok()) << p.status();
      file = io::JoinPath(dir, BinlogFileName("binlog", p->file_number));
    }
  }
  ASSERT_TRUE((*log)->Close().ok());
  auto have = GtidSet::Parse(
      "77d1902c-01da-11f1-9a41-908d6e5f6e8d:1-3:blue:1-2:red:3");
  ASSERT_TRUE(have.ok());
  auto reader = Reader::OpenFiles({file}, ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  GtidReader r(std::move(*reader), *have);
  std::vector<std::string> got;
  Event ev;
  absl::Status s;
  while ((s = r.Next(&ev)).ok()) {
    if (ev.header.type == kGtidTaggedEvent) {
      got.push_back(DecodeMySqlGtidTaggedEvent(ev.body())->ToString());
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(got, (std::vector<std::string>{
                     "77d1902c-01da-11f1-9a41-908d6e5f6e8d:blue:3",
                     "77d1902c-01da-11f1-9a41-908d6e5f6e8d:red:1",
                     "77d1902c-01da-11f1-9a41-908d6e5f6e8d:red:2"}));
  EXPECT_EQ(r.skipped_transactions(), 3u);
}

}  // namespace
}  // namespace binlog
