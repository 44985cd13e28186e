// File: binlog/log_index.h (internal)
//
// LogIndex: the log's `<basename>.index` (which files the log has) and its
// `<basename>.recovery` record (which sync policy each file was written
// under), and the one mutex that serializes index rewrites.
//
// The index names the files LiveLog lists, except the newest one while a
// rotation off the commit path has not made its header durable (the
// "unindexed file"; see Options::background_rotation): a crash then leaves
// that file unindexed, and Open adopts it if it holds transactions.
//
// Thread safety: thread-safe. mu() is held by whoever rewrites the index
// (rotation, the rotation thread's close, purge, Reset, Close's final
// state change), never across a commit's I/O.
// Errors: the I/O errors of writing the index (write, fdatasync, rename,
// directory fsync: binlog/index_file.h).
// Lifetime: `fs` and `live` must outlive it; set_directory() before the
// first write.

#ifndef BINLOG_BINLOG_LOG_INDEX_H_
#define BINLOG_BINLOG_LOG_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "binlog/live_log.h"
#include "binlog/options.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

class LogIndex {
 public:
  // `file_mode`: the permission bits of the files it writes
  // (Options::file_mode).
  LogIndex(io::FileSystem* fs, std::string dir, std::string basename,
           LiveLog* live, uint32_t file_mode)
      : fs_(fs), dir_(std::move(dir)), basename_(std::move(basename)), live_(live),
        file_mode_(file_mode) {}

  LogIndex(const LogIndex&) = delete;
  LogIndex& operator=(const LogIndex&) = delete;

  // The log directory's handle (for the fsyncs after each rewrite).
  void set_directory(io::Directory* dir) { dir_handle_ = dir; }
  io::Directory* directory() const { return dir_handle_; }

  sync::Mutex* mu() ABSL_LOCK_RETURNED(mu_) { return &mu_; }

  // Rewrites the index with LiveLog's files (all but the unindexed one).
  absl::Status WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A new file becomes the newest: listed for readers, and either named by
  // the index now or, `deferred` (a rotation off the commit path), once
  // MarkIndexed is called after its header is durable.
  absl::Status AddFile(uint64_t number, bool deferred) ABSL_LOCKS_EXCLUDED(mu_);

  // The deferred file `number` has a durable header: the index names it.
  absl::Status MarkIndexed(uint64_t number) ABSL_LOCKS_EXCLUDED(mu_);

  // The newest file while the index does not name it yet (0: none).
  uint64_t unindexed_file() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return unindexed_file_;
  }

  // Writes `numbers` as the index (Open's recovery steps, which run before
  // LiveLog holds the files).
  absl::Status WriteExactly(const std::vector<uint64_t>& numbers);

  // Makes `<basename>.recovery` cover files from `first_new_file` on with
  // the policy and unsynced window of `options` (durable before that file
  // exists: its commits rely on it); records of files no longer in
  // `indexed` are dropped. A missing or unreadable record file is
  // rewritten (it only loses the bound for older files).
  absl::Status RecordSyncPolicy(const Options& options, uint64_t first_new_file,
                                const std::vector<uint64_t>& indexed);

 private:
  io::FileSystem* const fs_;
  const std::string dir_;
  const std::string basename_;
  LiveLog* const live_;
  const uint32_t file_mode_;
  io::Directory* dir_handle_ = nullptr;

  sync::Mutex mu_;
  // The file the index file must not name yet: the newest one, after a
  // rotation off the commit path, until its header is durable.
  uint64_t unindexed_file_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_INDEX_H_
