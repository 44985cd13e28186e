// Tests for binlog/event.h: the common header codec, checksum verification
// (with the FDE in-use rule), the server-version rule for the checksum
// algorithm byte, and the decoders (Format_description on every FDE of the
// MariaDB corpus, Rotate, Query, MariaDB Gtid), including malformed input.

#include "binlog/event.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "binlog/checksum.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testutil/corpus.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testutil::CorpusFile;
using ::binlog::testutil::CorpusManifest;
using ::binlog::testutil::StatusIs;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

FdeParams MySqlFdeParams(bool in_use) {
  FdeParams p;
  p.timestamp = 0x662dfd2c;
  p.server_id = 1;
  p.server_version = "8.0.36";
  p.checksums = true;
  p.in_use = in_use;
  return p;
}

// --- Header -----------------------------------------------------------------

TEST(EventHeaderTest, EncodeDecodeRoundTrip) {
  EventHeader h;
  h.timestamp = 0xF1F2F3F4;
  h.type = 0xA2;
  h.server_id = 0xE1E2E3E4;
  h.event_size = 0xD1D2D3D4;
  h.log_pos = 0xC1C2C3C4;
  h.flags = 0xB1B2;
  char buf[19];
  EncodeHeader(h, buf);
  EventHeader d = DecodeHeader(absl::string_view(buf, 19));
  EXPECT_EQ(d.timestamp, h.timestamp);
  EXPECT_EQ(d.type, h.type);
  EXPECT_EQ(d.server_id, h.server_id);
  EXPECT_EQ(d.event_size, h.event_size);
  EXPECT_EQ(d.log_pos, h.log_pos);
  EXPECT_EQ(d.flags, h.flags);
}

TEST(EventHeaderTest, EncodeWritesReferenceLayout) {
  EventHeader h;
  h.timestamp = 0x04030201;
  h.type = 0x05;
  h.server_id = 0x09080706;
  h.event_size = 0x0D0C0B0A;
  h.log_pos = 0x11100F0E;
  h.flags = 0x1312;
  char buf[19];
  EncodeHeader(h, buf);
  // Every byte is its own offset + 1: little-endian fields at 0, 4, 5, 9,
  // 13, 17 (reference section 2).
  for (int i = 0; i < 19; ++i) {
    EXPECT_EQ(static_cast<uint8_t>(buf[i]), i + 1) << "byte " << i;
  }
}

TEST(EventHeaderTest, DecodeReadsOnlyTheFirst19Bytes) {
  std::string b(40, '\xff');
  for (int i = 0; i < 19; ++i) b[i] = static_cast<char>(i + 1);
  EventHeader d = DecodeHeader(b);
  EXPECT_EQ(d.timestamp, 0x04030201u);
  EXPECT_EQ(d.type, 0x05);
  EXPECT_EQ(d.server_id, 0x09080706u);
  EXPECT_EQ(d.event_size, 0x0D0C0B0Au);
  EXPECT_EQ(d.log_pos, 0x11100F0Eu);
  EXPECT_EQ(d.flags, 0x1312);
}

// --- Checksums --------------------------------------------------------------

TEST(EventChecksumTest, FdeWithInUseBitVerifies) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(true));
  ASSERT_EQ(fde[17] & 1, 1);
  EXPECT_TRUE(EventChecksumMatches(fde));
  // The stored CRC is the one of the bytes with the bit clear.
  std::string clear = fde;
  clear[17] = 0;
  EXPECT_EQ(LoadLe32(fde.data() + fde.size() - 4),
            Crc32(clear.data(), clear.size() - 4));
  EXPECT_EQ(ComputeEventChecksum(fde), ComputeEventChecksum(clear));
}

TEST(EventChecksumTest, FdeWithCrcOverSetBitFails) {
  // A writer that checksums the bytes as stored (bit set) is wrong.
  std::string fde = EncodeFormatDescription(MySqlFdeParams(true));
  StoreLe32(&fde[fde.size() - 4], Crc32(fde.data(), fde.size() - 4));
  EXPECT_FALSE(EventChecksumMatches(fde));
}

TEST(EventChecksumTest, FdeKeepsOtherFlagBitsInCrc) {
  // Only bit 0 is cleared for the computation, not the whole flags field.
  std::string fde = EncodeFormatDescription(MySqlFdeParams(true));
  fde[17] = static_cast<char>(0x01 | 0x40);  // in use + relay log
  StoreLe32(&fde[fde.size() - 4], 0);
  uint32_t c = ComputeEventChecksum(fde);
  std::string expect = fde;
  expect[17] = 0x40;
  EXPECT_EQ(c, Crc32(expect.data(), expect.size() - 4));
}

