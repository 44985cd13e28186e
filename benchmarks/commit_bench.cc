// commit_bench: durable commit throughput and latency of the binlog next to
// RocksDB, LevelDB and two hand-written baselines, in one process and one
// run, on the same disk.
//
// For each point (system x payload x sync_every x readers x threads) it
// opens the system in a fresh directory, starts `threads` committer threads
// that commit as fast as they can, warms up for --warmup_s, then measures for
// --duration_s and prints one JSON line (or one Markdown table row):
//
//   system, version (peers), threads, payload, readers, sync_every, rep,
//   tps                commits completed inside the window / window length
//   p50_us, p99_us     latency of those commits (the commit call only)
//   avg_group          commits per commit group, i.e. per write(+sync)
//                      round as the system counts its groups (-1: not
//                      available)
//   fsyncs             fdatasync calls inside the window (-1: not available)
//   commits_per_fsync  commits / fsyncs (-1: not available or no fsync);
//                      differs from avg_group when one fdatasync covers
//                      several written groups
//   reader_mb_s        bytes returned by all tailing readers / window / 1e6
//   cpu_us_per_commit  process user+sys CPU (getrusage, all threads,
//                      including background and reader threads) / commits
//   commits, commit_bytes (bytes one commit hands to the system)
//
// Systems:
//   binlog       binlog::Binlog with default options. Each commit rebuilds its
//                thread's TransactionBuffer (Anonymous_gtid, Query BEGIN,
//                Rows_query of `payload` body bytes, Xid), as a server does
//                per transaction, then calls Commit().
//   rocksdb      DB::Put(random 8-16 byte key, payload value), WAL synced per
//                write group (WriteOptions::sync).
//   leveldb      DB::Put, same key/value, WriteOptions::sync.
//   naive        mutex + pwrite + fdatasync per commit (baselines.h).
//   naive-group  textbook leader/follower group commit (baselines.h).
// naive and naive-group write the same number of bytes per commit as the
// binlog transaction of that payload (commit_bytes).
//
// sync_every: 1 = durable per commit group, 0 = never sync, N = every N
// groups (binlog, naive, naive-group only; rocksdb and leveldb have no such
// mode and skip those points). Readers apply to binlog only; the other
// systems run with readers = 0.
//
// The commit loop is a command-line program rather than google-benchmark
// (STYLE.md 2.10) because it runs several systems with their own threads and
// background work in one process and reports per-point system counters.
//
// Example:
//   bazel run //benchmarks:commit_bench -- --systems=binlog,naive-group
//       --threads=1,16 --payload=256 --readers=0 --duration_s=2
// (one command line).

#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
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
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmarks/baselines.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "io/file_system.h"
#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/version.h"

ABSL_FLAG(std::vector<std::string>, systems,
          std::vector<std::string>({"binlog", "rocksdb", "leveldb", "naive",
                                    "naive-group"}),
          "systems to run: binlog, rocksdb, leveldb, naive, naive-group");
ABSL_FLAG(std::vector<std::string>, threads,
          std::vector<std::string>({"1", "4", "16", "64", "256"}),
          "committer thread counts");
ABSL_FLAG(std::vector<std::string>, payload,
          std::vector<std::string>({"256", "4096"}),
          "payload bytes per commit (binlog: Rows_query body; peers: value)");
ABSL_FLAG(std::vector<std::string>, sync_every, std::vector<std::string>({"1"}),
          "1 = sync every commit group (durable), 0 = never, N = every N "
          "groups (binlog, naive, naive-group)");
ABSL_FLAG(std::vector<std::string>, readers,
          std::vector<std::string>({"0", "1", "8", "64"}),
          "tailing reader threads (binlog only; others run with 0)");
ABSL_FLAG(double, duration_s, 2.0, "measured seconds per point");
ABSL_FLAG(double, warmup_s, 0.2, "unmeasured warm-up seconds per point");
ABSL_FLAG(std::string, dir, "",
          "directory for the data (default: a fresh directory under /tmp); "
          "each point uses a fresh subdirectory");
ABSL_FLAG(bool, keep, false, "keep the data of every point");
ABSL_FLAG(std::string, format, "jsonl", "jsonl or table (Markdown)");
ABSL_FLAG(int, repetitions, 1, "runs of each point");
ABSL_FLAG(uint64_t, max_file_size, 1ull << 30,
          "binlog Options::max_file_size");

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kServerId = 1;

// ---------------------------------------------------------------------------
// Inputs

// Text that looks like SQL literals, so nothing compresses to nothing.
std::string RandomText(size_t n, std::mt19937_64* rng) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,'()";
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) {
    s[i] = kAlphabet[(*rng)() % (sizeof(kAlphabet) - 1)];
  }
  return s;
}

// xorshift64*: per-thread keys without a shared generator.
struct FastRng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

