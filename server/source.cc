#include "server/source.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "binlog/gtid.h"
#include "io/socket.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {

// MariaDB: BINLOG_SEND_ANNOTATE_ROWS_EVENT (without it Annotate_rows
// events are left out of the stream).
constexpr uint16_t kDumpSendAnnotateRows = 0x02;

// A single-valued query: the first column of the first row, "" for none
// or NULL; the server's error as FailedPrecondition.
absl::StatusOr<std::string> QueryValue(ReplicationClient* c, const std::string& sql) {
  auto r = c->Query(sql);
  if (!r.ok()) return r.status();
  if (r->kind == ClientReply::kError) {
    return absl::FailedPreconditionError(
        absl::StrCat(sql, ": ", r->error_code, ": ", r->message));
  }
  if (r->kind != ClientReply::kResultSet || r->rows.empty() || r->rows[0].empty() ||
      !r->rows[0][0].has_value()) {
    return std::string();
  }
  return *r->rows[0][0];
}

absl::Status Exec(ReplicationClient* c, const std::string& sql) {
  auto r = c->Query(sql);
  if (!r.ok()) return r.status();
  if (r->kind == ClientReply::kError) {
    return absl::FailedPreconditionError(
        absl::StrCat(sql, ": ", r->error_code, ": ", r->message));
  }
  return absl::OkStatus();
}

// Whether the server has the global variable `name` (a semi-sync source
// has rpl_semi_sync_master_enabled or rpl_semi_sync_source_enabled,
// whatever its value); an unknown variable is error 1193.
absl::StatusOr<bool> HasVariable(ReplicationClient* c, const std::string& name) {
  auto r = c->Query("SELECT @@global." + name);
  if (!r.ok()) return r.status();
  if (r->kind == ClientReply::kError) {
    if (r->error_code == 1193) return false;
    return absl::FailedPreconditionError(
        absl::StrCat("SELECT @@global.", name, ": ", r->error_code, ": ", r->message));
  }
  return true;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "'";
}

}  // namespace

absl::StatusOr<SourceStream> SourceStream::Start(const SourceOptions& o,
                                                 const DumpStart& start) {
  return StartChosen(o,
                     [&start](const SourceStream&) -> absl::StatusOr<DumpStart> { return start; });
}

