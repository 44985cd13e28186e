// What a MariaDB 10.11 source sends a replica that asks for its binlog: the
// facts a relay between real servers (an exact copy of the source's files,
// a durable semi-sync acknowledger) is built on, checked against Debian's
// mariadbd (a primary in a temporary directory, on 127.0.0.1 at a free
// port and a unix socket) with the project's replication client.
//
// What the tests pin down (MariaDB 10.11, @mariadb_slave_capability=4,
// @master_binlog_checksum='CRC32'):
//   - Every dump starts with a fake Rotate (log_pos 0, LOG_EVENT_ARTIFICIAL_F,
//     timestamp 0) naming the file and position it continues from, and so
//     does every file the dump moves into, after the real Rotate (log_pos =
//     the file's size, no artificial flag) that ends the previous file.
//   - The Format_description of a closed file is sent as the file holds it;
//     that of the active file is sent with its in-use flag (file offset 21)
//     cleared, and its CRC is valid for the cleared flag (servers compute an
//     FDE's checksum without the in-use flag): the bytes the file will hold
//     once the source closes it.
//   - Without BINLOG_SEND_ANNOTATE_ROWS_EVENT (dump flag 2), Annotate_rows
//     events are left out (the stream skips their bytes); with it, every
//     event the file holds is sent, byte for byte, with contiguous
//     positions: a file-and-position dump from offset 4 copies the files
//     exactly.
//   - A GTID connect restarts at the beginning of the file that holds the
//     position: fake Rotate, the file's Format_description, its Gtid_list
//     and Binlog_checkpoint events, then the whole groups at or before the
//     position are skipped, an artificial Gtid_list (LOG_EVENT_ARTIFICIAL_F)
//     stands where they ended, and the groups after the position follow.
//   - Semi-sync (@rpl_semi_sync_slave=1): the source asks for an ack on the
//     last event of a transaction; with wait point AFTER_SYNC a client's
//     COMMIT returns once the ack arrives, counted as a semi-sync commit.
//   - Heartbeats (type 27, timestamp 0, log_pos = the end of the active
//     file, naming it) arrive when the dump is idle.
//   - With semi-sync on, a second dump of the same server id may be refused
//     (4052) or starved while the first connection lives; it is taken once
//     the first is gone.
// The relay's source side, server/source.h, is tested here too.
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

#include <stdio.h>

#include <fstream>
#include <atomic>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/checksum.h"
#include "binlog/format.h"
#include "gtest/gtest.h"
#include "io/socket.h"
#include "server/client.h"
#include "server/source.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/mariadb_server.h"

