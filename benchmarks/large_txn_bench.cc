// large_txn_bench: one very large transaction committed while small
// transactions keep committing (issue 18, "transactions of any size").
//
// Phases, on one log (SyncPolicy::kEveryGroup, the defaults):
//   1. baseline: --threads committers of small transactions (Anonymous_gtid,
//      BEGIN, a Rows_query of --small_payload bytes, Xid) for --baseline_s;
//   2. the large transaction: the main thread builds --txn_mib MiB of
//      Rows_query events of --event_kib KiB in a buffer from
//      Binlog::NewTransactionBuffer (memory limit --memory_limit_kib; 0:
//      an in-memory TransactionBuffer, no spilling) and commits it, while
//      the small committers go on.
// Reported (one JSON line): build and commit time and MB/s of the large
// transaction; the committer's memory: the buffer's own peak
// (TransactionBuffer::peak_memory) and the process's RSS high-water mark
// (VmHWM of /proc/self/status) before and after; the small commits'
// p50/p99/max latency in the baseline and while the large transaction was
// being committed (Commit entered to Commit returned), and how many.
//
//   bazel build -c opt //benchmarks:large_txn_bench
//   bazel-bin/benchmarks/large_txn_bench --dir=/var/tmp/ltb --txn_mib=1024
//       --threads=16 --memory_limit_kib=8192   (one command line)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"

ABSL_FLAG(std::string, dir, "/var/tmp/large_txn_bench", "log directory (wiped)");
ABSL_FLAG(int, threads, 16, "small committers");
ABSL_FLAG(int, small_payload, 256, "Rows_query bytes of a small transaction");
ABSL_FLAG(double, baseline_s, 3, "seconds of small commits before the large one");
ABSL_FLAG(int64_t, txn_mib, 1024, "size of the large transaction (MiB)");
ABSL_FLAG(int64_t, event_kib, 8, "event size in the large transaction (KiB)");
ABSL_FLAG(int64_t, memory_limit_kib, 8192,
          "the large buffer's memory limit (KiB); 0: in memory, no spilling");

namespace {

using Clock = std::chrono::steady_clock;

uint64_t VmHwmKib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

void Die(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

void BuildSmall(binlog::TransactionBuffer* t, uint64_t id, size_t payload) {
  t->Clear();
  const uint32_t ts = 1700000000;
  binlog::AppendAnonymousGtid(t, ts, 1, 0, 1);
  binlog::AppendQuery(t, ts, 1, 7, "db", "BEGIN");
  char* b = t->AppendEvent(binlog::kRowsQueryEvent, 1, ts, binlog::kFlagIgnorable,
                           payload + 1);
  b[0] = static_cast<char>(payload > 255 ? 255 : payload);
  std::memset(b + 1, 'a' + static_cast<int>(id % 26), payload);
  binlog::AppendXid(t, ts, 1, id);
}

struct Sample {
  int64_t start_ns;
  int64_t latency_ns;
};

double Pct(std::vector<int64_t>* v, double p) {
  if (v->empty()) return 0;
  std::sort(v->begin(), v->end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v->size() - 1) + 0.5);
  return static_cast<double>((*v)[i]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()) != 0) {
    return 1;
  }
  binlog::Options o;
  o.transaction_memory_limit =
      static_cast<size_t>(std::max<int64_t>(4, absl::GetFlag(FLAGS_memory_limit_kib))) << 10;
  auto opened = binlog::Binlog::Open(dir, "binlog", o);
  Die(opened.status(), "open");
  std::unique_ptr<binlog::Binlog> log = std::move(*opened);

