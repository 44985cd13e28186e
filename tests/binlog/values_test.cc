// Tests of binlog/values.h and binlog/json_binary.h: value encodings
// against golden bytes worked out from the servers' formats
// (strings/decimal.cc, my_time.cc, json_binary.cc), and the ByteReader the
// decoders read with. Hostile input for these decoders:
// rows_decode_test.cc.

#include "binlog/values.h"

#include <string>

#include "binlog/byte_reader.h"
#include "binlog/json_binary.h"
#include "gtest/gtest.h"
#include "tests/testutil/hex.h"

namespace binlog {
namespace {

using ::binlog::testutil::Hex;

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

}  // namespace
}  // namespace binlog
