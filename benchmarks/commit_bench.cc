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
//   binlog only: reader_wake_us (Options::reader_wake_coalesce_us),
//   reader_wakeups_per_s (Options::reader_wakeups_per_second), the
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
//   with readers (binlog): reader_api (decoded: Reader::Next per event;
//                      batch: Reader::NextBatch), reader_cpu_ns_per_txn:
//                      CPU time of the reader threads in the window
//                      (pthread_getcpuclockid per thread) / readers /
//                      commits, what one reader costs per transaction
//   target_tps         with --target_tps: the offered rate (each committer
//                      commits at target_tps/threads per second, on a
//                      fixed schedule; a late commit does not shift it)
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
// Encryption at rest (binlog only): --encryption=off,on (Options::encryption,
// MySQL 8.0.14+'s format, AES-256-CTR through OpenSSL, keys from an
// in-memory keyring), one point each; JSON key "encryption". kMariaDB logs
// refuse encryption: no such point.
//
// Rotation off the commit path (binlog only): --background_rotation=on,off
// (Options::background_rotation), one point each; JSON key
// "background_rotation". Measure it with a small --max_file_size and read
// new_file_p50_us / new_file_p99_us against p99_us.
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

#include "benchmarks/commit_bench.h"

#include <pthread.h>
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
ABSL_FLAG(std::vector<std::string>, reader_wakeups_per_s,
          std::vector<std::string>({"8000"}),
          "binlog Options::reader_wakeups_per_second (0: the window is "
          "reader_wake_us whatever the number of readers); points with "
          "readers run once per value, points without readers use the first "
          "value. The widest window is the default (10000 us) or "
          "reader_wake_us if larger");
ABSL_FLAG(std::vector<std::string>, reader_api,
          std::vector<std::string>({"decoded"}),
          "binlog tailing readers' API: decoded (Reader::Next, one event per "
          "call), batch (Reader::NextBatch, whole events up to the visible "
          "end per call, boundaries only); points with readers run once per "
          "value, points without readers use the first value");
ABSL_FLAG(std::vector<std::string>, zero_ahead,
          std::vector<std::string>({"8388608"}),
          "binlog Options::zero_ahead (bytes zero-filled ahead of the writer "
          "in a file that did not come from a spare; 0: off), one point "
          "each; JSON key zero_ahead");
ABSL_FLAG(int64_t, reader_ring_bytes, -1,
          "binlog Options::reader_ring_bytes (the ring of recent bytes "
          "caught-up tailing readers read from; 0: none; -1: the library's "
          "default); JSON key reader_ring_bytes");
ABSL_FLAG(double, target_tps, 0,
          "offered commit rate in commits/s over all committers (each "
          "committer paces itself to target_tps/threads); 0: as fast as "
          "they can");
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
ABSL_FLAG(std::vector<std::string>, background_rotation, {"on"},
          "binlog Options::background_rotation, one point each: on, off");
ABSL_FLAG(std::vector<std::string>, encryption, {"off"},
          "binlog Options::encryption, one point each: off, on");
ABSL_FLAG(std::vector<std::string>, dependency, {"default"},
          "binlog Options::dependency_tracking, one point each: default "
          "(WRITESET for MySQL 8.4 files), commit_order, writeset; JSON key "
          "\"dependency\". WRITESET needs row events with keys: "
          "--workload=sysbench or wide");
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

namespace commit_bench {
namespace {


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
                ThreadSlot* slot, double interval_s) {
  go->WaitForNotification();
  const size_t cap = slot->latency_ns.size();
  // With an offered rate: commit k starts at start + k * interval (a late
  // commit does not move the schedule, so the offered rate holds).
  const Clock::duration interval =
      std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(interval_s));
  Clock::time_point next = Clock::now();
  while (phase->load(std::memory_order_acquire) != kStop) {
    if (interval_s > 0) {
      next += interval;
      const Clock::time_point now = Clock::now();
      if (next > now) std::this_thread::sleep_for(next - now);
    }
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
  r.target_tps = run.target_tps;
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
    threads.emplace_back(
        CommitLoop, committers[static_cast<size_t>(i)].get(), &go, &phase,
        &failed, &slots[static_cast<size_t>(i)],
        run.target_tps > 0 ? p.threads / run.target_tps : 0.0);
  }
  go.Notify();
  SleepUnlessFailed(warmup_s, failed);

