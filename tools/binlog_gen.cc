// binlog_gen: writes a synthetic binlog with binlog::Binlog, for
// binlogtool's tests and its throughput measurement.
//
//   binlog_gen --dir=DIR [--basename=binlog] (--bytes=N | --transactions=N)
//              [--rows=N] [--max-file-size=N] [--gtid=mysql|anonymous]
//              [--uuid=UUID] [--start-time=SECONDS] [--tps=N]
//              [--sleep-ms=N] [--rotate-every=N] [--payload]
//              [--sync=never|group] [--manifest=FILE]
//
// Each transaction is: a Gtid (or Anonymous_gtid) event with logical clocks
// (last_committed = i, sequence_number = i + 1), a BEGIN Query event, a
// Table_map of the table `gen`.`types` (25 columns of the common MySQL
// types, with the optional metadata MySQL 8 logs under
// binlog_row_metadata=FULL: signedness, charsets, column names, ENUM/SET
// strings), one Rows v2 event of --rows rows, and an Xid event. Every 10th
// transaction updates its rows (before and after images), every 10th + 1
// deletes them, the others insert them. With --payload every transaction
// but the Gtid event is stored in a zstd Transaction_payload event, as
// MySQL 8.0.20+ writes with binlog_transaction_compression=ON.
//
// Row k (k = 1, 2, ... over the whole run; an update's after image is row
// k + 500000) holds values that are functions of k, so a test can predict
// every decoded value: the comment at each column below gives its formula,
// and tests/tools/binlogtool_features_test.py (expected_row) computes them
// independently, from those formulas, in Python.
//
// Timestamps: transaction i has timestamp --start-time + i / --tps (default:
// the current time, 1000 per second). --manifest writes one JSON line per
// transaction: i, gtid, file (name), file_number, start, end (from the
// CommitPosition Commit returned), timestamp, kind, first_row, rows, and
// committed_us (wall clock when Commit returned, for latency tests).

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <zstd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"

namespace binlog {
namespace gen {
namespace {

// ---------------------------------------------------------------------------
// Little helpers

void PutLe(std::string* s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutBe(std::string* s, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutPacked(std::string* s, uint64_t v) {
  if (v < 251) {
    s->push_back(static_cast<char>(v));
  } else if (v < (1u << 16)) {
    s->push_back(static_cast<char>(0xFC));
    PutLe(s, v, 2);
  } else if (v < (1u << 24)) {
    s->push_back(static_cast<char>(0xFD));
    PutLe(s, v, 3);
  } else {
    s->push_back(static_cast<char>(0xFE));
    PutLe(s, v, 8);
  }
}
void PutPackedString(std::string* s, absl::string_view v) {
  PutPacked(s, v.size());
  s->append(v.data(), v.size());
}

// ---------------------------------------------------------------------------
// The table `gen`.`types`

enum Type : uint8_t {
  kTiny = 1, kShort = 2, kLong = 3, kFloat = 4, kDouble = 5, kTimestamp = 7,
  kLongLong = 8, kInt24 = 9, kDate = 10, kTime = 11, kDatetime = 12,
  kYear = 13, kVarchar = 15, kBit = 16, kTimestamp2 = 17, kDatetime2 = 18,
  kTime2 = 19, kJson = 245, kNewDecimal = 246, kEnum = 247, kSet = 248,
  kBlob = 252, kString = 254,
};

struct ColumnDef {
  const char* name;
  uint8_t type;
  std::string meta;
  bool nullable;
};

std::vector<ColumnDef> Columns() {
  auto m = [](std::initializer_list<int> b) {
    std::string s;
    for (int x : b) s.push_back(static_cast<char>(x));
    return s;
  };
  return {
      {"id", kLong, "", false},
      {"u", kLongLong, "", false},          // BIGINT UNSIGNED
      {"tiny", kTiny, "", false},           // TINYINT UNSIGNED
      {"small", kShort, "", false},
      {"mid", kInt24, "", false},
      {"f", kFloat, m({4}), false},
      {"d", kDouble, m({8}), false},
      {"dec", kNewDecimal, m({10, 4}), false},
      {"name", kVarchar, m({0, 1}), false},  // VARCHAR(64) utf8mb4: 256 bytes
      {"code", kString, m({kString, 8}), false},  // CHAR(8) latin1
      {"body", kBlob, m({2}), true},              // BLOB (binary)
      {"day", kDate, "", false},
      {"tm", kTime2, m({3}), false},
      {"dt", kDatetime2, m({6}), false},
      {"ts", kTimestamp2, m({2}), false},
      {"yr", kYear, "", false},
      {"st", kString, m({kEnum, 1}), false},
      {"tags", kString, m({kSet, 1}), false},
      {"bits", kBit, m({4, 1}), false},  // BIT(12): 4 bits + 1 byte
      {"doc", kJson, m({4}), false},
      {"nul", kLong, "", true},
      {"dec0", kNewDecimal, m({30, 10}), false},
      {"tsold", kTimestamp, "", false},
      {"dtold", kDatetime, "", false},
      {"told", kTime, "", false},
  };
}

std::string TableMapBody(uint64_t table_id) {
  std::vector<ColumnDef> cols = Columns();
  std::string b;
  PutLe(&b, table_id, 6);
  PutLe(&b, 1, 2);  // flags
  for (absl::string_view name : {"gen", "types"}) {
    b.push_back(static_cast<char>(name.size()));
    b.append(name.data(), name.size());
    b.push_back('\0');
  }
  PutPacked(&b, cols.size());
  for (const auto& c : cols) b.push_back(static_cast<char>(c.type));
  std::string meta;
  for (const auto& c : cols) meta += c.meta;
  PutPacked(&b, meta.size());
  b += meta;
  std::string nulls((cols.size() + 7) / 8, '\0');
  for (size_t i = 0; i < cols.size(); ++i) {
    if (cols[i].nullable) nulls[i / 8] |= static_cast<char>(1 << (i % 8));
  }
  b += nulls;
  // Optional metadata (TLV).
  auto tlv = [&b](int type, const std::string& value) {
    b.push_back(static_cast<char>(type));
    PutPacked(&b, value.size());
    b += value;
  };
  // SIGNEDNESS over numeric columns id u tiny small mid f d dec nul dec0:
  // u and tiny unsigned, MSB first.
  tlv(1, std::string("\x60\x00", 2));
  // DEFAULT_CHARSET 255 (utf8mb4_0900_ai_ci); character column 1 (code)
  // latin1 (8), character column 2 (body) binary (63).
  {
    std::string v;
    PutPacked(&v, 255);
    PutPacked(&v, 1);
    PutPacked(&v, 8);
    PutPacked(&v, 2);
    PutPacked(&v, 63);
    tlv(2, v);
  }
  {
    std::string v;
    for (const auto& c : cols) PutPackedString(&v, c.name);
    tlv(4, v);
  }
  {
    std::string v;
    PutPacked(&v, 4);
    for (absl::string_view s : {"a", "b", "c", "d"}) PutPackedString(&v, s);
    tlv(5, v);  // SET_STR_VALUE
  }
  {
    std::string v;
    PutPacked(&v, 4);
    for (absl::string_view s : {"new", "paid", "shipped", "void"}) {
      PutPackedString(&v, s);
    }
    tlv(6, v);  // ENUM_STR_VALUE
  }
  {
    std::string v;
    PutPacked(&v, 0);
    tlv(8, v);  // SIMPLE_PRIMARY_KEY: id
  }
  return b;
}

// DECIMAL(precision, scale) in MySQL's binary form, from decimal digits.
void PutDecimal(std::string* out, bool negative, std::string int_digits,
                std::string frac_digits, int precision, int scale) {
  static const int kDig2Bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  int intg = precision - scale;
  int_digits.insert(0, static_cast<size_t>(intg) - int_digits.size(), '0');
  frac_digits.resize(static_cast<size_t>(scale), '0');
  std::string b;
  auto group = [&b](const std::string& digits) {
    uint64_t v = 0;
    for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
    PutBe(&b, v, kDig2Bytes[digits.size()]);
  };
  size_t lead = static_cast<size_t>(intg % 9);
  if (lead > 0) group(int_digits.substr(0, lead));
  for (size_t i = lead; i < int_digits.size(); i += 9) group(int_digits.substr(i, 9));
  size_t full = static_cast<size_t>(scale / 9) * 9;
  for (size_t i = 0; i < full; i += 9) group(frac_digits.substr(i, 9));
  if (full < frac_digits.size()) group(frac_digits.substr(full));
  b[0] = static_cast<char>(b[0] ^ 0x80);
  if (negative) {
    for (char& c : b) c = static_cast<char>(~c);
  }
  *out += b;
}

void PutLengthPrefixed(std::string* out, absl::string_view v, int prefix) {
  PutLe(out, v.size(), prefix);
  out->append(v.data(), v.size());
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
  PutLe(&obj, static_cast<uint32_t>(static_cast<int32_t>(k)), 4);
  obj.push_back(static_cast<char>(s.size()));
  obj += s;
  return std::string(1, '\x00') + obj;  // type: small object
}

// The image of row k: NULL bitmap over the 25 columns, then the values.
void PutRow(std::string* out, int64_t k) {
  const uint64_t uk = static_cast<uint64_t>(k);
  std::string nulls(4, '\0');
  const bool body_null = k % 5 == 0;
  const bool nul_null = k % 3 == 0;
  if (body_null) nulls[10 / 8] |= static_cast<char>(1 << (10 % 8));
  if (nul_null) nulls[20 / 8] |= static_cast<char>(1 << (20 % 8));
  *out += nulls;
  PutLe(out, static_cast<uint32_t>(static_cast<int32_t>(k)), 4);       // id
  PutLe(out, 0 - uk, 8);                                               // u
  PutLe(out, (uk * 7) % 256, 1);                                       // tiny
  PutLe(out, static_cast<uint16_t>(-static_cast<int16_t>((k * 13) % 32768)), 2);
  PutLe(out, static_cast<uint32_t>((k * 1000003) % 16777216 - 8388608), 3);
  {
    float f = static_cast<float>(k) + 0.25f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    PutLe(out, bits, 4);
  }
  {
    double d = static_cast<double>(k) / 3.0;
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    PutLe(out, bits, 8);
  }
  {  // dec DECIMAL(10,4): (-1)^k * (k * 12345 mod 10^10) / 10^4
    uint64_t v = (uk * 12345) % 10000000000ull;
    PutDecimal(out, k % 2 == 1, std::to_string(v / 10000),
               absl::StrCat(10000 + v % 10000).substr(1), 10, 4);
  }
  {  // name VARCHAR(64): "n<k>-é" + "z" * (k % 40), 2-byte length
    std::string name = absl::StrCat("n", k, "-\xc3\xa9", std::string(k % 40, 'z'));
    PutLengthPrefixed(out, name, 2);
  }
  PutLengthPrefixed(out, absl::StrCat("c", k % 10000000), 1);  // code CHAR(8)
  if (!body_null) {  // body BLOB: bytes (k * i) % 256, i < k % 7
    std::string body;
    for (int64_t i = 0; i < k % 7; ++i) body.push_back(static_cast<char>((k * i) % 256));
    PutLengthPrefixed(out, body, 2);
  }
  {  // day DATE: (1990 + k % 40)-(1 + k % 12)-(1 + k % 28)
    uint32_t v = static_cast<uint32_t>((1 + k % 28) | ((1 + k % 12) << 5) |
                                       ((1990 + k % 40) << 9));
    PutLe(out, v, 3);
  }
  {  // tm TIME(3): [-](k % 839):(k % 60):(k * 7 % 60).(k % 1000), - for odd k
    int64_t hms = ((k % 839) << 12) | ((k % 60) << 6) | (k * 7 % 60);
    int64_t packed = hms * (int64_t{1} << 24) + (k % 1000) * 1000;
    if (k % 2 == 1) packed = -packed;
    int64_t intpart = packed >> 24;  // floor, as MySQL's packed format
    int64_t frac = packed % (int64_t{1} << 24);
    PutBe(out, static_cast<uint64_t>(0x800000 + intpart), 3);
    PutBe(out, static_cast<uint64_t>(frac / 100) & 0xFFFF, 2);
  }
  {  // dt DATETIME(6)
    uint64_t ymd = (((2000 + uk % 100) * 13 + (1 + uk % 12)) << 5) | (1 + uk % 28);
    uint64_t hms = ((uk % 24) << 12) | ((uk % 60) << 6) | (uk * 11 % 60);
    PutBe(out, ((ymd << 17) | hms) + 0x8000000000ull, 5);
    PutBe(out, uk * 7919 % 1000000, 3);
  }
  PutBe(out, 1700000000 + uk * 3601, 4);  // ts TIMESTAMP(2)
  PutBe(out, uk % 100, 1);
  PutLe(out, (1901 + uk % 255) - 1900, 1);  // yr YEAR
  PutLe(out, 1 + uk % 4, 1);                // st ENUM
  PutLe(out, uk % 16, 1);                   // tags SET
  PutBe(out, uk % 4096, 2);                 // bits BIT(12)
  PutLengthPrefixed(out, JsonDoc(k), 4);    // doc JSON
  if (!nul_null) PutLe(out, static_cast<uint32_t>(static_cast<int32_t>(-k)), 4);
  {  // dec0 DECIMAL(30,10): (-1)^(k+1) * ((k * 123456789012345) mod 2^64)
     //   . (k * 7 mod 10^10); 2^64 < 10^20 fits the 20 integer digits
    uint64_t ip = uk * 123456789012345ull;  // wraps mod 2^64
    uint64_t fp = uk * 7 % 10000000000ull;
    std::string frac = std::to_string(fp);
    frac.insert(0, 10 - frac.size(), '0');
    PutDecimal(out, k % 2 == 0, std::to_string(ip), frac, 30, 10);
  }
  PutLe(out, 1600000000 + uk, 4);  // tsold TIMESTAMP (old)
  {  // dtold DATETIME (old): (1980 + k % 20)-(1 + k % 12)-(1 + k % 28) (k % 24):(k % 60):(k % 60)
    uint64_t v = ((1980 + uk % 20) * 10000 + (1 + uk % 12) * 100 + (1 + uk % 28)) * 1000000 +
                 (uk % 24) * 10000 + (uk % 60) * 100 + uk % 60;
    PutLe(out, v, 8);
  }
  {  // told TIME (old): [-](k % 100):(k % 60):(k * 3 % 60), - when k % 5 == 0
    int64_t v = (k % 100) * 10000 + (k % 60) * 100 + k * 3 % 60;
    if (k % 5 == 0) v = -v;
    PutLe(out, static_cast<uint32_t>(v) & 0xFFFFFF, 3);
  }
}

// ---------------------------------------------------------------------------

struct Flags {
  std::string dir;
  std::string basename = "binlog";
  uint64_t bytes = 0;
  uint64_t transactions = 0;
  uint64_t rows = 10;
  uint64_t max_file_size = 1ull << 30;
  bool mysql_gtid = true;
  Uuid uuid = {{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33,
               0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}};
  bool have_start_time = false;
  uint64_t start_time = 0;
  uint64_t tps = 1000;
  uint64_t sleep_ms = 0;
  uint64_t rotate_every = 0;
  bool payload = false;
  bool sync = false;
  std::string manifest;
};

int Usage(absl::string_view msg) {
  std::fprintf(stderr,
               "binlog_gen: %s\nusage: binlog_gen --dir=DIR (--bytes=N | "
               "--transactions=N) [--basename=NAME] [--rows=N]\n"
               "  [--max-file-size=N] [--gtid=mysql|anonymous] [--uuid=UUID]\n"
               "  [--start-time=SECONDS] [--tps=N] [--sleep-ms=N]\n"
               "  [--rotate-every=N] [--payload] [--sync=never|group]\n"
               "  [--manifest=FILE]\n",
               std::string(msg).c_str());
  return 2;
}

bool ParseFlags(int argc, char** argv, Flags* f, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    size_t eq = a.find('=');
    absl::string_view name = a.substr(0, eq);
    absl::string_view value = eq == absl::string_view::npos ? "" : a.substr(eq + 1);
    auto num = [&](uint64_t* v) {
      if (!absl::SimpleAtoi(value, v)) {
        *err = absl::StrCat("bad number in ", a);
        return false;
      }
      return true;
    };
    if (name == "--dir") {
      f->dir = std::string(value);
    } else if (name == "--basename") {
      f->basename = std::string(value);
    } else if (name == "--bytes") {
      if (!num(&f->bytes)) return false;
    } else if (name == "--transactions") {
      if (!num(&f->transactions)) return false;
    } else if (name == "--rows") {
      if (!num(&f->rows)) return false;
    } else if (name == "--max-file-size") {
      if (!num(&f->max_file_size)) return false;
    } else if (name == "--gtid") {
      if (value != "mysql" && value != "anonymous") {
        *err = "--gtid must be mysql or anonymous";
        return false;
      }
      f->mysql_gtid = value == "mysql";
    } else if (name == "--uuid") {
      absl::StatusOr<Uuid> uuid = Uuid::Parse(value);
      if (!uuid.ok()) {
        *err = "bad --uuid";
        return false;
      }
      f->uuid = *uuid;
    } else if (name == "--start-time") {
      if (!num(&f->start_time)) return false;
      f->have_start_time = true;
    } else if (name == "--tps") {
      if (!num(&f->tps) || f->tps == 0) return false;
    } else if (name == "--sleep-ms") {
      if (!num(&f->sleep_ms)) return false;
    } else if (name == "--rotate-every") {
      if (!num(&f->rotate_every)) return false;
    } else if (name == "--payload") {
      f->payload = true;
    } else if (name == "--sync") {
      if (value != "never" && value != "group") {
        *err = "--sync must be never or group";
        return false;
      }
      f->sync = value == "group";
    } else if (name == "--manifest") {
      f->manifest = std::string(value);
    } else {
      *err = absl::StrCat("unknown flag ", a);
      return false;
    }
  }
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

// An event as stored inside a Transaction_payload: header with log_pos 0,
// no checksum footer.
void PutInnerEvent(std::string* out, uint8_t type, uint32_t ts,
                   absl::string_view body) {
  EventHeader h;
  h.timestamp = ts;
  h.type = type;
  h.server_id = 1;
  h.event_size = static_cast<uint32_t>(kHeaderSize + body.size());
  h.log_pos = 0;
  h.flags = 0;
  char hdr[kHeaderSize];
  EncodeHeader(h, hdr);
  out->append(hdr, kHeaderSize);
  out->append(body.data(), body.size());
}

int Main(int argc, char** argv) {
  Flags f;
  std::string err;
  if (!ParseFlags(argc, argv, &f, &err)) return Usage(err);
  uint64_t start = f.have_start_time
                       ? f.start_time
                       : static_cast<uint64_t>(absl::ToUnixSeconds(absl::Now()));
  std::atomic<uint32_t> now{static_cast<uint32_t>(start)};

  Options o;
  o.max_file_size = f.max_file_size;
  o.sync_policy = f.sync ? SyncPolicy::kEveryGroup : SyncPolicy::kNever;
  o.now_seconds = [&now] { return now.load(); };
  auto log = Binlog::Open(f.dir, f.basename, o);
  if (!log.ok()) {
    std::fprintf(stderr, "binlog_gen: %s\n", std::string(log.status().message()).c_str());
    return 1;
  }
  FILE* manifest = nullptr;
  if (!f.manifest.empty()) {
    manifest = std::fopen(f.manifest.c_str(), "w");
    if (manifest == nullptr) {
      std::perror("binlog_gen: manifest");
      return 1;
    }
  }
  const std::string table_map = TableMapBody(108);
  TransactionBuffer txn(true);
  std::string rows, inner, payload, compressed;
  uint64_t written = 0;
  int64_t next_row = 1;
  for (uint64_t i = 0;; ++i) {
    if (f.transactions > 0 ? i >= f.transactions : written >= f.bytes) break;
    uint32_t ts = static_cast<uint32_t>(start + i / f.tps);
    now.store(ts);
    txn.Clear();
    int64_t gno = static_cast<int64_t>(i + 1);
    if (f.mysql_gtid) {
      AppendGtid(&txn, ts, 1, f.uuid.bytes, gno, static_cast<int64_t>(i),
                 static_cast<int64_t>(i + 1));
    } else {
      AppendAnonymousGtid(&txn, ts, 1, static_cast<int64_t>(i),
                          static_cast<int64_t>(i + 1));
    }
    const char* kind = i % 10 == 8 ? "update" : i % 10 == 9 ? "delete" : "write";
    uint8_t rows_type = i % 10 == 8 ? kUpdateRowsEvent
                        : i % 10 == 9 ? kDeleteRowsEvent
                                      : kWriteRowsEvent;
    // Rows v2: table id, flags (STMT_END_F), extra data length 2, column
    // count, columns-present bitmap(s), images.
    rows.clear();
    PutLe(&rows, 108, 6);
    PutLe(&rows, 1, 2);
    PutLe(&rows, 2, 2);
    PutPacked(&rows, 25);
    rows += std::string("\xff\xff\xff\x01", 4);
    if (rows_type == kUpdateRowsEvent) rows += std::string("\xff\xff\xff\x01", 4);
    int64_t first_row = next_row;
    for (uint64_t r = 0; r < f.rows; ++r) {
      PutRow(&rows, next_row);
      if (rows_type == kUpdateRowsEvent) PutRow(&rows, next_row + 500000);
      ++next_row;
    }
    std::string begin_body;
    PutLe(&begin_body, 7, 4);   // thread id
    PutLe(&begin_body, 0, 4);   // exec time
    begin_body.push_back(3);    // db length
    PutLe(&begin_body, 0, 2);   // error code
    PutLe(&begin_body, 0, 2);   // status vars
    begin_body += std::string("gen\0BEGIN", 9);
    std::string xid_body;
    PutLe(&xid_body, 1000 + i, 8);
    if (f.payload) {
      inner.clear();
      PutInnerEvent(&inner, kQueryEvent, ts, begin_body);
      PutInnerEvent(&inner, kTableMapEvent, ts, table_map);
      PutInnerEvent(&inner, rows_type, ts, rows);
      PutInnerEvent(&inner, kXidEvent, ts, xid_body);
      compressed.resize(ZSTD_compressBound(inner.size()));
      size_t n = ZSTD_compress(compressed.data(), compressed.size(),
                               inner.data(), inner.size(), 3);
      if (ZSTD_isError(n)) {
        std::fprintf(stderr, "binlog_gen: zstd: %s\n", ZSTD_getErrorName(n));
        return 1;
      }
      compressed.resize(n);
      payload.clear();
      std::string v;
      payload.push_back(2);  // compression type: ZSTD
      PutPacked(&v, 0);
      PutPacked(&payload, v.size());
      payload += v;
      payload.push_back(3);  // uncompressed size
      v.clear();
      PutPacked(&v, inner.size());
      PutPacked(&payload, v.size());
      payload += v;
      payload.push_back(1);  // payload size
      v.clear();
      PutPacked(&v, compressed.size());
      PutPacked(&payload, v.size());
      payload += v;
      payload.push_back(0);  // end mark
      payload += compressed;
      txn.AppendEvent(kTransactionPayloadEvent, 1, ts, 0, payload);
    } else {
      txn.AppendEvent(kQueryEvent, 1, ts, kFlagSuppressUse, begin_body);
      txn.AppendEvent(kTableMapEvent, 1, ts, 0, table_map);
      txn.AppendEvent(rows_type, 1, ts, 0, rows);
      txn.AppendEvent(kXidEvent, 1, ts, 0, xid_body);
    }
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) {
      std::fprintf(stderr, "binlog_gen: commit: %s\n",
                   std::string(pos.status().message()).c_str());
      return 1;
    }
    written += txn.size();
    if (manifest != nullptr) {
      std::string gtid;
      if (f.mysql_gtid) {
        gtid = absl::StrCat(f.uuid.ToString(), ":", gno);
      } else {
        gtid = "ANONYMOUS";
      }
      std::string line = absl::StrCat(
          "{\"i\":", i, ",\"gtid\":\"", gtid, "\",\"file\":\"",
          BinlogFileName(f.basename, pos->file_number),
          "\",\"file_number\":", pos->file_number, ",\"start\":", pos->start,
          ",\"end\":", pos->end, ",\"timestamp\":", ts, ",\"kind\":\"", kind,
          "\",\"first_row\":", first_row, ",\"rows\":", f.rows,
          ",\"committed_us\":", absl::ToUnixMicros(absl::Now()), "}\n");
      std::fputs(line.c_str(), manifest);
      std::fflush(manifest);
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
  if (manifest != nullptr) std::fclose(manifest);
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
