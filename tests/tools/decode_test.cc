// Tests of tools/decode: value encodings against golden bytes worked out
// from the servers' formats (strings/decimal.cc, my_time.cc,
// json_binary.cc), Table_map and Rows events against the real MySQL 8.0.36
// bytes quoted in the binlog-format reference (6.7, 6.8), and hostile
// input: every truncation and thousands of random mutations of valid
// events decode to an error or a value, never to a crash (this suite also
// runs under ASan/UBSan in tools/test.sh).

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "binlog/byte_reader.h"
#include "binlog/statement_events.h"
#include "tools/decode/events.h"
#include "tools/decode/json_binary.h"
#include "tools/decode/rows.h"
#include "tools/decode/values.h"

namespace binlog {
namespace decode {
namespace {

std::string Hex(absl::string_view hex) {
  std::string clean;
  for (char c : hex) {
    if (c != ' ' && c != '|') clean.push_back(c);
  }
  return absl::HexStringToBytes(clean);
}

// Hex() whose bytes stay alive for the whole test (RowsEvent and
// ByteReader keep views into them).
absl::string_view Keep(absl::string_view hex) {
  static auto* kept = new std::vector<std::unique_ptr<std::string>>;
  kept->push_back(std::make_unique<std::string>(Hex(hex)));
  return *kept->back();
}

std::string Decimal(absl::string_view hex, int precision, int scale) {
  std::string out;
  if (!AppendDecimal(Hex(hex), precision, scale, &out)) return "<error>";
  return out;
}

// ---------------------------------------------------------------------------
// ByteReader

TEST(ByteReaderTest, PackedIntegersOfEverySize) {
  const std::string bytes = Hex("05 fc 3412 fd 563412 fe 0807060504030201");
  ByteReader r(bytes);
  uint64_t v;
  ASSERT_TRUE(r.PackedInt(&v));
  EXPECT_EQ(v, 5u);
  ASSERT_TRUE(r.PackedInt(&v));
  EXPECT_EQ(v, 0x1234u);
  ASSERT_TRUE(r.PackedInt(&v));
  EXPECT_EQ(v, 0x123456u);
  ASSERT_TRUE(r.PackedInt(&v));
  EXPECT_EQ(v, 0x0102030405060708u);
  EXPECT_TRUE(r.empty());
}

TEST(ByteReaderTest, ShortReadFailsAndLeavesTheCursor) {
  const std::string bytes = Hex("fe 0102");
  ByteReader r(bytes);
  uint64_t v;
  EXPECT_FALSE(r.PackedInt(&v));
  EXPECT_EQ(r.pos(), 0u);
  absl::string_view b;
  EXPECT_FALSE(r.Bytes(4, &b));
  EXPECT_TRUE(r.Bytes(3, &b));
}

TEST(ByteReaderTest, NullMarkerIsNotAPackedInteger) {
  const std::string bytes = Hex("fb");
  ByteReader r(bytes);
  uint64_t v;
  EXPECT_FALSE(r.PackedInt(&v));
}

// ---------------------------------------------------------------------------
// DECIMAL

TEST(DecimalTest, DocumentedExample) {
  // strings/decimal.cc's example: 1234567890.1234 as DECIMAL(14,4).
  EXPECT_EQ(DecimalBinarySize(14, 4), 7u);
  EXPECT_EQ(Decimal("810DFB38D204D2", 14, 4), "1234567890.1234");
  EXPECT_EQ(Decimal("7EF204C72DFB2D", 14, 4), "-1234567890.1234");
}

TEST(DecimalTest, SmallValuesAndZero) {
  // DECIMAL(5,2): 1 leading byte for 3 integer digits (2 bytes), 1 byte
  // for 2 fraction digits.
  EXPECT_EQ(DecimalBinarySize(5, 2), 3u);
  EXPECT_EQ(Decimal("800001", 5, 2), "0.01");
  EXPECT_EQ(Decimal("7ffffe", 5, 2), "-0.01");
  EXPECT_EQ(Decimal("800000", 5, 2), "0.00");
  EXPECT_EQ(Decimal("83e763", 5, 2), "999.99");
}

TEST(DecimalTest, IntegerOnly) {
  EXPECT_EQ(Decimal("80000011", 8, 0), "17");  // DECIMAL(8,0): 4 bytes
}

TEST(DecimalTest, GroupAboveNineDigitsIsAnError) {
  EXPECT_EQ(Decimal("803B9ACA0000", 14, 4).substr(0, 7), "<error>");
  EXPECT_EQ(Decimal("8000", 5, 2), "<error>");  // wrong size
  EXPECT_EQ(DecimalBinarySize(0, 0), 0u);
  EXPECT_EQ(DecimalBinarySize(66, 2), 0u);
  EXPECT_EQ(DecimalBinarySize(10, 11), 0u);
}

// ---------------------------------------------------------------------------
// Temporal types

std::string Time2(absl::string_view hex, int fsp) {
  std::string out;
  return AppendTime2(Hex(hex), fsp, &out) ? out : "<error>";
}
std::string Datetime2(absl::string_view hex, int fsp) {
  std::string out;
  return AppendDatetime2(Hex(hex), fsp, &out) ? out : "<error>";
}
std::string Timestamp2(absl::string_view hex, int fsp) {
  std::string out;
  return AppendTimestamp2(Hex(hex), fsp, &out) ? out : "<error>";
}

TEST(TemporalTest, Datetime2) {
  EXPECT_EQ(Datetime2("99951f7619", 0), "2015-01-15 23:24:25");
  EXPECT_EQ(Datetime2("99951f76190c", 2), "2015-01-15 23:24:25.12");
  EXPECT_EQ(Datetime2("fef3ff7efb0f423f", 6), "9999-12-31 23:59:59.999999");
  EXPECT_EQ(Datetime2("8000000000", 0), "0000-00-00 00:00:00");
  EXPECT_EQ(Datetime2("99951f76", 0), "<error>");  // short
}

TEST(TemporalTest, Time2PositiveNegativeAndFractions) {
  EXPECT_EQ(Time2("80c8b8", 0), "12:34:56");
  EXPECT_EQ(Time2("7ffffece", 1), "-00:00:01.5");
  EXPECT_EQ(Time2("4b9105", 0), "-838:59:59");
  EXPECT_EQ(Time2("7fef7cee30", 3), "-01:02:03.456");
  EXPECT_EQ(Time2("7fef7cf907ab", 6), "-01:02:03.456789");
}

TEST(TemporalTest, Timestamp2IsShownInUtc) {
  // 1700000000 = 2023-11-14 22:13:20 UTC.
  EXPECT_EQ(Timestamp2("6553f100", 0), "2023-11-14 22:13:20");
  EXPECT_EQ(Timestamp2("6553f10063", 2), "2023-11-14 22:13:20.99");
  EXPECT_EQ(Timestamp2("00000000", 0), "0000-00-00 00:00:00");
  EXPECT_EQ(Timestamp2("6553f1000f423f", 6), "2023-11-14 22:13:20.999999");
  EXPECT_EQ(Timestamp2("6553f1000f4240", 6), "<error>");  // 1000000 us
}

TEST(TemporalTest, OldEncodings) {
  std::string out;
  ASSERT_TRUE(AppendDate(Hex("2f3d0f"), &out));  // 15 | 9<<5 | 1950<<9
  EXPECT_EQ(out, "1950-09-15");
  out.clear();
  ASSERT_TRUE(AppendTimeOld(Hex("40e201"), &out));  // 123456
  EXPECT_EQ(out, "12:34:56");
  out.clear();
  ASSERT_TRUE(AppendTimeOld(Hex("c01dfe"), &out));  // -123456
  EXPECT_EQ(out, "-12:34:56");
  out.clear();
  // 20191231235959
  ASSERT_TRUE(AppendDatetimeOld(Hex("77572a235d120000"), &out));
  EXPECT_EQ(out, "2019-12-31 23:59:59");
  out.clear();
  ASSERT_TRUE(AppendTimestampOld(Hex("00f15365"), &out));
  EXPECT_EQ(out, "2023-11-14 22:13:20");
}

TEST(TemporalTest, UtcSecondsCoverTheCalendar) {
  std::string out;
  AppendUtcSeconds(0, &out);
  EXPECT_EQ(out, "1970-01-01 00:00:00");
  out.clear();
  AppendUtcSeconds(951782400, &out);  // leap day 2000
  EXPECT_EQ(out, "2000-02-29 00:00:00");
  out.clear();
  AppendUtcSeconds(-1, &out);
  EXPECT_EQ(out, "1969-12-31 23:59:59");
  out.clear();
  AppendUtcSeconds(4294967295, &out);
  EXPECT_EQ(out, "2106-02-07 06:28:15");
}

TEST(FloatTest, ShortestRoundTrip) {
  std::string out;
  AppendDouble(0.1, &out);
  EXPECT_EQ(out, "0.1");
  out.clear();
  AppendFloat(1.25f, &out);
  EXPECT_EQ(out, "1.25");
  out.clear();
  AppendDouble(1.0 / 3.0, &out);
  EXPECT_EQ(out, "0.3333333333333333");
}

// ---------------------------------------------------------------------------
// MySQL binary JSON

std::string Json(absl::string_view hex) {
  std::string out, error;
  if (!AppendMySqlJson(Hex(hex), &out, &error)) return "<error: " + error + ">";
  return out;
}

TEST(JsonBinaryTest, SmallObjectWithInlinedInt) {
  // {"a": 1}: small object, 1 element, size 12, key at 11 (length 1),
  // value int16 1 inlined, key "a".
  EXPECT_EQ(Json("00 0100 0c00 0b00 0100 05 0100 61"), "{\"a\":1}");
}

TEST(JsonBinaryTest, DecimalKeepsItsDigits) {
  // 9.00 as MySQL stores a DECIMAL in a JSON document: an opaque value of
  // field type NEWDECIMAL (246), 4 bytes: precision 3, scale 2, then the
  // decimal's binary form (89: the integer digit 9 with the sign bit; 00:
  // the two fraction digits).
  EXPECT_EQ(Json("0f f6 04 03 02 89 00"), "9.00");
  // In an array: [9.00, -0.50].
  EXPECT_EQ(Json("02 0200 1500 0f 0a00 0f 1000 f6 04 03 02 89 00 f6 03 02 02 4d"),
            "[9.00,-0.50]");
}

TEST(JsonBinaryTest, ArrayOfLiteralsAndString) {
  // [true, null, "hi"]: small array, 3 elements, size 4 + 9 + 3 = 16.
  EXPECT_EQ(Json("02 0300 1000 04 0100 04 0000 0c 0d00 02 6869"),
            "[true,null,\"hi\"]");
}

TEST(JsonBinaryTest, ScalarsAtTopLevel) {
  EXPECT_EQ(Json("04 02"), "false");
  EXPECT_EQ(Json("05 feff"), "-2");
  EXPECT_EQ(Json("0a ffffffffffffffff"), "18446744073709551615");
  EXPECT_EQ(Json("0b 000000000000f83f"), "1.5");
  EXPECT_EQ(Json(""), "null");
}

TEST(JsonBinaryTest, OffsetsPastTheEndAreErrors) {
  EXPECT_NE(Json("00 0100 0c00 ff00 0100 05 0100 61").find("<error"),
            std::string::npos);
  EXPECT_NE(Json("02 ffff 0400").find("<error"), std::string::npos);
  EXPECT_NE(Json("0c 05 6869").find("<error"), std::string::npos);
}

TEST(JsonBinaryTest, DeepNestingIsRefused) {
  // 200 nested one-element small arrays around a null literal. Each level
  // (without its type byte): count 1, size, entry (type 0x02, offset 7),
  // then the child level.
  std::string level = Hex("0100 0700 04 0000");  // [null]
  for (int i = 1; i < 200; ++i) {
    std::string outer = Hex("0100");
    uint16_t size = static_cast<uint16_t>(7 + level.size());
    outer.push_back(static_cast<char>(size & 0xff));
    outer.push_back(static_cast<char>(size >> 8));
    outer += Hex("02 0700");
    level = outer + level;
  }
  std::string out, error;
  EXPECT_FALSE(AppendMySqlJson(std::string(1, '\x02') + level, &out, &error));
  EXPECT_NE(error.find("100"), std::string::npos) << error;
  // 50 levels are fine.
  level = Hex("0100 0700 04 0000");
  for (int i = 1; i < 50; ++i) {
    std::string outer = Hex("0100");
    uint16_t size = static_cast<uint16_t>(7 + level.size());
    outer.push_back(static_cast<char>(size & 0xff));
    outer.push_back(static_cast<char>(size >> 8));
    outer += Hex("02 0700");
    level = outer + level;
  }
  out.clear();
  EXPECT_TRUE(AppendMySqlJson(std::string(1, '\x02') + level, &out, &error))
      << error;
  EXPECT_EQ(out, std::string(50, '[') + "null" + std::string(50, ']'));
}

// ---------------------------------------------------------------------------
// Table_map and Rows: the reference's real MySQL 8.0.36 events

// test.tab1(a INT PRIMARY KEY, b VARCHAR(10)), table id 88.
const char kTableMapBody[] =
    "580000000000 0100 | 04 74657374 00 | 04 74616231 00 | 02 | 03 0f |"
    " 02 2800 | 02 | 01 01 00 | 02 03 fcff00";
// Write_rows v2 of (1, 'b').
const char kWriteRowsBody[] = "580000000000 0100 0200 | 02 | ff | 00 01000000 01 62";

class Collector : public RowVisitor {
 public:
  void OnImage(uint64_t row, bool after, const std::vector<uint32_t>& columns,
               const std::vector<Cell>& cells) override {
    std::string s = std::to_string(row) + (after ? " after:" : " before:");
    for (size_t i = 0; i < columns.size(); ++i) {
      s += " @" + std::to_string(columns[i] + 1) + "=";
      const Cell& c = cells[i];
      switch (c.kind) {
        case Cell::kNull: s += "NULL"; break;
        case Cell::kBytes:
        case Cell::kBinary: s += "'" + std::string(c.bytes) + "'"; break;
        default: s += c.text; break;
      }
    }
    images.push_back(s);
  }
  std::vector<std::string> images;
};

TEST(TableMapTest, RealMySqlEvent) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->table_id, 88u);
  EXPECT_EQ(t->QualifiedName(), "test.tab1");
  ASSERT_EQ(t->columns.size(), 2u);
  EXPECT_EQ(ColumnTypeName(t->columns[0]), "INT");
  EXPECT_EQ(ColumnTypeName(t->columns[1]), "VARCHAR(40)");
  EXPECT_FALSE(t->columns[0].nullable);
  EXPECT_TRUE(t->columns[1].nullable);
  EXPECT_TRUE(t->has_signedness);
  EXPECT_FALSE(t->columns[0].is_unsigned);
  EXPECT_EQ(t->columns[1].collation, 255u);
  EXPECT_TRUE(t->columns_error.empty());
}

TEST(RowsTest, RealMySqlWriteRows) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok());
  RowsEvent ev;
  std::string scratch;
  ASSERT_TRUE(DecodeRowsEvent(30, Keep(kWriteRowsBody), 10, &scratch, &ev).ok());
  EXPECT_EQ(ev.table_id, 88u);
  EXPECT_EQ(ev.flags, 1);
  EXPECT_EQ(ev.kind, RowsKind::kWrite);
  RowsDecoder d;
  Collector c;
  uint64_t rows = 0;
  ASSERT_TRUE(d.Decode(*t, ev, &c, &rows).ok());
  EXPECT_EQ(rows, 1u);
  ASSERT_EQ(c.images.size(), 1u);
  EXPECT_EQ(c.images[0], "0 after: @1=1 @2='b'");
  // Counting alone gives the same number.
  ASSERT_TRUE(d.Decode(*t, ev, nullptr, &rows).ok());
  EXPECT_EQ(rows, 1u);
}

