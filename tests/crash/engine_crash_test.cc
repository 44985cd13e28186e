// kill -9 crash test of a server with a storage engine: the example server
// (examples/engine_server: RocksDB transactions, two-phase commit with the
// binlog) killed at random moments and at named points, including inside
// its recovery, and checked after every restart. What one iteration does
// and the invariants: tests/crash/engine_crash_harness.h.
//
//   bazel test //tests:engine_crash_test                 (20 iterations)
//   bazel run -c opt //tests:engine_crash_test -- --iterations=N
//       [--seed=S] [--verbose]
//
// The last line is "engine-crash: <N> iterations passed, <M> failed"; the
// exit status is 0 only if M is 0.

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/crash/engine_crash_harness.h"

ABSL_FLAG(uint64_t, iterations, 20, "crash-and-restart iterations");
ABSL_FLAG(bool, verbose, false, "print every iteration");

namespace binlog {
namespace engine_crash {
namespace {

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "kill -9 crash test of the example engine server.\n"
      "usage: engine_crash_test [--iterations=N] [--seed=S] [--verbose]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  // A child (the server under test) has its own flags, defined by the
  // harness; it never returns from here.
  MaybeRunChild();
  if (rest.size() > 1) {
    std::fprintf(stderr, "engine_crash_test: unexpected argument %s\n%s\n",
                 rest[1], std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  const uint64_t iterations = absl::GetFlag(FLAGS_iterations);
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  const bool verbose = absl::GetFlag(FLAGS_verbose);
  if (seed == 0) seed = std::random_device()() | 1;
  std::printf("engine-crash: %lu iterations, seed %lu (--seed)\n",
              static_cast<unsigned long>(iterations),
              static_cast<unsigned long>(seed));
  std::fflush(stdout);
  const absl::Time start = absl::Now();
  std::mt19937_64 rng(seed);
  IterationConfig cfg;
  cfg.self = SelfPath();
  std::vector<Acked> acked;
  Totals totals;
  uint64_t passed = 0, failed = 0;
  // Distinct acknowledged transactions checked: each directory's list
  // (which keeps growing over its lives) counted once, when it retires.
  uint64_t distinct = 0;
  int lives = 0;
  for (uint64_t it = 0; it < iterations; ++it) {
    if (lives == 0) {
      distinct += acked.size();
      if (!cfg.dir.empty()) RemoveServerDir(cfg.dir);
      cfg.dir = NewServerDir();
      acked.clear();
      lives = 10;
    }
    --lives;
    cfg.seed = rng();
    std::string summary;
    std::vector<std::string> v = RunIteration(cfg, &acked, &totals, &summary);
    if (v.empty()) {
      ++passed;
      if (verbose) {
        std::printf("  %lu (seed %lu): %s\n", static_cast<unsigned long>(it),
                    static_cast<unsigned long>(cfg.seed), summary.c_str());
      }
    } else {
      ++failed;
      std::printf("engine-crash: iteration %lu (seed %lu, dir %s) FAILED:\n  %s\n",
                  static_cast<unsigned long>(it),
                  static_cast<unsigned long>(cfg.seed), cfg.dir.c_str(),
                  absl::StrJoin(v, "\n  ").c_str());
      cfg.dir.clear();  // keep the failed directory for inspection
      lives = 0;
    }
    std::fflush(stdout);
  }
  distinct += acked.size();
  if (failed == 0 && !cfg.dir.empty()) RemoveServerDir(cfg.dir);
  auto ul = [](uint64_t x) { return static_cast<unsigned long>(x); };
  std::vector<std::string> points;
  for (const auto& [p, n] : totals.kills_by_point) {
    points.push_back(absl::StrCat(p, " ", n));
  }
  std::printf(
      "engine-crash: %lu writer kills (%lu before any acknowledgement), %lu "
      "recovering children killed; %lu kills at a pause point (%s)\n",
      ul(totals.writer_kills), ul(totals.writer_killed_before_ack),
      ul(totals.recovering_children), ul(totals.killed_at_point),
      absl::StrJoin(points, ", ").c_str());
  std::printf(
      "engine-crash: final recoveries committed %lu and rolled back %lu "
      "prepared engine transactions; %lu distinct acknowledged transactions "
      "checked (%lu checks counting re-checks), %lu "
      "transactions compared engine vs binlog, %lu clean files checked after "
      "kills; %.1f s\n",
      ul(totals.prepared_committed), ul(totals.prepared_rolled_back),
      ul(distinct), ul(totals.acked_checked), ul(totals.transactions_checked),
      ul(totals.files_checked), absl::ToDoubleSeconds(absl::Now() - start));
  std::printf("engine-crash: %lu iterations passed, %lu failed\n", ul(passed),
              ul(failed));
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace engine_crash
}  // namespace binlog

int main(int argc, char** argv) {
  return binlog::engine_crash::Main(argc, argv);
}
