// codec_bench: what compressing Transaction_payload events costs and gains
// on realistic row events (benchmarks/workload.h).
//
//   BM_Compress    io::Compress of one transaction's inner events (exactly
//                  the bytes Binlog::Commit compresses) with the thread's
//                  reused context. MB/s of uncompressed input.
//   BM_Decompress  io::Decompress of the same frames. MB/s of output.
//   BM_Pack        PayloadPacker::Pack, the whole commit-side work (copy
//                  out the inner events, compress, write Gtid + payload).
//   BM_MariaDecrypt  MariaDB per-event decryption, cipher contexts per
//                  event or per key (MariaEventDecryptor). MB/s of events.
//   BM_ReadLog     binlog::Reader over a closed log of 20000 transactions
//                  (files at rest, page cache warm), decoded or raw: MB/s of
//                  the bytes handed out (for decoded: uncompressed events).
//
// Counters:
//   ratio      uncompressed inner bytes / frame bytes (the codec's ratio)
//   txn_ratio  bytes of the transactions written plainly / written
//              compressed (Gtid + payload event, CRC32 footers): what the
//              disk and a replica's network link see
//   txn_bytes  average plain transaction size
//
// Arguments: codec (0 none, 1 zstd, 2 lz4), level (0 = default), rows per
// transaction, workload (0 sysbench, 1 wide). Inputs are built once per
// benchmark, outside the timed loop: 512 transactions (seed 1), so every
// iteration compresses a different transaction but the set is fixed.
//
//   bazel run -c opt //benchmarks:codec_bench -- --benchmark_repetitions=3

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/workload.h"
#include "binlog/log.h"
#include "binlog/maria_encryption.h"
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "io/codec.h"

