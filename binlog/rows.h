// File: binlog/rows.h
//
// Row-based replication events, encoder and decoder together: the
// Table_map event (19) and the Rows events that refer to it (MySQL Rows v2
// 30-32, MariaDB and MySQL 5.x v1 23-25, pre-GA 20-22, MySQL's partial
// update 39, MariaDB's zlib-compressed 166-171), and the binary form of the
// values in their row images. Layouts: binlog-format reference 6.7, 6.8.
//
//   Encoding                                Decoding
//   ColumnDef / TableDef (describe a table) TableMap / Column (decoded)
//   EncodeTableMapBody                      DecodeTableMap
//   Value + PackValue / PackedValueSize     DecodeRowsEvent (images as bytes)
//                                           RowsDecoder (images as values:
//                                           binlog/rows_decode.h)
//   Pack{Decimal,Time2,Datetime2,...}       Append{Decimal,Time2,...}
//                                           (binlog/values.h)
//
// binlog/rows_writer.h assembles whole statements (Table_map, Rows events
// filled in place) on a TransactionBuffer; this header is the per-value and
// per-event layer under it, shared with the decoders so the two can never
// disagree about a size. Printing decoded values (quoting, escaping, the
// text and JSON lines of binlogtool) is presentation and stays in tools/.
//
// Decoder contract (hostile input): every length is checked against the
// bytes left in the event; column counts are bounded by the bytes that
// describe them; nothing here reads out of bounds or recurses. Malformed
// bodies give DataLoss with a message.
//
// Thread safety: all functions are thread-safe (no shared state).
// Errors: encoders report a value that does not fit its column (wrong kind,
// out of range, too long) as InvalidArgument; a table description that
// cannot be encoded likewise.

#ifndef BINLOG_BINLOG_ROWS_H_
#define BINLOG_BINLOG_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/flavor.h"
#include "binlog/values.h"

