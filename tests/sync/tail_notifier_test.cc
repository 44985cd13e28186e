// TailNotifier: readers wake for every publish, within the coalescing
// window, with at most one wake-up per window under load, and never miss a
// publish when the writer goes idle right after a deferred one.

#include "sync/tail_notifier.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace binlog {
namespace sync {
namespace {

TEST(TailNotifierTest, WaitReturnsAtOnceWhenReady) {
  TailNotifier n(absl::Milliseconds(1));
  EXPECT_TRUE(n.Wait([] { return true; }, absl::InfinitePast()));
}

TEST(TailNotifierTest, WaitTimesOutWithoutPublish) {
  TailNotifier n(absl::Milliseconds(1));
  absl::Time t0 = absl::Now();
  EXPECT_FALSE(n.Wait([] { return false; }, t0 + absl::Milliseconds(30)));
  EXPECT_GE(absl::Now() - t0, absl::Milliseconds(29));
}

TEST(TailNotifierTest, ShutdownWakesSleepers) {
  TailNotifier n(absl::ZeroDuration());
  std::thread t([&] {
    EXPECT_FALSE(n.Wait([] { return false; }, absl::InfiniteFuture()));
  });
  absl::SleepFor(absl::Milliseconds(20));
  n.Shutdown();
  t.join();
}

// A deferred wake-up (publish inside the window, then silence) is still
// delivered, by the timer, within about one window.
TEST(TailNotifierTest, DeferredPublishIsDeliveredWhenTheWriterGoesIdle) {
  TailNotifier n(absl::Milliseconds(5));
  std::atomic<int> value{0};
  std::atomic<int> seen{0};
  std::thread reader([&] {
    for (int want = 1; want <= 2; ++want) {
      ASSERT_TRUE(n.Wait([&] { return value.load() >= want; },
                         absl::Now() + absl::Seconds(5)));
      seen = want;
    }
  });
  absl::SleepFor(absl::Milliseconds(20));  // reader is asleep
  value = 1;
  n.Notify();  // wakes at once (no wake-up in the last window)
  while (seen.load() < 1) absl::SleepFor(absl::Microseconds(100));
  absl::SleepFor(absl::Milliseconds(1));  // reader asleep again
  absl::Time t0 = absl::Now();
  value = 2;
  n.Notify();  // inside the window: deferred to the timer
  reader.join();
  EXPECT_LT(absl::Now() - t0, absl::Milliseconds(500));
}

TEST(TailNotifierTest, WakeupsAreCoalescedUnderLoad) {
  TailNotifier n(absl::Milliseconds(2));
  std::atomic<int> value{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<int> caught_up{0};
  for (int i = 0; i < 8; ++i) {
    readers.emplace_back([&] {
      int last = 0;
      while (!done.load()) {
        if (n.Wait([&] { return value.load() > last || done.load(); },
                   absl::Now() + absl::Seconds(5))) {
          last = value.load();
        }
      }
      if (last == value.load()) caught_up++;
    });
  }
  // 2000 publishes over ~200 ms: uncoalesced that is 2000 wake-ups.
  for (int i = 1; i <= 2000; ++i) {
    value = i;
    n.Notify();
    absl::SleepFor(absl::Microseconds(100));
  }
  absl::SleepFor(absl::Milliseconds(20));
  done = true;
  value = value + 1;
  n.Notify();
  n.Shutdown();
  for (auto& t : readers) t.join();
  EXPECT_LT(n.wakeups(), 400u) << "wake-ups were not coalesced";
  EXPECT_GT(n.wakeups(), 5u);
}

TEST(TailNotifierTest, ZeroWindowWakesOnEveryPublish) {
  TailNotifier n(absl::ZeroDuration());
  std::atomic<int> value{0};
  std::thread reader([&] {
    for (int want = 1; want <= 50; ++want) {
      ASSERT_TRUE(n.Wait([&] { return value.load() >= want; },
                         absl::Now() + absl::Seconds(5)));
    }
  });
  for (int i = 1; i <= 50; ++i) {
    absl::SleepFor(absl::Microseconds(500));
    value = i;
    n.Notify();
  }
  reader.join();
}

}  // namespace
}  // namespace sync
}  // namespace binlog
