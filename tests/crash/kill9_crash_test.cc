// kill -9 crash test with the real POSIX file system.
//
//   bazel test //tests:kill9_crash_test                  (30 iterations)
//   bazel run //tests:kill9_crash_test -- --iterations=N [--verbose]
//
// Each iteration the parent starts a writer child (this binary with
// --child, exec'ed: a fresh process), which opens the log, commits under
// load from several threads (rotations and purges included) and, after
// every Commit that returned OK, reports (id, file, start, end) through a
// pipe. At a random moment (sometimes while the child is still inside
// Binlog::Open) the parent sends SIGKILL, reaps the child, drains the pipe,
// then opens the log itself and checks the oracle of crash_test_util.h:
// every reported transaction present, intact, at its position, in order;
// no partial or foreign transaction; no duplicate; no torn tail or reader
// error; the log opens cleanly and appends continue (three more
// transactions, read back). A log lives through up to ten kills before the
// next one starts fresh.
//
// The last line is "kill9: <N> iterations passed, <M> failed"; the exit
// status is 0 only if every iteration held.
//
// A kill -9 loses nothing the kernel accepted (the page cache survives), so
// unlike the power-loss test nothing here depends on fsync; what it adds is
// the real POSIX file system, real threads killed at arbitrary
// instructions, and a process boundary.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/log.h"
#include "tests/binlog/log_test_util.h"
#include "tests/crash/crash_test_util.h"

