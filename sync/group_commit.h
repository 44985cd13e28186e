// File: sync/group_commit.h
//
// GroupCommitPipeline: leader/follower group commit in three pipelined stages,
// the mechanism behind Binlog::Commit. It knows nothing about files; the
// owner supplies the I/O through GroupCommitHooks.
//
// Stages.
//   Flush: committing threads queue up; the first one when no flush leader is
//     active becomes the flush leader, takes the whole queue as one group and
//     calls Hooks::Flush (assign positions, one pwritev). It then hands the
//     flush role to the head of the queue that formed meanwhile (if any) and
//     moves its group to the sync queue.
//   Sync: if no sync leader is active, the thread that just flushed becomes
//     the sync leader: it takes every flushed group and calls Hooks::Sync
//     once (one fdatasync for all of them; the owner publishes the synced
//     end to its readers there). It then hands the sync role to
//     the head of the sync queue if more groups are waiting (so the next
//     fdatasync can start), and no thread's commit is held hostage by
//     others' load.
//   Commit: the former sync leader runs Hooks::GroupDone once per group of
//     its round (the ordered-commit callback), rounds strictly in order
//     (a round waiting for its turn sleeps until the previous round wakes
//     it), then releases the groups' committers. A callback that waits (for
//     a replica's acknowledgement, say) delays its own round's committers,
//     not the next round's fdatasync nor its publication.
//   While a round is in fdatasync, the next flush leader gathers (and, for
//   large groups, writes) the next group: stages overlap.
//   A thread committing alone is flush leader, then sync leader, of its own
//   one-transaction group: no hand-off to another thread.
//
// Exclusive operations (rotation on demand, sync on demand) are queued like
// commits; they split the flush queue, wait until every earlier group is
// synced and done, and run alone. Close() is the last exclusive operation:
// it runs after every request queued before it is done, even on a poisoned
// pipeline (so the owner can clean up), and fails every request queued
// after it and every later one with FailedPrecondition.
//
// Bounds: a group holds at most max_group_bytes (a larger request forms a
// group of its own), and the flush stage never writes a group while the
// bytes of groups written and not yet through their sync round, plus the
// group, would exceed max_unsynced_bytes (unless nothing is outstanding).
// So under a sync-every-round policy, with max_group_bytes at most
// max_unsynced_bytes, no more than max_unsynced_bytes (or one request larger
// than that, which the owner must write in synced pieces) are ever written
// past the last completed sync: what recovery relies on to tell a torn tail
// from corruption.
//
// Waiting: each request carries its own futex word; a committer sleeps on it
// and is woken once, when its group is done or when it is handed a leader
// role. No lock is taken to return after waking.
//
// Errors: a failed Flush fails its group; a failed Sync fails the groups of
// that round. Either poisons the pipeline: every queued and later request
// fails with FailedPrecondition carrying the first error. Nothing is retried.
// Flush may also reject single requests of its group (CommitRequest::
// rejected) without failing the others or poisoning anything.
//
// Thread safety: thread-safe.

#ifndef BINLOG_SYNC_GROUP_COMMIT_H_
#define BINLOG_SYNC_GROUP_COMMIT_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "sync/mutex.h"
#include "absl/time/time.h"

namespace binlog {
namespace sync {

// One committer's request, on the committer's stack.
struct CommitRequest {
  void* payload = nullptr;       // the owner's data (a transaction)
  uint64_t bytes = 0;            // size, for group bounds and delays
  // Set by Hooks::Flush: where the request's bytes went.
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  // Set by Hooks::Flush to fail this request alone (its bytes were not
  // written): the committer gets this status, the rest of the group goes on
  // and the pipeline is not poisoned.
  absl::Status rejected;

