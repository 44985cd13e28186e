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
// Everything it decodes comes from tools/decode, which is bounds-checked:
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
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "tools/decode/rows.h"
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
    decode::TableMap map;
  };

  void AddDetails(const Event& ev, const FormatDescription& fde,
                  RecordWriter* w, std::string* row_lines);
  void AddTableMap(const Event& ev, const FormatDescription& fde,
                   RecordWriter* w);
  void AddRows(const Event& ev, const FormatDescription& fde, RecordWriter* w,
               std::string* row_lines);

  PrintOptions options_;
  UtcCache utc_;
  std::unordered_map<uint64_t, CachedTable> tables_;
  decode::RowsDecoder rows_decoder_;
  std::string scratch_;   // inflated MariaDB compressed rows
  std::string rows_json_;
};

// A decoded value in the tool's two formats (see tools/README.md):
// JSON: null, a number, a string, {"hex":"..."} for binary data, or the
// JSON document of a JSON column. Text: NULL, a number, a quoted string,
// 0x... for binary data, or the JSON document.
void AppendCellJson(const decode::Cell& cell, std::string* out);
void AppendCellText(const decode::Cell& cell, std::string* out);

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_EVENT_PRINTER_H_
