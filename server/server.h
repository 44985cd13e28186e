// File: server/server.h
//
// Server: serves a binlog to replicas over the MySQL replication protocol
// (what `binlog_server` runs). One thread per connection: handshake
// (caching_sha2_password and mysql_native_password, auth.h), the connect-time
// queries (queries.h), COM_REGISTER_SLAVE, and a dump (COM_BINLOG_DUMP by
// file and position, COM_BINLOG_DUMP_GTID by MySQL GTID set, or MariaDB's
// GTID connect through @slave_connect_state) that streams the log: the fake
// Rotate, the Format_description, then the events as stored, following
// rotations, with heartbeats when idle.
//
// Three sources of the log (server/log_view.h):
//   - files at rest (neither ServerOptions::live nor mirror): the log in `dir`,
//     possibly written by another process. A second process cannot
//     Binlog::Open a log (one writer per log, `<basename>.lock`), so the
//     server reads the files with Reader::OpenDirectory and follows their
//     growth by reopening a reader where the last one ended, every
//     `poll_interval` while idle. It then sees what the writer has
//     written, including transactions that are not yet fdatasync'ed (as
//     ReaderVisibility::kAfterWrite): a power loss on the writer's host
//     can take back what a replica already received. Events are forwarded
//     only whole and with a valid CRC32 (a half-written event at the tail
//     is waited for, not sent).
//   - a live Binlog in this process (ServerOptions::live): tailing readers
//     (Binlog::NewReader / NewGtidReader / NewMariaGtidReader) that wait on
//     the published end and see only what the log publishes.
//   - a relay's copy in this process (ServerOptions::mirror, what
//     binlog_server --source serves): the MirrorLog's tailing readers
//     (binlog/mirror_log.h), which read only below the copy's durable
//     published end, so a downstream replica never receives a
//     transaction the copy has not fdatasync'ed, and get what the relay
//     receives while they read. SHOW BINARY LOG STATUS, SHOW BINARY LOGS
//     and the GTID variables answer from the copy's published state.
//     Semi-sync from a copy: served asynchronously unless `acks` is set
//     (binlog_server sets none: the copy acknowledges to its own source
//     after its fdatasync, and no committer waits on downstream acks).
//
// TLS (ServerOptions::ssl_cert/ssl_key): CLIENT_SSL is advertised, and a
// client whose first reply is an SSLRequest is upgraded to TLS (TLS 1.2 at
// least) within the handshake deadline; its full handshake response then
// comes over TLS, with the sequence ids going on as MySQL's do. Every later
// read and write of the session (queries, dumps, heartbeats, semi-sync
// acks, the shutdown error) goes through the TLS stream with the same
// deadlines. With require_secure_transport, plaintext TCP is refused with
// 3159; unix-socket connections count as secure, as in MySQL.
//
// Replicas (server/replica_registry.h): a dump from a session that
// registered (COM_REGISTER_SLAVE) under the dump's server id makes the
// server remember that replica, by server id and @replica_uuid /
// @slave_uuid, with the end of the last event sent to it, after it
// disconnects too, until ServerOptions::replica_expire_after has passed;
// at most max_replicas of them, and max_replica_uuids_per_server_id with
// one server id (a new one beyond either gets 1236 and is logged), until
// an operator forgets one (ForgetReplica). A dump with a server id (not 0) ends every older dump with the
// same server id, as MySQL and MariaDB do: the older one gets 1236 (MySQL
// flavor) or 4052 (MariaDB's ER_SLAVE_SAME_ID) within a heartbeat slice.
//
// Errors a replica receives: as the servers send them (protocol.h codes):
// 1045 wrong password, 1236 positions or files the log does not have or
// purged, 1789 / 1885 for MySQL GTID sets needing purged transactions or
// holding transactions the log never had, 1236 for MariaDB GTID positions,
// 1053 at shutdown, 1235 for statements it does not answer. Malformed
// packets end that connection only; a packet past the limits
// (ServerOptions::max_handshake_packet, max_packet) gets 1153 first, as
// MySQL's max_allowed_packet; 1040 when the connection limits are reached;
// 1041 for session variables past their limits.
//
// Thread safety: thread-safe. Run() blocks; Shutdown() may be called from
// any thread (or a signal-watching thread) and makes Run() return after
// every session has ended.
// Lifetime: `live` or `mirror`, when set, must outlive the Server.

