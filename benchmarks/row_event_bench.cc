// What row logging costs per transaction: RowsWriter (binlog/rows_writer.h)
// against the floor (a memcpy of exactly the bytes the writer produces) and
// against a baseline shaped like a server's per-statement path.
//
//   bazel run -c opt //benchmarks:row_event_bench --
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Each case builds insert transactions of one statement: its Table_map and
// one Rows event of `rows` rows (1 or 5), for `table` 0 (sysbench's
// sbtest1: id INT, k INT, c CHAR(120), pad CHAR(60), utf8mb4, about 190
// bytes a row) or 1 (a 20-column table of mixed types); records also 2
// (an INT and a 16 KiB MEDIUMBLOB: each row larger than max_event_size,
// in a Rows event of its own). Gtid, BEGIN and Xid are left out: they are
// the same in all three paths.
//
//   BM_RowWriter             the table described once; per transaction
//                            Clear, BeginStatement, Insert x rows,
//                            EndStatement into a reused TransactionBuffer
//                            (`writeset` 1: with the key hashes of
//                            WRITESET dependency tracking, the default;
//                            0: RowsWriterOptions::writeset = false)
//   BM_RowWriterRecord       the same transactions from server records
//                            (binlog/rows_record.h: the table described
//                            with ServerRecordLayout, each row a record
//                            whose id field changes; InsertRecord)
//   BM_MemcpyFloor           one memcpy of the writer's bytes for the same
//                            transaction into a reused buffer
//   BM_PerStatementBaseline  per statement: a table-map object (std::string
//                            names, std::vector types and metadata)
//                            serialized into a new std::string; each row
//                            serialized column by column through a virtual
//                            call per column into a new std::string; both
//                            appended to the TransactionBuffer. Written
//                            plainly, not tuned.
//
//   BM_WritesetAssign        the log's serial-section share of WRITESET:
//                            WritesetHistory::Assign for a transaction of
//                            `hashes` (1 or 5) key hashes drawn uniformly
//                            from `keys` distinct keys (sysbench-like
//                            uniform updates: 1M keys; hot: 1000), history
//                            size 25000 (MySQL's default), so the history
//                            fills and clears as it would at 64 threads'
//                            commit rates (the serial section sees one
//                            transaction at a time whatever the thread
//                            count). ns_per_txn.
//
// Counters: ns_per_row (wall time per row) and allocs_per_txn (operator new
// calls per transaction, counted by this binary's operator new).

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "binlog/format.h"
#include "binlog/rows_record.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "binlog/writeset.h"
#include "tests/testutil/alloc_count.h"
#include "tests/testutil/sbtest.h"

