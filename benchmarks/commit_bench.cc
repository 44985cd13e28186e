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
//   p50_us, p99_us, p999_us, max_us
//                      latency of those commits (the commit call only)
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
//   prealloc           none, fallocate, zerofill (n/a for rocksdb, leveldb)
//   fsync_us           mean time of one fdatasync (binlog, naive*)
//   ctx_switches_per_commit, invol_ctx_switches_per_commit
//                      process context switches (getrusage ru_nvcsw +
//                      ru_nivcsw, all threads) / commits, and the
//                      involuntary part
//   loadavg_1m         1-minute load average at the end of the window
//   binlog only: reader_wake_us (Options::reader_wake_coalesce_us), the
//   window's deltas of rotations, files_preallocated, rotations_from_spare,
//   rotations_waited, and new_file_p50_us/new_file_max_us: the latency of
//   each committer's first commit in a new file (those wait out the
//   rotation; -1 without rotation)
//   with readers: reader_lag_p50_us, reader_lag_p99_us, reader_lag_max_us,
//                      reader_lag_samples, reader_lag_overruns: per group and
//                      reader, the time from the group's publication (taken
//                      in Options::on_group_commit, which runs right after
//                      the publish) to the reader reading the group's last
//                      event
//   naive*, prealloc != none: past_prealloc_frac, the share of the window's
//                      bytes written past the prepared size
//
// Systems:
//   binlog       binlog::Binlog with default options except max_file_size,
//                preallocate and reader_wake_coalesce_us (from the flags).
//                Each commit rebuilds its thread's TransactionBuffer
//                (Anonymous_gtid, Query BEGIN, Rows_query of `payload` body
//                bytes, Xid), as a server does per transaction, then calls
//                Commit(). With readers, an on_group_commit callback records
//                the publication time of each group (for the reader lag).
//   rocksdb      DB::Put(random 8-16 byte key, payload value), WAL synced per
//                write group (WriteOptions::sync).
//   leveldb      DB::Put, same key/value, WriteOptions::sync.
//   naive        mutex + pwrite + fdatasync per commit (baselines.h).
//   naive-group  textbook leader/follower group commit (baselines.h).
// naive and naive-group write the same number of bytes per commit as the
// binlog transaction of that payload (commit_bytes), into one file prepared
// per --prealloc: min(max_file_size * 9/8, 512 MiB) bytes fallocate'd or
// zero-filled and fdatasync'ed before the clock starts (none: a plain
// growing file).
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
// Semi-sync (--ack=none,semisync; binlog only): with semisync the log's
// ordered-commit callback waits, once per commit group, until a simulated
// replica acknowledged the group's last position (sync/ack_tracker.h,
// AFTER_SYNC). The replica is one thread that tails the log with a
// Binlog::NewReader (Options::reader_wake_coalesce_us = 0, so it is woken
// for every group), and after each batch of events it read sleeps
// --ack_delay_us (network round trip + relay-log write) and acknowledges
// the end of the batch. A wait times out after --ack_timeout_ms and then
// the tracker goes async until the replica catches up, as
// rpl_semi_sync_master_timeout does; ack_timeouts and ack_async_waits
// count that in the output (0 in a healthy run).
//
// Transaction identity (binlog only): --gtid=anonymous,assigned, one point
// each. anonymous: the committer writes an Anonymous_gtid event with its
// own clocks (5.7 layout, AppendAnonymousGtid); assigned: a CommitGtid of
// kind kAutomatic, the commit parent captured when the transaction is
// built (its "prepare"), identity assigned by the log in commit order.
// JSON key "gtid". Only with --workload=random.
//
// File flavor (binlog only): --flavor=mysql,mariadb (Options::flavor), one
// point each, combined with --gtid; JSON key "flavor". mariadb transactions
// are MariaDB's: a MariaDB Gtid event in place of BEGIN, the Rows_query
// event, Xid. With anonymous the committer writes that Gtid event itself
// (its own seq_no, 19-byte body, as a caller-supplied identity); with
// assigned it appends AppendMariaCommitGtid (kAutomatic) and the log
// assigns seq_no and commit_id in commit order. Only with --workload=random.
//
// Transaction content and compression (binlog only): --workload=random
// (default: the Rows_query transaction above) or sysbench / wide (realistic
// row events, benchmarks/workload.h, --rows per transaction; --payload is
// unused for them), and --compression=none,zstd,lz4 (Options::compression,
// one point per codec). JSON lines gain workload, compression and ratio
// (bytes of the transactions as built / as written); for sysbench and wide
// commit_bytes is the average transaction as built.
//
// Example:
//   bazel run //benchmarks:commit_bench -- --systems=binlog,naive-group
//       --threads=1,16 --payload=256 --readers=0 --duration_s=2
// (one command line).

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
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
#include "benchmarks/workload.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "io/codec.h"
#include "io/file_system.h"
#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/version.h"
#include "sync/ack_tracker.h"

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
          "binlog Options::max_file_size; naive and naive-group prepare "
          "min(max_file_size * 9/8, 512 MiB) bytes of their file");
ABSL_FLAG(std::vector<std::string>, prealloc,
          std::vector<std::string>({"zerofill"}),
          "file preparation, none, fallocate or zerofill: binlog "
          "Options::preallocate; naive and naive-group prepare their one "
          "file the same way before the clock starts (rocksdb and leveldb "
          "run once, prealloc n/a)");
ABSL_FLAG(bool, prefill, false,
          "binlog: before the warm-up, fill the first file (which Open only "
          "fallocates) past half with 1 MiB transactions, wait for the "
          "preallocator's spare, Rotate() onto it and wait for the next "
          "spare, so the measured commits go to files the preallocator made");
ABSL_FLAG(std::vector<std::string>, reader_wake_us,
          std::vector<std::string>({"1000"}),
          "binlog Options::reader_wake_coalesce_us; points with readers run "
          "once per value, points without readers use the first value");
ABSL_FLAG(std::vector<std::string>, ack, std::vector<std::string>({"none"}),
          "binlog replication acknowledgement: none, semisync (a simulated "
          "replica tails the log and acknowledges; each commit group waits "
          "for it in the ordered-commit callback)");
ABSL_FLAG(int, ack_delay_us, 100,
          "semisync: the simulated replica's delay before each ack, us");
