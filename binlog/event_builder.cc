#include "binlog/event_builder.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/statement_events.h"

namespace binlog {
namespace {

// Types 1..41 as MySQL 8.0.26 - 8.2 declare them (reference section 4.2).
constexpr uint8_t kMySql80Phl[41] = {
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0,
    0, 0, 8, 8, 8, 2, 0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0};

// Types 1..42 as MySQL 8.4 declares them (libs/mysql/binlog/event/
// control_events.cpp, Format_description_event's constructor): 8.0's, with
// 0 for the V1 Rows events 23-25, 99 = 57 + 42 for type 15, and 0 for
// Gtid_tagged_log_event.
constexpr uint8_t kMySql84Phl[42] = {
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 99, 0, 4, 26, 8, 0,
    0, 0, 0, 0, 0, 2, 0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40,
    0, 0};

// Types 1..171 as MariaDB 10.11 declares them (reference section 4.2),
// checked against the corpus' Format_description events in
// tests/binlog/mariadb_flavor_test.cc.
constexpr uint8_t kMariaDb1011Phl[171] = {
    // 1..20
    56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 228, 0, 4, 26, 8, 0,
    // 21..40
    0, 0, 8, 8, 8, 2, 0, 0, 0, 10, 10, 10, 0, 0, 0, 0, 0, 0, 10, 10,
    // 41..160
    10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    // 161..171
    4, 19, 4, 0, 13, 8, 8, 8, 10, 10, 10};

// Builds header + body (+ footer) into a string; fills the CRC.
std::string Finish(uint8_t type, uint32_t timestamp, uint32_t server_id,
                   uint16_t flags, absl::string_view body, uint32_t log_pos,
                   bool footer, bool checksum_value) {
  size_t size = kHeaderSize + body.size() + (footer ? kChecksumSize : 0);
  std::string ev(size, '\0');
  EventHeader h;
  h.timestamp = timestamp;
  h.type = type;
  h.server_id = server_id;
  h.event_size = static_cast<uint32_t>(size);
  h.log_pos = log_pos;
  h.flags = flags;
  EncodeHeader(h, ev.data());
  if (!body.empty()) std::memcpy(ev.data() + kHeaderSize, body.data(), body.size());
  if (footer && checksum_value) {
    StoreLe32(ev.data() + size - kChecksumSize, ComputeEventChecksum(ev));
  }
  return ev;
}

}  // namespace

absl::string_view MySql80PostHeaderLengths() {
  return absl::string_view(reinterpret_cast<const char*>(kMySql80Phl),
                           sizeof(kMySql80Phl));
}

absl::string_view MySql84PostHeaderLengths() {
  return absl::string_view(reinterpret_cast<const char*>(kMySql84Phl),
                           sizeof(kMySql84Phl));
}

absl::string_view MariaDb1011PostHeaderLengths() {
  return absl::string_view(reinterpret_cast<const char*>(kMariaDb1011Phl),
                           sizeof(kMariaDb1011Phl));
}

std::string EncodeFormatDescription(const FdeParams& p) {
  std::string body;
  char b2[2];
  StoreLe16(b2, 4);
  body.append(b2, 2);
  std::string ver = p.server_version.substr(0, kFdeServerVersionLen - 1);
  ver.resize(kFdeServerVersionLen, '\0');
  body += ver;
  char b4[4];
  StoreLe32(b4, p.create_timestamp);
  body.append(b4, 4);
  body.push_back(static_cast<char>(kHeaderSize));
  body += std::string(p.flavor == LogFlavor::kMariaDB
                          ? MariaDb1011PostHeaderLengths()
                          : p.mysql_layout == MySqlLayout::k84
                                ? MySql84PostHeaderLengths()
                                : MySql80PostHeaderLengths());
  body.push_back(static_cast<char>(p.checksums ? 1 : 0));
  size_t size = kHeaderSize + body.size() + kChecksumSize;
  uint16_t flags = p.in_use ? kFlagBinlogInUse : 0;
  if (p.relay_log) flags |= kFlagRelayLog;
  // The 4 checksum bytes are always present in an FDE with an algorithm
  // byte, and always hold the real CRC.
  return Finish(kFormatDescriptionEvent, p.timestamp, p.server_id, flags, body,
                static_cast<uint32_t>(kMagicSize + size), true, true);
}

std::string EncodeRotate(uint32_t timestamp, uint32_t server_id,
                         absl::string_view next_file, uint32_t log_pos,
                         bool checksums) {
  std::string body(8, '\0');
  StoreLe64(body.data(), 4);
  body.append(next_file.data(), next_file.size());
  return Finish(kRotateEvent, timestamp, server_id, 0, body, log_pos,
                checksums, checksums);
}

std::string EncodeRotateTo(uint32_t timestamp, uint32_t server_id,
                           absl::string_view file, uint64_t position,
                           uint32_t log_pos, uint16_t flags, bool checksums) {
  std::string body(8, '\0');
  StoreLe64(body.data(), position);
  body.append(file.data(), file.size());
  return Finish(kRotateEvent, timestamp, server_id, flags, body, log_pos,
                checksums, checksums);
}

absl::StatusOr<std::string> EncodeSentFormatDescription(absl::string_view fde,
                                                        bool zero_log_pos) {
  auto fd = DecodeFormatDescription(fde);
  if (!fd.ok()) return fd.status();
  std::string ev(fde);
  EventHeader h = DecodeHeader(ev);
  h.flags = static_cast<uint16_t>(h.flags & ~kFlagBinlogInUse);
  if (zero_log_pos) h.log_pos = 0;
  EncodeHeader(h, ev.data());
  if (ServerVersionHasChecksumAlg(fd->server_version)) {
    StoreLe32(ev.data() + ev.size() - kChecksumSize, ComputeEventChecksum(ev));
  }
  return ev;
}

std::string EncodeHeartbeat(uint32_t server_id, absl::string_view file,
                            uint32_t position, bool checksums) {
  return Finish(kHeartbeatEvent, 0, server_id, kFlagArtificial, std::string(file),
                position, checksums, checksums);
}

absl::StatusOr<std::string> EncodeArtificialFormatDescription(
    absl::string_view fde) {
  auto fd = DecodeFormatDescription(fde);
  if (!fd.ok()) return fd.status();
  std::string ev(fde);
  EventHeader h = DecodeHeader(ev);
  h.flags = static_cast<uint16_t>((h.flags | kFlagArtificial) & ~kFlagBinlogInUse);
  h.log_pos = 0;
  EncodeHeader(h, ev.data());
  StoreLe32(ev.data() + kFdeCreateTimestampOffset, 0);
  if (ServerVersionHasChecksumAlg(fd->server_version)) {
    // The 4 checksum bytes follow the algorithm byte whatever the
    // algorithm (reference 4.1).
    StoreLe32(ev.data() + ev.size() - kChecksumSize, ComputeEventChecksum(ev));
  }
  return ev;
}

std::string EncodeStop(uint32_t timestamp, uint32_t server_id,
                       uint32_t log_pos, bool checksums) {
  return Finish(kStopEvent, timestamp, server_id, 0, absl::string_view(),
                log_pos, checksums, checksums);
}

std::string EncodePreviousGtids(uint32_t timestamp, uint32_t server_id,
                                const GtidSet& gtids, uint32_t start,
                                uint16_t flags, bool checksums) {
  std::string body = gtids.EncodePreviousGtidsBody();
  uint32_t size = static_cast<uint32_t>(kHeaderSize + body.size() +
                                        (checksums ? kChecksumSize : 0));
  return Finish(kPreviousGtidsEvent, timestamp, server_id, flags, body,
                start + size, checksums, checksums);
}

void AppendEmptyPreviousGtids(TransactionBuffer* txn, uint32_t timestamp,
                              uint32_t server_id) {
  char* p = txn->AppendEvent(kPreviousGtidsEvent, server_id, timestamp, 0, 8);
  std::memset(p, 0, 8);
}

void AppendGtid(TransactionBuffer* txn, uint32_t timestamp, uint32_t server_id,
                const uint8_t sid[16], int64_t gno, int64_t last_committed,
                int64_t sequence_number) {
  bool anonymous = gno == 0;
  char* p = txn->AppendEvent(anonymous ? kAnonymousGtidEvent : kGtidEvent,
                             server_id, timestamp, 0, 42);
  p[0] = 0;  // gtid_flags: row-based only
  std::memcpy(p + 1, sid, 16);
  StoreLe64(p + 17, static_cast<uint64_t>(gno));
  p[25] = 2;  // LOGICAL_TIMESTAMP_TYPECODE
  StoreLe64(p + 26, static_cast<uint64_t>(last_committed));
  StoreLe64(p + 34, static_cast<uint64_t>(sequence_number));
}

void AppendAnonymousGtid(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, int64_t last_committed,
                         int64_t sequence_number) {
  static const uint8_t kZeroSid[16] = {};
  AppendGtid(txn, timestamp, server_id, kZeroSid, 0, last_committed,
             sequence_number);
}

void AppendQuery(TransactionBuffer* txn, uint32_t timestamp,
                 uint32_t server_id, uint32_t thread_id, absl::string_view db,
                 absl::string_view query, uint16_t event_flags) {
  AppendQueryWithStatusVars(txn, timestamp, server_id, thread_id, db, query,
                            absl::string_view(), event_flags);
}

void AppendQueryWithStatusVars(TransactionBuffer* txn, uint32_t timestamp,
                               uint32_t server_id, uint32_t thread_id,
                               absl::string_view db, absl::string_view query,
                               absl::string_view status_vars,
                               uint16_t event_flags) {
  size_t db_len = db.size() > 255 ? 255 : db.size();
  size_t vars = status_vars.size() > 0xffff ? 0xffff : status_vars.size();
  size_t body = kQueryPostHeaderSize + vars + db_len + 1 + query.size();
  char* p =
      txn->AppendEvent(kQueryEvent, server_id, timestamp, event_flags, body);
  StoreLe32(p, thread_id);
  StoreLe32(p + 4, 0);  // exec time
  p[8] = static_cast<char>(db_len);
  StoreLe16(p + 9, 0);   // error code
  StoreLe16(p + 11, static_cast<uint16_t>(vars));
  p += kQueryPostHeaderSize;
  if (vars > 0) std::memcpy(p, status_vars.data(), vars);
  p += vars;
  if (db_len > 0) std::memcpy(p, db.data(), db_len);
  p[db_len] = '\0';
  if (!query.empty()) std::memcpy(p + db_len + 1, query.data(), query.size());
}

std::string DdlXidStatusVar(uint64_t xid, bool mariadb) {
  std::string out(9, '\0');
  if (mariadb) {
    EncodeMariaXidStatusVar(xid, out.data());  // Q_XID
  } else {
    out[0] = static_cast<char>(kQDdlLoggedWithXid);
    StoreLe64(&out[1], xid);
  }
  return out;
}

absl::Status AppendXaPrepare(TransactionBuffer* txn, uint32_t timestamp,
                             uint32_t server_id, uint32_t format_id,
                             absl::string_view gtrid, absl::string_view bqual,
                             bool one_phase) {
  if (gtrid.size() > 64 || bqual.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "XA gtrid and bqual are at most 64 bytes each (got ", gtrid.size(), " and ",
        bqual.size(), ")"));
  }
  size_t body = 13 + gtrid.size() + bqual.size();
  char* p = txn->AppendEvent(kXaPrepareEvent, server_id, timestamp, 0, body);
  p[0] = one_phase ? 1 : 0;
  StoreLe32(p + 1, format_id);
  StoreLe32(p + 5, static_cast<uint32_t>(gtrid.size()));
  StoreLe32(p + 9, static_cast<uint32_t>(bqual.size()));
  if (!gtrid.empty()) std::memcpy(p + 13, gtrid.data(), gtrid.size());
  if (!bqual.empty()) std::memcpy(p + 13 + gtrid.size(), bqual.data(), bqual.size());
  return absl::OkStatus();
}

