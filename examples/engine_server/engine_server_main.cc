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
#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "examples/engine_server/engine_server.h"

namespace {

bool Flag(const char* arg, const char* name, std::string* value) {
  std::string prefix = absl::StrCat("--", name, "=");
  if (std::strncmp(arg, prefix.c_str(), prefix.size()) != 0) return false;
  *value = arg + prefix.size();
  return true;
}

int Main(int argc, char** argv) {
  using binlog::examples::EngineServer;
  using binlog::examples::EngineServerOptions;
  using binlog::examples::PrepareDurability;
  EngineServerOptions o;
  o.server_uuid = *binlog::Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  int clients = 8;
  double seconds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    bool ok = true;
    if (Flag(argv[i], "dir", &v)) {
      o.dir = v;
    } else if (Flag(argv[i], "clients", &v)) {
      ok = absl::SimpleAtoi(v, &clients);
    } else if (Flag(argv[i], "seconds", &v)) {
      ok = absl::SimpleAtod(v, &seconds);
    } else if (Flag(argv[i], "rows", &v)) {
      ok = absl::SimpleAtoi(v, &o.rows_per_transaction);
    } else if (Flag(argv[i], "prepare", &v)) {
      if (v == "sync_each") {
        o.prepare_durability = PrepareDurability::kSyncEachPrepare;
      } else if (v == "sync_wal_before_write") {
        o.prepare_durability = PrepareDurability::kSyncWalBeforeGroupWrite;
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: %s --dir=DIR [--clients=N] [--seconds=S] [--rows=N] "
                   "[--prepare=sync_wal_before_write|sync_each]\n",
                   argv[0]);
      return 2;
    }
  }
  if (o.dir.empty()) {
    std::fprintf(stderr, "--dir is required\n");
    return 2;
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
