// lagging_replica_bench: writer throughput while replicas that fell far
// behind catch up from a cold disk (issue 6).
//
// The scenario: a live log with --log_gib GiB of history (default 2 GiB,
// written once into --dir through binlog::Binlog and reused, see
// bench_log.h) is opened with the durable defaults (fdatasync per group).
// --threads committer threads (default 64) commit the commit_bench
// transaction (Anonymous_gtid, BEGIN, Rows_query of 256 bytes, Xid: 417 B)
// as fast as they can. Phases, each after evicting every file of the log
// from the page cache (fdatasync + posix_fadvise DONTNEED):
//   baseline   no readers, --duration_s seconds: writer tps
//   lagging    the oldest files are purged so that the closed files hold
//              just over --log_gib (the log grows during the run), then
//              --readers tailing readers (default 8) start at the first
//              file, offset 0, with the phase's ReaderOptions; each reads
//              every event (checksums verified) until Next() first says
//              OutOfRange (caught up with the published end), then tails.
//              The phase ends when every reader has caught up (or after
//              --max_catchup_s): writer tps over that window, and each
//              reader's catch-up time.
// Phases run in the order baseline, <config 1>, baseline, <config 2>, ...,
// baseline, so each lagging phase has a baseline before and after it (the
// disk of a shared machine drifts). --configs lists the reader
// configurations: prefetch (1 MiB windows, helper-thread prefetch, the
// default ReaderOptions), noprefetch (1 MiB, no prefetch), small (64 KiB,
// the Reader's minimum, no prefetch: closest to MySQL's 8 KiB reads),
// dropbehind (prefetch + drop_behind), rawpread (no binlog::Reader: each
// reader preads the files present at the start with 1 MiB reads and
// touches one byte per cache line; what the reading costs by itself).
//
// Output: one JSON line per phase (phase, config, readers, threads, rep,
// tps, window_s, commits, lag_bytes: bytes behind the end when the readers
// started, catchup_s_median, catchup_s_max, reader_mb_s: bytes all readers
// read during the window / window / 1e6, reader_prefetch_waits,
// cpu_s, loadavg), then one summary line per lagging phase: tps_ratio =
// its tps / the mean of the baselines before and after it (target >= 0.9).
//
// --reader_api=batch reads with Reader::NextBatch without checksum
// verification (what a sender such as binlog_server does); the default,
// decoded, is Reader::Next with checksums verified.
//
// --reader_mb_s=N offers a read rate: the readers together read at most N
// MB/s while catching up (each paces itself to N/readers), as a server
// limiting what catching-up replicas may take would; 0 (the default) reads
// as fast as they can. Output keys reader_api and reader_mb_s_offered.
//
// --cache=hot reads the log into the page cache before each phase instead
// of evicting it: the readers then cost CPU and memory bandwidth but no
// disk time, which tells disk contention from CPU contention.
//
// --reader_nice=N runs the readers (and their prefetch threads, which
// inherit it) at nice N: on a machine with few cores the readers' CPU
// (checksumming gigabytes) competes with the committers; niced readers show
// what is left when they yield the CPU.
//
// Example:
//   bazel build -c opt //benchmarks:lagging_replica_bench
//   bazel-bin/benchmarks/lagging_replica_bench --configs=prefetch,noprefetch

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmarks/bench_log.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"

ABSL_FLAG(std::string, dir, "/tmp/binlog_lagging_bench",
          "directory of the log (created with --log_gib of history, reused)");
ABSL_FLAG(double, log_gib, 2.0, "history in the log before the run, GiB");
ABSL_FLAG(int, threads, 64, "committer threads");
ABSL_FLAG(int, readers, 8, "lagging readers in a lagging phase");
ABSL_FLAG(double, duration_s, 10.0, "length of a baseline phase");
ABSL_FLAG(double, max_catchup_s, 300.0, "a lagging phase ends after this");
ABSL_FLAG(std::string, configs, "prefetch,noprefetch",
          "reader configurations: prefetch, noprefetch, small, dropbehind");
ABSL_FLAG(int, reader_nice, 0, "nice value of the reader threads");
ABSL_FLAG(int, repetitions, 1, "passes over the phases");
ABSL_FLAG(bool, cleanup, false, "remove --dir and exit");
ABSL_FLAG(std::string, reader_api, "decoded",
          "decoded: Reader::Next, checksums verified (an application); "
          "batch: Reader::NextBatch without checksum verification (a "
          "sender forwarding the log, as binlog_server does)");
