// Tests of binlog/payload: the Transaction_payload header (MySQL's TLV
// layout), decoding real MySQL bytes, every decoding error, and packing a
// TransactionBuffer.

#include "binlog/payload.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/transaction.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/codec.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

// The body of a Transaction_payload event written by a MySQL 8.0 server
// (ZSTD, 960 bytes of inner events compressed to 451: Query BEGIN, Table_map,
// Update_rows, Xid), as published in the test vectors of
// osheroff/mysql-binlog-connector-java
// (TransactionPayloadEventDataDeserializerTest.java, Apache-2.0); the
// reference's section 7.2 quotes its header.
const char kMySqlPayloadHex[] =
    "0201000303fcc0030103fcc3010028b52ffd0058bc0d00a6de61396067940e20"
    "012008822078126708828e2dacf1f7be444a8ad8524492100d861a2362147b10"
    "07fbf64580256b5bd632f68cfab1330b5df2490a570051005100ffa13fcbb24c"
    "e18cc8f1a8ba1a24c9e4f32c42c43804fd7186c623900812291cdbd6a0ad84b7"
    "b554e3d0293ef1a8ba064892c947c18303a6f2679143019efdf14783825894f0"
    "ff98074fe806bef0c7358faa8b2149269f9cbc607d99d8205c076f33b96edb93"
    "d4212ac59d49cfe34510b931ee57496cddd3ca12d72937eaa925b5511d759643"
    "e0b7105bce1d1ea7f0e1007e0704882d27b782c92dd76a14a9c97d31c89d78c1"
    "0b048c3964b95793dd2cde6ebee0dc3ec9d24d36e52891d9c34956de4d10f5ba"
    "1a6eb25dab447c4bb1c24dbae56e9a68a9c3e4c5a41071a97e70931eaa9b1331"
    "eaa9d413c98d2944bc98da7522d251624585ebffffbfe1041e55178324997cba"
    "c189120560fb3a706a1209b9d3963e9578a439d7966cceed259b1b37c5236d9a"
    "3aaee1db4a36f594df5662435e8b47c96e4f2fb141e5bec403cb3db5f73a22bb"
    "71120009854035794b15bc0721b7e28199091142cf5441022b1083002b37726d"
    "04cec0c2c063001ca035a0f300bc010000";

std::string MySqlPayloadBody() { return absl::HexStringToBytes(kMySqlPayloadHex); }

std::string Packed(uint64_t v) {
  char b[9];
  return std::string(b, StorePackedInt(b, v) - b);
}

// A TLV field: type, length, packed value.
std::string Field(uint64_t type, uint64_t value) {
  std::string v = Packed(value);
  return Packed(type) + Packed(v.size()) + v;
}

// The inner events of a small transaction (BEGIN, Rows_query, Xid) as
// MySQL puts them in a payload: no footer, log_pos 0.
std::string InnerEvents(const std::string& text) {
  TransactionBuffer t(/*checksums=*/false);
  AppendQuery(&t, 1700000000, 1, 7, "db", "BEGIN");
  char* b = t.AppendEvent(kRowsQueryEvent, 1, 1700000000, kFlagIgnorable,
                          text.size() + 1);
  b[0] = 0;
  std::memcpy(b + 1, text.data(), text.size());
  AppendXid(&t, 1700000000, 1, 42);
  return std::string(t.data());
}

std::string ZstdFrame(absl::string_view in) {
  std::string out(io::MaxCompressedSize(io::Codec::kZstd, in.size()), '\0');
  auto n = io::Compress(io::Codec::kZstd, 3, in, out.data(), out.size());
  EXPECT_THAT(n, IsOk());
  out.resize(*n);
  return out;
}

// A payload body in MySQL's field order.
std::string Body(uint64_t ctype, uint64_t uncompressed, const std::string& frame) {
  return Field(kPayloadCompressionTypeField, ctype) +
         Field(kPayloadUncompressedSizeField, uncompressed) +
         Field(kPayloadSizeField, frame.size()) + Packed(0) + frame;
}

