// Tests of a MirrorLog that follows another server with the same GTID
// history (a failover, MirrorLog::BeginStream): the copy's last file is
// finished where it is (a partial transaction cut), the new server's file
// that holds the copy's GTID position is copied whole, byte for byte, as the
// copy's next file, later files follow under the copy's numbering, and
// `<basename>.sources` maps each of them to the server and its own file
// name, so that a resume after a restart speaks the new server's names.
// GTID readers of the copy return each transaction once although the new
// server's first file repeats some. Crashes between the steps of the switch
// recover to a copy the failover dump then completes the same way.
//
// The two servers are library logs: A (server 1, "a-bin") writes the
// history; B (server 2, "b-bin", other file boundaries) holds A's first
// transactions with A's GTIDs, as a replica with log_slave_updates does,
// then its own.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;
using testutil::StatusIs;

constexpr uint32_t kTs = 1700000000;
const char kUuidA[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const char kUuidB[] = "5f2b0a11-0000-11e1-9e33-c80aa9429562";

struct Server {
  bool maria = false;
  uint32_t id = 0;
  std::string dir;
  std::string base;
  std::vector<std::string> files;
  // Where each transaction ends (file, end offset), in commit order.
  std::vector<std::pair<std::string, uint64_t>> txns;
};

// Server `id` writes `replicated` transactions of server 1's history (A's
// GTIDs, A's server id in their events) then `own` of its own.
Server MakeServer(bool maria, uint32_t id, const std::string& base, const char* uuid,
                  uint64_t max_file_size, int replicated, int own) {
  Server s;
  s.maria = maria;
  s.id = id;
  s.base = base;
  s.dir = NewTempDir(absl::StrCat("failover_", base, maria ? "_maria" : "_mysql"));
  Options o;
  o.server_id = id;
  o.max_file_size = max_file_size;
  o.preallocate = io::PreallocMode::kNone;
  o.server_uuid = *Uuid::Parse(uuid);
  if (maria) o.flavor = LogFlavor::kMariaDB;
  auto log = Binlog::Open(s.dir, base, o);
  EXPECT_TRUE(log.ok()) << log.status();
  const Uuid uuid_a = *Uuid::Parse(kUuidA);
  TransactionBuffer txn(true);
  for (int i = 1; i <= replicated + own; ++i) {
    const bool theirs = i <= replicated;
    const uint32_t origin = theirs ? 1 : id;
    CommitGtid g;
    if (theirs && id != 1) {
      g.kind = CommitGtid::Kind::kAssigned;
      if (maria) {
        g.domain_id = 0;
        g.seq_no = static_cast<uint64_t>(i);
      } else {
        g.uuid = uuid_a;
        g.gno = i;
        EXPECT_TRUE((*log)->AcquireGtid(uuid_a, i).ok());
      }
    }
    txn.Clear();
    if (maria) {
      txn.AppendMariaCommitGtid(kTs, origin, g);
    } else {
      txn.AppendCommitGtid(kTs, origin, g);
      AppendQuery(&txn, kTs, origin, 7, "db", "BEGIN");
    }
    AppendQuery(&txn, kTs, origin, 7, "db",
                absl::StrCat("INSERT INTO t VALUES (", i, ", '", std::string(200 + i % 13, 'x'),
                             "')"));
    AppendXid(&txn, kTs, origin, static_cast<uint64_t>(i));
    auto pos = (*log)->Commit(&txn);
    EXPECT_TRUE(pos.ok()) << pos.status();
    s.txns.emplace_back(BinlogFileName(base, pos->file_number), pos->end);
  }
  EXPECT_TRUE((*log)->Close().ok());
  auto idx = ReadIndex(io::FileSystem::Default(), s.dir, base);
  EXPECT_TRUE(idx.ok());
  for (uint64_t f : *idx) s.files.push_back(BinlogFileName(base, f));
  return s;
}

struct Sent {
  std::string bytes;
  std::string file;  // the server's file the event belongs to
};

// What a dump from `file`:`pos` of `s` sends (by file and position).
std::vector<Sent> Dump(const Server& s, const std::string& file, uint64_t pos) {
  std::vector<Sent> out;
  out.push_back({EncodeRotateTo(0, s.id, file, pos, 0, kFlagArtificial, true), file});
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto reader = Reader::OpenDirectory(s.dir, s.base, ro);
  EXPECT_TRUE(reader.ok()) << reader.status();
  bool started = false;
  for (;;) {
    Event ev;
    absl::Status st = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(st)) break;
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) break;
    const std::string name = BinlogFileName(s.base, ev.file_number);
    if (!started && name != file) continue;
    const bool first_file = !started || name == file;
    started = true;
    if (ev.header.type == kFormatDescriptionEvent) {
      auto fd = EncodeSentFormatDescription(ev.data, first_file && pos > kMagicSize);
      EXPECT_TRUE(fd.ok());
      out.push_back({*fd, name});
      continue;
    }
    if (name == file && ev.offset < pos) continue;
    out.push_back({std::string(ev.data), name});
  }
  return out;
}