void AppendRowsQuery(TransactionBuffer* txn, uint32_t timestamp,
                     uint32_t server_id, absl::string_view text) {
  char* p = txn->AppendEvent(kRowsQueryEvent, server_id, timestamp,
                             kFlagIgnorable, 1 + text.size());
  p[0] = static_cast<char>(text.size() > 255 ? 255 : text.size());
  if (!text.empty()) std::memcpy(p + 1, text.data(), text.size());
}

void AppendMariaDdlQuery(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, uint32_t thread_id,
                         absl::string_view db, absl::string_view query,
                         uint64_t xid) {
  char vars[kMariaXidStatusVarSize];
  EncodeMariaXidStatusVar(xid, vars);
  AppendQueryWithStatusVars(txn, timestamp, server_id, thread_id, db, query,
                            absl::string_view(vars, sizeof(vars)));
}

void AppendMariaGtidList(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, const MariaGtidState& state) {
  txn->AppendEvent(kMariaGtidListEvent, server_id, timestamp, 0,
                   state.EncodeGtidListBody());
}

void AppendBinlogCheckpoint(TransactionBuffer* txn, uint32_t timestamp,
                            uint32_t server_id, absl::string_view file_name) {
  txn->AppendEvent(kMariaBinlogCheckpointEvent, server_id, timestamp, 0,
                   EncodeBinlogCheckpointBody(file_name));
}

void AppendXid(TransactionBuffer* txn, uint32_t timestamp, uint32_t server_id,
               uint64_t xid) {
  char* p = txn->AppendEvent(kXidEvent, server_id, timestamp, 0, 8);
  StoreLe64(p, xid);
}

}  // namespace binlog
