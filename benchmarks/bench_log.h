// File: benchmarks/bench_log.h
//
// Helpers shared by the read benchmarks (read_bench, lagging_replica_bench):
// a multi-GiB binlog written once through binlog::Binlog and reused, page
// cache control (evict without privileges, warm, measure residency), a
// counting FileSystemWrapper, and environment probes.
//
// Thread safety: CountingFs is thread-safe; the functions are
// thread-compatible. Errors: absl::Status naming the path.

#ifndef BINLOG_BENCHMARKS_BENCH_LOG_H_
#define BINLOG_BENCHMARKS_BENCH_LOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "binlog/transaction.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"

namespace binlog_bench {

using binlog::io::AccessHint;
using binlog::io::FileSystem;
using binlog::io::RandomAccessFile;

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Counts Read and Advise calls of every file it opens (each is one system
// call on the POSIX file system, barring EINTR and short reads).
class CountingFs : public binlog::io::FileSystemWrapper {
 public:
  CountingFs() : FileSystemWrapper(FileSystem::Default()) {}
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> advises{0};

  class File : public binlog::io::RandomAccessFileWrapper {
   public:
    File(std::unique_ptr<RandomAccessFile> f, CountingFs* fs)
        : RandomAccessFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Read(uint64_t offset, size_t n, char* scratch,
                      size_t* got) const override {
      fs_->reads.fetch_add(1, std::memory_order_relaxed);
      return RandomAccessFileWrapper::Read(offset, n, scratch, got);
    }
    absl::Status Advise(uint64_t offset, uint64_t len,
                        AccessHint hint) override {
      fs_->advises.fetch_add(1, std::memory_order_relaxed);
      return RandomAccessFileWrapper::Advise(offset, len, hint);
    }

   private:
    CountingFs* fs_;
  };

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    auto f = target()->OpenReadable(path);
    if (!f.ok()) return f.status();
    return std::unique_ptr<RandomAccessFile>(new File(std::move(*f), this));
  }
};

// One row-based transaction of the benchmark mix into `txn` (cleared
// first): Anonymous_gtid, Query BEGIN, Table_map, 1-4 Write_rows, Xid.
// Write_rows sizes: 60% 100-700 B, 30% 0.7-8 KiB, 9.9% 8-64 KiB, 0.1%
// 2-8 MiB. Bodies are row-like: short random runs between repeated bytes.
void BuildTransaction(binlog::TransactionBuffer* txn, std::mt19937_64* rng,
                      uint64_t seq);

// Makes sure `dir` holds a log "binlog" of about `size_gib` GiB written with
// BuildTransaction (files of `file_mib` MiB, synced), reusing one a
// previous run left there (same size and generator version, recorded in
// dir/read_bench.meta); otherwise removes `dir` and writes it. With
// `encrypted`, the same transactions into an encrypted log (Options::
// encryption), whose keys are kept in dir/keyring.txt (LoadKeyringFile).
absl::Status EnsureLog(const std::string& dir, double size_gib, int file_mib,
                       bool encrypted = false);

// Paths of the log's files, from its index.
absl::StatusOr<std::vector<std::string>> LogFiles(const std::string& dir);

// Share of the files' bytes in the page cache (mincore), -1 on error.
double ResidentShare(const std::vector<std::string>& files);

// fdatasync + posix_fadvise(DONTNEED) on each file: drops their clean pages
// from the page cache without privileges.
absl::Status Evict(const std::vector<std::string>& files);

// Reads the files once (8 MiB reads) so they are in the page cache.
absl::Status Warm(const std::vector<std::string>& files);

// Process user + system CPU seconds (all threads).
double CpuSeconds();

std::string ReadFirstLine(const std::string& path);
std::string CpuModel();
// "<device> on <mount point> type <fs>" for the mount holding `dir`.
std::string MountOf(const std::string& dir);

}  // namespace binlog_bench

#endif  // BINLOG_BENCHMARKS_BENCH_LOG_H_
