// The relay's copy served live (server::Server with ServerOptions::mirror,
// what binlog_server --source runs): a downstream client of the library
// (server/client.h) reads from a server that serves the copy a relay keeps
// of a live log served by the library. The downstream client gets the
// transactions the relay receives while it reads, by file and position and
// by GTID set, never before the copy's fdatasync (the copy's sync held at
// a gate), and the statements that report the log's state answer from the
// copy's durable published end.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "io/socket.h"
#include "server/auth.h"
#include "server/client.h"
#include "server/relay.h"
#include "server/server.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/wait_until.h"
#include "tests/tools/gated_sync_fs.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

// A served process: a Server on a loopback port and its accept thread.
struct Served {
  std::unique_ptr<Server> server;
  io::Socket listener;
  std::thread runner;
  void Stop() {
    if (server == nullptr) return;
    server->Shutdown();
    runner.join();
    server.reset();
  }
};

// Source (a live log served by the library) -> relay (gated fdatasync)
// -> downstream server serving the copy live.
class RelayServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string src = "/tmp/relay_serve_src_XXXXXX", copy = "/tmp/relay_serve_copy_XXXXXX";
    ASSERT_NE(::mkdtemp(&src[0]), nullptr);
    ASSERT_NE(::mkdtemp(&copy[0]), nullptr);
    src_dir_ = src;
    copy_dir_ = copy;
    auto log = Binlog::Open(src_dir_, "binlog", ServedLogOptions(io::Codec::kNone));
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    ServerOptions so;
    so.dir = src_dir_;
    so.live = log_.get();
    so.users = Users();
    Serve(so, &source_);
  }

  void TearDown() override {
    fs_.Open();  // a failed assertion may have left the gate shut
    downstream_.Stop();
    if (relay_ != nullptr) {
      EXPECT_TRUE(relay_->Stop().ok());
    }
    relay_.reset();
    source_.Stop();
    if (log_ != nullptr) {
      EXPECT_TRUE(log_->Close().ok());
    }
    std::string out;
    testing_util::RunCommand("rm -rf '" + src_dir_ + "' '" + copy_dir_ + "'", &out);
  }

  static UserMap Users() {
    return {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}}};
  }

  void Serve(const ServerOptions& so, Served* out) {
    auto server = Server::Create(so);
    ASSERT_TRUE(server.ok()) << server.status();
    auto listener = io::Socket::ListenLoopback(0);
    ASSERT_TRUE(listener.ok()) << listener.status();
    out->server = std::move(*server);
    out->listener = std::move(*listener);
    Server* s = out->server.get();
    io::Socket* l = &out->listener;
    out->runner = std::thread([s, l] { s->Run(l); });
  }

  absl::StatusOr<CommitPosition> Commit() {
    const int i = next_++;
    TransactionBuffer txn;
    txn.AppendCommitGtid(kServedTs, 1, CommitGtid());
    AppendQuery(&txn, kServedTs, 1, 5, "db", "BEGIN");
    AppendQuery(&txn, kServedTs, 1, 5, "db", absl::StrCat("INSERT INTO t VALUES (", i, ")"));
    AppendXid(&txn, kServedTs, 1, 7000 + i);
    return log_->Commit(&txn);
  }

  // The relay, its copy's fdatasync gated by fs_, then the downstream
  // server serving the copy (`live`: through the copy's readers; false:
  // the copy's files at rest, as binlog_server served them before).
  void StartRelayAndDownstream(bool live = true) {
    RelayOptions ro;
    ro.dir = copy_dir_;
    ro.basename = "binlog";
    ro.mirror.file_system = &fs_;
    ro.source.host = "127.0.0.1";
    ro.source.port = source_.listener.port();
    ro.source.user = "repl";
    ro.source.password = "pw";
    ro.source.server_id = 78;
    ro.source.heartbeat_period = absl::Milliseconds(100);
    ro.silence_timeout = absl::Seconds(30);
    auto relay = Relay::Start(ro);
    ASSERT_TRUE(relay.ok()) << relay.status();
    relay_ = std::move(*relay);
    ASSERT_TRUE(WaitCaughtUp());
    ServerOptions so;
    so.dir = copy_dir_;
    so.basename = "binlog";
    if (live) so.mirror = relay_->mirror();
    so.users = Users();
    Serve(so, &downstream_);
  }

  // The copy's durable end is the source's end.
  bool WaitCaughtUp() {
    const std::vector<LogFileInfo> files = log_->ListFiles();
    const MirrorPosition want{files.back().name, files.back().size};
    return testutil::WaitUntil([&] { return relay_->mirror()->durable_end() == want; });
  }

  absl::StatusOr<ReplicationClient> ConnectDownstream() {
    auto sock = io::Socket::ConnectTcp("127.0.0.1", downstream_.listener.port());
    if (!sock.ok()) return sock.status();
    auto c = ReplicationClient::Connect(std::move(*sock), "repl", "pw");
    if (!c.ok()) return c.status();
    auto set = c->Query("SET @master_binlog_checksum = 'CRC32'");
    if (!set.ok()) return set.status();
    return c;
  }

  // Reads events until `xids` Xid events came; the GNOs of the Gtid events
  // seen go to *gnos. DeadlineExceeded if they do not come by `deadline`.
  static absl::Status ReadTransactions(ReplicationClient* c, int xids, absl::Time deadline,
                                       std::vector<int64_t>* gnos = nullptr) {
    int seen = 0;
    while (seen < xids) {
      auto r = c->Read(deadline);
      if (!r.ok()) return r.status();
      if (r->kind == ClientReply::kError) {
        return absl::FailedPreconditionError(absl::StrCat(r->error_code, " ", r->message));
      }
      if (r->kind != ClientReply::kEvent || r->event.size() < kHeaderSize) continue;
      const EventHeader h = DecodeHeader(r->event);
      if (h.type == kXidEvent) ++seen;
      if (h.type == kGtidEvent && gnos != nullptr) {
        auto g = DecodeAnyMySqlGtidEvent(h.type, EventBody(r->event, true));
        if (g.ok()) gnos->push_back(g->gno);
      }
    }
    return absl::OkStatus();
  }

  std::string src_dir_, copy_dir_;
  std::unique_ptr<Binlog> log_;
  Served source_;
  GatedSyncFileSystem fs_;
  std::unique_ptr<Relay> relay_;
  Served downstream_;
  int next_ = 1;
};

