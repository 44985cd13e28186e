// Retention of a MirrorLog (binlog/mirror_log.h, PurgeTo and
// ListFileFacts): a purge removes the files before the one named, oldest
// first, never the last file nor a file a reader has open (nor any after
// it), rewrites the index before it removes anything, and a crash between
// the two leaves files that Open removes. Readers and GTID readers of the
// copy then start at the new first file.
//
// The copy is fed the stream a dump sends from the source's first file at
// position 4: an artificial Rotate, then every event of every file as
// stored. The source is a closed library log with small files.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace {

using testing_util::NewTempDir;
using testutil::StatusIs;

constexpr uint32_t kTs = 1700000000;
const char kBase[] = "src-bin";
const char kUuid[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

class MirrorPurgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_dir_ = NewTempDir("mirror_purge_src");
    Options o;
    o.server_id = 1;
    o.max_file_size = 4096;
    o.preallocate = io::PreallocMode::kNone;
    o.server_uuid = *Uuid::Parse(kUuid);
    auto log = Binlog::Open(src_dir_, kBase, o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn(true);
    for (int i = 1; i <= 60; ++i) {
      txn.Clear();
      txn.AppendCommitGtid(kTs + i, 1, CommitGtid{});
      AppendQuery(&txn, kTs + i, 1, 7, "db", "BEGIN");
      AppendQuery(&txn, kTs + i, 1, 7, "db",
                  absl::StrCat("INSERT INTO t VALUES ('", std::string(300, 'a' + i % 26), "')"));
      AppendXid(&txn, kTs + i, 1, static_cast<uint64_t>(i));
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
    auto idx = ReadIndex(io::FileSystem::Default(), src_dir_, kBase);
    ASSERT_TRUE(idx.ok());
    for (uint64_t n : *idx) files_.push_back(BinlogFileName(kBase, n));
    ASSERT_GE(files_.size(), 5u);
    // The stream of a dump from the first file.
    stream_.push_back(EncodeRotateTo(0, 1, files_.front(), kMagicSize, 0, kFlagArtificial, true));
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    auto r = Reader::OpenDirectory(src_dir_, kBase, ro);
    ASSERT_TRUE(r.ok()) << r.status();
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) stream_.emplace_back(ev.data);
    ASSERT_TRUE(absl::IsOutOfRange(s)) << s;
  }

  // A copy in a new directory holding the whole source.
  // `clock`: MirrorOptions::clock (the files' close times).
  std::unique_ptr<MirrorLog> NewCopy(const std::string& tag, io::FileSystem* fs = nullptr,
                                     std::function<absl::Time()> clock = nullptr) {
    copy_dir_ = NewTempDir(tag);
    MirrorOptions mo;
    mo.file_system = fs;
    mo.clock = std::move(clock);
    auto m = MirrorLog::Open(copy_dir_, kBase, mo);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return nullptr;
    for (const std::string& e : stream_) {
      absl::Status s = (*m)->Append(e);
      EXPECT_TRUE(s.ok()) << s;
      if (!s.ok()) return nullptr;
    }
    EXPECT_TRUE((*m)->Sync().ok());
    return std::move(*m);
  }

  std::vector<std::string> Indexed() const {
    std::vector<std::string> out;
    auto idx = ReadIndex(io::FileSystem::Default(), copy_dir_, kBase);
    EXPECT_TRUE(idx.ok()) << idx.status();
    if (idx.ok()) {
      for (uint64_t n : *idx) out.push_back(BinlogFileName(kBase, n));
    }
    return out;
  }
  bool Exists(const std::string& name) const {
    auto e = io::FileSystem::Default()->Exists(copy_dir_ + "/" + name);
    return e.ok() && *e;
  }

  std::string src_dir_, copy_dir_;
  std::vector<std::string> files_;
  std::vector<std::string> stream_;
};

