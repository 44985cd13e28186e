// Regression tests for the correctness defects of the write path, close and
// recovery (one test or more per defect). Each drives the interleaving that
// exposed the defect deterministically: a pause point of the fault-injecting
// file system (FaultInjectionFileSystem::SetOpHook) holds a thread inside a
// chosen file-system call, and the test waits for conditions it can observe
// (a request queued in the commit pipeline, a thread blocked in the hook),
// never for time to pass.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using io::FaultInjectionFileSystem;
using io::FaultKind;
using io::FaultOp;
using io::FaultSpec;
using testing_util::BuildTransaction;
using testing_util::NewTempDir;

// Waits (yielding) until `cond` holds; aborts the test binary after 60 s so
// a broken test cannot hang CI. Not a timing assumption: the condition is
// reached by the program's own progress.
void WaitUntil(const std::function<bool()>& cond, const char* what) {
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!cond()) {
    if (absl::Now() > deadline) {
      ADD_FAILURE() << "timed out waiting for: " << what;
      std::abort();
    }
    std::this_thread::yield();
  }
}

// A pause point: the hook blocks calls that match until Open() is called.
class Gate {
 public:
  // Blocks the calling thread if `match` is true and the gate is closed.
  void MaybeBlock(bool match) {
    if (!match) return;
    std::unique_lock<std::mutex> l(mu_);
    if (open_) return;
    ++blocked_;
    cv_.notify_all();
    cv_.wait(l, [this] { return open_; });
    --blocked_;
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int blocked() {
    std::lock_guard<std::mutex> l(mu_);
    return blocked_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int blocked_ = 0;
};

class CorrectnessTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = NewTempDir("correctness"); }
  void TearDown() override { fs_.SetOpHook(nullptr); }

  Options BaseOptions() {
    Options o;
    o.file_system = &fs_;
    o.preallocate = io::PreallocMode::kNone;
    return o;
  }

  std::unique_ptr<Binlog> OpenLog(const Options& o) {
    auto log = Binlog::Open(dir_, "binlog", o);
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? std::move(*log) : nullptr;
  }

  std::string FilePath(uint64_t n) {
    return io::JoinPath(dir_, BinlogFileName("binlog", n));
  }

  // Blocks the first fdatasync of the first binlog file behind `gate`.
  void BlockFirstLogSync(Gate* gate) {
    auto seen = std::make_shared<std::atomic<int>>(0);
    fs_.SetOpHook([gate, seen](FaultOp op, const std::string& path) {
      if (op == FaultOp::kSync && absl::StrContains(path, "binlog.000001")) {
        gate->MaybeBlock(seen->fetch_add(1) == 0);
      }
    });
  }

  // Reads the in-use flag of file `n` (through the POSIX file system).
  bool InUse(uint64_t n) {
    std::string bytes = testing_util::ReadFile(FilePath(n));
    return bytes.size() > kInUseFlagFileOffset &&
           (bytes[kInUseFlagFileOffset] & kFlagBinlogInUse) != 0;
  }

  FaultInjectionFileSystem fs_;
  std::string dir_;
};

// --- Defect 1: a failed fdatasync followed by a successful one -------------

TEST_F(CorrectnessTest, CloseAfterAFailedSyncFailsAndWritesNothing) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  fs_.InjectFault(FaultSpec{FaultOp::kSync, FaultKind::kEio, 1, "binlog.000001", false});
  absl::Status commit_status;
  std::thread committer([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 200);
    commit_status = log->Commit(&txn).status();
  });
  WaitUntil([&] { return gate.blocked() == 1; }, "the commit's fdatasync");
  absl::Status close_status;
  std::thread closer([&] { close_status = log->Close(); });
  WaitUntil([&] { return log->stats().queued_requests == 1; }, "Close queued");
  uint64_t size_before = *fs_.FileSize(FilePath(1));
  gate.Open();  // the fdatasync fails now
  committer.join();
  closer.join();
  EXPECT_FALSE(commit_status.ok());
  // Close must not write a Stop event after the failed group, sync again
  // (a second fdatasync succeeds on Linux) and call the file clean.
  EXPECT_EQ(close_status.code(), absl::StatusCode::kFailedPrecondition)
      << close_status;
  EXPECT_TRUE(absl::StrContains(close_status.message(), "injected"))
      << close_status;
  EXPECT_EQ(*fs_.FileSize(FilePath(1)), size_before);
  EXPECT_TRUE(InUse(1));
}

