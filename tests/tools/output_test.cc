#include "tools/output.h"

#include <string>

#include "gtest/gtest.h"

namespace binlog {
namespace tools {
namespace {

TEST(JsonStringTest, PlainAsciiIsQuoted) {
  EXPECT_EQ(JsonString("SELECT 1"), "\"SELECT 1\"");
}

TEST(JsonStringTest, QuoteAndBackslashAreEscaped) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(JsonStringTest, ControlCharactersBecomeUnicodeEscapes) {
  EXPECT_EQ(JsonString(std::string("\n\t\x01\x1f\x7f", 5)),
            "\"\\u000a\\u0009\\u0001\\u001f\\u007f\"");
}

TEST(JsonStringTest, NulByteIsEscaped) {
  EXPECT_EQ(JsonString(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonStringTest, ValidUtf8PassesThrough) {
  // é (2 bytes), € (3 bytes), 😀 (4 bytes).
  EXPECT_EQ(JsonString("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
}

TEST(JsonStringTest, InvalidUtf8BytesAreEscapedOneByOne) {
  // A lone continuation byte, a truncated 2-byte sequence, 0xff.
  EXPECT_EQ(JsonString("\x80x\xc3"), "\"\\u0080x\\u00c3\"");
  EXPECT_EQ(JsonString("\xff"), "\"\\u00ff\"");
}

TEST(JsonStringTest, OverlongEncodingIsRejected) {
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\u00c0\\u00af\"");
  EXPECT_EQ(JsonString("\xe0\x80\xaf"), "\"\\u00e0\\u0080\\u00af\"");
}

TEST(JsonStringTest, SurrogateCodePointIsRejected) {
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");
}

TEST(JsonStringTest, CodePointAboveMaxIsRejected) {
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"),
            "\"\\u00f4\\u0090\\u0080\\u0080\"");
}

TEST(JsonStringTest, SequenceCutAtEndOfInputIsEscaped) {
  EXPECT_EQ(JsonString("\xe2\x82"), "\"\\u00e2\\u0082\"");
}

TEST(PrintableTest, EscapeSequenceIsNeutralized) {
  EXPECT_EQ(Printable("\x1b[31mred"), "\\x1b[31mred");
}

TEST(PrintableTest, C1ControlIsEscaped) {
  EXPECT_EQ(Printable("\xc2\x9b" "1m"), "\\xc2\\x9b1m");
}

TEST(PrintableTest, ValidUtf8AndQuotesPassThrough) {
  EXPECT_EQ(Printable("caf\xc3\xa9 \"x\""), "caf\xc3\xa9 \"x\"");
}

TEST(RecordWriterTest, JsonlRecordIsOneObjectPerLine) {
  RecordWriter w(OutputFormat::kJsonl);
  w.Num("pos", 4);
  w.Str("type_name", "QUERY_EVENT");
  w.Bool("in_use", true);
  w.Word("crc", "ok");
  w.Text("ignored in JSON");
  EXPECT_EQ(w.Finish(),
            "{\"pos\":4,\"type_name\":\"QUERY_EVENT\",\"in_use\":true,"
            "\"crc\":\"ok\"}\n");
}

TEST(RecordWriterTest, TextRecordIsKeyValuePairs) {
  RecordWriter w(OutputFormat::kText);
  w.Text("#4 end=256 QUERY_EVENT");
  w.Num("size", 252);
  w.Word("crc", "ok");
  w.Str("query", "a\nb");
  EXPECT_EQ(w.Finish(),
            "#4 end=256 QUERY_EVENT size=252 crc=ok query=\"a\\u000ab\"\n");
}

TEST(RecordWriterTest, FinishResetsTheWriter) {
  RecordWriter w(OutputFormat::kJsonl);
  w.Num("a", 1);
  w.Finish();
  w.Num("b", 2);
  EXPECT_EQ(w.Finish(), "{\"b\":2}\n");
}

TEST(JsonStringTest, C1ControlsAndLineSeparatorsAreEscaped) {
  // U+0085 (NEL), U+009B (CSI), U+2028, U+2029: valid, but line ends or
  // terminal controls for some consumers. The JSON value is unchanged.
  EXPECT_EQ(JsonString("a\xc2\x85" "b\xc2\x9b" "c\xe2\x80\xa8" "d\xe2\x80\xa9"),
            "\"a\\u0085b\\u009bc\\u2028d\\u2029\"");
  // Neighbours pass through.
  EXPECT_EQ(JsonString("\xc2\xa0\xe2\x80\xa7"), "\"\xc2\xa0\xe2\x80\xa7\"");
}

TEST(JsonStringTest, LongAsciiRunsAreCopied) {
  std::string s(1000, 'x');
  s[500] = '"';
  std::string want = "\"" + std::string(500, 'x') + "\\\"" +
                     std::string(499, 'x') + "\"";
  EXPECT_EQ(JsonString(s), want);
}

TEST(RecordWriterTest, SinkModeAppendsRecordsToTheBuffer) {
  std::string buf = "before\n";
  {
    RecordWriter w(OutputFormat::kJsonl, &buf);
    w.Int("n", -3);
    w.Raw("rows", "[1,2]");
    w.End();
  }
  {
    RecordWriter w(OutputFormat::kText, &buf);
    w.Num("a", 1);
    w.Raw("b", "{}");
    w.End();
  }
  EXPECT_EQ(buf, "before\n{\"n\":-3,\"rows\":[1,2]}\na=1 b={}\n");
}

TEST(UtcCacheTest, SameAsFormatUtcIso) {
  UtcCache c;
  EXPECT_EQ(c.Iso(1700000000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(c.Iso(1700000000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(c.Iso(0), "1970-01-01T00:00:00Z");
}

TEST(FormatUtcTest, FormatsInUtc) {
  EXPECT_EQ(FormatUtc(0), "1970-01-01 00:00:00");
  EXPECT_EQ(FormatUtc(1700000000), "2023-11-14 22:13:20");
  EXPECT_EQ(FormatUtcIso(1700000000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatUtc(0xFFFFFFFFu), "2106-02-07 06:28:15");
}

}  // namespace
}  // namespace tools
}  // namespace binlog