namespace binlog {
namespace {

using testing_util::MariadbServer;

constexpr uint8_t kRotate = 4;
constexpr uint8_t kFde = 15;
constexpr uint8_t kXid = 16;
constexpr uint8_t kHeartbeat = 27;
constexpr uint8_t kAnnotateRows = 160;
constexpr uint8_t kGtid = 162;
constexpr uint8_t kGtidList = 163;
constexpr uint16_t kDumpSendAnnotateRows = 2;

std::string ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Received {
  uint8_t type = 0;
  uint32_t timestamp = 0;
  uint32_t size = 0;
  uint32_t log_pos = 0;
  uint16_t flags = 0;
  bool need_ack = false;
  std::string bytes;

  bool artificial() const { return (flags & kFlagArtificial) != 0; }
  // Rotate and heartbeat: the file name after the post-header (8 bytes of
  // position for Rotate, none for a heartbeat), before the CRC.
  std::string name() const {
    const size_t at = kHeaderSize + (type == kRotate ? kRotatePostHeaderSize : 0);
    return bytes.substr(at, bytes.size() - at - kChecksumSize);
  }
  uint64_t rotate_position() const { return LoadLe64(bytes.data() + kHeaderSize); }
  // MariaDB Gtid event: its sequence number (the first post-header field).
  uint64_t gtid_seq() const { return LoadLe64(bytes.data() + kHeaderSize); }
  bool crc_ok() const {
    std::string b = bytes;
    if (type == kFde) b[kFlagsOffset] &= ~static_cast<char>(kFlagBinlogInUse);
    return Crc32(b.data(), b.size() - kChecksumSize) ==
           LoadLe32(b.data() + b.size() - kChecksumSize);
  }
};

std::string Describe(const std::vector<Received>& got) {
  std::string out;
  for (const Received& e : got) {
    absl::StrAppend(&out, "  type ", e.type, " size ", e.size, " log_pos ", e.log_pos,
                    " flags ", e.flags, e.need_ack ? " need_ack" : "", "\n");
  }
  return out;
}

class MariadbSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MariadbServer::Installed()) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    char tmpl[] = "/tmp/binlog_source_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    absl::Status s = primary_.Start(
        dir_,
        {"--server-id=1", "--log-bin=" + dir_ + "/data/primary-bin", "--binlog-format=ROW",
         "--gtid-strict-mode=1", "--rpl-semi-sync-master-enabled=0",
         "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
         "--rpl-semi-sync-master-timeout=60000"},
        /*tcp=*/true);
    ASSERT_TRUE(s.ok()) << s;
    Exec("CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 's3cret'");
    Exec("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'");
    Exec("CREATE DATABASE shop");
    Exec("CREATE TABLE shop.items (id INT PRIMARY KEY, v VARCHAR(40))");
  }

  void TearDown() override {
    primary_.Stop();
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      testing_util::RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::cerr << "kept " << dir_ << "\n";
    }
  }

  std::string Exec(const std::string& sql) {
    auto out = primary_.Sql(sql);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? std::string(absl::StripAsciiWhitespace(*out)) : "";
  }
  // Semi-sync on (off until then, so that the tests' first commits do not
  // wait for a replica): from now on a commit waits for an ack, up to 60 s.
  void EnableSemiSync() { Exec("SET GLOBAL rpl_semi_sync_master_enabled = 1"); }
  void Insert(int id) { Exec(absl::StrCat("INSERT INTO shop.items VALUES (", id, ",'v')")); }
  uint64_t Status(const std::string& name) {
    std::vector<std::string> kv =
        absl::StrSplit(Exec("SHOW GLOBAL STATUS LIKE '" + name + "'"), '\t');
    uint64_t v = 0;
    EXPECT_TRUE(kv.size() == 2 && absl::SimpleAtoi(kv[1], &v)) << name;
    return v;
  }
  std::string File(int n) const {
    return ReadWholeFile(absl::StrCat(dir_, "/data/primary-bin.00000", n));
  }

  // Connects as a replica (server id 7) and sets the session variables a
  // MariaDB replica sets, plus `extra` ones.
  void ConnectReplica(const std::vector<std::string>& extra) {
    auto sock = io::Socket::ConnectLoopback(static_cast<uint16_t>(primary_.port()));
    ASSERT_TRUE(sock.ok()) << sock.status();
    auto c = server::ReplicationClient::Connect(std::move(*sock), "repl", "s3cret");
    ASSERT_TRUE(c.ok()) << c.status();
    client_.emplace(std::move(*c));
    std::vector<std::string> qs = {"SET @master_binlog_checksum='CRC32'",
                                   "SET @mariadb_slave_capability=4",
                                   "SET @master_heartbeat_period=200000000"};
    qs.insert(qs.end(), extra.begin(), extra.end());
    for (const std::string& q : qs) {
      auto r = client_->Query(q);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->kind, server::ClientReply::kOk) << q << ": " << r->message;
    }
    ASSERT_TRUE(client_->Register(7, "relay", 0).ok());
  }

  // Reads the dump up to its first heartbeat (caught up and idle).
  std::vector<Received> ReadToHeartbeat() {
    std::vector<Received> got;
    for (;;) {
      auto r = client_->Read(absl::Now() + absl::Seconds(20));
      EXPECT_TRUE(r.ok()) << r.status() << "\n" << Describe(got);
      if (!r.ok()) return got;
      EXPECT_EQ(r->kind, server::ClientReply::kEvent) << r->message;
      if (r->kind != server::ClientReply::kEvent) return got;
      got.push_back(Parse(r->event, r->need_ack));
      if (got.back().type == kHeartbeat) return got;
    }
  }

  static Received Parse(const std::string& ev, bool need_ack) {
    Received r;
    r.timestamp = LoadLe32(ev.data() + kTimestampOffset);
    r.type = static_cast<uint8_t>(ev[kTypeOffset]);
    r.size = LoadLe32(ev.data() + kEventSizeOffset);
    r.log_pos = LoadLe32(ev.data() + kLogPosOffset);
    r.flags = LoadLe16(ev.data() + kFlagsOffset);
    r.need_ack = need_ack;
    r.bytes = ev;
    return r;
  }

  std::string dir_;
  MariadbServer primary_;
  std::optional<server::ReplicationClient> client_;
};

