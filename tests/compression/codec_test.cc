// Tests of io/codec: round trips, MySQL-compatible zstd frames, bounded
// decompression of hostile input, context reuse.

#include "io/codec.h"

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testutil/status_matchers.h"
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader (exported by the .so)
#include "zstd.h"

namespace binlog {
namespace io {
namespace {

using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

// Row-like text: digit groups, as sysbench's c column.
std::string RowText(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < n) {
    for (int i = 0; i < 11 && s.size() < n; ++i) {
      s.push_back(static_cast<char>('0' + rng() % 10));
    }
    if (s.size() < n) s.push_back('-');
  }
  return s;
}

std::string CompressToString(Codec codec, int level, absl::string_view in) {
  std::string out(MaxCompressedSize(codec, in.size()), '\0');
  auto n = Compress(codec, level, in, out.data(), out.size());
  EXPECT_THAT(n, IsOk());
  out.resize(n.ok() ? *n : 0);
  return out;
}

class CodecTest : public ::testing::TestWithParam<Codec> {};

TEST_P(CodecTest, RoundTripsManySizes) {
  for (size_t n : {0, 1, 19, 100, 4096, 65535, 65536, 65537, 1 << 20,
                   (3 << 20) + 7}) {
    std::string in = RowText(n, n);
    std::string c = CompressToString(GetParam(), 0, in);
    ByteBuffer out;
    ASSERT_THAT(Decompress(GetParam(), c, in.size(), 1 << 30, &out), IsOk())
        << n;
    EXPECT_EQ(out.view(), in) << n;
    // Without a hint too.
    ASSERT_THAT(Decompress(GetParam(), c, 0, 1 << 30, &out), IsOk()) << n;
    EXPECT_EQ(out.view(), in) << n;
  }
}

TEST_P(CodecTest, CompressesRepeatedRowText) {
  // lz4 has no entropy coder, so random digits alone do not shrink with
  // it; row images repeat (before/after images, table maps), which it finds.
  std::string row = RowText(300, 7);
  std::string in;
  for (int i = 0; i < 100; ++i) in += row + RowText(60, i);
  std::string c = CompressToString(GetParam(), 0, in);
  EXPECT_LT(c.size(), in.size() / 2);
}

TEST_P(CodecTest, EveryLevelRoundTrips) {
  std::string in = RowText(10000, 3);
  for (int level : {-1, 0, 1, 3, 9, 12}) {
    std::string c = CompressToString(GetParam(), level, in);
    ByteBuffer out;
    ASSERT_THAT(Decompress(GetParam(), c, in.size(), 1 << 20, &out), IsOk());
    EXPECT_EQ(out.view(), in);
  }
}

TEST_P(CodecTest, OutputPastTheCapIsDataLossAndStaysBounded) {
  std::string in(1 << 20, 'a');  // inflates about 1000x
  std::string c = CompressToString(GetParam(), 0, in);
  ByteBuffer out;
  EXPECT_THAT(Decompress(GetParam(), c, in.size(), 64 << 10, &out),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("exceeds")));
  EXPECT_LE(out.capacity(), (64u << 10) + 1);
}

TEST_P(CodecTest, HostileSizeHintDoesNotAllocateIt) {
  std::string in = RowText(1000, 1);
  std::string c = CompressToString(GetParam(), 0, in);
  ByteBuffer out;
  ASSERT_THAT(Decompress(GetParam(), c, 4ull << 30, 1 << 30, &out), IsOk());
  EXPECT_EQ(out.view(), in);
  EXPECT_LE(out.capacity(), c.size() * 64 + (64 << 10) + 1);
}

TEST_P(CodecTest, GarbageIsDataLoss) {
  std::string garbage = RowText(500, 9);
  ByteBuffer out;
  EXPECT_THAT(Decompress(GetParam(), garbage, 500, 1 << 20, &out),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(CodecTest, TruncatedFrameIsDataLoss) {
  std::string in = RowText(100000, 5);
  std::string c = CompressToString(GetParam(), 0, in);
  for (size_t cut : {size_t{1}, size_t{4}, c.size() / 2, c.size() - 1}) {
    ByteBuffer out;
    EXPECT_THAT(Decompress(GetParam(), c.substr(0, cut), in.size(), 1 << 20,
                           &out),
                StatusIs(absl::StatusCode::kDataLoss))
        << cut;
  }
}

TEST_P(CodecTest, TrailingBytesAreDataLoss) {
  std::string in = RowText(1000, 5);
  std::string c = CompressToString(GetParam(), 0, in) + "xyz";
  ByteBuffer out;
  EXPECT_THAT(Decompress(GetParam(), c, in.size(), 1 << 20, &out),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(CodecTest, FlippedBytesNeverCrash) {
  std::string in = RowText(3000, 11);
  std::string c = CompressToString(GetParam(), 0, in);
  ByteBuffer out;
  for (size_t i = 0; i < c.size(); ++i) {
    std::string bad = c;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    absl::Status s = Decompress(GetParam(), bad, in.size(), 8192, &out);
    // Without a frame checksum some flips decode to other bytes; the
    // payload layer catches those by size and by the event's CRC32.
    if (!s.ok()) {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss));
    }
    EXPECT_LE(out.size(), 8192u);
  }
}

TEST_P(CodecTest, ContextsAreReusedAcrossCallsAndThreads) {
  std::string in = RowText(20000, 2);
  std::string c = CompressToString(GetParam(), 0, in);
  ByteBuffer out;
  ASSERT_THAT(Decompress(GetParam(), c, in.size(), 1 << 20, &out), IsOk());
  uint64_t created = CodecContextsCreated();
  for (int i = 0; i < 100; ++i) {
    c = CompressToString(GetParam(), 0, in);
    ASSERT_THAT(Decompress(GetParam(), c, in.size(), 1 << 20, &out), IsOk());
  }
  // New threads borrow the pooled contexts too (one at a time here).
  for (int t = 0; t < 4; ++t) {
    std::thread th([&] {
      std::string cc = CompressToString(GetParam(), 0, in);
      ByteBuffer o;
      EXPECT_THAT(Decompress(GetParam(), cc, in.size(), 1 << 20, &o), IsOk());
    });
    th.join();
  }
  EXPECT_EQ(CodecContextsCreated(), created);
}

TEST_P(CodecTest, ConcurrentCallsGetTheirOwnContexts) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string in = RowText(3000 + 100 * t + i, t * 1000 + i);
        std::string c = CompressToString(GetParam(), 0, in);
        ByteBuffer out;
        EXPECT_THAT(Decompress(GetParam(), c, in.size(), 1 << 20, &out), IsOk());
        EXPECT_EQ(out.view(), in);
      }
    });
  }
  for (auto& t : threads) t.join();
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest,
                         ::testing::Values(Codec::kZstd, Codec::kLz4),
                         [](const ::testing::TestParamInfo<Codec>& i) {
                           return std::string(CodecName(i.param));
                         });

