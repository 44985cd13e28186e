// Tests of binlog/mirror_log.h: a copy fed with a source's dump stream is
// byte-identical to the source's files (MySQL, MySQL with zstd payloads,
// MariaDB), artificial events are not stored, rotation follows the
// source's, positions are checked (gaps, overlaps and differing re-sends
// refused, nothing written), a restart re-sends what the copy holds, and a
// crash anywhere in the last transactions (every byte offset, and power
// cuts through the fault-injecting file system) recovers to the last
// complete transaction with a resume point from which the dump finishes the
// copy exactly.
//
// The source is made by the library itself: a Binlog writes its files
// (small files, so it rotates), and the stream is what a dump sends from a
// file and position: an artificial Rotate, the file's Format_description as
// sent (log_pos 0 when the dump starts inside the file), the events, and
// the heartbeats and MariaDB's artificial Gtid_list a dump adds.

#include "binlog/mirror_log.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::WriteFile;
using testutil::StatusIs;

constexpr uint32_t kTs = 1700000000;
constexpr uint32_t kServerId = 1;
const char kBase[] = "source-bin";

enum class Kind { kMySql, kMySqlZstd, kMariaDb };

std::string KindName(Kind k) {
  switch (k) {
    case Kind::kMySql: return "MySql";
    case Kind::kMySqlZstd: return "MySqlZstd";
    case Kind::kMariaDb: return "MariaDb";
  }
  return "";
}

struct TxnEnd {
  std::string file;
  uint64_t end = 0;
  GtidSet gtids;            // the source's GTIDs after it (MySQL)
  MariaGtidState maria;     // (MariaDB)
};

struct Source {
  Kind kind = Kind::kMySql;
  std::string dir;
  std::vector<std::string> files;
  std::vector<TxnEnd> txns;
};

// Writes `n` transactions to a source log with small files.
Source MakeSource(Kind kind, int n) {
  Source src;
  src.kind = kind;
  src.dir = NewTempDir(absl::StrCat("mirror_source_", KindName(kind)));
  Options o;
  o.server_id = kServerId;
  o.max_file_size = 4096;
  o.preallocate = io::PreallocMode::kNone;
  o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  if (kind == Kind::kMariaDb) o.flavor = LogFlavor::kMariaDB;
  if (kind == Kind::kMySqlZstd) o.compression = io::Codec::kZstd;
  auto log = Binlog::Open(src.dir, kBase, o);
  EXPECT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn(true);
  for (int i = 1; i <= n; ++i) {
    txn.Clear();
    if (kind == Kind::kMariaDb) {
      txn.AppendMariaCommitGtid(kTs, kServerId, CommitGtid{});
    } else {
      txn.AppendCommitGtid(kTs, kServerId, CommitGtid{});
      AppendQuery(&txn, kTs, kServerId, 7, "db", "BEGIN");
    }
    // Letters at random: compressible, but not to nothing.
    std::string text = absl::StrCat("txn ", i, " ");
    std::mt19937 rng(static_cast<uint32_t>(i));
    while (text.size() < 300 + 29 * static_cast<size_t>(i % 7)) {
      text.push_back(static_cast<char>('a' + rng() % 26));
    }
    AppendQuery(&txn, kTs, kServerId, 7, "db", absl::StrCat("INSERT INTO t VALUES ('", text, "')"));
    AppendXid(&txn, kTs, kServerId, static_cast<uint64_t>(i));
    auto pos = (*log)->Commit(&txn);
    EXPECT_TRUE(pos.ok()) << pos.status();
    TxnEnd t;
    t.file = BinlogFileName(kBase, pos->file_number);
    t.end = pos->end;
    if (kind == Kind::kMariaDb) {
      t.maria = (*log)->mariadb_gtid_state();
    } else {
      t.gtids = (*log)->executed_gtids();
    }
    src.txns.push_back(t);
  }
  EXPECT_TRUE((*log)->Close().ok());
  auto idx = ReadIndex(io::FileSystem::Default(), src.dir, kBase);
  EXPECT_TRUE(idx.ok());
  for (uint64_t f : *idx) src.files.push_back(BinlogFileName(kBase, f));
  return src;
}

// An event a dump makes up: LOG_EVENT_ARTIFICIAL_F, timestamp 0.
std::string ArtificialEvent(uint8_t type, absl::string_view body, uint32_t log_pos) {
  std::string ev(kHeaderSize, '\0');
  ev.append(body.data(), body.size());
  ev.append(kChecksumSize, '\0');
  EventHeader h;
  h.type = type;
  h.server_id = kServerId;
  h.event_size = static_cast<uint32_t>(ev.size());
  h.log_pos = log_pos;
  h.flags = kFlagArtificial;
  EncodeHeader(h, ev.data());
  StoreLe32(ev.data() + ev.size() - kChecksumSize, ComputeEventChecksum(ev));
  return ev;
}

struct DumpOptions {
  bool heartbeats = true;  // one after every third event
  bool maria_gtid_list = true;  // MariaDB: an artificial Gtid_list after the start
};

