// binlog_server read by python-mysql-replication (tests/tools/
// replication_client_check.py; pinned in tests/tools/requirements.txt,
// installed by tools/setup.sh), an implementation of the replication
// protocol independent of ours: by file and position and by GTID set
// (COM_BINLOG_DUMP_GTID), with CRC32 verification on, over plain and lz4
// logs (lz4 payloads reach the client expanded). Skipped when python3 or
// the package is missing.

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

const char kScript[] = "tests/tools/replication_client_check.py";

using testing_util::RunCommand;

class PythonClientTest : public ServedLogTest {
 protected:
  void SetUp() override {
    std::string out;
    if (RunCommand("python3 -c 'import pymysqlreplication'", &out) != 0) {
      GTEST_SKIP() << "python-mysql-replication not installed (tools/setup.sh installs "
                      "tests/tools/requirements.txt)";
    }
    StartServedLog("binlog_pyclient_", 50, /*xid_base=*/0);
  }

  int Check(const std::string& how, int first, int last, std::string* out) {
    return RunCommand(absl::StrCat("python3 ", kScript, " --port=", port_,
                                   " --user=repl --password=pw --uuid=", kServedUuid,
                                   " --first=", first, " --last=", last, " ", how),
                      out);
  }
};

TEST_P(PythonClientTest, ByFileAndPosition) {
  std::string out;
  EXPECT_EQ(Check("--file=binlog.000001 --pos=4", 1, 50, &out), 0) << out;
}

TEST_P(PythonClientTest, ByGtidSet) {
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("--gtid=", kServedUuid, ":1-49"), 50, 50, &out), 0) << out;
}

INSTANTIATE_TEST_SUITE_P(Codecs, PythonClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