TEST(RowsTest, UnsignedFromSignednessMetadata) {
  // One TINYINT column flagged unsigned; value 0xff.
  std::string tm = Hex("010000000000 0000 | 01 64 00 | 01 74 00 | 01 | 01 |"
                       " 00 | 00 | 01 01 80");
  auto t = DecodeTableMap(tm, 8);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->columns[0].is_unsigned);
  RowsEvent ev;
  std::string scratch;
  ASSERT_TRUE(
      DecodeRowsEvent(23, Keep("010000000000 0100 | 01 | 01 | 00 ff"), 8,
                      &scratch, &ev)
          .ok());
  RowsDecoder d;
  Collector c;
  uint64_t rows;
  ASSERT_TRUE(d.Decode(*t, ev, &c, &rows).ok());
  EXPECT_EQ(c.images[0], "0 after: @1=255");
}

TEST(RowsTest, UpdateHasBeforeAndAfterImages) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok());
  RowsEvent ev;
  std::string scratch;
  ASSERT_TRUE(DecodeRowsEvent(31, Keep("580000000000 0100 0200 | 02 | ff | ff |"
                                  " 00 01000000 01 62 | 02 02000000"),
                              10, &scratch, &ev)
                  .ok());
  RowsDecoder d;
  Collector c;
  uint64_t rows;
  ASSERT_TRUE(d.Decode(*t, ev, &c, &rows).ok());
  EXPECT_EQ(rows, 1u);
  ASSERT_EQ(c.images.size(), 2u);
  EXPECT_EQ(c.images[0], "0 before: @1=1 @2='b'");
  EXPECT_EQ(c.images[1], "0 after: @1=2 @2=NULL");
}