// A random 8-16 byte printable key.
size_t RandomKey(FastRng* rng, char key[16]) {
  const uint64_t a = rng->Next();
  const uint64_t b = rng->Next();
  const size_t len = 8 + static_cast<size_t>(a % 9);
  for (size_t i = 0; i < len; ++i) {
    key[i] = static_cast<char>('0' + ((b >> (4 * i)) ^ (a >> (i + 8))) % 75);
  }
  return len;
}

// The binlog transaction a committer builds: Anonymous_gtid, Query BEGIN,
// Rows_query whose body is a length byte plus `text`, Xid.
void BuildTransaction(binlog::TransactionBuffer* txn, uint32_t thread,
                      uint64_t seq, absl::string_view text) {
  const uint32_t now = static_cast<uint32_t>(::time(nullptr));
  txn->Clear();
  binlog::AppendAnonymousGtid(txn, now, kServerId, /*last_committed=*/0,
                              static_cast<int64_t>(seq));
  binlog::AppendQuery(txn, now, kServerId, thread, "", "BEGIN");
  // MySQL marks Rows_query ignorable; the length byte is stored mod 256.
  char* body = txn->AppendEvent(binlog::kRowsQueryEvent, kServerId, now,
                                binlog::kFlagIgnorable, text.size() + 1);
  body[0] = static_cast<char>(text.size() & 0xff);
  std::memcpy(body + 1, text.data(), text.size());
  binlog::AppendXid(txn, now, kServerId, seq);
}

size_t TransactionBytes(size_t payload) {
  binlog::TransactionBuffer txn(/*checksums=*/true);
  BuildTransaction(&txn, 0, 1, std::string(payload - 1, 'x'));
  return txn.size();
}

// ---------------------------------------------------------------------------
// Systems

// Cumulative counters of a system; -1 when it cannot tell.
struct Counters {
  int64_t commits = -1;
  int64_t groups = -1;
  int64_t fsyncs = -1;
};

// One committer thread's state. Prepare() is the per-commit work done before
// the latency timer starts (building the transaction, drawing a key); it is
// inside the throughput loop.
class Committer {
 public:
  virtual ~Committer() = default;
  virtual void Prepare() {}
  virtual absl::Status Commit() = 0;
};

struct PointConfig {
  std::string system;
  int threads = 1;
  size_t payload = 256;
  uint32_t sync_every = 1;
  int readers = 0;
  int rep = 1;
};

class System {
 public:
  virtual ~System() = default;
  virtual absl::Status Open(const std::string& dir) = 0;
  // Built before the clock starts; `seed` differs per thread.
  virtual std::unique_ptr<Committer> NewCommitter(int thread,
                                                  uint64_t seed) = 0;
  virtual Counters counters() const = 0;
  virtual absl::Status StartReaders(int n) {
    return n == 0 ? absl::OkStatus()
                  : absl::InvalidArgumentError("readers are binlog-only");
  }
  // Bytes returned so far by all readers.
  virtual uint64_t ReaderBytes() const { return 0; }
  // Stops the readers (if any) and closes the system.
  virtual absl::Status Close() = 0;
  virtual std::string version() const { return ""; }
  virtual size_t commit_bytes() const = 0;
};

// --- binlog -----------------------------------------------------------------

class BinlogCommitter : public Committer {
 public:
  BinlogCommitter(binlog::Binlog* log, int thread, size_t payload,
                  uint64_t seed)
      : log_(log), thread_(static_cast<uint32_t>(thread)) {
    std::mt19937_64 rng(seed);
    text_ = RandomText(payload - 1, &rng);
    seq_ = static_cast<uint64_t>(thread) << 40;
  }
  void Prepare() override { BuildTransaction(&txn_, thread_, ++seq_, text_); }
  absl::Status Commit() override { return log_->Commit(&txn_).status(); }

 private:
  binlog::Binlog* log_;
  uint32_t thread_;
  uint64_t seq_;
  std::string text_;
  binlog::TransactionBuffer txn_{/*checksums=*/true};
};

class BinlogSystem : public System {
 public:
  explicit BinlogSystem(const PointConfig& p, uint64_t max_file_size)
      : p_(p), max_file_size_(max_file_size) {}
  ~BinlogSystem() override { StopReaders().IgnoreError(); }

  absl::Status Open(const std::string& dir) override {
    binlog::Options options;
    options.max_file_size = max_file_size_;
    if (p_.sync_every == 0) {
      options.sync_policy = binlog::SyncPolicy::kNever;
    } else if (p_.sync_every == 1) {
      options.sync_policy = binlog::SyncPolicy::kEveryGroup;
    } else {
      options.sync_policy = binlog::SyncPolicy::kEveryNGroups;
      options.sync_every_n = p_.sync_every;
    }
    absl::StatusOr<std::unique_ptr<binlog::Binlog>> log =
        binlog::Binlog::Open(dir, "binlog", options);
    if (!log.ok()) return log.status();
    log_ = std::move(*log);
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int thread, uint64_t seed) override {
    return std::make_unique<BinlogCommitter>(log_.get(), thread, p_.payload,
                                             seed);
  }

