// File: binlog/sync_counters.h (internal)
//
// SyncCounters: the fdatasync calls of a log's files and the time spent in
// them (LogStats::fsyncs, fsync_micros), counted by whichever thread syncs
// (the pipeline's stages, the rotation thread). Thread-safe (relaxed
// counters: statistics only).

#ifndef BINLOG_BINLOG_SYNC_COUNTERS_H_
#define BINLOG_BINLOG_SYNC_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

struct SyncCounters {
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<uint64_t> micros{0};

  // f->Sync(), counted.
  absl::Status TimedSync(io::WritableFile* f) {
    absl::Time t0 = absl::Now();
    absl::Status s = f->Sync();
    micros.fetch_add(static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - t0)),
                     std::memory_order_relaxed);
    fsyncs.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_SYNC_COUNTERS_H_
