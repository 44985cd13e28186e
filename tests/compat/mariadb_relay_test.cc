// binlog_server as a relay between real MariaDB 10.11 servers: a primary
// (log-bin, GTIDs, semi-sync on with wait point AFTER_SYNC) -> binlog_server
// --source (an exact, durable copy of the primary's files, acknowledging
// semi-sync transactions after fdatasync) -> a MariaDB replica that
// replicates from the relay by GTID. All on 127.0.0.1 and unix sockets, in
// a temporary directory.
//
// While a writer commits on the primary through the mariadb client, the
// test kills the relay with SIGKILL and restarts it several times (same
// command line), and restarts the replica's replication. At the end:
//   - the replica's table equals the primary's (nothing lost or applied
//     twice: the primary key makes a repeated insert stop replication);
//   - the relay's files are byte-identical to the primary's over the range
//     they share (a closed file whole; the active one up to the copy's end,
//     whose in-use flag the copy holds clear, as the dump sent it);
//   - every commit was a semi-sync one (Rpl_semi_sync_master_no_tx stays
//     0): each returned to its client only after the relay acknowledged it,
//     which the relay does only after its fdatasync.
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <set>
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
#include "binlog/format.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/mariadb_server.h"
#include "tests/testutil/process.h"

namespace binlog {
namespace {

using testing_util::MariadbServer;
using testing_util::RunCommand;

constexpr char kServer[] = "tools/binlog_server";

std::string ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class MariadbRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MariadbServer::Installed()) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    char tmpl[] = "/tmp/binlog_relay_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::mkdir((dir_ + "/primary").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((dir_ + "/replica").c_str(), 0700), 0);
    absl::Status s = primary_.Start(
        dir_ + "/primary",
        {"--server-id=1", "--log-bin=" + dir_ + "/primary/data/primary-bin",
         "--binlog-format=ROW", "--gtid-strict-mode=1", "--max-binlog-size=16384",
         "--rpl-semi-sync-master-enabled=0", "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
         "--rpl-semi-sync-master-timeout=120000"},
        /*tcp=*/true);
    ASSERT_TRUE(s.ok()) << s;
    Primary("CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 's3cret'");
    Primary("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'repl'@'127.0.0.1'");
    Primary("CREATE DATABASE shop");
    Primary("CREATE TABLE shop.items (id INT PRIMARY KEY, v VARCHAR(100))");
    std::string out;
    ASSERT_EQ(RunCommand(absl::StrCat("printf 's3cret\\n' > ", dir_, "/source_pw && chmod 600 ",
                                      dir_, "/source_pw && echo s3cret | ", kServer,
                                      " --hash_user=repl --auth_plugin=mysql_native_password > ",
                                      dir_, "/users && chmod 600 ", dir_, "/users"),
                         &out),
              0)
        << out;
  }

  void TearDown() override {
    if (replica_.running()) {
      auto r = replica_.Sql("STOP SLAVE");
      (void)r;
    }
    StopRelay(SIGTERM);
    replica_.Stop();
    primary_.Stop();
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::string log;
      RunCommand("tail -n 30 " + dir_ + "/relay.out", &log);
      std::cerr << "kept " << dir_ << "\n" << log;
    }
  }

  std::string Primary(const std::string& sql) {
    auto out = primary_.Sql(sql);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? std::string(absl::StripAsciiWhitespace(*out)) : "";
  }
  std::string Replica(const std::string& sql) {
    auto out = replica_.Sql(sql);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? std::string(absl::StripAsciiWhitespace(*out)) : "";
  }
  uint64_t PrimaryStatus(const std::string& name) {
    std::vector<std::string> kv =
        absl::StrSplit(Primary("SHOW GLOBAL STATUS LIKE '" + name + "'"), '\t');
    uint64_t v = 0;
    EXPECT_TRUE(kv.size() == 2 && absl::SimpleAtoi(kv[1], &v)) << name;
    return v;
  }

  // Starts the relay (the same command line every time; `relay_port_` 0:
  // a free port, then kept).
  void StartRelay() {
    std::vector<std::string> args = {
        kServer, "--dir=" + dir_ + "/copy", "--basename=primary-bin",
        absl::StrCat("--port=", relay_port_), "--users=" + dir_ + "/users",
        absl::StrCat("--source=127.0.0.1:", primary_.port()), "--source_user=repl",
        "--source_password_file=" + dir_ + "/source_pw", "--server_id=5",
        "--source_heartbeat_period=200ms"};
    const std::string out = dir_ + "/relay.out";
    const size_t before = ReadWholeFile(out).size();
    relay_pid_ = testing_util::SpawnProcess(args, out, /*append=*/true);
    for (int i = 0; i < 200; ++i) {
      const std::string text = ReadWholeFile(out).substr(before);
      const size_t at = text.find("listening 127.0.0.1:");
      if (at != std::string::npos) {
        relay_port_ = std::atoi(text.c_str() + at + 20);
        return;
      }
      int st;
      if (::waitpid(relay_pid_, &st, WNOHANG) == relay_pid_) {
        relay_pid_ = -1;
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));  // polls the relay's output (bounded)
    }
    FAIL() << "the relay did not start:\n" << ReadWholeFile(out).substr(before);
  }
  void StopRelay(int sig) {
    if (relay_pid_ <= 0) return;
    if (sig == SIGKILL) {
      testing_util::KillProcess(relay_pid_);
    } else {
      testing_util::StopProcess(relay_pid_, absl::Seconds(30));
    }
    relay_pid_ = -1;
  }

  std::string dir_;
  MariadbServer primary_;
  MariadbServer replica_;
  pid_t relay_pid_ = -1;
  int relay_port_ = 0;
};