absl::Status Feed(MirrorLog* m, const std::vector<Sent>& events, size_t from = 0,
                  size_t to = SIZE_MAX) {
  for (size_t i = from; i < std::min(to, events.size()); ++i) {
    absl::Status s = m->Append(events[i].bytes);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("event ", i, ": ", s.message()));
  }
  return absl::OkStatus();
}

bool IsGtidEvent(const std::string& ev) {
  const uint8_t t = static_cast<uint8_t>(ev[kTypeOffset]);
  return t == kGtidEvent || t == kMariaGtidEvent;
}

// Every GTID `r` returns, in order ("domain-server-seq" or "tsid:gno"),
// and the furthest index jump it made.
void ReadGtids(GtidReader* r, std::vector<std::string>* got, uint64_t* jumped_to = nullptr) {
  for (;;) {
    Event ev;
    absl::Status s = r->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_OK(s);
    if (jumped_to != nullptr) *jumped_to = std::max(*jumped_to, r->jumped_to());
    if (ev.header.type == kMariaGtidEvent) {
      auto g = DecodeMariaGtid(ev.body());
      ASSERT_OK(g.status());
      got->push_back(absl::StrCat(g->domain_id, "-", ev.header.server_id, "-", g->seq_no));
    } else if (ev.header.type == kGtidEvent) {
      auto g = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
      ASSERT_OK(g.status());
      got->push_back(absl::StrCat(g->tsid().ToString(), ":", g->gno));
    }
  }
}

class MirrorLogFailoverTest : public ::testing::TestWithParam<bool> {
 protected:
  static constexpr int kShared = 30;  // A's transactions, B has them all

  void SetUp() override {
    maria_ = GetParam();
    a_ = MakeServer(maria_, 1, "a-bin", kUuidA, 4096, 0, kShared);
    b_ = MakeServer(maria_, 2, "b-bin", kUuidB, 5000, kShared, 20);
    copy_ = NewTempDir(maria_ ? "failover_copy_maria" : "failover_copy_mysql");
    // The copy holds kHeld transactions when A dies inside the next one,
    // in the same file of A; B's file of that next transaction starts at
    // least two transactions earlier (it repeats them).
    for (kHeld = 20; kHeld < kShared - 1; ++kHeld) {
      if (b_.txns[kHeld - 2].first == b_.txns[kHeld].first &&
          a_.txns[kHeld - 1].first == a_.txns[kHeld].first) {
        break;
      }
    }
    ASSERT_LT(kHeld, kShared - 1);
  }