namespace binlog {
namespace {

// One pipe record: written with one write(2) (atomic: < PIPE_BUF).
struct Record {
  uint64_t kind;  // 1: acknowledged commit, 2: purge requested
  uint64_t id;    // kind 1: transaction id; kind 2: purge target
  uint64_t file;
  uint64_t start;
  uint64_t end;
};

struct ChildConfig {
  std::string dir;
  int fd = -1;
  uint64_t seed = 0;
  uint64_t first_id = 1;
};

// The writer's options for a seed (the parent uses the same ones to reopen).
Options OptionsForSeed(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Options o;
  static const uint64_t kSizes[] = {8192, 16384, 65536, 262144};
  o.max_file_size = kSizes[rng() % 4];
  o.checksums = rng() % 4 != 0;
  static const io::PreallocMode kModes[] = {io::PreallocMode::kNone,
                                            io::PreallocMode::kFallocate,
                                            io::PreallocMode::kZeroFill};
  o.preallocate = kModes[rng() % 3];
  o.trim_preallocated = rng() % 4 != 0;
  static const io::Codec kCodecs[] = {io::Codec::kNone, io::Codec::kNone,
                                      io::Codec::kZstd, io::Codec::kLz4};
  o.compression = kCodecs[rng() % 4];
  return o;
}

void WriteRecord(int fd, const Record& r) {
  const char* p = reinterpret_cast<const char*>(&r);
  size_t left = sizeof(r);
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(3);  // the parent is gone
    p += n;
    left -= static_cast<size_t>(n);
  }
}

[[noreturn]] void ChildMain(const ChildConfig& c) {
  Options o = OptionsForSeed(c.seed);
  std::mt19937_64 rng(c.seed ^ 0x5eed);
  const int threads = 1 + static_cast<int>(rng() % 8);
  auto log = Binlog::Open(c.dir, "binlog", o);
  if (!log.ok()) {
    std::fprintf(stderr, "child: Open failed: %s\n",
                 log.status().ToString().c_str());
    std::_Exit(2);
  }
  std::atomic<uint64_t> next_id{c.first_id};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 r(c.seed * 977 + static_cast<uint64_t>(t));
      TransactionBuffer txn(o.checksums);
      for (;;) {  // until killed
        uint64_t id = next_id++;
        crash_test::BuildTxn(&txn, id);
        auto pos = (*log)->Commit(&txn);
        if (!pos.ok()) {
          std::fprintf(stderr, "child: Commit failed: %s\n",
                       pos.status().ToString().c_str());
          std::_Exit(2);
        }
        WriteRecord(c.fd, Record{1, id, pos->file_number, pos->start, pos->end});
        if (t != 0) continue;
        if (r() % 50 == 0 && !(*log)->Rotate().ok()) std::_Exit(2);
        if (r() % 100 == 0) {
          std::vector<LogFileInfo> files = (*log)->ListFiles();
          if (files.size() > 2) {
            uint64_t target = files[files.size() / 2].number;
            WriteRecord(c.fd, Record{2, target, 0, 0, 0});
            if (!(*log)->PurgeTo(target).ok()) std::_Exit(2);
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  std::_Exit(0);
}

struct Totals {
  uint64_t acked = 0;
  uint64_t unacked_found = 0;
  uint64_t killed_in_open = 0;
};

// One kill: returns the violations (empty if the invariants held).
std::vector<std::string> RunIteration(const std::string& self,
                                      const std::string& dir, uint64_t seed,
                                      uint64_t first_id,
                                      crash_test::AckLog* acks, Totals* totals,
                                      bool verbose) {
  std::vector<std::string> violations;
  std::mt19937_64 rng(seed);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {"pipe failed"};
  pid_t pid = ::fork();
  if (pid < 0) return {"fork failed"};
  if (pid == 0) {
    // The child's end as fd 3, kept across exec (dup2 clears O_CLOEXEC;
    // when it is fd 3 already, clear the flag by hand).
    if (fds[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else {
      ::dup2(fds[1], 3);
    }
    std::string a1 = absl::StrCat("--dir=", dir);
    std::string a2 = absl::StrCat("--seed=", seed);
    std::string a3 = absl::StrCat("--first_id=", first_id);
    char* argv[] = {const_cast<char*>(self.c_str()),
                    const_cast<char*>("--child"), a1.data(), a2.data(),
                    a3.data(), const_cast<char*>("--fd=3"), nullptr};
    ::execv(self.c_str(), argv);
    std::_Exit(127);
  }
  ::close(fds[1]);
  // Kill moment: usually within 400 ms of the start; one time in ten within
  // the first 5 ms (inside Open and its first file).
  uint64_t delay_us = rng() % 10 == 0 ? rng() % 5000 : rng() % 400000;
  absl::Time kill_at = absl::Now() + absl::Microseconds(delay_us);
  std::string buf;
  // Reads what the child reported; false at end of file (the child died).
  auto drain = [&](int timeout_ms) {
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0) return errno == EINTR;
    if (r == 0) return true;  // nothing yet
    char chunk[65536];
    ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      return true;
    }
    return n < 0 && errno == EINTR;  // 0: end of file
  };
  bool exited_early = false;
  while (absl::Now() < kill_at) {
    int ms = static_cast<int>(absl::ToInt64Milliseconds(kill_at - absl::Now()));
    if (!drain(ms < 1 ? 1 : ms)) {
      exited_early = true;  // EOF: the child died by itself
      break;
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (drain(1000)) {
  }
  ::close(fds[0]);
  if (exited_early || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    violations.push_back(absl::StrCat(
        "the child ended by itself (status ", status,
        ") before the kill; see its stderr above"));
  }
  size_t n = buf.size() / sizeof(Record);
  uint64_t acked_now = 0;
  for (size_t i = 0; i < n; ++i) {
    Record r;
    std::memcpy(&r, buf.data() + i * sizeof(Record), sizeof(Record));
    if (r.kind == 1) {
      acks->Add(crash_test::AckedTxn{r.id, CommitPosition{r.file, r.start, r.end},
                                     std::string()});
      ++acked_now;
    } else if (r.kind == 2) {
      acks->PurgeRequested(r.id);
    }
  }
  if (acked_now == 0) ++totals->killed_in_open;

  // Restart: recover, append, close, check.
  Options o = OptionsForSeed(seed);
  auto log = Binlog::Open(dir, "binlog", o);
  if (!log.ok()) {
    violations.push_back(
        absl::StrCat("reopen failed: ", log.status().ToString()));
    return violations;
  }
  TransactionBuffer txn(o.checksums);
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t id = first_id + 9000000 + i;
    crash_test::BuildTxn(&txn, id);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) {
      violations.push_back(absl::StrCat("commit after restart failed: ",
                                        pos.status().ToString()));
      return violations;
    }
    acks->Add(crash_test::AckedTxn{id, *pos, std::string(txn.data())});
  }
  const RecoveryReport rep = (*log)->recovery();
  absl::Status cs = (*log)->Close();
  if (!cs.ok()) {
    violations.push_back(absl::StrCat("close failed: ", cs.ToString()));
    return violations;
  }
  crash_test::VerifyResult v = crash_test::VerifyLog(
      dir, "binlog", acks->acked(), acks->purge_floor(),
      /*allow_zero_tails=*/true);
  for (auto& s : v.violations) violations.push_back(std::move(s));
  for (const auto& t : v.torn_tails) {
    violations.push_back(crash_test::TornTailViolation(t));
  }
  for (const auto& e : v.read_errors) {
    violations.push_back(crash_test::ReadErrorViolation(e));
  }
  for (const auto& d : v.corrupted) {
    violations.push_back(absl::StrCat("damaged transaction at ", d.file, ":",
                                      d.start, ": ", d.bytes));
  }
  totals->acked += v.acked_checked;
  totals->unacked_found += v.unacked_found;
  if (verbose) {
    std::printf(
        "  seed %lu: killed after %lu us, %lu commits reported, recovery cut "
        "%lu bytes of %s (%s), %lu acknowledged checked, %lu unacknowledged "
        "found\n",
        static_cast<unsigned long>(seed), static_cast<unsigned long>(delay_us),
        static_cast<unsigned long>(acked_now),
        static_cast<unsigned long>(rep.bytes_cut), rep.file_name.c_str(),
        rep.reason.c_str(), static_cast<unsigned long>(v.acked_checked),
        static_cast<unsigned long>(v.unacked_found));
  }
  return violations;
}

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  std::string prefix = absl::StrCat("--", name, "=");
  if (std::strncmp(arg, prefix.c_str(), prefix.size()) != 0) return false;
  *value = arg + prefix.size();
  return true;
}

int Main(int argc, char** argv) {
  bool child = false, verbose = false;
  uint64_t iterations = 30, seed = 0;
  ChildConfig cc;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (std::strcmp(argv[i], "--child") == 0) {
      child = true;
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else if (ParseFlag(argv[i], "iterations", &v)) {
      if (!absl::SimpleAtoi(v, &iterations)) return 2;
    } else if (ParseFlag(argv[i], "seed", &v)) {
      if (!absl::SimpleAtoi(v, &seed)) return 2;
      cc.seed = seed;
    } else if (ParseFlag(argv[i], "dir", &v)) {
      cc.dir = v;
    } else if (ParseFlag(argv[i], "fd", &v)) {
      if (!absl::SimpleAtoi(v, &cc.fd)) return 2;
    } else if (ParseFlag(argv[i], "first_id", &v)) {
      if (!absl::SimpleAtoi(v, &cc.first_id)) return 2;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--iterations=N] [--seed=S] [--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  if (child) ChildMain(cc);

  std::string self = "/proc/self/exe";
  char path[4096];
  ssize_t len = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (len > 0) self.assign(path, static_cast<size_t>(len));
  if (seed == 0) seed = std::random_device()() | 1;
  std::printf("kill9: %lu iterations, seed %lu (--seed)\n",
              static_cast<unsigned long>(iterations),
              static_cast<unsigned long>(seed));
  std::fflush(stdout);
  std::mt19937_64 rng(seed);
  uint64_t passed = 0, failed = 0;
  Totals totals;
  std::string dir;
  crash_test::AckLog acks;
  int lives = 0;
  for (uint64_t it = 0; it < iterations; ++it) {
    if (lives == 0) {
      dir = testing_util::NewTempDir("kill9");
      acks.Clear();
      lives = 10;
    }
    --lives;
    uint64_t iter_seed = rng();
    std::vector<std::string> v =
        RunIteration(self, dir, iter_seed, 1 + (it + 1) * 100000000ull,
                     &acks, &totals, verbose);
    if (v.empty()) {
      ++passed;
    } else {
      ++failed;
      std::printf("kill9: iteration %lu (seed %lu, log %s) FAILED:\n  %s\n",
                  static_cast<unsigned long>(it),
                  static_cast<unsigned long>(iter_seed), dir.c_str(),
                  absl::StrJoin(v, "\n  ").c_str());
      lives = 0;  // keep the failed log for inspection; start a new one
    }
    std::fflush(stdout);
  }
  std::printf(
      "kill9: %lu acknowledged transactions checked, %lu unacknowledged "
      "complete transactions found, %lu kills before the first commit\n",
      static_cast<unsigned long>(totals.acked),
      static_cast<unsigned long>(totals.unacked_found),
      static_cast<unsigned long>(totals.killed_in_open));
  std::printf("kill9: %lu iterations passed, %lu failed\n",
              static_cast<unsigned long>(passed),
              static_cast<unsigned long>(failed));
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace binlog

int main(int argc, char** argv) { return binlog::Main(argc, argv); }
