// Baselines for commit_bench. See baselines.h.
//
// Raw POSIX on purpose: these are the floors the binlog is measured against,
// so they must not share its io/ layer.

#include "benchmarks/baselines.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace binlog_bench {
namespace {

absl::Status Errno(int err, absl::string_view op, absl::string_view path) {
  return absl::ErrnoToStatus(err, absl::StrCat(op, " ", path));
}

#ifdef IOV_MAX
constexpr size_t kIovMax = IOV_MAX;
#else
constexpr size_t kIovMax = 1024;
#endif

}  // namespace

// --- TailFile ---------------------------------------------------------------

absl::StatusOr<std::unique_ptr<TailFile>> TailFile::Create(
    const std::string& path, Prealloc mode, uint64_t size) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Errno(errno, "open", path);
  std::unique_ptr<TailFile> f(new TailFile(fd, path));
  if (mode == Prealloc::kNone || size == 0) return f;
  if (mode == Prealloc::kFallocate) {
    int r;
    do {
      r = ::fallocate(fd, 0, 0, static_cast<off_t>(size));
    } while (r != 0 && errno == EINTR);
    if (r != 0) return Errno(errno, "fallocate", path);
  } else {
    // As io::Preallocator does: 1 MiB of zeros at a time.
    const std::vector<char> zeros(1 << 20, 0);
    for (uint64_t off = 0; off < size; off += zeros.size()) {
      const size_t len =
          static_cast<size_t>(std::min<uint64_t>(zeros.size(), size - off));
      absl::Status s = f->Write(off, absl::string_view(zeros.data(), len));
      if (!s.ok()) return s;
    }
  }
  absl::Status s = f->SyncData();
  if (!s.ok()) return s;
  return f;
}

TailFile::~TailFile() {
  if (fd_ >= 0) ::close(fd_);  // errors lost; Close() reports them
}

absl::Status TailFile::WriteV(uint64_t offset,
                              const std::vector<absl::string_view>& parts) {
  // iovecs for parts [i, end) with the first `skip` bytes of part i done.
  std::vector<struct iovec> iov;
  iov.reserve(std::min(parts.size(), kIovMax));
  size_t i = 0;
  size_t skip = 0;
  while (i < parts.size()) {
    iov.clear();
    for (size_t j = i; j < parts.size() && iov.size() < kIovMax; ++j) {
      const size_t off = j == i ? skip : 0;
      iov.push_back(iovec{const_cast<char*>(parts[j].data()) + off,
                          parts[j].size() - off});
    }
    ssize_t n = ::pwritev(fd_, iov.data(), static_cast<int>(iov.size()),
                          static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(errno, "pwritev", path_);
    }
    if (n == 0) return Errno(EIO, "pwritev wrote 0 bytes to", path_);
    offset += static_cast<uint64_t>(n);
    size_t left = static_cast<size_t>(n);
    while (left > 0 && i < parts.size()) {
      const size_t rest = parts[i].size() - skip;
      if (left >= rest) {
        left -= rest;
        ++i;
        skip = 0;
      } else {
        skip += left;
        left = 0;
      }
    }
    while (i < parts.size() && parts[i].size() == skip) {  // empty parts
      ++i;
      skip = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status TailFile::Write(uint64_t offset, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd_, data.data(), data.size(),
                         static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(errno, "pwrite", path_);
    }
    if (n == 0) return Errno(EIO, "pwrite wrote 0 bytes to", path_);
    data.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status TailFile::SyncData(uint64_t* micros) {
  // Never retried on failure (see baselines.h); EINTR does not happen for
  // fdatasync on Linux local file systems, but a retry there would be safe
  // since the call did not run.
  const auto t0 = std::chrono::steady_clock::now();
  const int r = ::fdatasync(fd_);
  const int err = errno;
  if (micros != nullptr) {
    *micros += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - t0)
            .count());
  }
  if (r != 0) return Errno(err, "fdatasync", path_);
  return absl::OkStatus();
}

absl::Status TailFile::Close() {
  if (fd_ < 0) return absl::FailedPreconditionError("already closed");
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Errno(errno, "close", path_);
  return absl::OkStatus();
}

// --- NaiveLog ----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<NaiveLog>> NaiveLog::Open(
    const std::string& path, uint32_t sync_every, Prealloc prealloc,
    uint64_t prealloc_size) {
  absl::StatusOr<std::unique_ptr<TailFile>> f =
      TailFile::Create(path, prealloc, prealloc_size);
  if (!f.ok()) return f.status();
  return std::unique_ptr<NaiveLog>(new NaiveLog(std::move(*f), sync_every));
}

