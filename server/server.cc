#include "server/server.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"
#include "io/codec.h"
#include "server/log_view.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
// Packet buffers grow by at most this much per read, so a header claiming
// a large packet costs memory only as its bytes arrive.
constexpr size_t kReadChunk = 64 << 10;
// The largest heartbeat period MySQL accepts (CHANGE REPLICATION SOURCE
// ... SOURCE_HEARTBEAT_PERIOD: 0 to 4294967 seconds), in nanoseconds as
// replicas send @master_heartbeat_period; a non-zero period is at least
// 1 ms (MySQL's resolution), so no value makes a heartbeat flood.
constexpr double kMaxHeartbeatNs = 4294967e9;
// A CRC-failing or torn event at the tail of a file another process is
// writing is waited for this long before it is reported as damage.
constexpr absl::Duration kTornGrace = absl::Seconds(5);

std::string FilePath(const ServerOptions& o, uint64_t n) {
  return o.dir + "/" + BinlogFileName(o.basename, n);
}

}  // namespace

// One client connection.
class Session {
 public:
  Session(Server* srv, io::Socket sock, uint32_t id, absl::Time handshake_end)
      : srv_(srv),
        o_(srv->options_),
        sock_(std::move(sock)),
        id_(id),
        handshake_end_(handshake_end) {}

  void Run() {
    srv_->Register(&sock_);
    Serve();
    srv_->UnregisterReplica(id_);
    srv_->Unregister(&sock_);
  }

  // Whether the client authenticated (and counts toward max_connections).
  bool authenticated() const { return authenticated_; }
  // Whether the connection is secure transport: TLS, or a unix socket
  // (which MySQL counts as secure too). caching_sha2_password's full
  // authentication then takes the password in clear instead of
  // RSA-encrypted.
  bool secure() const { return sock_.tls() || sock_.is_unix(); }

 private:
  void Serve() {
    if (!Handshake()) return;
    while (!srv_->shutdown_.load()) {
      std::string p;
      absl::Status s = ReadCommand(&p);
      if (!s.ok()) {
        if (absl::IsCancelled(s)) SendShutdown();
        if (absl::IsResourceExhausted(s)) SendTooLarge(o_.max_packet);
        return;
      }
      if (p.empty()) {
        SendMalformed();
        return;
      }
      const uint8_t cmd = static_cast<uint8_t>(p[0]);
      switch (cmd) {
        case kComQuit:
          return;
        case kComPing:
        case kComInitDb:
          if (!Send(EncodeOk())) return;
          break;
        case kComQuery:
          if (p.size() - 1 > o_.max_query_length) {
            if (!SendErr(kErNetPacketTooLarge, "08S01",
                         absl::StrCat("Query of ", p.size() - 1,
                                      " bytes is longer than max_query_length (",
                                      o_.max_query_length, ")"))) {
              return;
            }
            break;
          }
          if (!Query(absl::string_view(p).substr(1))) return;
          break;
        case kComRegisterSlave: {
          auto r = ParseRegisterSlave(p);
          if (!r.ok()) {
            SendMalformed();
            return;
          }
          ReplicaFacts rep;
          rep.server_id = r->server_id;
          rep.host = r->host.empty() ? sock_.peer_address() : r->host;
          rep.port = r->port;
          rep.source_id = r->master_id != 0 ? r->master_id : srv_->server_id_;
          std::optional<std::string> uuid = Var("replica_uuid");
          if (!uuid.has_value()) uuid = Var("slave_uuid");
          if (uuid.has_value()) rep.uuid = uuid->substr(0, 64);
          srv_->RegisterReplica(id_, rep);
          registered_id_ = rep.server_id;
          if (!Send(EncodeOk())) return;
          break;
        }
        case kComBinlogDump: {
          auto d = ParseBinlogDump(p);
          if (!d.ok()) {
            SendMalformed();
            return;
          }
          Count(&ServerStats::dumps, 1);
          if (!BeginDump(d->server_id)) return;
          const bool more = Dump(*d);
          EndDump();
          if (!more) return;
          break;
        }
        case kComBinlogDumpGtid: {
          auto d = ParseBinlogDumpGtid(p);
          if (!d.ok()) {
            SendMalformed();
            return;
          }
          Count(&ServerStats::dumps, 1);
          if (!BeginDump(d->server_id)) return;
          const bool more = DumpGtid(*d);
          EndDump();
          if (!more) return;
          break;
        }
        default:
          if (!SendErr(kErUnknownCom, "08S01", "Unknown command")) return;
      }
    }
    if (srv_->shutdown_.load()) SendShutdown();
  }

  void Count(uint64_t ServerStats::*field, uint64_t n) {
    std::lock_guard<std::mutex> l(srv_->mu_);
    srv_->stats_.*field += n;
  }

  // --- packets ---------------------------------------------------------

  // Reads one packet (continuation packets appended) of at most `limit`
  // bytes: ResourceExhausted past it, before the bytes are read.
  absl::Status ReadPacket(std::string* out, absl::Time deadline, size_t limit) {
    out->clear();
    while (true) {
      char h[4];
      absl::Status s = sock_.ReadFull(h, 4, deadline);
      if (!s.ok()) return s;
      size_t len = static_cast<uint8_t>(h[0]) | (static_cast<uint8_t>(h[1]) << 8) |
                   (static_cast<size_t>(static_cast<uint8_t>(h[2])) << 16);
      seq_ = static_cast<uint8_t>(h[3]) + 1;
      if (len > limit - out->size()) return absl::ResourceExhaustedError("packet too large");
      for (size_t left = len; left > 0;) {
        const size_t k = std::min(left, kReadChunk);
        const size_t at = out->size();
        out->resize(at + k);
        s = sock_.ReadFull(out->data() + at, k, deadline);
        if (!s.ok()) return s;
        left -= k;
      }
      if (len < kMaxPacketPayload) return absl::OkStatus();
    }
  }