TEST_F(CorrectnessTest, SyncAndRotateAfterAFailedSyncFail) {
  for (bool rotate : {false, true}) {
    SCOPED_TRACE(rotate ? "Rotate" : "Sync");
    dir_ = NewTempDir(rotate ? "fail_rotate" : "fail_sync");
    auto log = OpenLog(BaseOptions());
    ASSERT_NE(log, nullptr);
    Gate gate;
    BlockFirstLogSync(&gate);
    fs_.InjectFault(FaultSpec{FaultOp::kSync, FaultKind::kEio, 1, "binlog.000001", false});
    std::thread committer([&] {
      TransactionBuffer txn;
      BuildTransaction(&txn, 1, 200);
      EXPECT_FALSE(log->Commit(&txn).ok());
    });
    WaitUntil([&] { return gate.blocked() == 1; }, "the commit's fdatasync");
    absl::Status op_status;
    std::thread op([&] { op_status = rotate ? log->Rotate() : log->Sync(); });
    WaitUntil([&] { return log->stats().queued_requests == 1; }, "op queued");
    gate.Open();
    committer.join();
    op.join();
    EXPECT_EQ(op_status.code(), absl::StatusCode::kFailedPrecondition) << op_status;
    EXPECT_EQ(log->ListFiles().size(), 1u);
    EXPECT_FALSE(*fs_.Exists(FilePath(2)));
    EXPECT_TRUE(InUse(1));
    fs_.SetOpHook(nullptr);
    fs_.ClearFaults();
    log.reset();
  }
}

TEST_F(CorrectnessTest, RotationInTheFlushStageStopsAfterAFailedSync) {
  Options o = BaseOptions();
  o.max_file_size = 4096;
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  fs_.InjectFault(FaultSpec{FaultOp::kSync, FaultKind::kEio, 1, "binlog.000001", false});
  std::thread first([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 8000);  // fills the file: the next group rotates
    EXPECT_FALSE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return gate.blocked() == 1; }, "the first fdatasync");
  std::thread second([&] {
    TransactionBuffer txn;
    // At least flush_ahead_bytes (256 KiB), so its flush leader does not
    // wait for the sync round: it goes on to rotate, i.e. waits for the
    // failing round inside the flush stage.
    BuildTransaction(&txn, 2, 300 << 10);
    EXPECT_FALSE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return log->stats().queued_requests == 1; },
            "the second commit's flush waiting to rotate");
  gate.Open();
  first.join();
  second.join();
  EXPECT_FALSE(*fs_.Exists(FilePath(2)));
  EXPECT_TRUE(InUse(1));
}

// --- Defect 2: one event limit for writer and readers ----------------------

TEST_F(CorrectnessTest, CommitRefusesAnEventReadersWouldReject) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  TransactionBuffer txn;
  AppendAnonymousGtid(&txn, 1, 1, 0, 1);
  AppendQuery(&txn, 1, 1, 1, "db", "BEGIN");
  // One byte more than the limit, appended last so the buffer grows once
  // and its 1 GiB stay untouched: the body is left uninitialized (Commit
  // must refuse it before it reads a byte).
  txn.AppendEvent(kRowsQueryEvent, 1, 1, kFlagIgnorable,
                  kMaxEventSize - kHeaderSize - kChecksumSize + 1);
  auto pos = log->Commit(&txn);
  ASSERT_EQ(pos.status().code(), absl::StatusCode::kInvalidArgument) << pos.status();
  EXPECT_TRUE(absl::StrContains(pos.status().message(), "ROWS_QUERY"))
      << pos.status();
  EXPECT_TRUE(absl::StrContains(pos.status().message(), "kMaxEventSize"))
      << pos.status();
  // Nothing was written, and the log goes on.
  TransactionBuffer ok;
  BuildTransaction(&ok, 2, 100);
  EXPECT_TRUE(log->Commit(&ok).ok());
  EXPECT_TRUE(log->Close().ok());
}

TEST(EventLimitTest, ReadersDefaultToTheWritersPayloadLimit) {
  EXPECT_EQ(ReaderOptions().max_payload_size, kMaxPayloadSize);
  EXPECT_LE(kMaxPayloadSize + kHeaderSize + 64, kMaxEventSize);
}

// --- Defect 3: recovery's cut is durable before the flag clears ------------

TEST_F(CorrectnessTest, RecoveryMakesTheCutDurableBeforeClearingTheFlag) {
  {
    auto log = OpenLog(BaseOptions());
    ASSERT_NE(log, nullptr);
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 300);
    ASSERT_TRUE(log->Commit(&txn).ok());
    fs_.Freeze();  // crash: the file keeps its in-use flag
    EXPECT_FALSE(log->Close().ok());
  }
  fs_.ResetState();
  // A torn event after the last transaction.
  std::string bytes = testing_util::ReadFile(FilePath(1));
  testing_util::WriteFile(FilePath(1), bytes + std::string(40, '\x7f'));
  std::vector<std::string> ops;
  std::mutex mu;
  fs_.SetOpHook([&](FaultOp op, const std::string& path) {
    if (path != FilePath(1)) return;
    std::lock_guard<std::mutex> l(mu);
    ops.push_back(io::FaultOpName(op));
  });
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  EXPECT_TRUE(log->recovery().recovered);
  fs_.SetOpHook(nullptr);
  // truncate, sync, flag write, sync: never the flag with the cut unsynced.
  std::vector<std::string> want = {"truncate", "sync", "write", "sync"};
  std::vector<std::string> got;
  for (const std::string& op : ops) {
    if (op == "truncate" || op == "sync" || op == "write") got.push_back(op);
    if (got.size() == want.size()) break;
  }
  EXPECT_EQ(got, want);
}