ABSL_FLAG(double, reader_mb_s, 0,
          "offered read rate of all lagging readers together, MB/s (each "
          "paces itself to reader_mb_s/readers); 0: as fast as they can");
ABSL_FLAG(std::string, cache, "cold",
          "cold: evict the log before each phase (the scenario); hot: read "
          "it into the page cache instead (separates disk from CPU "
          "contention)");

namespace {

using binlog_bench::CpuSeconds;
using binlog_bench::ReadFirstLine;

struct alignas(64) Counter {
  std::atomic<uint64_t> v{0};
};

// The commit_bench transaction: 417 bytes with a 256-byte Rows_query body.
void BuildSmallTransaction(binlog::TransactionBuffer* txn, uint64_t seq,
                           const std::string& text) {
  txn->Clear();
  const uint32_t ts = 1700000000;
  binlog::AppendAnonymousGtid(txn, ts, 1, static_cast<int64_t>(seq) - 1,
                              static_cast<int64_t>(seq));
  binlog::AppendQuery(txn, ts, 1, 7, "shop", "BEGIN");
  char* body = txn->AppendEvent(binlog::kRowsQueryEvent, 1, ts,
                                binlog::kFlagIgnorable, text.size() + 1);
  body[0] = static_cast<char>(std::min<size_t>(text.size(), 255));
  std::memcpy(body + 1, text.data(), text.size());
  binlog::AppendXid(txn, ts, 1, seq);
}

struct ReaderConfig {
  std::string name;
  size_t buffer_kib;
  bool prefetch;
  bool drop_behind;
  bool raw = false;  // plain 1 MiB preads of the files, no binlog::Reader
};

absl::StatusOr<ReaderConfig> ParseConfig(const std::string& name) {
  if (name == "prefetch") return ReaderConfig{name, 1024, true, false};
  if (name == "noprefetch") return ReaderConfig{name, 1024, false, false};
  if (name == "small") return ReaderConfig{name, 64, false, false};
  if (name == "dropbehind") return ReaderConfig{name, 1024, true, true};
  if (name == "rawpread") return ReaderConfig{name, 1024, false, false, true};
  return absl::InvalidArgumentError(absl::StrCat("unknown config ", name));
}

// Committer threads running for the whole program.
class Committers {
 public:
  Committers(binlog::Binlog* log, int n) : counts_(n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this, log, i] {
        binlog::TransactionBuffer txn;
        std::mt19937_64 rng(i);
        std::string text(255, 'x');
        for (char& c : text) c = static_cast<char>('a' + rng() % 26);
        uint64_t seq = static_cast<uint64_t>(i) << 40;
        while (!stop_.load(std::memory_order_relaxed)) {
          BuildSmallTransaction(&txn, ++seq, text);
          auto pos = log->Commit(&txn);
          if (!pos.ok()) {
            std::fprintf(stderr, "commit failed: %s\n",
                         pos.status().ToString().c_str());
            std::abort();
          }
          counts_[i].v.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
  }
  ~Committers() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  uint64_t Total() const {
    uint64_t t = 0;
    for (const auto& c : counts_) t += c.v.load(std::memory_order_relaxed);
    return t;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<Counter> counts_;
  std::vector<std::thread> threads_;
};

struct PhaseResult {
  std::string phase, config;
  int rep = 0;
  double tps = 0, window_s = 0, cpu_s = 0;
  uint64_t commits = 0, lag_bytes = 0, reader_bytes = 0, prefetch_waits = 0;
  std::vector<double> catchup_s;
  int readers_caught_up = 0;
};

// Bytes a reader starting at the first file has to read to reach the
// visible end (closed files are trimmed; the active one is preallocated, so
// its size says nothing).
uint64_t LagBytes(const std::string& dir, binlog::Binlog* log) {
  binlog::CommitPosition end = log->VisibleEnd();
  auto numbers = binlog::ReadIndex(binlog::io::FileSystem::Default(), dir,
                                   "binlog");
  if (!numbers.ok()) return 0;
  uint64_t n = end.end;
  for (uint64_t f : *numbers) {
    if (f >= end.file_number) continue;
    auto s = binlog::io::FileSystem::Default()->FileSize(binlog::io::JoinPath(
        dir, binlog::BinlogFileName("binlog", f)));
    if (s.ok()) n += *s;
  }
  return n;
}

// Purges the oldest files so that the closed files hold just over
// `history_bytes` (the log keeps growing while the benchmark runs; without
// this every lagging phase would start further behind).
void TrimHistory(binlog::Binlog* log, const std::string& dir,
                 uint64_t history_bytes) {
  binlog::CommitPosition end = log->VisibleEnd();
  std::vector<binlog::LogFileInfo> files = log->ListFiles();
  uint64_t sum = 0;
  uint64_t keep_from = 0;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (it->number >= end.file_number) continue;
    auto size = binlog::io::FileSystem::Default()->FileSize(
        binlog::io::JoinPath(dir, it->name));
    if (!size.ok()) continue;
    sum += *size;
    keep_from = it->number;
    if (sum >= history_bytes) break;
  }
  if (keep_from > 0) {
    auto purged = log->PurgeTo(keep_from);
    if (!purged.ok()) {
      std::fprintf(stderr, "PurgeTo: %s\n", purged.status().ToString().c_str());
    }
  }
}

absl::Status EvictLog(const std::string& dir) {
  auto files = binlog_bench::LogFiles(dir);
  if (!files.ok()) return files.status();
  if (absl::GetFlag(FLAGS_cache) == "hot") return binlog_bench::Warm(*files);
  return binlog_bench::Evict(*files);
}

PhaseResult Baseline(const std::string& dir, Committers* c, double seconds) {
  PhaseResult r;
  r.phase = "baseline";
  r.config = "none";
  (void)EvictLog(dir).ok();
  double cpu0 = CpuSeconds();
  uint64_t n0 = c->Total();
  absl::Time t0 = absl::Now();
  absl::SleepFor(absl::Seconds(seconds));
  r.commits = c->Total() - n0;
  r.window_s = absl::ToDoubleSeconds(absl::Now() - t0);
  r.cpu_s = CpuSeconds() - cpu0;
  r.tps = static_cast<double>(r.commits) / r.window_s;
  return r;
}

PhaseResult Lagging(const std::string& dir, binlog::Binlog* log,
                    Committers* c, const ReaderConfig& cfg, int readers,
                    double max_s, int nice, uint64_t history_bytes) {
  PhaseResult r;
  r.phase = "lagging";
  r.config = cfg.name;
  TrimHistory(log, dir, history_bytes);
  (void)EvictLog(dir).ok();
  r.lag_bytes = LagBytes(dir, log);
  std::atomic<bool> stop{false};
  std::atomic<int> caught{0};
  std::atomic<uint64_t> bytes{0}, waits{0};
  std::vector<double> catchup(readers, -1);
  std::vector<std::thread> threads;
  double cpu0 = CpuSeconds();
  uint64_t n0 = c->Total();
  absl::Time t0 = absl::Now();
  for (int i = 0; i < readers; ++i) {
    threads.emplace_back([&, i] {
      if (nice != 0) {
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)),
                      nice);
      }
      if (cfg.raw) {
        // The same bytes without the Reader (no checksums, no LogSource):
        // what reading them costs the machine by itself.
        uint64_t local = 0, x = 0;
        binlog::CommitPosition end = log->VisibleEnd();
        std::unique_ptr<char[]> buf(new char[1 << 20]);
        for (const auto& f : log->ListFiles()) {
          auto rf = binlog::io::FileSystem::Default()->OpenReadable(
              binlog::io::JoinPath(dir, f.name));
          if (!rf.ok()) continue;  // purged
          uint64_t limit = f.number == end.file_number ? end.end : ~0ull;
          for (uint64_t off = 0; off < limit;) {
            size_t got = 0;
            size_t n = static_cast<size_t>(std::min<uint64_t>(1 << 20, limit - off));
            if (!(*rf)->Read(off, n, buf.get(), &got).ok() || got == 0) break;
            for (size_t k = 0; k < got; k += 64) x += static_cast<unsigned char>(buf[k]);
            off += got;
            local += got;
          }
        }
        catchup[i] = absl::ToDoubleSeconds(absl::Now() - t0);
        bytes.fetch_add(local + (x == 1 ? 1 : 0));
        caught.fetch_add(1);
        while (!stop.load()) absl::SleepFor(absl::Milliseconds(20));
        return;
      }
      binlog::ReaderOptions o;
      o.buffer_size = cfg.buffer_kib << 10;
      o.prefetch = cfg.prefetch;
      o.drop_behind = cfg.drop_behind;
      auto reader = log->NewReader(o);
      if (!reader.ok()) {
        std::fprintf(stderr, "NewReader: %s\n",
                     reader.status().ToString().c_str());
        std::abort();
      }
      binlog::Event ev;
      binlog::EventBatch batch;
      const bool use_batch = absl::GetFlag(FLAGS_reader_api) == "batch";
      // Bytes per second this reader may read (0: no pacing).
      const double pace = absl::GetFlag(FLAGS_reader_mb_s) * 1e6 / readers;
      uint64_t local = 0;
      bool done = false;
      while (!stop.load(std::memory_order_relaxed)) {
        absl::Status s;
        if (use_batch) {
          s = (*reader)->NextBatch(&batch);
          if (s.ok()) local += batch.data.size();
        } else {
          s = (*reader)->Next(&ev);
          if (s.ok()) local += ev.data.size();
        }
        if (s.ok()) {
          if (pace > 0 && !done) {
            // Ahead of the offered rate: wait until it catches up.
            const double ahead = static_cast<double>(local) / pace -
                                 absl::ToDoubleSeconds(absl::Now() - t0);
            if (ahead > 0.001) absl::SleepFor(absl::Seconds(ahead));
          }
          continue;
        }
        if (!absl::IsOutOfRange(s)) {
          std::fprintf(stderr, "reader %d: %s\n", i, s.ToString().c_str());
          std::abort();
        }
        if (!done) {
          done = true;
          catchup[i] = absl::ToDoubleSeconds(absl::Now() - t0);
          bytes.fetch_add(local);
          waits.fetch_add((*reader)->io_stats().prefetch_waits);
          caught.fetch_add(1);
        }
        (void)(*reader)->WaitForMore(absl::Now() + absl::Milliseconds(100));
      }
      if (!done) bytes.fetch_add(local);
    });
  }
  absl::Time deadline = t0 + absl::Seconds(max_s);
  while (caught.load() < readers && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  r.commits = c->Total() - n0;
  r.window_s = absl::ToDoubleSeconds(absl::Now() - t0);
  r.cpu_s = CpuSeconds() - cpu0;
  stop = true;
  for (auto& t : threads) t.join();
  r.tps = static_cast<double>(r.commits) / r.window_s;
  r.reader_bytes = bytes.load();
  r.prefetch_waits = waits.load();
  r.readers_caught_up = caught.load();
  for (double x : catchup) {
    if (x >= 0) r.catchup_s.push_back(x);
  }
  std::sort(r.catchup_s.begin(), r.catchup_s.end());
  return r;
}

