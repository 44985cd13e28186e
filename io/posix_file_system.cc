// POSIX implementation of io::FileSystem.
//
// Every descriptor is opened with O_CLOEXEC. Reads and writes loop on EINTR
// and on short transfers. Files are never opened with O_APPEND: the binlog
// writes at offsets it tracks, and on Linux pwrite on an O_APPEND descriptor
// ignores the offset. close() is never retried: on Linux the descriptor is
// released even when close reports an error, and a retry could close a
// descriptor another thread just opened.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "io/file_system.h"
#include "io/unique_fd.h"

namespace binlog {
namespace io {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view op,
                         absl::string_view path) {
  // ErrnoToStatus appends strerror(err) itself.
  std::string msg = absl::StrCat(op, " ", path);
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(absl::StrCat(msg, ": ", strerror(err)));
  }
  return absl::ErrnoToStatus(err, msg);
}

// All of `data` at `offset`, resuming after short writes and EINTR.
absl::Status PwriteFully(int fd, const std::string& path, uint64_t offset,
                         absl::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::pwrite(fd, p, left, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "pwrite", path);
    }
    if (n == 0) return absl::DataLossError(absl::StrCat("pwrite ", path, ": wrote 0 bytes"));
    p += n;
    left -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// Up to `n` bytes at `offset` (fewer only at the end of the file),
// resuming after short reads and EINTR; *bytes_read is set on errors too.
absl::Status PreadFully(int fd, const std::string& path, uint64_t offset,
                        size_t n, char* scratch, size_t* bytes_read) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, scratch + done, n - done,
                        static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      *bytes_read = done;
      return ErrnoStatus(errno, "pread", path);
    }
    if (r == 0) break;  // end of file
    done += static_cast<size_t>(r);
  }
  *bytes_read = done;
  return absl::OkStatus();
}

absl::Status FtruncateRetrying(int fd, const std::string& path, uint64_t size) {
  int r;
  do {
    r = ::ftruncate(fd, static_cast<off_t>(size));
  } while (r != 0 && errno == EINTR);
  if (r != 0) return ErrnoStatus(errno, "ftruncate", path);
  return absl::OkStatus();
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    return PwriteFully(fd_.get(), path_, offset, data);
  }

  absl::Status WriteV(uint64_t offset,
                      absl::Span<const absl::string_view> parts) override {
    // Build iovecs on the stack in batches of IOV_MAX-bounded size; resume
    // after a short write by skipping the bytes already written.
    constexpr size_t kBatch = IOV_MAX < 1024 ? IOV_MAX : 1024;
    size_t idx = 0;
    size_t skip = 0;  // bytes of parts[idx] already written
    while (idx < parts.size()) {
      struct iovec iov[kBatch];
      size_t cnt = 0;
      size_t total = 0;
      for (size_t i = idx; i < parts.size() && cnt < kBatch; ++i) {
        size_t off = (i == idx) ? skip : 0;
        if (parts[i].size() == off) continue;
        iov[cnt].iov_base = const_cast<char*>(parts[i].data() + off);
        iov[cnt].iov_len = parts[i].size() - off;
        total += iov[cnt].iov_len;
        ++cnt;
      }
      if (cnt == 0) break;
      ssize_t n = ::pwritev(fd_.get(), iov, static_cast<int>(cnt),
                            static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "pwritev", path_);
      }
      if (n == 0 && total > 0) {
        return absl::DataLossError(absl::StrCat("pwritev ", path_, ": wrote 0 bytes"));
      }
      offset += static_cast<uint64_t>(n);
      size_t adv = static_cast<size_t>(n);
      while (idx < parts.size() && adv > 0) {
        size_t rem = parts[idx].size() - skip;
        if (adv >= rem) {
          adv -= rem;
          ++idx;
          skip = 0;
        } else {
          skip += adv;
          adv = 0;
        }
      }
      while (idx < parts.size() && parts[idx].size() == skip) {
        ++idx;
        skip = 0;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (::fdatasync(fd_.get()) != 0) {
      return ErrnoStatus(errno, "fdatasync", path_);
    }
    return absl::OkStatus();
  }

  absl::Status SyncAll() override {
    if (::fsync(fd_.get()) != 0) return ErrnoStatus(errno, "fsync", path_);
    return absl::OkStatus();
  }

  absl::Status Allocate(uint64_t offset, uint64_t len,
                        bool keep_size) override {
    int mode = keep_size ? FALLOC_FL_KEEP_SIZE : 0;
    int r;
    do {
      r = ::fallocate(fd_.get(), mode, static_cast<off_t>(offset),
                      static_cast<off_t>(len));
    } while (r != 0 && errno == EINTR);
    if (r != 0) return ErrnoStatus(errno, "fallocate", path_);
    return absl::OkStatus();
  }

  absl::Status Truncate(uint64_t size) override {
    return FtruncateRetrying(fd_.get(), path_, size);
  }

  absl::StatusOr<uint64_t> Size() override {
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::Status Close() override {
    absl::Status s = fd_.Close();
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), " ", path_));
    return s;
  }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  UniqueFd fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}

  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    return PreadFully(fd_.get(), path_, offset, n, scratch, bytes_read);
  }

  absl::StatusOr<uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::Status Advise(uint64_t offset, uint64_t len, AccessHint hint) override {
    int advice = POSIX_FADV_NORMAL;
    switch (hint) {
      case AccessHint::kNormal: advice = POSIX_FADV_NORMAL; break;
      case AccessHint::kSequential: advice = POSIX_FADV_SEQUENTIAL; break;
      case AccessHint::kWillNeed: advice = POSIX_FADV_WILLNEED; break;
      case AccessHint::kDontNeed: advice = POSIX_FADV_DONTNEED; break;
    }
    int r = ::posix_fadvise(fd_.get(), static_cast<off_t>(offset),
                            static_cast<off_t>(len), advice);
    if (r != 0) return ErrnoStatus(r, "posix_fadvise", path_);
    return absl::OkStatus();
  }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  UniqueFd fd_;
};

