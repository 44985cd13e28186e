// AckTracker: semi-sync acknowledgement waits. Design notes.
//
// Actors.
//   Waiters (committing threads, or the one thread running a commit group's
//     ordered-commit callback): each puts a Waiter node, on its own stack,
//     into a list sorted by position and sleeps on the node's futex word.
//   Ackers (replica reply threads): record a replica's position, recompute
//     the position acknowledged by K replicas, and release the waiters at or
//     below it.
//
// State, all under mu_ unless noted: the sorted waiter list, the replica
// table (fixed size), and the atomics described in the header.
//
// Invariants.
//   I1. A node is in the list ("linked") iff its state is kWaiting and no
//       acker holds it in a detached chain. Only holders of mu_ link or
//       unlink nodes.
//   I2. Every linked node's key is above acked_ (a node at or below acked_
//       is detached in the same critical section that raised acked_), and
//       async_ is false while any node is linked (switching to async
//       detaches them all).
//   I3. A detached node belongs to the thread that detached it until that
//       thread stores the node's final state: the detacher reads node->next
//       before the store, and the waiter does not return (its stack frame
//       stays alive) until it sees a final state. A waiter whose deadline
//       passes while its node is detached waits for that store; the detacher
//       is already on its way to it, so the wait is short and bounded.
//   I4. Waking happens outside mu_: one FUTEX_WAKE per released waiter, and
//       none for waiters that stay. A FUTEX_WAKE may hit a stack address
//       after its waiter has returned; that is harmless (futex waits here
//       and elsewhere in sync/ re-check their word and tolerate spurious
//       wake-ups).
//
// Why a sorted list and not a heap or map: commit groups wait in log order,
// so a new waiter almost always belongs at the tail (O(1) insertion from the
// tail), and an ack releases a prefix (O(released) from the head). The list
// needs no allocation, so a node can live on the waiter's stack.

#include "sync/ack_tracker.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "sync/futex.h"
#include "sync/mutex.h"

