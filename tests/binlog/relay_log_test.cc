// Tests of binlog/relay_log.h: the relay-log layout (MySQL 8.0's), source
// log_pos and checksums kept byte for byte, rotation by size and with the
// source, durability policies and the reported source position, recovery
// (partial transaction cut, relay_log_recovery-style discard), readers'
// relay detection, and a power-loss sweep in which the PositionStore and
// the relay log must agree after every cut.
//
// The source stream is made by the library itself: a Binlog writes the
// source's files (GTIDs on, small files so it rotates), and the stream a
// dump thread sends is those files' events in order after an artificial
// Rotate naming the first file.

#include "binlog/relay_log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/position_store.h"
#include "binlog/reader.h"
#include "binlog/statement_events.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::WriteFile;

constexpr uint32_t kSourceServerId = 1;
constexpr uint32_t kReplicaServerId = 2;
const char kSourceBase[] = "source-bin";
const char kRelayBase[] = "relay";

struct StreamEvent {
  std::string bytes;
  EventHeader header;
  uint64_t file = 0;  // source file number the event belongs to
};

struct Source {
  std::vector<StreamEvent> stream;
  // Per transaction (xid 1..n): the source position after it.
  std::vector<SourcePosition> txn_end;
  GtidSet gtids;
  bool checksums = true;
};

uint64_t SourceFileNumber(const std::string& name) {
  uint64_t n = 0;
  if (!ParseBinlogFileName(kSourceBase, name, &n)) return 0;
  return n;
}

// Orders source positions in stream order.
std::pair<uint64_t, uint64_t> Key(const SourcePosition& p) {
  return {SourceFileNumber(p.file), p.pos};
}

// Writes `n` transactions (GTID, BEGIN, Rows_query, Xid = its number) to a
// source binlog with small files, and returns the dump stream.
Source MakeSource(int n, bool checksums = true, uint64_t max_file_size = 4096) {
  Source src;
  src.checksums = checksums;
  std::string dir = NewTempDir("relay_source");
  Options o;
  o.server_id = kSourceServerId;
  o.max_file_size = max_file_size;
  o.checksums = checksums;
  o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  auto log = Binlog::Open(dir, kSourceBase, o);
  EXPECT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn(checksums);
  for (int i = 1; i <= n; ++i) {
    txn.Clear();
    txn.AppendCommitGtid(1700000000, kSourceServerId, CommitGtid{});
    AppendQuery(&txn, 1700000000, kSourceServerId, 7, "db", "BEGIN");
    std::string text = absl::StrCat("txn ", i, std::string(100 + 37 * i, 'x'));
    AppendQuery(&txn, 1700000000, kSourceServerId, 7, "db",
                absl::StrCat("INSERT INTO t VALUES ('", text, "')"));
    AppendXid(&txn, 1700000000, kSourceServerId, static_cast<uint64_t>(i));
    auto pos = (*log)->Commit(&txn);
    EXPECT_TRUE(pos.ok()) << pos.status();
    src.txn_end.push_back(
        SourcePosition{BinlogFileName(kSourceBase, pos->file_number), pos->end});
  }
  src.gtids = (*log)->executed_gtids();
  EXPECT_TRUE((*log)->Close().ok());
  log->reset();
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto reader = Reader::OpenDirectory(dir, kSourceBase, ro);
  EXPECT_TRUE(reader.ok()) << reader.status();
  // The artificial Rotate a source sends first (log_pos 0, timestamp 0).
  StreamEvent fake;
  fake.bytes = EncodeRotateTo(0, kSourceServerId, BinlogFileName(kSourceBase, 1),
                              4, 0, kFlagArtificial, checksums);
  fake.header = DecodeHeader(fake.bytes);
  fake.file = 1;
  src.stream.push_back(fake);
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    src.stream.push_back(StreamEvent{std::string(ev.data), ev.header, ev.file_number});
  }
  return src;
}

// The events of a relay directory (read with the DEFAULT reader options:
// check_log_pos is on and must be turned off by the relay flag).
struct RelayEvent {
  std::string file;
  uint64_t offset = 0;
  uint64_t end = 0;
  EventHeader header;
  std::string bytes;
  bool checksums = false;
};

absl::Status ReadRelay(const std::string& dir, std::vector<RelayEvent>* out,
                       io::FileSystem* fs = nullptr) {
  auto r = Reader::OpenDirectory(dir, kRelayBase, ReaderOptions(), fs);
  if (!r.ok()) return r.status();
  for (;;) {
    Event ev;
    absl::Status s = (*r)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) return s;
    out->push_back(RelayEvent{(*r)->file_name(), ev.offset, ev.end_offset,
                              ev.header, std::string(ev.data),
                              ev.file_has_checksums});
  }
  if (!(*r)->torn_tails().empty()) {
    return absl::DataLossError(absl::StrCat("torn tail in ",
                                            (*r)->torn_tails()[0].file_name, ": ",
                                            (*r)->torn_tails()[0].reason));
  }
  return absl::OkStatus();
}

// The xids of the relay log's transactions in order, with where each ends.
struct RelayTxn {
  uint64_t xid;
  std::string file;
  uint64_t end;
};
std::vector<RelayTxn> RelayTxns(const std::vector<RelayEvent>& evs) {
  std::vector<RelayTxn> out;
  for (const RelayEvent& e : evs) {
    if (e.header.type != kXidEvent) continue;
    auto x = DecodeXid(EventBody(e.bytes, e.checksums));
    EXPECT_TRUE(x.ok());
    out.push_back(RelayTxn{x.ok() ? *x : 0, e.file, e.end});
  }
  return out;
}