class PosixTempFile final : public TempFile {
 public:
  PosixTempFile(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    return PwriteFully(fd_.get(), path_, offset, data);
  }

  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    return PreadFully(fd_.get(), path_, offset, n, scratch, bytes_read);
  }

  absl::Status Truncate(uint64_t size) override {
    return FtruncateRetrying(fd_.get(), path_, size);
  }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  UniqueFd fd_;
};

class PosixDirectory final : public Directory {
 public:
  PosixDirectory(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  absl::Status Sync() override {
    if (::fsync(fd_.get()) != 0) return ErrnoStatus(errno, "fsync dir", path_);
    return absl::OkStatus();
  }
  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  UniqueFd fd_;
};

// flock() locks belong to the open file description, so a second open of
// the lock file in the same process conflicts too (unlike fcntl locks, which
// a process shares across all its descriptors and loses when any of them
// closes).
class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  ~PosixFileLock() override { ::flock(fd_.get(), LOCK_UN); }

 private:
  UniqueFd fd_;
};

int OpenRetry(const char* path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

class PosixFileSystem final : public FileSystem {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenWritable(
      const std::string& path, OpenMode mode,
      uint32_t permissions = kDefaultFilePermissions) override {
    int flags = O_RDWR;
    switch (mode) {
      case OpenMode::kCreateNew: flags |= O_CREAT | O_EXCL; break;
      case OpenMode::kOpenExisting: break;
      case OpenMode::kCreateOrTruncate: flags |= O_CREAT | O_TRUNC; break;
    }
    int fd = OpenRetry(path.c_str(), flags, static_cast<mode_t>(permissions));
    if (fd < 0) return ErrnoStatus(errno, "open for write", path);
    return std::unique_ptr<WritableFile>(
        new PosixWritableFile(path, UniqueFd(fd)));
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDONLY, 0);
    if (fd < 0) return ErrnoStatus(errno, "open for read", path);
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("open for read ", path, ": is a directory"));
    }
    return std::unique_ptr<RandomAccessFile>(
        new PosixRandomAccessFile(path, UniqueFd(fd)));
  }

  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return ErrnoStatus(errno, "open directory", path);
    return std::unique_ptr<Directory>(new PosixDirectory(path, UniqueFd(fd)));
  }

  absl::Status CreateDirectory(
      const std::string& path,
      uint32_t permissions = kDefaultDirectoryPermissions) override {
    if (::mkdir(path.c_str(), static_cast<mode_t>(permissions)) != 0 &&
        errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir", path);
    }
    return absl::OkStatus();
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoStatus(errno, "rename", absl::StrCat(from, " -> ", to));
    }
    return absl::OkStatus();
  }

  absl::Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus(errno, "unlink", path);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> ListDirectory(
      const std::string& path) override {
    int fd = OpenRetry(path.c_str(), O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0) return ErrnoStatus(errno, "opendir", path);
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "fdopendir", path);
    }
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) {
        continue;
      }
      names.emplace_back(e->d_name);
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return ErrnoStatus(err, "readdir", path);
    return names;
  }

  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::StatusOr<bool> Exists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT) return false;
    return ErrnoStatus(errno, "stat", path);
  }

  absl::StatusOr<uint32_t> Permissions(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    return static_cast<uint32_t>(st.st_mode & 07777);
  }

  absl::StatusOr<absl::Time> ModificationTime(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    return absl::TimeFromTimespec(st.st_mtim);
  }

  absl::Status SetModificationTime(const std::string& path, absl::Time t) override {
    // Through a descriptor opened for reading: futimens needs ownership,
    // not write access, and fsync on it makes the inode's new time durable.
    int fd = OpenRetry(path.c_str(), O_RDONLY, 0);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    UniqueFd ufd(fd);
    struct timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_OMIT;  // the access time stays
    times[1] = absl::ToTimespec(t);
    if (::futimens(ufd.get(), times) != 0) return ErrnoStatus(errno, "futimens", path);
    if (::fsync(ufd.get()) != 0) return ErrnoStatus(errno, "fsync", path);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path,
      uint32_t permissions = kDefaultFilePermissions) override {
    int fd = OpenRetry(path.c_str(), O_RDWR | O_CREAT,
                       static_cast<mode_t>(permissions));
    if (fd < 0) return ErrnoStatus(errno, "open lock file", path);
    UniqueFd ufd(fd);
    int r;
    do {
      r = ::flock(ufd.get(), LOCK_EX | LOCK_NB);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      if (errno == EWOULDBLOCK) {
        return absl::UnavailableError(absl::StrCat(
            "lock ", path, ": held by another writer (one writer per log)"));
      }
      return ErrnoStatus(errno, "flock", path);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(std::move(ufd)));
  }

  absl::StatusOr<std::unique_ptr<TempFile>> NewTempFile(
      const std::string& dir) override {
    const std::string name = JoinPath(dir, "<unnamed temporary file>");
    int fd = -1;
#ifdef O_TMPFILE
    fd = OpenRetry(dir.c_str(), O_TMPFILE | O_RDWR, 0600);
    // EOPNOTSUPP / EISDIR / EINVAL: the file system has no O_TMPFILE
    // (tmpfs before 3.11, overlayfs on older kernels, NFS): fall back.
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      return ErrnoStatus(errno, "open(O_TMPFILE) in", dir);
    }
