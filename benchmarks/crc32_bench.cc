// Benchmarks for the binlog event checksum (binlog/checksum.h):
//
//   * BM_Crc32Zlib / BM_Crc32Isal: the two bulk CRC-32 implementations
//     (zlib crc32 vs ISA-L crc32_gzip_refl) over random buffers.
//   * BM_LogPosCrcDelta: the serial-section correction of an event's CRC
//     for its final log_pos (op precomputed).
//   * BM_LogPosCrcOperator: computing that op from the event length
//     (done outside the serial section).
//   * BM_FullCrc32Recompute: what the correction replaces, re-checksumming
//     the whole event with binlog::Crc32 once log_pos is known.
//
// Event sizes (event_bytes) include the 4-byte checksum footer; the CRC
// covers event_bytes - 4 bytes, as in the binlog format.
//
// Setup verifies that both implementations agree and that the correction
// yields the recomputed CRC; a mismatch reports an error instead of timing.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "binlog/checksum.h"

namespace {

constexpr size_t kFooterBytes = 4;     // CRC-32 footer at the event's end
constexpr size_t kLogPosOffset = 13;   // log_pos field: bytes [13, 17)

std::vector<unsigned char> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<unsigned char>(rng() & 0xff);
  }
  return v;
}

void PutLe32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// --- Bulk CRC-32 ---------------------------------------------------------

template <uint32_t (*Crc)(uint32_t, const void*, size_t)>
void BulkCrc(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<unsigned char> data = RandomBytes(n, 0x5eed + n);
  if (binlog::internal::Crc32Zlib(0, data.data(), n) !=
      binlog::internal::Crc32Isal(0, data.data(), n)) {
    state.SkipWithError("zlib and ISA-L CRC-32 disagree");
    return;
  }
  for (auto _ : state) {
    uint32_t crc = Crc(0, data.data(), n);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(n));
}

void BM_Crc32Zlib(benchmark::State& state) {
  BulkCrc<binlog::internal::Crc32Zlib>(state);
}
void BM_Crc32Isal(benchmark::State& state) {
  BulkCrc<binlog::internal::Crc32Isal>(state);
}

void BulkSizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes"});
  for (int64_t n : {64, 512, 4096, 1048576}) b->Args({n});
}

BENCHMARK(BM_Crc32Zlib)->Apply(BulkSizes);
BENCHMARK(BM_Crc32Isal)->Apply(BulkSizes);

// --- log_pos correction vs full recompute --------------------------------

void EventSizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"event_bytes"});
  for (int64_t n : {256, 4096}) b->Args({n});
}

// Serial-section correction: op is known in advance (it depends only on
// the length); log_pos changes on every iteration.
void BM_LogPosCrcDelta(benchmark::State& state) {
  const size_t covered = static_cast<size_t>(state.range(0)) - kFooterBytes;
  std::vector<unsigned char> event = RandomBytes(covered, 0xe7e7 + covered);
  PutLe32(event.data() + kLogPosOffset, 0);
  const uint32_t crc0 = binlog::Crc32(event.data(), covered);
  const uint32_t op = binlog::LogPosCrcOperator(covered);

  // Check the correction against a recompute before timing it.
  const uint32_t check_pos = 0x12345678u;
  PutLe32(event.data() + kLogPosOffset, check_pos);
  if ((crc0 ^ binlog::LogPosCrcDelta(check_pos, op)) !=
      binlog::Crc32(event.data(), covered)) {
    state.SkipWithError("log_pos correction does not match a recompute");
    return;
  }

  uint32_t log_pos = 4;
  for (auto _ : state) {
    uint32_t crc = crc0 ^ binlog::LogPosCrcDelta(log_pos, op);
    benchmark::DoNotOptimize(crc);
    log_pos += static_cast<uint32_t>(covered + kFooterBytes);
  }
}
BENCHMARK(BM_LogPosCrcDelta)->Apply(EventSizes);

// The length-dependent operator, computed in the committing thread.
void BM_LogPosCrcOperator(benchmark::State& state) {
  size_t covered = static_cast<size_t>(state.range(0)) - kFooterBytes;
  for (auto _ : state) {
    benchmark::DoNotOptimize(covered);  // keep the length opaque
    uint32_t op = binlog::LogPosCrcOperator(covered);
    benchmark::DoNotOptimize(op);
  }
}
BENCHMARK(BM_LogPosCrcOperator)->Apply(EventSizes);

// What the correction replaces: patch log_pos, re-checksum the whole event
// with the library's Crc32 (ISA-L).
void BM_FullCrc32Recompute(benchmark::State& state) {
  const size_t covered = static_cast<size_t>(state.range(0)) - kFooterBytes;
  std::vector<unsigned char> event = RandomBytes(covered, 0xe7e7 + covered);
  uint32_t log_pos = 4;
  for (auto _ : state) {
    PutLe32(event.data() + kLogPosOffset, log_pos);
    uint32_t crc = binlog::Crc32(event.data(), covered);
    benchmark::DoNotOptimize(crc);
    log_pos += static_cast<uint32_t>(covered + kFooterBytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(covered));
}
BENCHMARK(BM_FullCrc32Recompute)->Apply(EventSizes);

}  // namespace