  // Feeds A's dump until transaction kHeld is complete and the next one
  // has begun (its Gtid event and one more): A dies mid-transaction.
  void FollowAUntilItDies(MirrorLog* m) {
    std::vector<Sent> dump = Dump(a_, a_.files.front(), kMagicSize);
    size_t i = 0;
    for (; i < dump.size(); ++i) {
      ASSERT_OK(m->Append(dump[i].bytes));
      const EventHeader h = DecodeHeader(dump[i].bytes);
      if (dump[i].file == a_.txns[kHeld - 1].first && h.log_pos == a_.txns[kHeld - 1].second) {
        break;
      }
    }
    ASSERT_LT(i, dump.size());
    const MirrorResumePoint rp = m->ResumePoint();
    held_file_ = rp.position.file;
    held_end_ = rp.position.pos;
    for (++i; i < dump.size(); ++i) {
      ASSERT_OK(m->Append(dump[i].bytes));
      if (IsGtidEvent(dump[i].bytes)) break;
    }
    ASSERT_OK(m->Append(dump[i + 1].bytes));
    ASSERT_TRUE(m->inside_transaction());
  }

  // B's file that holds the copy's GTID position: the one where the first
  // transaction the copy lacks is (what a GTID dump's first Rotate names).
  std::string FailoverFile() const { return b_.txns[kHeld].first; }

  // The copy after the failover: A's files up to the one A died in (that
  // one cut after transaction kHeld), then B's files from FailoverFile()
  // on, whole, under the copy's names; the map says so.
  void ExpectFailedOverCopy() {
    auto idx = ReadIndex(io::FileSystem::Default(), copy_, "a-bin");
    ASSERT_OK(idx.status());
    size_t b_first = 0;
    while (b_.files[b_first] != FailoverFile()) ++b_first;
    uint64_t a_last = 0;
    ASSERT_TRUE(ParseBinlogFileName("a-bin", held_file_, &a_last));
    ASSERT_EQ(idx->size(), a_last + (b_.files.size() - b_first));
    auto map = ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin");
    ASSERT_OK(map.status());
    // One record: the segment from B's first file on.
    ASSERT_EQ(map->size(), 1u);
    EXPECT_EQ(map->front().file, a_last + 1);
    EXPECT_EQ(map->front().server_id, 2u);
    EXPECT_EQ(map->front().source_file, FailoverFile());
    for (uint64_t n : *idx) {
      const std::string name = BinlogFileName("a-bin", n);
      const std::string copy = ReadFile(io::JoinPath(copy_, name));
      SCOPED_TRACE(name);
      if (n < a_last) {
        EXPECT_TRUE(copy == ReadFile(io::JoinPath(a_.dir, name)));
      } else if (n == a_last) {
        // Cut after the last complete transaction, no Rotate.
        EXPECT_EQ(copy.size(), held_end_);
        EXPECT_TRUE(copy == ReadFile(io::JoinPath(a_.dir, name)).substr(0, held_end_));
      } else {
        const std::string& source = b_.files[b_first + (n - a_last - 1)];
        EXPECT_TRUE(copy == ReadFile(io::JoinPath(b_.dir, source))) << source;
        EXPECT_EQ(SourceFileNameOf(*map, "a-bin", n), source);
      }
    }
  }

  // Every GTID of B's history, each once, from a GTID reader of the copy
  // at rest from the start.
  void ExpectEachTransactionOnce() {
    const LogFlavor flavor = maria_ ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
    auto state = ReadAtRestGtidState(copy_, "a-bin", flavor);
    ASSERT_OK(state.status());
    absl::StatusOr<std::unique_ptr<GtidReader>> r =
        maria_ ? OpenMariaGtidReaderAtRest(copy_, "a-bin", *state, MariaGtidState(),
                                           ReaderOptions())
               : OpenGtidReaderAtRest(copy_, "a-bin", *state, GtidSet(), Uuid(),
                                      ReaderOptions());
    ASSERT_OK(r.status());
    std::vector<std::string> got;
    ReadGtids(r->get(), &got);
    if (HasFatalFailure()) return;
    std::map<std::string, int> seen;
    for (const std::string& g : got) ++seen[g];
    EXPECT_EQ(seen.size(), static_cast<size_t>(kShared + 20));
    for (const auto& [gtid, n] : seen) EXPECT_EQ(n, 1) << gtid << " returned " << n << " times";
  }