  // Internal.
  std::function<absl::Status()>* exclusive = nullptr;
  bool closes = false;  // the exclusive operation is Close()
  absl::Status status;
  CommitRequest* next = nullptr;
  std::atomic<uint32_t> state{0};
};

// A group: consecutive requests flushed together. Owned by the pipeline.
struct CommitGroup {
  CommitRequest* first = nullptr;
  CommitRequest* last = nullptr;
  uint32_t count = 0;
  uint64_t bytes = 0;
  uint64_t seq = 0;        // 1, 2, 3, ... in log order
  // Set by Hooks::Flush: where the group's bytes went (its first request's
  // start, its last request's end).
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  // Set by Hooks::Flush for the owner's use (the log: the sequence_number
  // of the group's last transaction).
  int64_t last_sequence_number = 0;
  CommitGroup* next = nullptr;
};

class GroupCommitHooks {
 public:
  virtual ~GroupCommitHooks() = default;
  // Writes a group. Called by one thread at a time, groups in order, without
  // the pipeline's lock. May call GroupCommitPipeline::DrainSync() first
  // (for example to rotate files between groups) and must then stop if it
  // returns an error. May reject single requests (CommitRequest::rejected).
  virtual absl::Status Flush(CommitGroup* group) = 0;
  // Makes the groups first..last (in order, linked by `next`) durable, as
  // the owner's policy says. One thread at a time, in order, after Flush.
  virtual absl::Status Sync(CommitGroup* first, CommitGroup* last) = 0;
  // After a successful Sync: once per group, in order, before the group's
  // committers return.
  virtual void GroupDone(CommitGroup* group) = 0;
};

struct GroupCommitOptions {
  // While a sync round is in progress, the flush leader waits for it to end
  // (gathering every commit that arrives meanwhile into one group and one
  // write) unless at least this many bytes are queued, in which case it
  // writes them at once, overlapping the write with the fdatasync. Small
  // groups are cheaper to write after the sync than as many small writes
  // during it; large ones gain from the overlap. 0: always write at once.
  uint64_t flush_ahead_bytes = 256 << 10;
  // Largest group in bytes; a request larger than this is a group of its
  // own. 0: no limit.
  uint64_t max_group_bytes = 0;
  // Most bytes of groups flushed and not yet through their sync round (see
  // the file comment). 0: no limit.
  uint64_t max_unsynced_bytes = 0;
  // Before syncing, wait up to this long for more groups to join the round
  // (binlog_group_commit_sync_delay). Zero: no wait.
  absl::Duration sync_delay = absl::ZeroDuration();
  // Stop waiting once this many transactions are in the round
  // (binlog_group_commit_sync_no_delay_count). Zero: no count limit.
  uint32_t sync_no_delay_count = 0;
};

class GroupCommitPipeline {
 public:
  // `hooks` must outlive the pipeline.
  GroupCommitPipeline(GroupCommitHooks* hooks, GroupCommitOptions options);
  ~GroupCommitPipeline();

