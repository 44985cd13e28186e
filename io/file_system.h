// File: io/file_system.h
//
// The file-system seam of the library. Everything in binlog/ that touches a
// file goes through these interfaces, so tests can substitute a counting,
// blocking or fault-injecting implementation (see io/file_system_wrapper.h).
//
// Defines:
//   WritableFile      a file opened for positioned writes (pwrite/pwritev)
//   RandomAccessFile  a file opened for positioned reads (pread)
//   Directory         a directory handle, for fsync after create/rename/unlink
//   FileLock          an exclusive advisory lock, released on destruction
//   TempFile          an unnamed scratch file (read and write), gone on close
//   FileSystem        the factory and namespace operations
//
// Errors: every call returns absl::Status. Messages name the operation and
// the path. Conventions: a missing file is NotFound; an existing file where a
// new one was requested is AlreadyExists; ENOSPC and EDQUOT are
// ResourceExhausted; a lock held elsewhere is Unavailable; EINTR is retried
// inside io/ and never reaches a caller; other errno values map through
// absl::ErrnoToStatus.
//
// Durability vocabulary used below:
//   - "visible": other readers of the file (in this or another process) see
//     the bytes; survives a process crash, not a power loss.
//   - "durable": survives power loss.

#ifndef BINLOG_IO_FILE_SYSTEM_H_
#define BINLOG_IO_FILE_SYSTEM_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace binlog {
namespace io {

// WritableFile: a file open for writing at explicit offsets. There is no
// append mode: the caller tracks its own end (a preallocated file is longer
// than its logical content, and pwrite on an O_APPEND fd ignores the offset).
//
// Thread safety: thread-compatible. Write/Sync from different threads on
// disjoint ranges are allowed by POSIX and by every implementation here, but
// the library itself serializes them.
// Lifetime: Close() should be called; the destructor closes silently.
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  // Writes all of `data` at `offset`; loops over short writes. Visible on
  // return, durable only after Sync().
  virtual absl::Status Write(uint64_t offset, absl::string_view data) = 0;

  // Writes the concatenation of `parts` at `offset` with as few system calls
  // as possible (pwritev). Same guarantees as Write().
  virtual absl::Status WriteV(uint64_t offset,
                              absl::Span<const absl::string_view> parts) = 0;

  // fdatasync: makes written data, and the file size needed to read it back,
  // durable. Does not make the directory entry durable (see Directory::Sync).
  // After a failed Sync the file's state is unknown; callers must not retry
  // and treat earlier writes as durable.
  virtual absl::Status Sync() = 0;

  // fsync: data and all metadata.
  virtual absl::Status SyncAll() = 0;

  // Reserves [offset, offset+len) on disk (fallocate). With keep_size the
  // file size does not change.
  virtual absl::Status Allocate(uint64_t offset, uint64_t len,
                                bool keep_size) = 0;

  // Sets the file size (ftruncate). Not durable until Sync().
  virtual absl::Status Truncate(uint64_t size) = 0;

  // Current size of the file as the file system reports it (fstat).
  virtual absl::StatusOr<uint64_t> Size() = 0;

  // Closes the file. Never retried (on Linux the fd is gone after close even
  // when it reports an error). Calls after Close() fail.
  virtual absl::Status Close() = 0;

  virtual const std::string& path() const = 0;
};

// Access pattern hints for RandomAccessFile::Advise.
enum class AccessHint {
  kNormal,
  kSequential,  // posix_fadvise SEQUENTIAL
  kWillNeed,    // start reading the range now
  kDontNeed,    // drop the range from the page cache
};

// RandomAccessFile: positioned reads.
//
// Thread safety: thread-safe (pread does not move a shared offset).
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // Reads up to `n` bytes at `offset` into `scratch`, looping over short
  // reads, and stores the count in `*bytes_read`. Fewer than `n` bytes means
  // end of file was reached.
  virtual absl::Status Read(uint64_t offset, size_t n, char* scratch,
                            size_t* bytes_read) const = 0;

  // Size of the file now (fstat); it may grow while the file is open.
  virtual absl::StatusOr<uint64_t> Size() const = 0;

  // Hint about the coming access pattern of [offset, offset+len) (len 0 =
  // to the end). Advisory; the default does nothing.
  virtual absl::Status Advise(uint64_t offset, uint64_t len, AccessHint hint) {
    (void)offset;
    (void)len;
    (void)hint;
    return absl::OkStatus();
  }

  virtual const std::string& path() const = 0;
};

// Directory: a handle used only to make directory entries durable.
class Directory {
 public:
  virtual ~Directory() = default;
  // fsync on the directory: makes creates, renames and unlinks of its
  // entries durable.
  virtual absl::Status Sync() = 0;
  virtual const std::string& path() const = 0;
};

// FileLock: an exclusive lock on a lock file; released on destruction.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// TempFile: an unnamed file for scratch data (a transaction buffer's spill
// file). It has no directory entry, so it vanishes when closed or when the
// process dies, and nothing about it is ever durable (no Sync).
//
// Thread safety: thread-compatible (one user at a time).
// Lifetime: the destructor closes it and releases its space.
class TempFile {
 public:
  virtual ~TempFile() = default;

