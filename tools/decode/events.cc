#include "tools/decode/events.h"

#include <cstring>

#include <zlib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "binlog/byte_reader.h"
#include "tools/decode/values.h"

namespace binlog {
namespace decode {
namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(what);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// ---------------------------------------------------------------------------
// GTIDs

std::string FormatUuid(const uint8_t sid[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[sid[i] >> 4]);
    s.push_back(kHex[sid[i] & 15]);
  }
  return s;
}

bool ParseUuid(absl::string_view text, uint8_t sid[16]) {
  if (text.size() != 36) return false;
  int byte = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    int hi = HexValue(text[i]);
    int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    sid[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return byte == 16;
}

bool MySqlGtid::anonymous() const {
  if (gno != 0) return false;
  for (uint8_t b : sid) {
    if (b != 0) return false;
  }
  return true;
}

std::string MySqlGtid::ToString() const {
  if (anonymous()) return "ANONYMOUS";
  return absl::StrCat(FormatUuid(sid), ":", gno);
}

absl::StatusOr<MySqlGtid> DecodeMySqlGtid(absl::string_view body) {
  ByteReader r(body);
  MySqlGtid g;
  absl::string_view sid;
  uint64_t gno;
  if (!r.U8(&g.flags) || !r.Bytes(16, &sid) || !r.Le64(&gno)) {
    return Malformed("Gtid event shorter than 25 bytes");
  }
  std::memcpy(g.sid, sid.data(), 16);
  g.gno = static_cast<int64_t>(gno);
  // Logical clocks (5.7+): type 2, last_committed, sequence_number.
  uint8_t lt_type;
  uint64_t last, seq;
  if (!r.U8(&lt_type) || lt_type != 2 || !r.Le64(&last) || !r.Le64(&seq)) {
    return g;
  }
  g.has_logical_clock = true;
  g.last_committed = static_cast<int64_t>(last);
  g.sequence_number = static_cast<int64_t>(seq);
  // Commit timestamps (8.0.1+): 7 bytes; bit 55 says the original one
  // follows.
  uint64_t ts;
  if (!r.LeN(7, &ts)) return g;
  constexpr uint64_t kOriginalFollows = uint64_t{1} << 55;
  g.has_commit_timestamps = true;
  if (ts & kOriginalFollows) {
    g.immediate_commit_timestamp = ts & ~kOriginalFollows;
    if (!r.LeN(7, &g.original_commit_timestamp)) {
      return Malformed("Gtid event ends inside original_commit_timestamp");
    }
  } else {
    g.immediate_commit_timestamp = ts;
    g.original_commit_timestamp = ts;
  }
  if (!r.PackedInt(&g.transaction_length)) return g;
  g.has_transaction_length = true;
  uint32_t version;
  if (!r.Le32(&version)) return g;
  g.has_server_versions = true;
  constexpr uint32_t kOriginalVersionFollows = uint32_t{1} << 31;
  if (version & kOriginalVersionFollows) {
    g.immediate_server_version = version & ~kOriginalVersionFollows;
    if (!r.Le32(&g.original_server_version)) {
      return Malformed("Gtid event ends inside original_server_version");
    }
  } else {
    g.immediate_server_version = version;
    g.original_server_version = version;
  }
  return g;
}

std::string MariaGtid::ToString(uint32_t server_id) const {
  return absl::StrCat(domain_id, "-", server_id, "-", seq_no);
}

absl::StatusOr<MariaGtid> DecodeMariaGtid(absl::string_view body) {
  ByteReader r(body);
  MariaGtid g;
  if (!r.Le64(&g.seq_no) || !r.Le32(&g.domain_id) || !r.U8(&g.flags2)) {
    return Malformed("MariaDB Gtid event shorter than 13 bytes");
  }
  constexpr uint8_t kGroupCommitId = 0x02;
  constexpr uint8_t kXa = 0x40 | 0x80;
  if (g.flags2 & kGroupCommitId) {
    if (!r.Le64(&g.commit_id)) {
      return Malformed("MariaDB Gtid event ends inside its commit id");
    }
    g.has_commit_id = true;
  }
  if (g.flags2 & kXa) {
    uint8_t gtrid_len, bqual_len;
    if (!r.Le32(&g.xid_format_id) || !r.U8(&gtrid_len) || !r.U8(&bqual_len) ||
        gtrid_len > 64 || bqual_len > 64 || !r.Bytes(gtrid_len, &g.xid_gtrid) ||
        !r.Bytes(bqual_len, &g.xid_bqual)) {
      return Malformed("MariaDB Gtid event ends inside its XA xid");
    }
    g.has_xid = true;
  }
  return g;
}

std::string MariaGtidList::ToString() const {
  std::string s;
  for (const auto& e : entries) {
    if (!s.empty()) s.push_back(',');
    absl::StrAppend(&s, e.domain_id, "-", e.server_id, "-", e.seq_no);
  }
  return s;
}

absl::StatusOr<MariaGtidList> DecodeMariaGtidList(absl::string_view body) {
  ByteReader r(body);
  uint32_t word;
  if (!r.Le32(&word)) return Malformed("Gtid_list event shorter than 4 bytes");
  MariaGtidList list;
  list.flags = word >> 28;
  uint32_t count = word & 0x0fffffff;
  if (count > r.remaining() / 16) {
    return Malformed(absl::StrCat("Gtid_list event announces ", count,
                                  " entries; it has room for ",
                                  r.remaining() / 16));
  }
  list.entries.resize(count);
  for (auto& e : list.entries) {  // room checked above
    r.Le32(&e.domain_id);
    r.Le32(&e.server_id);
    r.Le64(&e.seq_no);
  }
  return list;
}

absl::StatusOr<std::string> DecodePreviousGtids(absl::string_view body) {
  ByteReader r(body);
  uint64_t head;
  if (!r.Le64(&head)) {
    return Malformed("Previous_gtids event shorter than 8 bytes");
  }
  // Tagged format (8.3+): (1 << 56) | (n << 8) | 1.
  bool tagged = (head >> 56) == 1 && (head & 0xff) == 1;
  uint64_t n_sids = tagged ? (head >> 8) & 0xffffffffffffull : head;
  std::string out;
  for (uint64_t i = 0; i < n_sids; ++i) {
    absl::string_view sid;
    if (!r.Bytes(16, &sid)) {
      return Malformed("Previous_gtids event ends inside a source UUID");
    }
    if (!out.empty()) out.push_back(',');
    out += FormatUuid(reinterpret_cast<const uint8_t*>(sid.data()));
    if (tagged) {
      uint8_t len2;
      absl::string_view tag;
      if (!r.U8(&len2) || !r.Bytes(len2 >> 1, &tag)) {
        return Malformed("Previous_gtids event ends inside a tag");
      }
      if (!tag.empty()) absl::StrAppend(&out, ":", tag);
    }
    uint64_t n_intervals;
    if (!r.Le64(&n_intervals) || n_intervals > r.remaining() / 16) {
      return Malformed("Previous_gtids interval count runs past the end");
    }
    for (uint64_t k = 0; k < n_intervals; ++k) {
      uint64_t start = 0, end = 0;
      r.Le64(&start);
      r.Le64(&end);  // exclusive
      int64_t s = static_cast<int64_t>(start);
      int64_t e = static_cast<int64_t>(end) - 1;
      if (e <= s) {
        absl::StrAppend(&out, ":", s);
      } else {
        absl::StrAppend(&out, ":", s, "-", e);
      }
    }
  }
  return out;
}

bool ParseGtidSpec(absl::string_view text, GtidSpec* spec) {
  *spec = GtidSpec();
  size_t colon = text.rfind(':');
  if (colon != absl::string_view::npos) {
    if (!ParseUuid(text.substr(0, colon), spec->sid)) return false;
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
  if (body.empty()) return Malformed("Rows_query event has no body");
  return body.substr(1);
}

absl::StatusOr<absl::string_view> DecodeBinlogCheckpoint(
    absl::string_view body) {
  ByteReader r(body);
  uint32_t len;
  absl::string_view name;
  if (!r.Le32(&len) || !r.Bytes(len, &name)) {
    return Malformed("Binlog_checkpoint file name runs past the end");
  }
  return name;
}

absl::StatusOr<XaPrepareInfo> DecodeXaPrepare(absl::string_view body) {
  ByteReader r(body);
  XaPrepareInfo x;
  uint8_t one_phase;
  uint32_t gtrid_len, bqual_len;
  if (!r.U8(&one_phase) || !r.Le32(&x.format_id) || !r.Le32(&gtrid_len) ||
      !r.Le32(&bqual_len) || gtrid_len > 64 || bqual_len > 64 ||
      !r.Bytes(gtrid_len, &x.gtrid) || !r.Bytes(bqual_len, &x.bqual)) {
    return Malformed("XA_prepare event is malformed");
  }
  x.one_phase = one_phase != 0;
  return x;
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

// ---------------------------------------------------------------------------
// MariaDB compression

absl::Status MariaUncompress(absl::string_view block, size_t max_size,
                             std::string* out) {
  if (block.empty()) return Malformed("compressed block is empty");
  uint8_t head = static_cast<uint8_t>(block[0]);
  if ((head & 0x80) == 0) return Malformed("compressed block lacks its marker");
  uint32_t alg = (head & 0x70) >> 4;
  size_t lenlen = head & 0x07;
  if (alg != 0) {
    return Malformed(absl::StrCat("unknown compression algorithm ", alg));
  }
  if (lenlen < 1 || lenlen > 4 || block.size() < 1 + lenlen) {
    return Malformed("compressed block length field is malformed");
  }
  uint64_t len = 0;
  for (size_t i = 0; i < lenlen; ++i) {
    len = (len << 8) | static_cast<uint8_t>(block[1 + i]);
  }
  absl::string_view data = block.substr(1 + lenlen);
  // deflate cannot expand by more than about 1032:1; a larger announced
  // size is a lie that would only cost memory.
  if (len > max_size || len > 1100 * static_cast<uint64_t>(data.size()) + 64) {
    return Malformed(absl::StrCat("compressed block announces ", len,
                                  " bytes from ", data.size()));
  }
  out->resize(static_cast<size_t>(len));
  uLongf dest_len = static_cast<uLongf>(len);
  int rc = uncompress(reinterpret_cast<Bytef*>(out->data()), &dest_len,
                      reinterpret_cast<const Bytef*>(data.data()),
                      static_cast<uLong>(data.size()));
  if (rc != Z_OK || dest_len != len) {
    return Malformed(absl::StrCat("zlib could not inflate the block (code ",
                                  rc, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompressedQueryInfo> DecodeMariaCompressedQuery(
    absl::string_view body, uint8_t post_header_len) {
  ByteReader r(body);
  CompressedQueryInfo q;
  uint8_t db_len;
  uint16_t status_len;
  if (post_header_len < 13 || !r.Le32(&q.thread_id) ||
      !r.Le32(&q.exec_time) || !r.U8(&db_len) || !r.Le16(&q.error_code) ||
      !r.Le16(&status_len) || !r.Skip(post_header_len - 13u) ||
      !r.Skip(status_len) || !r.Bytes(db_len, &q.db) || !r.Skip(1)) {
    return Malformed("Query_compressed event ends inside its header");
  }
  absl::Status s = MariaUncompress(r.Rest(), size_t{1} << 30, &q.query);
  if (!s.ok()) {
    return Malformed(absl::StrCat("compressed statement: ", s.message()));
  }
  return q;
}

}  // namespace decode
}  // namespace binlog