  bool maria_ = false;
  int kHeld = 0;  // complete in the copy before the failover
  Server a_, b_;
  std::string copy_;
  std::string held_file_;  // the copy's last file and end before the failover
  uint64_t held_end_ = 0;
};

TEST_P(MirrorLogFailoverTest, NewServersFileIsCopiedWholeAsTheNextFile) {
  {
    auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
    ASSERT_OK(m.status());
    (*m)->BeginStream(1);
    FollowAUntilItDies(m->get());
    if (HasFatalFailure()) return;
    EXPECT_EQ((*m)->source_server_id(), 1u);
    EXPECT_FALSE((*m)->switch_pending());
    // B: a failover. Half its dump, then a restart. Until B's file starts
    // the switch is pending (the copy's end is A's file).
    (*m)->BeginStream(2);
    EXPECT_TRUE((*m)->switch_pending());
    std::vector<Sent> dump = Dump(b_, FailoverFile(), kMagicSize);
    ASSERT_OK(Feed(m->get(), dump, 0, 1));
    EXPECT_TRUE((*m)->switch_pending());
    EXPECT_EQ((*m)->SourceFileName((*m)->durable_end().file), held_file_);
    ASSERT_OK(Feed(m->get(), dump, 1, 2));
    EXPECT_FALSE((*m)->switch_pending());
    EXPECT_EQ((*m)->SourceFileName((*m)->durable_end().file), FailoverFile());
    ASSERT_OK(Feed(m->get(), dump, 2, dump.size() / 2));
    EXPECT_EQ((*m)->source_server_id(), 2u);
    ASSERT_OK((*m)->Close());
  }
  auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
  ASSERT_OK(m.status());
  const MirrorResumePoint rp = (*m)->ResumePoint();
  EXPECT_EQ(rp.server_id, 2u);
  EXPECT_EQ(rp.position.file.substr(0, 6), "b-bin.");  // the source's name
  EXPECT_EQ((*m)->SourceFileName((*m)->files().back()), rp.position.file);
  // The same server again: by file and position, in its names.
  (*m)->BeginStream(2);
  ASSERT_OK(Feed(m->get(), Dump(b_, rp.position.file, rp.position.pos)));
  ASSERT_OK((*m)->Close());
  ExpectFailedOverCopy();
  ExpectEachTransactionOnce();
  if (HasFailure()) return;
  // A map with a record per file (as earlier versions wrote it) names the
  // files the same way.
  auto idx = ReadIndex(io::FileSystem::Default(), copy_, "a-bin");
  auto map = ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin");
  ASSERT_OK(idx.status());
  ASSERT_OK(map.status());
  std::vector<SourceFileRecord> per_file;
  for (uint64_t n : *idx) {
    if (n >= map->front().file) per_file.push_back({n, 2, SourceFileNameOf(*map, "a-bin", n)});
  }
  ASSERT_GT(per_file.size(), 1u);
  {
    auto dir = io::FileSystem::Default()->OpenDirectory(copy_);
    ASSERT_OK(dir.status());
    ASSERT_OK(WriteSourceMap(io::FileSystem::Default(), dir->get(), copy_, "a-bin", per_file));
  }
  auto again = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
  ASSERT_OK(again.status());
  EXPECT_EQ((*again)->ResumePoint().position.file, b_.files.back());
  for (const SourceFileRecord& r : per_file) {
    EXPECT_EQ((*again)->SourceFileName(BinlogFileName("a-bin", r.file)), r.source_file);
  }
  ASSERT_OK((*again)->Close());
}

