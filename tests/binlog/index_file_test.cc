// Tests for binlog/index_file.h: binlog file names, index parsing (reference
// section 9), and the crash-safe index update on the POSIX file system under
// $TEST_TMPDIR.

#include "binlog/index_file.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// --- File names -------------------------------------------------------------

TEST(BinlogFileNameTest, SplitFindsTheBasenameAndNumberOfAnyLog) {
  absl::string_view base;
  uint64_t n = 0;
  ASSERT_TRUE(SplitBinlogFileName("mysql-bin.v2.000042", &base, &n));
  EXPECT_EQ(base, "mysql-bin.v2");
  EXPECT_EQ(n, 42u);
  EXPECT_FALSE(SplitBinlogFileName("binlog.00042", &base, &n));        // 5 digits
  EXPECT_FALSE(SplitBinlogFileName("binlog.99999999999", &base, &n));  // 11 digits
  EXPECT_FALSE(SplitBinlogFileName("binlog.4294967295", &base, &n));   // > max
  EXPECT_FALSE(SplitBinlogFileName("binlog.index", &base, &n));
  EXPECT_FALSE(SplitBinlogFileName(".000001", &base, &n));
  // ParseBinlogFileName is the same rule with the basename checked.
  EXPECT_TRUE(ParseBinlogFileName("mysql-bin.v2", "mysql-bin.v2.000042", &n));
  EXPECT_FALSE(ParseBinlogFileName("mysql-bin", "mysql-bin.v2.000042", &n));
}

TEST(BinlogFileNameTest, SixDigitsZeroPadded) {
  EXPECT_EQ(BinlogFileName("binlog", 1), "binlog.000001");
  EXPECT_EQ(BinlogFileName("binlog", 42), "binlog.000042");
  EXPECT_EQ(BinlogFileName("mysql-bin", 999999), "mysql-bin.999999");
}

TEST(BinlogFileNameTest, GrowsPastSixDigits) {
  EXPECT_EQ(BinlogFileName("binlog", 1000000), "binlog.1000000");
  EXPECT_EQ(BinlogFileName("binlog", 2147483647), "binlog.2147483647");
}

TEST(BinlogFileNameTest, IndexNames) {
  EXPECT_EQ(IndexFileName("binlog"), "binlog.index");
  EXPECT_EQ(IndexTempFileName("binlog"), "binlog.index_crash_safe");
}

TEST(ParseBinlogFileNameTest, AcceptsSixOrMoreDigits) {
  uint64_t n = 0;
  EXPECT_TRUE(ParseBinlogFileName("binlog", "binlog.000001", &n));
  EXPECT_EQ(n, 1u);
  EXPECT_TRUE(ParseBinlogFileName("binlog", "binlog.999999", &n));
  EXPECT_EQ(n, 999999u);
  EXPECT_TRUE(ParseBinlogFileName("binlog", "binlog.1000000", &n));
  EXPECT_EQ(n, 1000000u);
  EXPECT_TRUE(ParseBinlogFileName("binlog", "binlog.2147483647", &n));
  EXPECT_EQ(n, kMaxFileNumber);
  EXPECT_TRUE(ParseBinlogFileName("mariadb-bin", "mariadb-bin.000004", &n));
  EXPECT_EQ(n, 4u);
}

TEST(ParseBinlogFileNameTest, RoundTripsBinlogFileName) {
  for (uint64_t v : {uint64_t{1}, uint64_t{999999}, uint64_t{1000000},
                     uint64_t{123456789}, kMaxFileNumber}) {
    uint64_t n = 0;
    EXPECT_TRUE(ParseBinlogFileName("b", BinlogFileName("b", v), &n)) << v;
    EXPECT_EQ(n, v);
  }
}

TEST(ParseBinlogFileNameTest, RejectsOtherBasenames) {
  uint64_t n = 77;
  EXPECT_FALSE(ParseBinlogFileName("binlog", "other.000001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog2.000001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "xbinlog.000001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog000001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog_000001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.index", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "./binlog.000001", &n));
  EXPECT_EQ(n, 77u) << "number must be left alone on failure";
}

TEST(ParseBinlogFileNameTest, RejectsShortNumbers) {
  uint64_t n = 0;
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.1", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.00001", &n));
}

