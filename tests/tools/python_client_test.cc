// binlog_server read by python-mysql-replication (tests/tools/
// replication_client_check.py; pinned in tests/tools/requirements.txt,
// installed by tools/setup.sh), an implementation of the replication
// protocol independent of ours: by file and position and by GTID set
// (COM_BINLOG_DUMP_GTID), with CRC32 verification on, over plain and lz4
// logs (lz4 payloads reach the client expanded); and over TLS, verifying
// the server's certificate against a CA made at test time, against a
// server that refuses plaintext (3159), which the test also checks.
// Skipped when python3 or the package is missing.

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

const char kScript[] = "tests/tools/replication_client_check.py";

using testing_util::RunCommand;

class PythonClientTest : public ServedLogTest {
 protected:
  void SetUp() override {
    std::string out;
    if (RunCommand("python3 -c 'import pymysqlreplication'", &out) != 0) {
      GTEST_SKIP() << "python-mysql-replication not installed (tools/setup.sh installs "
                      "tests/tools/requirements.txt)";
    }
  }

  void SetUpServer(bool tls) {
    if (tls) EnableTls(/*require_secure_transport=*/true);
    StartServedLog("binlog_pyclient_", 50, /*xid_base=*/0);
  }

  int Check(const std::string& how, int first, int last, std::string* out) {
    return RunCommand(absl::StrCat("python3 ", kScript, " --port=", port_,
                                   " --user=repl --password=pw --uuid=", kServedUuid,
                                   " --first=", first, " --last=", last, " ", how),
                      out);
  }
};

TEST_P(PythonClientTest, ByFileAndPosition) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check("--file=binlog.000001 --pos=4", 1, 50, &out), 0) << out;
}

TEST_P(PythonClientTest, ByGtidSet) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kServedUuid, ":1-49"), 50, 50, &out), 0) << out;
}

// Both connections over TLS (connection_settings and
// ctl_connection_settings with 'ssl': {'ca': ...}), the server's
// certificate verified; the same client with TLS disabled is refused with
// 3159, and one trusting another CA refuses the server.
TEST_P(PythonClientTest, OverVerifiedTls) {
  SetUpServer(true);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("--ssl_ca=", pki_.ca, " --gtid=", kServedUuid, ":1-20"), 21, 50,
                  &out),
            0)
      << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("--ssl_ca=", pki_.ca, " --file=binlog.000001 --pos=4"), 1, 50,
                  &out),
            0)
      << out;
  out.clear();
  EXPECT_EQ(Check("--ssl_disabled --file=binlog.000001 --pos=4", 1, 50, &out), 1) << out;
  EXPECT_NE(out.find("3159"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("--ssl_ca=", pki_.other_ca, " --file=binlog.000001 --pos=4"), 1,
                  50, &out),
            1)
      << out;
  EXPECT_NE(out.find("CERTIFICATE_VERIFY_FAILED"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Codecs, PythonClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