TEST(RowsTest, StringLengthPastTheEndNamesRowAndColumn) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok());
  RowsEvent ev;
  std::string scratch;
  // Second row claims a 9-byte string but has 1 byte.
  ASSERT_TRUE(DecodeRowsEvent(30, Keep("580000000000 0100 0200 | 02 | ff |"
                                  " 00 01000000 01 62 | 00 02000000 09 62"),
                              10, &scratch, &ev)
                  .ok());
  RowsDecoder d;
  Collector c;
  uint64_t rows;
  absl::Status s = d.Decode(*t, ev, &c, &rows);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_EQ(rows, 1u);
  EXPECT_NE(s.message().find("row 2: column @2 (VARCHAR(40))"),
            std::string::npos)
      << s;
}

TEST(RowsTest, ColumnCountMismatchIsRefused) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok());
  RowsEvent ev;
  std::string scratch;
  ASSERT_TRUE(DecodeRowsEvent(30, Keep("580000000000 0100 0200 | 03 | 07 | 00"),
                              10, &scratch, &ev)
                  .ok());
  RowsDecoder d;
  uint64_t rows;
  EXPECT_TRUE(absl::IsInvalidArgument(d.Decode(*t, ev, nullptr, &rows)));
}

TEST(RowsTest, EmptyImageDoesNotLoop) {
  auto t = DecodeTableMap(Hex(kTableMapBody), 8);
  ASSERT_TRUE(t.ok());
  RowsEvent ev;
  std::string scratch;
  // No column present: images would be 0 bytes long.
  ASSERT_TRUE(DecodeRowsEvent(30, Keep("580000000000 0100 0200 | 02 | 00 | 00"),
                              10, &scratch, &ev)
                  .ok());
  RowsDecoder d;
  uint64_t rows;
  EXPECT_TRUE(absl::IsDataLoss(d.Decode(*t, ev, nullptr, &rows)));
}

