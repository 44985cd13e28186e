#include "tests/testutil/mariadb_server.h"

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "io/socket.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/process.h"

namespace binlog {
namespace testing_util {
namespace {

constexpr char kMariadbd[] = "/usr/sbin/mariadbd";
constexpr char kInstallDb[] = "/usr/bin/mariadb-install-db";
constexpr char kClient[] = "/usr/bin/mariadb";

bool Executable(const char* path) { return ::access(path, X_OK) == 0; }

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string CurrentUser() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

}  // namespace

bool MariadbServer::Installed() {
  return Executable(kMariadbd) && Executable(kInstallDb) && Executable(kClient);
}

MariadbServer::~MariadbServer() { Stop(); }

absl::Status MariadbServer::Start(const std::string& dir,
                                  const std::vector<std::string>& extra, bool tcp) {
  if (pid_ > 0) return absl::FailedPreconditionError("mariadbd is running");
  dir_ = dir;
  const std::string user = CurrentUser();
  std::string out;
  // A temporary directory of the server's own: the bootstrap and the
  // server name temporary files after their pid, which tests run in
  // parallel in PID namespaces (Bazel's sandbox) share, so /tmp is not
  // safe for two of them at once.
  const std::string tmp = dir_ + "/tmp";
  if (::access(tmp.c_str(), F_OK) != 0 && ::mkdir(tmp.c_str(), 0700) != 0) {
    return absl::InternalError("cannot create " + tmp);
  }
  if (::access(data_dir().c_str(), F_OK) != 0) {
    if (RunCommand(absl::StrCat(kInstallDb, " --no-defaults --datadir=", data_dir(),
                                " --tmpdir=", tmp, " --user=", user,
                                " --auth-root-authentication-method=normal --skip-test-db"),
                   &out) != 0) {
      return absl::InternalError("mariadb-install-db failed: " + out);
    }
  }
  if (tcp && port_ == 0) {
    // A free loopback port: bound once to learn it, then released for
    // mariadbd (which binds 127.0.0.1 only).
    auto probe = io::Socket::ListenLoopback(0);
    if (!probe.ok()) return probe.status();
    port_ = probe->port();
  }
  std::vector<std::string> args = {
      kMariadbd, "--no-defaults", "--datadir=" + data_dir(), "--tmpdir=" + tmp,
      "--socket=" + socket_path(),
      "--user=" + user, "--log-error=" + dir_ + "/error.log", "--pid-file=" + dir_ + "/pid",
      "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
      "--character-set-server=utf8mb4"};
  if (tcp) {
    args.push_back("--bind-address=127.0.0.1");
    args.push_back(absl::StrCat("--port=", port_));
  } else {
    args.push_back("--skip-networking");
  }
  args.insert(args.end(), extra.begin(), extra.end());
  pid_ = SpawnProcess(args, dir_ + "/server.out", /*append=*/true);
  for (int i = 0; i < 600; ++i) {
    std::string ping;
    if (RunCommand(Client() + " -e 'SELECT 1'", &ping) == 0) return absl::OkStatus();
    int st;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));  // polls mariadbd's start (bounded)
  }
  std::string log;
  RunCommand("tail -n 20 " + ShellQuote(dir_ + "/error.log"), &log);
  Stop(absl::Seconds(5));
  return absl::UnavailableError("mariadbd did not start:\n" + log);
}

void MariadbServer::Stop(absl::Duration grace) {
  StopProcess(pid_, grace);
  pid_ = -1;
}

void MariadbServer::Kill() {
  KillProcess(pid_);
  pid_ = -1;
}

std::string MariadbServer::Client() const {
  return absl::StrCat(kClient, " --no-defaults -S ", ShellQuote(socket_path()), " -uroot");
}

absl::StatusOr<std::string> MariadbServer::Sql(const std::string& sql) const {
  std::string out;
  if (RunCommand(absl::StrCat(Client(), " -N -B -e ", ShellQuote(sql)), &out) != 0) {
    return absl::InternalError(absl::StrCat(sql, ": ", out));
  }
  return out;
}

}  // namespace testing_util
}  // namespace binlog
