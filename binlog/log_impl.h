// File: binlog/log_impl.h (internal)
//
// BinlogImpl: everything behind a Binlog (binlog/log.h).
//
//
// Actors and state.
//   Committing threads: build a TransactionBuffer and Seal() it (checksums
//     with log_pos = 0) in their own thread, then enter the group-commit
//     pipeline (sync/group_commit.h). The pipeline's flush leader runs
//     FlushGroup: rotation if due, Place() of every transaction (final
//     log_pos and checksum correction, 8 bytes per event), one pwritev for
//     the group. Its sync leader runs SyncGroups (one fdatasync for every
//     group flushed meanwhile) and GroupDone (publish, ordered-commit
//     callback). One thread at a time holds each role, so the flush-stage
//     state (active_, end_, header_buf_, iov_) and the sync-stage state
//     (synced_end_, groups_since_sync_) need no mutex. Rotation, Sync() and
//     Close() run as exclusive pipeline operations: after every earlier
//     group is done, before any later one is flushed.
//   Readers: take no lock the writer holds during I/O. They read
//     LiveLog::published_ (one atomic word), the file list under
//     LiveLog::files_mu_ (held only for list operations, never during I/O),
//     and sleep on a sync::TailNotifier when they have caught up (one futex
//     wake for all of them, coalesced under load). A caught-up reader takes
//     its events from LiveLog's TailRing (binlog/tail_ring.h), which the
//     flush stage fills with each group it writes (Options::
//     reader_ring_bytes): no pread per reader. The writer never waits for
//     a reader there: a reader's pin that the next copy would overwrite
//     makes the ring start anew instead.
//   Purge: takes index_mu_ and files_mu_, never a pipeline role.
//   Rotation thread (Options::background_rotation, kEveryGroup only):
//     creates the next file ahead of time (PrepareNextFile: name durable),
//     and after a rotation Flush started, which only wrote the old file's
//     Rotate event and the new file's header, closes the old file (sync,
//     in-use flag, sync) and, once the first group's fdatasync made the new
//     header durable, writes the index. Takes rot_mu_ (never across I/O)
//     and index_mu_; every rotation, Reset and Close first waits for it
//     (WaitRotationIdle), so it never touches a file the flush stage uses
//     next.
//
// Close and errors.
//   Close() is the pipeline's closing operation: commits queued before it
//   finish, then it writes the Stop event (unless the log is poisoned) and
//   releases everything, inside the pipeline, so no later operation ever
//   runs on a closed log. Every wait (for a sync round, a drain) is
//   followed by a check of the pipeline's error: nothing is written after a
//   failed fdatasync (a second fdatasync would report success for lost
//   pages).
//
// The unsynced window (Options::max_unsynced_bytes). Under kEveryGroup the
//   pipeline never lets more than the window be written past the last
//   completed fdatasync (a larger transaction is written in window-sized
//   pieces, each synced), and `<basename>.recovery` records the window for
//   each file. Recovery uses it to tell a torn tail (damage within one
//   window of the first bad event) from corruption (a valid event beyond
//   it), which it refuses to cut.
//
// Invariants.
//   - published_ only moves forward, always to an event boundary, and only to
//     bytes that are durable under kEveryGroup (written under the other
//     policies).
//   - A file is listed in the index only after its header is durable and its
//     directory entry is synced. A transaction is written to a file only
//     after the file is listed in a durable index, or, after a rotation off
//     the commit path, to the file right after the last indexed one once
//     its name is durable (its header becomes durable with the transaction's
//     own fdatasync; the file before it may still be unclosed). Open adopts
//     such a file (AdoptUnindexedFile) and closes the one before it
//     (CloseUnclosedFile). So after a crash every acknowledged transaction
//     is in a file the index names once Open is done.
//   - After any I/O error in the serial section, error_ is set and nothing
//     more is written or published.