  Counters counters() const override {
    const binlog::LogStats s = log_->stats();
    Counters c;
    c.commits = static_cast<int64_t>(s.commits);
    c.groups = static_cast<int64_t>(s.groups);
    c.fsyncs = static_cast<int64_t>(s.fsyncs);
    return c;
  }

  absl::Status StartReaders(int n) override {
    readers_ = std::vector<ReaderSlot>(static_cast<size_t>(n));
    for (ReaderSlot& slot : readers_) {
      absl::StatusOr<std::unique_ptr<binlog::Reader>> r =
          log_->NewReader(binlog::ReaderOptions());
      if (!r.ok()) return r.status();
      slot.reader = std::move(*r);
    }
    for (ReaderSlot& slot : readers_) {
      slot.thread = std::thread(&BinlogSystem::ReadLoop, this, &slot);
    }
    return absl::OkStatus();
  }

  uint64_t ReaderBytes() const override {
    uint64_t total = 0;
    for (const ReaderSlot& slot : readers_) {
      total += slot.bytes.load(std::memory_order_relaxed);
    }
    return total;
  }

  absl::Status Close() override {
    absl::Status s = StopReaders();
    absl::Status c = log_->Close();
    return s.ok() ? c : s;
  }

  size_t commit_bytes() const override {
    return TransactionBytes(p_.payload);
  }

 private:
  // One tailing reader. bytes: written (relaxed) only by its reader thread,
  // read by the main thread for the snapshots; alignas keeps the readers'
  // counters off each other's cache lines.
  struct alignas(64) ReaderSlot {
    std::atomic<uint64_t> bytes{0};
    std::unique_ptr<binlog::Reader> reader;
    std::thread thread;
    absl::Status status;
  };

  void ReadLoop(ReaderSlot* slot) {
    binlog::Event ev;
    uint64_t bytes = 0;
    while (!stop_readers_.load(std::memory_order_relaxed)) {
      absl::Status s = slot->reader->Next(&ev);
      if (s.ok()) {
        bytes += ev.data.size();
        slot->bytes.store(bytes, std::memory_order_relaxed);
        continue;
      }
      if (!absl::IsOutOfRange(s)) {
        slot->status = s;
        return;
      }
      s = slot->reader->WaitForMore(absl::Now() + absl::Milliseconds(100));
      if (absl::IsCancelled(s)) return;  // the log was closed
      if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
        slot->status = s;
        return;
      }
    }
  }

  absl::Status StopReaders() {
    stop_readers_.store(true, std::memory_order_relaxed);
    absl::Status first;
    for (ReaderSlot& slot : readers_) {
      if (slot.thread.joinable()) slot.thread.join();
      if (first.ok() && !slot.status.ok()) {
        first = absl::Status(slot.status.code(),
                             absl::StrCat("reader: ", slot.status.message()));
      }
    }
    return first;
  }

  const PointConfig p_;
  const uint64_t max_file_size_;
  std::unique_ptr<binlog::Binlog> log_;
  std::vector<ReaderSlot> readers_;
  std::atomic<bool> stop_readers_{false};
};

// --- rocksdb ----------------------------------------------------------------

class RocksCommitter : public Committer {
 public:
  RocksCommitter(rocksdb::DB* db, bool sync, size_t payload, uint64_t seed)
      : db_(db), rng_{seed | 1} {
    std::mt19937_64 rng(seed);
    value_ = RandomText(payload, &rng);
    options_.sync = sync;
  }
  void Prepare() override { key_len_ = RandomKey(&rng_, key_); }
  absl::Status Commit() override {
    rocksdb::Status s =
        db_->Put(options_, rocksdb::Slice(key_, key_len_), value_);
    if (!s.ok()) return absl::InternalError("rocksdb Put: " + s.ToString());
    return absl::OkStatus();
  }

 private:
  rocksdb::DB* db_;
  rocksdb::WriteOptions options_;
  FastRng rng_;
  char key_[16];
  size_t key_len_ = 0;
  std::string value_;
};

class RocksSystem : public System {
 public:
  explicit RocksSystem(const PointConfig& p) : p_(p) {}

