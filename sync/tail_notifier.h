// File: sync/tail_notifier.h
//
// TailNotifier: how tailing readers sleep until the writer publishes more,
// and how the writer wakes them cheaply.
//
//   - Readers sleep on one shared futex word (a generation counter). The
//     writer's Notify() costs one atomic load when nobody sleeps, and one
//     FUTEX_WAKE for all sleepers otherwise: never one system call per
//     reader, and readers take no lock to wake up.
//   - Wake-ups are coalesced: after waking the readers, the writer does not
//     wake them again for `coalesce` (default 1 ms in the Binlog). A publish
//     inside that window is remembered, and a small timer thread delivers
//     one wake-up at the end of the window, so a reader sees every publish
//     within `coalesce` of it even if the writer then goes idle. Under load
//     this turns one wake-up of every reader per commit group into at most
//     one per window (64 readers woken after every group cost the writer
//     most of its CPU on a 2-core machine). With coalesce = 0 every publish
//     wakes the sleepers at once and no timer thread exists.
//
// Thread safety: thread-safe. Notify() is meant for one writer at a time
// (it is correct with several, only the coalescing gets less exact).

#ifndef BINLOG_SYNC_TAIL_NOTIFIER_H_
#define BINLOG_SYNC_TAIL_NOTIFIER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/time/time.h"

namespace binlog {
namespace sync {

class TailNotifier {
 public:
  explicit TailNotifier(absl::Duration coalesce);
  ~TailNotifier();  // stops the timer thread
  TailNotifier(const TailNotifier&) = delete;
  TailNotifier& operator=(const TailNotifier&) = delete;

  // Writer: call after making new data visible.
  void Notify();

  // Wakes every sleeper now and makes later waits return at once
  // (the log was closed).
  void Shutdown();
  bool shut_down() const { return shutdown_.load(std::memory_order_acquire); }

  // Reader: returns true as soon as `ready()` is true, false at `deadline`
  // or after Shutdown() with `ready()` still false. `ready` must read, with
  // a seq_cst load, state the writer stores with seq_cst before calling
  // Notify(): that is what makes a wake-up impossible to lose (see Wait in
  // the .cc for the ordering argument).
  bool Wait(const std::function<bool()>& ready, absl::Time deadline);

  // Number of FUTEX_WAKE calls made for readers (for tests and counters).
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  void WakeAll();
  void TimerLoop();

  const int64_t coalesce_ns_;
  // Readers sleep on gen_; every wake-up increments it.
  alignas(64) std::atomic<uint32_t> gen_{0};
  std::atomic<int> sleepers_{0};
  alignas(64) std::atomic<int64_t> last_wake_ns_{0};
  std::atomic<bool> deferred_{false};
  std::atomic<uint32_t> timer_word_{0};  // 1: a deferred wake is due
  std::atomic<bool> shutdown_{false};
  std::atomic<uint64_t> wakeups_{0};
  std::thread timer_;
};

}  // namespace sync
}  // namespace binlog

#endif  // BINLOG_SYNC_TAIL_NOTIFIER_H_
