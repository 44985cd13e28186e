// The relay's failover between MySQL-flavor sources served by the library
// (no MySQL server is packaged here): log A (server 1) and log B (server
// 2, the same basename, other file boundaries) that holds A's
// transactions with A's GTIDs then its own, as a replica with
// log_replica_updates does; each served by a server::Server on 127.0.0.1.
// server::Relay with sources A, B follows A; when A's server goes away it
// tries B after failover_after, sees another server (@@server_id), locates
// B's file by a COM_BINLOG_DUMP_GTID's first Rotate and copies it whole as
// the copy's next file; B's later commits and rotations follow. The copy is
// A's files then B's, byte for byte, and a GTID reader of the copy returns
// each transaction once.

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/event_builder.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/socket.h"
#include "server/auth.h"
#include "server/client.h"
#include "server/protocol.h"
#include "server/relay.h"
#include "server/server.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace server {
namespace {

constexpr uint32_t kTs = 1700000000;
const char kUuidA[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const char kUuidB[] = "5f2b0a11-0000-11e1-9e33-c80aa9429562";

std::string Contents(const std::string& path) {
  auto s = ReadSmallFile(io::FileSystem::Default(), path, 1ull << 32);
  return s.ok() ? *s : std::string();
}

std::string TempDir(const char* tag) {
  std::string tmpl = absl::StrCat("/tmp/", tag, "XXXXXX");
  EXPECT_NE(::mkdtemp(&tmpl[0]), nullptr);
  return tmpl;
}

// A log served by a server::Server at rest on a loopback port.
struct ServedSource {
  uint32_t id = 0;
  std::string dir;
  std::unique_ptr<Binlog> log;
  std::unique_ptr<Server> server;
  io::Socket listener;
  uint16_t port = 0;
  std::thread runner;

  void Open(uint32_t server_id, const char* uuid, uint64_t max_file_size) {
    id = server_id;
    dir = TempDir(absl::StrCat("relay_failover_", id, "_").c_str());
    Options o;
    o.server_id = id;
    o.server_uuid = *Uuid::Parse(uuid);
    o.max_file_size = max_file_size;
    o.preallocate = io::PreallocMode::kNone;
    o.sync_policy = SyncPolicy::kNever;
    auto l = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(l.ok()) << l.status();
    log = std::move(*l);
  }
  // Transactions from..to (inclusive); `theirs`: with A's GTIDs (A:gno)
  // and A's server id in their events.
  void Commit(int from, int to, bool theirs) {
    const Uuid a = *Uuid::Parse(kUuidA);
    TransactionBuffer txn;
    for (int i = from; i <= to; ++i) {
      const uint32_t origin = theirs ? 1 : id;
      CommitGtid g;
      if (theirs && id != 1) {
        g.kind = CommitGtid::Kind::kAssigned;
        g.uuid = a;
        g.gno = i;
        ASSERT_TRUE(log->AcquireGtid(a, i).ok());
      }
      txn.Clear();
      txn.AppendCommitGtid(kTs, origin, g);
      AppendQuery(&txn, kTs, origin, 5, "db", "BEGIN");
      AppendQuery(&txn, kTs, origin, 5, "db",
                  absl::StrCat("INSERT INTO t VALUES (", i, ", '",
                               std::string(200 + i % 300, 'a' + i % 26), "')"));
      AppendXid(&txn, kTs, origin, 1000 + i);
      ASSERT_TRUE(log->Commit(&txn).ok());
    }
  }
  // `server_id` 0: the log's (as a server writing its own files).
  void Serve(uint32_t server_id = 0) {
    ServerOptions so;
    so.dir = dir;
    so.server_id = server_id;
    so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}}};
    auto s = Server::Create(so);
    ASSERT_TRUE(s.ok()) << s.status();
    server = std::move(*s);
    auto l = io::Socket::ListenLoopback(port);
    ASSERT_TRUE(l.ok()) << l.status();
    listener = std::move(*l);
    port = listener.port();
    runner = std::thread([this] { server->Run(&listener); });
  }
  void StopServing() {
    if (server == nullptr) return;
    server->Shutdown();
    runner.join();
    server.reset();
    listener = io::Socket();
  }
  ~ServedSource() {
    StopServing();
    log.reset();
    if (!dir.empty()) {
      std::string out;
      testing_util::RunCommand("rm -rf '" + dir + "'", &out);
    }
  }
};