  absl::Status Open(const std::string& dir) override {
    rocksdb::Options o;
    o.create_if_missing = true;
    // Keep memtable flushes out of a 2 s run.
    o.write_buffer_size = 256 << 20;
    o.max_write_buffer_number = 4;
    o.compression = rocksdb::kNoCompression;  // nobody else compresses
    // Tickers only (per-core counters): write groups and WAL syncs.
    o.statistics = rocksdb::CreateDBStatistics();
    o.statistics->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
    stats_ = o.statistics;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, dir, &db);
    if (!s.ok()) return absl::InternalError("rocksdb open: " + s.ToString());
    db_.reset(db);
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<RocksCommitter>(db_.get(), p_.sync_every != 0,
                                            p_.payload, seed);
  }

  // A write group's leader counts WRITE_DONE_BY_SELF once and its followers
  // as WRITE_DONE_BY_OTHER; the WAL is synced once per group
  // (WAL_FILE_SYNCED).
  Counters counters() const override {
    Counters c;
    const int64_t self =
        static_cast<int64_t>(stats_->getTickerCount(rocksdb::WRITE_DONE_BY_SELF));
    const int64_t other = static_cast<int64_t>(
        stats_->getTickerCount(rocksdb::WRITE_DONE_BY_OTHER));
    c.commits = self + other;
    c.groups = self;
    c.fsyncs =
        static_cast<int64_t>(stats_->getTickerCount(rocksdb::WAL_FILE_SYNCED));
    return c;
  }

  absl::Status Close() override {
    rocksdb::Status s = db_->Close();
    db_.reset();
    if (!s.ok()) return absl::InternalError("rocksdb close: " + s.ToString());
    return absl::OkStatus();
  }

  std::string version() const override {
    return absl::StrCat("rocksdb ", ROCKSDB_MAJOR, ".", ROCKSDB_MINOR, ".",
                        ROCKSDB_PATCH);
  }
  size_t commit_bytes() const override { return p_.payload + 12; }

 private:
  const PointConfig p_;
  std::shared_ptr<rocksdb::Statistics> stats_;
  std::unique_ptr<rocksdb::DB> db_;
};

// --- leveldb ----------------------------------------------------------------

class LevelCommitter : public Committer {
 public:
  LevelCommitter(leveldb::DB* db, bool sync, size_t payload, uint64_t seed)
      : db_(db), rng_{seed | 1} {
    std::mt19937_64 rng(seed);
    value_ = RandomText(payload, &rng);
    options_.sync = sync;
  }
  void Prepare() override { key_len_ = RandomKey(&rng_, key_); }
  absl::Status Commit() override {
    leveldb::Status s =
        db_->Put(options_, leveldb::Slice(key_, key_len_), value_);
    if (!s.ok()) return absl::InternalError("leveldb Put: " + s.ToString());
    return absl::OkStatus();
  }

 private:
  leveldb::DB* db_;
  leveldb::WriteOptions options_;
  FastRng rng_;
  char key_[16];
  size_t key_len_ = 0;
  std::string value_;
};

class LevelSystem : public System {
 public:
  explicit LevelSystem(const PointConfig& p) : p_(p) {}

  absl::Status Open(const std::string& dir) override {
    leveldb::Options o;
    o.create_if_missing = true;
    o.write_buffer_size = 256 << 20;
    o.compression = leveldb::kNoCompression;  // as for rocksdb
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(o, dir, &db);
    if (!s.ok()) return absl::InternalError("leveldb open: " + s.ToString());
    db_.reset(db);
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<LevelCommitter>(db_.get(), p_.sync_every != 0,
                                            p_.payload, seed);
  }

  // LevelDB groups writers too (DBImpl::BuildBatchGroup) but exposes no
  // counters for it.
  Counters counters() const override { return Counters(); }

  absl::Status Close() override {
    db_.reset();  // LevelDB has no Close(); the destructor waits for work
    return absl::OkStatus();
  }

  std::string version() const override {
    return absl::StrCat("leveldb ", leveldb::kMajorVersion, ".",
                        leveldb::kMinorVersion);
  }
  size_t commit_bytes() const override { return p_.payload + 12; }

 private:
  const PointConfig p_;
  std::unique_ptr<leveldb::DB> db_;
};

// --- naive, naive-group -----------------------------------------------------

template <typename Log>
class RawCommitter : public Committer {
 public:
  RawCommitter(Log* log, size_t bytes, uint64_t seed) : log_(log) {
    std::mt19937_64 rng(seed);
    data_ = RandomText(bytes, &rng);
  }
  absl::Status Commit() override { return log_->Commit(data_); }

 private:
  Log* log_;
  std::string data_;
};

template <typename Log>
class RawSystem : public System {
 public:
  explicit RawSystem(const PointConfig& p)
      : p_(p), bytes_(TransactionBytes(p.payload)) {}

  absl::Status Open(const std::string& dir) override {
    absl::StatusOr<std::unique_ptr<Log>> log =
        Log::Open(binlog::io::JoinPath(dir, "log"), p_.sync_every);
    if (!log.ok()) return log.status();
    log_ = std::move(*log);
    return absl::OkStatus();
  }
  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<RawCommitter<Log>>(log_.get(), bytes_, seed);
  }
  Counters counters() const override {
    const binlog_bench::BaselineStats s = log_->stats();
    Counters c;
    c.commits = static_cast<int64_t>(s.commits);
    c.groups = static_cast<int64_t>(s.groups);
    c.fsyncs = static_cast<int64_t>(s.fsyncs);
    return c;
  }
  absl::Status Close() override { return log_->Close(); }
  size_t commit_bytes() const override { return bytes_; }

 private:
  const PointConfig p_;
  const size_t bytes_;
  std::unique_ptr<Log> log_;
};

