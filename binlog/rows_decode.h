// File: binlog/rows_decode.h
//
// The values in the row images of a Rows event: the last step of the row
// codec (binlog/rows.h decodes Table_map events into TableMap and Rows
// events into RowsEvent, whose images are still bytes; this header turns
// those images into one RowCell per value). The encoder of the same values
// is PackValue (binlog/rows.h); the text forms are binlog/values.h and
// binlog/json_binary.h. Quoting and escaping the cells for output is the
// caller's (binlogtool's tools/event_printer.h).
//
//   ColumnTypeName  "VARCHAR(256)", "DECIMAL(12,3)", ... for a column
//   RowsDecoder     walks the images of a Rows event with its TableMap:
//                   counts rows, and optionally turns every value into a
//                   RowCell (text or bytes, ready to print)
//
// Layouts: binlog-format reference 6.7 and 6.8; value text: values.h.
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
// Errors: DataLoss for a malformed image (naming the row and column),
// InvalidArgument for a Rows event that does not fit its Table_map.
// Thread safety: thread-compatible (a RowsDecoder keeps scratch buffers;
// use one per thread). The free functions are thread-safe.
// Lifetime: a RowCell's `bytes` points into the Rows event; the cells
// passed to a visitor are valid only during the OnImage call.

#ifndef BINLOG_BINLOG_ROWS_DECODE_H_
#define BINLOG_BINLOG_ROWS_DECODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/rows.h"

namespace binlog {

// "INT", "BIGINT UNSIGNED", "VARCHAR(256)" (the length is the maximum in
// bytes, as the binlog carries it), "DECIMAL(12,3)", "DATETIME(6)", ...
std::string ColumnTypeName(const Column& c);

// One decoded value.
struct RowCell {
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

// Receives decoded images (RowsDecoder::Decode calls it synchronously, on
// the caller's thread). `columns` are the column indexes (0-based) of
// the values in `cells`, in order.
class RowVisitor {
 public:
  virtual ~RowVisitor() = default;
  // `row` counts from 0; an UPDATE row has a before and an after image.
  virtual void OnImage(uint64_t row, bool after,
                       const std::vector<uint32_t>& columns,
                       const std::vector<RowCell>& cells) = 0;
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
  std::vector<RowCell> cells_;
  std::vector<const Column*> plan_before_;  // CountRows scratch
  std::vector<const Column*> plan_after_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_ROWS_DECODE_H_