TEST(ParseBinlogFileNameTest, RejectsNonDigits) {
  uint64_t n = 0;
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.00000a", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.-00001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.+00001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog. 00001", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.000001 ", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.000001.bak", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.000001~", &n));
}

TEST(ParseBinlogFileNameTest, RejectsNumbersAboveTheLimit) {
  uint64_t n = 0;
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.2147483648", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.9999999999", &n));
  EXPECT_FALSE(ParseBinlogFileName("binlog", "binlog.99999999999999999999",
                                   &n));
}

// --- ParseIndex -------------------------------------------------------------

constexpr char kDir[] = "/var/lib/mysql";
constexpr char kIndexPath[] = "/var/lib/mysql/b.index";

absl::StatusOr<std::vector<uint64_t>> Parse(absl::string_view content) {
  return ParseIndex(content, kDir, "b", kIndexPath);
}

// DataLoss naming the index file and the line.
::testing::Matcher<absl::StatusOr<std::vector<uint64_t>>> DataLossAtLine(
    int line) {
  return StatusIs(absl::StatusCode::kDataLoss,
                  AllOf(HasSubstr(kIndexPath),
                        HasSubstr(absl::StrCat("line ", line))));
}

TEST(ParseIndexTest, RelativeEntriesWithAndWithoutDotSlash) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v,
                       Parse("./b.000001\nb.000002\n"));
  EXPECT_THAT(v, ElementsAre(1, 2));
}

TEST(ParseIndexTest, ServerWrittenIndex) {
  // What MariaDB wrote for the corpus (reference 9.2).
  ASSERT_OK_AND_ASSIGN(
      std::vector<uint64_t> v,
      ParseIndex("./mariadb-bin.000001\n./mariadb-bin.000002\n"
                 "./mariadb-bin.000003\n./mariadb-bin.000004\n",
                 "/data", "mariadb-bin", "/data/mariadb-bin.index"));
  EXPECT_THAT(v, ElementsAre(1, 2, 3, 4));
}

TEST(ParseIndexTest, AbsolutePathInsideDirectory) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<uint64_t> v,
      Parse("/var/lib/mysql/b.000003\n./b.000004\n/var/lib/mysql/b.1000000\n"));
  EXPECT_THAT(v, ElementsAre(3, 4, 1000000));
}

TEST(ParseIndexTest, AbsolutePathWithDirectoryTrailingSlash) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<uint64_t> v,
      ParseIndex("/var/lib/mysql/b.000003\n", "/var/lib/mysql/", "b",
                 kIndexPath));
  EXPECT_THAT(v, ElementsAre(3));
}

TEST(ParseIndexTest, EmptyContentIsEmptyList) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v, Parse(""));
  EXPECT_THAT(v, IsEmpty());
}

TEST(ParseIndexTest, LastLineWithoutNewline) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v, Parse("./b.000001\nb.000002"));
  EXPECT_THAT(v, ElementsAre(1, 2));
}

TEST(ParseIndexTest, TrailingCarriageReturnStripped) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v,
                       Parse("./b.000001\r\n./b.000002\r\n"));
  EXPECT_THAT(v, ElementsAre(1, 2));
}

TEST(ParseIndexTest, EmptyLineEndsTheList) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v,
                       Parse("./b.000001\n\n./b.000002\n"));
  EXPECT_THAT(v, ElementsAre(1));
  // Whatever follows the empty line is not looked at.
  ASSERT_OK_AND_ASSIGN(v, Parse("./b.000001\n\r\n../garbage\n"));
  EXPECT_THAT(v, ElementsAre(1));
}

TEST(ParseIndexTest, OneCharacterLineEndsTheList) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v,
                       Parse("./b.000001\nx\n./b.000002\n"));
  EXPECT_THAT(v, ElementsAre(1));
}