// A dump from the first file's offset 4 with Annotate_rows asked for holds
// every byte of every file: appending each event that is not artificial
// (and not a heartbeat) where the copy ends rebuilds the files exactly,
// save the active file's in-use flag.
TEST_F(MariadbSourceTest, AFilePositionDumpCopiesTheFilesExactly) {
  Insert(1);
  Exec("FLUSH BINARY LOGS");
  Insert(2);
  ConnectReplica({});
  ASSERT_TRUE(client_->Dump("primary-bin.000001", 4, kDumpSendAnnotateRows, 7).ok());
  std::vector<Received> got = ReadToHeartbeat();
  ASSERT_FALSE(HasFailure());

  std::map<std::string, std::string> copy;
  std::string current;
  int fake_rotates = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const Received& e = got[i];
    SCOPED_TRACE(absl::StrCat("event ", i, "\n", Describe(got)));
    EXPECT_TRUE(e.crc_ok());
    if (e.type == kHeartbeat) {
      EXPECT_EQ(e.timestamp, 0u);
      EXPECT_EQ(e.name(), current);
      EXPECT_EQ(e.log_pos, copy[current].size());
      continue;
    }
    if (e.artificial()) {
      // The fake Rotate opening each file of the stream.
      ASSERT_EQ(e.type, kRotate);
      EXPECT_EQ(e.log_pos, 0u);
      EXPECT_EQ(e.timestamp, 0u);
      EXPECT_EQ(e.rotate_position(), 4u);
      current = e.name();
      EXPECT_EQ(copy.count(current), 0u);
      copy[current] = std::string(kBinlogMagic, kMagicSize);
      ++fake_rotates;
      continue;
    }
    std::string& f = copy[current];
    EXPECT_EQ(e.log_pos, f.size() + e.size) << "positions are contiguous";
    f += e.bytes;
  }
  EXPECT_EQ(fake_rotates, 2);
  ASSERT_EQ(copy.size(), 2u);
  // The closed file: byte for byte. It ends with the real Rotate.
  EXPECT_TRUE(copy["primary-bin.000001"] == File(1));
  const Received* real_rotate = nullptr;
  for (const Received& e : got) {
    if (e.type == kRotate && !e.artificial()) real_rotate = &e;
  }
  ASSERT_NE(real_rotate, nullptr);
  EXPECT_EQ(real_rotate->log_pos, File(1).size());
  EXPECT_EQ(real_rotate->name(), "primary-bin.000002");
  // The active file: the same bytes but the in-use flag, set in the file
  // and clear in the copy.
  std::string active = File(2);
  ASSERT_EQ(copy["primary-bin.000002"].size(), active.size());
  EXPECT_NE(active[kInUseFlagFileOffset] & kFlagBinlogInUse, 0);
  EXPECT_EQ(copy["primary-bin.000002"][kInUseFlagFileOffset] & kFlagBinlogInUse, 0);
  active[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
  EXPECT_TRUE(copy["primary-bin.000002"] == active);
}

