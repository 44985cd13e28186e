// File: tools/output.h
//
// Output helpers for binlogtool: JSON string escaping that always produces
// valid JSON, a builder for one output record in either of the tool's two
// formats (text "key=value" or one JSON object per line), and UTC time
// formatting.
//
// Defines:
//   AppendJsonString  appends a quoted, escaped JSON string
//   AppendTextString  the same, with C1 controls escaped too (text lines
//                     that go to a terminal)
//   Printable         escapes control characters and non-UTF-8 bytes
//   OutputFormat      kText or kJsonl
//   RecordWriter      builds one output line field by field
//   FormatUtc         "YYYY-MM-DD HH:MM:SS" in UTC
//   FormatUtcIso      "YYYY-MM-DDTHH:MM:SSZ" (one token, for text lines)
//   UtcCache          FormatUtcIso with a one-entry cache (events of a
//                     binlog share their timestamps), for the dump loop
//
// The escaping rules (bytes, not text; valid UTF-8 kept, everything else
// and every control character escaped; always valid JSON, one record per
// line) are the library's: binlog/text_escape.h.
//
// Thread safety: thread-compatible.

#ifndef BINLOG_TOOLS_OUTPUT_H_
#define BINLOG_TOOLS_OUTPUT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "binlog/text_escape.h"

namespace binlog {
namespace tools {

// Appends `s` to `*out` as a JSON string literal, quotes included (the
// library's escaper, binlog/text_escape.h).
using ::binlog::AppendJsonString;

// Returns `s` as a JSON string literal.
std::string JsonString(absl::string_view s);

using ::binlog::IsValidUtf8;

// The quoted strings of text lines. Today the same as AppendJsonString,
// which already escapes C1 controls (some terminals act on them); a
// separate name so text output can diverge from JSON without touching
// its callers.
void AppendTextString(absl::string_view s, std::string* out);

// Returns `s` safe to print on a terminal: valid UTF-8 passes, control
// characters and bytes that are not UTF-8 become \xHH. For messages that
// may carry bytes from a file (index entries, names), so a hostile file
// cannot send escape sequences to the operator's terminal.
std::string Printable(absl::string_view s);

enum class OutputFormat {
  kText,   // key=value pairs separated by spaces; strings JSON-quoted
  kJsonl,  // one JSON object per line
};

// RecordWriter builds one line. In text mode each field is written as
// " key=value" (strings quoted as JSON strings, so a query with newlines
// stays on one line); Text() adds raw text that appears only in text mode.
// In JSON mode fields become members of one object; Text() is ignored.
// Keys are written as given: they must be plain ASCII names (no quotes,
// backslashes or control characters), as every key of the tool is.
//
// A writer either owns its line (Finish() returns it) or appends straight
// to a caller's buffer (the sink constructor; End() closes the record),
// which saves a copy per line in the dump loop.
//
// Example:
//   RecordWriter w(OutputFormat::kJsonl);
//   w.Num("pos", 4);
//   w.Str("type_name", "QUERY_EVENT");
//   std::string line = w.Finish();  // {"pos":4,"type_name":"QUERY_EVENT"}\n
class RecordWriter {
 public:
  explicit RecordWriter(OutputFormat format);
  // Appends the record to `*sink`, which must outlive the writer.
  RecordWriter(OutputFormat format, std::string* sink);
  // Continues a record the caller has started in `*sink` with at least
  // one field ("{...,"key":value" in JSON, "... key=value" in text): the
  // writer adds fields after it and closes it.
  struct Continue {};
  RecordWriter(OutputFormat format, std::string* sink, Continue);

  void Str(absl::string_view key, absl::string_view value);
  void Num(absl::string_view key, uint64_t value);
  void Int(absl::string_view key, int64_t value);
  void Bool(absl::string_view key, bool value);
  // A string written unquoted in text mode (a name or a time that has no
  // spaces), quoted in JSON mode.
  void Word(absl::string_view key, absl::string_view value);
  // A value that is already valid JSON (a number, an array, an object),
  // written as-is in both modes.
  void Raw(absl::string_view key, absl::string_view json);
  // Writes the key of a value that is already JSON (as Raw) and returns the
  // buffer to append that value to, directly (no copy through a string of
  // the caller's). The value must be complete before the next call.
  std::string* RawValue(absl::string_view key);
  // Raw text, text mode only (no separator is added).
  void Text(absl::string_view raw);

  // Ends the record (closing brace in JSON mode, newline in both) and
  // returns it. The writer is left empty, ready for a new record. In sink
  // mode the record is in the sink, the result is empty, and the writer is
  // done (make a new one for the next record).
  std::string Finish();
  // Ends the record in sink mode (same as Finish, without a result).
  void End() { Finish(); }

  OutputFormat format() const { return format_; }

 private:
  void Key(absl::string_view key);

  OutputFormat format_;
  std::string own_;
  std::string* line_;
  bool first_ = true;
};

// Seconds since the epoch as "YYYY-MM-DD HH:MM:SS" (UTC).
std::string FormatUtc(uint32_t seconds);
// Seconds since the epoch as "YYYY-MM-DDTHH:MM:SSZ" (UTC).
std::string FormatUtcIso(uint32_t seconds);

// FormatUtcIso with the last result remembered. Thread-compatible.
class UtcCache {
 public:
  absl::string_view Iso(uint32_t seconds);

 private:
  bool valid_ = false;
  uint32_t seconds_ = 0;
  std::string text_;
};

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_OUTPUT_H_