// --- Defects 4 and 5: Close under concurrent commits and operations --------

TEST_F(CorrectnessTest, CloseLetsEarlierCommitsCompleteAndClosesCleanly) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  constexpr int kCommitters = 9;
  std::vector<absl::StatusOr<CommitPosition>> results(kCommitters);
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 0, 200);
    results[0] = log->Commit(&txn);
  });
  WaitUntil([&] { return gate.blocked() == 1; }, "the first group's fdatasync");
  for (int i = 1; i < kCommitters; ++i) {
    threads.emplace_back([&, i] {
      TransactionBuffer txn;
      BuildTransaction(&txn, i, 200);
      results[i] = log->Commit(&txn);
    });
  }
  WaitUntil([&] { return log->stats().queued_requests == kCommitters - 1; },
            "the commits queued");
  absl::Status close_status;
  std::thread closer([&] { close_status = log->Close(); });
  WaitUntil([&] { return log->stats().queued_requests == kCommitters; },
            "Close queued behind them");
  gate.Open();
  for (auto& t : threads) t.join();
  closer.join();
  for (int i = 0; i < kCommitters; ++i) {
    EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].status();
  }
  EXPECT_TRUE(close_status.ok()) << close_status;
  EXPECT_FALSE(InUse(1));
  // Later calls fail; the next Open finds a clean log.
  TransactionBuffer txn;
  BuildTransaction(&txn, 99, 10);
  EXPECT_EQ(log->Commit(&txn).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(log->Close().code(), absl::StatusCode::kFailedPrecondition);
  fs_.SetOpHook(nullptr);
  log.reset();
  auto again = OpenLog(BaseOptions());
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->recovery().recovered);
  auto reader = Reader::OpenFiles({FilePath(1)}, ReaderOptions());
  ASSERT_TRUE(reader.ok());
  int xids = 0;
  Event ev;
  while ((*reader)->Next(&ev).ok()) xids += ev.header.type == kXidEvent;
  EXPECT_EQ(xids, kCommitters);
}

TEST_F(CorrectnessTest, CloseQueuedBehindCommitsOnAPoisonedLogStillCleansUp) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  fs_.InjectFault(FaultSpec{FaultOp::kSync, FaultKind::kEio, 1, "binlog.000001", false});
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  auto commit = [&](int id) {
    TransactionBuffer txn;
    BuildTransaction(&txn, id, 200);
    if (!log->Commit(&txn).ok()) ++failed;
  };
  threads.emplace_back(commit, 0);
  WaitUntil([&] { return gate.blocked() == 1; }, "the first fdatasync");
  for (int i = 1; i <= 3; ++i) threads.emplace_back(commit, i);
  WaitUntil([&] { return log->stats().queued_requests == 3; }, "commits queued");
  absl::Status close_status;
  std::thread closer([&] { close_status = log->Close(); });
  WaitUntil([&] { return log->stats().queued_requests == 4; }, "Close queued");
  gate.Open();  // the round fails: the queued commits fail, Close still runs
  for (auto& t : threads) t.join();
  closer.join();
  EXPECT_EQ(failed.load(), 4);
  EXPECT_EQ(close_status.code(), absl::StatusCode::kFailedPrecondition) << close_status;
  EXPECT_TRUE(absl::StrContains(close_status.message(), "injected")) << close_status;
  TransactionBuffer txn;
  BuildTransaction(&txn, 9, 10);
  EXPECT_EQ(log->Commit(&txn).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(InUse(1));
  // Close released the lock: the log reopens (and recovers) while the old
  // object still exists.
  fs_.SetOpHook(nullptr);
  fs_.ClearFaults();
  auto again = Binlog::Open(dir_, "binlog", BaseOptions());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->recovery().recovered);
}

TEST_F(CorrectnessTest, OperationsQueuedBehindCloseFailAndDoNotRun) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  std::thread committer([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 200);
    EXPECT_TRUE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return gate.blocked() == 1; }, "the commit's fdatasync");
  absl::Status close_status, sync_status, rotate_status, second_close;
  std::thread closer([&] { close_status = log->Close(); });
  WaitUntil([&] { return log->stats().queued_requests == 1; }, "Close queued");
  std::thread syncer([&] { sync_status = log->Sync(); });
  WaitUntil([&] { return log->stats().queued_requests == 2; }, "Sync queued");
  std::thread rotator([&] { rotate_status = log->Rotate(); });
  WaitUntil([&] { return log->stats().queued_requests == 3; }, "Rotate queued");
  std::thread closer2([&] { second_close = log->Close(); });
  WaitUntil([&] { return log->stats().queued_requests == 4; }, "Close queued again");
  gate.Open();
  for (std::thread* t : {&committer, &closer, &syncer, &rotator, &closer2}) t->join();
  EXPECT_TRUE(close_status.ok()) << close_status;
  EXPECT_EQ(sync_status.code(), absl::StatusCode::kFailedPrecondition) << sync_status;
  EXPECT_EQ(rotate_status.code(), absl::StatusCode::kFailedPrecondition) << rotate_status;
  EXPECT_EQ(second_close.code(), absl::StatusCode::kFailedPrecondition) << second_close;
  EXPECT_EQ(log->ListFiles().size(), 1u);
  EXPECT_FALSE(InUse(1));
}

