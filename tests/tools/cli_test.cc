// Tests of tools/cli.h: the command-line forms binlogtool parses itself.

#include "tools/cli.h"

#include "gtest/gtest.h"

namespace binlog {
namespace tools {
namespace {

TEST(GtidSpecTest, MySqlAndMariaDbForms) {
  GtidSpec g;
  ASSERT_TRUE(ParseGtidSpec("3E11FA47-71CA-11E1-9E33-C80AA9429562:23", &g));
  EXPECT_TRUE(g.mysql);
  EXPECT_FALSE(g.maria);
  EXPECT_EQ(g.gno, 23);
  EXPECT_TRUE(g.tag.empty());
  // MySQL 8.4 tagged GTIDs: the tag normalized.
  ASSERT_TRUE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562:Blue_1:7", &g));
  EXPECT_TRUE(g.mysql);
  EXPECT_EQ(g.tag.str(), "blue_1");
  EXPECT_EQ(g.gno, 7);
  EXPECT_EQ(g.uuid.ToString(), "3e11fa47-71ca-11e1-9e33-c80aa9429562");
  ASSERT_TRUE(ParseGtidSpec("0-1-57", &g));
  EXPECT_TRUE(g.maria);
  EXPECT_FALSE(g.mysql);
  EXPECT_EQ(g.domain_id, 0u);
  EXPECT_EQ(g.server_id, 1u);
  EXPECT_EQ(g.seq_no, 57u);
}

TEST(GtidSpecTest, MalformedFormsAreRefused) {
  GtidSpec g;
  EXPECT_FALSE(ParseGtidSpec("0-1", &g));
  EXPECT_FALSE(ParseGtidSpec("0-1-+5", &g));
  EXPECT_FALSE(ParseGtidSpec("x:1", &g));
  EXPECT_FALSE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562:0", &g));
  EXPECT_FALSE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562::7", &g));
  EXPECT_FALSE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562:9tag:7", &g));
  EXPECT_FALSE(ParseGtidSpec("3e11fa47-71ca-11e1-9e33-c80aa9429562:a:b:7", &g));
}

}  // namespace
}  // namespace tools
}  // namespace binlog
