// GroupCommitPipeline. See the header for the protocol; the invariants the
// code relies on:
//   I1  flush queue non-empty  =>  flush_active_ (someone is or will be the
//       flush leader: the head is handed the role when the leader finishes).
//   I2  sync queue non-empty   =>  sync_active_ (same for the sync role).
//   I3  a thread handed a role is the head of the corresponding queue (the
//       flush queue's head request, or the first request of the sync queue's
//       head group), so it is still waiting and its request is alive.
//   I4  a request's `next` and `status` are read/written only under mu_ or
//       before its state becomes kDone; after the kDone store the owner may
//       return and its stack frame disappear, so nothing touches the request
//       after that except the futex wake on its address (a wake on a dead
//       address is harmless: every futex waiter re-checks its condition).

#include "sync/group_commit.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "sync/futex.h"

namespace binlog {
namespace sync {

GroupCommitPipeline::GroupCommitPipeline(GroupCommitHooks* hooks,
                                         GroupCommitOptions options)
    : hooks_(hooks), options_(options) {}

GroupCommitPipeline::~GroupCommitPipeline() {
  MutexLock l(&mu_);
  while (free_groups_ != nullptr) {
    CommitGroup* g = free_groups_;
    free_groups_ = g->next;
    delete g;
  }
}

CommitGroup* GroupCommitPipeline::NewGroup() {
  CommitGroup* g = free_groups_;
  if (g != nullptr) {
    free_groups_ = g->next;
    *g = CommitGroup();
  } else {
    g = new CommitGroup();  // steady state reuses freed groups
  }
  return g;
}

void GroupCommitPipeline::FreeGroup(CommitGroup* g) {
  g->next = free_groups_;
  free_groups_ = g;
}

absl::Status GroupCommitPipeline::ClosedStatus() {
  return absl::FailedPreconditionError("the log is closed");
}

absl::Status GroupCommitPipeline::PoisonedStatus() const {
  return absl::FailedPreconditionError(absl::StrCat(
      "the log stopped after an earlier error (reopen to recover): ",
      error_.ToString()));
}

uint32_t GroupCommitPipeline::Park(CommitRequest* req) {
  for (;;) {
    uint32_t s = req->state.load(std::memory_order_acquire);
    if (s != kWaiting) return s;
    FutexWait(&req->state, kWaiting);
  }
}

void GroupCommitPipeline::Hand(CommitRequest* req, State s) {
  req->state.store(s, std::memory_order_release);
  FutexWake(&req->state, 1);
}

// Each committer gets a status object of its own. Copies of an absl::Status
// share one reference-counted representation, and the release half of that
// count is compiled into the prebuilt abseil library, where ThreadSanitizer
// cannot see it; a shared error would show up as a false data race between
// committers. Only the error path pays for the copy.
absl::Status GroupCommitPipeline::Unshared(const absl::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(s.code(), s.message());
}

void GroupCommitPipeline::FailAll(CommitRequest* first, const absl::Status& s) {
  for (CommitRequest* r = first; r != nullptr;) {
    CommitRequest* next = r->next;  // I4: read before kDone
    r->status = Unshared(s);
    Hand(r, kDone);
    r = next;
  }
}

absl::Status GroupCommitPipeline::Commit(CommitRequest* req) {
  req->state.store(kWaiting, std::memory_order_relaxed);
  req->next = nullptr;
  req->status = absl::OkStatus();
  bool lead;
  {
    MutexLock l(&mu_);
    if (closed_) return ClosedStatus();
    // A poisoned pipeline still takes a Close(): it must run to clean up.
    if (!error_.ok() && !req->closes) return PoisonedStatus();
    if (fq_tail_ != nullptr) {
      fq_tail_->next = req;
    } else {
      fq_head_ = req;
    }
    fq_tail_ = req;
    uint64_t before = fq_bytes_;
    fq_bytes_ += req->bytes;
    if (before < options_.flush_ahead_bytes &&
        fq_bytes_ >= options_.flush_ahead_bytes) {
      flush_cv_.Signal();  // a flush leader waiting for the sync may go
    }
    lead = !flush_active_;
    if (lead) flush_active_ = true;
  }
  uint32_t st = lead ? static_cast<uint32_t>(kFlushLeader) : Park(req);
  for (;;) {
    if (st == kDone) return req->status;
    if (st == kFlushLeader) {
      RunFlushLeader(req);
    } else if (st == kSyncLeader) {
      RunSyncLeader(req);
    }
    st = Park(req);
  }
}

absl::Status GroupCommitPipeline::RunExclusive(std::function<absl::Status()> fn) {
  CommitRequest req;
  req.exclusive = &fn;
  return Commit(&req);
}

absl::Status GroupCommitPipeline::Close(std::function<absl::Status()> fn) {
  CommitRequest req;
  req.exclusive = &fn;
  req.closes = true;
  return Commit(&req);
}

absl::Status GroupCommitPipeline::DrainSync() { return WaitDrained(); }

absl::Status GroupCommitPipeline::WaitDrained() {
  MutexLock l(&mu_);
  ++draining_;
  while (sync_active_ || pending_rounds_ > 0) drained_cv_.Wait(&mu_);
  --draining_;
  // Every wait is a place where the world changed: a round that failed
  // while we waited poisoned the pipeline, and nothing may be written after
  // it (a later fdatasync could report success for lost pages).
  if (!error_.ok()) return PoisonedStatus();
  return absl::OkStatus();
}

bool GroupCommitPipeline::closed() const {
  MutexLock l(&mu_);
  return closed_;
}

bool GroupCommitPipeline::FailQueue(CommitRequest* self) {
  const absl::Status s = closed_ ? ClosedStatus() : PoisonedStatus();
  CommitRequest* r = fq_head_;
  while (r != nullptr && !(r->closes && !closed_)) {
    CommitRequest* next = r->next;  // I4: read before kDone
    fq_bytes_ -= r->bytes;
    r->status = Unshared(s);
    Hand(r, kDone);
    r = next;
  }
  fq_head_ = r;
  if (r == nullptr) {
    fq_tail_ = nullptr;
    fq_bytes_ = 0;
    flush_active_ = false;
    return true;
  }
  if (r == self) return false;
  Hand(r, kFlushLeader);  // I1, I3: the Close is now the head
  return true;
}

void GroupCommitPipeline::RunExclusiveRequest(CommitRequest* self) {
  fq_head_ = self->next;
  if (fq_head_ == nullptr) fq_tail_ = nullptr;
  self->next = nullptr;
  mu_.Unlock();
  // Always drain, even on a poisoned pipeline: a Close must not clean up
  // under a sync round that is still in the owner's I/O.
  absl::Status pre = WaitDrained();
  mu_.Lock();
  if (closed_) pre = ClosedStatus();
  const bool run = pre.ok() || (self->closes && !closed_);
  mu_.Unlock();
  absl::Status s = run ? (*self->exclusive)() : pre;
  mu_.Lock();
  self->status = s;
  self->state.store(kDone, std::memory_order_relaxed);
  if (self->closes) {
    closed_ = true;
    CommitRequest* rest = fq_head_;
    fq_head_ = fq_tail_ = nullptr;
    fq_bytes_ = 0;
    flush_active_ = false;
    FailAll(rest, ClosedStatus());
  } else if (fq_head_ != nullptr) {
    Hand(fq_head_, kFlushLeader);
  } else {
    flush_active_ = false;
  }
}

void GroupCommitPipeline::Poison(const absl::Status& error) {
  MutexLock l(&mu_);
  if (error_.ok()) error_ = Unshared(error);
}

absl::Status GroupCommitPipeline::error() const {
  MutexLock l(&mu_);
  return Unshared(error_);
}

void GroupCommitPipeline::RunFlushLeader(CommitRequest* self) {
  mu_.Lock();
  // I3: self is the head of the flush queue.
  if ((closed_ || !error_.ok()) && FailQueue(self)) {
    mu_.Unlock();
    return;
  }
  if (self->exclusive != nullptr) {
    RunExclusiveRequest(self);
    mu_.Unlock();
    return;
  }
  // Gather while the disk is busy with the previous round (see
  // GroupCommitOptions::flush_ahead_bytes).
  while (sync_in_io_ && fq_bytes_ < options_.flush_ahead_bytes &&
         error_.ok()) {
    gathering_ = true;
    flush_cv_.Wait(&mu_);
  }
  gathering_ = false;
  if (!error_.ok()) {
    FailQueue(nullptr);  // self is not a Close: it fails too
    mu_.Unlock();
    return;
  }
  // Take queued commits up to the first exclusive request and the group
  // bound (the first request always goes, whatever its size).
  CommitGroup* g = NewGroup();
  CommitRequest* last = fq_head_;
  g->first = last;
  g->count = 1;
  g->bytes = last->bytes;
  const uint64_t cap = options_.max_group_bytes;
  while (last->next != nullptr && last->next->exclusive == nullptr &&
         (cap == 0 || g->bytes + last->next->bytes <= cap)) {
    last = last->next;
    ++g->count;
    g->bytes += last->bytes;
  }
  fq_head_ = last->next;
  if (fq_head_ == nullptr) fq_tail_ = nullptr;
  last->next = nullptr;
  fq_bytes_ -= g->bytes;
  g->last = last;
  // The unsynced window: wait for sync rounds to finish until the group
  // fits (or nothing is outstanding). Later commits queue up meanwhile.
  const uint64_t window = options_.max_unsynced_bytes;
  while (window != 0 && unsynced_bytes_ > 0 &&
         unsynced_bytes_ + g->bytes > window && error_.ok()) {
    flush_cv_.Wait(&mu_);
  }
  if (!error_.ok()) {
    CommitRequest* group = g->first;
    FreeGroup(g);
    FailAll(group, PoisonedStatus());
    FailQueue(nullptr);
    mu_.Unlock();
    return;
  }
  unsynced_bytes_ += g->bytes;
  g->seq = next_seq_++;
  mu_.Unlock();

  absl::Status s = hooks_->Flush(g);

  mu_.Lock();
  if (!s.ok()) {
    if (error_.ok()) error_ = Unshared(s);
    unsynced_bytes_ -= g->bytes;
    flush_cv_.Signal();
    CommitRequest* group = g->first;
    FreeGroup(g);
    FailAll(group, s);
    FailQueue(nullptr);
    mu_.Unlock();
    return;
  }
  commits_.fetch_add(g->count, std::memory_order_relaxed);
  groups_.fetch_add(1, std::memory_order_relaxed);
  if (g->count > max_group_.load(std::memory_order_relaxed)) {
    max_group_.store(g->count, std::memory_order_relaxed);
  }
  if (sq_tail_ != nullptr) {
    sq_tail_->next = g;
  } else {
    sq_head_ = g;
  }
  sq_tail_ = g;
  sq_txns_ += g->count;
  sq_cv_.Signal();
  // Hand the flush role on (I1), then take the sync role if it is free.
  if (fq_head_ != nullptr) {
    Hand(fq_head_, kFlushLeader);
  } else {
    flush_active_ = false;
  }
  if (!sync_active_) {
    sync_active_ = true;
    self->state.store(kSyncLeader, std::memory_order_relaxed);
  } else {
    self->state.store(kWaiting, std::memory_order_relaxed);
  }
  mu_.Unlock();
}

void GroupCommitPipeline::RunSyncLeader(CommitRequest* self) {
  // Addresses to wake after the lock is released; per thread, so the
  // steady state allocates nothing.
  thread_local std::vector<std::atomic<uint32_t>*> wakes;
  wakes.clear();

  mu_.Lock();
  if (options_.sync_delay > absl::ZeroDuration() && error_.ok()) {
    absl::Time deadline = absl::Now() + options_.sync_delay;
    while (options_.sync_no_delay_count == 0 ||
           sq_txns_ < options_.sync_no_delay_count) {
      if (sq_cv_.WaitWithDeadline(&mu_, deadline)) break;
    }
  }
  CommitGroup* first = sq_head_;
  CommitGroup* last = sq_tail_;
  sq_head_ = sq_tail_ = nullptr;
  sq_txns_ = 0;
  absl::Status s = error_.ok() ? absl::OkStatus() : PoisonedStatus();
  sync_in_io_ = s.ok() && first != nullptr;
  const uint64_t round = next_round_++;
  ++pending_rounds_;
  mu_.Unlock();

  if (s.ok() && first != nullptr) s = hooks_->Sync(first, last);

  // The disk is free: hand the sync role on before the commit stage, so the
  // next round's fdatasync overlaps this round's publish, ordered-commit
  // callbacks (which may wait for replicas) and wake-ups.
  mu_.Lock();
  sync_in_io_ = false;
  for (CommitGroup* g = first; g != nullptr; g = g->next) {
    unsynced_bytes_ -= g->bytes;
  }
  flush_cv_.Signal();  // a flush leader gathering behind this round
  if (!s.ok() && error_.ok()) error_ = Unshared(s);
  sync_rounds_.fetch_add(1, std::memory_order_relaxed);
  if (sq_head_ != nullptr) {
    Hand(sq_head_->first, kSyncLeader);  // I2, I3
  } else {
    sync_active_ = false;
  }
  mu_.Unlock();

  // Commit stage: rounds run GroupDone strictly in round order.
  WaitForCommitTurn(round);
  if (s.ok()) {
    for (CommitGroup* g = first; g != nullptr; g = g->next) {
      hooks_->GroupDone(g);
    }
  }
  EndCommitTurn();

  mu_.Lock();
  for (CommitGroup* g = first; g != nullptr;) {
    CommitGroup* gnext = g->next;
    for (CommitRequest* r = g->first; r != nullptr;) {
      CommitRequest* next = r->next;  // I4
      r->status = r->rejected.ok() ? Unshared(s) : Unshared(r->rejected);
      r->state.store(kDone, std::memory_order_release);
      if (r != self) wakes.push_back(&r->state);
      r = next;
    }
    FreeGroup(g);
    g = gnext;
  }
  --pending_rounds_;
  if (!sync_active_ && pending_rounds_ == 0) drained_cv_.SignalAll();
  mu_.Unlock();
  for (std::atomic<uint32_t>* w : wakes) FutexWake(w, 1);
}

void GroupCommitPipeline::WaitForCommitTurn(uint64_t round) {
  CommitTurnWaiter w;
  w.round = round;
  {
    MutexLock l(&commit_mu_);
    if (commit_turn_ == round) return;
    w.next = turn_waiters_;
    turn_waiters_ = &w;
  }
  // EndCommitTurn unlinks `w` before it sets `ready`, so `w` may leave
  // scope as soon as `ready` reads 1.
  while (w.ready.load(std::memory_order_acquire) == 0) FutexWait(&w.ready, 0);
}

void GroupCommitPipeline::EndCommitTurn() {
  CommitTurnWaiter* next = nullptr;
  {
    MutexLock l(&commit_mu_);
    ++commit_turn_;
    for (CommitTurnWaiter** p = &turn_waiters_; *p != nullptr; p = &(*p)->next) {
      if ((*p)->round == commit_turn_) {
        next = *p;
        *p = next->next;
        break;
      }
    }
  }
  if (next != nullptr) {
    // As with Hand(): the waiter may return (and its stack word be reused)
    // between the store and the wake; a stray wake-up is harmless, every
    // futex wait here re-checks its word.
    next->ready.store(1, std::memory_order_release);
    FutexWake(&next->ready, 1);
  }
}

GroupCommitPipeline::Stats GroupCommitPipeline::stats() const {
  Stats s;
  s.commits = commits_.load(std::memory_order_relaxed);
  s.groups = groups_.load(std::memory_order_relaxed);
  s.max_group = max_group_.load(std::memory_order_relaxed);
  s.sync_rounds = sync_rounds_.load(std::memory_order_relaxed);
  MutexLock l(&mu_);
  s.queued = draining_;
  s.flush_leader_waiting = gathering_;
  for (CommitRequest* r = fq_head_; r != nullptr; r = r->next) ++s.queued;
  return s;
}

}  // namespace sync
}  // namespace binlog
