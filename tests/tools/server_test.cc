// binlog_server's protocol and sessions, in process: the wire encoding
// (protocol.h), the connect-time queries (queries.h), and a Server on
// 127.0.0.1 serving a MySQL-flavor log with GTIDs to the in-tree client
// (client.h): authentication, bad clients, dumps by position and by GTID
// set with every error a replica can get, compressed payloads, a live
// tailing dump, heartbeats and shutdown; and hostile clients (huge and
// pathological queries, silent and oversized handshakes, session variable
// floods, password guessing, bad heartbeat periods, unix socket paths),
// each bounded by deadlines on 127.0.0.1 or in a temporary directory; and
// TLS (certificates made by the openssl command in the test's directory):
// the upgrade, dumps, semi-sync and shutdown over TLS, certificate checks
// both ways, require_secure_transport, and clients that break the TLS
// handshake.

#include "tests/tools/served_log.h"
#include "server/server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "server/client.h"
#include "server/protocol.h"
#include "server/queries.h"
#include "server/auth.h"
#include "io/socket.h"
#include "io/tls.h"
#include "tests/testutil/test_pki.h"

namespace binlog {
namespace server {
namespace {

TEST(ProtocolTest, LenencAndFraming) {
  for (uint64_t v : {0ull, 250ull, 251ull, 65535ull, 65536ull, 16777215ull, 16777216ull,
                     ~0ull}) {
    std::string s;
    PutLenenc(&s, v);
    WireReader r(s);
    uint64_t got;
    ASSERT_TRUE(r.Lenenc(&got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(r.remaining(), 0u);
  }
  // A payload of exactly 0xffffff bytes is two packets, the second empty.
  std::string big(kMaxPacketPayload, 'a'), wire;
  uint8_t seq = 7;
  FramePacket(big, &seq, &wire);
  EXPECT_EQ(wire.size(), big.size() + 8);
  EXPECT_EQ(seq, 9);
  EXPECT_EQ(wire.substr(wire.size() - 4), std::string("\0\0\0\x08", 4));
}

TEST(ProtocolTest, ParsersRejectTruncatedPackets) {
  // Every prefix of valid commands fails cleanly or parses.
  std::string dump = std::string(1, kComBinlogDump) + std::string("\x04\0\0\0\0\0\x64\0\0\0", 10) +
                     "binlog.000001";
  std::string gtid = std::string(1, kComBinlogDumpGtid) + std::string("\x04\0\x64\0\0\0\0\0\0\0", 10) +
                     std::string(8, '\0') + std::string("\x08\0\0\0", 4) + std::string(8, '\0');
  for (size_t n = 0; n < dump.size(); ++n) {
    auto r = ParseBinlogDump(dump.substr(0, n));
    EXPECT_EQ(r.ok(), n >= 11) << n;
  }
  for (size_t n = 0; n < gtid.size(); ++n) {
    EXPECT_FALSE(ParseBinlogDumpGtid(gtid.substr(0, n)).ok()) << n;
  }
  EXPECT_TRUE(ParseBinlogDumpGtid(gtid).ok());
  // Without kDumpThroughGtid (go-mysql) the GTID set is read when present.
  std::string no_flag = gtid;
  no_flag[1] = '\0';
  auto parsed = ParseBinlogDumpGtid(no_flag);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->gtid_data, std::string(8, '\0'));
  EXPECT_TRUE(ParseBinlogDumpGtid(no_flag.substr(0, 19)).ok());
  EXPECT_FALSE(ParseBinlogDumpGtid(no_flag.substr(0, 21)).ok());
  EXPECT_FALSE(ParseHandshakeResponse("").ok());
  EXPECT_FALSE(ParseHandshakeResponse(std::string("\xff\xff\xff\xff", 4)).ok());
  EXPECT_FALSE(ParseRegisterSlave(std::string(1, kComRegisterSlave) + "\x01\x02").ok());
}

TEST(QueriesTest, ConnectTimeStatements) {
  ServerFacts f;
  f.flavor = LogFlavor::kMariaDB;
  f.server_id = 7;
  f.version = "5.5.5-10.11.19-MariaDB-log";
  f.maria_binlog_pos = "0-1-5";
  f.current_file = "binlog.000002";
  f.current_position = 1234;
  SessionVars vars;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  QueryResult r = AnswerQuery("SELECT UNIX_TIMESTAMP()", f, &vars, now);
  ASSERT_EQ(r.kind, QueryResult::kResultSet);
  EXPECT_EQ(*r.rows[0][0], "1700000000");
  r = AnswerQuery("SHOW VARIABLES LIKE 'SERVER_ID'", f, &vars, now);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(*r.rows[0][1], "7");
  EXPECT_EQ(AnswerQuery("SET @master_binlog_checksum= @@global.binlog_checksum", f, &vars, now).kind,
            QueryResult::kOk);
  r = AnswerQuery("SELECT @master_binlog_checksum", f, &vars, now);
  EXPECT_EQ(*r.rows[0][0], "CRC32");
  EXPECT_EQ(AnswerQuery("SET @slave_connect_state='0-1-3', @slave_gtid_strict_mode=0", f,
                        &vars, now)
                .kind,
            QueryResult::kOk);
  EXPECT_EQ(*vars["slave_connect_state"], "0-1-3");
  EXPECT_EQ(*vars["slave_gtid_strict_mode"], "0");
  r = AnswerQuery("SELECT @@GLOBAL.gtid_domain_id", f, &vars, now);
  EXPECT_EQ(*r.rows[0][0], "0");
  r = AnswerQuery("SELECT @never_set", f, &vars, now);
  EXPECT_FALSE(r.rows[0][0].has_value());
  r = AnswerQuery("SHOW SLAVE HOSTS", f, &vars, now);
  ASSERT_EQ(r.kind, QueryResult::kResultSet);
  EXPECT_EQ(r.columns, (std::vector<std::string>{"Server_id", "Host", "Port", "Master_id",
                                                 "Semi_Sync_Acked_File",
                                                 "Semi_Sync_Acked_Position", "Sent_File",
                                                 "Sent_Position"}));
  EXPECT_TRUE(r.rows.empty());
  ServerFacts with = f;
  ReplicaFacts rep;
  rep.server_id = 3;
  rep.host = "h";
  rep.port = 3306;
  rep.source_id = 7;
  with.replicas = {rep};
  r = AnswerQuery("SHOW REPLICA HOSTS", with, &vars, now);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0], (std::vector<std::optional<std::string>>{
                           "3", "h", "3306", "7", std::nullopt, std::nullopt, std::nullopt,
                           std::nullopt}));
  with.flavor = LogFlavor::kMySQL;
  r = AnswerQuery("SHOW REPLICAS", with, &vars, now);
  EXPECT_EQ(r.columns, (std::vector<std::string>{"Server_Id", "Host", "Port", "Source_Id",
                                                 "Replica_UUID", "Semi_Sync_Acked_File",
                                                 "Semi_Sync_Acked_Position", "Sent_File",
                                                 "Sent_Position"}));
  r = AnswerQuery("SHOW SLAVE HOSTS", with, &vars, now);
  EXPECT_EQ(r.columns[3], "Master_Id");
  EXPECT_EQ(r.columns[4], "Slave_UUID");
  r = AnswerQuery("show master status;", f, &vars, now);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(*r.rows[0][0], "binlog.000002");
  EXPECT_EQ(*r.rows[0][1], "1234");
  r = AnswerQuery("SELECT @@global.no_such_thing", f, &vars, now);
  EXPECT_EQ(r.kind, QueryResult::kError);
  EXPECT_EQ(r.error_code, kErUnknownSystemVariable);
  r = AnswerQuery("DROP TABLE t", f, &vars, now);
  EXPECT_EQ(r.kind, QueryResult::kError);
  EXPECT_EQ(r.error_code, kErNotSupported);
  EXPECT_EQ(AnswerQuery("", f, &vars, now).kind, QueryResult::kError);
}

// LIKE over the system variables with patterns an attacker would send:
// a million '%' (the matcher used to recurse once per '%' and overflow the
// stack) and many '%' before a letter no name ends with (it used to take
// time exponential in the number of '%').
TEST(QueriesTest, LikePatternsOfAnyShapeAnswerInLinearTime) {
  ServerFacts f;
  SessionVars vars;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  const size_t all = SystemVariables(f).size();
  QueryResult r =
      AnswerQuery("SHOW VARIABLES LIKE '" + std::string(1000000, '%') + "'", f, &vars, now);
  ASSERT_EQ(r.kind, QueryResult::kResultSet);
  EXPECT_EQ(r.rows.size(), all);
  const absl::Time start = absl::Now();
  for (const std::string& p : {std::string(40, '%') + "z", std::string(40, '%') + "_z",
                               std::string("%_") + std::string(40, '%') + "_%z"}) {
    r = AnswerQuery("SHOW VARIABLES LIKE '" + p + "'", f, &vars, now);
    ASSERT_EQ(r.kind, QueryResult::kResultSet);
    EXPECT_TRUE(r.rows.empty()) << p;
  }
  // Microseconds each; the bound is generous for sanitizer builds.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(QueriesTest, LikeMatchesAsSqlDoes) {
  ServerFacts f;
  SessionVars vars;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  auto names = [&](const std::string& pattern) {
    std::vector<std::string> out;
    QueryResult r = AnswerQuery("SHOW VARIABLES LIKE '" + pattern + "'", f, &vars, now);
    for (const auto& row : r.rows) out.push_back(*row[0]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("server_id"), V{"server_id"});
  EXPECT_EQ(names("SERVER_ID"), V{"server_id"});
  EXPECT_EQ(names("server%"), (V{"server_id", "server_uuid"}));
  EXPECT_EQ(names("%_uuid"), V{"server_uuid"});
  EXPECT_EQ(names("_erver_i_"), V{"server_id"});
  EXPECT_EQ(names("server_i"), V{});
  EXPECT_EQ(names("server_id_"), V{});
  EXPECT_EQ(names("%%server%%id%%"), (V{"server_id", "server_uuid"}));
  EXPECT_EQ(names("%%server%%d"), (V{"server_id", "server_uuid"}));
  EXPECT_EQ(names("gtid%mode"), V{"gtid_mode"});
  EXPECT_EQ(names("%checksum"), V{"binlog_checksum"});
  EXPECT_EQ(names("binlog_row_%"), (V{"binlog_row_image", "binlog_row_metadata"}));
  EXPECT_EQ(names(""), V{});
}

// A SELECT's answer is bounded: naming a large user variable many times
// in one short statement would otherwise multiply it (a 6 KB statement
// naming a 200 KB variable 2000 times made a 400 MB row).
TEST(QueriesTest, SelectResultsAreBounded) {
  ServerFacts f;
  SessionVars vars;
  vars["v"] = std::string(100, 'x');
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  QueryLimits lim;
  lim.max_result_bytes = 1000;
  std::string sql = "SELECT @v";
  for (int i = 1; i < 9; ++i) sql += ", @v";
  QueryResult r = AnswerQuery(sql, f, &vars, now, lim);
  ASSERT_EQ(r.kind, QueryResult::kResultSet);
  EXPECT_EQ(r.rows[0].size(), 9u);
  for (int i = 9; i < 20; ++i) sql += ", @v";
  r = AnswerQuery(sql, f, &vars, now, lim);
  EXPECT_EQ(r.kind, QueryResult::kError);
  EXPECT_EQ(r.error_code, kErNetPacketTooLarge);
  EXPECT_NE(r.message.find("1000"), std::string::npos) << r.message;
  EXPECT_TRUE(r.rows.empty());
}

// Session variables are bounded in number and in bytes; a SET past a bound
// changes nothing.
TEST(QueriesTest, SessionVariablesAreBounded) {
  ServerFacts f;
  SessionVars vars;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  QueryLimits lim;
  lim.max_variables = 3;
  lim.max_variable_bytes = 100;
  EXPECT_EQ(AnswerQuery("SET @a='x'", f, &vars, now, lim).kind, QueryResult::kOk);
  QueryResult r = AnswerQuery("SET @b='" + std::string(200, 'y') + "'", f, &vars, now, lim);
  EXPECT_EQ(r.kind, QueryResult::kError);
  EXPECT_EQ(r.error_code, kErOutOfResources);
  EXPECT_NE(r.message.find("max_session_variable_bytes"), std::string::npos) << r.message;
  EXPECT_EQ(vars.count("b"), 0u);
  EXPECT_EQ(AnswerQuery("SET @b='y', @c='z'", f, &vars, now, lim).kind, QueryResult::kOk);
  r = AnswerQuery("SET @a='changed', @d='w'", f, &vars, now, lim);
  EXPECT_EQ(r.kind, QueryResult::kError);
  EXPECT_EQ(r.error_code, kErOutOfResources);
  EXPECT_NE(r.message.find("max_session_variables"), std::string::npos) << r.message;
  EXPECT_EQ(*vars["a"], "x");  // nothing of the failed SET applied
  EXPECT_EQ(vars.count("d"), 0u);
  // Replacing a value counts its new size only.
  EXPECT_EQ(AnswerQuery("SET @a='" + std::string(80, 'q') + "'", f, &vars, now, lim).kind,
            QueryResult::kOk);
  EXPECT_EQ(vars.size(), 3u);
}

// Statements assembled from the grammar's pieces at random (a fixed seed):
// every one gets an answer (a result, OK or an error), none crashes or
// runs away, and session variables stay within their limits.
TEST(QueriesTest, RandomStatementsAlwaysGetAnAnswer) {
  ServerFacts f;
  SessionVars vars;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  QueryLimits lim;
  lim.max_variables = 8;
  lim.max_variable_bytes = 512;
  const std::vector<std::string> pieces = {
      "SELECT ", "SET ", "SHOW ", "VARIABLES ", "GLOBAL ", "LIKE ", "MASTER STATUS",
      "BINARY LOGS", "@", "@@", "@@global.", "'", "\"", "`", "(", ")", ",", "=", ":=",
      "%", "_", "\\", ";", "/*", "*/", " AS ", " LIMIT ", "1e300", "-1", "nan", "NULL",
      "UNIX_TIMESTAMP()", "VERSION()", "server_id", "gtid_mode", "x", " ", "\n", "\0"};
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
  };
  const absl::Time start = absl::Now();
  for (int i = 0; i < 20000; ++i) {
    std::string sql;
    const int n = 1 + next() % 12;
    for (int k = 0; k < n; ++k) {
      const std::string& p = pieces[next() % pieces.size()];
      sql += p.empty() ? std::string(1, '\0') : p;
    }
    QueryResult r = AnswerQuery(sql, f, &vars, now, lim);
    if (r.kind == QueryResult::kError) {
      EXPECT_NE(r.error_code, 0) << sql;
    }
    ASSERT_LE(vars.size(), lim.max_variables) << sql;
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

// Reads one packet from a raw connection.
absl::StatusOr<std::string> RawPacket(io::Socket* s, absl::Time deadline) {
  char h[4];
  absl::Status st = s->ReadFull(h, 4, deadline);
  if (!st.ok()) return st;
  const size_t len = static_cast<uint8_t>(h[0]) | (static_cast<uint8_t>(h[1]) << 8) |
                     (static_cast<size_t>(static_cast<uint8_t>(h[2])) << 16);
  std::string p(len, '\0');
  st = s->ReadFull(p.data(), len, deadline);
  if (!st.ok()) return st;
  return p;
}

// The error code of an ERR packet, 0 for another packet.
uint16_t ErrCode(const std::string& p) {
  if (p.size() < 3 || static_cast<uint8_t>(p[0]) != 0xff) return 0;
  return static_cast<uint16_t>(static_cast<uint8_t>(p[1]) | (static_cast<uint8_t>(p[2]) << 8));
}

// Whether the peer closes `s` before `deadline` (what it sends meanwhile
// is read and dropped).
bool ClosedBy(io::Socket* s, absl::Time deadline) {
  char buf[4096];
  while (true) {
    auto n = s->ReadSome(buf, sizeof(buf), deadline);
    if (!n.ok()) return absl::IsUnavailable(n.status());
  }
}

class UnixSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/binlog_socket_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/s.sock";
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(cmd.c_str()), 0);
  }
  std::string dir_, path_;
};

// --socket=PATH replaces only a stale socket: not a regular file, not a
// directory, not the socket of a server that is listening on it.
TEST_F(UnixSocketTest, ListenRefusesToReplaceAnythingButAStaleSocket) {
  {
    std::ofstream f(path_);
    f << "precious";
  }
  auto l = io::Socket::ListenUnix(path_);
  EXPECT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("not a socket"), absl::string_view::npos) << l.status();
  std::ifstream in(path_);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  ASSERT_EQ(::unlink(path_.c_str()), 0);

