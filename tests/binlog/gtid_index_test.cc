// The GTID index (binlog/gtid_index.h): a GTID reader that jumps by the
// index returns exactly the events of one that reads its start file from
// the first event, for MySQL GTID sets and MariaDB GTID positions at many
// positions, live and at rest, raw and decoded payloads; the log writes the
// index after each rotation; a missing index is rebuilt; a torn, damaged,
// stale or lying index is refused or rebuilt and never makes a reader skip
// or repeat a transaction; purge and Reset remove it; a power cut between a
// binlog file and its index leaves a log the readers read right.

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/keyring.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using internal::GtidIndex;
using internal::GtidIndexPath;

constexpr uint32_t kTs = 1700000000;
const Uuid kUuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
const Uuid kOther = *Uuid::Parse("4e11fa47-71ca-11e1-9e33-c80aa9429563");

// What a reader returned: file, offset, type, index in its payload.
using Seen = std::tuple<uint64_t, uint64_t, int, uint32_t>;

class GtidIndexTest : public ::testing::TestWithParam<LogFlavor> {
 protected:
  void SetUp() override { dir_ = testing_util::NewTempDir("gtid_index"); }
  void TearDown() override {
    log_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(cmd.c_str()), 0);
  }
  bool maria() const { return GetParam() == LogFlavor::kMariaDB; }

  Options LogOptions() {
    Options o;
    o.flavor = GetParam();
    o.max_file_size = 64 << 10;
    o.sync_policy = SyncPolicy::kNever;
    o.server_uuid = kUuid;
    o.gtid_index_interval = writer_interval_;
    if (!maria()) {
      o.compression = io::Codec::kZstd;
      o.compression_threshold = 400;
    }
    if (fs_ != nullptr) o.file_system = fs_;
    return o;
  }
  void OpenLog() {
    auto log = Binlog::Open(dir_, "binlog", LogOptions());
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
  }
  std::string PathOf(uint64_t n) const {
    return io::JoinPath(dir_, BinlogFileName("binlog", n));
  }
  bool Exists(const std::string& p) { return *io::FileSystem::Default()->Exists(p); }

  // `n` transactions of varied sizes and kinds: MySQL: this server's GTIDs,
  // a second UUID's, tagged ones, anonymous ones, compressed or not; MariaDB: domains 0
  // and 1, other servers' GTIDs, seq_nos that go down in domain 1 (no
  // strict mode).
  void Commit(int n) {
    TransactionBuffer txn;
    for (int i = 0; i < n; ++i) {
      txn.Clear();
      const int kind = static_cast<int>(rng_() % 10);
      CommitGtid g;
      if (maria()) {
        if (kind >= 6) {
          g.has_domain_id = true;
          g.domain_id = 1;
        }
        if (kind == 9) {
          g.kind = CommitGtid::Kind::kAssigned;
          g.domain_id = 1;
          g.seq_no = 1 + rng_() % (maria_seq1_ + 3);  // may go down
          maria_seq1_ = std::max(maria_seq1_, g.seq_no);
        } else if (kind >= 6) {
          maria_seq1_ += 1;
        }
        txn.AppendMariaCommitGtid(kTs, kind == 9 ? 7 : 1, g);
      } else {
        if (kind == 8) g.kind = CommitGtid::Kind::kAnonymous;
        if (kind == 7) g.tag = *Tag::Parse("batch");  // a tagged GTID (type 42)
        if (kind == 9) {
          g.kind = CommitGtid::Kind::kAssigned;
          g.uuid = kOther;
          g.gno = ++other_gno_;
          EXPECT_TRUE(log_->AcquireGtid(kOther, g.gno).ok());
        }
        txn.AppendCommitGtid(kTs, 1, g);
        AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      }
      // Random text: compressed transactions stay about as large.
      std::string text(100 + rng_() % 700, ' ');
      for (char& c : text) c = static_cast<char>('a' + rng_() % 26);
      AppendQuery(&txn, kTs, 1, 5, "db", text);
      AppendXid(&txn, kTs, 1, ++xid_);
      auto c = log_->Commit(&txn);
      ASSERT_TRUE(c.ok()) << c.status();
    }
  }

  // Every event until OutOfRange.
  std::vector<Seen> Drain(GtidReader* g) {
    std::vector<Seen> got;
    Event ev;
    absl::Status s;
    while ((s = g->Next(&ev)).ok()) {
      got.emplace_back(ev.file_number, ev.offset, ev.header.type,
                       ev.from_payload ? ev.payload_index + 1 : 0);
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    return got;
  }

  ReaderOptions Ro(bool index, bool raw) {
    ReaderOptions ro;
    ro.payloads = raw ? PayloadMode::kRaw : PayloadMode::kDecoded;
    ro.gtid_index_interval = index ? 4096 : 0;
    return ro;
  }

  // A replica at (have, position): the events with the index (live and at
  // rest) equal those without. Returns how many readers jumped.
  int Check(const GtidSet& have, const MariaGtidState& pos, bool raw,
            const std::string& what) {
    int jumped = 0;
    for (bool at_rest : {false, true}) {
      std::vector<Seen> runs[2];
      uint64_t skipped[2] = {0, 0};
      for (int idx = 0; idx < 2; ++idx) {
        absl::StatusOr<std::unique_ptr<GtidReader>> g;
        if (at_rest) {
          auto st = ReadAtRestGtidState(dir_, "binlog", GetParam(), fs_);
          EXPECT_TRUE(st.ok()) << st.status();
          if (!st.ok()) return jumped;
          g = maria() ? OpenMariaGtidReaderAtRest(dir_, "binlog", *st, pos, Ro(idx, raw), fs_)
                      : OpenGtidReaderAtRest(dir_, "binlog", *st, have, Uuid(), Ro(idx, raw),
                                             fs_);
        } else {
          g = maria() ? log_->NewMariaGtidReader(pos, Ro(idx, raw))
                      : log_->NewGtidReader(have, Ro(idx, raw));
        }
        EXPECT_TRUE(g.ok()) << what << ": " << g.status();
        if (!g.ok()) return jumped;
        runs[idx] = Drain(g->get());
        skipped[idx] = (*g)->skipped_transactions();
        if (idx == 1 && (*g)->jumped_to() != 0) ++jumped;
        ++jumps_checked_;
        if ((*g)->planned_jumps() > 1) ++multi_jumps_;
      }
      EXPECT_EQ(skipped[0], skipped[1]) << what << (at_rest ? " at rest" : " live");
      EXPECT_EQ(runs[0], runs[1]) << what << (at_rest ? " at rest" : " live")
                                  << (raw ? " raw" : " decoded");
    }
    return jumped;
  }

  // Writes a log of several files, closes it (the log indexes every
  // rotated file) and opens it again.
  void BuildLog(int transactions) {
    OpenLog();
    Commit(transactions);
    ASSERT_TRUE(log_->Close().ok());
    log_.reset();
    OpenLog();
  }

  // The GTIDs (MySQL) or GTIDs in order (MariaDB) of the log, read whole.
  std::vector<std::tuple<uint32_t, uint32_t, int64_t, Tsid>> AllGtids() {
    std::vector<std::tuple<uint32_t, uint32_t, int64_t, Tsid>> out;
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    auto r = Reader::OpenDirectory(dir_, "binlog", ro);
    EXPECT_TRUE(r.ok());
    Event ev;
    while ((*r)->Next(&ev).ok()) {
      if (ev.header.type == kGtidEvent || ev.header.type == kGtidTaggedEvent) {
        auto g = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
        out.emplace_back(0, 0, g->gno, g->tsid());
      } else if (ev.header.type == kMariaGtidEvent) {
        auto g = DecodeMariaGtid(ev.body());
        out.emplace_back(g->domain_id, ev.header.server_id, static_cast<int64_t>(g->seq_no),
                         Tsid());
      }
    }
    return out;
  }

  std::string dir_;
  int jumps_checked_ = 0;
  int multi_jumps_ = 0;  // readers that planned more than one jump
  io::FileSystem* fs_ = nullptr;
  uint64_t writer_interval_ = 4096;
  std::unique_ptr<Binlog> log_;
  std::mt19937_64 rng_{42};
  uint64_t xid_ = 0;
  int64_t other_gno_ = 0;
  uint64_t maria_seq1_ = 0;
};

