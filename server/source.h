// File: server/source.h
//
// SourceStream: a relay's connection to its source, a MySQL-protocol
// primary (MariaDB 10.11, MySQL 8.0/8.4, or another binlog_server). It
// connects and authenticates as a replica, sets the session a replica of
// the source's flavor sets, registers (COM_REGISTER_SLAVE), starts a dump
// and hands over the events one by one, acknowledging semi-sync
// transactions when told to.
//
// What the dump asks for, by flavor:
//   MariaDB: @master_binlog_checksum = the source's binlog_checksum,
//     @mariadb_slave_capability=4 (GTIDs), the heartbeat period, and for a
//     GTID start @slave_connect_state + @slave_gtid_strict_mode=1, then
//     COM_BINLOG_DUMP with BINLOG_SEND_ANNOTATE_ROWS_EVENT, so that every
//     event of the source's files arrives (a dump without it leaves
//     Annotate_rows out, and a copy would have holes).
//   MySQL: @master_binlog_checksum, @master_heartbeat_period and
//     @source_heartbeat_period, then COM_BINLOG_DUMP (file and position)
//     or COM_BINLOG_DUMP_GTID (the GTID set already held).
// Semi-sync: with SourceOptions::semisync and a source that has semi-sync
// (its rpl_semi_sync_master_enabled or rpl_semi_sync_source_enabled
// variable exists, on or off), the stream announces itself a semi-sync
// replica (@rpl_semi_sync_slave=1), as a replica with
// rpl_semi_sync_slave_enabled does; the source then puts the semi-sync
// header on every event packet, and SourceEvent::need_ack marks those it
// waits on while its semi-sync is on; Ack acknowledges everything up to a
// position (one ack covers all before it). An event packet without the
// header is then DataLoss (as servers' replicas refuse it).
//
// What arrives is described in tests/compat/mariadb_source_test.cc: fake
// Rotates (artificial, log_pos 0) open each file of the stream, the active
// file's Format_description comes with its in-use flag cleared, a GTID
// start resends the file's header events and stands an artificial
// Gtid_list where skipped groups end, heartbeats arrive when idle. The
// stream hands all of them over as they are; the caller (a mirror of the
// source's files) decides what it stores.
//
// Thread safety: thread-compatible (one receiving thread).
// Errors: Unavailable when the source cannot be reached or the connection
// drops (a relay reconnects); PermissionDenied for refused credentials;
// FailedPrecondition for an error reply to the dump (the source's code and
// message in the text: a purged position, a GTID the source lacks);
// DataLoss for a malformed packet; ResourceExhausted for a packet over
// SourceOptions::max_packet; DeadlineExceeded from Next when nothing came
// before the deadline (heartbeats arrive every heartbeat_period while the
// source is alive).

#ifndef BINLOG_SERVER_SOURCE_H_
#define BINLOG_SERVER_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"
#include "io/socket.h"
#include "server/client.h"

