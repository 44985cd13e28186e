// binlog/rows.h and binlog/rows_writer.h: every packed type read back by
// the decoders (the library's structure, binlogtool's value text), each row
// image mode, event splitting at max_event_size, STMT_END_F, statement
// annotations for both flavors, refused rows, zero allocations in steady
// state, and the real MariaDB corpus re-encoded byte for byte (Table_map
// bodies and row images).

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/rows.h"
#include "binlog/rows_decode.h"
#include "binlog/values.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/alloc_count.h"
#include "tests/testutil/corpus.h"
#include "tests/testutil/sbtest.h"


namespace binlog {
namespace {

// One appended event of a checksum-less buffer.
struct Ev {
  uint8_t type;
  uint16_t flags;
  absl::string_view body;
};

std::vector<Ev> Events(const TransactionBuffer& txn) {
  std::vector<Ev> out;
  absl::string_view all = txn.appended_data();
  for (size_t i = 0; i < txn.appended_event_count(); ++i) {
    absl::string_view e =
        all.substr(txn.appended_event_offset(i), txn.appended_event_size(i));
    out.push_back(Ev{static_cast<uint8_t>(e[kTypeOffset]),
                     LoadLe16(e.data() + kFlagsOffset), e.substr(kHeaderSize)});
  }
  return out;
}

// Decodes the row events of a buffer into text, one string per image:
// "col=value,col=value" with NULL for NULLs.
class Collect : public RowVisitor {
 public:
  void OnImage(uint64_t, bool, const std::vector<uint32_t>& columns,
               const std::vector<RowCell>& cells) override {
    std::string s;
    for (size_t k = 0; k < columns.size(); ++k) {
      const RowCell& c = cells[k];
      if (k) s += ",";
      absl::StrAppend(&s, columns[k], "=");
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
  for (const Ev& e : Events(txn)) {
    if (e.type == kTableMapEvent) {
      auto t = DecodeTableMap(e.body, 8);
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) maps[t->table_id] = *t;
    } else if (IsRowsEvent(e.type)) {
      RowsEvent ev;
      std::string scratch;
      uint8_t ph = e.type >= 30 ? 10 : 8;
      EXPECT_TRUE(DecodeRowsEvent(e.type, e.body, ph, &scratch, &ev).ok());
      uint64_t rows;
      absl::Status s = d.Decode(maps[ev.table_id], ev, &out, &rows);
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  return out.images;
}

ColumnDef Col(ColumnType t, uint32_t length = 0, bool nullable = true,
              bool is_unsigned = false) {
  ColumnDef c;
  c.type = t;
  c.length = length;
  c.nullable = nullable;
  c.is_unsigned = is_unsigned;
  return c;
}


RowsWriter MakeWriter(LogFlavor flavor, RowImage image = RowImage::kFull,
                      size_t max_event = 8192) {
  RowsWriterOptions o;
  o.flavor = flavor;
  o.row_image = image;
  o.max_event_size = max_event;
  return *RowsWriter::Create(o);
}

class RowsWriterTypesTest : public ::testing::TestWithParam<LogFlavor> {};

TEST_P(RowsWriterTypesTest, EveryTypeReadsBackThroughTheDecoders) {
  const LogFlavor flavor = GetParam();
  TableDef t;
  t.table_id = 42;
  t.schema = "db";
  t.table = "types";
  t.metadata = RowMetadata::kFull;
  t.columns = {
      Col(kColTiny), Col(kColTiny, 0, true, true), Col(kColShort),
      Col(kColInt24), Col(kColLong), Col(kColLongLong),
      Col(kColLongLong, 0, true, true), Col(kColFloat), Col(kColDouble),
      Col(kColNewDecimal, 12), Col(kColNewDecimal, 30), Col(kColString, 10),
      Col(kColVarchar, 300), Col(kColBlob), Col(kColDate), Col(kColTime2, 0),
      Col(kColTime2, 2), Col(kColTime2, 3), Col(kColTime2, 6),
      Col(kColDatetime2, 0), Col(kColDatetime2, 4), Col(kColDatetime2, 6),
      Col(kColTimestamp2, 3), Col(kColYear), Col(kColEnum, 3), Col(kColSet, 3),
      Col(kColBit, 12), Col(kColJson)};
  t.columns[9].scale = 3;
  t.columns[10].scale = 10;
  t.columns[24].enum_values = {"a", "b", "c"};
  t.columns[25].enum_values = {"x", "y", "z"};
  RowsWriter w = MakeWriter(flavor);
  auto h = w.DescribeTable(t);
  ASSERT_TRUE(h.ok()) << h.status();
  const std::string json = flavor == LogFlavor::kMySQL
                               ? std::string("\x04\x01", 2)  // binary true
                               : std::string("{\"a\": 1}");
  const std::string varchar(300, 'v');
  const std::string blob("bin\0ary", 7);
  std::vector<Value> row = {
      Value::Int(-128), Value::UInt(255), Value::Int(-32768),
      Value::Int(-8388608), Value::Int(-2147483647 - 1),
      Value::Int(INT64_MIN), Value::UInt(UINT64_MAX), Value::Double(1.5),
      Value::Double(0.1), Value::Decimal("-123456789.125"),
      Value::Decimal("12345678901234567890.0123456789"), Value::Bytes("abc"),
      Value::Bytes(varchar), Value::Bytes(blob), Value::Time(MakeTemporal(2024, 2, 29)),
      Value::Time(MakeTemporal(0, 0, 0, 838, 59, 59)),
      Value::Time(MakeTemporal(0, 0, 0, 0, 0, 1, 500000, true)),
      Value::Time(MakeTemporal(0, 0, 0, 1, 2, 3, 456000, true)),
      Value::Time(MakeTemporal(0, 0, 0, 12, 34, 56, 789012, true)),
      Value::Time(MakeTemporal(2024, 1, 2, 3, 4, 5)),
      Value::Time(MakeTemporal(2000, 1, 1, 0, 0, 0, 123456)),
      Value::Time(MakeTemporal(9999, 12, 31, 23, 59, 59, 999999)),
      Value::Timestamp(1700000000, 123456), Value::Int(2024), Value::UInt(2),
      Value::UInt(5), Value::UInt(0xABC), Value::Bytes(json)};
  std::vector<Value> nulls(row.size(), Value::Null());
  nulls[0] = Value::Int(0);
  nulls[9] = Value::Decimal("0.5");
  nulls[23] = Value::Int(0);
  TransactionBuffer txn(false);
  ASSERT_TRUE(w.BeginStatement(&txn, 1, "INSERT").ok());
  ASSERT_TRUE(w.Insert(*h, row).ok()) << w.Insert(*h, row);
  ASSERT_TRUE(w.Insert(*h, nulls).ok());
  ASSERT_TRUE(w.EndStatement().ok());

  std::vector<std::string> images = DecodeImages(txn);
  ASSERT_EQ(images.size(), 2u);
  std::string want = absl::StrCat(
      "0=-128,1=255,2=-32768,3=-8388608,4=-2147483648,5=-9223372036854775808,"
      "6=18446744073709551615,7=1.5,8=0.1,9=-123456789.125,"
      "10=12345678901234567890.0123456789,11=abc,12=",
      varchar, ",13=", blob,
      ",14=2024-02-29,15=838:59:59,16=-00:00:01.50,17=-01:02:03.456,"
      "18=-12:34:56.789012,19=2024-01-02 03:04:05,"
      "20=2000-01-01 00:00:00.1234,21=9999-12-31 23:59:59.999999,"
      "22=2023-11-14 22:13:20.123,23=2024,24=b,25=x,z,26=2748,27=",
      flavor == LogFlavor::kMySQL ? "true" : json);
  EXPECT_EQ(images[0], want);
  std::string want_nulls = "0=0";
  for (size_t i = 1; i < row.size(); ++i) {
    absl::StrAppend(&want_nulls, ",", i, "=",
                    i == 9 ? "0.500" : i == 23 ? "0" : "NULL");
  }
  EXPECT_EQ(images[1], want_nulls);

  // The events: Table_map, then one Rows event of the flavor's type with
  // STMT_END_F.
  std::vector<Ev> evs = Events(txn);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[0].type, flavor == LogFlavor::kMySQL ? kRowsQueryEvent
                                                     : kMariaAnnotateRowsEvent);
  EXPECT_EQ(evs[1].type, kTableMapEvent);
  EXPECT_EQ(evs[2].type, flavor == LogFlavor::kMySQL ? kWriteRowsEvent
                                                     : kWriteRowsEventV1);
  auto tm = DecodeTableMap(evs[1].body, 8);
  ASSERT_TRUE(tm.ok());
  EXPECT_TRUE(tm->has_names);
  EXPECT_TRUE(tm->columns[1].is_unsigned);
  EXPECT_FALSE(tm->columns[0].is_unsigned);
  EXPECT_EQ(tm->columns[24].enum_values, t.columns[24].enum_values);
}

INSTANTIATE_TEST_SUITE_P(Flavors, RowsWriterTypesTest,
                         ::testing::Values(LogFlavor::kMySQL,
                                           LogFlavor::kMariaDB));

// MySQL 9's VECTOR (type 242): one metadata byte, the value length-prefixed
// (4 bytes) holding little-endian float32s. Decoded as a JSON array;
// bytes that are not whole floats as hex.
TEST(RowsWriterTest, VectorColumnsDecodeAsArraysOfFloats) {
  TableDef t;
  t.table_id = 9;
  t.schema = "db";
  t.table = "v";
  t.metadata = RowMetadata::kMinimal;
  t.columns = {Col(kColLong), Col(kColVector)};
  RowsWriter w = MakeWriter(LogFlavor::kMySQL);
  auto h = w.DescribeTable(t);
  ASSERT_TRUE(h.ok()) << h.status();
  auto floats = [](std::vector<float> v) {
    std::string b(v.size() * 4, '\0');
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      StoreLe32(b.data() + 4 * i, bits);
    }
    return b;
  };
  const std::string v1 = floats({1.1f, 2.2f, -0.5f});
  TransactionBuffer txn(false);
  ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
  ASSERT_TRUE(w.Insert(*h, {Value::Int(1), Value::Bytes(v1)}).ok());
  ASSERT_TRUE(w.Insert(*h, {Value::Int(2), Value::Bytes("abc")}).ok());
  ASSERT_TRUE(w.EndStatement().ok());
  std::vector<std::string> images = DecodeImages(txn);
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0], "0=1,1=[1.1,2.2,-0.5]");
  EXPECT_EQ(images[1], "0=2,1=abc");  // 3 bytes: not floats, kBinary
  std::vector<Ev> evs = Events(txn);
  ASSERT_FALSE(evs.empty());
  ASSERT_EQ(evs[0].type, kTableMapEvent);
  auto tm = DecodeTableMap(evs[0].body, 8);
  ASSERT_TRUE(tm.ok()) << tm.status();
  ASSERT_TRUE(tm->columns_error.empty()) << tm->columns_error;
  EXPECT_EQ(tm->columns[1].type, kColVector);
  EXPECT_EQ(tm->columns[1].meta, 4u);
}

TEST(PackTest, DecimalMatchesMySqlDocumentedBytes) {
  // strings/decimal.cc's own example: 1234567890.1234 as DECIMAL(14,4).
  char out[16];
  ASSERT_TRUE(PackDecimal("1234567890.1234", 14, 4, out));
  EXPECT_EQ(absl::BytesToHexString(absl::string_view(out, 7)), "810dfb38d204d2");
  ASSERT_TRUE(PackDecimal("-1234567890.1234", 14, 4, out));
  EXPECT_EQ(absl::BytesToHexString(absl::string_view(out, 7)), "7ef204c72dfb2d");
}

TEST(PackTest, OutOfRangeValuesAreRefused) {
  char out[16];
  EXPECT_FALSE(PackDecimal("1234.5", 4, 1, out));   // 4 integer digits > 3
  EXPECT_FALSE(PackDecimal("1.55", 4, 1, out));     // 2 fraction digits > 1
  EXPECT_FALSE(PackDecimal("1e5", 6, 0, out));
  EXPECT_FALSE(PackTime2(MakeTemporal(0, 0, 0, 839), 0, out));
  EXPECT_FALSE(PackDatetime2(MakeTemporal(2024, 13, 1), 0, out));
  EXPECT_FALSE(PackYear(1900, out));
  EXPECT_FALSE(PackTimestamp2(-1, 0, 0, out));
}

TEST(RowsWriterTest, RefusedRowLeavesTheBufferAsItWas) {
  TableDef t;
  t.table_id = 1;
  t.schema = "d";
  t.table = "t";
  t.columns = {Col(kColLong, 0, false), Col(kColVarchar, 4), Col(kColTiny)};
  RowsWriter w = MakeWriter(LogFlavor::kMySQL);
  auto h = w.DescribeTable(t);
  ASSERT_TRUE(h.ok());
  TransactionBuffer txn(true);
  ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
  ASSERT_TRUE(w.Insert(*h, {Value::Int(1), Value::Bytes("ok"), Value::Int(1)}).ok());
  const std::string before(txn.appended_data());
  EXPECT_TRUE(absl::IsInvalidArgument(
      w.Insert(*h, {Value::Null(), Value::Bytes("ok"), Value::Int(1)})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      w.Insert(*h, {Value::Int(1), Value::Bytes("toolong"), Value::Int(1)})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      w.Insert(*h, {Value::Int(1), Value::Bytes("ok"), Value::Int(128)})));
  EXPECT_TRUE(absl::IsInvalidArgument(w.Insert(*h, {Value::Int(1)})));
  EXPECT_TRUE(absl::IsInvalidArgument(
      w.Insert(*h, {Value::Double(1), Value::Bytes("ok"), Value::Int(1)})));
  EXPECT_EQ(std::string(txn.appended_data()), before);
  EXPECT_TRUE(w.EndStatement().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(w.EndStatement()));
}

TableDef ThreeColumns(uint64_t id) {
  TableDef t;
  t.table_id = id;
  t.schema = "d";
  t.table = absl::StrCat("t", id);
  t.columns = {Col(kColLong, 0, false), Col(kColLong), Col(kColBlob)};
  t.primary_key = {0};
  return t;
}

struct ImageCase {
  RowImage image;
  const char* before;  // columns of the before image (UPDATE)
  const char* after;   // after image with column 1 changed
  const char* deleted;  // before image of the DELETE
};

class RowImageTest : public ::testing::TestWithParam<ImageCase> {};

TEST_P(RowImageTest, UpdateLogsTheColumnsOfTheImageMode) {
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, GetParam().image);
  auto h = w.DescribeTable(ThreeColumns(5));
  ASSERT_TRUE(h.ok());
  TransactionBuffer txn(false);
  ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
  const uint8_t changed[] = {0x02};
  ASSERT_TRUE(w.Update(*h, {Value::Int(1), Value::Int(2), Value::Bytes("b")},
                       {Value::Int(1), Value::Int(3), Value::Bytes("b")}, changed)
                  .ok());
  ASSERT_TRUE(w.Delete(*h, {Value::Int(1), Value::Int(3), Value::Bytes("b")}).ok());
  ASSERT_TRUE(w.EndStatement().ok());
  std::vector<std::string> images = DecodeImages(txn);
  ASSERT_EQ(images.size(), 3u);
  EXPECT_EQ(images[0], GetParam().before);
  EXPECT_EQ(images[1], GetParam().after);
  EXPECT_EQ(images[2], GetParam().deleted);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, RowImageTest,
    ::testing::Values(ImageCase{RowImage::kFull, "0=1,1=2,2=b", "0=1,1=3,2=b",
                                "0=1,1=3,2=b"},
                      ImageCase{RowImage::kMinimal, "0=1", "1=3", "0=1"},
                      ImageCase{RowImage::kNoBlob, "0=1,1=2", "0=1,1=3", "0=1,1=3"}));

