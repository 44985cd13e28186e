// read_bench: sequential read throughput of a multi-GiB binlog, with the
// file in the page cache (hot) and evicted (cold), for plain pread loops,
// io::SequentialReader windows with and without prefetch (mode raw), and
// events through binlog::Reader (mode reader). Issue 6.
//
// The log is written once through binlog::Binlog into --dir (default
// /tmp/binlog_read_bench) and reused while its size and generator version
// match (read_bench.meta); --cleanup removes it. Transactions are a
// realistic row-based mix (see BuildTransaction): Anonymous_gtid, Query
// BEGIN, Table_map, 1-4 Write_rows events of 100 B .. 64 KiB (a few of
// 2-8 MiB, larger than a 1 MiB window), Xid, with CRC32 footers.
//
// Cases (--cases, default all):
//   raw   pread8k      RandomAccessFile::Read loop, 8 KiB buffer, no hints:
//                      what MySQL's IO_CACHE does
//   raw   pread1m      the same loop with 1 MiB (separates buffer size from
//                      the hints and the prefetch)
//   raw   pread8k_noreadahead, pread1m_noreadahead
//                      the same loops on a descriptor with
//                      posix_fadvise(RANDOM): no kernel read-ahead, as when
//                      it is lost under memory pressure
//   raw   seq128k, seq1m, seq1m_prefetch, seq8m
//                      io::SequentialReader (SEQUENTIAL + WILLNEED hints),
//                      window of that size, helper-thread prefetch only in
//                      *_prefetch; the caller takes one window per Peek
//   raw   seq1m_nohint the same at 1 MiB without any posix_fadvise
//   reader rd64k, rd128k, rd1m, rd1m_prefetch, rd8m
//                      binlog::Reader::OpenDirectory with that buffer_size
//                      and prefetch, checksums verified (the defaults), every
//                      event returned (64 KiB is the Reader's minimum; it
//                      cannot read with 8 KiB)
//   reader rd1m_enc    rd1m over the same transactions written encrypted
//                      (Options::encryption; a second log in --dir + "_enc",
//                      written on first use), through
//                      NewDecryptingFileSystem: each window decrypted in
//                      place, in the pass that looks for raw-zero runs
//                      (VAES where the CPU has it, binlog/aes_ctr_vaes.h)
//   reader rd1m_prefetch_enc
//                      the same with prefetch: the helper thread reads and
//                      decrypts the next window while the caller checks
//                      the current one
// Raw consumers XOR every 8-byte word of what they read, so the bytes are
// touched as a parser would touch them.
//
// Cache states (--cache, default hot,cold):
//   cold  before each run every file is fdatasync'ed and dropped from the
//         page cache with posix_fadvise(DONTNEED) (no privileges needed);
//         the resident share (mincore) is checked and printed
//   hot   the files are read once before the run; residency is checked
//
// Output, one line per case and repetition (--format=jsonl, the default,
// or table): mode, case, impl, buffer_kib, prefetch, cache, rep, mb_s
// (bytes / wall time / 1e6; for the reader, bytes of the events returned),
// syscalls_per_gib (RandomAccessFile Read + Advise calls per GiB read,
// counted by a counting FileSystemWrapper), reads_per_gib, advises_per_gib,
// seconds, cpu_s (process user+sys, all threads), mb_per_cpu_s (bytes /
// cpu_s / 1e6: what the case costs when the machine is shared),
// resident_before (share of the log in
// the page cache at the start), and for the reader events, events_s,
// prefetch_hits, prefetch_waits, prefetch_wait_ms.
// Repetitions are whole passes over the cases (interleaved), so a slow
// minute of the disk spreads over every case.
//
// Example:
//   bazel build -c opt //benchmarks:read_bench
//   bazel-bin/benchmarks/read_bench --size_gib=2 --repetitions=3

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmarks/bench_log.h"
#include "binlog/reader.h"
#include "io/file_system.h"
#include "io/sequential_reader.h"

ABSL_FLAG(std::string, dir, "/tmp/binlog_read_bench",
          "directory of the generated log (created, reused while it matches)");
