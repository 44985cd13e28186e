// File: io/fault_injection_file_system.h  (tests only)
//
// FaultInjectionFileSystem: a FileSystemWrapper that remembers what a power
// cut would take back, can cut the power, and can fail chosen calls.
//
// What it tracks (the model is strict POSIX, not what one file system
// happens to do):
//   - per file, every change since the file's last successful Sync() or
//     SyncAll() (writes, truncations, growth by Allocate without keep_size),
//     as (offset, bytes) records over an in-memory copy of the file's
//     content. Sync makes the changes that were made before it started
//     durable; changes made while it ran stay unsynced.
//   - per directory, every entry change (create, rename, remove) since the
//     directory's last successful Directory::Sync(). A file whose creation
//     was never made durable by a directory sync disappears in a power cut
//     even if its data was synced (leveldb's fault test models the same).
//   - a failed Sync (injected) loses the changes it should have made
//     durable, for good: a later successful Sync does not bring them back.
//     This is Linux's behaviour after a writeback error (the pages are
//     marked clean), the reason the log must never retry an fdatasync.
//     The error is also reported once through every other writable handle
//     of the file that was open at the time (its next Sync fails), as
//     Linux reports a writeback error to each open file description.
// Reads go to the real files, so data that was written but not synced is
// readable before the crash, as POSIX says.
//
// Power cut: Freeze() (or a crash point, FreezeAfter()) makes every later
// call fail, so the state of the "crashed" process is fixed. Then, with no
// call in progress, SimulatePowerLoss() rewrites the real files to what a
// power cut can leave (see PowerLossOptions), undoes the unsynced entry
// changes, forgets all tracking and unfreezes: the directory is now the
// "rebooted" disk, to be opened through this wrapper again or through the
// POSIX file system.
//
// Fault injection: InjectFault() fails the Nth call of a kind of operation
// (optionally only on paths containing a substring) with an I/O error, a
// "no space" error or a short write. Injected errors say "injected".
//
// Limits: paths are compared as strings, so use one spelling per file
// (the library joins dir + "/" + name consistently). Directories themselves
// (CreateDirectory) and lock files are not tracked: they are assumed to be
// durable. A rename is made durable by a sync of the target's directory.
// Files are mirrored in memory: meant for test-sized logs.
//
// Thread safety: thread-safe, as FileSystem requires. Calls on different
// files do not serialize on each other's I/O.

#ifndef BINLOG_IO_FAULT_INJECTION_FILE_SYSTEM_H_
#define BINLOG_IO_FAULT_INJECTION_FILE_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"
#include "sync/mutex.h"

