// binlog_server read by python-mysql-replication (tests/tools/
// replication_client_check.py; pinned in tests/tools/requirements.txt,
// installed by tools/setup.sh), an implementation of the replication
// protocol independent of ours: by file and position and by GTID set
// (COM_BINLOG_DUMP_GTID), with CRC32 verification on, over plain and lz4
// logs (lz4 payloads reach the client expanded). Skipped when python3 or
// the package is missing.

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tools/server/server.h"
#include "tools/server/socket.h"

namespace binlog {
namespace server {
namespace {

constexpr uint32_t kTs = 1700000000;
const char kUuid[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const char kScript[] = "tests/tools/replication_client_check.py";

using testing_util::RunCommand;

class PythonClientTest : public ::testing::TestWithParam<io::Codec> {
 protected:
  void SetUp() override {
    std::string out;
    if (RunCommand("python3 -c 'import pymysqlreplication'", &out) != 0) {
      GTEST_SKIP() << "python-mysql-replication not installed (tools/setup.sh installs "
                      "tests/tools/requirements.txt)";
    }
    char tmpl[] = "/tmp/binlog_pyclient_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Options o;
    o.max_file_size = 8192;
    o.server_uuid = *Uuid::Parse(kUuid);
    o.sync_policy = SyncPolicy::kNever;
    o.compression = GetParam();
    o.compression_threshold = 0;
    auto log = Binlog::Open(dir_, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    TransactionBuffer txn;
    for (int i = 1; i <= 50; ++i) {
      txn.Clear();
      txn.AppendCommitGtid(kTs, 1, CommitGtid());
      AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      AppendQuery(&txn, kTs, 1, 5, "db",
                  absl::StrCat("INSERT INTO t VALUES (", i, ", '", std::string(300, 'a' + i % 26),
                               "')"));
      AppendXid(&txn, kTs, 1, i);
      ASSERT_TRUE(log_->Commit(&txn).ok());
    }
    ServerOptions so;
    so.dir = dir_;
    so.users = {{"repl", "pw"}};
    auto s = Server::Create(so);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto l = Socket::ListenLoopback(0);
    ASSERT_TRUE(l.ok());
    listener_ = std::move(*l);
    port_ = listener_.port();
    runner_ = std::thread([this] { server_->Run(&listener_); });
  }
  void TearDown() override {
    if (server_) {
      server_->Shutdown();
      runner_.join();
      server_.reset();
    }
    log_.reset();
    if (!dir_.empty()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    }
  }

  int Check(const std::string& how, int first, int last, std::string* out) {
    return RunCommand(absl::StrCat("python3 ", kScript, " --port=", port_,
                                   " --user=repl --password=pw --uuid=", kUuid, " --first=",
                                   first, " --last=", last, " ", how),
                      out);
  }

  std::string dir_;
  std::unique_ptr<Binlog> log_;
  std::unique_ptr<Server> server_;
  Socket listener_;
  uint16_t port_ = 0;
  std::thread runner_;
};

TEST_P(PythonClientTest, ByFileAndPosition) {
  std::string out;
  EXPECT_EQ(Check("--file=binlog.000001 --pos=4", 1, 50, &out), 0) << out;
}

TEST_P(PythonClientTest, ByGtidSet) {
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kUuid, ":1-20"), 21, 50, &out), 0) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kUuid, ":1-49"), 50, 50, &out), 0) << out;
}

INSTANTIATE_TEST_SUITE_P(Codecs, PythonClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