// The property: for replicas at many positions, the same events with and
// without the index; and the index was used for most of them.
TEST_P(GtidIndexTest, SeekGivesTheEventsOfTheFullScan) {
  BuildLog(700);
  const auto files = log_->ListFiles();
  ASSERT_GE(files.size(), 4u);
  // Every file but the active one (the one Close ended: indexed by Open).
  ASSERT_TRUE(log_->Close().ok());
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    EXPECT_TRUE(Exists(GtidIndexPath(PathOf(files[i].number)))) << files[i].name;
  }
  auto index = internal::LoadGtidIndex(io::FileSystem::Default(), PathOf(files[0].number),
                                       GetParam());
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_GE(index->entries.size(), 10u);
  // MySQL: the entries' sets hold tagged GTIDs (the tagged encoding).
  if (!maria()) {
    EXPECT_TRUE(index->entries.back().gtids.HasTags());
  }
  log_.reset();
  OpenLog();

  const auto gtids = AllGtids();
  int jumped = 0, checked = 0;
  for (size_t k = 0; k < gtids.size(); k += 9) {
    GtidSet have;
    MariaGtidState pos;
    if (maria()) {
      // The position after the k-th GTID: per domain the last one so far.
      for (size_t j = 0; j <= k; ++j) {
        pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
                static_cast<uint64_t>(std::get<2>(gtids[j])));
      }
      // A replica with only domain 0, sometimes.
      if (k % 4 == 1) {
        MariaGtidState only0;
        MariaGtidListEntry e;
        if (pos.Position(0, &e)) only0.Add(e);
        pos = only0;
      }
    } else {
      for (size_t j = 0; j <= k; ++j) have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
      // A hole: the replica lacks one early transaction.
      if (k % 4 == 1 && k > 20) {
        GtidSet hole;
        hole.Add(std::get<3>(gtids[k / 2]), std::get<2>(gtids[k / 2]));
        have.Subtract(hole);
      }
    }
    const std::string what = absl::StrCat("after GTID #", k);
    jumped += Check(have, pos, /*raw=*/true, what);
    if (k % 3 == 0) jumped += Check(have, pos, /*raw=*/false, what);
    ++checked;
  }
  // Most positions are inside closed, indexed files.
  EXPECT_GE(jumped, checked / 2) << "jumped " << jumped << " of " << checked << " positions";
  // Files of 64 KiB, read 1 MiB at a time: the gaps between returned
  // ranges are read, not jumped over (one reader reopen per seek).
  EXPECT_EQ(multi_jumps_, 0) << "of " << jumps_checked_;
}