// The stream a dump from `file`:`pos` sends: every event of the source from
// there on, across its files.
std::vector<std::string> Dump(const Source& src, const std::string& file, uint64_t pos,
                              const DumpOptions& d = DumpOptions()) {
  std::vector<std::string> out;
  out.push_back(EncodeRotateTo(0, kServerId, file, pos, 0, kFlagArtificial, true));
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto reader = Reader::OpenDirectory(src.dir, kBase, ro);
  EXPECT_TRUE(reader.ok()) << reader.status();
  bool started = false;
  int sent = 0;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    const std::string name = BinlogFileName(kBase, ev.file_number);
    if (!started && name != file) continue;
    const bool first_file = !started || name == file;
    started = true;
    if (ev.header.type == kFormatDescriptionEvent) {
      auto sent = EncodeSentFormatDescription(ev.data, first_file && pos > kMagicSize);
      EXPECT_TRUE(sent.ok());
      out.push_back(*sent);
      if (first_file && pos > kMagicSize && src.kind == Kind::kMariaDb && d.maria_gtid_list) {
        // MariaDB's artificial Gtid_list where the dump starts.
        out.push_back(ArtificialEvent(kMariaGtidListEvent, EncodeMariaGtidListBody({}),
                                      static_cast<uint32_t>(pos)));
      }
      continue;
    }
    if (name == file && ev.offset < pos) continue;
    out.push_back(std::string(ev.data));
    if (d.heartbeats && ++sent % 3 == 0) {
      out.push_back(EncodeHeartbeat(kServerId, name, static_cast<uint32_t>(ev.end_offset), true));
    }
  }
  return out;
}

absl::Status Feed(MirrorLog* m, const std::vector<std::string>& events, size_t from = 0,
                  size_t to = SIZE_MAX) {
  for (size_t i = from; i < std::min(to, events.size()); ++i) {
    absl::Status s = m->Append(events[i]);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("event ", i, ": ", s.message()));
  }
  return absl::OkStatus();
}

// The copy holds exactly the source's files, byte for byte.
void ExpectIdentical(const Source& src, const std::string& copy_dir) {
  auto idx = ReadIndex(io::FileSystem::Default(), copy_dir, kBase);
  ASSERT_TRUE(idx.ok()) << idx.status();
  std::vector<std::string> names;
  for (uint64_t f : *idx) names.push_back(BinlogFileName(kBase, f));
  EXPECT_EQ(names, src.files);
  for (const std::string& name : src.files) {
    std::string a = ReadFile(io::JoinPath(src.dir, name));
    std::string b = ReadFile(io::JoinPath(copy_dir, name));
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a.size(), b.size()) << name;
    EXPECT_TRUE(a == b) << name << " differs";
  }
}

class MirrorLogTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override { src_ = MakeSource(GetParam(), 60); }
  std::string NewCopyDir(const std::string& tag) {
    return NewTempDir(absl::StrCat("mirror_", tag, "_", KindName(GetParam())));
  }
  Source src_;
};

TEST_P(MirrorLogTest, StreamGivesByteIdenticalFiles) {
  ASSERT_GE(src_.files.size(), 3u) << "the source must rotate";
  const std::string dir = NewCopyDir("identical");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize);
  ASSERT_OK(Feed(m->get(), stream));
  // Rotation followed the source's.
  EXPECT_EQ((*m)->files(), src_.files);
  ASSERT_OK((*m)->Sync());
  MirrorResumePoint rp = (*m)->ResumePoint();
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
  // The source's last file ends with its Stop: the dump continues there.
  const std::string last = src_.files.back();
  EXPECT_EQ(rp.position, (MirrorPosition{last, ReadFile(io::JoinPath(src_.dir, last)).size()}));
  if (GetParam() == Kind::kMariaDb) {
    EXPECT_EQ(rp.flavor, LogFlavor::kMariaDB);
    EXPECT_EQ(rp.maria_gtids, src_.txns.back().maria);
    EXPECT_EQ(rp.maria_gtids.ToString(), "0-1-60");
  } else {
    EXPECT_EQ(rp.flavor, LogFlavor::kMySQL);
    EXPECT_EQ(rp.gtids, src_.txns.back().gtids);
    EXPECT_EQ(rp.gtids.Count(), 60);
  }
  // The library's Reader reads the copy like any log directory.
  auto r = Reader::OpenDirectory(dir, kBase, ReaderOptions());
  ASSERT_OK(r.status());
  std::vector<testing_util::EventRef> events;
  ASSERT_OK(testing_util::ReadAll(r->get(), &events));
  EXPECT_TRUE((*r)->torn_tails().empty());
  // Reopened, the copy is where it was, and the same resume point.
  auto again = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(again.status());
  EXPECT_EQ((*again)->recovery().bytes_cut, 0u);
  EXPECT_EQ((*again)->ResumePoint().position, rp.position);
  EXPECT_EQ((*again)->ResumePoint().gtids, rp.gtids);
  EXPECT_EQ((*again)->ResumePoint().maria_gtids, rp.maria_gtids);
}

TEST_P(MirrorLogTest, ArtificialEventsAreNotStored) {
  const std::string dir = NewCopyDir("artificial");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize);
  // Extra artificial events anywhere: a heartbeat v1 before anything else
  // would be harmless too, and an artificial event of any type in the middle.
  stream.insert(stream.begin() + 5, ArtificialEvent(kMariaGtidListEvent,
                                                    EncodeMariaGtidListBody({}), 0));
  stream.insert(stream.begin() + 7, ArtificialEvent(kQueryEvent, std::string(40, 'q'), 0));
  ASSERT_OK(Feed(m->get(), stream));
  MirrorLog::Stats st = (*m)->stats();
  uint64_t heartbeats = 0, fake = 1 + 2;  // the fake Rotate and the two above
  for (const std::string& ev : stream) {
    if (DecodeHeader(ev).type == kHeartbeatEvent) ++heartbeats;
  }
  EXPECT_GT(heartbeats, 0u);
  EXPECT_EQ(st.heartbeats, heartbeats);
  EXPECT_EQ(st.artificial, fake);
  EXPECT_EQ(st.events_stored, stream.size() - heartbeats - fake);
  EXPECT_EQ(st.files_started, src_.files.size());
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
}