namespace binlog {
namespace sync {
namespace {

enum WaiterState : uint32_t {
  kWaiting = 0,
  kAcked = 1,
  kAsyncReleased = 2,
  kCancelledState = 3,
};

constexpr uint64_t kMax32 = 0xFFFFFFFFull;

bool Pack(const AckPosition& p, uint64_t* key) {
  if (p.file_number > kMax32 || p.offset > kMax32) return false;
  *key = (p.file_number << 32) | p.offset;
  return true;
}

absl::Status OutOfRange(const AckPosition& p) {
  return absl::InvalidArgumentError(
      "ack position out of range (file_number and offset must be < 2^32): " +
      std::to_string(p.file_number) + ":" + std::to_string(p.offset));
}

// Raises *a to at least v.
void RaiseTo(std::atomic<uint64_t>* a, uint64_t v) {
  uint64_t cur = a->load(std::memory_order_relaxed);
  while (cur < v &&
         !a->compare_exchange_weak(cur, v, std::memory_order_acq_rel,
                                   std::memory_order_relaxed)) {
  }
}

}  // namespace

// Everything the public class hides. Member functions have the public
// ones' contracts (sync/ack_tracker.h).
class AckTracker::Impl {
 public:
  explicit Impl(const AckTrackerOptions& options);
  absl::Status WaitForAck(const AckPosition& pos,
                          AckOutcome* outcome = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WaitForAckUntil(const AckPosition& pos, absl::Time deadline,
                               AckOutcome* outcome = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Ack(uint32_t replica_id, const AckPosition& pos)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RemoveReplica(uint32_t replica_id) ABSL_LOCKS_EXCLUDED(mu_);
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);
  AckPosition acknowledged() const;
  bool async_mode() const { return async_.load(std::memory_order_acquire); }
  int waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  using Stats = AckTracker::Stats;
  Stats stats() const;

 private:
  struct Waiter;
  struct Replica {
    uint32_t id = 0;
    bool used = false;
    uint64_t key = 0;  // packed acknowledged position
  };

  // Advances acked_ to the K-th highest replica position and detaches the
  // waiters it satisfies; returns the detached chain.
  Waiter* AdvanceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Detaches every waiter; returns the chain.
  Waiter* DetachAllLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unlink(Waiter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets each detached waiter's state and wakes it (outside mu_).
  static void Release(Waiter* chain, uint32_t state);

  const int required_acks_;
  const absl::Duration timeout_;
  const bool async_on_timeout_;

  mutable Mutex mu_;
  // Waiters sorted by position, lowest first; ties in arrival order.
  Waiter* head_ ABSL_GUARDED_BY(mu_) = nullptr;
  Waiter* tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Replica> replicas_ ABSL_GUARDED_BY(mu_);  // fixed size
  std::vector<uint64_t> scratch_ ABSL_GUARDED_BY(mu_);  // fixed size

  // Packed position acknowledged by K replicas. Written under mu_ with
  // release (only increases); read by waiters' lock-free fast path with
  // acquire. Waiters re-check it under mu_ before sleeping, so an Ack that
  // advances it either sees the waiter in the list or the waiter sees it.
  std::atomic<uint64_t> acked_{0};
  // Highest packed position any wait asked for: the "current position"
  // replicas must reach to end async mode. Raised with a CAS loop (async
  // waits raise it without mu_); read under mu_ by Ack.
  std::atomic<uint64_t> latest_{0};
  // Async mode flag. Written under mu_; read lock-free by WaitForAck.
  std::atomic<bool> async_{false};
  // Set once by Shutdown() under mu_; read lock-free by WaitForAck.
  std::atomic<bool> shutdown_{false};

  // Counters: relaxed atomics, updated by whichever thread does the work.
  std::atomic<uint64_t> acks_{0};
  std::atomic<uint64_t> acks_ignored_{0};
  std::atomic<uint64_t> waits_{0};
  std::atomic<uint64_t> waits_acknowledged_{0};
  std::atomic<uint64_t> waits_immediate_{0};
  std::atomic<uint64_t> waits_async_{0};
  std::atomic<uint64_t> timeouts_{0};
  std::atomic<uint64_t> cancelled_{0};
  std::atomic<uint64_t> waiters_woken_{0};
  std::atomic<uint64_t> switched_to_async_{0};
  std::atomic<uint64_t> switched_to_sync_{0};
};

struct AckTracker::Impl::Waiter {
  uint64_t key = 0;
  std::atomic<uint32_t> state{kWaiting};
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  bool linked = false;  // guarded by mu_
};

AckTracker::Impl::Impl(const AckTrackerOptions& options)
    : required_acks_(std::max(
          1, std::min(options.required_acks, std::max(1, options.max_replicas)))),
      timeout_(options.timeout),
      async_on_timeout_(options.async_on_timeout) {
  int n = std::max(1, options.max_replicas);
  MutexLock l(&mu_);
  replicas_.resize(n);
  scratch_.resize(n);
}

AckPosition AckTracker::Impl::acknowledged() const {
  uint64_t k = acked_.load(std::memory_order_acquire);
  return AckPosition{k >> 32, k & kMax32};
}

int AckTracker::Impl::waiting() const {
  MutexLock l(&mu_);
  return waiting_;
}

AckTracker::Stats AckTracker::Impl::stats() const {
  Stats s;
  s.acks = acks_.load(std::memory_order_relaxed);
  s.acks_ignored = acks_ignored_.load(std::memory_order_relaxed);
  s.waits = waits_.load(std::memory_order_relaxed);
  s.waits_acknowledged = waits_acknowledged_.load(std::memory_order_relaxed);
  s.waits_immediate = waits_immediate_.load(std::memory_order_relaxed);
  s.waits_async = waits_async_.load(std::memory_order_relaxed);
  s.timeouts = timeouts_.load(std::memory_order_relaxed);
  s.cancelled = cancelled_.load(std::memory_order_relaxed);
  s.waiters_woken = waiters_woken_.load(std::memory_order_relaxed);
  s.switched_to_async = switched_to_async_.load(std::memory_order_relaxed);
  s.switched_to_sync = switched_to_sync_.load(std::memory_order_relaxed);
  return s;
}

void AckTracker::Impl::Unlink(Waiter* w) {
  if (w->prev != nullptr) {
    w->prev->next = w->next;
  } else {
    head_ = w->next;
  }
  if (w->next != nullptr) {
    w->next->prev = w->prev;
  } else {
    tail_ = w->prev;
  }
  w->prev = w->next = nullptr;
  w->linked = false;
  --waiting_;
}

AckTracker::Impl::Waiter* AckTracker::Impl::DetachAllLocked() {
  Waiter* chain = head_;
  for (Waiter* w = head_; w != nullptr; w = w->next) w->linked = false;
  head_ = tail_ = nullptr;
  waiting_ = 0;
  return chain;
}

AckTracker::Impl::Waiter* AckTracker::Impl::AdvanceLocked() {
  // The K-th highest replica position is acknowledged by K replicas.
  int n = 0;
  for (const Replica& r : replicas_) {
    if (r.used) scratch_[n++] = r.key;
  }
  if (n < required_acks_) return nullptr;
  auto kth = scratch_.begin() + (required_acks_ - 1);
  std::nth_element(scratch_.begin(), kth, scratch_.begin() + n,
                   std::greater<uint64_t>());
  uint64_t quorum = *kth;
  if (quorum <= acked_.load(std::memory_order_relaxed)) return nullptr;
  acked_.store(quorum, std::memory_order_release);

  if (async_.load(std::memory_order_relaxed) &&
      quorum >= latest_.load(std::memory_order_acquire)) {
    // The replicas caught up with the newest position anyone waited for.
    async_.store(false, std::memory_order_release);
    switched_to_sync_.fetch_add(1, std::memory_order_relaxed);
  }

  // One pass from the head: detach exactly the waiters at or below quorum.
  Waiter* chain = head_;
  Waiter* last = nullptr;
  uint64_t released = 0;
  for (Waiter* w = head_; w != nullptr && w->key <= quorum; w = w->next) {
    w->linked = false;
    last = w;
    ++released;
  }
  if (last == nullptr) return nullptr;
  head_ = last->next;
  if (head_ != nullptr) {
    head_->prev = nullptr;
  } else {
    tail_ = nullptr;
  }
  last->next = nullptr;
  waiting_ -= static_cast<int>(released);
  waiters_woken_.fetch_add(released, std::memory_order_relaxed);
  return chain;
}

void AckTracker::Impl::Release(Waiter* chain, uint32_t state) {
  for (Waiter* w = chain; w != nullptr;) {
    Waiter* next = w->next;  // I3: read before the final state
    w->state.store(state, std::memory_order_release);
    FutexWake(&w->state, 1);
    w = next;
  }
}

absl::Status AckTracker::Impl::Ack(uint32_t replica_id, const AckPosition& pos) {
  uint64_t key;
  if (!Pack(pos, &key)) return OutOfRange(pos);
  Waiter* released;
  {
    MutexLock l(&mu_);
    Replica* slot = nullptr;
    Replica* free_slot = nullptr;
    for (Replica& r : replicas_) {
      if (r.used && r.id == replica_id) {
        slot = &r;
        break;
      }
      if (!r.used && free_slot == nullptr) free_slot = &r;
    }
    if (slot == nullptr) {
      if (free_slot == nullptr) {
        return absl::ResourceExhaustedError(
            "ack from replica " + std::to_string(replica_id) + ": already " +
            std::to_string(replicas_.size()) + " replicas tracked");
      }
      slot = free_slot;
      slot->used = true;
      slot->id = replica_id;
      slot->key = 0;
    }
    if (key <= slot->key) {
      acks_ignored_.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
    slot->key = key;
    acks_.fetch_add(1, std::memory_order_relaxed);
    released = AdvanceLocked();
  }
  Release(released, kAcked);
  return absl::OkStatus();
}

void AckTracker::Impl::RemoveReplica(uint32_t replica_id) {
  MutexLock l(&mu_);
  for (Replica& r : replicas_) {
    if (r.used && r.id == replica_id) {
      r.used = false;
      r.key = 0;
    }
  }
}

void AckTracker::Impl::Shutdown() {
  Waiter* chain;
  {
    MutexLock l(&mu_);
    if (shutdown_.load(std::memory_order_relaxed)) return;
    shutdown_.store(true, std::memory_order_release);
    chain = DetachAllLocked();
  }
  Release(chain, kCancelledState);
}

absl::Status AckTracker::Impl::WaitForAck(const AckPosition& pos,
                                    AckOutcome* outcome) {
  // The one place the deadline is computed.
  return WaitForAckUntil(pos, absl::Now() + timeout_, outcome);
}

absl::Status AckTracker::Impl::WaitForAckUntil(const AckPosition& pos,
                                         absl::Time deadline,
                                         AckOutcome* outcome) {
  waits_.fetch_add(1, std::memory_order_relaxed);
  uint64_t key;
  if (!Pack(pos, &key)) return OutOfRange(pos);
  AckOutcome local_outcome;
  if (outcome == nullptr) outcome = &local_outcome;

  auto cancelled = [this] {
    cancelled_.fetch_add(1, std::memory_order_relaxed);
    return absl::CancelledError("ack tracker shut down");
  };
  auto acknowledged = [&](bool immediate) {
    if (immediate) waits_immediate_.fetch_add(1, std::memory_order_relaxed);
    waits_acknowledged_.fetch_add(1, std::memory_order_relaxed);
    *outcome = AckOutcome::kAcknowledged;
    return absl::OkStatus();
  };
  auto async = [&] {
    waits_async_.fetch_add(1, std::memory_order_relaxed);
    *outcome = AckOutcome::kAsync;
    return absl::OkStatus();
  };

  // Lock-free fast paths.
  if (shutdown_.load(std::memory_order_acquire)) return cancelled();
  if (key <= acked_.load(std::memory_order_acquire)) return acknowledged(true);
  if (async_.load(std::memory_order_acquire)) {
    RaiseTo(&latest_, key);
    return async();
  }

  Waiter w;
  w.key = key;
  {
    MutexLock l(&mu_);
    RaiseTo(&latest_, key);
    if (shutdown_.load(std::memory_order_relaxed)) return cancelled();
    if (key <= acked_.load(std::memory_order_relaxed)) return acknowledged(true);
    if (async_.load(std::memory_order_relaxed)) return async();
    // Sorted insert, scanning from the tail (usually O(1): waits arrive in
    // log order). Equal keys keep arrival order.
    Waiter* after = tail_;
    while (after != nullptr && after->key > key) after = after->prev;
    w.prev = after;
    w.next = after != nullptr ? after->next : head_;
    if (w.next != nullptr) {
      w.next->prev = &w;
    } else {
      tail_ = &w;
    }
    if (after != nullptr) {
      after->next = &w;
    } else {
      head_ = &w;
    }
    w.linked = true;
    ++waiting_;
  }

  uint32_t st;
  for (;;) {
    st = w.state.load(std::memory_order_acquire);
    if (st != kWaiting) break;
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      Waiter* released = nullptr;
      bool timed_out = false;
      {
        MutexLock l(&mu_);
        if (w.linked) {
          Unlink(&w);
          timed_out = true;
          if (async_on_timeout_ && !async_.load(std::memory_order_relaxed)) {
            async_.store(true, std::memory_order_release);
            switched_to_async_.fetch_add(1, std::memory_order_relaxed);
            released = DetachAllLocked();
          }
        }
      }
      if (timed_out) {
        Release(released, kAsyncReleased);
        timeouts_.fetch_add(1, std::memory_order_relaxed);
        return absl::DeadlineExceededError(
            "no acknowledgement of " + std::to_string(pos.file_number) + ":" +
            std::to_string(pos.offset) + " from " +
            std::to_string(required_acks_) + " replica(s) before the deadline");
      }
      // I3: detached by an acker, Shutdown or an async switch that is about
      // to store our final state. Wait for it (no timeout needed).
      while ((st = w.state.load(std::memory_order_acquire)) == kWaiting) {
        FutexWait(&w.state, kWaiting);
      }
      break;
    }
    FutexWait(&w.state, kWaiting, left);
  }
  switch (st) {
    case kAcked:
      return acknowledged(false);
    case kAsyncReleased:
      return async();
    default:
      return cancelled();
  }
}

// --- AckTracker: forwards to Impl --------------------------------------------

AckTracker::AckTracker(const AckTrackerOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

AckTracker::~AckTracker() = default;

absl::Status AckTracker::WaitForAck(const AckPosition& pos,
                                    AckOutcome* outcome) {
  return impl_->WaitForAck(pos, outcome);
}

absl::Status AckTracker::WaitForAckUntil(const AckPosition& pos,
                                         absl::Time deadline,
                                         AckOutcome* outcome) {
  return impl_->WaitForAckUntil(pos, deadline, outcome);
}

absl::Status AckTracker::Ack(uint32_t replica_id, const AckPosition& pos) {
  return impl_->Ack(replica_id, pos);
}

void AckTracker::RemoveReplica(uint32_t replica_id) {
  impl_->RemoveReplica(replica_id);
}

void AckTracker::Shutdown() { impl_->Shutdown(); }

AckPosition AckTracker::acknowledged() const { return impl_->acknowledged(); }

bool AckTracker::async_mode() const { return impl_->async_mode(); }

int AckTracker::waiting() const { return impl_->waiting(); }

AckTracker::Stats AckTracker::stats() const { return impl_->stats(); }

}  // namespace sync
}  // namespace binlog
