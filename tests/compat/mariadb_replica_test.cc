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
// Over TLS: binlog_server with --require_secure_transport and a
// certificate from a CA the test makes with openssl; the replica, told
// MASTER_SSL=1, MASTER_SSL_CA and MASTER_SSL_VERIFY_SERVER_CERT=1,
// replicates and its table is checked; told nothing about TLS, it is
// refused with 3159.
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
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
#include "tests/testutil/process.h"
#include "tests/testutil/test_pki.h"

namespace binlog {
namespace {

constexpr char kMariadbd[] = "/usr/sbin/mariadbd";
constexpr char kInstallDb[] = "/usr/bin/mariadb-install-db";
constexpr char kClient[] = "/usr/bin/mariadb";
constexpr char kServer[] = "tools/binlog_server";
constexpr uint32_t kTs = 1700000000;

bool Exists(const char* path) { return ::access(path, X_OK) == 0; }

using testing_util::RunCommand;

using testing_util::SpawnProcess;
using testing_util::StopProcess;

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
      StopProcess(replica_pid_, absl::Seconds(30));
    }
    StopProcess(server_pid_, absl::Seconds(10));
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::string log;
      RunCommand("tail -n 30 " + dir_ + "/error.log " + dir_ + "/server.out", &log);
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

  // Starts binlog_server on the log (`port` 0: a free one) with `extra`
  // flags; returns its port.
  int StartServer(int port = 0, const std::vector<std::string>& extra = {}) {
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
    std::vector<std::string> args = {kServer, "--dir=" + dir_ + "/log", "--basename=binlog",
                                     absl::StrCat("--port=", port),
                                     "--users=" + dir_ + "/users"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_pid_ = SpawnProcess(args, dir_ + "/server.out");
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
    replica_pid_ = SpawnProcess(
        {kMariadbd, "--no-defaults", "--datadir=" + dir_ + "/data",
         "--socket=" + dir_ + "/sock", "--skip-networking", "--user=" + user,
         "--log-error=" + dir_ + "/error.log", "--pid-file=" + dir_ + "/pid",
         "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--skip-log-bin",
         "--server-id=2", "--character-set-server=utf8mb4", "--slave-net-timeout=20",
         "--report-host=replica-under-test", "--report-port=3399"},
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

  // Opens a MariaDB-flavor log in dir_/log (16 KiB files: several
  // rotations) holding the database shop and its table items; Insert()
  // then commits one transaction of rows, remembered in want_.
  void OpenShopLog() {
    Options o;
    o.flavor = LogFlavor::kMariaDB;
    o.max_file_size = 16384;
    o.sync_policy = SyncPolicy::kNever;
    auto log = Binlog::Open(dir_ + "/log", "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    txn_ = std::make_unique<TransactionBuffer>(o.checksums);
    auto ddl = [&](const std::string& db, const std::string& query) {
      txn_->Clear();
      CommitGtid g;
      g.isolated = true;
      txn_->AppendMariaCommitGtid(kTs, 1, g);
      AppendMariaDdlQuery(txn_.get(), kTs, 1, 5, db, query, ++xid_);
      auto c = log_->Commit(txn_.get());
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
    writer_ = std::make_unique<RowsWriter>(std::move(*writer));
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
    auto table = writer_->DescribeTable(def);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = *table;
  }

  // One transaction of `n` inserted rows.
  void Insert(int n) {
    txn_->Clear();
    txn_->AppendMariaCommitGtid(kTs, 1, CommitGtid());
    ASSERT_TRUE(writer_->BeginStatement(txn_.get(), kTs, "INSERT INTO items ...").ok());
    for (int i = 0; i < n; ++i, ++next_) {
      std::string val = absl::StrCat("row-", next_, "-", std::string(next_ % 50, 'x'));
      ASSERT_TRUE(writer_->Insert(table_, {Value::Int(next_), Value::Bytes(val)}).ok());
      want_[next_] = val;
    }
    ASSERT_TRUE(writer_->EndStatement().ok());
    AppendXid(txn_.get(), kTs, 1, ++xid_);
    auto c = log_->Commit(txn_.get());
    ASSERT_TRUE(c.ok()) << c.status();
  }

  // The replica's table is what was written, and its GTID position the
  // log's.
  void CheckReplicaTable() {
    std::string got = Sql("SELECT id, v FROM shop.items ORDER BY id");
    std::string expect;
    for (const auto& [k, val] : want_) absl::StrAppend(&expect, k, "\t", val, "\n");
    EXPECT_EQ(got, expect);
    std::string pos(absl::StripAsciiWhitespace(Sql("SELECT @@gtid_slave_pos")));
    EXPECT_EQ(pos, log_->mariadb_gtid_state().ToString());
  }

  std::string dir_;
  pid_t server_pid_ = -1;
  pid_t replica_pid_ = -1;
  std::unique_ptr<Binlog> log_;
  std::unique_ptr<TransactionBuffer> txn_;
  std::unique_ptr<RowsWriter> writer_;
  RowsWriter::TableHandle table_ = 0;
  std::map<int, std::string> want_;
  int next_ = 1;
  uint64_t xid_ = 0;
};

TEST_F(MariadbReplicaTest, ReplicatesWithGtidAndResumesAfterStopStart) {
  OpenShopLog();
  if (HasFatalFailure()) return;
  auto insert = [&](int n) { Insert(n); };
  for (int t = 0; t < 60; ++t) insert(1 + t % 5);

  const int port = StartServer();
  ASSERT_GT(port, 0);
  StartReplica();
  if (HasFatalFailure()) return;
  Sql(absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", port,
                   ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', "
                   "MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, "
                   "MASTER_USE_GTID=slave_pos; START SLAVE"));
  WaitForRows(want_.size());
  if (HasFatalFailure()) return;

  // The writer goes on while the replica is stopped and restarted.
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < 20; ++t) insert(2);
    Sql("STOP SLAVE");
    for (int t = 0; t < 20; ++t) insert(3);
    Sql("START SLAVE");
    for (int t = 0; t < 20; ++t) insert(1);
    WaitForRows(want_.size());
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
  WaitForRows(want_.size());
  if (HasFatalFailure()) return;

  CheckReplicaTable();
  // Files rotated along the way.
  EXPECT_GT(log_->ListFiles().size(), 3u);

  // Wrong password: the server answers 1045.
  std::string out;
  RunCommand(absl::StrCat(kClient, " --no-defaults -h127.0.0.1 -P", port,
                          " -urepl -pwrong -e 'SELECT 1'"),
             &out);
  EXPECT_NE(out.find("1045"), std::string::npos) << out;
  ASSERT_TRUE(log_->Close().ok());
}

// The replica over TLS, verifying binlog_server's certificate (CN
// localhost, SAN 127.0.0.1) against the test CA; the server refuses
// plaintext TCP.
TEST_F(MariadbReplicaTest, ReplicatesOverVerifiedTls) {
  const std::string pki_dir = dir_ + "/pki";
  ASSERT_EQ(::mkdir(pki_dir.c_str(), 0700), 0);
  auto pki = testing_util::MakeTestPki(pki_dir);
  ASSERT_TRUE(pki.ok()) << pki.status();
  OpenShopLog();
  if (HasFatalFailure()) return;
  for (int t = 0; t < 40; ++t) Insert(1 + t % 4);
  const int port = StartServer(0, {"--ssl_cert=" + pki->server_cert,
                                   "--ssl_key=" + pki->server_key, "--ssl_ca=" + pki->ca,
                                   "--require_secure_transport"});
  ASSERT_GT(port, 0);
  StartReplica();
  if (HasFatalFailure()) return;
  // Without TLS: refused with 3159.
  Sql(absl::StrCat("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=", port,
                   ", MASTER_USER='repl', MASTER_PASSWORD='s3cret', "
                   "MASTER_CONNECT_RETRY=1, MASTER_SSL=0, MASTER_USE_GTID=slave_pos; "
                   "START SLAVE"));
  std::string status;
  for (int i = 0; i < 300 && status.find("3159") == std::string::npos; ++i) {
    status.clear();
    RunCommand(Client() + " -e 'SHOW SLAVE STATUS\\G'", &status);
    if (status.find("3159") == std::string::npos) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_NE(status.find("3159"), std::string::npos) << status;
  EXPECT_NE(status.find("require_secure_transport"), std::string::npos) << status;
  Sql("STOP SLAVE");
  // With TLS and the server's certificate verified.
  Sql(absl::StrCat("CHANGE MASTER TO MASTER_SSL=1, MASTER_SSL_CA='", pki->ca,
                   "', MASTER_SSL_VERIFY_SERVER_CERT=1, MASTER_HEARTBEAT_PERIOD=1; "
                   "START SLAVE"));
  WaitForRows(want_.size());
  if (HasFatalFailure()) return;
  for (int t = 0; t < 30; ++t) Insert(2);  // while the replica tails
  WaitForRows(want_.size());
  if (HasFatalFailure()) return;
  CheckReplicaTable();
  status.clear();
  RunCommand(Client() + " -e 'SHOW SLAVE STATUS\\G'", &status);
  EXPECT_NE(status.find("Master_SSL_Allowed: Yes"), std::string::npos) << status;
  EXPECT_NE(status.find("Master_SSL_Verify_Server_Cert: Yes"), std::string::npos) << status;
  // binlog_server lists the replica as it registered (its --report-host
  // and --report-port), asked by the mariadb client over verified TLS.
  std::string hosts;
  EXPECT_EQ(RunCommand(absl::StrCat(kClient, " --no-defaults -h127.0.0.1 -P", port,
                                    " -urepl -ps3cret --ssl --ssl-ca=", pki->ca,
                                    " --ssl-verify-server-cert -N -B -e 'SHOW SLAVE HOSTS'"),
                       &hosts),
            0)
      << hosts;
  EXPECT_EQ(hosts.rfind("2\treplica-under-test\t3399\t", 0), 0u) << hosts;
  ASSERT_TRUE(log_->Close().ok());
}

}  // namespace
}  // namespace binlog