TEST(RelayFailoverTest, FollowsTheOtherServerByGtidAndKeepsEveryFileExact) {
  ServedSource a, b;
  a.Open(1, kUuidA, 8192);
  b.Open(2, kUuidB, 12000);
  if (HasFatalFailure()) return;
  a.Commit(1, 40, false);
  b.Commit(1, 40, true);
  a.Serve();
  b.Serve();
  if (HasFatalFailure()) return;

  const std::string copy_dir = TempDir("relay_failover_copy_");
  RelayOptions o;
  o.dir = copy_dir;
  o.basename = "binlog";
  o.sources = {{"127.0.0.1", a.port}, {"127.0.0.1", b.port}};
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 77;
  o.source.heartbeat_period = absl::Milliseconds(100);
  o.silence_timeout = absl::Seconds(1);
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(200);
  o.failover_after = absl::Milliseconds(300);
  auto r = Relay::Start(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::unique_ptr<Relay> relay = std::move(*r);

  // A is followed by file and position.
  const std::vector<LogFileInfo> a_files = a.log->ListFiles();
  const MirrorPosition a_end{a_files.back().name, a_files.back().size};
  ASSERT_TRUE(testutil::WaitUntil([&] { return relay->mirror()->durable_end() == a_end; }))
      << relay->stats().last_error;
  EXPECT_EQ(relay->stats().failovers, 0u);

  // A goes away; B takes over and goes on.
  a.StopServing();
  b.Commit(41, 60, false);
  const std::vector<LogFileInfo> b_files = b.log->ListFiles();
  ASSERT_TRUE(testutil::WaitUntil([&] {
    const MirrorPosition d = relay->mirror()->durable_end();
    return !d.file.empty() && relay->mirror()->SourceFileName(d.file) == b_files.back().name &&
           d.pos == b_files.back().size;
  })) << relay->stats().last_error;
  const Relay::Stats st = relay->stats();
  EXPECT_EQ(st.failovers, 1u);
  EXPECT_GE(st.source_changes, 1u);
  EXPECT_TRUE(st.fatal.empty()) << st.fatal;

  // A downstream replica of the copy (served live) is told each copy
  // file's name by an artificial Rotate before its first event, by file
  // and position and by GTID: the file A's failover ended has no Rotate,
  // and B's files' Rotates name B's files.
  {
    ServerOptions so;
    so.dir = copy_dir;
    so.basename = "binlog";
    so.mirror = relay->mirror();
    so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}}};
    auto server = Server::Create(so);
    ASSERT_TRUE(server.ok()) << server.status();
    auto listener = io::Socket::ListenLoopback(0);
    ASSERT_TRUE(listener.ok()) << listener.status();
    std::thread runner([&] { (*server)->Run(&*listener); });
    const std::vector<std::string> copy_files = relay->mirror()->files();
    for (bool gtid : {false, true}) {
      SCOPED_TRACE(gtid ? "GTID dump" : "dump by position");
      auto sock = io::Socket::ConnectTcp("127.0.0.1", listener->port());
      ASSERT_TRUE(sock.ok()) << sock.status();
      auto c = ReplicationClient::Connect(std::move(*sock), "repl", "pw");
      ASSERT_TRUE(c.ok()) << c.status();
      ASSERT_TRUE(c->Query("SET @master_binlog_checksum = 'CRC32'").ok());
      ASSERT_TRUE((gtid ? c->DumpGtid(GtidSet().EncodePreviousGtidsBody(), kDumpNonBlock, 501)
                        : c->Dump("", 4, kDumpNonBlock, 501))
                      .ok());
      std::vector<std::string> named;  // by artificial Rotates
      for (;;) {
        auto r = c->Read(absl::Now() + absl::Seconds(30));
        ASSERT_TRUE(r.ok()) << r.status();
        if (r->kind == ClientReply::kEof) break;
        ASSERT_EQ(r->kind, ClientReply::kEvent) << r->error_code << " " << r->message;
        const EventHeader h = DecodeHeader(r->event);
        if (h.type != kRotateEvent) continue;
        bool crc = false;
        auto rot = DecodeRotateAnyChecksum(r->event, &crc);
        ASSERT_TRUE(rot.ok()) << rot.status();
        if (h.flags & kFlagArtificial) {
          EXPECT_EQ(h.log_pos, 0u);
          EXPECT_EQ(rot->position, 4u);
          named.push_back(rot->next_file);
        }
      }
      EXPECT_EQ(named, copy_files);
    }
    (*server)->Shutdown();
    runner.join();
  }
  ASSERT_TRUE(relay->Stop().ok());

  // The copy: A's files (the last up to where A's server went), then B's.
  auto idx = ReadIndex(io::FileSystem::Default(), copy_dir, "binlog");
  ASSERT_TRUE(idx.ok()) << idx.status();
  auto map = ReadSourceMap(io::FileSystem::Default(), copy_dir, "binlog");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_FALSE(map->empty());
  ASSERT_EQ(map->size(), 1u);  // one failover: one segment
  const uint64_t first_b = map->front().file;
  EXPECT_EQ(map->front().server_id, 2u);
  for (uint64_t n : *idx) {
    const std::string name = BinlogFileName("binlog", n);
    SCOPED_TRACE(name);
    const std::string copy = Contents(copy_dir + "/" + name);
    std::string source;
    if (n < first_b) {
      source = Contents(a.dir + "/" + name);
    } else {
      source = Contents(b.dir + "/" + SourceFileNameOf(*map, "binlog", n));
    }
    // The active files' in-use flags come cleared in a dump.
    ASSERT_GT(source.size(), kInUseFlagFileOffset);
    source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
    ASSERT_LE(copy.size(), source.size());
    EXPECT_TRUE(copy == source.substr(0, copy.size()));
    if (n + 1 != first_b) {
      EXPECT_EQ(copy.size(), source.size());
    }
  }
  EXPECT_EQ(SourceFileNameOf(*map, "binlog", idx->back()), b_files.back().name);

  // Each transaction once, from a GTID reader of the copy.
  auto state = ReadAtRestGtidState(copy_dir, "binlog", LogFlavor::kMySQL);
  ASSERT_TRUE(state.ok()) << state.status();
  auto reader =
      OpenGtidReaderAtRest(copy_dir, "binlog", *state, GtidSet(), Uuid(), ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<std::string, int> seen;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    if (ev.header.type != kGtidEvent) continue;
    auto g = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
    ASSERT_TRUE(g.ok());
    ++seen[absl::StrCat(g->tsid().ToString(), ":", g->gno)];
  }
  EXPECT_EQ(seen.size(), 60u);
  for (const auto& [gtid, count] : seen) {
    EXPECT_EQ(count, 1) << gtid;
  }
  std::string out;
  if (!HasFailure()) testing_util::RunCommand("rm -rf '" + copy_dir + "'", &out);
}

