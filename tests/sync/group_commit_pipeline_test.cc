// GroupCommitPipeline against fake hooks: the role hand-offs and the stage
// order under many committers. The deterministic tests hold Hooks::Flush
// or Hooks::Sync at a gate and move the pipeline one step at a time, each
// step waiting (with a deadline that fails the test) for a state of the
// pipeline; the stress test checks what the hooks can observe, with a
// watchdog that fails (instead of hanging) if a commit is ever lost.

#include "sync/group_commit.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "sync/mutex.h"
#include "gtest/gtest.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace sync {
namespace {

// Waits (yielding) until `pred` holds: the pipeline's own state, not time,
// decides when the test goes on. The deadline only turns a lost hand-off
// into a failure instead of a hang.
template <typename Pred>
bool AwaitState(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the awaited pipeline state never came";
      return false;
    }
    std::this_thread::yield();
  }
  return true;
}

// Hooks that place requests at increasing offsets, record which thread ran
// each call, and can hold every Flush or every Sync until the test releases
// it.
enum class Gate { kNone, kFlush, kSync };

class FakeLog : public GroupCommitHooks {
 public:
  explicit FakeLog(Gate gate, uint64_t max_unsynced = 0)
      : gate_(gate), max_unsynced_(max_unsynced) {}

  absl::Status Flush(CommitGroup* g) override {
    EXPECT_FALSE(in_flush_.exchange(true)) << "two flushes at once";
    MutexLock l(&mu_);
    flush_threads_.push_back(std::this_thread::get_id());
    const size_t n = flush_threads_.size();
    while (gate_ == Gate::kFlush && released_ < n) gate_cv_.Wait(&mu_);
    EXPECT_EQ(g->seq, flushed_groups_ + 1) << "groups flushed out of order";
    ++flushed_groups_;
    g->start = end_;
    for (CommitRequest* r = g->first; r != nullptr; r = r->next) {
      r->start = end_;
      end_ += r->bytes;
      r->end = end_;
    }
    g->end = end_;
    // The unsynced window: past the last completed sync, at most
    // max_unsynced_bytes, unless nothing else was outstanding.
    if (max_unsynced_ != 0 && g->start != synced_end_) {
      EXPECT_LE(g->end - synced_end_, max_unsynced_) << "window exceeded";
    }
    in_flush_.store(false);
    return absl::OkStatus();
  }

  absl::Status Sync(CommitGroup* first, CommitGroup* last) override {
    EXPECT_FALSE(in_sync_.exchange(true)) << "two syncs at once";
    {
      MutexLock l(&mu_);
      EXPECT_GE(first->start, synced_end_) << "a group synced twice";
      sync_threads_.push_back(std::this_thread::get_id());
      const size_t n = sync_threads_.size();
      while (gate_ == Gate::kSync && released_ < n) gate_cv_.Wait(&mu_);
    }
    if (delay_us_ > 0) {
      // A disk of random latency (not synchronization: it varies how many
      // commits a round gathers; no assertion depends on its length).
      thread_local std::minstd_rand rng(std::hash<std::thread::id>()(
          std::this_thread::get_id()));
      std::this_thread::sleep_for(
          std::chrono::microseconds(rng() % delay_us_));
    }
    MutexLock l(&mu_);
    synced_end_ = last->end;
    in_sync_.store(false);
    return absl::OkStatus();
  }

  void GroupDone(CommitGroup* g) override {
    MutexLock l(&mu_);
    EXPECT_EQ(g->seq, done_groups_ + 1) << "commit stage out of order";
    EXPECT_LE(g->end, synced_end_) << "commit stage before the sync";
    ++done_groups_;
    done_end_ = g->end;
    done_threads_.push_back(std::this_thread::get_id());
  }

  // Gate control: the gated calls (flushes or syncs) are numbered 1, 2,
  // ...; Release() lets the next one return.
  size_t syncs_started() {
    MutexLock l(&mu_);
    return sync_threads_.size();
  }
  size_t flushes_started() {
    MutexLock l(&mu_);
    return flush_threads_.size();
  }
  bool AwaitSyncStarted(size_t n) {
    return AwaitState([&] { return syncs_started() >= n; });
  }
  bool AwaitFlushStarted(size_t n) {
    return AwaitState([&] { return flushes_started() >= n; });
  }
  void Release() {
    MutexLock l(&mu_);
    ++released_;
    gate_cv_.SignalAll();
  }
  // Opens the gate for good (a test that ends early must not leave its
  // committers inside a gated call).
  void ReleaseAll() {
    MutexLock l(&mu_);
    released_ = SIZE_MAX;
    gate_cv_.SignalAll();
  }

