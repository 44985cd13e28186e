// GroupCommitPipeline against fake hooks: the role hand-offs and the stage
// order under many committers. The deterministic tests hold Hooks::Sync at a gate and move
// the pipeline one step at a time; the stress test checks every invariant
// the hooks can observe, with a watchdog that fails (instead of hanging)
// if a commit is ever lost.

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

namespace binlog {
namespace sync {
namespace {

// Waits (yielding) until `pred` holds; the pipeline's own state, not time,
// decides when the test goes on.
template <typename Pred>
void AwaitState(Pred pred) {
  while (!pred()) std::this_thread::yield();
}

// Hooks that place requests at increasing offsets, record which thread ran
// each call, and can hold every Sync until the test releases it.
class FakeLog : public GroupCommitHooks {
 public:
  explicit FakeLog(bool gated) : gated_(gated) {}

  absl::Status Flush(CommitGroup* g) override {
    EXPECT_FALSE(in_flush_.exchange(true)) << "two flushes at once";
    MutexLock l(&mu_);
    EXPECT_EQ(g->seq, flushed_groups_ + 1) << "groups flushed out of order";
    ++flushed_groups_;
    g->start = end_;
    for (CommitRequest* r = g->first; r != nullptr; r = r->next) {
      r->start = end_;
      end_ += r->bytes;
      r->end = end_;
    }
    g->end = end_;
    flush_threads_.push_back(std::this_thread::get_id());
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
      while (gated_ && released_ < n) gate_.Wait(&mu_);
    }
    if (delay_us_ > 0) {
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

  // Gate control.
  size_t syncs_started() {
    MutexLock l(&mu_);
    return sync_threads_.size();
  }
  void AwaitSyncStarted(size_t n) {
    AwaitState([&] { return syncs_started() >= n; });
  }
  void ReleaseSync() {
    MutexLock l(&mu_);
    ++released_;
    gate_.SignalAll();
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
  const bool gated_;
  uint32_t delay_us_ = 0;
  std::atomic<bool> in_flush_{false};
  std::atomic<bool> in_sync_{false};
  Mutex mu_;
  CondVar gate_;
  uint64_t end_ = 0;
  uint64_t flushed_groups_ = 0;
  uint64_t done_groups_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t synced_end_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_end_ ABSL_GUARDED_BY(mu_) = 0;
  size_t released_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread::id> flush_threads_;
  std::vector<std::thread::id> sync_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> done_threads_ ABSL_GUARDED_BY(mu_);
};

// One committer on its own thread; remembers the thread and the result.
class Committer {
 public:
  Committer(GroupCommitPipeline* p, uint64_t bytes) {
    req_.bytes = bytes;
    thread_ = std::thread([this, p] {
      id_.set_value(std::this_thread::get_id());
      status_ = p->Commit(&req_);
      returned_.store(true);
    });
    tid_ = id_.get_future().get();
  }
  ~Committer() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::thread::id id() const { return tid_; }
  bool returned() const { return returned_.load(); }
  const absl::Status& status() const { return status_; }
  const CommitRequest& req() const { return req_; }

 private:
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
  FakeLog log(/*gated=*/false);
  GroupCommitPipeline p(&log, GroupCommitOptions());
  Committer a(&p, 100);
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
  FakeLog log(/*gated=*/true);
  GroupCommitPipeline p(&log, GroupCommitOptions());
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  Committer c(&p, 10);
  AwaitState([&] { return p.stats().queued == 2; });
  EXPECT_EQ(log.flush_threads().size(), 1u) << "nothing written during the sync";
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
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
  log.ReleaseSync();
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
  FakeLog log(/*gated=*/true);
  GroupCommitOptions o;
  o.flush_ahead_bytes = 64;
  GroupCommitPipeline p(&log, o);
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 64);
  AwaitState([&] { return log.flush_threads().size() == 2; });
  EXPECT_EQ(log.flush_threads()[1], b.id());
  EXPECT_EQ(log.syncs_started(), 1u) << "round 1 still holds the disk";
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
  EXPECT_EQ(log.sync_threads()[1], b.id());
  a.Join();
  log.ReleaseSync();
  b.Join();
  EXPECT_TRUE(a.status().ok());
  EXPECT_TRUE(b.status().ok());
  EXPECT_EQ(log.done_threads()[0], a.id());
  EXPECT_EQ(log.done_threads()[1], b.id());
}

// Many committers against a disk of random latency, for every combination
// of the options that change the hand-offs. Every commit returns OK after
// its bytes were synced and its group's GroupDone ran; the hooks check
// that no two flushes or syncs overlap and that the stages keep log order.
// A lost hand-off shows up as a watchdog failure, not a hang.
TEST(GroupCommitPipelineTest, StressEveryCommitReturnsAfterItsSyncAndGroupDone) {
  struct Case {
    uint64_t flush_ahead;
    uint64_t max_unsynced;
  };
  const Case cases[] = {{256 << 10, 0}, {0, 0}, {64, 0}, {0, 2000},
                        {256 << 10, 2000}};
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message() << "flush_ahead " << k.flush_ahead
                                    << " max_unsynced " << k.max_unsynced);
    FakeLog log(/*gated=*/false);
    log.set_delay_us(200);
    GroupCommitOptions o;
    o.flush_ahead_bytes = k.flush_ahead;
    o.max_unsynced_bytes = k.max_unsynced;
    GroupCommitPipeline p(&log, o);
    constexpr int kThreads = 32;
    constexpr int kCommits = 1000;
    std::atomic<int> finished{0};
    std::atomic<bool> stop_watchdog{false};
    std::thread watchdog([&] {
      for (int i = 0; i < 600 && !stop_watchdog.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!stop_watchdog.load()) {
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
          req.bytes = 1 + (t * 7 + i) % 100;
          absl::Status s = p.Commit(&req);
          ASSERT_TRUE(s.ok()) << s;
          ASSERT_LE(req.end, log.synced_end());
          ASSERT_LE(req.end, log.done_end());
        }
        finished.fetch_add(1);
      });
    }
    for (std::thread& t : threads) t.join();
    stop_watchdog.store(true);
    watchdog.join();
    GroupCommitPipeline::Stats s = p.stats();
    EXPECT_EQ(s.commits, uint64_t{kThreads} * kCommits);
    EXPECT_LE(s.sync_rounds, s.groups);
  }
}

}  // namespace
}  // namespace sync
}  // namespace binlog
