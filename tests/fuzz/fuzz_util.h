// Helpers shared by the libFuzzer targets in tests/fuzz/: a contract check
// that aborts (a finding, like a sanitizer report), a per-process scratch
// directory (on tmpfs when there is one, so the fsyncs of Binlog::Open cost
// nothing) and whole-file writes that bypass the library.

#ifndef BINLOG_TESTS_FUZZ_FUZZ_UTIL_H_
#define BINLOG_TESTS_FUZZ_FUZZ_UTIL_H_

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

// Aborts with the failed condition when a target's contract check fails.
#define FUZZ_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

// The same, with `msg` (a std::string or C string: a status, say) printed.
#define FUZZ_CHECK_MSG(cond, msg)                                         \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__,    \
                   __LINE__, #cond, std::string(msg).c_str());            \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

namespace binlog {
namespace fuzz {

// Unlinks every entry of the flat directory `dir` (not `dir` itself).
inline void ClearDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

// Removes the scratch directory and its subdirectories (two levels).
inline void RemoveScratch(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d != nullptr) {
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = dir + "/" + name;
      if (::unlink(path.c_str()) != 0) {
        ClearDir(path);
        ::rmdir(path.c_str());
      }
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

// A directory private to this process, created once:
// $BINLOG_FUZZ_TMPDIR, else /dev/shm (tmpfs), else $TMPDIR or /tmp.
inline const std::string& ScratchDir() {
  static const std::string* dir = [] {
    std::string root;
    if (const char* e = std::getenv("BINLOG_FUZZ_TMPDIR")) {
      root = e;
    } else if (::access("/dev/shm", W_OK) == 0) {
      root = "/dev/shm";
    } else if (const char* t = std::getenv("TMPDIR")) {
      root = t;
    } else {
      root = "/tmp";
    }
    auto* d = new std::string(root + "/binlog_fuzz_" +
                              std::to_string(::getpid()));
    ::mkdir(d->c_str(), 0755);
    // Removed at exit (libFuzzer exits through exit() when a run ends; a
    // crash leaves the directory for inspection).
    std::atexit([] { RemoveScratch(ScratchDir()); });
    return d;
  }();
  return *dir;
}

// Writes `size` bytes to `path` (created or truncated). Aborts on failure:
// the harness, not the library, is broken then.
inline void WriteWholeFile(const std::string& path, const uint8_t* data,
                           size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

inline void WriteWholeFile(const std::string& path, const std::string& s) {
  WriteWholeFile(path, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

}  // namespace fuzz
}  // namespace binlog

#endif  // BINLOG_TESTS_FUZZ_FUZZ_UTIL_H_