// The log writes no index (gtid_index_interval 0): the first reader builds
// it for its closed start file, not for the active one.
TEST_P(GtidIndexTest, MissingIndexIsRebuiltByTheReader) {
  writer_interval_ = 0;
  OpenLog();
  Commit(400);
  const auto files = log_->ListFiles();
  ASSERT_GE(files.size(), 3u);
  for (const auto& f : files) ASSERT_TRUE(internal::RemoveGtidIndex(
      io::FileSystem::Default(), PathOf(f.number)).ok());
  const auto gtids = AllGtids();
  GtidSet have;
  MariaGtidState pos;
  const size_t k = gtids.size() / 4;  // in the second file or so
  for (size_t j = 0; j <= k; ++j) {
    if (maria()) {
      pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
              static_cast<uint64_t>(std::get<2>(gtids[j])));
    } else {
      have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
    }
  }
  EXPECT_GE(Check(have, pos, true, "rebuilt"), 1);
  int indexed = 0;
  for (const auto& f : files) indexed += Exists(GtidIndexPath(PathOf(f.number)));
  EXPECT_GE(indexed, 1);
  EXPECT_FALSE(Exists(GtidIndexPath(PathOf(files.back().number))));
}

// A file ended by Close (not by a rotation) is indexed by the next Open.
TEST_P(GtidIndexTest, OpenIndexesTheFileCloseEnded) {
  OpenLog();
  Commit(60);
  ASSERT_EQ(log_->ListFiles().size(), 1u);
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  EXPECT_FALSE(Exists(GtidIndexPath(PathOf(1))));
  OpenLog();
  ASSERT_TRUE(log_->Close().ok());  // waits for the builder
  log_.reset();
  EXPECT_TRUE(Exists(GtidIndexPath(PathOf(1))));
  EXPECT_FALSE(Exists(GtidIndexPath(PathOf(2))));
}

// Damage of every kind: a torn tail, a flipped byte anywhere, an entry
// moved off its event boundary with valid CRCs, another file's index, an
// empty file. Each time: the events of the full scan.
TEST_P(GtidIndexTest, DamagedIndexNeverSkipsOrRepeats) {
  BuildLog(400);
  const auto files = log_->ListFiles();
  const std::string bin = PathOf(files[0].number);
  const std::string ipath = GtidIndexPath(bin);
  const std::string good = testing_util::ReadFile(ipath);
  ASSERT_FALSE(good.empty());
  const auto gtids = AllGtids();
  GtidSet have;
  MariaGtidState pos;
  for (size_t j = 0; j < 100 && j < gtids.size(); ++j) {
    if (maria()) {
      pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
              static_cast<uint64_t>(std::get<2>(gtids[j])));
    } else {
      have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
    }
  }
  auto put = [&](const std::string& data) {
    auto f = io::FileSystem::Default()->OpenWritable(ipath, io::OpenMode::kCreateOrTruncate);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Write(0, data).ok());
    ASSERT_TRUE((*f)->Close().ok());
  };
  // Torn at many lengths: the entries before the tear stand.
  size_t last_entries = 0;
  for (size_t len = 0; len <= good.size(); len += 37) {
    auto d = internal::DecodeGtidIndex(absl::string_view(good).substr(0, len));
    if (d.ok()) {
      EXPECT_GE(d->entries.size(), last_entries);
      last_entries = d->entries.size();
    }
    put(good.substr(0, len));
    Check(have, pos, true, absl::StrCat("torn at ", len));
  }
  // A flipped byte.
  for (size_t at = 0; at < good.size(); at += 53) {
    std::string bad = good;
    bad[at] ^= 0x20;
    put(bad);
    Check(have, pos, true, absl::StrCat("byte ", at, " flipped"));
  }
  // Entries off their boundaries, with CRCs that check out.
  auto idx = internal::DecodeGtidIndex(good);
  ASSERT_TRUE(idx.ok());
  for (int delta : {1, -1, 19}) {
    GtidIndex lie = *idx;
    for (auto& e : lie.entries) e.offset += delta;
    put(internal::EncodeGtidIndex(lie));
    Check(have, pos, true, absl::StrCat("offsets moved by ", delta));
  }
  // Returned ranges that lie (a later range start moved).
  {
    GtidIndex lie = *idx;
    for (auto& e : lie.entries) {
      if (e.returned.size() > 1) e.returned.back().first += 3;
    }
    put(internal::EncodeGtidIndex(lie));
    Check(have, pos, true, "returned ranges moved");
  }
  // Another file's index.
  put(testing_util::ReadFile(GtidIndexPath(PathOf(files[1].number))));
  Check(have, pos, true, "another file's index");
  // After all that, the reader rebuilt a good one.
  put("");
  EXPECT_GE(Check(have, pos, true, "empty index"), 1);
  auto again = internal::LoadGtidIndex(io::FileSystem::Default(), bin, GetParam());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->entries.size(), idx->entries.size());
}

