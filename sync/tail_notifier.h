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
//     wake them again for one window (default 1 ms in the Binlog). A
//     publish inside that window is remembered, and a small timer thread
//     delivers one wake-up at the end of the window, so a reader sees every
//     publish within a window of it even if the writer then goes idle.
//     Under load this turns one wake-up of every reader per commit group
//     into at most one per window (64 readers woken after every group cost
//     the writer most of its CPU on a 2-core machine). With a zero window
//     every publish wakes the sleepers at once and no timer thread exists.
//   - The window widens with the number of sleepers (wakeups_per_second):
//     each sleeper woken costs a context switch in and out (about 5 us of
//     CPU on a 2-vCPU VM), whichever thread pays it, so what bounds the
//     cost is reader wake-ups per second, not wake calls. The window is
//     sleepers / wakeups_per_second, kept within [min_window, max_window]:
//     with the Binlog's defaults (1 ms, 10 ms, 8000/s) up to 8 sleepers get
//     1 ms and 64 get 8 ms. The timer re-reads the number of sleepers, so
//     a deferred publish may wait for a window widened after it (readers
//     that caught up meanwhile), never longer than max_window after the
//     last wake-up.
//   - Windows are measured on CLOCK_MONOTONIC, or on the clock a test
//     gives (TailNotifierOptions::now_nanos), so that a test places a
//     publish inside or past a window exactly, whatever the machine's
//     speed.
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

struct TailNotifierOptions {
  // The window with few sleepers; zero: no coalescing (every publish with
  // a sleeper wakes at once; the other fields are ignored).
  absl::Duration min_window = absl::Milliseconds(1);
  // The widest window, whatever the number of sleepers (>= min_window).
  absl::Duration max_window = absl::Milliseconds(1);
  // Reader wake-ups per second to stay under by widening the window:
  // window = sleepers / wakeups_per_second within [min_window,
  // max_window]. 0: the window is min_window.
  uint32_t wakeups_per_second = 0;
  // Test seam: the monotonic clock, in nanoseconds, that measures the
  // windows (in Notify() and the timer thread); empty: CLOCK_MONOTONIC. It
  // must be thread-safe and never go back. The timer thread sleeps for
  // what is left of a window by this clock, in real time, then reads it
  // again: a test clock that is moved past the end of a window is seen
  // within one window of real time. Wait()'s deadline is always on
  // absl::Now().
  std::function<int64_t()> now_nanos;
};

class TailNotifier {
 public:
  explicit TailNotifier(const TailNotifierOptions& options);
  // A fixed window (`coalesce`; zero: none).
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

  // The window for `sleepers` sleeping readers (see the file comment).
  absl::Duration WindowFor(int sleepers) const {
    return absl::Nanoseconds(WindowNs(sleepers));
  }

  // Readers sleeping now (for tests and counters).
  int sleepers() const { return sleepers_.load(std::memory_order_relaxed); }

 private:
  int64_t WindowNs(int sleepers) const;
  int64_t NowNs() const;
  void WakeAll();
  void TimerLoop();

  const int64_t min_ns_;
  const int64_t max_ns_;
  const int64_t ns_per_sleeper_;  // 1e9 / wakeups_per_second; 0: fixed
  const std::function<int64_t()> now_nanos_;  // empty: CLOCK_MONOTONIC
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
