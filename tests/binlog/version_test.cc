// The library's version: the macros of binlog/version.h and Version() agree.
// (binlogtool --version against the same macros: tests/tools/
// binlogtool_test.py; the installed tree: tools/install_check.sh.)

#include "binlog/version.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

TEST(VersionTest, FunctionReturnsTheMacros) {
  LibraryVersion v = Version();
  EXPECT_EQ(v.major_version, BINLOG_VERSION_MAJOR);
  EXPECT_EQ(v.minor_version, BINLOG_VERSION_MINOR);
  EXPECT_EQ(v.patch_version, BINLOG_VERSION_PATCH);
}

TEST(VersionTest, StringIsMajorMinorPatch) {
  LibraryVersion v = Version();
  EXPECT_EQ(std::string(v.string),
            absl::StrCat(v.major_version, ".", v.minor_version, ".",
                         v.patch_version));
  EXPECT_EQ(std::string(BINLOG_VERSION_STRING), v.string);
}

}  // namespace
}  // namespace binlog