#ifndef BINLOG_SERVER_SERVER_H_
#define BINLOG_SERVER_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "sync/ack_tracker.h"
#include "server/auth.h"
#include "server/log_view.h"
#include "server/queries.h"
#include "server/replica_registry.h"
#include "io/socket.h"
#include "io/tls.h"

namespace binlog {
namespace server {

struct ServerOptions {
  std::string dir;
  std::string basename = "binlog";
  // user -> plugin and authentication_string (auth.h; LoadUsersFile
  // reads binlog_server's --users file).
  UserMap users;
  // caching_sha2_password's RSA key pair, for the full authentication over
  // a plaintext transport (the public key goes to clients that ask for
  // it). nullptr: a 2048-bit pair generated when first needed, in memory
  // only (binlog_server generates it at startup).
  std::shared_ptr<const RsaKeyPair> rsa_keys;
  // 0: the server_id of the log's first Format_description.
  uint32_t server_id = 0;
  // The in-process log to serve instead of the files at rest.
  Binlog* live = nullptr;
  // Or a relay's copy in this process (`dir` and `basename` must be the
  // copy's). At most one of live and mirror.
  MirrorLog* mirror = nullptr;
  // Files at rest: how often an idle dump looks for growth.
  absl::Duration poll_interval = absl::Milliseconds(5);
  // Semi-synchronous replication: replicas that announce it
  // (@rpl_semi_sync_slave / @rpl_semi_sync_replica) get the semi-sync
  // header on every event packet, with the ack flag on each event that
  // ends a transaction, and their acks ((file number, end offset) of the
  // acknowledged event; the replica id is the dump's server_id) go to
  // `acks` (sync/ack_tracker.h), on which the writer's threads wait. The
  // server reports rpl_semi_sync_master_enabled=ON. Must outlive the
  // Server. nullptr: no semi-sync (replicas asking for it are served
  // asynchronously, as by a source with semi-sync off).
  sync::AckTracker* acks = nullptr;
  // A semi-sync dump with nothing to send while the ack of a transaction
  // it sent is due waits for the log and looks at the replica's socket for
  // acks at this interval (one thread serves both; the writer's committers
  // wait on those acks); with nothing due it waits without slices.
  // Shorter: lower commit latency, more wake-ups while acks are due. > 0.
  // serve_bench --relay=semisync: at 64 committers the writer kept 0.46 of
  // its tps with 200 us and 0.56 with 50 us, the copy on a tmpfs
  // (benchmarks/README.md, serve_bench).
  absl::Duration ack_poll = absl::Microseconds(50);
  // Reader window for dumps.
  size_t read_buffer = 1 << 20;

  // --- Transport security (binlog_server's --ssl_cert, --ssl_key,
  // --ssl_ca, --require_secure_transport; tools/README.md, "Security"). --
  //
  // PEM files: the server's certificate (chain) and its private key. Both
  // set: the server offers TLS (CLIENT_SSL). A file that cannot be read or
  // parsed, a key that does not match the certificate, or a certificate
  // outside its validity dates makes Create() fail (InvalidArgument). Both
  // empty: no TLS; a client that asks for it gets ER_HANDSHAKE_ERROR (1043).
  std::string ssl_cert;
  std::string ssl_key;
  // CA certificates (PEM): a client certificate, when a client presents
  // one, must chain to one of them (the TLS handshake fails otherwise);
  // clients without a certificate are accepted. Needs ssl_cert/ssl_key.
  std::string ssl_ca;
  // Refuses plaintext TCP connections: a client that did not upgrade to
  // TLS gets ER_SECURE_TRANSPORT_REQUIRED (3159, SQLSTATE HY000) in answer
  // to its handshake response, before its credentials are checked (so
  // plaintext offers no password oracle), and is disconnected. Unix-socket
  // connections count as secure (as in MySQL). Without TLS configured only
  // unix-socket clients can connect.
  bool require_secure_transport = false;

