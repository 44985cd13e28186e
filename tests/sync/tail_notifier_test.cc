// TailNotifier: readers wake for every publish, a deferred publish is
// delivered when the writer goes idle, and under load there is at most one
// wake-up per coalescing window.
//
// No assertion here depends on how fast the machine is. A reader is known
// to be asleep (registered as a sleeper, so Notify() must wake it) when its
// ready() predicate returns false for the second time in a Wait() round:
// Wait() re-checks ready() after registering and before sleeping (see
// tail_notifier.cc). Where a test needs a publish inside or past a window,
// it moves a clock of its own (TailNotifierOptions::now_nanos) instead of
// sleeping; the load test compares wake-up counts with what the contract
// allows for the time that actually passed, measured, not assumed.

#include "sync/tail_notifier.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace binlog {
namespace sync {
namespace {

// A ready() predicate "value >= want" that tells when its reader is
// registered as a sleeper: every second consecutive false (the re-check
// after registering) bumps `asleep`.
class Armed {
 public:
  explicit Armed(const std::atomic<int>* value) : value_(value) {}
  std::function<bool()> Want(int want) {
    falses_ = 0;
    return [this, want] {
      if (value_->load() >= want) return true;
      if (++falses_ % 2 == 0) asleep_.fetch_add(1);
      return false;
    };
  }
  // Blocks until the reader registered as a sleeper more than `seen` times.
  int WaitAsleep(int seen) const {
    while (asleep_.load() <= seen) std::this_thread::yield();
    return asleep_.load();
  }
  int asleep() const { return asleep_.load(); }

 private:
  const std::atomic<int>* value_;
  int falses_ = 0;  // reader thread only
  std::atomic<int> asleep_{0};
};

TEST(TailNotifierTest, WaitReturnsAtOnceWhenReady) {
  TailNotifier n(absl::Milliseconds(1));
  EXPECT_TRUE(n.Wait([] { return true; }, absl::InfinitePast()));
  EXPECT_EQ(n.wakeups(), 0u);
}

TEST(TailNotifierTest, WaitTimesOutWithoutPublish) {
  TailNotifier n(absl::Milliseconds(1));
  absl::Time t0 = absl::Now();
  EXPECT_FALSE(n.Wait([] { return false; }, t0 + absl::Milliseconds(30)));
  EXPECT_GE(absl::Now() - t0, absl::Milliseconds(29));  // never early
}

TEST(TailNotifierTest, ShutdownWakesSleepers) {
  TailNotifier n(absl::ZeroDuration());
  std::atomic<int> value{0};
  Armed armed(&value);
  std::thread t([&] {
    EXPECT_FALSE(n.Wait(armed.Want(1), absl::InfiniteFuture()));
  });
  armed.WaitAsleep(0);  // registered: only Shutdown can end its wait
  n.Shutdown();
  t.join();
  EXPECT_TRUE(n.Wait([] { return false; }, absl::InfiniteFuture()) == false);
}

// Coalesce 0: every publish with a sleeping reader is exactly one wake-up.
TEST(TailNotifierTest, ZeroWindowWakesOnEveryPublish) {
  TailNotifier n(absl::ZeroDuration());
  std::atomic<int> value{0};
  Armed armed(&value);
  std::atomic<int> seen{0};
  std::thread reader([&] {
    for (int want = 1; want <= 50; ++want) {
      ASSERT_TRUE(n.Wait(armed.Want(want), absl::InfiniteFuture()));
      seen = want;
    }
  });
  int asleep = 0;
  for (int i = 1; i <= 50; ++i) {
    asleep = armed.WaitAsleep(asleep);
    value = i;
    n.Notify();
    EXPECT_EQ(n.wakeups(), static_cast<uint64_t>(i));
    while (seen.load() < i) std::this_thread::yield();
  }
  reader.join();
  EXPECT_EQ(n.wakeups(), 50u);
}

// A clock the test moves (TailNotifierOptions::now_nanos): a publish falls
// inside or past a window because the test says so, not because the
// machine was fast enough.
class FakeClock {
 public:
  std::function<int64_t()> Fn() {
    return [this] { return ns_.load(); };
  }
  void Advance(absl::Duration d) { ns_.fetch_add(absl::ToInt64Nanoseconds(d)); }

