#include "tools/decode/events.h"

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "binlog/byte_reader.h"
#include "binlog/statement_events.h"
#include "tools/decode/values.h"

namespace binlog {
namespace decode {
namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(what);
}

}  // namespace

// ---------------------------------------------------------------------------
// GTIDs

bool ParseGtidSpec(absl::string_view text, GtidSpec* spec) {
  *spec = GtidSpec();
  size_t colon = text.rfind(':');
  if (colon != absl::string_view::npos) {
    absl::StatusOr<Uuid> uuid = Uuid::Parse(text.substr(0, colon));
    if (!uuid.ok()) return false;
    spec->uuid = *uuid;
    if (!absl::SimpleAtoi(text.substr(colon + 1), &spec->gno) ||
        spec->gno <= 0) {
      return false;
    }
    spec->mysql = true;
    return true;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(text, '-');
  if (parts.size() != 3) return false;
  if (!absl::SimpleAtoi(parts[0], &spec->domain_id) ||
      !absl::SimpleAtoi(parts[1], &spec->server_id) ||
      !absl::SimpleAtoi(parts[2], &spec->seq_no)) {
    return false;
  }
  for (absl::string_view p : parts) {
    if (p.empty() || p[0] == '+' || p[0] == '-') return false;
  }
  spec->maria = true;
  return true;
}

// ---------------------------------------------------------------------------
// Transaction_payload

absl::StatusOr<TransactionPayloadInfo> DecodeTransactionPayload(
    absl::string_view body) {
  ByteReader r(body);
  TransactionPayloadInfo info;
  bool have_size = false, have_type = false;
  for (;;) {
    uint64_t field;
    if (!r.PackedInt(&field)) {
      return Malformed("Transaction_payload header has no end mark");
    }
    if (field == 0) break;
    uint64_t len;
    absl::string_view value;
    if (!r.PackedInt(&len) || len > r.remaining() ||
        !r.Bytes(static_cast<size_t>(len), &value)) {
      return Malformed("Transaction_payload header field runs past the end");
    }
    if (field > 3) continue;  // unknown field: skipped by its length
    ByteReader v(value);
    uint64_t x;
    if (!v.PackedInt(&x)) {
      return Malformed("Transaction_payload header field is not an integer");
    }
    if (field == 1) {
      info.payload_size = x;
      have_size = true;
    } else if (field == 2) {
      info.compression_type = x;
      have_type = true;
    } else {
      info.uncompressed_size = x;
      info.has_uncompressed_size = true;
    }
  }
  if (!have_size || !have_type) {
    return Malformed("Transaction_payload header lacks the payload size or "
                     "the compression type");
  }
  if (info.payload_size > r.remaining()) {
    return Malformed(absl::StrCat("Transaction_payload announces ",
                                  info.payload_size, " bytes; the event has ",
                                  r.remaining()));
  }
  info.header_size = r.pos();
  return info;
}

const char* CompressionTypeName(uint64_t type) {
  switch (type) {
    case 0: return "zstd";
    case 128: return "lz4";  // this library's extension (binlog/payload.h)
    case 255: return "none";
    default: return "unknown";
  }
}

// ---------------------------------------------------------------------------
// Statement-support events

absl::StatusOr<IntvarInfo> DecodeIntvar(absl::string_view body) {
  ByteReader r(body);
  IntvarInfo i;
  if (!r.U8(&i.type) || !r.Le64(&i.value)) {
    return Malformed("Intvar event shorter than 9 bytes");
  }
  return i;
}

const char* IntvarTypeName(uint8_t type) {
  switch (type) {
    case 1: return "LAST_INSERT_ID";
    case 2: return "INSERT_ID";
    default: return "INVALID_INT";
  }
}

absl::StatusOr<RandInfo> DecodeRand(absl::string_view body) {
  ByteReader r(body);
  RandInfo i;
  if (!r.Le64(&i.seed1) || !r.Le64(&i.seed2)) {
    return Malformed("Rand event shorter than 16 bytes");
  }
  return i;
}

absl::StatusOr<UserVarInfo> DecodeUserVar(absl::string_view body) {
  ByteReader r(body);
  UserVarInfo u;
  uint32_t name_len;
  uint8_t is_null;
  if (!r.Le32(&name_len) || !r.Bytes(name_len, &u.name) || !r.U8(&is_null)) {
    return Malformed("User_var event ends inside its name");
  }
  u.is_null = is_null != 0;
  if (u.is_null) return u;
  uint32_t value_len;
  absl::string_view value;
  if (!r.U8(&u.type) || !r.Le32(&u.charset) || !r.Le32(&value_len) ||
      !r.Bytes(value_len, &value)) {
    return Malformed("User_var event ends inside its value");
  }
  uint8_t flags = 0;
  r.U8(&flags);  // optional (5.6+): bit 0 = unsigned
  switch (u.type) {
    case 1: {  // REAL
      if (value.size() != 8) return Malformed("User_var REAL value not 8 bytes");
      uint64_t bits = 0;
      for (size_t i = 8; i > 0; --i) bits = (bits << 8) | static_cast<uint8_t>(value[i - 1]);
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      AppendDouble(d, &u.value);
      break;
    }
    case 2: {  // INT
      if (value.size() != 8) return Malformed("User_var INT value not 8 bytes");
      uint64_t v = 0;
      for (size_t i = 8; i > 0; --i) v = (v << 8) | static_cast<uint8_t>(value[i - 1]);
      if (flags & 1) {
        absl::StrAppend(&u.value, v);
      } else {
        absl::StrAppend(&u.value, static_cast<int64_t>(v));
      }
      break;
    }
    case 4: {  // DECIMAL: precision, scale, binary decimal
      if (value.size() < 2 ||
          !AppendDecimal(value.substr(2), static_cast<uint8_t>(value[0]),
                         static_cast<uint8_t>(value[1]), &u.value)) {
        return Malformed("User_var DECIMAL value is malformed");
      }
      break;
    }
    default:  // STRING (0), ROW (3), anything else: the bytes
      u.is_string = true;
      u.value.assign(value.data(), value.size());
      break;
  }
  return u;
}

absl::StatusOr<absl::string_view> DecodeRowsQuery(absl::string_view body) {
  return binlog::DecodeRowsQuery(body);
}

absl::StatusOr<IncidentInfo> DecodeIncident(absl::string_view body) {
  ByteReader r(body);
  IncidentInfo i;
  uint8_t len;
  if (!r.Le16(&i.number)) return Malformed("Incident event too short");
  if (r.U8(&len) && !r.Bytes(len, &i.message)) {
    return Malformed("Incident message runs past the end");
  }
  return i;
}

std::string FormatXid(uint32_t format_id, absl::string_view gtrid,
                      absl::string_view bqual) {
  std::string s = "X'";
  AppendHex(gtrid, &s);
  s += "',X'";
  AppendHex(bqual, &s);
  absl::StrAppend(&s, "',", format_id);
  return s;
}

}  // namespace decode
}  // namespace binlog