TEST_F(CorrectnessTest, StatsDuringCloseIsSafe) {
  Options o = BaseOptions();
  o.preallocate = io::PreallocMode::kFallocate;
  o.max_file_size = 64 << 10;
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  TransactionBuffer txn;
  for (int i = 0; i < 100; ++i) {
    BuildTransaction(&txn, i, 1000);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    uint64_t sum = 0;
    while (!stop.load()) sum += log->stats().files_preallocated;
    (void)sum;
  });
  EXPECT_TRUE(log->Close().ok());
  stop.store(true);
  reader.join();
}

// --- Defect 6: corruption is refused, not cut ------------------------------

class RecoveryModeTest : public CorrectnessTest {
 protected:
  // A log of `n` transactions of ~1 KiB, left in use (a crash), everything
  // durable. Returns the start offsets of the transactions.
  std::vector<uint64_t> CrashedLog(const Options& o, int n) {
    std::vector<uint64_t> starts;
    auto log = OpenLog(o);
    if (log == nullptr) return starts;
    TransactionBuffer txn;
    for (int i = 0; i < n; ++i) {
      BuildTransaction(&txn, i, 1000);
      auto pos = log->Commit(&txn);
      EXPECT_TRUE(pos.ok());
      starts.push_back(pos->start);
    }
    EXPECT_TRUE(log->Sync().ok());
    fs_.Freeze();
    EXPECT_FALSE(log->Close().ok());
    log.reset();
    fs_.ResetState();
    return starts;
  }
  void FlipByteWith(uint64_t offset, char mask) {
    std::string bytes = testing_util::ReadFile(FilePath(1));
    ASSERT_LT(offset, bytes.size());
    bytes[offset] ^= mask;
    testing_util::WriteFile(FilePath(1), bytes);
  }
  void FlipByte(uint64_t offset) {
    std::string bytes = testing_util::ReadFile(FilePath(1));
    ASSERT_LT(offset, bytes.size());
    bytes[offset] ^= 0x5a;
    testing_util::WriteFile(FilePath(1), bytes);
  }
  Options SmallWindow() {
    Options o = BaseOptions();
    o.max_group_bytes = 64 << 10;
    o.max_unsynced_bytes = 64 << 10;
    return o;
  }
};

TEST_F(RecoveryModeTest, DamageFarBeforeTheEndIsRefusedAndNothingChanges) {
  Options o = SmallWindow();
  std::vector<uint64_t> starts = CrashedLog(o, 300);  // ~320 KiB
  ASSERT_EQ(starts.size(), 300u);
  FlipByte(starts[10] + 30);
  std::string before = testing_util::ReadFile(FilePath(1));
  auto log = Binlog::Open(dir_, "binlog", o);
  ASSERT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), absl::StrCat("offset ", starts[10])))
      << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "kCutAtFirstBadEvent"))
      << log.status();
  EXPECT_EQ(testing_util::ReadFile(FilePath(1)), before);
  // The explicit override cuts, and says what it cut.
  o.recovery_mode = RecoveryMode::kCutAtFirstBadEvent;
  auto cut = Binlog::Open(dir_, "binlog", o);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE((*cut)->recovery().recovered);
  EXPECT_EQ((*cut)->recovery().valid_end, starts[10]);
  EXPECT_EQ((*cut)->recovery().sync_policy, "every_group");
}

TEST_F(RecoveryModeTest, DamageWithinOneWindowOfTheEndIsCutAsATornTail) {
  Options o = SmallWindow();
  std::vector<uint64_t> starts = CrashedLog(o, 300);
  ASSERT_EQ(starts.size(), 300u);
  FlipByte(starts[290] + 30);  // ~10 KiB before the end: inside one window
  auto log = Binlog::Open(dir_, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE((*log)->recovery().recovered);
  EXPECT_EQ((*log)->recovery().valid_end, starts[290]);
}

TEST_F(RecoveryModeTest, FilesWrittenWithoutPerGroupSyncAreCut) {
  Options o = SmallWindow();
  o.sync_policy = SyncPolicy::kNever;
  std::vector<uint64_t> starts = CrashedLog(o, 300);
  ASSERT_EQ(starts.size(), 300u);
  FlipByte(starts[10] + 30);
  auto log = Binlog::Open(dir_, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->recovery().valid_end, starts[10]);
  EXPECT_EQ((*log)->recovery().sync_policy, "never");
}

TEST_F(RecoveryModeTest, AFlippedSizeBitIsNotMistakenForATornTail) {
  Options o = SmallWindow();
  std::vector<uint64_t> starts = CrashedLog(o, 300);
  ASSERT_EQ(starts.size(), 300u);
  // Bit 20 of the event_size of transaction 10's first event: it now
  // declares ~1 MiB, past the end of the file, which alone looks like an
  // event torn by a crash.
  FlipByteWith(starts[10] + kEventSizeOffset + 2, 0x10);
  auto log = Binlog::Open(dir_, "binlog", o);
  ASSERT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), absl::StrCat("offset ", starts[10])))
      << log.status();
}