// A GTID event whose body is damaged but still decodes (its checksum
// fails): the index built for the file ends before it, so a replica that
// has every GTID, the damaged one's too, reads up to the damage and gets
// the DataLoss of the full read rather than a jump over it.
TEST_P(GtidIndexTest, DamagedEventEndsTheEntries) {
  BuildLog(400);
  const auto files = log_->ListFiles();
  ASSERT_GE(files.size(), 3u);
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  auto gtids = AllGtids();
  // The GTID events of the first file.
  const std::string bin = PathOf(files[0].number);
  std::vector<uint64_t> at;
  {
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    auto r = Reader::OpenFiles({bin}, ro);
    ASSERT_TRUE(r.ok()) << r.status();
    Event ev;
    while ((*r)->Next(&ev).ok()) {
      if (ev.header.type == kGtidEvent || ev.header.type == kGtidTaggedEvent ||
          ev.header.type == kMariaGtidEvent) {
        at.push_back(ev.offset);
      }
    }
  }
  // A replica that has the file's GTIDs but its last one: its reader
  // starts in the file.
  ASSERT_GT(gtids.size(), at.size());
  gtids.resize(at.size() - 1);
  ASSERT_GE(at.size(), 20u);
  const uint64_t damaged = at[at.size() / 2];
  std::string data = testing_util::ReadFile(bin);
  // The low byte of the GNO (MySQL: after flags and UUID) or of the seq_no
  // (MariaDB: first): the event decodes, with another GTID.
  const size_t body = damaged + kHeaderSize + (maria() ? 0 : 17);
  data[body] ^= 0x01;
  {
    auto f = io::FileSystem::Default()->OpenWritable(bin, io::OpenMode::kCreateOrTruncate);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Write(0, data).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  ASSERT_TRUE(internal::RemoveGtidIndex(io::FileSystem::Default(), bin).ok());
  GtidSet have;
  MariaGtidState pos;
  for (const auto& g : gtids) {
    if (maria()) {
      pos.Add(std::get<0>(g), std::get<1>(g), static_cast<uint64_t>(std::get<2>(g)));
    } else {
      have.Add(std::get<3>(g), std::get<2>(g));
    }
  }
  if (!maria()) {
    const EventHeader h = DecodeHeader(absl::string_view(data).substr(damaged, kHeaderSize));
    auto g = DecodeAnyMySqlGtidEvent(
        h.type, absl::string_view(data).substr(damaged + kHeaderSize,
                                               h.event_size - kHeaderSize - 4));
    ASSERT_TRUE(g.ok()) << g.status();
    have.Add(g->tsid(), g->gno);  // the damaged GTID too
  }
  OpenLog();
  for (bool at_rest : {false, true}) {
    for (int idx = 0; idx < 2; ++idx) {
      const std::string what = absl::StrCat(at_rest ? "at rest" : "live",
                                            idx ? " with the index" : " without");
      absl::StatusOr<std::unique_ptr<GtidReader>> g;
      if (at_rest) {
        auto st = ReadAtRestGtidState(dir_, "binlog", GetParam());
        ASSERT_TRUE(st.ok()) << st.status();
        g = maria() ? OpenMariaGtidReaderAtRest(dir_, "binlog", *st, pos, Ro(idx, true))
                    : OpenGtidReaderAtRest(dir_, "binlog", *st, have, Uuid(), Ro(idx, true));
      } else {
        g = maria() ? log_->NewMariaGtidReader(pos, Ro(idx, true))
                    : log_->NewGtidReader(have, Ro(idx, true));
      }
      ASSERT_TRUE(g.ok()) << what << ": " << g.status();
      Event ev;
      absl::Status s;
      while ((s = (*g)->Next(&ev)).ok()) {
      }
      EXPECT_TRUE(absl::IsDataLoss(s)) << what << ": " << s;
      EXPECT_LE((*g)->jumped_to(), damaged) << what;
    }
  }
}

// Records of two indexes of the same file (other spacing) spliced at a
// record boundary: the entries end at the splice (each record's CRC
// chains to the one before it). Without the chain the later index's
// entries would follow, with the returned ranges between the two lost.
TEST_P(GtidIndexTest, SplicedIndexesAreRefused) {
  BuildLog(400);
  const std::string bin = PathOf(log_->ListFiles()[0].number);
  auto a = internal::BuildGtidIndex(io::FileSystem::Default(), bin, GetParam(), 8192,
                                    ReaderOptions());
  auto b = internal::BuildGtidIndex(io::FileSystem::Default(), bin, GetParam(), 3000,
                                    ReaderOptions());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GE(a->entries.size(), 3u);
  GtidIndex a_head = *a;
  a_head.entries.resize(a->entries.size() / 2);
  const uint64_t last = a_head.entries.back().offset;
  // b's entries from the second after `last` on: each one's ranges start
  // past a's last entry.
  size_t j = 0;
  while (j < b->entries.size() && b->entries[j].offset <= last) ++j;
  ++j;
  ASSERT_LT(j, b->entries.size());
  GtidIndex b_head = *b;
  b_head.entries.resize(j);
  const std::string b_all = internal::EncodeGtidIndex(*b);
  const std::string spliced = internal::EncodeGtidIndex(a_head) +
                              b_all.substr(internal::EncodeGtidIndex(b_head).size());
  auto d = internal::DecodeGtidIndex(spliced);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->entries.size(), a_head.entries.size());
}

