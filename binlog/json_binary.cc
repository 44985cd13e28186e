#include "binlog/json_binary.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "binlog/text_escape.h"
#include "binlog/values.h"

namespace binlog {
namespace {

enum JsonType : uint8_t {
  kSmallObject = 0x00,
  kLargeObject = 0x01,
  kSmallArray = 0x02,
  kLargeArray = 0x03,
  kLiteral = 0x04,
  kInt16 = 0x05,
  kUint16 = 0x06,
  kInt32 = 0x07,
  kUint32 = 0x08,
  kInt64 = 0x09,
  kUint64 = 0x0a,
  kDouble = 0x0b,
  kString = 0x0c,
  kOpaque = 0x0f,
};

constexpr int kMaxDepth = 100;

// MySQL field types that appear as opaque JSON values.
constexpr uint8_t kFieldNewDecimal = 246;
constexpr uint8_t kFieldDate = 10;
constexpr uint8_t kFieldTime = 11;
constexpr uint8_t kFieldDatetime = 12;
constexpr uint8_t kFieldTimestamp = 7;

uint64_t Le(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i - 1]);
  return v;
}

class Decoder {
 public:
  Decoder(std::string* out, std::string* error) : out_(out), error_(error) {}

  // A value of `type` whose bytes are `data` (for containers and
  // non-inlined scalars: from the value's first byte to the end of the
  // enclosing region; each reader checks its own extent).
  bool Value(uint8_t type, absl::string_view data, int depth) {
    switch (type) {
      case kSmallObject:
      case kLargeObject:
        return Container(data, /*object=*/true, type == kLargeObject, depth);
      case kSmallArray:
      case kLargeArray:
        return Container(data, /*object=*/false, type == kLargeArray, depth);
      case kLiteral:
        if (data.empty()) return Fail("literal past the end");
        return Literal(static_cast<uint8_t>(data[0]));
      case kInt16:
        if (data.size() < 2) return Fail("int16 past the end");
        absl::StrAppend(out_, static_cast<int16_t>(Le(data.data(), 2)));
        return true;
      case kUint16:
        if (data.size() < 2) return Fail("uint16 past the end");
        absl::StrAppend(out_, Le(data.data(), 2));
        return true;
      case kInt32:
        if (data.size() < 4) return Fail("int32 past the end");
        absl::StrAppend(out_, static_cast<int32_t>(Le(data.data(), 4)));
        return true;
      case kUint32:
        if (data.size() < 4) return Fail("uint32 past the end");
        absl::StrAppend(out_, Le(data.data(), 4));
        return true;
      case kInt64:
        if (data.size() < 8) return Fail("int64 past the end");
        absl::StrAppend(out_, static_cast<int64_t>(Le(data.data(), 8)));
        return true;
      case kUint64:
        if (data.size() < 8) return Fail("uint64 past the end");
        absl::StrAppend(out_, Le(data.data(), 8));
        return true;
      case kDouble: {
        if (data.size() < 8) return Fail("double past the end");
        uint64_t bits = Le(data.data(), 8);
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        std::string text;
        AppendDouble(d, &text);
        if (text == "nan" || text == "inf" || text == "-inf") {
          AppendJsonString(text, out_);
        } else {
          out_->append(text);
        }
        return true;
      }
      case kString: {
        uint64_t len;
        size_t n;
        if (!VarLen(data, &len, &n)) return false;
        if (len > data.size() - n) return Fail("string past the end");
        AppendJsonString(data.substr(n, len), out_);
        return true;
      }
      case kOpaque: {
        if (data.empty()) return Fail("opaque value past the end");
        uint8_t field_type = static_cast<uint8_t>(data[0]);
        uint64_t len;
        size_t n;
        if (!VarLen(data.substr(1), &len, &n)) return false;
        if (len > data.size() - 1 - n) return Fail("opaque value past the end");
        return Opaque(field_type, data.substr(1 + n, len));
      }
      default:
        return Fail(absl::StrCat("unknown JSON value type 0x",
                                 absl::Hex(type)));
    }
  }

 private:
  bool Fail(absl::string_view what) {
    *error_ = absl::StrCat("binary JSON: ", what);
    return false;
  }

  bool Literal(uint8_t v) {
    switch (v) {
      case 0: out_->append("null"); return true;
      case 1: out_->append("true"); return true;
      case 2: out_->append("false"); return true;
      default: return Fail("unknown literal");
    }
  }