RelayLogOptions DefaultRelayOptions(io::FileSystem* fs = nullptr) {
  RelayLogOptions o;
  o.file_system = fs;
  o.server_id = kReplicaServerId;
  return o;
}

absl::Status Feed(RelayLog* relay, const Source& src, size_t from, size_t to) {
  for (size_t i = from; i < to && i < src.stream.size(); ++i) {
    absl::Status s = relay->Append(src.stream[i].bytes);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// RelayLogOptions::file_mode and directory_mode reach the directory, the
// lock, the index and every relay file (defaults MySQL's 0640 / 0750).
TEST(RelayLogTest, ModesReachEveryFile) {
  const mode_t old_umask = ::umask(0);
  Source src = MakeSource(6);
  for (uint32_t file_mode : {0640u, 0600u}) {
    const uint32_t dir_mode = file_mode == 0640u ? 0750u : 0700u;
    std::string dir = io::JoinPath(NewTempDir("relay_modes"), "relay");
    RelayLogOptions o = DefaultRelayOptions();
    if (file_mode != 0640u) {
      o.file_mode = file_mode;
      o.directory_mode = dir_mode;
    }
    auto relay = RelayLog::Open(dir, kRelayBase, o);
    ASSERT_TRUE(relay.ok()) << relay.status();
    ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
    ASSERT_TRUE((*relay)->Close().ok());
    auto mode = [](const std::string& path) -> unsigned {
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) return 0;
      return st.st_mode & 07777;
    };
    EXPECT_EQ(mode(dir), dir_mode);
    auto names = io::FileSystem::Default()->ListDirectory(dir);
    ASSERT_TRUE(names.ok());
    ASSERT_GE(names->size(), 3u);
    for (const std::string& name : *names) {
      EXPECT_EQ(mode(io::JoinPath(dir, name)), file_mode) << name;
    }
  }
  ::umask(old_umask);
}

// A relay log created in a new directory makes the directory's entry
// durable (its parent synced) before it reports success, as the binlog
// does: otherwise a power cut can take the directory and every relay file
// in it away.
TEST(RelayLogTest, NewDirectoryIsSyncedInItsParent) {
  std::string parent = NewTempDir("relay_newdir");
  std::string dir = io::JoinPath(parent, "relay");
  io::FaultInjectionFileSystem fs;
  std::vector<std::string> dir_syncs;
  fs.SetOpHook([&](io::FaultOp op, const std::string& path) {
    if (op == io::FaultOp::kDirSync) dir_syncs.push_back(path);
  });
  RelayLogOptions o = DefaultRelayOptions(&fs);
  o.create_if_missing = true;
  auto relay = RelayLog::Open(dir, kRelayBase, o);
  ASSERT_TRUE(relay.ok()) << relay.status();
  fs.SetOpHook(nullptr);
  EXPECT_NE(std::find(dir_syncs.begin(), dir_syncs.end(), parent), dir_syncs.end())
      << "no fsync of " << parent << " after creating " << dir;
  ASSERT_TRUE((*relay)->Close().ok());
}


TEST(RelayLogTest, LayoutIsMySqlsAndSourceEventsAreKeptByteForByte) {
  Source src = MakeSource(20);
  std::string dir = NewTempDir("relay_layout");
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(relay.ok()) << relay.status();
  ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
  ASSERT_TRUE((*relay)->Close().ok());

  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  ASSERT_GT(evs.size(), 8u);
  // First file: own FDE (relay flag, replica's server id, in-use clear
  // after Close), own Previous_gtids (empty), then the stream.
  EXPECT_EQ(evs[0].header.type, kFormatDescriptionEvent);
  EXPECT_EQ(evs[0].header.flags, kFlagRelayLog);
  EXPECT_EQ(evs[0].header.server_id, kReplicaServerId);
  EXPECT_EQ(evs[1].header.type, kPreviousGtidsEvent);
  EXPECT_EQ(evs[1].header.server_id, kReplicaServerId);
  EXPECT_EQ(evs[1].header.flags, kFlagRelayLog);
  EXPECT_EQ(evs[1].header.log_pos, evs[1].end);  // own events: relay offsets
  EXPECT_EQ(evs[2].bytes, src.stream[0].bytes);  // the artificial Rotate
  EXPECT_EQ(evs[3].bytes, src.stream[1].bytes);  // the source FDE as received
  // The source's Previous_gtids is replaced by a Rotate to the source
  // position after it, server_id 0.
  ASSERT_EQ(src.stream[2].header.type, kPreviousGtidsEvent);
  EXPECT_EQ(evs[4].header.type, kRotateEvent);
  EXPECT_EQ(evs[4].header.server_id, 0u);
  auto rot = DecodeRotate(EventBody(evs[4].bytes, true));
  ASSERT_TRUE(rot.ok());
  EXPECT_EQ(rot->next_file, BinlogFileName(kSourceBase, 1));
  EXPECT_EQ(rot->position, src.stream[2].header.log_pos);

  // Every source event except Previous_gtids and Stop is in the relay log,
  // byte for byte (log_pos and CRC32 of the source), in order; nothing of
  // the source's is duplicated.
  std::vector<std::string> want, got;
  for (const StreamEvent& e : src.stream) {
    if (e.header.type == kPreviousGtidsEvent || e.header.type == kStopEvent) continue;
    want.push_back(e.bytes);
  }
  for (const RelayEvent& e : evs) {
    if (e.header.server_id != kSourceServerId) continue;
    if (e.header.type == kFormatDescriptionEvent &&
        (e.header.flags & kFlagArtificial) != 0) {
      continue;  // the header copy of a later relay file
    }
    got.push_back(e.bytes);
  }
  EXPECT_EQ(got, want);

  // The source rotated (file 1 -> 2 ...): every relay file after the first
  // starts with own FDE, own Previous_gtids holding the GTIDs received
  // before it, the source FDE copy marked artificial with created = 0 and
  // log_pos 0, and a Rotate to the source position.
  std::vector<std::string> files = (*relay)->files();
  ASSERT_GE(files.size(), 3u);
  int checked = 0;
  for (size_t i = 0; i + 5 < evs.size(); ++i) {
    if (evs[i].offset != kMagicSize || evs[i].file == files[0]) continue;
    ++checked;
    EXPECT_EQ(evs[i].header.flags & kFlagRelayLog, kFlagRelayLog);
    ASSERT_EQ(evs[i + 1].header.type, kPreviousGtidsEvent);
    auto prev = GtidSet::DecodePreviousGtidsBody(EventBody(evs[i + 1].bytes, true));
    ASSERT_TRUE(prev.ok());
    // The GTIDs of the transactions in earlier relay files.
    GtidSet expect;
    std::vector<RelayEvent> before(evs.begin(), evs.begin() + i);
    size_t txns_before = RelayTxns(before).size();
    expect.AddInterval(*Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562"), 1,
                       static_cast<int64_t>(txns_before));
    if (txns_before > 0) {
      EXPECT_EQ(prev->ToString(), expect.ToString());
    }
    const RelayEvent& copy = evs[i + 2];
    ASSERT_EQ(copy.header.type, kFormatDescriptionEvent);
    EXPECT_EQ(copy.header.flags & kFlagArtificial, kFlagArtificial);
    EXPECT_EQ(copy.header.flags & kFlagBinlogInUse, 0);
    EXPECT_EQ(copy.header.log_pos, 0u);
    EXPECT_TRUE(EventChecksumMatches(copy.bytes));
    auto fd = DecodeFormatDescription(copy.bytes);
    ASSERT_TRUE(fd.ok());
    EXPECT_EQ(fd->create_timestamp, 0u);
    EXPECT_EQ(evs[i + 3].header.type, kRotateEvent);
    EXPECT_EQ(evs[i + 3].header.server_id, 0u);
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()) - 1);
  // The relay log's own rotations carry the relay flag and end their file;
  // the source's Rotate events stay inside the files.
  int own_rotates = 0, source_rotates = 0;
  for (const RelayEvent& e : evs) {
    if (e.header.type != kRotateEvent) continue;
    if (e.header.flags & kFlagRelayLog) {
      ++own_rotates;
      EXPECT_EQ(e.header.server_id, kReplicaServerId);
    } else if (e.header.server_id == kSourceServerId &&
               (e.header.flags & kFlagArtificial) == 0) {
      ++source_rotates;
    }
  }
  EXPECT_EQ(own_rotates, static_cast<int>(files.size()) - 1);
  EXPECT_GE(source_rotates, 2);
  EXPECT_EQ((*relay)->retrieved_gtids().ToString(), src.gtids.ToString());
}

