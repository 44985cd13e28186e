#include "sync/tail_notifier.h"

#include <time.h>

#include <algorithm>

#include "absl/time/clock.h"
#include "sync/futex.h"

namespace binlog {
namespace sync {
namespace {

int64_t MonotonicNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no system call
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

TailNotifier::TailNotifier(const TailNotifierOptions& options)
    : min_ns_(std::max<int64_t>(0, absl::ToInt64Nanoseconds(options.min_window))),
      max_ns_(std::max(min_ns_, absl::ToInt64Nanoseconds(options.max_window))),
      ns_per_sleeper_(options.wakeups_per_second == 0
                          ? 0
                          : 1000000000 / static_cast<int64_t>(
                                             options.wakeups_per_second)),
      now_nanos_(options.now_nanos) {
  if (min_ns_ > 0) timer_ = std::thread([this] { TimerLoop(); });
}

TailNotifier::TailNotifier(absl::Duration coalesce)
    : TailNotifier(TailNotifierOptions{coalesce, coalesce, 0, nullptr}) {}

int64_t TailNotifier::NowNs() const {
  return now_nanos_ ? now_nanos_() : MonotonicNanos();
}

int64_t TailNotifier::WindowNs(int sleepers) const {
  // A zero minimum is no coalescing at all (Notify wakes at once).
  if (min_ns_ <= 0 || ns_per_sleeper_ == 0 || sleepers <= 0) return min_ns_;
  const int64_t w = ns_per_sleeper_ * sleepers;
  return std::min(max_ns_, std::max(min_ns_, w));
}

TailNotifier::~TailNotifier() {
  Shutdown();
  if (timer_.joinable()) timer_.join();
}

void TailNotifier::WakeAll() {
  gen_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&gen_);
  wakeups_.fetch_add(1, std::memory_order_relaxed);
}

void TailNotifier::Notify() {
  // Pairs with the sleepers_ increment in Wait(): either the reader's
  // re-check of ready() sees the new data, or we see the sleeper.
  const int sleepers = sleepers_.load(std::memory_order_seq_cst);
  if (sleepers == 0) return;
  if (min_ns_ <= 0) {
    WakeAll();
    return;
  }
  int64_t now = NowNs();
  if (now - last_wake_ns_.load(std::memory_order_relaxed) >=
      WindowNs(sleepers)) {
    last_wake_ns_.store(now, std::memory_order_relaxed);
    WakeAll();
    return;
  }
  if (!deferred_.exchange(true, std::memory_order_acq_rel)) {
    timer_word_.store(1, std::memory_order_release);
    FutexWake(&timer_word_, 1);
  }
}

void TailNotifier::TimerLoop() {
  while (!shutdown_.load(std::memory_order_acquire)) {
    if (timer_word_.load(std::memory_order_acquire) == 0) {
      FutexWait(&timer_word_, 0);
      continue;
    }
    // The window for the readers asleep now (more may have gone to sleep
    // since the deferred publish): it is re-read after every sleep.
    int64_t due = last_wake_ns_.load(std::memory_order_relaxed) +
                  WindowNs(sleepers_.load(std::memory_order_relaxed));
    int64_t now = NowNs();
    if (now < due) {
      struct timespec ts;
      ts.tv_sec = (due - now) / 1000000000;
      ts.tv_nsec = (due - now) % 1000000000;
      nanosleep(&ts, nullptr);
      continue;
    }
    timer_word_.store(0, std::memory_order_relaxed);
    deferred_.store(false, std::memory_order_release);
    last_wake_ns_.store(NowNs(), std::memory_order_relaxed);
    WakeAll();
  }
}

void TailNotifier::Shutdown() {
  if (shutdown_.exchange(true)) return;
  gen_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&gen_);
  timer_word_.store(1, std::memory_order_release);
  FutexWake(&timer_word_, 1);
}

bool TailNotifier::Wait(const std::function<bool()>& ready,
                        absl::Time deadline) {
  for (;;) {
    if (ready()) return true;
    if (shutdown_.load(std::memory_order_acquire)) return false;
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    uint32_t g = gen_.load(std::memory_order_acquire);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    // Why no wake-up is lost (Dekker's pattern): the writer stores its new
    // data (seq_cst), then loads sleepers_ in Notify() (seq_cst); we
    // increment sleepers_ (seq_cst), then re-check ready(), whose load must
    // be seq_cst too (see the header). All four are in the single total
    // order of seq_cst operations: if the writer's load comes first, its
    // store comes before our increment and so before our re-check, which
    // then sees it; otherwise the writer sees us and wakes us. With an
    // acquire load in ready() the re-check could be satisfied from before
    // the increment on a weakly ordered CPU (x86 orders it anyway, so no
    // test here can fail). A seq_cst fence would allow any load order, but
    // ThreadSanitizer does not support fences.
    if (!ready() && !shutdown_.load(std::memory_order_acquire)) {
      FutexWait(&gen_, g, left);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace sync
}  // namespace binlog