namespace binlog {
namespace io {

// Operations a fault can target.
enum class FaultOp {
  kWrite,         // WritableFile::Write and WriteV
  kSync,          // WritableFile::Sync and SyncAll
  kAllocate,      // WritableFile::Allocate
  kTruncate,      // WritableFile::Truncate
  kOpenWritable,  // FileSystem::OpenWritable
  kRename,        // FileSystem::Rename
  kRemove,        // FileSystem::Remove
  kDirSync,       // Directory::Sync
  kTempFile,      // FileSystem::NewTempFile and every TempFile Write, Read
                  // and Truncate (path: "<dir>/<unnamed temporary file>").
                  // Temporary files are not tracked for power loss: they
                  // vanish in a crash anyway.
  kSetTime,       // FileSystem::SetModificationTime (durable on success,
                  // so a power cut keeps it: not tracked)
};
const char* FaultOpName(FaultOp op);

enum class FaultKind {
  kEio,         // absl::UnknownError("injected EIO ..."), nothing done
  kEnospc,      // absl::ResourceExhaustedError("injected ENOSPC ..."),
                // nothing done
  kShortWrite,  // kWrite only: a prefix of the data (half, at least one
                // byte when there are two or more) is written, then
                // ResourceExhausted "injected ENOSPC after a short write".
                // For other operations it acts as kEnospc.
};

struct FaultSpec {
  FaultOp op = FaultOp::kWrite;
  FaultKind kind = FaultKind::kEio;
  // Fail the nth matching call from now (1 = the next one).
  int nth = 1;
  // Only calls whose path contains this (empty: every path). For Rename,
  // either path; for kDirSync, the directory's path.
  std::string path_substr;
  // Keep failing every later matching call until ClearFaults() (a disk that
  // stays full, a device that went away).
  bool persistent = false;
};

struct PowerLossOptions {
  enum class Data {
    // Every unsynced change of every file is lost.
    kDropUnsynced,
    // Per file, a random prefix of its unsynced changes survives (in the
    // order they were made), the change at the cut only partly (a random
    // byte prefix).
    kKeepRandomPrefix,
    // Per file, every unsynced change survives except the last sector
    // (512 bytes, file-aligned) the last change touched, which is torn: a
    // random prefix of its new bytes persisted, the rest is what was there
    // before.
    kTearLastSector,
    // Per file, each 512-byte piece of each unsynced change survives or not
    // at random (pages written back out of order); the size may or may not
    // have grown (holes read as zeros).
    kRandomSectors,
  };
  Data data = Data::kDropUnsynced;
  // If true, a random prefix of each directory's unsynced entry changes
  // survives (journaled file systems commit them in order); if false every
  // unsynced create, rename and remove is undone.
  bool keep_random_dir_prefix = false;
  uint64_t seed = 0;
};

// What SimulatePowerLoss did (for test messages).
struct PowerLossReport {
  int files_reverted = 0;       // files whose content changed
  uint64_t bytes_dropped = 0;   // unsynced bytes that did not survive
  int entries_undone = 0;       // creates/renames/removes undone
  std::vector<std::string> log;  // one line per action
};

class FaultInjectionFileSystem final : public FileSystemWrapper {
 public:
  // `target` defaults to the POSIX file system; it must outlive this.
  explicit FaultInjectionFileSystem(FileSystem* target = nullptr);
  ~FaultInjectionFileSystem() override;

  FaultInjectionFileSystem(const FaultInjectionFileSystem&) = delete;
  FaultInjectionFileSystem& operator=(const FaultInjectionFileSystem&) = delete;

  // --- Faults -------------------------------------------------------------
  void InjectFault(const FaultSpec& spec) ABSL_LOCKS_EXCLUDED(mu_);
  void ClearFaults() ABSL_LOCKS_EXCLUDED(mu_);
  // Number of injected failures so far.
  uint64_t faults_fired() const { return faults_fired_.load(); }

  // --- Pause points -------------------------------------------------------
  // Called at the start of every mutating call (before the freeze check and
  // the fault check) with the operation and its path, on the calling
  // thread, without any lock of this file system held. Tests use it to stop
  // a thread at a chosen point (block in the hook until the test has set up
  // the interleaving it wants) instead of sleeping. kOpenWritable, kRename,
  // kRemove, kWrite, kSync, kAllocate, kTruncate, kDirSync, kTempFile and
  // kSetTime
  // calls are reported; an empty function clears the hook. Set it while no call is in
  // progress.
  using OpHook = std::function<void(FaultOp op, const std::string& path)>;
  void SetOpHook(OpHook hook) ABSL_LOCKS_EXCLUDED(mu_);

  // --- Power cut ----------------------------------------------------------
  // Every later call fails with UnknownError("injected: file system
  // frozen (power cut)"). Calls already past their check finish.
  void Freeze() ABSL_LOCKS_EXCLUDED(mu_);
  // Lets `ops` more mutating calls (writes, syncs, allocations,
  // truncations, opens for write, renames, removes, directory syncs)
  // through, then freezes: the next one fails and every later call too.
  void FreezeAfter(uint64_t ops) ABSL_LOCKS_EXCLUDED(mu_);
  bool frozen() const { return frozen_.load(); }
  // Mutating calls seen since construction (or the last power loss).
  uint64_t mutating_ops() const ABSL_LOCKS_EXCLUDED(mu_);

