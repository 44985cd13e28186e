#include "binlog/statement_events.h"

#include <zlib.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "binlog/byte_reader.h"
#include "binlog/values.h"

namespace binlog {
namespace {

// Q_UPDATED_DB_NAMES: more than this many databases are written as the
// count OVER_MAX_DBS_IN_EVENT_MTS (254) with no names.
constexpr uint8_t kMaxDbsInEvent = 16;
// MariaDB Gtid_log_event::FL_COMMIT_ALTER_E1 | FL_ROLLBACK_ALTER_E1: the
// start-alter seq_no follows Q_GTID_FLAGS3.
constexpr uint8_t kFlagsExtraCommitOrRollbackAlter = 0x04 | 0x08;

// A 1-byte length and that many bytes.
bool LengthPrefixed(ByteReader* r, absl::string_view* out) {
  uint8_t len;
  return r->U8(&len) && r->Bytes(len, out);
}

// A NUL-terminated string (the NUL consumed, not returned).
bool NulTerminated(ByteReader* r, absl::string_view* out) {
  absl::string_view rest = r->Rest();
  size_t nul = rest.find('\0');
  if (nul == absl::string_view::npos) return false;
  *out = rest.substr(0, nul);
  return r->Skip(nul + 1);
}

}  // namespace

void EncodeMariaXidStatusVar(uint64_t xid, char* out) {
  out[0] = static_cast<char>(kQXid);
  for (int i = 0; i < 8; ++i) out[1 + i] = static_cast<char>(xid >> (8 * i));
}

absl::StatusOr<uint64_t> DecodeXid(absl::string_view body) {
  ByteReader r(body);
  uint64_t xid;
  if (!r.Le64(&xid)) return absl::DataLossError("Xid event shorter than 8 bytes");
  return xid;
}

absl::StatusOr<absl::string_view> DecodeRowsQuery(absl::string_view body) {
  if (body.empty()) return absl::DataLossError("Rows_query event has no body");
  return body.substr(1);
}

absl::StatusOr<XaPrepareInfo> DecodeXaPrepare(absl::string_view body) {
  ByteReader r(body);
  XaPrepareInfo x;
  uint8_t one_phase;
  uint32_t gtrid_len, bqual_len;
  if (!r.U8(&one_phase) || !r.Le32(&x.format_id) || !r.Le32(&gtrid_len) ||
      !r.Le32(&bqual_len)) {
    return absl::DataLossError("XA_prepare event shorter than 13 bytes");
  }
  if (gtrid_len > 64 || bqual_len > 64) {
    return absl::DataLossError(
        absl::StrCat("XA_prepare event declares gtrid/bqual lengths ",
                     gtrid_len, "/", bqual_len, " (at most 64 each)"));
  }
  if (!r.Bytes(gtrid_len, &x.gtrid) || !r.Bytes(bqual_len, &x.bqual)) {
    return absl::DataLossError("XA_prepare event ends inside its xid");
  }
  x.one_phase = one_phase != 0;
  return x;
}

bool QueryStatusVars::xid(uint64_t* out) const {
  if (has_ddl_xid) {
    *out = ddl_xid;
    return true;
  }
  if (has_maria_xid) {
    *out = maria_xid;
    return true;
  }
  return false;
}

absl::StatusOr<QueryStatusVars> DecodeQueryStatusVars(
    absl::string_view status_vars) {
  ByteReader r(status_vars);
  QueryStatusVars v;
  while (!r.empty()) {
    const size_t offset = r.pos();
    uint8_t code;
    r.U8(&code);
    uint64_t x = 0;
    bool ok = true;
    switch (code) {
      case kQFlags2:
        ok = r.LeN(4, &x);
        v.has_flags2 = true;
        v.flags2 = static_cast<uint32_t>(x);
        break;
      case kQSqlMode:
        ok = r.Le64(&v.sql_mode);
        v.has_sql_mode = true;
        break;
      case kQCatalog:  // length, string, NUL
        ok = LengthPrefixed(&r, &v.catalog) && r.Skip(1);
        v.has_catalog = true;
        break;
      case kQAutoIncrement:
        ok = r.Le16(&v.auto_increment_increment) &&
             r.Le16(&v.auto_increment_offset);
        v.has_auto_increment = true;
        break;
      case kQCharset:
        ok = r.Le16(&v.charset_client) && r.Le16(&v.collation_connection) &&
             r.Le16(&v.collation_server);
        v.has_charset = true;
        break;
      case kQTimeZone:
        ok = LengthPrefixed(&r, &v.time_zone);
        v.has_time_zone = true;
        break;
      case kQCatalogNz:
        ok = LengthPrefixed(&r, &v.catalog);
        v.has_catalog = true;
        break;
      case kQLcTimeNames:
        ok = r.Le16(&v.lc_time_names);
        v.has_lc_time_names = true;
        break;
      case kQCharsetDatabase:
        ok = r.Le16(&v.charset_database);
        v.has_charset_database = true;
        break;
      case kQTableMapForUpdate:
        ok = r.Le64(&v.table_map_for_update);
        v.has_table_map_for_update = true;
        break;
      case kQMasterDataWritten:
        ok = r.Le32(&v.master_data_written);
        v.has_master_data_written = true;
        break;
      case kQInvoker:
        ok = LengthPrefixed(&r, &v.invoker_user) &&
             LengthPrefixed(&r, &v.invoker_host);
        v.has_invoker = true;
        break;
      case kQUpdatedDbNames: {
        uint8_t count;
        ok = r.U8(&count);
        v.has_updated_db_names = true;
        if (!ok) break;
        if (count > kMaxDbsInEvent) {  // 254: "too many", no names follow
          v.updated_db_names_over_max = true;
          break;
        }
        for (uint8_t i = 0; ok && i < count; ++i) {
          absl::string_view name;
          ok = NulTerminated(&r, &name);
          if (ok) v.updated_db_names.push_back(name);
        }
        break;
      }
      case kQMicroseconds:
        ok = r.LeN(3, &x);
        v.has_microseconds = true;
        v.microseconds = static_cast<uint32_t>(x);
        break;
      case kQExplicitDefaultsForTimestamp:
        ok = r.U8(&v.explicit_defaults_for_timestamp);
        v.has_explicit_defaults_for_timestamp = true;
        break;
      case kQDdlLoggedWithXid:
        ok = r.Le64(&v.ddl_xid);
        v.has_ddl_xid = true;
        break;
      case kQDefaultCollationForUtf8mb4:
        ok = r.Le16(&v.default_collation_for_utf8mb4);
        v.has_default_collation_for_utf8mb4 = true;
        break;
      case kQSqlRequirePrimaryKey:
        ok = r.U8(&v.sql_require_primary_key);
        v.has_sql_require_primary_key = true;
        break;
      case kQDefaultTableEncryption:
        ok = r.U8(&v.default_table_encryption);
        v.has_default_table_encryption = true;
        break;
      case kQHrnow:
        ok = r.LeN(3, &x);
        v.has_hrnow = true;
        v.hrnow = static_cast<uint32_t>(x);
        break;
      case kQXid:
        ok = r.Le64(&v.maria_xid);
        v.has_maria_xid = true;
        break;
      case kQGtidFlags3:
        ok = r.U8(&v.gtid_flags3);
        v.has_gtid_flags3 = true;
        if (ok && (v.gtid_flags3 & kFlagsExtraCommitOrRollbackAlter)) {
          ok = r.Le64(&v.start_alter_seq_no);
          v.has_start_alter_seq_no = true;
        }
        break;
      default:
        // Servers write the codes in increasing order and stop at the
        // first one they do not know: its size is unknown.
        v.stopped_at_unknown = true;
        v.unknown_code = code;
        v.unknown_offset = offset;
        return v;
    }
    if (!ok) {
      return absl::DataLossError(absl::StrCat(
          "Query status variable ", code, " at offset ", offset,
          " runs past the end of the ", status_vars.size(), "-byte block"));
    }
  }
  return v;
}

// ---------------------------------------------------------------------------
// MariaDB compression

absl::Status MariaUncompress(absl::string_view block, size_t max_size,
                             std::string* out) {
  if (block.empty()) return absl::DataLossError("compressed block is empty");
  uint8_t head = static_cast<uint8_t>(block[0]);
  if ((head & 0x80) == 0) return absl::DataLossError("compressed block lacks its marker");
  uint32_t alg = (head & 0x70) >> 4;
  size_t lenlen = head & 0x07;
  if (alg != 0) {
    return absl::DataLossError(absl::StrCat("unknown compression algorithm ", alg));
  }
  if (lenlen < 1 || lenlen > 4 || block.size() < 1 + lenlen) {
    return absl::DataLossError("compressed block length field is malformed");
  }
  uint64_t len = 0;
  for (size_t i = 0; i < lenlen; ++i) {
    len = (len << 8) | static_cast<uint8_t>(block[1 + i]);
  }
  absl::string_view data = block.substr(1 + lenlen);
  // deflate cannot expand by more than about 1032:1; a larger announced
  // size is a lie that would only cost memory.
  if (len > max_size || len > 1100 * static_cast<uint64_t>(data.size()) + 64) {
    return absl::DataLossError(absl::StrCat("compressed block announces ", len,
                                  " bytes from ", data.size()));
  }
  out->resize(static_cast<size_t>(len));
  uLongf dest_len = static_cast<uLongf>(len);
  int rc = uncompress(reinterpret_cast<Bytef*>(out->data()), &dest_len,
                      reinterpret_cast<const Bytef*>(data.data()),
                      static_cast<uLong>(data.size()));
  if (rc != Z_OK || dest_len != len) {
    return absl::DataLossError(absl::StrCat("zlib could not inflate the block (code ",
                                  rc, ")"));
  }
  return absl::OkStatus();
}

std::string MariaCompress(absl::string_view data) {
  const uint64_t len = data.size();
  size_t lenlen = len < (1u << 8) ? 1 : len < (1u << 16) ? 2 : len < (1u << 24) ? 3 : 4;
  uLongf bound = compressBound(static_cast<uLong>(data.size()));
  std::string out(1 + lenlen + bound, '\0');
  out[0] = static_cast<char>(0x80 | lenlen);  // algorithm 0: zlib
  for (size_t i = 0; i < lenlen; ++i) {
    out[1 + i] = static_cast<char>(len >> (8 * (lenlen - 1 - i)));
  }
  compress(reinterpret_cast<Bytef*>(&out[1 + lenlen]), &bound,
           reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()));
  out.resize(1 + lenlen + bound);
  return out;
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
    return absl::DataLossError("Query_compressed event ends inside its header");
  }
  absl::Status s = MariaUncompress(r.Rest(), size_t{1} << 30, &q.query);
  if (!s.ok()) {
    return absl::DataLossError(absl::StrCat("compressed statement: ", s.message()));
  }
  return q;
}