TEST_P(MirrorLogTest, GapIsRefusedAndNothingWritten) {
  const std::string dir = NewCopyDir("gap");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  DumpOptions d;
  d.heartbeats = false;
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize, d);
  const size_t k = 12;  // an event inside the first file
  ASSERT_OK(Feed(m->get(), stream, 0, k));
  const MirrorPosition before = (*m)->end();
  absl::Status s = (*m)->Append(stream[k + 1]);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_NE(s.message().find("a gap"), std::string::npos) << s;
  EXPECT_EQ((*m)->end(), before);
  // Nothing was written, and the copy goes on with the right event.
  ASSERT_OK(Feed(m->get(), stream, k));
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
}

TEST_P(MirrorLogTest, OverlapIsRefused) {
  const std::string dir = NewCopyDir("overlap");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  DumpOptions d;
  d.heartbeats = false;
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize, d);
  ASSERT_OK(Feed(m->get(), stream, 0, 10));
  absl::Status s = (*m)->Append(stream[9]);  // the same event again
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_NE(s.message().find("overlap"), std::string::npos) << s;
  ASSERT_OK(Feed(m->get(), stream, 10));
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
}

TEST_P(MirrorLogTest, EventBeforeTheDumpNamesAFileIsRefused) {
  const std::string dir = NewCopyDir("nofile");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize);
  EXPECT_THAT((*m)->Append(stream[1]), StatusIs(absl::StatusCode::kOutOfRange));
  // An empty copy needs a file from its start.
  EXPECT_THAT((*m)->Append(EncodeRotateTo(0, kServerId, src_.files[1], 500, 0,
                                          kFlagArtificial, true)),
              StatusIs(absl::StatusCode::kOutOfRange));
  // A file outside the basename.
  EXPECT_THAT((*m)->Append(EncodeRotateTo(0, kServerId, "other.000001", 4, 0,
                                          kFlagArtificial, true)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE((*m)->files().empty());
}

TEST_P(MirrorLogTest, CorruptEventIsRefused) {
  const std::string dir = NewCopyDir("corrupt");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  DumpOptions d;
  d.heartbeats = false;
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize, d);
  ASSERT_OK(Feed(m->get(), stream, 0, 6));
  ASSERT_NE(DecodeHeader(stream[6]).type, kFormatDescriptionEvent);
  std::string bad = stream[6];
  bad[kHeaderSize + 2] ^= 0x10;
  EXPECT_THAT((*m)->Append(bad), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK(Feed(m->get(), stream, 6));
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
}

// A reconnect: the dump restarts at the beginning of the copy's last file
// (as a GTID dump does) and re-sends what the copy holds.
TEST_P(MirrorLogTest, RestartResendsWhatTheCopyHolds) {
  const std::string dir = NewCopyDir("restart");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize);
  // Stop in the middle of a transaction of the second file.
  size_t cut = 0, files_seen = 0;
  for (size_t i = 1; i < stream.size(); ++i) {
    if (DecodeHeader(stream[i]).type == kFormatDescriptionEvent && ++files_seen == 2) {
      cut = i + 6;
      break;
    }
  }
  ASSERT_GT(cut, 0u);
  ASSERT_OK(Feed(m->get(), stream, 0, cut));
  const std::string second = src_.files[1];
  ASSERT_EQ((*m)->end().file, second);
  std::vector<std::string> again = Dump(src_, second, kMagicSize);
  ASSERT_OK(Feed(m->get(), again));
  EXPECT_GT((*m)->stats().resent, 0u);
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src_, dir);
}

TEST_P(MirrorLogTest, ResendThatDiffersIsRefused) {
  const std::string dir = NewCopyDir("differs");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  DumpOptions d;
  d.heartbeats = false;
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize, d);
  ASSERT_OK(Feed(m->get(), stream, 0, 12));
  std::vector<std::string> again = Dump(src_, src_.files.front(), kMagicSize, d);
  ASSERT_OK(Feed(m->get(), again, 0, 4));
  // The next re-sent event with other bytes (same size, valid CRC).
  std::string other = again[4];
  other[kHeaderSize + other.size() / 2 - kHeaderSize / 2] ^= 0x01;
  StoreLe32(other.data() + other.size() - kChecksumSize, ComputeEventChecksum(other));
  absl::Status s = (*m)->Append(other);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_NE(s.message().find("differs"), std::string::npos) << s;
}

