// binlog_gen: writes a synthetic binlog with binlog::Binlog, for
// binlogtool's tests and its throughput measurement.
//
//   binlog_gen --dir=DIR [--basename=binlog] (--bytes=N | --transactions=N)
//              [--rows=N] [--max-file-size=N]
//              [--gtid=mysql|assigned|anonymous] [--tag=TAG]
//              [--uuid=UUID] [--start-time=SECONDS] [--tps=N]
//              [--sleep-ms=N] [--rotate-every=N] [--payload]
//              [--sync=never|group] [--manifest=FILE]
//
// The log assigns each transaction's identity, as it does a server's
// (CommitGtid, binlog/transaction.h): --gtid=mysql commits AUTOMATIC (the
// next GNO of --uuid, the log's Options::server_uuid); --gtid=assigned
// acquires --uuid:i+1 first (Binlog::AcquireGtid) and commits it, as a
// replica applying its source's transactions does; --gtid=anonymous
// commits anonymous transactions. --tag=TAG gives every odd transaction
// (i = 1, 3, ...) the tag (AUTOMATIC:TAG or --uuid:TAG:N): a
// Gtid_tagged_log_event. The log writes the MySQL 8.4 layout (the
// default Options::mysql_layout) with the identity it assigned: the GTID,
// sequence_number (from 1 in each file), last_committed (WRITESET,
// binlog/writeset.h: the rows of different transactions never share a
// key, so each depends only on the history's floor), the commit
// timestamps and transaction_length.
//
// Each transaction is: a Gtid (or Anonymous_gtid, or Gtid_tagged) event,
// a BEGIN Query event, a Table_map of the table `gen`.`types` (25 columns
// of the common MySQL types, with the optional metadata MySQL 8 logs under
// binlog_row_metadata=FULL: signedness, charsets, column names, ENUM/SET
// strings), one Rows v2 event of --rows rows, and an Xid event; the
// Table_map and Rows events come from binlog::RowsWriter. Every 10th
// transaction updates its rows (before and after images), every 10th + 1
// deletes them, the others insert them. With --payload the log compresses
// every transaction (Options::compression kZstd, level 3, threshold 0): all
// but its Gtid event (tagged or not) go into a zstd Transaction_payload
// event, as MySQL 8.0.20+ writes with binlog_transaction_compression=ON
// (a transaction that would not get smaller stays plain, as in MySQL).
//
// Row k (k = 1, 2, ... over the whole run; an update's after image is row
// k + 500000) holds values that are functions of k, so a test can predict
// every decoded value: the comment at each column below gives its formula,
// and tests/tools/binlogtool_features_test.py (expected_row) computes them
// independently, from those formulas, in Python.
//
// Timestamps: transaction i has timestamp --start-time + i / --tps (default:
// the current time, 1000 per second). --manifest writes one JSON line per
// transaction: i, gtid ("uuid:gno", "uuid:tag:gno" or "ANONYMOUS"), file
// (name), file_number, start, end (from the CommitPosition Commit
// returned), timestamp, kind, first_row, rows, last_committed,
// sequence_number and immediate_commit_us (what the log assigned:
// TransactionBuffer::identity()), and committed_us (wall clock when Commit
// returned, for latency tests).

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/keyring.h"
#include "binlog/log.h"
#include "binlog/rows.h"
#include "binlog/rows_writer.h"
#include "io/file_system.h"

ABSL_FLAG(std::string, dir, "", "directory of the log (required)");
ABSL_FLAG(std::string, basename, "binlog", "base name of the binlog files");
ABSL_FLAG(uint64_t, bytes, 0,
          "write transactions until this many bytes (or --transactions)");
ABSL_FLAG(uint64_t, transactions, 0, "number of transactions (or --bytes)");
ABSL_FLAG(uint64_t, rows, 10, "rows per transaction, 1..10000");
ABSL_FLAG(uint64_t, max_file_size, uint64_t{1} << 30,
          "rotate at this file size (--max-file-size)");