  std::vector<std::thread::id> flush_threads() {
    MutexLock l(&mu_);
    return flush_threads_;
  }
  std::vector<std::thread::id> sync_threads() {
    MutexLock l(&mu_);
    return sync_threads_;
  }
  std::vector<std::thread::id> done_threads() {
    MutexLock l(&mu_);
    return done_threads_;
  }
  uint64_t done_end() {
    MutexLock l(&mu_);
    return done_end_;
  }
  uint64_t synced_end() {
    MutexLock l(&mu_);
    return synced_end_;
  }
  void set_delay_us(uint32_t us) { delay_us_ = us; }

 private:
  const Gate gate_;
  const uint64_t max_unsynced_;
  uint32_t delay_us_ = 0;
  std::atomic<bool> in_flush_{false};
  std::atomic<bool> in_sync_{false};
  Mutex mu_;
  CondVar gate_cv_;
  uint64_t end_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t flushed_groups_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_groups_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t synced_end_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_end_ ABSL_GUARDED_BY(mu_) = 0;
  size_t released_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread::id> flush_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> sync_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> done_threads_ ABSL_GUARDED_BY(mu_);
};

// One committer on its own thread; remembers the thread and the result.
// Going out of scope opens the log's gate first, so a test that stops at a
// failed ASSERT ends instead of waiting for a gated call.
class Committer {
 public:
  Committer(GroupCommitPipeline* p, FakeLog* log, uint64_t bytes) : log_(log) {
    req_.bytes = bytes;
    thread_ = std::thread([this, p] {
      id_.set_value(std::this_thread::get_id());
      status_ = p->Commit(&req_);
      returned_.store(true);
    });
    tid_ = id_.get_future().get();
  }
  ~Committer() {
    log_->ReleaseAll();
    Join();
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::thread::id id() const { return tid_; }
  bool returned() const { return returned_.load(); }
  const absl::Status& status() const { return status_; }
  const CommitRequest& req() const { return req_; }

 private:
  FakeLog* const log_;
  CommitRequest req_;
  std::promise<std::thread::id> id_;
  std::thread::id tid_;
  absl::Status status_;
  std::atomic<bool> returned_{false};
  std::thread thread_;
};

// A thread committing alone is flush leader, sync leader and commit stage
// of its own group.
TEST(GroupCommitPipelineTest, LoneCommitterDoesEveryStageItself) {
  FakeLog log(Gate::kNone);
  GroupCommitPipeline p(&log, GroupCommitOptions());
  Committer a(&p, &log, 100);
  a.Join();
  EXPECT_TRUE(a.status().ok());
  ASSERT_EQ(log.flush_threads().size(), 1u);
  EXPECT_EQ(log.flush_threads()[0], a.id());
  EXPECT_EQ(log.sync_threads()[0], a.id());
  EXPECT_EQ(log.done_threads()[0], a.id());
  EXPECT_EQ(a.req().end, 100u);
}

// A holds round 1's Sync; B arrives and, below flush_ahead_bytes, waits
// for the round as flush leader, gathering C behind it. When round 1 ends,
// B writes {B, C} as one group and syncs it, and A runs round 1's commit
// stage and returns.
TEST(GroupCommitPipelineTest, FlushLeaderGathersDuringTheSyncAndWritesAfterIt) {
  FakeLog log(Gate::kSync);
  GroupCommitPipeline p(&log, GroupCommitOptions());
  Committer a(&p, &log, 100);
  ASSERT_TRUE(log.AwaitSyncStarted(1));
  Committer b(&p, &log, 10);
  ASSERT_TRUE(AwaitState([&] { return p.stats().flush_leader_waiting; }));
  Committer c(&p, &log, 10);
  ASSERT_TRUE(AwaitState([&] { return p.stats().queued == 2; }));
  EXPECT_EQ(log.flush_threads().size(), 1u) << "nothing written during the sync";
  log.Release();
  ASSERT_TRUE(log.AwaitSyncStarted(2));
  EXPECT_FALSE(p.stats().flush_leader_waiting) << "B left the gather wait";
  a.Join();
  EXPECT_TRUE(a.status().ok());
  EXPECT_FALSE(b.returned());
  std::vector<std::thread::id> flushes = log.flush_threads();
  ASSERT_EQ(flushes.size(), 2u) << "B and C form one group";
  EXPECT_EQ(flushes[1], b.id());
  EXPECT_EQ(log.sync_threads()[1], b.id());
  EXPECT_EQ(log.done_threads()[0], a.id());
  EXPECT_EQ(b.req().start, 100u);
  EXPECT_EQ(c.req().start, 110u);
  log.Release();
  b.Join();
  c.Join();
  EXPECT_TRUE(b.status().ok());
  EXPECT_TRUE(c.status().ok());
  EXPECT_EQ(log.done_end(), 120u);
  EXPECT_EQ(p.stats().sync_rounds, 2u);
  EXPECT_EQ(p.stats().groups, 2u);
}

// At flush_ahead_bytes queued, the flush leader writes during the sync
// instead; the round that ends hands the sync role to that group's first
// committer.
TEST(GroupCommitPipelineTest, EnoughQueuedBytesAreWrittenDuringTheSync) {
  FakeLog log(Gate::kSync);
  GroupCommitOptions o;
  o.flush_ahead_bytes = 64;
  GroupCommitPipeline p(&log, o);
  Committer a(&p, &log, 100);
  ASSERT_TRUE(log.AwaitSyncStarted(1));
  Committer b(&p, &log, 64);
  ASSERT_TRUE(AwaitState([&] { return log.flush_threads().size() == 2; }));
  EXPECT_EQ(log.flush_threads()[1], b.id());
  log.Release();
  ASSERT_TRUE(log.AwaitSyncStarted(2));
  EXPECT_EQ(log.sync_threads()[1], b.id());
  a.Join();
  log.Release();
  b.Join();
  EXPECT_TRUE(a.status().ok());
  EXPECT_TRUE(b.status().ok());
  EXPECT_EQ(log.done_threads()[0], a.id());
  EXPECT_EQ(log.done_threads()[1], b.id());
}

// The flush role passes to the head of the queue: A is held inside its
// Flush while B and C queue up; when A's write returns, B (not a new
// arrival, and not nobody) writes {B, C}, and everyone returns.
TEST(GroupCommitPipelineTest, FlushRolePassesToTheHeadOfTheQueue) {
  FakeLog log(Gate::kFlush);
  GroupCommitPipeline p(&log, GroupCommitOptions());
  Committer a(&p, &log, 100);
  ASSERT_TRUE(log.AwaitFlushStarted(1));
  Committer b(&p, &log, 10);
  // B queued before C starts: a thread's start does not order the queue.
  ASSERT_TRUE(AwaitState([&] { return p.stats().queued == 1; }));
  Committer c(&p, &log, 10);
  ASSERT_TRUE(AwaitState([&] { return p.stats().queued == 2; }));
  log.Release();
  ASSERT_TRUE(log.AwaitFlushStarted(2));
  std::vector<std::thread::id> flushes = log.flush_threads();
  EXPECT_EQ(flushes[1], b.id());
  log.Release();
  a.Join();
  b.Join();
  c.Join();
  EXPECT_EQ(log.flushes_started(), 2u) << "B and C form one group";
  EXPECT_EQ(c.req().start, 110u);
  for (const Committer* x : {&a, &b, &c}) EXPECT_TRUE(x->status().ok());
}

// Many committers against a disk of random latency, for the flush-ahead
// and unsynced-window settings (not sync delays, group caps, exclusive
// operations or errors: the log's tests cover those). Every commit returns
// OK after its bytes were synced and its group's GroupDone ran; the hooks
// check that no two flushes or syncs overlap, that the stages keep log
// order and that no group is written past the unsynced window. A lost
// hand-off shows up as a watchdog failure, not a hang.
TEST(GroupCommitPipelineTest, StressEveryCommitReturnsAfterItsSyncAndGroupDone) {
  struct Case {
    uint64_t flush_ahead;
    uint64_t max_unsynced;
  };
  const Case cases[] = {{256 << 10, 0}, {0, 0},      {64, 0},
                        {0, 2000},      {64, 2000}, {256 << 10, 2000}};
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message() << "flush_ahead " << k.flush_ahead
                                    << " max_unsynced " << k.max_unsynced);
    FakeLog log(Gate::kNone, k.max_unsynced);
    log.set_delay_us(200);
    GroupCommitOptions o;
    o.flush_ahead_bytes = k.flush_ahead;
    o.max_unsynced_bytes = k.max_unsynced;
    GroupCommitPipeline p(&log, o);
    constexpr int kThreads = 32;
    constexpr int kCommits = 1000;
    std::atomic<int> finished{0};
    testutil::Notification all_finished;
    std::thread watchdog([&] {
      if (!all_finished.WaitForNotificationWithTimeout(absl::Seconds(60))) {
        GroupCommitPipeline::Stats s = p.stats();
        std::fprintf(stderr,
                     "watchdog: %d of %d committers finished after 60 s; "
                     "commits %llu rounds %llu queued %llu\n",
                     finished.load(), kThreads,
                     static_cast<unsigned long long>(s.commits),
                     static_cast<unsigned long long>(s.sync_rounds),
                     static_cast<unsigned long long>(s.queued));
        std::abort();
      }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCommits; ++i) {
          CommitRequest req;
          req.bytes = 1 + (t * 7 + i) % 400;  // groups past the window
          absl::Status s = p.Commit(&req);
          ASSERT_TRUE(s.ok()) << s;
          ASSERT_LE(req.end, log.synced_end());
          ASSERT_LE(req.end, log.done_end());
        }
        finished.fetch_add(1);
      });
    }
    for (std::thread& t : threads) t.join();
    all_finished.Notify();
    watchdog.join();
    GroupCommitPipeline::Stats s = p.stats();
    EXPECT_EQ(s.commits, uint64_t{kThreads} * kCommits);
  }
}

}  // namespace
}  // namespace sync
}  // namespace binlog