  const Counters c0 = sys->counters();
  const uint64_t rb0 = sys->ReaderBytes();
  const uint64_t rc0 = sys->ReaderCpuNs();
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
  const uint64_t rc1 = sys->ReaderCpuNs();
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
  if (p.readers > 0 && r.commits > 0) {
    r.reader_cpu_ns_per_txn = static_cast<double>(rc1 - rc0) / p.readers /
                              static_cast<double>(r.commits);
  }
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


int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "commit_bench [--systems=binlog,rocksdb,leveldb,naive,naive-group] "
      "[--threads=1,4,16,64,256] [--payload=256,4096] [--sync_every=1] "
      "[--readers=0,1,8,64] [--duration_s=2] [--dir=PATH] [--keep] "
      "[--format=jsonl|table] [--repetitions=1] [--max_file_size=BYTES] "
      "[--prealloc=none,fallocate,zerofill] [--prefill] "
      "[--reader_wake_us=1000,...] [--reader_wakeups_per_s=8000,...] [--reader_api=decoded,batch] [--target_tps=N] [--readers_at_threads=64,...] "
      "[--ack=none,semisync] [--ack_delay_us=100] [--ack_timeout_ms=10000] "
      "[--workload=random|sysbench|wide] [--rows=1-20] "
      "[--flavor=mysql,mariadb] [--dependency=default,commit_order,writeset] [--encryption=off,on] [--background_rotation=on,off] "
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
  auto wake_rates = ParseInts("reader_wakeups_per_s",
                              absl::GetFlag(FLAGS_reader_wakeups_per_s), 0,
                              10000000);
  auto zero_aheads = ParseInts("zero_ahead", absl::GetFlag(FLAGS_zero_ahead), 0,
                               1 << 30);
  std::vector<std::string> reader_threads_flag =
      absl::GetFlag(FLAGS_readers_at_threads);
  auto reader_threads =
      reader_threads_flag.empty()
          ? absl::StatusOr<std::vector<int>>(*threads)
          : ParseInts("readers_at_threads", reader_threads_flag, 1, 4096);
  for (const auto* v : {&threads, &payloads, &syncs, &readers, &wakes,
                        &reader_threads, &zero_aheads}) {
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
  run.target_tps = absl::GetFlag(FLAGS_target_tps);
  if (run.target_tps < 0) {
    std::fprintf(stderr, "commit_bench: --target_tps must be >= 0\n");
    return 2;
  }
  const std::vector<std::string> reader_apis = absl::GetFlag(FLAGS_reader_api);
  for (const std::string& a : reader_apis) {
    if (a != "decoded" && a != "batch") {
      std::fprintf(stderr, "commit_bench: unknown --reader_api '%s'\n",
                   a.c_str());
      return 2;
    }
  }
  if (reader_apis.empty()) {
    std::fprintf(stderr, "commit_bench: --reader_api is empty\n");
    return 2;
  }
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
    for (const std::string& e : absl::GetFlag(FLAGS_background_rotation)) {
      if (e != "off" && e != "on") {
        std::fprintf(stderr,
                     "commit_bench: --background_rotation takes on and off, not '%s'\n",
                     e.c_str());
        return 2;
      }
    }
    for (const std::string& e : absl::GetFlag(FLAGS_encryption)) {
      if (e != "off" && e != "on") {
        std::fprintf(stderr,
                     "commit_bench: --encryption takes off and on, not '%s'\n",
                     e.c_str());
        return 2;
      }
    }
    for (const std::string& d : absl::GetFlag(FLAGS_dependency)) {
      if (d != "default" && d != "commit_order" && d != "writeset") {
        std::fprintf(stderr,
                     "commit_bench: --dependency takes default, commit_order and "
                     "writeset, not '%s'\n",
                     d.c_str());
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
    run.min_rows = lo;
    run.max_rows = hi;
  }
  run.compression_level = absl::GetFlag(FLAGS_compression_level);
  run.compression_threshold =
      static_cast<size_t>(absl::GetFlag(FLAGS_compression_threshold));
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
                const std::vector<int> wrs =
                    r > 0 ? *wake_rates
                          : std::vector<int>{wake_rates->front()};
                const std::vector<std::string> apis =
                    r > 0 ? reader_apis
                          : std::vector<std::string>{reader_apis.front()};
                for (int w : ws) {
                 for (int wr : wrs) {
                  for (const std::string& ack :
                       system == "binlog" ? acks
                                          : std::vector<std::string>{"none"}) {
                   for (const std::string& api : apis) {
                    PointConfig p;
                    p.reader_api = api;
                    p.system = system;
                    p.threads = t;
                    p.payload = static_cast<size_t>(payload);
                    p.sync_every = static_cast<uint32_t>(sync);
                    p.readers = r;
                    p.rep = rep;
                    p.prealloc = mode;
                    // semisync forces the log's coalescing to 0 (Open).
                    p.reader_wake_us = ack == "semisync" ? 0 : w;
                    p.reader_wakeups_per_s = wr;
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
            for (const std::string& e : absl::GetFlag(FLAGS_encryption)) {
              for (int z : *zero_aheads) {
               for (const std::string& br : absl::GetFlag(FLAGS_background_rotation)) {
               for (const std::string& dep : absl::GetFlag(FLAGS_dependency)) {
                PointConfig q = p;
                q.dependency = dep;
                q.background_rotation = br;
                q.workload = workload;
                q.compression = c;
                q.gtid = g;
                q.flavor = f;
                q.encryption = e;
                q.zero_ahead = static_cast<uint64_t>(z);
                q.reader_ring_bytes = absl::GetFlag(FLAGS_reader_ring_bytes);
                // MariaDB cannot read compressed transactions, and refuses
                // MySQL's encryption: no such points.
                if (f == "mariadb" && (c != "none" || e == "on")) continue;
                if (f == "mariadb" && dep != "default") continue;
                expanded.push_back(q);
               }
               }
              }
            }
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
    const std::string dir = binlog::io::JoinPath(base, PointDirName(p));
    std::fprintf(stderr, "[%zu/%zu] %s threads=%d payload=%zu readers=%d "
                 "(%s) reader_wake_us=%d wakeups/s=%d sync_every=%u "
                 "prealloc=%s ack=%s rep=%d\n",
                 i + 1, points.size(), p.system.c_str(), p.threads, p.payload,
                 p.readers, p.reader_api.c_str(), p.reader_wake_us,
                 p.reader_wakeups_per_s, p.sync_every, p.prealloc.c_str(),
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

}  // namespace commit_bench

int main(int argc, char** argv) { return commit_bench::Main(argc, argv); }