// A crash at every byte offset within the last transactions of the last
// file: Open cuts to the last complete transaction, the resume point names
// it (with the GTIDs up to it), and the dump from there makes the copy
// identical to the source again.
TEST_P(MirrorLogTest, CrashAtEveryOffsetRecoversAndResumes) {
  const std::string dir = NewCopyDir("full");
  {
    auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
    ASSERT_OK(m.status());
    ASSERT_OK(Feed(m->get(), Dump(src_, src_.files.front(), kMagicSize)));
    ASSERT_OK((*m)->Close());
  }
  const std::string last = src_.files.back();
  const std::string last_bytes = ReadFile(io::JoinPath(dir, last));
  std::vector<const TxnEnd*> in_last;
  for (const TxnEnd& t : src_.txns) {
    if (t.file == last) in_last.push_back(&t);
  }
  // The last (up to) two transactions and the Stop.
  ASSERT_GE(in_last.size(), 2u);
  const uint64_t from = in_last[in_last.size() - std::min<size_t>(3, in_last.size())]->end;
  // Each round leaves the copy identical to the source again: one copy.
  const std::string crash_dir = NewCopyDir("crash");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", crash_dir, "' && cp -r '", dir, "' '",
                                     crash_dir, "'").c_str()), 0);
  int cuts = 0;
  for (uint64_t cut = from; cut <= last_bytes.size(); ++cut) {
    SCOPED_TRACE(absl::StrCat("cut at ", cut));
    WriteFile(io::JoinPath(crash_dir, last), last_bytes.substr(0, cut));
    // Expected: the last transaction (or the Stop) that ends at or before
    // the cut.
    const TxnEnd* want = in_last.front();
    for (const TxnEnd* t : in_last) {
      if (t->end <= cut) want = t;
    }
    const uint64_t want_end = cut == last_bytes.size() ? cut : want->end;
    auto m = MirrorLog::Open(crash_dir, kBase, MirrorOptions());
    ASSERT_OK(m.status());
    EXPECT_EQ((*m)->recovery().valid_end, want_end);
    EXPECT_EQ(io::FileSystem::Default()->FileSize(io::JoinPath(crash_dir, last)).value(),
              want_end);
    MirrorResumePoint rp = (*m)->ResumePoint();
    EXPECT_EQ(rp.position, (MirrorPosition{last, want_end}));
    if (GetParam() == Kind::kMariaDb) {
      EXPECT_EQ(rp.maria_gtids, want->maria);
    } else {
      EXPECT_EQ(rp.gtids, want->gtids);
    }
    // The dump from the resume point finishes the copy.
    ASSERT_OK(Feed(m->get(), Dump(src_, rp.position.file, rp.position.pos)));
    ASSERT_OK((*m)->Close());
    ExpectIdentical(src_, crash_dir);
    ++cuts;
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(cuts, 100);
}

// Power cuts while the stream is appended (unsynced data lost, kept in a
// random prefix or torn out of order): nothing that Sync() made durable is
// lost, and the dump from the resume point finishes the copy exactly.
TEST_P(MirrorLogTest, PowerLossKeepsWhatSyncMadeDurable) {
  std::vector<std::string> stream = Dump(src_, src_.files.front(), kMagicSize);
  const io::PowerLossOptions::Data kModes[] = {
      io::PowerLossOptions::Data::kDropUnsynced, io::PowerLossOptions::Data::kKeepRandomPrefix,
      io::PowerLossOptions::Data::kTearLastSector, io::PowerLossOptions::Data::kRandomSectors};
  int run = 0;
  for (io::PowerLossOptions::Data mode : kModes) {
    for (uint64_t seed = 1; seed <= 4; ++seed, ++run) {
      SCOPED_TRACE(absl::StrCat("mode ", static_cast<int>(mode), " seed ", seed));
      const std::string dir = NewCopyDir(absl::StrCat("power", run));
      io::FaultInjectionFileSystem fs;
      MirrorOptions mo;
      mo.file_system = &fs;
      auto m = MirrorLog::Open(dir, kBase, mo);
      ASSERT_OK(m.status());
      // Feed a seed-dependent part of the stream, syncing after every
      // third transaction end, then cut the power.
      const size_t stop = stream.size() * (2 + seed) / 10;
      MirrorPosition durable;
      int ends = 0;
      for (size_t i = 0; i < stop; ++i) {
        ASSERT_OK((*m)->Append(stream[i]));
        const uint8_t type = DecodeHeader(stream[i]).type;
        const bool txn_end = type == kXidEvent || type == kTransactionPayloadEvent;
        if (txn_end && ++ends % 3 == 0) {
          ASSERT_OK((*m)->Sync());
          durable = (*m)->durable_end();
        }
      }
      fs.Freeze();
      m->reset();  // its Close fails: the disk is gone
      io::PowerLossOptions po;
      po.data = mode;
      po.seed = seed;
      po.keep_random_dir_prefix = (seed % 2) == 0;
      ASSERT_OK(fs.SimulatePowerLoss(po).status());
      auto reopened = MirrorLog::Open(dir, kBase, mo);
      ASSERT_OK(reopened.status());
      MirrorResumePoint rp = (*reopened)->ResumePoint();
      // Never behind what was durable.
      if (!durable.file.empty()) {
        ASSERT_FALSE(rp.position.file.empty());
        if (rp.position.file == durable.file) {
          // Each Sync followed a transaction end (an Xid): a boundary.
          EXPECT_GE(rp.position.pos, durable.pos) << "lost durable bytes";
        } else {
          EXPECT_GT(rp.position.file, durable.file);
        }
      }
      if (rp.position.file.empty()) {
        ASSERT_OK(Feed(reopened->get(), Dump(src_, src_.files.front(), kMagicSize)));
      } else {
        ASSERT_OK(Feed(reopened->get(), Dump(src_, rp.position.file, rp.position.pos)));
      }
      ASSERT_OK((*reopened)->Close());
      ExpectIdentical(src_, dir);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Flavors, MirrorLogTest,
                         ::testing::Values(Kind::kMySql, Kind::kMySqlZstd, Kind::kMariaDb),
                         [](const ::testing::TestParamInfo<Kind>& i) { return KindName(i.param); });

// The copy is read like any log directory while it is appended: after a
// Sync, a Reader reads every stored event, and the at-rest GTID state
// (what binlog_server serves GTID dumps from) is the copy's.
TEST(MirrorLogReaderTest, ReadersReadTheCopyWhileItIsAppended) {
  Source src = MakeSource(Kind::kMySql, 40);
  const std::string dir = NewTempDir("mirror_readers");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize);
  size_t done = 0;
  for (size_t upto : {stream.size() / 3, stream.size() / 2, stream.size()}) {
    ASSERT_OK(Feed(m->get(), stream, done, upto));
    done = upto;
    ASSERT_OK((*m)->Sync());
    auto r = Reader::OpenDirectory(dir, kBase, ReaderOptions());
    ASSERT_OK(r.status());
    std::vector<testing_util::EventRef> events;
    ASSERT_OK(testing_util::ReadAll(r->get(), &events));
    EXPECT_EQ(events.size(), (*m)->stats().events_stored);
    auto st = ReadAtRestGtidState(dir, kBase, LogFlavor::kMySQL);
    ASSERT_OK(st.status());
    if (!(*m)->inside_transaction()) {
      EXPECT_EQ(st->executed, (*m)->ResumePoint().gtids);
    }
  }
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src, dir);
}

