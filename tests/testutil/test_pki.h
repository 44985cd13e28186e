// File: tests/testutil/test_pki.h
//
// Certificates for TLS tests, made at test time with the `openssl` command
// in a directory the test owns (no key is ever checked in): a test CA, a
// server certificate for 127.0.0.1, ::1 and localhost, a client
// certificate, a second CA with a client certificate of its own (one the
// server must refuse), and an expired server certificate. EC P-256 keys
// (fast to make).
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_TESTS_TESTUTIL_TEST_PKI_H_
#define BINLOG_TESTS_TESTUTIL_TEST_PKI_H_

#include <string>

#include "absl/status/statusor.h"

namespace binlog {
namespace testing_util {

struct TestPki {
  std::string ca;           // the CA certificate (PEM)
  std::string server_cert;  // CN=localhost; SAN IP:127.0.0.1, IP:::1, DNS:localhost
  std::string server_key;
  std::string client_cert;  // CN=repl, signed by `ca`
  std::string client_key;
  std::string other_ca;           // a second CA, unknown to the server
  std::string other_client_cert;  // signed by `other_ca`
  std::string other_client_key;
  std::string expired_cert;  // server_key's certificate, valid in 2020 only
};

// Makes the files in `dir` (which must exist). Internal with the openssl
// command's output when a step fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir);

}  // namespace testing_util
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_TEST_PKI_H_