// A GTID reader that jumps with the GTID index (rebuilt a few
// transactions apart) in a failed-over copy returns what a scan returns,
// each GTID once. (The groups a jump passes are the replica's, at or
// before its position; a new server's first file repeats only groups
// after its own Gtid_list, and a reader starts in the newest file whose
// Gtid_list is at or before the position: the repeats never include a
// group the jump passed, with per-domain increasing seq_nos.)
TEST_P(MirrorLogFailoverTest, AnIndexJumpInAFailedOverCopyReturnsWhatAScanReturns) {
  {
    auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
    ASSERT_OK(m.status());
    (*m)->BeginStream(1);
    FollowAUntilItDies(m->get());
    if (HasFatalFailure()) return;
    (*m)->BeginStream(2);
    ASSERT_OK(Feed(m->get(), Dump(b_, FailoverFile(), kMagicSize)));
    ASSERT_OK((*m)->Close());
  }
  // The replica has A's transactions up to kHeld - 1 (B's first file
  // repeats kHeld - 1 and kHeld).
  const LogFlavor flavor = maria_ ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
  auto state = ReadAtRestGtidState(copy_, "a-bin", flavor);
  ASSERT_OK(state.status());
  const Uuid uuid_a = *Uuid::Parse(kUuidA);
  auto read_all = [&](uint64_t index_interval, std::vector<std::string>* got,
                      uint64_t* jumped_to) {
    // Indexes rebuilt at this interval (a few transactions apart).
    auto names = io::FileSystem::Default()->ListDirectory(copy_);
    ASSERT_OK(names.status());
    for (const std::string& n : *names) {
      if (absl::EndsWith(n, ".gidx")) {
        ASSERT_OK(io::FileSystem::Default()->Remove(io::JoinPath(copy_, n)));
      }
    }
    ReaderOptions ro;
    ro.gtid_index_interval = index_interval;
    absl::StatusOr<std::unique_ptr<GtidReader>> r;
    if (maria_) {
      MariaGtidState pos;
      pos.Add(0, 1, static_cast<uint64_t>(kHeld - 1));
      r = OpenMariaGtidReaderAtRest(copy_, "a-bin", *state, pos, ro);
    } else {
      GtidSet have;
      have.AddInterval(uuid_a, 1, kHeld - 1);
      r = OpenGtidReaderAtRest(copy_, "a-bin", *state, have, Uuid(), ro);
    }
    ASSERT_OK(r.status());
    ReadGtids(r->get(), got, jumped_to);
  };
  std::vector<std::string> scanned, jumped;
  uint64_t scan_jump = 0, index_jump = 0;
  read_all(0, &scanned, &scan_jump);
  if (HasFatalFailure()) return;
  read_all(64, &jumped, &index_jump);
  if (HasFatalFailure()) return;
  EXPECT_EQ(scan_jump, 0u);
  EXPECT_GT(index_jump, 0u) << "the reader did not jump";
  EXPECT_EQ(jumped, scanned);
  // kHeld, then B's own (kShared - kHeld of A's history and 20 of its
  // own), each once.
  EXPECT_EQ(scanned.size(), static_cast<size_t>(kShared - kHeld + 1 + 20))
      << absl::StrJoin(scanned, " ");
  EXPECT_EQ(std::set<std::string>(jumped.begin(), jumped.end()).size(), jumped.size())
      << absl::StrJoin(jumped, " ");
}

