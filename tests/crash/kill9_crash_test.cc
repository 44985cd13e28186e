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
// Binlog::Open) the parent sends SIGKILL and reaps the child.
//
// Then, in half of the iterations, one or two recovering children follow
// (--mode=recover), each killed early: the child opens the log (so Open
// recovers what the last kill left), commits twice, rotates, commits
// twice, reporting each step. Its file system is the fault-injecting one
// over POSIX, used only for its pause point: the child stops before its
// K-th mutating file-system call (K drawn from the iteration seed: inside
// the recovery, the new file, the index write, the commits or the first
// rotation) and tells the parent, which kills it there; or (one time in
// three) the child only says it is entering Open and the parent kills it
// after a random delay of up to 3 ms, at an arbitrary instruction.
//
// After every kill the parent checks that each file whose in-use flag is
// clear ends cleanly (crash_test_util.h, CheckClosedFilesEnd). After the
// last one it opens the log itself and checks the oracle: every reported
// transaction present, intact, at its position, in order; no partial or
// foreign transaction; no duplicate; no torn tail or reader error; the log
// opens cleanly and appends continue (three more transactions, read back).
// A log lives through up to ten iterations before the next one starts
// fresh.
//
// Liveness: a child that makes no report for 30 s is hung (a deadlock in
// Open, recovery, or the first rotation after a kill) and fails its
// iteration; a writer that lived 100 ms must have acknowledged a commit
// (one that has not gets 30 s more, then fails the iteration as hung).
// The writer reports each acknowledged transaction's bytes too, and the
// oracle compares them (without checksums no reader would see a changed
// Gtid or BEGIN byte).
//
// --plant=phantom_ack|flipped_byte makes the writer report an
// acknowledgement for a commit it never made, or its bytes with one byte
// changed; an iteration then holds only if it fails with exactly that
// violation ("acknowledged missing", "differs from the bytes written"):
// the sensitivity check of this harness (kill9_phantom_ack_test,
// kill9_flipped_byte_test).
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

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/log.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/crash/child_process.h"
#include "tests/crash/crash_test_util.h"

ABSL_FLAG(uint64_t, iterations, 30, "kill-and-recover iterations");
ABSL_FLAG(uint64_t, seed, 0,
          "random seed of the run (0: a fresh one, printed); child: the "
          "seed of its options and workload");
ABSL_FLAG(bool, verbose, false, "print every iteration");
ABSL_FLAG(std::string, plant, "none",
          "none, phantom_ack or flipped_byte: a defect planted in the "
          "writer's reports, which every iteration must then detect");
// The child's flags (the parent passes them).
ABSL_FLAG(bool, child, false, "run as a child (set by the parent, with --fd)");
ABSL_FLAG(std::string, dir, "", "child: the log's directory");
ABSL_FLAG(int, fd, -1, "child: the descriptor its reports go to");
ABSL_FLAG(uint64_t, first_id, 1, "child: the id of its first transaction");
ABSL_FLAG(std::string, mode, "",
          "child: \"recover\" for a recovering child; else a writer");
ABSL_FLAG(uint64_t, pause_at, 0,
          "recovering child: stop before this mutating file-system call "
          "(0: none)");