  ASSERT_EQ(::mkdir(path_.c_str(), 0700), 0);
  EXPECT_FALSE(io::Socket::ListenUnix(path_).ok());
  ASSERT_EQ(::rmdir(path_.c_str()), 0);

  auto first = io::Socket::ListenUnix(path_);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = io::Socket::ListenUnix(path_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("listening"), absl::string_view::npos)
      << second.status();
  // The first server still owns the path.
  auto c = io::Socket::ConnectUnix(path_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(first->Accept(absl::Seconds(10)).ok());

  // Closed without removing its file: a stale socket, replaced.
  first->Close();
  auto third = io::Socket::ListenUnix(path_);
  ASSERT_TRUE(third.ok()) << third.status();
  auto d = io::Socket::ConnectUnix(path_);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(third->Accept(absl::Seconds(10)).ok());
}

constexpr uint32_t kTs = kServedTs;
constexpr const char* kUuid = kServedUuid;

// A MySQL-flavor log with GTIDs (uuid:1..n), served by a Server on
// 127.0.0.1 from the files (or, with `live`, from the open Binlog).
class ServerTest : public ::testing::TestWithParam<io::Codec> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/binlog_server_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto log = Binlog::Open(dir_, "binlog", ServedLogOptions(GetParam()));
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    Commit(40);
  }
  void TearDown() override {
    StopServer();
    if (log_) log_->Close().IgnoreError();
    log_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(cmd.c_str()), 0);
  }

  // Bytes that do not compress much, so files rotate whatever the codec.
  static std::string Noise(uint32_t seed, size_t n) {
    std::string s;
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      s.push_back(static_cast<char>('0' + x % 75));
    }
    return s;
  }

  void Commit(int n) {
    TransactionBuffer txn;
    for (int i = 0; i < n; ++i) {
      txn.Clear();
      txn.AppendCommitGtid(kTs, 1, CommitGtid());
      AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      ++committed_;
      AppendQuery(&txn, kTs, 1, 5, "db",
                  absl::StrCat("INSERT INTO t VALUES (", committed_, ", '",
                               Noise(committed_, 600), "')"));
      AppendXid(&txn, kTs, 1, committed_);
      auto c = log_->Commit(&txn);
      ASSERT_TRUE(c.ok()) << c.status();
    }
  }

  // `n` transactions with MySQL 8.4 tagged GTIDs (AUTOMATIC:tag).
  void CommitTagged(int n, const char* tag) {
    TransactionBuffer txn;
    CommitGtid g;
    g.tag = *Tag::Parse(tag);
    for (int i = 0; i < n; ++i) {
      txn.Clear();
      txn.AppendCommitGtid(kTs, 1, g);
      AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      ++committed_;
      AppendXid(&txn, kTs, 1, committed_);
      auto c = log_->Commit(&txn);
      ASSERT_TRUE(c.ok()) << c.status();
    }
  }

  void StartServer(bool live = false, sync::AckTracker* acks = nullptr,
                   const std::function<void(ServerOptions*)>& tweak = nullptr) {
    ServerOptions so;
    so.acks = acks;
    so.dir = dir_;
    so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}},
                {"empty", {AuthPlugin::kNativePassword, ""}},
                {"sha2", {AuthPlugin::kCachingSha2Password,
                          CachingSha2PasswordHash("pw2", "abcdefghijklmnopqrst")}}};
    so.live = live ? log_.get() : nullptr;
    so.poll_interval = absl::Milliseconds(2);
    so.auth_failure_delay = absl::ZeroDuration();
    if (tweak) tweak(&so);
    auto s = Server::Create(so);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto l = io::Socket::ListenLoopback(0);
    ASSERT_TRUE(l.ok()) << l.status();
    listener_ = std::move(*l);
    port_ = listener_.port();
    runner_ = std::thread([this] { server_->Run(&listener_); });
  }
  void StopServer() {
    if (!server_) return;
    server_->Shutdown();
    runner_.join();
    server_.reset();
  }

  absl::StatusOr<ReplicationClient> Connect(const std::string& user = "repl",
                                            const std::string& pw = "pw",
                                            const std::string& plugin = "mysql_native_password") {
    auto s = io::Socket::ConnectLoopback(port_);
    if (!s.ok()) return s.status();
    return ReplicationClient::Connect(std::move(*s), user, pw, plugin);
  }

  ReplicationClient Replica() {
    auto c = Connect();
    EXPECT_TRUE(c.ok()) << c.status();
    auto r = c->Query("SET @master_binlog_checksum= @@global.binlog_checksum");
    EXPECT_TRUE(r.ok() && r->kind == ClientReply::kOk);
    return std::move(*c);
  }

  // Reads a dump until EOF (or `want_txns` transactions, or an error):
  // the GNOs of the transactions received, in order.
  struct Received {
    std::vector<int64_t> gnos;
    std::vector<std::string> tags;  // per GNO: its GTID's tag ("" untagged)
    std::vector<uint8_t> types;
    int bad_checksums = 0;
    ClientReply end;
  };
  Received ReadDump(ReplicationClient* c, size_t want_txns = SIZE_MAX) {
    Received got;
    while (got.gnos.size() < want_txns) {
      auto r = c->Read(absl::Now() + absl::Seconds(30));
      if (!r.ok()) {
        ADD_FAILURE() << r.status();
        break;
      }
      if (r->kind != ClientReply::kEvent) {
        got.end = *r;
        break;
      }
      const std::string& ev = r->event;
      if (ev.size() < kHeaderSize + 4) {
        ADD_FAILURE() << "short event";
        break;
      }
      const uint8_t type = static_cast<uint8_t>(ev[4]);
      got.types.push_back(type);
      if (!EventChecksumMatches(ev)) ++got.bad_checksums;
      if (type == kGtidEvent || type == kGtidTaggedEvent) {
        auto g = DecodeAnyMySqlGtidEvent(type, EventBody(ev, true));
        if (g.ok()) {
          got.gnos.push_back(g->gno);
          got.tags.push_back(std::string(g->tag.str()));
        }
      }
    }
    return got;
  }

  static std::vector<int64_t> Range(int64_t first, int64_t last) {
    std::vector<int64_t> v;
    for (int64_t i = first; i <= last; ++i) v.push_back(i);
    return v;
  }

  std::string dir_;
  std::unique_ptr<Binlog> log_;
  int committed_ = 0;
  std::unique_ptr<Server> server_;
  io::Socket listener_;
  uint16_t port_ = 0;
  std::thread runner_;
};

