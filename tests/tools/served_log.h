// The fixture of the tests that run real replication clients (go-mysql,
// python-mysql-replication) against binlog_server: a MySQL-flavor log in a
// new temporary directory, with GTIDs kServedUuid:1..n, served by a
// server::Server on 127.0.0.1, optionally over TLS with certificates made
// at test time (tests/testutil/test_pki.h).

#ifndef BINLOG_TESTS_TOOLS_SERVED_LOG_H_
#define BINLOG_TESTS_TOOLS_SERVED_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/codec.h"
#include "server/server.h"
#include "io/socket.h"
#include "tests/testutil/test_pki.h"

namespace binlog {
namespace server {

inline constexpr uint32_t kServedTs = 1700000000;
inline constexpr char kServedUuid[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

// The log options these tests use: 8 KiB files (rotations every few
// transactions), no syncs, the given codec on every transaction.
Options ServedLogOptions(io::Codec codec);

class ServedLogTest : public ::testing::TestWithParam<io::Codec> {
 protected:
  // Opens the log in /tmp/<prefix>XXXXXX (ServedLogOptions(GetParam())),
  // commits `transactions` transactions (GNO i: BEGIN, an INSERT of about
  // 330 bytes, Xid xid_base + i) and starts the server (user repl,
  // password pw, mysql_native_password; users sha2 and sha2sock,
  // passwords pw2 and pw3, caching_sha2_password) on a free loopback port
  // and on the unix socket socket_path_. Fails the test on any error.
  void StartServedLog(const char* prefix, int transactions, uint64_t xid_base);
  // Before StartServedLog: the server offers TLS (certificates in pki_,
  // made in a temporary directory of their own) and, with
  // `require_secure_transport`, refuses plaintext TCP (3159).
  void EnableTls(bool require_secure_transport);
  // Stops the server, closes the log, removes the directories.
  void TearDown() override;

  std::string dir_;
  std::string pki_dir_;
  testing_util::TestPki pki_;
  bool require_secure_transport_ = false;
  std::unique_ptr<Binlog> log_;
  std::unique_ptr<Server> server_;
  io::Socket listener_;
  uint16_t port_ = 0;
  std::thread runner_;
  std::string socket_path_;
  io::Socket unix_listener_;
  std::thread unix_runner_;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_TESTS_TOOLS_SERVED_LOG_H_