std::unique_ptr<System> MakeSystem(const PointConfig& p,
                                   uint64_t max_file_size) {
  if (p.system == "binlog") return std::make_unique<BinlogSystem>(p, max_file_size);
  if (p.system == "rocksdb") return std::make_unique<RocksSystem>(p);
  if (p.system == "leveldb") return std::make_unique<LevelSystem>(p);
  if (p.system == "naive") {
    return std::make_unique<RawSystem<binlog_bench::NaiveLog>>(p);
  }
  if (p.system == "naive-group") {
    return std::make_unique<RawSystem<binlog_bench::GroupCommitLog>>(p);
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Running one point

struct PointResult {
  double seconds = 0;
  uint64_t commits = 0;
  double tps = 0;
  double p50_us = 0;
  double p99_us = 0;
  double avg_group = -1;
  int64_t fsyncs = -1;
  double commits_per_fsync = -1;
  double reader_mb_s = 0;
  double cpu_us_per_commit = 0;
  uint64_t dropped_samples = 0;
  std::string version;
  size_t commit_bytes = 0;
};

enum Phase : int { kWarmup = 0, kMeasure = 1, kStop = 2 };

// Latencies in ns, saturating at ~4.29 s. Preallocated and touched before
// the run so the loop neither allocates nor page-faults.
struct alignas(64) ThreadSlot {
  std::vector<uint32_t> latency_ns;
  size_t samples = 0;
  uint64_t commits = 0;
  absl::Status status;
};

void CommitLoop(Committer* c, const absl::Notification* go,
                const std::atomic<int>* phase, std::atomic<bool>* failed,
                ThreadSlot* slot) {
  go->WaitForNotification();
  const size_t cap = slot->latency_ns.size();
  while (phase->load(std::memory_order_acquire) != kStop) {
    c->Prepare();
    const Clock::time_point t0 = Clock::now();
    absl::Status s = c->Commit();
    const Clock::time_point t1 = Clock::now();
    if (!s.ok()) {
      slot->status = s;
      failed->store(true);
      return;
    }
    // Counted if it completed inside the measurement window.
    if (phase->load(std::memory_order_relaxed) == kMeasure) {
      ++slot->commits;
      if (slot->samples < cap) {
        const int64_t ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0)
                .count();
        slot->latency_ns[slot->samples++] = static_cast<uint32_t>(
            std::min<int64_t>(ns, std::numeric_limits<uint32_t>::max()));
      }
    }
  }
}

double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const struct timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

// Sleeps up to `seconds`, returning early if a committer failed.
void SleepUnlessFailed(double seconds, const std::atomic<bool>& failed) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  while (!failed.load() && Clock::now() < end) {
    std::this_thread::sleep_for(std::min<Clock::duration>(
        std::chrono::milliseconds(10), end - Clock::now()));
  }
}

double PercentileUs(std::vector<uint32_t>* v, double q) {
  if (v->empty()) return 0;
  size_t k = static_cast<size_t>(q * static_cast<double>(v->size() - 1));
  std::nth_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(k), v->end());
  return static_cast<double>((*v)[k]) / 1e3;
}

absl::StatusOr<PointResult> RunPoint(const PointConfig& p,
                                     const std::string& dir, double warmup_s,
                                     double duration_s,
                                     uint64_t max_file_size) {
  std::unique_ptr<System> sys = MakeSystem(p, max_file_size);
  if (sys == nullptr) return absl::InvalidArgumentError("unknown system " + p.system);
  absl::Status s = sys->Open(dir);
  if (!s.ok()) return s;

  PointResult r;
  r.version = sys->version();
  r.commit_bytes = sys->commit_bytes();

  // Committers and latency storage, before any clock starts. The sample
  // budget covers ~4 M commits/s in total, far above what 2 cores reach.
  const size_t cap = std::max<size_t>(
      4096, static_cast<size_t>(duration_s * 4e6 / p.threads));
  std::vector<std::unique_ptr<Committer>> committers;
  std::vector<ThreadSlot> slots(static_cast<size_t>(p.threads));
  for (int i = 0; i < p.threads; ++i) {
    committers.push_back(sys->NewCommitter(
        i, 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i + 1) + p.payload));
    slots[static_cast<size_t>(i)].latency_ns.assign(cap, 0);
  }

  s = sys->StartReaders(p.readers);
  if (!s.ok()) {
    sys->Close().IgnoreError();  // reporting the reader error instead
    return s;
  }

  absl::Notification go;
  std::atomic<int> phase{kWarmup};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(p.threads));
  for (int i = 0; i < p.threads; ++i) {
    threads.emplace_back(CommitLoop, committers[static_cast<size_t>(i)].get(),
                         &go, &phase, &failed, &slots[static_cast<size_t>(i)]);
  }
  go.Notify();
  SleepUnlessFailed(warmup_s, failed);

  const Counters c0 = sys->counters();
  const uint64_t rb0 = sys->ReaderBytes();
  const double cpu0 = CpuSeconds();
  const Clock::time_point t0 = Clock::now();
  phase.store(kMeasure, std::memory_order_release);

  SleepUnlessFailed(duration_s, failed);

  phase.store(kStop, std::memory_order_release);
  const Clock::time_point t1 = Clock::now();
  const double cpu1 = CpuSeconds();
  const uint64_t rb1 = sys->ReaderBytes();
  const Counters c1 = sys->counters();

  for (std::thread& t : threads) t.join();
  absl::Status close = sys->Close();
  for (const ThreadSlot& slot : slots) {
    if (!slot.status.ok()) return slot.status;
  }
  if (!close.ok()) return close;

  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  std::vector<uint32_t> all;
  for (ThreadSlot& slot : slots) {
    r.commits += slot.commits;
    r.dropped_samples += slot.commits - slot.samples;
    all.insert(all.end(), slot.latency_ns.begin(),
               slot.latency_ns.begin() + static_cast<ptrdiff_t>(slot.samples));
    std::vector<uint32_t>().swap(slot.latency_ns);
  }
  r.tps = static_cast<double>(r.commits) / r.seconds;
  r.p50_us = PercentileUs(&all, 0.50);
  r.p99_us = PercentileUs(&all, 0.99);
  if (c0.groups >= 0 && c1.groups > c0.groups) {
    r.avg_group = static_cast<double>(c1.commits - c0.commits) /
                  static_cast<double>(c1.groups - c0.groups);
  }
  if (c0.fsyncs >= 0) r.fsyncs = c1.fsyncs - c0.fsyncs;
  if (r.fsyncs > 0) {
    r.commits_per_fsync =
        static_cast<double>(r.commits) / static_cast<double>(r.fsyncs);
  }
  r.reader_mb_s = static_cast<double>(rb1 - rb0) / r.seconds / 1e6;
  r.cpu_us_per_commit =
      r.commits > 0 ? (cpu1 - cpu0) * 1e6 / static_cast<double>(r.commits) : 0;
  return r;
}