TEST_P(ServerTest, AuthenticatesAndRejectsWrongPasswords) {
  StartServer();
  EXPECT_TRUE(Connect().ok());
  EXPECT_TRUE(Connect("empty", "").ok());
  // A caching_sha2_password client is switched to the user's plugin, and
  // the other way round.
  EXPECT_TRUE(Connect("repl", "pw", "caching_sha2_password").ok());
  EXPECT_TRUE(Connect("sha2", "pw2", "mysql_native_password").ok());
  // caching_sha2_password: the full authentication (RSA over TCP), then
  // the fast path from the cache.
  EXPECT_TRUE(Connect("sha2", "pw2", "caching_sha2_password").ok());
  EXPECT_EQ(server_->stats().auth.fast_auths, 1u);
  EXPECT_EQ(server_->stats().auth.public_key_requests, 1u);
  auto bad = Connect("repl", "nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("1045"), absl::string_view::npos) << bad.status();
  bad = Connect("nobody", "pw");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("1045"), absl::string_view::npos);
  bad = Connect("sha2", "nope", "caching_sha2_password");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("1045"), absl::string_view::npos);
  EXPECT_EQ(server_->stats().auth_failures, 3u);
}

// A client that does not allow the RSA key request (a relay by default,
// server/source.h) refuses caching_sha2_password's full authentication
// over plaintext TCP instead of sending the password under a key nothing
// verifies; once the user is cached, the fast path needs no key.
TEST_P(ServerTest, AClientMayRefuseThePublicKeyExchange) {
  StartServer();
  auto s = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(s.ok());
  auto c = ReplicationClient::Connect(std::move(*s), "sha2", "pw2", "caching_sha2_password",
                                      false, nullptr, /*public_key_request=*/false);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(c.status())) << c.status();
  EXPECT_EQ(server_->stats().auth.public_key_requests, 0u);
  ASSERT_TRUE(Connect("sha2", "pw2", "caching_sha2_password").ok());  // RSA: cached now
  s = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(s.ok());
  c = ReplicationClient::Connect(std::move(*s), "sha2", "pw2", "caching_sha2_password", false,
                                 nullptr, /*public_key_request=*/false);
  EXPECT_TRUE(c.ok()) << c.status();
}

TEST_P(ServerTest, GarbageDoesNotHurtTheServer) {
  StartServer();
  // Garbage as the handshake response, then as a command; a client that
  // connects and says nothing; a huge announced length.
  for (const std::string& junk :
       {std::string("\x05\0\0\x01hello", 9), std::string("\xff\xff\xff\x01", 4) + "xx",
        std::string(64, '\x7f')}) {
    auto s = io::Socket::ConnectLoopback(port_);
    ASSERT_TRUE(s.ok());
    char buf[256];
    ASSERT_TRUE(s->ReadFull(buf, 4, absl::Now() + absl::Seconds(5)).ok());
    ASSERT_TRUE(s->WriteAll(junk, absl::Now() + absl::Seconds(5)).ok());
    s->Shutdown();
  }
  auto silent = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(silent.ok());
  // Authenticated garbage commands get errors, and the session survives an
  // unknown command.
  ReplicationClient c = Replica();
  ASSERT_TRUE(c.SendCommand(std::string("\x63garbage")).ok());
  auto r = c.Read(absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ClientReply::kError);
  EXPECT_EQ(r->error_code, kErUnknownCom);
  auto q = c.Query("SELECT UNIX_TIMESTAMP()");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kind, ClientReply::kResultSet);
  // A truncated COM_BINLOG_DUMP: an error, then the connection closes.
  ASSERT_TRUE(c.SendCommand(std::string("\x12\x04", 2)).ok());
  r = c.Read(absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErMalformedPacket);
  // The server still serves.
  ReplicationClient d = Replica();
  ASSERT_TRUE(d.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  Received got = ReadDump(&d);
  EXPECT_EQ(got.gnos, Range(1, 40));
}

TEST_P(ServerTest, DumpByPositionSendsEveryTransactionOnce) {
  StartServer();
  ReplicationClient c = Replica();
  auto q = c.Query("SHOW MASTER STATUS");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->kind, ClientReply::kResultSet);
  ASSERT_EQ(q->rows.size(), 1u);
  EXPECT_EQ(*q->rows[0][4], absl::StrCat(kUuid, ":1-40"));
  ASSERT_TRUE(c.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  Received got = ReadDump(&c);
  EXPECT_EQ(got.end.kind, ClientReply::kEof);
  EXPECT_EQ(got.gnos, Range(1, 40));
  EXPECT_EQ(got.bad_checksums, 0);
  ASSERT_GE(got.types.size(), 3u);
  EXPECT_EQ(got.types[0], kRotateEvent);  // the fake Rotate
  EXPECT_EQ(got.types[1], kFormatDescriptionEvent);
  int payloads = 0;
  for (uint8_t t : got.types) payloads += t == kTransactionPayloadEvent;
  // zstd payloads are forwarded compressed; lz4 ones (an extension no
  // replica reads) are expanded.
  if (GetParam() == io::Codec::kZstd) {
    EXPECT_EQ(payloads, 40);
  } else {
    EXPECT_EQ(payloads, 0);
  }
  EXPECT_GT(std::count(got.types.begin(), got.types.end(), kRotateEvent), 2);
}