namespace binlog {

// Column type codes of Table_map events (MySQL enum_field_types).
enum ColumnType : uint8_t {
  kColDecimal = 0,  // pre-5.0 DECIMAL: not used in row events
  kColTiny = 1,
  kColShort = 2,
  kColLong = 3,
  kColFloat = 4,
  kColDouble = 5,
  kColNull = 6,
  kColTimestamp = 7,
  kColLongLong = 8,
  kColInt24 = 9,
  kColDate = 10,
  kColTime = 11,
  kColDatetime = 12,
  kColYear = 13,
  kColNewDate = 14,
  kColVarchar = 15,
  kColBit = 16,
  kColTimestamp2 = 17,
  kColDatetime2 = 18,
  kColTime2 = 19,
  // MySQL 9.0+ VECTOR: 1 metadata byte (the length-prefix size, 4), the
  // value length-prefixed like a BLOB: IEEE 754 float32 values,
  // little-endian, one per dimension.
  kColVector = 242,
  kColJson = 245,
  kColNewDecimal = 246,
  kColEnum = 247,
  kColSet = 248,
  kColTinyBlob = 249,
  kColMediumBlob = 250,
  kColLongBlob = 251,
  kColBlob = 252,
  kColVarString = 253,
  kColString = 254,
  kColGeometry = 255,
};

// Binary collation id: a string column with it holds bytes, not text.
inline constexpr uint32_t kBinaryCollation = 63;

// Rows event flags (post-header).
inline constexpr uint16_t kRowsStmtEndF = 0x0001;
// Table_map flags: TM_BIT_LEN_EXACT_F, set by both servers.
inline constexpr uint16_t kTableMapBitLenExactF = 0x0001;

// ---------------------------------------------------------------------------
// Describing a table (encoder side)

// One column as the server describes it. `type` is the SQL type; the
// Table_map carries it as the servers do (ENUM and SET as STRING with their
// real type in the metadata; every BLOB/TEXT as BLOB).
struct ColumnDef {
  ColumnType type = kColLong;
  // Per type (anything else ignores it):
  //   VARCHAR, CHAR (kColString): maximum length in bytes (characters x
  //     the charset's bytes per character), 1..65535 (CHAR: 1..1020)
  //   BLOB family (kColBlob/Tiny/Medium/Long) and JSON, GEOMETRY, VECTOR: the
  //     length-prefix size 1..4 (TINY 1, BLOB 2, MEDIUM 3, LONG 4); 0
  //     takes it from the type (kColBlob: 2, JSON/GEOMETRY: 4)
  //   NEWDECIMAL: precision 1..65 (and `scale`)
  //   TIME2, DATETIME2, TIMESTAMP2: fractional digits 0..6
  //   BIT: bits 1..64
  //   ENUM: number of values (1..65535); SET: number of members (1..64)
  uint32_t length = 0;
  uint8_t scale = 0;  // NEWDECIMAL
  bool nullable = true;
  bool is_unsigned = false;   // integer, FLOAT, DOUBLE, DECIMAL
  uint32_t collation = 0;     // character columns (incl. ENUM/SET); 0: none
  std::string name;           // for binlog_row_metadata=FULL
  std::vector<std::string> enum_values;  // ENUM/SET member names (FULL)
  // GEOMETRY (kColGeometry): the declared type, as the GEOMETRY_TYPE
  // optional metadata carries it (Field::geometry_type): 0 GEOMETRY,
  // 1 POINT, 2 LINESTRING, 3 POLYGON, 4 MULTIPOINT, 5 MULTILINESTRING,
  // 6 MULTIPOLYGON, 7 GEOMETRYCOLLECTION.
  uint8_t geometry_type = 0;
};

// binlog_row_metadata: what optional metadata the Table_map carries.
enum class RowMetadata {
  kNone,     // MariaDB's default NO_LOG
  kMinimal,  // signedness, character sets (MySQL 8.0's default)
  kFull,     // + column names, ENUM/SET values, primary key, visibility
};

// A UNIQUE index other than the primary key, for WRITESET dependency
// tracking (binlog/writeset.h): its columns in index order and, for each,
// the length of a prefix index (UNIQUE (c(10))) as MySQL declares it
// (characters for text, bytes for binary strings); 0, or `prefix` shorter
// than `columns`: the whole value. See RowsWriter for how values are
// hashed.
struct KeyDef {
  std::vector<uint32_t> columns;  // 1.. column indexes
  std::vector<uint32_t> prefix;
};

struct TableDef {
  uint64_t table_id = 0;  // < 2^48
  std::string schema;     // <= 64 bytes
  std::string table;      // <= 64 bytes
  std::vector<ColumnDef> columns;  // 1..4096
  std::vector<uint32_t> primary_key;  // column indexes (FULL; row images)
  RowMetadata metadata = RowMetadata::kMinimal;
  // For WRITESET dependency tracking (RowsWriter); not written to the
  // Table_map. Every unique key must be named: a key left out is a
  // conflict the replica will not see.
  //   primary_key_prefix: per primary-key column, a prefix length as in
  //     KeyDef (empty: whole values).
  //   unique_keys: every UNIQUE index other than the primary key.
  //   foreign_key_parent: another table's foreign key references this one
  //     (its changes can cascade where no key shows them): a transaction
  //     that changes it falls back to commit order, as MySQL's does. A
  //     table whose own foreign keys reference others needs nothing here
  //     when its parents' changes go through this rule.
  std::vector<uint32_t> primary_key_prefix;
  std::vector<KeyDef> unique_keys;
  bool foreign_key_parent = false;
};

// The Table_map body (no header) for `def`, as the given server writes it
// (MySQL adds COLUMN_VISIBILITY to FULL metadata; MariaDB 10.11 does not).
// InvalidArgument if the description cannot be encoded.
absl::StatusOr<std::string> EncodeTableMapBody(const TableDef& def,
                                               LogFlavor flavor);

// The Table_map metadata bytes of one column (0-2 bytes written to `out`,
// which needs 2 bytes); returns how many. Exposed for tests and tools.
size_t EncodeColumnMeta(const ColumnDef& c, char* out);

// The type byte of a column in the Table_map (ENUM/SET -> STRING, the BLOB
// family -> BLOB).
uint8_t TableMapType(ColumnType type);

// ---------------------------------------------------------------------------
// Values (encoder side)

// A calendar value for DATE, TIME2 and DATETIME2 columns.
struct Temporal {
  int32_t year = 0;     // 0..9999
  uint8_t month = 0;    // 0..12
  uint8_t day = 0;      // 0..31
  uint16_t hour = 0;    // DATETIME 0..23; TIME 0..838
  uint8_t minute = 0;   // 0..59
  uint8_t second = 0;   // 0..59
  uint32_t micros = 0;  // 0..999999, truncated to the column's precision
  bool negative = false;  // TIME only
};

// A Temporal from its fields, as they are (PackValue checks the ranges).
// DATE: leave the time zero; TIME: leave the date zero.
inline Temporal MakeTemporal(int64_t year, int64_t month, int64_t day,
                             int64_t hour = 0, int64_t minute = 0,
                             int64_t second = 0, int64_t micros = 0,
                             bool negative = false) {
  Temporal t;
  t.year = static_cast<int32_t>(year);
  t.month = static_cast<uint8_t>(month);
  t.day = static_cast<uint8_t>(day);
  t.hour = static_cast<uint16_t>(hour);
  t.minute = static_cast<uint8_t>(minute);
  t.second = static_cast<uint8_t>(second);
  t.micros = static_cast<uint32_t>(micros);
  t.negative = negative;
  return t;
}

// One column value handed to the encoder. Which kinds a column accepts:
//   integers, YEAR (the year, 0 or 1901..2155), ENUM (index), SET (member
//   bits), BIT (bits): Int or UInt
//   FLOAT, DOUBLE: Double (or Int)
//   NEWDECIMAL: Decimal text ("-123.45"; at most `scale` fraction digits),
//     or DecimalBinary: the server's packed bytes (exactly
//     DecimalBinarySize(precision, scale) bytes, each 9-digit group a valid
//     digit group: checked), copied as they are
//   CHAR, VARCHAR, BLOB/TEXT, GEOMETRY: Bytes (the stored bytes)
//   JSON: Bytes, already in the server's storage form (MySQL binary JSON)
//   DATE, TIME2, DATETIME2: Time; TIMESTAMP2: Timestamp
//   pre-5.6.4 TIME, DATETIME: Time; TIMESTAMP: Timestamp (no fraction)
// Null() for a NULL (nullable columns only). A Value does not own the
// bytes it points to.
struct Value {
  enum Kind : uint8_t {
    kNull, kInt, kUInt, kDouble, kBytes, kDecimal, kTime, kTimestamp,
    kDecimalBinary
  };
  Kind kind = kNull;
  union {
    int64_t i;
    uint64_t u;
    double d;
    struct {
      const char* data;
      size_t size;
    } s;
    Temporal t;
    struct {
      int64_t seconds;
      uint32_t micros;
    } ts;
  };
  Value() : u(0) {}
  static Value Null() { return Value(); }
  static Value Int(int64_t v) { Value x; x.kind = kInt; x.i = v; return x; }
  static Value UInt(uint64_t v) { Value x; x.kind = kUInt; x.u = v; return x; }
  static Value Double(double v) { Value x; x.kind = kDouble; x.d = v; return x; }
  static Value Bytes(absl::string_view v) {
    Value x;
    x.kind = kBytes;
    x.s.data = v.data();
    x.s.size = v.size();
    return x;
  }
  static Value Decimal(absl::string_view text) {
    Value x = Bytes(text);
    x.kind = kDecimal;
    return x;
  }
  // The binary form a server holds in its record (binlog/values.h:
  // DecimalBinarySize bytes).
  static Value DecimalBinary(absl::string_view bytes) {
    Value x = Bytes(bytes);
    x.kind = kDecimalBinary;
    return x;
  }
  static Value Time(const Temporal& v) { Value x; x.kind = kTime; x.t = v; return x; }
  static Value Timestamp(int64_t seconds, uint32_t micros = 0) {
    Value x;
    x.kind = kTimestamp;
    x.ts.seconds = seconds;
    x.ts.micros = micros;
    return x;
  }
  absl::string_view bytes() const { return absl::string_view(s.data, s.size); }
};

// How one described column is packed: precomputed from a ColumnDef so that
// packing a value is a switch and a store.
struct ColumnCodec {
  enum Pack : uint8_t {
    kFixedLe,     // integers, ENUM, SET: `size` bytes little-endian
    kFloat,
    kDouble,
    kYear,
    kDate,
    kTime2,
    kDatetime2,
    kTimestamp2,
    kTimeOld,      // 3 bytes LE, signed HHMMSS
    kDatetimeOld,  // 8 bytes LE, YYYYMMDDHHMMSS
    kTimestampOld, // 4 bytes LE seconds
    kDecimal,
    kBit,         // `size` bytes big-endian
    kPrefixed,    // `prefix` length bytes then the bytes (<= max_len)
  };
  Pack pack = kFixedLe;
  uint8_t type = 0;     // ColumnType
  uint8_t size = 0;     // fixed size (0 for kPrefixed)
  uint8_t prefix = 0;   // kPrefixed: length-prefix bytes
  uint8_t fsp = 0;      // temporal
  uint8_t precision = 0, scale = 0;  // decimal
  bool nullable = true;
  bool is_unsigned = false;
  bool is_blob = false;  // BLOB/TEXT/JSON/GEOMETRY (NOBLOB row images)
  uint64_t max_len = 0;  // kPrefixed: largest value; kBit: bits
};

// InvalidArgument if `c` is not a column the encoder can pack.
absl::StatusOr<ColumnCodec> MakeColumnCodec(const ColumnDef& c);

// Bytes `v` takes in a row image of column `c` (0 for NULL), or -1 if `v`
// does not fit the column (kind, range or length); PackValueError says why.
int64_t PackedValueSize(const ColumnCodec& c, const Value& v);
// Writes `v` (PackedValueSize(c, v) > 0 bytes, already checked) at `out`
// and returns the end.
char* PackValue(const ColumnCodec& c, const Value& v, char* out);
// Why PackedValueSize returned -1, for an error message.
std::string PackValueError(const ColumnCodec& c, const Value& v);

// The binary forms, one helper per encoding (MySQL's my_time.cc and
// strings/decimal.cc layouts); each returns false for an out-of-range
// input and writes exactly the column's value size otherwise.
bool PackDecimal(absl::string_view text, int precision, int scale, char* out);
// (DecimalBinaryValid and DecimalBinaryIsZero, for the server's binary
// DECIMAL bytes: binlog/values.h.)
bool PackTime2(const Temporal& t, int fsp, char* out);      // 3 + frac
bool PackDatetime2(const Temporal& t, int fsp, char* out);  // 5 + frac
bool PackTimestamp2(int64_t seconds, uint32_t micros, int fsp, char* out);
bool PackDate(const Temporal& t, char* out);                // 3
bool PackYear(int64_t year, char* out);                     // 1

// The value sizes DecimalBinarySize and TemporalFracBytes, and the
// decoders of these forms to text, are in binlog/values.h.

// ---------------------------------------------------------------------------
// Decoding

// A decoded Table_map column.
struct Column {
  uint8_t type = 0;       // as in the Table_map
  uint8_t real_type = 0;  // type, or ENUM/SET/STRING for a STRING column
  uint32_t meta = 0;      // metadata as the servers combine it
  uint32_t length = 0;    // STRING: max bytes; ENUM/SET: storage bytes
  bool nullable = false;
  bool is_unsigned = false;   // from the SIGNEDNESS optional metadata
  uint32_t collation = 0;     // 0 = unknown
  std::string name;           // empty when not logged
  std::vector<std::string> enum_values;  // ENUM_STR_VALUE / SET_STR_VALUE
  // How to skip a value (counting rows without decoding them): a fixed
  // size in bytes, or a little-endian length prefix of `skip_prefix` bytes
  // before the bytes. skip_fixed < 0 with skip_prefix 0: the size is
  // unknown or invalid (a full decoder reports why).
  int32_t skip_fixed = -1;
  uint8_t skip_prefix = 0;
};

struct TableMap {
  uint64_t table_id = 0;
  uint16_t flags = 0;
  std::string db;
  std::string table;
  std::vector<Column> columns;
  bool has_signedness = false;
  bool has_names = false;
  std::vector<uint32_t> primary_key;  // column indexes, when logged
  // Set when the column types/metadata could not be fully decoded (an
  // unknown column type): db/table are valid, rows cannot be decoded.
  std::string columns_error;