TEST(RowsTest, UnknownColumnTypeMakesTheMapUnusableNotInvalid) {
  std::string tm = Hex("010000000000 0000 | 01 64 00 | 01 74 00 | 01 | f2 |"
                       " 00 | 00");
  auto t = DecodeTableMap(tm, 8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->QualifiedName(), "d.t");
  EXPECT_FALSE(t->columns_error.empty());
}

TEST(EventsTest, TransactionPayloadHeaderFromAMySqlServer) {
  // The reference's real header: ZSTD, 960 -> 451 bytes (payload bytes
  // follow; here 451 zero bytes stand in for them).
  std::string body = Hex("020100 0303fcc003 0103fcc301 00") + std::string(451, '\0');
  auto p = DecodeTransactionPayload(body);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->compression_type, 0u);
  EXPECT_EQ(p->uncompressed_size, 960u);
  EXPECT_EQ(p->payload_size, 451u);
  EXPECT_EQ(p->header_size, 14u);
  EXPECT_FALSE(DecodeTransactionPayload(Hex("020100 0303fcc003 0103fcc301 00")).ok());
}

TEST(EventsTest, GtidSpecs) {
  GtidSpec g;
  ASSERT_TRUE(ParseGtidSpec("3E11FA47-71CA-11E1-9E33-C80AA9429562:23", &g));
  EXPECT_TRUE(g.mysql);
  EXPECT_EQ(g.gno, 23);
  ASSERT_TRUE(ParseGtidSpec("0-1-57", &g));
  EXPECT_TRUE(g.maria);
  EXPECT_EQ(g.seq_no, 57u);
  EXPECT_FALSE(ParseGtidSpec("0-1", &g));
  EXPECT_FALSE(ParseGtidSpec("x:1", &g));
  EXPECT_FALSE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562:0", &g));
}