// Two writers of one index at once (a reader's write-back and the
// builder, another process): the first stopped after opening its
// temporary file, the second writes and renames its index meanwhile.
// The index is one writer's bytes, never a mix; and Open removes
// leftover temporary files and indexes of files the log no longer has.
TEST_P(GtidIndexTest, ConcurrentWritersAndOpenSweep) {
  io::FaultInjectionFileSystem fault;
  fs_ = &fault;
  BuildLog(300);
  const std::string bin = PathOf(log_->ListFiles()[0].number);
  auto a = internal::BuildGtidIndex(&fault, bin, GetParam(), 8192, ReaderOptions());
  auto b = internal::BuildGtidIndex(&fault, bin, GetParam(), 3000, ReaderOptions());
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string ea = internal::EncodeGtidIndex(*a), eb = internal::EncodeGtidIndex(*b);
  ASSERT_LT(ea.size(), eb.size());
  sync::Mutex mu;
  sync::CondVar cv;
  bool a_waiting = false, go = false;
  fault.SetOpHook([&](io::FaultOp op, const std::string& path) {
    if (op != io::FaultOp::kWrite || path.find(".gidx") == std::string::npos) return;
    sync::MutexLock l(&mu);
    if (a_waiting || go) return;  // only the first index write waits
    a_waiting = true;
    cv.SignalAll();
    while (!go) cv.Wait(&mu);
  });
  absl::Status sa;
  std::thread t([&] { sa = internal::WriteGtidIndex(&fault, bin, *a); });
  {
    sync::MutexLock l(&mu);
    while (!a_waiting) cv.Wait(&mu);
  }
  EXPECT_TRUE(internal::WriteGtidIndex(&fault, bin, *b).ok());
  {
    sync::MutexLock l(&mu);
    go = true;
    cv.SignalAll();
  }
  t.join();
  fault.SetOpHook(nullptr);
  EXPECT_TRUE(sa.ok()) << sa;
  const std::string got = testing_util::ReadFile(GtidIndexPath(bin));
  EXPECT_TRUE(got == ea || got == eb) << "a mix of two indexes: " << got.size() << " bytes";
  // Leftovers: a temporary file, an index of a file not in the log.
  const std::string tmp = GtidIndexPath(bin) + ".tmp.0123456789abcdef";
  const std::string orphan = GtidIndexPath(PathOf(999));
  const std::string other = io::JoinPath(dir_, "other.000001.gidx");
  for (const std::string& p : {tmp, orphan, other}) testing_util::WriteFile(p, "x");
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  OpenLog();
  EXPECT_FALSE(Exists(tmp));
  EXPECT_FALSE(Exists(orphan));
  EXPECT_TRUE(Exists(other));  // another basename's
  EXPECT_TRUE(Exists(GtidIndexPath(bin)));
  log_.reset();
  fs_ = nullptr;
}

// Purge and Reset take the index with its file; ListFiles, the index
// file and Open never take an index for a binlog file.
TEST_P(GtidIndexTest, PurgeAndResetRemoveTheIndex) {
  BuildLog(400);
  auto files = log_->ListFiles();
  const size_t n = files.size();
  ASSERT_GE(n, 4u);
  // Reopened with the indexes there: the same files.
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  OpenLog();
  EXPECT_EQ(log_->ListFiles().size(), n + 1);  // Open starts a new file
  auto st = ReadAtRestGtidState(dir_, "binlog", GetParam());
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->files.size(), n + 1);
  ASSERT_TRUE(Exists(GtidIndexPath(PathOf(files[1].number))));
  auto purged = log_->PurgeTo(files[2].number);
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_FALSE(Exists(GtidIndexPath(PathOf(files[0].number))));
  EXPECT_FALSE(Exists(GtidIndexPath(PathOf(files[1].number))));
  EXPECT_TRUE(Exists(GtidIndexPath(PathOf(files[2].number))));
  ASSERT_TRUE(log_->Reset().ok());
  for (const auto& f : files) {
    EXPECT_FALSE(Exists(GtidIndexPath(PathOf(f.number)))) << f.name;
  }
}

