// A real MariaDB 10.11 replica replicates from binlog_server: the test
// writes a MariaDB-flavor log with the library (DDL as Query events, rows
// through RowsWriter), serves the directory with the built binlog_server
// (127.0.0.1, a free port) while it keeps writing, starts Debian's mariadbd
// as a replica (its own temporary datadir, unix socket for the test's
// client, server_id 2) with CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos,
// and compares the replica's table with what was written. The replica is
// stopped and restarted mid-stream while the writer goes on committing;
// it must resume without losing or repeating a transaction, and so after
// binlog_server is killed with SIGKILL mid-stream and restarted (the primary
// key makes a repeated insert stop the SQL thread with a duplicate-key
// error, which the test reports). It also checks a few of the errors the
// server gives (a wrong password, a GTID position the log never had).
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/rows_writer.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace {

constexpr char kMariadbd[] = "/usr/sbin/mariadbd";
constexpr char kInstallDb[] = "/usr/bin/mariadb-install-db";
constexpr char kClient[] = "/usr/bin/mariadb";
constexpr char kServer[] = "tools/binlog_server";
constexpr uint32_t kTs = 1700000000;

bool Exists(const char* path) { return ::access(path, X_OK) == 0; }

using testing_util::RunCommand;

pid_t Spawn(const std::vector<std::string>& args, const std::string& out) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!out.empty()) {
      FILE* f = ::freopen(out.c_str(), "w", stdout);
      (void)f;
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// SIGTERM, then SIGKILL after `grace`.
void Stop(pid_t pid, absl::Duration grace) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int st;
  const absl::Time end = absl::Now() + grace;
  while (absl::Now() < end) {
    if (::waitpid(pid, &st, WNOHANG) == pid) return;
    absl::SleepFor(absl::Milliseconds(50));  // polls the exit (bounded)
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

class MariadbReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Exists(kMariadbd) || !Exists(kInstallDb) || !Exists(kClient)) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    char tmpl[] = "/tmp/binlog_repl_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    if (replica_pid_ > 0) {
      std::string out;
      RunCommand(Client() + " -e 'STOP SLAVE'", &out);
      Stop(replica_pid_, absl::Seconds(30));
    }
    Stop(server_pid_, absl::Seconds(10));
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::string log;
      RunCommand("tail -30 " + dir_ + "/error.log " + dir_ + "/server.out", &log);
      std::cerr << "kept " << dir_ << "\n" << log;
    }
  }

  std::string Client() const {
    return absl::StrCat(kClient, " --no-defaults -S ", dir_, "/sock -uroot");
  }
  std::string Sql(const std::string& sql) {
    std::string out;
    int rc = RunCommand(absl::StrCat(Client(), " -N -B -e \"", sql, "\""), &out);
    EXPECT_EQ(rc, 0) << sql << "\n" << out;
    return out;
  }

  // Starts binlog_server on the log (`port` 0: a free one); returns its
  // port.
  int StartServer(int port = 0) {
    {
      // The users file as an operator makes it: --hash_user's line, 0600.
      std::string out;
      EXPECT_EQ(RunCommand(absl::StrCat("echo s3cret | ", kServer,
                                        " --hash_user=repl --auth_plugin=mysql_native_password > ",
                                        dir_, "/users && chmod 600 ", dir_, "/users"),
                           &out),
                0)
          << out;
    }
    ::unlink((dir_ + "/server.out").c_str());
    server_pid_ = Spawn({kServer, "--dir=" + dir_ + "/log", "--basename=binlog",
                         absl::StrCat("--port=", port), "--users=" + dir_ + "/users"},
                        dir_ + "/server.out");
    for (int i = 0; i < 200; ++i) {
      std::string out;
      RunCommand("cat " + dir_ + "/server.out", &out);
      size_t at = out.find("listening 127.0.0.1:");
      if (at != std::string::npos) return std::atoi(out.c_str() + at + 20);
      absl::SleepFor(absl::Milliseconds(50));  // polls the server's output
    }
    ADD_FAILURE() << "binlog_server did not start";
    return 0;
  }

  void StartReplica() {
    const passwd* pw = ::getpwuid(::geteuid());
    const std::string user = pw ? pw->pw_name : "root";
    std::string out;
    ASSERT_EQ(RunCommand(absl::StrCat(kInstallDb, " --no-defaults --datadir=", dir_,
                                      "/data --user=", user,
                                      " --auth-root-authentication-method=normal"
                                      " --skip-test-db"),
                         &out),
              0)
        << out;
    replica_pid_ = Spawn(
        {kMariadbd, "--no-defaults", "--datadir=" + dir_ + "/data",
         "--socket=" + dir_ + "/sock", "--skip-networking", "--user=" + user,
         "--log-error=" + dir_ + "/error.log", "--pid-file=" + dir_ + "/pid",
         "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--skip-log-bin",
         "--server-id=2", "--character-set-server=utf8mb4", "--slave-net-timeout=20"},
        "");
    for (int i = 0; i < 300; ++i) {
      std::string ping;
      if (RunCommand(Client() + " -e 'SELECT 1'", &ping) == 0) return;
      absl::SleepFor(absl::Milliseconds(100));  // polls mariadbd (bounded)
    }
    FAIL() << "mariadbd did not start";
  }

  // Waits until the replica's table holds `rows` rows, or its replication
  // threads stop with an error.
  void WaitForRows(size_t rows) {
    std::string status;
    for (int i = 0; i < 600; ++i) {
      std::string n;
      RunCommand(Client() + " -N -B -e 'SELECT COUNT(*) FROM shop.items' 2>/dev/null", &n);
      if (std::atoi(n.c_str()) == static_cast<int>(rows)) return;
      status.clear();
      RunCommand(Client() + " -e 'SHOW SLAVE STATUS\\G'", &status);
      if (status.find("Last_SQL_Errno: 0") == std::string::npos) break;
      absl::SleepFor(absl::Milliseconds(100));  // polls the replica (bounded)
    }
    FAIL() << "replica did not reach " << rows << " rows:\n" << status;
  }

  std::string dir_;
  pid_t server_pid_ = -1;
  pid_t replica_pid_ = -1;
};

