// binlog_server --source against a MariaDB 10.11 primary that requires TLS
// (ssl_cert/ssl_key, require_secure_transport=ON, and a replication user
// with REQUIRE SSL), on 127.0.0.1 in a temporary directory, with
// certificates made by `openssl` at test time (tests/testutil/test_pki.h):
//   - a relay given a CA that the primary's certificate does not chain to
//     (--source_ssl_ca=<another CA>) refuses the connection: it says why
//     on its output (the certificate check) while it waits for the
//     source's first file, and keeps retrying (the primary counts each
//     aborted TLS handshake);
//   - the same relay given the right CA copies the primary's files byte
//     for byte over TLS.
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

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
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/mariadb_server.h"
#include "tests/testutil/process.h"
#include "tests/testutil/test_pki.h"

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

class MariadbRelayTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!MariadbServer::Installed()) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    char tmpl[] = "/tmp/binlog_relay_tls_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::mkdir((dir_ + "/primary").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((dir_ + "/pki").c_str(), 0700), 0);
    auto pki = testing_util::MakeTestPki(dir_ + "/pki");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    absl::Status s = primary_.Start(
        dir_ + "/primary",
        {"--server-id=1", "--log-bin=" + dir_ + "/primary/data/primary-bin",
         "--binlog-format=ROW", "--gtid-strict-mode=1", "--ssl-cert=" + pki_.server_cert,
         "--ssl-key=" + pki_.server_key, "--ssl-ca=" + pki_.ca,
         "--require-secure-transport=ON"},
        /*tcp=*/true);
    ASSERT_TRUE(s.ok()) << s;
    Primary("CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 's3cret' REQUIRE SSL");
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
    testing_util::StopProcess(relay_pid_, absl::Seconds(30));
    primary_.Stop();
    if (!dir_.empty() && !HasFailure()) {
      std::string out;
      RunCommand("rm -rf '" + dir_ + "'", &out);
    } else if (!dir_.empty()) {
      std::cerr << "kept " << dir_ << "\n" << ReadWholeFile(dir_ + "/relay.out");
    }
  }

  std::string Primary(const std::string& sql) {
    auto out = primary_.Sql(sql);
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

  // Starts the relay with `ca` as --source_ssl_ca; its output goes to
  // relay.out (appended).
  void StartRelay(const std::string& ca) {
    relay_pid_ = testing_util::SpawnProcess(
        {kServer, "--dir=" + dir_ + "/copy", "--basename=primary-bin", "--port=0",
         "--users=" + dir_ + "/users", absl::StrCat("--source=127.0.0.1:", primary_.port()),
         "--source_user=repl", "--source_password_file=" + dir_ + "/source_pw",
         "--server_id=5", "--source_heartbeat_period=200ms", "--source_ssl_ca=" + ca},
        dir_ + "/relay.out", /*append=*/true);
  }
  // Waits (bounded) until the relay's output from `from` on holds `what`.
  bool WaitForOutput(size_t from, const std::string& what) {
    for (int i = 0; i < 400; ++i) {
      if (ReadWholeFile(dir_ + "/relay.out").find(what, from) != std::string::npos) return true;
      int st;
      if (::waitpid(relay_pid_, &st, WNOHANG) == relay_pid_) {
        relay_pid_ = -1;
        return false;
      }
      absl::SleepFor(absl::Milliseconds(50));  // polls the relay's output (bounded)
    }
    return false;
  }

  std::string dir_;
  testing_util::TestPki pki_;
  MariadbServer primary_;
  pid_t relay_pid_ = -1;
};

TEST_F(MariadbRelayTlsTest, RefusesAForeignCertificateThenCopiesOverVerifiedTls) {
  for (int id = 1; id <= 20; ++id) {
    Primary(absl::StrCat("INSERT INTO shop.items VALUES (", id, ", '", std::string(30, 'a'),
                         "')"));
    if (id == 10) Primary("FLUSH BINARY LOGS");
  }

  // A CA the primary's certificate does not chain to: refused, reported,
  // retried.
  const uint64_t aborted_before = PrimaryStatus("Aborted_connects");
  StartRelay(pki_.other_ca);
  ASSERT_TRUE(WaitForOutput(0, "(reconnecting)")) << ReadWholeFile(dir_ + "/relay.out");
  const std::string refused = ReadWholeFile(dir_ + "/relay.out");
  EXPECT_NE(refused.find("certificate"), std::string::npos) << refused;
  uint64_t aborted = 0;
  for (int i = 0; i < 200; ++i) {
    aborted = PrimaryStatus("Aborted_connects");
    if (aborted >= aborted_before + 3) break;
    absl::SleepFor(absl::Milliseconds(50));  // polls the primary's counter (bounded)
  }
  EXPECT_GE(aborted, aborted_before + 3) << "the relay stopped retrying";
  EXPECT_EQ(refused.find("listening"), std::string::npos) << "nothing was copied";
  ASSERT_NE(relay_pid_, -1) << "the relay exited";
  testing_util::StopProcess(relay_pid_, absl::Seconds(30));
  relay_pid_ = -1;

  // The right CA: the copy is the primary's files.
  const size_t from = ReadWholeFile(dir_ + "/relay.out").size();
  StartRelay(pki_.ca);
  ASSERT_TRUE(WaitForOutput(from, "listening 127.0.0.1:")) << ReadWholeFile(dir_ + "/relay.out");
  for (int id = 21; id <= 30; ++id) {
    Primary(absl::StrCat("INSERT INTO shop.items VALUES (", id, ", 'b')"));
  }
  std::vector<std::string> names =
      absl::StrSplit(Primary("SHOW BINARY LOGS"), '\n', absl::SkipEmpty());
  ASSERT_GE(names.size(), 2u);
  for (auto& n : names) n = std::vector<std::string>(absl::StrSplit(n, '\t'))[0];
  const std::string last_source = dir_ + "/primary/data/" + names.back();
  const size_t source_size = ReadWholeFile(last_source).size();
  for (int i = 0; i < 400; ++i) {
    if (ReadWholeFile(dir_ + "/copy/" + names.back()).size() >= source_size) break;
    absl::SleepFor(absl::Milliseconds(50));  // polls the copy (bounded)
  }
  testing_util::StopProcess(relay_pid_, absl::Seconds(30));
  relay_pid_ = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    std::string source = ReadWholeFile(dir_ + "/primary/data/" + names[i]);
    const std::string copy = ReadWholeFile(dir_ + "/copy/" + names[i]);
    if (i + 1 == names.size()) {
      // The active file: its in-use flag comes cleared in the dump.
      ASSERT_GT(source.size(), kInUseFlagFileOffset);
      source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
    }
    EXPECT_EQ(copy.size(), source.size());
    EXPECT_TRUE(copy == source);
  }
}

}  // namespace
}  // namespace binlog
