// File: tests/testutil/process.h
//
// Child processes of tests (servers the tests start): spawning with the
// output to a file, and stopping them.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_TESTS_TESTUTIL_PROCESS_H_
#define BINLOG_TESTS_TESTUTIL_PROCESS_H_

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace binlog {
namespace testing_util {

// Starts args[0] (a path) with `args`, its stdout and stderr going to
// `out` ("" keeps the test's), truncated first unless `append`. Returns
// the child's pid (-1 if fork failed; a failed exec exits 127).
inline pid_t SpawnProcess(const std::vector<std::string>& args, const std::string& out,
                          bool append = false) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!out.empty()) {
      FILE* f = ::freopen(out.c_str(), append ? "a" : "w", stdout);
      (void)f;
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// SIGKILL and reap (pid <= 0: nothing).
inline void KillProcess(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  int st;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

// SIGTERM, then SIGKILL if it has not exited after `grace`; reaped either
// way (pid <= 0: nothing).
inline void StopProcess(pid_t pid, absl::Duration grace) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int st;
  const absl::Time end = absl::Now() + grace;
  while (absl::Now() < end) {
    if (::waitpid(pid, &st, WNOHANG) == pid) return;
    absl::SleepFor(absl::Milliseconds(50));  // polls the exit (bounded)
  }
  KillProcess(pid);
}

}  // namespace testing_util
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_PROCESS_H_
