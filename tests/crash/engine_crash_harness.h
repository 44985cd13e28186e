// The kill -9 harness of the example server with a storage engine
// (examples/engine_server), shared by //tests:engine_crash_test (random
// kills, many iterations) and //tests:engine_crash_oracle_test (kills at
// fixed points, showing that the checker catches the wrong commit order).
//
// One iteration: a server child (the test binary itself, exec'ed with
// --child) opens the server (recovering what the last kill left) and runs
// client threads, reporting each acknowledged transaction (XID, position,
// GNO) through a pipe; the parent kills it with SIGKILL, at a random moment
// or where the child says it stopped (a named pause point of the server,
// or the K-th mutating call of the binlog's file system). Then, unless the
// iteration is a fixed-point one, zero to two "recovering" children follow,
// each killed early: inside the recovery (engine decisions, the log's
// Finish, the first file), or in its first commits. Finally the parent
// itself opens the server (recovery), checks that no engine transaction is
// left prepared, commits three transactions, and checks the invariants
// (CheckServerState) on the engine and, after a clean Close, on the log:
//   - the engine's committed transactions and the log's complete
//     transactions are the same set of XIDs; every engine transaction has
//     all its rows; an engine GTID record names its transaction's GTID in
//     the log;
//   - every acknowledged transaction is in both, at the position and with
//     the GNO the child was told;
//   - the GNOs of the server's UUID are exactly 1..N (no hole, no
//     duplicate); sequence_number strictly increases within each file and
//     last_committed < sequence_number; each file's Previous_gtids is the
//     union of the GTIDs of the files before it;
//   - after every kill, each file whose in-use flag is clear ends cleanly
//     (crash_test_util.h, CheckClosedFilesEnd); after the final Close every
//     file reads to its end (no torn tail, no reader error).
// A server directory lives through up to ten iterations.
//
// Thread safety: none needed (the parent is single-threaded).

#ifndef BINLOG_TESTS_CRASH_ENGINE_CRASH_HARNESS_H_
#define BINLOG_TESTS_CRASH_ENGINE_CRASH_HARNESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"

// The flags of a child, which the harness passes (absl flags, defined in
// engine_crash_harness.cc): --child, --dir, --fd, --seed, --pause_point,
// --pause_hit, --pause_fs_call, --engine_commit_first. --seed is also the
// seed of a whole engine_crash_test run; the test reads it from here.
ABSL_DECLARE_FLAG(uint64_t, seed);

namespace binlog {
namespace engine_crash {

// If the command line, already parsed (absl::ParseCommandLine), asked for a
// child (--child ...), runs it and never returns.
void MaybeRunChild();

// Where to kill the first (writer) child of an iteration. Empty point:
// at a random moment.
struct FixedKill {
  std::string point;  // a pause point of EngineServerOptions::pause_point
  int hit = 1;        // the hit of that point to stop at (1 = the first)
};

struct IterationConfig {
  std::string self;  // this binary
  std::string dir;   // the server's directory
  uint64_t seed = 0;
  bool engine_commit_first = false;  // the wrong order (checker's test)
  FixedKill fixed;                   // fixed kill point; no recovering lives
};

// An acknowledged transaction as the child reported it.
struct Acked {
  uint64_t xid = 0;
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  int64_t gno = 0;
};

struct Totals {
  uint64_t acked_checked = 0;       // acknowledged checks (with re-checks)
  uint64_t writer_kills = 0;
  uint64_t writer_killed_before_ack = 0;
  uint64_t recovering_children = 0;
  uint64_t killed_at_point = 0;     // children killed at a pause point
  std::map<std::string, uint64_t> kills_by_point;
  uint64_t prepared_committed = 0;  // by the final recovery
  uint64_t prepared_rolled_back = 0;
  uint64_t transactions_checked = 0;  // engine = log, counted per check
  uint64_t files_checked = 0;
};

// Runs one iteration; `acked` accumulates over the life of `dir`. Returns
// the violations (empty if every invariant held).
std::vector<std::string> RunIteration(const IterationConfig& config,
                                      std::vector<Acked>* acked,
                                      Totals* totals, std::string* summary);

// A new empty directory under TEST_TMPDIR (or /tmp).
std::string NewServerDir();
void RemoveServerDir(const std::string& dir);

// The path of the running binary.
std::string SelfPath();

}  // namespace engine_crash
}  // namespace binlog

#endif  // BINLOG_TESTS_CRASH_ENGINE_CRASH_HARNESS_H_