TEST(PackedIntTest, RoundTripsAtEveryWidth) {
  for (uint64_t v : {0ull, 250ull, 251ull, 65535ull, 65536ull, 16777215ull,
                     16777216ull, 4294967296ull, ~0ull}) {
    std::string p = Packed(v);
    EXPECT_EQ(p.size(), PackedIntSize(v)) << v;
    absl::string_view in = p;
    uint64_t got;
    ASSERT_TRUE(ConsumePackedInt(&in, &got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_TRUE(in.empty());
  }
  EXPECT_EQ(Packed(960), std::string("\xfc\xc0\x03", 3));
}

TEST(PackedIntTest, RejectsNullMarkerAndTruncation) {
  for (std::string bad : {std::string("\xfb"), std::string("\xff"),
                          std::string("\xfc\x01"), std::string("\xfe\x01\x02"),
                          std::string()}) {
    absl::string_view in = bad;
    uint64_t v;
    EXPECT_FALSE(ConsumePackedInt(&in, &v)) << absl::BytesToHexString(bad);
  }
}

TEST(PayloadDecodeTest, DecodesARealMySqlPayload) {
  std::string body = MySqlPayloadBody();
  ASSERT_EQ(body.size(), 465u);
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n = 0;
  ASSERT_THAT(DecodePayload(body, kDefaultMaxPayloadSize, &h, &out, &n), IsOk());
  EXPECT_EQ(h.compression_type, kPayloadCompressionZstd);
  EXPECT_EQ(h.payload_size, 451u);
  EXPECT_TRUE(h.has_uncompressed_size);
  EXPECT_EQ(h.uncompressed_size, 960u);
  EXPECT_EQ(h.header_size, 14u);
  ASSERT_EQ(n, 4u);
  const uint8_t types[] = {kQueryEvent, kTableMapEvent, kUpdateRowsEvent,
                           kXidEvent};
  const uint32_t sizes[] = {76, 82, 775, 27};
  absl::string_view rest = out.view();
  for (int i = 0; i < 4; ++i) {
    EventHeader eh = DecodeHeader(rest);
    EXPECT_EQ(eh.type, types[i]);
    EXPECT_EQ(eh.event_size, sizes[i]);
    EXPECT_EQ(eh.log_pos, 0u);
    EXPECT_EQ(eh.server_id, 223344u);
    rest.remove_prefix(eh.event_size);
  }
}

TEST(PayloadDecodeTest, UnknownFieldsAreSkipped) {
  std::string inner = InnerEvents("hello");
  std::string frame = ZstdFrame(inner);
  std::string body = Field(kPayloadCompressionTypeField, 0) + Field(9, 12345) +
                     Field(kPayloadSizeField, frame.size()) + Packed(0) + frame;
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  ASSERT_THAT(DecodePayload(body, 1 << 20, &h, &out, &n), IsOk());
  EXPECT_FALSE(h.has_uncompressed_size);
  EXPECT_EQ(out.view(), inner);
  EXPECT_EQ(n, 3u);
}

TEST(PayloadDecodeTest, CompressionTypeNoneHoldsPlainEvents) {
  std::string inner = InnerEvents("plain");
  std::string body = Field(kPayloadCompressionTypeField, kPayloadCompressionNone) +
                     Field(kPayloadSizeField, inner.size()) + Packed(0) + inner;
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  ASSERT_THAT(DecodePayload(body, 1 << 20, &h, &out, &n), IsOk());
  EXPECT_EQ(out.view(), inner);
}

struct BadBody {
  const char* name;
  std::string body;
  const char* message;
};

std::vector<BadBody> BadBodies() {
  std::string inner = InnerEvents("some text some text some text");
  std::string frame = ZstdFrame(inner);
  std::string tail = Packed(0) + frame;
  std::vector<BadBody> v;
  v.push_back({"empty", "", "no end mark"});
  v.push_back({"no_end_mark", Field(2, 0) + Field(1, frame.size()),
               "no end mark"});
  v.push_back({"no_type", Field(3, inner.size()) + Field(1, frame.size()) + tail,
               "no compression type"});
  v.push_back({"no_size", Field(2, 0) + Field(3, inner.size()) + tail,
               "no payload size"});
  v.push_back({"twice", Field(2, 0) + Field(2, 0) + Field(1, frame.size()) + tail,
               "appears twice"});
  v.push_back({"bad_type_int", std::string("\xfb") + Field(1, frame.size()) + tail,
               "malformed field type"});
  v.push_back({"bad_length", std::string("\x02\xff\x00") + tail,
               "malformed length"});
  v.push_back({"field_past_end", std::string("\x02\x20\x00", 3), "runs past the end"});
  v.push_back({"value_not_one_int", std::string("\x02\x02\x00\x00", 4) +
                                        Field(1, frame.size()) + tail,
               "not one packed integer"});
  std::string full = Body(0, inner.size(), frame);
  v.push_back({"size_past_end", full.substr(0, full.size() - 5),
               "runs past the end of the event"});
  v.push_back({"size_too_small", Field(2, 0) + Field(3, inner.size()) +
                                     Field(1, frame.size() - 3) + tail,
               "bytes after the payload"});
  v.push_back({"unknown_codec", Body(7, inner.size(), frame),
               "unknown compression type 7"});
  v.push_back({"size_mismatch", Body(0, inner.size() + 5, frame),
               "declares an uncompressed size"});
  v.push_back({"inflates_past_declared", Body(0, inner.size() - 5, frame),
               "exceeds"});
  std::string garbage(frame.size(), 'x');
  v.push_back({"garbage_frame", Body(0, inner.size(), garbage), "zstd"});
  v.push_back({"lz4_data_as_zstd", Body(128, inner.size(), frame), "lz4"});
  v.push_back({"hostile_4gib", Body(0, 4ull << 30, frame),
               "declared uncompressed size 4294967296 is above the limit"});
  std::string lp = inner;
  StoreLe32(&lp[kLogPosOffset], 1234);
  v.push_back({"inner_log_pos", Body(0, lp.size(), ZstdFrame(lp)), "log_pos 1234"});
  std::string small = inner;
  StoreLe32(&small[kEventSizeOffset], 5);
  v.push_back({"inner_size_small", Body(0, small.size(), ZstdFrame(small)),
               "below the header size"});
  std::string big = inner;
  StoreLe32(&big[kEventSizeOffset], 100000);
  v.push_back({"inner_size_big", Body(0, big.size(), ZstdFrame(big)),
               "runs past"});
  std::string cut = inner + std::string(7, '\1');
  v.push_back({"inner_partial_header", Body(0, cut.size(), ZstdFrame(cut)),
               "less than an event header"});
  std::string nested = inner;
  nested[kTypeOffset] = static_cast<char>(kTransactionPayloadEvent);
  v.push_back({"inner_nested_payload", Body(0, nested.size(), ZstdFrame(nested)),
               "cannot be inside"});
  std::string gtid = inner;
  gtid[kTypeOffset] = static_cast<char>(kGtidEvent);
  v.push_back({"inner_gtid", Body(0, gtid.size(), ZstdFrame(gtid)),
               "cannot be inside"});
  v.push_back({"no_events", Body(0, 0, ZstdFrame("")), "holds no events"});
  return v;
}

class BadPayloadTest : public ::testing::TestWithParam<BadBody> {};

TEST_P(BadPayloadTest, IsDataLoss) {
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  EXPECT_THAT(DecodePayload(GetParam().body, 1 << 20, &h, &out, &n),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(GetParam().message)));
  EXPECT_LE(out.capacity(), (1u << 20) + 1);
}

INSTANTIATE_TEST_SUITE_P(Bodies, BadPayloadTest, ::testing::ValuesIn(BadBodies()),
                         [](const ::testing::TestParamInfo<BadBody>& i) {
                           return std::string(i.param.name);
                         });

TEST(PayloadDecodeTest, HostileSizeUnderTheCapAllocatesLittle) {
  // Declares 512 MiB (allowed by the 1 GiB cap) but holds a tiny frame:
  // the decoder allocates for what the frame can hold, not the claim.
  std::string inner = InnerEvents("x");
  std::string body = Body(0, 512u << 20, ZstdFrame(inner));
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  EXPECT_THAT(DecodePayload(body, kDefaultMaxPayloadSize, &h, &out, &n),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("decompressed to")));
  EXPECT_LT(out.capacity(), 1u << 20);
}