ABSL_FLAG(int, ack_timeout_ms, 10000,
          "semisync: wait timeout; after it the tracker is async until the "
          "replica catches up (rpl_semi_sync_master_timeout)");
ABSL_FLAG(std::string, workload, "random",
          "binlog transactions: random (BEGIN + Rows_query of --payload "
          "random bytes), sysbench or wide (row events, "
          "benchmarks/workload.h; --payload unused)");
ABSL_FLAG(std::string, rows, "1-20",
          "rows per transaction for --workload=sysbench|wide: N or MIN-MAX");
ABSL_FLAG(std::vector<std::string>, gtid, {"anonymous"},
          "binlog transaction identity, one point each: anonymous (the "
          "committer's Anonymous_gtid), assigned (CommitGtid, the log assigns "
          "GTIDs and clocks in commit order)");
ABSL_FLAG(std::vector<std::string>, flavor, {"mysql"},
          "binlog Options::flavor, one point each: mysql, mariadb (MariaDB "
          "10.11 files and transactions; --workload=random only)");
ABSL_FLAG(std::vector<std::string>, compression,
          std::vector<std::string>({"none"}),
          "binlog Options::compression, one point each: none, zstd, lz4");
ABSL_FLAG(int, compression_level, 0,
          "binlog Options::compression_level (0: the codec's default)");
ABSL_FLAG(uint64_t, compression_threshold, 256,
          "binlog Options::compression_threshold (bytes)");
ABSL_FLAG(std::vector<std::string>, readers_at_threads,
          std::vector<std::string>(),
          "run the binlog points with readers > 0 only at these thread "
          "counts (default: at every thread count)");

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

// The binlog transaction a committer builds: Anonymous_gtid (or, with
// `assigned`, a CommitGtid the log fills), Query BEGIN, Rows_query whose
// body is a length byte plus `text`, Xid.
void BuildTransaction(binlog::TransactionBuffer* txn, uint32_t thread,
                      uint64_t seq, absl::string_view text,
                      bool assigned = false, bool mariadb = false) {
  const uint32_t now = static_cast<uint32_t>(::time(nullptr));
  txn->Clear();
  if (mariadb && assigned) {
    txn->AppendMariaCommitGtid(now, kServerId, binlog::CommitGtid());
  } else if (mariadb) {
    // The caller's own MariaDB Gtid event: seq_no, domain 0,
    // FL_TRANSACTIONAL | FL_ALLOW_PARALLEL, 6 bytes of padding.
    char* g = txn->AppendEvent(binlog::kMariaGtidEvent, kServerId, now,
                               binlog::kFlagSuppressUse, 19);
    std::memset(g, 0, 19);
    binlog::StoreLe64(g, seq);
    g[12] = 0x0C;
  } else if (assigned) {
    txn->AppendCommitGtid(now, kServerId, binlog::CommitGtid());
  } else {
    binlog::AppendAnonymousGtid(txn, now, kServerId, /*last_committed=*/0,
                                static_cast<int64_t>(seq));
  }
  // MariaDB: the Gtid event takes the place of BEGIN.
  if (!mariadb) binlog::AppendQuery(txn, now, kServerId, thread, "", "BEGIN");
  // MySQL marks Rows_query ignorable; the length byte is stored mod 256.
  char* body = txn->AppendEvent(binlog::kRowsQueryEvent, kServerId, now,
                                binlog::kFlagIgnorable, text.size() + 1);
  body[0] = static_cast<char>(text.size() & 0xff);
  std::memcpy(body + 1, text.data(), text.size());
  binlog::AppendXid(txn, now, kServerId, seq);
}