  // Waits for the next command: Cancelled at shutdown, DeadlineExceeded
  // after the idle timeout, ResourceExhausted past max_packet.
  absl::Status ReadCommand(std::string* out) {
    const absl::Time idle_end = absl::Now() + o_.idle_timeout;
    while (!sock_.WaitReadable(absl::Milliseconds(200))) {
      if (srv_->shutdown_.load()) return absl::CancelledError("shutdown");
      if (absl::Now() > idle_end) return absl::DeadlineExceededError("idle");
    }
    // Shutdown wakes readers by shutting the socket's reading side.
    if (srv_->shutdown_.load()) return absl::CancelledError("shutdown");
    absl::Status s = ReadPacket(out, absl::Now() + o_.handshake_timeout, o_.max_packet);
    if (s.ok()) seq_ = 1;  // responses to a command start at 1
    return s;
  }

  bool Send(absl::string_view payload) {
    std::string wire;
    FramePacket(payload, &seq_, &wire);
    return sock_.WriteAll(wire, absl::Now() + o_.write_timeout, &srv_->shutdown_).ok();
  }

  // ER_MALFORMED_PACKET, as a server answers a command it cannot parse.
  bool SendMalformed() {
    return SendErr(kErMalformedPacket, "HY000", "Malformed communication packet.");
  }
  bool SendErr(uint16_t code, absl::string_view state, absl::string_view msg) {
    return Send(EncodeErr(code, state, msg));
  }
  // ER_SERVER_SHUTDOWN, once per session.
  bool SendShutdown() {
    if (shutdown_sent_) return false;
    shutdown_sent_ = true;
    return SendErr(kErServerShutdown, "08S01", "Server shutdown in progress");
  }
  // ER_NET_PACKET_TOO_LARGE, MySQL's text for a packet past its
  // max_allowed_packet, naming our limit.
  bool SendTooLarge(size_t limit) {
    return SendErr(kErNetPacketTooLarge, "08S01",
                   absl::StrCat("Got a packet bigger than 'max_allowed_packet' bytes (",
                                limit, ")"));
  }

  // --- handshake -------------------------------------------------------

  // The handshake, within handshake_end_ as a whole. false: the
  // connection ends (the error, if any, was sent).
  bool Handshake() {
    absl::StatusOr<std::string> scramble = NewScramble();
    if (!scramble.ok()) {
      SendErr(kErHandshake, "08S01", "Bad handshake");
      return false;
    }
    // The plugin the greeting names: caching_sha2_password, MySQL 8.4's
    // default, for a MySQL-flavor log; mysql_native_password for MariaDB
    // replicas. Users of the other plugin get an auth switch.
    const AuthPlugin greeting = srv_->flavor_ == LogFlavor::kMariaDB
                                    ? AuthPlugin::kNativePassword
                                    : AuthPlugin::kCachingSha2Password;
    server::Handshake h;
    h.server_version = srv_->version_;
    h.connection_id = id_;
    h.scramble = *scramble;
    h.auth_plugin = AuthPluginName(greeting);
    if (srv_->tls_ != nullptr) h.capabilities |= kClientSsl;
    seq_ = 0;
    if (!Send(EncodeHandshake(h))) return false;
    std::string p;
    absl::Status s = ReadPacket(&p, handshake_end_, o_.max_handshake_packet);
    if (!s.ok()) return HandshakeFailed(s);
    if (!SecureTransport(&p)) return false;
    auto resp = ParseHandshakeResponse(p);
    if (!resp.ok()) {
      SendErr(kErHandshake, "08S01", "Bad handshake");
      return false;
    }
    caps_ = resp->capabilities & kServerCapabilities;
    // --- authentication (auth.h) ---
    AuthRequest req;
    req.user = resp->user;
    req.client_plugin = resp->auth_plugin;
    req.auth_response = resp->auth_response;
    req.scramble = *scramble;
    req.secure = secure();
    AuthPackets ch(this);
    s = srv_->auth_->Authenticate(req, greeting, &ch);
    if (!s.ok() && !absl::IsPermissionDenied(s)) {
      // The client left (or broke the exchange) mid-authentication: the
      // same delay, with its slot, before the connection ends. What it
      // saw may have answered its guess (caching_sha2_password's fast
      // path says perform_full_authentication to a wrong token), so
      // leaving must not make guessing cheaper than a 1045.
      srv_->WaitUnlessShutdown(o_.auth_failure_delay);
      return HandshakeFailed(ch.read_status());
    }
    if (!s.ok()) {
      Count(&ServerStats::auth_failures, 1);
      // The delay bounds guessing (the connection keeps its
      // unauthenticated slot meanwhile); shutdown cuts it short.
      srv_->WaitUnlessShutdown(o_.auth_failure_delay);
      SendErr(kErAccessDenied, "28000",
              absl::StrCat("Access denied for user '", resp->user.substr(0, 64),
                           "'@'localhost' (using password: ",
                           resp->auth_response.empty() ? "NO" : "YES", ")"));
      return false;
    }
    // --- end of authentication ---
    if (!srv_->Authenticated()) {
      SendErr(kErConCount, "08004", "Too many connections");
      return false;
    }
    authenticated_ = true;
    return Send(EncodeOk());
  }

  // The transport step of the handshake, given the client's first reply:
  // an SSLRequest upgrades the connection to TLS (within the handshake
  // deadline) and `*p` becomes the full handshake response read over TLS;
  // then require_secure_transport refuses a connection that is neither
  // TLS nor a unix socket. false: the connection ends (the error, if any,
  // was sent).
  bool SecureTransport(std::string* p) {
    if (IsSslRequest(*p)) {
      if (srv_->tls_ == nullptr) {
        SendErr(kErHandshake, "08S01",
                "SSL connection requested, but this server has no TLS configured "
                "(--ssl_cert, --ssl_key)");
        return false;
      }
      absl::Status s = sock_.StartTls(srv_->tls_, handshake_end_);
      Count(s.ok() ? &ServerStats::tls_handshakes : &ServerStats::tls_failures, 1);
      if (!s.ok()) return false;
      s = ReadPacket(p, handshake_end_, o_.max_handshake_packet);
      if (!s.ok()) return HandshakeFailed(s);
    }
    if (o_.require_secure_transport && !secure()) {
      SendErr(kErSecureTransportRequired, "HY000",
              "Connections using insecure transport are prohibited while "
              "--require_secure_transport=ON.");
      return false;
    }
    return true;
  }