TEST(RelayLogTest, ReaderChecksLogPosOnlyOutsideRelayFiles) {
  Source src = MakeSource(3);
  std::string dir = NewTempDir("relay_reader");
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(relay.ok());
  ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
  ASSERT_TRUE((*relay)->Close().ok());
  // A relay file read with check_log_pos = true (the default) works ...
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  auto r = Reader::OpenFiles({io::JoinPath(dir, BinlogFileName(kRelayBase, 1))},
                             ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  ASSERT_TRUE((*r)->Next(&ev).ok());
  EXPECT_TRUE((*r)->format_description().relay_log);
  // A file of the same events (the first transaction, with the source's
  // log_pos) after a Format_description: read fine when it has the relay
  // flag, refused (log_pos) without it.
  std::string txn_bytes;
  for (const RelayEvent& e : evs) {
    if (e.header.server_id == kSourceServerId &&
        (e.header.type == kGtidEvent || e.header.type == kQueryEvent ||
         e.header.type == kXidEvent)) {
      txn_bytes += e.bytes;
      if (e.header.type == kXidEvent) break;
    }
  }
  ASSERT_FALSE(txn_bytes.empty());
  for (bool relay_flag : {true, false}) {
    SCOPED_TRACE(relay_flag ? "relay flag" : "no relay flag");
    FdeParams fp;
    fp.server_id = kReplicaServerId;
    fp.in_use = false;
    fp.relay_log = relay_flag;
    std::string file = std::string(kBinlogMagic, kMagicSize) +
                       EncodeFormatDescription(fp) + txn_bytes;
    std::string fdir = NewTempDir("relay_flag");
    std::string path = io::JoinPath(fdir, "x.000001");
    testing_util::WriteFile(path, file);
    auto pr = Reader::OpenFiles({path}, ReaderOptions());
    ASSERT_TRUE(pr.ok());
    absl::Status s;
    int n = 0;
    while ((s = (*pr)->Next(&ev)).ok()) ++n;
    if (relay_flag) {
      EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
      EXPECT_EQ(n, 5);  // FDE, Gtid, BEGIN, INSERT, Xid
      EXPECT_TRUE((*pr)->format_description().relay_log);
    } else {
      EXPECT_TRUE(absl::IsDataLoss(s)) << s;
      EXPECT_NE(s.message().find("log_pos"), std::string::npos) << s;
    }
  }
}

// A reader of a relay file that a crash left in use: the source's
// Format_description inside the file does not hide that the file is in
// use, so a torn last event is a torn tail (as in a binlog), not DataLoss.
TEST(RelayLogTest, ReaderKeepsTheRelayFilesInUseFlagAfterTheSourceFde) {
  Source src = MakeSource(3);
  std::string dir = NewTempDir("relay_inuse");
  io::FaultInjectionFileSystem fs;
  RelayLogOptions o = DefaultRelayOptions(&fs);
  o.sync = RelaySyncPolicy::kEveryNEvents;
  {
    auto relay = RelayLog::Open(dir, kRelayBase, o);
    ASSERT_TRUE(relay.ok());
    ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size() - 3).ok());
    fs.Freeze();
  }
  ASSERT_TRUE(fs.SimulatePowerLoss(io::PowerLossOptions()).ok());
  std::string path = io::JoinPath(dir, BinlogFileName(kRelayBase, 1));
  std::string bytes = testing_util::ReadFile(path);
  ASSERT_GT(bytes.size(), 200u);
  testing_util::WriteFile(path, bytes.substr(0, bytes.size() - 3));  // torn
  auto r = Reader::OpenDirectory(dir, kRelayBase, ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  absl::Status s;
  bool saw_source_fde = false;
  while ((s = (*r)->Next(&ev)).ok()) {
    saw_source_fde |= ev.header.type == kFormatDescriptionEvent && ev.offset > kMagicSize;
  }
  EXPECT_TRUE(saw_source_fde);
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  ASSERT_EQ((*r)->torn_tails().size(), 1u);
  EXPECT_TRUE((*r)->torn_tails()[0].in_use);
}