TEST_F(MariadbReplicaTest, ReplicatesWithGtidAndResumesAfterStopStart) {
  Options o;
  o.flavor = LogFlavor::kMariaDB;
  o.max_file_size = 16384;  // several rotations
  o.sync_policy = SyncPolicy::kNever;
  auto log = Binlog::Open(dir_ + "/log", "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn(o.checksums);
  uint64_t xid = 0;
  auto ddl = [&](const std::string& db, const std::string& query) {
    txn.Clear();
    CommitGtid g;
    g.isolated = true;
    txn.AppendMariaCommitGtid(kTs, 1, g);
    AppendMariaDdlQuery(&txn, kTs, 1, 5, db, query, ++xid);
    auto c = (*log)->Commit(&txn);
    ASSERT_TRUE(c.ok()) << c.status();
  };
  ddl("", "CREATE DATABASE shop");
  ddl("shop",
      "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, v VARCHAR(200) CHARACTER SET "
      "latin1) ENGINE=InnoDB");

  RowsWriterOptions wo;
  wo.flavor = LogFlavor::kMariaDB;
  auto writer = RowsWriter::Create(wo);
  ASSERT_TRUE(writer.ok());
  TableDef def;
  def.table_id = 70;
  def.schema = "shop";
  def.table = "items";
  def.metadata = RowMetadata::kFull;
  ColumnDef id;
  id.type = kColLong;
  id.name = "id";
  id.nullable = false;
  ColumnDef v;
  v.type = kColVarchar;
  v.length = 200;
  v.name = "v";
  v.collation = 8;
  def.columns = {id, v};
  def.primary_key = {0};
  auto table = writer->DescribeTable(def);
  ASSERT_TRUE(table.ok()) << table.status();

  std::map<int, std::string> want;
  int next = 1;
  // One transaction of `n` inserted rows.
  auto insert = [&](int n) {
    txn.Clear();
    txn.AppendMariaCommitGtid(kTs, 1, CommitGtid());
    ASSERT_TRUE(writer->BeginStatement(&txn, kTs, "INSERT INTO items ...").ok());
    for (int i = 0; i < n; ++i, ++next) {
      std::string val = absl::StrCat("row-", next, "-", std::string(next % 50, 'x'));
      ASSERT_TRUE(writer->Insert(*table, {Value::Int(next), Value::Bytes(val)}).ok());
      want[next] = val;
    }
    ASSERT_TRUE(writer->EndStatement().ok());
    AppendXid(&txn, kTs, 1, ++xid);
    auto c = (*log)->Commit(&txn);
    ASSERT_TRUE(c.ok()) << c.status();
  };
  for (int t = 0; t < 60; ++t) insert(1 + t % 5);

  const int port = StartServer();
  ASSERT_GT(port, 0);
  StartReplica();
  if (HasFatalFailure()) return;
  Sql(absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", port,
                   ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', "
                   "MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                   "MASTER_USE_GTID=slave_pos; START SLAVE"));
  WaitForRows(want.size());
  if (HasFatalFailure()) return;

  // The writer goes on while the replica is stopped and restarted.
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < 20; ++t) insert(2);
    Sql("STOP SLAVE");
    for (int t = 0; t < 20; ++t) insert(3);
    Sql("START SLAVE");
    for (int t = 0; t < 20; ++t) insert(1);
    WaitForRows(want.size());
    if (HasFatalFailure()) return;
  }

  // kill -9 of the server mid-stream: the replica reconnects to the
  // restarted server on the same port and resumes by GTID.
  for (int t = 0; t < 10; ++t) insert(2);
  ::kill(server_pid_, SIGKILL);
  int st;
  while (::waitpid(server_pid_, &st, 0) < 0 && errno == EINTR) {
  }
  server_pid_ = -1;
  for (int t = 0; t < 20; ++t) insert(4);
  ASSERT_EQ(StartServer(port), port);
  for (int t = 0; t < 10; ++t) insert(1);
  WaitForRows(want.size());
  if (HasFatalFailure()) return;

  std::string got = Sql("SELECT id, v FROM shop.items ORDER BY id");
  std::string expect;
  for (const auto& [k, val] : want) absl::StrAppend(&expect, k, "\t", val, "\n");
  EXPECT_EQ(got, expect);
  // The replica's GTID position is the log's.
  std::string pos(absl::StripAsciiWhitespace(Sql("SELECT @@gtid_slave_pos")));
  EXPECT_EQ(pos, (*log)->mariadb_gtid_state().ToString());
  // Files rotated along the way.
  EXPECT_GT((*log)->ListFiles().size(), 3u);

  // Wrong password: the server answers 1045.
  std::string out;
  RunCommand(absl::StrCat(kClient, " --no-defaults -h127.0.0.1 -P", port,
                          " -urepl -pwrong -e 'SELECT 1'"),
             &out);
  EXPECT_NE(out.find("1045"), std::string::npos) << out;
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog
