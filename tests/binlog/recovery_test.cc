// Crash recovery of the last file: torn tails at every offset, zeros,
// torn headers, and what Open reports and leaves on disk.

#include <string>
#include <vector>

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

struct Image {
  std::string active;                  // bytes of binlog.000001 while open
  std::vector<CommitPosition> txns;    // positions of the committed txns
  uint64_t header_end = 0;             // end of the file header events
};

// Commits `n` transactions to a fresh one-file log and captures the active
// file as a crash would leave it (in-use flag set, no Stop event).
Image MakeImage(int n, bool checksums) {
  std::string dir = NewTempDir("image");
  Options o;
  o.checksums = checksums;
  o.max_file_size = 1 << 20;
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(log.ok()) << log.status();
  Image img;
  img.header_end = (*log)->VisibleEnd().end;
  TransactionBuffer txn(checksums);
  for (int i = 0; i < n; ++i) {
    BuildTransaction(&txn, i, 40 + 53 * i % 200);
    auto pos = (*log)->Commit(&txn);
    EXPECT_TRUE(pos.ok());
    img.txns.push_back(*pos);
  }
  // The file may be preallocated past its logical end; the image is the
  // logical content (tests add zeros or garbage after it on purpose).
  img.active = ReadFile(dir + "/binlog.000001").substr(0, (*log)->VisibleEnd().end);
  EXPECT_TRUE((*log)->Close().ok());
  return img;
}

// Lays out a crashed log: the index and binlog.000001 = `bytes`.
std::string CrashedDir(const std::string& bytes) {
  std::string dir = NewTempDir("crashed");
  WriteFile(dir + "/binlog.index", "./binlog.000001\n");
  WriteFile(dir + "/binlog.000001", bytes);
  return dir;
}

// Transaction ids ("txn N") found by reading the directory.
std::vector<std::string> TxnIds(const std::string& dir) {
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<EventRef> events;
  absl::Status s = ReadAll(r->get(), &events);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*r)->torn_tails().empty());
  std::vector<std::string> ids;
  for (const auto& e : events) {
    if (e.type != kRowsQueryEvent) continue;
    std::string text = e.bytes.substr(kHeaderSize + 1);
    ids.push_back(text.substr(0, text.find(' ', 4)));
  }
  return ids;
}

class TornTailTest : public ::testing::TestWithParam<bool> {};

TEST_P(TornTailTest, EveryCutKeepsExactlyTheCompleteTransactions) {
  const bool checksums = GetParam();
  Image img = MakeImage(5, checksums);
  ASSERT_EQ(img.txns.size(), 5u);
  // Cut at every offset inside the last two transactions, both ends included.
  uint64_t from = img.txns[3].start;
  uint64_t to = img.txns[4].end;
  ASSERT_EQ(img.active.size(), to);
  for (uint64_t cut = from; cut <= to; ++cut) {
    SCOPED_TRACE(absl::StrCat("cut at ", cut));
    std::string dir = CrashedDir(img.active.substr(0, cut));
    size_t complete = 0;
    uint64_t valid_end = img.header_end;
    for (const auto& t : img.txns) {
      if (t.end <= cut) {
        ++complete;
        valid_end = t.end;
      }
    }
    {
      Options o;
      o.checksums = checksums;
      o.max_file_size = 1 << 20;  // the first file is fallocated to this size
      auto log = Binlog::Open(dir, "binlog", o);
      ASSERT_TRUE(log.ok()) << log.status();
      const RecoveryReport& rep = (*log)->recovery();
      EXPECT_TRUE(rep.recovered);
      EXPECT_EQ(rep.file_name, "binlog.000001");
      EXPECT_EQ(rep.valid_end, valid_end);
      EXPECT_EQ(rep.bytes_cut, cut - valid_end);
      // The recovered file ends exactly at the last complete transaction,
      // with the in-use flag cleared.
      std::string recovered = ReadFile(dir + "/binlog.000001");
      EXPECT_EQ(recovered.size(), valid_end);
      EXPECT_EQ(recovered[kInUseFlagFileOffset] & kFlagBinlogInUse, 0);
      EXPECT_EQ(recovered.substr(kInUseFlagFileOffset + 1),
                img.active.substr(kInUseFlagFileOffset + 1, valid_end - kInUseFlagFileOffset - 1));
      // Appends continue in a new file.
      TransactionBuffer txn(checksums);
      BuildTransaction(&txn, 999, 77);
      auto pos = (*log)->Commit(&txn);
      ASSERT_TRUE(pos.ok()) << pos.status();
      EXPECT_EQ(pos->file_number, 2u);
      ASSERT_TRUE((*log)->Close().ok());
    }
    std::vector<std::string> want;
    for (size_t i = 0; i < complete; ++i) want.push_back(absl::StrCat("txn ", i));
    want.push_back("txn 999");
    EXPECT_EQ(TxnIds(dir), want);
  }
}

