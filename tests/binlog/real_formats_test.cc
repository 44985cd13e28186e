// The Reader and the GTID readers on files in the layouts of servers other
// than MariaDB 10.11 (tests/testutil/format_variants.h), made from the real
// MariaDB corpus or from the servers' documented layouts:
//   - MariaDB 11.4+: events written through the binlog cache carry
//     log_pos 0; every event is read, by Next() and NextBatch(), through
//     directories and GTID scans, while the position check stays for the
//     events MariaDB positions (and for files of older versions);
//   - relay logs of MySQL 5.0-5.5 replicas (no relay flag; a Rotate with
//     log_pos 0; the source's positions): read to their end;
//   - binlog v3 (MySQL 4.x): Unimplemented "unsupported binlog version 3";
//   - MariaDB-encrypted binlogs (Start_encryption): Unimplemented after
//     the Start_encryption event without the key, saying the file is
//     encrypted; with the key (a real file of mariadbd 10.11 with
//     file_key_management, tests/data/mariadb-encrypted) every event
//     decrypted, its CRC32 verified.

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid_reader.h"
#include "binlog/maria_encryption.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "tests/testutil/corpus.h"
#include "tests/testutil/format_variants.h"

namespace binlog {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/real_formats_XXXXXX";
    path_ = ::mkdtemp(tmpl) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::string cmd = "rm -rf '" + path_ + "'";
      if (std::system(cmd.c_str()) != 0) std::abort();
    }
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::string path_;
};

std::string CorpusFile(const std::string& scenario, const std::string& name) {
  auto s = testutil::ReadFileToString(testutil::CorpusBinlogPath(scenario, name));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::string();
}

std::vector<std::string> CorpusNames(const std::string& scenario) {
  std::vector<std::string> names;
  std::ifstream in(testutil::CorpusBinlogPath(scenario, "mariadb-bin.index"));
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "./")) line = line.substr(2);
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

struct ReadResult {
  absl::Status end;
  std::vector<std::pair<uint64_t, uint64_t>> events;  // (file, offset)
  uint64_t zero_log_pos = 0;
  size_t torn = 0;
};

ReadResult ReadAll(Reader* r) {
  ReadResult out;
  Event ev;
  for (;;) {
    absl::Status s = r->Next(&ev);
    if (!s.ok()) {
      out.end = s;
      break;
    }
    out.events.emplace_back(ev.file_number, ev.offset);
    if (ev.header.log_pos == 0) ++out.zero_log_pos;
  }
  out.torn = r->torn_tails().size();
  return out;
}

// The corpus scenarios rewritten as MariaDB 11.4 writes them, in a
// directory with the corpus's index.
class MariaDb114Test : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const std::string& name : CorpusNames(GetParam())) {
      std::string original = CorpusFile(GetParam(), name);
      auto v = testutil::AsMariaDb114(original);
      ASSERT_TRUE(v.ok()) << v.status();
      zeroed_ += v->count;
      names_.push_back(name);
      dir_.Write(name, v->bytes);
    }
    ASSERT_FALSE(names_.empty());
    dir_.Write("mariadb-bin.index",
               CorpusFile(GetParam(), "mariadb-bin.index"));
  }

  TempDir dir_;
  std::vector<std::string> names_;
  uint64_t zeroed_ = 0;
};

TEST_P(MariaDb114Test, ReaderReturnsEveryEventOfTheOriginal) {
  ASSERT_GT(zeroed_, 0u) << "the scenario has no transaction to rewrite";
  ReaderOptions o;
  o.check_log_pos = true;
  auto original = Reader::OpenDirectory(
      testutil::CorpusScenarioDir(GetParam()) + "/binlogs", "", o);
  ASSERT_TRUE(original.ok()) << original.status();
  ReadResult want = ReadAll(original->get());
  ASSERT_TRUE(absl::IsOutOfRange(want.end)) << want.end;

  auto r = Reader::OpenDirectory(dir_.path(), "", o);
  ASSERT_TRUE(r.ok()) << r.status();
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsOutOfRange(got.end)) << got.end;
  EXPECT_EQ(got.events, want.events);
  EXPECT_EQ(got.zero_log_pos, zeroed_);
  EXPECT_EQ(got.torn, want.torn);
  EXPECT_TRUE((*r)->format_description().unpositioned_cache_events);
}

