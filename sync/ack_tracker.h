// File: sync/ack_tracker.h
//
// AckTracker: semi-synchronous replication acknowledgement waits.
//
// A committing server thread calls WaitForAck(position) and returns when at
// least K replicas (AckTrackerOptions::required_acks) have acknowledged a
// position at or past it, or when its deadline passes. Replicas (or the
// server's network threads receiving their replies) call Ack(replica_id,
// position).
//
// Positions are (file_number, offset) pairs ordered lexicographically, as
// binlog positions are: (3, 900) < (4, 4). They mirror
// binlog::CommitPosition (file_number, end); sync/ does not depend on
// binlog/, hence the separate struct.
//
// How the wait scales (the reasons behind the design; see ack_tracker.cc):
//   - The deadline is computed once per wait, from the caller's deadline or
//     from options.timeout at entry, never inside the wait loop. (A deadline
//     recomputed after every wake-up is what made a public semi-sync build
//     fall from 1239 to 90 commits/s going from 1 to 100 clients.)
//   - Each waiter sleeps on its own futex word, in a list sorted by
//     position. An Ack that moves the K-th highest acknowledged position
//     forward detaches, in one pass from the head of the list, exactly the
//     waiters at or below it and wakes each of them once; waiters above it
//     are not touched. No thread is woken to find it must sleep again.
//   - Waiter nodes live on the waiter's stack: no allocation per wait. The
//     replica table is allocated once, in the constructor.
//   - The tracker's mutex is its own: it is not shared with the log's read
//     path, so a reader shipping events to a replica does not contend with
//     committers. Waits for positions already acknowledged, and waits in
//     async mode, take no lock at all.
//
// Asynchronous mode (like rpl_semi_sync_master_timeout). When a wait times
// out and options.async_on_timeout is set, the tracker switches to async
// mode: every thread waiting at that moment is released (OK, outcome kAsync)
// and later waits return at once (OK, kAsync) without waiting. The tracker
// keeps the highest position any wait asked for; once K replicas have
// acknowledged that position (the replicas caught up), it switches back to
// sync mode by itself. Both switches are counted (Stats).
//
// Acks. Each replica's acknowledged position only moves forward: an Ack at
// or below the replica's previous one (a duplicate, a reordered reply, a
// stale reply after a reconnect) is ignored and counted in acks_ignored.
// Replica ids are arbitrary 32-bit numbers; at most options.max_replicas
// distinct ids are tracked at a time (RemoveReplica frees a slot).
//
// Thread safety: thread-safe. Any number of threads may wait and ack
// concurrently.
// Errors (absl::Status):
//   OK                 acknowledged by K replicas (outcome kAcknowledged), or
//                      not waited for because the tracker is / went async
//                      (outcome kAsync)
//   DeadlineExceeded   this wait's deadline passed first (counted in
//                      Stats::timeouts); the tracker is async afterwards if
//                      options.async_on_timeout
//   Cancelled          Shutdown() was called
//   InvalidArgument    a position outside the 32-bit file_number / 32-bit
//                      offset range (binlog positions always fit)
//   ResourceExhausted  Ack from a new replica id when max_replicas ids are
//                      already tracked
// Durability: none (in-memory only; acknowledgements are not persisted).
// Lifetime: no thread may be inside a call when the tracker is destroyed;
// call Shutdown() and join the waiting threads first.

#ifndef BINLOG_SYNC_ACK_TRACKER_H_
#define BINLOG_SYNC_ACK_TRACKER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace binlog {
namespace sync {

// A position in a log of numbered files, ordered by (file_number, offset).
// Both parts must be below 2^32 (MySQL binlog file numbers are at most
// 2^31 - 1 and offsets are 32-bit log_pos values).
struct AckPosition {
  uint64_t file_number = 0;
  uint64_t offset = 0;

