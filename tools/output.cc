#include "tools/output.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace binlog {
namespace tools {

void AppendTextString(absl::string_view s, std::string* out) {
  out->push_back('"');
  AppendEscaped(s, EscapeStyle::kJson, out);
  out->push_back('"');
}

std::string Printable(absl::string_view s) {
  std::string out;
  AppendEscaped(s, EscapeStyle::kPrintable, &out);
  return out;
}

std::string JsonString(absl::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

RecordWriter::RecordWriter(OutputFormat format)
    : format_(format), line_(&own_) {
  if (format_ == OutputFormat::kJsonl) line_->push_back('{');
}

RecordWriter::RecordWriter(OutputFormat format, std::string* sink)
    : format_(format), line_(sink) {
  if (format_ == OutputFormat::kJsonl) line_->push_back('{');
}

RecordWriter::RecordWriter(OutputFormat format, std::string* sink, Continue)
    : format_(format), line_(sink), first_(false) {}

void RecordWriter::Key(absl::string_view key) {
  // One append per key: `,"key":` (JSON) or ` key=` (text).
  char buf[72];
  size_t n = 0;
  if (key.size() > sizeof(buf) - 4) {
    // Keys are the tool's short constants; a long one still works.
    if (format_ == OutputFormat::kJsonl) {
      if (!first_) line_->push_back(',');
      line_->push_back('"');
      line_->append(key.data(), key.size());
      line_->append("\":", 2);
    } else {
      if (!line_->empty() && line_->back() != '\n') line_->push_back(' ');
      line_->append(key.data(), key.size());
      line_->push_back('=');
    }
    first_ = false;
    return;
  }
  if (format_ == OutputFormat::kJsonl) {
    if (!first_) buf[n++] = ',';
    buf[n++] = '"';
    std::memcpy(buf + n, key.data(), key.size());
    n += key.size();
    buf[n++] = '"';
    buf[n++] = ':';
  } else {
    // Text() may have started the line; the first field still needs a
    // separator then.
    if (!line_->empty() && line_->back() != '\n') buf[n++] = ' ';
    std::memcpy(buf + n, key.data(), key.size());
    n += key.size();
    buf[n++] = '=';
  }
  line_->append(buf, n);
  first_ = false;
}

void RecordWriter::Str(absl::string_view key, absl::string_view value) {
  Key(key);
  if (format_ == OutputFormat::kJsonl) {
    AppendJsonString(value, line_);
  } else {
    AppendTextString(value, line_);
  }
}

void RecordWriter::Num(absl::string_view key, uint64_t value) {
  Key(key);
  absl::StrAppend(line_, value);
}

void RecordWriter::Int(absl::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(line_, value);
}

void RecordWriter::Bool(absl::string_view key, bool value) {
  Key(key);
  line_->append(value ? "true" : "false");
}

void RecordWriter::Word(absl::string_view key, absl::string_view value) {
  Key(key);
  if (format_ != OutputFormat::kJsonl) {
    line_->append(value.data(), value.size());
    return;
  }
  // Words are names, times and numbers in text form: printable ASCII that
  // needs no escaping, which is checked (cheaply) rather than trusted.
  for (char ch : value) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
      AppendJsonString(value, line_);
      return;
    }
  }
  const size_t at = line_->size();
  line_->resize(at + value.size() + 2);
  char* p = &(*line_)[at];
  p[0] = '"';
  std::memcpy(p + 1, value.data(), value.size());
  p[value.size() + 1] = '"';
}

void RecordWriter::Raw(absl::string_view key, absl::string_view json) {
  Key(key);
  line_->append(json.data(), json.size());
}

std::string* RecordWriter::RawValue(absl::string_view key) {
  Key(key);
  return line_;
}

void RecordWriter::Text(absl::string_view raw) {
  if (format_ == OutputFormat::kText) line_->append(raw.data(), raw.size());
}

std::string RecordWriter::Finish() {
  if (format_ == OutputFormat::kJsonl) line_->push_back('}');
  line_->push_back('\n');
  first_ = true;
  std::string out;
  if (line_ == &own_) {
    out = std::move(own_);
    own_.clear();
    if (format_ == OutputFormat::kJsonl) own_.push_back('{');
  }
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

absl::string_view UtcCache::Iso(uint32_t seconds) {
  if (!valid_ || seconds != seconds_) {
    text_ = FormatUtcIso(seconds);
    seconds_ = seconds;
    valid_ = true;
  }
  return text_;
}

}  // namespace tools
}  // namespace binlog