TEST(ZstdFrameTest, HasNoContentSizeAndNoChecksumLikeMySql) {
  std::string in = RowText(5000, 4);
  std::string c = CompressToString(Codec::kZstd, 3, in);
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(c.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  ZSTD_frameHeader fh;
  ASSERT_EQ(ZSTD_getFrameHeader(&fh, c.data(), c.size()), 0u);
  EXPECT_EQ(fh.frameContentSize, ZSTD_CONTENTSIZE_UNKNOWN);
  EXPECT_EQ(fh.checksumFlag, 0u);
  EXPECT_EQ(fh.frameType, ZSTD_frame);
}

// The frame of a real MySQL 8.0 Transaction_payload event (the reference's
// section 7.2 sample is 451 bytes; this one is made by the zstd streaming
// API the way MySQL's compressor does it: ZSTD_initCStream, compressStream,
// endStream, no pledged size). Our decoder reads it.
TEST(ZstdFrameTest, DecodesStreamingFramesWithoutContentSize) {
  std::string in = RowText(70000, 8);
  ZSTD_CStream* cs = ZSTD_createCStream();
  ASSERT_NE(cs, nullptr);
  ZSTD_initCStream(cs, 3);
  std::string out(ZSTD_compressBound(in.size()) + 64, '\0');
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  for (size_t off = 0; off < in.size(); off += 1000) {
    ZSTD_inBuffer i{in.data() + off, std::min<size_t>(1000, in.size() - off), 0};
    while (i.pos < i.size) ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream(cs, &o, &i)));
  }
  ASSERT_EQ(ZSTD_endStream(cs, &o), 0u);
  ZSTD_freeCStream(cs);
  out.resize(o.pos);
  ZSTD_frameHeader fh;
  ASSERT_EQ(ZSTD_getFrameHeader(&fh, out.data(), out.size()), 0u);
  EXPECT_EQ(fh.frameContentSize, ZSTD_CONTENTSIZE_UNKNOWN);
  ByteBuffer dec;
  ASSERT_THAT(Decompress(Codec::kZstd, out, in.size(), 1 << 20, &dec), IsOk());
  EXPECT_EQ(dec.view(), in);
}

TEST(Lz4FrameTest, IsAStandardLz4Frame) {
  std::string in = RowText(5000, 4);
  std::string c = CompressToString(Codec::kLz4, 0, in);
  EXPECT_EQ(c.substr(0, 4), std::string("\x04\x22\x4d\x18", 4));
}

TEST(CodecLevelTest, RejectsLevelsOutOfRange) {
  EXPECT_THAT(ValidateCodecLevel(Codec::kZstd, 23),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateCodecLevel(Codec::kLz4, 13),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateCodecLevel(Codec::kNone, 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateCodecLevel(Codec::kZstd, 19), IsOk());
  char buf[8];
  EXPECT_THAT(Compress(Codec::kZstd, 0, "hello", buf, sizeof(buf)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CodecNameTest, ParsesNames) {
  Codec c;
  ASSERT_TRUE(ParseCodec("lz4", &c));
  EXPECT_EQ(c, Codec::kLz4);
  ASSERT_TRUE(ParseCodec("zstd", &c));
  EXPECT_EQ(c, Codec::kZstd);
  ASSERT_TRUE(ParseCodec("none", &c));
  EXPECT_EQ(c, Codec::kNone);
  EXPECT_FALSE(ParseCodec("gzip", &c));
}

}  // namespace
}  // namespace io
}  // namespace binlog