// ---------------------------------------------------------------------------
// Output

std::string JsonLine(const PointConfig& p, const PointResult& r) {
  std::string out = absl::StrFormat("{\"system\":\"%s\"", p.system);
  if (!r.version.empty()) absl::StrAppendFormat(&out, ",\"version\":\"%s\"", r.version);
  absl::StrAppendFormat(
      &out,
      ",\"threads\":%d,\"payload\":%d,\"readers\":%d,\"sync_every\":%d,"
      "\"rep\":%d,\"tps\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"avg_group\":%.2f,\"fsyncs\":%d,\"commits_per_fsync\":%.2f,"
      "\"reader_mb_s\":%.2f,"
      "\"cpu_us_per_commit\":%.2f,\"commits\":%d,\"commit_bytes\":%d,"
      "\"seconds\":%.3f}",
      p.threads, p.payload, p.readers, p.sync_every, p.rep, r.tps, r.p50_us,
      r.p99_us, r.avg_group, r.fsyncs, r.commits_per_fsync, r.reader_mb_s,
      r.cpu_us_per_commit, r.commits, r.commit_bytes, r.seconds);
  return out;
}

constexpr const char* kTableHeader =
    "| system | threads | payload | readers | sync_every | tps | p50 us | "
    "p99 us | avg group | fsyncs | commits/fsync | reader MB/s | "
    "CPU us/commit |\n"
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";

std::string TableRow(const PointConfig& p, const PointResult& r) {
  auto or_na = [](double v, const char* fmt) {
    return v < 0 ? std::string("n/a") : absl::StrFormat(fmt, v);
  };
  std::string name = p.system;
  if (!r.version.empty()) name = absl::StrCat(p.system, " (", r.version, ")");
  return absl::StrFormat(
      "| %s | %d | %d | %d | %d | %.0f | %.1f | %.1f | %s | %s | %s | %.1f | "
      "%.1f |",
      name, p.threads, p.payload, p.readers, p.sync_every, r.tps, r.p50_us,
      r.p99_us, or_na(r.avg_group, "%.2f"),
      r.fsyncs < 0 ? std::string("n/a") : absl::StrCat(r.fsyncs),
      or_na(r.commits_per_fsync, "%.2f"), r.reader_mb_s,
      r.cpu_us_per_commit);
}

// ---------------------------------------------------------------------------
// Environment (stderr)

std::string ReadFirstMatch(const std::string& path, absl::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::string_view(line).substr(0, key.size()) == key) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t b = line.find_first_not_of(" \t", colon + 1);
        return b == std::string::npos ? "" : line.substr(b);
      }
    }
  }
  return "unknown";
}

std::string FsTypeName(int64_t magic) {
  switch (static_cast<uint64_t>(magic)) {
    case 0xEF53: return "ext2/3/4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0xF2F52010: return "f2fs";
    case 0x6969: return "nfs";
    case 0x65735546: return "fuse";
    case 0x858458F6: return "ramfs";
    default: return absl::StrFormat("unknown (magic 0x%x)", magic);
  }
}