TEST_F(MariadbSourceTest, AGtidDumpRestartsAtTheFileAndSkipsWholeGroups) {
  for (int i = 1; i <= 3; ++i) Insert(i);
  Exec("FLUSH BINARY LOGS");
  for (int i = 4; i <= 6; ++i) Insert(i);
  std::vector<std::string> pos = absl::StrSplit(Exec("SELECT @@gtid_binlog_pos"), '-');
  ASSERT_EQ(pos.size(), 3u);
  uint64_t last = 0;
  ASSERT_TRUE(absl::SimpleAtoi(pos[2], &last));
  const uint64_t from = last - 2;  // two transactions to send
  ConnectReplica({absl::StrCat("SET @slave_connect_state='0-1-", from, "'"),
                  "SET @slave_gtid_strict_mode=1"});
  ASSERT_TRUE(client_->Dump("", 4, /*flags=*/0, 7).ok());
  std::vector<Received> got = ReadToHeartbeat();
  ASSERT_FALSE(HasFailure());
  SCOPED_TRACE(Describe(got));
  ASSERT_GE(got.size(), 6u);
  const std::string file = File(2);

  // The fake Rotate names the file that holds the position, from offset 4.
  EXPECT_EQ(got[0].type, kRotate);
  EXPECT_TRUE(got[0].artificial());
  EXPECT_EQ(got[0].name(), "primary-bin.000002");
  EXPECT_EQ(got[0].rotate_position(), 4u);
  // The file's Format_description, its in-use flag cleared, CRC valid.
  ASSERT_EQ(got[1].type, kFde);
  EXPECT_EQ(got[1].flags & kFlagBinlogInUse, 0);
  EXPECT_TRUE(got[1].crc_ok());
  std::string fde = file.substr(kMagicSize, got[1].size);
  fde[kFlagsOffset] &= ~static_cast<char>(kFlagBinlogInUse);
  EXPECT_TRUE(got[1].bytes == fde);

  // One artificial Gtid_list where the skipped groups end; every other
  // event is the file's own, at its own position. No group at or before
  // the position is sent; both after it are, whole.
  int artificial_lists = 0;
  std::vector<uint64_t> seqs;
  for (size_t i = 2; i < got.size(); ++i) {
    const Received& e = got[i];
    if (e.type == kHeartbeat) continue;
    EXPECT_NE(e.type, kAnnotateRows) << "sent without BINLOG_SEND_ANNOTATE_ROWS_EVENT";
    if (e.artificial()) {
      EXPECT_EQ(e.type, kGtidList);
      ++artificial_lists;
      continue;
    }
    ASSERT_LE(e.log_pos, file.size());
    EXPECT_TRUE(file.compare(e.log_pos - e.size, e.size, e.bytes) == 0) << "event " << i;
    if (e.type == kGtid) seqs.push_back(e.gtid_seq());
  }
  EXPECT_EQ(artificial_lists, 1);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{from + 1, from + 2}));
  // The heartbeat names the active file and its end.
  EXPECT_EQ(got.back().name(), "primary-bin.000002");
  EXPECT_EQ(got.back().log_pos, file.size());
}

// With semi-sync, the source asks for an ack on a transaction's last
// event, and a client's COMMIT waits (AFTER_SYNC) until the ack comes.
TEST_F(MariadbSourceTest, SemiSyncCommitWaitsForTheAck) {
  Insert(1);
  EnableSemiSync();
  ConnectReplica({"SET @rpl_semi_sync_slave=1"});
  client_->set_semisync(true);
  const std::string file = "primary-bin.000001";
  ASSERT_TRUE(client_->Dump(file, 4, kDumpSendAnnotateRows, 7).ok());
  std::vector<Received> got = ReadToHeartbeat();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(Status("Rpl_semi_sync_master_clients"), 1u);
  EXPECT_EQ(Exec("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'"),
            "Rpl_semi_sync_master_status\tON");
  const uint64_t yes_before = Status("Rpl_semi_sync_master_yes_tx");
  const uint64_t no_before = Status("Rpl_semi_sync_master_no_tx");

  // A commit from another thread: it cannot return before the ack.
  std::atomic<bool> returned{false};
  std::thread committer([&] {
    Insert(2);
    returned = true;
  });
  Received xid;
  for (;;) {
    auto r = client_->Read(absl::Now() + absl::Seconds(20));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kind, server::ClientReply::kEvent);
    Received e = Parse(r->event, r->need_ack);
    if (e.type == kHeartbeat) continue;
    if (e.type == kXid) {
      xid = e;
      break;
    }
    EXPECT_FALSE(e.need_ack) << "only a transaction's last event asks for an ack";
  }
  EXPECT_TRUE(xid.need_ack);
  // The commit is parked in the source until the ack: its wait counter
  // says so (Rpl_semi_sync_master_wait_sessions), not a timer.
  for (int i = 0; i < 100 && Status("Rpl_semi_sync_master_wait_sessions") == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(100));  // polls the server's counter (bounded)
  }
  EXPECT_EQ(Status("Rpl_semi_sync_master_wait_sessions"), 1u);
  EXPECT_FALSE(returned.load());
  ASSERT_TRUE(client_->SendAck(xid.log_pos, file).ok());
  committer.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(Status("Rpl_semi_sync_master_yes_tx"), yes_before + 1);
  EXPECT_EQ(Status("Rpl_semi_sync_master_no_tx"), no_before);
}