  // The authentication's packets, within the handshake's deadline and
  // packet limit.
  class AuthPackets : public AuthChannel {
   public:
    explicit AuthPackets(Session* s) : s_(s) {}
    absl::Status Send(absl::string_view payload) override {
      return s_->Send(payload) ? absl::OkStatus() : absl::UnavailableError("send failed");
    }
    absl::StatusOr<std::string> Read() override {
      std::string p;
      read_status_ = s_->ReadPacket(&p, s_->handshake_end_, s_->o_.max_handshake_packet);
      if (!read_status_.ok()) return read_status_;
      return p;
    }
    const absl::Status& read_status() const { return read_status_; }

   private:
    Session* s_;
    absl::Status read_status_;
  };

  bool HandshakeFailed(const absl::Status& s) {
    if (absl::IsResourceExhausted(s)) {
      SendTooLarge(o_.max_handshake_packet);
    } else if (srv_->shutdown_.load()) {
      SendShutdown();
    }
    return false;
  }

  // --- queries ---------------------------------------------------------

  bool Query(absl::string_view sql) {
    // The log's GTID state and end cost a scan of the newest file: only
    // for the statements that report them.
    const std::string lower = absl::AsciiStrToLower(sql);
    bool state = false;
    for (const char* k : {"gtid", "status", "logs", "uuid", "%"}) {
      state = state || absl::StrContains(lower, k);
    }
    if (absl::StrContains(lower, "variables") && !absl::StrContains(lower, " like ")) {
      state = true;
    }
    QueryLimits limits;
    limits.max_variables = o_.max_session_variables;
    limits.max_variable_bytes = o_.max_session_variable_bytes;
    limits.max_result_bytes = o_.max_packet;
    QueryResult r = AnswerQuery(sql, state ? srv_->StateFacts() : srv_->Facts(false), &vars_,
                                absl::Now(), limits);
    if (r.kind == QueryResult::kOk) return Send(EncodeOk());
    if (r.kind == QueryResult::kError) return SendErr(r.error_code, r.sql_state, r.message);
    std::string wire;
    for (const std::string& p : EncodeResultSet(r.columns, r.rows, caps_)) {
      FramePacket(p, &seq_, &wire);
    }
    return sock_.WriteAll(wire, absl::Now() + o_.write_timeout, &srv_->shutdown_).ok();
  }

  std::optional<std::string> Var(const char* name) const {
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }

  // --- dump --------------------------------------------------------------

  // The replica announced it takes checksums by setting
  // @master_binlog_checksum, to any value: mysqlbinlog and go-mysql set
  // 'NONE' (only the first fake Rotate then comes without a checksum; see
  // FirstRotateChecksummed). A log with checksums cannot be sent to one that
  // did not (MySQL's rule).
  bool CheckChecksumCapability() {
    if (!srv_->checksums_ || Var("master_binlog_checksum").has_value()) return true;
    SendErr(kErMasterFatalReadingBinlog, "HY000",
            "Slave can not handle replication events with the checksum that "
            "master is configured to log; set @master_binlog_checksum");
    return false;
  }

  // Whether the fake Rotate sent ahead of the first Format_description
  // carries a CRC32: MySQL checksums it with the algorithm the replica
  // announced (none for 'NONE'); events after the FDE follow the log.
  bool FirstRotateChecksummed() const {
    if (!srv_->checksums_) return false;
    std::optional<std::string> v = Var("master_binlog_checksum");
    return !v.has_value() || !absl::EqualsIgnoreCase(*v, "NONE");
  }