// By file and position: the transaction the relay receives while the
// downstream client reads reaches the client only once the copy's
// fdatasync has completed (the gate shut, the copy holds its bytes written
// but not synced: served at rest, they would go out).
TEST_F(RelayServeTest, ADownstreamReplicaGetsATransactionOnlyAfterTheCopysFdatasync) {
  ASSERT_TRUE(Commit().ok());
  StartRelayAndDownstream();
  if (HasFatalFailure()) return;
  auto c = ConnectDownstream();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->Register(501, "127.0.0.1", 3307).ok());
  ASSERT_TRUE(c->Dump("", 4, 0, 501).ok());
  ASSERT_TRUE(ReadTransactions(&*c, 1, absl::Now() + absl::Seconds(30)).ok());

  fs_.Close();
  ASSERT_TRUE(Commit().ok());
  // The relay received it and wrote it; its fdatasync waits at the gate
  // (holding the copy's mutex: the test asks the copy nothing meanwhile).
  ASSERT_TRUE(testutil::WaitUntil([&] { return fs_.blocked() > 0; }));
  absl::Status early = ReadTransactions(&*c, 1, absl::Now() + absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(early))
      << "the downstream replica got a transaction the copy had not synced: " << early;
  fs_.Open();
  EXPECT_TRUE(ReadTransactions(&*c, 1, absl::Now() + absl::Seconds(30)).ok());
}

