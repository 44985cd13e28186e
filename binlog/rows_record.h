// File: binlog/rows_record.h
//
// Rows as a server holds them: the record format (MySQL's and MariaDB's
// `table->record[0]`) as the input of RowsWriter's record path
// (binlog/rows_writer.h: DescribeTable with a RecordLayout, then
// InsertRecord / UpdateRecord / DeleteRecord).
//
// A record is one buffer of TABLE_SHARE::reclength bytes: NULL flags (a
// bit per nullable column, at the byte and mask the column's Field knows
// as null_ptr / null_bit), then each column at a fixed offset (Field::ptr
// - record) in `pack_length` bytes. Per type, what the record holds and
// what a Rows event wants (MySQL 8.4 and MariaDB 10.11/11.x sql/field.cc,
// Field_*::pack):
//
//   type (ColumnDef::type)          record bytes          row-image bytes
//   TINY SHORT INT24 LONG LONGLONG  1/2/3/4/8 LE           the same
//   FLOAT DOUBLE                    4/8 LE IEEE 754       the same
//   NEWDECIMAL                      binary DECIMAL        the same
//   YEAR, DATE/NEWDATE (3 bytes)    1 / 3 bytes           the same
//   TIME2 DATETIME2 TIMESTAMP2      binary, big-endian    the same
//   TIME DATETIME TIMESTAMP (pre-   3 / 8 / 4 bytes LE    the same
//     5.6.4 forms, no fraction)
//   ENUM, SET                       1-2 / 1-4,8 bytes LE  the same
//   BIT(n)                          (n+7)/8 bytes BE      the same
//   VARCHAR(n bytes)                1 (n < 256) or 2      prefix + used
//                                   bytes LE length, then bytes only
//                                   n bytes
//   CHAR(n bytes)                   n bytes, padded with  1 (n < 256) or 2
//                                   spaces (binary        bytes LE length,
//                                   collation 63: 0x00)   then the bytes
//                                                         without padding
//   BLOB family, JSON, GEOMETRY,    1..4 bytes LE length  the length, then
//     VECTOR                        then a pointer        the bytes pointed
//                                   (sizeof(void*)) to    to
//                                   the bytes
//
// The fixed-size forms agree by construction: neither server's Field of
// those types has a pack() of its own, so the row image is a copy of the
// record's pack_length bytes (little-endian hosts).
//
// So every fixed-size column is copied as it is (adjacent NOT NULL ones in
// one memcpy), and only VARCHAR (used length), CHAR (padding trimmed,
// length added), the BLOB family (pointer followed) and the NULL flags
// (record bits to the image's bitmap) take a step of their own.
//
// Not supported by the record path (DescribeTable: InvalidArgument):
// VAR_STRING (253, the pre-5.0 VARCHAR); CHAR in a character set whose
// characters take at least 2 bytes (ucs2, utf16, utf16le, utf32:
// ColumnRecord::mbminlen > 1), whose padding is not 0x20 bytes; BIT
// columns whose uneven high bits an engine keeps among the NULL flags
// (MyISAM's Field_bit with bit_len > 0): describe them as the whole-byte
// form only if the record holds that form (InnoDB's); MariaDB's
// pre-5.6.4-format fractional TIME/DATETIME/TIMESTAMP (types 7, 11, 12
// with decimals: the ColumnDef cannot describe them either).
//
// Thread safety: all functions are thread-safe (no shared state);
// RecordImagePlan is immutable after Compile.
// Errors: a layout that does not fit its table, or a value that does not
// fit its column (StoreRecord), is InvalidArgument.

#ifndef BINLOG_BINLOG_ROWS_RECORD_H_
#define BINLOG_BINLOG_ROWS_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "binlog/flavor.h"
#include "binlog/rows.h"

