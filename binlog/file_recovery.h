// File: binlog/file_recovery.h (internal)
//
// The last step of recovering a file that was not closed cleanly, shared by
// the binlog (binlog/log.cc) and the relay log (binlog/relay_log.cc): cut
// the file after its last complete transaction, then clear the in-use flag
// of its Format_description, each step durable before the next.
//
// Thread safety: thread-compatible (the caller owns the file).

#ifndef BINLOG_BINLOG_FILE_RECOVERY_H_
#define BINLOG_BINLOG_FILE_RECOVERY_H_

#include <cstdint>
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

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_FILE_RECOVERY_H_