// A receiver appends while an acknowledger syncs and reads durable_end()
// (the relay's semi-sync threads): the durable end only grows, and the
// copy ends identical to the source.
TEST(MirrorLogThreadTest, SyncRunsAlongsideAppend) {
  Source src = MakeSource(Kind::kMySql, 60);
  const std::string dir = NewTempDir("mirror_threads");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize);
  std::atomic<bool> done{false};
  absl::Status ack_status;
  std::thread acker([&] {
    MirrorPosition last;
    while (!done.load()) {
      absl::Status s = (*m)->Sync();
      if (!s.ok()) {
        ack_status = s;
        return;
      }
      MirrorPosition p = (*m)->durable_end();
      if (p.file < last.file || (p.file == last.file && p.pos < last.pos)) {
        ack_status = absl::InternalError("durable end went back");
        return;
      }
      last = p;
    }
  });
  absl::Status fed = Feed(m->get(), stream);
  done.store(true);
  acker.join();
  ASSERT_OK(fed);
  ASSERT_OK(ack_status);
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src, dir);
}

// A tailing reader follows the copy while the stream is appended: it sees
// only whole, durable transactions (each time it catches up it stands at a
// boundary the copy synced), moves across the source's files, and after
// Close reads to the end and stops; it reads exactly the source's events.
TEST(MirrorLogReaderTest, TailingReaderFollowsTheDurableBoundary) {
  Source src = MakeSource(Kind::kMySql, 60);
  // The source's boundaries: where no transaction is open.
  std::set<std::pair<uint64_t, uint64_t>> boundaries;
  std::vector<std::string> source_events;
  {
    auto r = Reader::OpenDirectory(src.dir, kBase, ReaderOptions());
    ASSERT_OK(r.status());
    TransactionBoundaryParser parser;
    for (;;) {
      Event ev;
      absl::Status s = (*r)->Next(&ev);
      if (absl::IsOutOfRange(s)) break;
      ASSERT_OK(s);
      source_events.push_back(std::string(ev.data));
      if (ev.header.type == kFormatDescriptionEvent) {
        parser.Reset();
        boundaries.insert({ev.file_number, ev.end_offset});
        continue;
      }
      auto res = parser.Feed(ev.header, ev.body());
      if (res == TransactionBoundaryParser::Result::kEnded ||
          res == TransactionBoundaryParser::Result::kOutside) {
        boundaries.insert({ev.file_number, ev.end_offset});
      }
    }
  }
  const std::string dir = NewTempDir("mirror_tail");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  auto reader = (*m)->NewReader(ReaderOptions());
  ASSERT_OK(reader.status());
  std::vector<std::string> read;
  std::vector<std::string> errors;
  std::thread tail([&] {
    for (;;) {
      Event ev;
      absl::Status s = (*reader)->Next(&ev);
      if (s.ok()) {
        read.push_back(std::string(ev.data));
        continue;
      }
      if (!absl::IsOutOfRange(s)) {
        errors.push_back(s.ToString());
        return;
      }
      // Caught up: at a durable boundary (or before the first file).
      const auto at = std::make_pair((*reader)->file_number(), (*reader)->position());
      if ((*reader)->position() != 0 && boundaries.count(at) == 0) {
        errors.push_back(absl::StrCat("caught up at ", at.first, ":", at.second,
                                      ", not a boundary"));
      }
      absl::Status w = (*reader)->WaitForMore(absl::InfiniteFuture());
      if (absl::IsCancelled(w)) {
        // Closed: everything readable now.
        for (;;) {
          absl::Status n = (*reader)->Next(&ev);
          if (!n.ok()) {
            if (!absl::IsOutOfRange(n)) errors.push_back(n.ToString());
            return;
          }
          read.push_back(std::string(ev.data));
        }
      }
      if (!w.ok()) {
        errors.push_back(w.ToString());
        return;
      }
    }
  });
  std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize);
  absl::Status fed;
  int n = 0;
  for (const std::string& ev : stream) {
    fed = (*m)->Append(ev);
    if (!fed.ok()) break;
    if (++n % 7 == 0) {  // often inside a transaction: never published
      fed = (*m)->Sync();
      if (!fed.ok()) break;
    }
  }
  absl::Status closed = (*m)->Close();
  tail.join();
  ASSERT_OK(fed);
  ASSERT_OK(closed);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(read.size(), source_events.size());
  EXPECT_TRUE(read == source_events);
}