// --rows: "N" or "MIN-MAX", 1..1000.
bool ParseRows(const std::string& s, int* lo, int* hi) {
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

size_t TransactionBytes(size_t payload, bool mariadb = false) {
  binlog::TransactionBuffer txn(/*checksums=*/true);
  BuildTransaction(&txn, 0, 1, std::string(payload - 1, 'x'), false, mariadb);
  return txn.size();
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
  std::string ack = "none";           // binlog only: none, semisync
  int ack_delay_us = 100;             // semisync
  int ack_timeout_ms = 10000;         // semisync
  std::string workload = "random";    // binlog only: random, sysbench, wide
  std::string compression = "none";   // binlog only: none, zstd, lz4
  std::string gtid = "anonymous";     // binlog only: anonymous, assigned
  std::string flavor = "mysql";       // binlog only: mysql, mariadb
};

// How the run treats every point (from the flags).
struct RunConfig {
  uint64_t max_file_size = 1ull << 30;
  bool prefill = false;
};

// Bytes naive and naive-group prepare in their one file.
uint64_t RawPreallocBytes(uint64_t max_file_size) {
  return std::min<uint64_t>(max_file_size + max_file_size / 8, 512ull << 20);
}

// ---------------------------------------------------------------------------
// Reader lag

// Monotonic nanoseconds (steady_clock, CLOCK_MONOTONIC on Linux).
int64_t NowNs() {
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

class BinlogCommitter : public Committer {
 public:
  BinlogCommitter(binlog::Binlog* log, int thread, size_t payload,
                  uint64_t seed, const PointConfig& p)
      : log_(log), assigned_(p.gtid == "assigned"),
        mariadb_(p.flavor == "mariadb"),
        thread_(static_cast<uint32_t>(thread)) {
    std::mt19937_64 rng(seed);
    text_ = RandomText(payload - 1, &rng);
    seq_ = static_cast<uint64_t>(thread) << 40;
    binlog::bench::WorkloadOptions wo;
    if (binlog::bench::ParseWorkload(p.workload, &wo.kind) &&
        wo.kind != binlog::bench::Workload::kRandom) {
      wo.seed = seed;
      wo.server_id = kServerId;
      ParseRows(absl::GetFlag(FLAGS_rows), &wo.min_rows, &wo.max_rows);
      gen_ = std::make_unique<binlog::bench::WorkloadGenerator>(wo);
    }
  }
  void Prepare() override {
    if (gen_ != nullptr) {
      gen_->Next(&txn_);
    } else {
      BuildTransaction(&txn_, thread_, ++seq_, text_, assigned_, mariadb_);
      // A server captures the commit-order clock at its engine prepare.
      if (assigned_ && !mariadb_) txn_.set_commit_parent(log_->CommitClock());
    }
  }
  absl::Status Commit() override {
    absl::StatusOr<binlog::CommitPosition> pos = log_->Commit(&txn_);
    if (!pos.ok()) return pos.status();
    built_bytes += txn_.appended_data().size();
    written_bytes += txn_.size();  // Gtid + payload when compressed
    ++commits;
    new_file_ = file_ != 0 && pos->file_number != file_;
    file_ = pos->file_number;
    return absl::OkStatus();
  }
  bool NewFile() const override { return new_file_; }

 private:
  binlog::Binlog* log_;
  uint64_t file_ = 0;
  bool new_file_ = false;
  bool assigned_ = false;
  bool mariadb_ = false;
  uint32_t thread_;
  uint64_t seq_;
  std::string text_;
  binlog::TransactionBuffer txn_{/*checksums=*/true};
  std::unique_ptr<binlog::bench::WorkloadGenerator> gen_;  // sysbench, wide

 public:
  // This thread's totals (read after it is joined).
  uint64_t built_bytes = 0;
  uint64_t written_bytes = 0;
  uint64_t commits = 0;
};

class BinlogSystem : public System {
 public:
  BinlogSystem(const PointConfig& p, const RunConfig& run)
      : p_(p), run_(run) {}
  ~BinlogSystem() override {
    StopReaders().IgnoreError();  // errors were reported by Close()
    if (log_ != nullptr) log_->Close().IgnoreError();  // idem
    StopReplica().IgnoreError();  // idem
  }

  absl::Status Open(const std::string& dir) override {
    binlog::Options options;
    options.max_file_size = run_.max_file_size;
    if (p_.sync_every == 0) {
      options.sync_policy = binlog::SyncPolicy::kNever;
    } else if (p_.sync_every == 1) {
      options.sync_policy = binlog::SyncPolicy::kEveryGroup;
    } else {
      options.sync_policy = binlog::SyncPolicy::kEveryNGroups;
      options.sync_every_n = p_.sync_every;
    }
    options.preallocate = PreallocModeOf(p_.prealloc);
    binlog::io::ParseCodec(p_.compression, &options.compression);
    if (p_.flavor == "mariadb") options.flavor = binlog::LogFlavor::kMariaDB;
    if (p_.gtid == "assigned") {
      options.server_uuid =
          *binlog::Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
    }
    options.compression_level = absl::GetFlag(FLAGS_compression_level);
    options.compression_threshold =
        static_cast<size_t>(absl::GetFlag(FLAGS_compression_threshold));
    options.reader_wake_coalesce_us = static_cast<uint32_t>(p_.reader_wake_us);
    if (p_.readers > 0) {
      // Reader lag: when each group was published. Without readers the
      // writer runs without a callback.
      marks_ = std::make_unique<GroupMarks>();
    }
    if (p_.ack == "semisync") {
      binlog::sync::AckTrackerOptions ao;
      ao.required_acks = 1;
      ao.timeout = absl::Milliseconds(p_.ack_timeout_ms);
      ao.async_on_timeout = true;
      acks_ = std::make_unique<binlog::sync::AckTracker>(ao);
      // The replica must see every group at once: its ack is on the
      // commit path.
      options.reader_wake_coalesce_us = 0;
    }
    if (marks_ != nullptr || acks_ != nullptr) {
      GroupMarks* marks = marks_.get();
      binlog::sync::AckTracker* acks = acks_.get();
      options.on_group_commit = [marks, acks](const binlog::GroupCommitInfo& g) {
        if (marks != nullptr) {
          marks->Record(g.group_seq, GroupMarks::Key(g.file_number, g.end),
                        NowNs());
        }
        if (acks != nullptr) {
          // AFTER_SYNC: once per group, for its last position. A timeout
          // is counted by the tracker (ack_timeouts); the group goes on.
          acks->WaitForAck({g.file_number, g.end}).IgnoreError();
        }
      };
    }
    absl::StatusOr<std::unique_ptr<binlog::Binlog>> log =
        binlog::Binlog::Open(dir, "binlog", options);
    if (!log.ok()) return log.status();
    log_ = std::move(*log);
    if (acks_ != nullptr) {
      // Before any commit (a prefill's too): from the start of the log.
      absl::StatusOr<std::unique_ptr<binlog::Reader>> r =
          log_->NewReader(binlog::ReaderOptions());
      if (!r.ok()) return r.status();
      replica_reader_ = std::move(*r);
      replica_ = std::thread(&BinlogSystem::ReplicaLoop, this);
    }
    if (run_.prefill) return Prefill();
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int thread, uint64_t seed) override {
    auto c = std::make_unique<BinlogCommitter>(log_.get(), thread, p_.payload,
                                               seed, p_);
    committers_.push_back(c.get());
    return c;
  }

  void CompressionStats(double* ratio, double* built) const override {
    uint64_t b = 0, w = 0, n = 0;
    for (const BinlogCommitter* c : committers_) {
      b += c->built_bytes;
      w += c->written_bytes;
      n += c->commits;
    }
    if (w > 0) *ratio = static_cast<double>(b) / static_cast<double>(w);
    if (n > 0 && p_.workload != "random") {
      *built = static_cast<double>(b) / static_cast<double>(n);
    }
  }
  // The committers NewCommitter made (RunPoint owns them; read after the
  // commit threads are joined).
  std::vector<const BinlogCommitter*> committers_;

  Counters counters() const override {
    const binlog::LogStats s = log_->stats();
    Counters c;
    c.commits = static_cast<int64_t>(s.commits);
    c.groups = static_cast<int64_t>(s.groups);
    c.fsyncs = static_cast<int64_t>(s.fsyncs);
    c.fsync_micros = static_cast<int64_t>(s.fsync_micros);
    c.bytes = static_cast<int64_t>(s.bytes_written);
    c.rotations = static_cast<int64_t>(s.rotations);
    c.files_preallocated = static_cast<int64_t>(s.files_preallocated);
    c.rotations_from_spare = static_cast<int64_t>(s.rotations_from_spare);
    c.rotations_waited = static_cast<int64_t>(s.rotations_waited);
    if (acks_ != nullptr) {
      const binlog::sync::AckTracker::Stats a = acks_->stats();
      c.ack_waits = static_cast<int64_t>(a.waits);
      c.ack_timeouts = static_cast<int64_t>(a.timeouts);
      c.ack_async_waits = static_cast<int64_t>(a.waits_async);
    }
    return c;
  }

  absl::Status StartReaders(int n) override {
    readers_ = std::vector<ReaderSlot>(static_cast<size_t>(n));
    // From the current end: a prefill's transactions are not read, and the
    // first group a reader expects is the next one.
    const binlog::CommitPosition end = log_->VisibleEnd();
    binlog::ReaderOptions ro;
    ro.start_file = end.file_number;
    ro.start_offset = end.end;
    const uint64_t next_seq = marks_ != nullptr ? marks_->last_seq() + 1 : 1;
    for (ReaderSlot& slot : readers_) {
      absl::StatusOr<std::unique_ptr<binlog::Reader>> r = log_->NewReader(ro);
      if (!r.ok()) return r.status();
      slot.reader = std::move(*r);
      slot.next_seq = next_seq;
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

  void SetMeasuring(bool on) override {
    measuring_.store(on, std::memory_order_relaxed);
  }

  // After Close() (the reader threads are joined).
  uint64_t ReaderLag(LagHistogram* h) const override {
    uint64_t overruns = 0;
    for (const ReaderSlot& slot : readers_) {
      h->Merge(slot.lag);
      overruns += slot.overrun ? 1 : 0;
    }
    return overruns;
  }

  absl::Status Close() override {
    absl::Status s = StopReaders();
    absl::Status c = log_->Close();
    absl::Status r = StopReplica();
    if (!s.ok()) return s;
    return c.ok() ? r : c;
  }

  size_t commit_bytes() const override {
    return TransactionBytes(p_.payload, p_.flavor == "mariadb");
  }

 private:
  static binlog::io::PreallocMode PreallocModeOf(const std::string& name) {
    if (name == "none") return binlog::io::PreallocMode::kNone;
    if (name == "fallocate") return binlog::io::PreallocMode::kFallocate;
    return binlog::io::PreallocMode::kZeroFill;
  }

  // Open() fallocates the first file; later files come from the
  // preallocator, which prepares the next spare once the active file is
  // half full. Fill the first file past half (the commit after the half
  // asks for the spare), wait for the spare and rotate onto it, so that the
  // run starts at the head of a preallocated file with no preparation under
  // way; the next spare is then prepared during the run, when this file is
  // half full, as in production. With prealloc none the same fill and
  // rotation happen, without waiting.
  absl::Status Prefill() {
    const uint64_t max = run_.max_file_size;
    const size_t chunk = static_cast<size_t>(
        std::max<uint64_t>(1024, std::min<uint64_t>(1 << 20, max / 8)));
    std::mt19937_64 rng(42);
    const std::string text = RandomText(chunk, &rng);
    binlog::TransactionBuffer txn(/*checksums=*/true);
    uint64_t seq = 0;
    bool past_half = false;
    for (;;) {
      BuildTransaction(&txn, 0, ++seq, text);
      absl::StatusOr<binlog::CommitPosition> pos = log_->Commit(&txn);
      if (!pos.ok()) return pos.status();
      if (past_half) break;
      past_half = pos->end >= max / 2;
    }
    const bool wait = p_.prealloc != "none";
    absl::Status s = wait ? WaitPreallocated(1) : absl::OkStatus();
    if (s.ok()) s = log_->Rotate();
    return s;
  }

  absl::Status WaitPreallocated(uint64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    while (log_->stats().files_preallocated < n) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "prefill: the preallocator made ",
            log_->stats().files_preallocated, " spare files in 120 s, not ",
            n));
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return absl::OkStatus();
  }

  // One tailing reader. bytes: written (relaxed) only by its reader thread,
  // read by the main thread for the snapshots; alignas keeps the readers'
  // counters off each other's cache lines. The rest is the reader thread's
  // own until it is joined.
  struct alignas(64) ReaderSlot {
    std::atomic<uint64_t> bytes{0};
    std::unique_ptr<binlog::Reader> reader;
    std::thread thread;
    absl::Status status;
    // Reader lag: the next group whose end this reader looks for.
    uint64_t next_seq = 1;
    bool overrun = false;  // fell GroupMarks::kSize groups behind
    // Transaction ends read before their group was recorded (the callback
    // runs just after publication): (key, read time).
    struct Seen {
      uint64_t key;
      int64_t t_ns;
    };
    std::vector<Seen> pending;
    LagHistogram lag;
  };

  void AddLag(ReaderSlot* slot, int64_t lag_ns) {
    if (!measuring_.load(std::memory_order_relaxed)) return;
    slot->lag.Add(static_cast<uint64_t>(std::max<int64_t>(0, lag_ns)) / 1000);
  }

  // A group recorded with (key, t): if the reader already read its end
  // (pending), that read is its lag sample (0 when it read before the
  // record). Drops pending ends up to it.
  void ResolvePending(ReaderSlot* slot, uint64_t key, int64_t t_ns) {
    size_t i = 0;
    while (i < slot->pending.size() && slot->pending[i].key < key) ++i;
    if (i < slot->pending.size() && slot->pending[i].key == key) {
      AddLag(slot, slot->pending[i].t_ns - t_ns);
      ++i;
    }
    slot->pending.erase(slot->pending.begin(),
                        slot->pending.begin() + static_cast<ptrdiff_t>(i));
  }

  // The reader just read an event ending at `key`.
  void Observe(ReaderSlot* slot, uint64_t key, bool txn_end) {
    for (;;) {
      uint64_t gkey;
      int64_t t;
      const int r = marks_->Load(slot->next_seq, &gkey, &t);
      if (r > 0) {  // more than kSize groups behind: stop measuring
        slot->overrun = true;
        return;
      }
      if (r < 0) {  // its group is not recorded yet
        if (txn_end && slot->pending.size() < slot->pending.capacity()) {
          slot->pending.push_back({key, NowNs()});
        }
        return;
      }
      if (gkey > key) return;  // inside the group
      if (gkey == key) {
        AddLag(slot, NowNs() - t);
        slot->pending.clear();
      } else {
        ResolvePending(slot, gkey, t);  // a group read before its record
      }
      ++slot->next_seq;
      if (gkey == key) return;
    }
  }

  // At the tail: groups recorded after the reader read their ends.
  void ResolveAll(ReaderSlot* slot) {
    while (!slot->pending.empty() && !slot->overrun) {
      uint64_t gkey;
      int64_t t;
      const int r = marks_->Load(slot->next_seq, &gkey, &t);
      if (r != 0 || gkey > slot->pending.back().key) return;
      ResolvePending(slot, gkey, t);
      ++slot->next_seq;
    }
  }

  void ReadLoop(ReaderSlot* slot) {
    binlog::Event ev;
    uint64_t bytes = 0;
    const bool lag = marks_ != nullptr;
    if (lag) slot->pending.reserve(4096);
    while (!stop_readers_.load(std::memory_order_relaxed)) {
      absl::Status s = slot->reader->Next(&ev);
      if (s.ok()) {
        bytes += ev.data.size();
        slot->bytes.store(bytes, std::memory_order_relaxed);
        if (lag && !slot->overrun) {
          Observe(slot, GroupMarks::Key(ev.file_number, ev.end_offset),
                  ev.header.type == binlog::kXidEvent);
        }
        continue;
      }
      if (!absl::IsOutOfRange(s)) {
        slot->status = s;
        return;
      }
      if (lag) ResolveAll(slot);
      s = slot->reader->WaitForMore(absl::Now() + absl::Milliseconds(100));
      if (absl::IsCancelled(s)) return;  // the log was closed
      if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
        slot->status = s;
        return;
      }
      if (lag) ResolveAll(slot);
    }
  }

  // The simulated semi-sync replica: read what is there, wait the ack
  // delay, acknowledge the end of what was read, wait for more.
  void ReplicaLoop() {
    // Timer slack 1 us for this thread: the default 50 us would turn a
    // 100 us ack delay into about 150 us.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    binlog::Event ev;
    const absl::Duration delay = absl::Microseconds(p_.ack_delay_us);
    for (;;) {
      bool got = false;
      binlog::sync::AckPosition last;
      absl::Status s;
      while ((s = replica_reader_->Next(&ev)).ok()) {
        got = true;
        last = {ev.file_number, ev.end_offset};
      }
      if (!absl::IsOutOfRange(s)) {
        replica_status_ = s;
        return;
      }
      if (got) {
        if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
        s = acks_->Ack(/*replica_id=*/1, last);
        if (!s.ok()) {
          replica_status_ = s;
          return;
        }
      }
      s = replica_reader_->WaitForMore(absl::Now() + absl::Milliseconds(100));
      if (absl::IsCancelled(s)) return;  // the log was closed
      if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
        replica_status_ = s;
        return;
      }
    }
  }

  // After the log is closed (the replica's reader then ends).
  absl::Status StopReplica() {
    if (acks_ != nullptr) acks_->Shutdown();
    if (replica_.joinable()) replica_.join();
    if (replica_status_.ok()) return absl::OkStatus();
    return absl::Status(replica_status_.code(),
                        absl::StrCat("replica: ", replica_status_.message()));
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
  const RunConfig run_;
  std::unique_ptr<GroupMarks> marks_;  // readers > 0 only
  // --ack=semisync only. Declared before log_: the log's callback uses it.
  std::unique_ptr<binlog::sync::AckTracker> acks_;
  std::unique_ptr<binlog::Binlog> log_;
  std::unique_ptr<binlog::Reader> replica_reader_;
  std::thread replica_;
  absl::Status replica_status_;  // the replica thread's, read after join
  std::vector<ReaderSlot> readers_;
  std::atomic<bool> stop_readers_{false};
  std::atomic<bool> measuring_{false};
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
  RawSystem(const PointConfig& p, const RunConfig& run)
      : p_(p),
        bytes_(TransactionBytes(p.payload)),
        mode_(p.prealloc == "none"        ? binlog_bench::Prealloc::kNone
              : p.prealloc == "fallocate" ? binlog_bench::Prealloc::kFallocate
                                          : binlog_bench::Prealloc::kZeroFill),
        prealloc_bytes_(mode_ == binlog_bench::Prealloc::kNone
                            ? 0
                            : RawPreallocBytes(run.max_file_size)) {}

  absl::Status Open(const std::string& dir) override {
    absl::StatusOr<std::unique_ptr<Log>> log =
        Log::Open(binlog::io::JoinPath(dir, "log"), p_.sync_every, mode_,
                  prealloc_bytes_);
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
    c.fsync_micros = static_cast<int64_t>(s.fsync_micros);
    c.bytes = static_cast<int64_t>(s.bytes);
    return c;
  }
  absl::Status Close() override { return log_->Close(); }
  size_t commit_bytes() const override { return bytes_; }
  uint64_t prealloc_bytes() const override { return prealloc_bytes_; }

 private:
  const PointConfig p_;
  const size_t bytes_;
  const binlog_bench::Prealloc mode_;
  const uint64_t prealloc_bytes_;
  std::unique_ptr<Log> log_;
};

std::unique_ptr<System> MakeSystem(const PointConfig& p, const RunConfig& run) {
  if (p.system == "binlog") return std::make_unique<BinlogSystem>(p, run);
  if (p.system == "rocksdb") return std::make_unique<RocksSystem>(p);
  if (p.system == "leveldb") return std::make_unique<LevelSystem>(p);
  if (p.system == "naive") {
    return std::make_unique<RawSystem<binlog_bench::NaiveLog>>(p, run);
  }
  if (p.system == "naive-group") {
    return std::make_unique<RawSystem<binlog_bench::GroupCommitLog>>(p, run);
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

enum Phase : int { kWarmup = 0, kMeasure = 1, kStop = 2 };

// Latencies in ns, saturating at ~4.29 s. Preallocated and touched before
// the run so the loop neither allocates nor page-faults.
struct alignas(64) ThreadSlot {
  std::vector<uint32_t> latency_ns;
  std::vector<uint32_t> new_file_ns;  // capacity reserved; never grows
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
        if (c->NewFile() &&
            slot->new_file_ns.size() < slot->new_file_ns.capacity()) {
          slot->new_file_ns.push_back(static_cast<uint32_t>(
              std::min<int64_t>(ns, std::numeric_limits<uint32_t>::max())));
        }
      }
    }
  }
}

