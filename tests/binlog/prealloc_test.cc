// Preallocated files: rotations served from ready spares, logical end
// tracking, trimmed closed files, recovery of zero tails, interrupted
// rotations and leftover spares.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::EventRef;
using testing_util::NewTempDir;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::WriteFile;

Options Prealloc(io::PreallocMode mode, uint64_t max_size = 64 << 10) {
  Options o;
  o.preallocate = mode;
  o.max_file_size = max_size;
  return o;
}

class PreallocModeTest : public ::testing::TestWithParam<io::PreallocMode> {};

TEST_P(PreallocModeTest, RotationRenamesAReadySpareAndClosedFilesAreTrimmed) {
  std::string dir = NewTempDir("prealloc");
  Options o = Prealloc(GetParam());
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  int id = 0;
  // Fill past half of the file: the next file is prepared in the background.
  while ((*log)->VisibleEnd().end < o.max_file_size / 2 + 1024) {
    BuildTransaction(&txn, id++, 500);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  BuildTransaction(&txn, id++, 500);
  ASSERT_TRUE((*log)->Commit(&txn).ok());
  ASSERT_TRUE(testutil::WaitUntil(
      [&] { return (*log)->stats().files_preallocated >= 1; }))
      << "the background thread never prepared a spare";
  ASSERT_TRUE((*log)->Rotate().ok());
  LogStats s = (*log)->stats();
  EXPECT_EQ(s.rotations_from_spare, 1u);
  EXPECT_EQ(s.rotations_waited, 0u);
  // The new active file is the full preallocated size; readers stop at the
  // logical end anyway.
  uint64_t active_size = *io::FileSystem::Default()->FileSize(dir + "/binlog.000002");
  EXPECT_GT(active_size, o.max_file_size);
  for (int i = 0; i < 10; ++i) {
    BuildTransaction(&txn, id++, 300);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  auto r = (*log)->NewReader(ReaderOptions());
  std::vector<EventRef> events;
  ASSERT_TRUE(ReadAll(r->get(), &events).ok());
  EXPECT_TRUE((*r)->torn_tails().empty());
  ASSERT_TRUE((*log)->Close().ok());
  // Closed files end exactly at their last event: no zeros for mysqlbinlog.
  for (const char* name : {"binlog.000001", "binlog.000002"}) {
    std::string bytes = ReadFile(dir + "/" + name);
    auto rr = Reader::OpenFiles({dir + "/" + name}, ReaderOptions());
    std::vector<EventRef> ev;
    ASSERT_TRUE(ReadAll(rr->get(), &ev).ok());
    EXPECT_TRUE((*rr)->torn_tails().empty()) << name;
    EXPECT_EQ(ev.back().end, bytes.size()) << name;
  }
  // No spare is left behind in a closed log directory.
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  for (const auto& n : *names) EXPECT_FALSE(absl::StrContains(n, "prealloc")) << n;
}

INSTANTIATE_TEST_SUITE_P(Modes, PreallocModeTest,
                         ::testing::Values(io::PreallocMode::kZeroFill,
                                           io::PreallocMode::kFallocate));

TEST(PreallocTest, RotationWithoutAReadySpareCreatesTheFile) {
  std::string dir = NewTempDir("nospare");
  auto log = Binlog::Open(dir, "binlog", Prealloc(io::PreallocMode::kZeroFill));
  ASSERT_TRUE((*log)->Rotate().ok());  // nothing requested yet
  EXPECT_EQ((*log)->stats().rotations_waited, 1u);
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(PreallocTest, TransactionBiggerThanTheFileExtendsIt) {
  std::string dir = NewTempDir("big");
  Options o = Prealloc(io::PreallocMode::kZeroFill, 8192);
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  for (int i = 0; i < 30; ++i) {  // rotations, spares prepared meanwhile
    BuildTransaction(&txn, i, 700);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  BuildTransaction(&txn, 1000, 100000);
  auto pos = (*log)->Commit(&txn);
  ASSERT_TRUE(pos.ok());
  std::string big(txn.data());
  ASSERT_TRUE((*log)->Close().ok());
  std::string file = ReadFile(dir + "/" + BinlogFileName("binlog", pos->file_number));
  EXPECT_EQ(file.substr(pos->start, pos->end - pos->start), big);
}

TEST(PreallocTest, TrimOffLeavesZerosThatReadersTreatAsTheEnd) {
  std::string dir = NewTempDir("notrim");
  Options o = Prealloc(io::PreallocMode::kZeroFill, 16384);
  o.trim_preallocated = false;
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  for (int i = 0; i < 40; ++i) {
    BuildTransaction(&txn, i, 500);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  ASSERT_TRUE((*log)->Close().ok());
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  std::vector<EventRef> events;
  ASSERT_TRUE(ReadAll(r->get(), &events).ok());
  size_t txns = 0;
  for (const auto& e : events) txns += e.type == kXidEvent;
  EXPECT_EQ(txns, 40u);
}

TEST(PreallocTest, LeftoverSparesAreRemovedOnOpen) {
  std::string dir = NewTempDir("leftover");
  {
    auto log = Binlog::Open(dir, "binlog", Prealloc(io::PreallocMode::kZeroFill));
    ASSERT_TRUE((*log)->Close().ok());
  }
  WriteFile(dir + "/binlog.prealloc.7", std::string(4096, '\0'));
  WriteFile(dir + "/binlog.prealloc.8.tmp", std::string(100, '\0'));
  auto log = Binlog::Open(dir, "binlog", Prealloc(io::PreallocMode::kZeroFill));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_FALSE(*io::FileSystem::Default()->Exists(dir + "/binlog.prealloc.7"));
  EXPECT_FALSE(*io::FileSystem::Default()->Exists(dir + "/binlog.prealloc.8.tmp"));
}

// A crash between renaming a spare to the next binlog name and the index
// update leaves binlog.<last+1>: all zeros (before its header was written)
// or header only. It held nothing and is removed; its number is reused.
TEST(PreallocTest, InterruptedRotationLeftoversAreRemoved) {
  std::string dir = NewTempDir("interrupted");
  {
    auto log = Binlog::Open(dir, "binlog", Options());
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::string header_only;
  {
    // A file with only header events, as a rotation writes it.
    std::string other = NewTempDir("hdr");
    auto log = Binlog::Open(other, "binlog", Options());
    header_only = ReadFile(other + "/binlog.000001");
    ASSERT_TRUE((*log)->Close().ok());
  }
  for (const std::string& content :
       {std::string(65536, '\0'), std::string(), header_only}) {
    WriteFile(dir + "/" + BinlogFileName("binlog", 2), content);
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ((*log)->recovery().removed_files,
              std::vector<std::string>{"binlog.000002"});
    EXPECT_EQ((*log)->ListFiles().back().number, 2u);
    ASSERT_TRUE((*log)->Close().ok());
    // Reset for the next case: drop file 2 from the index and disk.
    WriteFile(dir + "/binlog.index", "./binlog.000001\n");
    ASSERT_TRUE(io::FileSystem::Default()->Remove(dir + "/binlog.000002").ok());
  }
}

TEST(PreallocTest, NonEmptyUnindexedNextFileIsLeftAlone) {
  std::string dir = NewTempDir("keepnext");
  std::string with_txn;
  {
    std::string other = NewTempDir("txn");
    auto log = Binlog::Open(other, "binlog", Options());
    TransactionBuffer txn;
    BuildTransaction(&txn, 5, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    ASSERT_TRUE((*log)->Close().ok());
    with_txn = ReadFile(other + "/binlog.000001");
  }
  {
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_TRUE((*log)->Close().ok());
  }
  WriteFile(dir + "/binlog.000002", with_txn);
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE((*log)->recovery().removed_files.empty());
  EXPECT_EQ((*log)->recovery().ignored_files,
            std::vector<std::string>{"binlog.000002"});
  EXPECT_EQ(ReadFile(dir + "/binlog.000002"), with_txn);
  EXPECT_EQ((*log)->ListFiles().back().number, 3u);
}

}  // namespace
}  // namespace binlog