#ifndef BINLOG_BINLOG_LOG_IMPL_H_
#define BINLOG_BINLOG_LOG_IMPL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "binlog/gtid.h"
#include "binlog/gtid_state.h"
#include "binlog/index_file.h"
#include "binlog/live_log.h"
#include "binlog/log.h"
#include "binlog/log_index.h"
#include "binlog/log_recovery.h"
#include "binlog/logical_clock.h"
#include "binlog/master_keys.h"
#include "binlog/options.h"
#include "binlog/retention.h"
#include "binlog/gtid_index.h"
#include "binlog/rotation_worker.h"
#include "binlog/status_macros.h"
#include "binlog/sync_counters.h"
#include "binlog/transaction.h"
#include "binlog/xid_recovery.h"
#include "io/file_system.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

// Room kept below the 32-bit offset limit for the Rotate/Stop event.
constexpr uint64_t kEndReserve = 1024;
// The flush stage streams spilled transactions through a buffer of this
// size (one per log). Not tuned separately: half the default unsynced
// window, so a window is two chunks; with it a spilled 1 GiB transaction
// committed as fast as the same one in memory (benchmarks/README.md,
// "large_txn_bench").
constexpr size_t kSpillChunk = 4 << 20;
// Room Commit keeps for the header events of a new file on top of the
// largest header seen so far (Previous_gtids grows with the GTID state).
constexpr uint64_t kHeaderSlack = 64 << 10;

// Everything behind a Binlog: the commit pipeline (the flush, sync and
// commit stages, and the active file they write) and the owners it wires
// together. See the design comment at the top and binlog/README.md.
class BinlogImpl final : public sync::GroupCommitHooks {
 public:
  BinlogImpl(std::string dir, std::string basename, const Options& options);
  ~BinlogImpl() override;

  // Open = BeginOpen (no writes a crash could need again; scans the last
  // file, into *scan when not null) + FinishOpen (cut, flag, new file).
  absl::Status BeginOpen(XidRecoveryScan* scan);
  absl::Status FinishOpen();
  // After BeginOpen: the last file was not closed cleanly.
  bool needs_recovery() const { return plan_.cut.pending; }
  absl::StatusOr<CommitPosition> Commit(TransactionBuffer* txn);
  TransactionBufferOptions TransactionBufferOptionsFor() const;
  size_t writeset_history_size() const { return options_.writeset_history_size; }
  absl::Status Sync();
  absl::Status Rotate();
  absl::Status RotateEncryptionKey();
  absl::StatusOr<int> PurgeTo(uint64_t file_number) {
    return retention_->PurgeTo(file_number);
  }
  absl::StatusOr<PurgeResult> PurgeBefore(absl::Time cutoff) {
    return retention_->PurgeBefore(cutoff);
  }
  absl::Status Reset(uint64_t first_file_number);
  absl::Status Close();
  std::vector<LogFileInfo> ListFiles() const;
  CommitPosition VisibleEnd() const;
  LogStats stats() const;
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  LogFlavor flavor() const { return options_.flavor; }
  // Encrypted files (Options::keyring) get no GTID index: it would hold
  // their GTID states in clear.
  bool gtid_index_allowed() const { return crypt_fs_ == nullptr; }
  const Uuid& server_uuid() const { return options_.server_uuid; }

  const std::shared_ptr<LiveLog>& live() const { return live_; }
  io::FileSystem* fs() const { return fs_; }
  GtidState& gtids() { return gtids_; }
  const GtidState& gtids() const { return gtids_; }
  uint64_t CommitClock() const {
    return commit_clock_.load(std::memory_order_acquire);
  }

  const std::string dir_;
  const std::string basename_;
  RecoveryReport recovery_;

 private:
  // What BeginOpen found and FinishOpen acts on.
  struct OpenPlan {
    uint64_t reset_first = 0;  // an interrupted Reset's first file number
    std::vector<uint64_t> numbers;  // the indexed files
    uint64_t max_number = 0;        // new files number past it
    LastFileCut cut;                // what recovery cuts of the last file
  };