// Retention's facts: every file but the last has a close time on the
// copy's clock, the file the failover ended (no Rotate, as a crashed
// source's last file) too: when the new server's first file began.
TEST_P(MirrorLogFailoverTest, EveryClosedFileHasACloseTimeAcrossAFailover) {
  auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
  ASSERT_OK(m.status());
  (*m)->BeginStream(1);
  FollowAUntilItDies(m->get());
  if (HasFatalFailure()) return;
  const absl::Time failover = absl::Now() - absl::Milliseconds(1);
  (*m)->BeginStream(2);
  ASSERT_OK(Feed(m->get(), Dump(b_, FailoverFile(), kMagicSize)));
  const absl::Time end = absl::Now() + absl::Milliseconds(1);
  auto facts = (*m)->ListFileFacts();
  ASSERT_OK(facts.status());
  uint64_t a_last = 0;
  ASSERT_TRUE(ParseBinlogFileName("a-bin", held_file_, &a_last));
  ASSERT_GT(facts->size(), a_last + 1);
  for (size_t i = 0; i + 1 < facts->size(); ++i) {
    SCOPED_TRACE((*facts)[i].name);
    EXPECT_LE((*facts)[i].closed_at, end);
    if ((*facts)[i].number >= a_last) {
      EXPECT_GE((*facts)[i].closed_at, failover);
    }
  }
  EXPECT_EQ(facts->back().closed_at, absl::InfiniteFuture());
  // Asked again: the same.
  auto again = (*m)->ListFileFacts();
  ASSERT_OK(again.status());
  ASSERT_EQ(again->size(), facts->size());
  for (size_t i = 0; i < facts->size(); ++i) {
    EXPECT_EQ((*again)[i].closed_at, (*facts)[i].closed_at);
  }
  ASSERT_OK((*m)->Close());
}

TEST_P(MirrorLogFailoverTest, FailoverDumpMustStartAFileOfTheDeclaredServer) {
  auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
  ASSERT_OK(m.status());
  (*m)->BeginStream(1);
  FollowAUntilItDies(m->get());
  if (HasFatalFailure()) return;
  const MirrorPosition end = (*m)->end();
  // Inside a file: refused.
  (*m)->BeginStream(2);
  EXPECT_THAT((*m)->Append(EncodeRotateTo(0, 2, FailoverFile(), 200, 0, kFlagArtificial, true)),
              StatusIs(absl::StatusCode::kOutOfRange));
  // A file another server wrote (declared 3, B's file is server 2's).
  (*m)->BeginStream(3);
  std::vector<Sent> dump = Dump(b_, FailoverFile(), kMagicSize);
  ASSERT_OK((*m)->Append(dump[0].bytes));
  EXPECT_THAT((*m)->Append(dump[1].bytes), StatusIs(absl::StatusCode::kOutOfRange));
  // Nothing changed: A, back, continues its file.
  EXPECT_EQ((*m)->end(), end);
  EXPECT_EQ((*m)->files().size(), ReadIndex(io::FileSystem::Default(), copy_, "a-bin")->size());
  (*m)->BeginStream(1);
  const MirrorResumePoint rp = (*m)->ResumePoint();
  ASSERT_OK(Feed(m->get(), Dump(a_, rp.position.file, rp.position.pos)));
  ASSERT_OK((*m)->Close());
  for (const std::string& name : a_.files) {
    EXPECT_TRUE(ReadFile(io::JoinPath(copy_, name)) == ReadFile(io::JoinPath(a_.dir, name)))
        << name;
  }
  auto map = ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin");
  ASSERT_OK(map.status());
  EXPECT_TRUE(map->empty());
}

