// File: tools/decode/events.h
//
// Decoders for the bodies of the control and statement events binlogtool
// prints: MySQL Gtid / Anonymous_gtid (33/34) with logical clocks,
// Previous_gtids (35), Transaction_payload headers (40), MariaDB Gtid (162)
// with commit id and XA xid, Gtid_list (163), Binlog_checkpoint (161),
// Intvar (5), Rand (13), User_var (14), Rows_query (29), Annotate_rows
// (160), XA_prepare (38), Incident (26), and MariaDB's zlib-compressed
// Query (165). Layouts: /work/shared/reference/binlog-format.md, sections
// 6 and 7.
//
// This is the decoding module of binlogtool (DESIGN.md: event-body decoding
// belongs to the tool, not to the storage core). Every decoder works on the
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

namespace binlog {
namespace decode {

// ---------------------------------------------------------------------------
// GTIDs

// A source UUID in its text form: 8-4-4-4-12 lowercase hex digits.
std::string FormatUuid(const uint8_t sid[16]);
// Parses the text form (case-insensitive, dashes required). False if `text`
// is not a UUID.
bool ParseUuid(absl::string_view text, uint8_t sid[16]);

// MySQL Gtid_log_event (33) and Anonymous_gtid_log_event (34). Fields after
// the GNO are optional: a 5.6 event ends after it, a 5.7 event after the
// logical clocks; the has_* flags tell what the event carried.
struct MySqlGtid {
  uint8_t flags = 0;  // bit 0: FLAG_MAY_HAVE_SBR
  uint8_t sid[16] = {};
  int64_t gno = 0;
  bool has_logical_clock = false;
  int64_t last_committed = 0;
  int64_t sequence_number = 0;
  bool has_commit_timestamps = false;
  uint64_t immediate_commit_timestamp = 0;  // microseconds since the epoch
  uint64_t original_commit_timestamp = 0;
  bool has_transaction_length = false;
  uint64_t transaction_length = 0;
  bool has_server_versions = false;
  uint32_t immediate_server_version = 0;
  uint32_t original_server_version = 0;

  // All-zero SID and GNO 0: an Anonymous_gtid event.
  bool anonymous() const;
  // "3e11fa47-71ca-11e1-9e33-c80aa9429562:23", or "ANONYMOUS".
  std::string ToString() const;
};
absl::StatusOr<MySqlGtid> DecodeMySqlGtid(absl::string_view body);

// MariaDB Gtid_event (162). The server_id part of the GTID is the event
// header's server_id; the caller supplies it to ToString.
struct MariaGtid {
  uint64_t seq_no = 0;
  uint32_t domain_id = 0;
  uint8_t flags2 = 0;
  bool has_commit_id = false;  // FL_GROUP_COMMIT_ID
  uint64_t commit_id = 0;
  bool has_xid = false;  // FL_PREPARED_XA / FL_COMPLETED_XA
  uint32_t xid_format_id = 0;
  absl::string_view xid_gtrid;
  absl::string_view xid_bqual;

  // "domain-server-seq".
  std::string ToString(uint32_t server_id) const;
};
absl::StatusOr<MariaGtid> DecodeMariaGtid(absl::string_view body);

// MariaDB Gtid_list_event (163).
struct MariaGtidListEntry {
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
};
struct MariaGtidList {
  uint32_t flags = 0;  // top 4 bits of the count word
  std::vector<MariaGtidListEntry> entries;
  // "0-1-57,1-2-3" (empty for an empty list).
  std::string ToString() const;
};
absl::StatusOr<MariaGtidList> DecodeMariaGtidList(absl::string_view body);

// MySQL Previous_gtids_log_event (35) as a GTID set in the servers' text
// form, "uuid:1-16:20,uuid2:5" (intervals printed with inclusive ends;
// tagged entries as "uuid:tag:1-3"). Empty for the empty set.
absl::StatusOr<std::string> DecodePreviousGtids(absl::string_view body);

// Parses a GTID given on the command line: MySQL "UUID:N" or MariaDB
// "D-S-N". Exactly one of the two forms is filled.
struct GtidSpec {
  bool mysql = false;
  uint8_t sid[16] = {};
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

// Rows_query (29): the statement after a (meaningless) length byte.
absl::StatusOr<absl::string_view> DecodeRowsQuery(absl::string_view body);

// MariaDB Binlog_checkpoint (161): the file name.
absl::StatusOr<absl::string_view> DecodeBinlogCheckpoint(
    absl::string_view body);

// XA_prepare (38).
struct XaPrepareInfo {
  bool one_phase = false;
  uint32_t format_id = 0;
  absl::string_view gtrid;
  absl::string_view bqual;
};
absl::StatusOr<XaPrepareInfo> DecodeXaPrepare(absl::string_view body);

// Incident (26).
struct IncidentInfo {
  uint16_t number = 0;  // 1 = LOST_EVENTS
  absl::string_view message;
};
absl::StatusOr<IncidentInfo> DecodeIncident(absl::string_view body);

// An XA xid as the servers print it: X'gtrid',X'bqual',format_id.
std::string FormatXid(uint32_t format_id, absl::string_view gtrid,
                      absl::string_view bqual);

// ---------------------------------------------------------------------------
// MariaDB compression (Query_compressed 165, *_ROWS_COMPRESSED 166-171)

// Expands one MariaDB compressed block: a header byte 0x80 | (alg << 4) |
// lenlen (alg 0 = zlib), the uncompressed length in `lenlen` (1..4) bytes,
// big-endian, then a zlib stream. Refuses (DataLoss) an unknown algorithm,
// a length above `max_size`, and a stream that does not inflate to exactly
// the announced length.
absl::Status MariaUncompress(absl::string_view block, size_t max_size,
                             std::string* out);

// Query_compressed_event (165): like a Query event, but the statement is a
// compressed block. Returns db and the expanded statement.
struct CompressedQueryInfo {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  absl::string_view db;
  std::string query;
};
absl::StatusOr<CompressedQueryInfo> DecodeMariaCompressedQuery(
    absl::string_view body, uint8_t post_header_len);

}  // namespace decode
}  // namespace binlog

#endif  // BINLOG_TOOLS_DECODE_EVENTS_H_