absl::StatusOr<SourceStream> SourceStream::StartChosen(const SourceOptions& o,
                                                       const ChooseStart& choose) {
  if (o.server_id == 0) {
    return absl::InvalidArgumentError("SourceOptions::server_id must be set (not 0)");
  }
  if (o.heartbeat_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("SourceOptions::heartbeat_period must be positive");
  }
  if (o.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("SourceOptions::connect_timeout must be positive");
  }
  const bool local = !o.host.empty() && o.host[0] == '/';
  absl::StatusOr<io::Socket> sock =
      local ? io::Socket::ConnectUnix(o.host, o.on_connect)
            : io::Socket::ConnectTcp(o.host, o.port, absl::Now() + o.connect_timeout,
                                     o.on_connect);
  if (!sock.ok()) {
    if (absl::IsInvalidArgument(sock.status())) return sock.status();  // not an address
    return absl::UnavailableError(absl::StrCat("source ", o.host, ":", o.port, ": ",
                                               sock.status().message()));
  }
  auto c = ReplicationClient::Connect(std::move(*sock), o.user, o.password,
                                      "mysql_native_password", local, o.tls,
                                      o.get_source_public_key, o.connect_timeout);
  if (!c.ok()) return c.status();
  c->set_max_packet(o.max_packet);
  SourceStream st(std::move(*c));
  ReplicationClient* cl = &st.client_;

  auto version = QueryValue(cl, "SELECT VERSION()");
  if (!version.ok()) return version.status();
  st.version_ = *version;
  st.flavor_ = o.flavor.has_value() ? *o.flavor
               : absl::StrContains(st.version_, "MariaDB") ? LogFlavor::kMariaDB
                                                            : LogFlavor::kMySQL;
  // A source that refuses the question has no id to go by (0).
  auto server_id = QueryValue(cl, "SELECT @@server_id");
  if (!server_id.ok() && !absl::IsFailedPrecondition(server_id.status())) {
    return server_id.status();
  }
  if (!server_id.ok() || !absl::SimpleAtoi(*server_id, &st.server_id_)) st.server_id_ = 0;
  // The checksum setting the source writes with; the dump sends events
  // with it (a replica that does not announce it gets them stripped).
  auto checksum = QueryValue(cl, "SELECT @@global.binlog_checksum");
  if (!checksum.ok()) return checksum.status();
  st.checksums_ = absl::AsciiStrToUpper(*checksum) != "NONE";
  absl::Status s = Exec(cl, "SET @master_binlog_checksum = @@global.binlog_checksum");
  if (!s.ok()) return s;
  const int64_t period_ns = absl::ToInt64Nanoseconds(o.heartbeat_period);
  s = Exec(cl, absl::StrCat("SET @master_heartbeat_period = ", period_ns));
  if (!s.ok()) return s;
  const bool maria = st.flavor_ == LogFlavor::kMariaDB;
  if (!maria) {
    // MySQL 8.0.26+ reads the new name; older ones the old (set above).
    Exec(cl, absl::StrCat("SET @source_heartbeat_period = ", period_ns)).IgnoreError();
  }
  // Where the dump starts, now that the source is known.
  absl::StatusOr<DumpStart> chosen = choose(st);
  if (!chosen.ok()) return chosen.status();
  const DumpStart& start = *chosen;
  if (maria) {
    s = Exec(cl, "SET @mariadb_slave_capability = 4");
    if (!s.ok()) return s;
    if (start.gtid.has_value()) {
      s = Exec(cl, "SET @slave_connect_state = " + Quote(*start.gtid));
      if (!s.ok()) return s;
      s = Exec(cl, "SET @slave_gtid_strict_mode = 1");
      if (!s.ok()) return s;
      s = Exec(cl, "SET @slave_gtid_ignore_duplicates = 0");
      if (!s.ok()) return s;
    }
  }
  bool semisync = false;
  if (o.semisync && start.semisync) {
    // As servers' replicas do: semi-sync only with a source that has it
    // (its variable exists, on or off); such a source then adds the header
    // to every event packet, and asks for acks while its semi-sync is on.
    for (const char* name : {"rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled"}) {
      auto has = HasVariable(cl, name);
      if (!has.ok()) return has.status();
      if (*has) {
        semisync = true;
        break;
      }
    }
  }
  if (semisync) {
    s = Exec(cl, "SET @rpl_semi_sync_slave = 1");
    if (!s.ok()) return s;
    cl->set_semisync(true);
    st.semisync_ = true;
  }
  s = cl->Register(o.server_id, o.report_host, o.report_port);
  if (!s.ok()) return s;
  if (!maria && start.gtid.has_value()) {
    auto set = GtidSet::Parse(*start.gtid);
    if (!set.ok()) return set.status();
    s = cl->DumpGtid(set->EncodePreviousGtidsBody(), 0, o.server_id);
  } else {
    if (start.position > 0xffffffffu) {
      return absl::InvalidArgumentError("a dump position past 4 GiB");
    }
    s = cl->Dump(start.file, static_cast<uint32_t>(start.position),
                 maria ? kDumpSendAnnotateRows : 0, o.server_id);
  }
  if (!s.ok()) return s;
  return st;
}

absl::StatusOr<SourceEvent> SourceStream::Next(absl::Time deadline) {
  auto r = client_.Read(deadline);
  if (!r.ok()) {
    if (absl::IsDeadlineExceeded(r.status()) || absl::IsResourceExhausted(r.status()) ||
        absl::IsDataLoss(r.status())) {
      return r.status();
    }
    return absl::UnavailableError(absl::StrCat("source: ", r.status().message()));
  }
  switch (r->kind) {
    case ClientReply::kEvent:
      break;
    case ClientReply::kEof:
      return absl::OutOfRangeError("the source ended the dump");
    case ClientReply::kError:
      return absl::FailedPreconditionError(
          absl::StrCat("source: ", r->error_code, ": ", r->message));
    default:
      return absl::DataLossError("source: a packet that is no event");
  }
  if (r->event.size() < 19) return absl::DataLossError("source: an event under 19 bytes");
  SourceEvent e;
  e.bytes = std::move(r->event);
  e.need_ack = r->need_ack;
  return e;
}

absl::Status SourceStream::Ack(const std::string& file, uint64_t position) {
  if (!semisync_) return absl::FailedPreconditionError("not a semi-sync stream");
  return client_.SendAck(position, file);
}

}  // namespace server
}  // namespace binlog