// Process resource usage: getrusage(RUSAGE_SELF) sums every thread's CPU
// time and context switches (/proc/self/status would count only the main
// thread's switches).
struct Usage {
  double cpu_s = 0;
  int64_t voluntary = 0;
  int64_t involuntary = 0;
};

Usage ProcessUsage() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const struct timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  Usage u;
  u.cpu_s = tv(ru.ru_utime) + tv(ru.ru_stime);
  u.voluntary = ru.ru_nvcsw;
  u.involuntary = ru.ru_nivcsw;
  return u;
}

double LoadAverage1m() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  if (!(in >> v)) return -1;
  return v;
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
                                     double duration_s, const RunConfig& run) {
  std::unique_ptr<System> sys = MakeSystem(p, run);
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
    slots[static_cast<size_t>(i)].new_file_ns.reserve(1024);
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
  const Usage u0 = ProcessUsage();
  const Clock::time_point t0 = Clock::now();
  sys->SetMeasuring(true);
  phase.store(kMeasure, std::memory_order_release);

  SleepUnlessFailed(duration_s, failed);

  phase.store(kStop, std::memory_order_release);
  sys->SetMeasuring(false);
  const Clock::time_point t1 = Clock::now();
  const Usage u1 = ProcessUsage();
  const uint64_t rb1 = sys->ReaderBytes();
  const Counters c1 = sys->counters();
  r.loadavg_1m = LoadAverage1m();

  for (std::thread& t : threads) t.join();
  absl::Status close = sys->Close();
  for (const ThreadSlot& slot : slots) {
    if (!slot.status.ok()) return slot.status;
  }
  if (!close.ok()) return close;
  double built_per_commit = 0;
  sys->CompressionStats(&r.ratio, &built_per_commit);
  if (built_per_commit > 0) r.commit_bytes = static_cast<size_t>(built_per_commit);

  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  std::vector<uint32_t> all;
  std::vector<uint32_t> new_file;
  for (ThreadSlot& slot : slots) {
    new_file.insert(new_file.end(), slot.new_file_ns.begin(),
                    slot.new_file_ns.end());
    r.commits += slot.commits;
    r.dropped_samples += slot.commits - slot.samples;
    all.insert(all.end(), slot.latency_ns.begin(),
               slot.latency_ns.begin() + static_cast<ptrdiff_t>(slot.samples));
    std::vector<uint32_t>().swap(slot.latency_ns);
  }
  r.tps = static_cast<double>(r.commits) / r.seconds;
  r.p50_us = PercentileUs(&all, 0.50);
  r.p99_us = PercentileUs(&all, 0.99);
  r.p999_us = PercentileUs(&all, 0.999);
  r.max_us = PercentileUs(&all, 1.0);
  if (!new_file.empty()) {
    r.new_file_p50_us = PercentileUs(&new_file, 0.50);
    r.new_file_max_us = PercentileUs(&new_file, 1.0);
  }
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
  const double commits = static_cast<double>(std::max<uint64_t>(r.commits, 1));
  r.cpu_us_per_commit = (u1.cpu_s - u0.cpu_s) * 1e6 / commits;
  r.ctx_switches_per_commit =
      static_cast<double>((u1.voluntary - u0.voluntary) +
                          (u1.involuntary - u0.involuntary)) /
      commits;
  r.invol_ctx_switches_per_commit =
      static_cast<double>(u1.involuntary - u0.involuntary) / commits;
  if (c0.fsync_micros >= 0 && r.fsyncs > 0) {
    r.fsync_us = static_cast<double>(c1.fsync_micros - c0.fsync_micros) /
                 static_cast<double>(r.fsyncs);
  }
  if (c0.rotations >= 0) {
    r.rotations = c1.rotations - c0.rotations;
    r.files_preallocated = c1.files_preallocated - c0.files_preallocated;
    r.rotations_from_spare = c1.rotations_from_spare - c0.rotations_from_spare;
    r.rotations_waited = c1.rotations_waited - c0.rotations_waited;
  }
  if (c0.ack_waits >= 0) {
    r.ack_waits = c1.ack_waits - c0.ack_waits;
    r.ack_timeouts = c1.ack_timeouts - c0.ack_timeouts;
    r.ack_async_waits = c1.ack_async_waits - c0.ack_async_waits;
  }
  const uint64_t prepared = sys->prealloc_bytes();
  if (prepared > 0 && c1.bytes > c0.bytes) {
    const uint64_t b0 = static_cast<uint64_t>(c0.bytes);
    const uint64_t b1 = static_cast<uint64_t>(c1.bytes);
    const uint64_t past = b1 > std::max(b0, prepared) ? b1 - std::max(b0, prepared) : 0;
    r.past_prealloc_frac =
        static_cast<double>(past) / static_cast<double>(b1 - b0);
  }
  if (p.readers > 0) {
    LagHistogram lag;
    r.reader_lag_overruns = sys->ReaderLag(&lag);
    r.reader_lag_samples = lag.count();
    if (lag.count() > 0) {
      r.reader_lag_p50_us = lag.Percentile(0.50);
      r.reader_lag_p99_us = lag.Percentile(0.99);
      r.reader_lag_max_us = static_cast<double>(lag.max());
    }
  }
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
      "\"prealloc\":\"%s\",\"rep\":%d,\"tps\":%.1f,\"p50_us\":%.1f,"
      "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
      "\"avg_group\":%.2f,\"fsyncs\":%d,"
      "\"commits_per_fsync\":%.2f,\"fsync_us\":%.1f,\"reader_mb_s\":%.2f,"
      "\"cpu_us_per_commit\":%.2f,\"ctx_switches_per_commit\":%.3f,"
      "\"invol_ctx_switches_per_commit\":%.3f,\"commits\":%d,"
      "\"commit_bytes\":%d,\"seconds\":%.3f,\"loadavg_1m\":%.2f",
      p.threads, p.payload, p.readers, p.sync_every, p.prealloc, p.rep, r.tps,
      r.p50_us, r.p99_us, r.p999_us, r.max_us, r.avg_group, r.fsyncs,
      r.commits_per_fsync,
      r.fsync_us, r.reader_mb_s, r.cpu_us_per_commit,
      r.ctx_switches_per_commit, r.invol_ctx_switches_per_commit, r.commits,
      r.commit_bytes, r.seconds, r.loadavg_1m);
  absl::StrAppendFormat(&out,
                        ",\"workload\":\"%s\",\"compression\":\"%s\","
                        "\"ratio\":%.3f,\"gtid\":\"%s\",\"flavor\":\"%s\"",
                        p.workload, p.compression, r.ratio, p.gtid, p.flavor);
  if (p.system == "binlog") {
    absl::StrAppendFormat(
        &out,
        ",\"reader_wake_us\":%d,\"rotations\":%d,\"files_preallocated\":%d,"
        "\"rotations_from_spare\":%d,\"rotations_waited\":%d,"
        "\"new_file_p50_us\":%.1f,\"new_file_max_us\":%.1f",
        p.reader_wake_us, r.rotations, r.files_preallocated,
        r.rotations_from_spare, r.rotations_waited, r.new_file_p50_us,
        r.new_file_max_us);
    absl::StrAppendFormat(&out, ",\"ack\":\"%s\"", p.ack);
  }
  if (p.ack == "semisync") {
    absl::StrAppendFormat(
        &out,
        ",\"ack_delay_us\":%d,\"ack_timeout_ms\":%d,\"ack_waits\":%d,"
        "\"ack_timeouts\":%d,\"ack_async_waits\":%d",
        p.ack_delay_us, p.ack_timeout_ms, r.ack_waits, r.ack_timeouts,
        r.ack_async_waits);
  }
  if (p.readers > 0) {
    absl::StrAppendFormat(
        &out,
        ",\"reader_lag_p50_us\":%.1f,\"reader_lag_p99_us\":%.1f,"
        "\"reader_lag_max_us\":%.0f,\"reader_lag_samples\":%d,"
        "\"reader_lag_overruns\":%d",
        r.reader_lag_p50_us, r.reader_lag_p99_us, r.reader_lag_max_us,
        r.reader_lag_samples, r.reader_lag_overruns);
  }
  if (r.past_prealloc_frac >= 0) {
    absl::StrAppendFormat(&out, ",\"past_prealloc_frac\":%.3f",
                          r.past_prealloc_frac);
  }
  out += "}";
  return out;
}

