#include "binlog/text_escape.h"

#include <cstddef>

namespace binlog {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendEscapedByte(unsigned char c, bool json, std::string* out) {
  out->append(json ? "\\u00" : "\\x");
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xf]);
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 if there is none.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t left = s.size() - i;
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (c >= 0xC2 && c <= 0xDF) {
    return left >= 2 && IsContinuation(at(1)) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !IsContinuation(at(1)) || !IsContinuation(at(2))) return 0;
    if (c == 0xE0 && at(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && at(1) > 0x9F) return 0;   // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !IsContinuation(at(1)) || !IsContinuation(at(2)) ||
        !IsContinuation(at(3))) {
      return 0;
    }
    if (c == 0xF0 && at(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && at(1) > 0x8F) return 0;   // above U+10FFFF
    return 4;
  }
  return 0;
}

// Appends `s` with valid UTF-8 kept and everything else escaped: in JSON
// mode as \u00XX (and \" \\), else as \xHH. Two kinds of valid
// characters are escaped too: C1 controls (U+0080..U+009F), which some
// terminals act on (U+009B is CSI); and, in JSON, U+2028/U+2029, which
// line-splitting consumers (Python's str.splitlines, JavaScript before
// ES2019) take for line ends. Both still decode to the same characters.
void AppendEscapedImpl(absl::string_view s, bool json, std::string* out) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    // Fast path: a run of printable ASCII that needs no escaping.
    size_t run = i;
    while (run < n) {
      const unsigned char c = static_cast<unsigned char>(s[run]);
      if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') break;
      ++run;
    }
    if (run > i) {
      out->append(s.data() + i, run - i);
      i = run;
      if (i == n) break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        if (json) out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else {
        AppendEscapedByte(c, json, out);  // control character or DEL
      }
      ++i;
      continue;
    }
    size_t len = Utf8SequenceLength(s, i);
    if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      if (json) {
        AppendEscapedByte(static_cast<unsigned char>(s[i + 1]), json, out);
      } else {
        AppendEscapedByte(c, json, out);
        AppendEscapedByte(static_cast<unsigned char>(s[i + 1]), json, out);
      }
      i += 2;
      continue;
    }
    if (json && len == 3 && c == 0xE2 &&
        static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out->append(static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028"
                                                               : "\\u2029");
      i += 3;
      continue;
    }
    if (len == 0) {
      AppendEscapedByte(c, json, out);
      ++i;
    } else {
      out->append(s.data() + i, len);
      i += len;
    }
  }
}

}  // namespace

void AppendEscaped(absl::string_view s, EscapeStyle style, std::string* out) {
  AppendEscapedImpl(s, style == EscapeStyle::kJson, out);
}

void AppendJsonString(absl::string_view s, std::string* out) {
  out->push_back('"');
  AppendEscapedImpl(s, /*json=*/true, out);
  out->push_back('"');
}

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace binlog
