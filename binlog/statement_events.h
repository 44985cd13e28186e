// File: binlog/statement_events.h
//
// Decoders for the parts of statement and commit events that carry a
// transaction's identity: the Xid event (16), the XA_prepare event (38) and
// the status variables of a Query event (2), where DDL statements carry
// their XID (MySQL's Q_DDL_LOGGED_WITH_XID, MariaDB's Q_XID); and for the
// events that support a statement in statement-based logging: Intvar (5),
// Rand (13), User_var (14), plus Incident (26). Layouts: the
// binlog-format reference, sections 6.5, 6.6, 6.9 and 7. The library writes
// none of the statement-support events (it logs rows), so they have no
// encoder here. The encoders of these
// events are in binlog/event_builder.h; the Query event's fixed part is
// decoded by DecodeQuery (binlog/event.h), whose QueryInfo::status_vars is
// the input of DecodeQueryStatusVars.
//
// Every decoder takes an event body without header and checksum footer,
// checks every length against the bytes it has (none reads outside its
// input) and reports a malformed body as DataLoss with a message; callers
// add the file and offset.
//
// Thread safety: the functions are thread-safe (no shared state).
// Lifetime: string_views in results point into the input.

#ifndef BINLOG_BINLOG_STATEMENT_EVENTS_H_
#define BINLOG_BINLOG_STATEMENT_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {

// Xid_event (16): the 8-byte XID of the storage engine's transaction (bytes
// after it are ignored).
absl::StatusOr<uint64_t> DecodeXid(absl::string_view body);

// Rows_query_log_event (29): the statement text after a length byte that
// readers ignore (the servers cap it at 255 and read the text to the end of
// the body). DataLoss for an empty body. Encoder: AppendRowsQuery
// (binlog/event_builder.h).
absl::StatusOr<absl::string_view> DecodeRowsQuery(absl::string_view body);

// XA_prepare_log_event (38): one_phase (1), formatID (4), gtrid_length (4),
// bqual_length (4), then gtrid and bqual. Each length is at most 64, as in
// the XA standard (the servers' XIDDATASIZE is 128 for both together).
struct XaPrepareInfo {
  bool one_phase = false;  // XA COMMIT ... ONE PHASE
  uint32_t format_id = 0;
  absl::string_view gtrid;
  absl::string_view bqual;
};
absl::StatusOr<XaPrepareInfo> DecodeXaPrepare(absl::string_view body);

// Status-variable codes (reference 6.6): MySQL's 0-20, MariaDB's from 128.
enum QueryStatusCode : uint8_t {
  kQFlags2 = 0,
  kQSqlMode = 1,
  kQCatalog = 2,  // 5.0.0-5.0.3 only
  kQAutoIncrement = 3,
  kQCharset = 4,
  kQTimeZone = 5,
  kQCatalogNz = 6,
  kQLcTimeNames = 7,
  kQCharsetDatabase = 8,
  kQTableMapForUpdate = 9,
  kQMasterDataWritten = 10,
  kQInvoker = 11,
  kQUpdatedDbNames = 12,
  kQMicroseconds = 13,
  // 14 and 15 (Q_COMMIT_TS, Q_COMMIT_TS2) were never written: unknown.
  kQExplicitDefaultsForTimestamp = 16,
  kQDdlLoggedWithXid = 17,
  kQDefaultCollationForUtf8mb4 = 18,
  kQSqlRequirePrimaryKey = 19,
  kQDefaultTableEncryption = 20,
  kQHrnow = 128,      // MariaDB
  kQXid = 129,        // MariaDB
  kQGtidFlags3 = 130, // MariaDB 10.8+
};

// The status variables of one Query event. Each has_* says whether the
// event carried that variable; values are as stored.
struct QueryStatusVars {
  bool has_flags2 = false;
  uint32_t flags2 = 0;  // OPTION_* bits (NOT_AUTOCOMMIT 0x80000, ...)
  bool has_sql_mode = false;
  uint64_t sql_mode = 0;
  bool has_catalog = false;  // Q_CATALOG_NZ_CODE or the old Q_CATALOG_CODE
  absl::string_view catalog;
  bool has_auto_increment = false;
  uint16_t auto_increment_increment = 1;
  uint16_t auto_increment_offset = 1;
  bool has_charset = false;
  uint16_t charset_client = 0;
  uint16_t collation_connection = 0;
  uint16_t collation_server = 0;
  bool has_time_zone = false;
  absl::string_view time_zone;
  bool has_lc_time_names = false;
  uint16_t lc_time_names = 0;
  bool has_charset_database = false;
  uint16_t charset_database = 0;
  bool has_table_map_for_update = false;
  uint64_t table_map_for_update = 0;
  bool has_master_data_written = false;
  uint32_t master_data_written = 0;
  bool has_invoker = false;
  absl::string_view invoker_user;
  absl::string_view invoker_host;
  bool has_updated_db_names = false;
  // More than 16 databases: the server wrote only the marker, no names.
  bool updated_db_names_over_max = false;
  std::vector<absl::string_view> updated_db_names;
  bool has_microseconds = false;
  uint32_t microseconds = 0;
  bool has_explicit_defaults_for_timestamp = false;
  uint8_t explicit_defaults_for_timestamp = 0;
  bool has_ddl_xid = false;  // Q_DDL_LOGGED_WITH_XID (MySQL atomic DDL)
  uint64_t ddl_xid = 0;
  bool has_default_collation_for_utf8mb4 = false;
  uint16_t default_collation_for_utf8mb4 = 0;
  bool has_sql_require_primary_key = false;
  uint8_t sql_require_primary_key = 0;
  bool has_default_table_encryption = false;
  uint8_t default_table_encryption = 0;
  bool has_hrnow = false;  // MariaDB: microseconds of the header timestamp
  uint32_t hrnow = 0;
  bool has_maria_xid = false;  // MariaDB Q_XID: the XID of a DDL
  uint64_t maria_xid = 0;
  bool has_gtid_flags3 = false;  // MariaDB: the Gtid event's flags_extra
  uint8_t gtid_flags3 = 0;
  bool has_start_alter_seq_no = false;  // with COMMIT/ROLLBACK ALTER flags
  uint64_t start_alter_seq_no = 0;

