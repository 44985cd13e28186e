// Bad input gets a clear error naming the file and offset, never a crash,
// and nothing on disk changes: byte flips in every position of a closed
// file, hostile event sizes, files without magic, hostile index entries,
// missing files, foreign files in the directory.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::EventRef;
using testing_util::NewTempDir;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::WriteFile;

// A closed one-file log; returns its directory.
std::string ClosedLog(bool checksums, int txns = 3) {
  std::string dir = NewTempDir("closed");
  Options o;
  o.checksums = checksums;
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(log.ok());
  TransactionBuffer txn(checksums);
  for (int i = 0; i < txns; ++i) {
    BuildTransaction(&txn, i, 30 + 20 * i);
    EXPECT_TRUE((*log)->Commit(&txn).ok());
  }
  EXPECT_TRUE((*log)->Close().ok());
  return dir;
}

// Snapshot of every file in a directory.
// The lock file (which Open may create) is left out.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  for (const auto& n : *names) {
    if (n != "binlog.lock") out[n] = ReadFile(dir + "/" + n);
  }
  return out;
}

absl::Status ReadDir(const std::string& dir) {
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  if (!r.ok()) return r.status();
  std::vector<EventRef> events;
  return ReadAll(r->get(), &events);
}

TEST(BadInputTest, EveryFlippedByteIsReportedAtItsEvent) {
  std::string src = ClosedLog(true);
  std::string bytes = ReadFile(src + "/binlog.000001");
  // Event start offsets.
  std::vector<uint64_t> starts;
  for (uint64_t pos = 4; pos < bytes.size();) {
    starts.push_back(pos);
    pos += LoadLe32(bytes.data() + pos + kEventSizeOffset);
  }
  std::string dir = NewTempDir("flip");
  WriteFile(dir + "/binlog.index", "./binlog.000001\n");
  for (uint64_t p = 0; p < bytes.size(); ++p) {
    SCOPED_TRACE(absl::StrCat("flipped byte ", p));
    std::string bad = bytes;
    bad[p] = static_cast<char>(bad[p] ^ 0x5A);
    WriteFile(dir + "/binlog.000001", bad);
    absl::Status s = ReadDir(dir);
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    uint64_t event_start = 0;
    if (p >= 4) {
      for (uint64_t st : starts) {
        if (st <= p) event_start = st;
      }
    }
    EXPECT_TRUE(absl::StrContains(s.message(), "binlog.000001")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(),
                                  absl::StrCat("offset ", event_start, ":")))
        << s;
  }
}

TEST(BadInputTest, FlippedBytesWithoutChecksumsNeverCrash) {
  std::string src = ClosedLog(false);
  std::string bytes = ReadFile(src + "/binlog.000001");
  std::string dir = NewTempDir("flipnocrc");
  WriteFile(dir + "/binlog.index", "./binlog.000001\n");
  for (uint64_t p = 0; p < bytes.size(); ++p) {
    for (int mask : {0x01, 0x80, 0xFF}) {
      std::string bad = bytes;
      bad[p] = static_cast<char>(bad[p] ^ mask);
      WriteFile(dir + "/binlog.000001", bad);
      absl::Status s = ReadDir(dir);
      EXPECT_TRUE(s.ok() || s.code() == absl::StatusCode::kDataLoss)
          << "byte " << p << ": " << s;
    }
  }
}

TEST(BadInputTest, HostileEventSizesAreDataLoss) {
  std::string src = ClosedLog(true);
  std::string bytes = ReadFile(src + "/binlog.000001");
  uint64_t second = 4 + LoadLe32(bytes.data() + 4 + kEventSizeOffset);
  for (uint32_t size : {0u, 1u, 18u, 22u, 0x40000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(size);
    std::string bad = bytes;
    StoreLe32(bad.data() + second + kEventSizeOffset, size);
    std::string dir = NewTempDir("size");
    WriteFile(dir + "/binlog.index", "./binlog.000001\n");
    WriteFile(dir + "/binlog.000001", bad);
    absl::Status s = ReadDir(dir);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), absl::StrCat("offset ", second)))
        << s;
  }
}

TEST(BadInputTest, FileWithoutMagic) {
  std::string dir = NewTempDir("nomagic");
  WriteFile(dir + "/binlog.index", "./binlog.000001\n");
  WriteFile(dir + "/binlog.000001", "this is not a binlog file at all");
  absl::Status s = ReadDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "binlog.000001: offset 0")) << s;
  auto before = Snapshot(dir);
  auto log = Binlog::Open(dir, "binlog", Options());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
  EXPECT_EQ(Snapshot(dir), before);
}

TEST(BadInputTest, IndexEntriesOutsideTheDirectoryAreRejected) {
  for (std::string entry :
       {"../x.000001", "/etc/passwd", "./sub/binlog.000001", "binlog.1",
        "other.000001"}) {
    SCOPED_TRACE(entry);
    std::string dir = ClosedLog(true);
    WriteFile(dir + "/binlog.index", "./binlog.000001\n" + entry + "\n");
    auto before = Snapshot(dir);
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
    EXPECT_TRUE(absl::StrContains(log.status().message(), "binlog.index line 2"))
        << log.status();
    absl::Status s = ReadDir(dir);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_EQ(Snapshot(dir), before);
  }
}