// A loopback listener that never accepts. Filled: its backlog is full of
// held connections, and a connect to it gets no answer to its SYN (as
// from a host that is down); not filled: connects succeed and nothing is
// ever said (a hung server).
struct DeadListener {
  io::Socket listener;
  std::vector<io::Socket> held;
  uint16_t port = 0;

  void Listen() {
    auto l = io::Socket::ListenLoopback(0);
    ASSERT_TRUE(l.ok()) << l.status();
    listener = std::move(*l);
    port = listener.port();
  }
  void Fill() {
    Listen();
    if (testing::Test::HasFatalFailure()) return;
    for (int i = 0; i < 1000; ++i) {
      auto c = io::Socket::ConnectTcp("127.0.0.1", port, absl::Now() + absl::Milliseconds(200));
      if (absl::IsDeadlineExceeded(c.status())) return;
      ASSERT_TRUE(c.ok()) << c.status();
      held.push_back(std::move(*c));
    }
    FAIL() << "no connect to the full listener stalled";
  }
};

RelayOptions FailoverOptions(const std::string& copy_dir) {
  RelayOptions o;
  o.dir = copy_dir;
  o.basename = "binlog";
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 77;
  o.source.heartbeat_period = absl::Milliseconds(100);
  o.source.connect_timeout = absl::Milliseconds(300);
  o.silence_timeout = absl::Seconds(1);
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(200);
  o.failover_after = absl::Milliseconds(300);
  return o;
}

