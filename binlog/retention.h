// File: binlog/retention.h (internal)
//
// Retention: which of a log's files go, and when: PURGE BINARY LOGS TO
// (PurgeTo), PURGE BINARY LOGS BEFORE (PurgeBefore), and automatic expiry
// (Options::expire_after; binlog_expire_logs_seconds) on a thread of its
// own. A purge rewrites the index first (crash-safe: a crash leaves files
// Open removes), then removes the files, never the active file nor one a
// reader pinned. It owns the removal lock (held by a purge's removals, by a
// whole Reset and by a key rotation's header rewrites), the reset
// generation (a purge that looked at the files of an earlier generation
// does nothing), and the cache of closed files' last-event times.
//
// Thread safety: thread-safe. Never takes a pipeline role: commits go on
// while it runs. Lock order: LogIndex::mu() before GtidState::mu(); the
// removal lock is never held with LogIndex::mu() except by Reset, which
// takes the removal lock first.
// Lifetime: everything in Deps must outlive it; StopExpiry() before they go.

#ifndef BINLOG_BINLOG_RETENTION_H_
#define BINLOG_BINLOG_RETENTION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/gtid_state.h"
#include "binlog/live_log.h"
#include "binlog/log.h"
#include "binlog/log_index.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

// If the file at `path` ends with a Rotate (naming a file of the log
// `basename`) or Stop event, as every file a log closed does: true and that
// event's timestamp in *ts. Reads only the file's last few KiB.
absl::StatusOr<bool> ClosedFileEndTime(io::FileSystem* fs, const std::string& basename,
                                       const std::string& path, uint32_t* ts);

// The timestamp of the last event of the complete file at `path`: its
// closing Rotate or Stop (ClosedFileEndTime), else (a file that ends
// otherwise: a crash's last file, recovered; one another server wrote or
// a failover ended; a Rotate naming another log's file) read through, the
// last event's. Reads the whole file in the second case.
absl::StatusOr<uint32_t> FileLastEventTime(io::FileSystem* fs, const std::string& basename,
                                           const std::string& path);

class Retention {
 public:
  struct Deps {
    io::FileSystem* fs = nullptr;
    std::string dir;
    std::string basename;
    LogFlavor flavor = LogFlavor::kMySQL;
    LiveLog* live = nullptr;
    LogIndex* index = nullptr;
    GtidState* gtids = nullptr;
    const std::atomic<bool>* closed = nullptr;  // the log's Close flag
    absl::Duration expire_after = absl::ZeroDuration();
    std::function<uint32_t()> now;  // the clock of the log's events
  };

  explicit Retention(Deps deps) : deps_(std::move(deps)) {}
  ~Retention() { StopExpiry(); }

  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;

  // Binlog::PurgeTo and Binlog::PurgeBefore (see binlog/log.h).
  absl::StatusOr<int> PurgeTo(uint64_t file_number);
  absl::StatusOr<PurgeResult> PurgeBefore(absl::Time cutoff);

  // Automatic expiry: a run at start and every expire_after / 8 (1 s to
  // 1 h), and one when Kick() says a file was closed. No-ops without
  // Options::expire_after.
  void StartExpiry();
  void StopExpiry();
  void Kick();

  // Held by a purge's removals, a whole Reset, and a key rotation's header
  // rewrites.
  sync::Mutex* removal_mu() ABSL_LOCK_RETURNED(removal_mu_) { return &removal_mu_; }

  // Reset, under LogIndex::mu() and removal_mu(): purges that looked at
  // the old files must not act on the new ones.
  void StartNewGeneration();
  // Reset, once the old files are gone from the file list: their cached
  // last-event times go (a purge that read an old file's time between the
  // generation's start and the list's reset must not leave it for the new
  // file of the same number).
  void ForgetEventTimes();

  uint64_t files_expired() const { return files_expired_.load(std::memory_order_relaxed); }
  std::string last_expiry_error() const;

 private:
  absl::StatusOr<PurgeResult> PurgeUpTo(uint64_t file_number, uint64_t generation);
  // The timestamp of the last event of closed file `number` (cached: a
  // closed file does not change).
  absl::StatusOr<uint32_t> LastEventTime(uint64_t number, uint64_t generation);
  void ExpiryLoop();
  std::string PathOf(uint64_t number) const;

  const Deps deps_;

  // Bumped by every Reset (under the index mutex): a purge that looked at
  // the files of an earlier generation does nothing.
  std::atomic<uint64_t> generation_{0};
  sync::Mutex removal_mu_;
  sync::Mutex last_event_mu_;
  std::map<uint64_t, uint32_t> last_event_time_ ABSL_GUARDED_BY(last_event_mu_);

  sync::Mutex expiry_mu_;
  sync::CondVar expiry_cv_;
  bool expiry_stop_ ABSL_GUARDED_BY(expiry_mu_) = false;
  bool expiry_kicked_ ABSL_GUARDED_BY(expiry_mu_) = false;
  std::thread expiry_thread_ ABSL_GUARDED_BY(expiry_mu_);
  std::atomic<uint64_t> files_expired_{0};
  mutable sync::Mutex expiry_error_mu_;
  std::string last_expiry_error_ ABSL_GUARDED_BY(expiry_error_mu_);
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_RETENTION_H_