// A non-blocking dump that ended (EOF) leaves its session in the command
// loop: a forced purge (Server::EndDumpsBefore) does not count it, and the
// session's next dump is served, not ended with the purge's error.
TEST_P(ServerTest, AForcedPurgeDoesNotEndTheNextDumpOfAnIdleSession) {
  StartServer();
  ReplicationClient c = Replica();
  ASSERT_TRUE(c.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  Received first = ReadDump(&c);
  ASSERT_EQ(first.end.kind, ClientReply::kEof);
  // A statement's answer: the session has left its dump.
  auto q = c.Query("SHOW MASTER STATUS");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(server_->EndDumpsBefore(UINT64_MAX, "purged while idle"), 0);
  ASSERT_TRUE(c.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  Received second = ReadDump(&c);
  EXPECT_EQ(second.end.kind, ClientReply::kEof) << second.end.error_code << " "
                                                << second.end.message;
  EXPECT_EQ(second.gnos, Range(1, 40));
}

// mysqlbinlog and go-mysql announce checksums with
// @master_binlog_checksum='NONE': MySQL serves them, with the first fake
// Rotate (ahead of the Format_description) unchecksummed and every event
// after it as the log has it.
TEST_P(ServerTest, ReplicaAnnouncingNoneGetsAnUnchecksummedFirstRotate) {
  StartServer();
  for (bool by_gtid : {false, true}) {
    auto c = Connect();
    ASSERT_TRUE(c.ok()) << c.status();
    auto q = c->Query("SET @master_binlog_checksum='NONE'");
    ASSERT_TRUE(q.ok() && q->kind == ClientReply::kOk);
    if (by_gtid) {
      GtidSet have;
      have.AddInterval(*Uuid::Parse(kUuid), 1, 10);
      ASSERT_TRUE(c->DumpGtid(have.EncodePreviousGtidsBody(), kDumpNonBlock).ok());
    } else {
      ASSERT_TRUE(c->Dump("binlog.000001", 4, kDumpNonBlock).ok());
    }
    Received got = ReadDump(&*c);
    EXPECT_EQ(got.end.kind, ClientReply::kEof) << got.end.message;
    EXPECT_EQ(got.gnos, Range(by_gtid ? 11 : 1, 40));
    ASSERT_GE(got.types.size(), 3u);
    EXPECT_EQ(got.types[0], kRotateEvent);
    EXPECT_EQ(got.types[1], kFormatDescriptionEvent);
    EXPECT_EQ(got.bad_checksums, 1);  // the first Rotate only
  }
}

TEST_P(ServerTest, DumpFromTheMiddleOfAFile) {
  StartServer();
  // The end of the 3rd transaction is a boundary.
  auto reader = log_->NewReader(ReaderOptions());
  ASSERT_TRUE(reader.ok());
  Event ev;
  int xids = 0;
  uint64_t file = 0, pos = 0;
  while (xids < 3 && (*reader)->Next(&ev).ok()) {
    if (ev.header.type == kXidEvent) {
      ++xids;
      file = ev.file_number;
      pos = ev.end_offset;
    }
  }
  ASSERT_EQ(xids, 3);
  ReplicationClient c = Replica();
  ASSERT_TRUE(c.Dump(absl::StrCat("binlog.", std::string(6 - std::to_string(file).size(), '0'),
                                  file),
                     static_cast<uint32_t>(pos), kDumpNonBlock)
                  .ok());
  Received got = ReadDump(&c);
  EXPECT_EQ(got.gnos, Range(4, 40));
  EXPECT_EQ(got.bad_checksums, 0);
}

TEST_P(ServerTest, BadPositionsGetError1236) {
  StartServer();
  struct Case {
    std::string file;
    uint32_t pos;
  };
  for (const Case& k : std::vector<Case>{{"binlog.000099", 4},
                                         {"binlog.000001", 1},
                                         {"binlog.000001", 5},
                                         {"binlog.000001", 100000000},
                                         {"other.000001", 4}}) {
    ReplicationClient c = Replica();
    ASSERT_TRUE(c.Dump(k.file, k.pos, 0).ok());
    auto r = c.Read(absl::Now() + absl::Seconds(10));
    ASSERT_TRUE(r.ok()) << k.file << ":" << k.pos;
    // A fake Rotate may come first for positions inside the file.
    EXPECT_EQ(r->kind, ClientReply::kError) << k.file << ":" << k.pos;
    EXPECT_EQ(r->error_code, kErMasterFatalReadingBinlog) << r->message;
  }
  // A replica that did not announce checksums.
  auto c = Connect();
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->Dump("binlog.000001", 4, 0).ok());
  auto r = c->Read(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErMasterFatalReadingBinlog);
}

TEST_P(ServerTest, DumpByGtidSetSkipsWhatTheReplicaHas) {
  StartServer();
  const Uuid uuid = *Uuid::Parse(kUuid);
  GtidSet have;
  have.AddInterval(uuid, 1, 25);
  ReplicationClient c = Replica();
  ASSERT_TRUE(c.DumpGtid(have.EncodePreviousGtidsBody(), kDumpNonBlock).ok());
  Received got = ReadDump(&c);
  EXPECT_EQ(got.end.kind, ClientReply::kEof);
  EXPECT_EQ(got.gnos, Range(26, 40));
  EXPECT_EQ(got.bad_checksums, 0);

  // More GTIDs of the log's UUID than the log has: 1885.
  GtidSet ahead;
  ahead.AddInterval(uuid, 1, 45);
  ReplicationClient d = Replica();
  ASSERT_TRUE(d.DumpGtid(ahead.EncodePreviousGtidsBody(), kDumpNonBlock).ok());
  auto r = d.Read(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErSlaveHasMoreGtidsThanMaster) << r->message;

  // Purge the first files: a replica lacking their GTIDs gets 1789.
  auto files = log_->ListFiles();
  ASSERT_GT(files.size(), 3u);
  ASSERT_TRUE(log_->PurgeTo(files[2].number).ok());
  ReplicationClient e = Replica();
  ASSERT_TRUE(e.DumpGtid(GtidSet().EncodePreviousGtidsBody(), kDumpNonBlock).ok());
  r = e.Read(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErMasterHasPurgedRequiredGtids) << r->message;
  // By position, a purged file is 1236.
  ReplicationClient f = Replica();
  ASSERT_TRUE(f.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  r = f.Read(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErMasterFatalReadingBinlog);
  // Garbage as the GTID set.
  ReplicationClient g = Replica();
  ASSERT_TRUE(g.DumpGtid("\x05garbage", kDumpNonBlock).ok());
  r = g.Read(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_code, kErMalformedPacket);
}

// COM_BINLOG_DUMP_GTID with a tagged GTID set (MySQL 8.4 replicas send the
// tagged encoding once any tag is in their set): the replica gets exactly
// the tagged and untagged transactions it lacks, Gtid_tagged events
// included.
TEST_P(ServerTest, DumpByTaggedGtidSetSkipsWhatTheReplicaHas) {
  CommitTagged(5, "blue");
  Commit(2);  // untagged 41-42
  StartServer();
  const Uuid uuid = *Uuid::Parse(kUuid);
  GtidSet have;
  have.AddInterval(Tsid(uuid), 1, 41);
  have.AddInterval(Tsid(uuid, *Tag::Parse("blue")), 1, 2);
  ReplicationClient c = Replica();
  const std::string body = have.EncodePreviousGtidsBody();
  ASSERT_NE(static_cast<uint8_t>(body[7]), 0) << "the tagged encoding";
  ASSERT_TRUE(c.DumpGtid(body, kDumpNonBlock).ok());
  Received got = ReadDump(&c);
  EXPECT_EQ(got.end.kind, ClientReply::kEof) << got.end.message;
  EXPECT_EQ(got.gnos, (std::vector<int64_t>{3, 4, 5, 42}));
  EXPECT_EQ(got.tags, (std::vector<std::string>{"blue", "blue", "blue", ""}));
  EXPECT_EQ(got.bad_checksums, 0);
}

// A blocking dump follows the log as it grows, across rotations, from the
// files (another process's log) or from the live Binlog.
TEST_P(ServerTest, FollowsGrowthAndSendsHeartbeats) {
  for (bool live : {false, true}) {
    SCOPED_TRACE(live ? "live" : "files");
    StartServer(live);
    ReplicationClient c = Replica();
    ASSERT_TRUE(c.Query("SET @master_heartbeat_period=1000000").ok());  // 1 ms
    const int before = committed_;
    ASSERT_TRUE(c.Dump("", 4, 0).ok());
    Received got = ReadDump(&c, before);
    EXPECT_EQ(got.gnos, Range(1, before));
    // Idle: heartbeats come (the client needs no sleep: it waits for one).
    bool heartbeat = false;
    while (!heartbeat) {
      auto r = c.Read(absl::Now() + absl::Seconds(10));
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->kind, ClientReply::kEvent);
      heartbeat = static_cast<uint8_t>(r->event[4]) == kHeartbeatEvent;
    }
    Commit(30);
    Received more = ReadDump(&c, 30);
    EXPECT_EQ(more.gnos, Range(before + 1, before + 30));
    EXPECT_EQ(more.bad_checksums, 0);
    // Shutdown ends the dump with ER_SERVER_SHUTDOWN.
    server_->Shutdown();
    ClientReply end;
    while (true) {
      auto r = c.Read(absl::Now() + absl::Seconds(10));
      ASSERT_TRUE(r.ok()) << r.status();
      if (r->kind != ClientReply::kEvent) {
        end = *r;
        break;
      }
    }
    EXPECT_EQ(end.error_code, kErServerShutdown);
    StopServer();
  }
}


// A replica that stops reading (its socket buffers full, its session
// blocked in a send) holds a tailing reader that falls behind: commits go
// on, other replicas get everything, and shutdown still ends its session.
TEST_P(ServerTest, AStalledReplicaDoesNotStopCommitsOrOtherReplicas) {
  StartServer(/*live=*/true);
  ReplicationClient stalled = Replica();
  ASSERT_TRUE(stalled.Dump("", 4, 0).ok());
  ASSERT_TRUE(stalled.Read(absl::Now() + absl::Seconds(10)).ok());
  // About 3 MiB: more than loopback socket buffers usually hold.
  const int before = committed_;
  Commit(4000);
  ReplicationClient other = Replica();
  ASSERT_TRUE(other.Dump("", 4, 0).ok());
  Received got = ReadDump(&other, committed_);
  EXPECT_EQ(got.gnos, Range(1, before + 4000));
  StopServer();  // returns: the stalled session is ended too
}

// Semi-sync: a replica that announces it gets the header on every event,
// the ack flag on each transaction's last event, and its acks release a
// committer waiting in the AckTracker.
TEST_P(ServerTest, SemiSyncAcksReachTheAckTracker) {
  sync::AckTrackerOptions ao;
  ao.timeout = absl::Seconds(60);
  ao.async_on_timeout = false;
  sync::AckTracker acks(ao);
  StartServer(/*live=*/true, &acks);
  ReplicationClient c = Replica();
  auto q = c.Query("SELECT @@global.rpl_semi_sync_master_enabled");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q->rows[0][0], "ON");
  ASSERT_TRUE(c.Query("SET @rpl_semi_sync_slave=1").ok());
  c.set_semisync(true);
  ASSERT_TRUE(c.Dump("", 4, 0, /*server_id=*/77).ok());
  // A committer waits for the ack of its transaction.
  std::atomic<bool> acked{false};
  binlog::CommitPosition pos;
  std::thread committer([&] {
    TransactionBuffer txn;
    txn.AppendCommitGtid(kTs, 1, CommitGtid());
    AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
    AppendXid(&txn, kTs, 1, 999);
    auto p = log_->Commit(&txn);
    ASSERT_TRUE(p.ok());
    pos = *p;
    sync::AckOutcome outcome;
    absl::Status s = acks.WaitForAck(sync::AckPosition{p->file_number, p->end}, &outcome);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(outcome, sync::AckOutcome::kAcknowledged);
    acked = true;
  });
  int flagged = 0, xids = 0;
  std::string file = "binlog.000001";
  while (!acked.load()) {
    auto r = c.Read(absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kind, ClientReply::kEvent);
    const uint8_t type = static_cast<uint8_t>(r->event[4]);
    if (type == kRotateEvent) {
      auto rot = DecodeRotate(EventBody(r->event, true));
      ASSERT_TRUE(rot.ok());
      file = std::string(rot->next_file);
    }
    // zstd transactions end with their (forwarded) payload event.
    const bool ends = type == kXidEvent || type == kTransactionPayloadEvent;
    xids += ends;
    if (r->need_ack) {
      ++flagged;
      EXPECT_TRUE(ends) << int{type};
      ASSERT_TRUE(c.SendAck(DecodeHeader(r->event).log_pos, file).ok());
    }
    if (xids == committed_ + 1 && !acked.load()) {
      // Everything is acked; the committer is being released.
      committer.join();
      break;
    }
  }
  if (committer.joinable()) committer.join();
  EXPECT_TRUE(acked.load());
  EXPECT_EQ(flagged, committed_ + 1);
  EXPECT_GE(server_->stats().semisync_acks, static_cast<uint64_t>(committed_ + 1));
  EXPECT_EQ(acks.acknowledged().file_number, pos.file_number);
  EXPECT_EQ(acks.acknowledged().offset, pos.end);
  StopServer();
}

