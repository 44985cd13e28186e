// The relay (server/relay.h), its source connection (server/source.h) and
// the replication client (server/client.h) against hostile or broken
// sources: a fake source that sends short error packets, error texts of
// its choosing or nothing at all, the library's own server, a copy that
// cannot be opened, and Stop from two threads. Each case here was a defect
// (a crash, a relay stopped for good by a source's text, a reconnect storm,
// a Stop that waited 30 s, a hang).

#include <sys/wait.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "io/socket.h"
#include "io/tls.h"
#include "server/client.h"
#include "server/protocol.h"
#include "server/relay.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/wait_until.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

std::string Frame(const std::string& payload, uint8_t seq) {
  std::string out;
  FramePacket(payload, &seq, &out);
  return out;
}

bool ReadOnePacket(io::Socket* s, std::string* out) {
  char h[4];
  size_t got = 0;
  while (got < 4) {
    auto r = s->ReadSome(h + got, 4 - got, absl::Now() + absl::Seconds(10));
    if (!r.ok()) return false;
    got += *r;
  }
  size_t len = static_cast<uint8_t>(h[0]) | (static_cast<uint8_t>(h[1]) << 8) |
               (static_cast<size_t>(static_cast<uint8_t>(h[2])) << 16);
  out->assign(len, '\0');
  got = 0;
  while (got < len) {
    auto r = s->ReadSome(&(*out)[got], len - got, absl::Now() + absl::Seconds(10));
    if (!r.ok()) return false;
    got += *r;
  }
  return true;
}

// An error packet whose '#' SQL-state marker is not followed by 5 bytes:
// ParseErr's remove_prefix(6) underflows the string_view.
TEST(RelayRobustnessTest, ShortSqlStateInAnErrorPacketIsAnError) {
  auto l = io::Socket::ListenTcp("127.0.0.1", 0);
  ASSERT_TRUE(l.ok());
  auto c = io::Socket::ConnectTcp("127.0.0.1", l->port());
  auto a = l->Accept(absl::Seconds(5));
  ASSERT_TRUE(c.ok() && a.ok());
  std::string err("\xff\x01\x00#HY", 6);
  ASSERT_TRUE(a->WriteAll(Frame(err, 0), absl::Now() + absl::Seconds(5)).ok());
  auto rc = ReplicationClient::Connect(std::move(*c), "u", "p");
  EXPECT_FALSE(rc.ok());
}

// Relay::Start when MirrorLog::Open fails: an error, not a crash of the
// half-built relay.
TEST(RelayRobustnessTest, StartFailingToOpenTheCopyIsAnError) {
  RelayOptions o;
  o.dir = "/nonexistent/relay_copy";
  o.basename = "binlog";
  o.mirror.create_if_missing = false;
  o.source.host = "127.0.0.1";
  o.source.server_id = 9;
  auto r = Relay::Start(o);
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
}

// A source named by a host name: refused at Start (no resolver runs), not
// retried forever.
TEST(RelayRobustnessTest, AHostNameIsRefusedAtStart) {
  RelayOptions o;
  o.dir = "/nonexistent/relay_copy";
  o.basename = "binlog";
  o.source.host = "dbhost";
  o.source.server_id = 9;
  auto r = Relay::Start(o);
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
}

