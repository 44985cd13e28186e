// The example server as a program: opens (recovering what a crash left),
// runs client threads for a while, reports commits per second, shuts down
// cleanly. See engine_server.h.
//
//   bazel run //examples/engine_server:engine_server_main --
//       --dir=/tmp/engine_server [--clients=8] [--seconds=5]
//       [--rows=3] [--prepare=sync_wal_before_write|sync_each]

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "examples/engine_server/engine_server.h"

ABSL_FLAG(std::string, dir, "", "directory of the engine and its binlog (required)");
ABSL_FLAG(int, clients, 8, "client threads");
ABSL_FLAG(double, seconds, 5, "how long the clients run");
ABSL_FLAG(int, rows, 3, "rows per transaction");
ABSL_FLAG(std::string, prepare, "sync_wal_before_write",
          "prepare durability: sync_wal_before_write or sync_each");

namespace {

int Main(int argc, char** argv) {
  using binlog::examples::EngineServer;
  using binlog::examples::EngineServerOptions;
  using binlog::examples::PrepareDurability;
  EngineServerOptions o;
  o.server_uuid = *binlog::Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  absl::SetProgramUsageMessage(
      "the example engine server: recovers, runs clients, reports.\n"
      "usage: engine_server_main --dir=DIR [--clients=N] [--seconds=S] "
      "[--rows=N] [--prepare=sync_wal_before_write|sync_each]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  auto usage = [](absl::string_view why) {
    std::fprintf(stderr, "%s\n%s\n", std::string(why).c_str(),
                 std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  };
  if (rest.size() > 1) return usage(absl::StrCat("unexpected argument ", rest[1]));
  o.dir = absl::GetFlag(FLAGS_dir);
  if (o.dir.empty()) return usage("--dir is required");
  const int clients = absl::GetFlag(FLAGS_clients);
  if (clients < 1) return usage("--clients must be at least 1");
  const double seconds = absl::GetFlag(FLAGS_seconds);
  o.rows_per_transaction = absl::GetFlag(FLAGS_rows);
  const std::string prepare = absl::GetFlag(FLAGS_prepare);
  if (prepare == "sync_each") {
    o.prepare_durability = PrepareDurability::kSyncEachPrepare;
  } else if (prepare == "sync_wal_before_write") {
    o.prepare_durability = PrepareDurability::kSyncWalBeforeGroupWrite;
  } else {
    return usage("bad --prepare");
  }
  auto server = EngineServer::Open(o);
  if (!server.ok()) {
    std::fprintf(stderr, "open: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const auto& r = (*server)->recovery();
  std::printf(
      "recovery: log needed recovery: %s (scanned %s: %zu XIDs, %lu bytes "
      "cut); engine: %zu prepared, %zu committed, %zu rolled back\n",
      r.log_needed_recovery ? "yes" : "no", r.scanned_files.c_str(),
      r.binlog_xids, static_cast<unsigned long>(r.bytes_cut), r.prepared,
      r.committed, r.rolled_back);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> acked{0};
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop.store(true);
  });
  auto start = std::chrono::steady_clock::now();
  absl::Status s = (*server)->RunClients(
      clients, &stop,
      [&](int, const binlog::examples::TransactionResult&) { ++acked; });
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  timer.join();
  const binlog::LogStats st = (*server)->log()->stats();
  std::printf(
      "%lu transactions in %.2f s: %.0f commits/s, %lu binlog groups, %lu "
      "fsyncs, %lu rotations (%d clients)\n",
      static_cast<unsigned long>(acked.load()), elapsed,
      static_cast<double>(acked.load()) / elapsed,
      static_cast<unsigned long>(st.groups),
      static_cast<unsigned long>(st.fsyncs),
      static_cast<unsigned long>(st.rotations), clients);
  absl::Status c = (*server)->Close();
  if (!s.ok() || !c.ok()) {
    std::fprintf(stderr, "clients: %s; close: %s\n", s.ToString().c_str(),
                 c.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
