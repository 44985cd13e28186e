// Retention: PurgeBefore (by the last event's timestamp), automatic expiry
// (Options::expire_after), Reset (RESET MASTER), ListFiles sizes, and power
// cuts in the middle of a purge or a reset.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::NewTempDir;
using testing_util::ReadFile;

const Uuid& ServerUuid() {
  static const Uuid u = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  return u;
}

// Options with a settable clock for the events the log writes.
struct Clocked {
  std::atomic<uint32_t> now{1000};
  Options options;
  Clocked() {
    options.preallocate = io::PreallocMode::kNone;
    options.server_uuid = ServerUuid();
    options.now_seconds = [this] { return now.load(); };
  }
};

void CommitGtidTxn(Binlog* log, uint64_t id) {
  TransactionBuffer t;
  t.AppendCommitGtid(1700000000, 1, CommitGtid());
  AppendQuery(&t, 1700000000, 1, 7, "db", "BEGIN");
  AppendXid(&t, 1700000000, 1, id);
  ASSERT_TRUE(log->Commit(&t).ok());
}

std::vector<std::string> Names(const std::vector<LogFileInfo>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.name);
  return out;
}

// Files binlog.000001..4: 1-3 rotated at t = 1000, 2000, 3000; 4 active.
std::unique_ptr<Binlog> FourFiles(const std::string& dir, Clocked* c) {
  auto log = Binlog::Open(dir, "binlog", c->options);
  EXPECT_TRUE(log.ok()) << log.status();
  TransactionBuffer t;
  for (uint32_t i = 1; i <= 3; ++i) {
    BuildTransaction(&t, i, 100);
    EXPECT_TRUE((*log)->Commit(&t).ok());
    c->now = 1000 * i;
    EXPECT_TRUE((*log)->Rotate().ok());
  }
  return std::move(*log);
}

TEST(RetentionTest, ListFilesGivesSizes) {
  std::string dir = NewTempDir("retention_sizes");
  Clocked c;
  auto log = FourFiles(dir, &c);
  auto files = log->ListFiles();
  ASSERT_EQ(files.size(), 4u);
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    EXPECT_EQ(files[i].size, ReadFile(io::JoinPath(dir, files[i].name)).size());
    EXPECT_FALSE(files[i].encrypted);
  }
  EXPECT_EQ(files.back().size, log->VisibleEnd().end);
  EXPECT_GT(files.back().size, 4u);
  ASSERT_TRUE(log->Close().ok());
}

TEST(RetentionTest, PurgeBeforeUsesEachFilesLastEvent) {
  std::string dir = NewTempDir("retention_before");
  Clocked c;
  auto log = FourFiles(dir, &c);
  auto r = log->PurgeBefore(absl::FromUnixSeconds(2500));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, (std::vector<std::string>{"binlog.000001", "binlog.000002"}));
  ASSERT_EQ(r->kept.size(), 1u);
  EXPECT_EQ(r->kept[0].file, "binlog.000003");
  EXPECT_TRUE(absl::StrContains(r->kept[0].reason, "not before")) << r->kept[0].reason;
  // Exactly at the last event's time: kept (only strictly older goes).
  r = log->PurgeBefore(absl::FromUnixSeconds(3000));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->purged.empty());
  r = log->PurgeBefore(absl::FromUnixSeconds(100000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->purged, (std::vector<std::string>{"binlog.000003"}));
  ASSERT_EQ(r->kept.size(), 1u);
  EXPECT_EQ(r->kept[0].file, "binlog.000004");
  EXPECT_EQ(r->kept[0].reason, "the active file");
  EXPECT_EQ(Names(log->ListFiles()), (std::vector<std::string>{"binlog.000004"}));
  EXPECT_FALSE(ReadFile(io::JoinPath(dir, "binlog.000001")).size() > 0);
  // The purged GTID set follows the first file.
  ASSERT_TRUE(log->Close().ok());
}