// The relay's source side (server/source.h) against the same primary.
class SourceStreamTest : public MariadbSourceTest {
 protected:
  server::SourceOptions Options() const {
    server::SourceOptions o;
    o.host = "127.0.0.1";
    o.port = static_cast<uint16_t>(primary_.port());
    o.user = "repl";
    o.password = "s3cret";
    o.flavor = LogFlavor::kMariaDB;
    o.server_id = 9;
    o.report_host = "relay-under-test";
    o.heartbeat_period = absl::Milliseconds(200);
    return o;
  }
  // Events up to the first heartbeat.
  std::vector<Received> Drain(server::SourceStream* st) {
    std::vector<Received> got;
    for (;;) {
      auto e = st->Next(absl::Now() + absl::Seconds(20));
      EXPECT_TRUE(e.ok()) << e.status();
      if (!e.ok()) return got;
      got.push_back(Parse(e->bytes, e->need_ack));
      if (got.back().type == kHeartbeat) return got;
    }
  }
};

TEST_F(SourceStreamTest, StreamsEveryEventAndResumesByGtid) {
  Insert(1);
  Insert(2);
  EnableSemiSync();
  auto st = server::SourceStream::Start(Options(), {"primary-bin.000001", 4, std::nullopt});
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_TRUE(st->semisync());
  EXPECT_TRUE(st->checksums());
  EXPECT_NE(st->source_version().find("MariaDB"), std::string::npos);
  std::vector<Received> got = Drain(&*st);
  ASSERT_FALSE(HasFailure());
  // Every event of the file, Annotate_rows included, contiguous.
  std::string copy(kBinlogMagic, kMagicSize);
  bool annotate = false;
  for (const Received& e : got) {
    if (e.artificial() || e.type == kHeartbeat) continue;
    annotate |= e.type == kAnnotateRows;
    ASSERT_EQ(e.log_pos, copy.size() + e.size) << Describe(got);
    copy += e.bytes;
  }
  EXPECT_TRUE(annotate);
  std::string file = File(1);
  file[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
  EXPECT_TRUE(copy == file);
  // A commit now waits for the stream's ack.
  std::atomic<bool> returned{false};
  std::thread committer([&] {
    Insert(3);
    returned = true;
  });
  Received xid;
  for (;;) {
    auto e = st->Next(absl::Now() + absl::Seconds(20));
    ASSERT_TRUE(e.ok()) << e.status();
    xid = Parse(e->bytes, e->need_ack);
    if (xid.type == kXid) break;
  }
  EXPECT_TRUE(xid.need_ack);
  EXPECT_FALSE(returned.load());
  ASSERT_TRUE(st->Ack("primary-bin.000001", xid.log_pos).ok());
  committer.join();
  EXPECT_EQ(Status("Rpl_semi_sync_master_no_tx"), 0u);

  // After the connection closes (a relay restarted), a new stream by GTID
  // starts after the position, semi-sync again.
  st = absl::UnavailableError("closed");
  std::vector<std::string> pos = absl::StrSplit(Exec("SELECT @@gtid_binlog_pos"), '-');
  ASSERT_EQ(pos.size(), 3u);
  uint64_t last = 0;
  ASSERT_TRUE(absl::SimpleAtoi(pos[2], &last));
  server::DumpStart by_gtid;
  by_gtid.gtid = absl::StrCat("0-1-", last - 1);
  auto again = server::SourceStream::Start(Options(), by_gtid);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->semisync());
  got = Drain(&*again);
  std::vector<uint64_t> seqs;
  for (const Received& e : got) {
    if (e.type == kGtid) seqs.push_back(e.gtid_seq());
  }
  EXPECT_EQ(seqs, std::vector<uint64_t>{last});
}

