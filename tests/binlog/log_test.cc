// Tests of the Binlog writer, its readers, rotation, index, purge and
// recovery, on the POSIX file system under TEST_TMPDIR.

#include "binlog/log.h"

#include <sys/stat.h>

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include <mutex>
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/index_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::EventRef;
using testing_util::NewTempDir;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::WriteFile;

#define ASSERT_OK(expr)                         \
  do {                                          \
    absl::Status _s = (expr);                   \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s; \
  } while (0)

Options SmallFiles(uint64_t max_size = 8192) {
  Options o;
  o.max_file_size = max_size;
  o.now_seconds = [] { return 1700000000u; };
  return o;
}

std::unique_ptr<Binlog> OpenOrDie(const std::string& dir, const Options& o) {
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? std::move(*log) : nullptr;
}

TEST(LogTest, WriteCloseReopenReadBack) {
  std::string dir = NewTempDir("roundtrip");
  std::vector<CommitPosition> positions;
  std::vector<std::string> written;
  {
    auto log = OpenOrDie(dir, SmallFiles());
    ASSERT_NE(log, nullptr);
    TransactionBuffer txn;
    for (int i = 0; i < 200; ++i) {
      BuildTransaction(&txn, i, 50 + (i * 37) % 400);
      auto pos = log->Commit(&txn);
      ASSERT_TRUE(pos.ok()) << pos.status();
      EXPECT_EQ(pos->end - pos->start, txn.size());
      if (!positions.empty() && positions.back().file_number == pos->file_number) {
        EXPECT_EQ(pos->start, positions.back().end);
      }
      positions.push_back(*pos);
      written.emplace_back(txn.data());
    }
    EXPECT_GE(log->ListFiles().size(), 5u);
    EXPECT_GE(log->stats().rotations, 4u);
    ASSERT_OK(log->Close());
  }
  // Index content: "./binlog.NNNNNN" lines for every file, in order.
  std::string index = ReadFile(dir + "/binlog.index");
  std::vector<std::string> lines = absl::StrSplit(index, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 5u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i], absl::StrCat("./", BinlogFileName("binlog", i + 1)));
  }
  // Every committed transaction is at its position with its bytes.
  for (size_t i = 0; i < positions.size(); ++i) {
    std::string file = ReadFile(
        absl::StrCat(dir, "/", BinlogFileName("binlog", positions[i].file_number)));
    ASSERT_GE(file.size(), positions[i].end);
    EXPECT_EQ(file.substr(positions[i].start, positions[i].end - positions[i].start),
              written[i]) << "transaction " << i;
  }
  // Reading the directory at rest returns every event, with valid checksums
  // and log_pos chain, each file starting with an FDE and ending with
  // Rotate (or Stop for the last).
  auto reader = Reader::OpenDirectory(dir, "", ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<EventRef> events;
  ASSERT_OK(ReadAll(reader->get(), &events));
  size_t txn_starts = 0;
  uint64_t last_file = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].file != last_file) {
      EXPECT_EQ(events[i].type, kFormatDescriptionEvent);
      EXPECT_EQ(events[i].offset, 4u);
      if (i > 0) {
        EXPECT_EQ(events[i - 1].type, kRotateEvent);
      }
      last_file = events[i].file;
    }
    if (events[i].type == kAnonymousGtidEvent) ++txn_starts;
  }
  EXPECT_EQ(events.back().type, kStopEvent);
  EXPECT_EQ(txn_starts, positions.size());
  // Closed files have the in-use flag clear.
  for (const auto& f : lines) {
    std::string bytes = ReadFile(absl::StrCat(dir, "/", f.substr(2)));
    EXPECT_EQ(bytes[kInUseFlagFileOffset] & kFlagBinlogInUse, 0) << f;
  }

  // Reopen: a new file is started after the last; appends continue.
  {
    auto log = OpenOrDie(dir, SmallFiles());
    ASSERT_NE(log, nullptr);
    EXPECT_FALSE(log->recovery().recovered);
    TransactionBuffer txn;
    BuildTransaction(&txn, 1000, 100);
    auto pos = log->Commit(&txn);
    ASSERT_TRUE(pos.ok());
    EXPECT_EQ(pos->file_number, lines.size() + 1);
    ASSERT_OK(log->Close());
  }
}

