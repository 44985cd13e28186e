// File: tests/testutil/external_tools.h
//
// Running the real servers' tools from tests: where mariadb-binlog is, and
// a command's exit status and output.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_TESTS_TESTUTIL_EXTERNAL_TOOLS_H_
#define BINLOG_TESTS_TESTUTIL_EXTERNAL_TOOLS_H_

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace binlog {
namespace testing_util {

// The path of MariaDB's mariadb-binlog (or a mysqlbinlog), or "" if none
// is installed (tools/setup.sh installs mariadb-client).
inline std::string FindMariadbBinlog() {
  for (const char* p : {"/usr/bin/mariadb-binlog", "/usr/bin/mysqlbinlog"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return std::string();
}

// Runs `cmd` with sh; returns its exit status (-1 if it did not exit
// normally) and appends its stdout and stderr to *output.
inline int RunCommand(const std::string& cmd, std::string* output) {
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) output->append(buf, n);
  int st = ::pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace testing_util
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_EXTERNAL_TOOLS_H_