// By GTID set: the client that has GNO 1 gets 2, 3 and 4, committed while
// it reads, each once.
TEST_F(RelayServeTest, ByGtidSetADownstreamReplicaGetsWhatArrivesWhileItReads) {
  ASSERT_TRUE(Commit().ok());
  ASSERT_TRUE(Commit().ok());
  StartRelayAndDownstream();
  if (HasFatalFailure()) return;
  auto c = ConnectDownstream();
  ASSERT_TRUE(c.ok()) << c.status();
  GtidSet have;
  have.Add(Tsid(*Uuid::Parse(kServedUuid)), 1);
  ASSERT_TRUE(c->DumpGtid(have.EncodePreviousGtidsBody(), 0, 502).ok());
  std::vector<int64_t> gnos;
  ASSERT_TRUE(ReadTransactions(&*c, 1, absl::Now() + absl::Seconds(30), &gnos).ok());
  ASSERT_TRUE(Commit().ok());
  ASSERT_TRUE(Commit().ok());
  ASSERT_TRUE(ReadTransactions(&*c, 2, absl::Now() + absl::Seconds(30), &gnos).ok());
  EXPECT_EQ(gnos, (std::vector<int64_t>{2, 3, 4}));
}

// A client whose set lacks what the copy's first file says came before it
// gets 1789 from the copy, as from a source that purged them; one with
// GTIDs of the source the copy never had gets 1885.
TEST_F(RelayServeTest, GtidSetsOutsideTheCopyGetMySqlsErrors) {
  ASSERT_TRUE(Commit().ok());
  StartRelayAndDownstream();
  if (HasFatalFailure()) return;
  auto c = ConnectDownstream();
  ASSERT_TRUE(c.ok()) << c.status();
  GtidSet ahead;
  ahead.AddInterval(Tsid(*Uuid::Parse(kServedUuid)), 1, 50);
  ASSERT_TRUE(c->DumpGtid(ahead.EncodePreviousGtidsBody(), 0, 503).ok());
  auto r = c->Read(absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, ClientReply::kError);
  EXPECT_EQ(r->error_code, 1885) << r->message;
}

// SHOW BINARY LOG STATUS and @@gtid_executed answer from the copy's
// durable published end: with the copy's fdatasync held, the transaction
// written but not synced is not reported.
TEST_F(RelayServeTest, StatusStatementsReportTheCopysDurableEnd) {
  ASSERT_TRUE(Commit().ok());
  StartRelayAndDownstream();
  if (HasFatalFailure()) return;
  auto c = ConnectDownstream();
  ASSERT_TRUE(c.ok()) << c.status();
  const MirrorPosition durable = relay_->mirror()->durable_end();
  fs_.Close();
  ASSERT_TRUE(Commit().ok());
  ASSERT_TRUE(testutil::WaitUntil([&] { return fs_.blocked() > 0; }));
  auto st = c->Query("SHOW BINARY LOG STATUS");
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->kind, ClientReply::kResultSet);
  ASSERT_FALSE(st->rows.empty());
  EXPECT_EQ(st->rows[0][0].value_or(""), durable.file);
  EXPECT_EQ(st->rows[0][1].value_or(""), absl::StrCat(durable.pos));
  auto g = c->Query("SELECT @@GLOBAL.gtid_executed");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->kind, ClientReply::kResultSet);
  EXPECT_EQ(absl::AsciiStrToLower(g->rows[0][0].value_or("")),
            absl::StrCat(kServedUuid, ":1"));
  fs_.Open();
  ASSERT_TRUE(WaitCaughtUp());
  g = c->Query("SELECT @@GLOBAL.gtid_executed");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(absl::AsciiStrToLower(g->rows[0][0].value_or("")),
            absl::StrCat(kServedUuid, ":1-2"));
}

}  // namespace
}  // namespace server
}  // namespace binlog