  const int threads = absl::GetFlag(FLAGS_threads);
  const size_t payload = static_cast<size_t>(absl::GetFlag(FLAGS_small_payload));
  const Clock::time_point t0 = Clock::now();
  auto ns = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
  };
  std::atomic<bool> stop{false};
  std::vector<std::vector<Sample>> samples(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    samples[static_cast<size_t>(i)].reserve(1 << 20);
    workers.emplace_back([&, i] {
      binlog::TransactionBuffer t;
      uint64_t id = static_cast<uint64_t>(i) << 40;
      while (!stop.load(std::memory_order_relaxed)) {
        BuildSmall(&t, id++, payload);
        Clock::time_point a = Clock::now();
        auto pos = log->Commit(&t);
        Clock::time_point b = Clock::now();
        Die(pos.status(), "small commit");
        auto& v = samples[static_cast<size_t>(i)];
        if (v.size() < v.capacity()) v.push_back(Sample{ns(a), ns(b) - ns(a)});
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_baseline_s)));
  const int64_t baseline_end = ns(Clock::now());

  const uint64_t hwm_before = VmHwmKib();
  std::unique_ptr<binlog::TransactionBuffer> big =
      absl::GetFlag(FLAGS_memory_limit_kib) > 0 ? log->NewTransactionBuffer()
                                                : std::make_unique<binlog::TransactionBuffer>();
  const uint64_t target = static_cast<uint64_t>(absl::GetFlag(FLAGS_txn_mib)) << 20;
  const size_t event_body = static_cast<size_t>(absl::GetFlag(FLAGS_event_kib)) << 10;
  Clock::time_point b0 = Clock::now();
  {
    const uint32_t ts = 1700000000;
    big->Clear();
    binlog::AppendAnonymousGtid(big.get(), ts, 1, 0, 1);
    binlog::AppendQuery(big.get(), ts, 1, 7, "db", "BEGIN");
    uint64_t x = 88172645463325252ull;
    while (big->size() < target) {
      char* b = big->AppendEvent(binlog::kRowsQueryEvent, 1, ts, binlog::kFlagIgnorable,
                                 event_body + 1);
      b[0] = static_cast<char>(255);
      // Cheap, not compressible to nothing: one xorshift word per 8 bytes.
      for (size_t k = 1; k + 8 <= event_body + 1; k += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(b + k, &x, 8);
      }
    }
    binlog::AppendXid(big.get(), ts, 1, 1);
  }
  Clock::time_point b1 = Clock::now();
  const int64_t commit_start = ns(b1);
  auto pos = log->Commit(big.get());
  Clock::time_point c1 = Clock::now();
  const int64_t commit_end = ns(c1);
  Die(pos.status(), "large commit");
  const uint64_t hwm_after = VmHwmKib();
  // A little more of small commits after it, then stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop.store(true);
  for (auto& w : workers) w.join();

  std::vector<int64_t> base, during;
  for (const auto& v : samples) {
    for (const Sample& s : v) {
      if (s.start_ns + s.latency_ns <= baseline_end) base.push_back(s.latency_ns);
      // Overlapping the large Commit.
      if (s.start_ns < commit_end && s.start_ns + s.latency_ns > commit_start) {
        during.push_back(s.latency_ns);
      }
    }
  }
  const double build_s = std::chrono::duration<double>(b1 - b0).count();
  const double commit_s = std::chrono::duration<double>(c1 - b1).count();
  const double mib = static_cast<double>(big->size()) / (1 << 20);
  const size_t nbase = base.size(), nduring = during.size();
  std::printf(
      "{\"txn_mib\":%.1f,\"events\":%zu,\"memory_limit_kib\":%ld,\"spilled\":%d,"
      "\"build_s\":%.3f,\"build_mib_s\":%.1f,\"commit_s\":%.3f,\"commit_mib_s\":%.1f,"
      "\"buffer_peak_kib\":%zu,\"vmhwm_before_kib\":%lu,\"vmhwm_after_kib\":%lu,"
      "\"threads\":%d,\"base_commits\":%zu,\"base_p50_us\":%.1f,\"base_p99_us\":%.1f,"
      "\"base_max_us\":%.1f,\"during_commits\":%zu,\"during_p50_us\":%.1f,"
      "\"during_p99_us\":%.1f,\"during_max_us\":%.1f,\"fsyncs\":%lu}\n",
      mib, big->event_count(), static_cast<long>(absl::GetFlag(FLAGS_memory_limit_kib)),
      big->spilled() ? 1 : 0, build_s, mib / build_s, commit_s, mib / commit_s,
      big->peak_memory() >> 10, static_cast<unsigned long>(hwm_before),
      static_cast<unsigned long>(hwm_after), threads, nbase, Pct(&base, 0.5),
      Pct(&base, 0.99), Pct(&base, 1.0), nduring, Pct(&during, 0.5), Pct(&during, 0.99),
      Pct(&during, 1.0), static_cast<unsigned long>(log->stats().fsyncs));
  Die(log->Close(), "close");
  return std::system(absl::StrCat("rm -rf '", dir, "'").c_str()) == 0 ? 0 : 1;
}
