// What the writer pays for the tailing readers' ring (binlog/tail_ring.h):
// TailRing::Append of one group, in the flush stage, with a number of
// readers registered (their pins are scanned once per group). And what a
// caught-up reader pays to take transactions from the ring, without the
// wake-ups and the cache misses of a live run (commit_bench measures
// those): BM_RingReader reads 8000 of commit_bench's transactions (Anonymous_gtid,
// BEGIN, Rows_query of 256 bytes, Xid: 417 bytes) per iteration, all but
// the first 64 KiB from the ring, decoded (Reader::Next) or in batches
// (Reader::NextBatch).
//   bazel run -c opt //benchmarks:tail_ring_bench

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/tail_ring.h"
#include "binlog/transaction.h"

namespace {

// args: group bytes (25 transactions of commit_bench's 417 bytes: 10425),
// registered readers.
void BM_TailRingAppend(benchmark::State& state) {
  const size_t group = static_cast<size_t>(state.range(0));
  const int readers = static_cast<int>(state.range(1));
  binlog::internal::TailRing ring(8 << 20);
  for (int i = 0; i < readers; ++i) ring.Register();
  const std::string txn(417, 'x');
  std::vector<absl::string_view> iov;
  for (size_t n = 0; n < group; n += txn.size()) {
    iov.push_back(absl::string_view(txn).substr(0, group - n));
  }
  uint64_t off = 4096;
  for (auto _ : state) {
    ring.Append(1, off, iov);
    off += group;
    if (off > (1ull << 31)) off = 4096;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * group));
  if (ring.emptied() != 0) state.SkipWithError("the ring emptied");
}
BENCHMARK(BM_TailRingAppend)
    ->ArgNames({"group_bytes", "readers"})
    ->Args({10425, 0})
    ->Args({10425, 64})
    ->Args({1 << 20, 64});

// A log of kRingTxns transactions, written once per process, all of them in
// the ring (8000 x 417 bytes < the default 8 MiB).
constexpr int kRingTxns = 8000;

binlog::Binlog* RingLog() {
  static binlog::Binlog* log = [] {
    const std::string dir = absl::StrCat(
        std::filesystem::temp_directory_path().string(), "/tail_ring_bench_",
        ::getpid());
    std::filesystem::remove_all(dir);
    binlog::Options o;
    o.sync_every_n = 0;  // the reads are measured, not the syncs
    auto log = binlog::Binlog::Open(dir, "binlog", o);
    if (!log.ok()) {
      std::fprintf(stderr, "open: %s\n", log.status().ToString().c_str());
      std::abort();
    }
    // The ring copies nothing while no reader is registered: one is, while
    // the transactions are written.
    auto keep = (*log)->NewReader(binlog::ReaderOptions());
    if (!keep.ok()) std::abort();
    binlog::TransactionBuffer txn(/*checksums=*/true);
    const std::string text(255, 'q');
    for (int i = 0; i < kRingTxns; ++i) {
      txn.Clear();
      binlog::AppendAnonymousGtid(&txn, 1, 1, 0, i + 1);
      binlog::AppendQuery(&txn, 1, 1, 1, "", "BEGIN");
      char* body = txn.AppendEvent(binlog::kRowsQueryEvent, 1, 1,
                                   binlog::kFlagIgnorable, text.size() + 1);
      body[0] = static_cast<char>(text.size());
      std::memcpy(body + 1, text.data(), text.size());
      binlog::AppendXid(&txn, 1, 1, i + 1);
      auto pos = (*log)->Commit(&txn);
      if (!pos.ok()) std::abort();
    }
    // Readers see what is durable: one sync publishes it all.
    if (!(*log)->Sync().ok()) std::abort();
    keep->reset();
    // Readers open the files by name: the directory goes at exit.
    static const std::string to_remove = dir;
    std::atexit([] { std::filesystem::remove_all(to_remove); });
    return log->release();
  }();
  return log;
}

// arg: 0 decoded (Next), 1 batches (NextBatch).
void BM_RingReader(benchmark::State& state) {
  binlog::Binlog* log = RingLog();
  const bool batch = state.range(0) != 0;
  int64_t txns = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // The smallest window: the reader takes its first 64 KiB from the file
    // (checksums verified), the rest from the ring.
    binlog::ReaderOptions ro;
    ro.buffer_size = 64 << 10;
    auto r = log->NewReader(ro);
    if (!r.ok()) std::abort();
    binlog::Reader* reader = r->get();
    // The file's header events: read before the timed part.
    binlog::Event ev;
    while (reader->Next(&ev).ok() && ev.header.type != binlog::kPreviousGtidsEvent) {
    }
    state.ResumeTiming();
    int n = 0;
    if (batch) {
      binlog::EventBatch b;
      size_t events = 0;
      while (reader->NextBatch(&b).ok()) {
        bytes += b.data.size();
        events += b.size();
      }
      // 4 events per transaction: a miscount shows as a wrong total.
      n = events % 4 == 0 ? static_cast<int>(events / 4) : -1;
    } else {
      while (reader->Next(&ev).ok()) {
        bytes += ev.data.size();
        n += ev.header.type == binlog::kXidEvent;
      }
    }
    if (n != kRingTxns) {
      std::fprintf(stderr, "read %d of %d transactions\n", n, kRingTxns);
      std::abort();
    }
    txns += kRingTxns;
    state.PauseTiming();
    r->reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_txn"] = benchmark::Counter(
      static_cast<double>(txns), benchmark::Counter::kIsRate |
                                     benchmark::Counter::kInvert);
  benchmark::DoNotOptimize(bytes);
}
BENCHMARK(BM_RingReader)->ArgName("batch")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