// Purge and Reset remove each index before its file (an index never
// outlives its file); an index that cannot be removed does not stop a
// Reset halfway (its error is returned, the log is reset and sound).
TEST_P(GtidIndexTest, IndexRemovedBeforeItsFile) {
  io::FaultInjectionFileSystem fault;
  fs_ = &fault;
  BuildLog(400);
  auto files = log_->ListFiles();
  ASSERT_GE(files.size(), 4u);
  sync::Mutex mu;
  std::vector<std::string> removed;
  fault.SetOpHook([&](io::FaultOp op, const std::string& path) {
    if (op != io::FaultOp::kRemove) return;
    sync::MutexLock l(&mu);
    removed.push_back(path);
  });
  auto purged = log_->PurgeTo(files[2].number);
  ASSERT_TRUE(purged.ok()) << purged.status();
  auto before = [&](const std::string& a, const std::string& b) {
    sync::MutexLock l(&mu);
    auto ia = std::find(removed.begin(), removed.end(), a);
    auto ib = std::find(removed.begin(), removed.end(), b);
    return ia != removed.end() && ib != removed.end() && ia < ib;
  };
  for (int i = 0; i < 2; ++i) {
    const std::string bin = PathOf(files[i].number);
    EXPECT_TRUE(before(GtidIndexPath(bin), bin)) << "purge of " << bin;
  }
  // Reset: the first index removal fails.
  io::FaultSpec f;
  f.op = io::FaultOp::kRemove;
  f.path_substr = ".gidx";
  fault.InjectFault(f);
  {
    sync::MutexLock l(&mu);
    removed.clear();
  }
  absl::Status r = log_->Reset();
  EXPECT_FALSE(r.ok());
  fault.ClearFaults();
  fault.SetOpHook(nullptr);
  for (size_t i = 2; i < files.size(); ++i) {
    const std::string bin = PathOf(files[i].number);
    if (i > 2) {
      EXPECT_FALSE(Exists(GtidIndexPath(bin))) << bin;
    }
    if (files[i].number != 1) {
      EXPECT_FALSE(Exists(bin)) << bin;
    }
    if (Exists(GtidIndexPath(bin))) continue;  // its removal failed
    EXPECT_TRUE(before(GtidIndexPath(bin), bin)) << "reset of " << bin;
  }
  // The log is reset and takes commits.
  EXPECT_EQ(log_->ListFiles().size(), 1u);
  EXPECT_EQ(log_->ListFiles()[0].number, 1u);
  Commit(3);
  log_.reset();
  fs_ = nullptr;
}

// A power cut at every point of writing a few files: the index is never
// synced, so it may be gone, torn or garbage afterwards; the reopened log
// reads right.
TEST_P(GtidIndexTest, PowerCutBetweenBinlogAndIndex) {
  io::FaultInjectionFileSystem fault;
  fs_ = &fault;
  for (int round = 0; round < 6; ++round) {
    OpenLog();
    Commit(120);
    fault.Freeze();
    log_.reset();
    io::PowerLossOptions po;
    po.data = round % 2 ? io::PowerLossOptions::Data::kRandomSectors
                        : io::PowerLossOptions::Data::kDropUnsynced;
    ASSERT_TRUE(fault.SimulatePowerLoss(po).ok());
    OpenLog();
    const auto gtids = AllGtids();
    for (size_t k = 0; k < gtids.size(); k += 41) {
      GtidSet have;
      MariaGtidState pos;
      for (size_t j = 0; j <= k; ++j) {
        if (maria()) {
          pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
                  static_cast<uint64_t>(std::get<2>(gtids[j])));
        } else {
          have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
        }
      }
      Check(have, pos, true, absl::StrCat("round ", round, " after #", k));
    }
    ASSERT_TRUE(log_->Close().ok());
    log_.reset();
    fault.ResetState();
    // Anonymous and other servers' transactions keep their own counters.
    xid_ += 1000;
  }
  fs_ = nullptr;
}

// The writer's index builds fail (every index rename fails): the log is
// not affected, and readers still read right (their own write-back fails
// too).
TEST_P(GtidIndexTest, FailingIndexWritesDoNotHurtTheLog) {
  io::FaultInjectionFileSystem fault;
  fs_ = &fault;
  io::FaultSpec f;
  f.op = io::FaultOp::kRename;
  f.path_substr = ".gidx";
  f.persistent = true;
  fault.InjectFault(f);
  BuildLog(300);
  for (const auto& file : log_->ListFiles()) {
    EXPECT_FALSE(Exists(GtidIndexPath(PathOf(file.number))));
  }
  GtidSet have;
  MariaGtidState pos;
  const auto gtids = AllGtids();
  for (size_t j = 0; j < gtids.size() / 3; ++j) {
    if (maria()) {
      pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
              static_cast<uint64_t>(std::get<2>(gtids[j])));
    } else {
      have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
    }
  }
  // Built in memory, used, not written.
  EXPECT_GE(Check(have, pos, true, "index writes fail"), 1);
  log_.reset();
  fault.ClearFaults();
  fs_ = nullptr;
}