TEST(RetentionTest, PurgeStopsAtAFileAReaderHasOpen) {
  std::string dir = NewTempDir("retention_reader");
  Clocked c;
  auto log = FourFiles(dir, &c);
  ReaderOptions ro;
  ro.start_file = 2;
  auto reader = log->NewReader(ro);
  ASSERT_TRUE(reader.ok());
  Event ev;
  ASSERT_TRUE((*reader)->Next(&ev).ok());  // opens (pins) binlog.000002
  auto r = log->PurgeBefore(absl::FromUnixSeconds(100000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->purged, (std::vector<std::string>{"binlog.000001"}));
  ASSERT_EQ(r->kept.size(), 1u);
  EXPECT_EQ(r->kept[0].file, "binlog.000002");
  EXPECT_EQ(r->kept[0].reason, "open by a reader");
  reader->reset();
  ASSERT_TRUE(log->Close().ok());
}

TEST(RetentionTest, PurgeBeforeReadsARecoveredFileThatEndsWithoutRotate) {
  std::string dir = NewTempDir("retention_recovered");
  io::FaultInjectionFileSystem fs;
  Clocked c;
  c.options.file_system = &fs;
  {
    auto log = Binlog::Open(dir, "binlog", c.options);
    ASSERT_TRUE(log.ok());
    TransactionBuffer t;
    BuildTransaction(&t, 1, 100);  // its events carry 1700000000
    ASSERT_TRUE((*log)->Commit(&t).ok());
    fs.Freeze();
    (*log)->Close().IgnoreError();
  }
  fs.ResetState();
  auto log = Binlog::Open(dir, "binlog", c.options);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->recovery().recovered);
  auto r = (*log)->PurgeBefore(absl::FromUnixSeconds(1700000000));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->purged.empty());
  r = (*log)->PurgeBefore(absl::FromUnixSeconds(1700000001));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->purged, (std::vector<std::string>{"binlog.000001"}));
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(RetentionTest, ExpiryPurgesOldFilesInTheBackground) {
  std::string dir = NewTempDir("retention_expiry");
  Clocked c;
  c.options.expire_after = absl::Seconds(1500);
  auto log = FourFiles(dir, &c);  // the clock is at 3000 now
  // Rotations kicked the expiry: files whose last event is before 1500
  // (binlog.000001 at 1000) go.
  EXPECT_TRUE(testutil::WaitUntil([&] { return log->stats().files_expired >= 1; }));
  EXPECT_EQ(log->stats().files_expired, 1u);
  EXPECT_EQ(log->ListFiles().front().name, "binlog.000002");
  c.now = 10000;
  // Kicks it again: 2 and 3 are old now; 4 was just rotated (at 10000).
  ASSERT_TRUE(log->Rotate().ok());
  EXPECT_TRUE(testutil::WaitUntil([&] { return log->stats().files_expired >= 3; }));
  EXPECT_EQ(log->stats().files_expired, 3u);
  EXPECT_EQ(Names(log->ListFiles()),
            (std::vector<std::string>{"binlog.000004", "binlog.000005"}));
  EXPECT_EQ(log->stats().last_expiry_error, "");
  ASSERT_TRUE(log->Close().ok());
}

TEST(RetentionTest, ResetStartsOverAndIsRefusedWhileReadersAreOpen) {
  std::string dir = NewTempDir("retention_reset");
  Clocked c;
  auto log = Binlog::Open(dir, "binlog", c.options);
  ASSERT_TRUE(log.ok());
  for (int i = 0; i < 3; ++i) CommitGtidTxn(log->get(), i);
  ASSERT_TRUE((*log)->Rotate().ok());
  CommitGtidTxn(log->get(), 3);
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1-4"));
  {
    auto reader = (*log)->NewReader(ReaderOptions());
    ASSERT_TRUE(reader.ok());
    absl::Status s = (*log)->Reset();
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "reader")) << s;
    EXPECT_EQ((*log)->ListFiles().size(), 2u);  // nothing changed
  }
  EXPECT_TRUE(absl::IsInvalidArgument((*log)->Reset(0)));
  ASSERT_TRUE((*log)->Reset().ok());
  EXPECT_EQ(Names((*log)->ListFiles()), (std::vector<std::string>{"binlog.000001"}));
  EXPECT_TRUE((*log)->executed_gtids().empty());
  EXPECT_TRUE((*log)->purged_gtids().empty());
  EXPECT_TRUE(ReadFile(io::JoinPath(dir, "binlog.000002")).empty());
  TransactionBuffer t;
  t.AppendCommitGtid(1700000000, 1, CommitGtid());
  AppendQuery(&t, 1700000000, 1, 7, "db", "BEGIN");
  AppendXid(&t, 1700000000, 1, 9);
  auto p = (*log)->Commit(&t);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->identity.gno, 1);
  EXPECT_EQ(p->identity.sequence_number, 1);
  EXPECT_EQ(p->file_number, 1u);
  ASSERT_TRUE((*log)->Reset(100).ok());
  EXPECT_EQ(Names((*log)->ListFiles()), (std::vector<std::string>{"binlog.000100"}));
  ASSERT_TRUE((*log)->Close().ok());
  auto again = Binlog::Open(dir, "binlog", c.options);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->executed_gtids().empty());
  EXPECT_EQ(Names((*again)->ListFiles()),
            (std::vector<std::string>{"binlog.000100", "binlog.000101"}));
  ASSERT_TRUE((*again)->Close().ok());
}

