// File: binlog/json_binary.h
//
// MySQL's binary JSON (the storage form of a JSON column, which row images
// carry as-is; see sql-common/json_binary.cc in MySQL 5.7+) converted to
// JSON text. MariaDB stores JSON as LONGTEXT, so its row images hold the
// text itself and never reach this decoder.
//
// The encoding: one type byte, then the value. Objects and arrays (small:
// 16-bit counts and offsets, large: 32-bit) hold an element count, their
// byte size, key entries (objects), value entries (type + offset, or the
// value itself for small scalars), then keys and values; offsets count
// from the first byte after the type byte. Scalars: literal (null, true,
// false), int16/32/64, uint16/32/64, double, utf8mb4 string (variable-
// length size), and "opaque" values of another MySQL type (DECIMAL and the
// temporal types are converted; others are written the way MySQL prints
// them, "base64:typeNN:...").
//
// Every offset and length is checked against the bytes of the enclosing
// value, and nesting is limited to 100 levels (MySQL's own limit), so a
// hostile value gives an error message, never a read out of bounds or a
// deep recursion.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_BINLOG_JSON_BINARY_H_
#define BINLOG_BINLOG_JSON_BINARY_H_

#include <string>

#include "absl/strings/string_view.h"

namespace binlog {
// Appends the JSON text of `bytes` to `out`. An empty value (0 bytes) is
// JSON null, as MySQL treats it. On failure returns false with `*error`
// set; `out` may then hold a partial value (callers discard it).
bool AppendMySqlJson(absl::string_view bytes, std::string* out,
                     std::string* error);

}  // namespace binlog

#endif  // BINLOG_BINLOG_JSON_BINARY_H_
