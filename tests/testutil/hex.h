// File: tests/testutil/hex.h
//
// Golden bytes written as hex in tests: spaces and '|' may separate fields
// to keep their boundaries visible ("0201 | 00 2a").
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_TESTS_TESTUTIL_HEX_H_
#define BINLOG_TESTS_TESTUTIL_HEX_H_

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace binlog {
namespace testutil {

// The bytes of `hex` with the separators ' ' and '|' ignored.
// REQUIRES: an even number of hex digits.
inline std::string Hex(absl::string_view hex) {
  std::string clean;
  for (char c : hex) {
    if (c != ' ' && c != '|') clean.push_back(c);
  }
  return absl::HexStringToBytes(clean);
}

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_HEX_H_
