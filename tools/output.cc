#include "tools/output.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace binlog {
namespace tools {
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
// mode as \u00XX (and \" \\), else as \xHH.
void AppendEscaped(absl::string_view s, bool json, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (json && (c == '"' || c == '\\')) {
        out->push_back('\\');
        out->push_back(static_cast<char>(c));
      } else if (c < 0x20 || c == 0x7F) {
        AppendEscapedByte(c, json, out);
      } else {
        out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(s, i);
    // C1 controls (U+0080..U+009F) are valid JSON, but some terminals act
    // on them (U+009B is CSI): escape them outside JSON.
    if (!json && n == 2 && c == 0xC2 &&
        static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      AppendEscapedByte(c, json, out);
      AppendEscapedByte(static_cast<unsigned char>(s[i + 1]), json, out);
      i += 2;
      continue;
    }
    if (n == 0) {
      AppendEscapedByte(c, json, out);
      ++i;
    } else {
      out->append(s.data() + i, n);
      i += n;
    }
  }
}

}  // namespace

void AppendJsonString(absl::string_view s, std::string* out) {
  out->push_back('"');
  AppendEscaped(s, /*json=*/true, out);
  out->push_back('"');
}

std::string Printable(absl::string_view s) {
  std::string out;
  AppendEscaped(s, /*json=*/false, &out);
  return out;
}

std::string JsonString(absl::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

RecordWriter::RecordWriter(OutputFormat format) : format_(format) {
  if (format_ == OutputFormat::kJsonl) line_ = "{";
}

void RecordWriter::Key(absl::string_view key) {
  if (format_ == OutputFormat::kJsonl) {
    if (!first_) line_.push_back(',');
    AppendJsonString(key, &line_);
    line_.push_back(':');
  } else {
    if (!line_.empty()) line_.push_back(' ');
    line_.append(key.data(), key.size());
    line_.push_back('=');
  }
  first_ = false;
}

void RecordWriter::Str(absl::string_view key, absl::string_view value) {
  Key(key);
  AppendJsonString(value, &line_);
}

void RecordWriter::Num(absl::string_view key, uint64_t value) {
  Key(key);
  absl::StrAppend(&line_, value);
}

void RecordWriter::Bool(absl::string_view key, bool value) {
  Key(key);
  line_.append(value ? "true" : "false");
}

void RecordWriter::Word(absl::string_view key, absl::string_view value) {
  Key(key);
  if (format_ == OutputFormat::kJsonl) {
    AppendJsonString(value, &line_);
  } else {
    line_.append(value.data(), value.size());
  }
}

void RecordWriter::Text(absl::string_view raw) {
  if (format_ == OutputFormat::kText) line_.append(raw.data(), raw.size());
}

std::string RecordWriter::Finish() {
  if (format_ == OutputFormat::kJsonl) line_.push_back('}');
  line_.push_back('\n');
  std::string out = std::move(line_);
  line_ = format_ == OutputFormat::kJsonl ? "{" : "";
  first_ = true;
  return out;
}

std::string FormatUtc(uint32_t seconds) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

std::string FormatUtcIso(uint32_t seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

}  // namespace tools
}  // namespace binlog
