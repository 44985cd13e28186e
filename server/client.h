// File: server/client.h
//
// A replication client: the relay's connection to its source
// (server/source.h) and the client of binlog_server's tests and
// benchmarks. Connects, authenticates with
// mysql_native_password or caching_sha2_password (following an auth
// switch), optionally over TLS (the SSLRequest upgrade, verifying the
// server's certificate), runs simple queries and reads a binlog dump
// packet by packet.
//
// Thread safety: not thread-safe (one client per thread).

#ifndef BINLOG_SERVER_CLIENT_H_
#define BINLOG_SERVER_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "io/socket.h"
#include "io/tls.h"

namespace binlog {
namespace server {

struct ClientReply {
  enum Kind { kOk, kError, kResultSet, kEof, kEvent, kOther } kind = kOther;
  uint16_t error_code = 0;
  std::string message;  // the error message
  // The first kMaxRows rows of a result set (the rest are read and
  // dropped: a server cannot make the client hold more).
  static constexpr size_t kMaxRows = 1024;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string event;  // kEvent: the event bytes (after the 0x00 byte)
  bool need_ack = false;  // semi-sync: the server asked for an ack
};

// TLS for Connect: a client context (io::TlsContext::ForClient: the CA the
// server's certificate must chain to, maybe a client certificate) and the
// host name or IP address the certificate must name ("": not checked).
struct ClientTls {
  std::shared_ptr<const io::TlsContext> context;
  std::string verify_host;
};

class ReplicationClient {
 public:
  // Connects and authenticates. `plugin` is the plugin the client claims
  // in its handshake response (mysql_native_password or
  // caching_sha2_password answer; any other name sends a token of neither);
  // an auth switch is followed. caching_sha2_password's full
  // authentication sends the password in clear when `secure` (a unix
  // socket) or over TLS, RSA-encrypted with the server's public key
  // otherwise. With `tls`, the connection is upgraded to TLS before the
  // credentials are sent: FailedPrecondition if the server does not offer
  // it, Unavailable if the TLS handshake fails (a certificate that does
  // not verify, among others). Error replies come back as PermissionDenied
  // / FailedPrecondition with the server's code and message in the text.
  // `public_key_request` (MySQL clients' --get-server-public-key): whether
  // the RSA exchange over a plaintext TCP connection is allowed; false
  // makes it PermissionDenied instead (a server's key that nothing
  // verifies would hand the password to whoever answers). `timeout`: how
  // long each step may wait for the server (a reply, a write, the TLS
  // handshake), in Connect and in the queries and commands that follow;
  // DeadlineExceeded after it.
  static absl::StatusOr<ReplicationClient> Connect(
      io::Socket sock, const std::string& user, const std::string& password,
      const std::string& plugin = "mysql_native_password", bool secure = false,
      const ClientTls* tls = nullptr, bool public_key_request = true,
      absl::Duration timeout = absl::Seconds(30));

  // Runs a query; the reply (OK, error or result set).
  absl::StatusOr<ClientReply> Query(const std::string& sql);
  // Sends a raw command payload (sequence id 0).
  absl::Status SendCommand(const std::string& payload);
  // COM_REGISTER_SLAVE announcing `host`:`port` as server `server_id`
  // replicating from `source_id`; the server's error as
  // FailedPrecondition.
  absl::Status Register(uint32_t server_id, const std::string& host, uint16_t port,
                        uint32_t source_id = 0);
  // COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID (with the set's Previous_gtids
  // encoding); then read the stream with Read().
  absl::Status Dump(const std::string& file, uint32_t position, uint16_t flags,
                    uint32_t server_id = 100);
  absl::Status DumpGtid(const std::string& gtid_data, uint16_t flags,
                        uint32_t server_id = 100);
  // The next packet of a dump: kEvent, kEof (non-blocking dump's end) or
  // kError. DeadlineExceeded if nothing came before the deadline.
  absl::StatusOr<ClientReply> Read(absl::Time deadline);

  // Semi-sync dumps: after `SET @rpl_semi_sync_slave=1` to a source with
  // semi-sync, every event packet carries the semi-sync header, which
  // Read() strips (ClientReply::need_ack); a packet without it is
  // DataLoss, as servers' replicas refuse it.
  void set_semisync(bool on) { semisync_ = on; }
  // Acknowledges receipt up to `position` of `file`.
  absl::Status SendAck(uint64_t position, const std::string& file);

  // True when bytes already received wait in the client's buffer (the
  // next Read returns without a system call while they hold a whole
  // packet): a relay groups its fdatasync and acks at the ends of bursts.
  bool buffered() const { return buf_pos_ < buf_.size(); }
  // The largest packet (reassembled) Read accepts; a larger one is
  // ResourceExhausted and the connection is unusable. Default 1 GiB + 64 KiB,
  // the largest event the library accepts plus the packet's own header.
  void set_max_packet(size_t bytes) { max_packet_ = bytes; }

  io::Socket& socket() { return sock_; }

 private:
  explicit ReplicationClient(io::Socket s) : sock_(std::move(s)) {}
  absl::Status ReadPacket(std::string* out, absl::Time deadline);
  absl::Status WritePacket(const std::string& payload);
  // Exactly n bytes, through a read buffer (a dump is many small packets).
  absl::Status ReadFull(char* out, size_t n, absl::Time deadline);
  io::Socket sock_;
  std::string buf_;
  size_t buf_pos_ = 0;
  uint8_t seq_ = 0;
  uint32_t caps_ = 0;
  bool semisync_ = false;
  size_t max_packet_ = (size_t{1} << 30) + (64 << 10);
  absl::Duration timeout_ = absl::Seconds(30);
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_CLIENT_H_