  // --- Limits: what one client can make the server hold or do. ----------
  // (binlog_server's flags of the same names; tools/README.md, "Security
  // and limits".)
  //
  // At most this many authenticated sessions at once; one more gets
  // ER_CON_COUNT_ERROR (1040) right after its authentication.
  int max_connections = 256;
  // At most this many connections still in the handshake (accepted, not
  // yet authenticated); more are refused with 1040 at accept. They do not
  // count toward max_connections, so silent sockets cannot lock replicas
  // out: they can only fill these slots, each for at most
  // handshake_timeout.
  int max_unauthenticated_connections = 64;
  // The whole handshake (greeting to authentication) must end within this
  // (MySQL's connect_timeout, 10 s by default); the connection is closed
  // otherwise. An authenticated connection idle for idle_timeout is
  // dropped.
  absl::Duration handshake_timeout = absl::Seconds(10);
  absl::Duration idle_timeout = absl::Hours(8);
  // A send that makes no progress for this long ends the dump.
  absl::Duration write_timeout = absl::Seconds(60);
  // Largest packet before authentication (a handshake response is a few
  // hundred bytes; MySQL accepts at most 64 KiB of connection attributes)
  // and after it (commands; the largest a replica sends is a GTID set).
  // A longer packet gets ER_NET_PACKET_TOO_LARGE (1153) and the connection
  // is closed, as MySQL does past max_allowed_packet. Buffers grow as the
  // bytes arrive, not from the length a header claims. max_packet also
  // bounds a SELECT's answer (column names and values: a statement may
  // name a large user variable many times); past it the statement gets
  // 1153 and the session goes on.
  size_t max_handshake_packet = 64 << 10;
  size_t max_packet = 4 << 20;
  // Longest COM_QUERY statement; a longer one gets 1153 (the session
  // goes on).
  size_t max_query_length = 256 << 10;
  // A session holds at most this many user variables (SET @v = ...) of at
  // most this many bytes in all (names and values); a SET past either gets
  // ER_OUT_OF_RESOURCES (1041) and changes nothing.
  size_t max_session_variables = 64;
  size_t max_session_variable_bytes = 256 << 10;
  // After a failed authentication the server waits this long before it
  // answers 1045 and closes; the connection keeps its unauthenticated slot
  // meanwhile, so password guessing is bounded to
  // max_unauthenticated_connections / auth_failure_delay attempts per
  // second (64 per second by default). A client that leaves in the middle
  // of an authentication (after an answer that may have told it whether
  // its guess was right, as caching_sha2_password's fast path does) holds
  // its slot as long.
  absl::Duration auth_failure_delay = absl::Seconds(1);

  // --- The replicas remembered (ReplicaPositions; binlog_server's
  // --max_replicas and --replica_expire_seconds; server/replica_registry.h).
  //
  // At most this many replicas (by server id and UUID) are remembered; a
  // dump of a new one beyond them, after the expired ones are forgotten,
  // gets ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) naming the limit, and
  // the refusal is logged. Remembered replicas are never forgotten to make
  // room: a replication account dumping under many server ids fills the
  // registry and then is refused, it cannot push real replicas out.
  // Create() refuses 0 (InvalidArgument).
  size_t max_replicas = 1000;
  // At most this many of them with one server id (different @replica_uuid
  // values): a replication account setting a new UUID for each dump under
  // one server id is refused (1236, logged) as by a full registry once
  // this many are remembered, and holds no more. Create() refuses 0.
  size_t max_replica_uuids_per_server_id = 4;
  // A disconnected replica is forgotten (and holds no file for a
  // retention policy) this long after its last dump ended. Zero: never;
  // Create() refuses a negative one (InvalidArgument).
  absl::Duration replica_expire_after = absl::Hours(7 * 24);
  // Where the server reports what an operator should know (a replica
  // refused by max_replicas, replicas forgotten), one line each, without a newline; nullptr:
  // not reported. binlog_server: standard error.
  std::function<void(const std::string&)> log;
  // The clock replicas' inactivity is measured with; nullptr: absl::Now().
  std::function<absl::Time()> now;

