// File: binlog/text_escape.h
//
// Bytes from a binlog as text that is always valid: the one escaper behind
// every JSON string the library and its tools write (JSON text of MySQL
// JSON values, binlogtool's output) and behind terminal-safe messages.
//
// Binlog strings (queries, names, values) are bytes, not text: a server
// writes whatever the client sent, and a damaged file holds anything. The
// escaper therefore never assumes UTF-8. Valid UTF-8 sequences (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF) pass through;
// every other byte is escaped (\u00XX in JSON: the byte value as a code
// point; \xHH in printable mode), and so is every control character (C0,
// DEL and C1, because some terminals act on C1: U+009B is CSI). In JSON,
// U+2028 and U+2029 are written as \u2028 and \u2029, so consumers that
// split lines there (Python's str.splitlines, JavaScript before ES2019)
// still see one record per line. The price: a byte 0xE9 and the character
// U+00E9 written as \u00e9 cannot be told apart.
//
// Thread safety: thread-safe (no shared state).
// Errors: none; every input has an escaped form.

#ifndef BINLOG_BINLOG_TEXT_ESCAPE_H_
#define BINLOG_BINLOG_TEXT_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace binlog {

enum class EscapeStyle {
  kJson,       // the inside of a JSON string: \" \ \u00XX \u2028 \u2029
  kPrintable,  // for a terminal: \xHH, quotes and backslashes as they are
};

// Appends `s` escaped in `style` (no quotes added).
void AppendEscaped(absl::string_view s, EscapeStyle style, std::string* out);

// Appends `s` as a JSON string literal, quotes included.
void AppendJsonString(absl::string_view s, std::string* out);

// True if `s` is well-formed UTF-8 (no overlong forms, no surrogates, no
// code point above U+10FFFF).
bool IsValidUtf8(absl::string_view s);

}  // namespace binlog

#endif  // BINLOG_BINLOG_TEXT_ESCAPE_H_
