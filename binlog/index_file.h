// File: binlog/index_file.h
//
// The `<basename>.index` file: the list of binlog files of a log, oldest
// first, one per line, in the format MySQL and MariaDB write
// ("./<basename>.000001\n"), and the file-name rules shared by the writer
// and the readers.
//
// Crash-safe update protocol: write the whole new list to
// `<basename>.index_crash_safe`, fdatasync it, rename it over `.index`, fsync
// the directory. The rename is atomic, so `.index` always holds a complete
// list. (MySQL unlinks `.index` before the rename; a crash in between leaves
// only the new copy, which ReadIndex reads when it is complete.)
//
// Thread safety: functions are thread-safe; concurrent writers of one index
// must be serialized by the caller.
// Errors: DataLoss for malformed content (with file and line), NotFound for
// a missing index, I/O errors from the FileSystem.

#ifndef BINLOG_BINLOG_INDEX_FILE_H_
#define BINLOG_BINLOG_INDEX_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/file_system.h"

namespace binlog {

// "<basename>.000042": the extension has at least 6 digits.
std::string BinlogFileName(absl::string_view basename, uint64_t number);
std::string IndexFileName(absl::string_view basename);
std::string IndexTempFileName(absl::string_view basename);

// If `name` is "<basename>.<digits>" (6 to 10 digits, a number of at most
// kMaxFileNumber), stores the number and returns true.
bool ParseBinlogFileName(absl::string_view basename, absl::string_view name,
                         uint64_t* number);

// The same rule for a name whose basename is not known: "<anything>.<digits>"
// splits into the basename (before the last '.') and the number. The one
// parser of binlog file names (the index, Open, the encrypted file system).
bool SplitBinlogFileName(absl::string_view name, absl::string_view* basename,
                         uint64_t* number);

// Largest file number a log may use (MySQL's limit).
inline constexpr uint64_t kMaxFileNumber = 0x7FFFFFFF;

// Parses index content. Every entry must name a file inside `dir` (either
// "./name", "name", or an absolute path whose directory is `dir`) that
// matches "<basename>.NNNNNN"; numbers must increase. Entries such as
// "../x" or "/etc/passwd" are rejected with DataLoss naming the line.
// `index_path` is used only in messages.
absl::StatusOr<std::vector<uint64_t>> ParseIndex(absl::string_view content,
                                                 absl::string_view dir,
                                                 absl::string_view basename,
                                                 absl::string_view index_path);

// Reads and parses `<dir>/<basename>.index`, or, when it does not exist, a
// complete (newline-terminated) `.index_crash_safe` left by a server that
// unlinks before renaming. Never changes the directory. NotFound if there is
// no usable index.
absl::StatusOr<std::vector<uint64_t>> ReadIndex(io::FileSystem* fs,
                                                const std::string& dir,
                                                const std::string& basename);

// Replaces the index with `numbers` using the crash-safe protocol. The new
// index is durable on return. `file_mode`: the permission bits of the new
// file (Options::file_mode), here and in the writers below.
absl::Status WriteIndex(io::FileSystem* fs, io::Directory* dir_handle,
                        const std::string& dir, const std::string& basename,
                        const std::vector<uint64_t>& numbers,
                        uint32_t file_mode = io::kDefaultFilePermissions);

// Reads a whole small file (index files, tests). Fails with
// ResourceExhausted above `max_size`.
// `<basename>.recovery`: how each file of the log was written, so that
// recovery knows how far past the last fdatasync a crash can have torn the
// file. One record per range of files: the records apply from their
// `first_file` up to the next record's. Text, one record a line:
//   binlog-recovery 1
//   file <first_file> sync <every_group|every_n_groups|never> window <bytes>
struct FileSyncRecord {
  uint64_t first_file = 0;
  std::string sync_policy;       // "every_group", "every_n_groups", "never"
  uint64_t unsynced_window = 0;  // Options::max_unsynced_bytes then
};
std::string SyncRecordFileName(absl::string_view basename);
// The records, oldest first; empty if the file does not exist. DataLoss
// naming the file for a malformed one.
absl::StatusOr<std::vector<FileSyncRecord>> ReadSyncRecords(
    io::FileSystem* fs, const std::string& dir, const std::string& basename);
// Replaces the file crash-safely (write a temporary, fdatasync, rename,
// directory fsync).
absl::Status WriteSyncRecords(io::FileSystem* fs, io::Directory* dir_handle,
                              const std::string& dir,
                              const std::string& basename,
                              const std::vector<FileSyncRecord>& records,
                              uint32_t file_mode = io::kDefaultFilePermissions);
// `<basename>.reset`: the intent record of Binlog::Reset (RESET MASTER),
// made durable before the first file is deleted and removed after the new
// first file is indexed; Open finishes a reset it finds. Text:
//   binlog-reset 1
//   first <number>
std::string ResetIntentFileName(absl::string_view basename);
// Crash-safe replace, as WriteSyncRecords.
absl::Status WriteResetIntent(io::FileSystem* fs, io::Directory* dir_handle,
                              const std::string& dir, const std::string& basename,
                              uint64_t first_file,
                              uint32_t file_mode = io::kDefaultFilePermissions);
// The first file number of an interrupted reset; NotFound if there is no
// intent record, DataLoss naming the file for a malformed one.
absl::StatusOr<uint64_t> ReadResetIntent(io::FileSystem* fs, const std::string& dir,
                                         const std::string& basename);

// `<basename>.sources`: where the files of a mirror copy came from
// (binlog/mirror_log.h, a copy that followed another server after a
// failover). One record per segment: from copy file `file` on, up to the
// next record's file, the files are server `server_id`'s, named from
// `source_file` on (copy file file + i is the source's file of number
// source_file's + i, same basename). Written only when the copy follows
// another server; the record is made durable before its first file is
// created. Files before the first record carry the source's own names
// (the copy's basename). Copies written by earlier versions hold a record
// per file: the same reading gives the same names. Text, one record a
// line:
//   binlog-sources 1
//   file <number> server <server_id> source <source file name>
struct SourceFileRecord {
  uint64_t file = 0;
  uint32_t server_id = 0;
  std::string source_file;  // "<source basename>.NNNNNN"
  friend bool operator==(const SourceFileRecord& a, const SourceFileRecord& b) {
    return a.file == b.file && a.server_id == b.server_id && a.source_file == b.source_file;
  }
};
std::string SourceMapFileName(absl::string_view basename);
// The record whose segment holds copy file `n` (the last with file <= n),
// or nullptr; and the source's name of copy file `n` under `records`
// (`basename`'s own name for a file before the first record).
const SourceFileRecord* SegmentOf(const std::vector<SourceFileRecord>& records, uint64_t n);
std::string SourceFileNameOf(const std::vector<SourceFileRecord>& records,
                             absl::string_view basename, uint64_t n);
// The longest source file name a record takes.
inline constexpr size_t kMaxSourceFileNameLength = 512;
// Whether `name` can be a record's source file name: a binlog file name
// ("<basename>.NNNNNN", SplitBinlogFileName) with a non-empty basename, of
// printable ASCII without whitespace or '/', at most
// kMaxSourceFileNameLength bytes. The writer (MirrorLog) refuses another
// server's file of any other name; ReadSourceMap refuses any other.
bool IsValidSourceFileName(absl::string_view name);
// The records, by increasing file number; empty if the file does not
// exist. DataLoss naming the file for a malformed one (numbers not
// increasing, a source name that is not IsValidSourceFileName).
absl::StatusOr<std::vector<SourceFileRecord>> ReadSourceMap(io::FileSystem* fs,
                                                            const std::string& dir,
                                                            const std::string& basename);
// Replaces the file crash-safely (write a temporary, fdatasync, rename,
// directory fsync).
absl::Status WriteSourceMap(io::FileSystem* fs, io::Directory* dir_handle,
                            const std::string& dir, const std::string& basename,
                            const std::vector<SourceFileRecord>& records,
                            uint32_t file_mode = io::kDefaultFilePermissions);

// The record that covers file `number`, or nullptr.
const FileSyncRecord* SyncRecordFor(const std::vector<FileSyncRecord>& records,
                                    uint64_t number);

absl::StatusOr<std::string> ReadSmallFile(io::FileSystem* fs,
                                          const std::string& path,
                                          size_t max_size = 64 << 20);

}  // namespace binlog

#endif  // BINLOG_BINLOG_INDEX_FILE_H_
