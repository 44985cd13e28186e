// Files this library writes and closes are read by Debian's mariadb-binlog
// (MariaDB's mysqlbinlog) with --verify-binlog-checksum: exit status 0 and
// the same number of events as the library's own reader finds. mariadb-binlog
// comes with the mariadb-client package, which tools/setup.sh installs.

#include <stdio.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::FindMariadbBinlog;
using testing_util::NewTempDir;
using testing_util::RunCommand;


class MariadbBinlogTest : public ::testing::TestWithParam<bool> {};

TEST_P(MariadbBinlogTest, ClosedFilesVerifyWithTheSameEventCount) {
  const bool checksums = GetParam();
  std::string tool = FindMariadbBinlog();
  ASSERT_FALSE(tool.empty())
      << "mariadb-binlog not found: install mariadb-client (tools/setup.sh does)";
  std::string dir = NewTempDir("mariadb_compat");
  Options o;
  o.checksums = checksums;
  o.max_file_size = 16384;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn(checksums);
    for (int i = 0; i < 120; ++i) {
      BuildTransaction(&txn, i, 20 + (i * 41) % 500);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto files = io::FileSystem::Default()->ListDirectory(dir);
  int checked = 0;
  for (const std::string& name : *files) {
    uint64_t n;
    if (!ParseBinlogFileName("binlog", name, &n)) continue;
    SCOPED_TRACE(name);
    std::string path = absl::StrCat(dir, "/", name);
    auto reader = Reader::OpenFiles({path}, ReaderOptions());
    ASSERT_TRUE(reader.ok());
    int ours = 0;
    Event ev;
    absl::Status s;
    while ((s = (*reader)->Next(&ev)).ok()) ++ours;
    ASSERT_TRUE(absl::IsOutOfRange(s)) << s;
    std::string out;
    int rc = RunCommand(absl::StrCat(tool, " --verify-binlog-checksum '", path, "'"), &out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_FALSE(absl::StrContains(out, "ERROR")) << out;
    EXPECT_FALSE(absl::StrContains(out, "not closed properly")) << out;
    int theirs = 0;
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (absl::StartsWith(line, "# at ")) ++theirs;
    }
    EXPECT_EQ(theirs, ours) << out.substr(0, 4000);
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

INSTANTIATE_TEST_SUITE_P(Checksums, MariadbBinlogTest, ::testing::Bool());

}  // namespace
}  // namespace binlog
