// File: tools/decode/events.h
//
// Decoders for the bodies of the control and statement events binlogtool
// prints and the library does not decode: Transaction_payload headers (40),
// Intvar (5), Rand (13), User_var (14), Rows_query
// (29), Incident (26); plus the
// command-line GTID syntax and the XA xid text form. Layouts:
// /work/shared/reference/binlog-format.md, sections 6 and 7.
//
// The events that carry a transaction's identity are decoded by the
// library, and binlogtool uses those decoders: GTID events and GTID sets in
// binlog/gtid.h, Xid, XA_prepare and Query status variables in
// binlog/statement_events.h.
//
// This is the decoding module of binlogtool. Every decoder works on the
// event body only (no header, no checksum footer), checks every length
// against the bytes it has, and reports a malformed body as DataLoss with a
// message; none of them reads outside `body`.
//
// Thread safety: all functions are thread-safe (no shared state).
// Lifetime: string_views in results point into `body`.

#ifndef BINLOG_TOOLS_DECODE_EVENTS_H_
#define BINLOG_TOOLS_DECODE_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/gtid.h"

namespace binlog {
namespace decode {

// ---------------------------------------------------------------------------
// GTIDs (the events themselves: binlog/gtid.h)

// Parses a GTID given on the command line: MySQL "UUID:N" or MariaDB
// "D-S-N". Exactly one of the two forms is filled.
struct GtidSpec {
  bool mysql = false;
  Uuid uuid;
  int64_t gno = 0;
  bool maria = false;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
};
bool ParseGtidSpec(absl::string_view text, GtidSpec* spec);

// ---------------------------------------------------------------------------
// Transaction_payload_event (40): the header fields before the compressed
// bytes. Expanding the payload is the Reader's job, not this module's.

struct TransactionPayloadInfo {
  uint64_t compression_type = 0;  // 0 = ZSTD, 128 = LZ4, 255 = NONE
  bool has_uncompressed_size = false;
  uint64_t uncompressed_size = 0;
  uint64_t payload_size = 0;  // compressed bytes after the header
  size_t header_size = 0;     // bytes of the field header, end mark included
};
absl::StatusOr<TransactionPayloadInfo> DecodeTransactionPayload(
    absl::string_view body);
// "zstd", "lz4" (128, the storage library's extension), "none", or
// "unknown".
const char* CompressionTypeName(uint64_t type);

// ---------------------------------------------------------------------------
// Statement-support events

struct IntvarInfo {
  uint8_t type = 0;  // 1 LAST_INSERT_ID, 2 INSERT_ID
  uint64_t value = 0;
};
absl::StatusOr<IntvarInfo> DecodeIntvar(absl::string_view body);
const char* IntvarTypeName(uint8_t type);  // "LAST_INSERT_ID", "INSERT_ID"

struct RandInfo {
  uint64_t seed1 = 0;
  uint64_t seed2 = 0;
};
absl::StatusOr<RandInfo> DecodeRand(absl::string_view body);

// User_var (14). `value` is the value in text form: the bytes of a string,
// a decimal number for INT / REAL / DECIMAL values.
struct UserVarInfo {
  absl::string_view name;
  bool is_null = false;
  uint8_t type = 0;  // 0 STRING, 1 REAL, 2 INT, 3 ROW, 4 DECIMAL
  uint32_t charset = 0;
  bool is_string = false;  // `value` holds bytes, not a number
  std::string value;
};
absl::StatusOr<UserVarInfo> DecodeUserVar(absl::string_view body);

// Rows_query (29): the statement after a (meaningless) length byte; the
// library's decoder (binlog/statement_events.h), next to its encoder.
absl::StatusOr<absl::string_view> DecodeRowsQuery(absl::string_view body);

// MariaDB Binlog_checkpoint (161): binlog::DecodeBinlogCheckpoint
// (binlog/gtid.h).
// Incident (26).
// The one incident number MySQL and MariaDB define (INCIDENT_LOST_EVENTS);
// their readers reject any other as an invalid event.
inline constexpr uint16_t kIncidentLostEvents = 1;
struct IncidentInfo {
  uint16_t number = 0;  // 1 = LOST_EVENTS
  absl::string_view message;
};
absl::StatusOr<IncidentInfo> DecodeIncident(absl::string_view body);

// An XA xid as the servers print it: X'gtrid',X'bqual',format_id.
std::string FormatXid(uint32_t format_id, absl::string_view gtrid,
                      absl::string_view bqual);

// MariaDB's compressed blocks and Query_compressed events (165) are
// decoded by binlog::MariaUncompress and binlog::DecodeMariaCompressedQuery
// (binlog/statement_events.h).

}  // namespace decode
}  // namespace binlog

#endif  // BINLOG_TOOLS_DECODE_EVENTS_H_