// ServerOptions::ack_poll is a wait slice: zero or less is refused.
TEST(ServerOptionsTest, AckPollMustBePositive) {
  for (absl::Duration d : {absl::ZeroDuration(), absl::Microseconds(-1)}) {
    ServerOptions so;
    so.dir = ::testing::TempDir();
    so.ack_poll = d;
    auto s = Server::Create(so);
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  }
}

// SHOW REPLICAS lists the replicas registered (COM_REGISTER_SLAVE) while
// their connections last: announced host and port (the peer's address
// when none is announced), server id, source id (this server's when the
// replica sent 0), the UUID a replica set, and the last position a
// semi-sync replica acknowledged; SHOW SLAVE HOSTS the same with MySQL
// 8.0's older column names.
TEST_P(ServerTest, ShowReplicasListsRegisteredReplicasWhileConnected) {
  sync::AckTrackerOptions ao;
  ao.timeout = absl::Seconds(60);
  ao.async_on_timeout = false;
  sync::AckTracker acks(ao);
  StartServer(/*live=*/true, &acks, [](ServerOptions* o) { o->server_id = 9; });
  ReplicationClient a = Replica();
  ASSERT_TRUE(a.Query("SET @replica_uuid = '11111111-2222-3333-4444-555555555555'").ok());
  ASSERT_TRUE(a.Register(21, "replica-a.example", 3307, 5).ok());
  ReplicationClient b = Replica();
  ASSERT_TRUE(b.Register(22, "", 3308).ok());
  ASSERT_TRUE(b.Query("SET @rpl_semi_sync_slave=1").ok());
  b.set_semisync(true);
  ASSERT_TRUE(b.Dump("", 4, 0, 22).ok());
  // B acknowledges the first transaction.
  std::string file = "binlog.000001";
  uint64_t acked = 0;
  while (acked == 0) {
    auto e = b.Read(absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ(e->kind, ClientReply::kEvent);
    if (e->need_ack) {
      acked = DecodeHeader(e->event).log_pos;
      ASSERT_TRUE(b.SendAck(acked, file).ok());
    }
  }
  ReplicationClient admin = Replica();
  using Row = std::vector<std::optional<std::string>>;
  // A has no dump (no position sent); B's dump sent the whole log.
  const LogFileInfo last = log_->ListFiles().back();
  const Row row_a = {"21", "replica-a.example", "3307", "5",
                     "11111111-2222-3333-4444-555555555555", std::nullopt, std::nullopt,
                     std::nullopt, std::nullopt};
  const Row row_b = {"22", "127.0.0.1", "3308", "9", "", file, absl::StrCat(acked),
                     last.name, absl::StrCat(last.size)};
  // The ack is recorded by B's session; wait for it to show.
  absl::StatusOr<ClientReply> q;
  const absl::Time end = absl::Now() + absl::Seconds(30);
  do {
    q = admin.Query("SHOW REPLICAS");
    ASSERT_TRUE(q.ok()) << q.status();
  } while (q->rows != std::vector<Row>{row_a, row_b} && absl::Now() < end);
  EXPECT_EQ(q->rows, (std::vector<Row>{row_a, row_b}));
  q = admin.Query("show slave hosts;");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->rows, (std::vector<Row>{row_a, row_b}));
  // A replica that disconnects leaves the list.
  a.socket().Close();
  do {
    q = admin.Query("SHOW REPLICAS");
    ASSERT_TRUE(q.ok()) << q.status();
  } while (q->rows.size() != 1 && absl::Now() < end);
  EXPECT_EQ(q->rows, std::vector<Row>{row_b});
  // Registering again under B's server id replaces B.
  ASSERT_TRUE(admin.Register(22, "replica-c", 1).ok());
  q = admin.Query("SHOW REPLICAS");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->rows.size(), 1u);
  EXPECT_EQ(q->rows[0][1], "replica-c");
  StopServer();
}

INSTANTIATE_TEST_SUITE_P(Codecs, ServerTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kZstd, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone   ? "Plain"
                                              : i.param == io::Codec::kZstd ? "Zstd"
                                                                            : "Lz4");
                         });


// Clients that attack the server rather than replicate from it. These do
// not depend on the codec: one instantiation.
class HostileClientTest : public ServerTest {
 protected:
  // A connection that got the server's greeting and says nothing.
  io::Socket Silent() {
    auto s = io::Socket::ConnectLoopback(port_);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return io::Socket();
    auto p = RawPacket(&*s, absl::Now() + absl::Seconds(10));
    EXPECT_TRUE(p.ok()) << p.status();
    if (p.ok()) {
      EXPECT_EQ(static_cast<uint8_t>((*p)[0]), 10) << "not a greeting: " << ErrCode(*p);
    }
    return std::move(*s);
  }
};

// A query of a million '%' used to overflow the session's stack (the
// whole server died); now a query longer than max_query_length gets 1153,
// and with the bound raised the LIKE matcher answers it.
TEST_P(HostileClientTest, HugeLikePatternsDoNotCrashTheServer) {
  StartServer(false, nullptr, [](ServerOptions* o) { o->max_query_length = 3 << 20; });
  ReplicationClient c = Replica();
  const std::string huge = "SHOW VARIABLES LIKE '" + std::string(1000000, '%') + "'";
  auto q = c.Query(huge);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kResultSet);
  EXPECT_GT(q->rows.size(), 10u);
  StopServer();
  StartServer();  // default max_query_length
  ReplicationClient d = Replica();
  q = d.Query(huge);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kError);
  EXPECT_EQ(q->error_code, kErNetPacketTooLarge);
  q = d.Query("SELECT 1");  // the session goes on
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kResultSet);
}

// Unauthenticated connections have their own bound and a deadline for the
// whole handshake: silent sockets can neither lock replicas out nor stay.
TEST_P(HostileClientTest, SilentSocketsDoNotLockReplicasOut) {
  StartServer(false, nullptr, [](ServerOptions* o) {
    o->max_connections = 2;
    o->max_unauthenticated_connections = 4;
    o->handshake_timeout = absl::Seconds(3);
  });
  std::vector<io::Socket> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(Silent());
  ReplicationClient a = Replica();  // 3 silent + 1 in the handshake: fits
  silent.push_back(Silent());
  // A fifth unauthenticated connection is refused at once.
  auto extra = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(extra.ok());
  auto p = RawPacket(&*extra, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ErrCode(*p), kErConCount);
  // The server drops the silent ones after the handshake timeout.
  for (io::Socket& s : silent) EXPECT_TRUE(ClosedBy(&s, absl::Now() + absl::Seconds(30)));
  ReplicationClient b = Replica();
  // A third authenticated session is past max_connections.
  auto c = Connect();
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("1040"), absl::string_view::npos) << c.status();
  // Both sessions still work.
  EXPECT_TRUE(a.Query("SELECT 1").ok());
  EXPECT_TRUE(b.Query("SELECT 1").ok());
}

// Before authentication a header claiming 4 MiB gets 1153 and the close,
// not a 4 MiB buffer; after it, a packet past max_packet the same.
TEST_P(HostileClientTest, OversizedPacketsGet1153) {
  StartServer(false, nullptr, [](ServerOptions* o) { o->max_packet = 1 << 20; });
  auto s = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(RawPacket(&*s, absl::Now() + absl::Seconds(10)).ok());
  ASSERT_TRUE(s->WriteAll(std::string("\x00\x00\x40\x01", 4) + "abc",
                          absl::Now() + absl::Seconds(10))
                  .ok());
  auto p = RawPacket(&*s, absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ErrCode(*p), kErNetPacketTooLarge);
  EXPECT_TRUE(ClosedBy(&*s, absl::Now() + absl::Seconds(5)));

  ReplicationClient c = Replica();
  ASSERT_TRUE(c.socket().WriteAll(std::string("\x00\x00\x20\x00\x03", 5) + "SELECT",
                                  absl::Now() + absl::Seconds(10))
                  .ok());
  auto r = c.Read(absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, ClientReply::kError);
  EXPECT_EQ(r->error_code, kErNetPacketTooLarge);
  EXPECT_TRUE(ClosedBy(&c.socket(), absl::Now() + absl::Seconds(5)));
}

TEST_P(HostileClientTest, SessionVariablesAreBounded) {
  StartServer(false, nullptr, [](ServerOptions* o) { o->max_session_variable_bytes = 1000; });
  ReplicationClient c = Replica();
  auto q = c.Query("SET @v = '" + std::string(2000, 'x') + "'");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kError);
  EXPECT_EQ(q->error_code, kErOutOfResources);
  q = c.Query("SELECT @v");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->rows.size(), 1u);
  EXPECT_FALSE(q->rows[0][0].has_value());
}

// A SELECT that repeats a user variable gets 1153 past max_packet, not an
// answer of that many copies; the session goes on.
TEST_P(HostileClientTest, SelectResultsAreBoundedByMaxPacket) {
  StartServer(false, nullptr, [](ServerOptions* o) { o->max_packet = 64 << 10; });
  ReplicationClient c = Replica();
  auto q = c.Query("SET @v = '" + std::string(40000, 'x') + "'");
  ASSERT_TRUE(q.ok() && q->kind == ClientReply::kOk);
  q = c.Query("SELECT @v, @v");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kError);
  EXPECT_EQ(q->error_code, kErNetPacketTooLarge);
  q = c.Query("SELECT @v");
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->rows.size(), 1u);
  EXPECT_EQ(q->rows[0][0]->size(), 40000u);
}