TEST_F(RecoveryModeTest, ACrashInsideALargeTransactionIsAlwaysATornTail) {
  // A transaction 16 windows large is written in synced pieces; wherever
  // the power goes and whatever the disk keeps, Open must see a torn tail
  // (never refuse) and keep every acknowledged transaction.
  using Data = io::PowerLossOptions::Data;
  int cycles = 0;
  for (Data data : {Data::kDropUnsynced, Data::kKeepRandomPrefix,
                    Data::kTearLastSector, Data::kRandomSectors}) {
    // The commit makes ~32 file-system calls (16 piece writes, 15 piece
    // syncs, the group's sync): cut after each third of them.
    for (uint64_t cut = 1; cut <= 31; cut += 3) {
      SCOPED_TRACE(absl::StrCat("data ", static_cast<int>(data), " cut ", cut));
      dir_ = NewTempDir("bigtxn");
      Options o = SmallWindow();
      int acked = 0;
      {
        auto log = OpenLog(o);
        ASSERT_NE(log, nullptr);
        TransactionBuffer txn;
        for (int i = 0; i < 20; ++i) {
          BuildTransaction(&txn, i, 3000);
          ASSERT_TRUE(log->Commit(&txn).ok());
          ++acked;
        }
        fs_.FreezeAfter(cut);
        BuildTransaction(&txn, 100, 1 << 20);
        EXPECT_FALSE(log->Commit(&txn).ok());
        EXPECT_FALSE(log->Close().ok());
      }
      io::PowerLossOptions plo;
      plo.data = data;
      plo.seed = cut * 7919 + static_cast<uint64_t>(data);
      ASSERT_TRUE(fs_.SimulatePowerLoss(plo).ok());
      auto log = Binlog::Open(dir_, "binlog", o);
      ASSERT_TRUE(log.ok()) << log.status();
      EXPECT_TRUE((*log)->recovery().recovered);
      ASSERT_TRUE((*log)->Close().ok());
      auto reader = Reader::OpenFiles({FilePath(1)}, ReaderOptions());
      ASSERT_TRUE(reader.ok());
      int xids = 0;
      Event ev;
      while ((*reader)->Next(&ev).ok()) xids += ev.header.type == kXidEvent;
      EXPECT_GE(xids, acked);
      ++cycles;
    }
  }
  EXPECT_EQ(cycles, 4 * 11);
}

TEST_F(RecoveryModeTest, ATornHeaderWithoutChecksumsIsCutNotKept) {
  // Found by the power-loss run: without checksums, sectors persisted out of
  // order zeroed the first bytes of a Gtid event (type 0) but kept its size
  // and log_pos; recovery took the rest of the transaction as complete and
  // marked the file clean.
  Options o = SmallWindow();
  o.checksums = false;
  std::vector<uint64_t> starts;
  {
    auto log = OpenLog(o);
    ASSERT_NE(log, nullptr);
    TransactionBuffer txn(false);
    for (int i = 0; i < 5; ++i) {
      BuildTransaction(&txn, i, 100);
      auto pos = log->Commit(&txn);
      ASSERT_TRUE(pos.ok()) << pos.status();
      starts.push_back(pos->start);
    }
    fs_.Freeze();
    EXPECT_FALSE(log->Close().ok());
  }
  fs_.ResetState();
  std::string bytes = testing_util::ReadFile(FilePath(1));
  std::memset(&bytes[starts[4]], 0, 9);  // timestamp, type, server_id
  testing_util::WriteFile(FilePath(1), bytes);
  auto log = Binlog::Open(dir_, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE((*log)->recovery().recovered);
  EXPECT_EQ((*log)->recovery().valid_end, starts[4]);
}

TEST_F(CorrectnessTest, CommitRefusesEventsThatDoNotFormATransaction) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  TransactionBuffer txn;
  // A second GTID inside the transaction.
  AppendAnonymousGtid(&txn, 1, 1, 0, 1);
  AppendAnonymousGtid(&txn, 1, 1, 0, 1);
  AppendQuery(&txn, 1, 1, 1, "db", "BEGIN");
  AppendXid(&txn, 1, 1, 1);
  auto pos = log->Commit(&txn);
  EXPECT_EQ(pos.status().code(), absl::StatusCode::kInvalidArgument) << pos.status();
  // A transaction that never ends.
  txn.Clear();
  AppendAnonymousGtid(&txn, 1, 1, 0, 1);
  AppendQuery(&txn, 1, 1, 1, "db", "BEGIN");
  pos = log->Commit(&txn);
  EXPECT_EQ(pos.status().code(), absl::StatusCode::kInvalidArgument) << pos.status();
  // An event type without the ignorable flag that no server defines.
  txn.Clear();
  AppendAnonymousGtid(&txn, 1, 1, 0, 1);
  AppendQuery(&txn, 1, 1, 1, "db", "BEGIN");
  txn.AppendEvent(150, 1, 1, 0, absl::string_view("x"));
  AppendXid(&txn, 1, 1, 1);
  pos = log->Commit(&txn);
  EXPECT_EQ(pos.status().code(), absl::StatusCode::kInvalidArgument) << pos.status();
  // The log goes on.
  BuildTransaction(&txn, 2, 100);
  EXPECT_TRUE(log->Commit(&txn).ok());
}

