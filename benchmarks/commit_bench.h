// File: benchmarks/commit_bench.h
//
// commit_bench's parts (see commit_bench.cc for what it measures): the
// per-point configuration and result, the System adapter interface each
// compared system implements (commit_bench_systems.cc), reader-lag
// bookkeeping, and the output (commit_bench_output.cc). The driver (flags,
// threads, measurement window) is commit_bench.cc.

#ifndef BINLOG_BENCHMARKS_COMMIT_BENCH_H_
#define BINLOG_BENCHMARKS_COMMIT_BENCH_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <atomic>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace commit_bench {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kServerId = 1;

// --rows: "N" or "MIN-MAX", 1..1000.
inline bool ParseRows(const std::string& s, int* lo, int* hi) {
  std::vector<std::string> parts = absl::StrSplit(s, '-');
  if (parts.empty() || parts.size() > 2 || !absl::SimpleAtoi(parts[0], lo)) {
    return false;
  }
  if (parts.size() == 1) {
    *hi = *lo;
  } else if (!absl::SimpleAtoi(parts[1], hi)) {
    return false;
  }
  return *lo >= 1 && *hi >= *lo && *hi <= 1000;
}

// ---------------------------------------------------------------------------
// Systems

// Cumulative counters of a system; -1 when it cannot tell.
struct Counters {
  int64_t commits = -1;
  int64_t groups = -1;
  int64_t fsyncs = -1;
  int64_t fsync_micros = -1;  // time spent in fdatasync
  int64_t bytes = -1;         // bytes written (naive*: the tail offset)
  // binlog only.
  int64_t rotations = -1;
  int64_t files_preallocated = -1;
  int64_t rotations_from_spare = -1;
  int64_t rotations_waited = -1;
  // binlog with --ack=semisync only.
  int64_t ack_waits = -1;
  int64_t ack_timeouts = -1;
  int64_t ack_async_waits = -1;
};

// One committer thread's state. Prepare() is the per-commit work done before
// the latency timer starts (building the transaction, drawing a key); it is
// inside the throughput loop.
class Committer {
 public:
  virtual ~Committer() = default;
  virtual void Prepare() {}
  virtual absl::Status Commit() = 0;
  // After a successful Commit(): whether it was this thread's first commit
  // in a new log file (binlog only; such commits wait out a rotation).
  virtual bool NewFile() const { return false; }
};

struct PointConfig {
  std::string system;
  int threads = 1;
  size_t payload = 256;
  uint32_t sync_every = 1;
  int readers = 0;
  int rep = 1;
  std::string prealloc = "zerofill";  // none, fallocate, zerofill; n/a
  int reader_wake_us = 1000;          // binlog only
  int reader_wakeups_per_s = 8000;    // binlog only
  std::string reader_api = "decoded"; // binlog readers: decoded, batch
  std::string ack = "none";           // binlog only: none, semisync
  int ack_delay_us = 100;             // semisync
  int ack_timeout_ms = 10000;         // semisync
  std::string workload = "random";    // binlog only: random, sysbench, wide
  std::string compression = "none";   // binlog only: none, zstd, lz4
  std::string gtid = "anonymous";     // binlog only: anonymous, assigned
  std::string flavor = "mysql";       // binlog only: mysql, mariadb
  std::string dependency = "default"; // binlog only: default, commit_order, writeset
  uint64_t zero_ahead = 8 << 20;      // binlog only: Options::zero_ahead
  int64_t reader_ring_bytes = -1;     // binlog: Options::reader_ring_bytes (-1: default)
  std::string encryption = "off";     // binlog only: off, on
  std::string background_rotation = "on";  // binlog only: on, off
};

// The directory of a point under --dir: every key that can vary between
// the points of one run names it, so that with --keep no point deletes
// (or reuses) another's files. A field added to PointConfig is added here
// too; tests/benchmarks/commit_bench_test.cc changes each field in turn.
inline std::string PointDirName(const PointConfig& p) {
  std::string name = absl::StrFormat(
      "%s-t%d-p%d-r%d%s-w%d-%d-s%d-%s-%s-%s-%s-%s-enc%s-%s-br%s-z%d-rep%d",
      p.system + (p.compression == "none" ? std::string()
                                          : "-" + p.compression),
      p.threads, p.payload, p.readers,
      p.readers > 0 ? "-" + p.reader_api : std::string(), p.reader_wake_us,
      p.reader_wakeups_per_s, p.sync_every,
      p.prealloc == "n/a" ? "na" : p.prealloc, p.ack, p.workload, p.gtid,
      p.flavor, p.encryption, p.dependency, p.background_rotation,
      p.zero_ahead, p.rep);
  if (p.ack == "semisync") {
    absl::StrAppendFormat(&name, "-ad%d-at%d", p.ack_delay_us,
                          p.ack_timeout_ms);
  }
  return name;
}