// What a MariaDB source sends for a GTID connect: an artificial Rotate to
// the start of the file holding the position, the file's
// Format_description again with its created time zeroed and its CRC
// recomputed (log_pos kept, or 0), the file's Gtid_list and
// Binlog_checkpoint again, the groups before the position skipped, an
// artificial Gtid_list, then the groups after it. The copy keeps the
// file's original events and goes on exactly.
TEST(MirrorLogMariaDbTest, GtidConnectRestartContinuesTheCopy) {
  Source src = MakeSource(Kind::kMariaDb, 60);
  for (bool zero_fde_pos : {false, true}) {
    SCOPED_TRACE(zero_fde_pos ? "FDE log_pos 0" : "FDE log_pos kept");
    const std::string dir = NewTempDir(absl::StrCat("mirror_maria_gtid", zero_fde_pos));
    auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
    ASSERT_OK(m.status());
    DumpOptions d;
    d.heartbeats = false;
    std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize, d);
    // Stop inside a group of the first file, after a few whole ones.
    size_t stop = 0, gtids = 0;
    for (size_t i = 1; i < stream.size(); ++i) {
      if (DecodeHeader(stream[i]).type == kMariaGtidEvent && ++gtids == 4) {
        stop = i + 2;  // the Gtid and the statement, not the Xid
        break;
      }
    }
    ASSERT_GT(stop, 0u);
    ASSERT_OK(Feed(m->get(), stream, 0, stop));
    ASSERT_TRUE((*m)->inside_transaction());
    const MirrorResumePoint rp = (*m)->ResumePoint();
    ASSERT_EQ(rp.position.file, src.files.front());
    EXPECT_EQ(rp.maria_gtids.ToString(), "0-1-3");
    // The GTID connect's stream.
    std::vector<std::string> again;
    again.push_back(EncodeRotateTo(0, kServerId, rp.position.file, kMagicSize, 0,
                                   kFlagArtificial, true));
    const std::string file = ReadFile(io::JoinPath(src.dir, rp.position.file));
    const uint32_t fde_size = LoadLe32(file.data() + kMagicSize + kEventSizeOffset);
    std::string fde = file.substr(kMagicSize, fde_size);
    ASSERT_NE(LoadLe32(fde.data() + kHeaderSize + 2 + 50), 0u) << "first file: created set";
    StoreLe32(fde.data() + kHeaderSize + 2 + 50, 0);  // created
    if (zero_fde_pos) StoreLe32(fde.data() + kLogPosOffset, 0);
    StoreLe32(fde.data() + fde.size() - kChecksumSize, ComputeEventChecksum(fde));
    again.push_back(fde);
    // The file's header events, as stored, then the groups from the
    // position on, with the artificial Gtid_list where they resume.
    for (size_t i = 2; i < stream.size(); ++i) {
      EventHeader h = DecodeHeader(stream[i]);
      if (h.type == kMariaGtidEvent) break;
      again.push_back(stream[i]);
    }
    again.push_back(ArtificialEvent(kMariaGtidListEvent, EncodeMariaGtidListBody({}),
                                    static_cast<uint32_t>(rp.position.pos)));
    std::vector<std::string> rest = Dump(src, rp.position.file, rp.position.pos, d);
    // Dump's own start (artificial Rotate, FDE, artificial Gtid_list) is
    // replaced by the GTID connect's above.
    size_t first = 0;
    while (first < rest.size() && DecodeHeader(rest[first]).type != kMariaGtidEvent) ++first;
    again.insert(again.end(), rest.begin() + static_cast<long>(first), rest.end());
    ASSERT_OK(Feed(m->get(), again));
    EXPECT_GT((*m)->stats().resent, 0u);
    ASSERT_OK((*m)->Close());
    ExpectIdentical(src, dir);
  }
}