TEST(EventsTest, MariaCompressedBlockRoundTrip) {
  // zlib stream of "hello" (from zlib's compress()), announced length 5.
  std::string block = Hex("81 05 789ccb48cdc9c90700062c0215");
  std::string out;
  ASSERT_TRUE(MariaUncompress(block, 1 << 20, &out).ok());
  EXPECT_EQ(out, "hello");
  // A lie about the length is refused without allocating it.
  EXPECT_FALSE(MariaUncompress(Hex("84 7fffffff 789ccb48cdc9c90700062c0215"),
                               size_t{1} << 30, &out)
                   .ok());
  EXPECT_FALSE(MariaUncompress(Hex("81 06 789ccb48cdc9c90700062c0215"),
                               1 << 20, &out)
                   .ok());
}

// ---------------------------------------------------------------------------
// Hostile input: truncations and random mutations never crash.

void DecodeEverything(absl::string_view table_map, absl::string_view rows,
                      uint8_t rows_type) {
  auto t = DecodeTableMap(table_map, 8);
  RowsEvent ev;
  std::string scratch;
  if (!DecodeRowsEvent(rows_type, rows, rows_type >= 30 ? 10 : 8, &scratch, &ev)
           .ok()) {
    return;
  }
  if (!t.ok()) return;
  RowsDecoder d;
  Collector c;
  uint64_t n;
  d.Decode(*t, ev, &c, &n).IgnoreError();  // any outcome but a crash
  d.Decode(*t, ev, nullptr, &n).IgnoreError();
}