  // Tests: called on a session's thread as a scan of the log's state (for
  // the statements that report it) begins.
  std::function<void()> on_state_scan;
};

// Counters (tests, benchmarks).
struct ServerStats {
  uint64_t connections = 0;
  uint64_t auth_failures = 0;
  AuthStats auth;  // the authenticator's counters (auth.h)
  uint64_t dumps = 0;
  uint64_t events_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t heartbeats = 0;
  uint64_t semisync_acks = 0;  // ack packets received and passed on
  // TLS handshakes completed and failed (bad ClientHello, certificate
  // refused, timeout).
  uint64_t tls_handshakes = 0;
  uint64_t tls_failures = 0;
  // Scans of the log's state (GTID sets, files, end of the newest file)
  // for statements that report it, and statements that waited for a scan
  // in progress instead of starting one.
  uint64_t state_scans = 0;
  uint64_t state_waits = 0;
  // CPU time of the session threads that have ended (benchmarks: the
  // server's cost per replica).
  uint64_t session_cpu_ns = 0;
};

class Server {
 public:
  // Reads the log's first Format_description (flavor, server id,
  // checksums). FailedPrecondition when there is no log in `dir`.
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& o);
  ~Server();

  // Serves connections on `listener` (from io::Socket::ListenTcp or
  // ListenUnix) until Shutdown(). May be called for several listeners from
  // several threads.
  void Run(io::Socket* listener);
  // Ends every session promptly (dumps and idle sessions get
  // ER_SERVER_SHUTDOWN; connections in the handshake or in a failed
  // login's delay are woken and closed) and makes Run() return.
  // Idempotent.
  void Shutdown();
  // Waits until every session thread has ended (after Shutdown()).
  void Join();

  ServerStats stats() const;

  // The downstream replicas this server remembers (server/
  // replica_registry.h: from their first dump, by server id and UUID,
  // connected or not, until they expire): where each one's dumps got to
  // (the end of the last event sent; empty file: none sent yet, then it
  // holds nothing), in order of server id, then UUID. What a retention
  // policy of the log follows (server/copy_retention.h), in memory
  // (CopyRetention's replicas_file keeps them across restarts).
  using ReplicaPosition = RememberedReplica;
  std::vector<ReplicaPosition> ReplicaPositions() const;
  // Remembers a disconnected replica at r.file:r.position, active at
  // r.last_active (a retention policy restoring what it saved before a
  // restart). false (nothing changes) for a replica already remembered,
  // one without a file, or when max_replicas are remembered.
  bool RememberReplica(const ReplicaPosition& r);
  // Forgets the replicas disconnected for replica_expire_after; returns
  // them.
  std::vector<ReplicaPosition> ForgetExpiredReplicas();
  // An operator forgets the disconnected replica (server_id, uuid: the
  // UUID as ReplicaPositions lists it, "" for none) at once: it holds no
  // file from now on (a retention policy's next pass saves the list
  // without it), and the server logs it. NotFound if it is not
  // remembered; FailedPrecondition while a dump of it is in progress.
  absl::Status ForgetReplica(uint32_t server_id, const std::string& uuid);
  // Ends every dump whose replica's last sent position is in a file the
  // log numbers below `file_number`, or that has sent nothing yet and
  // starts below it (a dump is known from its start, before it has read
  // or sent anything: a GTID dump, whose start file its reader finds,
  // counts as below until it has found it): each gets
  // ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) with `why` at its next
  // send and is disconnected. For a purge an operator limit forces past
  // slow replicas. Returns how many.
  int EndDumpsBefore(uint64_t file_number, const std::string& why);

  LogFlavor flavor() const { return flavor_; }
  // The handshake's version string: "5.5.5-10.11.19-MariaDB-log" for
  // MariaDB-flavor logs (MariaDB replicas require the 5.5.5- prefix form),
  // "8.0.36-log" for MySQL-flavor ones.
  const std::string& version() const { return version_; }
  void set_port(uint16_t port) { port_ = port; }