  // "db.table".
  std::string QualifiedName() const;
};

// Decodes a Table_map body. `post_header_len` is the FDE entry for
// TABLE_MAP_EVENT (6: 4-byte table id, as in MySQL 5.0; otherwise 6
// bytes). DataLoss if the names or column list are malformed; an unknown
// column type sets TableMap::columns_error instead.
absl::StatusOr<TableMap> DecodeTableMap(absl::string_view body,
                                        uint8_t post_header_len);

// The table id that starts a Table_map or Rows event body, as
// DecodeTableMap and DecodeRowsEvent read it: 4 bytes when the event
// type's post-header length is 6 (MySQL 5.0), else 6 bytes, little-endian.
// For callers that key a cache of decoded Table_maps by id without decoding
// the whole event. DataLoss if the body is shorter than the id.
absl::StatusOr<uint64_t> DecodeTableId(absl::string_view body,
                                       uint8_t post_header_len);

// True for the Rows event types decoded here (20-25, 30-32, 39, 166-171).
bool IsRowsEvent(uint8_t event_type);

// Numeric in MySQL's is_numeric_type sense: the columns the SIGNEDNESS
// optional metadata covers (TINY..LONGLONG, INT24, NEWDECIMAL, FLOAT,
// DOUBLE).
bool IsNumericColumnType(uint8_t type);

enum class RowsKind { kWrite, kUpdate, kDelete };

struct RowsEvent {
  uint8_t event_type = 0;
  RowsKind kind = RowsKind::kWrite;
  uint64_t table_id = 0;
  uint16_t flags = 0;  // kRowsStmtEndF, ...
  bool compressed = false;  // MariaDB 166-171
  bool partial = false;     // PARTIAL_UPDATE_ROWS_EVENT (39)
  uint64_t column_count = 0;
  absl::string_view columns_before;  // present-columns bitmap(s)
  absl::string_view columns_after;   // UPDATE only
  absl::string_view rows;            // the row images
};

// Decodes the header of a Rows event. `post_header_len` is the FDE entry
// for its type (6 means a 4-byte table id). For a MariaDB compressed event
// the row images are inflated into `*scratch` (binlog::MariaUncompress,
// binlog/statement_events.h), which `rows` then points into: keep
// `scratch` alive while using the result.
absl::Status DecodeRowsEvent(uint8_t event_type, absl::string_view body,
                             uint8_t post_header_len, std::string* scratch,
                             RowsEvent* out);

// The extent of one non-NULL value of column `c` at the start of `data`:
// its size in bytes (length prefix included), or -1 with `*error` set if
// the column's type or metadata is unknown or the value runs past `data`.
int64_t ValueExtent(const Column& c, absl::string_view data,
                    const char** error);

}  // namespace binlog

#endif  // BINLOG_BINLOG_ROWS_H_