  // @master_heartbeat_period (or @source_heartbeat_period), in
  // nanoseconds as replicas send it; unset or 0: no heartbeats.
  // InvalidArgument for values MySQL would not take (not a number, not
  // finite, negative, past 4294967 s).
  absl::StatusOr<absl::Duration> HeartbeatPeriod() const {
    std::optional<std::string> v = Var("master_heartbeat_period");
    if (!v.has_value()) v = Var("source_heartbeat_period");
    if (!v.has_value()) return absl::InfiniteDuration();
    double ns = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(*v), &ns) || !std::isfinite(ns) ||
        ns < 0 || ns > kMaxHeartbeatNs) {
      return absl::InvalidArgumentError(absl::StrCat(
          "@master_heartbeat_period must be 0 to 4294967000000000 nanoseconds "
          "(0 to 4294967 seconds); got '", absl::string_view(*v).substr(0, 64), "'"));
    }
    if (ns == 0) return absl::InfiniteDuration();
    // In range: the conversion is defined.
    return std::max(absl::Milliseconds(1), absl::Nanoseconds(static_cast<int64_t>(ns)));
  }

  // Starts a dump's heartbeats; false (the error sent) for a bad period.
  bool StartHeartbeats() {
    absl::StatusOr<absl::Duration> period = HeartbeatPeriod();
    if (!period.ok()) return Fatal(period.status().message());
    heartbeat_period_ = *period;
    return true;
  }

  bool Fatal(absl::string_view msg) {
    return SendErr(kErMasterFatalReadingBinlog, "HY000", msg) && false;
  }

  // Appends event packet(s) for `ev` (0x00 [+ semi-sync header] + event)
  // to out_.
  void AppendEvent(absl::string_view ev, bool need_ack = false) {
    need_ack = need_ack && semisync_;  // acks are asked for only with a tracker
    const size_t prefix = header_ ? 3 : 1;
    const size_t len = ev.size() + prefix;
    if (len < kMaxPacketPayload) {
      char h[7] = {static_cast<char>(len), static_cast<char>(len >> 8),
                   static_cast<char>(len >> 16), static_cast<char>(seq_++), 0,
                   static_cast<char>(kSemiSyncMagic),
                   static_cast<char>(need_ack ? kSemiSyncNeedAck : 0)};
      out_.append(h, 4 + prefix);
      out_.append(ev.data(), ev.size());
    } else {
      std::string p(1, '\0');
      if (header_) {
        p.push_back(static_cast<char>(kSemiSyncMagic));
        p.push_back(static_cast<char>(need_ack ? kSemiSyncNeedAck : 0));
      }
      p.append(ev.data(), ev.size());
      FramePacket(p, &seq_, &out_);
    }
    ++out_events_;
  }

  // Semi-sync: whether `ev` ends a transaction (the replica acks it).
  bool EndsTransaction(absl::string_view ev, bool checksums) {
    if (!semisync_) return false;
    const uint8_t type = static_cast<uint8_t>(ev[4]);
    if (type == kFormatDescriptionEvent) {
      auto fd = DecodeFormatDescription(ev);
      if (fd.ok()) parser_.set_query_post_header_len(fd->PostHeaderLen(kQueryEvent));
      parser_.Reset();
      return false;
    }
    return parser_.Feed(DecodeHeader(ev), EventBody(ev, checksums)) ==
           TransactionBoundaryParser::Result::kEnded;
  }

  // Reads the acks a semi-sync replica has sent, without waiting. false:
  // the replica is gone or sent something else.
  bool ReadAcks() {
    while (sock_.WaitReadable(absl::ZeroDuration())) {
      if (!ClientData()) return false;
    }
    return true;
  }

  // Sends one stored event: Format_description with the in-use flag
  // clear, lz4 payloads expanded (a replica knows only zstd), the rest as
  // stored.
  bool ForwardEvent(uint64_t file_no, absl::string_view ev, bool checksums, bool zero_fde_pos) {
    if (ev.size() < kHeaderSize) return Fatal("short event in the log");
    const uint8_t type = static_cast<uint8_t>(ev[4]);
    const bool ends = EndsTransaction(ev, checksums);
    if (ends) ack_due_ = sync::AckPosition{file_no, DecodeHeader(ev).log_pos};
    if (type == kFormatDescriptionEvent) {
      auto fde = EncodeSentFormatDescription(ev, zero_fde_pos);
      if (!fde.ok()) return Fatal(fde.status().message());
      AppendEvent(*fde);
      return true;
    }
    if (type == kTransactionPayloadEvent) {
      absl::string_view body = EventBody(ev, checksums);
      auto ph = DecodePayloadHeader(body);
      if (ph.ok() && ph->compression_type == kPayloadCompressionLz4) {
        return ForwardExpanded(ev, body, checksums, ends);
      }
    }
    AppendEvent(ev, ends);
    return true;
  }

  // The inner events of an lz4 payload as plain events: each with the
  // payload's log_pos and, if the log has checksums, its own CRC32.
  bool ForwardExpanded(absl::string_view ev, absl::string_view body, bool checksums,
                       bool ends) {
    PayloadHeader ph;
    size_t n = 0;
    absl::Status s = DecodePayload(body, kMaxPayloadSize, &ph, &payload_buf_, &n);
    if (!s.ok()) return Fatal(s.message());
    const uint32_t log_pos = DecodeHeader(ev).log_pos;
    absl::string_view rest = payload_buf_.view();
    std::string one;
    while (rest.size() >= kHeaderSize) {
      EventHeader h = DecodeHeader(rest);
      if (h.event_size < kHeaderSize || h.event_size > rest.size()) {
        return Fatal("malformed payload");
      }
      one.assign(rest.data(), h.event_size);
      rest.remove_prefix(h.event_size);
      h.log_pos = log_pos;
      if (checksums) {
        h.event_size += kChecksumSize;
        one.append(kChecksumSize, '\0');
      }
      EncodeHeader(h, one.data());
      if (checksums) {
        StoreLe32(one.data() + one.size() - kChecksumSize, ComputeEventChecksum(one));
      }
      AppendEvent(one, ends && rest.size() < kHeaderSize);
    }
    return true;
  }

  // A dump of `server_id` begins (Server::BeginReplicaDump): the replica
  // is remembered if this session registered under that id. false (the
  // error sent): the server remembers max_replicas replicas already.
  bool BeginDump(uint32_t server_id) {
    std::optional<std::string> uuid = Var("replica_uuid");
    if (!uuid.has_value()) uuid = Var("slave_uuid");
    dump_id_ = server_id;
    dump_uuid_ = uuid.has_value() ? ReplicaUuidKey(*uuid) : std::string();
    const bool remember = server_id != 0 && registered_id_ == server_id;
    sent_ = false;
    absl::Status s = srv_->BeginReplicaDump(id_, dump_id_, dump_uuid_, remember);
    if (!s.ok()) {
      return Fatal(absl::StrCat(
          "binlog_server refuses replica server_id ", server_id, ": ", s.message(),
          " and none has expired (a replica is forgotten replica_expire_after since its "
          "last dump; an operator can raise the limit or forget a replica)"));
    }
    if (remember) {
      remembered_.emplace(dump_id_, dump_uuid_);
    } else {
      remembered_.reset();
    }
    return true;
  }
  void EndDump() {
    srv_->EndReplicaDump(id_, dump_id_, dump_uuid_, remembered_.has_value());
    remembered_.reset();
  }

  // The error a dump that a newer dump with its server id replaced ends
  // with, as the replica's server flavor sends it.
  bool SendSuperseded() {
    if (srv_->flavor_ == LogFlavor::kMariaDB) {
      return SendErr(kErSlaveSameId, "HY000",
                     "A slave with the same server_uuid/server_id as this slave has "
                     "connected to the master") && false;
    }
    return Fatal("A replica with the same server_uuid/server_id as this replica has "
                 "connected to the source");
  }

  // Sends what is buffered, records where the replica's dump got to, and
  // ends the dump if Server::EndDumpsBefore asked (1236 with its reason)
  // or a newer dump with its server id replaced it.
  bool Flush() {
    const size_t bytes = out_.size(), events = out_events_;
    bool ok = true;
    if (bytes != 0) {
      ok = sock_.WriteAll(out_, absl::Now() + o_.write_timeout, &srv_->shutdown_).ok();
    }
    out_.clear();
    out_events_ = 0;
    std::string ended;
    bool superseded = false;
    {
      std::lock_guard<std::mutex> l(srv_->mu_);
      srv_->stats_.events_sent += events;
      srv_->stats_.bytes_sent += bytes;
      if (ok && sent_) {
        srv_->NoteSentLocked(id_, registered_id_, remembered_, sent_file_no_, sent_file_,
                             sent_pos_);
      }
      auto it = srv_->ended_dumps_.find(id_);
      if (it != srv_->ended_dumps_.end()) ended = it->second;
      superseded = srv_->superseded_dumps_.count(id_) != 0;
    }
    if (!ok) return false;
    if (!ended.empty()) return Fatal(ended);
    if (superseded) return SendSuperseded();
    return bytes == 0 || !semisync_ || ReadAcks();
  }

  // The replica's dump got to (file, pos): recorded at the next Flush.
  void NoteSent(uint64_t file_no, const std::string& file, uint64_t pos) {
    sent_ = true;
    sent_file_no_ = file_no;
    if (file != sent_file_) sent_file_ = file;
    sent_pos_ = pos;
  }

  // Shutdown in the middle of a dump: what is buffered, then the error.
  bool ShutdownDump() {
    Flush();
    SendShutdown();
    return false;
  }

  // Idle: waits up to the poll interval (files at rest) or for the log
  // (live), watching the client and sending heartbeats. false: end the dump
  // (client gone, shutdown; the error, if any, is sent).
  bool Idle(Reader* reader, const std::string& file, uint64_t pos) {
    if (!Flush()) return false;
    if (srv_->shutdown_.load()) {
      SendShutdown();
      return false;
    }
    const absl::Duration period = heartbeat_period_;
    const absl::Time now = absl::Now();
    if (period != absl::InfiniteDuration() && now - last_send_ >= period) {
      AppendEvent(EncodeHeartbeat(srv_->server_id_, file, static_cast<uint32_t>(pos),
                                  srv_->checksums_));
      Count(&ServerStats::heartbeats, 1);
      last_send_ = now;
      if (!Flush()) return false;
    }
    absl::Duration wait = srv_->view_->live() ? absl::Milliseconds(100) : o_.poll_interval;
    if (period != absl::InfiniteDuration()) {
      wait = std::min(wait, std::max(absl::Milliseconds(1), last_send_ + period - now));
    }
    if (srv_->view_->live() && reader != nullptr) {
      // A semi-sync replica's ack may be what the log waits for (its
      // committers wait on the tracker, so nothing new comes until the ack
      // is read): while an ack is due the wait is cut in slices of
      // ServerOptions::ack_poll and the socket looked at between them, so
      // an ack is read within a slice instead of at the end of the whole
      // wait. With every transaction sent acknowledged, the whole wait.
      const absl::Time end = absl::Now() + wait;
      for (;;) {
        const absl::Time until =
            ack_due_.has_value() ? std::min(end, absl::Now() + o_.ack_poll) : end;
        absl::Status s = reader->WaitForMore(until);
        if (absl::IsCancelled(s)) {
          SendShutdown();
          return false;
        }
        if (sock_.WaitReadable(absl::ZeroDuration())) return ClientData();
        if (!absl::IsDeadlineExceeded(s) || absl::Now() >= end) return true;
      }
    }
    if (sock_.WaitReadable(wait)) return ClientData();
    return true;
  }

  // The replica sent something during a dump: a semi-sync ack, or (any
  // replica) a close. false ends the dump.
  bool ClientData() {
    if (srv_->shutdown_.load()) {  // woken by Shutdown()
      SendShutdown();
      return false;
    }
    std::string p;
    absl::Status s = ReadPacket(&p, absl::Now() + absl::Seconds(1), o_.max_packet);
    if (!s.ok()) return false;
    if (!semisync_) return true;
    auto ack = ParseSemiSyncAck(p);
    uint64_t n = 0;
    if (!ack.ok() || !ParseBinlogFileName(o_.basename, ack->file, &n)) {
      SendErr(kErMalformedPacket, "HY000", "Malformed semi-sync ack");
      return false;
    }
    // Counted first, so a committer the ack releases sees it counted.
    // Ignored acks (stale, too many replicas) are the tracker's to count.
    Count(&ServerStats::semisync_acks, 1);
    o_.acks->Ack(replica_id_, sync::AckPosition{n, ack->position}).IgnoreError();
    if (ack_due_.has_value() && (n > ack_due_->file_number ||
                                 (n == ack_due_->file_number &&
                                  ack->position >= ack_due_->offset))) {
      ack_due_.reset();  // every transaction sent is acknowledged
    }
    if (registered_id_.has_value()) {
      srv_->ReplicaAcked(id_, *registered_id_, ack->file, ack->position);
    }
    return true;
  }

  // At the start of a dump: semi-sync if the server offers it and the
  // replica asked for it.
  void StartSemiSync(uint32_t replica_id) {
    replica_id_ = replica_id;
    std::optional<std::string> v = Var("rpl_semi_sync_slave");
    if (!v.has_value()) v = Var("rpl_semi_sync_replica");
    // The header goes to every replica that asked (as MariaDB and MySQL
    // with semi-sync send it, on or off: such replicas refuse an event
    // without it); acks are asked for only with an ack tracker.
    header_ = v.has_value() && !v->empty() && *v != "0";
    semisync_ = o_.acks != nullptr && header_;
    parser_.Reset();
  }

  absl::StatusOr<std::unique_ptr<Reader>> OpenAt(uint64_t file, uint64_t offset) {
    ReaderOptions ro;
    ro.start_file = file;
    ro.start_offset = offset;
    ro.payloads = PayloadMode::kRaw;
    ro.buffer_size = o_.read_buffer;
    return srv_->view_->NewReader(ro);
  }

  bool Dump(const BinlogDump& d) {
    if (!StartHeartbeats()) return false;
    StartSemiSync(d.server_id);
    std::optional<std::string> connect_state = Var("slave_connect_state");
    if (srv_->flavor_ == LogFlavor::kMariaDB && connect_state.has_value()) {
      return DumpMariaGtid(*connect_state, d.flags);
    }
    if (!CheckChecksumCapability()) return false;
    auto numbers = srv_->view_->Files();
    if (!numbers.ok() || numbers->empty()) return Fatal("Binary log is not open");
    uint64_t n = 0;
    if (d.file.empty()) {
      n = numbers->front();
    } else {
      uint64_t parsed = 0;
      if (ParseBinlogFileName(o_.basename, d.file, &parsed)) {
        for (uint64_t x : *numbers) {
          if (x == parsed) n = x;
        }
      }
      if (n == 0) {
        return Fatal("Could not find first log file name in binary log index file");
      }
    }
    if (d.position < kMagicSize) {
      return Fatal("Client requested master to start replication from position < 4");
    }
    auto scan = ScanLogFile(FilePath(o_, n), d.position, srv_->view_->ReadableEnd(n));
    if (!scan.ok()) return Fatal(absl::StrCat("Could not open log file: ", scan.status().message()));
    if (d.position > scan->end) {
      return Fatal("Client requested master to start replication from position > file size");
    }
    if (!scan->boundary) {
      return Fatal("Client requested master to start replication from impossible position");
    }
    const std::string name = BinlogFileName(o_.basename, n);
    seq_ = 1;
    AppendEvent(EncodeRotateTo(0, srv_->server_id_, name, std::max<uint64_t>(d.position, 4), 0,
                               kFlagArtificial, FirstRotateChecksummed()));
    if (!ForwardEvent(n, scan->fde, srv_->checksums_, d.position > kMagicSize)) return false;
    const uint64_t start = d.position > kMagicSize
                               ? d.position
                               : kMagicSize + DecodeHeader(scan->fde).event_size;
    return Stream(n, start, d.flags);
  }

  // The artificial Rotate (timestamp 0, log_pos 0) that names file
  // `number` at position 4 before its first event; with a checksum if the
  // events before it had one (as the servers do: the format in force).
  void AppendFileRotate(uint64_t number, bool checksums) {
    AppendEvent(EncodeRotateTo(0, srv_->server_id_, BinlogFileName(o_.basename, number),
                               kMagicSize, 0, kFlagArtificial, checksums));
  }

  // Streams from (file, offset) with NextBatch.
  bool Stream(uint64_t file, uint64_t offset, uint16_t flags) {
    auto reader = OpenAt(file, offset);
    if (!reader.ok()) return Fatal(reader.status().message());
    srv_->NoteDumpFile(id_, file);  // before the reader holds (pins) a file
    std::string file_name = BinlogFileName(o_.basename, file);
    NoteSent(file, file_name, offset);  // it holds what comes before
    uint64_t sent_file = file;  // the file the replica was told of
    bool sent_checksums = FirstRotateChecksummed();
    EventBatch batch;
    BatchOptions bo;
    bo.verify_checksums = !srv_->view_->live();  // a half-written tail fails its CRC
    absl::Time bad_since = absl::InfiniteFuture();
    last_send_ = absl::Now();
    while (true) {
      if (srv_->shutdown_.load(std::memory_order_relaxed)) return ShutdownDump();
      absl::Status s = (*reader)->NextBatch(&batch, bo);
      if (s.ok()) {
        bad_since = absl::InfiniteFuture();
        if (batch.file_number != sent_file) {
          // The next file: named first, as MySQL's and MariaDB's dump
          // threads do at every file they open (after a failover of a
          // relay's copy the stored Rotates name another server's files,
          // and a file a failover or a crash ended has none).
          AppendFileRotate(batch.file_number, sent_checksums);
          sent_file = batch.file_number;
        }
        sent_checksums = batch.file_has_checksums;
        for (size_t i = 0; i < batch.size(); ++i) {
          if (!ForwardEvent(batch.file_number, batch.event(i), batch.file_has_checksums,
                            false)) {
            return false;
          }
        }
        file = batch.file_number;
        offset = batch.end_offset();
        file_name = (*reader)->file_name();
        NoteSent(file, file_name, offset);
        last_send_ = absl::Now();
        // The batch is copied into out_: the ring's bytes are not held
        // while a send to a slow replica blocks.
        (*reader)->ReleaseViews();
        if (out_.size() >= kFlushBytes && !Flush()) return false;
        continue;
      }
      const bool torn = absl::IsDataLoss(s) && !srv_->view_->live();
      if (!absl::IsOutOfRange(s) && !torn) {
        Flush();
        if (absl::IsNotFound(s)) {
          return Fatal(absl::StrCat("could not find next log (purged?): ", s.message()));
        }
        return Fatal(s.message());
      }
      if (torn) {
        if (bad_since == absl::InfiniteFuture()) bad_since = absl::Now();
        if (absl::Now() - bad_since > kTornGrace) {
          Flush();
          return Fatal(s.message());
        }
      }
      if (flags & kDumpNonBlock) {
        return Flush() && Send(EncodeEof());
      }
      if (!Idle(reader->get(), file_name, offset)) return false;
      if (!srv_->view_->live()) {
        // Files at rest: a fresh reader sees what was written since.
        auto r = OpenAt(file, offset);
        if (!r.ok()) {
          return Fatal(absl::StrCat("could not open log (purged?): ", r.status().message()));
        }
        reader = std::move(r);
      }
    }
  }

  // GTID dumps: the GtidReader decides the start; events one by one.
  bool StreamGtid(std::unique_ptr<GtidReader> g, uint16_t flags) {
    Event ev;
    bool first = true;
    absl::Time bad_since = absl::InfiniteFuture();
    last_send_ = absl::Now();
    seq_ = 1;
    uint64_t file = 0, offset = 0;
    std::string file_name;
    uint64_t sent_file = 0;  // the file the replica was told of
    bool sent_checksums = false;
    srv_->NoteDumpFile(id_, 0);  // its start file is found by its first Next
    while (true) {
      if (srv_->shutdown_.load(std::memory_order_relaxed)) return ShutdownDump();
      absl::Status s = g->Next(&ev);
      const uint64_t at = g->reader()->file_number();
      if (first && at != 0) srv_->NoteDumpFile(id_, at);
      if (s.ok()) {
        bad_since = absl::InfiniteFuture();
        if (first) {
          // The fake Rotate to the start file, position 4.
          AppendEvent(EncodeRotateTo(0, srv_->server_id_, g->reader()->file_name(), kMagicSize,
                                     0, kFlagArtificial, FirstRotateChecksummed()));
          first = false;
          sent_file = ev.file_number;
          sent_checksums = ev.file_has_checksums;
        } else if (ev.file_number != sent_file) {
          AppendFileRotate(ev.file_number, sent_checksums);  // every later file (see Stream)
          sent_file = ev.file_number;
        }
        sent_checksums = ev.file_has_checksums;
        if (!ForwardEvent(ev.file_number, ev.data, ev.file_has_checksums, false)) return false;
        NoteSent(g->reader()->file_number(), g->reader()->file_name(),
                 g->reader()->position());
        last_send_ = absl::Now();
        if (out_.size() >= kFlushBytes && !Flush()) return false;
        continue;
      }
      file = g->reader()->file_number();
      offset = g->reader()->position();
      file_name = g->reader()->file_name();
      const bool torn = absl::IsDataLoss(s) && !srv_->view_->live();
      if (!absl::IsOutOfRange(s) && !torn) {
        Flush();
        return Fatal(s.message());
      }
      if (torn) {
        if (bad_since == absl::InfiniteFuture()) bad_since = absl::Now();
        if (absl::Now() - bad_since > kTornGrace) {
          Flush();
          return Fatal(s.message());
        }
      }
      if (flags & kDumpNonBlock) return Flush() && Send(EncodeEof());
      if (!Idle(g->reader(), file_name, offset)) return false;
      if (!srv_->view_->live() && file != 0) {
        auto r = OpenAt(file, offset);
        if (!r.ok()) {
          return Fatal(absl::StrCat("could not open log (purged?): ", r.status().message()));
        }
        g->ResumeWith(std::move(*r));
      }
    }
  }

  ReaderOptions GtidReaderOptions() const {
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    ro.buffer_size = o_.read_buffer;
    return ro;
  }

  bool DumpGtid(const BinlogDumpGtid& d) {
    if (!StartHeartbeats()) return false;
    StartSemiSync(d.server_id);
    if (!CheckChecksumCapability()) return false;
    if (srv_->flavor_ != LogFlavor::kMySQL) {
      return Fatal("COM_BINLOG_DUMP_GTID needs a MySQL-flavor log; this log is "
                   "MariaDB's (connect with MASTER_USE_GTID)");
    }
    auto have = GtidSet::DecodePreviousGtidsBody(d.gtid_data);
    if (!have.ok()) {
      SendErr(kErMalformedPacket, "HY000", "Malformed GTID set in COM_BINLOG_DUMP_GTID");
      return false;
    }
    absl::StatusOr<std::unique_ptr<GtidReader>> g =
        srv_->view_->NewGtidReader(*have, GtidReaderOptions());
    if (!g.ok()) {
      const std::string msg(g.status().message());
      if (absl::StrContains(msg, "purged")) {
        return SendErr(kErMasterHasPurgedRequiredGtids, "HY000",
                       absl::StrCat("Cannot replicate because the master purged required "
                                    "binary logs. ", msg)) && false;
      }
      if (absl::StrContains(msg, "never had")) {
        return SendErr(kErSlaveHasMoreGtidsThanMaster, "HY000",
                       absl::StrCat("Slave has more GTIDs than the master has, using the "
                                    "master's SERVER_UUID. ", msg)) && false;
      }
      return Fatal(msg);
    }
    return StreamGtid(std::move(*g), d.flags);
  }

  bool DumpMariaGtid(const std::string& state_text, uint16_t flags) {
    if (!CheckChecksumCapability()) return false;
    auto position = MariaGtidState::Parse(state_text);
    if (!position.ok()) {
      return Fatal(absl::StrCat("Failed to parse the GTID position '", state_text, "'"));
    }
    absl::StatusOr<std::unique_ptr<GtidReader>> g =
        srv_->view_->NewMariaGtidReader(*position, GtidReaderOptions());
    if (!g.ok()) {
      const std::string msg(g.status().message());
      if (absl::StrContains(msg, "purged")) {
        return Fatal(absl::StrCat(
            "Could not find GTID state requested by slave in any binlog files. "
            "Probably the slave state is too old and required binlog files have "
            "been purged. (", msg, ")"));
      }
      return Fatal(absl::StrCat("Error: connecting slave requested to start from GTID ",
                                state_text, ", which is not in the master's binlog (", msg,
                                ")"));
    }
    return StreamGtid(std::move(*g), flags);
  }

  Server* srv_;
  const ServerOptions& o_;
  io::Socket sock_;
  uint32_t id_;
  const absl::Time handshake_end_;
  bool authenticated_ = false;
  bool shutdown_sent_ = false;
  uint8_t seq_ = 0;
  uint32_t caps_ = 0;
  SessionVars vars_;
  std::string out_;
  size_t out_events_ = 0;
  io::ByteBuffer payload_buf_;
  absl::Duration heartbeat_period_ = absl::InfiniteDuration();
  absl::Time last_send_;
  bool semisync_ = false;
  // Semi-sync: the end of the last transaction sent whose ack has not
  // come (the idle wait is cut in ack_poll slices only while one is due).
  std::optional<sync::AckPosition> ack_due_;
  bool header_ = false;  // the replica asked for the semi-sync header
  uint32_t replica_id_ = 0;
  // The server id this session registered (COM_REGISTER_SLAVE).
  std::optional<uint32_t> registered_id_;
  // The dump in progress: its server id and UUID, and whether the server
  // remembers it as a replica (BeginDump).
  uint32_t dump_id_ = 0;
  std::string dump_uuid_;
  std::optional<std::pair<uint32_t, std::string>> remembered_;
  // Where the dump got to (NoteSent).
  bool sent_ = false;
  uint64_t sent_file_no_ = 0;
  std::string sent_file_;
  uint64_t sent_pos_ = 0;
  TransactionBoundaryParser parser_;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& o) {
  std::unique_ptr<Server> s(new Server(o));
  absl::Status st = s->Init();
  if (!st.ok()) return st;
  return s;
}