// The index names exactly the binlog files in the directory.
void ExpectIndexAndFilesAgree(const std::string& dir, const std::string& what) {
  auto index = ReadIndex(io::FileSystem::Default(), dir, "binlog");
  ASSERT_TRUE(index.ok()) << what << ": " << index.status();
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  std::set<uint64_t> on_disk;
  for (const auto& n : *names) {
    uint64_t num;
    if (ParseBinlogFileName("binlog", n, &num)) on_disk.insert(num);
  }
  EXPECT_EQ(std::set<uint64_t>(index->begin(), index->end()), on_disk) << what;
}

TEST(RetentionTest, PowerCutsDuringPurgeAndResetLeaveALogThatOpensCleanly) {
  for (int op = 0; op < 2; ++op) {  // 0: PurgeBefore, 1: Reset
    std::string seed = NewTempDir("retention_cut_seed");
    {
      Clocked c;
      auto log = FourFiles(seed, &c);
      CommitGtidTxn(log.get(), 77);
      ASSERT_TRUE(log->Close().ok());
    }
    for (uint64_t step = 0;; ++step) {
      std::string dir = NewTempDir("retention_cut");
      ASSERT_EQ(std::system(absl::StrCat("cp -a '", seed, "/.' '", dir, "/'").c_str()), 0);
      io::FaultInjectionFileSystem fs;
      Clocked c;
      c.options.file_system = &fs;
      bool done = false;
      {
        auto log = Binlog::Open(dir, "binlog", c.options);
        ASSERT_TRUE(log.ok()) << log.status();
        fs.FreezeAfter(step);
        absl::Status s = op == 0 ? (*log)->PurgeBefore(absl::FromUnixSeconds(2500)).status()
                                 : (*log)->Reset(5);
        done = s.ok() && !fs.frozen();
        (*log)->Close().IgnoreError();
      }
      fs.Freeze();
      io::PowerLossOptions loss;
      loss.data = io::PowerLossOptions::Data::kDropUnsynced;
      loss.seed = step;
      ASSERT_TRUE(fs.SimulatePowerLoss(loss).ok());
      std::string what = absl::StrCat(op == 0 ? "purge" : "reset", " cut at step ", step);
      {
        Clocked c2;
        auto log = Binlog::Open(dir, "binlog", c2.options);
        ASSERT_TRUE(log.ok()) << what << ": " << log.status();
        auto files = Names((*log)->ListFiles());
        std::string executed = (*log)->executed_gtids().ToString();
        if (op == 1 && files.front() == "binlog.000005") {
          // The reset happened: nothing of the old log is left.
          EXPECT_TRUE(executed.empty()) << what << ": " << executed;
        } else {
          // The old log, whole or purged up to a file.
          EXPECT_EQ(executed, absl::StrCat(ServerUuid().ToString(), ":1")) << what;
          EXPECT_TRUE(files.front() == "binlog.000001" || files.front() == "binlog.000002" ||
                      files.front() == "binlog.000003")
              << what << ": " << files.front();
        }
        ASSERT_TRUE((*log)->Close().ok());
      }
      ExpectIndexAndFilesAgree(dir, what);
      if (done) {
        EXPECT_GE(step, 3u) << what;
        break;
      }
      ASSERT_LT(step, 300u);
    }
  }
}

// Blocks FileSize of one path until released (a pause point for reads,
// which the fault-injecting file system does not offer).
class PausingFileSystem : public io::FileSystemWrapper {
 public:
  // std::mutex (not absl::Mutex): ThreadSanitizer sees through it.
  PausingFileSystem() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  void PauseFileSizeOf(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    path_ = path;
    paused_ = false;
    released_ = false;
  }
  void WaitPaused() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return paused_; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    {
      std::unique_lock<std::mutex> l(mu_);
      if (path == path_ && !released_) {
        paused_ = true;
        cv_.notify_all();
        cv_.wait(l, [&] { return released_; });
      }
    }
    return io::FileSystemWrapper::FileSize(path);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::string path_;
  bool paused_ = false;
  bool released_ = false;
};