// A fake source: handshake, OK to any credentials, then an error reply to
// the first query (SELECT VERSION()) with `message`. Serves connections
// until stopped; counts them.
class FakeSource {
 public:
  explicit FakeSource(std::string message, bool silent = false)
      : message_(std::move(message)), silent_(silent) {
    auto l = io::Socket::ListenTcp("127.0.0.1", 0);
    EXPECT_TRUE(l.ok());
    listener_ = std::move(*l);
    port_ = listener_.port();
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeSource() {
    stop_ = true;
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  void Run() {
    while (!stop_) {
      auto a = listener_.Accept(absl::Milliseconds(50));
      if (!a.ok()) continue;
      ++connections_;
      if (silent_) {
        // Accepts, never speaks: holds the connection until stopped.
        while (!stop_) absl::SleepFor(absl::Milliseconds(20));  // the fake's idle loop
        return;
      }
      Handshake h;
      h.server_version = "8.0.36";
      h.scramble = std::string(20, 'x');
      a->WriteAll(Frame(EncodeHandshake(h), 0), absl::Now() + absl::Seconds(5)).IgnoreError();
      std::string p;
      if (!ReadOnePacket(&*a, &p)) continue;
      a->WriteAll(Frame(std::string("\x00\x00\x00\x02\x00\x00\x00", 7), 2),
                  absl::Now() + absl::Seconds(5))
          .IgnoreError();
      if (!ReadOnePacket(&*a, &p)) continue;
      a->WriteAll(Frame(std::string("\xff\x01\x00#HY000", 9) + message_, 1),
                  absl::Now() + absl::Seconds(5))
          .IgnoreError();
      ReadOnePacket(&*a, &p);  // until the client closes
    }
  }
  std::string message_;
  bool silent_;
  io::Socket listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

RelayOptions FakeOptions(const std::string& dir, uint16_t port) {
  RelayOptions o;
  o.dir = dir;
  o.basename = "binlog";
  o.source.host = "127.0.0.1";
  o.source.port = port;
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 9;
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(100);
  return o;
}

// A scratch directory for a copy, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = "/tmp/relay_robust_XXXXXX";
    EXPECT_NE(::mkdtemp(&tmpl[0]), nullptr);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::string out;
    testing_util::RunCommand("rm -rf '" + path_ + "'", &out);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A source's error, whatever its text, is the source's: the relay retries
// (it stops for good only on an error of its own copy).
TEST(RelayRobustnessTest, ASourceErrorNeverStopsTheRelayForGood) {
  FakeSource src("Access denied; you need to copy: nothing");
  ScratchDir dir;
  auto r = Relay::Start(FakeOptions(dir.path(), src.port()));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(testutil::WaitUntil([&] { return src.connections() >= 3 || !(*r)->stats().fatal.empty(); },
                                  absl::Seconds(20)));
  EXPECT_TRUE((*r)->stats().fatal.empty())
      << "fatal after " << src.connections() << " connection(s): " << (*r)->stats().fatal;
  EXPECT_TRUE((*r)->Stop().ok());
}

// Stop() while the receiver is inside SourceStream::Start (a source that
// accepts and never answers): Stop interrupts the handshake instead of
// waiting for its 30 s timeout.
TEST(RelayRobustnessTest, StopDoesNotWaitForAStalledConnect) {
  FakeSource src("", /*silent=*/true);
  ScratchDir dir;
  auto r = Relay::Start(FakeOptions(dir.path(), src.port()));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(testutil::WaitUntil([&] { return src.connections() >= 1; }));
  const absl::Time t0 = absl::Now();
  EXPECT_TRUE((*r)->Stop().ok());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(5)) << "Stop took " << (absl::Now() - t0);
}

// Relayed from the library's own server, an event whose first byte (its
// timestamp's low byte) is 0xef, the semi-sync header's magic: relayed
// whole (the header is decided once per stream, never guessed from a
// packet's bytes), with no reconnect storm.
class RelayRobustnessChainTest : public ServedLogTest {
 protected:
  void TearDown() override {
    if (relay_ != nullptr) {
      EXPECT_TRUE(relay_->Stop().ok());
    }
    relay_.reset();
    ServedLogTest::TearDown();
  }
  ScratchDir scratch_;
  std::string copy_dir_;
  std::unique_ptr<Relay> relay_;
};

TEST_P(RelayRobustnessChainTest, AnEventWhoseTimestampEndsIn0xefIsRelayed) {
  StartServedLog("relay_robust_", 3, 1000);
  if (HasFatalFailure()) return;
  constexpr uint32_t kTs = kServedTs + 0xef;  // low byte 0xef
  TransactionBuffer txn;
  txn.AppendCommitGtid(kTs, 1, CommitGtid());
  AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
  AppendQuery(&txn, kTs, 1, 5, "db", "INSERT INTO t VALUES (1)");
  AppendXid(&txn, kTs, 1, 7);
  ASSERT_TRUE(log_->Commit(&txn).ok());
  copy_dir_ = scratch_.path();
  RelayOptions o;
  o.dir = copy_dir_;
  o.basename = "binlog";
  o.source.host = "127.0.0.1";
  o.source.port = port_;
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 77;
  o.source.heartbeat_period = absl::Milliseconds(100);
  o.silence_timeout = absl::Seconds(2);
  o.backoff_min = absl::Milliseconds(100);
  o.backoff_max = absl::Seconds(5);
  auto r = Relay::Start(o);
  ASSERT_TRUE(r.ok()) << r.status();
  relay_ = std::move(*r);
  const auto files = log_->ListFiles();
  const MirrorPosition want{files.back().name, files.back().size};
  const bool caught_up = testutil::WaitUntil(
      [&] { return relay_->mirror()->durable_end() == want; }, absl::Seconds(6));
  const Relay::Stats st = relay_->stats();
  EXPECT_TRUE(caught_up) << "copy at " << relay_->mirror()->durable_end().file << ":"
                         << relay_->mirror()->durable_end().pos << " want " << want.file << ":"
                         << want.pos << "; connects " << st.connects << "; last error "
                         << st.last_error;
  // With a doubling backoff (100 ms .. 5 s) 6 s allow at most ~7 streams.
  EXPECT_LE(st.connects, 8u) << "reconnect storm: " << st.connects << " streams in 6 s";
}

// TLS with a source list: the caller's verify_host is what every server's
// certificate must name (it was replaced by each address, so a certificate
// that does not name it was accepted); an address's own verify_host comes
// first.
TEST_P(RelayRobustnessChainTest, TheCallersTlsVerifyHostIsKeptWithASourceList) {
  EnableTls(false);
  StartServedLog("relay_verify_host_", 3, 1000);
  if (HasFatalFailure()) return;
  auto ctx = io::TlsContext::ForClient(pki_.ca);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  ClientTls tls;
  tls.context = *ctx;
  tls.verify_host = "db.example";  // not in the server's certificate
  RelayOptions o;
  o.basename = "binlog";
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 77;
  o.source.tls = &tls;
  o.source.heartbeat_period = absl::Milliseconds(100);
  o.source.connect_timeout = absl::Seconds(5);
  o.silence_timeout = absl::Seconds(1);
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(100);
  {
    ScratchDir copy;
    o.dir = copy.path();
    o.sources = {{"127.0.0.1", port_}};
    auto r = Relay::Start(o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(testutil::WaitUntil(
        [&] { return (*r)->stats().connect_failures >= 3 || (*r)->stats().connects > 0; }));
    EXPECT_EQ((*r)->stats().connects, 0u) << "the certificate was taken for db.example";
    EXPECT_TRUE((*r)->Stop().ok());
  }
  {
    ScratchDir copy;
    o.dir = copy.path();
    o.sources = {{"127.0.0.1", port_, "localhost"}};
    auto r = Relay::Start(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const auto files = log_->ListFiles();
    const MirrorPosition want{files.back().name, files.back().size};
    EXPECT_TRUE(
        testutil::WaitUntil([&] { return (*r)->mirror()->durable_end() == want; }))
        << (*r)->stats().last_error;
    EXPECT_TRUE((*r)->Stop().ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Plain, RelayRobustnessChainTest, ::testing::Values(io::Codec::kNone));

// Stop() from two threads at once: one joins the receiver and closes the
// copy, the other waits for its result.
TEST(RelayRobustnessTest, ConcurrentStops) {
  FakeSource src("no");
  ScratchDir dir;
  auto r = Relay::Start(FakeOptions(dir.path(), src.port()));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(testutil::WaitUntil([&] { return src.connections() >= 1; }));
  absl::Status a, b;
  std::thread t1([&] { a = (*r)->Stop(); });
  std::thread t2([&] { b = (*r)->Stop(); });
  t1.join();
  t2.join();
  EXPECT_TRUE(a.ok()) << a;
  EXPECT_TRUE(b.ok()) << b;
}

}  // namespace
}  // namespace server
}  // namespace binlog