// A table with every column type the decoder knows, and one row.
std::string WideTableMap() {
  return Hex(
      "2a0000000000 0100 | 01 64 00 | 01 74 00 | 16 |"
      " 01 02 09 03 08 04 05 f6 0f fe fc 0a 13 12 11 0d fe fe 10 f5 07 0c |"
      " 13 | 04 08 0a04 0001 fe08 02 03 06 02 f701 f801 0401 04 |"
      " fcff3f | 01 02 40 00");
}

std::string WideRow() {
  return Hex(
      "2a0000000000 0100 0200 | 16 | ffffff | 000000 |"
      " 7f ff7f ffff7f ffffff7f ffffffffffffff7f 0000803f 000000000000f03f"
      " 8000010000 0300 616263 03 78797a 0200 0102 2f3d0f 80c8b80000"
      " 99951f7619000000 6553f10063 7b 02 05 0fff 0d000000 000100 0c000b00"
      " 0100050100 61 00f15365 77572a235d120000");
}

TEST(HostileTest, WideRowDecodes) {
  auto t = DecodeTableMap(WideTableMap(), 8);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->columns_error.empty()) << t->columns_error;
  RowsEvent ev;
  std::string scratch;
  const std::string row = WideRow();
  ASSERT_TRUE(DecodeRowsEvent(30, row, 10, &scratch, &ev).ok());
  RowsDecoder d;
  Collector c;
  uint64_t n;
  absl::Status s = d.Decode(*t, ev, &c, &n);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(c.images.size(), 1u);
  EXPECT_EQ(c.images[0],
            "0 after: @1=127 @2=32767 @3=8388607 @4=2147483647"
            " @5=9223372036854775807 @6=1 @7=1 @8=1.0000 @9='abc' @10='xyz'"
            " @11='\x01\x02' @12=1950-09-15 @13=12:34:56.000"
            " @14=2015-01-15 23:24:25.000000 @15=2023-11-14 22:13:20.99"
            " @16=2023 @17=2 @18=5 @19=4095 @20={\"a\":1}"
            " @21=2023-11-14 22:13:20 @22=2019-12-31 23:59:59");
}