  // Variable-length size: 7 bits per byte, low bits first, high bit set on
  // every byte but the last; at most 5 bytes (32 bits).
  bool VarLen(absl::string_view data, uint64_t* len, size_t* used) {
    uint64_t v = 0;
    for (size_t i = 0; i < 5; ++i) {
      if (i >= data.size()) return Fail("length past the end");
      uint8_t b = static_cast<uint8_t>(data[i]);
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        *len = v;
        *used = i + 1;
        return true;
      }
    }
    return Fail("length longer than 5 bytes");
  }

  bool Container(absl::string_view data, bool object, bool large, int depth) {
    if (depth > kMaxDepth) return Fail("nested deeper than 100 levels");
    const size_t w = large ? 4 : 2;  // width of counts and offsets
    if (data.size() < 2 * w) return Fail("container header past the end");
    uint64_t count = Le(data.data(), w);
    uint64_t size = Le(data.data() + w, w);
    if (size > data.size() || size < 2 * w) {
      return Fail("container size past the end");
    }
    absl::string_view region = data.substr(0, size);
    const size_t key_entry = w + 2;
    const size_t value_entry = 1 + w;
    const uint64_t header = 2 * w + (object ? count * key_entry : 0) +
                            count * value_entry;
    // `count` is bounded by the region: every element has an entry.
    if (count > size || header > size) {
      return Fail("element entries past the end");
    }
    out_->push_back(object ? '{' : '[');
    for (uint64_t i = 0; i < count; ++i) {
      if (i > 0) out_->push_back(',');
      if (object) {
        size_t at = 2 * w + i * key_entry;
        uint64_t key_off = Le(region.data() + at, w);
        uint64_t key_len = Le(region.data() + at + w, 2);
        if (key_off > size || key_len > size - key_off) {
          return Fail("key past the end");
        }
        AppendJsonString(region.substr(key_off, key_len), out_);
        out_->push_back(':');
      }
      size_t at = 2 * w + (object ? count * key_entry : 0) + i * value_entry;
      uint8_t type = static_cast<uint8_t>(region[at]);
      absl::string_view inline_bytes = region.substr(at + 1, w);
      bool inlined = type == kLiteral || type == kInt16 || type == kUint16 ||
                     (large && (type == kInt32 || type == kUint32));
      if (inlined) {
        if (!Value(type, inline_bytes, depth + 1)) return false;
        continue;
      }
      uint64_t off = Le(inline_bytes.data(), w);
      if (off >= size) return Fail("value offset past the end");
      if (!Value(type, region.substr(off), depth + 1)) return false;
    }
    out_->push_back(object ? '}' : ']');
    return true;
  }

  // A packed MySQL DATETIME/DATE/TIMESTAMP or TIME (8 bytes, in-memory
  // "packed" form: ((date << 17 | h << 12 | m << 6 | s) << 24) + micros,
  // negated for negative values).
  bool Opaque(uint8_t field_type, absl::string_view data) {
    if (field_type == kFieldNewDecimal && data.size() >= 2) {
      int precision = static_cast<uint8_t>(data[0]);
      int scale = static_cast<uint8_t>(data[1]);
      std::string text;
      if (AppendDecimal(data.substr(2), precision, scale, &text)) {
        out_->append(text);
        return true;
      }
    }
    if ((field_type == kFieldDate || field_type == kFieldDatetime ||
         field_type == kFieldTimestamp || field_type == kFieldTime) &&
        data.size() == 8) {
      int64_t packed = static_cast<int64_t>(Le(data.data(), 8));
      bool neg = packed < 0;
      uint64_t t = neg ? 0 - static_cast<uint64_t>(packed)
                       : static_cast<uint64_t>(packed);
      uint64_t micros = t % (uint64_t{1} << 24);
      uint64_t v = t >> 24;
      std::string text = neg ? "-" : "";
      char buf[64];
      if (field_type == kFieldTime) {
        uint64_t hms = v;
        std::snprintf(buf, sizeof(buf), "%02llu:%02llu:%02llu.%06llu",
                      static_cast<unsigned long long>((hms >> 12) % 1024),
                      static_cast<unsigned long long>((hms >> 6) % 64),
                      static_cast<unsigned long long>(hms % 64),
                      static_cast<unsigned long long>(micros % 1000000));
      } else {
        uint64_t ymd = v >> 17;
        uint64_t hms = v % (1 << 17);
        uint64_t ym = ymd >> 5;
        std::snprintf(buf, sizeof(buf), "%04llu-%02llu-%02llu",
                      static_cast<unsigned long long>(ym / 13 % 10000),
                      static_cast<unsigned long long>(ym % 13),
                      static_cast<unsigned long long>(ymd % 32));
        text += buf;
        if (field_type == kFieldDate) {
          buf[0] = '\0';
        } else {
          std::snprintf(buf, sizeof(buf), " %02llu:%02llu:%02llu.%06llu",
                        static_cast<unsigned long long>((hms >> 12) % 32),
                        static_cast<unsigned long long>((hms >> 6) % 64),
                        static_cast<unsigned long long>(hms % 64),
                        static_cast<unsigned long long>(micros % 1000000));
        }
      }
      text += buf;
      AppendJsonString(text, out_);
      return true;
    }
    AppendJsonString(
        absl::StrCat("base64:type", field_type, ":", absl::Base64Escape(data)),
        out_);
    return true;
  }

  std::string* out_;
  std::string* error_;
};

}  // namespace

bool AppendMySqlJson(absl::string_view bytes, std::string* out,
                     std::string* error) {
  if (bytes.empty()) {
    out->append("null");
    return true;
  }
  Decoder d(out, error);
  return d.Value(static_cast<uint8_t>(bytes[0]), bytes.substr(1), 0);
}

}  // namespace binlog