// A failed authentication is answered only after auth_failure_delay.
TEST_P(HostileClientTest, FailedLoginsAreDelayed) {
  const absl::Duration delay = absl::Milliseconds(300);
  StartServer(false, nullptr, [&](ServerOptions* o) { o->auth_failure_delay = delay; });
  for (const char* user : {"repl", "nobody"}) {
    const absl::Time start = absl::Now();
    auto bad = Connect(user, "guess");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("1045"), absl::string_view::npos) << bad.status();
    EXPECT_GE(absl::Now() - start, delay) << user;
  }
  EXPECT_TRUE(Connect().ok());
}

// A client that leaves in the middle of an authentication keeps its
// handshake slot for auth_failure_delay too: else caching_sha2_password's
// fast path is a guessing oracle without the delay (for a cached user,
// fast_auth_success or perform_full_authentication tells whether the
// guess was right; a client that leaves then was never delayed: about
// 1200 guesses per second from one client instead of 64).
TEST_P(HostileClientTest, LeavingMidAuthenticationKeepsTheSlotForTheDelay) {
  const absl::Duration delay = absl::Milliseconds(500);
  StartServer(false, nullptr, [&](ServerOptions* o) {
    o->auth_failure_delay = delay;
    o->max_unauthenticated_connections = 1;
  });
  // "sha2" is in the cache now.
  ASSERT_TRUE(Connect("sha2", "pw2", "caching_sha2_password").ok());
  ASSERT_EQ(server_->stats().auth.full_auths, 1u);
  auto s = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(s.ok());
  auto greeting = RawPacket(&*s, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(greeting.ok()) << greeting.status();
  // A guess: 32 bytes that are not the fast path's token.
  std::string r;
  const uint32_t caps = kClientProtocol41 | kClientSecureConnection | kClientPluginAuth;
  for (int i = 0; i < 4; ++i) r.push_back(static_cast<char>(caps >> (8 * i)));
  r += std::string("\x00\x00\x00\x01\x21", 5) + std::string(23, '\0');
  r += std::string("sha2\0\x20", 6) + std::string(32, 'g');
  r += std::string(kCachingSha2Plugin) + std::string(1, '\0');
  std::string wire;
  uint8_t seq = 1;
  FramePacket(r, &seq, &wire);
  ASSERT_TRUE(s->WriteAll(wire, absl::Now() + absl::Seconds(10)).ok());
  auto answer = RawPacket(&*s, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, std::string("\x01\x04", 2));  // perform_full_authentication: wrong
  const absl::Time left = absl::Now();
  s->Close();
  // The only handshake slot stays taken for the delay: connections are
  // refused with 1040 until then (each attempt paced, not synchronized).
  while (true) {
    auto t = io::Socket::ConnectLoopback(port_);
    ASSERT_TRUE(t.ok());
    auto p = RawPacket(&*t, absl::Now() + absl::Seconds(10));
    ASSERT_TRUE(p.ok()) << p.status();
    // A greeting: the slot is free again (this connection now holds it).
    if (ErrCode(*p) != kErConCount) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GE(absl::Now() - left, delay * 0.9);
}

// Out-of-range, non-finite and malformed heartbeat periods get a clear
// error instead of an undefined conversion and a flood of heartbeats.
TEST_P(HostileClientTest, HeartbeatPeriodIsValidated) {
  StartServer();
  for (const char* value : {"1e300", "'nan'", "'inf'", "-1", "'abc'", "4294968000000000"}) {
    SCOPED_TRACE(value);
    ReplicationClient c = Replica();
    auto q = c.Query(absl::StrCat("SET @master_heartbeat_period=", value));
    ASSERT_TRUE(q.ok() && q->kind == ClientReply::kOk);
    ASSERT_TRUE(c.Dump("", 4, 0).ok());
    ClientReply end;
    while (true) {
      auto r = c.Read(absl::Now() + absl::Seconds(10));
      ASSERT_TRUE(r.ok()) << r.status();
      if (r->kind != ClientReply::kEvent) {
        end = *r;
        break;
      }
      ASSERT_NE(static_cast<uint8_t>(r->event[4]), kHeartbeatEvent);
    }
    EXPECT_EQ(end.error_code, kErMasterFatalReadingBinlog);
    EXPECT_NE(end.message.find("master_heartbeat_period"), std::string::npos) << end.message;
  }
  // The largest period MySQL accepts (4294967 s) is taken.
  ReplicationClient c = Replica();
  ASSERT_TRUE(c.Query("SET @master_heartbeat_period=4294967000000000").ok());
  ASSERT_TRUE(c.Dump("", 4, kDumpNonBlock).ok());
  Received got = ReadDump(&c);
  EXPECT_EQ(got.end.kind, ClientReply::kEof) << got.end.message;
}

// Shutdown wakes every connection: a silent unauthenticated one, an idle
// authenticated one and one waiting out a failed login's delay end at
// once, not after their timeouts.
TEST_P(HostileClientTest, ShutdownEndsEveryConnectionPromptly) {
  StartServer(false, nullptr, [](ServerOptions* o) {
    o->handshake_timeout = absl::Seconds(60);
    o->auth_failure_delay = absl::Seconds(60);
  });
  io::Socket silent = Silent();
  ReplicationClient idle = Replica();
  ASSERT_TRUE(idle.Query("SELECT 1").ok());
  std::atomic<bool> guessed{false};
  std::thread guesser([&] {
    EXPECT_FALSE(Connect("repl", "guess").ok());
    guessed = true;
  });
  const absl::Time wait_end = absl::Now() + absl::Seconds(30);
  while (server_->stats().auth_failures == 0 && absl::Now() < wait_end) {
    std::this_thread::yield();  // the failure is counted before the delay
  }
  ASSERT_EQ(server_->stats().auth_failures, 1u);
  const absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_TRUE(ClosedBy(&silent, absl::Now() + absl::Seconds(5)));
  auto r = idle.Read(absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->error_code, kErServerShutdown);
  guesser.join();
  StopServer();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

// A GTID set of 200,000 intervals in descending order (3.2 MB, under
// max_packet) used to cost a quadratic number of interval moves while it
// was decoded (each inserted at the front): a minute of CPU per request.
TEST_P(HostileClientTest, UnorderedGtidSetsDecodeInLinearithmicTime) {
  StartServer();
  const int n = 200000;
  std::string body;
  auto le64 = [&body](uint64_t v) {
    for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>(v >> (8 * i)));
  };
  le64(1);
  const Uuid uuid = *Uuid::Parse(kUuid);
  body.append(reinterpret_cast<const char*>(uuid.bytes), 16);
  le64(n);
  for (int k = n - 1; k >= 0; --k) {
    le64(2 * static_cast<uint64_t>(k) + 1);  // [2k+1, 2k+2): GNO 2k+1
    le64(2 * static_cast<uint64_t>(k) + 2);
  }
  ReplicationClient c = Replica();
  const absl::Time start = absl::Now();
  ASSERT_TRUE(c.DumpGtid(body, kDumpNonBlock).ok());
  auto r = c.Read(absl::Now() + absl::Seconds(60));
  ASSERT_TRUE(r.ok()) << r.status();
  // GNOs the log never had: 1885, once the set is decoded.
  EXPECT_EQ(r->error_code, kErSlaveHasMoreGtidsThanMaster) << r->message;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

// Statements that report the log's state scan the newest file: however
// many clients send them, one scan runs at a time and serves every
// statement that arrived before it began (so a client looping on them
// keeps at most one core busy, and answers are never older than the
// statement).
TEST_P(HostileClientTest, StateStatementsShareOneScanAtATime) {
  absl::Notification first_started, release;
  std::atomic<int> scans{0};
  StartServer(false, nullptr, [&](ServerOptions* o) {
    o->on_state_scan = [&] {
      if (scans.fetch_add(1) == 0) {
        first_started.Notify();
        release.WaitForNotification();
      }
    };
  });
  ReplicationClient a = Replica(), b = Replica(), c = Replica();
  auto ask = [](ReplicationClient* client, const char* sql) {
    auto q = client->Query(sql);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->kind, ClientReply::kResultSet) << q->message;
    ASSERT_EQ(q->rows.size(), 1u);
    EXPECT_EQ(q->rows[0].back(), absl::StrCat(kUuid, ":1-40"));
  };
  std::thread ta([&] { ask(&a, "SELECT @@gtid_executed"); });
  ASSERT_TRUE(first_started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  std::thread tb([&] { ask(&b, "SHOW MASTER STATUS"); });
  std::thread tc([&] { ask(&c, "SELECT @@GLOBAL.gtid_executed"); });
  const absl::Time end = absl::Now() + absl::Seconds(30);
  while (server_->stats().state_waits < 2 && absl::Now() < end) std::this_thread::yield();
  EXPECT_EQ(server_->stats().state_waits, 2u);
  EXPECT_EQ(scans.load(), 1);
  release.Notify();
  ta.join();
  tb.join();
  tc.join();
  // The two that waited arrived after the first scan began: one more scan
  // serves both.
  EXPECT_EQ(scans.load(), 2);
}

// Random handshake responses and random commands after authentication,
// each on its own connection (a fixed seed): the server answers or closes
// each one and goes on serving.
TEST_P(HostileClientTest, RandomPacketsNeverHurtTheServer) {
  // A response that parses and names another plugin gets an auth switch
  // the client never answers: the handshake timeout ends it.
  StartServer(false, nullptr, [](ServerOptions* o) { o->handshake_timeout = absl::Seconds(1); });
  uint32_t seed = 777;
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
  };
  auto junk = [&](size_t n) {
    std::string b;
    for (size_t i = 0; i < n; ++i) b.push_back(static_cast<char>(next()));
    return b;
  };
  for (int i = 0; i < 100; ++i) {
    auto s = io::Socket::ConnectLoopback(port_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(RawPacket(&*s, absl::Now() + absl::Seconds(10)).ok());
    std::string body = junk(next() % 300);
    if (i % 2 == 0 && body.size() >= 4) body[1] = static_cast<char>(body[1] | 0x02);  // 4.1
    std::string wire;
    uint8_t seq = 1;
    FramePacket(body, &seq, &wire);
    ASSERT_TRUE(s->WriteAll(wire, absl::Now() + absl::Seconds(10)).ok());
    EXPECT_TRUE(ClosedBy(&*s, absl::Now() + absl::Seconds(10))) << i;
  }
  const uint8_t commands[] = {kComQuit,         kComInitDb, kComQuery, kComPing,
                              kComBinlogDump,   kComRegisterSlave,
                              kComBinlogDumpGtid, 0x63};
  for (int i = 0; i < 200; ++i) {
    ReplicationClient c = Replica();
    std::string cmd(1, static_cast<char>(commands[next() % sizeof(commands)]));
    cmd += junk(next() % 200);
    ASSERT_TRUE(c.SendCommand(cmd).ok());
    // One reply (or the close); dumps that start streaming are abandoned.
    c.Read(absl::Now() + absl::Seconds(10)).IgnoreError();
  }
  ReplicationClient d = Replica();
  ASSERT_TRUE(d.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  EXPECT_EQ(ReadDump(&d).gnos, Range(1, 40));
}

INSTANTIATE_TEST_SUITE_P(Plain, HostileClientTest, ::testing::Values(io::Codec::kNone));

// TLS: the server with the test CA's certificate (tests/testutil/test_pki.h,
// made in the test's directory), the in-tree client over TLS.
class TlsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    const std::string pki_dir = dir_ + "/pki";
    ASSERT_EQ(::mkdir(pki_dir.c_str(), 0700), 0);
    auto pki = testing_util::MakeTestPki(pki_dir);
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
  }

  void StartTlsServer(bool live = false, sync::AckTracker* acks = nullptr,
                      const std::function<void(ServerOptions*)>& tweak = nullptr) {
    StartServer(live, acks, [&](ServerOptions* o) {
      o->ssl_cert = pki_.server_cert;
      o->ssl_key = pki_.server_key;
      o->ssl_ca = pki_.ca;
      if (tweak) tweak(o);
    });
  }

  // A TLS client trusting `ca` (the test CA by default), verifying the
  // certificate names `host`, with the given client certificate.
  absl::StatusOr<ReplicationClient> ConnectTls(const std::string& ca = "",
                                               const std::string& host = "127.0.0.1",
                                               const std::string& cert = "",
                                               const std::string& key = "") {
    auto ctx = io::TlsContext::ForClient(ca.empty() ? pki_.ca : ca, cert, key);
    if (!ctx.ok()) return ctx.status();
    ClientTls tls{*ctx, host};
    auto s = io::Socket::ConnectLoopback(port_);
    if (!s.ok()) return s.status();
    return ReplicationClient::Connect(std::move(*s), "repl", "pw", "mysql_native_password", false,
                                      &tls);
  }

  ReplicationClient TlsReplica() {
    auto c = ConnectTls();
    EXPECT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(c->socket().tls());
    auto r = c->Query("SET @master_binlog_checksum= @@global.binlog_checksum");
    EXPECT_TRUE(r.ok() && r->kind == ClientReply::kOk);
    return std::move(*c);
  }

  // A raw connection that read the greeting and sent an SSLRequest.
  io::Socket SentSslRequest() {
    auto s = io::Socket::ConnectLoopback(port_);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return io::Socket();
    auto greeting = RawPacket(&*s, absl::Now() + absl::Seconds(10));
    EXPECT_TRUE(greeting.ok()) << greeting.status();
    if (greeting.ok()) {
      EXPECT_EQ(static_cast<uint8_t>((*greeting)[0]), 10) << "not a greeting: "
                                                          << ErrCode(*greeting);
    }
    std::string wire;
    uint8_t seq = 1;
    FramePacket(EncodeSslRequest(kClientProtocol41 | kClientSecureConnection), &seq, &wire);
    EXPECT_TRUE(s->WriteAll(wire, absl::Now() + absl::Seconds(10)).ok());
    return std::move(*s);
  }

  testing_util::TestPki pki_;
};

// The upgrade, then everything a replica does over TLS: queries, a dump
// by position and a live semi-sync dump with heartbeats and acks, ended by
// shutdown's error; a plaintext client still connects (TLS is offered,
// not required).
TEST_P(TlsTest, DumpsQueriesAcksHeartbeatsAndShutdownOverTls) {
  sync::AckTrackerOptions ao;
  ao.timeout = absl::Seconds(60);
  ao.async_on_timeout = false;
  sync::AckTracker acks(ao);
  StartTlsServer(/*live=*/true, &acks);
  ReplicationClient c = TlsReplica();
  EXPECT_TRUE(c.socket().tls_version() == "TLSv1.3" || c.socket().tls_version() == "TLSv1.2")
      << c.socket().tls_version();
  auto q = c.Query("SELECT 1");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kResultSet);
  ASSERT_TRUE(c.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  Received all = ReadDump(&c);
  EXPECT_EQ(all.gnos, Range(1, 40));
  EXPECT_EQ(all.bad_checksums, 0);

  ReplicationClient r = TlsReplica();
  ASSERT_TRUE(r.Query("SET @master_heartbeat_period=1000000").ok());  // 1 ms
  ASSERT_TRUE(r.Query("SET @rpl_semi_sync_slave=1").ok());
  r.set_semisync(true);
  ASSERT_TRUE(r.Dump("", 4, 0, /*server_id=*/78).ok());
  std::string file = "binlog.000001";
  int xids = 0;
  bool heartbeat = false;
  std::atomic<bool> acked{false};
  std::thread committer;
  while (!acked.load()) {
    auto e = r.Read(absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ(e->kind, ClientReply::kEvent);
    const uint8_t type = static_cast<uint8_t>(e->event[4]);
    if (type == kRotateEvent) {
      auto rot = DecodeRotate(EventBody(e->event, true));
      ASSERT_TRUE(rot.ok());
      file = std::string(rot->next_file);
    }
    xids += type == kXidEvent || type == kTransactionPayloadEvent;
    if (e->need_ack) {
      ASSERT_TRUE(r.SendAck(DecodeHeader(e->event).log_pos, file).ok());
    }
    if (type == kHeartbeatEvent && !heartbeat) {
      // Caught up and idle: a committer now waits for this replica's ack.
      heartbeat = true;
      committer = std::thread([&] {
        TransactionBuffer txn;
        txn.AppendCommitGtid(kTs, 1, CommitGtid());
        AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
        AppendXid(&txn, kTs, 1, 999);
        auto p = log_->Commit(&txn);
        ASSERT_TRUE(p.ok());
        sync::AckOutcome outcome;
        EXPECT_TRUE(acks.WaitForAck(sync::AckPosition{p->file_number, p->end}, &outcome).ok());
        EXPECT_EQ(outcome, sync::AckOutcome::kAcknowledged);
        acked = true;
      });
    }
    if (xids == committed_ + 1) break;
  }
  if (committer.joinable()) committer.join();
  EXPECT_TRUE(heartbeat);
  EXPECT_TRUE(acked.load());

  auto plain = Connect();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->socket().tls());

  // Shutdown reaches the TLS dump: ER_SERVER_SHUTDOWN, then the close.
  server_->Shutdown();
  ClientReply end;
  while (true) {
    auto e = r.Read(absl::Now() + absl::Seconds(10));
    ASSERT_TRUE(e.ok()) << e.status();
    if (e->kind != ClientReply::kEvent) {
      end = *e;
      break;
    }
  }
  EXPECT_EQ(end.error_code, kErServerShutdown);
  StopServer();
  EXPECT_GE(acks.acknowledged().file_number, 1u);
}

// Certificates are checked both ways: the client refuses a server whose
// certificate does not chain to its CA or does not name the address it
// connected to; the server (with ssl_ca) refuses a client certificate
// from another CA and accepts its own CA's, and clients without one.
TEST_P(TlsTest, CertificatesAreVerifiedBothWays) {
  StartTlsServer();
  auto wrong_ca = ConnectTls(pki_.other_ca);
  ASSERT_FALSE(wrong_ca.ok());
  EXPECT_TRUE(absl::IsUnavailable(wrong_ca.status())) << wrong_ca.status();
  EXPECT_NE(wrong_ca.status().message().find("certificate"), absl::string_view::npos)
      << wrong_ca.status();
  auto wrong_host = ConnectTls("", "10.1.2.3");
  ASSERT_FALSE(wrong_host.ok());
  EXPECT_NE(wrong_host.status().message().find("certificate"), absl::string_view::npos)
      << wrong_host.status();
  EXPECT_TRUE(ConnectTls("", "localhost").ok());

  auto foreign = ConnectTls("", "127.0.0.1", pki_.other_client_cert, pki_.other_client_key);
  EXPECT_FALSE(foreign.ok());
  auto own = ConnectTls("", "127.0.0.1", pki_.client_cert, pki_.client_key);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE(own->Query("SELECT 1").ok());
  // The failed handshakes are the server's too (the client that refused
  // the server's certificate aborted it).
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (server_->stats().tls_failures < 3 && absl::Now() < end) std::this_thread::yield();
  EXPECT_GE(server_->stats().tls_failures, 3u);
  EXPECT_GE(server_->stats().tls_handshakes, 2u);
}

// caching_sha2_password over TLS: the full authentication takes the
// password in clear (TLS is a secure transport, as for MySQL), with no
// RSA key exchange; the next connection takes the fast path; a wrong
// password is still refused.
TEST_P(TlsTest, CachingSha2FullAuthenticationOverTlsNeedsNoRsaKey) {
  StartTlsServer();
  auto ctx = io::TlsContext::ForClient(pki_.ca);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  ClientTls tls{*ctx, "127.0.0.1"};
  auto connect = [&](const std::string& pw) {
    auto s = io::Socket::ConnectLoopback(port_);
    EXPECT_TRUE(s.ok()) << s.status();
    return ReplicationClient::Connect(std::move(*s), "sha2", pw, "caching_sha2_password",
                                      false, &tls);
  };
  auto c = connect("pw2");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->socket().tls());
  AuthStats a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(a.public_key_requests, 0u);
  EXPECT_EQ(a.fast_auths, 0u);
  auto d = connect("pw2");
  ASSERT_TRUE(d.ok()) << d.status();
  a = server_->stats().auth;
  EXPECT_EQ(a.fast_auths, 1u);
  EXPECT_EQ(a.full_auths, 1u);
  auto wrong = connect("nope");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("1045"), absl::string_view::npos) << wrong.status();
  EXPECT_EQ(server_->stats().auth.public_key_requests, 0u);
}