// A source that crashed: its file ends without Rotate or Stop and the
// dump goes on in the next file after an artificial Rotate. The copy's
// file ends where the source's does (a partial transaction received before
// the crash, which the source lost, is cut).
TEST(MirrorLogCrashedSourceTest, NextFileAfterFakeRotateFinishesTheLastFile) {
  Source src = MakeSource(Kind::kMySql, 20);
  ASSERT_GE(src.files.size(), 3u);
  const std::string dir = NewTempDir("mirror_crashed_source");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  DumpOptions d;
  d.heartbeats = false;
  std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize, d);
  // Feed the first file without its Rotate, plus the first two events of a
  // transaction the source lost.
  size_t rotate = 0;
  for (size_t i = 1; i < stream.size(); ++i) {
    EventHeader h = DecodeHeader(stream[i]);
    if (h.type == kRotateEvent && h.log_pos != 0) {
      rotate = i;
      break;
    }
  }
  ASSERT_GT(rotate, 0u);
  ASSERT_OK(Feed(m->get(), stream, 0, rotate));
  const uint64_t file_end = (*m)->end().pos;
  // The lost transaction: the next file's first transaction's Gtid and
  // BEGIN, moved to where the first file ends (positions recomputed).
  for (size_t i = rotate + 1, fed = 0; fed < 2 && i < stream.size(); ++i) {
    EventHeader h = DecodeHeader(stream[i]);
    if (h.type != kGtidEvent && h.type != kQueryEvent) continue;
    std::string ev = stream[i];
    h.log_pos = static_cast<uint32_t>((*m)->end().pos + ev.size());
    EncodeHeader(h, ev.data());
    StoreLe32(ev.data() + ev.size() - kChecksumSize, ComputeEventChecksum(ev));
    ASSERT_OK((*m)->Append(ev));
    ++fed;
  }
  EXPECT_TRUE((*m)->inside_transaction());
  // The source restarts in the next file.
  std::vector<std::string> next = Dump(src, src.files[1], kMagicSize, d);
  ASSERT_OK(Feed(m->get(), next));
  ASSERT_OK((*m)->Close());
  // The first file ends where the source's did before its Rotate.
  EXPECT_EQ(ReadFile(io::JoinPath(dir, src.files[0])),
            ReadFile(io::JoinPath(src.dir, src.files[0])).substr(0, file_end));
  for (size_t i = 1; i < src.files.size(); ++i) {
    EXPECT_EQ(ReadFile(io::JoinPath(dir, src.files[i])),
              ReadFile(io::JoinPath(src.dir, src.files[i])));
  }
  // Readers go from the first file to the next without its Rotate.
  auto r = Reader::OpenDirectory(dir, kBase, ReaderOptions());
  ASSERT_OK(r.status());
  std::vector<testing_util::EventRef> events;
  ASSERT_OK(testing_util::ReadAll(r->get(), &events));
}

