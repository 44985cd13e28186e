// gtid_connect_bench: the time from a GTID connect to its first event the
// replica lacks, for a replica near the end of a 16 MiB and a 256 MiB file,
// with and without the file's GTID index (binlog/gtid_index.h), MySQL and
// MariaDB flavors, page cache hot or cold.
//
// Each log is written once under $TEST_TMPDIR or /tmp (gtid_connect_<flavor>
// _<MiB>): one file of the size, closed by a rotation (the log writes its
// index then), a small second file. The replica holds every transaction
// but the last 10 of the big file. One iteration: Binlog::NewGtidReader /
// NewMariaGtidReader (ReaderOptions::gtid_index_interval 0 for "no index")
// and Next until the first Gtid event.
//
//   bazel build //benchmarks:gtid_connect_bench
//   bazel-bin/benchmarks/gtid_connect_bench --benchmark_min_time=0.5

#include <cstdlib>
#include <map>
#include <utility>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bench_log.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"

namespace {

using binlog::LogFlavor;

const binlog::Uuid kUuid = *binlog::Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");

struct Prepared {
  std::string dir;
  std::unique_ptr<binlog::Binlog> log;
  binlog::GtidSet have;
  binlog::MariaGtidState position;
  std::string big_file;
};

// Writes (once per process) a log whose first file holds `mib` MiB.
Prepared* Prepare(LogFlavor flavor, int mib, std::string* error) {
  static std::map<std::pair<int, int>, std::unique_ptr<Prepared>> cache;
  auto& slot = cache[{static_cast<int>(flavor), mib}];
  if (slot != nullptr) return slot.get();
  auto p = std::make_unique<Prepared>();
  const char* tmp = std::getenv("TEST_TMPDIR");
  p->dir = absl::StrCat(tmp ? tmp : "/tmp", "/gtid_connect_",
                        flavor == LogFlavor::kMariaDB ? "mariadb" : "mysql", "_", mib);
  std::string cmd = absl::StrCat("rm -rf '", p->dir, "' && mkdir -p '", p->dir, "'");
  if (std::system(cmd.c_str()) != 0) {
    *error = "cannot create " + p->dir;
    return nullptr;
  }
  binlog::Options o;
  o.flavor = flavor;
  o.server_uuid = kUuid;
  o.sync_policy = binlog::SyncPolicy::kNever;
  o.max_file_size = (static_cast<uint64_t>(mib) + 16) << 20;
  auto log = binlog::Binlog::Open(p->dir, "binlog", o);
  if (!log.ok()) {
    *error = std::string(log.status().message());
    return nullptr;
  }
  const uint64_t target = static_cast<uint64_t>(mib) << 20;
  std::mt19937_64 rng(1);
  binlog::TransactionBuffer txn;
  int64_t n = 0;
  for (;;) {
    txn.Clear();
    const uint32_t ts = 1700000000;
    if (flavor == LogFlavor::kMariaDB) {
      txn.AppendMariaCommitGtid(ts, 1, binlog::CommitGtid());
    } else {
      txn.AppendCommitGtid(ts, 1, binlog::CommitGtid());
      binlog::AppendQuery(&txn, ts, 1, 5, "db", "BEGIN");
    }
    std::string text(600 + rng() % 800, ' ');
    for (char& c : text) c = static_cast<char>('a' + rng() % 26);
    binlog::AppendQuery(&txn, ts, 1, 5, "db", text);
    binlog::AppendXid(&txn, ts, 1, static_cast<uint64_t>(++n));
    auto c = (*log)->Commit(&txn);
    if (!c.ok()) {
      *error = std::string(c.status().message());
      return nullptr;
    }
    if (c->end >= target) break;
  }
  // The replica lacks the last 10 transactions of the big file.
  const int64_t have_upto = n - 10;
  if (flavor == LogFlavor::kMariaDB) {
    p->position.Add(0, 1, static_cast<uint64_t>(have_upto));
  } else {
    p->have.AddInterval(kUuid, 1, have_upto);
  }
  absl::Status s = (*log)->Rotate();
  if (s.ok()) s = (*log)->Close();  // waits for the rotated file's index
  if (!s.ok()) {
    *error = std::string(s.message());
    return nullptr;
  }
  log->reset();
  auto again = binlog::Binlog::Open(p->dir, "binlog", o);
  if (!again.ok()) {
    *error = std::string(again.status().message());
    return nullptr;
  }
  p->log = std::move(*again);
  p->big_file = binlog::io::JoinPath(p->dir, binlog::BinlogFileName("binlog", 1));
  slot = std::move(p);
  return slot.get();
}

// Args: file MiB, index (0/1), MariaDB (0/1), cold cache (0/1).
void BM_GtidConnect(benchmark::State& state) {
  const int mib = static_cast<int>(state.range(0));
  const bool index = state.range(1) != 0;
  const LogFlavor flavor = state.range(2) ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
  const bool cold = state.range(3) != 0;
  std::string error;
  Prepared* p = Prepare(flavor, mib, &error);
  if (p == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  binlog::ReaderOptions ro;
  ro.payloads = binlog::PayloadMode::kRaw;
  ro.gtid_index_interval = index ? (uint64_t{4} << 20) : 0;
  uint64_t jumped = 0;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      std::vector<std::string> files = {p->big_file};
      if (index) files.push_back(p->big_file + ".gidx");
      if (!binlog_bench::Evict(files).ok()) state.SkipWithError("evict failed");
      state.ResumeTiming();
    }
    auto g = flavor == LogFlavor::kMariaDB ? p->log->NewMariaGtidReader(p->position, ro)
                                           : p->log->NewGtidReader(p->have, ro);
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    binlog::Event ev;
    const uint8_t want =
        flavor == LogFlavor::kMariaDB ? binlog::kMariaGtidEvent : binlog::kGtidEvent;
    for (;;) {
      absl::Status s = (*g)->Next(&ev);
      if (!s.ok()) {
        state.SkipWithError(std::string(s.message()).c_str());
        return;
      }
      if (ev.header.type == want) break;
    }
    jumped += (*g)->jumped_to() != 0;
    benchmark::DoNotOptimize(ev.offset);
  }
  state.counters["jumped"] = static_cast<double>(jumped) / state.iterations();
}

BENCHMARK(BM_GtidConnect)
    ->ArgNames({"MiB", "index", "mariadb", "cold"})
    ->ArgsProduct({{16, 256}, {0, 1}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