TEST(BadInputTest, IndexNamingAMissingFile) {
  std::string dir = ClosedLog(true);
  WriteFile(dir + "/binlog.index", "./binlog.000001\n./binlog.000002\n");
  auto log = Binlog::Open(dir, "binlog", Options());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kNotFound) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "binlog.000002"));
  absl::Status s = ReadDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "binlog.000002"));
}

TEST(BadInputTest, ForeignFilesAreLeftAlone) {
  std::string dir = ClosedLog(true);
  WriteFile(dir + "/notes.txt", "keep me");
  WriteFile(dir + "/binlog.000001.bak", "keep me too");
  WriteFile(dir + "/other.000001", "another log's file");
  WriteFile(dir + "/binlog.000009", "not in the index");
  {
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_EQ((*log)->recovery().ignored_files,
              std::vector<std::string>{"binlog.000009"});
    // New files number past the foreign one instead of clobbering it.
    EXPECT_EQ((*log)->ListFiles().back().number, 10u);
    ASSERT_TRUE((*log)->Close().ok());
  }
  EXPECT_EQ(ReadFile(dir + "/notes.txt"), "keep me");
  EXPECT_EQ(ReadFile(dir + "/binlog.000001.bak"), "keep me too");
  EXPECT_EQ(ReadFile(dir + "/other.000001"), "another log's file");
  EXPECT_EQ(ReadFile(dir + "/binlog.000009"), "not in the index");
  EXPECT_TRUE(ReadDir(dir).ok());
}

// A binlog v3 file (MySQL 3.23-4.x: a Start_v3 event first), a format the
// library does not read.
std::string StartV3File() {
  std::string v3(kBinlogMagic, kMagicSize);
  std::string body;
  body += std::string("\x03\x00", 2);                  // binlog version 3
  std::string version = "4.0.27-log";
  version.resize(50, '\0');
  body += version;
  body += std::string("\x00\x00\x00\x00", 4);          // create timestamp
  const uint32_t size = static_cast<uint32_t>(kHeaderSize + body.size());
  char header[kHeaderSize] = {};
  header[4] = 1;                                       // Start_v3
  header[5] = 1;                                       // server id 1
  StoreLe32(header + kEventSizeOffset, size);
  StoreLe32(header + kLogPosOffset, kMagicSize + size);
  v3.append(header, kHeaderSize);
  v3 += body;
  return v3;
}

// A v3 file where the log's next file would be: not a file this log wrote.
// Open leaves it alone, as other foreign files.
TEST(BadInputTest, AFileOfAnOlderFormatInTheNextFileSlotIsLeftAlone) {
  std::string dir = ClosedLog(true);
  const std::string v3 = StartV3File();
  WriteFile(dir + "/binlog.000002", v3);
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->recovery().ignored_files, std::vector<std::string>{"binlog.000002"});
  ASSERT_TRUE((*log)->Close().ok());
  EXPECT_EQ(ReadFile(dir + "/binlog.000002"), v3);
}

// A v3 file the index names as the log's last file: Open refuses with
// Unimplemented (binlog/log.h) and changes nothing on disk.
TEST(BadInputTest, AnIndexedFileOfAnOlderFormatIsUnimplementedAndUntouched) {
  std::string dir = NewTempDir("v3_indexed");
  const std::string v3 = StartV3File();
  WriteFile(dir + "/binlog.index", "./binlog.000001\n");
  WriteFile(dir + "/binlog.000001", v3);
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kUnimplemented) << log.status();
  EXPECT_NE(log.status().message().find("binlog.000001"), absl::string_view::npos)
      << log.status();
  EXPECT_EQ(ReadFile(dir + "/binlog.000001"), v3);
  EXPECT_EQ(ReadFile(dir + "/binlog.index"), "./binlog.000001\n");
}

TEST(BadInputTest, MissingIndexWithBinlogFilesIsRefused) {
  std::string dir = ClosedLog(true);
  ASSERT_TRUE(io::FileSystem::Default()->Remove(dir + "/binlog.index").ok());
  auto log = Binlog::Open(dir, "binlog", Options());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kFailedPrecondition)
      << log.status();
  // A reader at rest still reads the files by name.
  EXPECT_TRUE(ReadDir(dir).ok());
}

TEST(BadInputTest, TruncatedClosedFileIsDataLossButInUseFileIsTornTail) {
  std::string dir = ClosedLog(true);
  std::string bytes = ReadFile(dir + "/binlog.000001");
  WriteFile(dir + "/binlog.000001", bytes.substr(0, bytes.size() - 5));
  absl::Status s = ReadDir(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  // The same cut with the in-use flag set: a crash tail, reported, not fatal.
  std::string in_use = bytes.substr(0, bytes.size() - 5);
  in_use[kInUseFlagFileOffset] |= kFlagBinlogInUse;
  WriteFile(dir + "/binlog.000001", in_use);
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  std::vector<EventRef> events;
  EXPECT_TRUE(ReadAll(r->get(), &events).ok());
  ASSERT_EQ((*r)->torn_tails().size(), 1u);
  EXPECT_EQ((*r)->torn_tails()[0].offset, bytes.size() - 23);
}

}  // namespace
}  // namespace binlog
