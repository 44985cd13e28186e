// binlogtool's event printer (tools/event_printer.h) on the MySQL 8.4
// events: a Gtid_tagged_log_event prints its GTID with the tag, a
// Heartbeat_log_event_v2 its file and position.

#include "tools/event_printer.h"

#include <string>

#include "absl/strings/match.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "binlog/rows_decode.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

// One event built by a TransactionBuffer (no checksums), printed as JSON.
std::string PrintJson(uint8_t type, const std::string& body) {
  TransactionBuffer t(/*checksums=*/false);
  t.AppendEvent(type, 1, 1700000000, 0, body);
  Event ev;
  ev.data = t.data();
  ev.header = DecodeHeader(ev.data);
  ev.offset = 4;
  ev.end_offset = 4 + ev.data.size();
  tools::PrintOptions o;
  o.format = tools::OutputFormat::kJsonl;
  tools::EventPrinter printer(o);
  FormatDescription fde;
  std::string out;
  printer.PrintEvent("binlog.000001", ev, fde, &out);
  return out;
}

TEST(EventPrinterTest, ATaggedGtidPrintsWithItsTag) {
  MySqlGtidEvent g;
  g.uuid = *Uuid::Parse("77d1902c-01da-11f1-9a41-908d6e5f6e8d");
  g.tag = *Tag::Parse("Blue");
  g.gno = 42;
  g.last_committed = 3;
  g.sequence_number = 4;
  g.transaction_length = 300;
  const std::string out = PrintJson(kGtidTaggedEvent, EncodeMySqlGtidTaggedEventBody(g));
  EXPECT_TRUE(absl::StrContains(
      out, "\"gtid\":\"77d1902c-01da-11f1-9a41-908d6e5f6e8d:blue:42\""))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "\"last_committed\":3")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"transaction_length\":300")) << out;
  EXPECT_TRUE(absl::StrContains(out, "GTID_TAGGED_LOG_EVENT")) << out;
}

TEST(EventPrinterTest, AHeartbeatV2PrintsItsFileAndPosition) {
  const std::string out =
      PrintJson(kHeartbeatEventV2, EncodeHeartbeatV2Body("binlog.000007", 1234567));
  EXPECT_TRUE(absl::StrContains(out, "\"log_file\":\"binlog.000007\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"log_position\":1234567")) << out;
}

// Column values as binlogtool prints them.
using tools::AppendCellJson;
using tools::AppendCellText;

std::string Json(RowCell::Kind kind, absl::string_view bytes) {
  RowCell c;
  c.kind = kind;
  c.bytes = bytes;
  std::string out;
  AppendCellJson(c, &out);
  return out;
}

std::string Text(RowCell::Kind kind, absl::string_view bytes) {
  RowCell c;
  c.kind = kind;
  c.bytes = bytes;
  std::string out;
  AppendCellText(c, &out);
  return out;
}

TEST(CellPrintTest, Utf8BytesAreAString) {
  EXPECT_EQ(Json(RowCell::kBytes, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(Text(RowCell::kBytes, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(CellPrintTest, NonUtf8BytesAreHexNotLatin1Characters) {
  // The byte E9 alone (latin1 'é', or any binary byte) is not UTF-8: it
  // must not print as "\u00e9", which is the character U+00E9.
  EXPECT_EQ(Json(RowCell::kBytes, "caf\xe9"), "{\"hex\":\"636166e9\"}");
  EXPECT_EQ(Text(RowCell::kBytes, "caf\xe9"), "0x636166e9");
  EXPECT_EQ(Json(RowCell::kBytes, std::string("\x80\x00", 2)),
            "{\"hex\":\"8000\"}");
}

TEST(CellPrintTest, ControlCharactersInUtf8StayEscapedText) {
  EXPECT_EQ(Json(RowCell::kBytes, "a\nb"), "\"a\\u000ab\"");
}

}  // namespace
}  // namespace binlog