TEST(RelayLogTest, RotatesBySizeOnlyBetweenTransactions) {
  Source src = MakeSource(40, true, 1 << 20);  // the source does not rotate
  std::string dir = NewTempDir("relay_size");
  RelayLogOptions o = DefaultRelayOptions();
  o.max_file_size = 4096;
  auto relay = RelayLog::Open(dir, kRelayBase, o);
  ASSERT_TRUE(relay.ok());
  ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
  ASSERT_TRUE((*relay)->Close().ok());
  std::vector<std::string> files = (*relay)->files();
  ASSERT_GE(files.size(), 4u);
  for (const std::string& f : files) {
    auto r = Reader::OpenFiles({io::JoinPath(dir, f)}, ReaderOptions());
    ASSERT_TRUE(r.ok());
    TransactionBoundaryParser parser;
    Event ev;
    absl::Status s;
    uint64_t end = 0;
    while ((s = (*r)->Next(&ev)).ok()) {
      auto res = parser.Feed(ev.header, ev.body());
      EXPECT_NE(res, TransactionBoundaryParser::Result::kUnexpected) << f;
      end = ev.end_offset;
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_TRUE(parser.outside()) << f << " ends inside a transaction";
    // Rotated after the transaction that reached the limit.
    if (f != files.back()) {
      EXPECT_GE(end, 4096u - 600) << f;
      EXPECT_LT(end, 4096u + 2000) << f;  // plus at most one transaction
    }
  }
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  std::vector<RelayTxn> txns = RelayTxns(evs);
  ASSERT_EQ(txns.size(), 40u);
  for (size_t i = 0; i < txns.size(); ++i) EXPECT_EQ(txns[i].xid, i + 1);
}

TEST(RelayLogTest, DurableSourcePositionFollowsTheSyncPolicy) {
  Source src = MakeSource(10);
  for (bool per_group : {true, false}) {
    SCOPED_TRACE(per_group ? "every group" : "every 3 events");
    std::string dir = NewTempDir("relay_durable");
    RelayLogOptions o = DefaultRelayOptions();
    if (!per_group) {
      o.sync = RelaySyncPolicy::kEveryNEvents;
      o.sync_every_events = 3;
    }
    auto relay = RelayLog::Open(dir, kRelayBase, o);
    ASSERT_TRUE(relay.ok());
    size_t txn = 0;  // transactions appended completely
    for (const StreamEvent& e : src.stream) {
      SourcePosition before = (*relay)->durable_source_position();
      uint64_t syncs = (*relay)->stats().syncs;
      ASSERT_TRUE((*relay)->Append(e.bytes).ok());
      const SourcePosition& now = (*relay)->durable_source_position();
      if (e.header.type == kXidEvent) {
        ++txn;
        if (per_group) {
          // Each transaction end is synced and reported at once.
          EXPECT_EQ(now, src.txn_end[txn - 1]);
          EXPECT_EQ((*relay)->stats().syncs, syncs + 1);
        }
      } else if (per_group && e.header.type != kRotateEvent &&
                 e.header.type != kFormatDescriptionEvent) {
        EXPECT_EQ(now, before);  // no sync inside a transaction
      }
      // Never ahead of what was received, and never inside a transaction:
      // the position of a transaction's end, or of an event between
      // transactions.
      EXPECT_LE(Key(now), Key((*relay)->received_source_position()));
      if (now != before && txn > 0 && now.file == src.txn_end[txn - 1].file) {
        bool at_txn_end = false;
        for (const SourcePosition& p : src.txn_end) at_txn_end |= p == now;
        bool between = !(*relay)->inside_transaction() &&
                       now == (*relay)->received_source_position();
        EXPECT_TRUE(at_txn_end || between) << now.file << ":" << now.pos;
      }
    }
    // The durable relay position ends a transaction the reader sees there.
    ASSERT_TRUE((*relay)->Sync().ok());
    EXPECT_EQ((*relay)->durable_source_position().file, src.txn_end.back().file);
    ASSERT_TRUE((*relay)->Close().ok());
  }
}

TEST(RelayLogTest, CloseCutsAPartialTransactionAndOpenResumesAfterTheLastComplete) {
  Source src = MakeSource(5);
  std::string dir = NewTempDir("relay_close");
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(relay.ok());
  // Up to the middle of transaction 3 (its Gtid and BEGIN).
  size_t cut = 0, xids = 0;
  for (size_t i = 0; i < src.stream.size(); ++i) {
    if (src.stream[i].header.type == kXidEvent && ++xids == 2) {
      cut = i + 3;
      break;
    }
  }
  ASSERT_TRUE(Feed(relay->get(), src, 0, cut).ok());
  EXPECT_TRUE((*relay)->inside_transaction());
  ASSERT_TRUE((*relay)->Close().ok());
  RelayLogOptions o = DefaultRelayOptions();
  auto again = RelayLog::Open(dir, kRelayBase, o);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE((*again)->recovery().recovered);  // closed cleanly
  EXPECT_EQ((*again)->recovery().fetch_from, src.txn_end[1]);
  EXPECT_EQ((*again)->durable_source_position(), src.txn_end[1]);
  ASSERT_TRUE((*again)->Close().ok());
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  EXPECT_EQ(RelayTxns(evs).size(), 2u);
}

TEST(RelayLogTest, OpenRefusesFilesItCannotPlaceAndChangesNothing) {
  Source src = MakeSource(3);
  std::string dir = NewTempDir("relay_strays");
  {
    auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
    ASSERT_TRUE(relay.ok());
    ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
    ASSERT_TRUE((*relay)->Close().ok());
  }
  const std::string first = io::JoinPath(dir, BinlogFileName(kRelayBase, 1));
  const std::string bytes = ReadFile(first);
  ASSERT_FALSE(bytes.empty());
  // A file far past the last one: not a file a crash leaves.
  const std::string far = io::JoinPath(dir, BinlogFileName(kRelayBase, 9));
  WriteFile(far, "someone else's");
  auto r = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_EQ(ReadFile(far), "someone else's");
  std::remove(far.c_str());
  // Without its index the relay files are not deleted either.
  const std::string index = io::JoinPath(dir, IndexFileName(kRelayBase));
  const std::string index_bytes = ReadFile(index);
  std::remove(index.c_str());
  r = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_EQ(ReadFile(first), bytes);
  WriteFile(index, index_bytes);
  // A damaged closed file is DataLoss, and the interrupted rotation's file
  // beside it is still there afterwards (nothing changed).
  const std::string next = io::JoinPath(dir, BinlogFileName(kRelayBase, 2));
  WriteFile(next, bytes.substr(0, 200));
  WriteFile(first, bytes + "garbage after the end");
  r = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  EXPECT_EQ(ReadFile(next), bytes.substr(0, 200));
  // Repaired: Open removes the interrupted rotation's file.
  WriteFile(first, bytes);
  r = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->recovery().removed_files,
            (std::vector<std::string>{BinlogFileName(kRelayBase, 2)}));
  ASSERT_TRUE((*r)->Close().ok());
}