// A client that asks a server without TLS for it gets 1043, and the
// client library says the server offers none.
TEST_P(TlsTest, AServerWithoutTlsSaysSo) {
  StartServer();
  io::Socket s = SentSslRequest();
  auto p = RawPacket(&s, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ErrCode(*p), kErHandshake);
  EXPECT_NE(p->find("no TLS configured"), std::string::npos) << *p;
  auto c = ConnectTls();
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(c.status())) << c.status();
}

// require_secure_transport: plaintext TCP gets 3159 (SQLSTATE HY000) as in
// MySQL; TLS and a unix socket are accepted.
TEST_P(TlsTest, RequireSecureTransportRefusesPlaintextTcpOnly) {
  StartTlsServer(false, nullptr, [](ServerOptions* o) { o->require_secure_transport = true; });
  auto plain = Connect();
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("3159"), absl::string_view::npos) << plain.status();
  EXPECT_NE(plain.status().message().find("require_secure_transport"), absl::string_view::npos)
      << plain.status();
  {
    // The ERR packet itself: code 3159, SQLSTATE HY000, sequence id 2.
    auto s = io::Socket::ConnectLoopback(port_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(RawPacket(&*s, absl::Now() + absl::Seconds(10)).ok());
    std::string resp(4, '\0');
    const uint32_t caps = kClientProtocol41 | kClientSecureConnection | kClientPluginAuth;
    for (int i = 0; i < 4; ++i) resp[i] = static_cast<char>(caps >> (8 * i));
    resp += std::string("\0\0\0\x01\x21", 5) + std::string(23, '\0') + "repl" +
            std::string(1, '\0') + std::string(1, '\0') + "mysql_native_password" +
            std::string(1, '\0');
    std::string wire;
    uint8_t seq = 1;
    FramePacket(resp, &seq, &wire);
    ASSERT_TRUE(s->WriteAll(wire, absl::Now() + absl::Seconds(10)).ok());
    char h[4];
    ASSERT_TRUE(s->ReadFull(h, 4, absl::Now() + absl::Seconds(10)).ok());
    EXPECT_EQ(h[3], 2);
    std::string err(static_cast<uint8_t>(h[0]), '\0');
    ASSERT_TRUE(s->ReadFull(err.data(), err.size(), absl::Now() + absl::Seconds(10)).ok());
    EXPECT_EQ(ErrCode(err), kErSecureTransportRequired);
    EXPECT_EQ(err.substr(3, 6), "#HY000");
  }
  ReplicationClient t = TlsReplica();
  EXPECT_TRUE(t.Query("SELECT 1").ok());

  auto unix_listener = io::Socket::ListenUnix(dir_ + "/s.sock");
  ASSERT_TRUE(unix_listener.ok()) << unix_listener.status();
  std::thread unix_runner([&] { server_->Run(&*unix_listener); });
  auto us = io::Socket::ConnectUnix(dir_ + "/s.sock");
  ASSERT_TRUE(us.ok()) << us.status();
  auto u = ReplicationClient::Connect(std::move(*us), "repl", "pw");
  EXPECT_TRUE(u.ok()) << u.status();
  if (u.ok()) {
    EXPECT_FALSE(u->socket().tls());
    EXPECT_TRUE(u->Query("SELECT 1").ok());
  }
  server_->Shutdown();
  unix_runner.join();
  StopServer();
}

