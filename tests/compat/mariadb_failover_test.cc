// binlog_server --source=A,B following a MariaDB 10.11 primary A and, when
// A dies, the replica B that replaces it (a failover), all on 127.0.0.1 and
// unix sockets in a temporary directory:
//   A (log-bin, GTIDs, gtid_strict_mode) -> B (log_slave_updates, log-bin,
//   gtid_strict_mode), and the relay following A with sources A,B; a
//   MariaDB replica C replicating from the relay by GTID.
// A writer commits on A; the test kills A with SIGKILL once B has every
// transaction, makes B the primary (writable, semi-sync AFTER_SYNC) and the
// writer continues on B. The relay fails over to B by GTID. Then:
//   - C's table equals B's and C's GTID position is B's (no transaction
//     lost or applied twice: a repeated insert stops C's replication on
//     its primary key);
//   - every commit on B was acknowledged by the relay (its acks name B's
//     files, not the copy's);
//   - the copy's files before the failover are A's (the last one up to the
//     copy's end), the ones after it are B's whole files (the last one up
//     to the copy's end), as `<basename>.sources` maps them.
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed.

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
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

std::string Trim(const absl::StatusOr<std::string>& s) {
  return s.ok() ? std::string(absl::StripAsciiWhitespace(*s)) : s.status().ToString();
}

class MariadbFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MariadbServer::Installed()) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    char tmpl[] = "/tmp/binlog_failover_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* d : {"/a", "/b", "/c"}) ASSERT_EQ(::mkdir((dir_ + d).c_str(), 0700), 0);
    const std::vector<std::string> common = {"--binlog-format=ROW", "--gtid-strict-mode=1",
                                             "--max-binlog-size=8192"};
    std::vector<std::string> a = {"--server-id=1", "--log-bin=" + dir_ + "/a/data/a-bin"};
    a.insert(a.end(), common.begin(), common.end());
    absl::Status started = a_.Start(dir_ + "/a", a, /*tcp=*/true);
    ASSERT_TRUE(started.ok()) << started;
    std::vector<std::string> b = {"--server-id=2", "--log-bin=" + dir_ + "/b/data/b-bin",
                                  "--log-slave-updates=1", "--read-only=1"};
    b.insert(b.end(), common.begin(), common.end());
    started = b_.Start(dir_ + "/b", b, /*tcp=*/true);
    ASSERT_TRUE(started.ok()) << started;
    // B replicates A from its start: the user and table come through.
    Sql(b_, absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", a_.port(),
                         ", MASTER_USER='root_repl', MASTER_PASSWORD='s3cret', "
                         "MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos"));
    Sql(a_, "CREATE USER 'root_repl'@'127.0.0.1' IDENTIFIED BY 's3cret'");
    Sql(a_, "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'root_repl'@'127.0.0.1'");
    Sql(a_, "CREATE DATABASE shop");
    Sql(a_, "CREATE TABLE shop.items (id INT PRIMARY KEY, v VARCHAR(100))");
    Sql(b_, "START SLAVE");
    std::string out;
    ASSERT_EQ(RunCommand(absl::StrCat("printf 's3cret\\n' > ", dir_, "/source_pw && chmod 600 ",
                                      dir_, "/source_pw && echo s3cret | ", kServer,
                                      " --hash_user=root_repl "
                                      "--auth_plugin=mysql_native_password > ",
                                      dir_, "/users && chmod 600 ", dir_, "/users"),
                         &out),
              0)
        << out;
  }

  void TearDown() override {
    if (c_.running()) (void)c_.Sql("STOP SLAVE");
    testing_util::StopProcess(relay_pid_, absl::Seconds(30));
    c_.Stop();
    b_.Stop();
    a_.Stop();
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::string log;
      RunCommand("tail -n 30 " + dir_ + "/relay.out", &log);
      std::cerr << "kept " << dir_ << "\n" << log;
    }
  }

  std::string Sql(const MariadbServer& s, const std::string& sql) {
    auto out = s.Sql(sql);
    EXPECT_TRUE(out.ok()) << out.status();
    return Trim(out);
  }
  // Waits (bounded) until `s` answers `sql` with `want`.
  bool WaitFor(const MariadbServer& s, const std::string& sql, const std::string& want,
               int tenths = 600) {
    for (int i = 0; i < tenths; ++i) {
      if (Trim(s.Sql(sql)) == want) return true;
      absl::SleepFor(absl::Milliseconds(100));  // polls a server (bounded)
    }
    return false;
  }

  std::string dir_;
  MariadbServer a_, b_, c_;
  pid_t relay_pid_ = -1;
};

