#include "io/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace binlog {
namespace io {
namespace {

// OpenSSL's reason for the last failure on this thread (its error queue
// is per thread), and the queue cleared.
std::string LastError() {
  unsigned long e = ERR_get_error();
  std::string out;
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  out = buf;
  ERR_clear_error();
  return out;
}

std::string Time(const ASN1_TIME* t) {
  BIO* b = BIO_new(BIO_s_mem());
  if (b == nullptr) return "?";
  ASN1_TIME_print(b, t);
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string s(data, n > 0 ? static_cast<size_t>(n) : 0);
  BIO_free(b);
  return s;
}

// The leaf certificate's dates against now: an expired certificate (or
// one not valid yet) is refused when it is loaded, not at the first
// client's handshake.
absl::Status CheckDates(SSL_CTX* ctx, const std::string& cert_file) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(cert_file, ": no certificate"));
  }
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_file, ": the certificate expired on ", Time(X509_get0_notAfter(cert))));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_file, ": the certificate is not valid before ", Time(X509_get0_notBefore(cert))));
  }
  return absl::OkStatus();
}

absl::Status LoadPair(SSL_CTX* ctx, const std::string& cert_file,
                      const std::string& key_file) {
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the certificate ", cert_file, ": ", LastError()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the private key ", key_file, " does not match the certificate ", cert_file, ": ",
          LastError()));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the private key ", key_file, ": ", LastError()));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the private key ", key_file, " does not match the certificate ", cert_file, ": ",
        LastError()));
  }
  return CheckDates(ctx, cert_file);
}

absl::Status LoadCa(SSL_CTX* ctx, const std::string& ca_file) {
  if (SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load the CA certificates ", ca_file, ": ", LastError()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SSL_CTX*> NewCtx(bool server) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return absl::InternalError(absl::StrCat("SSL_CTX_new: ", LastError()));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  // Writes may end after some records (the socket's write loop waits and
  // retries with the rest, from wherever its buffer is).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::ForServer(
    const std::string& cert_file, const std::string& key_file, const std::string& ca_file) {
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate and its private key");
  }
  auto ctx = NewCtx(true);
  if (!ctx.ok()) return ctx.status();
  std::shared_ptr<const TlsContext> out(new TlsContext(*ctx, true));
  absl::Status s = LoadPair(*ctx, cert_file, key_file);
  if (!s.ok()) return s;
  if (!ca_file.empty()) {
    s = LoadCa(*ctx, ca_file);
    if (!s.ok()) return s;
    // Ask for a client certificate and verify one that comes; a client
    // without one is not refused here.
    SSL_CTX_set_verify(*ctx, SSL_VERIFY_PEER, nullptr);
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(*ctx, names);
    ERR_clear_error();
  }
  // Session resumption is not offered: connections are long-lived.
  SSL_CTX_set_session_cache_mode(*ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(*ctx, 0);
  return out;
}

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::ForClient(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file) {
  if (ca_file.empty()) return absl::InvalidArgumentError("a TLS client needs a CA file");
  if (cert_file.empty() != key_file.empty()) {
    return absl::InvalidArgumentError("a client certificate needs its key, and a key its certificate");
  }
  auto ctx = NewCtx(false);
  if (!ctx.ok()) return ctx.status();
  std::shared_ptr<const TlsContext> out(new TlsContext(*ctx, false));
  absl::Status s = LoadCa(*ctx, ca_file);
  if (!s.ok()) return s;
  SSL_CTX_set_verify(*ctx, SSL_VERIFY_PEER, nullptr);
  if (!cert_file.empty()) {
    s = LoadPair(*ctx, cert_file, key_file);
    if (!s.ok()) return s;
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

}  // namespace io
}  // namespace binlog