// A certificate or key the server cannot use is an error of Create (the
// startup of binlog_server), with the file and the reason.
TEST_P(TlsTest, UnusableCertificatesFailAtStartup) {
  auto create = [&](const std::string& cert, const std::string& key, const std::string& ca) {
    ServerOptions so;
    so.dir = dir_;
    so.ssl_cert = cert;
    so.ssl_key = key;
    so.ssl_ca = ca;
    auto s = Server::Create(so);
    return s.ok() ? absl::OkStatus() : s.status();
  };
  EXPECT_TRUE(create(pki_.server_cert, pki_.server_key, pki_.ca).ok());
  absl::Status s = create(pki_.expired_cert, pki_.server_key, "");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("expired"), absl::string_view::npos) << s;
  s = create(dir_ + "/missing.pem", pki_.server_key, "");
  EXPECT_NE(s.message().find("cannot load the certificate"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("missing.pem"), absl::string_view::npos) << s;
  s = create(pki_.server_cert, pki_.client_key, "");
  EXPECT_NE(s.message().find("does not match"), absl::string_view::npos) << s;
  s = create(pki_.server_key, pki_.server_key, "");  // a key is not a certificate
  EXPECT_NE(s.message().find("cannot load the certificate"), absl::string_view::npos) << s;
  s = create(pki_.server_cert, pki_.server_cert, "");  // nor a certificate a key
  EXPECT_NE(s.message().find("cannot load the private key"), absl::string_view::npos) << s;
  s = create(pki_.server_cert, pki_.server_key, dir_ + "/missing-ca.pem");
  EXPECT_NE(s.message().find("cannot load the CA"), absl::string_view::npos) << s;
  s = create("", "", pki_.ca);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = create(pki_.server_cert, "", "");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

// A client that sends garbage instead of a TLS ClientHello is dropped at
// once; one that sends nothing after its SSLRequest holds an
// unauthenticated slot only until the handshake deadline. Neither
// disturbs a TLS replica already served.
TEST_P(TlsTest, BrokenTlsHandshakesAreDroppedWithoutHarm) {
  StartTlsServer(false, nullptr, [](ServerOptions* o) {
    o->handshake_timeout = absl::Seconds(2);
    o->max_unauthenticated_connections = 2;
  });
  ReplicationClient good = TlsReplica();  // authenticated: holds no slot
  // Two stalled TLS handshakes fill the unauthenticated slots ...
  const absl::Time start = absl::Now();
  io::Socket stalled1 = SentSslRequest();
  io::Socket stalled2 = SentSslRequest();
  const absl::Time deadline_wait = absl::Now() + absl::Seconds(10);
  while (server_->stats().connections < 3 && absl::Now() < deadline_wait) {
    std::this_thread::yield();
  }
  auto refused = io::Socket::ConnectLoopback(port_);
  ASSERT_TRUE(refused.ok());
  auto p = RawPacket(&*refused, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ErrCode(*p), kErConCount);
  // ... until the handshake deadline, which covers the TLS handshake.
  EXPECT_TRUE(ClosedBy(&stalled1, absl::Now() + absl::Seconds(10)));
  EXPECT_TRUE(ClosedBy(&stalled2, absl::Now() + absl::Seconds(10)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(1500));
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  const absl::Time slots_end = absl::Now() + absl::Seconds(10);
  absl::StatusOr<ReplicationClient> again = absl::UnavailableError("not tried");
  while (absl::Now() < slots_end) {
    // The sessions' threads release their slots as they end.
    again = ConnectTls();
    if (again.ok()) break;
  }
  ASSERT_TRUE(again.ok()) << again.status();
  // Garbage instead of a ClientHello: dropped at once, not at the deadline.
  io::Socket garbage = SentSslRequest();
  ASSERT_TRUE(garbage.WriteAll(std::string(300, '\x16') + "GET / HTTP/1.0\r\n\r\n",
                               absl::Now() + absl::Seconds(10))
                  .ok());
  EXPECT_TRUE(ClosedBy(&garbage, absl::Now() + absl::Seconds(1)));
  EXPECT_GE(server_->stats().tls_failures, 3u);
  auto q = good.Query("SELECT 1");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->kind, ClientReply::kResultSet);
  ASSERT_TRUE(good.Dump("binlog.000001", 4, kDumpNonBlock).ok());
  EXPECT_EQ(ReadDump(&good).gnos, Range(1, 40));
}

INSTANTIATE_TEST_SUITE_P(Plain, TlsTest, ::testing::Values(io::Codec::kNone));

// Listening on IPv4 and IPv6 addresses (binlog_server --bind): one server,
// 127.0.0.1 and ::1 on the same port, a session on each.
class ListenTest : public ServerTest {};

TEST_P(ListenTest, ServesIpv4AndIpv6LoopbackOnOnePort) {
  StartServer();
  auto v6 = io::Socket::ListenTcp("::1", port_);
  if (!v6.ok() && (v6.status().message().find("Cannot assign requested address") !=
                       absl::string_view::npos ||
                   v6.status().message().find("Address family not supported") !=
                       absl::string_view::npos)) {
    GTEST_SKIP() << "no IPv6 loopback (::1) on this machine: " << v6.status();
  }
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->port(), port_);
  std::thread v6_runner([&] { server_->Run(&*v6); });
  for (const char* address : {"127.0.0.1", "::1"}) {
    SCOPED_TRACE(address);
    auto s = io::Socket::ConnectTcp(address, port_);
    ASSERT_TRUE(s.ok()) << s.status();
    auto c = ReplicationClient::Connect(std::move(*s), "repl", "pw");
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE(c->Query("SET @master_binlog_checksum='CRC32'").ok());
    ASSERT_TRUE(c->Dump("binlog.000001", 4, kDumpNonBlock).ok());
    EXPECT_EQ(ReadDump(&*c).gnos, Range(1, 40));
  }
  server_->Shutdown();
  v6_runner.join();
  StopServer();
}

TEST(ListenAddressTest, OnlyAddressLiteralsAreAccepted) {
  for (const char* bad : {"localhost", "127.0.0.256", "::1%", "", "1.2.3.4:5"}) {
    auto l = io::Socket::ListenTcp(bad, 0);
    ASSERT_FALSE(l.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(l.status())) << bad << ": " << l.status();
  }
  auto c = io::Socket::ConnectTcp("localhost", 1);
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
}

INSTANTIATE_TEST_SUITE_P(Plain, ListenTest, ::testing::Values(io::Codec::kNone));

}  // namespace
}  // namespace server
}  // namespace binlog
