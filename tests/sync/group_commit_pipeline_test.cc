// GroupCommitPipeline against fake hooks: the role hand-offs, chaining
// (GroupCommitOptions::max_chained_rounds) and the stage order under many
// committers. The deterministic tests hold Hooks::Sync at a gate and move
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

GroupCommitOptions Opts(uint32_t chain) {
  GroupCommitOptions o;
  o.max_chained_rounds = chain;
  return o;
}

// A holds round 1's Sync; B arrives and gathers behind it (the flush
// leader waiting for the round); C queues behind B. When round 1 ends,
// A writes {B, C} and syncs them itself, and B runs round 1's commit stage.
TEST(GroupCommitPipelineTest, ChainingSyncLeaderWritesTheGatheredGroup) {
  FakeLog log(/*gated=*/true);
  GroupCommitPipeline p(&log, Opts(/*chain=*/4));
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  Committer c(&p, 10);
  AwaitState([&] { return p.stats().queued == 2; });
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
  // Round 1 (A) is done by B, while A is already in round 2's Sync.
  AwaitState([&] { return log.done_end() == 100; });
  EXPECT_EQ(log.done_threads()[0], b.id());
  EXPECT_FALSE(a.returned()) << "A is still syncing round 2";
  std::vector<std::thread::id> flushes = log.flush_threads();
  ASSERT_EQ(flushes.size(), 2u);
  EXPECT_EQ(flushes[1], a.id()) << "the gathered group was written by A";
  EXPECT_EQ(log.sync_threads()[1], a.id());
  EXPECT_EQ(b.req().start, 100u);
  EXPECT_EQ(c.req().start, 110u);
  log.ReleaseSync();
  a.Join();
  b.Join();
  c.Join();
  EXPECT_TRUE(a.status().ok());
  EXPECT_TRUE(b.status().ok());
  EXPECT_TRUE(c.status().ok());
  EXPECT_EQ(log.done_end(), 120u);
  EXPECT_EQ(p.stats().chained_rounds, 1u);
  EXPECT_EQ(p.stats().sync_rounds, 2u);
}

// The same sequence without chaining: B is woken and writes its group.
TEST(GroupCommitPipelineTest, WithoutChainingTheFlushLeaderWrites) {
  FakeLog log(/*gated=*/true);
  GroupCommitPipeline p(&log, Opts(/*chain=*/0));
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
  a.Join();  // A ran round 1's commit stage and returned
  EXPECT_EQ(log.flush_threads()[1], b.id());
  EXPECT_EQ(log.sync_threads()[1], b.id());
  EXPECT_EQ(log.done_threads()[0], a.id());
  log.ReleaseSync();
  b.Join();
  EXPECT_TRUE(b.status().ok());
  EXPECT_EQ(p.stats().chained_rounds, 0u);
}

// A group already written when the round ends (flush_ahead_bytes 0: the
// flush leader writes during the sync) is synced by the same thread at
// once; that group's first committer runs the finished round's commit
// stage.
TEST(GroupCommitPipelineTest, ChainingSyncsAnAlreadyWrittenGroup) {
  FakeLog log(/*gated=*/true);
  GroupCommitOptions o = Opts(/*chain=*/4);
  o.flush_ahead_bytes = 0;
  GroupCommitPipeline p(&log, o);
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 10);
  AwaitState([&] { return log.flush_threads().size() == 2; });
  AwaitState([&] { return !p.stats().flush_leader_waiting; });
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
  EXPECT_EQ(log.sync_threads()[1], a.id());
  AwaitState([&] { return log.done_end() == 100; });
  EXPECT_EQ(log.done_threads()[0], b.id());
  EXPECT_FALSE(a.returned());
  log.ReleaseSync();
  a.Join();
  b.Join();
  EXPECT_TRUE(a.status().ok());
  EXPECT_TRUE(b.status().ok());
  EXPECT_EQ(p.stats().chained_rounds, 1u);
}

// One thread chains at most max_chained_rounds rounds: with 2, A syncs
// rounds 1-3, then runs round 3's commit stage itself and returns, and D
// (gathering behind round 3) writes and syncs round 4.
TEST(GroupCommitPipelineTest, ChainingStopsAfterMaxChainedRounds) {
  FakeLog log(/*gated=*/true);
  GroupCommitPipeline p(&log, Opts(/*chain=*/2));
  Committer a(&p, 100);
  log.AwaitSyncStarted(1);
  Committer b(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  log.ReleaseSync();
  log.AwaitSyncStarted(2);
  Committer c(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  log.ReleaseSync();
  log.AwaitSyncStarted(3);
  Committer d(&p, 10);
  AwaitState([&] { return p.stats().flush_leader_waiting; });
  // A's own commit was done in round 1, but its call goes on.
  EXPECT_FALSE(a.returned());
  log.ReleaseSync();
  a.Join();
  log.AwaitSyncStarted(4);
  std::vector<std::thread::id> syncs = log.sync_threads();
  EXPECT_EQ(syncs[0], a.id());
  EXPECT_EQ(syncs[1], a.id());
  EXPECT_EQ(syncs[2], a.id());
  EXPECT_EQ(syncs[3], d.id());
  log.ReleaseSync();
  b.Join();
  c.Join();
  d.Join();
  std::vector<std::thread::id> done = log.done_threads();
  ASSERT_EQ(done.size(), 4u);
  EXPECT_EQ(done[0], b.id());  // round 1, handed to B
  EXPECT_EQ(done[1], c.id());  // round 2, handed to C
  EXPECT_EQ(done[2], a.id());  // round 3: A stopped chaining
  EXPECT_EQ(done[3], d.id());
  EXPECT_EQ(p.stats().chained_rounds, 2u);
  for (const Committer* x : {&a, &b, &c, &d}) EXPECT_TRUE(x->status().ok());
}

// Many committers against a disk of random latency, for every combination
// of the options that change the hand-offs. Every commit returns OK after
// its bytes were synced and its group's GroupDone ran; the hooks check
// that no two flushes or syncs overlap and that the stages keep log order.
// A lost hand-off shows up as a watchdog failure, not a hang.
TEST(GroupCommitPipelineTest, StressEveryCommitReturnsAfterItsSyncAndGroupDone) {
  struct Case {
    uint32_t chain;
    uint64_t flush_ahead;
    uint64_t max_unsynced;
  };
  const Case cases[] = {{0, 256 << 10, 0}, {4, 256 << 10, 0}, {4, 0, 0},
                        {64, 0, 0},        {1, 64, 0},         {4, 0, 2000},
                        {64, 256 << 10, 2000}};
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message() << "chain " << k.chain << " flush_ahead "
                                    << k.flush_ahead << " max_unsynced "
                                    << k.max_unsynced);
    FakeLog log(/*gated=*/false);
    log.set_delay_us(200);
    GroupCommitOptions o = Opts(k.chain);
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
                     "commits %llu rounds %llu chained %llu queued %llu\n",
                     finished.load(), kThreads,
                     static_cast<unsigned long long>(s.commits),
                     static_cast<unsigned long long>(s.sync_rounds),
                     static_cast<unsigned long long>(s.chained_rounds),
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
    if (k.chain == 0) {
      EXPECT_EQ(s.chained_rounds, 0u);
    }
    EXPECT_LE(s.chained_rounds, s.sync_rounds);
  }
}

}  // namespace
}  // namespace sync
}  // namespace binlog
