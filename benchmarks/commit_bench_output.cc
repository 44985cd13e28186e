// commit_bench's output: one JSON line or Markdown table row per point,
// and the environment report on stderr.

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


namespace commit_bench {

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
                        "\"ratio\":%.3f,\"gtid\":\"%s\",\"flavor\":\"%s\","
                        "\"encryption\":\"%s\",\"background_rotation\":\"%s\","
                        "\"dependency\":\"%s\"",
                        p.workload, p.compression, r.ratio, p.gtid, p.flavor,
                        p.encryption, p.background_rotation, p.dependency);
  if (p.system == "binlog") {
    absl::StrAppendFormat(
        &out,
        ",\"reader_wake_us\":%d,\"reader_wakeups_per_s\":%d,"
        "\"zero_ahead\":%d,\"rotations\":%d,"
        "\"files_preallocated\":%d,"
        "\"rotations_from_spare\":%d,\"rotations_waited\":%d,"
        "\"new_file_p50_us\":%.1f,\"new_file_max_us\":%.1f",
        p.reader_wake_us, p.reader_wakeups_per_s, p.zero_ahead, r.rotations, r.files_preallocated,
        r.rotations_from_spare, r.rotations_waited, r.new_file_p50_us,
        r.new_file_max_us);
    absl::StrAppendFormat(&out, ",\"ack\":\"%s\",\"reader_ring_bytes\":%d", p.ack,
                          p.reader_ring_bytes);
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
    absl::StrAppendFormat(&out,
                          ",\"reader_api\":\"%s\",\"reader_cpu_ns_per_txn\":%.0f",
                          p.reader_api, r.reader_cpu_ns_per_txn);
  }
  if (r.target_tps > 0) {
    absl::StrAppendFormat(&out, ",\"target_tps\":%.0f", r.target_tps);
  }
  if (r.past_prealloc_frac >= 0) {
    absl::StrAppendFormat(&out, ",\"past_prealloc_frac\":%.3f",
                          r.past_prealloc_frac);
  }
  out += "}";
  return out;
}

const char* const kTableHeader =
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

}  // namespace commit_bench
