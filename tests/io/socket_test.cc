// io::Socket's client connect: a deadline bounds it (a listener whose
// backlog is full drops the SYNs, as a host that is down or filtered
// does), and a ShutdownHandle made before the connect interrupts it from
// another thread.

#include "io/socket.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace binlog {
namespace io {
namespace {

// A loopback listener that never accepts, with its backlog filled by
// `held` connections: the next connect to it gets no answer to its SYN.
struct FullListener {
  Socket listener;
  std::vector<Socket> held;
  uint16_t port = 0;

  // False if no connect stalled within 1000 attempts.
  bool Fill() {
    auto l = Socket::ListenLoopback(0);
    if (!l.ok()) return false;
    listener = std::move(*l);
    port = listener.port();
    for (int i = 0; i < 1000; ++i) {
      auto c = Socket::ConnectTcp("127.0.0.1", port, absl::Now() + absl::Milliseconds(200));
      if (absl::IsDeadlineExceeded(c.status())) return true;
      if (!c.ok()) return false;
      held.push_back(std::move(*c));
    }
    return false;
  }
};

TEST(SocketTest, ConnectToAListenerThatDropsTheSynEndsAtTheDeadline) {
  FullListener full;
  ASSERT_TRUE(full.Fill());
  const absl::Time t0 = absl::Now();
  auto c = Socket::ConnectTcp("127.0.0.1", full.port, t0 + absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - t0;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDeadlineExceeded) << c.status();
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(10));
}

TEST(SocketTest, ShutdownInterruptsAConnect) {
  FullListener full;
  ASSERT_TRUE(full.Fill());
  // std::mutex: what thread sanitizers see whatever the abseil build.
  std::mutex mu;
  std::condition_variable cv;
  bool registered = false;
  ShutdownHandle handle;
  absl::Status result;
  absl::Time ended;
  std::thread t([&] {
    auto c = Socket::ConnectTcp("127.0.0.1", full.port, absl::Now() + absl::Seconds(60),
                                [&](const Socket& s) {
                                  std::lock_guard<std::mutex> l(mu);
                                  handle = ShutdownHandle(s);
                                  registered = true;
                                  cv.notify_all();
                                });
    result = c.status();
    ended = absl::Now();
  });
  absl::Time t0;
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return registered; });
    t0 = absl::Now();
    handle.Shutdown();
  }
  t.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kUnavailable) << result;
  EXPECT_LT(ended - t0, absl::Seconds(10));
}

TEST(SocketTest, ConnectWithADeadlineStillConnects) {
  auto l = Socket::ListenLoopback(0);
  ASSERT_TRUE(l.ok()) << l.status();
  auto c = Socket::ConnectTcp("127.0.0.1", l->port(), absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(c.ok()) << c.status();
  auto a = l->Accept(absl::Seconds(10));
  ASSERT_TRUE(a.ok()) << a.status();
  // Blocking again after the connect: a read waits for its deadline.
  ASSERT_TRUE(c->WriteAll("ping", absl::Now() + absl::Seconds(10)).ok());
  char buf[4];
  ASSERT_TRUE(a->ReadFull(buf, 4, absl::Now() + absl::Seconds(10)).ok());
  EXPECT_EQ(std::string(buf, 4), "ping");
  // Nothing listening: refused at once.
  const uint16_t gone = l->port();
  *l = Socket();
  auto refused = Socket::ConnectTcp("127.0.0.1", gone, absl::Now() + absl::Seconds(10));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
}

}  // namespace
}  // namespace io
}  // namespace binlog