ABSL_FLAG(std::string, gtid, "mysql",
          "mysql (AUTOMATIC GTIDs), assigned (acquired uuid:i+1) or anonymous");
ABSL_FLAG(std::string, tag, "",
          "a GTID tag for every odd transaction (MySQL 8.4 tagged GTIDs)");
ABSL_FLAG(std::string, uuid, "3e11fa47-71ca-11e1-9e33-c80aa9429562",
          "server UUID of the GTIDs");
ABSL_FLAG(std::string, start_time, "",
          "timestamp of the first transaction, seconds since the epoch "
          "(--start-time; default: now)");
ABSL_FLAG(uint64_t, tps, 1000, "transactions per second of log time");
ABSL_FLAG(uint64_t, sleep_ms, 0,
          "wall-clock pause after each transaction (--sleep-ms)");
ABSL_FLAG(uint64_t, rotate_every, 0,
          "rotate after every N transactions (--rotate-every)");
ABSL_FLAG(bool, payload, false, "zstd Transaction_payload events");
ABSL_FLAG(std::string, sync, "never", "never or group");
ABSL_FLAG(std::string, manifest, "", "write one JSON line per transaction here");
ABSL_FLAG(std::string, encrypt_keyring_file, "",
          "encrypt the log; write its keys to this file "
          "(--encrypt-keyring-file)");

namespace binlog {
namespace gen {
namespace {

// ---------------------------------------------------------------------------
// Little helpers

void PutLe(std::string* s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}

// ---------------------------------------------------------------------------
// The table `gen`.`types`, described for binlog::RowsWriter (Table_map with
// the optional metadata of binlog_row_metadata=FULL).

TableDef GenTable() {
  auto col = [](const char* name, ColumnType type, uint32_t length,
                bool nullable = false) {
    ColumnDef c;
    c.name = name;
    c.type = type;
    c.length = length;
    c.nullable = nullable;
    c.collation = 255;  // utf8mb4_0900_ai_ci
    return c;
  };
  TableDef t;
  t.table_id = 108;
  t.schema = "gen";
  t.table = "types";
  t.metadata = RowMetadata::kFull;
  t.columns = {
      col("id", kColLong, 0),
      col("u", kColLongLong, 0),          // BIGINT UNSIGNED
      col("tiny", kColTiny, 0),           // TINYINT UNSIGNED
      col("small", kColShort, 0),
      col("mid", kColInt24, 0),
      col("f", kColFloat, 0),
      col("d", kColDouble, 0),
      col("dec", kColNewDecimal, 10),     // DECIMAL(10,4)
      col("name", kColVarchar, 256),      // VARCHAR(64) utf8mb4: 256 bytes
      col("code", kColString, 8),         // CHAR(8) latin1
      col("body", kColBlob, 2, true),     // BLOB (binary)
      col("day", kColDate, 0),
      col("tm", kColTime2, 3),
      col("dt", kColDatetime2, 6),
      col("ts", kColTimestamp2, 2),
      col("yr", kColYear, 0),
      col("st", kColEnum, 4),
      col("tags", kColSet, 4),
      col("bits", kColBit, 12),
      col("doc", kColJson, 4),
      col("nul", kColLong, 0, true),
      col("dec0", kColNewDecimal, 30),    // DECIMAL(30,10)
      col("tsold", kColTimestamp, 0),
      col("dtold", kColDatetime, 0),
      col("told", kColTime, 0),
  };
  t.columns[1].is_unsigned = true;
  t.columns[2].is_unsigned = true;
  t.columns[7].scale = 4;
  t.columns[9].collation = 8;    // latin1
  t.columns[10].collation = 63;  // binary
  t.columns[16].enum_values = {"new", "paid", "shipped", "void"};
  t.columns[17].enum_values = {"a", "b", "c", "d"};
  t.columns[21].scale = 10;
  t.primary_key = {0};
  return t;
}

std::string Le(uint64_t v, int n) {
  std::string s;
  PutLe(&s, v, n);
  return s;
}

// {"a":[1,true,null],"k":K,"s":"vK"} in MySQL's binary JSON.
std::string JsonDoc(int64_t k) {
  std::string s = absl::StrCat("v", k);
  std::string obj;
  const uint16_t header = 4 + 3 * 4 + 3 * 3;  // counts, key and value entries
  const uint16_t keys = header;
  const uint16_t array_at = keys + 3;
  const uint16_t array_size = 4 + 3 * 3;
  const uint16_t int_at = array_at + array_size;
  const uint16_t str_at = int_at + 4;
  const uint16_t size = static_cast<uint16_t>(str_at + 1 + s.size());
  PutLe(&obj, 3, 2);
  PutLe(&obj, size, 2);
  for (int i = 0; i < 3; ++i) {
    PutLe(&obj, keys + i, 2);
    PutLe(&obj, 1, 2);
  }
  obj.push_back(0x02);  // small array
  PutLe(&obj, array_at, 2);
  obj.push_back(0x07);  // int32 (not inlined in a small object)
  PutLe(&obj, int_at, 2);
  obj.push_back(0x0c);  // string
  PutLe(&obj, str_at, 2);
  obj += "aks";
  PutLe(&obj, 3, 2);
  PutLe(&obj, array_size, 2);
  obj += std::string("\x05\x01\x00", 3);  // int16 1, inlined
  obj += std::string("\x04\x01\x00", 3);  // true
  obj += std::string("\x04\x00\x00", 3);  // null
  obj += Le(static_cast<uint32_t>(static_cast<int32_t>(k)), 4);
  obj.push_back(static_cast<char>(s.size()));
  obj += s;
  return std::string(1, '\x00') + obj;  // type: small object
}


// The values of row k; the strings they point to live in `*keep`.
void RowValues(int64_t k, std::vector<Value>* v, std::vector<std::string>* keep) {
  const uint64_t uk = static_cast<uint64_t>(k);
  keep->assign(6, std::string());  // never grown below: values point into it
  v->clear();
  v->push_back(Value::Int(k));                                   // id
  v->push_back(Value::UInt(0 - uk));                             // u
  v->push_back(Value::UInt((uk * 7) % 256));                     // tiny
  v->push_back(Value::Int(-((k * 13) % 32768)));                 // small
  v->push_back(Value::Int((k * 1000003) % 16777216 - 8388608));  // mid
  v->push_back(Value::Double(static_cast<float>(k) + 0.25f));    // f
  v->push_back(Value::Double(static_cast<double>(k) / 3.0));     // d
  {  // dec DECIMAL(10,4): (-1)^k * (k * 12345 mod 10^10) / 10^4
    uint64_t x = (uk * 12345) % 10000000000ull;
    (*keep)[0] = absl::StrCat(k % 2 == 1 ? "-" : "", x / 10000, ".",
                              absl::StrCat(10000 + x % 10000).substr(1));
    v->push_back(Value::Decimal((*keep)[0]));
  }
  // name VARCHAR(64): "n<k>-é" + "z" * (k % 40)
  (*keep)[1] = absl::StrCat("n", k, "-\xc3\xa9", std::string(k % 40, 'z'));
  v->push_back(Value::Bytes((*keep)[1]));
  (*keep)[2] = absl::StrCat("c", k % 10000000);                  // code CHAR(8)
  v->push_back(Value::Bytes((*keep)[2]));
  if (k % 5 == 0) {  // body BLOB: bytes (k * i) % 256, i < k % 7; NULL
    v->push_back(Value::Null());
  } else {
    for (int64_t i = 0; i < k % 7; ++i) (*keep)[3].push_back(static_cast<char>((k * i) % 256));
    v->push_back(Value::Bytes((*keep)[3]));
  }
  // day DATE: (1990 + k % 40)-(1 + k % 12)-(1 + k % 28)
  v->push_back(Value::Time(MakeTemporal(1990 + k % 40, 1 + k % 12, 1 + k % 28, 0, 0, 0)));
  // tm TIME(3): [-](k % 839):(k % 60):(k * 7 % 60).(k % 1000), - for odd k
  v->push_back(Value::Time(
      MakeTemporal(0, 0, 0, k % 839, k % 60, k * 7 % 60, (k % 1000) * 1000, k % 2 == 1)));
  // dt DATETIME(6)
  v->push_back(Value::Time(MakeTemporal(2000 + k % 100, 1 + k % 12, 1 + k % 28, k % 24,
                              k % 60, k * 11 % 60, k * 7919 % 1000000)));
  // ts TIMESTAMP(2)
  v->push_back(Value::Timestamp(static_cast<int64_t>(1700000000 + uk * 3601),
                                static_cast<uint32_t>(uk % 100 * 10000)));
  v->push_back(Value::Int(static_cast<int64_t>(1901 + uk % 255)));  // yr YEAR
  v->push_back(Value::UInt(1 + uk % 4));                             // st ENUM
  v->push_back(Value::UInt(uk % 16));                                // tags SET
  v->push_back(Value::UInt(uk % 4096));                              // bits BIT(12)
  (*keep)[4] = JsonDoc(k);                                           // doc JSON
  v->push_back(Value::Bytes((*keep)[4]));
  v->push_back(k % 3 == 0 ? Value::Null() : Value::Int(-k));        // nul
  {  // dec0 DECIMAL(30,10): (-1)^(k+1) * ((k * 123456789012345) mod 2^64)
     //   . (k * 7 mod 10^10); 2^64 < 10^20 fits the 20 integer digits
    uint64_t ip = uk * 123456789012345ull;  // wraps mod 2^64
    std::string frac = std::to_string(uk * 7 % 10000000000ull);
    frac.insert(0, 10 - frac.size(), '0');
    (*keep)[5] = absl::StrCat(k % 2 == 0 ? "-" : "", ip, ".", frac);
    v->push_back(Value::Decimal((*keep)[5]));
  }
  v->push_back(Value::Timestamp(static_cast<int64_t>(1600000000 + uk)));  // tsold
  // dtold DATETIME (old): (1980 + k % 20)-(1 + k % 12)-(1 + k % 28) (k % 24):(k % 60):(k % 60)
  v->push_back(Value::Time(
      MakeTemporal(1980 + k % 20, 1 + k % 12, 1 + k % 28, k % 24, k % 60, k % 60)));
  // told TIME (old): [-](k % 100):(k % 60):(k * 3 % 60), - when k % 5 == 0
  v->push_back(Value::Time(MakeTemporal(0, 0, 0, k % 100, k % 60, k * 3 % 60, 0, k % 5 == 0)));
}

// ---------------------------------------------------------------------------

struct Flags {
  std::string dir;
  std::string basename;
  uint64_t bytes = 0;
  uint64_t transactions = 0;
  uint64_t rows = 0;
  uint64_t max_file_size = 0;
  bool mysql_gtid = true;
  bool assigned = false;
  Tag tag;
  Uuid uuid;
  bool have_start_time = false;
  uint64_t start_time = 0;
  uint64_t tps = 0;
  uint64_t sleep_ms = 0;
  uint64_t rotate_every = 0;
  bool payload = false;
  bool sync = false;
  std::string manifest;
  std::string keyring_file;  // encrypt; write the keys there
};

int Usage(absl::string_view msg) {
  std::fprintf(stderr, "binlog_gen: %s\n%s", std::string(msg).c_str(),
               std::string(absl::ProgramUsageMessage()).c_str());
  return 2;
}

// The command line spells multi-word flags with dashes (--max-file-size),
// as the tests and scripts that run binlog_gen do; absl flag names are C
// identifiers. Rewrites the name part of each "--a-b[=v]" to "--a_b[=v]"
// (values are left alone) before absl parses the line.
std::vector<char*> UnderscoreFlagNames(int argc, char** argv,
                                       std::vector<std::string>* storage) {
  storage->assign(argv, argv + argc);
  std::vector<char*> out;
  for (std::string& a : *storage) {
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      size_t end = std::min(a.find('='), a.size());
      std::replace(a.begin() + 2, a.begin() + end, '-', '_');
    }
    out.push_back(a.data());
  }
  return out;
}

bool ReadFlags(Flags* f, std::string* err) {
  f->dir = absl::GetFlag(FLAGS_dir);
  f->basename = absl::GetFlag(FLAGS_basename);
  f->bytes = absl::GetFlag(FLAGS_bytes);
  f->transactions = absl::GetFlag(FLAGS_transactions);
  f->rows = absl::GetFlag(FLAGS_rows);
  f->max_file_size = absl::GetFlag(FLAGS_max_file_size);
  const std::string gtid = absl::GetFlag(FLAGS_gtid);
  if (gtid != "mysql" && gtid != "assigned" && gtid != "anonymous") {
    *err = "--gtid must be mysql, assigned or anonymous";
    return false;
  }
  f->mysql_gtid = gtid != "anonymous";
  f->assigned = gtid == "assigned";
  absl::StatusOr<Tag> tag = Tag::Parse(absl::GetFlag(FLAGS_tag));
  if (!tag.ok()) {
    *err = absl::StrCat("bad --tag: ", tag.status().message());
    return false;
  }
  f->tag = *tag;
  if (!f->tag.empty() && !f->mysql_gtid) {
    *err = "--tag needs --gtid=mysql or assigned";
    return false;
  }
  absl::StatusOr<Uuid> uuid = Uuid::Parse(absl::GetFlag(FLAGS_uuid));
  if (!uuid.ok()) {
    *err = "bad --uuid";
    return false;
  }
  f->uuid = *uuid;
  const std::string start_time = absl::GetFlag(FLAGS_start_time);
  if (!start_time.empty()) {
    if (!absl::SimpleAtoi(start_time, &f->start_time)) {
      *err = absl::StrCat("bad number in --start-time=", start_time);
      return false;
    }
    f->have_start_time = true;
  }
  f->tps = absl::GetFlag(FLAGS_tps);
  if (f->tps == 0) {
    *err = "--tps must be at least 1";
    return false;
  }
  f->sleep_ms = absl::GetFlag(FLAGS_sleep_ms);
  f->rotate_every = absl::GetFlag(FLAGS_rotate_every);
  f->payload = absl::GetFlag(FLAGS_payload);
  const std::string sync = absl::GetFlag(FLAGS_sync);
  if (sync != "never" && sync != "group") {
    *err = "--sync must be never or group";
    return false;
  }
  f->sync = sync == "group";
  f->manifest = absl::GetFlag(FLAGS_manifest);
  f->keyring_file = absl::GetFlag(FLAGS_encrypt_keyring_file);
  if (f->dir.empty()) {
    *err = "--dir is required";
    return false;
  }
  if ((f->bytes == 0) == (f->transactions == 0)) {
    *err = "give one of --bytes and --transactions";
    return false;
  }
  if (f->rows == 0 || f->rows > 10000) {
    *err = "--rows must be 1..10000";
    return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "writes a synthetic binlog.\n"
      "usage: binlog_gen --dir=DIR (--bytes=N | --transactions=N) "
      "[--basename=NAME] [--rows=N]\n"
      "  [--max-file-size=N] [--gtid=mysql|assigned|anonymous] [--tag=TAG]\n"
      "  [--uuid=UUID]\n"
      "  [--start-time=SECONDS] [--tps=N] [--sleep-ms=N]\n"
      "  [--rotate-every=N] [--payload] [--sync=never|group]\n"
      "  [--manifest=FILE] [--encrypt-keyring-file=FILE]\n");
  std::vector<std::string> arg_storage;
  std::vector<char*> args = UnderscoreFlagNames(argc, argv, &arg_storage);
  std::vector<char*> rest =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  Flags f;
  std::string err;
  if (rest.size() > 1) return Usage(absl::StrCat("unexpected argument ", rest[1]));
  if (!ReadFlags(&f, &err)) return Usage(err);
  io::FileSystem* fs = io::FileSystem::Default();
  uint64_t start = f.have_start_time
                       ? f.start_time
                       : static_cast<uint64_t>(absl::ToUnixSeconds(absl::Now()));
  std::atomic<uint32_t> now{static_cast<uint32_t>(start)};

  Options o;
  o.server_uuid = f.uuid;
  o.max_file_size = f.max_file_size;
  o.sync_policy = f.sync ? SyncPolicy::kEveryGroup : SyncPolicy::kNever;
  o.now_seconds = [&now] { return now.load(); };
  if (f.payload) {
    o.compression = io::Codec::kZstd;
    o.compression_level = 3;
    o.compression_threshold = 0;
  }
  // --encrypt-keyring-file: an encrypted log (MySQL's format) whose master
  // keys are written to that file in binlogtool's --keyring_file format.
  MemoryKeyring keyring;
  if (!f.keyring_file.empty()) {
    o.encryption = true;
    o.keyring = &keyring;
  }
  auto log = Binlog::Open(f.dir, f.basename, o);
  if (log.ok() && !f.keyring_file.empty()) {
    // Owner-only (0600) and synced: the keys decrypt the whole log.
    absl::Status ks = WriteKeyringFile(fs, f.keyring_file, keyring);
    if (!ks.ok()) {
      std::fprintf(stderr, "binlog_gen: cannot write %s: %s\n", f.keyring_file.c_str(),
                   std::string(ks.message()).c_str());
      return 1;
    }
  }
  if (!log.ok()) {
    std::fprintf(stderr, "binlog_gen: %s\n", std::string(log.status().message()).c_str());
    return 1;
  }
  // The manifest: one line per transaction, visible to a reader as soon as
  // it is written (positioned writes at the end this loop tracks).
  std::unique_ptr<io::WritableFile> manifest;
  uint64_t manifest_end = 0;
  if (!f.manifest.empty()) {
    auto m = fs->OpenWritable(f.manifest, io::OpenMode::kCreateOrTruncate);
    if (!m.ok()) {
      std::fprintf(stderr, "binlog_gen: manifest: %s\n",
                   std::string(m.status().message()).c_str());
      return 1;
    }
    manifest = std::move(*m);
  }
  RowsWriterOptions wo;
  wo.max_event_size = size_t{1} << 30;  // one Rows event per transaction
  auto writer = RowsWriter::Create(wo);
  auto table = writer->DescribeTable(GenTable());
  if (!table.ok()) {
    std::fprintf(stderr, "binlog_gen: %s\n", std::string(table.status().message()).c_str());
    return 1;
  }
  TransactionBuffer txn(true);
  std::vector<Value> before, after;
  // The strings a row's values point to.
  std::vector<std::string> keep_before, keep_after;
  uint64_t written = 0;
  int64_t next_row = 1;
  for (uint64_t i = 0;; ++i) {
    if (f.transactions > 0 ? i >= f.transactions : written >= f.bytes) break;
    uint32_t ts = static_cast<uint32_t>(start + i / f.tps);
    now.store(ts);
    txn.Clear();
    // The identity as a server asks for it; the log assigns it at Commit.
    CommitGtid g;
    if (!f.mysql_gtid) {
      g.kind = CommitGtid::Kind::kAnonymous;
    } else {
      if (i % 2 == 1) g.tag = f.tag;
      if (f.assigned) {
        g.kind = CommitGtid::Kind::kAssigned;
        g.uuid = f.uuid;
        g.gno = static_cast<int64_t>(i + 1);
        absl::Status as = (*log)->AcquireGtid(Tsid(g.uuid, g.tag), g.gno);
        if (!as.ok()) {
          std::fprintf(stderr, "binlog_gen: acquire: %s\n", std::string(as.message()).c_str());
          return 1;
        }
      }
    }
    txn.AppendCommitGtid(ts, 1, g);
    const char* kind = i % 10 == 8 ? "update" : i % 10 == 9 ? "delete" : "write";
    AppendQuery(&txn, ts, /*server_id=*/1, /*thread_id=*/7, "gen", "BEGIN",
                kFlagSuppressUse);
    int64_t first_row = next_row;
    absl::Status rs = writer->BeginStatement(&txn, ts);
    for (uint64_t r = 0; r < f.rows && rs.ok(); ++r) {
      RowValues(next_row, &before, &keep_before);
      if (i % 10 == 8) {
        RowValues(next_row + 500000, &after, &keep_after);
        rs = writer->Update(*table, before, after);
      } else if (i % 10 == 9) {
        rs = writer->Delete(*table, before);
      } else {
        rs = writer->Insert(*table, before);
      }
      ++next_row;
    }
    if (rs.ok()) rs = writer->EndStatement();
    if (!rs.ok()) {
      std::fprintf(stderr, "binlog_gen: rows: %s\n", std::string(rs.message()).c_str());
      return 1;
    }
    AppendXid(&txn, ts, 1, 1000 + i);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) {
      std::fprintf(stderr, "binlog_gen: commit: %s\n",
                   std::string(pos.status().message()).c_str());
      return 1;
    }
    written += txn.size();
    if (manifest != nullptr) {
      const AssignedIdentity& id = txn.identity();
      std::string gtid;
      if (f.mysql_gtid) {
        gtid = absl::StrCat(Tsid(id.uuid, id.tag).ToString(), ":", id.gno);
      } else {
        gtid = "ANONYMOUS";
      }
      std::string line = absl::StrCat(
          "{\"i\":", i, ",\"gtid\":\"", gtid, "\",\"file\":\"",
          BinlogFileName(f.basename, pos->file_number),
          "\",\"file_number\":", pos->file_number, ",\"start\":", pos->start,
          ",\"end\":", pos->end, ",\"timestamp\":", ts, ",\"kind\":\"", kind,
          "\",\"first_row\":", first_row, ",\"rows\":", f.rows,
          ",\"last_committed\":", id.last_committed,
          ",\"sequence_number\":", id.sequence_number,
          ",\"immediate_commit_us\":", id.immediate_commit_timestamp_us,
          ",\"committed_us\":", absl::ToUnixMicros(absl::Now()), "}\n");
      absl::Status ms = manifest->Write(manifest_end, line);
      if (!ms.ok()) {
        std::fprintf(stderr, "binlog_gen: manifest: %s\n",
                     std::string(ms.message()).c_str());
        return 1;
      }
      manifest_end += line.size();
    }
    if (f.rotate_every > 0 && (i + 1) % f.rotate_every == 0) {
      absl::Status s = (*log)->Rotate();
      if (!s.ok()) {
        std::fprintf(stderr, "binlog_gen: rotate: %s\n", std::string(s.message()).c_str());
        return 1;
      }
    }
    if (f.sleep_ms > 0) absl::SleepFor(absl::Milliseconds(static_cast<int64_t>(f.sleep_ms)));
  }
  absl::Status s = (*log)->Close();
  if (manifest != nullptr) {
    absl::Status ms = manifest->Close();
    if (s.ok()) s = ms;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "binlog_gen: close: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace gen
}  // namespace binlog

int main(int argc, char** argv) { return binlog::gen::Main(argc, argv); }
