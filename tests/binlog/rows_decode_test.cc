// Tests of binlog/rows_decode.h (row images as values): Table_map and
// Rows events against the real MySQL 8.0.36 bytes quoted in the
// binlog-format reference (6.7, 6.8), and hostile input: every truncation
// and thousands of random mutations of valid events decode to an error or
// a value, never to a crash (this suite also runs under ASan/UBSan in
// tools/test.sh). The last test feeds random bytes to every event-body
// decoder binlogtool uses.

#include "binlog/rows_decode.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "binlog/gtid.h"
#include "binlog/json_binary.h"
#include "binlog/payload.h"
#include "binlog/rows.h"
#include "binlog/statement_events.h"
#include "binlog/values.h"
#include "gtest/gtest.h"
#include "tests/testutil/hex.h"

namespace binlog {
namespace {

using ::binlog::testutil::Hex;

// Hex() whose bytes stay alive for the whole test (RowsEvent and
// ByteReader keep views into them).
absl::string_view Keep(absl::string_view hex) {
  static auto* kept = new std::vector<std::unique_ptr<std::string>>;
  kept->push_back(std::make_unique<std::string>(Hex(hex)));
  return *kept->back();
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
               const std::vector<RowCell>& cells) override {
    std::string s = std::to_string(row) + (after ? " after:" : " before:");
    for (size_t i = 0; i < columns.size(); ++i) {
      s += " @" + std::to_string(columns[i] + 1) + "=";
      const RowCell& c = cells[i];
      switch (c.kind) {
        case RowCell::kNull: s += "NULL"; break;
        case RowCell::kBytes:
        case RowCell::kBinary: s += "'" + std::string(c.bytes) + "'"; break;
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
    DecodePayloadHeader(body).IgnoreError();
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
}  // namespace binlog