INSTANTIATE_TEST_SUITE_P(Checksums, TornTailTest, ::testing::Bool());

TEST(RecoveryTest, ZerosAfterTheLastTransactionAreCut) {
  Image img = MakeImage(3, true);
  std::string dir = CrashedDir(img.active + std::string(4096, '\0'));
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->recovery().valid_end, img.txns.back().end);
  EXPECT_EQ((*log)->recovery().bytes_cut, 4096u);
  EXPECT_FALSE((*log)->recovery().partial_event_cut);
  EXPECT_EQ(ReadFile(dir + "/binlog.000001").size(), img.txns.back().end);
}

TEST(RecoveryTest, GarbageAfterTheLastTransactionIsCut) {
  Image img = MakeImage(3, true);
  std::string garbage = img.active.substr(img.txns[1].start, 100);
  std::string dir = CrashedDir(img.active + garbage);
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->recovery().valid_end, img.txns.back().end);
  EXPECT_EQ((*log)->recovery().bytes_cut, 100u);
}

TEST(RecoveryTest, CleanlyClosedFileIsNotTouched) {
  std::string dir = NewTempDir("clean");
  {
    auto log = Binlog::Open(dir, "binlog", Options());
    TransactionBuffer txn;
    BuildTransaction(&txn, 1, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::string before = ReadFile(dir + "/binlog.000001");
  auto log = Binlog::Open(dir, "binlog", Options());
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE((*log)->recovery().recovered);
  EXPECT_EQ(ReadFile(dir + "/binlog.000001"), before);
}

TEST(RecoveryTest, TornFormatDescriptionIsAnErrorAndChangesNothing) {
  Image img = MakeImage(1, true);
  for (uint64_t cut : {0ul, 3ul, 4ul, 30ul, 100ul}) {
    SCOPED_TRACE(cut);
    std::string bytes = img.active.substr(0, cut);
    std::string dir = CrashedDir(bytes);
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
    EXPECT_NE(log.status().message().find("binlog.000001"), absl::string_view::npos)
        << log.status();
    EXPECT_EQ(ReadFile(dir + "/binlog.000001"), bytes);
    EXPECT_FALSE(*io::FileSystem::Default()->Exists(dir + "/binlog.000002"));
  }
}

TEST(RecoveryTest, ReopenAfterCrashWithoutCloseKeepsEveryCommit) {
  // The writer process "dies" (its Binlog is never closed): simulate by
  // copying the live files before Close.
  std::string dir = NewTempDir("live");
  Options o;
  o.max_file_size = 4096;
  auto log = Binlog::Open(dir, "binlog", o);
  TransactionBuffer txn;
  std::vector<CommitPosition> pos;
  for (int i = 0; i < 40; ++i) {
    BuildTransaction(&txn, i, 150);
    pos.push_back(*(*log)->Commit(&txn));
  }
  std::string copy = NewTempDir("copy");
  for (const auto& f : (*log)->ListFiles()) {
    WriteFile(copy + "/" + f.name, ReadFile(dir + "/" + f.name));
  }
  WriteFile(copy + "/binlog.index", ReadFile(dir + "/binlog.index"));
  ASSERT_TRUE((*log)->Close().ok());
  auto log2 = Binlog::Open(copy, "binlog", o);
  ASSERT_TRUE(log2.ok()) << log2.status();
  EXPECT_TRUE((*log2)->recovery().recovered);
  // Only the unused preallocated zeros after the last commit are cut.
  EXPECT_FALSE((*log2)->recovery().partial_event_cut);
  EXPECT_EQ((*log2)->recovery().valid_end, pos.back().end);
  ASSERT_TRUE((*log2)->Close().ok());
  std::vector<std::string> ids = TxnIds(copy);
  ASSERT_EQ(ids.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(ids[i], absl::StrCat("txn ", i));
}

}  // namespace
}  // namespace binlog