constexpr const char* kTableHeader =
    "| system | threads | payload | readers | wake us | prealloc | tps | "
    "p50 us | p99 us | avg group | commits/fsync | fsync us | reader MB/s | "
    "reader lag p99 us | CPU us/commit | ctx sw/commit | rotations "
    "(spare/waited) |\n"
    "|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|";

std::string TableRow(const PointConfig& p, const PointResult& r) {
  auto or_na = [](double v, const char* fmt) {
    return v < 0 ? std::string("n/a") : absl::StrFormat(fmt, v);
  };
  std::string name = p.system;
  if (!r.version.empty()) name = absl::StrCat(p.system, " (", r.version, ")");
  if (p.ack == "semisync") {
    name = absl::StrFormat("%s semisync %dus (timeouts %d)", name,
                           p.ack_delay_us, r.ack_timeouts);
  }
  const std::string rotations =
      r.rotations < 0 ? std::string("n/a")
                      : absl::StrFormat("%d (%d/%d)", r.rotations,
                                        r.rotations_from_spare,
                                        r.rotations_waited);
  return absl::StrFormat(
      "| %s | %d | %d | %d | %s | %s | %.0f | %.1f | %.1f | %s | %s | %s | "
      "%.1f | %s | %.1f | %.2f | %s |",
      name, p.threads, p.payload, p.readers,
      p.system == "binlog" ? absl::StrCat(p.reader_wake_us) : std::string("n/a"),
      p.prealloc, r.tps, r.p50_us, r.p99_us, or_na(r.avg_group, "%.2f"),
      or_na(r.commits_per_fsync, "%.2f"), or_na(r.fsync_us, "%.0f"),
      r.reader_mb_s, or_na(r.reader_lag_p99_us, "%.0f"), r.cpu_us_per_commit,
      r.ctx_switches_per_commit, rotations);
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
      "[--format=jsonl|table] [--repetitions=1] [--max_file_size=BYTES] "
      "[--prealloc=none,fallocate,zerofill] [--prefill] "
      "[--reader_wake_us=1000,...] [--readers_at_threads=64,...] "
      "[--ack=none,semisync] [--ack_delay_us=100] [--ack_timeout_ms=10000] "
      "[--workload=random|sysbench|wide] [--rows=1-20] "
      "[--flavor=mysql,mariadb] "
      "[--compression=none,zstd,lz4] [--compression_level=0] "
      "[--compression_threshold=256]\n"
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
  auto wakes = ParseInts("reader_wake_us", absl::GetFlag(FLAGS_reader_wake_us),
                         0, 100000);
  std::vector<std::string> reader_threads_flag =
      absl::GetFlag(FLAGS_readers_at_threads);
  auto reader_threads =
      reader_threads_flag.empty()
          ? absl::StatusOr<std::vector<int>>(*threads)
          : ParseInts("readers_at_threads", reader_threads_flag, 1, 4096);
  for (const auto* v : {&threads, &payloads, &syncs, &readers, &wakes,
                        &reader_threads}) {
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
  RunConfig run;
  run.max_file_size = absl::GetFlag(FLAGS_max_file_size);
  run.prefill = absl::GetFlag(FLAGS_prefill);
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const std::vector<std::string> compressions = absl::GetFlag(FLAGS_compression);
  {
    binlog::bench::Workload w;
    binlog::io::Codec c;
    int lo, hi;
    bool ok = binlog::bench::ParseWorkload(workload, &w) &&
              ParseRows(absl::GetFlag(FLAGS_rows), &lo, &hi) &&
              !compressions.empty();
    for (const std::string& g : absl::GetFlag(FLAGS_gtid)) {
      if (g != "anonymous" && (g != "assigned" || workload != "random")) {
        std::fprintf(stderr,
                     "commit_bench: --gtid takes anonymous and assigned "
                     "(assigned with --workload=random only), not '%s'\n",
                     g.c_str());
        return 2;
      }
    }
    for (const std::string& f : absl::GetFlag(FLAGS_flavor)) {
      if ((f != "mysql" && f != "mariadb") ||
          (f == "mariadb" && workload != "random")) {
        std::fprintf(stderr,
                     "commit_bench: --flavor takes mysql and mariadb "
                     "(mariadb with --workload=random only), not '%s'\n",
                     f.c_str());
        return 2;
      }
    }
    for (const std::string& name : compressions) {
      ok = ok && binlog::io::ParseCodec(name, &c);
    }
    if (!ok) {
      std::fprintf(stderr,
                   "commit_bench: need --workload=random|sysbench|wide, "
                   "--rows=N or MIN-MAX (1..1000) and --compression from "
                   "none, zstd, lz4\n");
      return 2;
    }
  }
  const std::vector<std::string> acks = absl::GetFlag(FLAGS_ack);
  for (const std::string& a : acks) {
    if (a != "none" && a != "semisync") {
      std::fprintf(stderr, "commit_bench: --ack: '%s' is not none or semisync\n",
                   a.c_str());
      return 2;
    }
  }
  const int ack_delay_us = absl::GetFlag(FLAGS_ack_delay_us);
  const int ack_timeout_ms = absl::GetFlag(FLAGS_ack_timeout_ms);
  if (acks.empty() || ack_delay_us < 0 || ack_timeout_ms < 1) {
    std::fprintf(stderr,
                 "commit_bench: need a non-empty --ack, --ack_delay_us >= 0 "
                 "and --ack_timeout_ms >= 1\n");
    return 2;
  }
  const std::vector<std::string> preallocs = absl::GetFlag(FLAGS_prealloc);
  for (const std::string& m : preallocs) {
    if (m != "none" && m != "fallocate" && m != "zerofill") {
      std::fprintf(stderr,
                   "commit_bench: --prealloc: '%s' is not none, fallocate or "
                   "zerofill\n",
                   m.c_str());
      return 2;
    }
  }
  if (preallocs.empty()) {
    std::fprintf(stderr, "commit_bench: --prealloc is empty\n");
    return 2;
  }
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
            const bool peer = system == "rocksdb" || system == "leveldb";
            if (peer && sync > 1) continue;
            // The peers manage their own files: one point, prealloc n/a.
            const std::vector<std::string> modes =
                peer ? std::vector<std::string>{"n/a"} : preallocs;
            const bool reader_point =
                system == "binlog" &&
                std::find(reader_threads->begin(), reader_threads->end(), t) !=
                    reader_threads->end();
            for (const std::string& mode : modes) {
              for (int r : system == "binlog" ? *readers : std::vector<int>{0}) {
                if (r > 0 && !reader_point) continue;
                // The wake-up coalescing matters only with readers.
                const std::vector<int> ws =
                    r > 0 ? *wakes : std::vector<int>{wakes->front()};
                for (int w : ws) {
                  for (const std::string& ack :
                       system == "binlog" ? acks
                                          : std::vector<std::string>{"none"}) {
                    PointConfig p;
                    p.system = system;
                    p.threads = t;
                    p.payload = static_cast<size_t>(payload);
                    p.sync_every = static_cast<uint32_t>(sync);
                    p.readers = r;
                    p.rep = rep;
                    p.prealloc = mode;
                    // semisync forces the log's coalescing to 0 (Open).
                    p.reader_wake_us = ack == "semisync" ? 0 : w;
                    p.ack = ack;
                    p.ack_delay_us = ack_delay_us;
                    p.ack_timeout_ms = ack_timeout_ms;
                    points.push_back(p);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  {
    // Binlog points once per codec, with the workload (peers: n/a).
    std::vector<PointConfig> expanded;
    for (const PointConfig& p : points) {
      if (p.system != "binlog") {
        expanded.push_back(p);
        continue;
      }
      for (const std::string& c : compressions) {
        for (const std::string& g : absl::GetFlag(FLAGS_gtid)) {
          for (const std::string& f : absl::GetFlag(FLAGS_flavor)) {
            PointConfig q = p;
            q.workload = workload;
            q.compression = c;
            q.gtid = g;
            q.flavor = f;
            // MariaDB cannot read compressed transactions: no such point.
            if (f == "mariadb" && c != "none") continue;
            expanded.push_back(q);
          }
        }
      }
    }
    points.swap(expanded);
  }
  std::fprintf(stderr, "  load:     %.2f (1-minute load average)\n",
               LoadAverage1m());
  std::fprintf(stderr,
               "  files:    max_file_size %llu, naive prepared size %llu, "
               "prefill %s\n",
               static_cast<unsigned long long>(run.max_file_size),
               static_cast<unsigned long long>(RawPreallocBytes(run.max_file_size)),
               run.prefill ? "on" : "off");
  std::fprintf(stderr, "  points:   %zu x (%.1f s warm-up + %.1f s)\n",
               points.size(), warmup_s, duration_s);

  if (format == "table") std::printf("%s\n", kTableHeader);
  std::fflush(stdout);
  int failures = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const PointConfig& p = points[i];
    const std::string dir = binlog::io::JoinPath(
        base, absl::StrFormat("%s-t%d-p%d-r%d-w%d-s%d-%s-%s-rep%d",
                              p.system + (p.compression == "none"
                                              ? std::string()
                                              : "-" + p.compression),
                              p.threads, p.payload, p.readers, p.reader_wake_us,
                              p.sync_every,
                              p.prealloc == "n/a" ? "na" : p.prealloc, p.ack,
                              p.rep));
    std::fprintf(stderr, "[%zu/%zu] %s threads=%d payload=%zu readers=%d "
                 "reader_wake_us=%d sync_every=%u prealloc=%s ack=%s rep=%d\n",
                 i + 1, points.size(), p.system.c_str(), p.threads, p.payload,
                 p.readers, p.reader_wake_us, p.sync_every, p.prealloc.c_str(),
                 p.ack.c_str(), p.rep);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // a leftover from a --keep run
    absl::Status s = fs->CreateDirectory(dir);
    absl::StatusOr<PointResult> r =
        s.ok() ? RunPoint(p, dir, warmup_s, duration_s, run)
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