// MirrorLog indexes each copied file a Rotate or Stop ended; the GTID
// readers at rest over the copy use it.
TEST_P(GtidIndexTest, MirrorLogIndexesEndedFiles) {
  OpenLog();
  Commit(300);
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  const std::string copy = testing_util::NewTempDir("gtid_index_copy");
  MirrorOptions mo;
  mo.gtid_index_interval = 4096;
  auto m = MirrorLog::Open(copy, "binlog", mo);
  ASSERT_TRUE(m.ok()) << m.status();
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto src = Reader::OpenDirectory(dir_, "binlog", ro);
  ASSERT_TRUE(src.ok());
  ASSERT_TRUE((*m)->Append(EncodeRotateTo(0, 1, "binlog.000001", kMagicSize, 0,
                                          kFlagArtificial, true)).ok());
  Event ev;
  std::vector<uint64_t> files;
  while ((*src)->Next(&ev).ok()) {
    if (ev.header.type == kFormatDescriptionEvent) {
      files.push_back(ev.file_number);
      auto sent = EncodeSentFormatDescription(ev.data, false);
      ASSERT_TRUE(sent.ok());
      ASSERT_TRUE((*m)->Append(*sent).ok());
      continue;
    }
    absl::Status s = (*m)->Append(ev.data);
    ASSERT_TRUE(s.ok()) << s;
  }
  ASSERT_GE(files.size(), 3u);
  ASSERT_TRUE((*m)->Close().ok());
  for (uint64_t f : files) {
    EXPECT_TRUE(Exists(GtidIndexPath(io::JoinPath(copy, BinlogFileName("binlog", f)))))
        << f;
  }
  // The copy's readers jump.
  const std::string src_dir = dir_;
  dir_ = copy;
  const auto gtids = AllGtids();
  GtidSet have;
  MariaGtidState pos;
  for (size_t j = 0; j < gtids.size() / 2; ++j) {
    if (maria()) {
      pos.Add(std::get<0>(gtids[j]), std::get<1>(gtids[j]),
              static_cast<uint64_t>(std::get<2>(gtids[j])));
    } else {
      have.Add(std::get<3>(gtids[j]), std::get<2>(gtids[j]));
    }
  }
  auto st = ReadAtRestGtidState(copy, "binlog", GetParam());
  ASSERT_TRUE(st.ok());
  auto g = maria() ? OpenMariaGtidReaderAtRest(copy, "binlog", *st, pos, Ro(true, true))
                   : OpenGtidReaderAtRest(copy, "binlog", *st, have, Uuid(), Ro(true, true));
  ASSERT_TRUE(g.ok()) << g.status();
  Drain(g->get());
  EXPECT_NE((*g)->jumped_to(), 0u);
  dir_ = src_dir;
  std::string cmd = "rm -rf '" + copy + "'";
  ASSERT_EQ(::system(cmd.c_str()), 0);
}

// MirrorLog::Close waits for the index builds without the copy's lock:
// while a build is held up, the copy's other calls go on (they see it
// closed).
TEST_P(GtidIndexTest, MirrorCloseDoesNotHoldTheLockForBuilds) {
  OpenLog();
  Commit(200);
  ASSERT_TRUE(log_->Close().ok());
  log_.reset();
  const std::string copy = testing_util::NewTempDir("gtid_index_close");
  io::FaultInjectionFileSystem fault;
  sync::Mutex mu;
  sync::CondVar cv;
  bool held = false, release = false;
  fault.SetOpHook([&](io::FaultOp op, const std::string& path) {
    if (op != io::FaultOp::kOpenWritable || path.find(".gidx") == std::string::npos) return;
    sync::MutexLock l(&mu);
    held = true;
    cv.SignalAll();
    while (!release) cv.Wait(&mu);
  });
  MirrorOptions mo;
  mo.gtid_index_interval = 4096;
  mo.file_system = &fault;
  auto m = MirrorLog::Open(copy, "binlog", mo);
  ASSERT_TRUE(m.ok()) << m.status();
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  auto src = Reader::OpenDirectory(dir_, "binlog", ro);
  ASSERT_TRUE(src.ok());
  ASSERT_TRUE((*m)->Append(EncodeRotateTo(0, 1, "binlog.000001", kMagicSize, 0,
                                          kFlagArtificial, true)).ok());
  Event ev;
  while ((*src)->Next(&ev).ok()) {
    if (ev.header.type == kFormatDescriptionEvent) {
      auto sent = EncodeSentFormatDescription(ev.data, false);
      ASSERT_TRUE(sent.ok());
      ASSERT_TRUE((*m)->Append(*sent).ok());
      continue;
    }
    ASSERT_TRUE((*m)->Append(ev.data).ok());
  }
  {
    sync::MutexLock l(&mu);
    while (!held) cv.Wait(&mu);  // a build is held up writing its index
  }
  absl::Status closed;
  std::thread t([&] { closed = (*m)->Close(); });
  // Until Close has run: the copy answers (Sync after Close is refused).
  absl::Status s;
  while ((s = (*m)->Sync()).ok()) std::this_thread::yield();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  (*m)->end();
  {
    sync::MutexLock l(&mu);
    release = true;
    cv.SignalAll();
  }
  t.join();
  fault.SetOpHook(nullptr);
  EXPECT_TRUE(closed.ok()) << closed;
  m->reset();
  std::string cmd = "rm -rf '" + copy + "'";
  ASSERT_EQ(::system(cmd.c_str()), 0);
}

INSTANTIATE_TEST_SUITE_P(Flavors, GtidIndexTest,
                         ::testing::Values(LogFlavor::kMySQL, LogFlavor::kMariaDB),
                         [](const auto& info) {
                           return info.param == LogFlavor::kMariaDB ? "MariaDB" : "MySQL";
                         });