// A zstd frame of `blocks` RLE blocks of 128 KiB zeros each (no content
// size in its header): 4 bytes a block, so 1 GiB of output in 32 KiB.
std::string ZstdZerosFrame(size_t blocks) {
  std::string f = "\x28\xb5\x2f\xfd";  // magic
  f.push_back('\0');                   // no content size, not single-segment
  f.push_back(static_cast<char>(7 << 3));  // window 2^17
  for (size_t i = 0; i < blocks; ++i) {
    const uint32_t last = i + 1 == blocks ? 1 : 0;
    const uint32_t header = (131072u << 3) | (1u << 1) | last;  // RLE
    f.push_back(static_cast<char>(header & 0xff));
    f.push_back(static_cast<char>((header >> 8) & 0xff));
    f.push_back(static_cast<char>((header >> 16) & 0xff));
    f.push_back('\0');  // the byte repeated
  }
  return f;
}

TEST(PayloadDecodeTest, ZerosFrameInflatesAsBuilt) {
  io::ByteBuffer out;
  ASSERT_THAT(io::Decompress(io::Codec::kZstd, ZstdZerosFrame(3), 0, 1 << 20, &out),
              IsOk());
  EXPECT_EQ(out.size(), 3u * 131072);
  EXPECT_EQ(out.view().find_first_not_of('\0'), absl::string_view::npos);
}