// A crash with a partial transaction durable at the tail (sync every
// event): Open cuts it, reports the position after transaction 2, and a
// receiver that fetches from there ends with every transaction once.
TEST(RelayLogTest, RecoveryDropsAPartialTransaction) {
  Source src = MakeSource(6);
  std::string dir = NewTempDir("relay_recover");
  io::FaultInjectionFileSystem fs;
  RelayLogOptions o = DefaultRelayOptions(&fs);
  o.sync = RelaySyncPolicy::kEveryNEvents;
  o.sync_every_events = 1;
  size_t cut = 0, xids = 0;
  for (size_t i = 0; i < src.stream.size(); ++i) {
    if (src.stream[i].header.type == kXidEvent && ++xids == 2) {
      cut = i + 4;
      break;
    }
  }
  {
    auto relay = RelayLog::Open(dir, kRelayBase, o);
    ASSERT_TRUE(relay.ok());
    ASSERT_TRUE(Feed(relay->get(), src, 0, cut).ok());
    fs.Freeze();  // power cut: Close cannot write
  }
  ASSERT_TRUE(fs.SimulatePowerLoss(io::PowerLossOptions()).ok());
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions(&fs));
  ASSERT_TRUE(relay.ok()) << relay.status();
  const RelayRecoveryReport& rep = (*relay)->recovery();
  EXPECT_TRUE(rep.recovered);
  EXPECT_GT(rep.bytes_cut, 0u);
  EXPECT_EQ(rep.fetch_from, src.txn_end[1]);
  // The recovered file is cut at the end of transaction 2 and clean.
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  std::vector<RelayTxn> txns = RelayTxns(evs);
  ASSERT_EQ(txns.size(), 2u);
  EXPECT_EQ(fs.FileSize(io::JoinPath(dir, rep.file_name)).value(), rep.valid_end);
  EXPECT_EQ(txns[1].end, rep.valid_end);
  // Fetch again from there: a reconnecting source sends an artificial
  // Rotate to the position, then what follows it.
  std::string fake = EncodeRotateTo(0, kSourceServerId, rep.fetch_from.file,
                                    rep.fetch_from.pos, 0, kFlagArtificial, true);
  ASSERT_TRUE((*relay)->Append(fake).ok());
  size_t resume = 0;
  for (size_t i = 1; i < src.stream.size(); ++i) {
    const StreamEvent& e = src.stream[i];
    SourcePosition p{BinlogFileName(kSourceBase, e.file), e.header.log_pos};
    if (Key(p) > Key(rep.fetch_from)) {
      resume = i;
      break;
    }
  }
  ASSERT_GT(resume, 0u);
  ASSERT_TRUE(Feed(relay->get(), src, resume, src.stream.size()).ok());
  ASSERT_TRUE((*relay)->Close().ok());
  evs.clear();
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  txns = RelayTxns(evs);
  ASSERT_EQ(txns.size(), 6u);
  for (size_t i = 0; i < txns.size(); ++i) EXPECT_EQ(txns[i].xid, i + 1);
}