TEST_P(MariaDb114Test, NextBatchReturnsEveryEventOfTheOriginal) {
  ReaderOptions o;
  auto original = Reader::OpenDirectory(
      testutil::CorpusScenarioDir(GetParam()) + "/binlogs", "", o);
  ASSERT_TRUE(original.ok()) << original.status();
  ReadResult want = ReadAll(original->get());
  auto r = Reader::OpenDirectory(dir_.path(), "", o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::pair<uint64_t, uint64_t>> got;
  EventBatch b;
  BatchOptions bo;
  bo.verify_checksums = true;
  absl::Status s;
  while ((s = (*r)->NextBatch(&b, bo)).ok()) {
    for (size_t i = 0; i < b.size(); ++i) {
      got.emplace_back(b.file_number, b.offset + b.starts[i]);
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(got, want.events);
}

TEST_P(MariaDb114Test, GtidScansFindTheSameState) {
  auto want = ReadAtRestGtidState(
      testutil::CorpusScenarioDir(GetParam()) + "/binlogs", "mariadb-bin",
      LogFlavor::kMariaDB);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = ReadAtRestGtidState(dir_.path(), "mariadb-bin", LogFlavor::kMariaDB);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->maria_state.ToString(), want->maria_state.ToString());
  EXPECT_EQ(got->files, want->files);

  // A replica with no position reads every transaction of the log.
  ReaderOptions o;
  auto reader = OpenMariaGtidReaderAtRest(dir_.path(), "mariadb-bin", *got,
                                          MariaGtidState(), o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  uint64_t gtids = 0;
  Event ev;
  absl::Status s;
  while ((s = (*reader)->Next(&ev)).ok()) {
    if (ev.header.type == kMariaGtidEvent) ++gtids;
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_GT(gtids, 0u);
}

INSTANTIATE_TEST_SUITE_P(Corpus, MariaDb114Test,
                         ::testing::Values("s1-row-crc32",
                                           "s2-statement-nochecksum"));

// The position check stays where MariaDB 11.4 positions events: a Gtid
// event with log_pos 0 is damage, and so is log_pos 0 in a 10.11 file.
TEST(MariaDb114PositionTest, DirectlyWrittenEventsAndOlderFilesKeepTheCheck) {
  const std::string original = CorpusFile("s1-row-crc32", "mariadb-bin.000001");
  auto v = testutil::AsMariaDb114(original);
  ASSERT_TRUE(v.ok()) << v.status();
  // The offsets of the first Gtid event and of the first event after it.
  Event ev;
  uint64_t gtid_at = 0, inner_at = 0;
  {
    TempDir d;
    auto r = Reader::OpenFiles({d.Write("f.000001", original)}, {});
    ASSERT_TRUE(r.ok());
    while ((*r)->Next(&ev).ok()) {
      if (ev.header.type == kMariaGtidEvent && gtid_at == 0) {
        gtid_at = ev.offset;
      } else if (gtid_at != 0 && inner_at == 0) {
        inner_at = ev.offset;
      }
    }
    ASSERT_NE(inner_at, 0u);
  }
  auto zero_at = [](std::string bytes, uint64_t at) {
    StoreLe32(bytes.data() + at + kLogPosOffset, 0);
    uint32_t size = LoadLe32(bytes.data() + at + kEventSizeOffset);
    StoreLe32(bytes.data() + at + size - kChecksumSize,
              ComputeEventChecksum(absl::string_view(bytes.data() + at, size)));
    return bytes;
  };
  TempDir d;
  ReaderOptions o;
  o.check_log_pos = true;
  {
    auto r = Reader::OpenFiles({d.Write("a.000001", zero_at(v->bytes, gtid_at))}, o);
    ASSERT_TRUE(r.ok());
    ReadResult got = ReadAll(r->get());
    EXPECT_TRUE(absl::IsDataLoss(got.end)) << got.end;
    EXPECT_TRUE(absl::StrContains(got.end.message(),
                                  absl::StrCat("offset ", gtid_at, ": log_pos 0")))
        << got.end;
  }
  {
    auto r = Reader::OpenFiles({d.Write("b.000001", zero_at(original, inner_at))}, o);
    ASSERT_TRUE(r.ok());
    ReadResult got = ReadAll(r->get());
    EXPECT_TRUE(absl::IsDataLoss(got.end)) << got.end;
    EXPECT_TRUE(absl::StrContains(got.end.message(),
                                  absl::StrCat("offset ", inner_at, ": log_pos 0")))
        << got.end;
  }
}

TEST(ServerVersionTest, UnpositionedCacheEventsFromMariaDb114) {
  EXPECT_FALSE(ServerVersionWritesUnpositionedCacheEvents("10.11.9-MariaDB-log"));
  EXPECT_FALSE(ServerVersionWritesUnpositionedCacheEvents("11.3.2-MariaDB"));
  EXPECT_TRUE(ServerVersionWritesUnpositionedCacheEvents("11.4.0-MariaDB"));
  EXPECT_TRUE(ServerVersionWritesUnpositionedCacheEvents("11.8.3-MariaDB-log"));
  EXPECT_TRUE(ServerVersionWritesUnpositionedCacheEvents("12.3.1-MariaDB"));
  EXPECT_FALSE(ServerVersionWritesUnpositionedCacheEvents("11.4.2"));  // MySQL
  EXPECT_FALSE(ServerVersionWritesUnpositionedCacheEvents("8.4.3"));
}

TEST(RelayLog55Test, ReadToTheEndAsARelayLog) {
  testutil::Variant v = testutil::MySql55RelayLog(4, 107);
  TempDir d;
  ReaderOptions o;
  o.check_log_pos = true;
  auto r = Reader::OpenFiles({d.Write("relay-bin.000002", v.bytes)}, o);
  ASSERT_TRUE(r.ok());
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsOutOfRange(got.end)) << got.end;
  EXPECT_EQ(got.events.size(), v.count);
  EXPECT_EQ(got.torn, 0u);
  EXPECT_TRUE((*r)->format_description().relay_log);
}

TEST(RelayLog55Test, AFileAfterTheRelayLogIsReadAsABinlog) {
  // Relay mode is the file's: the next file's log_pos is checked again.
  testutil::Variant v = testutil::MySql55RelayLog(2, 4);
  testutil::Variant v3 = testutil::MySql55RelayLog(1, 4);
  TempDir d;
  ReaderOptions o;
  o.check_log_pos = true;
  // A plain binlog: the 5.5 relay log's Format_description alone, whose
  // log_pos is its end, then a Query with a wrong log_pos.
  std::string plain = v3.bytes.substr(0, kMagicSize + 103);
  std::string q = v3.bytes.substr(kMagicSize + 103 + 43 + 103);
  plain += q.substr(0, LoadLe32(q.data() + kEventSizeOffset));
  auto r = Reader::OpenFiles({d.Write("relay-bin.000002", v.bytes),
                              d.Write("binlog.000003", plain)},
                             o);
  ASSERT_TRUE(r.ok());
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsDataLoss(got.end)) << got.end;
  EXPECT_TRUE(absl::StrContains(got.end.message(), "binlog.000003: offset 107"))
      << got.end;
  EXPECT_EQ(got.events.size(), v.count + 1);
}

TEST(OldBinlogVersionTest, V3IsUnsupportedNotDamage) {
  testutil::Variant v = testutil::MySql40Binlog();
  TempDir d;
  auto r = Reader::OpenFiles({d.Write("old.001", v.bytes)}, {});
  ASSERT_TRUE(r.ok());
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsUnimplemented(got.end)) << got.end;
  EXPECT_TRUE(absl::StrContains(got.end.message(), "unsupported binlog version 3"))
      << got.end;
  EXPECT_TRUE(got.events.empty());
}

TEST(MariaDbEncryptionTest, StartEncryptionEndsTheReadablePart) {
  // A real file with a Start_encryption event after its Format_description
  // (scheme 1, key version 1, a 12-byte nonce), then bytes that are not
  // events in the clear (what the encrypted events look like to a reader
  // without the key).
  const std::string original = CorpusFile("s1-row-crc32", "mariadb-bin.000001");
  const uint32_t fde_size = LoadLe32(original.data() + kMagicSize + kEventSizeOffset);
  const uint64_t se_at = kMagicSize + fde_size;
  std::string body(1 + 4 + 12, '\x5a');
  body[0] = 1;
  StoreLe32(body.data() + 1, 1);
  EventHeader h;
  h.type = kMariaStartEncryptionEvent;
  h.server_id = 1;
  h.event_size = static_cast<uint32_t>(kHeaderSize + body.size() + kChecksumSize);
  h.log_pos = static_cast<uint32_t>(se_at + h.event_size);
  std::string se(kHeaderSize, '\0');
  EncodeHeader(h, se.data());
  se += body;
  se += std::string(kChecksumSize, '\0');
  StoreLe32(se.data() + se.size() - kChecksumSize, ComputeEventChecksum(se));
  std::string file = original.substr(0, se_at) + se;
  for (int i = 0; i < 200; ++i) file += static_cast<char>(i * 37 + 11);
  TempDir d;
  auto r = Reader::OpenFiles({d.Write("mariadb-bin.000001", file)}, {});
  ASSERT_TRUE(r.ok());
  ReadResult got = ReadAll(r->get());
  ASSERT_EQ(got.events.size(), 2u);
  EXPECT_EQ(got.events[1].second, se_at);
  EXPECT_TRUE(absl::IsUnimplemented(got.end)) << got.end;
  EXPECT_TRUE(absl::StrContains(got.end.message(), "MariaDB-encrypted binlog"))
      << got.end;
  // The error stays.
  Event ev;
  EXPECT_TRUE(absl::IsUnimplemented((*r)->Next(&ev)));
}

std::string EncryptedDir() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"),
                      "/binlog_storage/tests/data/mariadb-encrypted");
}