// An encrypted log gets no index (its GTID states would be in clear), and
// its GTID readers read as before.
TEST(GtidIndexEncrypted, EncryptedLogHasNoIndex) {
  const std::string dir = testing_util::NewTempDir("gtid_index_enc");
  MemoryKeyring keyring;
  Options o;
  o.max_file_size = 16 << 10;
  o.sync_policy = SyncPolicy::kNever;
  o.server_uuid = kUuid;
  o.keyring = &keyring;
  o.encryption = true;
  o.gtid_index_interval = 4096;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  for (int i = 0; i < 200; ++i) {
    txn.Clear();
    txn.AppendCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
    AppendQuery(&txn, kTs, 1, 5, "db", std::string(300, 'q'));
    AppendXid(&txn, kTs, 1, i + 1);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  const auto files = (*log)->ListFiles();
  ASSERT_GE(files.size(), 3u);
  GtidSet have;
  have.AddInterval(kUuid, 1, 150);
  ReaderOptions ro;
  ro.gtid_index_interval = 4096;
  auto g = (*log)->NewGtidReader(have, ro);
  ASSERT_TRUE(g.ok()) << g.status();
  Event ev;
  std::vector<int64_t> gnos;
  while ((*g)->Next(&ev).ok()) {
    if (ev.header.type == kGtidEvent) gnos.push_back(DecodeMySqlGtidEvent(ev.body())->gno);
  }
  ASSERT_EQ(gnos.size(), 50u);
  EXPECT_EQ(gnos.front(), 151);
  EXPECT_EQ((*g)->jumped_to(), 0u);
  ASSERT_TRUE((*log)->Close().ok());
  for (const auto& f : files) {
    EXPECT_FALSE(*io::FileSystem::Default()->Exists(
        GtidIndexPath(io::JoinPath(dir, f.name))))
        << f.name;
  }
  // At rest through the decrypting file system: no index built, loaded
  // or written beside the encrypted files, and the same events.
  log->reset();
  io::FaultInjectionFileSystem fault;  // sees every index write
  int index_writes = 0;
  fault.SetOpHook([&](io::FaultOp op, const std::string& path) {
    if (op == io::FaultOp::kOpenWritable && path.find(".gidx") != std::string::npos) {
      ++index_writes;
    }
  });
  auto dfs = NewDecryptingFileSystem(&fault, &keyring);
  // A planted index of the first file (a plain file's): never read.
  const std::string first = io::JoinPath(dir, files[0].name);
  testing_util::WriteFile(GtidIndexPath(first), "x");
  EXPECT_TRUE(absl::IsFailedPrecondition(
      internal::LoadGtidIndex(dfs.get(), first, LogFlavor::kMySQL).status()));
  auto st = ReadAtRestGtidState(dir, "binlog", LogFlavor::kMySQL, dfs.get());
  ASSERT_TRUE(st.ok()) << st.status();
  for (GtidSet h : {have, GtidSet()}) {
    auto ar = OpenGtidReaderAtRest(dir, "binlog", *st, h, Uuid(), ro, dfs.get());
    ASSERT_TRUE(ar.ok()) << ar.status();
    std::vector<int64_t> at_rest;
    absl::Status s;
    while ((s = (*ar)->Next(&ev)).ok()) {
      if (ev.header.type == kGtidEvent) at_rest.push_back(DecodeMySqlGtidEvent(ev.body())->gno);
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_EQ(at_rest.size(), h.empty() ? 200u : 50u);
    EXPECT_EQ((*ar)->jumped_to(), 0u);
  }
  EXPECT_EQ(index_writes, 0);
  fault.SetOpHook(nullptr);
  for (const auto& f : files) {
    if (f.name == files[0].name) continue;
    EXPECT_FALSE(*io::FileSystem::Default()->Exists(GtidIndexPath(io::JoinPath(dir, f.name))))
        << f.name;
  }
}

// Under PayloadMode::kDecoded a compressed transaction the replica has is
// skipped whole, and the one after it too (the payload ends its
// transaction as it does under kRaw).
TEST(GtidReaderPayloads, DecodedPayloadsSkipWholeTransactions) {
  const std::string dir = testing_util::NewTempDir("gtid_decoded");
  Options o;
  o.sync_policy = SyncPolicy::kNever;
  o.server_uuid = kUuid;
  o.compression = io::Codec::kZstd;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  for (int i = 0; i < 10; ++i) {
    txn.Clear();
    txn.AppendCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
    AppendQuery(&txn, kTs, 1, 5, "db", std::string(1000, 'q'));
    AppendXid(&txn, kTs, 1, i + 1);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  GtidSet have;
  have.AddInterval(kUuid, 1, 5);
  ReaderOptions ro;
  ro.payloads = PayloadMode::kDecoded;
  auto g = (*log)->NewGtidReader(have, ro);
  ASSERT_TRUE(g.ok()) << g.status();
  Event ev;
  std::vector<int64_t> gnos;
  int inner_before_first_gtid = 0;
  while ((*g)->Next(&ev).ok()) {
    if (ev.header.type == kGtidEvent) {
      gnos.push_back(DecodeMySqlGtidEvent(ev.body())->gno);
    } else if (ev.from_payload && gnos.empty()) {
      ++inner_before_first_gtid;
    }
  }
  EXPECT_EQ(gnos, (std::vector<int64_t>{6, 7, 8, 9, 10}));
  EXPECT_EQ(inner_before_first_gtid, 0);
  EXPECT_EQ((*g)->skipped_transactions(), 5u);
}

}  // namespace
}  // namespace binlog