  // Writes all of `data` at `offset` (pwrite). Readable by Read on return.
  virtual absl::Status Write(uint64_t offset, absl::string_view data) = 0;

  // Reads up to `n` bytes at `offset` (pread), looping over short reads;
  // fewer than `n` bytes means end of file.
  virtual absl::Status Read(uint64_t offset, size_t n, char* scratch,
                            size_t* bytes_read) const = 0;

  // Sets the size (ftruncate): Truncate(0) gives the space back.
  virtual absl::Status Truncate(uint64_t size) = 0;

  // "<dir>/<unnamed temporary file>", for messages.
  virtual const std::string& path() const = 0;
};

// Permission bits (before the process umask) of what a FileSystem creates,
// by default: files rw-r----- and directories rwxr-x---, as MySQL creates
// its binlogs and data directories (not readable by other users: a binlog
// holds every row the server changed). binlog::Options::file_mode and
// directory_mode choose others for a log.
inline constexpr uint32_t kDefaultFilePermissions = 0640;
inline constexpr uint32_t kDefaultDirectoryPermissions = 0750;

enum class OpenMode {
  kCreateNew,      // fail with AlreadyExists if the file exists (O_EXCL)
  kOpenExisting,   // fail with NotFound if the file does not exist
  kCreateOrTruncate,
};

// FileSystem: factory of files and namespace operations.
//
// Thread safety: thread-safe; implementations must allow concurrent calls.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // The process-wide POSIX file system. Never null; never destroyed.
  static FileSystem* Default();

  // A file created here (kCreateNew, kCreateOrTruncate of a missing
  // file) gets `permissions` (before the umask); an existing file keeps
  // its own. Implementations and wrappers pass `permissions` on (and
  // repeat the default, so calls through a derived type may omit it).
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> OpenWritable(
      const std::string& path, OpenMode mode,
      uint32_t permissions = kDefaultFilePermissions) = 0;

  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) = 0;

  virtual absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path) = 0;

  // Creates `path` (one level) if it does not exist, with `permissions`
  // (before the umask). OK if it exists (its permissions unchanged).
  virtual absl::Status CreateDirectory(
      const std::string& path,
      uint32_t permissions = kDefaultDirectoryPermissions) = 0;

  // Atomically replaces `to` with `from` (rename(2)). Durable only after the
  // directory is synced.
  virtual absl::Status Rename(const std::string& from,
                              const std::string& to) = 0;

  // Unlinks a file. Durable only after the directory is synced.
  virtual absl::Status Remove(const std::string& path) = 0;

  // Names (not paths) of the entries of a directory, without "." and "..",
  // in no particular order.
  virtual absl::StatusOr<std::vector<std::string>> ListDirectory(
      const std::string& path) = 0;

  // NotFound if missing.
  virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;

  // True if the path exists (any type).
  virtual absl::StatusOr<bool> Exists(const std::string& path) = 0;

  // The permission bits of `path` (st_mode & 07777). NotFound if missing.
  virtual absl::StatusOr<uint32_t> Permissions(const std::string& path) = 0;

  // The time `path` was last modified (st_mtime), as the file system keeps
  // it. NotFound if missing.
  virtual absl::StatusOr<absl::Time> ModificationTime(const std::string& path) = 0;

  // Sets the modification time of the existing file `path` to `t` (its
  // access time unchanged) and makes it durable: the file, opened for
  // reading only, is fsynced (POSIX: utimensat, then fsync; the caller
  // must own the file). Its content is untouched. NotFound if missing.
  virtual absl::Status SetModificationTime(const std::string& path, absl::Time t) = 0;

  // Takes an exclusive lock on `path` (created if needed, with
  // `permissions` before the umask). A second lock on the same path, from
  // this process or another, fails with Unavailable until the first
  // FileLock is destroyed.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path,
      uint32_t permissions = kDefaultFilePermissions) = 0;

  // Creates an unnamed temporary file in directory `dir` (POSIX:
  // open(O_TMPFILE), or, where the file system lacks it, mkstemp + unlink),
  // readable and writable by its owner alone (0600).
  // NotFound for a missing directory; ResourceExhausted when out of space.
  virtual absl::StatusOr<std::unique_ptr<TempFile>> NewTempFile(
      const std::string& dir) = 0;
};

// Joins a directory and a file name with one '/'.
std::string JoinPath(absl::string_view dir, absl::string_view name);

// The directory that holds `path`: "." for a name without '/', "/" for a
// file in the root; trailing slashes of `path` are ignored.
std::string DirName(absl::string_view path);

// The last component of `path` (all of it without a '/').
std::string BaseName(absl::string_view path);

// For files of secrets (key files, password hashes): FailedPrecondition
// when `path` has any of the permission bits `forbidden` (0007: other
// users; 0077: also its group), naming the path, its mode, `holds` (what
// the file holds, e.g. "the binlog encryption keys") and the chmod that
// fixes it. The file system's errors (NotFound for a missing file).
absl::Status CheckPrivateFile(FileSystem* fs, const std::string& path, uint32_t forbidden,
                              absl::string_view holds);

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_FILE_SYSTEM_H_