TEST(HostileTest, EveryTruncationIsSafe) {
  const std::string tm = WideTableMap();
  const std::string rows = WideRow();
  for (size_t n = 0; n <= tm.size(); ++n) {
    DecodeEverything(tm.substr(0, n), rows, 30);
  }
  for (size_t n = 0; n <= rows.size(); ++n) {
    DecodeEverything(tm, rows.substr(0, n), 30);
  }
}

TEST(HostileTest, RandomMutationsAreSafe) {
  std::mt19937 rng(20261121);
  const std::string tm = WideTableMap();
  const std::string rows = WideRow();
  for (int iter = 0; iter < 20000; ++iter) {
    std::string a = tm, b = rows;
    std::string* target = (iter % 2) ? &a : &b;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      size_t at = rng() % target->size();
      (*target)[at] = static_cast<char>(rng());
    }
    uint8_t type = static_cast<uint8_t>(iter % 3 == 0 ? 31 : 30);
    DecodeEverything(a, b, type);
  }
}

// Counting rows (skip plans, no values) agrees with decoding them whenever
// decoding succeeds: dump prints row_count from the first, --decode-rows
// the rows from the second.
TEST(HostileTest, CountingAgreesWithDecoding) {
  std::mt19937 rng(99);
  const std::string tm = WideTableMap();
  const std::string one = WideRow();
  // Three rows, then damage.
  const std::string header = one.substr(0, 10 + 1 + 3);
  const std::string image = one.substr(header.size());
  const std::string rows = header + image + image + image;
  auto t = DecodeTableMap(tm, 8);
  ASSERT_TRUE(t.ok());
  int agreed = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    std::string b = rows;
    if (iter > 0) {
      size_t at = header.size() + rng() % (b.size() - header.size());
      b[at] = static_cast<char>(rng());
      if (iter % 3 == 0) b.resize(header.size() + rng() % (b.size() - header.size()));
    }
    RowsEvent ev;
    std::string scratch;
    ASSERT_TRUE(DecodeRowsEvent(30, b, 10, &scratch, &ev).ok());
    RowsDecoder d;
    Collector c;
    uint64_t decoded = 0, counted = 0;
    absl::Status full = d.Decode(*t, ev, &c, &decoded);
    absl::Status count = d.Decode(*t, ev, nullptr, &counted);
    if (iter == 0) {
      ASSERT_TRUE(full.ok()) << full;
      EXPECT_EQ(decoded, 3u);
    }
    if (full.ok()) {
      ASSERT_TRUE(count.ok()) << count;
      EXPECT_EQ(counted, decoded);
      ++agreed;
    }
  }
  EXPECT_GT(agreed, 100);
}

TEST(HostileTest, RandomBytesIntoEveryEventDecoder) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string body(rng() % 64, '\0');
    for (char& c : body) c = static_cast<char>(rng());
    DecodeTransactionPayload(body).IgnoreError();
    DecodeIntvar(body).IgnoreError();
    DecodeRand(body).IgnoreError();
    DecodeUserVar(body).IgnoreError();
    DecodeRowsQuery(body).IgnoreError();
    binlog::DecodeBinlogCheckpoint(body).IgnoreError();
    DecodeIncident(body).IgnoreError();
    binlog::DecodeMariaCompressedQuery(body, 13).IgnoreError();
    std::string out, error;
    AppendMySqlJson(body, &out, &error);
    out.clear();
    AppendDecimal(body, 14, 4, &out);
    AppendTime2(body, static_cast<int>(rng() % 8), &out);
    AppendDatetime2(body, static_cast<int>(rng() % 8), &out);
    AppendTimestamp2(body, static_cast<int>(rng() % 8), &out);
    DecodeEverything(body, body, static_cast<uint8_t>(23 + rng() % 3));
  }
}

}  // namespace
}  // namespace decode
}  // namespace binlog