// A new server's file name goes into `<basename>.sources`, a text file
// read back at every Open: a name with whitespace, a control byte or a
// non-ASCII byte, or too long, is refused before anything changes (it
// would make the copy impossible to reopen, or add lines to the map).
TEST_P(MirrorLogFailoverTest, SourceFileNamesTheMapCannotHoldAreRefused) {
  auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
  ASSERT_OK(m.status());
  (*m)->BeginStream(1);
  FollowAUntilItDies(m->get());
  if (HasFatalFailure()) return;
  const MirrorPosition end = (*m)->end();
  (*m)->BeginStream(2);
  const std::string digits = FailoverFile().substr(FailoverFile().rfind('.'));
  for (const std::string& bad :
       {std::string("b bin") + digits, std::string("b-bin\nfile 9 server 3 source x") + digits,
        std::string("b-bin\x01") + digits, std::string("b-bin\xc3\xa9") + digits,
        std::string("b-bin\t") + digits, std::string(kMaxSourceFileNameLength, 'b') + digits}) {
    SCOPED_TRACE(bad.substr(0, 40));
    EXPECT_THAT((*m)->Append(EncodeRotateTo(0, 2, bad, kMagicSize, 0, kFlagArtificial, true)),
                StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_FALSE(IsValidSourceFileName(bad));
  }
  EXPECT_EQ((*m)->end(), end);
  EXPECT_TRUE(ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin")->empty());
  EXPECT_TRUE(IsValidSourceFileName(std::string(kMaxSourceFileNameLength - digits.size(), 'b') +
                                    digits));
  // The real dump still switches, and the copy reopens.
  ASSERT_OK(Feed(m->get(), Dump(b_, FailoverFile(), kMagicSize)));
  ASSERT_OK((*m)->Close());
  ExpectFailedOverCopy();
  // A map holding such a name (written by hand) is DataLoss.
  auto dir = io::FileSystem::Default()->OpenDirectory(copy_);
  ASSERT_OK(dir.status());
  ASSERT_OK(WriteSourceMap(io::FileSystem::Default(), dir->get(), copy_, "x-bin",
                           {SourceFileRecord{1, 2, "b-bin\x01.000001"}}));
  EXPECT_THAT(ReadSourceMap(io::FileSystem::Default(), copy_, "x-bin").status(),
              StatusIs(absl::StatusCode::kDataLoss));
}

// A crash at each step of the switch: after the map record (the file not
// created), after the file's creation (not indexed), after the index (the
// switch done). Reopened, the copy is consistent and the failover dump (or
// its resume) completes it exactly.
TEST_P(MirrorLogFailoverTest, CrashDuringTheSwitchRecovers) {
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step);
    copy_ = NewTempDir(absl::StrCat("failover_crash_", step, maria_ ? "_maria" : "_mysql"));
    io::FaultInjectionFileSystem fs;
    MirrorOptions mo;
    mo.file_system = &fs;
    {
      auto m = MirrorLog::Open(copy_, "a-bin", mo);
      ASSERT_OK(m.status());
      (*m)->BeginStream(1);
      FollowAUntilItDies(m->get());
      if (HasFatalFailure()) return;
      (*m)->BeginStream(2);
      std::vector<Sent> dump = Dump(b_, FailoverFile(), kMagicSize);
      uint64_t a_last = 0;
      ASSERT_TRUE(ParseBinlogFileName("a-bin", (*m)->files().back(), &a_last));
      io::FaultSpec f;
      f.persistent = true;
      if (step == 0) {
        f.op = io::FaultOp::kOpenWritable;
        f.path_substr = BinlogFileName("a-bin", a_last + 1);
      } else if (step == 1) {
        f.op = io::FaultOp::kRename;
        f.path_substr = "a-bin.index";
      }
      if (step < 2) {
        fs.InjectFault(f);
        ASSERT_OK((*m)->Append(dump[0].bytes));
        EXPECT_FALSE((*m)->Append(dump[1].bytes).ok());
      } else {
        ASSERT_OK(Feed(m->get(), dump, 0, 2));
      }
      ASSERT_OK(fs.SimulatePowerLoss(io::PowerLossOptions()).status());
      fs.ClearFaults();
      (*m)->Close().IgnoreError();  // the crash: what is on disk is what counts
    }
    auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
    ASSERT_OK(m.status());
    const MirrorResumePoint rp = (*m)->ResumePoint();
    if (step < 2) {
      // Back to A's copy: the record and the file are gone.
      EXPECT_EQ(rp.server_id, 1u);
      EXPECT_EQ(rp.position.file, held_file_);
      EXPECT_EQ(rp.position.pos, held_end_);
      (*m)->BeginStream(2);
      ASSERT_OK(Feed(m->get(), Dump(b_, FailoverFile(), kMagicSize)));
    } else {
      EXPECT_EQ(rp.server_id, 2u);
      (*m)->BeginStream(2);
      ASSERT_OK(Feed(m->get(), Dump(b_, rp.position.file, rp.position.pos)));
    }
    ASSERT_OK((*m)->Close());
    ExpectFailedOverCopy();
  }
}

