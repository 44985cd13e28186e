// TransactionBuffer's tagged GTIDs (MySQL 8.4): a transaction built with a
// tagged CommitGtid starts with a Gtid_tagged_log_event (type 42) that the
// identity assignment writes at its real size, as MySQL 8.4 writes it, with
// transaction_length over the transaction's real final size and a checksum
// right after Place. The steps are driven as the log's commit path drives
// them (binlog/transaction_internal.h): SetServerVersion and Seal in the
// committing thread, AssignIdentity and Place in the serial section.
//
// The steady-state test counts allocations with a malloc interposer (as
// tests/compression/alloc_test.cc does); it is left out under sanitizers.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/payload.h"
#include "binlog/transaction.h"
#include "binlog/transaction_internal.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BINLOG_ALLOC_TEST_DISABLED 1
#else
#define BINLOG_ALLOC_TEST_DISABLED 0
#endif

#if !BINLOG_ALLOC_TEST_DISABLED
namespace {
__thread bool t_counting = false;
__thread uint64_t t_allocations = 0;
inline void Note() {
  if (t_counting) ++t_allocations;
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* malloc(size_t n) {
  Note();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  Note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  Note();
  return __libc_realloc(p, n);
}
}  // extern "C"
#endif

namespace binlog {
namespace {

using Txn = internal::TransactionBufferInternal;
using testing_util::NewTempDir;

Uuid U(absl::string_view text) { return *Uuid::Parse(text); }
Tag T(absl::string_view text) { return *Tag::Parse(text); }

const Uuid& ServerUuid() {
  static const Uuid u = U("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  return u;
}

// BEGIN, `rows` Rows_query events of `payload` bytes each, Xid, after the
// CommitGtid.
void Build(TransactionBuffer* txn, const CommitGtid& g, size_t payload,
           size_t rows = 1) {
  txn->Clear();
  txn->AppendCommitGtid(1700000000, 1, g);
  AppendQuery(txn, 1700000000, 1, 7, "db", "BEGIN");
  for (size_t r = 0; r < rows; ++r) {
    char* body = txn->AppendEvent(kRowsQueryEvent, 1, 1700000000,
                                  kFlagIgnorable, payload + 1);
    body[0] = static_cast<char>(std::min<size_t>(payload, 255));
    std::memset(body + 1, 'a' + static_cast<int>(r % 26), payload);
  }
  AppendXid(txn, 1700000000, 1, 42);
}

struct Identity {
  Uuid uuid = ServerUuid();
  int64_t gno = 1;
  int64_t sequence_number = 1;
  int64_t last_committed = 0;
  uint64_t timestamp_us = 1700000000123456;
  uint32_t server_version = 80406;
};

// What the log's commit path does, in its order.
absl::Status Commit(TransactionBuffer* txn, const Tag& tag, const Identity& id,
                    uint64_t start) {
  Txn::SetServerVersion(txn, id.server_version);
  Txn::Seal(txn);
  absl::Status s = Txn::AssignIdentity(txn, id.uuid, tag, id.gno,
                                       id.sequence_number, id.last_committed,
                                       id.timestamp_us);
  if (!s.ok()) return s;
  Txn::Place(txn, start);
  return absl::OkStatus();
}

// The transaction as the log writes it: the first event, the spilled
// events (streamed as the flush stage does), the events after them.
std::string Written(TransactionBuffer* txn) {
  absl::string_view d = txn->data();
  if (!txn->spilled()) return std::string(d);
  const size_t head = Txn::head_size(txn);
  std::string out(d.substr(0, head));
  std::unique_ptr<char[]> piece(new char[64 << 10]);
  for (;;) {
    size_t n = 0;
    absl::Status s = Txn::NextSpilledPiece(txn, piece.get(), 64 << 10, &n);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || n == 0) break;
    out.append(piece.get(), n);
  }
  out.append(d.data() + head, d.size() - head);
  return out;
}

// Checks the framing of every event (sizes, log_pos from `start`, CRC) and
// returns the first event's header and decoded GTID.
MySqlGtidEvent CheckWritten(absl::string_view bytes, bool checksums,
                            uint64_t start, EventHeader* first_header) {
  const size_t footer = checksums ? kChecksumSize : 0;
  size_t p = 0;
  size_t events = 0;
  MySqlGtidEvent gtid;
  while (p < bytes.size()) {
    EXPECT_LE(p + kHeaderSize, bytes.size());
    if (p + kHeaderSize > bytes.size()) break;
    const EventHeader h = DecodeHeader(bytes.substr(p, kHeaderSize));
    EXPECT_GE(h.event_size, kHeaderSize + footer) << "event " << events;
    EXPECT_LE(p + h.event_size, bytes.size()) << "event " << events;
    if (h.event_size < kHeaderSize + footer || p + h.event_size > bytes.size()) break;
    absl::string_view ev = bytes.substr(p, h.event_size);
    EXPECT_EQ(h.log_pos, start + p + h.event_size) << "event " << events;
    if (checksums) {
      EXPECT_EQ(Crc32(ev.data(), ev.size() - footer),
                LoadLe32(ev.data() + ev.size() - footer))
          << "checksum of event " << events;
    }
    if (events == 0) {
      *first_header = h;
      absl::StatusOr<MySqlGtidEvent> g =
          DecodeAnyMySqlGtidEvent(h.type, EventBody(ev, checksums));
      EXPECT_TRUE(g.ok()) << g.status();
      if (g.ok()) gtid = *g;
    }
    p += h.event_size;
    ++events;
  }
  EXPECT_EQ(p, bytes.size());
  return gtid;
}

struct Case {
  std::string name;
  CommitGtid::Kind kind;
  std::string tag;
  Identity id;
  uint64_t original_ts = 0;
  uint32_t original_version = 0;
  bool may_have_sbr = false;
  size_t payload = 100;
  size_t rows = 1;
};

std::vector<Case> Cases() {
  std::vector<Case> cs;
  Case small{"small", CommitGtid::Kind::kAutomatic, "a", {}};
  cs.push_back(small);
  // The widest values of every field the log fills: the reservation must
  // hold them.
  Case wide{"wide", CommitGtid::Kind::kAutomatic, std::string(32, 'z'), {}};
  wide.id.uuid = U("ffffffff-ffff-ffff-ffff-ffffffffffff");
  wide.id.gno = std::numeric_limits<int64_t>::max() - 1;
  wide.id.sequence_number = std::numeric_limits<int64_t>::max();
  wide.id.last_committed = std::numeric_limits<int64_t>::max() - 1;
  wide.id.timestamp_us = ~uint64_t{0} - 5;
  wide.id.server_version = ~uint32_t{0};
  wide.original_ts = ~uint64_t{0};
  wide.original_version = ~uint32_t{0} - 1;
  wide.may_have_sbr = true;
  wide.payload = 70000;  // transaction_length takes a 3-byte varlen
  cs.push_back(wide);
  Case medium{"medium", CommitGtid::Kind::kAssigned, "Blue_1", {}};
  medium.id.uuid = U("cda8356d-0452-11ef-8f6d-0242ac110002");
  medium.id.gno = 300;
  medium.id.sequence_number = 20000;
  medium.id.last_committed = 19998;
  medium.original_ts = 1600000000000000;
  medium.original_version = 80036;
  medium.payload = 3000;
  cs.push_back(medium);
  // The original values equal to the immediate ones: MySQL omits them.
  Case same{"same_originals", CommitGtid::Kind::kAutomatic, "t", {}};
  same.original_ts = same.id.timestamp_us;
  same.original_version = same.id.server_version;
  cs.push_back(same);
  // transaction_length around a varlen width boundary (2^14 = 16384: 2 vs
  // 3 bytes): sizes on both sides.
  for (size_t payload = 16384 - 300; payload < 16384 - 100; ++payload) {
    Case b{absl::StrCat("edge_", payload), CommitGtid::Kind::kAutomatic, "edge", {}};
    b.payload = payload;
    cs.push_back(b);
  }
  return cs;
}

class TaggedGtidWriteTest : public ::testing::TestWithParam<bool> {};

TEST_P(TaggedGtidWriteTest, TheEventDecodesToExactlyTheAssignedFields) {
  const bool checksums = GetParam();
  const uint64_t start = 4 + 126 + 71;  // somewhere after a file's header
  bool below_edge = false, above_edge = false;  // 2- and 3-byte lengths
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    TransactionBuffer txn(checksums);
    CommitGtid g;
    g.kind = c.kind;
    g.tag = T(c.tag);
    if (c.kind == CommitGtid::Kind::kAssigned) {
      g.uuid = c.id.uuid;
      g.gno = c.id.gno;
    }
    g.original_commit_timestamp_us = c.original_ts;
    g.original_server_version = c.original_version;
    g.may_have_sbr = c.may_have_sbr;
    Build(&txn, g, c.payload, c.rows);
    ASSERT_EQ(txn.appended_event_type(0), kGtidTaggedEvent);
    const size_t reserved = txn.size();
    ASSERT_TRUE(Commit(&txn, g.tag, c.id, start).ok());
    const std::string bytes = Written(&txn);
    EXPECT_EQ(bytes.size(), txn.size());
    EXPECT_LE(bytes.size(), reserved);
    EventHeader h;
    const MySqlGtidEvent e = CheckWritten(bytes, checksums, start, &h);
    EXPECT_EQ(h.type, kGtidTaggedEvent);
    EXPECT_EQ(h.server_id, 1u);
    EXPECT_EQ(h.timestamp, 1700000000u);
    EXPECT_EQ(h.flags, 0);
    EXPECT_TRUE(e.tagged);
    EXPECT_EQ(e.flags, c.may_have_sbr ? MySqlGtidEvent::kFlagMayHaveSbr : 0);
    EXPECT_EQ(e.uuid, c.id.uuid);
    EXPECT_EQ(e.tag, g.tag);
    EXPECT_EQ(e.gno, c.id.gno);
    EXPECT_EQ(e.last_committed, c.id.last_committed);
    EXPECT_EQ(e.sequence_number, c.id.sequence_number);
    EXPECT_EQ(e.immediate_commit_timestamp, c.id.timestamp_us);
    EXPECT_EQ(e.original_commit_timestamp,
              c.original_ts ? c.original_ts : c.id.timestamp_us);
    EXPECT_EQ(e.immediate_server_version, c.id.server_version);
    EXPECT_EQ(e.original_server_version,
              c.original_version ? c.original_version : c.id.server_version);
    EXPECT_EQ(e.commit_group_ticket, 0u);
    EXPECT_TRUE(e.has_transaction_length);
    EXPECT_EQ(e.transaction_length, bytes.size());
    if (c.name.rfind("edge_", 0) == 0) {
      (e.transaction_length < 16384 ? below_edge : above_edge) = true;
    }
    // Exactly MySQL's encoding of those fields (the originals only when
    // they differ, no ticket): the shared encoder's bytes.
    absl::string_view body = EventBody(absl::string_view(bytes).substr(0, h.event_size), checksums);
    EXPECT_EQ(absl::BytesToHexString(body),
              absl::BytesToHexString(EncodeMySqlGtidTaggedEventBody(e)));
    // What the log reports.
    const AssignedIdentity& a = txn.identity();
    EXPECT_TRUE(a.assigned);
    EXPECT_EQ(a.uuid, c.id.uuid);
    EXPECT_EQ(a.tag, g.tag);
    EXPECT_EQ(a.gno, c.id.gno);
    EXPECT_EQ(a.sequence_number, c.id.sequence_number);
    EXPECT_EQ(a.last_committed, c.id.last_committed);
    EXPECT_EQ(a.immediate_commit_timestamp_us, c.id.timestamp_us);
  }
  EXPECT_TRUE(below_edge && above_edge);
}

TEST_P(TaggedGtidWriteTest, SpilledTransactionsCountEveryByte) {
  const bool checksums = GetParam();
  TransactionBufferOptions o;
  o.checksums = checksums;
  o.spill_dir = NewTempDir("tagged_spill");
  o.memory_limit = 4096;
  TransactionBuffer txn(o);
  for (int64_t gno : {int64_t{1}, int64_t{1} << 40}) {
    SCOPED_TRACE(gno);
    CommitGtid g;
    g.tag = T("spilled");
    Build(&txn, g, 2000, 40);
    ASSERT_TRUE(txn.status().ok()) << txn.status();
    ASSERT_TRUE(txn.spilled());
    Identity id;
    id.gno = gno;
    id.sequence_number = gno;
    ASSERT_TRUE(Commit(&txn, g.tag, id, 1000).ok());
    const std::string bytes = Written(&txn);
    EXPECT_EQ(bytes.size(), txn.size());
    EventHeader h;
    const MySqlGtidEvent e = CheckWritten(bytes, checksums, 1000, &h);
    EXPECT_EQ(h.type, kGtidTaggedEvent);
    EXPECT_EQ(e.tag, g.tag);
    EXPECT_EQ(e.gno, gno);
    EXPECT_EQ(e.transaction_length, bytes.size());
    EXPECT_GT(bytes.size(), 40u * 2000);
  }
}

INSTANTIATE_TEST_SUITE_P(Checksums, TaggedGtidWriteTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "crc32" : "none";
                         });

// The event of a real MySQL server (tests/data/mysql84/MANIFEST:
// Percona Server 8.4.11, uuid:test_tag:1, transaction_length 337), written
// again through the buffer with the same identity and a transaction of the
// same size: the same bytes.
TEST(TaggedGtidWriteTest, WritesTheEventARealMySql84ServerWrote) {
  const char kRealBody[] =
      "027c00"
      "0002"
      "02ee4503410258026903"
      "22c50369028241023502dcbedc3502"
      "0404"
      "0610746573745f746167"
      "0800"
      "0a04"
      "0c7f003e8900fa5b06"
      "104505"
      "12dbd009";
  const std::string real = absl::HexStringToBytes(kRealBody);
  ASSERT_EQ(real.size(), 62u);
  TransactionBuffer txn(true);
  CommitGtid g;
  g.tag = T("test_tag");
  g.may_have_sbr = true;
  // 337 bytes in all: the 85-byte Gtid event, BEGIN, a Rows_query event,
  // Xid (31): the Rows_query payload makes up the rest.
  Build(&txn, g, 1);
  const size_t others = txn.size() - txn.appended_event_size(0);
  const size_t payload = 1 + (337 - 85) - others;
  Build(&txn, g, payload);
  Identity id;
  id.uuid = U("77d1902c-01da-11f1-9a41-908d6e5f6e8d");
  id.gno = 1;
  id.sequence_number = 1;
  id.last_committed = 0;
  id.timestamp_us = 0x065bfa00893e00;
  id.server_version = 80411;
  ASSERT_TRUE(Commit(&txn, g.tag, id, 4).ok());
  ASSERT_EQ(txn.size(), 337u);
  absl::string_view first = txn.data().substr(0, txn.event_offset(1));
  EXPECT_EQ(absl::BytesToHexString(EventBody(first, true)),
            absl::BytesToHexString(real));
}

// An untagged CommitGtid still writes the 8.0 Gtid event (33), whichever
// AssignIdentity form the log calls, byte for byte.
TEST(TaggedGtidWriteTest, UntaggedTransactionsKeepTheirGtidEvent) {
  for (bool checksums : {true, false}) {
    TransactionBuffer a(checksums), b(checksums);
    CommitGtid g;
    g.original_commit_timestamp_us = 1600000000000000;
    Build(&a, g, 500);
    Build(&b, g, 500);
    Identity id;
    Txn::SetServerVersion(&a, id.server_version);
    Txn::Seal(&a);
    Txn::AssignIdentity(&a, id.uuid, id.gno, id.sequence_number,
                        id.last_committed, id.timestamp_us);
    Txn::Place(&a, 4);
    ASSERT_TRUE(Commit(&b, Tag(), id, 4).ok());
    EXPECT_EQ(absl::BytesToHexString(a.data()), absl::BytesToHexString(b.data()));
    EventHeader h;
    const MySqlGtidEvent e = CheckWritten(b.data(), checksums, 4, &h);
    EXPECT_EQ(h.type, kGtidEvent);
    EXPECT_FALSE(e.tagged);
    EXPECT_EQ(e.gno, id.gno);
    EXPECT_EQ(e.transaction_length, b.size());
    // The 8.0 layout the shared encoder writes.
    absl::string_view first = b.data().substr(0, b.event_offset(1));
    EXPECT_EQ(absl::BytesToHexString(EventBody(first, checksums)),
              absl::BytesToHexString(EncodeMySqlGtidEventBody(e)));
    EXPECT_TRUE(b.identity().tag.empty());
  }
}

TEST(TaggedGtidWriteTest, AnotherTagIsRefusedAndChangesNothing) {
  TransactionBuffer txn(true);
  CommitGtid g;
  g.tag = T("blue");
  Build(&txn, g, 100);
  Txn::SetServerVersion(&txn, 80406);
  Txn::Seal(&txn);
  const std::string before(txn.data());
  Identity id;
  for (const Tag& wrong : {T("red"), Tag()}) {
    absl::Status s = Txn::AssignIdentity(&txn, id.uuid, wrong, 1, 1, 0, 1);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_EQ(txn.data(), before);
    EXPECT_FALSE(txn.identity().assigned);
  }
  // And an untagged transaction is not given a tag.
  TransactionBuffer plain(true);
  Build(&plain, CommitGtid(), 100);
  Txn::SetServerVersion(&plain, 80406);
  Txn::Seal(&plain);
  EXPECT_EQ(Txn::AssignIdentity(&plain, id.uuid, T("blue"), 1, 1, 0, 1).code(),
            absl::StatusCode::kInternal);
}

// Options::compression packs a tagged transaction as MySQL 8.4 does: the
// tagged Gtid event (the log's reservation, copied as it is) outside, then
// one Transaction_payload; the identity assigned afterwards encodes the
// real event with transaction_length over the packed transaction.
TEST(TaggedGtidWriteTest, TaggedTransactionsArePackedAfterTheirGtidEvent) {
  const PayloadCompression zstd{io::Codec::kZstd, 0, 0};
  for (bool checksums : {true, false}) {
    SCOPED_TRACE(checksums);
    TransactionBuffer tagged(checksums);
    CommitGtid g;
    g.tag = T("blue");
    Build(&tagged, g, 4000, 4);
    Txn::SetServerVersion(&tagged, 80406);
    const size_t reserved = tagged.appended_event_size(0);
    absl::StatusOr<TransactionBuffer*> t = internal::PayloadPacker::Pack(&tagged, zstd);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_NE(*t, &tagged);
    TransactionBuffer* w = *t;
    EXPECT_TRUE(tagged.compressed());
    // As the log's commit path goes on with the packed form.
    Txn::identity(w) = Txn::identity(&tagged);
    Txn::identity(w).length_slot = false;
    Txn::Seal(w);
    Identity id;
    id.gno = 7;
    ASSERT_TRUE(Txn::AssignIdentity(w, id.uuid, g.tag, id.gno, id.sequence_number,
                                    id.last_committed, id.timestamp_us)
                    .ok());
    Txn::Place(w, 1000);
    const std::string bytes(w->data());
    EXPECT_LT(bytes.size(), tagged.appended_data().size());
    EventHeader h;
    const MySqlGtidEvent e = CheckWritten(bytes, checksums, 1000, &h);
    EXPECT_EQ(h.type, kGtidTaggedEvent);
    EXPECT_LE(h.event_size, reserved);
    EXPECT_EQ(e.tag, g.tag);
    EXPECT_EQ(e.gno, 7);
    EXPECT_EQ(e.transaction_length, bytes.size());
    const EventHeader p = DecodeHeader(absl::string_view(bytes).substr(h.event_size));
    EXPECT_EQ(p.type, kTransactionPayloadEvent);
    EXPECT_EQ(h.event_size + p.event_size, bytes.size());
    EXPECT_EQ(w->identity().tag, g.tag);
  }
}

TEST(TaggedGtidWriteTest, SteadyStateAllocatesNothing) {
  if (BINLOG_ALLOC_TEST_DISABLED) GTEST_SKIP() << "sanitizer build";
  TransactionBuffer txn(true);
  CommitGtid g;
  g.tag = T(std::string(32, 'q'));  // longer than any inline string
  g.original_commit_timestamp_us = 1600000000000000;
  Identity id;
  auto one = [&](int64_t i) {
    Build(&txn, g, 100 + static_cast<size_t>(i % 50) * 40);
    id.gno = i + 1;
    id.sequence_number = i + 1;
    id.last_committed = i;
    return Commit(&txn, g.tag, id, 4).ok();
  };
  for (int64_t i = 0; i < 200; ++i) ASSERT_TRUE(one(i));
  uint64_t allocations = 0;
  bool ok = true;
#if !BINLOG_ALLOC_TEST_DISABLED
  t_allocations = 0;
  t_counting = true;
#endif
  for (int64_t i = 0; i < 200 && ok; ++i) ok = one(i);
#if !BINLOG_ALLOC_TEST_DISABLED
  t_counting = false;
  allocations = t_allocations;
#endif
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(txn.identity().tag, g.tag);
}

// The whole commit path of a log, the serial section included (with one
// committing thread, that thread leads every group): tagged GTIDs of the
// longest tag MySQL allows (32 characters), AUTOMATIC:tag and assigned
// uuid:tag:gno, plain and packed, copy the tag without allocating.
TEST(TaggedGtidWriteTest, SteadyStateCommitsOfLongTagsAllocateNothing) {
  if (BINLOG_ALLOC_TEST_DISABLED) GTEST_SKIP() << "sanitizer build";
  for (io::Codec codec : {io::Codec::kNone, io::Codec::kZstd}) {
    SCOPED_TRACE(io::CodecName(codec));
    Options o;
    o.server_uuid = ServerUuid();
    o.compression = codec;
    o.compression_threshold = 0;
    o.preallocate = io::PreallocMode::kNone;
    o.sync_policy = SyncPolicy::kNever;
    o.max_file_size = 256 << 20;  // no rotation during the test
    auto log = Binlog::Open(NewTempDir("tagged_alloc"), "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    const Tag longest = T(std::string(kMaxTagLength, 'q'));
    const Tag other = T(std::string(kMaxTagLength - 1, 'r') + "1");
    const Uuid source = U("cda8356d-0452-11ef-8f6d-0242ac110002");
    TransactionBuffer txn(true);
    int64_t assigned_gno = 0;
    // i % 3: AUTOMATIC:longest, AUTOMATIC:other, source:longest:N (acquired
    // first, as a replica's applier does before it commits).
    auto one = [&](int64_t i) {
      CommitGtid g;
      g.tag = i % 3 == 1 ? other : longest;
      if (i % 3 == 2) {
        g.kind = CommitGtid::Kind::kAssigned;
        g.uuid = source;
        g.gno = ++assigned_gno;
      }
      Build(&txn, g, 100 + static_cast<size_t>(i % 50) * 40);
      return g;
    };
    for (int64_t i = 0; i < 300; ++i) {
      CommitGtid g = one(i);
      if (g.kind == CommitGtid::Kind::kAssigned) {
        ASSERT_TRUE((*log)->AcquireGtid(Tsid(g.uuid, g.tag), g.gno).ok());
      }
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    uint64_t allocations = 0;
    bool ok = true;
    for (int64_t i = 0; i < 300 && ok; ++i) {
      CommitGtid g = one(i);
      if (g.kind == CommitGtid::Kind::kAssigned) {
        ok = (*log)->AcquireGtid(Tsid(g.uuid, g.tag), g.gno).ok();
      }
#if !BINLOG_ALLOC_TEST_DISABLED
      t_allocations = 0;
      t_counting = true;
#endif
      ok = ok && (*log)->Commit(&txn).ok();
#if !BINLOG_ALLOC_TEST_DISABLED
      t_counting = false;
      allocations += t_allocations;
#endif
    }
    EXPECT_TRUE(ok);
    EXPECT_EQ(allocations, 0u);
    EXPECT_EQ(txn.identity().tag, longest);
    EXPECT_EQ(txn.compressed(), codec != io::Codec::kNone);
    ASSERT_TRUE((*log)->Close().ok());
  }
}

}  // namespace
}  // namespace binlog