// --- Defect 7: a reader on a listed but unpublished file -------------------

TEST_F(CorrectnessTest, ReaderOnAFileListedButNotPublishedWaitsForIt) {
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  Gate gate;
  // Hold the rotation inside its index rewrite: file 2 is listed, not yet
  // published.
  fs_.SetOpHook([&](FaultOp op, const std::string& path) {
    gate.MaybeBlock(op == FaultOp::kOpenWritable &&
                    absl::StrContains(path, "index_crash_safe"));
  });
  absl::Status rotate_status;
  std::thread rotator([&] { rotate_status = log->Rotate(); });
  WaitUntil([&] { return gate.blocked() == 1; }, "the rotation's index write");
  ASSERT_EQ(log->ListFiles().size(), 2u);
  ReaderOptions ro;
  ro.start_file = 2;
  auto reader = log->NewReader(ro);
  ASSERT_TRUE(reader.ok());
  Event ev;
  absl::Status s = (*reader)->Next(&ev);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  gate.Open();
  rotator.join();
  ASSERT_TRUE(rotate_status.ok()) << rotate_status;
  ASSERT_TRUE((*reader)->WaitForMore(absl::Now() + absl::Seconds(30)).ok());
  ASSERT_TRUE((*reader)->Next(&ev).ok());
  EXPECT_EQ(ev.header.type, kFormatDescriptionEvent);
  EXPECT_EQ(ev.file_number, 2u);
}

// --- Defect 8: bounded groups and unsynced bytes ---------------------------

TEST_F(CorrectnessTest, GroupsAreCappedInBytes) {
  Options o = BaseOptions();
  o.max_group_bytes = 64 << 10;
  std::mutex mu;
  std::vector<GroupCommitInfo> groups;
  o.on_group_commit = [&](const GroupCommitInfo& g) {
    std::lock_guard<std::mutex> l(mu);
    groups.push_back(g);
  };
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  Gate gate;
  BlockFirstLogSync(&gate);
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 0, 100);
    EXPECT_TRUE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return gate.blocked() == 1; }, "the first fdatasync");
  constexpr int kQueued = 10;
  for (int i = 1; i <= kQueued; ++i) {
    threads.emplace_back([&, i] {
      TransactionBuffer txn;
      // 10 x 20 KiB: below flush_ahead_bytes, so they queue up behind the
      // blocked sync and used to form one group.
      BuildTransaction(&txn, i, 20 << 10);
      EXPECT_TRUE(log->Commit(&txn).ok());
    });
  }
  WaitUntil([&] { return log->stats().queued_requests == kQueued; }, "queued");
  gate.Open();
  for (auto& t : threads) t.join();
  EXPECT_TRUE(log->Close().ok());
  std::lock_guard<std::mutex> l(mu);
  uint32_t total = 0;
  for (const GroupCommitInfo& g : groups) {
    EXPECT_TRUE(g.end - g.start <= o.max_group_bytes || g.transactions == 1)
        << g.transactions << " transactions, " << g.end - g.start << " bytes";
    total += g.transactions;
  }
  EXPECT_EQ(total, kQueued + 1u);
}