ABSL_FLAG(double, size_gib, 2.0, "size of the generated log in GiB");
ABSL_FLAG(int, file_mib, 1024, "max_file_size of the generated log in MiB");
ABSL_FLAG(bool, cleanup, false, "remove --dir and exit");
ABSL_FLAG(std::string, format, "jsonl", "jsonl or table (Markdown rows)");
ABSL_FLAG(int, repetitions, 1, "passes over the cases");
ABSL_FLAG(std::string, cases, "all",
          "comma-separated case names (see the file comment), or all");
ABSL_FLAG(std::string, cache, "hot,cold", "hot, cold or both");

namespace {

using binlog::io::FileSystem;
using binlog_bench::CountingFs;
using binlog_bench::CpuModel;
using binlog_bench::CpuSeconds;
using binlog_bench::EnsureLog;
using binlog_bench::Evict;
using binlog_bench::kGiB;
using binlog_bench::LogFiles;
using binlog_bench::MountOf;
using binlog_bench::ReadFirstLine;
using binlog_bench::ResidentShare;
using binlog_bench::Warm;

// ---------------------------------------------------------------------------
// Cases.

struct Case {
  std::string name;
  std::string mode;  // raw, reader
  std::string impl;  // pread, sequential_reader, binlog_reader
  size_t buffer_kib;
  bool prefetch;
  bool hints = true;  // sequential_reader: SEQUENTIAL + WILLNEED
};

std::vector<Case> AllCases() {
  return {
      {"pread8k", "raw", "pread", 8, false},
      {"pread1m", "raw", "pread", 1024, false},
      {"pread8k_noreadahead", "raw", "pread_fadv_random", 8, false},
      {"pread1m_noreadahead", "raw", "pread_fadv_random", 1024, false},
      {"seq128k", "raw", "sequential_reader", 128, false},
      {"seq1m", "raw", "sequential_reader", 1024, false},
      {"seq1m_nohint", "raw", "sequential_reader", 1024, false, false},
      {"seq1m_prefetch", "raw", "sequential_reader", 1024, true},
      {"seq8m", "raw", "sequential_reader", 8192, false},
      {"rd64k", "reader", "binlog_reader", 64, false},
      {"rd128k", "reader", "binlog_reader", 128, false},
      {"rd1m", "reader", "binlog_reader", 1024, false},
      {"rd1m_prefetch", "reader", "binlog_reader", 1024, true},
      {"rd1m_enc", "reader", "binlog_reader_encrypted", 1024, false},
      {"rd1m_prefetch_enc", "reader", "binlog_reader_encrypted", 1024, true},
      {"rd8m", "reader", "binlog_reader", 8192, false},
  };
}

struct Result {
  uint64_t bytes = 0;   // raw: bytes read; reader: bytes of events
  uint64_t events = 0;
  uint64_t file_bytes = 0;  // bytes of the files (for per-GiB counts)
  double seconds = 0;
  double cpu_s = 0;
  uint64_t reads = 0, advises = 0;
  binlog::io::SequentialReaderStats io;
  uint64_t sink = 0;
};

// Touches every byte as a parser would (8 bytes at a time).
inline uint64_t Consume(const char* p, size_t n) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    x ^= w;
  }
  for (; i < n; ++i) x ^= static_cast<unsigned char>(p[i]);
  return x;
}

absl::Status RunPread(const Case& c, const std::vector<std::string>& files,
                      CountingFs* fs, Result* r) {
  const size_t buf_size = c.buffer_kib << 10;
  std::unique_ptr<char[]> buf(new char[buf_size]);
  for (const auto& p : files) {
    auto f = fs->OpenReadable(p);
    if (!f.ok()) return f.status();
    for (uint64_t off = 0;;) {
      size_t got = 0;
      absl::Status s = (*f)->Read(off, buf_size, buf.get(), &got);
      if (!s.ok()) return s;
      r->sink ^= Consume(buf.get(), got);
      off += got;
      r->bytes += got;
      if (got < buf_size) break;
    }
  }
  return absl::OkStatus();
}