// How the run treats every point (from the flags).
struct RunConfig {
  uint64_t max_file_size = 1ull << 30;
  // binlog: --rows (workloads other than random), --compression_level,
  // --compression_threshold.
  int min_rows = 1;
  int max_rows = 20;
  int compression_level = 0;
  size_t compression_threshold = 256;
  double target_tps = 0;  // 0: unpaced
  bool prefill = false;
};

// Bytes naive and naive-group prepare in their one file.
inline uint64_t RawPreallocBytes(uint64_t max_file_size) {
  return std::min<uint64_t>(max_file_size + max_file_size / 8, 512ull << 20);
}

// ---------------------------------------------------------------------------
// Reader lag

// Monotonic nanoseconds (steady_clock, CLOCK_MONOTONIC on Linux).
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

// Log-linear histogram of microseconds: 1 us buckets below 1024 us, then 64
// buckets per power of two (values within 1.6 %). Fixed size: Add() never
// allocates.
class LagHistogram {
 public:
  LagHistogram() : counts_(kBuckets, 0) {}
  void Add(uint64_t us) {
    ++counts_[static_cast<size_t>(Bucket(us))];
    ++n_;
    max_ = std::max(max_, us);
  }
  void Merge(const LagHistogram& o) {
    for (int i = 0; i < kBuckets; ++i) {
      counts_[static_cast<size_t>(i)] += o.counts_[static_cast<size_t>(i)];
    }
    n_ += o.n_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t count() const { return n_; }
  uint64_t max() const { return max_; }
  // The value at quantile q (middle of its bucket); -1 when empty.
  double Percentile(double q) const {
    if (n_ == 0) return -1;
    const uint64_t rank = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(n_))));
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[static_cast<size_t>(b)];
      if (seen >= rank) {
        const uint64_t lo = Lower(b);
        const uint64_t width = b < kLinear ? 1 : Lower(b + 1) - lo;
        return static_cast<double>(lo) + static_cast<double>(width - 1) / 2;
      }
    }
    return static_cast<double>(max_);
  }

 private:
  static constexpr int kLinear = 1024;
  static constexpr int kSub = 64;
  static constexpr int kBuckets = kLinear + (32 - 10) * kSub + 1;
  static int Bucket(uint64_t us) {
    if (us < static_cast<uint64_t>(kLinear)) return static_cast<int>(us);
    us = std::min<uint64_t>(us, (1ull << 32) - 1);
    const int msb = 63 - __builtin_clzll(us);  // 10..31
    const int sub = static_cast<int>((us >> (msb - 6)) & (kSub - 1));
    return kLinear + (msb - 10) * kSub + sub;
  }
  static uint64_t Lower(int b) {
    if (b < kLinear) return static_cast<uint64_t>(b);
    const int k = b - kLinear;
    const int msb = 10 + k / kSub;
    return (1ull << msb) + (static_cast<uint64_t>(k % kSub) << (msb - 6));
  }
  std::vector<uint64_t> counts_;
  uint64_t n_ = 0;
  uint64_t max_ = 0;
};

// When each commit group was published, for the readers to compare with
// when they read its last event. The ordered-commit callback (which runs
// right after the group is published) writes slot group_seq % size with a
// seqlock; readers look up the group they expect next. Preallocated and
// zeroed before the run, so the writer pays one clock read and four
// stores per group.
class GroupMarks {
 public:
  static constexpr uint64_t kSize = 1 << 18;  // groups a reader may lag

  GroupMarks() : marks_(new Mark[kSize]()) {}

