// File: tests/testutil/wait_until.h
//
// WaitUntil: a test waits for a state another thread brings about (a
// background thread's counter, a thread registered as a waiter) by
// re-checking the state itself, never by sleeping for a time meant to be
// long enough. Use it where the library offers a counter but no blocking
// wait; where the test owns the state, block on it (absl::Notification, a
// condition) instead.
//
// Between checks it yields the CPU: no assertion depends on how long
// anything took, and the bound only turns a state that never comes into a
// failure instead of a hang.
//
// Notification: a test-owned event one thread signals and others wait
// for, as absl::Notification, on std::mutex (ThreadSanitizer sees through
// it; the prebuilt abseil's mutex is not instrumented, see sync/mutex.h).
//
// Thread safety: WaitUntil is thread-safe if `cond` is; Notification is
// thread-safe.

#ifndef BINLOG_TESTS_TESTUTIL_WAIT_UNTIL_H_
#define BINLOG_TESTS_TESTUTIL_WAIT_UNTIL_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace binlog {
namespace testutil {

// True as soon as `cond()` is true; false if it is still false after
// `bound` of real time. Does not allocate (tests that count allocations
// use it).
template <typename Cond>
bool WaitUntil(Cond cond, absl::Duration bound = absl::Seconds(60)) {
  const absl::Time limit = absl::Now() + bound;
  while (!cond()) {
    if (absl::Now() > limit) return cond();
    std::this_thread::yield();
  }
  return true;
}

class Notification {
 public:
  Notification() = default;
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  // Wakes every waiter, now and later. At most once.
  void Notify() {
    {
      std::lock_guard<std::mutex> l(mu_);
      notified_ = true;
    }
    cv_.notify_all();
  }
  bool HasBeenNotified() const {
    std::lock_guard<std::mutex> l(mu_);
    return notified_;
  }
  // True once notified; false if not notified within `bound` of real time
  // (the bound turns a signal that never comes into a failure).
  bool WaitForNotificationWithTimeout(absl::Duration bound) const {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, absl::ToChronoNanoseconds(bound),
                        [this] { return notified_; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool notified_ = false;
};

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_WAIT_UNTIL_H_