// The pread loop on a descriptor of its own with posix_fadvise(RANDOM),
// which turns the kernel's read-ahead off for it: what a reader gets when
// read-ahead is lost (memory pressure, interleaved readers). Raw POSIX on
// purpose (the FileSystem has no RANDOM hint); reads are counted here.
absl::Status RunPreadNoReadahead(const Case& c,
                                 const std::vector<std::string>& files,
                                 CountingFs* fs, Result* r) {
  const size_t buf_size = c.buffer_kib << 10;
  std::unique_ptr<char[]> buf(new char[buf_size]);
  for (const auto& p : files) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", p));
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    fs->advises.fetch_add(1);
    for (uint64_t off = 0;;) {
      ssize_t got = ::pread(fd, buf.get(), buf_size, static_cast<off_t>(off));
      fs->reads.fetch_add(1);
      if (got < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        return absl::ErrnoToStatus(e, absl::StrCat("pread ", p));
      }
      r->sink ^= Consume(buf.get(), static_cast<size_t>(got));
      off += static_cast<uint64_t>(got);
      r->bytes += static_cast<uint64_t>(got);
      if (got == 0) break;
    }
    ::close(fd);
  }
  return absl::OkStatus();
}

absl::Status RunSequential(const Case& c, const std::vector<std::string>& files,
                           CountingFs* fs, Result* r) {
  binlog::io::SequentialReaderOptions o;
  o.window = c.buffer_kib << 10;
  o.prefetch = c.prefetch;
  o.will_need = c.hints;
  o.sequential_hint = c.hints;
  binlog::io::SequentialReader reader(o);
  for (const auto& p : files) {
    auto f = fs->OpenReadable(p);
    if (!f.ok()) return f.status();
    reader.Reset(f->get());
    for (uint64_t off = 0;;) {
      absl::string_view v;
      absl::Status s = reader.Peek(off, reader.window(), &v);
      if (!s.ok()) return s;
      r->sink ^= Consume(v.data(), v.size());
      off += v.size();
      r->bytes += v.size();
      if (v.size() < reader.window()) break;
    }
    reader.Reset(nullptr);
  }
  r->io = reader.stats();
  return absl::OkStatus();
}

absl::Status RunReader(const Case& c, const std::string& dir, CountingFs* fs,
                       Result* r) {
  binlog::ReaderOptions o;
  o.buffer_size = c.buffer_kib << 10;
  o.prefetch = c.prefetch;
  // Encrypted: decrypted above the counting file system (so its counts
  // are of the disk reads), keys from the log's keyring.txt.
  std::unique_ptr<binlog::MemoryKeyring> keyring;
  std::unique_ptr<FileSystem> decrypting;
  FileSystem* read_fs = fs;
  if (c.impl == "binlog_reader_encrypted") {
    auto k = binlog::LoadKeyringFile(nullptr, dir + "/keyring.txt");
    if (!k.ok()) return k.status();
    keyring = std::move(*k);
    decrypting = binlog::NewDecryptingFileSystem(fs, keyring.get());
    read_fs = decrypting.get();
  }
  auto reader = binlog::Reader::OpenDirectory(dir, "binlog", o, read_fs);
  if (!reader.ok()) return reader.status();
  binlog::Event ev;
  for (;;) {
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) return s;
    ++r->events;
    r->bytes += ev.data.size();
    r->sink += ev.header.type;
  }
  if (!(*reader)->torn_tails().empty()) {
    return absl::DataLossError(absl::StrCat(
        "unexpected torn tail: ", (*reader)->torn_tails().front().reason));
  }
  r->io = (*reader)->io_stats();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Environment.

void PrintEnvironment(const std::string& dir) {
  struct utsname u;
  ::uname(&u);
  std::fprintf(stderr, "read_bench: %s\n",
               absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(),
                                absl::UTCTimeZone())
                   .c_str());
  std::fprintf(stderr, "  kernel:   %s %s %s\n", u.sysname, u.release,
               u.machine);
  std::fprintf(stderr, "  cpu:      %s, %u hardware threads\n",
               CpuModel().c_str(), std::thread::hardware_concurrency());
  std::fprintf(stderr, "  mount:    %s\n", MountOf(dir).c_str());
  std::fprintf(stderr, "  loadavg:  %s\n",
               ReadFirstLine("/proc/loadavg").c_str());
  std::fprintf(stderr, "  read_ahead_kb of the disk: see "
               "/sys/block/<dev>/queue/read_ahead_kb\n");
#if defined(NDEBUG) && defined(__OPTIMIZE__)
  std::fprintf(stderr, "  build:    optimized, assertions off\n");
#else
  std::fprintf(stderr,
               "  WARNING: built without NDEBUG or without optimization; "
               "numbers are not representative (use -c opt)\n");