TEST_F(MirrorPurgeTest, PurgeToRemovesTheFilesBeforeTheOneNamed) {
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_to");
  ASSERT_NE(m, nullptr);
  // The copy indexes each ended file on a thread of its own.
  ASSERT_TRUE(testutil::WaitUntil(
      [&] { return Exists(files_[0] + ".gidx") && Exists(files_[1] + ".gidx"); }));
  auto r = m->PurgeTo(files_[2]);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, (std::vector<std::string>{files_[0], files_[1]}));
  EXPECT_TRUE(r->kept_file.empty());
  EXPECT_EQ(Indexed(), std::vector<std::string>(files_.begin() + 2, files_.end()));
  EXPECT_EQ(m->files(), Indexed());
  EXPECT_FALSE(Exists(files_[0]));
  EXPECT_FALSE(Exists(files_[1]));
  EXPECT_TRUE(Exists(files_[2]));
  // Their GTID indexes (binlog/gtid_index.h) went with them.
  EXPECT_FALSE(Exists(files_[0] + ".gidx"));
  EXPECT_FALSE(Exists(files_[1] + ".gidx"));
  EXPECT_EQ(m->stats().files_purged, 2u);

  // Readers start at the new first file; a purged one is NotFound.
  ReaderOptions ro;
  auto reader = m->NewReader(ro);
  ASSERT_TRUE(reader.ok());
  Event ev;
  ASSERT_TRUE((*reader)->Next(&ev).ok());
  EXPECT_EQ((*reader)->file_name(), files_[2]);
  uint64_t n0 = 0;
  ASSERT_TRUE(ParseBinlogFileName(kBase, files_[0], &n0));
  ro.start_file = n0;
  auto gone = m->NewReader(ro);
  if (gone.ok()) {
    EXPECT_THAT((*gone)->Next(&ev), StatusIs(absl::StatusCode::kNotFound));
  }

  // A GTID reader whose set lacks what the new first file's Previous_gtids
  // holds: purged.
  auto g = m->NewGtidReader(GtidSet(), *Uuid::Parse(kUuid), ReaderOptions());
  EXPECT_THAT(g.status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(absl::StrContains(g.status().message(), "purged:")) << g.status();
  // One that has them starts in the new first file.
  auto first_prev = m->published_state().purged;
  EXPECT_FALSE(first_prev.empty());
  auto g2 = m->NewGtidReader(first_prev, *Uuid::Parse(kUuid), ReaderOptions());
  ASSERT_TRUE(g2.ok()) << g2.status();
  ASSERT_TRUE((*g2)->Next(&ev).ok());
  EXPECT_EQ((*g2)->reader()->file_name(), files_[2]);
  ASSERT_TRUE(m->Close().ok());
}

TEST_F(MirrorPurgeTest, PurgeStopsAtAFileAReaderHasOpen) {
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_pinned");
  ASSERT_NE(m, nullptr);
  uint64_t n1 = 0;
  ASSERT_TRUE(ParseBinlogFileName(kBase, files_[1], &n1));
  ReaderOptions ro;
  ro.start_file = n1;
  auto reader = m->NewReader(ro);
  ASSERT_TRUE(reader.ok());
  Event ev;
  ASSERT_TRUE((*reader)->Next(&ev).ok());  // opens (pins) files_[1]
  auto r = m->PurgeTo(files_[3]);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, std::vector<std::string>{files_[0]});
  EXPECT_EQ(r->kept_file, files_[1]);
  EXPECT_EQ(r->kept_reason, "open by a reader");
  EXPECT_TRUE(Exists(files_[1]));
  EXPECT_TRUE(Exists(files_[2]));
  // The reader goes on through the files it holds.
  reader->reset();
  r = m->PurgeTo(files_[3]);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, (std::vector<std::string>{files_[1], files_[2]}));
  ASSERT_TRUE(m->Close().ok());
}

TEST_F(MirrorPurgeTest, TheLastFileStaysAndUnknownFilesAreNotFound) {
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_last");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->PurgeTo("src-bin.999999").status(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(m->PurgeTo("other.000001").status(), StatusIs(absl::StatusCode::kNotFound));
  auto r = m->PurgeTo(files_.back());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged.size(), files_.size() - 1);
  EXPECT_EQ(Indexed(), std::vector<std::string>{files_.back()});
  // The copy goes on: Close, Open, resume point unchanged.
  const MirrorResumePoint before = m->ResumePoint();
  ASSERT_TRUE(m->Close().ok());
  auto again = MirrorLog::Open(copy_dir_, kBase, MirrorOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->ResumePoint().position, before.position);
  EXPECT_EQ((*again)->ResumePoint().gtids, before.gtids);
}