absl::Status NaiveLog::Commit(absl::string_view data) {
  std::lock_guard<std::mutex> l(mu_);
  if (!error_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("log poisoned: ", error_.ToString()));
  }
  absl::Status s = file_->Write(end_, data);
  uint64_t synced = 0;
  uint64_t micros = 0;
  if (s.ok()) {
    end_ += data.size();
    ++since_sync_;
    if (sync_every_ > 0 && since_sync_ >= sync_every_) {
      since_sync_ = 0;
      synced = 1;
      s = file_->SyncData(&micros);
    }
  }
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  counters_.Add(1, 1, synced, data.size(), micros);
  return absl::OkStatus();
}

absl::Status NaiveLog::Close() {
  std::lock_guard<std::mutex> l(mu_);
  return file_->Close();
}

// --- GroupCommitLog ----------------------------------------------------------

absl::StatusOr<std::unique_ptr<GroupCommitLog>> GroupCommitLog::Open(
    const std::string& path, uint32_t sync_every, Prealloc prealloc,
    uint64_t prealloc_size) {
  absl::StatusOr<std::unique_ptr<TailFile>> f =
      TailFile::Create(path, prealloc, prealloc_size);
  if (!f.ok()) return f.status();
  return std::unique_ptr<GroupCommitLog>(
      new GroupCommitLog(std::move(*f), sync_every));
}

absl::Status GroupCommitLog::Commit(absl::string_view data) {
  Waiter w;
  w.data = data;
  std::unique_lock<std::mutex> l(mu_);
  queue_.push_back(&w);
  while (!w.done) {
    if (leader_active_) {
      w.cv.wait(l);  // woken when our group is done, or to lead the next one
      continue;
    }
    // Lead: take every queued commit, ours included.
    leader_active_ = true;
    group_.swap(queue_);  // both keep their capacity: no allocation per group
    absl::Status s = error_.ok()
                         ? absl::OkStatus()
                         : absl::FailedPreconditionError(absl::StrCat(
                               "log poisoned: ", error_.ToString()));
    uint64_t bytes = 0;
    parts_.clear();
    for (Waiter* m : group_) {
      parts_.push_back(m->data);
      bytes += m->data.size();
    }
    const uint64_t offset = end_;
    bool sync = false;
    if (s.ok()) {
      end_ += bytes;
      ++since_sync_;
      if (sync_every_ > 0 && since_sync_ >= sync_every_) {
        since_sync_ = 0;
        sync = true;
      }
    }
    l.unlock();
    // The I/O, without the mutex: followers keep queueing behind us.
    uint64_t micros = 0;
    if (s.ok()) s = file_->WriteV(offset, parts_);
    if (s.ok() && sync) s = file_->SyncData(&micros);
    l.lock();
    if (error_.ok()) {
      if (s.ok()) counters_.Add(group_.size(), 1, sync ? 1 : 0, bytes, micros);
      if (!s.ok()) error_ = s;  // poison: never retry the fdatasync
    }
    for (Waiter* m : group_) {
      m->status = s;
      m->done = true;
      // Under mu_: once done is visible the follower may return and destroy
      // its condition variable.
      if (m != &w) m->cv.notify_one();
    }
    group_.clear();
    leader_active_ = false;
    // Hand leadership to the first commit that queued while we wrote.
    if (!queue_.empty()) queue_.front()->cv.notify_one();
  }
  return w.status;
}

absl::Status GroupCommitLog::Close() {
  std::lock_guard<std::mutex> l(mu_);
  return file_->Close();
}

}  // namespace binlog_bench
