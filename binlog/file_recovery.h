// File: binlog/file_recovery.h (internal)
//
// The last steps of a file's life, shared by every close of the binlog
// (the flush stage's, the rotation thread's, recovery's) and the relay
// log: cut the file at its end, make it durable, then clear the in-use flag
// of its Format_description and make that durable, each step durable
// before the next.
//
// Thread safety: thread-compatible (the caller owns the file).

#ifndef BINLOG_BINLOG_FILE_RECOVERY_H_
#define BINLOG_BINLOG_FILE_RECOVERY_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

// Truncates `path` (now `size` bytes) to `valid_end` if it is longer and
// fdatasyncs, then clears kFlagBinlogInUse in its Format_description (one
// byte in place; the FDE checksum is defined with the flag clear) and
// fdatasyncs again. A crash at any point leaves the file either still
// marked in use (recovery runs again) or cut and clean; never clean and
// uncut. Errors: the FileSystem's.
absl::Status CutAndClearInUse(io::FileSystem* fs, const std::string& path,
                              uint64_t size, uint64_t valid_end);

// Closing a file the log wrote, whose last event (Rotate or Stop) ends at
// `end`: cut what lies after `end` when `trim` (preallocated space: a
// closed file with zeros after its end fails mysqlbinlog), make the file
// durable with `sync`, clear kFlagBinlogInUse (the low flags byte becomes
// `flags_lo`), make that durable. The end event must be durable before the
// flag clears: pages reach the disk in any order before an fdatasync
// returns, and a cleared flag without its end event would claim a clean
// close for a file that ends in zeros or a torn event. Does not close `f`.
// Errors: the first failing step's (nothing after it is done).
absl::Status FinishFileClose(io::WritableFile* f, uint64_t end, bool trim, char flags_lo,
                             const std::function<absl::Status(io::WritableFile*)>& sync);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_FILE_RECOVERY_H_