  // Writer (one thread at a time, in group order).
  void Record(uint64_t seq, uint64_t key, int64_t t_ns) {
    Mark& m = marks_[seq & (kSize - 1)];
    m.seq.store(0, std::memory_order_relaxed);  // "being written"
    std::atomic_thread_fence(std::memory_order_release);
    m.key.store(key, std::memory_order_relaxed);
    m.t_ns.store(t_ns, std::memory_order_relaxed);
    m.seq.store(seq, std::memory_order_release);
    last_seq_.store(seq, std::memory_order_release);
  }
  uint64_t last_seq() const { return last_seq_.load(std::memory_order_acquire); }

  // Reader: 0 and (key, t) if group `seq` is recorded; -1 if not yet (or
  // being written); +1 if the slot already holds a later group.
  int Load(uint64_t seq, uint64_t* key, int64_t* t_ns) const {
    const Mark& m = marks_[seq & (kSize - 1)];
    const uint64_t s1 = m.seq.load(std::memory_order_acquire);
    if (s1 != seq) return s1 > seq ? 1 : -1;
    *key = m.key.load(std::memory_order_relaxed);
    *t_ns = m.t_ns.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint64_t s2 = m.seq.load(std::memory_order_relaxed);
    if (s2 == seq) return 0;
    return s2 > seq ? 1 : -1;
  }

  // (file, end) in one comparable word; offsets stay below 2^32.
  static uint64_t Key(uint64_t file, uint64_t end) { return (file << 32) | end; }

 private:
  struct alignas(32) Mark {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint64_t> key{0};
    std::atomic<int64_t> t_ns{0};
  };
  std::unique_ptr<Mark[]> marks_;
  std::atomic<uint64_t> last_seq_{0};
};

// One reader's lag samples (reader_lag_*): one per group, the time from
// the group's record in GroupMarks to the reader's first read at or past
// the group's end. Fed the end of every event (Reader::Next) or batch
// (Reader::NextBatch) the reader reads; a batch that covers several
// groups gives a sample for each of them, not only the last. A read that
// comes before the group's record (the callback runs just after the
// publish) is kept pending, and gives the group a sample of 0 or more
// once the record is seen. Not thread-safe: one per reader thread.
class ReaderLagSampler {
 public:
  // `now_ns`: the clock (a test's own), read only when a read gives a
  // sample or waits for its group's record: a decoded reader reports
  // every event, and a clock read per event would be most of its cost.
  explicit ReaderLagSampler(int64_t (*now_ns)() = &NowNs) : now_ns_(now_ns) {
    pending_.reserve(4096);
  }

  // The first group the reader will read the end of (GroupMarks seq).
  void StartAt(uint64_t seq) { next_seq_ = seq; }

  // The reader has just read up to `key` (GroupMarks::Key); `txn_end`:
  // `key` ends a transaction (only such reads can end a group).
  // `measuring` false: reads are followed, no sample is taken.
  void Observe(const GroupMarks& marks, uint64_t key, bool txn_end,
               bool measuring) {
    for (;;) {
      uint64_t gkey;
      int64_t t;
      const int r = marks.Load(next_seq_, &gkey, &t);
      if (r > 0) {  // more than kSize groups behind: stop measuring
        overrun_ = true;
        return;
      }
      if (r < 0) {  // its group is not recorded yet
        if (txn_end && pending_.size() < pending_.capacity()) {
          pending_.push_back({key, now_ns_()});
        }
        return;
      }
      if (gkey > key) return;  // inside the group
      Resolve(gkey, t, measuring);
      ++next_seq_;
      if (gkey == key) return;
    }
  }

  // At the tail: groups recorded after the reader read their ends.
  void ResolveAll(const GroupMarks& marks, bool measuring) {
    while (!pending_.empty() && !overrun_) {
      uint64_t gkey;
      int64_t t;
      const int r = marks.Load(next_seq_, &gkey, &t);
      if (r != 0 || gkey > pending_.back().key) return;
      Resolve(gkey, t, measuring);
      ++next_seq_;
    }
  }

  const LagHistogram& lag() const { return lag_; }
  bool overrun() const { return overrun_; }