TEST(RowsWriterTest, RowsSplitAtMaxEventSizeAndOnlyTheLastHasStmtEnd) {
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull, 1024);
  TableDef t = ThreeColumns(9);
  auto h = w.DescribeTable(t);
  ASSERT_TRUE(h.ok());
  TransactionBuffer txn(false);
  const std::string big(200, 'x');
  const std::string huge(3000, 'y');  // alone larger than the limit
  for (int stmt = 0; stmt < 2; ++stmt) {
    ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
    for (int i = 0; i < 30; ++i) {
      ASSERT_TRUE(w.Insert(*h, {Value::Int(i), Value::Null(),
                                Value::Bytes(i == 7 ? huge : big)})
                      .ok());
    }
    ASSERT_TRUE(w.EndStatement().ok());
  }
  std::vector<Ev> evs = Events(txn);
  int maps = 0, rows_events = 0, ends = 0;
  bool last_was_end = false;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (evs[i].type == kTableMapEvent) {
      ++maps;
      EXPECT_TRUE(i == 0 || last_was_end) << "Table_map inside a statement";
      continue;
    }
    ASSERT_EQ(evs[i].type, kWriteRowsEvent);
    ++rows_events;
    const size_t size = txn.appended_event_size(i);
    const bool one_row = size > 1024;
    EXPECT_TRUE(size <= 1024 || one_row);
    last_was_end = LoadLe16(evs[i].body.data() + 6) & kRowsStmtEndF;
    ends += last_was_end;
    EXPECT_EQ(last_was_end, i + 1 == evs.size() || evs[i + 1].type == kTableMapEvent);
  }
  EXPECT_EQ(maps, 2);
  EXPECT_EQ(ends, 2);
  EXPECT_GE(rows_events, 2 * (30 * 210 / 1024));
  EXPECT_EQ(DecodeImages(txn).size(), 60u);
}

TEST(RowsWriterTest, TablesNamedAtBeginAreMappedBeforeTheFirstRows) {
  RowsWriter w = MakeWriter(LogFlavor::kMariaDB);
  auto a = w.DescribeTable(ThreeColumns(1));
  auto b = w.DescribeTable(ThreeColumns(2));
  auto c = w.DescribeTable(ThreeColumns(3));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  TransactionBuffer txn(false);
  const RowsWriter::TableHandle both[] = {*a, *b};
  ASSERT_TRUE(w.BeginStatement(&txn, 1, "UPDATE a, b ...", both).ok());
  const std::vector<Value> r = {Value::Int(1), Value::Int(2), Value::Null()};
  ASSERT_TRUE(w.Update(*a, r, r).ok());
  ASSERT_TRUE(w.Update(*b, r, r).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(w.Insert(*c, r)));
  ASSERT_TRUE(w.EndStatement().ok());
  std::vector<Ev> evs = Events(txn);
  ASSERT_EQ(evs.size(), 5u);
  EXPECT_EQ(evs[0].type, kMariaAnnotateRowsEvent);
  EXPECT_EQ(evs[0].body, "UPDATE a, b ...");
  EXPECT_EQ(evs[1].type, kTableMapEvent);
  EXPECT_EQ(evs[2].type, kTableMapEvent);
  EXPECT_EQ(evs[3].type, kUpdateRowsEventV1);
  EXPECT_EQ(evs[3].flags, 0);
  EXPECT_EQ(LoadLe16(evs[3].body.data() + 6), 0);
  EXPECT_EQ(evs[4].type, kUpdateRowsEventV1);
  EXPECT_EQ(LoadLe16(evs[4].body.data() + 6), kRowsStmtEndF);
}

TEST(RowsWriterTest, SteadyStateAllocatesNothing) {
  if (!testutil::CountsAllocations()) {
    GTEST_SKIP() << "allocations are not counted under TSan";
  }
  RowsWriter w = MakeWriter(LogFlavor::kMySQL);
  auto h = w.DescribeTable(testutil::SbtestTable(1));
  ASSERT_TRUE(h.ok());
  TransactionBuffer txn(true);
  const std::string c(119, '1'), pad(59, '2');
  auto txn_once = [&](int id) {
    txn.Clear();
    if (!w.BeginStatement(&txn, 1, "INSERT INTO sbtest1 VALUES (...)").ok()) return false;
    for (int i = 0; i < 5; ++i) {
      if (!w.Insert(*h, {Value::Int(id + i), Value::Int(7), Value::Bytes(c),
                         Value::Bytes(pad)})
               .ok()) {
        return false;
      }
    }
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

TEST(RowsWriterTest, GrownEventsCommitWithValidChecksums) {
  // Rows events grown in place (ExtendLastEvent, across reallocations of
  // the buffer) keep their size fields and checksum footers right: the
  // log's reader verifies every checksum.
  const std::string dir = testing_util::NewTempDir("rows_checksums");
  Options o;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  RowsWriter w = MakeWriter(LogFlavor::kMySQL, RowImage::kFull, 64 << 10);
  auto h = w.DescribeTable(ThreeColumns(4));
  ASSERT_TRUE(h.ok());
  TransactionBuffer txn(true);
  const std::string text(300, 't');
  for (int t = 0; t < 3; ++t) {
    txn.Clear();
    AppendAnonymousGtid(&txn, 1, 1, 0, 1);
    AppendQuery(&txn, 1, 1, 1, "d", "BEGIN");
    ASSERT_TRUE(w.BeginStatement(&txn, 1, "INSERT").ok());
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(w.Insert(*h, {Value::Int(i), Value::Int(t), Value::Bytes(text)}).ok());
    }
    ASSERT_TRUE(w.EndStatement().ok());
    AppendXid(&txn, 1, 1, static_cast<uint64_t>(t + 1));
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  ASSERT_TRUE((*log)->Close().ok());
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  absl::Status st;
  int rows_events = 0, checked = 0;
  while ((st = (*r)->Next(&ev)).ok()) {
    EXPECT_NE(ev.checksum, ChecksumState::kBad);
    checked += ev.checksum == ChecksumState::kOk;
    rows_events += ev.header.type == kWriteRowsEvent;
  }
  EXPECT_TRUE(absl::IsOutOfRange(st)) << st;
  EXPECT_GE(rows_events, 3 * (2000 * 310 / (64 << 10)));
  EXPECT_GT(checked, rows_events);
}

// ---------------------------------------------------------------------------
// The MariaDB corpus: its Table_maps and row images, re-encoded.

// A ColumnDef that describes the decoded column the way it was logged.
ColumnDef DefOf(const Column& c) {
  ColumnDef d;
  d.type = static_cast<ColumnType>(c.real_type);
  d.nullable = c.nullable;
  switch (c.real_type) {
    case kColString: d.length = c.length; break;
    case kColEnum: d.length = c.length == 1 ? 1 : 256; break;
    case kColSet: d.length = c.length == 8 ? 64 : c.length * 8; break;
    case kColVarchar: case kColVarString: d.length = c.meta; break;
    case kColBlob: case kColGeometry: case kColJson: d.length = c.meta; break;
    case kColNewDecimal:
      d.length = c.meta >> 8;
      d.scale = static_cast<uint8_t>(c.meta & 0xff);
      break;
    case kColTime2: case kColDatetime2: case kColTimestamp2: d.length = c.meta; break;
    case kColBit: d.length = (c.meta >> 8) * 8 + (c.meta & 0xff); break;
    default: break;
  }
  return d;
}

// Reads one image (all columns present) into Values; strings it needs stay
// in `keep`.
bool ReadImage(const TableMap& t, absl::string_view rows, size_t* pos,
               std::vector<Value>* out, std::deque<std::string>* keep) {
  const size_t n = t.columns.size();
  absl::string_view data = rows.substr(*pos);
  const size_t nb = (n + 7) / 8;
  if (data.size() < nb) return false;
  absl::string_view nulls = data.substr(0, nb);
  size_t p = nb;
  out->assign(n, Value::Null());
  for (size_t i = 0; i < n; ++i) {
    if ((static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1) continue;
    const Column& c = t.columns[i];
    const char* err = nullptr;
    int64_t len = ValueExtent(c, data.substr(p), &err);
    if (len < 0) return false;
    absl::string_view b = data.substr(p, static_cast<size_t>(len));
    p += static_cast<size_t>(len);
    Value& v = (*out)[i];
    const uint64_t le = b.size() <= 8 ? LoadLeN(b.data(), b.size()) : 0;
    switch (c.real_type) {
      case kColTiny: case kColShort: case kColInt24: case kColLong:
      case kColLongLong: {
        const int bits = static_cast<int>(8 * b.size());
        uint64_t m = uint64_t{1} << (bits - 1);
        uint64_t u = bits < 64 ? le & ((m << 1) - 1) : le;
        v = Value::Int(static_cast<int64_t>((u ^ m) - m));
        break;
      }
      case kColEnum: case kColSet: v = Value::UInt(le); break;
      case kColFloat: {
        uint32_t bits32 = static_cast<uint32_t>(le);
        float f;
        std::memcpy(&f, &bits32, 4);
        v = Value::Double(f);
        break;
      }
      case kColDouble: {
        double d;
        std::memcpy(&d, &le, 8);
        v = Value::Double(d);
        break;
      }
      case kColYear: v = Value::Int(le == 0 ? 0 : 1900 + static_cast<int64_t>(le)); break;
      case kColDate:
      case kColNewDate:
        v = Value::Time(MakeTemporal(static_cast<int>(le >> 9), (le >> 5) & 15, le & 31));
        break;
      case kColTimestamp2: {
        uint64_t sec = 0;
        for (int k = 0; k < 4; ++k) sec = (sec << 8) | static_cast<uint8_t>(b[k]);
        uint64_t frac = 0;
        for (size_t k = 4; k < b.size(); ++k) frac = (frac << 8) | static_cast<uint8_t>(b[k]);
        const size_t fb = b.size() - 4;
        v = Value::Timestamp(static_cast<int64_t>(sec),
                             static_cast<uint32_t>(fb == 1 ? frac * 10000
                                                   : fb == 2 ? frac * 100 : frac));
        break;
      }
      case kColTime2: case kColDatetime2: {
        std::string text;
        const int fsp = static_cast<int>(c.meta);
        bool ok = c.real_type == kColTime2 ? AppendTime2(b, fsp, &text)
                                           : AppendDatetime2(b, fsp, &text);
        if (!ok) return false;
        int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
        unsigned long us = 0;
        bool neg = !text.empty() && text[0] == '-';
        const char* q = text.c_str() + (neg ? 1 : 0);
        int consumed = 0;
        if (c.real_type == kColTime2) {
          if (std::sscanf(q, "%d:%d:%d%n", &h, &mi, &s, &consumed) != 3) return false;
        } else if (std::sscanf(q, "%d-%d-%d %d:%d:%d%n", &y, &mo, &d, &h, &mi, &s,
                               &consumed) != 6) {
          return false;
        }
        if (q[consumed] == '.') {
          std::string f = std::string(q + consumed + 1) + "000000";
          us = std::strtoul(f.substr(0, 6).c_str(), nullptr, 10);
        }
        v = Value::Time(MakeTemporal(y, mo, d, h, mi, s, static_cast<uint32_t>(us), neg));
        break;
      }
      case kColNewDecimal: {
        keep->emplace_back();
        if (!AppendDecimal(b, static_cast<int>(c.meta >> 8),
                                   static_cast<int>(c.meta & 0xff), &keep->back())) {
          return false;
        }
        v = Value::Decimal(keep->back());
        break;
      }
      case kColBit: {
        uint64_t x = 0;
        for (char ch : b) x = (x << 8) | static_cast<uint8_t>(ch);
        v = Value::UInt(x);
        break;
      }
      default:  // length-prefixed
        v = Value::Bytes(b.substr(c.skip_prefix));
        break;
    }
  }
  *pos += p;
  return true;
}

TEST(RowsCorpusTest, TableMapsAndRowImagesReencodeByteForByte) {
  int maps = 0, rows_events = 0, rows = 0;
  for (const std::string& scenario : {std::string("s1-row-crc32"),
                                      std::string("s3-row-wide-nochecksum")}) {
    for (int f = 1; f <= 5; ++f) {
      std::string path = testutil::CorpusBinlogPath(
          scenario, absl::StrCat("mariadb-bin.00000", f));
      auto reader = Reader::OpenFiles({path}, ReaderOptions());
      if (!reader.ok()) continue;
      SCOPED_TRACE(path);
      RowsWriter w = MakeWriter(LogFlavor::kMariaDB, RowImage::kFull, 1u << 30);
      std::map<uint64_t, std::pair<TableMap, RowsWriter::TableHandle>> tables;
      Event ev;
      while ((*reader)->Next(&ev).ok()) {
        const uint8_t type = ev.header.type;
        if (type == kTableMapEvent) {
          auto t = DecodeTableMap(ev.body(), 8);
          ASSERT_TRUE(t.ok());
          ASSERT_TRUE(t->columns_error.empty()) << t->columns_error;
          TableDef def;
          def.table_id = t->table_id;
          def.schema = t->db;
          def.table = t->table;
          def.metadata = RowMetadata::kNone;
          for (const Column& c : t->columns) def.columns.push_back(DefOf(c));
          auto body = EncodeTableMapBody(def, LogFlavor::kMariaDB);
          ASSERT_TRUE(body.ok()) << body.status();
          EXPECT_EQ(absl::BytesToHexString(*body),
                    absl::BytesToHexString(ev.body()))
              << t->QualifiedName();
          auto h = w.DescribeTable(def);
          ASSERT_TRUE(h.ok());
          tables[t->table_id] = {*t, *h};
          ++maps;
        } else if (type >= kWriteRowsEventV1 && type <= kDeleteRowsEventV1) {
          RowsEvent re;
          std::string scratch;
          ASSERT_TRUE(DecodeRowsEvent(type, ev.body(), 8, &scratch, &re).ok());
          auto it = tables.find(re.table_id);
          ASSERT_NE(it, tables.end());
          const TableMap& t = it->second.first;
          const size_t n = t.columns.size();
          // FULL images: every column in each bitmap.
          for (size_t i = 0; i < n; ++i) {
            ASSERT_TRUE((static_cast<uint8_t>(re.columns_before[i / 8]) >> (i % 8)) & 1);
          }
          TransactionBuffer txn(false);
          ASSERT_TRUE(w.BeginStatement(&txn, 1).ok());
          size_t pos = 0;
          std::deque<std::string> keep;
          std::vector<Value> a, b;
          while (pos < re.rows.size()) {
            ASSERT_TRUE(ReadImage(t, re.rows, &pos, &a, &keep));
            absl::Status s;
            if (re.kind == RowsKind::kUpdate) {
              ASSERT_TRUE(ReadImage(t, re.rows, &pos, &b, &keep));
              s = w.Update(it->second.second, a, b);
            } else if (re.kind == RowsKind::kWrite) {
              s = w.Insert(it->second.second, a);
            } else {
              s = w.Delete(it->second.second, a);
            }
            ASSERT_TRUE(s.ok()) << s;
            ++rows;
          }
          ASSERT_TRUE(w.EndStatement().ok());
          std::vector<Ev> evs = Events(txn);
          ASSERT_EQ(evs.size(), 2u);
          ASSERT_EQ(evs[1].type, type);
          // Everything after table id and flags: column count, bitmaps,
          // the row images.
          EXPECT_EQ(absl::BytesToHexString(evs[1].body.substr(8)),
                    absl::BytesToHexString(ev.body().substr(8)));
          ++rows_events;
        }
      }
    }
  }
  EXPECT_GT(maps, 100);
  EXPECT_GT(rows_events, 100);
  EXPECT_GT(rows, 1000);
  std::printf("corpus: %d table maps, %d rows events, %d rows re-encoded\n",
              maps, rows_events, rows);
}

// The Table_map Debian's mariadbd 10.11.19 logged (binlog_row_metadata=FULL)
// for
//   CREATE TABLE g.t (id INT PRIMARY KEY, a VARCHAR(10) CHARACTER SET utf8mb4,
//     geo GEOMETRY, p POINT, b BINARY(215), ls LINESTRING,
//     tx TEXT CHARACTER SET latin1, e ENUM('x','y') CHARACTER SET utf8mb4)
// (mariadb-binlog --print-table-metadata names every column's type and
// character set from it): GEOMETRY columns count in the character-set list
// with collation 63, and GEOMETRY_TYPE (7) follows the character sets.
TEST(TableMapMetadataTest, GeometryColumnsAsMariaDb1011WritesThem) {
  TableDef def;
  def.table_id = 18;
  def.schema = "g";
  def.table = "t";
  def.metadata = RowMetadata::kFull;
  def.primary_key = {0};
  auto col = [&](ColumnType type, const char* name, uint32_t length,
                 uint32_t collation) -> ColumnDef& {
    ColumnDef c;
    c.type = type;
    c.name = name;
    c.length = length;
    c.collation = collation;
    def.columns.push_back(c);
    return def.columns.back();
  };
  col(kColLong, "id", 0, 0).nullable = false;
  col(kColVarchar, "a", 40, 45);
  col(kColGeometry, "geo", 4, 0).geometry_type = 0;
  col(kColGeometry, "p", 4, 0).geometry_type = 1;
  col(kColString, "b", 215, 63);
  col(kColGeometry, "ls", 4, 0).geometry_type = 2;
  col(kColBlob, "tx", 2, 8);
  ColumnDef& e = col(kColEnum, "e", 2, 45);
  e.enum_values = {"x", "y"};
  auto body = EncodeTableMapBody(def, LogFlavor::kMariaDB);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(absl::BytesToHexString(*body),
            "120000000000010001670001740008030ffffffefffcfe0a28000404fed70402"
            "f701fe01010002053f002d05080703000102041502696401610367656f017001"
            "62026c7302747801650a012d06050201780179080100");
}

// MySQL leaves GEOMETRY out of the character-set list (is_character_type)
// and writes GEOMETRY_TYPE after the character sets too, with MINIMAL
// metadata as well.
TEST(TableMapMetadataTest, GeometryTypeFollowsTheCharsetsInMySqlMinimal) {
  TableDef def;
  def.table_id = 7;
  def.schema = "g";
  def.table = "t";
  def.metadata = RowMetadata::kMinimal;
  ColumnDef a;
  a.type = kColVarchar;
  a.length = 40;
  a.collation = 255;
  ColumnDef p;
  p.type = kColGeometry;
  p.length = 4;
  p.geometry_type = 1;
  def.columns = {a, p};
  auto body = EncodeTableMapBody(def, LogFlavor::kMySQL);
  ASSERT_TRUE(body.ok()) << body.status();
  // ... the null bitmap 03, DEFAULT_CHARSET (2, 3 bytes: 255 packed as
  // fc ff 00), GEOMETRY_TYPE (7, 1 byte: POINT).
  const std::string hex = absl::BytesToHexString(*body);
  EXPECT_TRUE(absl::EndsWith(hex, "030203fcff00070101")) << hex;
}

}  // namespace
}  // namespace binlog