// The log's files are not readable by other users: binlogs, the index and
// the lock file are created rw-r----- and the directory rwxr-x--- (MySQL's
// modes; Options::file_mode and directory_mode). They were 0644 and 0755,
// so every row change in an unencrypted binlog was world-readable.
TEST(LogTest, FilesAndDirectoryAreNotReadableByOthers) {
  const mode_t old_umask = ::umask(022);
  std::string dir = NewTempDir("log_modes") + "/sub";
  Options o;
  EXPECT_EQ(o.file_mode, 0640u);
  EXPECT_EQ(o.directory_mode, 0750u);
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  BuildTransaction(&txn, 1, 100);
  ASSERT_TRUE((*log)->Commit(&txn).ok());
  ASSERT_TRUE((*log)->Rotate().ok());
  auto mode = [](const std::string& path) -> unsigned {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return 0;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(dir), 0750u);
  for (const char* name : {"binlog.000001", "binlog.000002", "binlog.index",
                           "binlog.lock"}) {
    EXPECT_EQ(mode(dir + "/" + name), 0640u) << name;
  }
  ASSERT_TRUE((*log)->Close().ok());
  ::umask(old_umask);
}

// Options::file_mode and directory_mode reach every file the log creates:
// the directory, the lock, the index and sync-policy record, files made at
// Open, by a rotation in the commit path, from a spare, and by the
// rotation thread ahead of time.
TEST(LogTest, NonDefaultModesReachEveryFile) {
  const mode_t old_umask = ::umask(0);
  for (bool background : {false, true}) {
    std::string dir = NewTempDir("log_modes_custom") + "/sub";
    Options o;
    o.file_mode = 0600;
    o.directory_mode = 0700;
    o.max_file_size = 4096;
    o.background_rotation = background;
    o.preallocate = io::PreallocMode::kZeroFill;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (int i = 0; i < 40; ++i) {
      BuildTransaction(&txn, i, 300);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Rotate().ok());
    ASSERT_TRUE((*log)->Close().ok());
    auto mode = [](const std::string& path) -> unsigned {
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) return 0;
      return st.st_mode & 07777;
    };
    EXPECT_EQ(mode(dir), 0700u);
    auto names = io::FileSystem::Default()->ListDirectory(dir);
    ASSERT_TRUE(names.ok());
    int binlogs = 0;
    for (const std::string& name : *names) {
      EXPECT_EQ(mode(dir + "/" + name), 0600u) << name << " background " << background;
      binlogs += absl::StartsWith(name, "binlog.0");
    }
    EXPECT_GT(binlogs, 2);
  }
  ::umask(old_umask);
}

TEST(LogTest, SecondWriterIsRefused) {
  std::string dir = NewTempDir("lock");
  auto log = OpenOrDie(dir, SmallFiles());
  ASSERT_NE(log, nullptr);
  auto second = Binlog::Open(dir, "binlog", SmallFiles());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  ASSERT_OK(log->Close());
  auto third = Binlog::Open(dir, "binlog", SmallFiles());
  EXPECT_TRUE(third.ok()) << third.status();
}