TEST(RelayLogTest, DiscardModeDeletesTheRelayLogAndReportsTheFetchPosition) {
  Source src = MakeSource(20);
  std::string dir = NewTempDir("relay_discard");
  {
    auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
    ASSERT_TRUE(relay.ok());
    ASSERT_TRUE(Feed(relay->get(), src, 0, src.stream.size()).ok());
    ASSERT_TRUE((*relay)->Close().ok());
    ASSERT_GE((*relay)->files().size(), 2u);
  }
  RelayLogOptions o = DefaultRelayOptions();
  o.recovery = RelayRecovery::kDiscard;
  auto bad = RelayLog::Open(dir, kRelayBase, o);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  o.discard_fetch_from = src.txn_end[3];  // the applier's position
  auto relay = RelayLog::Open(dir, kRelayBase, o);
  ASSERT_TRUE(relay.ok()) << relay.status();
  EXPECT_TRUE((*relay)->recovery().discarded);
  EXPECT_EQ((*relay)->recovery().fetch_from, src.txn_end[3]);
  EXPECT_EQ((*relay)->durable_source_position(), src.txn_end[3]);
  ASSERT_EQ((*relay)->files().size(), 1u);
  auto index = ReadIndex(io::FileSystem::Default(), dir, kRelayBase);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 1u);
  for (const std::string& f : (*relay)->recovery().removed_files) {
    EXPECT_FALSE(io::FileSystem::Default()->Exists(io::JoinPath(dir, f)).value()) << f;
  }
  ASSERT_TRUE((*relay)->Close().ok());
  // The new file names the position to fetch from and holds no transaction.
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  EXPECT_TRUE(RelayTxns(evs).empty());
  ASSERT_GE(evs.size(), 3u);
  const RelayEvent& rot = evs.back();
  ASSERT_EQ(rot.header.type, kRotateEvent);
  auto r = DecodeRotate(EventBody(rot.bytes, true));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->next_file, src.txn_end[3].file);
  EXPECT_EQ(r->position, src.txn_end[3].pos);
}