TEST_F(MariadbFailoverTest, RelayFollowsTheReplicaThatReplacesTheDeadPrimary) {
  // The relay, following A (sources A then B).
  relay_pid_ = testing_util::SpawnProcess(
      {kServer, "--dir=" + dir_ + "/copy", "--basename=a-bin", "--port=0",
       "--users=" + dir_ + "/users",
       absl::StrCat("--source=127.0.0.1:", a_.port(), ",127.0.0.1:", b_.port()),
       "--source_user=root_repl", "--source_password_file=" + dir_ + "/source_pw",
       "--server_id=5", "--source_heartbeat_period=200ms", "--source_failover_after=1s"},
      dir_ + "/relay.out");
  int relay_port = 0;
  for (int i = 0; i < 400 && relay_port == 0; ++i) {
    const std::string text = ReadWholeFile(dir_ + "/relay.out");
    const size_t at = text.find("listening 127.0.0.1:");
    if (at != std::string::npos) relay_port = std::atoi(text.c_str() + at + 20);
    absl::SleepFor(absl::Milliseconds(50));  // polls the relay's output (bounded)
  }
  ASSERT_NE(relay_port, 0) << ReadWholeFile(dir_ + "/relay.out");
  ASSERT_TRUE(c_.Start(dir_ + "/c", {"--server-id=3", "--skip-log-bin",
                                     "--slave-net-timeout=10"})
                  .ok());
  Sql(c_, absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", relay_port,
                       ", MASTER_USER='root_repl', MASTER_PASSWORD='s3cret', "
                       "MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                       "MASTER_USE_GTID=slave_pos; START SLAVE"));

  // The writer on A.
  int id = 0;
  for (; id < 60; ++id) {
    Sql(a_, absl::StrCat("INSERT INTO shop.items VALUES (", id, ", '",
                         std::string(40 + id % 50, 'a' + id % 26), "')"));
  }
  // B has every transaction of A; then A dies.
  const std::string a_pos = Sql(a_, "SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(WaitFor(b_, "SELECT @@gtid_slave_pos", a_pos)) << a_pos;
  ASSERT_TRUE(WaitFor(c_, "SELECT @@gtid_slave_pos", a_pos)) << a_pos;
  std::vector<std::string> a_files;
  const std::vector<std::string> a_lines =
      absl::StrSplit(Sql(a_, "SHOW BINARY LOGS"), '\n', absl::SkipEmpty());
  for (const std::string& line : a_lines) {
    a_files.push_back(std::vector<std::string>(absl::StrSplit(line, '\t'))[0]);
  }
  a_.Kill();

  // B becomes the primary, with semi-sync (the relay acknowledges B's
  // transactions naming B's files); the writer goes on there.
  Sql(b_, "STOP SLAVE; RESET SLAVE ALL");
  Sql(b_, "SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC, "
          "rpl_semi_sync_master_timeout = 20000, rpl_semi_sync_master_enabled = 1, "
          "read_only = 0");
  for (; id < 120; ++id) {
    Sql(b_, absl::StrCat("INSERT INTO shop.items VALUES (", id, ", '",
                         std::string(40 + id % 50, 'A' + id % 26), "')"));
  }
  const std::string b_pos = Sql(b_, "SELECT @@gtid_binlog_pos");
  // Every commit on B waited for, and got, the relay's ack.
  EXPECT_EQ(Sql(b_, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_no_tx'"),
            "Rpl_semi_sync_master_no_tx\t0");
  EXPECT_EQ(Sql(b_, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_yes_tx'"),
            "Rpl_semi_sync_master_yes_tx\t60");
  const std::string b_sum = Sql(b_, "SELECT COUNT(*), SUM(CRC32(v)) FROM shop.items");
  bool caught_up = WaitFor(c_, "SELECT @@gtid_slave_pos", b_pos, 900);
  std::string status;
  RunCommand(c_.Client() + " -e 'SHOW SLAVE STATUS\\G'", &status);
  ASSERT_TRUE(caught_up) << b_pos << "\n" << status;
  EXPECT_EQ(Sql(c_, "SELECT COUNT(*), SUM(CRC32(v)) FROM shop.items"), b_sum);
  EXPECT_NE(status.find("Last_SQL_Errno: 0"), std::string::npos) << status;

  // The relay said whom it follows.
  const std::string following = absl::StrCat("relay: following 127.0.0.1:", b_.port());
  bool said = false;
  for (int i = 0; i < 100 && !said; ++i) {
    said = ReadWholeFile(dir_ + "/relay.out").find(following) != std::string::npos;
    if (!said) absl::SleepFor(absl::Milliseconds(50));  // polls the relay's output (bounded)
  }
  EXPECT_TRUE(said) << ReadWholeFile(dir_ + "/relay.out");

  // The copy: A's files, then B's, as the map says.
  testing_util::StopProcess(relay_pid_, absl::Seconds(30));
  relay_pid_ = -1;
  auto idx = ReadIndex(io::FileSystem::Default(), dir_ + "/copy", "a-bin");
  ASSERT_TRUE(idx.ok()) << idx.status();
  auto map = ReadSourceMap(io::FileSystem::Default(), dir_ + "/copy", "a-bin");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_FALSE(map->empty()) << "no failover recorded";
  std::vector<std::string> b_files;
  const std::vector<std::string> b_lines =
      absl::StrSplit(Sql(b_, "SHOW BINARY LOGS"), '\n', absl::SkipEmpty());
  for (const std::string& line : b_lines) {
    b_files.push_back(std::vector<std::string>(absl::StrSplit(line, '\t'))[0]);
  }
  const uint64_t first_b = map->front().file;
  for (uint64_t n : *idx) {
    const std::string name = BinlogFileName("a-bin", n);
    SCOPED_TRACE(name);
    const std::string copy = ReadWholeFile(dir_ + "/copy/" + name);
    std::string source;
    bool whole = true;
    if (n < first_b) {
      source = ReadWholeFile(dir_ + "/a/data/" + name);
      whole = n + 1 < first_b;  // A's last file: up to the copy's end
    } else {
      const std::string source_file = SourceFileNameOf(*map, "a-bin", n);
      source = ReadWholeFile(dir_ + "/b/data/" + source_file);
      whole = source_file != b_files.back();
    }
    ASSERT_GT(source.size(), kInUseFlagFileOffset);
    // The dump clears the in-use flag of the file it sends; A's last file
    // keeps it set (A was killed).
    source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
    if (whole) {
      EXPECT_EQ(copy.size(), source.size());
      EXPECT_TRUE(copy == source);
    } else {
      ASSERT_GE(source.size(), copy.size());
      EXPECT_TRUE(copy == source.substr(0, copy.size()));
    }
  }
  // The segment after the failover starts with B's file that holds A's
  // last transaction (B's first here) and runs to B's last.
  // One record, the segment's.
  ASSERT_EQ(map->size(), 1u);
  EXPECT_EQ(map->front().server_id, 2u);
  EXPECT_EQ(SourceFileNameOf(*map, "a-bin", idx->back()), b_files.back());
}

}  // namespace
}  // namespace binlog
