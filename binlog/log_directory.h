// File: binlog/log_directory.h (internal)
//
// What a binlog and a relay log do alike with their directory: create it
// durably, and tell a file that holds nothing but header events (what a
// crash before the index named the file can leave).

#ifndef BINLOG_BINLOG_LOG_DIRECTORY_H_
#define BINLOG_BINLOG_LOG_DIRECTORY_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

// Creates `dir` if it is missing and makes its entry durable (an fsync of
// its parent: without it a power cut can take the directory, and every file
// in it, away). Errors: NotFound if it is missing and `create_if_missing`
// is false; the file system's errors.
// `mode`: the new directory's permission bits (Options::directory_mode).
absl::Status CreateLogDirectory(io::FileSystem* fs, const std::string& dir,
                                bool create_if_missing,
                                uint32_t mode = io::kDefaultDirectoryPermissions);

// True if the file at `path` holds no event but header events of the given
// types (possibly torn), or is shorter than a magic and one event header:
// it holds no transaction. `fs` reads the file in its plain form.
bool HoldsOnlyHeaderEvents(io::FileSystem* fs, const std::string& path,
                           std::initializer_list<uint8_t> header_types);

// True if every byte of the file at `path` from offset `from` to its end
// is zero (also when the file ends at or before `from`). `fs` reads the file
// as stored (for an encrypted file, the base file system: bytes never
// written read as zeros there, not as decrypted keystream). What a torn
// write leaves after the part that reached the disk. Errors: the file
// system's.
absl::StatusOr<bool> OnlyZerosFrom(io::FileSystem* fs, const std::string& path, uint64_t from);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_DIRECTORY_H_
