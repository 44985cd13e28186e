// Group commit and tailing readers under concurrency: ordering, grouping,
// one fdatasync per sync round, the ordered-commit callback, poisoning, and
// readers that never block the writer. Run under ThreadSanitizer by CI.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::NewTempDir;
using testing_util::ReadFile;

// A pause point: while closed, threads calling Pass() block inside it.
class Gate {
 public:
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = false;
    }
    cv_.notify_all();
  }
  void Pass() {
    std::unique_lock<std::mutex> l(mu_);
    if (!closed_) return;
    ++blocked_;
    cv_.notify_all();
    cv_.wait(l, [this] { return !closed_; });
    --blocked_;
  }
  int blocked() {
    std::lock_guard<std::mutex> l(mu_);
    return blocked_;
  }
  // Waits until `n` threads are blocked: bounded (60 s), so that a thread
  // that never arrives fails the test instead of hanging it.
  bool AwaitBlocked(int n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(60),
                        [&] { return blocked_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int blocked_ = 0;
};

// Counts fdatasyncs; optionally slows them, fails them, holds them at a
// gate, or holds reads at a gate.
class TestFs : public io::FileSystemWrapper {
 public:
  TestFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  std::atomic<int> syncs{0};
  // A slow disk (not synchronization: it only lets commits pile up behind
  // a sync; no assertion depends on its length).
  std::atomic<int> sync_delay_us{0};
  std::atomic<bool> fail_sync{false};
  Gate sync_gate;  // fdatasyncs wait here while it is closed
  Gate read_gate;  // reads of binlog files wait here while it is closed

  class WFile : public io::WritableFileWrapper {
   public:
    WFile(std::unique_ptr<io::WritableFile> f, TestFs* fs)
        : io::WritableFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Sync() override {
      fs_->syncs++;
      fs_->sync_gate.Pass();
      if (int d = fs_->sync_delay_us.load()) absl::SleepFor(absl::Microseconds(d));
      if (fs_->fail_sync) return absl::DataLossError("injected fdatasync EIO");
      return io::WritableFileWrapper::Sync();
    }

   private:
    TestFs* fs_;
  };
  class RFile : public io::RandomAccessFileWrapper {
   public:
    RFile(std::unique_ptr<io::RandomAccessFile> f, TestFs* fs)
        : io::RandomAccessFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Read(uint64_t offset, size_t n, char* scratch,
                      size_t* got) const override {
      fs_->read_gate.Pass();
      return io::RandomAccessFileWrapper::Read(offset, n, scratch, got);
    }

   private:
    TestFs* fs_;
  };

  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    auto f = target()->OpenWritable(path, mode, permissions);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::WritableFile>(new WFile(std::move(*f), this));
  }
  absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    auto f = target()->OpenReadable(path);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::RandomAccessFile>(new RFile(std::move(*f), this));
  }
};

// A tailing reader thread that records the id of every transaction it sees
// (from the Rows_query text "txn <id> ...") in order.
class TailReader {
 public:
  TailReader(Binlog* log, std::atomic<bool>* stop) {
    thread_ = std::thread([this, log, stop] {
      auto r = log->NewReader(ReaderOptions());
      if (!r.ok()) {
        status_ = r.status();
        return;
      }
      Event ev;
      for (;;) {
        absl::Status s = (*r)->Next(&ev);
        if (s.ok()) {
          if (ev.header.type == kRowsQueryEvent) {
            std::string body(ev.body().substr(1));
            ids_.push_back(body.substr(0, body.find(' ', 4)));
          }
          continue;
        }
        if (!absl::IsOutOfRange(s)) {
          status_ = s;
          return;
        }
        s = (*r)->WaitForMore(absl::Now() + absl::Milliseconds(20));
        if (absl::IsCancelled(s)) return;
        if (stop->load() && absl::IsDeadlineExceeded(s)) return;
      }
    });
  }
  void Join() { thread_.join(); }
  const std::vector<std::string>& ids() const { return ids_; }
  const absl::Status& status() const { return status_; }

 private:
  std::thread thread_;
  std::vector<std::string> ids_;
  absl::Status status_;
};

struct Committed {
  CommitPosition pos;
  std::string id;
  std::string bytes;
};

bool Before(const CommitPosition& a, const CommitPosition& b) {
  return std::tie(a.file_number, a.start) < std::tie(b.file_number, b.start);
}