// A 32 KiB zstd payload that really inflates to 1 GiB (under the 1 GiB cap)
// read under a memory limit (an address-space rlimit in a child process):
// the buffer cannot grow that far, and the decoder says so with
// ResourceExhausted instead of throwing std::bad_alloc (which aborted
// binlogtool). Not under sanitizers, which reserve terabytes of address
// space.
TEST(PayloadDecodeTest, OutOfMemoryIsAnErrorNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not mix with sanitizers";
#else
  const std::string frame = ZstdZerosFrame(8192);
  ASSERT_LT(frame.size(), 33u << 10);
  const std::string body = Body(kPayloadCompressionZstd, 1u << 30, frame);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The process's size now plus 256 MiB.
    long pages = 0;
    FILE* statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr || std::fscanf(statm, "%ld", &pages) != 1) _exit(3);
    std::fclose(statm);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max =
        static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (256u << 20);
    if (::setrlimit(RLIMIT_AS, &rl) != 0) _exit(4);
    PayloadHeader h;
    io::ByteBuffer out;
    size_t n = 0;
    absl::Status s;
    try {  // an exception (std::bad_alloc, as before) ends the child alone
      s = DecodePayload(body, kDefaultMaxPayloadSize, &h, &out, &n);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: exception %s\n", e.what());
      _exit(5);
    }
    if (!absl::IsResourceExhausted(s)) {
      std::fprintf(stderr, "child: %s\n", s.ToString().c_str());
      _exit(1);
    }
    if (s.message().find("cannot allocate") == absl::string_view::npos ||
        s.message().find("Transaction_payload") == absl::string_view::npos) {
      std::fprintf(stderr, "child: %s\n", s.ToString().c_str());
      _exit(2);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

TEST(PayloadDecodeTest, LowCapStopsARealPayload) {
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  EXPECT_THAT(DecodePayload(MySqlPayloadBody(), 500, &h, &out, &n),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("above the limit")));
  EXPECT_EQ(out.capacity(), 0u);
}

// ---------------------------------------------------------------------------
// Packing

// Anonymous_gtid, BEGIN, Rows_query with compressible text, Xid.
void BuildTxn(TransactionBuffer* t, size_t text_size) {
  t->Clear();
  AppendAnonymousGtid(t, 1700000000, 5, 0, 1);
  AppendQuery(t, 1700000000, 5, 7, "db", "BEGIN");
  std::string text;
  while (text.size() < text_size) text += "INSERT INTO t VALUES (1, 'abc'); ";
  text.resize(text_size);
  char* b = t->AppendEvent(kRowsQueryEvent, 5, 1700000000, kFlagIgnorable,
                           text.size() + 1);
  b[0] = static_cast<char>(text.size() & 0xff);
  std::memcpy(b + 1, text.data(), text.size());
  AppendXid(t, 1700000000, 5, 99);
}