// A file's close time is when the copy started the next file, on the
// copy's clock (here: minute i for the i-th file started after the first),
// whatever the source's timestamps say; kept as the file's modification
// time, it survives a restart. The last file is never closed.
TEST_F(MirrorPurgeTest, ListFileFactsGivesSizesAndLocalCloseTimes) {
  const absl::Time base = absl::FromUnixSeconds(1500000000);
  int calls = 0;
  std::unique_ptr<MirrorLog> m =
      NewCopy("mirror_purge_facts", nullptr, [&] { return base + absl::Minutes(calls++); });
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(calls, static_cast<int>(files_.size()) - 1);
  auto facts = m->ListFileFacts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  ASSERT_EQ(facts->size(), files_.size());
  for (size_t i = 0; i < facts->size(); ++i) {
    const auto& f = (*facts)[i];
    EXPECT_EQ(f.name, files_[i]);
    auto size = io::FileSystem::Default()->FileSize(src_dir_ + "/" + files_[i]);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(f.size, *size);
    if (i + 1 < facts->size()) {
      EXPECT_EQ(f.closed_at, base + absl::Minutes(static_cast<int64_t>(i))) << f.name;
    } else {
      EXPECT_EQ(f.closed_at, absl::InfiniteFuture());
    }
  }
  ASSERT_TRUE(m->Close().ok());
  m.reset();
  auto again = MirrorLog::Open(copy_dir_, kBase, MirrorOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  auto after = (*again)->ListFileFacts();
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), facts->size());
  for (size_t i = 0; i < facts->size(); ++i) {
    EXPECT_EQ((*after)[i].closed_at, (*facts)[i].closed_at) << (*facts)[i].name;
  }
  ASSERT_TRUE((*again)->Close().ok());
}

// A file the source ended without a Rotate (it crashed, and its dump came
// back later with its next file) is closed when that next file began, not
// at its last write: it stayed the copy's last file until then.
TEST_F(MirrorPurgeTest, AFileEndedWithoutARotateClosesWhenTheNextOneBegins) {
  absl::Time now = absl::FromUnixSeconds(1600000000);
  copy_dir_ = NewTempDir("mirror_purge_crashed_source");
  MirrorOptions mo;
  mo.clock = [&now] { return now; };
  auto m = MirrorLog::Open(copy_dir_, kBase, mo);
  ASSERT_TRUE(m.ok()) << m.status();
  // The first file without its Rotate, then the source's next file after
  // a new dump's artificial Rotate.
  size_t i = 0;
  for (; i < stream_.size(); ++i) {
    const EventHeader h = DecodeHeader(stream_[i]);
    if (i > 0 && h.type == kRotateEvent) break;
    ASSERT_TRUE((*m)->Append(stream_[i]).ok());
  }
  ASSERT_LT(i, stream_.size());
  now += absl::Hours(5);  // the source was away
  ASSERT_TRUE((*m)->Append(EncodeRotateTo(0, 1, files_[1], kMagicSize, 0, kFlagArtificial, true))
                  .ok());
  for (++i; i < stream_.size(); ++i) {
    const EventHeader h = DecodeHeader(stream_[i]);
    ASSERT_TRUE((*m)->Append(stream_[i]).ok()) << i;
    if (h.type == kRotateEvent) break;  // the second file is whole
  }
  auto facts = (*m)->ListFileFacts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  ASSERT_GE(facts->size(), 2u);
  EXPECT_EQ((*facts)[0].closed_at, now);
  ASSERT_TRUE((*m)->Close().ok());
}

// The close time cannot be kept (the file system refuses to set it: a
// file another user owns, some network mounts): the copy goes on, counts
// it, and the file ages from its last write instead.
TEST_F(MirrorPurgeTest, ARefusedCloseTimeIsCountedAndTheCopyGoesOn) {
  io::FaultInjectionFileSystem fs;
  copy_dir_ = NewTempDir("mirror_purge_set_time");
  MirrorOptions mo;
  mo.file_system = &fs;
  auto m = MirrorLog::Open(copy_dir_, kBase, mo);
  ASSERT_TRUE(m.ok()) << m.status();
  io::FaultSpec f;
  f.op = io::FaultOp::kSetTime;
  fs.InjectFault(f);
  for (const std::string& e : stream_) ASSERT_TRUE((*m)->Append(e).ok());
  ASSERT_TRUE((*m)->Sync().ok());
  EXPECT_EQ((*m)->files(), files_);
  EXPECT_EQ((*m)->stats().close_times_not_set, 1u);
  EXPECT_EQ(fs.calls(io::FaultOp::kSetTime), files_.size() - 1);
  auto facts = (*m)->ListFileFacts();
  ASSERT_TRUE(facts.ok()) << facts.status();
  ASSERT_EQ(facts->size(), files_.size());
  // The first file's close time is its last write time: a moment before
  // now, and long after the epoch.
  EXPECT_LE((*facts)[0].closed_at, absl::Now());
  EXPECT_GT((*facts)[0].closed_at, absl::Now() - absl::Hours(1));
  ASSERT_TRUE((*m)->Close().ok());
}

