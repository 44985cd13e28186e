// File: binlog/rotation_worker.h (internal)
//
// RotationWorker: the rotation thread of Options::background_rotation
// (with SyncPolicy::kEveryGroup). It takes two jobs off the commit path:
//   - preparing the next file ahead of time (RequestPrepare): created (a
//     spare renamed if one is ready) and its name made durable, so the
//     rotation only takes it (TakePrepared);
//   - closing the old file after a rotation the flush stage started, which
//     only wrote the old file's Rotate event and the new file's header
//     (HandOffClose): the old file is cut, synced, its in-use flag cleared
//     and synced; then, once the first group's fdatasync in the new file
//     made its header durable (OnSynced), the index names the new file
//     (LogIndex::MarkIndexed) and `on_file_closed` runs.
// Every rotation, Reset and Close first waits for it (WaitIdle), so it
// never touches a file the flush stage uses next.
//
// Thread safety: thread-safe. Its mutex is never held across I/O. OnSynced
// is called by the sync stage, the other calls by the pipeline's exclusive
// operations or the flush stage.
// Errors: a failed close is sticky: failed() turns true and WaitIdle
// returns the error (the log must then write nothing more).
// Lifetime: the file system, directory, preallocator, index and counters
// must outlive it; Stop() before they go.

#ifndef BINLOG_BINLOG_ROTATION_WORKER_H_
#define BINLOG_BINLOG_ROTATION_WORKER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "binlog/log_index.h"
#include "binlog/sync_counters.h"
#include "io/file_system.h"
#include "io/preallocator.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

class RotationWorker {
 public:
  struct Deps {
    io::FileSystem* fs = nullptr;
    io::Directory* dir = nullptr;
    std::string dir_path;
    std::string basename;
    io::Preallocator* preallocator = nullptr;  // may be null
    uint64_t preallocated_size = 0;
    bool trim_preallocated = true;
    uint32_t file_mode = io::kDefaultFilePermissions;  // of the files it creates
    LogIndex* index = nullptr;
    SyncCounters* syncs = nullptr;
    // After the index names the new file, with the closed file's number.
    std::function<void(uint64_t closed)> on_file_closed;
  };

  // A close handed off by a rotation.
  struct PendingClose {
    std::unique_ptr<io::WritableFile> old_file;
    uint64_t old_number = 0;
    uint64_t old_end = 0;     // after its Rotate event
    uint64_t new_number = 0;  // the active file (header not yet synced)
  };

  explicit RotationWorker(Deps deps) : deps_(std::move(deps)) {}
  ~RotationWorker() { Stop(); }

  RotationWorker(const RotationWorker&) = delete;
  RotationWorker& operator=(const RotationWorker&) = delete;

  void Start();
  // Stops the thread and removes a prepared file no rotation used.
  void Stop();

  // Asks for file `number` to be prepared (served unless one is prepared
  // already or a close failed).
  void RequestPrepare(uint64_t number);

  // The prepared file if it is file `number` (else nullptr): *from_spare,
  // *allocated (fallocated to the preallocated size, not a spare).
  std::unique_ptr<io::WritableFile> TakePrepared(uint64_t number, bool* from_spare,
                                                 bool* allocated);

  // Queues the close of the old file after a rotation.
  void HandOffClose(std::unique_ptr<PendingClose> job);

  // Waits until no close or preparation is in progress (a request not
  // started yet is dropped); returns the error of a close that failed. A
  // close still waiting for the new file's first sync gives up (every
  // caller runs with the pipeline drained: that sync happened or failed).
  absl::Status WaitIdle();

  // Removes a prepared file no rotation used (Reset numbers files anew).
  void DiscardPrepared();

  // The sync stage: an fdatasync of file `file` succeeded (its header and
  // groups are durable). Cheap unless the file is new.
  void OnSynced(uint64_t file) {
    if (synced_file_.load(std::memory_order_relaxed) < file) SyncedNewFile(file);
  }
  // Reset: file numbers start over.
  void ResetNumbering() { synced_file_.store(0, std::memory_order_seq_cst); }

  // A close failed: nothing more may be written.
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  uint64_t closes() const { return closes_.load(std::memory_order_relaxed); }
  uint64_t prepared_taken() const { return prepared_taken_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  void SyncedNewFile(uint64_t file);
  absl::Status FinishClose(PendingClose* job);
  absl::Status Prepare(uint64_t number, std::unique_ptr<io::WritableFile>* file,
                       bool* from_spare, bool* allocated);
  std::string PathOf(uint64_t number) const;

  const Deps deps_;
  std::thread thread_;

  // Guards the fields below (never held across I/O).
  sync::Mutex mu_;
  sync::CondVar cv_;
  bool stop_ = false;
  std::unique_ptr<PendingClose> close_;  // queued for the thread
  bool closing_ = false;     // a close queued or in progress
  bool preparing_ = false;   // a preparation in progress
  // Set by WaitIdle: a close still waiting for the new file's first sync
  // gives up (the group that should have synced it failed).
  bool give_up_ = false;
  uint64_t prepare_number_ = 0;  // requested, not yet served
  absl::Status error_;
  std::unique_ptr<io::WritableFile> prepared_file_;
  uint64_t prepared_number_ = 0;
  bool prepared_from_spare_ = false;
  bool prepared_allocated_ = false;

  // The newest file a sync-stage fdatasync succeeded on (its header and
  // groups durable); a close waits for it. Written by the sync stage
  // (seq_cst, paired with waits_for_sync_ so a waiting close is signalled).
  std::atomic<uint64_t> synced_file_{0};
  std::atomic<bool> waits_for_sync_{false};
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> closes_{0};
  std::atomic<uint64_t> prepared_taken_{0};
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_ROTATION_WORKER_H_
