// File: tests/testutil/mariadb_server.h
//
// Debian's MariaDB 10.11 server for tests: MariadbServer installs a
// datadir in a temporary directory and runs `mariadbd` on a unix socket
// there and, when asked, on 127.0.0.1 only (a free port). Nothing listens
// on any other address.
//
// Thread safety: thread-compatible (one test thread drives it).

#ifndef BINLOG_TESTS_TESTUTIL_MARIADB_SERVER_H_
#define BINLOG_TESTS_TESTUTIL_MARIADB_SERVER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace binlog {
namespace testing_util {

class MariadbServer {
 public:
  // True when mariadbd, mariadb-install-db and the mariadb client are
  // installed (tools/setup.sh installs mariadb-server).
  static bool Installed();

  MariadbServer() = default;
  MariadbServer(const MariadbServer&) = delete;
  MariadbServer& operator=(const MariadbServer&) = delete;
  // Stops the server (SIGTERM, then SIGKILL).
  ~MariadbServer();

  // Installs a datadir in `dir`/data (unless one is there: a restart keeps
  // it) and starts mariadbd with `extra` options after the project's base
  // ones (its socket `dir`/sock, error log `dir`/error.log, small InnoDB
  // buffers). `tcp`: also listen on 127.0.0.1 at a free port (port()),
  // the same one across restarts. Returns once the server answers a query
  // (Unavailable after 60 s, with the error log's tail).
  absl::Status Start(const std::string& dir, const std::vector<std::string>& extra,
                     bool tcp = false);
  // SIGTERM, waits up to `grace`, then SIGKILL.
  void Stop(absl::Duration grace = absl::Seconds(30));
  // SIGKILL at once (a crash).
  void Kill();
  bool running() const { return pid_ > 0; }

  // The mariadb client command line (root over the unix socket).
  std::string Client() const;
  // Runs `sql` (batch mode, no column names); its output, or Internal
  // with the output on failure.
  absl::StatusOr<std::string> Sql(const std::string& sql) const;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string socket_path() const { return dir_ + "/sock"; }
  std::string data_dir() const { return dir_ + "/data"; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace testing_util
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_MARIADB_SERVER_H_