// A crash after the index rewrite, before the removals (a removal fails,
// then the power goes): Open removes the files the index no longer names,
// and the copy is whole from the new first file.
TEST_F(MirrorPurgeTest, ACrashBetweenTheIndexAndTheRemovalsIsFinishedByOpen) {
  io::FaultInjectionFileSystem fs;
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_crash", &fs);
  ASSERT_NE(m, nullptr);
  io::FaultSpec f;
  f.op = io::FaultOp::kRemove;
  f.path_substr = "src-bin.00000";  // the binlog files' removals
  f.persistent = true;
  fs.InjectFault(f);
  auto r = m->PurgeTo(files_[3]);
  EXPECT_FALSE(r.ok());
  fs.Freeze();
  m.reset();
  fs.ClearFaults();
  io::PowerLossOptions po;
  po.data = io::PowerLossOptions::Data::kDropUnsynced;
  ASSERT_TRUE(fs.SimulatePowerLoss(po).status().ok());
  EXPECT_EQ(Indexed(), std::vector<std::string>(files_.begin() + 3, files_.end()));
  EXPECT_TRUE(Exists(files_[0]));  // left by the crash
  MirrorOptions mo;
  mo.file_system = &fs;
  auto again = MirrorLog::Open(copy_dir_, kBase, mo);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->recovery().removed_files,
            (std::vector<std::string>{files_[0], files_[1], files_[2]}));
  EXPECT_FALSE(Exists(files_[0]));
  EXPECT_FALSE(Exists(files_[2]));
  EXPECT_EQ((*again)->files(), std::vector<std::string>(files_.begin() + 3, files_.end()));
  ASSERT_TRUE((*again)->Close().ok());
}

// Files below the first indexed one that no interrupted purge names (an
// operator seeded the directory with older files) are not the copy's:
// Open leaves them. A purge that finished leaves no record.
TEST_F(MirrorPurgeTest, OpenKeepsOlderFilesNoPurgeNamed) {
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_seeded");
  ASSERT_NE(m, nullptr);
  auto r = m->PurgeTo(files_[3]);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->purged.size(), 3u);
  ASSERT_TRUE(m->Close().ok());
  m.reset();
  EXPECT_FALSE(Exists(std::string(kBase) + ".purge"));
  // Seeded: files 1 and 3 again, from the source.
  for (int i : {0, 2}) {
    auto text = ReadSmallFile(io::FileSystem::Default(), src_dir_ + "/" + files_[i], 1 << 24);
    ASSERT_TRUE(text.ok()) << text.status();
    auto f = io::FileSystem::Default()->OpenWritable(copy_dir_ + "/" + files_[i],
                                                     io::OpenMode::kCreateOrTruncate);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Write(0, *text).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  auto again = MirrorLog::Open(copy_dir_, kBase, MirrorOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->recovery().removed_files.empty());
  EXPECT_TRUE(Exists(files_[0]));
  EXPECT_TRUE(Exists(files_[2]));
  EXPECT_EQ((*again)->files(), std::vector<std::string>(files_.begin() + 3, files_.end()));
  EXPECT_FALSE(Exists(std::string(kBase) + ".purge"));  // finished
  ASSERT_TRUE((*again)->Close().ok());
}

// A file system whose removals of binlog files wait for a release (the
// first says it has begun).
class GatedRemoveFileSystem : public io::FileSystemWrapper {
 public:
  GatedRemoveFileSystem() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  absl::Status Remove(const std::string& path) override {
    if (armed_ && absl::StrContains(path, "src-bin.0")) {
      entered_.Notify();
      release_.WaitForNotificationWithTimeout(absl::Seconds(60));
    }
    return io::FileSystemWrapper::Remove(path);
  }
  bool armed_ = false;  // set before the purge starts
  testutil::Notification entered_;
  testutil::Notification release_;
};

