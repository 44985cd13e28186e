// How binlogtool prints column values (tools/event_printer.h): string and
// BLOB values whose bytes are not UTF-8 are printed as hex, never as
// \u00XX escapes a reader would take for characters.

#include "tools/event_printer.h"

#include <string>

#include "gtest/gtest.h"
#include "tools/decode/rows.h"

namespace binlog {
namespace tools {
namespace {

std::string Json(decode::Cell::Kind kind, absl::string_view bytes) {
  decode::Cell c;
  c.kind = kind;
  c.bytes = bytes;
  std::string out;
  AppendCellJson(c, &out);
  return out;
}

std::string Text(decode::Cell::Kind kind, absl::string_view bytes) {
  decode::Cell c;
  c.kind = kind;
  c.bytes = bytes;
  std::string out;
  AppendCellText(c, &out);
  return out;
}

TEST(CellPrintTest, Utf8BytesAreAString) {
  EXPECT_EQ(Json(decode::Cell::kBytes, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(Text(decode::Cell::kBytes, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(CellPrintTest, NonUtf8BytesAreHexNotLatin1Characters) {
  // The byte E9 alone (latin1 'é', or any binary byte) is not UTF-8: it
  // must not print as "\u00e9", which is the character U+00E9.
  EXPECT_EQ(Json(decode::Cell::kBytes, "caf\xe9"), "{\"hex\":\"636166e9\"}");
  EXPECT_EQ(Text(decode::Cell::kBytes, "caf\xe9"), "0x636166e9");
  EXPECT_EQ(Json(decode::Cell::kBytes, std::string("\x80\x00", 2)),
            "{\"hex\":\"8000\"}");
}

TEST(CellPrintTest, ControlCharactersInUtf8StayEscapedText) {
  EXPECT_EQ(Json(decode::Cell::kBytes, "a\nb"), "\"a\\u000ab\"");
}

}  // namespace
}  // namespace tools
}  // namespace binlog