// A crash after the failover's map record (the file not created), then
// the old server comes back: the record is dropped on disk by the reopen,
// before anything else, so the old server's next file is not bound to the
// new server's name by the next Open. A record left so by an older copy
// (its server id is not the one of the file's Format_description) is
// dropped too.
TEST_P(MirrorLogFailoverTest, StaleRecordOfACrashedSwitchNeverBindsToALaterFile) {
  // A with more files than the one it dies in (its first files the same).
  a_ = MakeServer(maria_, 1, "a-bin", kUuidA, 4096, 0, kShared + 20);
  io::FaultInjectionFileSystem fs;
  MirrorOptions mo;
  mo.file_system = &fs;
  {
    auto m = MirrorLog::Open(copy_, "a-bin", mo);
    ASSERT_OK(m.status());
    (*m)->BeginStream(1);
    FollowAUntilItDies(m->get());
    if (HasFatalFailure()) return;
    uint64_t a_last = 0;
    ASSERT_TRUE(ParseBinlogFileName("a-bin", (*m)->files().back(), &a_last));
    (*m)->BeginStream(2);
    std::vector<Sent> dump = Dump(b_, FailoverFile(), kMagicSize);
    io::FaultSpec f;
    f.persistent = true;
    f.op = io::FaultOp::kOpenWritable;
    f.path_substr = BinlogFileName("a-bin", a_last + 1);
    fs.InjectFault(f);
    ASSERT_OK((*m)->Append(dump[0].bytes));
    EXPECT_FALSE((*m)->Append(dump[1].bytes).ok());
    ASSERT_OK(fs.SimulatePowerLoss(io::PowerLossOptions()).status());
    fs.ClearFaults();
    (*m)->Close().IgnoreError();
  }
  ASSERT_EQ(ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin")->size(), 1u);
  {
    auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
    ASSERT_OK(m.status());
    // Dropped on disk by the Open itself.
    EXPECT_TRUE(ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin")->empty());
    // A comes back and goes on into its next file.
    (*m)->BeginStream(1);
    const MirrorResumePoint rp = (*m)->ResumePoint();
    ASSERT_EQ(rp.position.file, held_file_);
    ASSERT_OK(Feed(m->get(), Dump(a_, rp.position.file, rp.position.pos)));
    ASSERT_GT((*m)->files().size(), 1u);
    ASSERT_NE((*m)->files().back(), held_file_);
    ASSERT_OK((*m)->Close());
  }
  auto check = [&] {
    auto m = MirrorLog::Open(copy_, "a-bin", MirrorOptions());
    ASSERT_OK(m.status());
    const MirrorResumePoint rp = (*m)->ResumePoint();
    EXPECT_EQ(rp.server_id, 1u);
    EXPECT_EQ(rp.position.file, a_.files.back());
    EXPECT_EQ((*m)->SourceFileName((*m)->files().back()), a_.files.back());
    ASSERT_OK((*m)->Close());
    EXPECT_TRUE(ReadSourceMap(io::FileSystem::Default(), copy_, "a-bin")->empty());
  };
  check();
  if (HasFatalFailure()) return;
  // What an older copy could hold: a record naming server 2 for the last
  // file, which server 1 wrote.
  uint64_t last = 0;
  ASSERT_TRUE(ParseBinlogFileName("a-bin", a_.files.back(), &last));
  {
    auto dir = io::FileSystem::Default()->OpenDirectory(copy_);
    ASSERT_OK(dir.status());
    ASSERT_OK(WriteSourceMap(io::FileSystem::Default(), dir->get(), copy_, "a-bin",
                             {SourceFileRecord{last, 2, FailoverFile()}}));
  }
  check();
}

INSTANTIATE_TEST_SUITE_P(Flavors, MirrorLogFailoverTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "MariaDb" : "MySql";
                         });

}  // namespace
}  // namespace binlog