// The purge's removals run without the copy's lock: the copy's other
// calls go on while they wait.
TEST_F(MirrorPurgeTest, TheRemovalsDoNotHoldTheCopy) {
  GatedRemoveFileSystem fs;
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_unlocked", &fs);
  ASSERT_NE(m, nullptr);
  fs.armed_ = true;
  absl::StatusOr<MirrorLog::PurgeResult> r;
  std::thread purge([&] { r = m->PurgeTo(files_[3]); });
  ASSERT_TRUE(fs.entered_.WaitForNotificationWithTimeout(absl::Seconds(60)));
  testutil::Notification answered;
  std::vector<std::string> seen;
  std::thread other([&] {
    seen = m->files();
    answered.Notify();
  });
  const bool in_time = answered.WaitForNotificationWithTimeout(absl::Seconds(5));
  fs.release_.Notify();
  other.join();
  purge.join();
  EXPECT_TRUE(in_time) << "files() waited for the purge's removals";
  EXPECT_EQ(seen, std::vector<std::string>(files_.begin() + 3, files_.end()));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, std::vector<std::string>(files_.begin(), files_.begin() + 3));
  ASSERT_TRUE(m->Close().ok());
}

// A crash in the index rewrite itself (its rename fails, then the power
// goes): the old index stands and every file is still there.
TEST_F(MirrorPurgeTest, ACrashInTheIndexRewriteKeepsEveryFile) {
  io::FaultInjectionFileSystem fs;
  std::unique_ptr<MirrorLog> m = NewCopy("mirror_purge_crash_index", &fs);
  ASSERT_NE(m, nullptr);
  io::FaultSpec f;
  f.op = io::FaultOp::kRename;
  f.path_substr = ".index";  // the index's, not a GTID index's rename
  fs.InjectFault(f);
  auto r = m->PurgeTo(files_[3]);
  EXPECT_FALSE(r.ok());
  // The copy is poisoned (a write of it failed), as after any failed write.
  EXPECT_THAT(m->Sync(), StatusIs(absl::StatusCode::kFailedPrecondition));
  fs.Freeze();
  m.reset();
  fs.ClearFaults();
  io::PowerLossOptions po;
  po.data = io::PowerLossOptions::Data::kDropUnsynced;
  ASSERT_TRUE(fs.SimulatePowerLoss(po).status().ok());
  EXPECT_EQ(Indexed(), files_);
  MirrorOptions mo;
  mo.file_system = &fs;
  auto again = MirrorLog::Open(copy_dir_, kBase, mo);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->recovery().removed_files.empty());
  EXPECT_EQ((*again)->files(), files_);
  ASSERT_TRUE((*again)->Close().ok());
}

// The copy's GTID readers use the GTID index of their start file (built
// when missing, entries every 512 bytes here) and return each transaction
// the replica lacks once, in order, to the end of the copy.
TEST_F(MirrorPurgeTest, GtidReadersOfTheCopySeekWithTheGtidIndex) {
  MirrorOptions mo;
  mo.gtid_index_interval = 0;  // no builder thread: the reader builds it
  copy_dir_ = NewTempDir("mirror_gtid_seek");
  auto m = MirrorLog::Open(copy_dir_, kBase, mo);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const std::string& e : stream_) ASSERT_TRUE((*m)->Append(e).ok());
  ASSERT_TRUE((*m)->Sync().ok());
  GtidSet have;
  have.AddInterval(*Uuid::Parse(kUuid), 1, 30);
  ReaderOptions ro;
  ro.gtid_index_interval = 512;
  auto g = (*m)->NewGtidReader(have, *Uuid::Parse(kUuid), ro);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<int64_t> gnos;
  Event ev;
  absl::Status s;
  while ((s = (*g)->Next(&ev)).ok()) {
    if (ev.header.type == kGtidEvent) {
      auto d = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
      ASSERT_TRUE(d.ok());
      gnos.push_back(d->gno);
    }
    if (gnos.size() == 30) break;
  }
  std::vector<int64_t> want;
  for (int64_t i = 31; i <= 60; ++i) want.push_back(i);
  EXPECT_EQ(gnos, want);
  // The start file (a closed one: not the last) got its index.
  const std::string start = (*g)->reader()->file_name();
  bool found = false;
  for (size_t i = 0; i + 1 < files_.size(); ++i) found |= Exists(files_[i] + ".gidx");
  EXPECT_TRUE(found) << "no GTID index written; the reader ended in " << start;
  ASSERT_TRUE((*m)->Close().ok());
}

}  // namespace
}  // namespace binlog
