// File: io/tls.h
//
// TLS for the replication server's connections: a TlsContext holds the
// certificate, key and CA files a server (or a client in tests) loaded,
// checked at load time; io::Socket::StartTls (socket.h) turns a connected
// socket into a TLS stream with that context.
//
// Why TLS lives in io/ and not in server/: a TLS stream is the socket's
// reads and writes with records around them. Keeping OpenSSL next to the
// socket lets one read/write loop carry the deadlines, the shutdown
// wake-ups and the poll() calls for plaintext and TLS alike, so every path
// of the server (handshake, queries, dumps, heartbeats, semi-sync acks)
// works over TLS without knowing it; the server only decides when to
// upgrade. OpenSSL reaches the descriptor through a BIO of ours that calls
// send()/recv() here (MSG_NOSIGNAL: a peer that vanished is an error, not
// a SIGPIPE), so io/ stays the only place that touches the OS.
//
// Policy: TLS 1.2 at least; no renegotiation; OpenSSL's default cipher
// lists (its security level 1 or higher).
//
// Thread safety: a TlsContext is immutable after creation and may be used
// by any number of connections in any threads at once.
// Errors: InvalidArgument naming the file and OpenSSL's reason for a file
// that cannot be read or parsed, a key that does not match its
// certificate, or a certificate outside its validity dates.

#ifndef BINLOG_IO_TLS_H_
#define BINLOG_IO_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct ssl_ctx_st;

namespace binlog {
namespace io {

class TlsContext {
 public:
  // A server's context: its certificate chain (PEM; the first certificate
  // is the server's, any further ones its intermediates) and private key
  // (PEM). With `ca_file`, clients are asked for a certificate and one
  // they present must chain to a CA in that file (a client without one is
  // still accepted, as MySQL's server does when it has ssl_ca set).
  static absl::StatusOr<std::shared_ptr<const TlsContext>> ForServer(
      const std::string& cert_file, const std::string& key_file,
      const std::string& ca_file = "");

  // A client's context (tests, benchmarks): the server's certificate must
  // chain to a CA in `ca_file` (required) and name the host given to
  // StartTls; `cert_file`/`key_file` (both or neither): a client
  // certificate to present.
  static absl::StatusOr<std::shared_ptr<const TlsContext>> ForClient(
      const std::string& ca_file, const std::string& cert_file = "",
      const std::string& key_file = "");

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  bool is_server() const { return server_; }
  ssl_ctx_st* native() const { return ctx_; }

 private:
  TlsContext(ssl_ctx_st* ctx, bool server) : ctx_(ctx), server_(server) {}
  ssl_ctx_st* ctx_;
  bool server_;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_TLS_H_