namespace binlog {
namespace server {

struct SourceOptions {
  // The source: a host name or IP address and its port, or a unix socket
  // path (host starting with '/', port ignored).
  std::string host;
  uint16_t port = 3306;
  std::string user;
  std::string password;
  // TLS to the source (nullptr: none). The certificate is checked against
  // tls->verify_host.
  const ClientTls* tls = nullptr;
  // The source's flavor; unset: from its version string (MariaDB's says
  // "MariaDB"; anything else is taken for MySQL).
  std::optional<LogFlavor> flavor;
  // This relay's server id as the source sees it (SHOW SLAVE HOSTS); it
  // must differ from the source's and from every other replica's. While an
  // older connection of the same id still looks alive to it, a MariaDB
  // 10.11 source with semi-sync on refuses a new dump (FailedPrecondition,
  // error 4052) or sends it nothing (DeadlineExceeded from Next): a relay
  // treats both as a failed connect and retries.
  uint32_t server_id = 0;
  // What COM_REGISTER_SLAVE reports (the relay's own listening address).
  std::string report_host;
  uint16_t report_port = 0;
  // The heartbeat period the dump asks for; Next's callers use a deadline
  // of a few periods to notice a dead source.
  absl::Duration heartbeat_period = absl::Seconds(1);
  // Be a semi-sync replica of a source that has semi-sync (see the file
  // comment).
  bool semisync = true;
  // caching_sha2_password's full authentication over plaintext TCP: ask
  // the source for its RSA public key (nothing verifies it: whoever
  // answers gets the password). Off: such a source needs TLS (or a unix
  // socket, or the user cached on the source).
  bool get_source_public_key = false;
  // The largest packet accepted (see ReplicationClient::set_max_packet).
  size_t max_packet = (size_t{1} << 30) + (64 << 10);
  // How long the connect (TCP: a host that is down or drops the SYNs) and
  // then each step of the handshake, the session setup and the dump's
  // start may wait for the source; Start fails with Unavailable or
  // DeadlineExceeded after it. A source that accepts and never answers
  // fails Start after it too.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Called with the connection's socket before it connects: a caller that
  // must be able to cancel Start from another thread keeps an
  // io::ShutdownHandle of it (the connect, the handshake and the setup
  // are then interrupted).
  std::function<void(const io::Socket&)> on_connect;
};

// Where a dump starts. MariaDB: a GTID position (gtid, "0-1-100,1-2-7";
// "" with an empty file starts at the source's first GTID-tracked event)
// or a file and position. MySQL: the GTID set already held (gtid, the text
// form; the dump sends it encoded) or a file and position.
struct DumpStart {
  std::string file;
  uint64_t position = 4;
  std::optional<std::string> gtid;  // set: a GTID dump
  // false: not a semi-sync replica for this dump even with
  // SourceOptions::semisync (a dump read only for its first event).
  bool semisync = true;
};

struct SourceEvent {
  std::string bytes;      // the whole event, header to checksum
  bool need_ack = false;  // semi-sync: the source waits for an ack
};

class SourceStream {
 public:
  // Connects, authenticates, sets up the session and starts the dump. The
  // connect and each step (handshake, each query, the registration) time
  // out after SourceOptions::connect_timeout.
  static absl::StatusOr<SourceStream> Start(const SourceOptions& options,
                                            const DumpStart& start);
  // The same, with the dump's start chosen once the source is known: after
  // the session is set up and the source registered, `choose` is called
  // with the stream (its source_server_id(), flavor(), source_version())
  // and returns where the dump starts; its error ends Start.
  using ChooseStart = std::function<absl::StatusOr<DumpStart>(const SourceStream&)>;
  static absl::StatusOr<SourceStream> StartChosen(const SourceOptions& options,
                                                  const ChooseStart& choose);

  SourceStream(SourceStream&&) = default;
  SourceStream& operator=(SourceStream&&) = default;

  // The next event. DeadlineExceeded if none came before `deadline`;
  // OutOfRange if the source ended the dump (an EOF packet: it is shutting
  // down, or dropped this dump for a newer one of the same server id).
  absl::StatusOr<SourceEvent> Next(absl::Time deadline);
  // True when the next event is already received (see
  // ReplicationClient::buffered): a relay syncs and acks at a burst's end.
  bool buffered() const { return client_.buffered(); }
  // Acknowledges every transaction up to `position` of `file` (the
  // log_pos of the last event the relay made durable). FailedPrecondition
  // if the stream is not a semi-sync one.
  absl::Status Ack(const std::string& file, uint64_t position);

  // Wakes a Next blocked in another thread (it then fails with
  // Unavailable) and ends the stream: reads see the connection closed.
  // Safe from any thread while the stream exists.
  void Interrupt() { client_.socket().ShutdownRead(); }

  // Whether the stream is a semi-sync one (see the file comment).
  bool semisync() const { return semisync_; }
  // The source's flavor (given or detected).
  LogFlavor flavor() const { return flavor_; }
  // The source's binlog_checksum (true: CRC32).
  bool checksums() const { return checksums_; }
  // The source's server version string (from its handshake and
  // SELECT VERSION()).
  const std::string& source_version() const { return version_; }
  // The source's @@server_id (0 if it has none): the id in the header of
  // the Format_description of every file it writes. A relay tells a
  // failover (another server) from a reconnect by it.
  uint32_t source_server_id() const { return server_id_; }

 private:
  explicit SourceStream(ReplicationClient c) : client_(std::move(c)) {}

  ReplicationClient client_;
  bool semisync_ = false;
  bool checksums_ = true;
  LogFlavor flavor_ = LogFlavor::kMariaDB;
  std::string version_;
  uint32_t server_id_ = 0;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_SOURCE_H_