TEST_F(CorrectnessTest, NoMoreThanTheWindowIsEverUnsynced) {
  Options o = BaseOptions();
  o.max_group_bytes = 64 << 10;
  o.max_unsynced_bytes = 128 << 10;
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  std::atomic<uint64_t> worst{0};
  const std::string path = FilePath(1);
  fs_.SetOpHook([&](FaultOp op, const std::string& p) {
    if (p != path || (op != FaultOp::kSync && op != FaultOp::kWrite)) return;
    uint64_t u = fs_.UnsyncedBytes(p);
    uint64_t w = worst.load();
    while (u > w && !worst.compare_exchange_weak(w, u)) {
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < 20; ++i) {
        // Mostly small, and one transaction 5 windows large per thread.
        BuildTransaction(&txn, t * 100 + i, i == 7 ? (640 << 10) : (20 << 10));
        EXPECT_TRUE(log->Commit(&txn).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  fs_.SetOpHook(nullptr);
  EXPECT_TRUE(log->Close().ok());
  EXPECT_GT(worst.load(), 0u);
  EXPECT_LE(worst.load(), o.max_unsynced_bytes);
}

TEST_F(CorrectnessTest, ARecordLeftFromADeletedLogDoesNotCoverNewFiles) {
  // The files of an earlier log are gone, its recovery record is not.
  testing_util::WriteFile(io::JoinPath(dir_, "binlog.recovery"),
                          "binlog-recovery 1\n"
                          "file 1 sync every_group window 65536\n"
                          "file 5 sync never window 8388608\n");
  Options o = BaseOptions();
  o.sync_policy = SyncPolicy::kNever;
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  auto records = ReadSyncRecords(io::FileSystem::Default(), dir_, "binlog");
  ASSERT_TRUE(records.ok()) << records.status();
  const FileSyncRecord* r = SyncRecordFor(*records, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->sync_policy, "never");
  EXPECT_EQ(r->first_file, 1u);
}

TEST_F(CorrectnessTest, AFirstOpenCutInsideTheMagicLeavesALogThatOpens) {
  // Found by the power-loss run (seed 948869283): the first Open's header
  // write tore after two bytes of the magic, before any index existed;
  // the next Open refused the directory ("files with events exist").
  std::string bytes(9216, '\0');
  bytes[0] = kBinlogMagic[0];
  bytes[1] = kBinlogMagic[1];
  testing_util::WriteFile(FilePath(1), bytes);
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->recovery().removed_files,
            std::vector<std::string>{"binlog.000001"});
  // A file that is not a torn write of ours is still refused.
  log.reset();
  dir_ = NewTempDir("not_ours");
  bytes[2] = 'x';
  testing_util::WriteFile(FilePath(1), bytes);
  EXPECT_EQ(Binlog::Open(dir_, "binlog", BaseOptions()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(CorrectnessTest, AnUnindexedFileWithADamagedMagicAndDataIsRefused) {
  // A file after the last indexed one may hold acknowledged commits (a
  // rotation off the commit path). A torn magic (a prefix of it) leaves
  // nothing after it; a prefix of the magic followed by zeros where the
  // rest of it goes, with the file's events intact after them, is damage:
  // refused, not removed.
  {
    auto log = OpenLog(BaseOptions());
    ASSERT_NE(log, nullptr);
    for (int i = 0; i < 5; ++i) {
      TransactionBuffer txn;
      BuildTransaction(&txn, i + 1, 200);
      ASSERT_TRUE(log->Commit(&txn).ok());
    }
    ASSERT_TRUE(log->Close().ok());
  }
  const std::string whole = testing_util::ReadFile(FilePath(1));
  ASSERT_GT(whole.size(), 1024u);
  for (size_t kept : {1, 3}) {
    std::string bytes = whole;
    for (size_t i = kept; i < kMagicSize; ++i) bytes[i] = 0;
    testing_util::WriteFile(FilePath(2), bytes);
    auto log = Binlog::Open(dir_, "binlog", BaseOptions());
    ASSERT_FALSE(log.ok()) << "magic bytes kept: " << kept;
    EXPECT_TRUE(absl::IsDataLoss(log.status())) << log.status();
    EXPECT_EQ(testing_util::ReadFile(FilePath(2)), bytes);
  }
  // The header write lost (it reads as zeros), later writes persisted: no
  // group's fdatasync completed, so nothing in the file was acknowledged;
  // removed. (Magic bytes all damaged to zeros read the same: removed too.)
  std::string bytes = whole;
  std::fill(bytes.begin(), bytes.begin() + 512, '\0');
  testing_util::WriteFile(FilePath(2), bytes);
  auto log = OpenLog(BaseOptions());
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->recovery().removed_files, std::vector<std::string>{"binlog.000002"});
}

TEST_F(CorrectnessTest, ARotationCutInsideTheFormatDescriptionSizeIsRemoved) {
  // A power cut that keeps a byte prefix of the new file's header write
  // (PowerLossOptions::kKeepRandomPrefix) can end the file inside the
  // Format_description's event_size field. Nothing lies after the header,
  // so the file holds no transaction: Open removes it as an interrupted
  // rotation, as it does a cut before or after that field.
  for (size_t cut = kMagicSize + kEventSizeOffset; cut <= kMagicSize + kEventSizeOffset + 5;
       ++cut) {
    dir_ = NewTempDir("torn_fde_size");
    {
      auto log = OpenLog(BaseOptions());
      ASSERT_NE(log, nullptr);
      ASSERT_TRUE(log->Close().ok());
    }
    const std::string first = testing_util::ReadFile(FilePath(1));
    ASSERT_GT(first.size(), cut);
    testing_util::WriteFile(FilePath(2), first.substr(0, cut));
    auto log = Binlog::Open(dir_, "binlog", BaseOptions());
    ASSERT_TRUE(log.ok()) << "cut at " << cut << ": " << log.status();
    EXPECT_EQ((*log)->recovery().removed_files, std::vector<std::string>{"binlog.000002"})
        << "cut at " << cut;
  }
}

TEST_F(CorrectnessTest, AnUnreadableGtidSetInTheLastFileIsDataLoss) {
  // Found by the recovery fuzzer: a Previous_gtids body the GTID-set
  // decoder refused made Open fail with InvalidArgument, which its contract
  // does not name for a damaged file. (The tagged format of MySQL 8.3+ is
  // read now; a format byte no server writes stands for the damage.)
  {
    auto log = OpenLog(BaseOptions());
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->Close().ok());
  }
  std::string bytes = testing_util::ReadFile(FilePath(1));
  // binlog.000001: magic, FDE (122 bytes in 8.0 files, 123 in 8.4's),
  // then Previous_gtids.
  const size_t prev = kMagicSize + LoadLe32(&bytes[kMagicSize + kEventSizeOffset]);
  ASSERT_EQ(static_cast<uint8_t>(bytes[prev + kTypeOffset]), kPreviousGtidsEvent);
  const size_t body = prev + kHeaderSize;
  StoreLe64(&bytes[body], (uint64_t{2} << 56) | 1);  // unknown format 2
  // Keep the checksum valid: this is about the GTID set, not the CRC.
  const uint32_t size = LoadLe32(&bytes[prev + kEventSizeOffset]);
  StoreLe32(&bytes[prev + size - kChecksumSize],
            ComputeEventChecksum(absl::string_view(&bytes[prev], size)));
  testing_util::WriteFile(FilePath(1), bytes);
  auto log = Binlog::Open(dir_, "binlog", BaseOptions());
  ASSERT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "binlog.000001"))
      << log.status();
}

TEST_F(CorrectnessTest, OptionsOutsideTheirRangesAreRefused) {
  Options o = BaseOptions();
  o.max_group_bytes = 1000;
  EXPECT_EQ(Binlog::Open(dir_, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = BaseOptions();
  o.max_unsynced_bytes = o.max_group_bytes - 1;
  EXPECT_EQ(Binlog::Open(dir_, "binlog", o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Defect 9: the smaller ones --------------------------------------------

TEST_F(CorrectnessTest, ANewLogDirectoryIsMadeDurableInItsParent) {
  std::string sub = io::JoinPath(dir_, "newlog");
  std::vector<std::string> dir_syncs;
  std::mutex mu;
  fs_.SetOpHook([&](FaultOp op, const std::string& path) {
    if (op != FaultOp::kDirSync) return;
    std::lock_guard<std::mutex> l(mu);
    dir_syncs.push_back(path);
  });
  auto log = Binlog::Open(sub, "binlog", BaseOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  fs_.SetOpHook(nullptr);
  ASSERT_FALSE(dir_syncs.empty());
  EXPECT_EQ(dir_syncs.front(), dir_);
}

TEST_F(CorrectnessTest, AfterWriteNeverPublishesAGroupWrittenAfterAFailedSync) {
  Options o = BaseOptions();
  o.reader_visibility = ReaderVisibility::kAfterWrite;
  auto log = OpenLog(o);
  ASSERT_NE(log, nullptr);
  Gate sync_gate, write_gate;
  auto writes = std::make_shared<std::atomic<int>>(0);
  auto syncs = std::make_shared<std::atomic<int>>(0);
  const std::string path = FilePath(1);
  fs_.SetOpHook([&, writes, syncs](FaultOp op, const std::string& p) {
    if (p != path) return;
    if (op == FaultOp::kSync) sync_gate.MaybeBlock(syncs->fetch_add(1) == 0);
    if (op == FaultOp::kWrite) write_gate.MaybeBlock(writes->fetch_add(1) == 1);
  });
  fs_.InjectFault(FaultSpec{FaultOp::kSync, FaultKind::kEio, 1, "binlog.000001", false});
  std::thread first([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 200);
    EXPECT_FALSE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return sync_gate.blocked() == 1; }, "the first fdatasync");
  std::thread second([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 2, 300 << 10);  // written while the sync runs
    EXPECT_FALSE(log->Commit(&txn).ok());
  });
  WaitUntil([&] { return write_gate.blocked() == 1; }, "the second group's write");
  const CommitPosition visible = log->VisibleEnd();
  sync_gate.Open();  // the fdatasync fails
  first.join();
  write_gate.Open();  // the second group is written after the failure
  second.join();
  EXPECT_EQ(log->VisibleEnd().end, visible.end);
}

}  // namespace
}  // namespace binlog
