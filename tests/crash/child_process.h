// The process plumbing of the out-of-process crash tests (kill -9 of the
// log, kill -9 of the engine server): the test binary starts itself as a
// child with a pipe on fd 3, reads what the child reports, and kills it.
//
// Thread safety: the functions are thread-safe (no shared state).

#ifndef BINLOG_TESTS_CRASH_CHILD_PROCESS_H_
#define BINLOG_TESTS_CRASH_CHILD_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace binlog {
namespace crash_test {

// Starts `self --child args... --fd=3` (exec'ed: a fresh process) with the
// write end of a pipe as its fd 3. Returns its pid and sets *read_fd to
// the parent's read end; -1 if the pipe or the fork failed.
inline pid_t StartChild(const std::string& self,
                        const std::vector<std::string>& args, int* read_fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    // The child's end as fd 3, kept across exec (dup2 clears O_CLOEXEC;
    // when it is fd 3 already, clear the flag by hand).
    if (fds[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else {
      ::dup2(fds[1], 3);
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(self.c_str()));
    argv.push_back(const_cast<char*>("--child"));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(const_cast<char*>("--fd=3"));
    argv.push_back(nullptr);
    ::execv(self.c_str(), argv.data());
    std::_Exit(127);
  }
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

// Waits up to `timeout_ms` for what the child reported and appends it to
// `buf`. False at end of file (the child is gone), true otherwise.
inline bool Drain(int fd, std::string* buf, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int r = ::poll(&p, 1, timeout_ms);
  if (r < 0) return errno == EINTR;
  if (r == 0) return true;  // nothing yet
  char chunk[65536];
  ssize_t n = ::read(fd, chunk, sizeof(chunk));
  if (n > 0) {
    buf->append(chunk, static_cast<size_t>(n));
    return true;
  }
  return n < 0 && errno == EINTR;  // 0: end of file
}

// The path of the running binary (to start it again as a child).
inline std::string SelfPath() {
  char path[4096];
  ssize_t len = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (len <= 0) return "/proc/self/exe";
  return std::string(path, static_cast<size_t>(len));
}

}  // namespace crash_test
}  // namespace binlog

#endif  // BINLOG_TESTS_CRASH_CHILD_PROCESS_H_