TEST(GroupCommitTest, ManyCommittersAndTailingReadersAgreeOnOneOrder) {
  std::string dir = NewTempDir("stress");
  Options o;
  o.max_file_size = 64 << 10;  // several rotations during the run
  std::mutex cb_mu;
  std::vector<GroupCommitInfo> groups;
  o.on_group_commit = [&](const GroupCommitInfo& g) {
    std::lock_guard<std::mutex> l(cb_mu);
    groups.push_back(g);
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  constexpr int kThreads = 64;
  constexpr int kPerThread = 40;
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<TailReader>> readers;
  for (int i = 0; i < 8; ++i) {
    readers.push_back(std::make_unique<TailReader>(log->get(), &stop));
  }
  std::mutex mu;
  std::vector<Committed> committed;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      TransactionBuffer txn;
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t id = t * 1000 + i;
        BuildTransaction(&txn, id, 20 + rng() % 700);
        auto pos = (*log)->Commit(&txn);
        ASSERT_TRUE(pos.ok()) << pos.status();
        std::lock_guard<std::mutex> l(mu);
        committed.push_back({*pos, absl::StrCat("txn ", id), std::string(txn.data())});
      }
    });
  }
  for (auto& th : threads) th.join();
  LogStats stats = (*log)->stats();
  ASSERT_TRUE((*log)->Close().ok());
  stop = true;
  for (auto& r : readers) r->Join();

  ASSERT_EQ(committed.size(), static_cast<size_t>(kThreads * kPerThread));
  std::sort(committed.begin(), committed.end(),
            [](const Committed& a, const Committed& b) { return Before(a.pos, b.pos); });
  // No gaps, no duplicates, each position holds exactly its transaction.
  std::map<uint64_t, std::string> files;
  for (size_t i = 0; i < committed.size(); ++i) {
    const Committed& c = committed[i];
    if (!files.count(c.pos.file_number)) {
      files[c.pos.file_number] =
          ReadFile(dir + "/" + BinlogFileName("binlog", c.pos.file_number));
    }
    const std::string& f = files[c.pos.file_number];
    ASSERT_LE(c.pos.end, f.size());
    EXPECT_EQ(f.substr(c.pos.start, c.pos.end - c.pos.start), c.bytes) << i;
    if (i > 0 && committed[i - 1].pos.file_number == c.pos.file_number) {
      EXPECT_EQ(committed[i - 1].pos.end, c.pos.start) << "gap or overlap at " << i;
    }
  }
  // Callback: once per group, in log order, covering every commit.
  uint64_t total = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    total += groups[i].transactions;
    EXPECT_EQ(groups[i].group_seq, i + 1);
    if (i > 0) {
      EXPECT_TRUE(std::tie(groups[i - 1].file_number, groups[i - 1].end) <=
                  std::tie(groups[i].file_number, groups[i].start));
    }
  }
  EXPECT_EQ(total, committed.size());
  EXPECT_EQ(stats.commits, committed.size());
  EXPECT_EQ(stats.groups, groups.size());
  // Readers saw every transaction, in commit order.
  std::vector<std::string> want;
  for (const auto& c : committed) want.push_back(c.id);
  for (auto& r : readers) {
    ASSERT_TRUE(r->status().ok()) << r->status();
    EXPECT_EQ(r->ids(), want);
  }
}