// The mount holding `path` (longest mount-point prefix in /proc/self/mounts).
std::string MountOf(const std::string& path) {
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) real = path;
  std::ifstream in("/proc/self/mounts");
  std::string dev, mnt, type, best = "unknown";
  size_t best_len = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 4) continue;
    const std::string& m = f[1];
    const bool prefix = real.compare(0, m.size(), m) == 0 &&
                        (m == "/" || real.size() == m.size() || real[m.size()] == '/');
    if (prefix && m.size() >= best_len) {
      best_len = m.size();
      best = absl::StrCat(f[0], " on ", m, " type ", f[2], " (", f[3], ")");
    }
  }
  return best;
}

void PrintEnvironment(const std::string& dir) {
  struct utsname u;
  ::uname(&u);
  std::fprintf(stderr, "commit_bench: %s\n",
               absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(),
                                absl::UTCTimeZone())
                   .c_str());
  std::fprintf(stderr, "  kernel:   %s %s %s %s\n", u.sysname, u.release,
               u.version, u.machine);
  std::fprintf(stderr, "  cpu:      %s, %u hardware threads\n",
               ReadFirstMatch("/proc/cpuinfo", "model name").c_str(),
               std::thread::hardware_concurrency());
  struct statfs sf;
  if (::statfs(dir.c_str(), &sf) == 0) {
    const std::string type = FsTypeName(static_cast<int64_t>(sf.f_type));
    std::fprintf(stderr, "  dir:      %s, file system %s\n", dir.c_str(),
                 type.c_str());
    if (type == "tmpfs" || type == "ramfs") {
      std::fprintf(stderr,
                   "  WARNING: %s keeps data in memory; fdatasync is a no-op "
                   "and durable numbers mean nothing\n",
                   type.c_str());
    }
  } else {
    std::fprintf(stderr, "  dir:      %s, statfs failed: %s\n", dir.c_str(),
                 std::strerror(errno));
  }
  std::fprintf(stderr, "  mount:    %s\n", MountOf(dir).c_str());
  std::fprintf(stderr, "  peers:    rocksdb %d.%d.%d, leveldb %d.%d\n",
               ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH,
               leveldb::kMajorVersion, leveldb::kMinorVersion);
#if defined(__clang__)
  std::fprintf(stderr, "  compiler: clang %s\n", __VERSION__);
#else
  std::fprintf(stderr, "  compiler: gcc %s\n", __VERSION__);
#endif
#if defined(NDEBUG)
  const char* asserts = "off (NDEBUG)";
#else
  const char* asserts = "ON";
#endif
#if defined(__OPTIMIZE__)
  const char* opt = "optimized";
#else
  const char* opt = "NOT optimized";
#endif
  std::fprintf(stderr, "  build:    %s, assertions %s\n", opt, asserts);
#if !defined(NDEBUG) || !defined(__OPTIMIZE__)
  std::fprintf(stderr,
               "  WARNING: built without NDEBUG or without optimization; "
               "numbers are not representative (use -c opt)\n");
#endif
}

// ---------------------------------------------------------------------------
// Flags