 private:
  friend class Session;
  explicit Server(const ServerOptions& o);
  // A session's socket, woken (its reading side shut) at Shutdown().
  void Register(io::Socket* s);
  void Unregister(io::Socket* s);
  // Moves a session from the unauthenticated count to the authenticated
  // one; false (nothing changed) when max_connections are in use.
  bool Authenticated();
  // Waits `d`, or less if Shutdown() comes first.
  void WaitUnlessShutdown(absl::Duration d);
  // The registered replicas (SHOW REPLICAS): COM_REGISTER_SLAVE from
  // `session` registers `r` (replacing any replica of the same server id,
  // and this session's earlier registration, as MySQL does); the
  // session's end removes what it registered; a semi-sync ack updates it.
  void RegisterReplica(uint32_t session, const ReplicaFacts& r);
  void UnregisterReplica(uint32_t session);
  // A dump of `session` begins for the replica (server_id, uuid):
  // remembered if `remember` (the session registered under server_id),
  // and every older dump with the same server id (not 0) is ended.
  // ResourceExhausted (nothing changes) when max_replicas are remembered,
  // or max_replica_uuids_per_server_id with its server id; the refusal is
  // logged, as are the expired replicas forgotten to make room.
  absl::Status BeginReplicaDump(uint32_t session, uint32_t server_id, const std::string& uuid,
                                bool remember);
  // The dump BeginReplicaDump began has ended.
  void EndReplicaDump(uint32_t session, uint32_t server_id, const std::string& uuid,
                      bool remembered);
  // A dump of `session` (registered as `registered_id`, if it did; of the
  // remembered replica `remembered`, if it is) got to (file_no, file,
  // position). REQUIRES: mu_ held.
  void NoteSentLocked(uint32_t session, std::optional<uint32_t> registered_id,
                      const std::optional<std::pair<uint32_t, std::string>>& remembered,
                      uint64_t file_no, const std::string& file, uint64_t position);
  // A dump of `session` starts reading file `file_no` (0: not known yet),
  // before its first send records where it got to (NoteSentLocked).
  void NoteDumpFile(uint32_t session, uint64_t file_no);
  void ReplicaAcked(uint32_t session, uint32_t server_id, const std::string& file,
                    uint64_t position);
  absl::Status Init();
  // What queries report; `with_state`: also the GTID state, the files and
  // the end of the log (a scan of the newest file).
  ServerFacts Facts(bool with_state);
  // Facts(true), one scan at a time: a statement waits for a scan in
  // progress and then takes the result of the next one, which every
  // statement that arrived before it began shares. Answers are never
  // older than the statement; many clients cost one scan at a time.
  ServerFacts StateFacts();

  const ServerOptions options_;
  // Where the log is read (set by Init(), then constant).
  std::unique_ptr<LogView> view_;
  // The TLS context when ssl_cert/ssl_key are set.
  std::shared_ptr<const io::TlsContext> tls_;
  std::unique_ptr<Authenticator> auth_;  // set by Init()
  LogFlavor flavor_ = LogFlavor::kMySQL;
  uint32_t server_id_ = 1;
  bool checksums_ = true;
  std::string version_;
  uint16_t port_ = 0;
  std::atomic<bool> shutdown_{false};
  absl::Notification shutdown_note_;
  std::atomic<uint32_t> next_connection_id_{1};

  struct SessionThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  mutable std::mutex mu_;
  std::vector<SessionThread> threads_;  // guarded by mu_
  int active_ = 0;                    // authenticated sessions; guarded by mu_
  int unauthenticated_ = 0;           // sessions in the handshake; guarded by mu_
  std::set<io::Socket*> open_;            // guarded by mu_
  struct Registered {
    uint32_t session = 0;
    ReplicaFacts facts;
  };
  std::map<uint32_t, Registered> replicas_;  // by server id; guarded by mu_
  // The replicas remembered (ReplicaPositions); guarded by mu_.
  ReplicaRegistry registry_;
  // Dumps in progress (by session) with their server id, and the ones a
  // newer dump with the same server id ended; guarded by mu_.
  std::map<uint32_t, uint32_t> dump_ids_;
  std::set<uint32_t> superseded_dumps_;
  // max_replicas refusals: when the last was logged, and how many came
  // since without a line of their own; guarded by mu_.
  absl::Time refusal_logged_ = absl::InfinitePast();
  uint64_t refusals_unlogged_ = 0;
  // Dumps (by session) in progress: the file number their replica has
  // reached (0: not known yet), and the sessions EndDumpsBefore ended
  // with the message to send; guarded by mu_.
  std::map<uint32_t, uint64_t> dump_files_;
  std::map<uint32_t, std::string> ended_dumps_;
  ServerStats stats_;                 // guarded by mu_

  // StateFacts(). Lock order: facts_mu_, then mu_.
  std::mutex facts_mu_;
  std::condition_variable facts_cv_;
  bool facts_scanning_ = false;  // guarded by facts_mu_
  uint64_t facts_tickets_ = 0;   // statements that asked; guarded by facts_mu_
  uint64_t facts_served_ = 0;    // tickets facts_ answers; guarded by facts_mu_
  ServerFacts facts_;            // guarded by facts_mu_
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_SERVER_H_
