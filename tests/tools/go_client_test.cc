// binlog_server read by go-mysql's replication.BinlogSyncer (tests/tools/
// gomysql: a small Go program, its go.mod/go.sum pinning go-mysql v1.9.1;
// tools/setup.sh downloads the modules and warms the build cache), an
// implementation of the replication protocol independent of ours: by file
// and position (COM_BINLOG_DUMP) and by GTID set (COM_BINLOG_DUMP_GTID),
// with CRC32 verification on, over plain and lz4 logs (lz4 payloads reach
// the client expanded); and with a TLSConfig verifying the server's
// certificate against a CA made at test time, against a server that
// refuses plaintext (3159), which the test also checks.
//
// The program is built offline (GOFLAGS=-mod=readonly, GOPROXY=off,
// GOTOOLCHAIN=local) from the module cache of the user running the test
// (`go env GOMODCACHE` with HOME set from the passwd entry, since Bazel may
// set HOME elsewhere), with the build cache /tmp/binlog_gomysql_gocache_UID
// (tools/setup.sh warms it). Skipped when no go command or no downloaded
// modules are found. Environment: BINLOG_GO names the go command to use.

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

const char kSourceDir[] = "tests/tools/gomysql";
const char kModule[] = "github.com/go-mysql-org/go-mysql@v1.9.1";

using testing_util::RunCommand;

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The go command: $BINLOG_GO, else `go` on PATH, else the usual install
// places. "" if none.
std::string FindGo() {
  const char* env = ::getenv("BINLOG_GO");
  if (env != nullptr && *env != '\0') return ::access(env, X_OK) == 0 ? env : "";
  std::string out;
  if (RunCommand("command -v go", &out) == 0) {
    std::string p(absl::StripAsciiWhitespace(out));
    if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  }
  for (const char* p : {"/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/usr/bin/go"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// The home directory of the user running the test, from the passwd entry
// (Bazel's test environment may point HOME at a temporary directory).
std::string RealHome() {
  struct passwd* pw = ::getpwuid(::getuid());
  if (pw != nullptr && pw->pw_dir != nullptr && *pw->pw_dir != '\0') return pw->pw_dir;
  const char* h = ::getenv("HOME");
  return h != nullptr ? h : "";
}

// Builds the Go program once for the whole suite; the binary's path, or
// the reason it could not (skip_ set when the tools are missing).
struct GoProgram {
  std::string binary;
  std::string skip;   // why the tests skip
  std::string error;  // why the build failed (a failure)
};

GoProgram BuildGoProgram() {
  GoProgram r;
  const std::string go = FindGo();
  if (go.empty()) {
    r.skip = "no go command (PATH, BINLOG_GO, /usr/local/go/bin/go); go_client_test needs Go";
    return r;
  }
  const std::string home = RealHome();
  // The module cache as the user's `go env` reports it (their GOPATH,
  // GOMODCACHE, go env file), with the real home directory.
  std::string out;
  const std::string home_env = home.empty() ? "" : absl::StrCat("HOME=", ShellQuote(home), " ");
  if (RunCommand(absl::StrCat("env ", home_env, "GOTOOLCHAIN=local ", ShellQuote(go),
                              " env GOMODCACHE"),
                 &out) != 0) {
    r.skip = absl::StrCat("`go env` failed: ", out);
    return r;
  }
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipWhitespace());
  if (lines.size() != 1) {
    r.skip = absl::StrCat("unexpected `go env` output: ", out);
    return r;
  }
  const std::string modcache(absl::StripAsciiWhitespace(lines[0]));
  if (!IsDir(absl::StrCat(modcache, "/", kModule))) {
    r.skip = absl::StrCat(kModule, " is not in the module cache ", modcache,
                          " (tools/setup.sh downloads it: cd tests/tools/gomysql && go mod "
                          "download)");
    return r;
  }
  const char* tmp = ::getenv("TEST_TMPDIR");
  const std::string work = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/gomysql_build");
  // A cold build cache takes over a minute (go-mysql's dependencies), and
  // the user's is read-only in Bazel's sandbox: a build cache of its own
  // under /tmp, kept across runs, which tools/setup.sh warms.
  const std::string gocache = absl::StrCat("/tmp/binlog_gomysql_gocache_", ::getuid());
  // Copy the sources out of the runfiles tree (symlinks; no VCS there).
  const std::string src = absl::StrCat(work, "/src");
  out.clear();
  if (RunCommand(absl::StrCat("rm -rf ", ShellQuote(work), " && mkdir -p ", ShellQuote(src),
                              " && cp ", kSourceDir, "/go.mod ", kSourceDir, "/go.sum ",
                              kSourceDir, "/main.go ", ShellQuote(src)),
                 &out) != 0) {
    r.error = absl::StrCat("copying ", kSourceDir, ": ", out);
    return r;
  }
  r.binary = absl::StrCat(work, "/gomysql_check");
  out.clear();
  const std::string cmd = absl::StrCat(
      "cd ", ShellQuote(src), " && env ", home_env, "GOMODCACHE=", ShellQuote(modcache),
      " GOCACHE=", ShellQuote(gocache),
      " GOFLAGS='-mod=readonly -buildvcs=false' GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local"
      " GOWORK=off CGO_ENABLED=0 ",
      ShellQuote(go), " build -o ", ShellQuote(r.binary), " .");
  if (RunCommand(cmd, &out) != 0) {
    r.error = absl::StrCat("go build failed (", cmd, "):\n", out);
    r.binary.clear();
  }
  return r;
}

class GoClientTest : public ServedLogTest {
 protected:
  static void SetUpTestSuite() { program_ = new GoProgram(BuildGoProgram()); }
  static void TearDownTestSuite() {
    delete program_;
    program_ = nullptr;
  }

  void SetUp() override {
    if (!program_->skip.empty()) GTEST_SKIP() << program_->skip;
    ASSERT_TRUE(program_->error.empty()) << program_->error;
  }

  void SetUpServer(bool tls) {
    if (tls) EnableTls(/*require_secure_transport=*/true);
    StartServedLog("binlog_goclient_", 50, /*xid_base=*/1000);
  }

  // Runs the Go program; its exit status, its output in *out.
  int Check(const std::string& how, int first, int last, std::string* out,
            const std::string& user = "repl", const std::string& password = "pw") {
    return RunCommand(absl::StrCat(ShellQuote(program_->binary), " -port=", port_, " -user=",
                                   user, " -password=", password, " -uuid=", kServedUuid,
                                   " -first=", first, " -last=", last, " -timeout=20s ", how),
                      out);
  }

  // The lines "txn GNO xid=X queries=Q rows=R" for GNOs first..last.
  static std::string Expected(int first, int last) {
    std::string s;
    for (int i = first; i <= last; ++i) {
      absl::StrAppend(&s, "txn ", i, " xid=", 1000 + i, " queries=2 rows=0\n");
    }
    return absl::StrCat(s, "ok: ", last - first + 1, " transactions\n");
  }

  static GoProgram* program_;
};

GoProgram* GoClientTest::program_ = nullptr;

TEST_P(GoClientTest, ByFileAndPosition) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check("-file=binlog.000001 -pos=4", 1, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(1, 50));
}

TEST_P(GoClientTest, ByGtidSet) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(21, 50));
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(50, 50));
}

