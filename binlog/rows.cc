#include "binlog/rows.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/byte_reader.h"
#include "binlog/format.h"
#include "binlog/statement_events.h"

namespace binlog {

// ---------------------------------------------------------------------------
// Encoding: table descriptions

namespace {

using values_internal::kDigitsPerGroup;
using values_internal::kDigitsToBytes;
using values_internal::kPow10;

bool IsBlobFamily(uint8_t type) {
  return type == kColBlob || type == kColTinyBlob || type == kColMediumBlob ||
         type == kColLongBlob;
}


// Character columns (DEFAULT_CHARSET / COLUMN_CHARSET): MySQL's
// is_character_type. MariaDB logs JSON as LONGTEXT, a character column.
// Columns listed in the DEFAULT_CHARSET / COLUMN_CHARSET metadata. MariaDB
// lists every column whose binlog type info has a character set, GEOMETRY
// included (binary, collation 63); MySQL's is_character_type leaves
// GEOMETRY out.
bool DefIsCharacter(ColumnType t, LogFlavor flavor) {
  return t == kColString || t == kColVarchar || t == kColVarString ||
         IsBlobFamily(t) ||
         ((t == kColJson || t == kColGeometry) && flavor == LogFlavor::kMariaDB);
}

constexpr uint32_t kBinaryCollation = 63;

bool DefIsEnumOrSet(ColumnType t) { return t == kColEnum || t == kColSet; }

uint8_t BlobPrefix(const ColumnDef& c) {
  if (c.length >= 1 && c.length <= 4) return static_cast<uint8_t>(c.length);
  switch (c.type) {
    case kColTinyBlob: return 1;
    case kColBlob: return 2;
    case kColMediumBlob: return 3;
    default: return 4;  // LONGBLOB, JSON, GEOMETRY, VECTOR
  }
}

uint8_t EnumSetPackLength(const ColumnDef& c) {
  if (c.type == kColEnum) return c.length < 256 ? 1 : 2;
  uint32_t n = (c.length + 7) / 8;
  return static_cast<uint8_t>(n > 4 ? 8 : n);
}

void PutPacked(std::string* out, uint64_t v) {
  char buf[9];
  char* end = StorePackedInt(buf, v);
  out->append(buf, static_cast<size_t>(end - buf));
}

void PutPackedString(std::string* out, absl::string_view s) {
  PutPacked(out, s.size());
  out->append(s.data(), s.size());
}

// One optional-metadata field: type, packed length, value.
void PutTlv(std::string* out, uint8_t type, const std::string& value) {
  out->push_back(static_cast<char>(type));
  PutPacked(out, value.size());
  out->append(value);
}

uint32_t DefaultCollation(LogFlavor flavor) {
  return flavor == LogFlavor::kMariaDB ? 45 : 255;  // utf8mb4 defaults
}

// DEFAULT_CHARSET (or ENUM_AND_SET_DEFAULT_CHARSET) versus COLUMN_CHARSET
// (ENUM_AND_SET_COLUMN_CHARSET), chosen as MySQL's init_charset_field
// does: the most used collation (the lowest id on a tie) as the default
// with (index, collation) exceptions, unless one collation per column
// is shorter (counting one byte per index and collation).
void PutCharsets(const TableDef& def, LogFlavor flavor, bool enum_set,
                 uint8_t default_type, uint8_t column_type, std::string* out) {
  std::vector<uint32_t> colls;
  for (const ColumnDef& c : def.columns) {
    bool include = enum_set ? DefIsEnumOrSet(c.type)
                            : DefIsCharacter(c.type, flavor);
    if (include) {
      colls.push_back(c.type == kColGeometry ? kBinaryCollation
                      : c.collation != 0     ? c.collation
                                             : DefaultCollation(flavor));
    }
  }
  if (colls.empty()) return;
  std::vector<uint32_t> sorted = colls;
  std::sort(sorted.begin(), sorted.end());
  uint32_t best = sorted[0];
  size_t best_count = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (j - i > best_count) {
      best_count = j - i;
      best = sorted[i];
    }
    i = j;
  }
  std::string v;
  if (colls.size() < 1 + (colls.size() - best_count) * 2) {
    for (uint32_t c : colls) PutPacked(&v, c);
    PutTlv(out, column_type, v);
  } else {
    PutPacked(&v, best);
    for (size_t i = 0; i < colls.size(); ++i) {
      if (colls[i] == best) continue;
      PutPacked(&v, i);
      PutPacked(&v, colls[i]);
    }
    PutTlv(out, default_type, v);
  }
}

// MSB-first bitmap over the columns `pick` selects.
template <typename Pick>
std::string MsbBitmap(const TableDef& def, Pick pick) {
  std::string bits;
  size_t n = 0;
  for (const ColumnDef& c : def.columns) {
    int b = pick(c);
    if (b < 0) continue;
    if (n % 8 == 0) bits.push_back(0);
    if (b) bits.back() = static_cast<char>(bits.back() | (0x80 >> (n % 8)));
    ++n;
  }
  return bits;
}

}  // namespace

uint8_t TableMapType(ColumnType type) {
  if (type == kColEnum || type == kColSet) return kColString;
  if (IsBlobFamily(type)) return kColBlob;
  return type;
}

size_t EncodeColumnMeta(const ColumnDef& c, char* out) {
  switch (c.type) {
    case kColFloat: out[0] = 4; return 1;
    case kColDouble: out[0] = 8; return 1;
    case kColBlob: case kColTinyBlob: case kColMediumBlob: case kColLongBlob:
    case kColJson: case kColGeometry: case kColVector:
      out[0] = static_cast<char>(BlobPrefix(c));
      return 1;
    case kColTime2: case kColDatetime2: case kColTimestamp2:
      out[0] = static_cast<char>(c.length);
      return 1;
    case kColVarchar: case kColVarString:
      StoreLe16(out, static_cast<uint16_t>(c.length));
      return 2;
    case kColBit:
      out[0] = static_cast<char>(c.length % 8);
      out[1] = static_cast<char>(c.length / 8);
      return 2;
    case kColNewDecimal:
      out[0] = static_cast<char>(c.length);
      out[1] = static_cast<char>(c.scale);
      return 2;
    case kColString:
      // Field_string::save_field_metadata: the real type with the two high
      // bits of a length above 255 folded in, then the low byte.
      out[0] = static_cast<char>(kColString ^ ((c.length & 0x300) >> 4));
      out[1] = static_cast<char>(c.length & 0xff);
      return 2;
    case kColEnum: case kColSet:
      out[0] = static_cast<char>(c.type);
      out[1] = static_cast<char>(EnumSetPackLength(c));
      return 2;
    default:
      return 0;
  }
}

absl::StatusOr<ColumnCodec> MakeColumnCodec(const ColumnDef& c) {
  ColumnCodec k;
  k.type = c.type;
  k.nullable = c.nullable;
  k.is_unsigned = c.is_unsigned;
  auto bad = [&c](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "column ", c.name.empty() ? "" : c.name + " ", "of type ",
        static_cast<int>(c.type), ": ", why));
  };
  switch (c.type) {
    case kColTiny: k.size = 1; break;
    case kColShort: k.size = 2; break;
    case kColInt24: k.size = 3; break;
    case kColLong: k.size = 4; break;
    case kColLongLong: k.size = 8; break;
    case kColFloat: k.pack = ColumnCodec::kFloat; k.size = 4; break;
    case kColDouble: k.pack = ColumnCodec::kDouble; k.size = 8; break;
    case kColYear: k.pack = ColumnCodec::kYear; k.size = 1; break;
    case kColDate: case kColNewDate:
      k.pack = ColumnCodec::kDate; k.size = 3; break;
    // The temporal types of servers before MySQL 5.6.4 (still read by
    // both servers' appliers).
    case kColTime: k.pack = ColumnCodec::kTimeOld; k.size = 3; break;
    case kColDatetime: k.pack = ColumnCodec::kDatetimeOld; k.size = 8; break;
    case kColTimestamp: k.pack = ColumnCodec::kTimestampOld; k.size = 4; break;
    case kColTime2: case kColDatetime2: case kColTimestamp2: {
      if (c.length > 6) return bad("fractional digits above 6");
      k.fsp = static_cast<uint8_t>(c.length);
      size_t base = c.type == kColTime2 ? 3 : c.type == kColDatetime2 ? 5 : 4;
      k.pack = c.type == kColTime2       ? ColumnCodec::kTime2
               : c.type == kColDatetime2 ? ColumnCodec::kDatetime2
                                         : ColumnCodec::kTimestamp2;
      k.size = static_cast<uint8_t>(base + TemporalFracBytes(k.fsp));
      break;
    }
    case kColNewDecimal: {
      size_t n = DecimalBinarySize(static_cast<int>(c.length), c.scale);
      if (n == 0) return bad("DECIMAL precision/scale out of range");
      k.pack = ColumnCodec::kDecimal;
      k.size = static_cast<uint8_t>(n);
      k.precision = static_cast<uint8_t>(c.length);
      k.scale = c.scale;
      break;
    }
    case kColBit:
      if (c.length < 1 || c.length > 64) return bad("BIT length not 1..64");
      k.pack = ColumnCodec::kBit;
      k.size = static_cast<uint8_t>(c.length / 8 + (c.length % 8 ? 1 : 0));
      k.max_len = c.length;
      break;
    case kColEnum:
      if (c.length < 1 || c.length > 65535) return bad("ENUM needs 1..65535 values");
      k.size = EnumSetPackLength(c);
      k.is_unsigned = true;
      break;
    case kColSet:
      if (c.length < 1 || c.length > 64) return bad("SET needs 1..64 members");
      k.size = EnumSetPackLength(c);
      k.is_unsigned = true;
      break;
    case kColVarchar: case kColVarString:
      if (c.length < 1 || c.length > 65535) return bad("VARCHAR length not 1..65535");
      k.pack = ColumnCodec::kPrefixed;
      k.prefix = c.length > 255 ? 2 : 1;
      k.max_len = c.length;
      break;
    case kColString:
      if (c.length < 1 || c.length > 1020) return bad("CHAR length not 1..1020 bytes");
      k.pack = ColumnCodec::kPrefixed;
      k.prefix = c.length > 255 ? 2 : 1;
      k.max_len = c.length;
      break;
    case kColBlob: case kColTinyBlob: case kColMediumBlob: case kColLongBlob:
    case kColJson: case kColGeometry: case kColVector:
      if (c.length > 4) return bad("length-prefix size not 1..4");
      k.pack = ColumnCodec::kPrefixed;
      k.prefix = BlobPrefix(c);
      k.max_len = k.prefix == 4 ? 0xffffffffull : (uint64_t{1} << (8 * k.prefix)) - 1;
      k.is_blob = true;
      break;
    default:
      return bad("not a type this encoder packs");
  }
  return k;
}

absl::StatusOr<std::string> EncodeTableMapBody(const TableDef& def,
                                               LogFlavor flavor) {
  if (def.table_id >= (uint64_t{1} << 48)) {
    return absl::InvalidArgumentError("table id does not fit in 6 bytes");
  }
  if (def.schema.size() > 64 || def.table.size() > 64) {
    return absl::InvalidArgumentError("schema or table name over 64 bytes");
  }
  if (def.columns.empty() || def.columns.size() > 4096) {
    return absl::InvalidArgumentError("a table has 1..4096 columns");
  }
  for (uint32_t pk : def.primary_key) {
    if (pk >= def.columns.size()) {
      return absl::InvalidArgumentError("primary key names a missing column");
    }
  }
  for (const ColumnDef& c : def.columns) {
    absl::StatusOr<ColumnCodec> k = MakeColumnCodec(c);
    if (!k.ok()) return k.status();
  }
  const size_t n = def.columns.size();
  std::string out;
  out.reserve(64 + 4 * n);
  char buf[8];
  StoreLeN(buf, def.table_id, 6);
  StoreLe16(buf + 6, kTableMapBitLenExactF);
  out.append(buf, 8);
  for (const std::string* name : {&def.schema, &def.table}) {
    out.push_back(static_cast<char>(name->size()));
    out.append(*name);
    out.push_back('\0');
  }
  PutPacked(&out, n);
  for (const ColumnDef& c : def.columns) {
    uint8_t t = TableMapType(c.type);
    if (c.type == kColJson && flavor == LogFlavor::kMariaDB) t = kColBlob;
    out.push_back(static_cast<char>(t));
  }
  std::string meta;
  for (const ColumnDef& c : def.columns) {
    size_t m = EncodeColumnMeta(c, buf);
    meta.append(buf, m);
  }
  PutPacked(&out, meta.size());
  out.append(meta);
  std::string nulls((n + 7) / 8, '\0');
  for (size_t i = 0; i < n; ++i) {
    if (def.columns[i].nullable) nulls[i / 8] |= static_cast<char>(1 << (i % 8));
  }
  out.append(nulls);
  if (def.metadata == RowMetadata::kNone) return out;

  // Optional metadata, in the order of MySQL's init_metadata_fields.
  std::string signedness = MsbBitmap(def, [](const ColumnDef& c) {
    return IsNumericColumnType(c.type) ? (c.is_unsigned ? 1 : 0) : -1;
  });
  if (!signedness.empty()) PutTlv(&out, 1, signedness);
  PutCharsets(def, flavor, false, 2, 3, &out);
  // GEOMETRY_TYPE, right after the character sets in both servers'
  // init_metadata_fields, MINIMAL and FULL alike: one packed integer per
  // GEOMETRY column.
  std::string geometry;
  for (const ColumnDef& c : def.columns) {
    if (c.type == kColGeometry) PutPacked(&geometry, c.geometry_type);
  }
  if (!geometry.empty()) PutTlv(&out, 7, geometry);
  if (def.metadata != RowMetadata::kFull) return out;
  std::string names;
  for (const ColumnDef& c : def.columns) PutPackedString(&names, c.name);
  PutTlv(&out, 4, names);
  PutCharsets(def, flavor, true, 10, 11, &out);
  for (ColumnType want : {kColSet, kColEnum}) {
    std::string v;
    for (const ColumnDef& c : def.columns) {
      if (c.type != want) continue;
      PutPacked(&v, c.enum_values.size());
      for (const std::string& s : c.enum_values) PutPackedString(&v, s);
    }
    if (!v.empty()) PutTlv(&out, want == kColSet ? 5 : 6, v);
  }
  if (!def.primary_key.empty()) {
    std::string v;
    for (uint32_t pk : def.primary_key) PutPacked(&v, pk);
    PutTlv(&out, 8, v);
  }
  if (flavor == LogFlavor::kMySQL) {
    // COLUMN_VISIBILITY (MySQL 8.0.23+): every described column is visible.
    PutTlv(&out, 12, MsbBitmap(def, [](const ColumnDef&) { return 1; }));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Encoding: values

namespace {

void StoreBeN(char* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(v >> (8 * (n - 1 - i)));
}

// The stored fraction of TIME2/DATETIME2/TIMESTAMP2 (my_time.cc): 1 byte
// of hundredths, 2 of ten-thousandths, or 3 of microseconds, big-endian,
// from a fraction that may be negative (TIME2, stored in two's
// complement).
void StoreFrac(char* p, int64_t frac, int fsp) {
  switch (TemporalFracBytes(fsp)) {
    case 1: p[0] = static_cast<char>(frac / 10000); break;
    case 2: StoreBeN(p, static_cast<uint64_t>(frac / 100), 2); break;
    case 3: StoreBeN(p, static_cast<uint64_t>(frac), 3); break;
    default: break;
  }
}

uint32_t TruncateMicros(uint32_t micros, int fsp) {
  return micros - micros % kPow10[6 - fsp];
}

}  // namespace

namespace {

// The checks of PackDecimal without the packing: sign, digits, at most
// precision - scale integer digits (leading zeros aside) and scale
// fraction digits.
bool DecimalTextFits(absl::string_view text, int precision, int scale) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  size_t int_digits = 0, frac_digits = 0;
  bool dot = false, leading = true;
  for (char ch : text) {
    if (ch == '.' && !dot) {
      dot = true;
      continue;
    }
    if (ch < '0' || ch > '9') return false;
    if (dot) {
      ++frac_digits;
    } else if (!(leading && ch == '0')) {
      leading = false;
      ++int_digits;
    }
  }
  if (text.empty() || text == ".") return false;
  return static_cast<int>(int_digits) <= precision - scale &&
         static_cast<int>(frac_digits) <= scale;
}

}  // namespace

bool PackDecimal(absl::string_view text, int precision, int scale, char* out) {
  const size_t size = DecimalBinarySize(precision, scale);
  if (size == 0) return false;
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  size_t dot = text.find('.');
  absl::string_view ip = text.substr(0, dot);
  absl::string_view fp =
      dot == absl::string_view::npos ? absl::string_view() : text.substr(dot + 1);
  if (ip.empty() && fp.empty()) return false;
  for (absl::string_view part : {ip, fp}) {
    for (char ch : part) {
      if (ch < '0' || ch > '9') return false;
    }
  }
  while (!ip.empty() && ip[0] == '0') ip.remove_prefix(1);
  const int intg = precision - scale;
  if (static_cast<int>(ip.size()) > intg || static_cast<int>(fp.size()) > scale) {
    return false;
  }
  bool zero = ip.empty() && fp.find_first_not_of('0') == absl::string_view::npos;
  if (zero) negative = false;  // the servers store -0 as 0
  // Digits as fixed-width strings: the integer part right-aligned in
  // `intg` digits, the fraction left-aligned in `scale` digits.
  char digits[80];
  std::memset(digits, '0', static_cast<size_t>(precision));
  if (!ip.empty()) std::memcpy(digits + intg - ip.size(), ip.data(), ip.size());
  if (!fp.empty()) std::memcpy(digits + intg, fp.data(), fp.size());
  const int intg0 = intg / kDigitsPerGroup, intg0x = intg % kDigitsPerGroup;
  const int frac0 = scale / kDigitsPerGroup, frac0x = scale % kDigitsPerGroup;
  const uint64_t mask = negative ? ~uint64_t{0} : 0;
  const char* d = digits;
  char* p = out;
  auto group = [&](int ndigits) {
    uint64_t v = 0;
    for (int i = 0; i < ndigits; ++i) v = v * 10 + static_cast<uint64_t>(*d++ - '0');
    size_t nb = static_cast<size_t>(kDigitsToBytes[ndigits]);
    StoreBeN(p, v ^ mask, nb);
    p += nb;
  };
  if (intg0x > 0) group(intg0x);
  for (int i = 0; i < intg0; ++i) group(kDigitsPerGroup);
  for (int i = 0; i < frac0; ++i) group(kDigitsPerGroup);
  if (frac0x > 0) group(frac0x);
  out[0] = static_cast<char>(out[0] ^ 0x80);
  return true;
}

bool PackTime2(const Temporal& t, int fsp, char* out) {
  if (fsp < 0 || fsp > 6 || t.hour > 838 || t.minute > 59 || t.second > 59 ||
      t.micros > 999999) {
    return false;
  }
  const int64_t hms = (int64_t{t.hour} << 12) | (t.minute << 6) | t.second;
  int64_t nr = (hms << 24) + TruncateMicros(t.micros, fsp);
  if (t.negative) nr = -nr;
  if (fsp >= 5) {
    StoreBeN(out, static_cast<uint64_t>(nr + 0x800000000000LL), 6);
    return true;
  }
  // my_time_packed_to_binary: the integer part by arithmetic shift, the
  // fraction by C remainder (negative for a negative time); the reader
  // undoes the borrow.
  const int64_t intpart = nr >> 24;
  const int64_t frac = nr % (int64_t{1} << 24);
  StoreBeN(out, static_cast<uint64_t>(intpart + 0x800000), 3);
  StoreFrac(out + 3, frac, fsp);
  return true;
}

bool PackDatetime2(const Temporal& t, int fsp, char* out) {
  if (fsp < 0 || fsp > 6 || t.negative || t.year < 0 || t.year > 9999 ||
      t.month > 12 || t.day > 31 || t.hour > 23 || t.minute > 59 ||
      t.second > 59 || t.micros > 999999) {
    return false;
  }
  const uint64_t ymd =
      ((static_cast<uint64_t>(t.year) * 13 + t.month) << 5) | t.day;
  const uint64_t hms = (uint64_t{t.hour} << 12) | (t.minute << 6) | t.second;
  StoreBeN(out, ((ymd << 17) | hms) + 0x8000000000ull, 5);
  StoreFrac(out + 5, TruncateMicros(t.micros, fsp), fsp);
  return true;
}

bool PackTimestamp2(int64_t seconds, uint32_t micros, int fsp, char* out) {
  if (fsp < 0 || fsp > 6 || seconds < 0 || seconds > 0xffffffffLL ||
      micros > 999999) {
    return false;
  }
  StoreBeN(out, static_cast<uint64_t>(seconds), 4);
  StoreFrac(out + 4, TruncateMicros(micros, fsp), fsp);
  return true;
}

bool PackDate(const Temporal& t, char* out) {
  if (t.negative || t.year < 0 || t.year > 9999 || t.month > 12 || t.day > 31) {
    return false;
  }
  StoreLeN(out, static_cast<uint64_t>(t.day) | (uint64_t{t.month} << 5) |
                    (static_cast<uint64_t>(t.year) << 9),
           3);
  return true;
}

bool PackYear(int64_t year, char* out) {
  if (year != 0 && (year < 1901 || year > 2155)) return false;
  out[0] = static_cast<char>(year == 0 ? 0 : year - 1900);
  return true;
}

namespace {

// Whether an integer Value fits `size` bytes, signed or unsigned.
bool IntFits(const ColumnCodec& c, const Value& v) {
  const int bits = 8 * c.size;
  if (v.kind == Value::kUInt) {
    uint64_t lim = bits == 64 ? ~uint64_t{0}
                   : c.is_unsigned ? (uint64_t{1} << bits) - 1
                                   : (uint64_t{1} << (bits - 1)) - 1;
    return v.u <= lim;
  }
  if (v.kind != Value::kInt) return false;
  if (c.is_unsigned) {
    return v.i >= 0 && (bits == 64 || static_cast<uint64_t>(v.i) < (uint64_t{1} << bits));
  }
  if (bits == 64) return true;
  const int64_t lim = int64_t{1} << (bits - 1);
  return v.i >= -lim && v.i < lim;
}

}  // namespace

int64_t PackedValueSize(const ColumnCodec& c, const Value& v) {
  if (v.kind == Value::kNull) return c.nullable ? 0 : -1;
  switch (c.pack) {
    case ColumnCodec::kFixedLe:
      if (!IntFits(c, v)) return -1;
      if (c.type == kColSet && c.size < 8 &&
          (v.kind == Value::kUInt ? v.u : static_cast<uint64_t>(v.i)) >>
                  (8 * c.size) != 0) {
        return -1;
      }
      return c.size;
    case ColumnCodec::kFloat:
    case ColumnCodec::kDouble:
      return v.kind == Value::kDouble || v.kind == Value::kInt ? c.size : -1;
    case ColumnCodec::kYear:
      return (v.kind == Value::kInt || v.kind == Value::kUInt) &&
                     (v.u == 0 || (v.u >= 1901 && v.u <= 2155))
                 ? 1
                 : -1;
    case ColumnCodec::kDate:
    case ColumnCodec::kTime2:
    case ColumnCodec::kDatetime2:
    case ColumnCodec::kTimeOld:
    case ColumnCodec::kDatetimeOld: {
      if (v.kind != Value::kTime) return -1;
      const Temporal& t = v.t;
      if (t.micros > 999999 || t.minute > 59 || t.second > 59) return -1;
      if (c.pack == ColumnCodec::kTime2 || c.pack == ColumnCodec::kTimeOld) {
        return t.hour <= 838 ? c.size : -1;
      }
      if (t.negative || t.year < 0 || t.year > 9999 || t.month > 12 ||
          t.day > 31 || t.hour > 23) {
        return -1;
      }
      return c.size;
    }
    case ColumnCodec::kTimestamp2:
    case ColumnCodec::kTimestampOld:
      return v.kind == Value::kTimestamp && v.ts.seconds >= 0 &&
                     v.ts.seconds <= 0xffffffffLL && v.ts.micros <= 999999
                 ? c.size
                 : -1;
    case ColumnCodec::kDecimal:
      if (v.kind == Value::kDecimalBinary) {
        return DecimalBinaryValid(v.bytes(), c.precision, c.scale) ? c.size : -1;
      }
      return v.kind == Value::kDecimal &&
                     DecimalTextFits(v.bytes(), c.precision, c.scale)
                 ? c.size
                 : -1;
    case ColumnCodec::kBit: {
      if (v.kind != Value::kInt && v.kind != Value::kUInt) return -1;
      if (c.max_len < 64 && (v.u >> c.max_len) != 0) return -1;
      return c.size;
    }
    case ColumnCodec::kPrefixed:
      if (v.kind != Value::kBytes || v.s.size > c.max_len) return -1;
      return static_cast<int64_t>(c.prefix + v.s.size);
  }
  return -1;
}

char* PackValue(const ColumnCodec& c, const Value& v, char* out) {
  switch (c.pack) {
    case ColumnCodec::kFixedLe:
      StoreLeN(out, v.u, c.size);
      return out + c.size;
    case ColumnCodec::kFloat: {
      float f = v.kind == Value::kDouble ? static_cast<float>(v.d)
                                         : static_cast<float>(v.i);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      StoreLe32(out, bits);
      return out + 4;
    }
    case ColumnCodec::kDouble: {
      double d = v.kind == Value::kDouble ? v.d : static_cast<double>(v.i);
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      StoreLe64(out, bits);
      return out + 8;
    }
    case ColumnCodec::kYear:
      PackYear(static_cast<int64_t>(v.u), out);
      return out + 1;
    case ColumnCodec::kDate:
      PackDate(v.t, out);
      return out + 3;
    case ColumnCodec::kTime2:
      PackTime2(v.t, c.fsp, out);
      return out + c.size;
    case ColumnCodec::kDatetime2:
      PackDatetime2(v.t, c.fsp, out);
      return out + c.size;
    case ColumnCodec::kTimestamp2:
      PackTimestamp2(v.ts.seconds, v.ts.micros, c.fsp, out);
      return out + c.size;
    case ColumnCodec::kTimeOld: {
      int64_t hms = int64_t{v.t.hour} * 10000 + v.t.minute * 100 + v.t.second;
      StoreLeN(out, static_cast<uint64_t>(v.t.negative ? -hms : hms), 3);
      return out + 3;
    }
    case ColumnCodec::kDatetimeOld: {
      const Temporal& t = v.t;
      uint64_t ymd = static_cast<uint64_t>(t.year) * 10000 + t.month * 100u + t.day;
      uint64_t hms = t.hour * 10000u + t.minute * 100u + t.second;
      StoreLe64(out, ymd * 1000000 + hms);
      return out + 8;
    }
    case ColumnCodec::kTimestampOld:
      StoreLe32(out, static_cast<uint32_t>(v.ts.seconds));
      return out + 4;
    case ColumnCodec::kDecimal:
      if (v.kind == Value::kDecimalBinary) {
        std::memcpy(out, v.s.data, c.size);
      } else {
        PackDecimal(v.bytes(), c.precision, c.scale, out);
      }
      return out + c.size;
    case ColumnCodec::kBit:
      StoreBeN(out, v.u, c.size);
      return out + c.size;
    case ColumnCodec::kPrefixed:
      StoreLeN(out, v.s.size, c.prefix);
      if (v.s.size != 0) std::memcpy(out + c.prefix, v.s.data, v.s.size);
      return out + c.prefix + v.s.size;
  }
  return out;
}

std::string PackValueError(const ColumnCodec& c, const Value& v) {
  if (v.kind == Value::kNull) return "NULL in a NOT NULL column";
  switch (c.pack) {
    case ColumnCodec::kFixedLe:
      return "needs an integer (Int/UInt) within the column's range";
    case ColumnCodec::kFloat:
    case ColumnCodec::kDouble:
      return "needs a Double";
    case ColumnCodec::kYear:
      return "needs a year 0 or 1901..2155";
    case ColumnCodec::kDate:
    case ColumnCodec::kTime2:
    case ColumnCodec::kDatetime2:
    case ColumnCodec::kTimeOld:
    case ColumnCodec::kDatetimeOld:
      return "needs a Time with fields in range";
    case ColumnCodec::kTimestamp2:
    case ColumnCodec::kTimestampOld:
      return "needs a Timestamp of 0..2^32-1 seconds";
    case ColumnCodec::kDecimal:
      return absl::StrCat("needs Decimal text that fits DECIMAL(",
                          c.precision, ",", c.scale, ") or DecimalBinary of ",
                          static_cast<int>(c.size), " valid bytes");
    case ColumnCodec::kBit:
      return absl::StrCat("needs an integer of at most ", c.max_len, " bits");
    case ColumnCodec::kPrefixed:
      return absl::StrCat("needs Bytes of at most ", c.max_len, " bytes");
  }
  return "unknown";
}


bool IsNumericColumnType(uint8_t type) {
  switch (type) {
    case kColTiny: case kColShort: case kColInt24: case kColLong:
    case kColLongLong: case kColNewDecimal: case kColFloat: case kColDouble:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------
// Decoding

namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(what);
}


bool IsBlob(uint8_t type) {
  return type == kColBlob || type == kColTinyBlob || type == kColMediumBlob ||
         type == kColLongBlob;
}

// Columns that carry a character set in the optional metadata (MySQL's
// is_character_type on the real type: ENUM and SET have their own).
bool IsCharacter(const Column& c) {
  return c.real_type == kColString || c.real_type == kColVarString ||
         c.real_type == kColVarchar || IsBlob(c.real_type);
}

// Reads the metadata bytes of one column (table_def::table_def in the
// servers). False for a type whose metadata size is unknown.
bool ReadColumnMeta(ByteReader* r, Column* c) {
  uint8_t b0 = 0, b1 = 0;
  switch (c->type) {
    case kColFloat:
    case kColDouble:
    case kColBlob:
    case kColTinyBlob:
    case kColMediumBlob:
    case kColLongBlob:
    case kColGeometry:
    case kColJson:
    case kColVector:
    case kColTime2:
    case kColDatetime2:
    case kColTimestamp2:
      if (!r->U8(&b0)) return false;
      c->meta = b0;
      break;
    case kColVarchar:
    case kColVarString: {
      uint16_t v;
      if (!r->Le16(&v)) return false;
      c->meta = v;
      break;
    }
    case kColBit:
      if (!r->U8(&b0) || !r->U8(&b1)) return false;
      c->meta = b0 | (static_cast<uint32_t>(b1) << 8);
      break;
    case kColNewDecimal:
    case kColString:
    case kColEnum:
    case kColSet:
      if (!r->U8(&b0) || !r->U8(&b1)) return false;
      c->meta = (static_cast<uint32_t>(b0) << 8) | b1;
      break;
    case kColDecimal:
    case kColTiny:
    case kColShort:
    case kColLong:
    case kColNull:
    case kColTimestamp:
    case kColLongLong:
    case kColInt24:
    case kColDate:
    case kColTime:
    case kColDatetime:
    case kColYear:
    case kColNewDate:
      c->meta = 0;
      break;
    default:
      return false;
  }
  c->real_type = c->type;
  if (c->type == kColString) {
    // A STRING column's metadata also carries the real type (ENUM, SET or
    // STRING) and, for CHAR(>255 bytes), two more length bits.
    uint32_t byte0 = c->meta >> 8;
    uint32_t byte1 = c->meta & 0xff;
    if (c->meta < 256) {
      c->length = c->meta;
    } else if ((byte0 & 0x30) != 0x30) {
      c->length = byte1 | (((byte0 & 0x30) ^ 0x30) << 4);
      c->real_type = static_cast<uint8_t>(byte0 | 0x30);
    } else {
      c->length = byte1;
      c->real_type = static_cast<uint8_t>(byte0);
    }
  } else if (c->type == kColEnum || c->type == kColSet) {
    c->length = c->meta & 0xff;
  }
  return true;
}

// Packed-length strings of the optional metadata.
bool ReadPackedString(ByteReader* r, std::string* s) {
  uint64_t len;
  absl::string_view bytes;
  if (!r->PackedInt(&len) || len > r->remaining() ||
      !r->Bytes(static_cast<size_t>(len), &bytes)) {
    return false;
  }
  s->assign(bytes.data(), bytes.size());
  return true;
}

// Optional metadata (MySQL 8.0.1+ binlog_row_metadata). Malformed fields
// stop the parse: the metadata only adds names and signedness, so the
// columns stay usable without it.
void ParseOptionalMetadata(absl::string_view data, TableMap* t) {
  ByteReader r(data);
  auto& cols = t->columns;
  while (!r.empty()) {
    uint8_t type;
    uint64_t len;
    absl::string_view value;
    if (!r.U8(&type) || !r.PackedInt(&len) || len > r.remaining() ||
        !r.Bytes(static_cast<size_t>(len), &value)) {
      return;
    }
    ByteReader v(value);
    switch (type) {
      case 1: {  // SIGNEDNESS: one bit per numeric column, MSB first
        size_t bit = 0;
        for (Column& c : cols) {
          if (!IsNumericColumnType(c.type)) continue;
          if (bit / 8 >= value.size()) break;
          c.is_unsigned =
              (static_cast<uint8_t>(value[bit / 8]) >> (7 - bit % 8)) & 1;
          ++bit;
        }
        t->has_signedness = true;
        break;
      }
      case 2: {  // DEFAULT_CHARSET: default, then (index, collation) pairs
        uint64_t def;
        if (!v.PackedInt(&def)) break;
        std::vector<Column*> chars;
        for (Column& c : cols) {
          if (IsCharacter(c)) chars.push_back(&c);
        }
        for (Column* c : chars) c->collation = static_cast<uint32_t>(def);
        uint64_t idx, coll;
        while (v.PackedInt(&idx) && v.PackedInt(&coll)) {
          if (idx < chars.size()) chars[idx]->collation = static_cast<uint32_t>(coll);
        }
        break;
      }
      case 3: {  // COLUMN_CHARSET: one collation per character column
        for (Column& c : cols) {
          if (!IsCharacter(c)) continue;
          uint64_t coll;
          if (!v.PackedInt(&coll)) break;
          c.collation = static_cast<uint32_t>(coll);
        }
        break;
      }
      case 4: {  // COLUMN_NAME
        for (Column& c : cols) {
          if (!ReadPackedString(&v, &c.name)) break;
        }
        t->has_names = true;
        break;
      }
      case 5:    // SET_STR_VALUE
      case 6: {  // ENUM_STR_VALUE
        uint8_t want = type == 5 ? kColSet : kColEnum;
        bool ok = true;
        for (Column& c : cols) {
          if (!ok) break;
          if (c.real_type != want) continue;
          uint64_t n;
          // Each string takes at least one byte, which bounds `n`.
          if (!v.PackedInt(&n) || n > v.remaining()) {
            ok = false;
            break;
          }
          c.enum_values.clear();
          for (uint64_t i = 0; i < n; ++i) {
            std::string s;
            if (!ReadPackedString(&v, &s)) {
              ok = false;
              break;
            }
            c.enum_values.push_back(std::move(s));
          }
        }
        break;
      }
      case 8: {  // SIMPLE_PRIMARY_KEY
        uint64_t idx;
        while (v.PackedInt(&idx)) t->primary_key.push_back(static_cast<uint32_t>(idx));
        break;
      }
      case 9: {  // PRIMARY_KEY_WITH_PREFIX: (index, prefix length) pairs
        uint64_t idx, prefix;
        while (v.PackedInt(&idx) && v.PackedInt(&prefix)) {
          t->primary_key.push_back(static_cast<uint32_t>(idx));
        }
        break;
      }
      default:  // charsets of ENUM/SET, geometry types, visibility, ...
        break;
    }
  }
}

// The size rule of each type, for RowsDecoder's counting path. Mirrors
// the sizes RowsDecoder::Image uses; an invalid metadata value leaves the
// column unplanned so that counting falls back to Image, which names the
// problem.
void SetSkipPlan(Column* c) {
  c->skip_fixed = -1;
  c->skip_prefix = 0;
  switch (c->real_type) {
    case kColTiny: case kColYear: c->skip_fixed = 1; return;
    case kColShort: c->skip_fixed = 2; return;
    case kColInt24: case kColDate: case kColNewDate: case kColTime:
      c->skip_fixed = 3; return;
    case kColLong: case kColFloat: case kColTimestamp: c->skip_fixed = 4; return;
    case kColLongLong: case kColDouble: case kColDatetime:
      c->skip_fixed = 8; return;
    case kColNull: c->skip_fixed = 0; return;
    case kColTime2: case kColDatetime2: case kColTimestamp2: {
      if (c->meta > 6) return;
      int base = c->real_type == kColTime2 ? 3 : c->real_type == kColDatetime2 ? 5 : 4;
      c->skip_fixed = base + static_cast<int>((c->meta + 1) / 2);
      return;
    }
    case kColNewDecimal: {
      size_t n = DecimalBinarySize(static_cast<int>(c->meta >> 8),
                                   static_cast<int>(c->meta & 0xff));
      if (n > 0) c->skip_fixed = static_cast<int32_t>(n);
      return;
    }
    case kColBit: {
      uint32_t n = (c->meta >> 8) + ((c->meta & 0xff) ? 1 : 0);
      if (n >= 1 && n <= 8) c->skip_fixed = static_cast<int32_t>(n);
      return;
    }
    case kColEnum:
      if (c->length == 1 || c->length == 2) c->skip_fixed = static_cast<int32_t>(c->length);
      return;
    case kColSet:
      if (c->length >= 1 && c->length <= 8) c->skip_fixed = static_cast<int32_t>(c->length);
      return;
    case kColVarchar: case kColVarString:
      c->skip_prefix = c->meta > 255 ? 2 : 1;
      return;
    case kColString:
      c->skip_prefix = c->length > 255 ? 2 : 1;
      return;
    case kColBlob: case kColTinyBlob: case kColMediumBlob: case kColLongBlob:
    case kColGeometry: case kColJson: case kColVector:
      if (c->meta >= 1 && c->meta <= 4) c->skip_prefix = static_cast<uint8_t>(c->meta);
      return;
    default:
      return;
  }
}


}  // namespace

std::string TableMap::QualifiedName() const {
  return absl::StrCat(db, ".", table);
}

namespace {

// Bytes of the table id in Table_map and Rows events (MySQL 5.0's
// post-header of 6 bytes has a 4-byte id).
size_t TableIdSize(uint8_t post_header_len) {
  return post_header_len == 6 ? 4 : 6;
}

}  // namespace

absl::StatusOr<uint64_t> DecodeTableId(absl::string_view body,
                                       uint8_t post_header_len) {
  ByteReader r(body);
  uint64_t id;
  if (!r.LeN(TableIdSize(post_header_len), &id)) {
    return Malformed("event too short for its table id");
  }
  return id;
}

absl::StatusOr<TableMap> DecodeTableMap(absl::string_view body,
                                        uint8_t post_header_len) {
  ByteReader r(body);
  TableMap t;
  const size_t id_size = TableIdSize(post_header_len);
  const size_t fixed = id_size + 2;
  if (!r.LeN(id_size, &t.table_id) || !r.Le16(&t.flags)) {
    return Malformed("Table_map event too short for its post-header");
  }
  if (post_header_len > fixed && !r.Skip(post_header_len - fixed)) {
    return Malformed("Table_map event too short for its post-header");
  }
  for (std::string* name : {&t.db, &t.table}) {
    uint8_t len;
    absl::string_view bytes;
    uint8_t nul;
    if (!r.U8(&len) || !r.Bytes(len, &bytes) || !r.U8(&nul)) {
      return Malformed("Table_map names run past the end of the event");
    }
    name->assign(bytes.data(), bytes.size());
  }
  uint64_t n;
  if (!r.PackedInt(&n) || n == 0 || n > r.remaining()) {
    return Malformed("Table_map column count is 0 or larger than the event");
  }
  absl::string_view types;
  r.Bytes(static_cast<size_t>(n), &types);
  uint64_t meta_len;
  absl::string_view meta;
  if (!r.PackedInt(&meta_len) || meta_len > r.remaining() ||
      !r.Bytes(static_cast<size_t>(meta_len), &meta)) {
    return Malformed("Table_map column metadata runs past the end of the event");
  }
  absl::string_view nulls;
  if (!r.Bytes(static_cast<size_t>((n + 7) / 8), &nulls)) {
    return Malformed("Table_map NULL bitmap runs past the end of the event");
  }
  t.columns.resize(static_cast<size_t>(n));
  ByteReader m(meta);
  for (size_t i = 0; i < t.columns.size(); ++i) {
    Column& c = t.columns[i];
    c.type = static_cast<uint8_t>(types[i]);
    c.nullable = (static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
    if (t.columns_error.empty() && !ReadColumnMeta(&m, &c)) {
      t.columns_error = absl::StrCat(
          "column ", i + 1, " has type ", static_cast<int>(c.type),
          ", whose metadata this decoder does not know (or the metadata "
          "block is too short)");
    }
  }
  ParseOptionalMetadata(r.Rest(), &t);
  if (t.columns_error.empty()) {
    for (Column& c : t.columns) SetSkipPlan(&c);
  }
  return t;
}


bool IsRowsEvent(uint8_t t) {
  return (t >= 20 && t <= 25) || (t >= 30 && t <= 32) || t == 39 ||
         (t >= 166 && t <= 171);
}

absl::Status DecodeRowsEvent(uint8_t event_type, absl::string_view body,
                             uint8_t post_header_len, std::string* scratch,
                             RowsEvent* out) {
  if (!IsRowsEvent(event_type)) {
    return absl::InvalidArgumentError("not a Rows event");
  }
  RowsEvent ev;
  ev.event_type = event_type;
  bool v2 = false;
  switch (event_type) {
    case 20: case 23: case 166: ev.kind = RowsKind::kWrite; break;
    case 21: case 24: case 167: ev.kind = RowsKind::kUpdate; break;
    case 22: case 25: case 168: ev.kind = RowsKind::kDelete; break;
    case 30: case 169: ev.kind = RowsKind::kWrite; v2 = true; break;
    case 31: case 170: ev.kind = RowsKind::kUpdate; v2 = true; break;
    case 39: ev.kind = RowsKind::kUpdate; v2 = true; ev.partial = true; break;
    default: ev.kind = RowsKind::kDelete; v2 = true; break;  // 32, 171
  }
  ev.compressed = event_type >= 166;
  ByteReader r(body);
  const size_t id_size = TableIdSize(post_header_len);
  if (!r.LeN(id_size, &ev.table_id) || !r.Le16(&ev.flags)) {
    return Malformed("Rows event too short for its post-header");
  }
  if (v2) {
    uint16_t extra_len;
    if (!r.Le16(&extra_len) || extra_len < 2 || !r.Skip(extra_len - 2u)) {
      return Malformed("Rows event extra data runs past the end of the event");
    }
  }
  if (!r.PackedInt(&ev.column_count) || ev.column_count == 0 ||
      ev.column_count > 8 * r.remaining()) {
    return Malformed("Rows event column count is 0 or larger than the event");
  }
  size_t bitmap = static_cast<size_t>((ev.column_count + 7) / 8);
  if (!r.Bytes(bitmap, &ev.columns_before) ||
      (ev.kind == RowsKind::kUpdate && !r.Bytes(bitmap, &ev.columns_after))) {
    return Malformed("Rows event column bitmap runs past the end of the event");
  }
  ev.rows = r.Rest();
  if (ev.compressed) {
    // The row images are one compressed block (MariaDB
    // row_log_event_uncompress); the bitmaps before it are plain.
    absl::Status s = MariaUncompress(ev.rows, size_t{1} << 30, scratch);
    if (!s.ok()) {
      return Malformed(absl::StrCat("compressed row images: ", s.message()));
    }
    ev.rows = *scratch;
  }
  *out = ev;
  return absl::OkStatus();
}

int64_t ValueExtent(const Column& c, absl::string_view data,
                    const char** error) {
  if (c.skip_fixed >= 0) {
    if (static_cast<size_t>(c.skip_fixed) > data.size()) {
      *error = "value runs past the end of the event";
      return -1;
    }
    return c.skip_fixed;
  }
  if (c.skip_prefix > 0) {
    if (c.skip_prefix > data.size()) {
      *error = "length runs past the end of the event";
      return -1;
    }
    uint64_t len = LoadLeN(data.data(), c.skip_prefix);
    if (len > data.size() - c.skip_prefix) {
      *error = "length runs past the end of the event";
      return -1;
    }
    return static_cast<int64_t>(c.skip_prefix + len);
  }
  *error = "this column type cannot be decoded (its size is unknown)";
  return -1;
}

}  // namespace binlog