// The source changes binlog_checksum (a restart with checksums off): its
// new Format_description starts a new relay file whose own events follow
// the new setting, so no relay file mixes the two.
TEST(RelayLogTest, SourceChecksumChangeStartsANewRelayFile) {
  std::string sdir = NewTempDir("relay_alg_source");
  std::vector<SourcePosition> ends;
  for (bool checksums : {true, false}) {
    Options o;
    o.server_id = kSourceServerId;
    o.checksums = checksums;
    auto log = Binlog::Open(sdir, kSourceBase, o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn(checksums);
    for (int i = 0; i < 3; ++i) {
      uint64_t id = ends.size() + 1;
      testing_util::BuildTransaction(&txn, id, 200, kSourceServerId);
      auto pos = (*log)->Commit(&txn);
      ASSERT_TRUE(pos.ok()) << pos.status();
      ends.push_back(SourcePosition{BinlogFileName(kSourceBase, pos->file_number),
                                    pos->end});
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto reader = Reader::OpenDirectory(sdir, kSourceBase, ro);
  ASSERT_TRUE(reader.ok());
  std::vector<std::string> stream;
  uint64_t file = 0;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    if (ev.file_number != file) {
      // A dump thread names each new file with an artificial Rotate.
      file = ev.file_number;
      stream.push_back(EncodeRotateTo(0, kSourceServerId,
                                      BinlogFileName(kSourceBase, file), 4, 0,
                                      kFlagArtificial, ev.file_has_checksums));
    }
    stream.push_back(std::string(ev.data));
  }
  std::string dir = NewTempDir("relay_alg");
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(relay.ok());
  for (const std::string& e : stream) ASSERT_TRUE((*relay)->Append(e).ok());
  EXPECT_EQ((*relay)->durable_source_position(), ends.back());
  ASSERT_TRUE((*relay)->Close().ok());
  // Each relay file has one checksum setting: its own Format_description's
  // and its source copy's agree.
  std::vector<std::string> files = (*relay)->files();
  bool saw_off = false;
  for (const std::string& f : files) {
    auto r = Reader::OpenFiles({io::JoinPath(dir, f)}, ReaderOptions());
    ASSERT_TRUE(r.ok());
    Event ev;
    ASSERT_TRUE((*r)->Next(&ev).ok());
    const bool own = (*r)->format_description().has_checksums();
    saw_off |= !own;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      EXPECT_EQ(ev.file_has_checksums, own) << f << " offset " << ev.offset;
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  }
  EXPECT_TRUE(saw_off);
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  std::vector<RelayTxn> txns = RelayTxns(evs);
  ASSERT_EQ(txns.size(), 6u);
  for (size_t i = 0; i < txns.size(); ++i) EXPECT_EQ(txns[i].xid, i + 1);
  // Reopen: the state (checksums off, the source copy, the position) comes
  // back from the last file.
  auto again = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->recovery().fetch_from, ends.back());
  ASSERT_TRUE((*again)->Close().ok());
  evs.clear();
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  EXPECT_FALSE(evs.back().checksums);
}

TEST(RelayLogTest, RefusesMalformedEventsWithoutWritingThem) {
  Source src = MakeSource(2);
  std::string dir = NewTempDir("relay_bad");
  auto relay = RelayLog::Open(dir, kRelayBase, DefaultRelayOptions());
  ASSERT_TRUE(relay.ok());
  ASSERT_TRUE(Feed(relay->get(), src, 0, 3).ok());
  std::string ev = src.stream[4].bytes;  // the first transaction's event
  std::string bad_crc = ev;
  bad_crc[kHeaderSize] ^= 1;
  EXPECT_TRUE(absl::IsInvalidArgument((*relay)->Append(bad_crc)));
  EXPECT_TRUE(absl::IsInvalidArgument((*relay)->Append(ev.substr(0, ev.size() - 1))));
  EXPECT_TRUE(absl::IsInvalidArgument((*relay)->Append("short")));
  EXPECT_TRUE((*relay)->Rotate().ok());
  ASSERT_TRUE(Feed(relay->get(), src, 3, src.stream.size()).ok());
  ASSERT_TRUE((*relay)->Close().ok());
  std::vector<RelayEvent> evs;
  ASSERT_TRUE(ReadRelay(dir, &evs).ok());
  EXPECT_EQ(RelayTxns(evs).size(), 2u);
}

// Power loss at every step of a receiver's workload: append the stream,
// persist durable_source_position() and durable_relay_position() in a
// PositionStore after each change. After the cut (and a second cut
// during recovery in some cycles), the relay log opens, holds a prefix of
// the source's transactions, each complete and once, the store's record
// never names more than the relay log holds and names the same point in
// both (as many transactions before its relay position as before its
// source position), and fetching from recovery().fetch_from completes the
// stream exactly.
struct CycleResult {
  bool opened = false;
};

size_t TxnsUpTo(const Source& src, const SourcePosition& p) {
  size_t n = 0;
  for (const SourcePosition& e : src.txn_end) {
    if (Key(e) <= Key(p)) ++n;
  }
  return n;
}

size_t RelayTxnsUpTo(const std::vector<RelayTxn>& txns, const RelayPosition& p) {
  uint64_t pn = 0;
  if (!ParseBinlogFileName(kRelayBase, p.file, &pn)) return 0;
  size_t n = 0;
  for (const RelayTxn& t : txns) {
    uint64_t tn = 0;
    ParseBinlogFileName(kRelayBase, t.file, &tn);
    if (std::make_pair(tn, t.end) <= std::make_pair(pn, p.pos)) ++n;
  }
  return n;
}

// Runs the receiver until the file system freezes (or the stream ends).
void Receive(const Source& src, const std::string& dir, io::FileSystem* fs,
             const RelayLogOptions& base, size_t from) {
  auto relay = RelayLog::Open(dir, kRelayBase, base);
  if (!relay.ok()) return;
  PositionStoreOptions po;
  po.file_system = fs;
  auto store = PositionStore::Open(io::JoinPath(dir, "replica.pos"), po);
  if (!store.ok()) return;
  ReplicaPosition rp;
  SourcePosition last;
  // After (re)opening, the store first takes the relay log's recovered
  // position: from here on the two agree.
  auto persist = [&]() -> bool {
    if ((*relay)->durable_source_position() == last) return true;
    last = (*relay)->durable_source_position();
    rp.source_file = last.file;
    rp.source_pos = last.pos;
    rp.relay_file = (*relay)->durable_relay_position().file;
    rp.relay_pos = (*relay)->durable_relay_position().pos;
    return (*store)->Update(rp).ok();
  };
  if (!persist()) return;
  if (from > 0) {
    const SourcePosition& f = (*relay)->recovery().fetch_from;
    std::string fake = EncodeRotateTo(0, kSourceServerId, f.file, f.pos, 0,
                                      kFlagArtificial, src.checksums);
    if (!(*relay)->Append(fake).ok()) return;
  }
  for (size_t i = from; i < src.stream.size(); ++i) {
    if (!(*relay)->Append(src.stream[i].bytes).ok()) return;
    if (!persist()) return;
  }
  // Close makes the tail durable (sync every N events leaves one pending).
  if (!(*relay)->Close().ok()) return;
  if (!persist()) return;
  (*store)->Close().IgnoreError();
}

// A fresh directory on tmpfs when possible: fsync costs nothing there, and
// the fault file system, not the device, decides what is durable.
std::string PowerLossDir(const std::string& tag) {
  static int counter = 0;
  if (::access("/dev/shm", W_OK) != 0) return NewTempDir(tag);
  std::string dir = absl::StrCat("/dev/shm/relay_log_test_", ::getpid(), "_",
                                 tag, "_", counter++);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
  return dir;
}

// The stream index to resume at after `fetch_from` (0: from the start).
size_t ResumeIndex(const Source& src, const SourcePosition& fetch_from) {
  if (fetch_from.file.empty()) return 0;
  for (size_t i = 1; i < src.stream.size(); ++i) {
    const StreamEvent& e = src.stream[i];
    if (e.header.log_pos == 0) continue;
    SourcePosition p{BinlogFileName(kSourceBase, e.file), e.header.log_pos};
    if (Key(p) > Key(fetch_from)) return i;
  }
  return src.stream.size();
}

TEST(RelayLogPowerLossTest, StoreAndRelayLogAgreeAfterACutAtEveryStep) {
  Source src = MakeSource(10);
  const io::PowerLossOptions::Data modes[] = {
      io::PowerLossOptions::Data::kDropUnsynced,
      io::PowerLossOptions::Data::kKeepRandomPrefix,
      io::PowerLossOptions::Data::kTearLastSector,
      io::PowerLossOptions::Data::kRandomSectors};
  for (bool per_group : {true, false}) {
    SCOPED_TRACE(per_group ? "sync every group" : "sync every 2 events");
    RelayLogOptions base;
    base.server_id = kReplicaServerId;
    base.max_file_size = 4096;
    if (!per_group) {
      base.sync = RelaySyncPolicy::kEveryNEvents;
      base.sync_every_events = 2;
    }
    // Count the workload's mutating calls.
    uint64_t total = 0;
    {
      io::FaultInjectionFileSystem fs;
      std::string dir = PowerLossDir("relay_pl_count");
      RelayLogOptions o = base;
      o.file_system = &fs;
      Receive(src, dir, &fs, o, 0);
      total = fs.mutating_ops();
    }
    ASSERT_GT(total, 40u);
    int recovered_cuts = 0;
    for (uint64_t k = 0; k <= total; ++k) {
      SCOPED_TRACE(absl::StrCat("cut after ", k, " of ", total, " calls"));
      io::FaultInjectionFileSystem fs;
      std::string dir = PowerLossDir("relay_pl");
      RelayLogOptions o = base;
      o.file_system = &fs;
      fs.FreezeAfter(k);
      Receive(src, dir, &fs, o, 0);
      io::PowerLossOptions loss;
      loss.data = modes[k % 4];
      loss.keep_random_dir_prefix = (k % 3) == 0;
      loss.seed = k;
      ASSERT_TRUE(fs.SimulatePowerLoss(loss).ok());
      // What survived of the position store (as a replica starts).
      PositionStoreOptions po;
      po.file_system = &fs;
      auto store = PositionStore::Open(io::JoinPath(dir, "replica.pos"), po);
      ASSERT_TRUE(store.ok()) << store.status();
      ReplicaPosition stored = (*store)->recovered();
      ASSERT_TRUE((*store)->Close().ok());
      const SourcePosition stored_source{stored.source_file, stored.source_pos};
      // Every third cycle recovers with relay_log_recovery=ON: the relay
      // log is discarded and the receiver fetches from the store's source
      // position (the start of the source's first file if it has none).
      const bool discard = k % 3 == 2;
      RelayLogOptions ro = o;
      if (discard) {
        ro.recovery = RelayRecovery::kDiscard;
        ro.discard_fetch_from = stored.source_file.empty()
                                    ? SourcePosition{BinlogFileName(kSourceBase, 1), 4}
                                    : stored_source;
      }
      if (k % 2 == 1) {
        // A second cut, during recovery (or just after it).
        fs.FreezeAfter(k % 9);
        {
          auto r = RelayLog::Open(dir, kRelayBase, ro);
          (void)r;
        }
        loss.seed = k + 1000;
        ASSERT_TRUE(fs.SimulatePowerLoss(loss).ok());
      }
      auto relay = RelayLog::Open(dir, kRelayBase, ro);
      ASSERT_TRUE(relay.ok()) << relay.status();
      if ((*relay)->recovery().recovered) ++recovered_cuts;
      SourcePosition fetch = (*relay)->recovery().fetch_from;
      std::vector<std::string> files = (*relay)->files();
      ASSERT_TRUE((*relay)->Close().ok());
      std::vector<RelayEvent> evs;
      ASSERT_TRUE(ReadRelay(dir, &evs, &fs).ok());
      std::vector<RelayTxn> txns = RelayTxns(evs);
      size_t first_xid = 1;
      if (discard) {
        // Nothing left but the new file, which names the fetch position.
        EXPECT_TRUE((*relay)->recovery().discarded);
        ASSERT_EQ(fetch, ro.discard_fetch_from);
        ASSERT_EQ(files.size(), 1u);
        ASSERT_TRUE(txns.empty());
        auto names = fs.ListDirectory(dir);
        ASSERT_TRUE(names.ok());
        for (const std::string& n : *names) {
          uint64_t num = 0;
          if (ParseBinlogFileName(kRelayBase, n, &num)) {
            ASSERT_EQ(n, files[0]);
          }
        }
        first_xid = TxnsUpTo(src, fetch) + 1;
      } else {
        for (size_t i = 0; i < txns.size(); ++i) ASSERT_EQ(txns[i].xid, i + 1);
        // The relay log ends where it says the receiver must fetch from.
        ASSERT_EQ(TxnsUpTo(src, fetch), txns.size());
        if (!stored.relay_file.empty()) {
          RelayPosition r{stored.relay_file, stored.relay_pos};
          // Never ahead of the relay log, and the same point in both logs.
          ASSERT_LE(TxnsUpTo(src, stored_source), txns.size());
          ASSERT_EQ(RelayTxnsUpTo(txns, r), TxnsUpTo(src, stored_source));
        }
      }
      // Fetch the rest: every transaction once, in order.
      Receive(src, dir, &fs, o, ResumeIndex(src, fetch));
      evs.clear();
      ASSERT_TRUE(ReadRelay(dir, &evs, &fs).ok());
      txns = RelayTxns(evs);
      ASSERT_EQ(txns.size(), src.txn_end.size() - (first_xid - 1));
      for (size_t i = 0; i < txns.size(); ++i) ASSERT_EQ(txns[i].xid, first_xid + i);
      // And the store, updated by the receiver, agrees with the relay log.
      store = PositionStore::Open(io::JoinPath(dir, "replica.pos"), po);
      ASSERT_TRUE(store.ok());
      const ReplicaPosition& last = (*store)->recovered();
      if (txns.size() > 0) {
        ASSERT_EQ(last.source_file, src.txn_end.back().file);
        ASSERT_EQ(TxnsUpTo(src, SourcePosition{last.source_file, last.source_pos}),
                  src.txn_end.size());
        ASSERT_EQ(RelayTxnsUpTo(txns, RelayPosition{last.relay_file, last.relay_pos}),
                  txns.size());
      }
      ASSERT_TRUE((*store)->Close().ok());
      std::string cmd = absl::StrCat("rm -rf '", dir, "'");
      ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    EXPECT_GT(recovered_cuts, 5);
  }
}

}  // namespace
}  // namespace binlog