namespace binlog {
namespace bench {
namespace {

constexpr int kTxns = 512;

io::Codec CodecArg(int64_t a) {
  switch (a) {
    case 1: return io::Codec::kZstd;
    case 2: return io::Codec::kLz4;
    default: return io::Codec::kNone;
  }
}

Workload WorkloadArg(int64_t a) {
  return a == 1 ? Workload::kWide : Workload::kSysbench;
}

struct Inputs {
  std::vector<std::string> inner;   // inner streams
  std::vector<size_t> plain_bytes;  // plain transaction size (CRC32 on)
  uint64_t inner_total = 0;
  uint64_t plain_total = 0;
};

const Inputs& GetInputs(Workload w, int rows) {
  static std::map<std::pair<int, int>, std::unique_ptr<Inputs>> cache;
  auto& slot = cache[{static_cast<int>(w), rows}];
  if (slot == nullptr) {
    slot = std::make_unique<Inputs>();
    WorkloadOptions o;
    o.kind = w;
    o.min_rows = o.max_rows = rows;
    o.seed = 1;
    o.timestamp = 1700000000;
    WorkloadGenerator gen(o);
    TransactionBuffer txn(/*checksums=*/true);
    for (int i = 0; i < kTxns; ++i) {
      gen.Next(&txn);
      std::string s;
      AppendInnerStream(txn, &s);
      slot->inner_total += s.size();
      slot->plain_total += txn.size();
      slot->plain_bytes.push_back(txn.size());
      slot->inner.push_back(std::move(s));
    }
  }
  return *slot;
}

void SetLabel(benchmark::State& state, io::Codec c, int level, int rows,
              Workload w) {
  state.SetLabel(absl::StrCat(io::CodecName(c), " level=",
                              level == 0 ? io::DefaultCodecLevel(c) : level,
                              " rows=", rows, " ", WorkloadName(w)));
}

void BM_Compress(benchmark::State& state) {
  const io::Codec codec = CodecArg(state.range(0));
  const int level = static_cast<int>(state.range(1));
  const int rows = static_cast<int>(state.range(2));
  const Workload w = WorkloadArg(state.range(3));
  const Inputs& in = GetInputs(w, rows);
  std::string out(io::MaxCompressedSize(codec, 1 << 20), '\0');
  uint64_t compressed_total = 0;
  for (int i = 0; i < kTxns; ++i) {
    auto n = io::Compress(codec, level, in.inner[i], out.data(), out.size());
    if (!n.ok()) {
      state.SkipWithError(std::string(n.status().message()).c_str());
      return;
    }
    compressed_total += *n;
  }
  size_t i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const std::string& s = in.inner[i];
    auto n = io::Compress(codec, level, s, out.data(), out.size());
    benchmark::DoNotOptimize(n);
    bytes += s.size();
    if (++i == in.inner.size()) i = 0;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["ratio"] = static_cast<double>(in.inner_total) /
                            static_cast<double>(compressed_total);
  SetLabel(state, codec, level, rows, w);
}

void BM_Decompress(benchmark::State& state) {
  const io::Codec codec = CodecArg(state.range(0));
  const int level = static_cast<int>(state.range(1));
  const int rows = static_cast<int>(state.range(2));
  const Workload w = WorkloadArg(state.range(3));
  const Inputs& in = GetInputs(w, rows);
  std::vector<std::string> frames;
  std::string out(io::MaxCompressedSize(codec, 1 << 20), '\0');
  for (const std::string& s : in.inner) {
    auto n = io::Compress(codec, level, s, out.data(), out.size());
    if (!n.ok()) {
      state.SkipWithError(std::string(n.status().message()).c_str());
      return;
    }
    frames.emplace_back(out.data(), *n);
  }
  io::ByteBuffer buf;
  size_t i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    absl::Status s = io::Decompress(codec, frames[i], in.inner[i].size(),
                                    kDefaultMaxPayloadSize, &buf);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    bytes += buf.size();
    if (++i == frames.size()) i = 0;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  SetLabel(state, codec, level, rows, w);
}

void BM_Pack(benchmark::State& state) {
  const io::Codec codec = CodecArg(state.range(0));
  const int level = static_cast<int>(state.range(1));
  const int rows = static_cast<int>(state.range(2));
  const Workload w = WorkloadArg(state.range(3));
  const Inputs& in = GetInputs(w, rows);
  // The transactions themselves, rebuilt into buffers (same seed).
  WorkloadOptions o;
  o.kind = w;
  o.min_rows = o.max_rows = rows;
  o.seed = 1;
  o.timestamp = 1700000000;
  WorkloadGenerator gen(o);
  std::vector<std::unique_ptr<TransactionBuffer>> txns;
  uint64_t written = 0;
  for (int i = 0; i < kTxns; ++i) {
    txns.push_back(std::make_unique<TransactionBuffer>(true));
    gen.Next(txns.back().get());
    auto p = internal::PayloadPacker::Pack(txns.back().get(),
                                           PayloadCompression{codec, level, 0});
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      return;
    }
    written += (*p)->size();
  }
  size_t i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    TransactionBuffer* t = txns[i].get();
    auto p = internal::PayloadPacker::Pack(t, PayloadCompression{codec, level, 0});
    benchmark::DoNotOptimize(p);
    bytes += in.plain_bytes[i];
    if (++i == txns.size()) i = 0;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["txn_ratio"] =
      static_cast<double>(in.plain_total) / static_cast<double>(written);
  state.counters["txn_bytes"] =
      static_cast<double>(in.plain_total) / static_cast<double>(kTxns);
  SetLabel(state, codec, level, rows, w);
}

// A closed log of 20000 transactions per (codec, rows), written once.
std::string LogDir(io::Codec codec, int rows, Workload w) {
  static std::map<std::tuple<int, int, int>, std::string> dirs;
  auto key = std::make_tuple(static_cast<int>(codec), rows, static_cast<int>(w));
  auto it = dirs.find(key);
  if (it != dirs.end()) return it->second;
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/codec_bench_",
                                 ::getpid(), "_", io::CodecName(codec), "_",
                                 rows, "_", WorkloadName(w));
  std::string cmd = absl::StrCat("rm -rf '", dir, "'");
  if (std::system(cmd.c_str()) != 0) return "";
  Options o;
  o.compression = codec;
  o.compression_threshold = 0;
  o.sync_policy = SyncPolicy::kNever;
  auto log = Binlog::Open(dir, "binlog", o);
  if (!log.ok()) return "";
  WorkloadOptions wo;
  wo.kind = w;
  wo.min_rows = wo.max_rows = rows;
  wo.timestamp = 1700000000;
  WorkloadGenerator gen(wo);
  TransactionBuffer txn;
  for (int i = 0; i < 20000; ++i) {
    gen.Next(&txn);
    if (!(*log)->Commit(&txn).ok()) return "";
  }
  if (!(*log)->Close().ok()) return "";
  dirs[key] = dir;
  return dir;
}

void BM_ReadLog(benchmark::State& state) {
  const io::Codec codec = CodecArg(state.range(0));
  const bool raw = state.range(1) != 0;
  const int rows = static_cast<int>(state.range(2));
  const Workload w = WorkloadArg(state.range(3));
  std::string dir = LogDir(codec, rows, w);
  if (dir.empty()) {
    state.SkipWithError("cannot write the log");
    return;
  }
  ReaderOptions ro;
  ro.payloads = raw ? PayloadMode::kRaw : PayloadMode::kDecoded;
  uint64_t bytes = 0, events = 0;
  for (auto _ : state) {
    auto r = Reader::OpenDirectory(dir, "binlog", ro);
    if (!r.ok()) {
      state.SkipWithError("open");
      return;
    }
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      bytes += ev.data.size();
      ++events;
    }
    if (!absl::IsOutOfRange(s)) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(absl::StrCat(io::CodecName(codec), raw ? " raw" : " decoded",
                              " rows=", rows, " ", WorkloadName(w)));
}

// MariaDB's per-event decryption: DecryptMariaEvent (cipher contexts
// made per event, as the Reader once did) or one MariaEventDecryptor
// (contexts per key). Events of `event_bytes` random bytes (decryption
// does not look at them), 256 of them at their offsets; AES-256.
void BM_MariaDecrypt(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const bool reuse = state.range(1) != 0;
  const std::string key(32, '\x5c');
  const std::string nonce(12, '\x3a');
  std::vector<std::string> events(256);
  uint64_t x = 88172645463325252ull;
  for (std::string& e : events) {
    e.resize(size);
    for (char& c : e) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c = static_cast<char>(x);
    }
  }
  MariaEventDecryptor decryptor;
  std::string out;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& e = events[i++ % events.size()];
    const uint32_t offset = static_cast<uint32_t>(4 + i * size);
    absl::Status s = reuse ? decryptor.Decrypt(key, nonce, offset, e, &out)
                           : DecryptMariaEvent(key, nonce, offset, e, &out);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
  state.SetLabel(reuse ? "one decryptor" : "contexts per event");
}

void CodecArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"codec", "level", "rows", "workload"});
  for (int rows : {1, 5, 20}) {
    for (int level : {1, 3, 9}) b->Args({1, level, rows, 0});
    b->Args({2, 0, rows, 0});
  }
  b->Args({2, -2, 5, 0});  // lz4 acceleration 2: what speed costs in ratio
  for (int level : {1, 3}) b->Args({1, level, 5, 1});
  b->Args({2, 0, 5, 1});
}

BENCHMARK(BM_Compress)->Apply(CodecArgs);
BENCHMARK(BM_Decompress)->Apply(CodecArgs);
BENCHMARK(BM_Pack)->Apply(CodecArgs);
BENCHMARK(BM_MariaDecrypt)
    ->ArgNames({"event_bytes", "reuse"})
    ->ArgsProduct({{200, 2000, 20000}, {0, 1}});
BENCHMARK(BM_ReadLog)
    ->ArgNames({"codec", "raw", "rows", "workload"})
    ->Args({0, 0, 5, 0})
    ->Args({1, 0, 5, 0})
    ->Args({1, 1, 5, 0})
    ->Args({2, 0, 5, 0})
    ->Args({2, 1, 5, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace bench
}  // namespace binlog
