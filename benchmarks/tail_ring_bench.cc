// What the writer pays for the tailing readers' ring (binlog/tail_ring.h):
// TailRing::Append of one group, in the flush stage, with a number of
// readers registered (their pins are scanned once per group).
//   bazel run -c opt //benchmarks:tail_ring_bench

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "binlog/tail_ring.h"

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

}  // namespace