namespace binlog {
namespace {

// Record kinds besides commits and purges: where a recovering child is.
enum : uint64_t {
  kAck = 1,          // acknowledged commit (id, file, start, end)
  kPurge = 2,        // purge requested (id: the target)
  kPaused = 3,       // stopped before its K-th mutating call (id: K)
  kLifeDone = 4,     // ran its whole life, waits to be killed
  kEnteringOpen = 5, // about to call Binlog::Open
  kOpened = 6,       // Open returned OK
  kRotating = 7,     // about to call Rotate
  kRotated = 8,      // Rotate returned OK
};

// One pipe record: this header, then `len` bytes (kind 1: the bytes the
// transaction was written with). The child writes records under one mutex,
// so they never interleave; a record the kill cut short is dropped.
struct Record {
  uint64_t kind;  // see above
  uint64_t id;    // kind 1: transaction id; kind 2: purge target
  uint64_t file;
  uint64_t start;
  uint64_t end;
  uint64_t len = 0;
};

// A defect the child plants to show the parent's checks can fail
// (--plant=, kill9_crash_sensitivity_test): with one, an iteration passes
// only if it fails with exactly the violation that plant must cause.
enum class Plant {
  kNone,
  // After its first commit, the writer reports an acknowledgement for a
  // transaction it never committed: "acknowledged ... is missing".
  kPhantomAck,
  // The writer reports its commits with one byte of their Gtid event
  // flipped: "differs from the bytes written" (the bytes are compared, so
  // damage a reader cannot see without checksums is caught).
  kFlippedByte,
};

// Ids of the acknowledgements kPhantomAck makes up (never committed).
constexpr uint64_t kPhantomIdBase = uint64_t{1} << 62;

struct ChildConfig {
  std::string dir;
  int fd = -1;
  uint64_t seed = 0;
  uint64_t first_id = 1;
  bool recover = false;   // --mode=recover
  uint64_t pause_at = 0;  // recover: stop before this mutating call (0: no)
  Plant plant = Plant::kNone;
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

void WriteAll(int fd, const char* p, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(3);  // the parent is gone
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Records from several threads of the child, whole (header and bytes).
std::mutex* RecordMutex() {
  static std::mutex* mu = new std::mutex();
  return mu;
}

void WriteRecord(int fd, Record r, absl::string_view bytes = {}) {
  r.len = bytes.size();
  std::lock_guard<std::mutex> l(*RecordMutex());
  WriteAll(fd, reinterpret_cast<const char*>(&r), sizeof(r));
  WriteAll(fd, bytes.data(), bytes.size());
}

// The bytes a writer reports for its acknowledged transaction: as written
// (with kFlippedByte, one byte of the Gtid event's body changed).
std::string ReportedBytes(const TransactionBuffer& txn, Plant plant) {
  std::string b(txn.data());
  if (plant == Plant::kFlippedByte && b.size() > kHeaderSize + 1) {
    b[kHeaderSize + 1] ^= 0x40;
  }
  return b;
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
  std::atomic<bool> phantom_sent{false};
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
        // The made-up acknowledgement goes first, so a parent that has
        // seen any acknowledgement has seen it.
        if (c.plant == Plant::kPhantomAck && !phantom_sent.exchange(true)) {
          WriteRecord(c.fd, Record{kAck, kPhantomIdBase + c.first_id,
                                   pos->file_number, pos->end,
                                   pos->end + (pos->end - pos->start)});
        }
        WriteRecord(c.fd, Record{kAck, id, pos->file_number, pos->start, pos->end},
                    ReportedBytes(txn, c.plant));
        if (t != 0) continue;
        if (r() % 50 == 0 && !(*log)->Rotate().ok()) std::_Exit(2);
        // No purge with a planted defect: a purge may remove the file of
        // the planted acknowledgement, which the oracle then rightly skips.
        if (r() % 100 == 0 && c.plant == Plant::kNone) {
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

// A recovering life (--mode=recover): Open, two commits, Rotate, two
// commits, reporting each step; with pause_at K, the K-th mutating
// file-system call (of any thread) reports kPaused and blocks until the
// parent's SIGKILL. The fault-injecting file system is used only for that
// pause point (it injects nothing here).
[[noreturn]] void RecoverChildMain(const ChildConfig& c) {
  Options o = OptionsForSeed(c.seed);
  io::FaultInjectionFileSystem fs;
  std::atomic<uint64_t> calls{0};
  if (c.pause_at > 0) {
    fs.SetOpHook([&](io::FaultOp, const std::string&) {
      if (++calls == c.pause_at) {
        WriteRecord(c.fd, Record{kPaused, c.pause_at, 0, 0, 0});
        for (;;) ::pause();
      }
    });
  }
  o.file_system = &fs;
  WriteRecord(c.fd, Record{kEnteringOpen, 0, 0, 0, 0});
  auto log = Binlog::Open(c.dir, "binlog", o);
  if (!log.ok()) {
    std::fprintf(stderr, "recovering child: Open failed: %s\n",
                 log.status().ToString().c_str());
    std::_Exit(2);
  }
  WriteRecord(c.fd, Record{kOpened, 0, 0, 0, 0});
  TransactionBuffer txn(o.checksums);
  uint64_t id = c.first_id;
  auto commit = [&] {
    crash_test::BuildTxn(&txn, id);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) {
      std::fprintf(stderr, "recovering child: Commit failed: %s\n",
                   pos.status().ToString().c_str());
      std::_Exit(2);
    }
    WriteRecord(c.fd, Record{kAck, id, pos->file_number, pos->start, pos->end},
                txn.data());
    ++id;
  };
  commit();
  commit();
  WriteRecord(c.fd, Record{kRotating, 0, 0, 0, 0});
  absl::Status rs = (*log)->Rotate();
  if (!rs.ok()) {
    std::fprintf(stderr, "recovering child: Rotate failed: %s\n",
                 rs.ToString().c_str());
    std::_Exit(2);
  }
  WriteRecord(c.fd, Record{kRotated, 0, 0, 0, 0});
  commit();
  commit();
  WriteRecord(c.fd, Record{kLifeDone, 0, 0, 0, 0});
  for (;;) ::pause();
}

struct Totals {
  uint64_t acked = 0;           // checks, counting re-checks
  uint64_t unacked_found = 0;
  uint64_t killed_in_open = 0;  // writer children killed before a commit
  std::unordered_set<uint64_t> distinct;  // acknowledged ids checked
  // Recovering children, by where the kill found them.
  uint64_t recovering_children = 0;
  uint64_t killed_paused = 0;        // at their pause point
  uint64_t killed_in_recovery_open = 0;
  uint64_t killed_in_first_rotation = 0;
  uint64_t killed_after = 0;
  uint64_t clean_files_checked = 0;
  uint64_t hung = 0;                 // children that stopped reporting
  uint64_t late_first_commit = 0;    // writers kept alive for their first ack
};

// The whole records in `buf` (a record the kill cut short is left out),
// each with its bytes.
std::vector<std::pair<Record, std::string>> Records(const std::string& buf) {
  std::vector<std::pair<Record, std::string>> out;
  size_t at = 0;
  while (buf.size() - at >= sizeof(Record)) {
    Record r;
    std::memcpy(&r, buf.data() + at, sizeof(Record));
    if (buf.size() - at - sizeof(Record) < r.len) break;
    out.push_back({r, buf.substr(at + sizeof(Record), r.len)});
    at += sizeof(Record) + r.len;
  }
  return out;
}

bool HasKind(const std::string& buf, uint64_t kind) {
  for (const auto& [r, bytes] : Records(buf)) {
    if (r.kind == kind) return true;
  }
  return false;
}

// How long a child may take to reach its next report before it counts as
// hung (a deadlock in recovery or in the first rotation after the kill).
// Far above any step's duration on a loaded machine under sanitizers.
constexpr absl::Duration kHungAfter = absl::Seconds(30);

// Kills, reaps, drains; the acknowledgements go to `acks`.
void KillAndCollect(pid_t pid, int fd, std::string* buf, bool exited_early,
                    crash_test::AckLog* acks, uint64_t* acked_now,
                    std::vector<std::string>* violations) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (crash_test::Drain(fd, buf, 1000)) {
  }
  ::close(fd);
  if (exited_early || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    violations->push_back(absl::StrCat(
        "the child ended by itself (status ", status,
        ") before the kill; see its stderr above"));
  }
  *acked_now = 0;
  for (auto& [r, bytes] : Records(*buf)) {
    if (r.kind == kAck) {
      acks->Add(crash_test::AckedTxn{
          r.id, crash_test::Position(r.file, r.start, r.end), std::move(bytes)});
      ++*acked_now;
    } else if (r.kind == kPurge) {
      acks->PurgeRequested(r.id);
    }
  }
}

// After a kill: files that claim a clean close must be clean.
void CheckCleanFlags(const std::string& dir, const std::string& when,
                     Totals* totals, std::vector<std::string>* violations) {
  int clean = 0;
  for (std::string& v :
       crash_test::CheckClosedFilesEnd(dir, "binlog", /*allow_zero_tails=*/true,
                                       &clean)) {
    violations->push_back(absl::StrCat(when, ": ", v));
  }
  totals->clean_files_checked += static_cast<uint64_t>(clean);
}

// One recovering child, killed at its pause point (or after a random delay
// once it enters Open). Returns a description for --verbose.
std::string RunRecoveringChild(const std::string& self, const std::string& dir,
                               uint64_t seed, uint64_t first_id,
                               crash_test::AckLog* acks, Totals* totals,
                               std::vector<std::string>* violations) {
  std::mt19937_64 rng(seed);
  const bool at_step = rng() % 3 != 0;
  const uint64_t pause_at = at_step ? 1 + rng() % 40 : 0;
  const uint64_t delay_us = at_step ? 0 : rng() % 3000;
  int fd = -1;
  pid_t pid = crash_test::StartChild(
      self,
      {"--mode=recover", absl::StrCat("--dir=", dir),
       absl::StrCat("--seed=", seed), absl::StrCat("--first_id=", first_id),
       absl::StrCat("--pause_at=", pause_at)},
      &fd);
  if (pid < 0) {
    violations->push_back("fork failed");
    return "";
  }
  ++totals->recovering_children;
  std::string buf;
  bool exited_early = false;
  // Wait for the pause point (or the end of the life), or for the entry
  // into Open and then the delay. A child that makes no report for
  // kHungAfter is hung: a violation (a deadlock in recovery, in the new
  // file or in the first rotation would otherwise pass as "killed in Open").
  absl::Time limit = absl::Now() + kHungAfter;
  absl::Time kill_at = absl::InfiniteFuture();
  bool hung = false;
  size_t seen = 0;
  for (;;) {
    const absl::Time now = absl::Now();
    if (now >= kill_at) break;
    if (now >= limit) {
      hung = true;
      break;
    }
    if (!crash_test::Drain(fd, &buf, 1)) {
      exited_early = true;
      break;
    }
    if (buf.size() != seen) {  // a report: progress
      seen = buf.size();
      limit = absl::Now() + kHungAfter;
    }
    if (HasKind(buf, kPaused) || HasKind(buf, kLifeDone)) break;
    if (!at_step && kill_at == absl::InfiniteFuture() &&
        HasKind(buf, kEnteringOpen)) {
      kill_at = absl::Now() + absl::Microseconds(delay_us);
    }
  }
  uint64_t acked_now = 0;
  KillAndCollect(pid, fd, &buf, exited_early, acks, &acked_now, violations);
  const bool paused = HasKind(buf, kPaused);
  const char* where;
  if (!HasKind(buf, kOpened)) {
    where = "in Open";
    ++totals->killed_in_recovery_open;
  } else if (HasKind(buf, kRotating) && !HasKind(buf, kRotated)) {
    where = "in the first rotation";
    ++totals->killed_in_first_rotation;
  } else {
    where = HasKind(buf, kRotated) ? "after the first rotation" : "in commits";
    ++totals->killed_after;
  }
  if (paused) ++totals->killed_paused;
  if (hung) {
    ++totals->hung;
    violations->push_back(absl::StrCat(
        "recovering child hung ", where, ": no report for ",
        absl::FormatDuration(kHungAfter), " (",
        at_step ? absl::StrCat("its pause point was call ", pause_at)
                : "it was to be killed at a delay after entering Open",
        ")"));
  }
  CheckCleanFlags(dir, absl::StrCat("after killing a recovering child ", where),
                  totals, violations);
  return absl::StrCat(paused ? "paused before call " : "killed ",
                      paused ? absl::StrCat(pause_at)
                             : absl::StrCat(delay_us, " us after entering Open"),
                      " ", where, ", ", acked_now, " commits");
}

// One kill: returns the violations (empty if the invariants held).
// A writer that lived this long must have acknowledged a commit.
constexpr uint64_t kProgressAfterUs = 100000;

const char* PlantName(Plant p) {
  switch (p) {
    case Plant::kNone: return "none";
    case Plant::kPhantomAck: return "phantom_ack";
    case Plant::kFlippedByte: return "flipped_byte";
  }
  return "?";
}

std::vector<std::string> RunIteration(const std::string& self,
                                      const std::string& dir, uint64_t seed,
                                      uint64_t first_id,
                                      crash_test::AckLog* acks, Totals* totals,
                                      bool verbose, Plant plant) {
  std::vector<std::string> violations;
  std::mt19937_64 rng(seed);
  int fd = -1;
  pid_t pid = crash_test::StartChild(self,
                         {absl::StrCat("--dir=", dir), absl::StrCat("--seed=", seed),
                          absl::StrCat("--first_id=", first_id),
                          absl::StrCat("--plant=", PlantName(plant))},
                         &fd);
  if (pid < 0) return {"fork failed"};
  // Kill moment: usually within 400 ms of the start; one time in ten within
  // the first 5 ms (inside Open and its first file). A planted defect needs
  // a commit to show, so its runs wait for one (kProgressAfterUs below).
  const bool early = rng() % 10 == 0;
  uint64_t delay_us = early ? rng() % 5000 : rng() % 400000;
  if (plant != Plant::kNone) delay_us = std::max(delay_us, kProgressAfterUs);
  absl::Time kill_at = absl::Now() + absl::Microseconds(delay_us);
  std::string buf;
  bool exited_early = false;
  bool stop_at_first_ack = false;
  auto drain_until = [&](absl::Time t) {
    while (absl::Now() < t) {
      int ms = static_cast<int>(absl::ToInt64Milliseconds(t - absl::Now()));
      if (!crash_test::Drain(fd, &buf, ms < 1 ? 1 : ms)) {
        exited_early = true;  // EOF: the child died by itself
        return;
      }
      if (stop_at_first_ack && HasKind(buf, kAck)) return;
    }
  };
  drain_until(kill_at);
  // Progress: a writer that lived kProgressAfterUs must have acknowledged
  // a commit. One that has not yet (a slow machine) is given kHungAfter to
  // make its first; none by then is a hang (Open, recovery, or the first
  // commit deadlocked) and fails the iteration.
  bool hung = false;
  if (!exited_early && delay_us >= kProgressAfterUs && !HasKind(buf, kAck)) {
    ++totals->late_first_commit;
    stop_at_first_ack = true;
    drain_until(absl::Now() + kHungAfter);
    hung = !exited_early && !HasKind(buf, kAck);
  }
  uint64_t acked_now = 0;
  KillAndCollect(pid, fd, &buf, exited_early, acks, &acked_now, &violations);
  if (hung) {
    ++totals->hung;
    violations.push_back(absl::StrCat(
        "the writer acknowledged nothing in ", delay_us / 1000, " ms + ",
        absl::FormatDuration(kHungAfter), ": hung in Open or its first commit"));
  }
  if (acked_now == 0) ++totals->killed_in_open;
  CheckCleanFlags(dir, "after killing the writer", totals, &violations);

  // Half the time, one or two recovering lives killed early.
  std::vector<std::string> recovering;
  const int lives = rng() % 2 == 0 ? 0 : 1 + static_cast<int>(rng() % 2);
  for (int i = 0; i < lives && violations.empty(); ++i) {
    recovering.push_back(RunRecoveringChild(
        self, dir, rng(), first_id + 50000000 + static_cast<uint64_t>(i) * 1000,
        acks, totals, &violations));
  }
  if (!violations.empty()) return violations;

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
  for (uint64_t id : v.acked_present) totals->distinct.insert(id);
  totals->unacked_found += v.unacked_found;
  if (verbose) {
    std::printf(
        "  seed %lu: killed after %lu us, %lu commits reported; recovering "
        "lives: [%s]; final recovery cut %lu bytes of %s (%s), %lu "
        "acknowledged checked, %lu unacknowledged found\n",
        static_cast<unsigned long>(seed), static_cast<unsigned long>(delay_us),
        static_cast<unsigned long>(acked_now),
        absl::StrJoin(recovering, "; ").c_str(),
        static_cast<unsigned long>(rep.bytes_cut), rep.file_name.c_str(),
        rep.reason.c_str(), static_cast<unsigned long>(v.acked_checked),
        static_cast<unsigned long>(v.unacked_found));
  }
  return violations;
}

// Whether `violation` is the one `plant` must cause.
bool IsPlantedViolation(Plant plant, const std::string& violation) {
  switch (plant) {
    case Plant::kNone:
      return false;
    case Plant::kPhantomAck:
      // Phantom ids are kPhantomIdBase + first id: 4611686...
      return absl::StartsWith(violation,
                              absl::StrCat("acknowledged transaction ",
                                           kPhantomIdBase / 1000000000000)) &&
             absl::EndsWith(violation, " is missing");
    case Plant::kFlippedByte:
      return absl::StartsWith(violation, "acknowledged transaction ") &&
             absl::EndsWith(violation, " differs from the bytes written");
  }
  return false;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "kill -9 crash test with the real POSIX file system.\n"
      "usage: kill9_crash_test [--iterations=N] [--seed=S] [--verbose] "
      "[--plant=phantom_ack|flipped_byte]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::fprintf(stderr, "kill9_crash_test: unexpected argument %s\n%s\n",
                 rest[1], std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  const bool verbose = absl::GetFlag(FLAGS_verbose);
  const uint64_t iterations = absl::GetFlag(FLAGS_iterations);
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  ChildConfig cc;
  cc.seed = seed;
  cc.dir = absl::GetFlag(FLAGS_dir);
  cc.fd = absl::GetFlag(FLAGS_fd);
  cc.first_id = absl::GetFlag(FLAGS_first_id);
  cc.recover = absl::GetFlag(FLAGS_mode) == "recover";
  cc.pause_at = absl::GetFlag(FLAGS_pause_at);
  const std::string plant_name = absl::GetFlag(FLAGS_plant);
  if (plant_name == "phantom_ack") {
    cc.plant = Plant::kPhantomAck;
  } else if (plant_name == "flipped_byte") {
    cc.plant = Plant::kFlippedByte;
  } else if (plant_name != "none") {
    std::fprintf(stderr, "--plant: none, phantom_ack or flipped_byte\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_child) && cc.recover) RecoverChildMain(cc);
  if (absl::GetFlag(FLAGS_child)) ChildMain(cc);

  const std::string self = crash_test::SelfPath();
  if (seed == 0) seed = std::random_device()() | 1;
  const Plant plant = cc.plant;
  std::printf("kill9: %lu iterations, seed %lu (--seed)%s%s\n",
              static_cast<unsigned long>(iterations),
              static_cast<unsigned long>(seed),
              plant == Plant::kNone ? "" : ", planted defect: ",
              plant == Plant::kNone ? "" : PlantName(plant));
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
                     &acks, &totals, verbose, plant);
    if (plant != Plant::kNone) {
      // The iteration holds if the harness reports the planted defect, and
      // only it.
      std::vector<std::string> other;
      for (std::string& s : v) {
        if (!IsPlantedViolation(plant, s)) other.push_back(std::move(s));
      }
      if (v.empty()) other.push_back("the planted defect was not reported");
      v = std::move(other);
    }
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
  auto ul = [](uint64_t v) { return static_cast<unsigned long>(v); };
  std::printf(
      "kill9: %lu distinct acknowledged transactions checked (%lu checks "
      "counting re-checks), %lu unacknowledged complete transactions found, "
      "%lu writer kills before the first commit, %lu writers waited for "
      "past %lu ms for their first commit, %lu hung children\n",
      ul(totals.distinct.size()), ul(totals.acked), ul(totals.unacked_found),
      ul(totals.killed_in_open), ul(totals.late_first_commit),
      ul(kProgressAfterUs / 1000), ul(totals.hung));
  std::printf(
      "kill9: %lu recovering children killed (%lu at their pause point): %lu "
      "in Open (recovery, new file, index), %lu in the first rotation, %lu "
      "in commits or after; %lu files with a clear in-use flag checked\n",
      ul(totals.recovering_children), ul(totals.killed_paused),
      ul(totals.killed_in_recovery_open), ul(totals.killed_in_first_rotation),
      ul(totals.killed_after), ul(totals.clean_files_checked));
  std::printf("kill9: %lu iterations passed, %lu failed\n",
              static_cast<unsigned long>(passed),
              static_cast<unsigned long>(failed));
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace binlog

int main(int argc, char** argv) { return binlog::Main(argc, argv); }
