// File: tools/event_printer.h
//
// EventPrinter: one binlog event as one record of binlogtool's output (a
// text line, or a JSON object on its own line), with the decoded fields of
// its type. Shared by `dump` and `follow`. The keys are the stable
// interface documented in tools/README.md.
//
// The printer keeps the Table_map events it has seen (per table id, until
// the next file), so that Rows events can name their table, count their
// rows and, with decode_rows, print their row images as column values.
// Everything it decodes comes from the library's decoders (binlog/), which
// are bounds-checked:
// a malformed body becomes a `decode_error` (or `rows_error`) field, never
// a crash and never a stop of the dump.
//
// Thread safety: thread-compatible.

#ifndef BINLOG_TOOLS_EVENT_PRINTER_H_
#define BINLOG_TOOLS_EVENT_PRINTER_H_

#include <cstdint>
#include <string>
#include <unordered_map>

#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/gtid.h"
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "binlog/rows.h"
#include "binlog/rows_decode.h"
#include "tools/output.h"

namespace binlog {
namespace tools {

struct PrintOptions {
  OutputFormat format = OutputFormat::kText;
  // Print row images (Rows events) as column values.
  bool decode_rows = false;
};

class EventPrinter {
 public:
  explicit EventPrinter(const PrintOptions& options);

  // Text mode: the `# file "NAME"` line that starts each file. Nothing in
  // JSON mode (every record names its file).
  void PrintFileStart(absl::string_view file_name, std::string* out);

  // Appends the record of `ev`, read from file `file_name` whose
  // Format_description is `fde` (post-header lengths). For an event from
  // an expanded Transaction_payload (Event::from_payload), `payload` is the
  // payload's header (Reader::payload_header()), printed with its first
  // inner event.
  void PrintEvent(absl::string_view file_name, const Event& ev,
                  const FormatDescription& fde, std::string* out,
                  const PayloadHeader* payload = nullptr);

  // The record of a torn tail (the last record of its file).
  void PrintTornTail(const TornTail& t, std::string* out);

  // Forgets the Table_maps (a new file, or a jump in the log).
  void ResetTables() { tables_.clear(); }

 private:
  struct CachedTable {
    std::string raw;  // the Table_map body it was decoded from
    bool ok = false;
    std::string error;
    binlog::TableMap map;
    // Printed column_types and column_names values (servers repeat the
    // same Table_map before every statement: format them once).
    std::string types_value;
    std::string names_value;
    std::string db_value;     // quoted db and table names
    std::string table_value;
  };

  void AddDetails(const Event& ev, const FormatDescription& fde,
                  RecordWriter* w, std::string* row_lines);
  void AddTableMap(const Event& ev, const FormatDescription& fde,
                   RecordWriter* w);
  static void FormatColumns(CachedTable* c, OutputFormat format);
  void AddPayloadFields(const Event& ev, const PayloadHeader* payload,
                        RecordWriter* w);
  void AddRows(const Event& ev, const FormatDescription& fde, RecordWriter* w,
               std::string* row_lines);

  // The JSON header of an event (file pos end_pos type type_name size
  // server_id checksum timestamp time log_pos flags) in one append, from
  // cached constant pieces; false if a piece is too long for the stack
  // buffer (then the RecordWriter path prints it).
  bool AppendJsonHeader(absl::string_view file_name, const Event& ev,
                        std::string* out);

  PrintOptions options_;
  UtcCache utc_;
  std::string file_name_;  // the last file name, and its quoted form
  std::string file_json_;
  // Constant pieces of the JSON header, each in a fixed-size array so that
  // copying one is a fixed-size (inlined) copy of the whole array rather
  // than a library call per piece: at millions of events per second the
  // calls were a tenth of the dump's time.
  struct Piece {
    static constexpr size_t kCap = 96;
    char data[kCap];
    uint8_t len = 0;  // 0: not set, or too long (then the slow path)
    bool Set(absl::string_view s);
  };
  static Piece MakePiece(absl::string_view s) {
    Piece p;
    p.Set(s);
    return p;
  }
  Piece file_part_;  // {"file":"NAME","pos":
  Piece type_part_[256];  // ,"type":N,"type_name":"NAME","size":
  uint32_t time_seconds_ = 0;
  Piece time_part_;  // ,"time":"ISO","log_pos":
  // The text of the last MySQL GTID source UUID (a log has few).
  Uuid last_sid_;
  std::string last_uuid_;
  std::unordered_map<uint64_t, CachedTable> tables_;
  RowsDecoder rows_decoder_;
  std::string scratch_;   // inflated MariaDB compressed rows
  std::string rows_json_;
};

// A decoded value in the tool's two formats (see tools/README.md):
// JSON: null, a number, a string, {"hex":"..."} for binary data, or the
// JSON document of a JSON column. Text: NULL, a number, a quoted string,
// 0x... for binary data, or the JSON document.
void AppendCellJson(const RowCell& cell, std::string* out);
void AppendCellText(const RowCell& cell, std::string* out);

// An XA xid as the servers print it: X'gtrid',X'bqual',format_id.
std::string FormatXid(uint32_t format_id, absl::string_view gtrid,
                      absl::string_view bqual);

// A Transaction_payload compression type as the tool prints it: "zstd",
// "lz4" (the library's extension), "none", or "unknown" (the library's
// PayloadCompressionName, in lower case).
std::string CompressionTypeName(uint64_t type);

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_EVENT_PRINTER_H_