  friend bool operator==(const AckPosition& a, const AckPosition& b) {
    return a.file_number == b.file_number && a.offset == b.offset;
  }
  friend bool operator!=(const AckPosition& a, const AckPosition& b) {
    return !(a == b);
  }
  friend bool operator<(const AckPosition& a, const AckPosition& b) {
    return a.file_number != b.file_number ? a.file_number < b.file_number
                                          : a.offset < b.offset;
  }
  friend bool operator<=(const AckPosition& a, const AckPosition& b) {
    return !(b < a);
  }
};

struct AckTrackerOptions {
  // K: a position counts as acknowledged once this many distinct replicas
  // have acknowledged it or a later position
  // (rpl_semi_sync_master_wait_for_slave_count). Clamped to
  // [1, max_replicas].
  int required_acks = 1;
  // Replica ids tracked at once (slots allocated in the constructor). >= 1.
  int max_replicas = 16;
  // Timeout of WaitForAck(position) (rpl_semi_sync_master_timeout).
  absl::Duration timeout = absl::Seconds(10);
  // Switch to async mode when a wait times out (see the file comment).
  // When false, a timed-out wait returns DeadlineExceeded and the other
  // waiters keep waiting for their own deadlines.
  bool async_on_timeout = true;
};

// How an OK wait ended.
enum class AckOutcome {
  kAcknowledged,  // K replicas acknowledged the position
  kAsync,         // the tracker is (or went) async: not waited for
};

class AckTracker {
 public:
  explicit AckTracker(const AckTrackerOptions& options);
  ~AckTracker();
  AckTracker(const AckTracker&) = delete;
  AckTracker& operator=(const AckTracker&) = delete;

  // Waits until `pos` is acknowledged by K replicas, for at most
  // options.timeout from now (the deadline is computed once, here).
  // `outcome`, if not null, receives how an OK wait ended. See the file
  // comment for the statuses. No allocation.
  absl::Status WaitForAck(const AckPosition& pos,
                          AckOutcome* outcome = nullptr);
  // As above, with an explicit deadline.
  absl::Status WaitForAckUntil(const AckPosition& pos, absl::Time deadline,
                               AckOutcome* outcome = nullptr);

  // Replica `replica_id` has received (and, per the server's policy,
  // stored) everything up to `pos`. Wakes every waiter whose position is
  // now acknowledged by K replicas, in one pass, and no other; may switch
  // the tracker back to sync mode. Ignored (OK, counted in acks_ignored) if
  // `pos` is not past the replica's previous ack.
  absl::Status Ack(uint32_t replica_id, const AckPosition& pos);

  // Forgets a replica (it disconnected): its acks no longer count toward K
  // for positions not yet acknowledged. Positions already acknowledged stay
  // acknowledged. No effect for an unknown id.
  void RemoveReplica(uint32_t replica_id);

  // Releases every waiter with Cancelled; later waits return Cancelled at
  // once. Acks are still recorded. Idempotent.
  void Shutdown();

  // The highest position acknowledged by K replicas so far (only moves
  // forward; (0, 0) before the first).
  AckPosition acknowledged() const;
  // True while the tracker is in async mode.
  bool async_mode() const;
  // Threads sleeping in WaitForAck now.
  int waiting() const;

  struct Stats {
    uint64_t acks = 0;                // acks that moved a replica forward
    uint64_t acks_ignored = 0;        // old, duplicate or reordered acks
    uint64_t waits = 0;               // WaitForAck calls
    uint64_t waits_acknowledged = 0;  // returned OK, kAcknowledged
    uint64_t waits_immediate = 0;     // ...of which without sleeping
    uint64_t waits_async = 0;         // returned OK, kAsync
    uint64_t timeouts = 0;            // returned DeadlineExceeded
    uint64_t cancelled = 0;           // returned Cancelled
    uint64_t waiters_woken = 0;       // waiters released by acks
    uint64_t switched_to_async = 0;
    uint64_t switched_to_sync = 0;
  };
  Stats stats() const;

 private:
  // The waiter list, the replicas' positions, the mode flags and the
  // counters (sync/ack_tracker.cc). Behind a pointer so that this header
  // needs no internal one: the lock-free fast path of WaitForAck costs one
  // more dependent load.
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sync
}  // namespace binlog

#endif  // BINLOG_SYNC_ACK_TRACKER_H_