namespace binlog {
namespace {

constexpr uint32_t kTs = 1700000000;

ColumnDef Col(ColumnType t, uint32_t length = 0, bool nullable = false) {
  ColumnDef c;
  c.type = t;
  c.length = length;
  c.nullable = nullable;
  c.collation = 255;
  return c;
}


// A table and one row of it (the id, column 0, varies per row).
struct Fixture {
  TableDef def;
  std::vector<std::string> strings;  // what the Bytes values point to
  std::vector<Value> row;
};

Fixture MakeFixture(int table) {
  Fixture f;
  f.def.table_id = 84;
  f.def.metadata = RowMetadata::kMinimal;
  f.strings.reserve(16);
  auto str = [&f](std::string s) {
    f.strings.push_back(std::move(s));
    return Value::Bytes(f.strings.back());
  };
  if (table == 2) {
    // Rows larger than an event (16 KiB MEDIUMBLOBs, max_event_size 8192):
    // each row opens an event of its own.
    f.def.schema = "shop";
    f.def.table = "images";
    f.def.columns = {Col(kColLong), Col(kColBlob, 3)};
    f.def.primary_key = {0};
    f.row = {Value::Int(1), str(std::string(16 << 10, 'b'))};
    return f;
  }
  if (table == 0) {
    f.def = testutil::SbtestTable(84);
    // sysbench's c and pad: groups of 11 digits joined by '-'.
    std::string c, pad;
    for (int g = 0; g < 10; ++g) c += (g ? "-" : "") + std::string("83868641912");
    for (int g = 0; g < 5; ++g) pad += (g ? "-" : "") + std::string("67847967377");
    f.row = {Value::Int(1), Value::Int(499284), str(c), str(pad)};
  } else {
    f.def.schema = "shop";
    f.def.table = "orders";
    ColumnDef dec = Col(kColNewDecimal, 10);
    dec.scale = 2;
    ColumnDef st = Col(kColEnum, 5);
    f.def.columns = {
        Col(kColLongLong),       Col(kColLong),          Col(kColTiny),
        Col(kColShort),          Col(kColVarchar, 512),  Col(kColVarchar, 256),
        Col(kColVarchar, 128),   Col(kColDatetime2, 0),  Col(kColDatetime2, 6, true),
        Col(kColDouble),         dec,                    Col(kColDate),
        Col(kColTimestamp2, 0),  st,                     Col(kColString, 8),
        Col(kColBlob, 2, true),  Col(kColLong),          Col(kColLongLong),
        Col(kColYear),           Col(kColBit, 8)};
    f.def.primary_key = {0};
    Temporal date;
    date.year = 2024;
    date.month = 5;
    date.day = 17;
    f.row = {Value::Int(1),
             Value::Int(1834201),
             Value::Int(2),
             Value::Int(310),
             str("mary.garcia4471@mail.example.org"),
             str("Mary Garcia"),
             str("web/ios/promo"),
             Value::Time(MakeTemporal(2024, 5, 17, 9, 31, 5, 0)),
             Value::Time(MakeTemporal(2025, 1, 3, 18, 2, 44, 512345)),
             Value::Double(1249.5),
             Value::Decimal("1249.50"),
             Value::Time(date),
             Value::Timestamp(1715938265),
             Value::UInt(3),
             str("US"),
             str("please leave the package at the front door, gift wrap"),
             Value::Int(77),
             Value::Int(9000000001),
             Value::Int(2024),
             Value::UInt(0x5a)};
  }
  return f;
}

RowsWriter MakeWriter(bool writeset = true) {
  RowsWriterOptions o;
  o.flavor = LogFlavor::kMySQL;
  o.writeset = writeset;
  return *RowsWriter::Create(o);
}

// One transaction through the writer.
inline void WriteTxn(RowsWriter* w, RowsWriter::TableHandle t,
                     TransactionBuffer* txn, std::vector<Value>* row,
                     int rows, int64_t* id) {
  txn->Clear();
  w->BeginStatement(txn, kTs).IgnoreError();
  for (int r = 0; r < rows; ++r) {
    (*row)[0].i = ++*id;
    w->Insert(t, *row).IgnoreError();
  }
  w->EndStatement().IgnoreError();
}

// Wall time and allocations around the timed loop, as counters.
class Meter {
 public:
  Meter()
      : allocs_(testutil::AllocationCount()),
        start_(std::chrono::steady_clock::now()) {}
  void Report(benchmark::State& state, int rows) {
    const double ns = std::chrono::duration<double, std::nano>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
    const double iters = static_cast<double>(state.iterations());
    state.counters["ns_per_row"] = ns / (iters * rows);
    state.counters["allocs_per_txn"] =
        static_cast<double>(testutil::AllocationCount() - allocs_) /
        iters;
  }

 private:
  uint64_t allocs_;
  std::chrono::steady_clock::time_point start_;
};

void BM_RowWriter(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(static_cast<int>(state.range(1)));
  RowsWriter w = MakeWriter(state.range(2) != 0);
  RowsWriter::TableHandle t = *w.DescribeTable(f.def);
  TransactionBuffer txn(true);
  int64_t id = 0;
  for (int i = 0; i < 100; ++i) WriteTxn(&w, t, &txn, &f.row, rows, &id);  // warm
  Meter m;
  for (auto _ : state) {
    WriteTxn(&w, t, &txn, &f.row, rows, &id);
    benchmark::DoNotOptimize(txn.appended_data().data());
  }
  m.Report(state, rows);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * txn.size()));
}

// One transaction through the writer's record path; `id_at`: the offset
// of the id field (INT or BIGINT, little-endian) in the record.
inline void WriteRecordTxn(RowsWriter* w, RowsWriter::TableHandle t,
                           TransactionBuffer* txn, std::vector<uint8_t>* rec,
                           uint32_t id_at, size_t id_size, int rows, int64_t* id) {
  txn->Clear();
  w->BeginStatement(txn, kTs).IgnoreError();
  for (int r = 0; r < rows; ++r) {
    StoreLeN(reinterpret_cast<char*>(rec->data() + id_at),
             static_cast<uint64_t>(++*id), id_size);
    w->InsertRecord(t, *rec).IgnoreError();
  }
  w->EndStatement().IgnoreError();
}

void BM_RowWriterRecord(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(static_cast<int>(state.range(1)));
  RowsWriter w = MakeWriter(state.range(2) != 0);
  const RecordLayout layout = ServerRecordLayout(f.def);
  RowsWriter::TableHandle t = *w.DescribeTable(f.def, layout);
  std::vector<uint8_t> rec(layout.record_length);
  if (!StoreRecord(f.def, layout, f.row, absl::MakeSpan(rec)).ok()) {
    state.SkipWithError("the fixture row does not fit its record");
    return;
  }
  const uint32_t id_at = layout.columns[0].offset;
  const size_t id_size = RecordPackLength(f.def.columns[0]);
  TransactionBuffer txn(true);
  int64_t id = 0;
  for (int i = 0; i < 100; ++i) {  // warm
    WriteRecordTxn(&w, t, &txn, &rec, id_at, id_size, rows, &id);
  }
  Meter m;
  for (auto _ : state) {
    WriteRecordTxn(&w, t, &txn, &rec, id_at, id_size, rows, &id);
    benchmark::DoNotOptimize(txn.appended_data().data());
  }
  m.Report(state, rows);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * txn.size()));
}

void BM_MemcpyFloor(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(static_cast<int>(state.range(1)));
  RowsWriter w = MakeWriter();
  RowsWriter::TableHandle t = *w.DescribeTable(f.def);
  TransactionBuffer txn(true);
  int64_t id = 0;
  WriteTxn(&w, t, &txn, &f.row, rows, &id);
  const std::string bytes(txn.appended_data());
  std::unique_ptr<char[]> dst(new char[bytes.size()]);
  Meter m;
  for (auto _ : state) {
    std::memcpy(dst.get(), bytes.data(), bytes.size());
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  m.Report(state, rows);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}

// ---------------------------------------------------------------------------
// The baseline: a server-shaped per-statement path.

struct TableMapObject {
  uint64_t table_id = 0;
  std::string schema;
  std::string table;
  std::vector<uint8_t> types;
  std::vector<uint16_t> metadata;
  std::vector<bool> nullable;

  std::string Serialize() const {
    std::string out;
    char b[8];
    StoreLeN(b, table_id, 6);
    StoreLe16(b + 6, 1);
    out.append(b, 8);
    out.push_back(static_cast<char>(schema.size()));
    out += schema;
    out.push_back('\0');
    out.push_back(static_cast<char>(table.size()));
    out += table;
    out.push_back('\0');
    out.push_back(static_cast<char>(types.size()));
    for (uint8_t t : types) out.push_back(static_cast<char>(t));
    std::string meta;
    for (size_t i = 0; i < types.size(); ++i) {
      ColumnDef c;
      c.type = static_cast<ColumnType>(types[i]);
      c.length = metadata[i];
      char m[2];
      meta.append(m, EncodeColumnMeta(c, m));
    }
    out.push_back(static_cast<char>(meta.size()));
    out += meta;
    std::string nulls((types.size() + 7) / 8, '\0');
    for (size_t i = 0; i < nullable.size(); ++i) {
      if (nullable[i]) nulls[i / 8] |= static_cast<char>(1 << (i % 8));
    }
    out += nulls;
    return out;
  }
};

class Field {
 public:
  explicit Field(const ColumnCodec& c) : codec_(c) {}
  virtual ~Field() = default;
  virtual void Pack(const Value& v, std::string* out) const = 0;

 protected:
  ColumnCodec codec_;
};

class IntField : public Field {
 public:
  using Field::Field;
  void Pack(const Value& v, std::string* out) const override {
    char b[8];
    StoreLeN(b, v.u, codec_.size);
    out->append(b, codec_.size);
  }
};

class StringField : public Field {
 public:
  using Field::Field;
  void Pack(const Value& v, std::string* out) const override {
    char b[4];
    StoreLeN(b, v.s.size, codec_.prefix);
    out->append(b, codec_.prefix);
    out->append(v.s.data, v.s.size);
  }
};

class OtherField : public Field {  // temporal, decimal, floating point, ...
 public:
  using Field::Field;
  void Pack(const Value& v, std::string* out) const override {
    char b[64];
    char* end = PackValue(codec_, v, b);
    out->append(b, static_cast<size_t>(end - b));
  }
};

void BM_PerStatementBaseline(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(static_cast<int>(state.range(1)));
  std::vector<std::unique_ptr<Field>> fields;
  for (const ColumnDef& c : f.def.columns) {
    ColumnCodec k = *MakeColumnCodec(c);
    if (k.pack == ColumnCodec::kFixedLe) {
      fields.push_back(std::make_unique<IntField>(k));
    } else if (k.pack == ColumnCodec::kPrefixed) {
      fields.push_back(std::make_unique<StringField>(k));
    } else {
      fields.push_back(std::make_unique<OtherField>(k));
    }
  }
  const size_t n = f.def.columns.size();
  TransactionBuffer txn(true);
  int64_t id = 0;
  auto one = [&]() {
    txn.Clear();
    TableMapObject tm;
    tm.table_id = f.def.table_id;
    tm.schema = f.def.schema;
    tm.table = f.def.table;
    for (const ColumnDef& c : f.def.columns) {
      tm.types.push_back(TableMapType(c.type));
      tm.metadata.push_back(static_cast<uint16_t>(c.length | (c.scale << 8)));
      tm.nullable.push_back(c.nullable);
    }
    std::string tm_bytes = tm.Serialize();
    txn.AppendEvent(kTableMapEvent, 1, kTs, 0, tm_bytes);
    std::string event;
    char head[16];
    StoreLeN(head, f.def.table_id, 6);
    StoreLe16(head + 6, kRowsStmtEndF);
    StoreLe16(head + 8, 2);
    head[10] = static_cast<char>(n);
    event.append(head, 11);
    event.append((n + 7) / 8, '\xff');
    for (int r = 0; r < rows; ++r) {
      f.row[0].i = ++id;
      std::string row((n + 7) / 8, '\0');
      for (size_t i = 0; i < n; ++i) fields[i]->Pack(f.row[i], &row);
      event += row;
    }
    txn.AppendEvent(kWriteRowsEvent, 1, kTs, 0, event);
  };
  for (int i = 0; i < 100; ++i) one();
  Meter m;
  for (auto _ : state) {
    one();
    benchmark::DoNotOptimize(txn.appended_data().data());
  }
  m.Report(state, rows);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * txn.size()));
}

void BM_WritesetAssign(benchmark::State& state) {
  const size_t hashes = static_cast<size_t>(state.range(0));
  const uint64_t keys = static_cast<uint64_t>(state.range(1));
  WritesetHistory h = *WritesetHistory::Create(kDefaultWritesetHistorySize);
  // 64K transactions' hashes, built outside the timed loop and replayed.
  constexpr size_t kTxns = 1 << 16;
  std::vector<uint64_t> all(kTxns * hashes);
  const uint64_t seed = WritesetKeySeed("sbtest", "sbtest1", 0);
  uint64_t x = 88172645463325252ULL;
  for (uint64_t& v : all) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = WritesetMix(seed, x % keys);
  }
  h.StartFile();
  int64_t seq = 0;
  size_t i = 0;
  int64_t sum_distance = 0;
  Meter m;
  for (auto _ : state) {
    ++seq;
    const int64_t lc =
        h.Assign(absl::Span<const uint64_t>(all.data() + i * hashes, hashes),
                 WritesetState::kComplete, seq, seq - 1);
    sum_distance += seq - lc;
    i = (i + 1) & (kTxns - 1);
  }
  m.Report(state, 1);
  state.counters["ns_per_txn"] = state.counters["ns_per_row"];
  state.counters.erase("ns_per_row");
  // How far back a transaction's parent is, on average (1: serial).
  state.counters["mean_seq_minus_lc"] =
      static_cast<double>(sum_distance) / static_cast<double>(state.iterations());
  state.counters["clears_per_1k_txn"] =
      1000.0 * static_cast<double>(h.clears()) / static_cast<double>(state.iterations());
}

BENCHMARK(BM_RowWriter)
    ->ArgsProduct({{1, 5}, {0, 1}, {0, 1}})
    ->ArgNames({"rows", "table", "writeset"});
BENCHMARK(BM_RowWriterRecord)
    ->ArgsProduct({{1, 5}, {0, 1}, {0, 1}})
    ->Args({5, 2, 0})
    ->ArgNames({"rows", "table", "writeset"});
BENCHMARK(BM_WritesetAssign)
    ->ArgsProduct({{1, 5}, {1000, 1000000}})
    ->ArgNames({"hashes", "keys"});
BENCHMARK(BM_MemcpyFloor)->ArgsProduct({{1, 5}, {0, 1}})->ArgNames({"rows", "table"});
BENCHMARK(BM_PerStatementBaseline)
    ->ArgsProduct({{1, 5}, {0, 1}})
    ->ArgNames({"rows", "table"});

}  // namespace
}  // namespace binlog

BENCHMARK_MAIN();