TEST(EventChecksumTest, NonFdeEventWithBitZeroIsNotCleared) {
  // Flag 0x0001 means "in use" only on an FDE; other events are checksummed
  // as stored.
  std::string rotate = EncodeRotate(1, 1, "b.000002", 100, true);
  rotate[17] = 0x01;
  uint32_t as_stored = Crc32(rotate.data(), rotate.size() - 4);
  EXPECT_EQ(ComputeEventChecksum(rotate), as_stored);
  StoreLe32(&rotate[rotate.size() - 4], as_stored);
  EXPECT_TRUE(EventChecksumMatches(rotate));
}

TEST(EventChecksumTest, EveryFlippedBitIsDetected) {
  std::string rotate = EncodeRotate(7, 7, "binlog.000009", 300, true);
  ASSERT_TRUE(EventChecksumMatches(rotate));
  for (size_t i = 0; i < rotate.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = rotate;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(EventChecksumMatches(bad)) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(EventChecksumTest, FlippedByteOfFdeDetectedExceptInUseBit) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  for (size_t i = 0; i < fde.size(); ++i) {
    std::string bad = fde;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    if (i == 17) {
      EXPECT_TRUE(EventChecksumMatches(bad)) << "in-use bit";
    } else {
      EXPECT_FALSE(EventChecksumMatches(bad)) << "byte " << i;
    }
  }
}

TEST(EventChecksumTest, StateNames) {
  EXPECT_STREQ(ChecksumStateName(ChecksumState::kNone), "none");
  EXPECT_STREQ(ChecksumStateName(ChecksumState::kOk), "ok");
  EXPECT_STREQ(ChecksumStateName(ChecksumState::kBad), "bad");
}

// --- Server version rule ----------------------------------------------------

TEST(ServerVersionTest, ChecksumAlgThresholds) {
  EXPECT_TRUE(ServerVersionHasChecksumAlg("8.0.36"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("5.6.0"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("5.6.1"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("5.6.1-log"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("5.5.62"));
  // MariaDB's threshold is 5.3.0.
  EXPECT_TRUE(ServerVersionHasChecksumAlg("5.5.62-MariaDB"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("5.3.0-MariaDB"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("5.2.9-MariaDB"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("5.5.5-10.1.1-maria-x"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("10.11.19-MariaDB-0+deb12u1-log"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("9.6.0"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("garbage"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg(""));
  // The first number must be followed by '.'; parts must be < 256.
  EXPECT_FALSE(ServerVersionHasChecksumAlg("8"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("8-log"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("256.0.0"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("5.256.1"));
}

TEST(ServerVersionTest, MissingMinorOrPatchCountsAsZeroLikeTheServers) {
  // MySQL's do_server_version_split and MariaDB's Version() use strtoul for
  // each part: only the first number must be followed by '.', a missing or
  // non-numeric second/third part is 0 ("X.Yabc -> {X,Y,0}"). So "8.0.x"
  // is 8.0.0 and "10.x-MariaDB" is 10.0.0, both with an algorithm byte.
  EXPECT_TRUE(ServerVersionHasChecksumAlg("8.0"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("8.0-log"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("8.0.x"));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("8."));
  EXPECT_TRUE(ServerVersionHasChecksumAlg("10.x-MariaDB"));
  EXPECT_FALSE(ServerVersionHasChecksumAlg("5.6.x"));  // 5.6.0
}

// --- Format_description: errors ---------------------------------------------

TEST(DecodeFormatDescriptionTest, TooShortIsDataLoss) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  EXPECT_THAT(DecodeFormatDescription(""),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeFormatDescription(fde.substr(0, 19)),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeFormatDescription(fde.substr(0, 75)),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeFormatDescriptionTest, TooShortForAlgorithmByteIsDataLoss) {
  // Version 8.0.36 says the alg byte and CRC are there: 76 + 1 + 4 needed.
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  for (size_t n = 76; n < 81; ++n) {
    EXPECT_THAT(DecodeFormatDescription(fde.substr(0, n)),
                StatusIs(absl::StatusCode::kDataLoss))
        << n << " bytes";
  }
}

// The shared limit (kMaxFormatDescriptionSize): a Format_description of
// that size decodes, one byte more is DataLoss (a mirror copy never
// stores one from a source, a GTID index never names one).
TEST(DecodeFormatDescriptionTest, LargerThanTheLimitIsDataLoss) {
  const std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  auto padded = [&](size_t size) {
    // More post-header lengths, before the algorithm byte and the CRC.
    std::string e = fde.substr(0, fde.size() - 5) + std::string(size - fde.size(), '\0') +
                    fde.substr(fde.size() - 5);
    StoreLe32(&e[kEventSizeOffset], static_cast<uint32_t>(e.size()));
    return e;
  };
  EXPECT_TRUE(DecodeFormatDescription(padded(kMaxFormatDescriptionSize)).ok());
  EXPECT_THAT(DecodeFormatDescription(padded(kMaxFormatDescriptionSize + 1)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("at most 4096")));
}

TEST(DecodeFormatDescriptionTest, WrongTypeIsDataLoss) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  fde[4] = kRotateEvent;
  EXPECT_THAT(DecodeFormatDescription(fde),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("type 4")));
}

TEST(DecodeFormatDescriptionTest, UnknownChecksumAlgIsDataLoss) {
  for (uint8_t alg : {2, 3, 0x7f}) {
    std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
    fde[117] = static_cast<char>(alg);
    EXPECT_THAT(DecodeFormatDescription(fde),
                StatusIs(absl::StatusCode::kDataLoss,
                         HasSubstr(absl::StrCat("algorithm ", alg))))
        << "alg " << int{alg};
  }
}

TEST(DecodeFormatDescriptionTest, BinlogVersionOtherThan4IsDataLoss) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  StoreLe16(&fde[19], 3);
  EXPECT_THAT(DecodeFormatDescription(fde),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeFormatDescriptionTest, CommonHeaderShorterThan19IsDataLoss) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  fde[75] = 13;
  EXPECT_THAT(DecodeFormatDescription(fde),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeFormatDescriptionTest, PreChecksumServerHasNoAlgorithmByte) {
  // A 5.5 server: 76 + N bytes, no alg byte, no CRC.
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  fde.resize(76 + 27);
  std::memset(&fde[21], 0, 50);
  std::memcpy(&fde[21], "5.5.62-log", 10);
  StoreLe32(&fde[9], static_cast<uint32_t>(fde.size()));
  ASSERT_OK_AND_ASSIGN(FormatDescription fd, DecodeFormatDescription(fde));
  EXPECT_EQ(fd.server_version, "5.5.62-log");
  EXPECT_EQ(fd.checksum_alg, ChecksumAlg::kUndefined);
  EXPECT_FALSE(fd.has_checksums());
  EXPECT_EQ(fd.post_header_len.size(), 27u);
}

TEST(DecodeFormatDescriptionTest, ServerVersionStopsAtNulAndByte49) {
  std::string fde = EncodeFormatDescription(MySqlFdeParams(false));
  std::memset(&fde[21], 'x', 50);  // no NUL at all: readers force byte 49
  std::memcpy(&fde[21], "8.0.36", 6);
  ASSERT_OK_AND_ASSIGN(FormatDescription fd, DecodeFormatDescription(fde));
  EXPECT_EQ(fd.server_version.size(), 49u);
  EXPECT_EQ(fd.server_version.substr(0, 6), "8.0.36");
}

// --- Format_description: every FDE of the MariaDB corpus --------------------

// MariaDB 10.11's 171 post-header lengths, from the non-zero entries listed
// in reference section 4.2.
std::vector<uint8_t> ReferenceMariaDbPhl() {
  std::vector<uint8_t> v(171, 0);
  auto set = [&v](int type, uint8_t len) { v[type - 1] = len; };
  set(1, 56);
  set(2, 13);
  set(4, 8);
  set(6, 18);
  set(8, 4);
  set(9, 4);
  set(10, 4);
  set(11, 4);
  set(12, 18);
  set(15, 228);
  set(17, 4);
  set(18, 26);
  set(19, 8);
  for (int t = 23; t <= 25; ++t) set(t, 8);
  set(26, 2);
  for (int t = 30; t <= 32; ++t) set(t, 10);
  for (int t = 39; t <= 41; ++t) set(t, 10);
  set(161, 4);
  set(162, 19);
  set(163, 4);
  set(165, 13);
  for (int t = 166; t <= 168; ++t) set(t, 8);
  for (int t = 169; t <= 171; ++t) set(t, 10);
  return v;
}

class CorpusEventTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = testutil::LoadCorpusManifest();
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = new CorpusManifest(*std::move(m));
  }
  static void TearDownTestSuite() {
    delete manifest_;
    manifest_ = nullptr;
  }
  static CorpusManifest* manifest_;
};
CorpusManifest* CorpusEventTest::manifest_ = nullptr;

TEST_F(CorpusEventTest, ManifestListsEveryScenario) {
  ASSERT_NE(manifest_, nullptr);
  std::map<std::string, int> files;
  for (const CorpusFile& f : manifest_->files) ++files[f.scenario];
  EXPECT_EQ(files["s1-row-crc32"], 5);
  EXPECT_EQ(files["s2-statement-nochecksum"], 8);
  EXPECT_EQ(files["s3-row-wide-nochecksum"], 2);
  EXPECT_EQ(files["s4-crash-kill9"], 4);
}

TEST_F(CorpusEventTest, DecodesTheFormatDescriptionOfEveryFile) {
  ASSERT_NE(manifest_, nullptr);
  const std::vector<uint8_t> maria_phl = ReferenceMariaDbPhl();
  for (const CorpusFile& f : manifest_->files) {
    SCOPED_TRACE(f.scenario + "/" + f.name);
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        testutil::ReadFileToString(testutil::CorpusBinlogPath(f.scenario,
                                                              f.name)));
    ASSERT_EQ(bytes.size(), f.size);
    ASSERT_EQ(bytes.substr(0, 4), std::string(kBinlogMagic, 4));
    EventHeader h = DecodeHeader(absl::string_view(bytes).substr(4));
    EXPECT_EQ(h.type, kFormatDescriptionEvent);
    EXPECT_EQ(h.event_size, 252u);
    EXPECT_EQ(h.log_pos, 256u);
    EXPECT_EQ(h.server_id, 1u);
    absl::string_view ev = absl::string_view(bytes).substr(4, h.event_size);
    ASSERT_OK_AND_ASSIGN(FormatDescription fd, DecodeFormatDescription(ev));
    EXPECT_EQ(fd.binlog_version, 4);
    EXPECT_EQ(fd.server_version, "10.11.19-MariaDB-0+deb12u1-log");
    EXPECT_EQ(fd.server_version, f.server_version);
    EXPECT_EQ(fd.common_header_len, 19);
    EXPECT_EQ(fd.post_header_len.size(), 171u);
    EXPECT_THAT(fd.post_header_len, ElementsAreArray(maria_phl));
    EXPECT_EQ(fd.PostHeaderLen(kQueryEvent), 13);
    EXPECT_EQ(fd.PostHeaderLen(kMariaGtidEvent), 19);
    ChecksumAlg want =
        absl::EndsWith(f.scenario, "-nochecksum") ? ChecksumAlg::kOff
                                                  : ChecksumAlg::kCrc32;
    EXPECT_EQ(fd.checksum_alg, want);
    EXPECT_EQ(f.checksum, want == ChecksumAlg::kOff ? "NONE" : "CRC32");
    EXPECT_EQ(fd.in_use, f.in_use);
    EXPECT_EQ(fd.create_timestamp != 0, f.created_at_startup);
    // MariaDB writes a real CRC in the FDE even with checksums off, and
    // computes it with the in-use bit clear.
    EXPECT_TRUE(EventChecksumMatches(ev));
  }
}

TEST_F(CorpusEventTest, OnlyTheCrashedFileIsInUseAndItsCrcNeedsTheRule) {
  ASSERT_NE(manifest_, nullptr);
  int in_use = 0;
  for (const CorpusFile& f : manifest_->files) {
    if (!f.in_use) continue;
    ++in_use;
    EXPECT_EQ(f.scenario, "s4-crash-kill9");
    EXPECT_EQ(f.name, "mariadb-bin.000004");
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        testutil::ReadFileToString(
            testutil::CorpusBinlogPath(f.scenario, f.name)));
    absl::string_view ev = absl::string_view(bytes).substr(4, 252);
    EXPECT_EQ(ev[17] & 1, 1);
    // Checked as stored, the CRC fails; with the bit cleared it matches.
    EXPECT_NE(Crc32(ev.data(), ev.size() - 4),
              LoadLe32(ev.data() + ev.size() - 4));
    EXPECT_TRUE(EventChecksumMatches(ev));
  }
  EXPECT_EQ(in_use, 1);
}

TEST_F(CorpusEventTest, EveryEventCrcVerifiesInChecksummedFiles) {
  ASSERT_NE(manifest_, nullptr);
  for (const CorpusFile& f : manifest_->files) {
    if (f.checksum != "CRC32") continue;
    SCOPED_TRACE(f.scenario + "/" + f.name);
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        testutil::ReadFileToString(
            testutil::CorpusBinlogPath(f.scenario, f.name)));
    testutil::FileWalk w = testutil::WalkBinlogFile(bytes);
    ASSERT_TRUE(w.magic_ok);
    EXPECT_EQ(w.end, f.parsed_end);
    for (const testutil::WalkedEvent& e : w.events) {
      ASSERT_TRUE(EventChecksumMatches(e.bytes)) << "event at " << e.offset;
      // log_pos is the end offset of the event in the file.
      ASSERT_EQ(DecodeHeader(e.bytes).log_pos, e.offset + e.size)
          << "event at " << e.offset;
    }
  }
}

TEST_F(CorpusEventTest, DecodesRealRotateEvents) {
  ASSERT_NE(manifest_, nullptr);
  int rotates = 0;
  for (const CorpusFile& f : manifest_->files) {
    SCOPED_TRACE(f.scenario + "/" + f.name);
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        testutil::ReadFileToString(
            testutil::CorpusBinlogPath(f.scenario, f.name)));
    testutil::FileWalk w = testutil::WalkBinlogFile(bytes);
    bool checksums = f.checksum == "CRC32";
    for (const testutil::WalkedEvent& e : w.events) {
      if (e.type != kRotateEvent) continue;
      ++rotates;
      ASSERT_OK_AND_ASSIGN(RotateInfo r,
                           DecodeRotate(EventBody(e.bytes, checksums)));
      EXPECT_EQ(r.position, 4u);
      // The next file is the following number of the same base name.
      uint64_t n = 0;
      ASSERT_TRUE(absl::SimpleAtoi(f.name.substr(f.name.size() - 6), &n));
      char want[32];
      std::snprintf(want, sizeof(want), "mariadb-bin.%06llu",
                    static_cast<unsigned long long>(n + 1));
      EXPECT_EQ(r.next_file, want);
      EXPECT_EQ(e.offset + e.size, bytes.size()) << "rotate is the last event";
    }
  }
  // s1: 5 files, 1 restart; s2: 8 files; s3: 2 files; s4: 4 files, last
  // crashed.
  EXPECT_EQ(rotates, 3 + 7 + 1 + 3);
}

TEST_F(CorpusEventTest, DecodesRealQueryAndGtidEvents) {
  ASSERT_NE(manifest_, nullptr);
  for (const CorpusFile& f : manifest_->files) {
    SCOPED_TRACE(f.scenario + "/" + f.name);
    ASSERT_OK_AND_ASSIGN(
        std::string bytes,
        testutil::ReadFileToString(
            testutil::CorpusBinlogPath(f.scenario, f.name)));
    testutil::FileWalk w = testutil::WalkBinlogFile(bytes);
    bool checksums = f.checksum == "CRC32";
    std::map<uint64_t, std::string> gtid_at;
    for (const auto& g : manifest_->GroupsOf(f.scenario, f.name)) {
      gtid_at[g.start] = g.gtid;
    }
    size_t gtids = 0;
    for (const testutil::WalkedEvent& e : w.events) {
      absl::string_view body = EventBody(e.bytes, checksums);
      if (e.type == kQueryEvent) {
        ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
        EXPECT_FALSE(q.query.empty()) << "query at " << e.offset;
        EXPECT_GE(q.query.data(), body.data());
        EXPECT_LE(q.query.data() + q.query.size(), body.data() + body.size());
      } else if (e.type == kMariaGtidEvent) {
        ++gtids;
        ASSERT_OK_AND_ASSIGN(MariaGtidInfo g, DecodeMariaGtid(body));
        EventHeader h = DecodeHeader(e.bytes);
        EXPECT_EQ(h.flags & kFlagSuppressUse, kFlagSuppressUse);
        std::string text = std::to_string(g.domain_id) + "-" +
                           std::to_string(h.server_id) + "-" +
                           std::to_string(g.seq_no);
        auto it = gtid_at.find(e.offset);
        ASSERT_NE(it, gtid_at.end()) << "no group at GTID offset " << e.offset;
        EXPECT_EQ(text, it->second) << "GTID at " << e.offset;
      }
    }
    EXPECT_EQ(gtids, gtid_at.size());
  }
}

TEST_F(CorpusEventTest, EventTypeNamesMatchMariaDbBinlog) {
  ASSERT_NE(manifest_, nullptr);
  ASSERT_GE(manifest_->type_names.size(), 20u);
  for (const auto& [code, name] : manifest_->type_names) {
    EXPECT_STREQ(EventTypeName(static_cast<uint8_t>(code)), name.c_str())
        << "type " << code;
  }
}

// --- Event type names (format.h) -------------------------------------------

TEST(EventTypeNameTest, KnownTypesUseServerNames) {
  EXPECT_STREQ(EventTypeName(0), "UNKNOWN_EVENT");
  EXPECT_STREQ(EventTypeName(kQueryEvent), "QUERY_EVENT");
  EXPECT_STREQ(EventTypeName(kFormatDescriptionEvent),
               "FORMAT_DESCRIPTION_EVENT");
  EXPECT_STREQ(EventTypeName(kGtidEvent), "GTID_LOG_EVENT");
  EXPECT_STREQ(EventTypeName(kAnonymousGtidEvent), "ANONYMOUS_GTID_LOG_EVENT");
  EXPECT_STREQ(EventTypeName(kPreviousGtidsEvent), "PREVIOUS_GTIDS_LOG_EVENT");
  EXPECT_STREQ(EventTypeName(kTransactionPayloadEvent),
               "TRANSACTION_PAYLOAD_EVENT");
  EXPECT_STREQ(EventTypeName(kGtidTaggedEvent), "GTID_TAGGED_LOG_EVENT");
  EXPECT_STREQ(EventTypeName(kMariaGtidEvent), "GTID_EVENT");
  EXPECT_STREQ(EventTypeName(kMariaDeleteRowsCompressedEvent),
               "DELETE_ROWS_COMPRESSED_EVENT");
}

TEST(EventTypeNameTest, UnknownCodesCarryTheNumber) {
  // format.h: "UNKNOWN_EVENT_<n>" for codes neither server defines.
  EXPECT_STREQ(EventTypeName(43), "UNKNOWN_EVENT_43");
  EXPECT_STREQ(EventTypeName(100), "UNKNOWN_EVENT_100");
  EXPECT_STREQ(EventTypeName(159), "UNKNOWN_EVENT_159");
  EXPECT_STREQ(EventTypeName(172), "UNKNOWN_EVENT_172");
  EXPECT_STREQ(EventTypeName(255), "UNKNOWN_EVENT_255");
}

TEST(EventTypeNameTest, EveryCodeHasAStableNonNullName) {
  for (int t = 0; t < 256; ++t) {
    const char* a = EventTypeName(static_cast<uint8_t>(t));
    ASSERT_NE(a, nullptr) << t;
    EXPECT_STREQ(a, EventTypeName(static_cast<uint8_t>(t))) << t;
  }
}

// --- Rotate -----------------------------------------------------------------

TEST(DecodeRotateTest, GoldenBody) {
  std::string rotate = EncodeRotate(1, 1, "binlog.000002", 170, true);
  ASSERT_OK_AND_ASSIGN(RotateInfo r, DecodeRotate(EventBody(rotate, true)));
  EXPECT_EQ(r.position, 4u);
  EXPECT_EQ(r.next_file, "binlog.000002");
}

TEST(DecodeRotateTest, PositionIsFull64Bits) {
  std::string body(8, '\0');
  StoreLe64(&body[0], 0x0102030405060708ull);
  body += "x.000001";
  ASSERT_OK_AND_ASSIGN(RotateInfo r, DecodeRotate(body));
  EXPECT_EQ(r.position, 0x0102030405060708ull);
  EXPECT_EQ(r.next_file, "x.000001");
}

TEST(DecodeRotateTest, ShorterThanPostHeaderIsDataLoss) {
  EXPECT_THAT(DecodeRotate(std::string(7, '\0')),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeRotate(""), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeRotateTest, EmptyNameAllowed) {
  ASSERT_OK_AND_ASSIGN(RotateInfo r, DecodeRotate(std::string(8, '\0')));
  EXPECT_EQ(r.position, 0u);
  EXPECT_EQ(r.next_file, "");
}

TEST(DecodeRotateTest, NameCappedAt511Bytes) {
  std::string body(8, '\0');
  body += std::string(600, 'n');
  ASSERT_OK_AND_ASSIGN(RotateInfo r, DecodeRotate(body));
  EXPECT_EQ(r.next_file, std::string(511, 'n'));
}

// --- Query ------------------------------------------------------------------

// Query body: 13-byte post-header (+ `extra_post_header` bytes), status
// vars, db + NUL, query.
std::string QueryBody(uint32_t thread_id, uint32_t exec_time,
                      uint16_t error_code, absl::string_view status_vars,
                      absl::string_view db, absl::string_view query,
                      size_t extra_post_header = 0) {
  std::string b(13 + extra_post_header, '\0');
  StoreLe32(&b[0], thread_id);
  StoreLe32(&b[4], exec_time);
  b[8] = static_cast<char>(db.size());
  StoreLe16(&b[9], error_code);
  StoreLe16(&b[11], static_cast<uint16_t>(status_vars.size()));
  b.append(status_vars.data(), status_vars.size());
  b.append(db.data(), db.size());
  b.push_back('\0');
  b.append(query.data(), query.size());
  return b;
}

TEST(DecodeQueryTest, FieldsAtReferenceOffsets) {
  // One status var (Q_CHARSET_CODE, 7 bytes with embedded NULs).
  std::string body = QueryBody(
      0x01020304, 0x0A0B0C0D, 0x0506,
      absl::string_view("\x04\x21\x00\x21\x00\x08\x00", 7), "shop",
      "UPDATE t SET a = 1");
  ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
  EXPECT_EQ(q.thread_id, 0x01020304u);
  EXPECT_EQ(q.exec_time, 0x0A0B0C0Du);
  EXPECT_EQ(q.error_code, 0x0506);
  EXPECT_EQ(q.db, "shop");
  EXPECT_EQ(q.query, "UPDATE t SET a = 1");
}

TEST(DecodeQueryTest, RealMariaDbCreateDatabase) {
  // Reference section 6.6: `create database d1`, 83 bytes, CRC32 on.
  std::string body = absl::HexStringToBytes(
      "05000000" "00000000" "02" "0000" "1a00"          // post-header
      "0000000000" "010000205400000000" "0603737464"  // status vars
      "04210021000800"
      "643100");                                        // "d1" NUL
  body += "create database d1";
  ASSERT_EQ(19 + body.size() + 4, 83u);
  ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
  EXPECT_EQ(q.thread_id, 5u);
  EXPECT_EQ(q.db, "d1");
  EXPECT_EQ(q.query, "create database d1");
}

TEST(DecodeQueryTest, LongerPostHeaderShiftsStatusVars) {
  std::string body = QueryBody(1, 2, 3, "", "db", "COMMIT", /*extra=*/4);
  ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 17));
  EXPECT_EQ(q.db, "db");
  EXPECT_EQ(q.query, "COMMIT");
}

TEST(DecodeQueryTest, EmptyQueryAndDb) {
  std::string body = QueryBody(1, 0, 0, "", "", "");
  ASSERT_EQ(body.size(), 14u);
  ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
  EXPECT_EQ(q.db, "");
  EXPECT_EQ(q.query, "");
}

TEST(DecodeQueryTest, BodyShorterThanPostHeaderIsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "", "");
  for (size_t n = 0; n < 13; ++n) {
    std::string b = body.substr(0, n);
    EXPECT_THAT(DecodeQuery(b, 13), StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
}

TEST(DecodeQueryTest, PostHeaderLengthBelow13IsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "db", "BEGIN");
  EXPECT_THAT(DecodeQuery(body, 11), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeQuery(body, 0), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeQueryTest, StatusVarsPastEndIsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "db", "BEGIN");
  StoreLe16(&body[11], 0xFFFF);
  EXPECT_THAT(DecodeQuery(body, 13), StatusIs(absl::StatusCode::kDataLoss));
  // Exactly up to the end leaves no room for the db NUL.
  StoreLe16(&body[11], static_cast<uint16_t>(body.size() - 13));
  body[8] = 0;
  EXPECT_THAT(DecodeQuery(body, 13), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeQueryTest, DbLengthPastEndIsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "db", "");
  body[8] = static_cast<char>(200);
  EXPECT_THAT(DecodeQuery(body, 13), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeQueryTest, MissingDbTerminatorIsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "db", "");
  body.pop_back();  // drop the NUL after "db"
  EXPECT_THAT(DecodeQuery(body, 13), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeQueryTest, PostHeaderLongerThanBodyIsDataLoss) {
  std::string body = QueryBody(1, 0, 0, "", "", "");
  EXPECT_THAT(DecodeQuery(body, 200), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeQueryTest, RandomBodiesNeverReadOutOfBounds) {
  // Each body is its own heap allocation of exactly its size, so an
  // out-of-bounds read shows up under --config=asan; the returned views
  // must lie inside the body in any case.
  std::mt19937_64 rng(11);
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    size_t n = rng() % 80;
    std::unique_ptr<char[]> mem(new char[n == 0 ? 1 : n]);
    for (size_t k = 0; k < n; ++k) mem[k] = static_cast<char>(rng());
    if (n >= 13 && (rng() & 1)) {
      // Make plausible lengths so some bodies decode.
      mem[8] = static_cast<char>(rng() % 8);
      StoreLe16(&mem[11], static_cast<uint16_t>(rng() % 16));
    }
    absl::string_view body(mem.get(), n);
    uint8_t phl = static_cast<uint8_t>((rng() & 3) == 0 ? rng() % 32 : 13);
    auto q = DecodeQuery(body, phl);
    if (!q.ok()) {
      ASSERT_EQ(q.status().code(), absl::StatusCode::kDataLoss);
      continue;
    }
    ++ok;
    const char* lo = body.data();
    const char* hi = body.data() + body.size();
    ASSERT_GE(q->db.data(), lo);
    ASSERT_LE(q->db.data() + q->db.size(), hi);
    ASSERT_GE(q->query.data(), lo);
    ASSERT_LE(q->query.data() + q->query.size(), hi);
    ASSERT_LE(q->db.data() + q->db.size(), q->query.data());
  }
  EXPECT_GT(ok, 100);
}

// --- MariaDB Gtid -----------------------------------------------------------

TEST(DecodeMariaGtidTest, RealXaPrepareGtid) {
  // As MariaDB 10.11 writes it for XA PREPARE (the corpus's s1-row-crc32
  // has one): GTID 0-1-56, flags2 0x4c
  // (FL_PREPARED_XA | FL_ALLOW_PARALLEL | FL_TRANSACTIONAL), then the XID.
  // The 8 gtrid bytes are filled in here (the decoder now checks that the
  // XID is complete).
  std::string body = absl::HexStringToBytes(
      "3800000000000000" "00000000" "4c" "01000000" "08" "00" "7669732d78612d31");
  ASSERT_OK_AND_ASSIGN(MariaGtidInfo g, DecodeMariaGtid(body));
  EXPECT_EQ(g.xid_gtrid, "vis-xa-1");
  EXPECT_EQ(g.seq_no, 56u);
  EXPECT_EQ(g.domain_id, 0u);
  EXPECT_EQ(g.flags2, 0x4c);
  EXPECT_TRUE(g.has_xid);
  EXPECT_EQ(g.xid_gtrid.size(), 8u);
  EXPECT_TRUE(DecodeMariaGtid(body.substr(0, body.size() - 1)).status().code() ==
              absl::StatusCode::kDataLoss);
}

TEST(DecodeMariaGtidTest, FieldsAtReferenceOffsets) {
  std::string body(19, '\0');
  StoreLe64(&body[0], 0x1122334455667788ull);
  StoreLe32(&body[8], 0xAABBCCDD);
  body[12] = 0x29;
  ASSERT_OK_AND_ASSIGN(MariaGtidInfo g, DecodeMariaGtid(body));
  EXPECT_EQ(g.seq_no, 0x1122334455667788ull);
  EXPECT_EQ(g.domain_id, 0xAABBCCDDu);
  EXPECT_EQ(g.flags2, 0x29);
}

TEST(DecodeMariaGtidTest, ShorterThan13BytesIsDataLoss) {
  for (size_t n = 0; n < 13; ++n) {
    EXPECT_THAT(DecodeMariaGtid(std::string(n, '\x01')),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
  EXPECT_TRUE(DecodeMariaGtid(std::string(13, '\x01')).ok());
}

// --- EventBody --------------------------------------------------------------

TEST(EventBodyTest, StripsHeaderAndFooter) {
  std::string rotate = EncodeRotate(1, 1, "b.000002", 100, true);
  EXPECT_EQ(EventBody(rotate, true).size(), 8u + 8u);
  std::string plain = EncodeRotate(1, 1, "b.000002", 100, false);
  EXPECT_EQ(EventBody(plain, false).size(), 8u + 8u);
  EXPECT_EQ(EventBody(plain, false).substr(8), "b.000002");
}

// --- Heartbeat_log_event_v2 (41) ---------------------------------------------

TEST(HeartbeatV2Test, BodyIsTypeLengthValueFieldsAndAnEndMark) {
  // File name (type 1, length 13), position 1234567 (type 2: its packed
  // form fd 87d612 takes 4 bytes), end mark 0.
  const std::string body = absl::HexStringToBytes(
      "010d62696e6c6f672e303030303431"
      "0204fd87d612"
      "00");
  EXPECT_EQ(EncodeHeartbeatV2Body("binlog.000041", 1234567), body);
  ASSERT_OK_AND_ASSIGN(HeartbeatV2 hb, DecodeHeartbeatV2(body));
  EXPECT_TRUE(hb.has_log_filename);
  EXPECT_EQ(hb.log_filename, "binlog.000041");
  EXPECT_TRUE(hb.has_log_position);
  EXPECT_EQ(hb.log_position, 1234567u);
  // A small position: one byte of value.
  ASSERT_OK_AND_ASSIGN(HeartbeatV2 small,
                       DecodeHeartbeatV2(EncodeHeartbeatV2Body("b.1", 4)));
  EXPECT_EQ(small.log_position, 4u);
  EXPECT_EQ(EncodeHeartbeatV2Body("b.1", 4),
            absl::HexStringToBytes("0103622e31""020104""00"));
}

TEST(HeartbeatV2Test, UnknownFieldsAreSkippedAndDamageIsDataLoss) {
  // An unknown field 7 of 3 bytes before the known ones.
  ASSERT_OK_AND_ASSIGN(
      HeartbeatV2 hb,
      DecodeHeartbeatV2(absl::HexStringToBytes("0703aabbcc""0103622e31""00")));
  EXPECT_EQ(hb.log_filename, "b.1");
  EXPECT_FALSE(hb.has_log_position);
  const std::string good = EncodeHeartbeatV2Body("binlog.000041", 123456789);
  // Every truncation loses the end mark or cuts a field.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_THAT(DecodeHeartbeatV2(good.substr(0, n)),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
  // A position whose value is not a packed integer (0xfb).
  EXPECT_THAT(DecodeHeartbeatV2(absl::HexStringToBytes("0201fb00")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("position")));
  // Bytes after the end mark are ignored.
  EXPECT_TRUE(DecodeHeartbeatV2(good + "xyz").ok());
}

}  // namespace
}  // namespace binlog
