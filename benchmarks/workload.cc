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
#include "binlog/rows.h"
#include "tests/testutil/sbtest.h"

namespace binlog {
namespace bench {
namespace {

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
  DescribeTables();
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

// The wide table, described once for the RowsWriter (sbtest1:
// tests/testutil/sbtest.h).
TableDef WideTable() {
  TableDef t;
  t.table_id = kWideTableId;
  t.schema = "shop";
  t.table = "orders";
  t.metadata = RowMetadata::kMinimal;
  auto col = [](ColumnType type, uint32_t length, bool nullable) {
    ColumnDef c;
    c.type = type;
    c.length = length;
    c.nullable = nullable;
    c.collation = 255;
    return c;
  };
  t.columns = {col(kColLongLong, 0, false),  col(kColLong, 0, false),
               col(kColTiny, 0, false),      col(kColVarchar, 512, false),
               col(kColVarchar, 256, false), col(kColDatetime2, 0, false),
               col(kColDatetime2, 6, true),  col(kColDouble, 0, false),
               col(kColBlob, 2, true),       col(kColJson, 4, true)};
  t.primary_key = {0};
  return t;
}

}  // namespace

void WorkloadGenerator::DescribeTables() {
  RowsWriterOptions wo;
  wo.server_id = o_.server_id;
  wo.max_event_size = size_t{1} << 30;  // one Rows event per statement
  rows_ = std::make_unique<RowsWriter>(*RowsWriter::Create(wo));
  sbtest_ = *rows_->DescribeTable(testutil::SbtestTable(kSbtestTableId));
  wide_ = *rows_->DescribeTable(WideTable());
}

void WorkloadGenerator::SysbenchStatement(TransactionBuffer* txn, int i) {
  auto rnd = [](void* g) { return static_cast<WorkloadGenerator*>(g)->Rand(); };
  // The Table_map before every statement, as the server writes it (the
  // writer emits it).
  char c[119], c2[119], pad[59];
  DigitGroups(c, 10, rnd, this);
  DigitGroups(pad, 5, rnd, this);
  const int64_t id = static_cast<int64_t>(1 + Uniform(1000000));
  const int64_t k = static_cast<int64_t>(1 + Uniform(1000000));
  const Value before[4] = {Value::Int(id), Value::Int(k),
                           Value::Bytes(absl::string_view(c, sizeof(c))),
                           Value::Bytes(absl::string_view(pad, sizeof(pad)))};
  Value after[4] = {before[0], before[1], before[2], before[3]};
  rows_->BeginStatement(txn, ts_).IgnoreError();  // the handles are ours
  absl::Status s;
  switch (i % 4) {
    case 0:  // UPDATE sbtest1 SET k=k+1 WHERE id=?
      after[1] = Value::Int(k + 1);
      s = rows_->Update(sbtest_, before, after);
      break;
    case 1:  // UPDATE sbtest1 SET c=? WHERE id=?
      DigitGroups(c2, 10, rnd, this);
      after[2] = Value::Bytes(absl::string_view(c2, sizeof(c2)));
      s = rows_->Update(sbtest_, before, after);
      break;
    case 2:  // DELETE FROM sbtest1 WHERE id=?
      s = rows_->Delete(sbtest_, before);
      break;
    default:  // INSERT INTO sbtest1 (id, k, c, pad) VALUES (...)
      s = rows_->Insert(sbtest_, before);
      break;
  }
  s.IgnoreError();  // every value fits its column
  rows_->EndStatement().IgnoreError();
}

void WorkloadGenerator::WideStatement(TransactionBuffer* txn) {
  const int64_t id = static_cast<int64_t>(1 + Uniform(50000000));
  const int64_t customer = static_cast<int64_t>(1 + Uniform(2000000));
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

  // The strings of both images live in scratch_: email, name, note (shared
  // by both images: it does not change), and one attrs text per image.
  char* s = scratch_.data();
  size_t used = 0;
  auto put = [&](int n) {
    absl::string_view v(s + used, static_cast<size_t>(n));
    used += static_cast<size_t>(n);
    return v;
  };
  const absl::string_view email = put(std::snprintf(
      s + used, 160, "%s.%s%u@%s", first, last, email_digits, domain));
  const absl::string_view name = put(std::snprintf(
      s + used, 160, "%c%s %c%s", first[0] - 32, first + 1, last[0] - 32, last + 1));
  absl::string_view note;
  if (has_note) {
    // English-like text from a word list.
    uint64_t x = note_seed | 1;
    const size_t start = used;
    for (int i = 0; i < note_words; ++i) {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      const char* word = kWords[(x * 0x2545F4914F6CDD1Dull >> 33) % Count(kWords)];
      if (i > 0) s[used++] = ' ';
      const size_t len = std::strlen(word);
      std::memcpy(s + used, word, len);
      used += len;
    }
    note = absl::string_view(s + start, used - start);
  }
  // attrs JSON (as text; see workload.h).
  auto attrs_text = [&](uint64_t a) {
    return put(std::snprintf(
        s + used, 200,
        "{\"color\": \"%s\", \"qty\": %u, \"channel\": \"%s\", \"tags\": "
        "[\"%s\", \"%s\"], \"weight_g\": %u}",
        kColors[a % Count(kColors)], static_cast<unsigned>((a >> 8) % 20 + 1),
        kChannels[(a >> 16) % Count(kChannels)], kTags[(a >> 24) % Count(kTags)],
        kTags[(a >> 32) % Count(kTags)], static_cast<unsigned>((a >> 40) % 5000)));
  };
  auto image = [&](Value* v, int status, double amount, bool has_updated,
                   absl::string_view attrs) {
    v[0] = Value::Int(id);
    v[1] = Value::Int(customer);
    v[2] = Value::Int(status);
    v[3] = Value::Bytes(email);
    v[4] = Value::Bytes(name);
    v[5] = Value::Time(MakeTemporal(cyear, cmon, cday, ch, cm, cs, 0));
    v[6] = Value::Null();
    if (has_updated) {
      const uint64_t u = Rand();
      v[6] = Value::Time(MakeTemporal(
          2025, 1 + static_cast<int>(u % 12), 1 + static_cast<int>((u >> 8) % 28),
          static_cast<int>((u >> 16) % 24), static_cast<int>((u >> 24) % 60),
          static_cast<int>((u >> 32) % 60), static_cast<uint32_t>((u >> 40) % 1000000)));
    }
    v[7] = Value::Double(amount);
    v[8] = has_note ? Value::Bytes(note) : Value::Null();
    v[9] = Value::Bytes(attrs);
  };

  const uint64_t kind = Uniform(10);
  const double amount = static_cast<double>(Uniform(100000)) / 100.0;
  const uint64_t attrs = Rand();
  Value before[10], after[10];
  rows_->BeginStatement(txn, ts_).IgnoreError();  // the handles are ours
  absl::Status st;
  if (kind < 4) {
    image(before, 1, amount, Uniform(2) == 0, attrs_text(attrs));
    image(after, 2 + static_cast<int>(Uniform(4)), amount * 1.1, true,
          attrs_text(attrs ^ (Rand() & 0xff00ff)));
    st = rows_->Update(wide_, before, after);
  } else if (kind < 8) {
    image(before, 0, amount, false, attrs_text(attrs));
    st = rows_->Insert(wide_, before);
  } else {
    image(before, 9, amount, true, attrs_text(attrs));
    st = rows_->Delete(wide_, before);
  }
  st.IgnoreError();  // every value fits its column
  rows_->EndStatement().IgnoreError();
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