#endif
    if (fd < 0) {
      std::string tmpl = JoinPath(dir, ".binlog-spill-XXXXXX");
      do {
        fd = ::mkostemp(&tmpl[0], O_CLOEXEC);
      } while (fd < 0 && errno == EINTR);
      if (fd < 0) return ErrnoStatus(errno, "mkostemp in", dir);
      // Unlinked at once: a crash leaves nothing behind (the window between
      // the two calls is the only one, and the name says what it is).
      if (::unlink(tmpl.c_str()) != 0) {
        int err = errno;
        ::close(fd);
        return ErrnoStatus(err, "unlink", tmpl);
      }
    }
    return std::unique_ptr<TempFile>(new PosixTempFile(name, UniqueFd(fd)));
  }
};

}  // namespace

FileSystem* FileSystem::Default() {
  static FileSystem* fs = new PosixFileSystem();
  return fs;
}

absl::Status CheckPrivateFile(FileSystem* fs, const std::string& path, uint32_t forbidden,
                              absl::string_view holds) {
  absl::StatusOr<uint32_t> mode = fs->Permissions(path);
  if (!mode.ok()) return mode.status();
  if ((*mode & forbidden) == 0) return absl::OkStatus();
  const bool group = (forbidden & 0070) != 0;
  char m[16];
  snprintf(m, sizeof(m), "%04o", static_cast<unsigned>(*mode & 07777));
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": the file is open to ", group ? "its group or " : "", "other users (mode ", m,
      "); it holds ", holds, ": chmod ", group ? "go-rwx it (600)" : "o-rwx it (600 or 640)"));
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

std::string DirName(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace io
}  // namespace binlog