// ---------------------------------------------------------------------------
// Statement-support events

absl::StatusOr<IntvarInfo> DecodeIntvar(absl::string_view body) {
  ByteReader r(body);
  IntvarInfo i;
  if (!r.U8(&i.type) || !r.Le64(&i.value)) {
    return absl::DataLossError("Intvar event shorter than 9 bytes");
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
    return absl::DataLossError("Rand event shorter than 16 bytes");
  }
  return i;
}

absl::StatusOr<UserVarInfo> DecodeUserVar(absl::string_view body) {
  ByteReader r(body);
  UserVarInfo u;
  uint32_t name_len;
  uint8_t is_null;
  if (!r.Le32(&name_len) || !r.Bytes(name_len, &u.name) || !r.U8(&is_null)) {
    return absl::DataLossError("User_var event ends inside its name");
  }
  u.is_null = is_null != 0;
  if (u.is_null) return u;
  uint32_t value_len;
  absl::string_view value;
  if (!r.U8(&u.type) || !r.Le32(&u.charset) || !r.Le32(&value_len) ||
      !r.Bytes(value_len, &value)) {
    return absl::DataLossError("User_var event ends inside its value");
  }
  uint8_t flags = 0;
  r.U8(&flags);  // optional (5.6+): bit 0 = unsigned
  switch (u.type) {
    case 1: {  // REAL
      if (value.size() != 8) return absl::DataLossError("User_var REAL value not 8 bytes");
      uint64_t bits = 0;
      for (size_t i = 8; i > 0; --i) bits = (bits << 8) | static_cast<uint8_t>(value[i - 1]);
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      AppendDouble(d, &u.value);
      break;
    }
    case 2: {  // INT
      if (value.size() != 8) return absl::DataLossError("User_var INT value not 8 bytes");
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
        return absl::DataLossError("User_var DECIMAL value is malformed");
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

absl::StatusOr<IncidentInfo> DecodeIncident(absl::string_view body) {
  ByteReader r(body);
  IncidentInfo i;
  uint8_t len;
  if (!r.Le16(&i.number)) return absl::DataLossError("Incident event too short");
  if (r.U8(&len) && !r.Bytes(len, &i.message)) {
    return absl::DataLossError("Incident message runs past the end");
  }
  return i;
}

}  // namespace binlog