TEST(LogTest, InvalidOptionsAreRejected) {
  std::string dir = NewTempDir("options");
  Options o = SmallFiles(100);
  EXPECT_EQ(Binlog::Open(dir, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SmallFiles();
  o.server_version = "5.5.1";
  EXPECT_EQ(Binlog::Open(dir, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Binlog::Open(dir, "../x", SmallFiles()).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SmallFiles();
  o.create_if_missing = false;
  EXPECT_EQ(Binlog::Open(dir + "/missing", "binlog", o).status().code(),
            absl::StatusCode::kNotFound);
  // Reader wake windows: each within [0, 100000] us.
  o = SmallFiles();
  o.reader_wake_coalesce_us = 100001;
  EXPECT_EQ(Binlog::Open(dir, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = SmallFiles();
  o.reader_wake_coalesce_max_us = 100001;
  EXPECT_EQ(Binlog::Open(dir, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A narrowest window above the default widest one (as callers set it
  // before the widest existed) is accepted: a fixed window.
  o = SmallFiles();
  o.reader_wake_coalesce_us = 20000;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_OK((*log)->Close());
}

TEST(LogTest, CommitRejectsBadBuffers) {
  std::string dir = NewTempDir("badbuf");
  auto log = OpenOrDie(dir, SmallFiles());
  TransactionBuffer empty;
  EXPECT_EQ(log->Commit(&empty).status().code(),
            absl::StatusCode::kInvalidArgument);
  TransactionBuffer nocrc(/*checksums=*/false);
  BuildTransaction(&nocrc, 1, 10);
  EXPECT_EQ(log->Commit(&nocrc).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_OK(log->Close());
  TransactionBuffer txn;
  BuildTransaction(&txn, 1, 10);
  EXPECT_EQ(log->Commit(&txn).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(LogTest, ChecksumsOffWritesNoFooters) {
  std::string dir = NewTempDir("nocrc");
  Options o = SmallFiles();
  o.checksums = false;
  auto log = OpenOrDie(dir, o);
  TransactionBuffer txn(false);
  for (int i = 0; i < 50; ++i) {
    BuildTransaction(&txn, i, 300);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
  ASSERT_OK(log->Close());
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(reader.ok());
  std::vector<EventRef> events;
  ASSERT_OK(ReadAll(reader->get(), &events));
  EXPECT_FALSE((*reader)->format_description().has_checksums());
  EXPECT_GT(events.size(), 200u);
}

TEST(LogTest, FileHeaderCallbackEventsFollowTheFde) {
  std::string dir = NewTempDir("header");
  Options o = SmallFiles();
  std::vector<uint64_t> seen;
  o.file_header = [&seen](const FileHeaderContext& ctx, TransactionBuffer* b) {
    seen.push_back(ctx.file_number);
    AppendEmptyPreviousGtids(b, 1, 1);
    AppendQuery(b, 1, 1, 0, "", absl::StrCat("# header of ", ctx.file_name));
    return absl::OkStatus();
  };
  auto log = OpenOrDie(dir, o);
  ASSERT_OK(log->Rotate());
  ASSERT_OK(log->Close());
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2}));
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  std::vector<EventRef> events;
  ASSERT_OK(ReadAll(reader->get(), &events));
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events[0].type, kFormatDescriptionEvent);
  EXPECT_EQ(events[1].type, kPreviousGtidsEvent);
  EXPECT_EQ(events[2].type, kQueryEvent);
  EXPECT_NE(events[2].bytes.find("# header of binlog.000001"), std::string::npos);
}

TEST(LogTest, PurgeRemovesOldFilesButNotActiveOrPinned) {
  std::string dir = NewTempDir("purge");
  auto log = OpenOrDie(dir, SmallFiles());
  for (int i = 0; i < 6; ++i) ASSERT_OK(log->Rotate());
  ASSERT_EQ(log->ListFiles().size(), 7u);
  // A reader holding file 3 stops the purge there.
  ReaderOptions ro;
  ro.start_file = 3;
  auto reader = log->NewReader(ro);
  ASSERT_TRUE(reader.ok());
  Event ev;
  ASSERT_OK((*reader)->Next(&ev));
  EXPECT_EQ(ev.file_number, 3u);
  auto purged = log->PurgeTo(6);
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(log->ListFiles().front().number, 3u);
  EXPECT_FALSE(*io::FileSystem::Default()->Exists(dir + "/binlog.000001"));
  EXPECT_TRUE(*io::FileSystem::Default()->Exists(dir + "/binlog.000003"));
  reader->reset();
  // Never the active file, even when asked for everything.
  purged = log->PurgeTo(1000);
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 4);
  ASSERT_EQ(log->ListFiles().size(), 1u);
  EXPECT_EQ(log->ListFiles().front().number, 7u);
  EXPECT_EQ(ReadFile(dir + "/binlog.index"), "./binlog.000007\n");
  ASSERT_OK(log->Close());
  // The purged log reopens and reads.
  auto log2 = OpenOrDie(dir, SmallFiles());
  ASSERT_NE(log2, nullptr);
  EXPECT_EQ(log2->ListFiles().front().number, 7u);
}

TEST(LogTest, TailingReaderSeesEveryCommitInOrder) {
  std::string dir = NewTempDir("tail");
  auto log = OpenOrDie(dir, SmallFiles(16384));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 150;
  std::atomic<bool> done{false};
  std::vector<std::string> seen_txns;
  absl::Status reader_status;
  std::thread reader_thread([&] {
    auto r = log->NewReader(ReaderOptions());
    if (!r.ok()) {
      reader_status = r.status();
      return;
    }
    Event ev;
    for (;;) {
      absl::Status s = (*r)->Next(&ev);
      if (s.ok()) {
        if (ev.header.type == kRowsQueryEvent) {
          std::string body(ev.body().substr(1));
          seen_txns.push_back(body.substr(0, body.find(' ', 4)));
        }
        continue;
      }
      if (!absl::IsOutOfRange(s)) {
        reader_status = s;
        return;
      }
      s = (*r)->WaitForMore(absl::Now() + absl::Milliseconds(50));
      if (absl::IsCancelled(s)) return;
      if (done.load() && absl::IsDeadlineExceeded(s)) return;
    }
  });
  std::mutex mu;
  std::vector<std::pair<CommitPosition, std::string>> commits;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t id = t * 100000 + i;
        BuildTransaction(&txn, id, 100 + i % 300);
        auto pos = log->Commit(&txn);
        ASSERT_TRUE(pos.ok()) << pos.status();
        std::lock_guard<std::mutex> l(mu);
        commits.emplace_back(*pos, absl::StrCat("txn ", id));
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_OK(log->Close());
  done = true;
  reader_thread.join();
  ASSERT_TRUE(reader_status.ok()) << reader_status;
  std::sort(commits.begin(), commits.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.file_number, a.first.start) <
           std::tie(b.first.file_number, b.first.start);
  });
  ASSERT_EQ(seen_txns.size(), commits.size());
  for (size_t i = 0; i < commits.size(); ++i) {
    EXPECT_EQ(seen_txns[i], commits[i].second) << i;
    if (i > 0 && commits[i].first.file_number == commits[i - 1].first.file_number) {
      EXPECT_EQ(commits[i].first.start, commits[i - 1].first.end);
    }
  }
}

TEST(LogTest, ReaderStartsAtACommitPosition) {
  std::string dir = NewTempDir("startpos");
  auto log = OpenOrDie(dir, SmallFiles(1 << 20));
  TransactionBuffer txn;
  std::vector<CommitPosition> pos;
  for (int i = 0; i < 10; ++i) {
    BuildTransaction(&txn, i, 64);
    pos.push_back(*log->Commit(&txn));
  }
  ReaderOptions ro;
  ro.start_file = pos[5].file_number;
  ro.start_offset = pos[5].start;
  auto r = log->NewReader(ro);
  Event ev;
  ASSERT_OK((*r)->Next(&ev));
  EXPECT_EQ(ev.offset, pos[5].start);
  EXPECT_EQ(ev.header.type, kAnonymousGtidEvent);
  ASSERT_OK(log->Close());
}

// A FileSystem whose fdatasync fails on demand.
class FailingSyncFs : public io::FileSystemWrapper {
 public:
  FailingSyncFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  std::atomic<bool> fail{false};
  std::atomic<int> syncs{0};

  class File : public io::WritableFileWrapper {
   public:
    File(std::unique_ptr<io::WritableFile> f, FailingSyncFs* fs)
        : io::WritableFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Sync() override {
      fs_->syncs++;
      if (fs_->fail) return absl::DataLossError("injected fdatasync EIO");
      return io::WritableFileWrapper::Sync();
    }

   private:
    FailingSyncFs* fs_;
  };

  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    auto f = target()->OpenWritable(path, mode, permissions);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::WritableFile>(new File(std::move(*f), this));
  }
};

TEST(LogTest, SyncEveryGroupSyncsOncePerCommitAndNeverSyncsNone) {
  FailingSyncFs fs;
  std::string dir = NewTempDir("syncpolicy");
  Options o = SmallFiles(1 << 20);
  o.file_system = &fs;
  // The log's own fdatasyncs are counted: no background zero-fill syncs.
  o.zero_ahead = 0;
  auto log = OpenOrDie(dir, o);
  int before = fs.syncs;
  TransactionBuffer txn;
  for (int i = 0; i < 20; ++i) {
    BuildTransaction(&txn, i, 64);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
  EXPECT_EQ(fs.syncs - before, 20);
  EXPECT_EQ(log->stats().commits, 20u);
  ASSERT_OK(log->Close());

  std::string dir2 = NewTempDir("syncnever");
  o.sync_policy = SyncPolicy::kNever;
  log = OpenOrDie(dir2, o);
  before = fs.syncs;
  for (int i = 0; i < 20; ++i) {
    BuildTransaction(&txn, i, 64);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
  EXPECT_EQ(fs.syncs - before, 0);
  // Readers see written data under kNever.
  EXPECT_GT(log->VisibleEnd().end, 0u);
  ASSERT_OK(log->Close());

  std::string dir3 = NewTempDir("syncn");
  o.sync_policy = SyncPolicy::kEveryNGroups;
  o.sync_every_n = 5;
  log = OpenOrDie(dir3, o);
  before = fs.syncs;
  for (int i = 0; i < 20; ++i) {
    BuildTransaction(&txn, i, 64);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
  EXPECT_EQ(fs.syncs - before, 4);
  ASSERT_OK(log->Close());
}

TEST(LogTest, FailedSyncPoisonsTheLogAndHidesTheFailedCommit) {
  FailingSyncFs fs;
  std::string dir = NewTempDir("poison");
  Options o = SmallFiles(1 << 20);
  o.file_system = &fs;
  auto log = OpenOrDie(dir, o);
  TransactionBuffer txn;
  BuildTransaction(&txn, 1, 64);
  auto good = log->Commit(&txn);
  ASSERT_TRUE(good.ok());
  CommitPosition visible = log->VisibleEnd();
  fs.fail = true;
  BuildTransaction(&txn, 2, 64);
  auto bad = log->Commit(&txn);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << bad.status();
  fs.fail = false;  // even when the disk recovers, the log does not retry
  BuildTransaction(&txn, 3, 64);
  auto later = log->Commit(&txn);
  EXPECT_EQ(later.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(later.status().message()),
              ::testing::HasSubstr("injected fdatasync EIO"));
  EXPECT_EQ(log->VisibleEnd().end, visible.end);
  // A reader stops at the last durable commit.
  auto r = log->NewReader(ReaderOptions());
  std::vector<EventRef> events;
  ASSERT_OK(ReadAll(r->get(), &events));
  EXPECT_EQ(events.back().end, good->end);
  EXPECT_FALSE(log->Close().ok());
  log.reset();
  // Reopen recovers to the durable end... the unsynced commit may or may not
  // have reached the disk; here the page cache kept it, so it stays.
  o.file_system = nullptr;
  auto log2 = OpenOrDie(dir, o);
  ASSERT_NE(log2, nullptr);
  EXPECT_TRUE(log2->recovery().recovered);
  ASSERT_OK(log2->Close());
}

}  // namespace
}  // namespace binlog