#endif
}

std::string Row(const Case& c, const std::string& cache, int rep,
                const Result& r, double resident, bool jsonl) {
  const double gib = static_cast<double>(r.file_bytes) / kGiB;
  const double mb_s = static_cast<double>(r.bytes) / r.seconds / 1e6;
  const double reads_gib = static_cast<double>(r.reads) / gib;
  const double adv_gib = static_cast<double>(r.advises) / gib;
  if (jsonl) {
    std::string s = absl::StrFormat(
        "{\"mode\":\"%s\",\"case\":\"%s\",\"impl\":\"%s\",\"buffer_kib\":%zu,"
        "\"prefetch\":%s,\"cache\":\"%s\",\"rep\":%d,\"mb_s\":%.1f,"
        "\"syscalls_per_gib\":%.1f,\"reads_per_gib\":%.1f,"
        "\"advises_per_gib\":%.1f,\"seconds\":%.3f,\"cpu_s\":%.3f,"
        "\"mb_per_cpu_s\":%.1f,\"resident_before\":%.3f,\"bytes\":%" PRIu64,
        c.mode, c.name, c.impl, c.buffer_kib, c.prefetch ? "true" : "false",
        cache, rep, mb_s, reads_gib + adv_gib, reads_gib, adv_gib, r.seconds,
        r.cpu_s, static_cast<double>(r.bytes) / r.cpu_s / 1e6, resident,
        r.bytes);
    if (c.mode == "reader") {
      absl::StrAppendFormat(&s, ",\"events\":%" PRIu64 ",\"events_s\":%.0f",
                            r.events,
                            static_cast<double>(r.events) / r.seconds);
    }
    if (c.impl == "sequential_reader" || c.impl == "binlog_reader") {
      absl::StrAppendFormat(
          &s,
          ",\"prefetch_hits\":%" PRIu64 ",\"prefetch_waits\":%" PRIu64
          ",\"prefetch_wait_ms\":%.1f",
          r.io.prefetch_hits, r.io.prefetch_waits,
          static_cast<double>(r.io.prefetch_wait_us) / 1000.0);
    }
    s += "}";
    return s;
  }
  return absl::StrFormat(
      "| %s | %s | %zu | %s | %s | %d | %.1f | %.1f | %s | %.2f | %.2f | %.3f |",
      c.mode, c.name, c.buffer_kib, c.prefetch ? "yes" : "no", cache, rep,
      mb_s, reads_gib + adv_gib,
      c.mode == "reader"
          ? absl::StrFormat("%.0f", static_cast<double>(r.events) / r.seconds)
          : std::string("-"),
      r.seconds, r.cpu_s, resident);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Sequential read throughput of a binlog, hot and cold; see "
      "benchmarks/read_bench.cc and benchmarks/README.md.");
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (absl::GetFlag(FLAGS_cleanup)) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) {
      std::fprintf(stderr, "read_bench: removing %s: %s\n", dir.c_str(),
                   ec.message().c_str());
      return 1;
    }
    std::fprintf(stderr, "read_bench: removed %s\n", dir.c_str());
    return 0;
  }
  const double size_gib = absl::GetFlag(FLAGS_size_gib);
  const int file_mib = absl::GetFlag(FLAGS_file_mib);
  if (!(size_gib > 0) || file_mib < 1 || file_mib > 4000) {
    std::fprintf(stderr, "read_bench: bad --size_gib or --file_mib\n");
    return 2;
  }
  const bool jsonl = absl::GetFlag(FLAGS_format) == "jsonl";
  if (!jsonl && absl::GetFlag(FLAGS_format) != "table") {
    std::fprintf(stderr, "read_bench: --format is jsonl or table\n");
    return 2;
  }
  std::vector<Case> cases;
  {
    std::string want = absl::GetFlag(FLAGS_cases);
    std::vector<std::string> names = absl::StrSplit(want, ',');
    for (const Case& c : AllCases()) {
      if (want == "all" ||
          std::find(names.begin(), names.end(), c.name) != names.end()) {
        cases.push_back(c);
      }
    }
    if (cases.empty()) {
      std::fprintf(stderr, "read_bench: no case matches --cases=%s\n",
                   want.c_str());
      return 2;
    }
  }
  std::vector<std::string> caches = absl::StrSplit(absl::GetFlag(FLAGS_cache), ',');
  for (const auto& c : caches) {
    if (c != "hot" && c != "cold") {
      std::fprintf(stderr, "read_bench: --cache is hot, cold or hot,cold\n");
      return 2;
    }
  }

  absl::Status s = EnsureLog(dir, size_gib, file_mib);
  if (!s.ok()) {
    std::fprintf(stderr, "read_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  auto files = LogFiles(dir);
  if (!files.ok()) {
    std::fprintf(stderr, "read_bench: %s\n", files.status().ToString().c_str());
    return 1;
  }
  // The encrypted copy, only when an encrypted case runs.
  const std::string enc_dir = dir + "_enc";
  absl::StatusOr<std::vector<std::string>> enc_files = std::vector<std::string>();
  for (const Case& c : cases) {
    if (c.impl != "binlog_reader_encrypted" || !enc_files->empty()) continue;
    s = EnsureLog(enc_dir, size_gib, file_mib, /*encrypted=*/true);
    if (s.ok()) enc_files = LogFiles(enc_dir);
    if (!s.ok() || !enc_files.ok()) {
      std::fprintf(stderr, "read_bench: %s\n",
                   (s.ok() ? enc_files.status() : s).ToString().c_str());
      return 1;
    }
  }
  uint64_t file_bytes = 0;
  for (const auto& p : *files) file_bytes += *FileSystem::Default()->FileSize(p);
  PrintEnvironment(dir);
  std::fprintf(stderr, "  log:      %zu files, %.3f GiB\n", files->size(),
               static_cast<double>(file_bytes) / kGiB);
  if (!jsonl) {
    std::printf("| mode | case | buffer KiB | prefetch | cache | rep | MB/s | "
                "syscalls/GiB | events/s | s | CPU s | resident |\n"
                "|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
  }
  const int reps = std::max(1, absl::GetFlag(FLAGS_repetitions));
  for (int rep = 0; rep < reps; ++rep) {
    for (const std::string& cache : caches) {
      for (const Case& c : cases) {
        const bool enc = c.impl == "binlog_reader_encrypted";
        const std::vector<std::string>& case_files = enc ? *enc_files : *files;
        s = cache == "cold" ? Evict(case_files) : Warm(case_files);
        if (!s.ok()) {
          std::fprintf(stderr, "read_bench: preparing %s: %s\n", cache.c_str(),
                       s.ToString().c_str());
          return 1;
        }
        double resident = ResidentShare(case_files);
        if (cache == "cold" && resident > 0.05) {
          std::fprintf(stderr, "  WARNING: %.1f%% of the log still cached "
                       "after eviction\n", resident * 100);
        }
        if (cache == "hot" && resident < 0.95) {
          std::fprintf(stderr, "  WARNING: only %.1f%% of the log cached "
                       "after warming (memory pressure?)\n", resident * 100);
        }
        CountingFs fs;
        Result r;
        r.file_bytes = file_bytes;
        double cpu0 = CpuSeconds();
        absl::Time t0 = absl::Now();
        if (c.impl == "pread") {
          s = RunPread(c, *files, &fs, &r);
        } else if (c.impl == "pread_fadv_random") {
          s = RunPreadNoReadahead(c, *files, &fs, &r);
        } else if (c.impl == "sequential_reader") {
          s = RunSequential(c, *files, &fs, &r);
        } else {
          s = RunReader(c, enc ? enc_dir : dir, &fs, &r);
        }
        r.seconds = absl::ToDoubleSeconds(absl::Now() - t0);
        r.cpu_s = CpuSeconds() - cpu0;
        if (!s.ok()) {
          std::fprintf(stderr, "read_bench: case %s: %s\n", c.name.c_str(),
                       s.ToString().c_str());
          return 1;
        }
        r.reads = fs.reads.load();
        r.advises = fs.advises.load();
        std::printf("%s\n", Row(c, cache, rep, r, resident, jsonl).c_str());
        std::fflush(stdout);
        if (r.sink == 42) std::fprintf(stderr, " ");  // keep the work
      }
    }
  }
  std::fprintf(stderr, "  loadavg at the end: %s\n",
               ReadFirstLine("/proc/loadavg").c_str());
  return 0;
}