// The inner stream of `t`: events 1.. without footers, log_pos 0.
std::string ExpectedInner(const TransactionBuffer& t) {
  absl::string_view all = t.appended_data();
  std::string out;
  size_t footer = t.checksums() ? kChecksumSize : 0;
  absl::string_view rest = all;
  bool first = true;
  while (!rest.empty()) {
    EventHeader h = DecodeHeader(rest);
    if (!first) {
      std::string e(rest.substr(0, h.event_size - footer));
      StoreLe32(&e[kEventSizeOffset], h.event_size - footer);
      StoreLe32(&e[kLogPosOffset], 0);
      out += e;
    }
    first = false;
    rest.remove_prefix(h.event_size);
  }
  return out;
}

class PackTest : public ::testing::TestWithParam<std::tuple<io::Codec, bool>> {
 protected:
  io::Codec codec() const { return std::get<0>(GetParam()); }
  bool checksums() const { return std::get<1>(GetParam()); }
};

TEST_P(PackTest, WritesGtidThenOnePayloadInMySqlFieldOrder) {
  TransactionBuffer t(checksums());
  BuildTxn(&t, 2000);
  std::string appended(t.appended_data());
  auto w = internal::PayloadPacker::Pack(&t, PayloadCompression{codec(), 0, 0});
  ASSERT_THAT(w, IsOk());
  ASSERT_NE(*w, &t);
  EXPECT_TRUE(t.compressed());
  EXPECT_EQ(t.appended_data(), appended);  // the caller's events untouched
  EXPECT_EQ(t.data(), (*w)->data());
  ASSERT_EQ(t.event_count(), 2u);
  const size_t footer = checksums() ? kChecksumSize : 0;
  // The Gtid event is copied as is.
  EventHeader g0 = DecodeHeader(appended);
  EXPECT_EQ(t.data().substr(0, g0.event_size), appended.substr(0, g0.event_size));
  absl::string_view pev = t.data().substr(t.event_offset(1));
  EventHeader ph = DecodeHeader(pev);
  EXPECT_EQ(ph.type, kTransactionPayloadEvent);
  EXPECT_EQ(ph.event_size, pev.size());
  EXPECT_EQ(ph.server_id, 5u);
  EXPECT_EQ(ph.timestamp, 1700000000u);
  absl::string_view body = EventBody(pev, checksums());
  std::string inner = ExpectedInner(t);
  uint8_t ctype = codec() == io::Codec::kZstd ? 0 : 128;
  std::string prefix = std::string("\x02\x01", 2) + static_cast<char>(ctype) +
                       "\x03" + static_cast<char>(PackedIntSize(inner.size())) +
                       Packed(inner.size()) + "\x01";
  EXPECT_EQ(body.substr(0, prefix.size()), prefix);
  PayloadHeader h;
  io::ByteBuffer out;
  size_t n;
  ASSERT_THAT(DecodePayload(body, 1 << 20, &h, &out, &n), IsOk());
  EXPECT_EQ(out.view(), inner);
  EXPECT_EQ(n, 3u);
  EXPECT_LT(pev.size(), appended.size() - g0.event_size);
  (void)footer;
}

TEST_P(PackTest, BelowThresholdStaysPlain) {
  TransactionBuffer t(checksums());
  BuildTxn(&t, 2000);
  auto w = internal::PayloadPacker::Pack(&t, PayloadCompression{codec(), 0, 100000});
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(*w, &t);
  EXPECT_FALSE(t.compressed());
}

TEST_P(PackTest, IncompressibleDataStaysPlain) {
  TransactionBuffer t(checksums());
  AppendAnonymousGtid(&t, 1, 1, 0, 1);
  std::string noise(3000, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : noise) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    c = static_cast<char>(x);
  }
  t.AppendEvent(kRowsQueryEvent, 1, 1, kFlagIgnorable, noise);
  AppendXid(&t, 1, 1, 1);
  auto w = internal::PayloadPacker::Pack(&t, PayloadCompression{codec(), 0, 0});
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(*w, &t);
}

