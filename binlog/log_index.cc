// The log's index and sync-policy record. See binlog/log_index.h.

#include "binlog/log_index.h"

#include <utility>

#include "binlog/index_file.h"
#include "binlog/log_options.h"

namespace binlog {
namespace internal {

absl::Status LogIndex::WriteLocked() {
  std::vector<uint64_t> files = live_->Files();
  if (unindexed_file_ != 0 && !files.empty() && files.back() == unindexed_file_) {
    files.pop_back();  // its header is not durable yet
  }
  return WriteIndex(fs_, dir_handle_, dir_, basename_, files, file_mode_);
}

absl::Status LogIndex::AddFile(uint64_t number, bool deferred) {
  sync::MutexLock l(&mu_);
  live_->AddFile(number);
  if (deferred) {
    // Readers may follow the Rotate event to it; the index file names it
    // once its header is durable (MarkIndexed). A crash before that leaves
    // it unindexed: Open adopts it if it holds transactions.
    unindexed_file_ = number;
    return absl::OkStatus();
  }
  return WriteLocked();
}

absl::Status LogIndex::MarkIndexed(uint64_t number) {
  sync::MutexLock l(&mu_);
  if (unindexed_file_ == number) unindexed_file_ = 0;
  return WriteLocked();
}

absl::Status LogIndex::WriteExactly(const std::vector<uint64_t>& numbers) {
  return WriteIndex(fs_, dir_handle_, dir_, basename_, numbers, file_mode_);
}

absl::Status LogIndex::RecordSyncPolicy(const Options& options,
                                        uint64_t first_new_file,
                                        const std::vector<uint64_t>& indexed) {
  // A missing or unreadable record file is rewritten: it only loses the
  // bound for older files (recovery then cuts as for an unknown policy).
  auto read = ReadSyncRecords(fs_, dir_, basename_);
  std::vector<FileSyncRecord> records;
  if (read.ok()) records = std::move(*read);
  FileSyncRecord now;
  now.first_file = first_new_file;
  now.sync_policy = SyncPolicyName(options.sync_policy);
  now.unsynced_window = options.max_unsynced_bytes;
  if (read.ok() && !records.empty() &&
      records.back().first_file <= first_new_file &&
      records.back().sync_policy == now.sync_policy &&
      records.back().unsynced_window == now.unsynced_window) {
    return absl::OkStatus();  // the last record already covers the new file
  }
  // Records for files no longer in the log are dropped (the last one that
  // starts at or before the oldest file still covers it).
  uint64_t oldest = indexed.empty() ? first_new_file : indexed.front();
  std::vector<FileSyncRecord> kept;
  for (size_t i = 0; i < records.size(); ++i) {
    bool superseded = i + 1 < records.size() && records[i + 1].first_file <= oldest;
    if (!superseded && records[i].first_file < first_new_file) {
      kept.push_back(records[i]);
    }
  }
  kept.push_back(now);
  // Durable before the new file exists: its commits rely on it.
  return WriteSyncRecords(fs_, dir_handle_, dir_, basename_, kept, file_mode_);
}

}  // namespace internal
}  // namespace binlog