absl::Status Server::Init() {
  auth_ = std::make_unique<Authenticator>(options_.users, options_.rsa_keys);
  if (options_.max_replicas < 1 || options_.max_replica_uuids_per_server_id < 1 ||
      options_.replica_expire_after < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ServerOptions: max_replicas and max_replica_uuids_per_server_id must be >= 1 and "
        "replica_expire_after >= 0");
  }
  if (options_.live != nullptr && options_.mirror != nullptr) {
    return absl::InvalidArgumentError("ServerOptions: live and mirror are exclusive");
  }
  if (options_.ack_poll <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("ServerOptions: ack_poll must be > 0");
  }
  if (options_.live != nullptr) {
    view_ = NewBinlogView(options_.live);
  } else if (options_.mirror != nullptr) {
    view_ = NewMirrorView(options_.mirror);
  } else {
    view_ = NewAtRestView(options_.dir, options_.basename);
  }
  auto numbers = view_->Files();
  if (!numbers.ok() || numbers->empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no binlog ", options_.basename, ".index with files in ", options_.dir));
  }
  ReaderOptions ro;
  auto reader = Reader::OpenFiles({FilePath(options_, numbers->front())}, ro);
  if (!reader.ok()) return reader.status();
  Event ev;
  absl::Status s = (*reader)->Next(&ev);
  if (!s.ok()) return s;
  const FormatDescription& fd = (*reader)->format_description();
  // MariaDB 10.x writes server versions "10.x.y-MariaDB..."; the log's
  // Format_description carries its flavor's version.
  flavor_ = absl::StrContains(fd.server_version, "MariaDB") ||
                    absl::StartsWith(fd.server_version, "10.") ||
                    absl::StartsWith(fd.server_version, "11.")
                ? LogFlavor::kMariaDB
                : LogFlavor::kMySQL;
  checksums_ = fd.has_checksums();
  server_id_ = options_.server_id != 0 ? options_.server_id : ev.header.server_id;
  version_ = flavor_ == LogFlavor::kMariaDB ? "5.5.5-10.11.19-MariaDB-log" : "8.0.36-log";
  if (!options_.ssl_cert.empty() || !options_.ssl_key.empty()) {
    auto tls = io::TlsContext::ForServer(options_.ssl_cert, options_.ssl_key, options_.ssl_ca);
    if (!tls.ok()) return tls.status();
    tls_ = std::move(*tls);
  } else if (!options_.ssl_ca.empty()) {
    return absl::InvalidArgumentError("ssl_ca needs ssl_cert and ssl_key");
  }
  return absl::OkStatus();
}

