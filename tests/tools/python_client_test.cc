// binlog_server read by python-mysql-replication (tests/tools/
// replication_client_check.py; pinned in tests/tools/requirements.txt,
// installed by tools/setup.sh), an implementation of the replication
// protocol independent of ours: by file and position and by GTID set
// (COM_BINLOG_DUMP_GTID), with CRC32 verification on, over plain and lz4
// logs (lz4 payloads reach the client expanded); PyMySQL's
// caching_sha2_password (tests/tools/auth_client_check.py); and over TLS,
// verifying the server's certificate against a CA made at test time,
// against a server that refuses plaintext (3159), which the test also
// checks. Skipped when python3 or the packages are missing.

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

const char kScript[] = "tests/tools/replication_client_check.py";
const char kAuthScript[] = "tests/tools/auth_client_check.py";

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
  // PyMySQL's caching_sha2_password over verified TLS: the full
  // authentication sends the password in clear (no RSA key), then the
  // fast path.
  out.clear();
  if (RunCommand("python3 -c 'import pymysql, cryptography'", &out) != 0) {
    GTEST_SKIP() << "PyMySQL or cryptography not installed (tests/tools/requirements.txt)";
  }
  const std::string tls = absl::StrCat("python3 ", kAuthScript, " --port=", port_,
                                       " --ssl_ca=", pki_.ca, " --user=sha2 --password=pw2");
  out.clear();
  ASSERT_EQ(RunCommand(tls, &out), 0) << out;
  AuthStats a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(a.public_key_requests, 0u);
  out.clear();
  ASSERT_EQ(RunCommand(tls, &out), 0) << out;
  EXPECT_EQ(server_->stats().auth.fast_auths, 1u);
}

// PyMySQL's caching_sha2_password against the server: over plaintext TCP
// the full authentication with the server's RSA public key, then the fast
// path from the cache; over the unix socket (a secure transport) the full
// authentication with the password in clear; a wrong password and an
// unknown user get 1045. mysql_native_password (user repl) through the
// auth switch.
TEST_P(PythonClientTest, CachingSha2PasswordPaths) {
  std::string out;
  if (RunCommand("python3 -c 'import pymysql, cryptography'", &out) != 0) {
    GTEST_SKIP() << "PyMySQL or cryptography not installed (tests/tools/requirements.txt)";
  }
  SetUpServer(false);
  auto run = [&](const std::string& where, const std::string& user, const std::string& pw,
                 bool denied = false) {
    out.clear();
    return RunCommand(absl::StrCat("python3 ", kAuthScript, " ", where, " --user=", user,
                                   " --password=", pw, denied ? " --expect_denied" : ""),
                      &out);
  };
  const std::string tcp = absl::StrCat("--port=", port_);
  const std::string sock = "--socket=" + socket_path_;
  ASSERT_EQ(run(tcp, "sha2", "pw2"), 0) << out;
  AuthStats a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(a.public_key_requests, 1u);
  EXPECT_EQ(a.fast_auths, 0u);
  ASSERT_EQ(run(tcp, "sha2", "pw2"), 0) << out;
  a = server_->stats().auth;
  EXPECT_EQ(a.fast_auths, 1u);
  EXPECT_EQ(a.full_auths, 1u);
  ASSERT_EQ(run(sock, "sha2sock", "pw3"), 0) << out;
  a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 2u);
  EXPECT_EQ(a.public_key_requests, 1u);  // in clear: no key needed
  ASSERT_EQ(run(sock, "sha2sock", "pw3"), 0) << out;
  EXPECT_EQ(server_->stats().auth.fast_auths, 2u);
  EXPECT_EQ(run(tcp, "repl", "pw"), 0) << out;
  EXPECT_EQ(run(tcp, "sha2", "wrong", true), 0) << out;
  EXPECT_EQ(run(sock, "sha2sock", "wrong", true), 0) << out;
  EXPECT_EQ(run(tcp, "nobody", "pw2", true), 0) << out;
  EXPECT_EQ(server_->stats().auth_failures, 3u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, PythonClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