  // The walk met a code it does not know and, as the servers do, skipped
  // the rest of the block (MySQL stops at MariaDB's codes and the reverse;
  // here both families are known). unknown_offset is the code's offset in
  // the block.
  bool stopped_at_unknown = false;
  uint8_t unknown_code = 0;
  size_t unknown_offset = 0;

  // The XID the statement was logged with: Q_DDL_LOGGED_WITH_XID (MySQL)
  // or Q_XID (MariaDB). False if it carries neither (MariaDB prints
  // "xid=0" for those).
  bool xid(uint64_t* out) const;
};

// Encoder of MariaDB's Q_XID status variable (the one status variable the
// library writes, see AppendMariaDdlQuery in binlog/event_builder.h): the
// code 129 and the 8-byte XID, kMariaXidStatusVarSize bytes at `out`.
// DecodeQueryStatusVars reads it back as has_maria_xid / maria_xid.
inline constexpr size_t kMariaXidStatusVarSize = 9;
void EncodeMariaXidStatusVar(uint64_t xid, char* out);

// Walks a status-variable block (QueryInfo::status_vars): a sequence of
// (1-byte code, value) where each known code has a fixed size or a
// length-prefixed one (reference 6.6). DataLoss if a value runs past the
// block, as servers reject such an event.
absl::StatusOr<QueryStatusVars> DecodeQueryStatusVars(
    absl::string_view status_vars);

// MariaDB compression (Query_compressed 165, *_ROWS_COMPRESSED 166-171):
// expands one compressed block: a header byte 0x80 | (alg << 4) | lenlen
// (alg 0 = zlib), the uncompressed length in `lenlen` (1..4) bytes,
// big-endian, then a zlib stream. DataLoss for an unknown algorithm, a
// length above `max_size`, or a stream that does not inflate to exactly
// the announced length.
absl::Status MariaUncompress(absl::string_view block, size_t max_size,
                             std::string* out);
// The block MariaDB writes for `data` (zlib, the shortest length field).
// REQUIRES: data.size() < 2^32.
std::string MariaCompress(absl::string_view data);

// Query_compressed_event (165): a Query event whose statement is a
// compressed block (its status variables are not compressed: decode them
// with DecodeQuery's status_vars). Returns db and the expanded statement.
struct CompressedQueryInfo {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  absl::string_view db;
  std::string query;
};
absl::StatusOr<CompressedQueryInfo> DecodeMariaCompressedQuery(
    absl::string_view body, uint8_t post_header_len);

// ---------------------------------------------------------------------------
// Statement-support events (reference section 7)

// Intvar_event (5): the auto-increment value a statement used. DataLoss if
// the body is shorter than 9 bytes.
struct IntvarInfo {
  uint8_t type = 0;  // 1 LAST_INSERT_ID, 2 INSERT_ID
  uint64_t value = 0;
};
absl::StatusOr<IntvarInfo> DecodeIntvar(absl::string_view body);
// "LAST_INSERT_ID", "INSERT_ID", or "INVALID_INT" (the servers' names).
const char* IntvarTypeName(uint8_t type);

// Rand_event (13): the two seeds of RAND(). DataLoss below 16 bytes.
struct RandInfo {
  uint64_t seed1 = 0;
  uint64_t seed2 = 0;
};
absl::StatusOr<RandInfo> DecodeRand(absl::string_view body);

// User_var_event (14): a user variable a statement read. `value` is the
// value in text form: the bytes of a STRING (or ROW, or an unknown type)
// value with is_string set; the shortest round-trip decimal of a REAL; the
// signed or unsigned (flags bit 0, MySQL 5.6+) decimal of an INT; the
// decimal text of a DECIMAL (precision and scale bytes, then a binary
// decimal, as binlog/values.h reads it). DataLoss if the name or value runs
// past the body, or a REAL/INT value is not 8 bytes, or a DECIMAL value is
// malformed.
struct UserVarInfo {
  absl::string_view name;
  bool is_null = false;
  uint8_t type = 0;  // 0 STRING, 1 REAL, 2 INT, 3 ROW, 4 DECIMAL
  uint32_t charset = 0;
  bool is_string = false;  // `value` holds bytes, not a number
  std::string value;
};
absl::StatusOr<UserVarInfo> DecodeUserVar(absl::string_view body);

// Incident_event (26): the incident number and an optional message (a
// 1-byte length and the text). DataLoss below 2 bytes or for a message
// longer than the body.
// The one incident number MySQL and MariaDB define (INCIDENT_LOST_EVENTS);
// their readers reject any other as an invalid event.
inline constexpr uint16_t kIncidentLostEvents = 1;
struct IncidentInfo {
  uint16_t number = 0;  // 1 = LOST_EVENTS
  absl::string_view message;
};
absl::StatusOr<IncidentInfo> DecodeIncident(absl::string_view body);

}  // namespace binlog

#endif  // BINLOG_BINLOG_STATEMENT_EVENTS_H_