// A primary that accepts connections and never answers, then one whose
// host drops the SYNs: neither counts as reached (the time spent in the
// connect or the handshake is no healthy stream), and the relay moves on
// to the source that answers within failover_after plus the connect
// timeout, plus the backoff, for each.
TEST(RelayFailoverTest, HungAndUnreachableSourcesAreLeft) {
  DeadListener hung, down;
  hung.Listen();
  down.Fill();
  ServedSource b;
  b.Open(2, kUuidB, 12000);
  if (HasFatalFailure()) return;
  b.Commit(1, 20, false);
  b.Serve();
  if (HasFatalFailure()) return;
  const std::string copy_dir = TempDir("relay_failover_hung_");
  RelayOptions o = FailoverOptions(copy_dir);
  o.sources = {{"127.0.0.1", hung.port}, {"127.0.0.1", down.port}, {"127.0.0.1", b.port}};
  const absl::Time t0 = absl::Now();
  auto r = Relay::Start(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::unique_ptr<Relay> relay = std::move(*r);
  const std::vector<LogFileInfo> files = b.log->ListFiles();
  const MirrorPosition want{files.back().name, files.back().size};
  const absl::Duration bound =
      2 * (o.failover_after + o.source.connect_timeout + o.backoff_max) + absl::Seconds(5);
  EXPECT_TRUE(testutil::WaitUntil([&] { return relay->mirror()->durable_end() == want; },
                                  bound))
      << "after " << (absl::Now() - t0) << ": following " << relay->stats().source
      << ", last error " << relay->stats().last_error;
  EXPECT_EQ(relay->stats().source_changes, 2u);
  ASSERT_TRUE(relay->Stop().ok());
  std::string out;
  if (!HasFailure()) testing_util::RunCommand("rm -rf '" + copy_dir + "'", &out);
}

// Stop while the receiver waits in a connect that gets no answer returns
// at once, well before the connect's timeout.
TEST(RelayFailoverTest, StopInterruptsAConnectThatGetsNoAnswer) {
  DeadListener down;
  down.Fill();
  if (HasFatalFailure()) return;
  const std::string copy_dir = TempDir("relay_failover_stop_");
  RelayOptions o = FailoverOptions(copy_dir);
  o.source.connect_timeout = absl::Seconds(120);
  o.sources = {{"127.0.0.1", down.port}, {"127.0.0.1", down.port}};
  auto r = Relay::Start(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(testutil::WaitUntil([&] { return !(*r)->stats().source.empty(); }));
  const absl::Time t0 = absl::Now();
  EXPECT_TRUE((*r)->Stop().ok());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(5)) << "Stop took " << (absl::Now() - t0);
  EXPECT_EQ((*r)->stats().connects, 0u);
  std::string out;
  testing_util::RunCommand("rm -rf '" + copy_dir + "'", &out);
}

TEST(RelayFailoverTest, OptionsAreChecked) {
  const std::string copy_dir = TempDir("relay_failover_options_");
  RelayOptions o;
  o.dir = copy_dir;
  o.basename = "binlog";
  o.source.user = "repl";
  o.source.server_id = 77;
  o.sources = {{"127.0.0.1", 1}, {"db.example", 2}};
  EXPECT_EQ(Relay::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.sources = {{"127.0.0.1", 1}, {"::1", 2}};
  o.failover_after = absl::ZeroDuration();
  EXPECT_EQ(Relay::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  std::string out;
  testing_util::RunCommand("rm -rf '" + copy_dir + "'", &out);
}

// A server that serves another server's files (a relay, a proxy: its
// @@server_id is its own) is no failover: the GTID dump's file was written
// by the copy's server, and the relay resumes by file and position, across
// reconnects, one segment and no source map.
TEST(RelayFailoverTest, ServerOfTheSameFilesIsFollowedByPosition) {
  ServedSource a;
  a.Open(1, kUuidA, 8192);
  if (HasFatalFailure()) return;
  a.Commit(1, 30, false);
  a.Serve(9);
  if (HasFatalFailure()) return;
  const std::string copy_dir = TempDir("relay_failover_proxy_");
  RelayOptions o;
  o.dir = copy_dir;
  o.basename = "binlog";
  o.source.host = "127.0.0.1";
  o.source.port = a.port;
  o.source.user = "repl";
  o.source.password = "pw";
  o.source.server_id = 77;
  o.source.heartbeat_period = absl::Milliseconds(100);
  o.silence_timeout = absl::Seconds(1);
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(200);
  auto r = Relay::Start(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::unique_ptr<Relay> relay = std::move(*r);
  auto caught_up = [&] {
    const std::vector<LogFileInfo> files = a.log->ListFiles();
    const MirrorPosition want{files.back().name, files.back().size};
    return testutil::WaitUntil([&] { return relay->mirror()->durable_end() == want; });
  };
  ASSERT_TRUE(caught_up()) << relay->stats().last_error;
  // Reconnects: the server goes away and comes back with more.
  for (int round = 0; round < 2; ++round) {
    a.StopServing();
    a.Commit(31 + 10 * round, 40 + 10 * round, false);
    a.Serve(9);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(caught_up()) << relay->stats().last_error;
  }
  EXPECT_EQ(relay->stats().failovers, 0u);
  EXPECT_GE(relay->stats().connects, 2u);
  ASSERT_TRUE(relay->Stop().ok());
  auto map = ReadSourceMap(io::FileSystem::Default(), copy_dir, "binlog");
  ASSERT_TRUE(map.ok());
  EXPECT_TRUE(map->empty());
  const std::vector<LogFileInfo> files = a.log->ListFiles();
  for (const LogFileInfo& f : files) {
    std::string source = Contents(a.dir + "/" + f.name).substr(0, f.size);
    source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
    EXPECT_TRUE(Contents(copy_dir + "/" + f.name) == source) << f.name;
  }
  std::string out;
  if (!HasFailure()) testing_util::RunCommand("rm -rf '" + copy_dir + "'", &out);
}

}  // namespace
}  // namespace server
}  // namespace binlog