// Damage in the last file that a torn write cannot explain (a valid event
// far beyond it) is refused, nothing changed.
TEST(MirrorLogRecoveryTest, DamageWithinTheUnsyncedWindowIsCut) {
  Source src = MakeSource(Kind::kMySql, 30);
  const std::string dir = NewTempDir("mirror_damage");
  MirrorOptions mo;
  mo.max_unsynced_bytes = 64 << 10;
  {
    auto m = MirrorLog::Open(dir, kBase, mo);
    ASSERT_OK(m.status());
    ASSERT_OK(Feed(m->get(), Dump(src, src.files.front(), kMagicSize)));
    ASSERT_OK((*m)->Close());
  }
  const std::string last = src.files.back();
  std::string bytes = ReadFile(io::JoinPath(dir, last));
  ASSERT_GT(bytes.size(), 1000u);
  MirrorOptions small = mo;
  // Below the minimum window: refused as an option.
  small.max_unsynced_bytes = 1024;
  EXPECT_THAT(MirrorLog::Open(dir, kBase, small).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // A damaged byte within the window is a torn tail: cut.
  std::string damaged = bytes;
  damaged[bytes.size() / 2] ^= 0x40;
  WriteFile(io::JoinPath(dir, last), damaged);
  auto m = MirrorLog::Open(dir, kBase, mo);
  ASSERT_OK(m.status());
  EXPECT_GT((*m)->recovery().bytes_cut, 0u);
  EXPECT_LT((*m)->recovery().valid_end, bytes.size() / 2);
}

TEST(MirrorLogRecoveryTest, DamageFarBeforeTheEndIsRefused) {
  // One large file: a source with a large max_file_size.
  const std::string src_dir = NewTempDir("mirror_big_source");
  Options o;
  o.server_id = kServerId;
  o.preallocate = io::PreallocMode::kNone;
  o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  {
    auto log = Binlog::Open(src_dir, kBase, o);
    ASSERT_OK(log.status());
    TransactionBuffer txn(true);
    for (int i = 1; i <= 600; ++i) {
      txn.Clear();
      txn.AppendCommitGtid(kTs, kServerId, CommitGtid{});
      AppendQuery(&txn, kTs, kServerId, 7, "db", "BEGIN");
      AppendQuery(&txn, kTs, kServerId, 7, "db", std::string(400, 'x'));
      AppendXid(&txn, kTs, kServerId, static_cast<uint64_t>(i));
      ASSERT_OK((*log)->Commit(&txn).status());
    }
    ASSERT_OK((*log)->Close());
  }
  Source src;
  src.dir = src_dir;
  src.files = {BinlogFileName(kBase, 1)};
  const std::string dir = NewTempDir("mirror_far_damage");
  MirrorOptions mo;
  mo.max_unsynced_bytes = 64 << 10;
  {
    auto m = MirrorLog::Open(dir, kBase, mo);
    ASSERT_OK(m.status());
    ASSERT_OK(Feed(m->get(), Dump(src, src.files.front(), kMagicSize)));
    ASSERT_OK((*m)->Close());
  }
  const std::string path = io::JoinPath(dir, src.files[0]);
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 3 * (64u << 10));
  std::string damaged = bytes;
  damaged[1000] ^= 0x40;  // far more than the window before the end
  WriteFile(path, damaged);
  EXPECT_THAT(MirrorLog::Open(dir, kBase, mo).status(),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(ReadFile(path), damaged) << "nothing changed";
}

// A file start interrupted before the index named it is removed; a file
// after the last indexed one that holds events is refused.
TEST(MirrorLogRecoveryTest, UnindexedFileStartIsRemoved) {
  Source src = MakeSource(Kind::kMySql, 20);
  const std::string dir = NewTempDir("mirror_stray");
  {
    auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
    ASSERT_OK(m.status());
    ASSERT_OK(Feed(m->get(), Dump(src, src.files.front(), kMagicSize)));
    ASSERT_OK((*m)->Close());
  }
  const std::string stray = BinlogFileName(kBase, 99);
  std::string first = ReadFile(io::JoinPath(dir, src.files[0]));
  const uint32_t fde_size = LoadLe32(first.data() + kMagicSize + kEventSizeOffset);
  WriteFile(io::JoinPath(dir, stray), first.substr(0, kMagicSize + fde_size - 7));
  {
    auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
    ASSERT_OK(m.status());
    EXPECT_EQ((*m)->recovery().removed_files, std::vector<std::string>{stray});
  }
  EXPECT_FALSE(io::FileSystem::Default()->Exists(io::JoinPath(dir, stray)).value());
  WriteFile(io::JoinPath(dir, stray), first);
  EXPECT_THAT(MirrorLog::Open(dir, kBase, MirrorOptions()).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// An I/O error poisons the copy: later calls fail, nothing is retried.
TEST(MirrorLogErrorTest, FailedSyncPoisons) {
  Source src = MakeSource(Kind::kMySql, 10);
  const std::string dir = NewTempDir("mirror_poison");
  io::FaultInjectionFileSystem fs;
  MirrorOptions mo;
  mo.file_system = &fs;
  auto m = MirrorLog::Open(dir, kBase, mo);
  ASSERT_OK(m.status());
  std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize);
  ASSERT_OK(Feed(m->get(), stream, 0, 8));
  io::FaultSpec f;
  f.op = io::FaultOp::kSync;
  fs.InjectFault(f);
  EXPECT_FALSE((*m)->Sync().ok());
  EXPECT_THAT((*m)->Sync(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT((*m)->Append(stream[8]), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_FALSE((*m)->Close().ok());
}

TEST(MirrorLogOpenTest, OpenErrorsAsDocumented) {
  const std::string dir = NewTempDir("mirror_open");
  auto m = MirrorLog::Open(dir, kBase, MirrorOptions());
  ASSERT_OK(m.status());
  // One writer per copy.
  EXPECT_THAT(MirrorLog::Open(dir, kBase, MirrorOptions()).status(),
              StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_OK((*m)->Close());
  EXPECT_THAT((*m)->Append(std::string(40, 'x')),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT((*m)->Sync(), StatusIs(absl::StatusCode::kFailedPrecondition));
  MirrorOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_THAT(MirrorLog::Open(io::JoinPath(dir, "missing"), kBase, no_create).status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(MirrorLog::Open(dir, "a/b", MirrorOptions()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // An indexed file that is missing.
  Source src = MakeSource(Kind::kMySql, 20);
  const std::string copy = NewTempDir("mirror_open_missing");
  {
    auto c = MirrorLog::Open(copy, kBase, MirrorOptions());
    ASSERT_OK(c.status());
    ASSERT_OK(Feed(c->get(), Dump(src, src.files.front(), kMagicSize)));
    ASSERT_OK((*c)->Close());
  }
  ASSERT_OK(io::FileSystem::Default()->Remove(io::JoinPath(copy, src.files[1])));
  EXPECT_THAT(MirrorLog::Open(copy, kBase, MirrorOptions()).status(),
              StatusIs(absl::StatusCode::kNotFound));
}

// A short write (disk full) leaves half an event in the file: the copy is
// poisoned, the next Open cuts the torn tail, and the dump from the resume
// point finishes the copy exactly.
TEST(MirrorLogErrorTest, ShortWriteIsCutAtReopen) {
  Source src = MakeSource(Kind::kMySql, 30);
  const std::string dir = NewTempDir("mirror_short_write");
  io::FaultInjectionFileSystem fs;
  MirrorOptions mo;
  mo.file_system = &fs;
  {
    auto m = MirrorLog::Open(dir, kBase, mo);
    ASSERT_OK(m.status());
    std::vector<std::string> stream = Dump(src, src.files.front(), kMagicSize);
    ASSERT_OK(Feed(m->get(), stream, 0, 9));
    ASSERT_OK((*m)->Sync());
    ASSERT_OK(Feed(m->get(), stream, 9, 20));
    io::FaultSpec f;
    f.op = io::FaultOp::kWrite;
    f.kind = io::FaultKind::kShortWrite;
    f.path_substr = kBase;
    fs.InjectFault(f);
    EXPECT_THAT((*m)->Sync(), StatusIs(absl::StatusCode::kResourceExhausted));
    fs.ClearFaults();
    EXPECT_THAT((*m)->Append(stream[20]), StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_FALSE((*m)->Close().ok());
  }
  auto m = MirrorLog::Open(dir, kBase, mo);
  ASSERT_OK(m.status());
  EXPECT_GT((*m)->recovery().bytes_cut, 0u);
  MirrorResumePoint rp = (*m)->ResumePoint();
  ASSERT_OK(Feed(m->get(), Dump(src, rp.position.file, rp.position.pos)));
  ASSERT_OK((*m)->Close());
  ExpectIdentical(src, dir);
}

}  // namespace
}  // namespace binlog