void Server::Run(io::Socket* listener) {
  while (!shutdown_.load()) {
    auto c = listener->Accept(absl::Milliseconds(200));
    if (!c.ok()) continue;
    const absl::Time handshake_end = absl::Now() + options_.handshake_timeout;
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.connections;
    // Only connections still in the handshake count here; authenticated
    // ones count toward max_connections (Authenticated()).
    if (unauthenticated_ >= options_.max_unauthenticated_connections) {
      uint8_t seq = 0;
      std::string wire;
      FramePacket(EncodeErr(kErConCount, "08004", "Too many connections"), &seq, &wire);
      c->WriteAll(wire, absl::Now() + absl::Seconds(1)).IgnoreError();
      continue;
    }
    // Join the sessions that have ended.
    for (size_t i = 0; i < threads_.size();) {
      if (threads_[i].done->load()) {
        threads_[i].thread.join();
        threads_[i] = std::move(threads_.back());
        threads_.pop_back();
      } else {
        ++i;
      }
    }
    ++unauthenticated_;
    uint32_t id = next_connection_id_.fetch_add(1);
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([this, sock = std::move(*c), id, done, handshake_end]() mutable {
      bool authenticated = false;
      {
        Session session(this, std::move(sock), id, handshake_end);
        session.Run();
        authenticated = session.authenticated();
      }
      timespec cpu{};
      ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
      std::lock_guard<std::mutex> l2(mu_);
      stats_.session_cpu_ns += static_cast<uint64_t>(cpu.tv_sec) * 1000000000u +
                               static_cast<uint64_t>(cpu.tv_nsec);
      if (authenticated) {
        --active_;
      } else {
        --unauthenticated_;
      }
      done->store(true);
    });
    threads_.push_back({std::move(t), std::move(done)});
  }
}

bool Server::Authenticated() {
  std::lock_guard<std::mutex> l(mu_);
  if (active_ >= options_.max_connections) return false;
  --unauthenticated_;
  ++active_;
  return true;
}

void Server::WaitUnlessShutdown(absl::Duration d) {
  shutdown_note_.WaitForNotificationWithTimeout(d);
}

void Server::Shutdown() {
  if (!shutdown_.exchange(true)) shutdown_note_.Notify();
  // Wake every session blocked reading its client (handshakes, idle
  // sessions, dumps waiting for acks); they see shutdown_ and end.
  std::lock_guard<std::mutex> l(mu_);
  for (io::Socket* s : open_) s->ShutdownRead();
}

Server::~Server() {
  Shutdown();
  Join();
}

void Server::Join() {
  std::vector<SessionThread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    threads.swap(threads_);
  }
  for (SessionThread& t : threads) t.thread.join();
}

}  // namespace server
}  // namespace binlog