absl::StatusOr<std::vector<int>> ParseInts(const char* name,
                                           const std::vector<std::string>& in,
                                           int lo, int hi) {
  std::vector<int> out;
  for (const std::string& s : in) {
    int v;
    if (!absl::SimpleAtoi(s, &v) || v < lo || v > hi) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: '%s' is not an integer in %d..%d", name, s, lo, hi));
    }
    out.push_back(v);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " is empty"));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "commit_bench [--systems=binlog,rocksdb,leveldb,naive,naive-group] "
      "[--threads=1,4,16,64,256] [--payload=256,4096] [--sync_every=1] "
      "[--readers=0,1,8,64] [--duration_s=2] [--dir=PATH] [--keep] "
      "[--format=jsonl|table] [--repetitions=1] [--max_file_size=BYTES]\n"
      "Durable commit throughput and latency of the binlog and its peers.");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::fprintf(stderr, "commit_bench: unexpected argument '%s'\n", rest[1]);
    return 2;
  }

  const std::vector<std::string> systems = absl::GetFlag(FLAGS_systems);
  for (const std::string& s : systems) {
    if (s != "binlog" && s != "rocksdb" && s != "leveldb" && s != "naive" &&
        s != "naive-group") {
      std::fprintf(stderr, "commit_bench: unknown system '%s'\n", s.c_str());
      return 2;
    }
  }
  auto threads = ParseInts("threads", absl::GetFlag(FLAGS_threads), 1, 4096);
  auto payloads = ParseInts("payload", absl::GetFlag(FLAGS_payload), 16, 64 << 20);
  auto syncs = ParseInts("sync_every", absl::GetFlag(FLAGS_sync_every), 0, 1 << 20);
  auto readers = ParseInts("readers", absl::GetFlag(FLAGS_readers), 0, 1024);
  for (const auto* v : {&threads, &payloads, &syncs, &readers}) {
    if (!v->ok()) {
      std::fprintf(stderr, "commit_bench: %s\n", v->status().ToString().c_str());
      return 2;
    }
  }
  const double duration_s = absl::GetFlag(FLAGS_duration_s);
  const double warmup_s = absl::GetFlag(FLAGS_warmup_s);
  const std::string format = absl::GetFlag(FLAGS_format);
  const int repetitions = absl::GetFlag(FLAGS_repetitions);
  const bool keep = absl::GetFlag(FLAGS_keep);
  const uint64_t max_file_size = absl::GetFlag(FLAGS_max_file_size);
  if (!(duration_s > 0) || !(warmup_s >= 0) || repetitions < 1 ||
      (format != "jsonl" && format != "table")) {
    std::fprintf(stderr,
                 "commit_bench: need --duration_s > 0, --warmup_s >= 0, "
                 "--repetitions >= 1, --format=jsonl|table\n");
    return 2;
  }

  // The base directory: --dir, or a fresh one under /tmp.
  binlog::io::FileSystem* fs = binlog::io::FileSystem::Default();
  std::string base = absl::GetFlag(FLAGS_dir);
  bool created_base = false;
  if (base.empty()) {
    base = absl::StrFormat("/tmp/commit_bench-%d-%d", ::getpid(),
                           absl::ToUnixNanos(absl::Now()));
  }
  {
    absl::StatusOr<bool> exists = fs->Exists(base);
    if (!exists.ok()) {
      std::fprintf(stderr, "commit_bench: %s\n", exists.status().ToString().c_str());
      return 1;
    }
    if (!*exists) {
      absl::Status s = fs->CreateDirectory(base);
      if (!s.ok()) {
        std::fprintf(stderr, "commit_bench: %s\n", s.ToString().c_str());
        return 1;
      }
      created_base = true;
    }
  }
  PrintEnvironment(base);

  // The points, in run (and output) order. The systems are interleaved at
  // each thread count, and repetitions are whole passes, so that the drift
  // of a shared disk over the run spreads over every system instead of
  // favouring whichever ran in a quiet minute.
  for (const std::string& system : systems) {
    if ((system == "rocksdb" || system == "leveldb") &&
        std::any_of(syncs->begin(), syncs->end(), [](int n) { return n > 1; })) {
      std::fprintf(stderr,
                   "commit_bench: %s has no sync-every-N mode; skipping its "
                   "sync_every > 1 points\n",
                   system.c_str());
    }
  }
  std::vector<PointConfig> points;
  for (int rep = 1; rep <= repetitions; ++rep) {
    for (int payload : *payloads) {
      for (int sync : *syncs) {
        for (int t : *threads) {
          for (const std::string& system : systems) {
            if ((system == "rocksdb" || system == "leveldb") && sync > 1) {
              continue;
            }
            const std::vector<int> rs =
                system == "binlog" ? *readers : std::vector<int>{0};
            for (int r : rs) {
              PointConfig p;
              p.system = system;
              p.threads = t;
              p.payload = static_cast<size_t>(payload);
              p.sync_every = static_cast<uint32_t>(sync);
              p.readers = r;
              p.rep = rep;
              points.push_back(p);
            }
          }
        }
      }
    }
  }
  std::fprintf(stderr, "  points:   %zu x (%.1f s warm-up + %.1f s)\n",
               points.size(), warmup_s, duration_s);

  if (format == "table") std::printf("%s\n", kTableHeader);
  std::fflush(stdout);
  int failures = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const PointConfig& p = points[i];
    const std::string dir = binlog::io::JoinPath(
        base, absl::StrFormat("%s-t%d-p%d-r%d-s%d-rep%d", p.system, p.threads,
                              p.payload, p.readers, p.sync_every, p.rep));
    std::fprintf(stderr, "[%zu/%zu] %s threads=%d payload=%zu readers=%d "
                 "sync_every=%u rep=%d\n",
                 i + 1, points.size(), p.system.c_str(), p.threads, p.payload,
                 p.readers, p.sync_every, p.rep);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // a leftover from a --keep run
    absl::Status s = fs->CreateDirectory(dir);
    absl::StatusOr<PointResult> r =
        s.ok() ? RunPoint(p, dir, warmup_s, duration_s, max_file_size)
               : absl::StatusOr<PointResult>(s);
    if (!keep) {
      std::filesystem::remove_all(dir, ec);
      if (ec) {
        std::fprintf(stderr, "commit_bench: removing %s: %s\n", dir.c_str(),
                     ec.message().c_str());
      }
    }
    if (!r.ok()) {
      std::fprintf(stderr, "commit_bench: %s failed: %s\n", dir.c_str(),
                   r.status().ToString().c_str());
      ++failures;
      continue;
    }
    if (r->dropped_samples > 0) {
      std::fprintf(stderr,
                   "  note: %" PRIu64 " latency samples dropped (buffer full)\n",
                   r->dropped_samples);
    }
    std::printf("%s\n", format == "table" ? TableRow(p, *r).c_str()
                                          : JsonLine(p, *r).c_str());
    std::fflush(stdout);
  }

  if (keep) {
    std::fprintf(stderr, "commit_bench: kept the data in %s\n", base.c_str());
  } else if (created_base) {
    std::error_code ec;
    std::filesystem::remove(base, ec);  // empty by now
  }
  return failures == 0 ? 0 : 1;
}