// A relay that reconnects while its old connection still looks alive to
// the source: MariaDB 10.11 with semi-sync on has refused the new dump
// (error 4052, "A slave with the same server_uuid/server_id is already
// connected") or sent it nothing, not even its fake Rotate, until the old
// connection was gone (which of the two varies from run to run); once it
// is gone, it takes one. A relay treats both as a failed connect and
// retries.
TEST_F(SourceStreamTest, ADumpOfTheSameServerIdIsTakenOnceTheOldConnectionIsGone) {
  Insert(1);
  EnableSemiSync();
  server::SourceOptions o = Options();
  auto first = server::SourceStream::Start(o, {"primary-bin.000001", 4, std::nullopt});
  ASSERT_TRUE(first.ok()) << first.status();
  Drain(&*first);
  {
    auto second = server::SourceStream::Start(o, {"primary-bin.000001", 4, std::nullopt});
    ASSERT_TRUE(second.ok()) << second.status();
    // Many heartbeat periods. (A source may also take the second dump.)
    auto r = second->Next(absl::Now() + absl::Seconds(3));
    if (r.ok()) {
      // Taken.
    } else if (absl::IsFailedPrecondition(r.status())) {
      EXPECT_NE(r.status().message().find("4052"), absl::string_view::npos) << r.status();
    } else {
      EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
    }
  }
  first = absl::UnavailableError("closed");
  // The source notices the closed connection at its next heartbeat.
  absl::Status last;
  for (int i = 0; i < 20; ++i) {
    auto third = server::SourceStream::Start(o, {"primary-bin.000001", 4, std::nullopt});
    ASSERT_TRUE(third.ok()) << third.status();
    auto e = third->Next(absl::Now() + absl::Seconds(3));
    if (e.ok()) {
      last = absl::OkStatus();
      break;
    }
    last = e.status();
    EXPECT_TRUE(absl::IsFailedPrecondition(last) || absl::IsDeadlineExceeded(last)) << last;
    absl::SleepFor(absl::Milliseconds(200));  // a relay's reconnect backoff
  }
  EXPECT_TRUE(last.ok()) << last;
}

TEST_F(SourceStreamTest, ErrorsNameTheirCause) {
  server::SourceOptions o = Options();
  o.password = "wrong";
  EXPECT_EQ(server::SourceStream::Start(o, {}).status().code(),
            absl::StatusCode::kPermissionDenied);
  o = Options();
  o.server_id = 0;
  EXPECT_EQ(server::SourceStream::Start(o, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Nothing listens there any more.
  auto probe = io::Socket::ListenLoopback(0);
  ASSERT_TRUE(probe.ok());
  o = Options();
  o.port = probe->port();
  probe = absl::UnavailableError("closed");
  EXPECT_EQ(server::SourceStream::Start(o, {}).status().code(),
            absl::StatusCode::kUnavailable);
  // A GTID the source never had: the dump's error reply, with its code.
  server::DumpStart ahead;
  ahead.gtid = "0-1-999999";
  auto st = server::SourceStream::Start(Options(), ahead);
  ASSERT_TRUE(st.ok()) << st.status();
  absl::StatusOr<server::SourceEvent> e;
  do {
    e = st->Next(absl::Now() + absl::Seconds(20));
  } while (e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kFailedPrecondition) << e.status();
  EXPECT_NE(e.status().message().find("1236"), absl::string_view::npos) << e.status();
}

}  // namespace
}  // namespace binlog