namespace binlog {

// Where one column sits in the record, as the server's Field knows it.
struct ColumnRecord {
  uint32_t offset = 0;     // Field::ptr - record
  uint32_t null_byte = 0;  // Field::null_ptr - record (nullable columns)
  uint8_t null_bit = 0;    // Field::null_bit; 0 for a NOT NULL column
  // Checks (0: not given). pack_length: the field's bytes in the record
  // (Field::pack_length(); RecordPackLength). length_bytes: VARCHAR 1/2
  // (Field_varstring::length_bytes), BLOB family 1..4 (packlength).
  uint32_t pack_length = 0;
  uint8_t length_bytes = 0;
  // CHAR: the character set's smallest character in bytes (mbminlen).
  // Only 1 is supported.
  uint8_t mbminlen = 1;
};

struct RecordLayout {
  uint32_t record_length = 0;  // TABLE_SHARE::reclength
  std::vector<ColumnRecord> columns;  // one per TableDef column
};

// The bytes column `c` takes in a record (Field::pack_length()), or 0 if
// the record path does not support the type.
uint32_t RecordPackLength(const ColumnDef& c);

// A layout laid out as servers do: the NULL flags first (one bit per
// nullable column in column order, from bit 0 of byte 0), then each column
// in column order. For callers that build records themselves, tests and
// benchmarks.
RecordLayout ServerRecordLayout(const TableDef& def);

// InvalidArgument unless `layout` describes every column of `def` inside
// the record, with NULL bits exactly for the nullable columns and types
// the record path supports.
absl::Status CheckRecordLayout(const TableDef& def, const RecordLayout& layout);

// Writes `row` (one Value per column, as RowsWriter::Insert takes them)
// into `record` (at least layout.record_length bytes) as a server holds
// it; bytes no column uses are zeroed. BLOB-family columns point into the
// Values' bytes, which must outlive the record's use. InvalidArgument if
// the layout or a value does not fit.
absl::Status StoreRecord(const TableDef& def, const RecordLayout& layout,
                         absl::Span<const Value> row, absl::Span<uint8_t> record);

namespace record_internal {

// One column's record form, resolved from its ColumnDef and ColumnRecord.
struct RecordColumn {
  enum Form : uint8_t { kFixed, kVarchar, kChar, kBlob };
  Form form = kFixed;
  uint8_t prefix = 0;    // kVarchar, kBlob: length bytes; kChar: binlog's
  uint8_t pad = ' ';     // kChar
  uint8_t null_bit = 0;  // 0: NOT NULL
  uint32_t null_byte = 0;
  uint32_t offset = 0;
  uint32_t size = 0;     // kFixed: bytes; kVarchar: max length; kChar: slot
};

// CHAR trimming: the length of p[0, n) without its trailing `pad` bytes,
// by implementation `level` (0: SSE2 or portable, 1: AVX2, 2: AVX-512 BW;
// a level the CPU lacks falls back to TrimLevel()). Every level gives the
// same lengths; the writer uses TrimLevel(), the best the CPU has. For
// tests, which compare the levels.
int TrimLevel();
size_t TrimmedLengthAt(int level, const uint8_t* p, size_t n, uint8_t pad);

// Resolves every column of `def` (CheckRecordLayout first).
absl::Status ResolveColumns(const TableDef& def, const RecordLayout& layout,
                            std::vector<RecordColumn>* out);

// The value bytes of a non-NULL variable column (VARCHAR used bytes, CHAR
// without padding, BLOB pointed-to bytes) in `rec`; false if its length
// is invalid (VARCHAR over its maximum, a BLOB length with no pointer).
bool VariableBytes(const RecordColumn& c, const uint8_t* rec, const char** data,
                   size_t* size);

// How to turn a record into one row image of a fixed column list: a
// sequence of steps, adjacent NOT NULL fixed-size columns merged into one
// copy. Compile reserves; compiling again with at most as many columns
// does not allocate.
class RecordImagePlan {
 public:
  void Reserve(size_t columns) {
    steps_.reserve(columns);
    checked_.reserve(columns);
  }
  // `image`: the columns of the image in column order. `maria`: set the
  // unused high bits of the last NULL byte, as MariaDB's pack_row does.
  void Compile(absl::Span<const RecordColumn> cols,
               absl::Span<const uint32_t> image, bool maria);
  // Checks `rec`'s VARCHAR and BLOB lengths and returns at least the
  // image's size: the exact size but for CHARs, counted at their slots'
  // sizes (trimming them is Pack's). -1 with `*bad` the column whose
  // length is invalid.
  int64_t Bound(const uint8_t* rec, uint32_t* bad) const;
  // Writes the image of a record Bound accepted (at most Bound's bytes)
  // and returns its end.
  char* Pack(const uint8_t* rec, char* out) const;
  // How much smaller than Bound's value the image can be: the CHAR slots
  // (trimmed) and the bytes of nullable columns (left out when NULL). An
  // image is at least Bound() - slack() bytes.
  uint32_t slack() const { return slack_; }
  // Pack with the CHAR trimming of `level` (TrimmedLengthAt; at or above
  // TrimLevel(): Pack itself). For tests: every level packs alike.
  char* PackAt(int level, const uint8_t* rec, char* out) const;
  size_t step_count() const { return steps_.size(); }

  struct Step {
    RecordColumn::Form form;
    uint8_t prefix;
    uint8_t pad;
    uint8_t null_bit;  // 0: NOT NULL
    uint32_t null_byte;
    uint32_t offset;
    uint32_t size;      // kFixed: bytes copied; kVarchar: max; kChar: slot
    uint32_t bit;       // position in the image (NULL bitmap)
    uint32_t fixed;     // bytes counted in fixed_ (left out when NULL)
    uint32_t column;    // for errors
  };

 private:
  std::vector<Step> steps_;
  // The VARCHAR and BLOB steps (Bound reads their lengths).
  std::vector<uint32_t> checked_;
  uint32_t fixed_ = 0;  // NULL bitmap + fixed sizes + length prefixes
  uint32_t char_slots_ = 0;  // the CHAR steps' slot sizes
  uint32_t nb_ = 0;     // NULL bitmap bytes
  uint8_t last_init_ = 0;  // initial last NULL byte (MariaDB's high bits)
  uint32_t slack_ = 0;  // see slack()
};

}  // namespace record_internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_ROWS_RECORD_H_