void Print(const PhaseResult& r, int readers, int threads) {
  double med = r.catchup_s.empty() ? -1 : r.catchup_s[r.catchup_s.size() / 2];
  double mx = r.catchup_s.empty() ? -1 : r.catchup_s.back();
  std::printf(
      "{\"phase\":\"%s\",\"config\":\"%s\",\"readers\":%d,\"threads\":%d,"
      "\"rep\":%d,\"tps\":%.0f,\"window_s\":%.2f,\"commits\":%" PRIu64
      ",\"lag_bytes\":%" PRIu64 ",\"readers_caught_up\":%d,"
      "\"catchup_s_median\":%.2f,\"catchup_s_max\":%.2f,"
      "\"reader_mb_s\":%.1f,\"reader_prefetch_waits\":%" PRIu64
      ",\"cpu_s\":%.2f,\"cache\":\"%s\",\"reader_nice\":%d,"
      "\"reader_api\":\"%s\",\"reader_mb_s_offered\":%.0f,"
      "\"loadavg\":\"%s\"}\n",
      r.phase.c_str(), r.config.c_str(), r.phase == "lagging" ? readers : 0,
      threads, r.rep, r.tps, r.window_s, r.commits, r.lag_bytes,
      r.readers_caught_up, med, mx,
      static_cast<double>(r.reader_bytes) / r.window_s / 1e6,
      r.prefetch_waits, r.cpu_s, absl::GetFlag(FLAGS_cache).c_str(),
      absl::GetFlag(FLAGS_reader_nice), absl::GetFlag(FLAGS_reader_api).c_str(),
      absl::GetFlag(FLAGS_reader_mb_s), ReadFirstLine("/proc/loadavg").c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writer tps while lagging replicas catch up from a cold disk; see "
      "benchmarks/lagging_replica_bench.cc.");
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (absl::GetFlag(FLAGS_cleanup)) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::fprintf(stderr, "lagging_replica_bench: removed %s%s\n", dir.c_str(),
                 ec ? (": " + ec.message()).c_str() : "");
    return ec ? 1 : 0;
  }
  if (absl::GetFlag(FLAGS_reader_api) != "decoded" &&
      absl::GetFlag(FLAGS_reader_api) != "batch") {
    std::fprintf(stderr, "--reader_api: decoded or batch, not %s\n",
                 absl::GetFlag(FLAGS_reader_api).c_str());
    return 2;
  }
  if (!(absl::GetFlag(FLAGS_reader_mb_s) >= 0)) {
    std::fprintf(stderr, "--reader_mb_s: must be >= 0\n");
    return 2;
  }
  std::vector<ReaderConfig> configs;
  std::vector<std::string> names =
      absl::StrSplit(absl::GetFlag(FLAGS_configs), ',');
  for (const std::string& name : names) {
    auto c = ParseConfig(name);
    if (!c.ok()) {
      std::fprintf(stderr, "--configs: %s\n", c.status().ToString().c_str());
      return 2;
    }
    configs.push_back(*c);
  }
  const int threads = absl::GetFlag(FLAGS_threads);
  const int readers = absl::GetFlag(FLAGS_readers);
  absl::Status s =
      binlog_bench::EnsureLog(dir, absl::GetFlag(FLAGS_log_gib), 1024);
  if (!s.ok()) {
    std::fprintf(stderr, "lagging_replica_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "lagging_replica_bench: %s\n  cpu: %s, %u threads\n"
               "  mount: %s\n  loadavg: %s\n",
               absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(),
                                absl::UTCTimeZone()).c_str(),
               binlog_bench::CpuModel().c_str(),
               std::thread::hardware_concurrency(),
               binlog_bench::MountOf(dir).c_str(),
               ReadFirstLine("/proc/loadavg").c_str());
  binlog::Options o;  // durable defaults: fdatasync per group
  auto log = binlog::Binlog::Open(dir, "binlog", o);
  if (!log.ok()) {
    std::fprintf(stderr, "Open: %s\n", log.status().ToString().c_str());
    return 1;
  }
  std::vector<PhaseResult> results;
  {
    Committers committers(log->get(), threads);
    absl::SleepFor(absl::Milliseconds(500));  // warm-up
    for (int rep = 0; rep < std::max(1, absl::GetFlag(FLAGS_repetitions));
         ++rep) {
      for (size_t i = 0; i <= configs.size(); ++i) {
        PhaseResult b = Baseline(dir, &committers,
                                 absl::GetFlag(FLAGS_duration_s));
        b.rep = rep;
        Print(b, readers, threads);
        results.push_back(b);
        if (i == configs.size()) break;
        PhaseResult l = Lagging(dir, log->get(), &committers, configs[i],
                                readers, absl::GetFlag(FLAGS_max_catchup_s),
                                absl::GetFlag(FLAGS_reader_nice),
                                static_cast<uint64_t>(
                                    absl::GetFlag(FLAGS_log_gib) *
                                    binlog_bench::kGiB));
        l.rep = rep;
        Print(l, readers, threads);
        results.push_back(l);
      }
    }
  }
  s = (*log)->Close();
  if (!s.ok()) std::fprintf(stderr, "Close: %s\n", s.ToString().c_str());
  // Summary: each lagging phase against the baselines around it.
  for (size_t i = 1; i + 1 < results.size(); ++i) {
    const PhaseResult& l = results[i];
    if (l.phase != "lagging") continue;
    double base = (results[i - 1].tps + results[i + 1].tps) / 2;
    std::printf("{\"summary\":\"lagging\",\"config\":\"%s\",\"rep\":%d,"
                "\"tps\":%.0f,\"baseline_tps\":%.0f,\"tps_ratio\":%.3f,"
                "\"catchup_s_max\":%.2f,\"target_met\":%s}\n",
                l.config.c_str(), l.rep, l.tps, base, l.tps / base,
                l.catchup_s.empty() ? -1.0 : l.catchup_s.back(),
                l.tps / base >= 0.9 ? "true" : "false");
  }
  std::fprintf(stderr, "  loadavg at the end: %s\n",
               ReadFirstLine("/proc/loadavg").c_str());
  return 0;
}