// The first commit's fdatasync is held at a gate until the 15 other
// committers queued behind it: they must then form one group (one write,
// one fdatasync), whatever the machine's speed. The rest run freely; every
// fdatasync is one sync round.
TEST(GroupCommitTest, OneFdatasyncPerSyncRoundAndGroupsForm) {
  TestFs fs;
  std::string dir = NewTempDir("rounds");
  Options o;
  o.file_system = &fs;
  o.max_file_size = 1 << 30;
  o.zero_ahead = 0;  // only the log's own fdatasyncs are counted
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  int before = fs.syncs;
  fs.sync_gate.Close();
  constexpr int kThreads = 16;
  std::vector<std::thread> threads;
  auto start = [&](int t) {
    threads.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < 20; ++i) {
        BuildTransaction(&txn, t * 100 + i, 100);
        ASSERT_TRUE((*log)->Commit(&txn).ok());
      }
    });
  };
  // One committer alone in the first group, inside its fdatasync (started
  // first: two committers arriving together could share that group); the
  // others then queue in the flush stage (the state itself,
  // LogStats::queued_requests).
  start(0);
  EXPECT_TRUE(fs.sync_gate.AwaitBlocked(1));
  for (int t = 1; t < kThreads; ++t) start(t);
  EXPECT_TRUE(testutil::WaitUntil(
      [&] { return (*log)->stats().queued_requests == kThreads - 1; }))
      << (*log)->stats().queued_requests;
  fs.sync_gate.Open();
  for (auto& th : threads) th.join();
  LogStats s = (*log)->stats();
  int syncs = fs.syncs - before;
  EXPECT_EQ(s.commits, 320u);
  EXPECT_EQ(static_cast<uint64_t>(syncs), s.sync_rounds);
  EXPECT_EQ(static_cast<uint64_t>(syncs), s.fsyncs);
  EXPECT_LE(s.sync_rounds, s.groups);
  EXPECT_GE(s.max_group_size, uint64_t{kThreads - 1})
      << "the queued commits were not grouped";
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(GroupCommitTest, NeverPolicySyncsNothingOnCommit) {
  TestFs fs;
  std::string dir = NewTempDir("never");
  Options o;
  o.file_system = &fs;
  o.sync_policy = SyncPolicy::kNever;
  auto log = Binlog::Open(dir, "binlog", o);
  int before = fs.syncs;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < 20; ++i) {
        BuildTransaction(&txn, t * 100 + i, 100);
        ASSERT_TRUE((*log)->Commit(&txn).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(fs.syncs - before, 0);
  ASSERT_TRUE((*log)->Sync().ok());
  EXPECT_EQ(fs.syncs - before, 1);
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(GroupCommitTest, LoneCommitterDoesItsOwnWork) {
  std::string dir = NewTempDir("lone");
  Options o;
  std::thread::id callback_thread;
  o.on_group_commit = [&](const GroupCommitInfo&) {
    callback_thread = std::this_thread::get_id();
  };
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  for (int i = 0; i < 5; ++i) {
    BuildTransaction(&txn, i, 50);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    EXPECT_EQ(callback_thread, std::this_thread::get_id());
  }
  LogStats s = (*log)->stats();
  EXPECT_EQ(s.groups, 5u);
  EXPECT_EQ(s.max_group_size, 1u);
  ASSERT_TRUE((*log)->Close().ok());
}

// Semi-sync shape: the ordered-commit callback of one group waits for
// something only a reader can bring about (a replica's acknowledgement).
// Groups synced after it must become visible to readers meanwhile; if
// readers saw a group only after the callbacks of every earlier group,
// a replica acknowledging what it read would see one group per round trip.
TEST(GroupCommitTest, LaterGroupsAreVisibleWhileAnEarlierCallbackWaits) {
  std::string dir = NewTempDir("callback_visibility");
  Options o;
  o.reader_wake_coalesce_us = 0;
  std::atomic<bool> block_next{false};
  testutil::Notification in_callback;
  testutil::Notification reader_saw_second;
  std::atomic<bool> saw_before_deadline{false};
  o.on_group_commit = [&](const GroupCommitInfo&) {
    if (!block_next.exchange(false)) return;
    in_callback.Notify();
    saw_before_deadline =
        reader_saw_second.WaitForNotificationWithTimeout(absl::Seconds(10));
  };
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    auto r = (*log)->NewReader(ReaderOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    Event ev;
    while (!stop.load()) {
      absl::Status s = (*r)->Next(&ev);
      if (s.ok()) {
        if (ev.header.type == kRowsQueryEvent &&
            absl::StartsWith(ev.body().substr(1), "txn 2 ")) {
          reader_saw_second.Notify();
        }
        continue;
      }
      ASSERT_TRUE(absl::IsOutOfRange(s)) << s;
      s = (*r)->WaitForMore(absl::Now() + absl::Milliseconds(20));
      if (absl::IsCancelled(s)) return;
    }
  });
  block_next = true;
  std::thread first([&] {
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 100);
    EXPECT_TRUE((*log)->Commit(&txn).ok());
  });
  ASSERT_TRUE(in_callback.WaitForNotificationWithTimeout(absl::Seconds(60)));
  TransactionBuffer txn;
  BuildTransaction(&txn, 2, 100);
  auto pos = (*log)->Commit(&txn);  // returns after the first callback
  EXPECT_TRUE(pos.ok()) << pos.status();
  first.join();
  EXPECT_TRUE(saw_before_deadline.load())
      << "the second group became visible only after the first group's "
         "callback gave up waiting";
  stop = true;
  reader.join();
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(GroupCommitTest, FailedFdatasyncFailsTheGroupAndEveryLaterCommit) {
  TestFs fs;
  std::string dir = NewTempDir("eio");
  Options o;
  o.file_system = &fs;
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  BuildTransaction(&txn, 1, 50);
  auto good = (*log)->Commit(&txn);
  ASSERT_TRUE(good.ok());
  fs.fail_sync = true;
  fs.sync_delay_us = 1000;  // commits queue behind the failing fdatasync
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      TransactionBuffer tx;
      for (int i = 0; i < 5; ++i) {
        BuildTransaction(&tx, t * 100 + i, 50);
        auto r = (*log)->Commit(&tx);
        (r.ok() ? ok : failed)++;
        if (!r.ok()) {
          EXPECT_TRUE(r.status().code() == absl::StatusCode::kDataLoss ||
                      r.status().code() == absl::StatusCode::kFailedPrecondition)
              << r.status();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, 0);
  EXPECT_EQ(failed, 40);
  fs.fail_sync = false;  // the disk "recovers": the log still refuses
  BuildTransaction(&txn, 999, 50);
  EXPECT_EQ((*log)->Commit(&txn).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Nothing after the error is visible.
  EXPECT_EQ((*log)->VisibleEnd().end, good->end);
  auto r = (*log)->NewReader(ReaderOptions());
  std::vector<testing_util::EventRef> events;
  ASSERT_TRUE(testing_util::ReadAll(r->get(), &events).ok());
  EXPECT_EQ(events.back().end, good->end);
}

TEST(GroupCommitTest, ReaderStuckInsideAReadDoesNotStopCommits) {
  TestFs fs;
  std::string dir = NewTempDir("stuck");
  Options o;
  o.file_system = &fs;
  o.max_file_size = 8192;  // rotations happen while the reader is stuck
  // The only reader of closed files is the one the gate counts (no GTID
  // index builder reading them too).
  o.gtid_index_interval = 0;
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  for (int i = 0; i < 20; ++i) {
    BuildTransaction(&txn, i, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  fs.read_gate.Close();
  std::thread reader([&] {
    auto r = (*log)->NewReader(ReaderOptions());
    Event ev;
    absl::Status s = (*r)->Next(&ev);  // blocks inside pread
    EXPECT_TRUE(s.ok()) << s;
  });
  ASSERT_TRUE(fs.read_gate.AwaitBlocked(1));
  // The reader is inside a read: commits, rotations and purges go on.
  for (int i = 0; i < 200; ++i) {
    BuildTransaction(&txn, 100 + i, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  ASSERT_TRUE((*log)->Rotate().ok());
  EXPECT_GT((*log)->stats().rotations, 2u);
  EXPECT_EQ(fs.read_gate.blocked(), 1);
  fs.read_gate.Open();
  reader.join();
  ASSERT_TRUE((*log)->Close().ok());
}

// Tailing readers inside their reads never hold a commit back. Not timed
// (a time bound says more about the machine than about the log): the four
// readers are blocked inside pread for as long as the 300 commits take, so
// a commit that waited for a reader's I/O would never return. Then the
// readers are released and read all 300.
TEST(GroupCommitTest, SlowReadersDoNotSlowCommitsDown) {
  TestFs fs;
  std::string dir = NewTempDir("slow");
  Options o;
  o.file_system = &fs;
  o.max_file_size = 16384;
  o.reader_wake_coalesce_us = 0;
  o.gtid_index_interval = 0;  // the gate counts the tailing readers alone
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  fs.read_gate.Close();
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<TailReader>> readers;
  for (int i = 0; i < 4; ++i) {
    readers.push_back(std::make_unique<TailReader>(log->get(), &stop));
  }
  ASSERT_TRUE(fs.read_gate.AwaitBlocked(4));
  TransactionBuffer txn;
  for (int i = 0; i < 300; ++i) {
    BuildTransaction(&txn, i, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  EXPECT_EQ(fs.read_gate.blocked(), 4) << "a reader left its read early";
  fs.read_gate.Open();
  ASSERT_TRUE((*log)->Close().ok());
  stop = true;
  for (auto& r : readers) r->Join();
  for (auto& r : readers) {
    ASSERT_TRUE(r->status().ok()) << r->status();
    EXPECT_EQ(r->ids().size(), 300u);
  }
}

// The sync delay gathers commits into bigger rounds. With a delay far
// longer than the test (1 s) and sync_no_delay_count 8, a round ends only
// when the 8 committing threads are all in it, whatever the machine's
// speed: 80 commits in 10 rounds (a few more if a round closes at the
// delay on a stalled machine).
TEST(GroupCommitTest, SyncDelayGathersBiggerGroups) {
  std::string dir = NewTempDir("delay");
  Options o;
  o.sync_delay_us = 1000000;
  o.sync_no_delay_count = 8;
  auto log = Binlog::Open(dir, "binlog", o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      TransactionBuffer txn;
      for (int i = 0; i < 10; ++i) {
        BuildTransaction(&txn, t * 100 + i, 50);
        ASSERT_TRUE((*log)->Commit(&txn).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  LogStats s = (*log)->stats();
  EXPECT_LE(s.sync_rounds, 12u) << "the delay did not gather commits";
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog
