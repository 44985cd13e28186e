// binlog/rows_record.h and RowsWriter's record path: rows handed over as
// server records give byte-identical events and identical writesets to
// the same rows as Values, for every supported type, both flavors and
// every row image; CHAR padding, BLOB pointers, 2-byte VARCHAR lengths and
// NULL flags anywhere in the record; refused records and layouts; the
// binary DECIMAL input of Value; no allocation in steady state.

#include <cstring>
#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/rows.h"
#include "binlog/rows_decode.h"
#include "binlog/rows_record.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "tests/testutil/alloc_count.h"
#include "tests/testutil/sbtest.h"

namespace binlog {
namespace {

using Record = std::vector<uint8_t>;

// Decodes the row events of a buffer into text, one string per image.
class Collect : public RowVisitor {
 public:
  void OnImage(uint64_t, bool, const std::vector<uint32_t>& columns,
               const std::vector<RowCell>& cells) override {
    std::string s;
    for (size_t k = 0; k < columns.size(); ++k) {
      const RowCell& c = cells[k];
      absl::StrAppend(&s, k ? "," : "", columns[k], "=");
      switch (c.kind) {
        case RowCell::kNull: s += "NULL"; break;
        case RowCell::kBytes:
        case RowCell::kBinary: s.append(c.bytes.data(), c.bytes.size()); break;
        default: s += c.text;
      }
    }
    images.push_back(s);
  }
  std::vector<std::string> images;
};

std::vector<std::string> DecodeImages(const TransactionBuffer& txn) {
  std::map<uint64_t, TableMap> maps;
  Collect out;
  RowsDecoder d;
  absl::string_view all = txn.appended_data();
  for (size_t i = 0; i < txn.appended_event_count(); ++i) {
    absl::string_view e =
        all.substr(txn.appended_event_offset(i), txn.appended_event_size(i));
    const uint8_t type = static_cast<uint8_t>(e[kTypeOffset]);
    absl::string_view body = e.substr(kHeaderSize);
    if (txn.checksums()) body.remove_suffix(kChecksumSize);
    if (type == kTableMapEvent) {
      auto t = DecodeTableMap(body, 8);
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) maps[t->table_id] = *t;
    } else if (IsRowsEvent(type)) {
      RowsEvent ev;
      std::string scratch;
      EXPECT_TRUE(
          DecodeRowsEvent(type, body, type >= 30 ? 10 : 8, &scratch, &ev).ok());
      uint64_t rows;
      absl::Status s = d.Decode(maps[ev.table_id], ev, &out, &rows);
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  return out.images;
}

ColumnDef Col(ColumnType t, uint32_t length = 0, uint32_t collation = 0) {
  ColumnDef c;
  c.type = t;
  c.length = length;
  c.collation = collation;
  return c;
}

std::string DecimalBytes(absl::string_view text, int precision, int scale) {
  std::string b(DecimalBinarySize(precision, scale), '\0');
  EXPECT_TRUE(PackDecimal(text, precision, scale, &b[0]));
  return b;
}

// Every type the record path supports, nullable but the key; unique keys
// on string, DECIMAL and FLOAT columns so that every hashing mode is used.
TableDef TypesTable(LogFlavor flavor) {
  TableDef t;
  t.table_id = 77;
  t.schema = "db";
  t.table = "types";
  t.metadata = RowMetadata::kFull;
  t.columns = {
      Col(kColLong),                  // 0 key
      Col(kColTiny),        Col(kColShort),       Col(kColInt24),
      Col(kColLongLong),    Col(kColFloat),       Col(kColDouble),
      Col(kColNewDecimal, 12),                    // 7
      Col(kColNewDecimal, 30),                    // 8
      Col(kColString, 10, 8),                     // 9 CHAR(10) latin1
      Col(kColString, 400, 255),                  // 10 CHAR(100) utf8mb4
      Col(kColString, 6, 63),                     // 11 BINARY(6)
      Col(kColVarchar, 20, 46),                   // 12 utf8mb4_bin
      Col(kColVarchar, 300, 63),                  // 13 VARBINARY(300)
      Col(kColBlob, 2),     Col(kColTinyBlob, 1), Col(kColMediumBlob, 3),
      Col(kColLongBlob, 4),                       // 14-17
      Col(kColJson),                              // 18
      Col(kColGeometry),                          // 19
      Col(kColDate),        Col(kColTime2, 0),    Col(kColTime2, 3),
      Col(kColDatetime2, 0), Col(kColDatetime2, 6),
      Col(kColTimestamp2, 0), Col(kColTimestamp2, 4),  // 20-26
      Col(kColTime),        Col(kColDatetime),    Col(kColTimestamp),  // 27-29
      Col(kColYear),        Col(kColEnum, 3),     Col(kColEnum, 300),
      Col(kColSet, 3),      Col(kColSet, 40),     Col(kColBit, 12),
      Col(kColBit, 64),                           // 30-36
      Col(kColNewDate),                           // 37
  };
  t.columns[0].nullable = false;
  t.columns[0].name = "id";
  t.columns[7].scale = 3;
  t.columns[8].scale = 10;
  t.columns[4].is_unsigned = true;
  t.columns[31].enum_values = {"a", "b", "c"};
  t.columns[33].enum_values = {"x", "y", "z"};
  t.columns[31].collation = t.columns[32].collation = 8;
  t.columns[33].collation = t.columns[34].collation = 8;
  t.columns[32].enum_values.clear();
  t.primary_key = {0};
  t.unique_keys = {KeyDef{{12}, {}}, KeyDef{{13, 11}, {4, 0}}, KeyDef{{9}, {}},
                   KeyDef{{7, 5}, {}}, KeyDef{{8, 6, 4}, {}}, KeyDef{{22, 35}, {}}};
  if (flavor == LogFlavor::kMySQL) t.columns.push_back(Col(kColVector, 4));
  return t;
}

// Values for TypesTable rows: `which` 0 and 1 differ in every column; 2 is
// NULL everywhere but the key. The strings live in `keep`.
std::vector<Value> TypesRow(const TableDef& t, int id, int which,
                            std::deque<std::string>* keep) {
  auto str = [keep](std::string s) {
    keep->push_back(std::move(s));
    return Value::Bytes(keep->back());
  };
  std::vector<Value> v(t.columns.size(), Value::Null());
  v[0] = Value::Int(id);
  if (which == 2) return v;
  const bool a = which == 0;
  v[1] = Value::Int(a ? -128 : 127);
  v[2] = Value::Int(a ? -32768 : 12345);
  v[3] = Value::Int(a ? -8388608 : 8388607);
  v[4] = Value::UInt(a ? UINT64_MAX : 1);
  v[5] = Value::Double(a ? 1.5 : 0);
  v[6] = Value::Double(a ? -12345.5 : 0.1);
  // DECIMAL as text in one row and as the server's bytes in the other.
  v[7] = a ? Value::Decimal("-123456789.125")
           : str(DecimalBytes("0.5", 12, 3));
  if (!a) v[7].kind = Value::kDecimalBinary;
  v[8] = a ? str(DecimalBytes("12345678901234567890.0123456789", 30, 10))
           : Value::Decimal("-0");
  if (a) v[8].kind = Value::kDecimalBinary;
  v[9] = str(a ? "abc" : "0123456789");
  v[10] = str(a ? std::string(120, 'c') + "\xc3\xa9" : "short");  // 2-byte length
  v[11] = str(a ? std::string("a\0 b", 4) : std::string("xyz"));
  v[12] = str(a ? "k1" : "key number two");
  v[13] = str(a ? std::string(280, 'v') : std::string("bin\0\xff", 5));
  v[14] = str(a ? std::string("bl\0ob", 5) : "");
  v[15] = str(a ? "tiny" : "t");
  v[16] = str(a ? std::string(70000, 'm') : "medium");
  v[17] = str(a ? "long" : std::string(300, 'L'));
  v[18] = str(t.columns.size() > 38 ? std::string("\x04\x01", 2) : "{\"a\": 1}");
  // A POINT(1 2) as servers store it: SRID then WKB.
  v[19] = str(std::string("\0\0\0\0\x01\x01\0\0\0", 9) + std::string(8, '\0') +
              std::string(8, '\0'));
  v[20] = Value::Time(a ? MakeTemporal(2024, 2, 29) : MakeTemporal(1000, 1, 1));
  v[21] = Value::Time(MakeTemporal(0, 0, 0, a ? 838 : 12, 59, 59, 0, !a));
  v[22] = Value::Time(MakeTemporal(0, 0, 0, 1, 2, 3, a ? 456000 : 1000, a));
  v[23] = Value::Time(MakeTemporal(a ? 2024 : 1999, 1, 2, 3, 4, 5));
  v[24] = Value::Time(MakeTemporal(9999, 12, 31, 23, 59, 59, a ? 999999 : 1));
  v[25] = Value::Timestamp(a ? 1700000000 : 1);
  v[26] = Value::Timestamp(a ? 1700000000 : 2, a ? 123400 : 0);
  v[27] = Value::Time(MakeTemporal(0, 0, 0, a ? 100 : 1, 2, 3, 0, a));
  v[28] = Value::Time(MakeTemporal(a ? 2020 : 1970, 6, 7, 8, 9, 10));
  v[29] = Value::Timestamp(a ? 1600000000 : 86400);
  v[30] = Value::Int(a ? 2024 : 0);
  v[31] = Value::UInt(a ? 2 : 3);
  v[32] = Value::UInt(a ? 299 : 1);
  v[33] = Value::UInt(a ? 5 : 2);
  v[34] = Value::UInt(a ? (uint64_t{1} << 39) | 1 : 2);
  v[35] = Value::UInt(a ? 0xABC : 1);
  v[36] = Value::UInt(a ? UINT64_MAX : 0);
  v[37] = Value::Time(MakeTemporal(2001, 9, 9));
  if (t.columns.size() > 38) {
    v[38] = str(a ? std::string("\0\0\x80\x3f\0\0\0\x40", 8) : std::string());
  }
  return v;
}

Record ToRecord(const TableDef& t, const RecordLayout& l,
                const std::vector<Value>& row) {
  Record r(l.record_length);
  absl::Status s = StoreRecord(t, l, row, absl::MakeSpan(r));
  EXPECT_TRUE(s.ok()) << s;
  return r;
}

RowsWriter MakeWriter(LogFlavor flavor, RowImage image, size_t max_event = 8192) {
  RowsWriterOptions o;
  o.flavor = flavor;
  o.row_image = image;
  o.max_event_size = max_event;
  return *RowsWriter::Create(o);
}

// A layout unlike a server's default: columns in reverse order with gaps,
// the NULL flags after them, in reverse bit order.
RecordLayout ScrambledLayout(const TableDef& t) {
  RecordLayout l;
  l.columns.resize(t.columns.size());
  uint32_t off = 3;
  for (size_t i = t.columns.size(); i-- > 0;) {
    l.columns[i].offset = off;
    l.columns[i].pack_length = RecordPackLength(t.columns[i]);
    off += l.columns[i].pack_length + static_cast<uint32_t>(i % 3);
  }
  const uint32_t null_start = off;
  uint32_t bit = 0;
  for (size_t i = t.columns.size(); i-- > 0;) {
    if (!t.columns[i].nullable) continue;
    l.columns[i].null_byte = null_start + bit / 8;
    l.columns[i].null_bit = static_cast<uint8_t>(0x80 >> (bit % 8));
    ++bit;
  }
  l.record_length = null_start + (bit + 7) / 8 + 5;
  return l;
}

struct PathCase {
  LogFlavor flavor;
  RowImage image;
  bool scrambled;  // ScrambledLayout instead of ServerRecordLayout
};

class RecordPathTest : public ::testing::TestWithParam<PathCase> {};

// The same statements through both paths: the bytes and the writesets are
// the same, and the images decode.
TEST_P(RecordPathTest, RecordsWriteTheSameEventsAsValues) {
  const PathCase pc = GetParam();
  const TableDef t = TypesTable(pc.flavor);
  const RecordLayout layout =
      pc.scrambled ? ScrambledLayout(t) : ServerRecordLayout(t);
  RowsWriter wv = MakeWriter(pc.flavor, pc.image, 4096);
  RowsWriter wr = MakeWriter(pc.flavor, pc.image, 4096);
  auto hv = wv.DescribeTable(t);
  auto hr = wr.DescribeTable(t, layout);
  ASSERT_TRUE(hv.ok()) << hv.status();
  ASSERT_TRUE(hr.ok()) << hr.status();
  EXPECT_EQ(wv.table_map_body(*hv), wr.table_map_body(*hr));

  std::deque<std::string> keep;  // stable addresses
  std::vector<std::vector<Value>> rows;
  for (int which = 0; which < 3; ++which) {
    for (int k = 0; k < 3; ++k) rows.push_back(TypesRow(t, 10 * which + k, which, &keep));
  }
  std::vector<Record> recs;
  for (const auto& r : rows) recs.push_back(ToRecord(t, layout, r));
  // Updates: row a -> b (some columns changed), NULLs -> a (all changed),
  // b -> NULLs (no bitmap).
  std::vector<uint8_t> some((t.columns.size() + 7) / 8, 0);
  for (uint32_t c : {1u, 9u, 13u, 14u, 19u, 24u, 36u}) some[c / 8] |= 1 << (c % 8);
  std::vector<uint8_t> all(some.size(), 0xff);

  TransactionBuffer tv(true), tr(true);
  for (int pass = 0; pass < 2; ++pass) {  // the second reuses everything
    tv.Clear();
    tr.Clear();
    ASSERT_TRUE(wv.BeginStatement(&tv, 5, "INSERT").ok());
    ASSERT_TRUE(wr.BeginStatement(&tr, 5, "INSERT").ok());
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_TRUE(wv.Insert(*hv, rows[i]).ok()) << i << wv.Insert(*hv, rows[i]);
      ASSERT_TRUE(wr.InsertRecord(*hr, recs[i]).ok()) << i;
    }
    ASSERT_TRUE(wv.EndStatement().ok());
    ASSERT_TRUE(wr.EndStatement().ok());
    ASSERT_TRUE(wv.BeginStatement(&tv, 5, "UPDATE").ok());
    ASSERT_TRUE(wr.BeginStatement(&tr, 5, "UPDATE").ok());
    const struct { int from, to; const std::vector<uint8_t>* changed; } ups[] = {
        {0, 3, &some}, {6, 1, &all}, {4, 7, nullptr}, {1, 5, &some}};
    for (const auto& u : ups) {
      absl::Span<const uint8_t> ch;
      if (u.changed != nullptr) ch = *u.changed;
      ASSERT_TRUE(wv.Update(*hv, rows[u.from], rows[u.to], ch).ok());
      ASSERT_TRUE(wr.UpdateRecord(*hr, recs[u.from], recs[u.to], ch).ok());
    }
    ASSERT_TRUE(wv.EndStatement().ok());
    ASSERT_TRUE(wr.EndStatement().ok());
    ASSERT_TRUE(wv.BeginStatement(&tv, 5, "DELETE").ok());
    ASSERT_TRUE(wr.BeginStatement(&tr, 5, "DELETE").ok());
    for (int i : {3, 7, 2}) {
      ASSERT_TRUE(wv.Delete(*hv, rows[i]).ok());
      ASSERT_TRUE(wr.DeleteRecord(*hr, recs[i]).ok());
    }
    ASSERT_TRUE(wv.EndStatement().ok());
    ASSERT_TRUE(wr.EndStatement().ok());

    ASSERT_EQ(tv.appended_event_count(), tr.appended_event_count());
    EXPECT_TRUE(tv.appended_data() == tr.appended_data()) << "pass " << pass;
    EXPECT_EQ(std::vector<uint64_t>(tv.writeset().begin(), tv.writeset().end()),
              std::vector<uint64_t>(tr.writeset().begin(), tr.writeset().end()));
    EXPECT_EQ(tv.writeset_state(), tr.writeset_state());
  }
  // 9 inserts, 4 updates of two images, 3 deletes; decoded the same.
  const std::vector<std::string> iv = DecodeImages(tv), ir = DecodeImages(tr);
  EXPECT_EQ(ir.size(), 9u + 8u + 3u);
  EXPECT_EQ(ir, iv);
  // The key hashes agree row by row.
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t k = 0; k < wv.key_count(*hv); ++k) {
      uint64_t h1 = 0, h2 = 0;
      const bool b1 = wv.KeyHash(*hv, k, rows[i], &h1);
      const bool b2 = wr.KeyHashRecord(*hr, k, recs[i], &h2);
      EXPECT_EQ(b1, b2) << i << " " << k;
      EXPECT_EQ(h1, h2) << i << " " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RecordPathTest,
    ::testing::Values(PathCase{LogFlavor::kMySQL, RowImage::kFull, false},
                      PathCase{LogFlavor::kMySQL, RowImage::kMinimal, false},
                      PathCase{LogFlavor::kMySQL, RowImage::kNoBlob, false},
                      PathCase{LogFlavor::kMariaDB, RowImage::kFull, false},
                      PathCase{LogFlavor::kMariaDB, RowImage::kMinimal, false},
                      PathCase{LogFlavor::kMariaDB, RowImage::kNoBlob, false},
                      PathCase{LogFlavor::kMySQL, RowImage::kFull, true},
                      PathCase{LogFlavor::kMariaDB, RowImage::kMinimal, true}),
    [](const ::testing::TestParamInfo<PathCase>& i) {
      const char* img = i.param.image == RowImage::kFull      ? "Full"
                        : i.param.image == RowImage::kMinimal ? "Minimal"
                                                              : "NoBlob";
      return absl::StrCat(i.param.flavor == LogFlavor::kMySQL ? "MySQL" : "MariaDB",
                          img, i.param.scrambled ? "Scrambled" : "");
    });

// The image bytes of the one row of a single-row insert.
std::string RowBytes(const TransactionBuffer& txn, size_t ncols) {
  absl::string_view all = txn.appended_data();
  const size_t last = txn.appended_event_count() - 1;
  absl::string_view body = all.substr(txn.appended_event_offset(last) + kHeaderSize,
                                      txn.appended_event_size(last) - kHeaderSize);
  return std::string(body.substr(8 + 2 + 1 + (ncols + 7) / 8));
}

// Hand-built records, as a server holds them: padded CHARs, a BLOB
// pointer, a 2-byte VARCHAR length, a NULL flag.
TEST(RecordPathTest, ServerRecordFormsBecomeRowImageForms) {
  TableDef t;
  t.table_id = 3;
  t.schema = "d";
  t.table = "t";
  t.columns = {Col(kColString, 12, 8), Col(kColString, 400, 255),
               Col(kColString, 4, 63), Col(kColVarchar, 300, 8), Col(kColBlob, 2),
               Col(kColLong)};
  // id-less table: column 5 nullable and NULL.
  RecordLayout l;
  l.record_length = 1 + 12 + 400 + 4 + 302 + 2 + sizeof(void*) + 4;
  uint32_t off = 1;
  uint8_t bit = 1;
  for (const ColumnDef& c : t.columns) {
    ColumnRecord r;
    r.offset = off;
    r.null_byte = 0;
    r.null_bit = bit;
    bit = static_cast<uint8_t>(bit << 1);
    off += RecordPackLength(c);
    l.columns.push_back(r);
  }
  ASSERT_EQ(off, l.record_length);
  Record rec(l.record_length, 0xee);  // garbage wherever nothing is stored
  rec[0] = 0x20;                      // column 5 NULL
  uint8_t* p = rec.data() + 1;
  std::memcpy(p, "ab          ", 12);
  p += 12;
  std::memset(p, ' ', 400);
  std::memcpy(p, "\xc3\xa9t\xc3\xa9", 5);
  p += 400;
  std::memcpy(p, "z\0\0\0", 4);
  p += 4;
  const std::string vc(290, 'q');
  p[0] = 290 & 0xff;
  p[1] = 290 >> 8;
  std::memcpy(p + 2, vc.data(), vc.size());
  p += 302;
  const char blob[] = "xyz";
  p[0] = 3;
  p[1] = 0;
  const char* bp = blob;
  std::memcpy(p + 2, &bp, sizeof(bp));

  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull);
  auto h = w.DescribeTable(t, l);
  ASSERT_TRUE(h.ok()) << h.status();
  TransactionBuffer txn(false);
  ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
  ASSERT_TRUE(w.InsertRecord(*h, rec).ok());
  ASSERT_TRUE(w.EndStatement().ok());
  std::string want("\x20", 1);
  want += std::string("\x02" "ab", 3);
  want += std::string("\x05\x00", 2) + "\xc3\xa9t\xc3\xa9";  // CHAR(400 bytes): 2
  want += std::string("\x01z", 2);
  want += std::string("\x22\x01", 2) + vc;
  want += std::string("\x03\x00xyz", 5);
  EXPECT_EQ(RowBytes(txn, t.columns.size()), want);
}

// Every used length of CHARs of several slot sizes (the trimming scans in
// blocks): the bytes up to the last non-pad byte, inner pad bytes kept.
TEST(RecordPathTest, CharTrimmingFindsTheLastNonPadByte) {
  for (uint32_t slot : {1u, 2u, 15u, 16u, 17u, 31u, 63u, 64u, 65u, 127u, 200u, 1020u}) {
    for (uint32_t collation : {8u, 63u}) {
      record_internal::RecordColumn c;
      c.form = record_internal::RecordColumn::kChar;
      c.prefix = slot > 255 ? 2 : 1;
      c.pad = collation == 63 ? 0 : ' ';
      c.size = slot;
      c.offset = 3;
      for (uint32_t len = 0; len <= slot; ++len) {
        Record rec(3 + slot + 5, 'x');
        std::memset(rec.data() + 3, c.pad, slot);
        // A value with pad bytes inside it, ending in a non-pad byte.
        for (uint32_t i = 0; i < len; ++i) rec[3 + i] = (i % 3 == 1) ? c.pad : 'a';
        if (len > 0) rec[3 + len - 1] = 'z';
        const char* data = nullptr;
        size_t size = 99999;
        ASSERT_TRUE(record_internal::VariableBytes(c, rec.data(), &data, &size));
        ASSERT_EQ(size, len) << "slot " << slot << " collation " << collation;
        EXPECT_EQ(data, reinterpret_cast<const char*>(rec.data() + 3));
      }
    }
  }
}

// Each trimming implementation the CPU has (AVX-512 BW, AVX2, SSE2: they
// differ in block sizes and in how they end) against a byte loop, for
// every slot size 0..300 and a few larger ones, every used length, both
// pads, at several alignments, with non-pad bytes just outside the slot.
TEST(RecordPathTest, EveryTrimLevelGivesTheSameLengths) {
  std::vector<uint32_t> slots;
  for (uint32_t s = 0; s <= 300; ++s) slots.push_back(s);
  for (uint32_t s : {383u, 384u, 385u, 480u, 511u, 512u, 1020u}) slots.push_back(s);
  std::vector<uint8_t> buf(8 + 1024 + 8);
  for (int level = 0; level <= record_internal::TrimLevel(); ++level) {
    for (uint8_t pad : {uint8_t{' '}, uint8_t{0}}) {
      for (uint32_t slot : slots) {
        const size_t at = 1 + slot % 7;  // alignment
        for (uint32_t len = 0; len <= slot; ++len) {
          std::fill(buf.begin(), buf.end(), uint8_t{'x'});
          std::memset(buf.data() + at, pad, slot);
          for (uint32_t i = 0; i < len; ++i) buf[at + i] = (i % 5 == 2) ? pad : 'a';
          if (len > 0) buf[at + len - 1] = 'z';
          ASSERT_EQ(record_internal::TrimmedLengthAt(level, buf.data() + at, slot, pad),
                    len)
              << "level " << level << " slot " << slot << " pad " << int{pad};
        }
      }
    }
  }
}

// Pack's variants (its loop compiled for AVX-512 BW, and the portable one
// with each trimming level) write the same images: CHARs of every used
// length in two slot sizes and both pads, with VARCHAR, BLOB, fixed
// columns and NULLs around them.
TEST(RecordPathTest, EveryPackVariantWritesTheSameImage) {
  TableDef t;
  t.table_id = 9;
  t.table = "t";
  t.columns = {Col(kColString, 40, 8), Col(kColLong), Col(kColString, 1020, 255),
               Col(kColVarchar, 300, 8), Col(kColString, 20, 63), Col(kColBlob, 2),
               Col(kColTiny)};
  for (ColumnDef& c : t.columns) c.nullable = true;
  const RecordLayout l = ServerRecordLayout(t);
  std::vector<record_internal::RecordColumn> cols;
  ASSERT_TRUE(record_internal::ResolveColumns(t, l, &cols).ok());
  record_internal::RecordImagePlan plan;
  const std::vector<uint32_t> image = {0, 1, 2, 3, 4, 5, 6};
  plan.Compile(cols, image, true);
  std::string text;
  for (int i = 0; i < 1020; ++i) text.push_back(i % 9 == 4 ? ' ' : static_cast<char>('a' + i % 26));
  for (size_t len = 0; len <= 1020; ++len) {
    const absl::string_view v(text.data(), len);
    const std::string binary(len % 21, '\x07');
    std::vector<Value> row = {Value::Bytes(v.substr(0, std::min<size_t>(len, 40))),
                              Value::Int(static_cast<int>(len)),
                              Value::Bytes(v),
                              Value::Bytes(v.substr(0, std::min<size_t>(len, 300))),
                              Value::Bytes(binary),
                              Value::Bytes(v),
                              Value::Int(1)};
    if (len % 5 == 1) row[len % 7] = Value::Null();
    const Record rec = ToRecord(t, l, row);
    uint32_t bad = 0;
    const int64_t bound = plan.Bound(rec.data(), &bad);
    ASSERT_GE(bound, 0);
    std::string best(static_cast<size_t>(bound), '\0');
    const size_t n = static_cast<size_t>(plan.Pack(rec.data(), best.data()) - best.data());
    // Bound is what the writer reserves, Bound - slack what it assumes at
    // least when it decides a row opens the next event.
    ASSERT_LE(n, static_cast<size_t>(bound)) << "length " << len;
    ASSERT_GE(n, static_cast<size_t>(bound) - plan.slack()) << "length " << len;
    best.resize(n);
    for (int level = 0; level <= record_internal::TrimLevel(); ++level) {
      std::string got(static_cast<size_t>(bound), '\0');
      got.resize(static_cast<size_t>(plan.PackAt(level, rec.data(), got.data()) - got.data()));
      ASSERT_EQ(got, best) << "level " << level << " length " << len;
    }
  }
}

// Strings of every length 0..300 (the copies take size-dependent paths):
// the same bytes as the Value path.
TEST(RecordPathTest, EveryStringLengthCopiesExactly) {
  TableDef t;
  t.table_id = 8;
  t.table = "t";
  t.columns = {Col(kColString, 40, 8), Col(kColVarchar, 300, 8), Col(kColBlob, 2),
               Col(kColTiny), Col(kColBit, 24)};
  const RecordLayout l = ServerRecordLayout(t);
  RowsWriter wv = MakeWriter(LogFlavor::kMariaDB, RowImage::kFull, 1 << 20);
  RowsWriter wr = MakeWriter(LogFlavor::kMariaDB, RowImage::kFull, 1 << 20);
  auto hv = wv.DescribeTable(t);
  auto hr = wr.DescribeTable(t, l);
  ASSERT_TRUE(hv.ok() && hr.ok());
  TransactionBuffer tv(false), tr(false);
  ASSERT_TRUE(wv.BeginStatement(&tv, 1).ok());
  ASSERT_TRUE(wr.BeginStatement(&tr, 1).ok());
  std::string text;
  for (int i = 0; i < 300; ++i) text.push_back(static_cast<char>('a' + i % 26));
  for (size_t len = 0; len <= 300; ++len) {
    const absl::string_view v(text.data(), len);
    std::vector<Value> row = {Value::Bytes(v.substr(0, std::min<size_t>(len, 40))),
                              Value::Bytes(v), Value::Bytes(v),
                              Value::Int(static_cast<int>(len % 100)),
                              Value::UInt(len)};
    if (len % 7 == 3) row[3] = Value::Null();
    ASSERT_TRUE(wv.Insert(*hv, row).ok());
    ASSERT_TRUE(wr.InsertRecord(*hr, ToRecord(t, l, row)).ok());
  }
  ASSERT_TRUE(wv.EndStatement().ok());
  ASSERT_TRUE(wr.EndStatement().ok());
  EXPECT_TRUE(tv.appended_data() == tr.appended_data());
  EXPECT_EQ(DecodeImages(tr).size(), 301u);
}

TEST(RecordPathTest, AdjacentFixedColumnsAreOneCopy) {
  const TableDef t = testutil::SbtestTable(1);
  std::vector<record_internal::RecordColumn> cols;
  ASSERT_TRUE(record_internal::ResolveColumns(t, ServerRecordLayout(t), &cols).ok());
  record_internal::RecordImagePlan plan;
  const std::vector<uint32_t> image = {0, 1, 2, 3};
  plan.Compile(cols, image, false);
  EXPECT_EQ(plan.step_count(), 3u);  // id+k, c, pad
}

TEST(RecordPathTest, BadLengthsAreRefusedAndLeaveNoTrace) {
  TableDef t;
  t.table_id = 4;
  t.table = "t";
  t.columns = {Col(kColLong), Col(kColVarchar, 10), Col(kColBlob, 2)};
  t.columns[0].nullable = false;
  t.primary_key = {0};
  const RecordLayout l = ServerRecordLayout(t);
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull);
  auto h = w.DescribeTable(t, l);
  ASSERT_TRUE(h.ok());
  auto plain = w.DescribeTable(t);
  ASSERT_TRUE(plain.ok());
  TransactionBuffer txn(false);
  ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
  Record good = ToRecord(t, l, {Value::Int(1), Value::Bytes("ok"), Value::Bytes("b")});
  ASSERT_TRUE(w.InsertRecord(*h, good).ok());
  const std::string before(txn.appended_data());
  const auto writeset_before = txn.writeset().size();

  Record long_varchar = good;
  long_varchar[l.columns[1].offset] = 11;
  absl::Status s = w.InsertRecord(*h, long_varchar);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("column 2"), std::string::npos) << s;
  Record no_pointer = good;
  std::memset(no_pointer.data() + l.columns[2].offset + 2, 0, sizeof(void*));
  s = w.InsertRecord(*h, no_pointer);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::IsInvalidArgument(
      w.InsertRecord(*h, absl::MakeConstSpan(good).subspan(0, good.size() - 1))));
  EXPECT_TRUE(absl::IsInvalidArgument(w.UpdateRecord(*h, good, long_varchar)));
  EXPECT_TRUE(absl::IsInvalidArgument(w.InsertRecord(*plain, good)));
  EXPECT_EQ(std::string(txn.appended_data()), before);
  EXPECT_EQ(txn.writeset().size(), writeset_before);
  // A NULL BLOB needs no pointer.
  Record null_blob = good;
  std::memset(null_blob.data() + l.columns[2].offset, 0, 2 + sizeof(void*));
  null_blob[l.columns[2].null_byte] |= l.columns[2].null_bit;
  EXPECT_TRUE(w.InsertRecord(*h, null_blob).ok());
  EXPECT_TRUE(w.EndStatement().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(w.InsertRecord(*h, good)));
}

TEST(RecordPathTest, LayoutsThatDoNotFitAreRefused) {
  TableDef t;
  t.table_id = 5;
  t.table = "t";
  t.columns = {Col(kColLong), Col(kColString, 8, 8), Col(kColVarchar, 300)};
  t.columns[0].nullable = false;
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull);
  const RecordLayout good = ServerRecordLayout(t);
  ASSERT_TRUE(w.DescribeTable(t, good).ok());
  auto refused = [&](RecordLayout l, const TableDef& def) {
    absl::Status s = w.DescribeTable(def, l).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  };
  RecordLayout l = good;
  l.columns.pop_back();
  refused(l, t);
  l = good;
  l.record_length -= 1;
  refused(l, t);  // the last column runs past the record
  l = good;
  l.columns[1].pack_length = 7;
  refused(l, t);
  l = good;
  l.columns[2].length_bytes = 1;  // VARCHAR(300) has 2
  refused(l, t);
  l = good;
  l.columns[0].null_bit = 1;  // NOT NULL with a NULL bit
  refused(l, t);
  l = good;
  l.columns[1].null_bit = 0;  // nullable without one
  refused(l, t);
  l = good;
  l.columns[1].null_bit = 3;  // not one bit
  refused(l, t);
  l = good;
  l.columns[1].mbminlen = 2;  // CHAR in utf16
  refused(l, t);
  TableDef old = t;
  old.columns[2].type = kColVarString;
  refused(ServerRecordLayout(old), old);
  // Refused descriptions added no table.
  EXPECT_EQ(*w.DescribeTable(t, good), 1u);
}

TEST(DecimalBinaryTest, PacksAsTheTextFormAndIsChecked) {
  ColumnDef d = Col(kColNewDecimal, 12);
  d.scale = 3;
  const ColumnCodec c = *MakeColumnCodec(d);
  for (const char* text : {"-123456789.125", "0.5", "0", "-0.001", "999999999.999"}) {
    const std::string bin = DecimalBytes(text, 12, 3);
    char a[16], b[16];
    ASSERT_EQ(PackedValueSize(c, Value::Decimal(text)), c.size);
    ASSERT_EQ(PackedValueSize(c, Value::DecimalBinary(bin)), c.size) << text;
    PackValue(c, Value::Decimal(text), a);
    PackValue(c, Value::DecimalBinary(bin), b);
    EXPECT_EQ(std::string(a, c.size), std::string(b, c.size)) << text;
  }
  std::string bad = DecimalBytes("1", 12, 3);
  EXPECT_EQ(PackedValueSize(c, Value::DecimalBinary(bad.substr(1))), -1);
  // A 9-digit group of 0x3b9aca00 = 10^9 (the sign bit set: positive)
  // is not a digit group.
  bad[0] = static_cast<char>(0x3b | 0x80);
  bad[1] = static_cast<char>(0x9a);
  bad[2] = static_cast<char>(0xca);
  bad[3] = 0;
  EXPECT_EQ(PackedValueSize(c, Value::DecimalBinary(bad)), -1);
  EXPECT_NE(PackValueError(c, Value::DecimalBinary(bad)).find("DecimalBinary"),
            std::string::npos);
  // -0 as bytes (every byte inverted) is zero, as the text "-0.000" is.
  std::string neg_zero = DecimalBytes("0", 12, 3);
  for (char& ch : neg_zero) ch = static_cast<char>(~ch);
  EXPECT_TRUE(DecimalBinaryValid(neg_zero, 12, 3));
  EXPECT_TRUE(DecimalBinaryIsZero(neg_zero));
  EXPECT_FALSE(DecimalBinaryIsZero(DecimalBytes("0.001", 12, 3)));

  // In a key, -0 bytes hash as the text 0 does.
  TableDef t;
  t.table_id = 6;
  t.table = "t";
  t.columns = {d};
  t.columns[0].nullable = false;
  t.primary_key = {0};
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull);
  auto h = w.DescribeTable(t);
  ASSERT_TRUE(h.ok());
  uint64_t h1 = 0, h2 = 1;
  ASSERT_TRUE(w.KeyHash(*h, 0, {Value::Decimal("0.000")}, &h1));
  ASSERT_TRUE(w.KeyHash(*h, 0, {Value::DecimalBinary(neg_zero)}, &h2));
  EXPECT_EQ(h1, h2);
}

// The Table_map and Rows heads are built once per described table and
// copied per statement: what changes per statement (timestamp, size,
// STMT_END_F) is patched into each copy, and what belongs to the writer or
// the table (server id, table id) is the writer's and the table's, also
// for a table described again under another id.
TEST(RecordPathTest, PreparedHeadsCarryEachStatementsOwnFields) {
  for (bool records : {false, true}) {
    SCOPED_TRACE(records ? "records" : "values");
    RowsWriterOptions o;
    o.server_id = 4242;
    o.max_event_size = 600;  // 5 sysbench rows: more than one Rows event
    RowsWriter w = *RowsWriter::Create(o);
    TableDef t1 = testutil::SbtestTable(84);
    TableDef t2 = t1;
    t2.table_id = 85;  // the same table described again
    const RecordLayout l = ServerRecordLayout(t1);
    auto h1 = w.DescribeTable(t1, l);
    auto h2 = w.DescribeTable(t2, l);
    ASSERT_TRUE(h1.ok() && h2.ok());
    const std::string c(119, '1'), pad(59, '2');
    const std::vector<Value> row = {Value::Int(1), Value::Int(7), Value::Bytes(c),
                                    Value::Bytes(pad)};
    Record rec = ToRecord(t1, l, row);
    auto insert = [&](RowsWriter::TableHandle h) {
      return records ? w.InsertRecord(h, rec) : w.Insert(h, row);
    };
    TransactionBuffer txn(true);
    // Statement 1 at 1000: 5 rows of table 84; statement 2 at 2000: a row
    // of table 85, then 5 of table 84.
    ASSERT_TRUE(w.BeginStatement(&txn, 1000, "", {*h1}).ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(insert(*h1).ok());
    ASSERT_TRUE(w.EndStatement().ok());
    const size_t first_statement_events = txn.appended_event_count();
    ASSERT_TRUE(w.BeginStatement(&txn, 2000, "", {*h2, *h1}).ok());
    ASSERT_TRUE(insert(*h2).ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(insert(*h1).ok());
    ASSERT_TRUE(w.EndStatement().ok());

    const std::string data(txn.appended_data());
    size_t at = 0, index = 0;
    std::vector<uint64_t> maps[2], rows_of[2];
    std::vector<uint16_t> rows_flags[2];
    while (at < data.size()) {
      const EventHeader h = DecodeHeader(absl::string_view(data).substr(at));
      ASSERT_GE(h.event_size, kHeaderSize + 6 + kChecksumSize);
      ASSERT_LE(at + h.event_size, data.size());
      const int st = index < first_statement_events ? 0 : 1;
      EXPECT_EQ(h.server_id, 4242u) << "event " << index;
      EXPECT_EQ(h.timestamp, st == 0 ? 1000u : 2000u) << "event " << index;
      const char* body = data.data() + at + kHeaderSize;
      const uint64_t table_id = LoadLeN(body, 6);
      if (h.type == kTableMapEvent) maps[st].push_back(table_id);
      if (h.type == kWriteRowsEvent) {
        rows_of[st].push_back(table_id);
        rows_flags[st].push_back(static_cast<uint16_t>(LoadLeN(body + 6, 2)));
      }
      at += h.event_size;
      ++index;
    }
    EXPECT_EQ(maps[0], (std::vector<uint64_t>{84}));
    EXPECT_EQ(maps[1], (std::vector<uint64_t>{85, 84}));
    for (int st = 0; st < 2; ++st) {
      ASSERT_GE(rows_of[st].size(), 2u) << "statement " << st;
      for (size_t i = 0; i < rows_flags[st].size(); ++i) {
        const bool last = i + 1 == rows_flags[st].size();
        EXPECT_EQ((rows_flags[st][i] & kRowsStmtEndF) != 0, last)
            << "statement " << st << " Rows event " << i;
      }
    }
    EXPECT_EQ(rows_of[1].front(), 85u);
    EXPECT_EQ(rows_of[1].back(), 84u);
  }
}

TEST(RecordPathTest, SteadyStateAllocatesNothing) {
  if (!testutil::CountsAllocations()) {
    GTEST_SKIP() << "allocations are not counted under TSan";
  }
  const TableDef t = testutil::SbtestTable(1);
  const RecordLayout l = ServerRecordLayout(t);
  for (RowImage image : {RowImage::kFull, RowImage::kMinimal}) {
    RowsWriter w = MakeWriter(LogFlavor::kMySQL, image);
    auto h = w.DescribeTable(t, l);
    ASSERT_TRUE(h.ok());
    TransactionBuffer txn(true);
    const std::string c(119, '1'), pad(59, '2');
    Record rec = ToRecord(t, l, {Value::Int(1), Value::Int(7), Value::Bytes(c),
                                 Value::Bytes(pad)});
    Record rec2 = ToRecord(t, l, {Value::Int(1), Value::Int(8), Value::Bytes(pad),
                                  Value::Bytes(pad)});
    const uint8_t changed[] = {0x06};
    auto txn_once = [&](int id) {
      txn.Clear();
      if (!w.BeginStatement(&txn, 1, "INSERT").ok()) return false;
      for (int i = 0; i < 5; ++i) {
        StoreLe32(reinterpret_cast<char*>(rec.data() + l.columns[0].offset),
                  static_cast<uint32_t>(id * 5 + i));
        if (!w.InsertRecord(*h, rec).ok()) return false;
      }
      if (!w.EndStatement().ok()) return false;
      if (!w.BeginStatement(&txn, 1, "UPDATE").ok()) return false;
      if (!w.UpdateRecord(*h, rec, rec2, changed).ok()) return false;
      return w.EndStatement().ok();
    };
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(txn_once(i));
    const uint64_t before = testutil::AllocationCount();
    bool ok = true;
    for (int i = 0; i < 1000; ++i) ok = ok && txn_once(i);
    const uint64_t allocs = testutil::AllocationCount() - before;
    ASSERT_TRUE(ok);
    EXPECT_EQ(allocs, 0u);
  }
}

}  // namespace
}  // namespace binlog
