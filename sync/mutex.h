// File: sync/mutex.h
//
// Mutex, MutexLock and CondVar: the locks used inside the library.
//
// They wrap std::mutex and std::condition_variable and carry abseil's
// thread-safety annotations, so Clang's -Wthread-safety checks them like
// absl::Mutex. Why not absl::Mutex: the project links Debian's prebuilt
// abseil, which is not instrumented for ThreadSanitizer, so TSan cannot see
// absl::Mutex's happens-before edges and reports false races on every field
// it guards (and real races would hide among them). std::mutex goes through
// pthread, which TSan intercepts.
//
// Thread safety: thread-safe (they are the synchronization).

#ifndef BINLOG_SYNC_MUTEX_H_
#define BINLOG_SYNC_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace binlog {
namespace sync {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { m_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { m_.unlock(); }
  // Documents (for the analysis) that the caller holds the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex m_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // REQUIRES: `mu` is held; it is released while waiting and held again on
  // return. May wake spuriously.
  void Wait(Mutex* mu) {
    std::unique_lock<std::mutex> l(mu->m_, std::adopt_lock);
    cv_.wait(l);
    l.release();
  }
  // As Wait, until `deadline`. Returns true if the deadline passed.
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline) {
    std::unique_lock<std::mutex> l(mu->m_, std::adopt_lock);
    bool timed_out = cv_.wait_until(l, absl::ToChronoTime(deadline)) ==
                     std::cv_status::timeout;
    l.release();
    return timed_out;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sync
}  // namespace binlog

#endif  // BINLOG_SYNC_MUTEX_H_
