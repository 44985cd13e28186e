// File: tools/decode/rows.h
//
// Row-based replication events: Table_map (19) and the Rows events that
// refer to it (Write/Update/Delete v1 23-25, v2 30-32, pre-GA 20-22, and
// MariaDB's zlib-compressed 166-171), decoded into column values.
//
//   TableMap        a decoded Table_map event: names, column types and
//                   their metadata, nullability, and the optional metadata
//                   (MySQL 8 binlog_row_metadata: signedness, charsets,
//                   column names, ENUM/SET strings, primary key)
//   RowsEvent       the header of a Rows event and its row-image bytes
//   RowsDecoder     walks the images of a Rows event with its TableMap:
//                   counts rows, and optionally turns every value into a
//                   Cell (text or bytes, ready to print)
//
// Layouts: binlog-format reference 6.7 and 6.8; value encodings: values.h.
// A row image is a NULL bitmap over the columns present in the image, then
// the non-NULL values, each of a size that depends on the column's type
// and metadata (and, for strings and BLOBs, on a length prefix). Nothing in
// an image says where it ends, so one value of an unknown type makes the
// rest of the event undecodable: such an event is reported with an error
// naming the row and column, after the rows decoded before it.
//
// Hostile input: every length is checked against the bytes left in the
// event; column counts are bounded by the bytes that describe them, and
// strings are never copied beyond what the event holds. Nothing here can
// read out of bounds, allocate more than a small multiple of the event
// size, or recurse without bound.
//
// Thread safety: thread-compatible (a RowsDecoder keeps scratch buffers).

#ifndef BINLOG_TOOLS_DECODE_ROWS_H_
#define BINLOG_TOOLS_DECODE_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {
namespace decode {

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
  // unknown or invalid (the full decoder reports why).
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

// "INT", "BIGINT UNSIGNED", "VARCHAR(256)" (the length is the maximum in
// bytes, as the binlog carries it), "DECIMAL(12,3)", "DATETIME(6)", ...
std::string ColumnTypeName(const Column& c);

// True for the Rows event types this module decodes (20-25, 30-32, 39,
// 166-171).
bool IsRowsEvent(uint8_t event_type);

enum class RowsKind { kWrite, kUpdate, kDelete };

struct RowsEvent {
  uint8_t event_type = 0;
  RowsKind kind = RowsKind::kWrite;
  uint64_t table_id = 0;
  uint16_t flags = 0;  // 0x1 STMT_END_F, ...
  bool compressed = false;  // MariaDB 166-171
  bool partial = false;     // PARTIAL_UPDATE_ROWS_EVENT (39)
  uint64_t column_count = 0;
  absl::string_view columns_before;  // present-columns bitmap(s)
  absl::string_view columns_after;   // UPDATE only
  absl::string_view rows;            // the row images
};

// Decodes the header of a Rows event. `post_header_len` is the FDE entry
// for its type (6 means a 4-byte table id). For a MariaDB compressed event
// the row images are inflated into `*scratch`, which `rows` then points
// into: keep `scratch` alive while using the result.
absl::Status DecodeRowsEvent(uint8_t event_type, absl::string_view body,
                             uint8_t post_header_len, std::string* scratch,
                             RowsEvent* out);

// One decoded value.
struct Cell {
  enum Kind : uint8_t {
    kNull,
    kNumber,  // `text` is a JSON number literal
    kText,    // `text` is text: DECIMAL, temporal, ENUM/SET names
    kBytes,   // `bytes` is a string value as stored (escape when printing)
    kBinary,  // `bytes` holds binary data (binary collation, GEOMETRY,
              // unreadable JSON): print as hex
    kJson,    // `text` is JSON (MySQL binary JSON converted)
  };
  Kind kind = kNull;
  std::string text;
  absl::string_view bytes;  // points into the event (or its scratch)
};

// Receives decoded images. `columns` are the column indexes (0-based) of
// the values in `cells`, in order.
class RowVisitor {
 public:
  virtual ~RowVisitor() = default;
  // `row` counts from 0; an UPDATE row has a before and an after image.
  virtual void OnImage(uint64_t row, bool after,
                       const std::vector<uint32_t>& columns,
                       const std::vector<Cell>& cells) = 0;
};

class RowsDecoder {
 public:
  // Walks every image of `ev`. With a visitor, each image is decoded into
  // cells and passed to it; without one, only the value sizes are
  // computed (to count rows). Returns OK, or DataLoss naming the row and
  // column where decoding failed; `*rows` is then the number of complete
  // rows before it. InvalidArgument if `ev` does not fit `table` (column
  // count differs) or the table's columns could not be decoded.
  absl::Status Decode(const TableMap& table, const RowsEvent& ev,
                      RowVisitor* visitor, uint64_t* rows);

 private:
  // The counting path: true with `*rows` set when every image could be
  // skipped with the columns' skip plans; false means "use Image".
  bool CountRows(const TableMap& table, const RowsEvent& ev, uint64_t n_before,
                 uint64_t n_after, uint64_t* rows);
  absl::Status Image(const TableMap& table, absl::string_view present,
                     uint64_t n_present, absl::string_view data, size_t* pos,
                     bool want_cells, uint64_t row);

  std::vector<uint32_t> columns_;
  std::vector<Cell> cells_;
  std::vector<const Column*> plan_before_;  // CountRows scratch
  std::vector<const Column*> plan_after_;
};

}  // namespace decode
}  // namespace binlog

#endif  // BINLOG_TOOLS_DECODE_ROWS_H_