std::map<uint32_t, std::string> EncryptedKeys() {
  auto text = testutil::ReadFileToString(EncryptedDir() + "/keys.txt");
  EXPECT_TRUE(text.ok()) << text.status();
  auto keys = ParseMariaKeyFile(text.ok() ? *text : "");
  EXPECT_TRUE(keys.ok()) << keys.status();
  return keys.ok() ? *keys : std::map<uint32_t, std::string>();
}

TEST(MariaDbEncryptionTest, RealFileWithoutTheKeyIsUnsupported) {
  auto r = Reader::OpenDirectory(EncryptedDir(), "", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsUnimplemented(got.end)) << got.end;
  EXPECT_TRUE(absl::StrContains(got.end.message(), "mariadb-bin.000001: offset 296"))
      << got.end;
  EXPECT_EQ(got.events.size(), 2u);  // Format_description, Start_encryption
}

TEST(MariaDbEncryptionTest, RealFileDecryptsWithTheKeyFile) {
  ReaderOptions o;
  o.mariadb_binlog_keys = EncryptedKeys();
  o.check_log_pos = true;
  auto r = Reader::OpenDirectory(EncryptedDir(), "", o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<uint8_t> types;
  std::string annotate;
  Event ev;
  absl::Status s;
  while ((s = (*r)->Next(&ev)).ok()) {
    EXPECT_EQ(ev.checksum, ChecksumState::kOk) << ev.offset;
    if (ev.file_number == 1) types.push_back(ev.header.type);
    if (ev.header.type == kMariaAnnotateRowsEvent) {
      annotate = std::string(ev.body());
    }
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(types, (std::vector<uint8_t>{
                       kFormatDescriptionEvent, kMariaStartEncryptionEvent,
                       kMariaGtidListEvent, kMariaBinlogCheckpointEvent,
                       kMariaGtidEvent, kQueryEvent, kMariaGtidEvent,
                       kQueryEvent, kMariaGtidEvent, kMariaAnnotateRowsEvent,
                       kTableMapEvent, kWriteRowsEventV1, kXidEvent,
                       kRotateEvent}));
  EXPECT_TRUE(absl::StrContains(annotate, "'secret one'")) << annotate;
  EXPECT_TRUE((*r)->torn_tails().empty());

  // NextBatch returns the same events, decrypted.
  auto b = Reader::OpenDirectory(EncryptedDir(), "", o);
  ASSERT_TRUE(b.ok());
  EventBatch batch;
  BatchOptions bo;
  bo.verify_checksums = true;
  size_t n = 0;
  bool saw_secret = false;
  while ((s = (*b)->NextBatch(&batch, bo)).ok()) {
    n += batch.size();
    if (absl::StrContains(batch.data, "secret two")) saw_secret = true;
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_TRUE(saw_secret);
}

TEST(MariaDbEncryptionTest, WrongKeyIsDamageNotGarbage) {
  ReaderOptions o;
  o.mariadb_binlog_keys[kMariaBinlogKeyId] = std::string(32, '\x11');
  auto r = Reader::OpenDirectory(EncryptedDir(), "", o);
  ASSERT_TRUE(r.ok());
  ReadResult got = ReadAll(r->get());
  EXPECT_TRUE(absl::IsDataLoss(got.end)) << got.end;
  EXPECT_TRUE(absl::StrContains(got.end.message(), "offset 296")) << got.end;
}

// The real file's encrypted events through one decryptor (its cipher
// contexts set up once per key, reused from event to event, and set up
// again when the key changes) come out as DecryptMariaEvent makes them
// from scratch, with their CRC32 footers verifying.
TEST(MariaDbEncryptionTest, OneDecryptorForManyEventsAndKeys) {
  const std::string file =
      testutil::ReadFileToString(EncryptedDir() + "/mariadb-bin.000001").value();
  const std::string key = EncryptedKeys().at(kMariaBinlogKeyId);
  // Format_description, then Start_encryption (its body holds the nonce).
  uint64_t at = kMagicSize;
  at += LoadLe32(file.data() + at + kEventSizeOffset);
  const EventHeader se = DecodeHeader(absl::string_view(file).substr(at));
  ASSERT_EQ(se.type, kMariaStartEncryptionEvent);
  auto start = DecodeMariaStartEncryption(absl::string_view(file).substr(
      at + kHeaderSize, se.event_size - kHeaderSize - kChecksumSize));
  ASSERT_TRUE(start.ok()) << start.status();
  at += se.event_size;
  MariaEventDecryptor reused;
  std::string out, fresh;
  const std::string other_key(16, '\x42');
  int events = 0;
  while (at + kHeaderSize <= file.size()) {
    const uint32_t size = LoadLe32(file.data() + at + kEventSizeOffset);
    ASSERT_LE(at + size, file.size());
    const absl::string_view stored = absl::string_view(file).substr(at, size);
    ASSERT_TRUE(reused.Decrypt(key, start->nonce, static_cast<uint32_t>(at),
                               stored, &out).ok());
    ASSERT_TRUE(DecryptMariaEvent(key, start->nonce, static_cast<uint32_t>(at),
                                  stored, &fresh).ok());
    EXPECT_EQ(out, fresh) << "event at " << at;
    EXPECT_TRUE(EventChecksumMatches(out)) << "event at " << at;
    // Another key (another key size) in between: the next event must
    // still decrypt under the right one.
    std::string garbage;
    ASSERT_TRUE(reused.Decrypt(other_key, start->nonce,
                               static_cast<uint32_t>(at), stored, &garbage).ok());
    EXPECT_NE(garbage, fresh);
    at += size;
    ++events;
  }
  EXPECT_EQ(at, file.size());
  EXPECT_GT(events, 10);
}

TEST(MariaKeyFileTest, ParsesIdsAndHexKeys) {
  auto k = ParseMariaKeyFile(
      "# comment\n1;00112233445566778899aabbccddeeff\n\n"
      "2;000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->size(), 2u);
  EXPECT_EQ(k->at(1).size(), 16u);
  EXPECT_EQ(k->at(2).size(), 32u);
  EXPECT_FALSE(ParseMariaKeyFile("1;0011").ok());         // 2-byte key
  EXPECT_FALSE(ParseMariaKeyFile("x;00112233445566778899aabbccddeeff").ok());
  EXPECT_FALSE(ParseMariaKeyFile("1;0011223344556677889xaabbccddeeff").ok());
}

}  // namespace
}  // namespace binlog