TEST_F(MariadbRelayTest, PrimaryRelayReplicaSurviveKillsWithEveryCommitAcknowledged) {
  StartRelay();
  if (HasFatalFailure()) return;
  Primary("SET GLOBAL rpl_semi_sync_master_enabled = 1");
  const uint64_t no_tx_before = PrimaryStatus("Rpl_semi_sync_master_no_tx");

  // The writer: one transaction at a time through the client, remembering
  // each that returned.
  std::atomic<bool> stop{false};
  std::atomic<int> committed{0};
  std::thread writer([&] {
    for (int id = 1; !stop.load(); ++id) {
      auto r = primary_.Sql(absl::StrCat("INSERT INTO shop.items VALUES (", id, ", '",
                                         std::string(40 + id % 50, 'a' + id % 26), "')"));
      if (!r.ok()) {
        ADD_FAILURE() << r.status();
        return;
      }
      committed = id;
    }
  });
  auto wait_commits = [&](int n) {
    const int target = committed.load() + n;
    for (int i = 0; i < 1200 && committed.load() < target; ++i) {
      absl::SleepFor(absl::Milliseconds(50));  // polls the writer's count (bounded)
    }
    EXPECT_GE(committed.load(), target) << "the writer stalled";
  };

  ASSERT_TRUE(replica_.Start(dir_ + "/replica",
                             {"--server-id=2", "--skip-log-bin", "--slave-net-timeout=10"})
                  .ok());
  Replica(absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", relay_port_,
                       ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', "
                       "MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                       "MASTER_USE_GTID=slave_pos; START SLAVE"));
  wait_commits(20);
  for (int round = 0; round < 3; ++round) {
    StopRelay(SIGKILL);
    StartRelay();
    if (HasFatalFailure()) break;
    wait_commits(15);
    if (round == 1) {
      Replica("STOP SLAVE");
      wait_commits(10);
      Replica("START SLAVE");
    }
  }
  wait_commits(10);
  stop = true;
  writer.join();
  ASSERT_FALSE(HasFailure());

  // The replica catches up with the primary through the relay.
  const std::string want = Primary("SELECT COUNT(*), COALESCE(SUM(CRC32(v)), 0) FROM shop.items");
  std::string got;
  for (int i = 0; i < 600; ++i) {
    auto r = replica_.Sql("SELECT COUNT(*), COALESCE(SUM(CRC32(v)), 0) FROM shop.items");
    got = r.ok() ? std::string(absl::StripAsciiWhitespace(*r)) : r.status().ToString();
    if (got == want) break;
    std::string status;
    RunCommand(replica_.Client() + " -e 'SHOW SLAVE STATUS\\G'", &status);
    ASSERT_NE(status.find("Last_SQL_Errno: 0"), std::string::npos) << status;
    absl::SleepFor(absl::Milliseconds(100));  // polls the replica (bounded)
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(Replica("SELECT @@gtid_slave_pos"), Primary("SELECT @@gtid_binlog_pos"));
  EXPECT_GE(committed.load(), 70);

  // Every commit waited for, and got, the relay's ack.
  EXPECT_EQ(PrimaryStatus("Rpl_semi_sync_master_no_tx"), no_tx_before);
  EXPECT_GE(PrimaryStatus("Rpl_semi_sync_master_yes_tx"), 70u);

  // The copy is the primary's files: closed files whole, the active one up
  // to the copy's end. SIGTERM first: the copy is closed cleanly.
  StopRelay(SIGTERM);
  std::vector<std::string> names =
      absl::StrSplit(Primary("SHOW BINARY LOGS"), '\n', absl::SkipEmpty());
  ASSERT_GE(names.size(), 3u) << "the primary rotated its files";
  for (size_t i = 0; i < names.size(); ++i) {
    const std::vector<std::string> cols = absl::StrSplit(names[i], '\t');
    const std::string& name = cols[0];
    std::string source = ReadWholeFile(dir_ + "/primary/data/" + name);
    const std::string copy = ReadWholeFile(dir_ + "/copy/" + name);
    SCOPED_TRACE(name);
    if (i + 1 < names.size()) {
      EXPECT_TRUE(copy == source) << copy.size() << " vs " << source.size();
    } else {
      ASSERT_GE(source.size(), copy.size());
      ASSERT_GT(copy.size(), kInUseFlagFileOffset);
      source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
      EXPECT_TRUE(copy == source.substr(0, copy.size()));
    }
  }
}

// The logtailer promise: the primary's clients commit with semi-sync; the
// primary is killed with SIGKILL mid-stream. Every transaction whose COMMIT
// returned to its client is in the relay's copy (checked by GTID). The
// primary, restarted (crash recovery), is followed again: the copy goes on
// byte-identical to the primary's files, the crashed file included.
TEST_F(MariadbRelayTest, EveryCommitThatReturnedIsInTheCopyWhenThePrimaryIsKilled) {
  StartRelay();
  if (HasFatalFailure()) return;
  Primary("SET GLOBAL rpl_semi_sync_master_enabled = 1");
  std::vector<uint64_t> returned;  // GTID seq_no of each commit that returned
  std::atomic<int> count{0};
  std::thread writer([&] {
    for (int id = 1;; ++id) {
      auto r = primary_.Sql(absl::StrCat("INSERT INTO shop.items VALUES (", id,
                                         ", 'x'); SELECT @@last_gtid"));
      if (!r.ok()) return;  // the primary is gone
      std::vector<std::string> parts =
          absl::StrSplit(absl::StripAsciiWhitespace(*r), '-');
      uint64_t seq = 0;
      if (parts.size() != 3 || !absl::SimpleAtoi(parts[2], &seq)) {
        ADD_FAILURE() << "@@last_gtid: " << *r;
        return;
      }
      returned.push_back(seq);
      ++count;
    }
  });
  for (int i = 0; i < 1200 && count.load() < 40; ++i) {
    absl::SleepFor(absl::Milliseconds(50));  // polls the writer's count (bounded)
  }
  primary_.Kill();
  writer.join();
  ASSERT_GE(returned.size(), 40u);

  // The copy as it is now (the relay keeps running, reconnecting).
  auto copy_gtids = [&] {
    std::set<uint64_t> seqs;
    auto reader = Reader::OpenDirectory(dir_ + "/copy", "primary-bin", ReaderOptions());
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return seqs;
    for (;;) {
      Event ev;
      absl::Status s = (*reader)->Next(&ev);
      if (!s.ok()) {
        // The end, or a transaction being appended at the tail.
        EXPECT_TRUE(absl::IsOutOfRange(s) || absl::IsDataLoss(s)) << s;
        break;
      }
      if (ev.header.type == 162) {
        seqs.insert(LoadLe64(ev.data.data() + kHeaderSize));
      }
    }
    return seqs;
  };
  std::set<uint64_t> held = copy_gtids();
  for (uint64_t seq : returned) EXPECT_EQ(held.count(seq), 1u) << "0-1-" << seq;

  // The restarted primary is followed: more commits, then the copy equals
  // the primary's files.
  ASSERT_TRUE(primary_
                  .Start(dir_ + "/primary",
                         {"--server-id=1", "--log-bin=" + dir_ + "/primary/data/primary-bin",
                          "--binlog-format=ROW", "--gtid-strict-mode=1",
                          "--max-binlog-size=16384", "--rpl-semi-sync-master-enabled=1",
                          "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
                          "--rpl-semi-sync-master-timeout=120000"},
                         /*tcp=*/true)
                  .ok());
  const int after = static_cast<int>(returned.size()) + 1000;
  for (int id = after; id < after + 10; ++id) {
    Primary(absl::StrCat("INSERT INTO shop.items VALUES (", id, ", 'y')"));
  }
  EXPECT_EQ(PrimaryStatus("Rpl_semi_sync_master_no_tx"), 0u);
  StopRelay(SIGTERM);
  std::vector<std::string> names =
      absl::StrSplit(Primary("SHOW BINARY LOGS"), '\n', absl::SkipEmpty());
  ASSERT_GE(names.size(), 2u);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::vector<std::string> cols = absl::StrSplit(names[i], '\t');
    SCOPED_TRACE(cols[0]);
    std::string source = ReadWholeFile(dir_ + "/primary/data/" + cols[0]);
    const std::string copy = ReadWholeFile(dir_ + "/copy/" + cols[0]);
    if (i + 1 < names.size()) {
      // The crashed file: the primary's recovery may leave its in-use flag
      // set (it is not the active file any more, but MariaDB clears the
      // flag only at a clean close): compare all but that byte.
      ASSERT_EQ(copy.size(), source.size());
      std::string a = copy, b = source;
      a[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
      b[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
      EXPECT_TRUE(a == b);
    } else {
      ASSERT_GE(source.size(), copy.size());
      source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
      EXPECT_TRUE(copy == source.substr(0, copy.size()));
    }
  }
}

}  // namespace
}  // namespace binlog