  // sync::GroupCommitHooks: the flush and sync stages.
  absl::Status Flush(sync::CommitGroup* g) override;
  absl::Status Sync(sync::CommitGroup* first, sync::CommitGroup* last) override;
  void GroupDone(sync::CommitGroup* g) override;

  // Open (log_open.cc).
  // Finishes a Reset a crash interrupted (its intent record exists).
  absl::Status FinishInterruptedReset(uint64_t first, std::vector<uint64_t>* on_disk);
  absl::Status RemoveInterruptedRotation(uint64_t number, bool* removed);
  // Recovery of a rotation done off the commit path.
  absl::Status AdoptUnindexedFile(std::vector<uint64_t>* numbers, uint64_t n,
                                  bool* adopted);
  RecoveryContext RecoveryContextFor() const;
  // FailedPrecondition if the newest file's flavor or layout is not one
  // this log may continue (see Options::mysql_layout).
  absl::Status CheckFilesLayout(uint64_t newest);

  // The commit path (log_write.cc).
  absl::Status WriteGroup(uint64_t offset);
  absl::Status WriteGroupStreaming(uint64_t offset);
  void PublishSynced(sync::CommitGroup* last);
  absl::Status AssignIdentity(TransactionBuffer* txn, uint64_t now_us,
                              uint64_t commit_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(gtids_.mu());
  void FillTransactions(sync::CommitGroup* g,
                        std::vector<CommittedTransaction>* out) const;

  // File lifecycle (log_files.cc).
  // deferred: a rotation off the commit path (Options::background_rotation):
  // the header is written but not synced, the file is listed for readers
  // but not yet in the index file, and nothing is published (the group
  // that follows does both with its own fdatasync).
  absl::Status StartNewFile(uint64_t number, bool at_startup, bool deferred = false);
  absl::Status CloseActiveFile(bool rotate, uint64_t next_number);
  absl::Status CloseInPipeline();
  // A GTID index removal's error goes to `index_error` (the reset goes on).
  absl::Status ResetNow(uint64_t first, absl::Status* index_error);
  // from_flush: a rotation Flush started because the file is full (the
  // group that follows syncs the new file); only those may go off the
  // commit path.
  absl::Status RotateNow(bool from_flush = false);
  // Waits until the rotation thread (if any) is idle; its sticky error.
  absl::Status WaitRotationIdle() {
    return rotation_ != nullptr ? rotation_->WaitIdle() : absl::OkStatus();
  }
  absl::Status SyncNow();
  absl::Status TimedSync() { return syncs_.TimedSync(active_.get()); }
  void StopFrontier();
  uint32_t Now() const;
  // *name_durable: the file was prepared ahead (its directory entry is
  // durable already).
  absl::StatusOr<std::unique_ptr<io::WritableFile>> CreateLogFile(
      uint64_t number, const std::string& path, bool* from_spare, bool* name_durable);
  absl::Status PoisonedStatus(const absl::Status& cause) const;
  std::string PathOf(uint64_t number) const {
    return io::JoinPath(dir_, BinlogFileName(basename_, number));
  }

  Options options_;
  // With a keyring, fs_ is crypt_fs_: binlog files read and written in
  // their plain form (binlog/encryption.h); base_fs_ is the caller's.
  io::FileSystem* base_fs_;
  std::unique_ptr<io::FileSystem> crypt_fs_;
  io::FileSystem* fs_;
  std::shared_ptr<LiveLog> live_;
  std::unique_ptr<io::FileLock> lock_;
  std::unique_ptr<io::Directory> dir_handle_;
  OpenPlan plan_;  // between BeginOpen and FinishOpen

  // The owners (see binlog/README.md).
  LogIndex index_;
  GtidState gtids_;
  std::unique_ptr<MasterKeys> keys_;       // with Options::keyring
  std::unique_ptr<Retention> retention_;
  std::unique_ptr<RotationWorker> rotation_;  // Options::background_rotation
  // Options::gtid_index_interval: indexes closed files off the commit path.
  std::unique_ptr<GtidIndexBuilder> gidx_;
  SyncCounters syncs_;

  // Stopped (not destroyed) by Close, so stats() may read it at any time.
  std::unique_ptr<io::Preallocator> preallocator_;
  uint64_t preallocated_size_ = 0;
  bool startup_file_created_ = false;
  // The file CreateLogFile made last was fallocated to preallocated_size_
  // (not a spare): the zero frontier may fill it.
  bool created_allocated_ = false;
  std::unique_ptr<sync::GroupCommitPipeline> pipeline_;

  // Flush stage: the file number a preparation was last requested for.
  uint64_t prepare_requested_for_ = 0;

  // Flush-stage state (one thread at a time by the pipeline's roles).
  std::unique_ptr<io::WritableFile> active_;
  // Zero-fills active_ ahead of end_ when it did not come from a spare.
  std::unique_ptr<io::ZeroFrontier> frontier_;
  uint64_t active_number_ = 0;
  uint64_t end_ = 0;         // written end of the active file
  uint64_t header_end_ = 0;  // end of the active file's header events
  TransactionBuffer header_buf_;
  std::vector<absl::string_view> iov_;
  std::vector<absl::string_view> piece_iov_;
  // Spilled transactions of the group being flushed: each one's spilled
  // events go in before iov_[index] (WriteGroupStreaming).
  struct SpillAt {
    size_t index;
    TransactionBuffer* txn;
  };
  std::vector<SpillAt> spills_;
  // The flush stage's buffer for streaming spilled transactions
  // (kSpillChunk bytes), allocated once per log by the first committer of
  // a spilled transaction, outside the serial section.
  std::once_flag spill_chunk_once_;
  std::unique_ptr<char[]> spill_chunk_;
  // The logical clock of the active file (flush stage), with the writeset
  // history under DependencyTracking::kWriteset.
  LogicalClock clock_;
  // Sync-stage state.
  uint64_t synced_end_ = 0;
  uint32_t groups_since_sync_ = 0;

  // kAfterWrite: the flush stage publishes a group only if no fdatasync
  // failed before; the sync stage sets the flag under the same mutex, so a
  // group written just after a failed sync is never shown to readers.
  sync::Mutex publish_mu_;
  bool sync_failed_ ABSL_GUARDED_BY(publish_mu_) = false;

  // Set (release) inside Close's pipeline operation; read (acquire) by
  // Commit/Sync/Rotate as a fast path (the pipeline is what guarantees
  // that nothing runs after Close).
  std::atomic<bool> closed_{false};
  // Largest header seen (header_end_ of any file), for Commit's room check;
  // written by the flush stage, read by committers (relaxed: a stale value
  // only makes the later per-request check in Flush do the refusing).
  std::atomic<uint64_t> largest_header_{0};

  uint32_t server_version_id_ = 0;  // immediate_server_version, e.g. 80036
  // (file << 32) | highest sequence_number whose ordered-commit callback
  // returned. Stored (release) by the commit stage, which runs one round at
  // a time in log order; loaded (acquire) by committers.
  std::atomic<uint64_t> commit_clock_{0};
  // Reused per group (flush stage / commit stage): no allocation once they
  // reached the largest group.
  std::vector<CommittedTransaction> flush_txns_;
  std::vector<CommittedTransaction> done_txns_;

  // Counters: written by the stage that owns them, read by stats().
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> rotations_{0};
  std::atomic<uint64_t> rotations_from_spare_{0};
  std::atomic<uint64_t> rotations_waited_{0};
  std::atomic<uint64_t> zero_fill_chunks_{0};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_IMPL_H_