TEST_P(PackTest, IneligibleTransactionsStayPlain) {
  PayloadCompression c{codec(), 0, 0};
  TransactionBuffer t(checksums());
  // No GTID first.
  AppendQuery(&t, 1, 1, 1, "db", "BEGIN");
  AppendXid(&t, 1, 1, 1);
  EXPECT_EQ(*internal::PayloadPacker::Pack(&t, c), &t);
  // A GTID alone.
  t.Clear();
  AppendAnonymousGtid(&t, 1, 1, 0, 1);
  EXPECT_EQ(*internal::PayloadPacker::Pack(&t, c), &t);
  // An incident inside.
  BuildTxn(&t, 2000);
  t.AppendEvent(kIncidentEvent, 1, 1, 0, std::string(10, 'i'));
  EXPECT_EQ(*internal::PayloadPacker::Pack(&t, c), &t);
  // Two transactions in one buffer.
  BuildTxn(&t, 2000);
  AppendAnonymousGtid(&t, 1, 1, 0, 2);
  AppendQuery(&t, 1, 1, 1, "db", "COMMIT");
  EXPECT_EQ(*internal::PayloadPacker::Pack(&t, c), &t);
}

TEST_P(PackTest, AppendAfterPackShowsTheAppendedEventsAgain) {
  TransactionBuffer t(checksums());
  BuildTxn(&t, 2000);
  ASSERT_THAT(internal::PayloadPacker::Pack(&t, PayloadCompression{codec(), 0, 0}),
              IsOk());
  ASSERT_TRUE(t.compressed());
  AppendXid(&t, 1, 1, 2);
  EXPECT_FALSE(t.compressed());
  EXPECT_EQ(t.data(), t.appended_data());
  EXPECT_EQ(t.event_count(), 5u);
  t.Clear();
  EXPECT_FALSE(t.compressed());
  EXPECT_EQ(t.size(), 0u);
}

TEST_P(PackTest, RewritesTransactionLengthOfAFullGtidEvent) {
  TransactionBuffer t(checksums());
  // A MySQL 8.0 Gtid event body: 42 fixed bytes, immediate commit timestamp
  // (7), transaction_length (packed), immediate_server_version (4).
  const size_t footer = checksums() ? kChecksumSize : 0;
  std::string g(42, '\0');
  g[25] = 2;
  g += std::string(7, '\x11');
  g += Packed(0);  // placeholder, fixed below
  g += std::string("\x24\x39\x01\x00", 4);  // 80164
  t.AppendEvent(kAnonymousGtidEvent, 1, 1, 0, g);
  BuildTxn(&t, 0);  // clears: rebuild with the long Gtid
  t.Clear();
  t.AppendEvent(kAnonymousGtidEvent, 1, 1, 0, g);
  AppendQuery(&t, 1, 1, 7, "db", "BEGIN");
  std::string text(5000, 'a');
  t.AppendEvent(kRowsQueryEvent, 1, 1, kFlagIgnorable, text);
  AppendXid(&t, 1, 1, 9);
  auto w = internal::PayloadPacker::Pack(&t, PayloadCompression{codec(), 0, 0});
  ASSERT_THAT(w, IsOk());
  ASSERT_TRUE(t.compressed());
  absl::string_view gev = t.data().substr(0, t.event_offset(1));
  absl::string_view gb = EventBody(gev, checksums());
  absl::string_view len = gb.substr(49);
  uint64_t total;
  ASSERT_TRUE(ConsumePackedInt(&len, &total));
  EXPECT_EQ(total, t.size());
  EXPECT_EQ(len, absl::string_view("\x24\x39\x01\x00", 4));
  (void)footer;
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, PackTest,
    ::testing::Combine(::testing::Values(io::Codec::kZstd, io::Codec::kLz4),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<io::Codec, bool>>& i) {
      return absl::StrCat(io::CodecName(std::get<0>(i.param)),
                          std::get<1>(i.param) ? "_crc32" : "_nocrc");
    });

TEST(PayloadOptionsTest, ValidatesLevels) {
  EXPECT_THAT(ValidatePayloadCompression({io::Codec::kZstd, 30, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidatePayloadCompression({io::Codec::kNone, 30, 0}), IsOk());
  EXPECT_THAT(ValidatePayloadCompression({io::Codec::kLz4, 9, 0}), IsOk());
}

}  // namespace
}  // namespace binlog