  // Applies a power cut to the real files (see PowerLossOptions), forgets
  // all tracking (what is on disk now is durable) and unfreezes. Writable
  // files opened before stay unusable (their calls fail).
  // REQUIRES: no call of this file system or its files is in progress.
  absl::StatusOr<PowerLossReport> SimulatePowerLoss(
      const PowerLossOptions& options) ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets all tracking without changing any file (everything is now
  // considered durable) and unfreezes. Same REQUIRES.
  void ResetState() ABSL_LOCKS_EXCLUDED(mu_);

  // --- Introspection (tests of the tests) ---------------------------------
  // Bytes of `path` changed and not yet durable (0 if none or unknown).
  uint64_t UnsyncedBytes(const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);
  // Unsynced entry changes (creates, renames, removes) of directory `dir`.
  int UnsyncedEntries(const std::string& dir) ABSL_LOCKS_EXCLUDED(mu_);
  // Calls made so far, per operation (successful or not).
  uint64_t calls(FaultOp op) const;

  // --- FileSystem ---------------------------------------------------------
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenWritable(
      const std::string& path, OpenMode mode,
      uint32_t permissions = kDefaultFilePermissions) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path) override;
  absl::Status CreateDirectory(
      const std::string& path,
      uint32_t permissions = kDefaultDirectoryPermissions) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Remove(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(
      const std::string& path) override;
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override;
  absl::StatusOr<bool> Exists(const std::string& path) override;
  absl::StatusOr<absl::Time> ModificationTime(const std::string& path) override;
  absl::Status SetModificationTime(const std::string& path, absl::Time t) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path,
      uint32_t permissions = kDefaultFilePermissions) override;
  absl::StatusOr<std::unique_ptr<TempFile>> NewTempFile(
      const std::string& dir) override;

  // Internal types, public so the .cc's helpers can name them.
  struct FileState;
  struct EntryChange;

 private:
  class File;
  class Dir;
  class Temp;
  friend class File;
  friend class Dir;
  friend class Temp;

  // Checks the freeze and crash point, counts the call and looks for an
  // injected fault. Returns OK to go on; sets `*short_write` (if not null)
  // when a short-write fault fires: the caller writes part, then fails.
  // `epoch` is the handle's epoch (kAnyEpoch for file-system calls): a
  // handle opened before a power loss fails.
  static constexpr uint64_t kAnyEpoch = ~0ull;
  absl::Status Admit(int op, const std::string& path,
                     const std::string& path2, uint64_t epoch,
                     bool* short_write) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status AdmitRead() const;
  // The tracked state of the file at `path`, created from the real file
  // (whose content is then considered durable) if unknown.
  std::shared_ptr<FileState> StateFor(const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordEntry(const std::string& dir, EntryChange change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DirSynced(const std::string& dir, size_t count)
      ABSL_LOCKS_EXCLUDED(mu_);
  size_t EntryCount(const std::string& dir) ABSL_LOCKS_EXCLUDED(mu_);

  std::atomic<bool> frozen_{false};
  std::atomic<uint64_t> faults_fired_{0};
  // Set by SetOpHook while no call is in progress; read without a lock.
  std::shared_ptr<const OpHook> hook_;
  // Per FaultOp, then one slot for other mutating calls (CreateDirectory).
  static constexpr int kOtherMutating = 10;
  std::atomic<uint64_t> calls_[11] = {};

  mutable sync::Mutex mu_;
  uint64_t ops_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t freeze_at_ ABSL_GUARDED_BY(mu_) = 0;  // 0: no crash point
  struct Rule {
    FaultSpec spec;
    int countdown = 0;
    bool fired = false;
  };
  std::vector<Rule> rules_ ABSL_GUARDED_BY(mu_);
  // Every file seen, by current path. A removed file's state lives on in
  // its kRemove entry change until the removal is durable (a power cut can
  // bring the file back).
  std::map<std::string, std::shared_ptr<FileState>> files_ ABSL_GUARDED_BY(mu_);
  // Unsynced entry changes per directory, oldest first.
  std::map<std::string, std::vector<EntryChange>> entries_
      ABSL_GUARDED_BY(mu_);
  // Incremented by every power loss / reset: handles of an older epoch fail.
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_FAULT_INJECTION_FILE_SYSTEM_H_