TEST(ParseIndexTest, ParentDirectoryEntryIsDataLoss) {
  EXPECT_THAT(Parse("./b.000001\n../x\n"), DataLossAtLine(2));
  EXPECT_THAT(Parse("../b.000001\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("./../b.000001\n"), DataLossAtLine(1));
}

TEST(ParseIndexTest, AbsolutePathOutsideDirectoryIsDataLoss) {
  EXPECT_THAT(Parse("/etc/passwd\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("./b.000001\n/tmp/b.000002\n"), DataLossAtLine(2));
  // A sibling directory whose name starts with the log directory's name.
  EXPECT_THAT(Parse("/var/lib/mysql2/b.000001\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("/var/lib/mysql/../b.000001\n"), DataLossAtLine(1));
}

TEST(ParseIndexTest, SubdirectoryEntryIsDataLoss) {
  EXPECT_THAT(Parse("./b.000001\nb.000002\n./sub/b.000003\n"),
              DataLossAtLine(3));
  EXPECT_THAT(Parse("sub/b.000001\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("/var/lib/mysql/sub/b.000001\n"), DataLossAtLine(1));
}

TEST(ParseIndexTest, OtherBasenameIsDataLoss) {
  EXPECT_THAT(Parse("other.000001\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("./b.000001\n./bb.000002\n"), DataLossAtLine(2));
}

TEST(ParseIndexTest, ShortOrNonNumericExtensionIsDataLoss) {
  EXPECT_THAT(Parse("./b.00001\n"), DataLossAtLine(1));
  EXPECT_THAT(Parse("./b.00000x\n"), DataLossAtLine(1));
}

TEST(ParseIndexTest, OutOfOrderEntriesAreDataLoss) {
  EXPECT_THAT(Parse("./b.000002\n./b.000001\n"), DataLossAtLine(2));
  EXPECT_THAT(Parse("./b.000001\n./b.000003\n./b.000002\n"),
              DataLossAtLine(3));
}

TEST(ParseIndexTest, DuplicateEntriesAreDataLoss) {
  EXPECT_THAT(Parse("./b.000001\n./b.000001\n"), DataLossAtLine(2));
  // The same file spelled two ways is still a duplicate.
  EXPECT_THAT(Parse("./b.000001\n/var/lib/mysql/b.000001\n"),
              DataLossAtLine(2));
}

TEST(ParseIndexTest, GapsAreAllowed) {
  // PURGE removes the oldest files; numbering is increasing, not dense.
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> v,
                       Parse("./b.000005\n./b.000009\n"));
  EXPECT_THAT(v, ElementsAre(5, 9));
}

// --- ReadIndex / WriteIndex on the POSIX file system ------------------------

class IndexFileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = io::FileSystem::Default();
    const char* tmp = std::getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr) << "run under bazel test";
    const ::testing::TestInfo* info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = io::JoinPath(tmp, absl::StrCat("index_", info->name()));
    ASSERT_OK(fs_->CreateDirectory(dir_));
    // Start empty even if a previous run left files behind.
    auto names = fs_->ListDirectory(dir_);
    ASSERT_OK(names.status());
    for (const std::string& n : *names) {
      ASSERT_OK(fs_->Remove(io::JoinPath(dir_, n)));
    }
    ASSERT_OK_AND_ASSIGN(dir_handle_, fs_->OpenDirectory(dir_));
  }

  std::string PathOf(absl::string_view name) const {
    return io::JoinPath(dir_, name);
  }

  void WriteFile(absl::string_view name, absl::string_view content) {
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<io::WritableFile> f,
        fs_->OpenWritable(PathOf(name), io::OpenMode::kCreateOrTruncate));
    ASSERT_OK(f->Write(0, content));
    ASSERT_OK(f->Close());
  }

  bool Exists(absl::string_view name) {
    auto e = fs_->Exists(PathOf(name));
    EXPECT_OK(e.status());
    return e.ok() && *e;
  }

  io::FileSystem* fs_ = nullptr;
  std::string dir_;
  std::unique_ptr<io::Directory> dir_handle_;
};

TEST_F(IndexFileIoTest, WriteThenReadRoundTrip) {
  std::vector<uint64_t> numbers = {1, 2, 3, 999999, 1000000};
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", numbers));
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_EQ(got, numbers);
  EXPECT_FALSE(Exists("binlog.index_crash_safe"));
}

// The index gets the log's file mode (Options::file_mode; 0640 by default).
TEST_F(IndexFileIoTest, TheIndexGetsTheFileMode) {
  const mode_t old_umask = ::umask(022);
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", {1}));
  EXPECT_EQ(*fs_->Permissions(PathOf("binlog.index")), 0640u);
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "other", {1}, 0600));
  EXPECT_EQ(*fs_->Permissions(PathOf("other.index")), 0600u);
  ::umask(old_umask);
}

TEST_F(IndexFileIoTest, WritesServerFormat) {
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", {1, 2}));
  ASSERT_OK_AND_ASSIGN(std::string content,
                       ReadSmallFile(fs_, PathOf("binlog.index")));
  EXPECT_EQ(content, "./binlog.000001\n./binlog.000002\n");
}

TEST_F(IndexFileIoTest, RewriteReplacesTheList) {
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", {1, 2, 3}));
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", {3, 4}));
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_THAT(got, ElementsAre(3, 4));
}

TEST_F(IndexFileIoTest, EmptyListRoundTrip) {
  ASSERT_OK(WriteIndex(fs_, dir_handle_.get(), dir_, "binlog", {}));
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_THAT(got, IsEmpty());
}

TEST_F(IndexFileIoTest, ReadUsesACompleteCrashSafeCopyWithoutRenaming) {
  // A server that unlinks the old index before the rename died in between:
  // only the crash-safe copy exists. Readers use it and change nothing.
  WriteFile("binlog.index_crash_safe", "./binlog.000001\n./binlog.000002\n");
  ASSERT_FALSE(Exists("binlog.index"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_THAT(got, ElementsAre(1, 2));
  EXPECT_FALSE(Exists("binlog.index"));
  EXPECT_TRUE(Exists("binlog.index_crash_safe"));
}

TEST_F(IndexFileIoTest, TornCrashSafeCopyIsIgnored) {
  // Cut short before its fdatasync: no final newline.
  WriteFile("binlog.index_crash_safe", "./binlog.00");
  EXPECT_THAT(ReadIndex(fs_, dir_, "binlog"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(IndexFileIoTest, ExistingIndexWinsOverLeftoverCrashSafeCopy) {
  // A crash before the rename with the old index still in place: the old
  // index is the committed state.
  WriteFile("binlog.index", "./binlog.000001\n");
  WriteFile("binlog.index_crash_safe", "./binlog.000001\n./binlog.000002\n");
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_THAT(got, ElementsAre(1));
}

TEST_F(IndexFileIoTest, MissingIndexIsNotFound) {
  EXPECT_THAT(ReadIndex(fs_, dir_, "binlog"),
              StatusIs(absl::StatusCode::kNotFound));
  // Another basename's index does not count.
  WriteFile("other.index", "./other.000001\n");
  EXPECT_THAT(ReadIndex(fs_, dir_, "binlog"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(IndexFileIoTest, MalformedIndexIsDataLossNamingTheFile) {
  WriteFile("binlog.index", "./binlog.000001\n/etc/passwd\n");
  EXPECT_THAT(ReadIndex(fs_, dir_, "binlog"),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr(PathOf("binlog.index")),
                             HasSubstr("line 2"))));
}

TEST_F(IndexFileIoTest, AbsoluteEntriesInThisDirectoryAreAccepted) {
  WriteFile("binlog.index",
            absl::StrCat(PathOf("binlog.000007"), "\n./binlog.000008\n"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> got,
                       ReadIndex(fs_, dir_, "binlog"));
  EXPECT_THAT(got, ElementsAre(7, 8));
}

TEST_F(IndexFileIoTest, ReadSmallFileLimits) {
  WriteFile("small", "0123456789");
  ASSERT_OK_AND_ASSIGN(std::string s, ReadSmallFile(fs_, PathOf("small")));
  EXPECT_EQ(s, "0123456789");
  EXPECT_THAT(ReadSmallFile(fs_, PathOf("small"), 9),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(ReadSmallFile(fs_, PathOf("small"), 10), IsOk());
  EXPECT_THAT(ReadSmallFile(fs_, PathOf("missing")),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace binlog