 private:
  // Group (key, t), whose end the reader has read: by the first pending
  // read at or past its end if there is one (a read before the record),
  // else now. Drops the pending reads before its end, and the one at it.
  void Resolve(uint64_t key, int64_t t_ns, bool measuring) {
    size_t i = 0;
    while (i < pending_.size() && pending_[i].key < key) ++i;
    const bool read_before = i < pending_.size();
    const int64_t read_ns =
        read_before ? pending_[i].t_ns : (measuring ? now_ns_() : 0);
    if (read_before && pending_[i].key == key) ++i;
    if (measuring) {
      lag_.Add(static_cast<uint64_t>(std::max<int64_t>(0, read_ns - t_ns)) /
               1000);
    }
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<ptrdiff_t>(i));
  }

  struct Seen {
    uint64_t key;
    int64_t t_ns;
  };
  int64_t (*const now_ns_)();
  uint64_t next_seq_ = 1;  // the next group whose end the reader looks for
  bool overrun_ = false;   // fell GroupMarks::kSize groups behind
  std::vector<Seen> pending_;  // reads before their group's record
  LagHistogram lag_;
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
  // CPU time used so far by all reader threads, in nanoseconds.
  virtual uint64_t ReaderCpuNs() const { return 0; }
  // The measured window starts (true) or ends (false).
  virtual void SetMeasuring(bool) {}
  // Adds the readers' lag samples of the window; returns the number of
  // readers that fell more than GroupMarks::kSize groups behind.
  virtual uint64_t ReaderLag(LagHistogram*) const { return 0; }
  // naive, naive-group: bytes of their file prepared at Open (0: none).
  virtual uint64_t prealloc_bytes() const { return 0; }
  // Stops the readers (if any) and closes the system.
  virtual absl::Status Close() = 0;
  virtual std::string version() const { return ""; }
  virtual size_t commit_bytes() const = 0;
  // binlog, after the run: bytes of the transactions as built / as written
  // (*ratio) and per commit as built (*built); untouched when unknown.
  virtual void CompressionStats(double* /*ratio*/, double* /*built*/) const {}
};

// --- binlog -----------------------------------------------------------------

std::unique_ptr<System> MakeSystem(const PointConfig& p, const RunConfig& run);

// ---------------------------------------------------------------------------
// Running one point

struct PointResult {
  double seconds = 0;
  uint64_t commits = 0;
  double tps = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  // binlog: latency of each thread's first commit in a new file (these wait
  // out the rotation); -1 when no commit of the window crossed a file.
  double new_file_p50_us = -1;
  double new_file_max_us = -1;
  double avg_group = -1;
  int64_t fsyncs = -1;
  double commits_per_fsync = -1;
  double reader_mb_s = 0;
  double reader_cpu_ns_per_txn = -1;  // readers > 0
  double target_tps = 0;              // --target_tps (0: unpaced)
  double cpu_us_per_commit = 0;
  double fsync_us = -1;  // mean fdatasync time (-1: not available)
  // Context switches of the process (all threads) per commit.
  double ctx_switches_per_commit = 0;
  double invol_ctx_switches_per_commit = 0;
  // Readers (binlog with readers > 0): publication to read, per group and
  // reader; -1 when there are no samples.
  double reader_lag_p50_us = -1;
  double reader_lag_p99_us = -1;
  double reader_lag_max_us = -1;
  uint64_t reader_lag_samples = 0;
  uint64_t reader_lag_overruns = 0;
  // binlog: counter deltas over the window (-1: not available).
  int64_t rotations = -1;
  int64_t files_preallocated = -1;
  int64_t rotations_from_spare = -1;
  int64_t rotations_waited = -1;
  int64_t ack_waits = -1;        // semisync: WaitForAck calls (one per group)
  int64_t ack_timeouts = -1;     // semisync: waits that timed out
  int64_t ack_async_waits = -1;  // semisync: waits skipped in async mode
  // naive*, prepared file: share of the window's bytes written past it.
  double past_prealloc_frac = -1;
  double loadavg_1m = -1;  // at the end of the window
  uint64_t dropped_samples = 0;
  std::string version;
  size_t commit_bytes = 0;
  double ratio = 1.0;  // binlog: bytes as built / as written
};

// Output (commit_bench_output.cc).
std::string JsonLine(const PointConfig& p, const PointResult& r);
std::string TableRow(const PointConfig& p, const PointResult& r);
extern const char* const kTableHeader;
// The machine, the file system of `dir` and the build (stderr).
void PrintEnvironment(const std::string& dir);

}  // namespace commit_bench

#endif  // BINLOG_BENCHMARKS_COMMIT_BENCH_H_