 private:
  std::atomic<int64_t> ns_{absl::ToInt64Nanoseconds(absl::Hours(1))};
};

// Waits until `seen` reaches `want`: bounded by real time, so that a
// publish never delivered fails the test instead of hanging it (the
// caller then shuts the notifier down to release its readers).
bool AwaitSeen(const std::atomic<int>& seen, int want) {
  const absl::Time limit = absl::Now() + absl::Seconds(60);
  while (seen.load() < want) {
    if (absl::Now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

// A publish inside the window after a wake-up is deferred, not lost: the
// timer delivers it when the window ends, though the writer stays idle.
TEST(TailNotifierTest, DeferredPublishIsDeliveredWhenTheWriterGoesIdle) {
  const absl::Duration window = absl::Milliseconds(100);
  FakeClock clock;
  TailNotifierOptions o;
  o.min_window = o.max_window = window;
  o.now_nanos = clock.Fn();
  TailNotifier n(o);
  std::atomic<int> value{0};
  Armed armed(&value);
  std::atomic<int> seen{0};
  std::thread reader([&] {
    for (int want = 1; want <= 2; ++want) {
      ASSERT_TRUE(n.Wait(armed.Want(want), absl::InfiniteFuture()));
      seen = want;
    }
  });
  int asleep = armed.WaitAsleep(0);
  value = 1;
  n.Notify();  // no wake-up in the last window: wakes at once
  EXPECT_EQ(n.wakeups(), 1u);
  while (seen.load() < 1) std::this_thread::yield();
  armed.WaitAsleep(asleep);  // asleep again, waiting for 2
  clock.Advance(window - absl::Nanoseconds(1));  // the window's last instant
  value = 2;
  n.Notify();
  // Deferred to the timer, not delivered now; the timer cannot deliver it
  // either while the clock stands inside the window.
  EXPECT_EQ(n.wakeups(), 1u) << "woken inside the window";
  EXPECT_EQ(seen.load(), 1);
  clock.Advance(absl::Nanoseconds(1));  // the window ends; the writer is idle
  const bool delivered = AwaitSeen(seen, 2);  // by the timer
  EXPECT_TRUE(delivered) << "the deferred publish was never delivered";
  if (!delivered) n.Shutdown();
  reader.join();
  // The waker counts a wake-up after the futex wake, so the reader may
  // return before the count moves: wait for it (a condition, bounded only
  // to turn a lost count into a failure instead of a hang).
  const absl::Time limit = absl::Now() + absl::Seconds(60);
  while (n.wakeups() < 2 && absl::Now() < limit) std::this_thread::yield();
  EXPECT_EQ(n.wakeups(), 2u);
}

// A publish at or past the end of the window wakes at once.
TEST(TailNotifierTest, PublishPastTheWindowWakesAtOnce) {
  const absl::Duration window = absl::Seconds(10);
  FakeClock clock;
  TailNotifierOptions o;
  o.min_window = o.max_window = window;
  o.now_nanos = clock.Fn();
  TailNotifier n(o);
  std::atomic<int> value{0};
  Armed armed(&value);
  std::atomic<int> seen{0};
  std::thread reader([&] {
    for (int want = 1; want <= 2; ++want) {
      ASSERT_TRUE(n.Wait(armed.Want(want), absl::InfiniteFuture()));
      seen = want;
    }
  });
  int asleep = armed.WaitAsleep(0);
  value = 1;
  n.Notify();
  while (seen.load() < 1) std::this_thread::yield();
  armed.WaitAsleep(asleep);
  clock.Advance(window);
  value = 2;
  n.Notify();  // not deferred: a deferral would wait for the timer
  EXPECT_EQ(n.wakeups(), 2u);
  const bool delivered = AwaitSeen(seen, 2);
  EXPECT_TRUE(delivered);
  if (!delivered) n.Shutdown();
  reader.join();
}

// Options of a widening window.
TailNotifierOptions Widening(absl::Duration min_window,
                             absl::Duration max_window,
                             uint32_t wakeups_per_second) {
  TailNotifierOptions o;
  o.min_window = min_window;
  o.max_window = max_window;
  o.wakeups_per_second = wakeups_per_second;
  return o;
}

// The window: min_window with few sleepers, sleepers / wakeups_per_second
// with many, never past max_window; fixed without a rate.
TEST(TailNotifierTest, WindowWidensWithSleepersWithinItsBounds) {
  // 8000 wake-ups per second: 125 us per sleeper.
  TailNotifierOptions o =
      Widening(absl::Milliseconds(1), absl::Milliseconds(10), 8000);
  TailNotifier n(o);
  EXPECT_EQ(n.WindowFor(0), absl::Milliseconds(1));
  EXPECT_EQ(n.WindowFor(1), absl::Milliseconds(1));
  EXPECT_EQ(n.WindowFor(8), absl::Milliseconds(1));
  EXPECT_EQ(n.WindowFor(9), absl::Microseconds(1125));
  EXPECT_EQ(n.WindowFor(16), absl::Milliseconds(2));
  EXPECT_EQ(n.WindowFor(64), absl::Milliseconds(8));
  EXPECT_EQ(n.WindowFor(80), absl::Milliseconds(10));
  EXPECT_EQ(n.WindowFor(100000), absl::Milliseconds(10));

  TailNotifier fixed(absl::Milliseconds(3));
  EXPECT_EQ(fixed.WindowFor(1), absl::Milliseconds(3));
  EXPECT_EQ(fixed.WindowFor(1000), absl::Milliseconds(3));

  o.wakeups_per_second = 0;
  TailNotifier no_rate(o);
  EXPECT_EQ(no_rate.WindowFor(1000), absl::Milliseconds(1));

  o.min_window = absl::ZeroDuration();  // no coalescing at all
  o.wakeups_per_second = 8000;
  TailNotifier zero(o);
  EXPECT_EQ(zero.WindowFor(1000), absl::ZeroDuration());
}

// With two sleepers and 20 wake-ups per second the window is 100 ms, not
// the 10 ms minimum: a publish 20 ms after a wake-up is deferred (a fixed
// 10 ms window would wake at once), and still delivered by the timer once
// the writer goes idle and the widened window ends.
TEST(TailNotifierTest, ManySleepersWidenTheWindowAndStillSeeEveryPublish) {
  FakeClock clock;
  TailNotifierOptions o =
      Widening(absl::Milliseconds(10), absl::Seconds(5), 20);
  o.now_nanos = clock.Fn();
  const absl::Duration widened = absl::Milliseconds(100);
  TailNotifier n(o);
  std::atomic<int> value{0};
  Armed a(&value), b(&value);
  std::atomic<int> seen_a{0}, seen_b{0};
  auto run = [&](Armed* armed, std::atomic<int>* seen) {
    for (int want = 1; want <= 2; ++want) {
      ASSERT_TRUE(n.Wait(armed->Want(want), absl::InfiniteFuture()));
      *seen = want;
    }
  };
  std::thread ta(run, &a, &seen_a);
  std::thread tb(run, &b, &seen_b);
  int asleep_a = a.WaitAsleep(0);
  int asleep_b = b.WaitAsleep(0);
  value = 1;
  n.Notify();  // no wake-up before: at once
  EXPECT_EQ(n.wakeups(), 1u);
  while (seen_a.load() < 1 || seen_b.load() < 1) std::this_thread::yield();
  a.WaitAsleep(asleep_a);
  b.WaitAsleep(asleep_b);
  EXPECT_EQ(n.sleepers(), 2);
  EXPECT_EQ(n.WindowFor(2), widened);
  // Past the minimum window (a fixed one would wake now), inside the
  // widened one.
  clock.Advance(o.min_window + absl::Milliseconds(10));
  value = 2;
  n.Notify();
  EXPECT_EQ(n.wakeups(), 1u) << "woken inside the widened window";
  clock.Advance(widened);  // the widened window ends; the writer is idle
  const bool delivered = AwaitSeen(seen_a, 2) && AwaitSeen(seen_b, 2);
  EXPECT_TRUE(delivered) << "the deferred publish was never delivered";
  if (!delivered) n.Shutdown();
  ta.join();
  tb.join();
}

// Under load: whatever the machine's speed, wake-ups come at most once per
// window from Notify() plus once per window from the timer, and every
// reader still sees the last publish.
TEST(TailNotifierTest, WakeupsAreCoalescedUnderLoad) {
  const absl::Duration window = absl::Milliseconds(20);
  TailNotifier n(window);
  std::atomic<int> value{0};
  std::atomic<int> caught_up{0};
  constexpr int kReaders = 8;
  constexpr int kPublishes = 20000;
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      int last = 0;
      while (last < kPublishes) {
        ASSERT_TRUE(n.Wait([&] { return value.load() > last; },
                           absl::InfiniteFuture()));
        last = value.load();
      }
      caught_up++;
    });
  }
  const absl::Time t0 = absl::Now();
  for (int i = 1; i <= kPublishes; ++i) {
    value = i;
    n.Notify();
  }
  for (auto& t : readers) t.join();  // every reader saw the last publish
  const absl::Duration span = absl::Now() - t0;
  EXPECT_EQ(caught_up.load(), kReaders);
  const uint64_t windows =
      static_cast<uint64_t>(absl::FDivDuration(span, window)) + 1;
  EXPECT_LE(n.wakeups(), 2 * windows)
      << "wake-ups were not coalesced: " << n.wakeups() << " in "
      << absl::FormatDuration(span) << " (" << kPublishes << " publishes)";
  std::printf("%d publishes in %s: %llu wake-ups (bound %llu)\n", kPublishes,
              absl::FormatDuration(span).c_str(),
              static_cast<unsigned long long>(n.wakeups()),
              static_cast<unsigned long long>(2 * windows));
}

}  // namespace
}  // namespace sync
}  // namespace binlog