// BinlogSyncer with a TLSConfig trusting the test CA: both dump commands
// over verified TLS; without TLS the server refuses it with 3159, and with
// another CA it refuses the server.
TEST_P(GoClientTest, OverVerifiedTls) {
  SetUpServer(true);
  const std::string tls = absl::StrCat("-ssl_ca=", ShellQuote(pki_.ca), " ");
  std::string out;
  EXPECT_EQ(Check(tls + "-file=binlog.000001 -pos=4", 1, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(1, 50));
  out.clear();
  EXPECT_EQ(Check(absl::StrCat(tls, "-gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(21, 50));
  out.clear();
  EXPECT_EQ(Check("-file=binlog.000001 -pos=4", 1, 50, &out), 1) << out;
  EXPECT_NE(out.find("3159"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-ssl_ca=", ShellQuote(pki_.other_ca),
                               " -file=binlog.000001 -pos=4"),
                  1, 50, &out),
            1)
      << out;
  EXPECT_NE(out.find("certificate"), std::string::npos) << out;
  // caching_sha2_password over the verified TLS: the full authentication
  // sends the password in clear (no RSA key), then the fast path.
  out.clear();
  const AuthStats before = server_->stats().auth;
  EXPECT_EQ(Check(absl::StrCat(tls, "-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"),
            0)
      << out;
  EXPECT_EQ(out, Expected(50, 50));
  const AuthStats after = server_->stats().auth;
  EXPECT_EQ(after.full_auths, before.full_auths + 1);
  EXPECT_GT(after.fast_auths, before.fast_auths);  // BinlogSyncer connects twice
  EXPECT_EQ(after.public_key_requests, 0u);
}

// go-mysql's caching_sha2_password over plaintext TCP: the full
// authentication with the server's RSA public key once, then the fast path
// (BinlogSyncer connects more than once per run).
TEST_P(GoClientTest, CachingSha2Password) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"), 0)
      << out;
  EXPECT_EQ(out, Expected(50, 50));
  AuthStats a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(a.public_key_requests, 1u);
  const uint64_t fast = a.fast_auths;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"), 0)
      << out;
  a = server_->stats().auth;
  EXPECT_GT(a.fast_auths, fast);
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(server_->stats().auth_failures, 0u);
  out.clear();
  EXPECT_NE(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "nope"), 0);
  EXPECT_GE(server_->stats().auth_failures, 1u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, GoClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