  // Commits one request: returns when its group is done (status OK) or has
  // failed. The request must stay valid until then.
  absl::Status Commit(CommitRequest* req) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `fn` alone: after every earlier group is done, with no flush or
  // sync in progress, and before any later group is flushed. Its status is
  // returned; a failure does not poison the pipeline (fn may call Poison).
  // If the pipeline is poisoned (also by a round that failed while this
  // request waited) or closed, `fn` does not run and that error is returned.
  absl::Status RunExclusive(std::function<absl::Status()> fn)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Like RunExclusive, but `fn` runs even on a poisoned pipeline (it can ask
  // error()), and afterwards the pipeline is closed: requests queued behind
  // this one and every later request fail with FailedPrecondition. A Close
  // of a closed pipeline fails the same way without running `fn`.
  absl::Status Close(std::function<absl::Status()> fn) ABSL_LOCKS_EXCLUDED(mu_);

  // Called from Hooks::Flush: waits until every group flushed before the
  // current one is synced and done (GroupDone ran). Returns the pipeline's
  // error if it was poisoned before or while waiting: the caller must then
  // not write.
  absl::Status DrainSync() ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the pipeline with `error`: queued and later requests fail.
  void Poison(const absl::Status& error) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status error() const ABSL_LOCKS_EXCLUDED(mu_);
  bool closed() const ABSL_LOCKS_EXCLUDED(mu_);

  struct Stats {
    uint64_t commits = 0;
    uint64_t groups = 0;
    uint64_t max_group = 0;
    uint64_t sync_rounds = 0;
    // The flush leader is waiting for the sync round to end (gathering, see
    // flush_ahead_bytes).
    bool flush_leader_waiting = false;
    // Requests waiting now: in the flush queue, or (exclusive operations,
    // a flush that rotates) waiting for earlier groups to finish.
    uint64_t queued = 0;
  };
  Stats stats() const;

 private:
  enum State : uint32_t {
    kWaiting = 0,
    kFlushLeader = 1,
    kSyncLeader = 2,
    kDone = 3,
  };

  uint32_t Park(CommitRequest* req);
  void Hand(CommitRequest* req, State s);
  void RunFlushLeader(CommitRequest* self);
  void RunSyncLeader(CommitRequest* self);
  static absl::Status Unshared(const absl::Status& s);
  void FailAll(CommitRequest* first, const absl::Status& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On a poisoned or closed pipeline: fails the flush queue up to the first
  // Close() that may still run and hands that one the flush role (or ends
  // the role). Returns false if that Close is `self` (the caller runs it).
  bool FailQueue(CommitRequest* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunExclusiveRequest(CommitRequest* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WaitDrained() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PoisonedStatus() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static absl::Status ClosedStatus();
  CommitGroup* NewGroup() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeGroup(CommitGroup* g) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  GroupCommitHooks* const hooks_;
  const GroupCommitOptions options_;

  mutable Mutex mu_;
  // Flush queue (requests not yet flushed), oldest first.
  CommitRequest* fq_head_ ABSL_GUARDED_BY(mu_) = nullptr;
  CommitRequest* fq_tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Sync queue (groups flushed, not yet synced), oldest first.
  CommitGroup* sq_head_ ABSL_GUARDED_BY(mu_) = nullptr;
  CommitGroup* sq_tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint32_t sq_txns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t fq_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // bytes in the flush queue
  uint64_t next_round_ ABSL_GUARDED_BY(mu_) = 0;      // sync rounds started
  uint32_t pending_rounds_ ABSL_GUARDED_BY(mu_) = 0;  // started, not finished
  // Commit stage: GroupDone of sync rounds in round order. A round whose
  // turn has not come sleeps on its own futex word (CommitTurnWaiter, on
  // its leader's stack); the round that finishes wakes only the next one,
  // so rounds piling up behind a slow ordered-commit callback (semi-sync)
  // cost one wake-up each, not one per finished round.
  struct CommitTurnWaiter {
    uint64_t round = 0;
    std::atomic<uint32_t> ready{0};
    CommitTurnWaiter* next = nullptr;
  };
  void WaitForCommitTurn(uint64_t round) ABSL_LOCKS_EXCLUDED(commit_mu_);
  void EndCommitTurn() ABSL_LOCKS_EXCLUDED(commit_mu_);
  Mutex commit_mu_ ABSL_ACQUIRED_AFTER(mu_);
  uint64_t commit_turn_ ABSL_GUARDED_BY(commit_mu_) = 0;
  CommitTurnWaiter* turn_waiters_ ABSL_GUARDED_BY(commit_mu_) = nullptr;
  bool flush_active_ ABSL_GUARDED_BY(mu_) = false;
  bool sync_active_ ABSL_GUARDED_BY(mu_) = false;
  bool sync_in_io_ ABSL_GUARDED_BY(mu_) = false;  // inside Hooks::Sync
  bool gathering_ ABSL_GUARDED_BY(mu_) = false;   // the flush leader waits for it
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t draining_ ABSL_GUARDED_BY(mu_) = 0;  // threads in WaitDrained
  // Bytes of groups flushed (or being flushed) whose sync round has not
  // finished Hooks::Sync (max_unsynced_bytes).
  uint64_t unsynced_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  CommitGroup* free_groups_ ABSL_GUARDED_BY(mu_) = nullptr;
  CondVar flush_cv_;      // the sync round ended, or flush_ahead_bytes queued,
                          // or unsynced_bytes_ went down
  CondVar drained_cv_;    // sync queue emptied and sync idle
  CondVar sq_cv_;         // a group joined the sync queue (delays)

  // Statistics, written by leaders, read by stats().
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> groups_{0};
  std::atomic<uint64_t> max_group_{0};
  std::atomic<uint64_t> sync_rounds_{0};
};

}  // namespace sync
}  // namespace binlog

#endif  // BINLOG_SYNC_GROUP_COMMIT_H_
