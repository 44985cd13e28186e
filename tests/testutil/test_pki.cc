#include "tests/testutil/test_pki.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace testing_util {

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir) {
  // One sh script: keys, the CAs, the signed certificates; `openssl ca`
  // makes the expired one (x509 -req cannot set past dates in OpenSSL 3.0).
  const std::string script = absl::StrReplaceAll(R"(set -e
cd 'DIR'
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key ca.key
openssl req -x509 -new -key ca.key -out ca.pem -days 3 -subj '/CN=binlog test CA'
key other-ca.key
openssl req -x509 -new -key other-ca.key -out other-ca.pem -days 3 -subj '/CN=binlog other CA'
cat > ext.cnf <<'END'
[server]
subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
[client]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
END
key server.key
openssl req -new -key server.key -out server.csr -subj '/CN=localhost'
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext.cnf -extensions server -out server.pem 2>/dev/null
key client.key
openssl req -new -key client.key -out client.csr -subj '/CN=repl'
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext.cnf -extensions client -out client.pem 2>/dev/null
key other-client.key
openssl req -new -key other-client.key -out other-client.csr -subj '/CN=repl'
openssl x509 -req -in other-client.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -days 2 -extfile ext.cnf -extensions client -out other-client.pem 2>/dev/null
mkdir -p ca-db
: > ca-db/index.txt
echo 01 > ca-db/serial
cat > ca.cnf <<'END'
[ca]
default_ca = d
[d]
database = DIR/ca-db/index.txt
new_certs_dir = DIR/ca-db
serial = DIR/ca-db/serial
default_md = sha256
policy = p
[p]
commonName = supplied
END
openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr -out expired.pem -startdate 20200101000000Z -enddate 20200102000000Z -notext 2>/dev/null
chmod 600 *.key
)",
                                                 {{"DIR", dir}});
  const std::string path = dir + "/make-pki.sh";
  {
    std::ofstream f(path);
    f << script;
    if (!f.good()) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  std::string out;
  if (RunCommand(absl::StrCat("sh '", path, "'"), &out) != 0) {
    return absl::InternalError(absl::StrCat("making the test certificates failed: ", out));
  }
  TestPki p;
  p.ca = dir + "/ca.pem";
  p.server_cert = dir + "/server.pem";
  p.server_key = dir + "/server.key";
  p.client_cert = dir + "/client.pem";
  p.client_key = dir + "/client.key";
  p.other_ca = dir + "/other-ca.pem";
  p.other_client_cert = dir + "/other-client.pem";
  p.other_client_key = dir + "/other-client.key";
  p.expired_cert = dir + "/expired.pem";
  return p;
}

}  // namespace testing_util
}  // namespace binlog