TEST(RetentionTest, APurgeThatRacesAResetLeavesTheNewFilesAlone) {
  std::string dir = NewTempDir("retention_race_reset");
  PausingFileSystem fs;
  Clocked c;
  c.options.file_system = &fs;
  auto log = FourFiles(dir, &c);  // files 1-3 closed at 1000..3000
  // PurgeBefore reads file 3's last event and stops there (paused).
  fs.PauseFileSizeOf(io::JoinPath(dir, "binlog.000003"));
  absl::StatusOr<PurgeResult> r;
  std::thread purge([&] { r = log->PurgeBefore(absl::FromUnixSeconds(100000)); });
  fs.WaitPaused();
  // Meanwhile: RESET MASTER and two rotations, much later.
  c.now = 90000;
  ASSERT_TRUE(log->Reset().ok());
  ASSERT_TRUE(log->Rotate().ok());
  ASSERT_TRUE(log->Rotate().ok());
  fs.Release();
  purge.join();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->purged.empty());
  EXPECT_EQ(Names(log->ListFiles()), (std::vector<std::string>{
                                         "binlog.000001", "binlog.000002", "binlog.000003"}));
  for (const char* f : {"binlog.000001", "binlog.000002", "binlog.000003"}) {
    EXPECT_FALSE(ReadFile(io::JoinPath(dir, f)).empty()) << f;
  }
  // The new files' times are their own: nothing before 90000 to purge.
  r = log->PurgeBefore(absl::FromUnixSeconds(89999));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->purged.empty());
  ASSERT_TRUE(log->Close().ok());
}

TEST(RetentionTest, PurgeAfterCloseIsRefused) {
  std::string dir = NewTempDir("retention_closed");
  Clocked c;
  auto log = FourFiles(dir, &c);
  ASSERT_TRUE(log->Close().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(log->PurgeTo(3).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      log->PurgeBefore(absl::FromUnixSeconds(100000)).status()));
  EXPECT_EQ(ReadIndex(io::FileSystem::Default(), dir, "binlog")->size(), 4u);
}

TEST(RetentionTest, ResetFlushesTheEngineFirstAndAFailureChangesNothing) {
  std::string dir = NewTempDir("retention_reset_engine");
  Clocked c;
  std::atomic<int> calls{0};
  std::atomic<bool> fail{true};
  c.options.flush_engine_logs = [&] {
    calls.fetch_add(1);
    return fail.load() ? absl::UnavailableError("engine busy") : absl::OkStatus();
  };
  auto log = Binlog::Open(dir, "binlog", c.options);
  ASSERT_TRUE(log.ok());
  CommitGtidTxn(log->get(), 1);
  absl::Status s = (*log)->Reset();
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ((*log)->executed_gtids().ToString(),
            absl::StrCat(ServerUuid().ToString(), ":1"));
  CommitGtidTxn(log->get(), 2);  // not poisoned
  fail = false;
  ASSERT_TRUE((*log)->Reset().ok());
  EXPECT_EQ(calls.load(), 2);
  EXPECT_TRUE((*log)->executed_gtids().empty());
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(RetentionTest, ResetClearsTheMariaDbState) {
  std::string dir = NewTempDir("retention_reset_maria");
  Options o;
  o.flavor = LogFlavor::kMariaDB;
  o.preallocate = io::PreallocMode::kNone;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer t;
    for (int i = 0; i < 3; ++i) {
      t.Clear();
      t.AppendMariaCommitGtid(1700000000, 1, CommitGtid());
      AppendQuery(&t, 1700000000, 1, 7, "db", "INSERT INTO t VALUES (1)");
      AppendXid(&t, 1700000000, 1, i);
      ASSERT_TRUE((*log)->Commit(&t).ok());
    }
    EXPECT_EQ((*log)->mariadb_gtid_state().ToString(), "0-1-3");
    ASSERT_TRUE((*log)->Reset().ok());
    EXPECT_EQ((*log)->mariadb_gtid_state().ToString(), "");
    t.Clear();
    t.AppendMariaCommitGtid(1700000000, 1, CommitGtid());
    AppendQuery(&t, 1700000000, 1, 7, "db", "INSERT INTO t VALUES (1)");
    AppendXid(&t, 1700000000, 1, 9);
    auto p = (*log)->Commit(&t);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->identity.seq_no, 1u);
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ((*log)->mariadb_gtid_state().ToString(), "0-1-1");
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(RetentionTest, OpenRemovesOnlyClosedFilesBelowTheFirstIndexedOne) {
  std::string dir = NewTempDir("retention_leftovers");
  Clocked c;
  {
    auto log = FourFiles(dir, &c);
    ASSERT_TRUE(log->Close().ok());
  }
  // A purge of files 1 and 2 that a crash interrupted after its index
  // update: file 1 stays as it was (closed by Rotate); file 2 is replaced
  // by something that is not a file this log closed.
  testing_util::WriteFile(io::JoinPath(dir, "binlog.index"),
                          "./binlog.000003\n./binlog.000004\n");
  testing_util::WriteFile(io::JoinPath(dir, "binlog.000002"), "an operator's notes");
  auto log = Binlog::Open(dir, "binlog", c.options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->recovery().removed_files, (std::vector<std::string>{"binlog.000001"}));
  EXPECT_EQ((*log)->recovery().ignored_files, (std::vector<std::string>{"binlog.000002"}));
  EXPECT_EQ(ReadFile(io::JoinPath(dir, "binlog.000002")), "an operator's notes");
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog
