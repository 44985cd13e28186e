// Realistic row-based transactions. See workload.h for what is generated
// and what is simplified.

#include "benchmarks/workload.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"

namespace binlog {
namespace bench {
namespace {

// MySQL column types (enum_field_types).
constexpr uint8_t kTypeTiny = 1;
constexpr uint8_t kTypeLong = 3;
constexpr uint8_t kTypeDouble = 5;
constexpr uint8_t kTypeLongLong = 8;
constexpr uint8_t kTypeVarchar = 15;
constexpr uint8_t kTypeDatetime2 = 18;
constexpr uint8_t kTypeJson = 245;
constexpr uint8_t kTypeBlob = 252;
constexpr uint8_t kTypeString = 254;

constexpr uint16_t kStmtEndF = 0x0001;
constexpr uint64_t kSbtestTableId = 84;
constexpr uint64_t kWideTableId = 85;
constexpr size_t kGtidBodySize = 57;

// The status variables MySQL 8.0 writes on a BEGIN Query event (copied
// field by field from a real 8.0 BEGIN; reference section 6.6): flags2,
// sql_mode, catalog "std", charsets, table_map_for_update, default
// collation for utf8mb4.
constexpr char kBeginStatusVars[] =
    "\x00\x00\x00\x00\x00"
    "\x01\x20\x00\xa0\x45\x00\x00\x00\x00"
    "\x06\x03std"
    "\x04\xff\x00\xff\x00\xff\x00"
    "\x09\x01\x00\x00\x00\x00\x00\x00\x00"
    "\x12\xff\x00";
constexpr size_t kBeginStatusVarsLen = sizeof(kBeginStatusVars) - 1;  // 38

const char* const kFirstNames[] = {
    "james", "mary", "robert", "patricia", "john", "jennifer", "michael",
    "linda", "david", "elizabeth", "william", "barbara", "richard", "susan",
    "joseph", "jessica", "thomas", "sarah", "carlos", "karen", "wei", "li",
    "ahmed", "fatima", "yuki", "hiroshi", "olga", "ivan", "priya", "arjun"};
const char* const kLastNames[] = {
    "smith", "johnson", "williams", "brown", "jones", "garcia", "miller",
    "davis", "rodriguez", "martinez", "hernandez", "lopez", "gonzalez",
    "wilson", "anderson", "thomas", "taylor", "moore", "jackson", "martin",
    "lee", "perez", "thompson", "white", "harris", "sanchez", "clark", "chen",
    "kumar", "nguyen"};
const char* const kDomains[] = {"example.com", "mail.example.org", "corp.example.net",
                                "shop.example.io"};
const char* const kWords[] = {
    "order",    "shipped",  "customer", "requested", "delivery", "window",
    "please",   "leave",    "package",  "at",        "the",      "front",
    "door",     "gift",     "wrap",     "express",   "invoice",  "attached",
    "refund",   "pending",  "review",   "warehouse", "backorder", "item",
    "color",    "size",     "returned", "damaged",   "box",      "call",
    "before",   "arrival",  "weekend",  "morning",   "evening",  "priority"};
const char* const kColors[] = {"red", "green", "blue", "black", "white",
                               "silver", "gold", "navy"};
const char* const kChannels[] = {"web", "ios", "android", "store", "phone"};
const char* const kTags[] = {"promo", "vip", "first_order", "gift",
                             "bulk", "fragile", "international"};

template <typename T, size_t N>
constexpr size_t Count(const T (&)[N]) {
  return N;
}

// A writer over caller memory (no bounds checks: callers size it).
class Out {
 public:
  explicit Out(char* p) : p_(p), start_(p) {}
  void U8(uint64_t v) { *p_++ = static_cast<char>(v); }
  void Le(uint64_t v, size_t n) {
    StoreLeN(p_, v, n);
    p_ += n;
  }
  void Be(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) p_[i] = static_cast<char>(v >> (8 * (n - 1 - i)));
    p_ += n;
  }
  void Bytes(const void* d, size_t n) {
    std::memcpy(p_, d, n);
    p_ += n;
  }
  void Str(absl::string_view s) { Bytes(s.data(), s.size()); }
  void Packed(uint64_t v) {
    if (v < 251) {
      U8(v);
    } else if (v < (1u << 16)) {
      U8(0xfc);
      Le(v, 2);
    } else if (v < (1u << 24)) {
      U8(0xfd);
      Le(v, 3);
    } else {
      U8(0xfe);
      Le(v, 8);
    }
  }
  size_t size() const { return static_cast<size_t>(p_ - start_); }

 private:
  char* p_;
  char* start_;
};

}  // namespace

const char* WorkloadName(Workload w) {
  switch (w) {
    case Workload::kRandom: return "random";
    case Workload::kSysbench: return "sysbench";
    case Workload::kWide: return "wide";
  }
  return "unknown";
}

bool ParseWorkload(absl::string_view name, Workload* w) {
  for (Workload x : {Workload::kRandom, Workload::kSysbench, Workload::kWide}) {
    if (name == WorkloadName(x)) {
      *w = x;
      return true;
    }
  }
  return false;
}

WorkloadGenerator::WorkloadGenerator(const WorkloadOptions& options)
    : o_(options),
      rng_(options.seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull),
      ts_(options.timestamp != 0 ? options.timestamp
                                 : static_cast<uint32_t>(::time(nullptr))) {
  o_.min_rows = std::max(1, std::min(o_.min_rows, 1000));
  o_.max_rows = std::max(o_.min_rows, std::min(o_.max_rows, 1000));
  o_.random_payload = std::max<size_t>(1, o_.random_payload);
  if (rng_ == 0) rng_ = 1;
  scratch_.resize(64 << 10);
}

uint64_t WorkloadGenerator::Rand() {
  // xorshift64*
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

void WorkloadGenerator::Gtid(TransactionBuffer* txn, uint64_t length) {
  // MySQL 8.0 Anonymous_gtid: 42 fixed bytes, immediate commit timestamp,
  // transaction_length, immediate server version.
  char* p = txn->AppendEvent(kAnonymousGtidEvent, o_.server_id, ts_, 0,
                             kGtidBodySize);
  Out w(p);
  w.U8(0);                       // flags: row-based only
  for (int i = 0; i < 16; ++i) w.U8(0);  // SID: anonymous
  w.Le(0, 8);                    // GNO 0
  w.U8(2);                       // logical timestamp typecode
  w.Le(seq_ - 1, 8);             // last_committed
  w.Le(seq_, 8);                 // sequence_number
  w.Le(static_cast<uint64_t>(ts_) * 1000000 + (Rand() % 1000000), 7);
  w.U8(0xfd);                    // transaction_length: always 3 bytes
  w.Le(length, 3);
  w.Le(80036, 4);                // immediate_server_version
}

void WorkloadGenerator::Begin(TransactionBuffer* txn) {
  const size_t body = kQueryPostHeaderSize + kBeginStatusVarsLen + 1 + 5;
  char* p = txn->AppendEvent(kQueryEvent, o_.server_id, ts_, kFlagSuppressUse,
                             body);
  Out w(p);
  w.Le(1000 + (seq_ % 64), 4);  // thread id: 64 client sessions
  w.Le(0, 4);                   // exec time
  w.U8(0);                      // db_len
  w.Le(0, 2);                   // error code
  w.Le(kBeginStatusVarsLen, 2);
  w.Bytes(kBeginStatusVars, kBeginStatusVarsLen);
  w.U8(0);  // empty db + NUL
  w.Str("BEGIN");
}

void WorkloadGenerator::Xid(TransactionBuffer* txn) {
  AppendXid(txn, ts_, o_.server_id, ++xid_);
}

namespace {

// sysbench's c/pad values: groups of 11 random digits joined by '-'.
void DigitGroups(char* out, int groups, uint64_t (*rnd)(void*), void* ctx) {
  for (int g = 0; g < groups; ++g) {
    uint64_t r = rnd(ctx);
    uint64_t r2 = rnd(ctx);
    for (int i = 0; i < 11; ++i) {
      uint64_t& src = i < 6 ? r : r2;
      *out++ = static_cast<char>('0' + src % 10);
      src /= 10;
    }
    if (g + 1 < groups) *out++ = '-';
  }
}

// Table_map body for sbtest1 (reference section 6.7).
size_t SbtestTableMap(char* p) {
  Out w(p);
  w.Le(kSbtestTableId, 6);
  w.Le(1, 2);  // flags
  w.U8(6);
  w.Str("sbtest");
  w.U8(0);
  w.U8(7);
  w.Str("sbtest1");
  w.U8(0);
  w.Packed(4);
  w.U8(kTypeLong);
  w.U8(kTypeLong);
  w.U8(kTypeString);
  w.U8(kTypeString);
  w.Packed(4);  // metadata: CHAR(120) and CHAR(60) utf8mb4
  w.U8(0xee);   // real type 254 ^ ((480 & 0x300) >> 4)
  w.U8(0xe0);   // 480 & 0xff
  w.U8(0xfe);
  w.U8(0xf0);   // 240
  w.U8(0x00);   // null bitmap: all NOT NULL
  // Optional metadata (MINIMAL): SIGNEDNESS, DEFAULT_CHARSET 255.
  w.U8(1);
  w.U8(1);
  w.U8(0x00);
  w.U8(2);
  w.U8(3);
  w.U8(0xfc);
  w.Le(255, 2);
  return w.size();
}

}  // namespace

void WorkloadGenerator::SysbenchStatement(TransactionBuffer* txn, int i) {
  auto rnd = [](void* g) { return static_cast<WorkloadGenerator*>(g)->Rand(); };
  // Table_map before every statement, as the server writes it.
  char tm[64];
  size_t tm_size = SbtestTableMap(tm);
  txn->AppendEvent(kTableMapEvent, o_.server_id, ts_, 0,
                   absl::string_view(tm, tm_size));

  // One row image: null bitmap, id, k, c (2-byte length: 480 > 255),
  // pad (1-byte length).
  constexpr size_t kRow = 1 + 4 + 4 + 2 + 119 + 1 + 59;  // 190
  char before[kRow], after[kRow];
  auto fill = [&](char* r, uint32_t id, uint32_t k) {
    Out w(r);
    w.U8(0);
    w.Le(id, 4);
    w.Le(k, 4);
    w.Le(119, 2);
    DigitGroups(r + 11, 10, rnd, this);
    r[11 + 119] = 59;
    DigitGroups(r + 11 + 119 + 1, 5, rnd, this);
  };
  const uint32_t id = static_cast<uint32_t>(1 + Uniform(1000000));
  const uint32_t k = static_cast<uint32_t>(1 + Uniform(1000000));
  uint8_t type;
  size_t images;
  switch (i % 4) {
    case 0:  // UPDATE sbtest1 SET k=k+1 WHERE id=?
      type = kUpdateRowsEvent;
      fill(before, id, k);
      std::memcpy(after, before, kRow);
      StoreLe32(after + 5, k + 1);
      images = 2;
      break;
    case 1:  // UPDATE sbtest1 SET c=? WHERE id=?
      type = kUpdateRowsEvent;
      fill(before, id, k);
      std::memcpy(after, before, kRow);
      DigitGroups(after + 11, 10, rnd, this);
      images = 2;
      break;
    case 2:  // DELETE FROM sbtest1 WHERE id=?
      type = kDeleteRowsEvent;
      fill(before, id, k);
      images = 1;
      break;
    default:  // INSERT INTO sbtest1 (id, k, c, pad) VALUES (...)
      type = kWriteRowsEvent;
      fill(before, id, k);
      images = 1;
      break;
  }
  const bool update = type == kUpdateRowsEvent;
  size_t body = 10 + 1 + 1 + (update ? 1 : 0) + kRow * images;
  char* p = txn->AppendEvent(type, o_.server_id, ts_, 0, body);
  Out w(p);
  w.Le(kSbtestTableId, 6);
  w.Le(kStmtEndF, 2);
  w.Le(2, 2);  // extra_data_len: none
  w.Packed(4);
  w.U8(0x0f);  // columns present (before image for UPDATE/DELETE)
  if (update) w.U8(0x0f);  // after image
  w.Bytes(before, kRow);
  if (update) w.Bytes(after, kRow);
}

namespace {

size_t WideTableMap(char* p) {
  Out w(p);
  w.Le(kWideTableId, 6);
  w.Le(1, 2);
  w.U8(4);
  w.Str("shop");
  w.U8(0);
  w.U8(6);
  w.Str("orders");
  w.U8(0);
  w.Packed(10);
  const uint8_t types[10] = {kTypeLongLong, kTypeLong,      kTypeTiny,
                             kTypeVarchar,  kTypeVarchar,   kTypeDatetime2,
                             kTypeDatetime2, kTypeDouble,   kTypeBlob,
                             kTypeJson};
  w.Bytes(types, 10);
  // Metadata: VARCHAR max bytes (2 each), DATETIME2 fsp (1 each), DOUBLE
  // size (1), BLOB/JSON length bytes (1 each).
  w.Packed(2 + 2 + 1 + 1 + 1 + 1 + 1);
  w.Le(512, 2);  // VARCHAR(128) utf8mb4
  w.Le(256, 2);  // VARCHAR(64) utf8mb4
  w.U8(0);       // DATETIME
  w.U8(6);       // DATETIME(6)
  w.U8(8);       // DOUBLE
  w.U8(2);       // TEXT: 2-byte length
  w.U8(4);       // JSON: 4-byte length
  // Nullable: updated_at (6), note (8), attrs (9).
  w.Le((1u << 6) | (1u << 8) | (1u << 9), 2);
  w.U8(1);  // SIGNEDNESS
  w.U8(1);
  w.U8(0x00);
  w.U8(2);  // DEFAULT_CHARSET
  w.U8(3);
  w.U8(0xfc);
  w.Le(255, 2);
  return w.size();
}

// DATETIME2 (MySQL's packed datetime, big-endian, offset 0x8000000000).
uint64_t Datetime2(int year, int month, int day, int hour, int minute, int sec) {
  uint64_t ymd = ((static_cast<uint64_t>(year) * 13 + month) << 5) | day;
  uint64_t hms = (static_cast<uint64_t>(hour) << 12) | (minute << 6) | sec;
  return ((ymd << 17) | hms) + 0x8000000000ull;
}

}  // namespace

void WorkloadGenerator::WideStatement(TransactionBuffer* txn) {
  char tm[128];
  size_t tm_size = WideTableMap(tm);
  txn->AppendEvent(kTableMapEvent, o_.server_id, ts_, 0,
                   absl::string_view(tm, tm_size));

  // Builds one row image into scratch_ at `at`; returns its size.
  const uint64_t id = 1 + Uniform(50000000);
  const uint32_t customer = static_cast<uint32_t>(1 + Uniform(2000000));
  const char* first = kFirstNames[Uniform(Count(kFirstNames))];
  const char* last = kLastNames[Uniform(Count(kLastNames))];
  const char* domain = kDomains[Uniform(Count(kDomains))];
  const uint32_t email_digits = static_cast<uint32_t>(Uniform(10000));
  const int cyear = 2019 + static_cast<int>(Uniform(6));
  const int cmon = 1 + static_cast<int>(Uniform(12));
  const int cday = 1 + static_cast<int>(Uniform(28));
  const int ch = static_cast<int>(Uniform(24)), cm = static_cast<int>(Uniform(60)),
            cs = static_cast<int>(Uniform(60));
  const bool has_note = Uniform(10) < 8;
  const int note_words = 8 + static_cast<int>(Uniform(50));
  const uint64_t note_seed = Rand();
  auto image = [&](char* r, uint8_t status, double amount, bool has_updated,
                   uint64_t attrs_seed) -> size_t {
    Out w(r);
    uint16_t nulls = 0;
    if (!has_updated) nulls |= 1u << 6;
    if (!has_note) nulls |= 1u << 8;
    w.Le(nulls, 2);
    w.Le(id, 8);
    w.Le(customer, 4);
    w.U8(status);
    char buf[160];
    int n = std::snprintf(buf, sizeof(buf), "%s.%s%u@%s", first, last,
                          email_digits, domain);
    w.Le(static_cast<uint64_t>(n), 2);
    w.Bytes(buf, static_cast<size_t>(n));
    n = std::snprintf(buf, sizeof(buf), "%c%s %c%s", first[0] - 32, first + 1,
                      last[0] - 32, last + 1);
    w.Le(static_cast<uint64_t>(n), 2);
    w.Bytes(buf, static_cast<size_t>(n));
    w.Be(Datetime2(cyear, cmon, cday, ch, cm, cs), 5);
    if (has_updated) {
      uint64_t u = Rand();
      w.Be(Datetime2(2025, 1 + static_cast<int>(u % 12),
                     1 + static_cast<int>((u >> 8) % 28),
                     static_cast<int>((u >> 16) % 24),
                     static_cast<int>((u >> 24) % 60),
                     static_cast<int>((u >> 32) % 60)),
           5);
      w.Be((u >> 40) % 1000000, 3);
    }
    uint64_t bits;
    std::memcpy(&bits, &amount, 8);
    w.Le(bits, 8);
    if (has_note) {
      // English-like text from a word list; the same for before and after
      // images of an UPDATE (it does not change).
      uint64_t s = note_seed | 1;
      char* len_at = r + w.size();
      w.Le(0, 2);
      size_t start = w.size();
      for (int i = 0; i < note_words; ++i) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        const char* word = kWords[(s * 0x2545F4914F6CDD1Dull >> 33) % Count(kWords)];
        if (i > 0) w.U8(' ');
        w.Str(word);
      }
      StoreLe16(len_at, static_cast<uint16_t>(w.size() - start));
    }
    // attrs JSON (as text; see workload.h).
    uint64_t a = attrs_seed;
    n = std::snprintf(
        buf, sizeof(buf),
        "{\"color\": \"%s\", \"qty\": %u, \"channel\": \"%s\", \"tags\": "
        "[\"%s\", \"%s\"], \"weight_g\": %u}",
        kColors[a % Count(kColors)], static_cast<unsigned>((a >> 8) % 20 + 1),
        kChannels[(a >> 16) % Count(kChannels)], kTags[(a >> 24) % Count(kTags)],
        kTags[(a >> 32) % Count(kTags)], static_cast<unsigned>((a >> 40) % 5000));
    w.Le(static_cast<uint64_t>(n), 4);
    w.Bytes(buf, static_cast<size_t>(n));
    return w.size();
  };

  char* s = scratch_.data();
  const uint64_t kind = Uniform(10);
  uint8_t type;
  size_t before = 0, after = 0;
  const double amount = static_cast<double>(Uniform(100000)) / 100.0;
  const uint64_t attrs = Rand();
  if (kind < 4) {
    type = kUpdateRowsEvent;
    before = image(s, 1, amount, Uniform(2) == 0, attrs);
    after = image(s + before, 2 + static_cast<uint8_t>(Uniform(4)),
                  amount * 1.1, true, attrs ^ (Rand() & 0xff00ff));
  } else if (kind < 8) {
    type = kWriteRowsEvent;
    before = image(s, 0, amount, false, attrs);
  } else {
    type = kDeleteRowsEvent;
    before = image(s, 9, amount, true, attrs);
  }
  const bool update = type == kUpdateRowsEvent;
  size_t body = 10 + 1 + 2 + (update ? 2 : 0) + before + after;
  char* p = txn->AppendEvent(type, o_.server_id, ts_, 0, body);
  Out w(p);
  w.Le(kWideTableId, 6);
  w.Le(kStmtEndF, 2);
  w.Le(2, 2);
  w.Packed(10);
  w.Le(0x3ff, 2);
  if (update) w.Le(0x3ff, 2);
  w.Bytes(s, before + after);
}

void WorkloadGenerator::RandomBody(TransactionBuffer* txn) {
  // As commit_bench's original transaction: Query BEGIN (no status
  // variables) and a Rows_query event of random printable text.
  AppendQuery(txn, ts_, o_.server_id, static_cast<uint32_t>(seq_ % 64), "",
              "BEGIN");
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,'()";
  const size_t n = o_.random_payload;
  char* body = txn->AppendEvent(kRowsQueryEvent, o_.server_id, ts_,
                                kFlagIgnorable, n);
  body[0] = static_cast<char>((n - 1) & 0xff);
  for (size_t i = 1; i < n; ++i) {
    body[i] = kAlphabet[Rand() % (sizeof(kAlphabet) - 1)];
  }
}

void WorkloadGenerator::Next(TransactionBuffer* txn) {
  ++seq_;
  // The events after the Gtid go to body_ first: the Gtid event carries the
  // transaction's length, known only once the rest is built, and a
  // TransactionBuffer hands out its bytes read-only. One memcpy per
  // transaction, no allocation once both buffers have grown.
  if (body_ == nullptr || body_->checksums() != txn->checksums()) {
    body_ = std::make_unique<TransactionBuffer>(txn->checksums());
  }
  TransactionBuffer* b = body_.get();
  b->Clear();
  if (o_.kind == Workload::kRandom) {
    RandomBody(b);
  } else {
    Begin(b);
    int span = o_.max_rows - o_.min_rows + 1;
    int rows =
        o_.min_rows + static_cast<int>(Uniform(static_cast<uint64_t>(span)));
    for (int i = 0; i < rows; ++i) {
      if (o_.kind == Workload::kSysbench) {
        SysbenchStatement(b, i);
      } else {
        WideStatement(b);
      }
    }
  }
  Xid(b);
  txn->Clear();
  const size_t gtid_size =
      kHeaderSize + kGtidBodySize + (txn->checksums() ? kChecksumSize : 0);
  Gtid(txn, gtid_size + b->size());
  absl::string_view all = b->data();
  for (size_t i = 0; i < b->event_count(); ++i) {
    absl::string_view ev = all.substr(b->event_offset(i));
    ev = ev.substr(0, LoadLe32(ev.data() + kEventSizeOffset));
    txn->AppendEncodedEvent(ev).IgnoreError();  // sizes are consistent
  }
}

void AppendInnerStream(const TransactionBuffer& txn, std::string* out) {
  const size_t footer = txn.checksums() ? kChecksumSize : 0;
  absl::string_view all = txn.appended_data();
  for (size_t i = 1; i < txn.event_count(); ++i) {
    absl::string_view ev = all.substr(txn.event_offset(i));
    size_t size = LoadLe32(ev.data() + kEventSizeOffset) - footer;
    size_t at = out->size();
    out->append(ev.data(), size);
    StoreLe32(&(*out)[at + kEventSizeOffset], static_cast<uint32_t>(size));
    StoreLe32(&(*out)[at + kLogPosOffset], 0);
  }
}

}  // namespace bench
}  // namespace binlog
