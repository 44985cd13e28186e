// File: binlog/log_recovery.h (internal)
//
// Recovery of a log's files after a crash, as scans that take a file system
// and a directory, not the log: the scan of the last file (where it ends:
// the end of its last complete, checksum-valid transaction; what two-phase
// commit recovery needs), the bound that tells a torn tail from corruption
// (Options::max_unsynced_bytes, recorded per file in `<basename>.recovery`),
// the scan of earlier files a MariaDB Binlog_checkpoint names, and the
// close of a file a rotation off the commit path left unclosed.
//
// Only what a crash can explain is cut: damage followed by a valid event
// beyond the reach of a torn write is refused (DataLoss, nothing changed)
// unless RecoveryMode::kCutAtFirstBadEvent.
//
// Thread safety: thread-compatible functions; Open runs them alone.

#ifndef BINLOG_BINLOG_LOG_RECOVERY_H_
#define BINLOG_BINLOG_LOG_RECOVERY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/xid_recovery.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

// Where a log's files are and how to recover them.
struct RecoveryContext {
  io::FileSystem* fs = nullptr;  // reads files in their plain form
  std::string dir;
  std::string basename;
  RecoveryMode mode = RecoveryMode::kTornTailOnly;
  uint32_t server_id = 0;          // of the Rotate event CloseUnclosedFile writes
  std::function<uint32_t()> now;   // its timestamp
};

// What recovery cuts of the last file (ScanLastFile), done by
// CutAndClearInUse (binlog/file_recovery.h).
struct LastFileCut {
  bool pending = false;  // the file was not closed cleanly
  std::string path;
  uint64_t size = 0;
  uint64_t valid_end = 0;
};

// Scans the last file of `numbers` (read-only): fills *report and *cut,
// and with `scan`, what two-phase-commit recovery needs (the checkpointed
// earlier files included). A file closed cleanly needs nothing (cut->pending
// false). Errors: DataLoss for an unreadable Format_description, damage a
// crash cannot explain, or an event of a transaction recovery cannot read
// (naming the file and offset); NotFound for a Binlog_checkpoint naming a
// file not in `numbers`; I/O errors.
absl::Status ScanLastFile(const RecoveryContext& ctx, const std::vector<uint64_t>& numbers,
                          XidRecoveryScan* scan, RecoveryReport* report, LastFileCut* cut);

// A torn write under kEveryGroup damages at most `window` bytes after the
// last completed fdatasync. DataLoss if a valid event lies beyond what a
// torn write starting at `bad_at` can reach; OK otherwise.
absl::Status CheckBeyondTornTail(io::FileSystem* fs, const std::string& path,
                                 uint64_t bad_at, uint64_t window, bool checksums);

// Closes file `number`, which a rotation off the commit path left in use
// (every group in it synced; only its Rotate event can be missing or
// torn): cuts what follows its last complete transaction, writes the Rotate
// event naming file `next_number` if it is not there, clears the flag
// (each durable before the next). Errors: DataLoss if the file ends inside
// a transaction or holds damage a torn Rotate cannot explain.
absl::Status CloseUnclosedFile(const RecoveryContext& ctx, uint64_t number,
                               uint64_t next_number);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_RECOVERY_H_
