#include "io/preallocator.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace binlog {
namespace io {

Preallocator::Preallocator(const PreallocatorOptions& options)
    : options_(options) {}

absl::StatusOr<std::unique_ptr<Preallocator>> Preallocator::Start(
    const PreallocatorOptions& options) {
  if (options.mode == PreallocMode::kNone || options.fs == nullptr ||
      options.file_size == 0 || options.spares < 1 || options.spares > 8 ||
      options.prefix.empty()) {
    return absl::InvalidArgumentError("preallocator: bad options");
  }
  auto names = options.fs->ListDirectory(options.dir);
  if (!names.ok()) return names.status();
  std::string leftover = absl::StrCat(options.prefix, ".prealloc.");
  bool removed = false;
  for (const std::string& n : *names) {
    if (absl::StartsWith(n, leftover)) {
      absl::Status s = options.fs->Remove(JoinPath(options.dir, n));
      if (!s.ok()) return s;
      removed = true;
    }
  }
  if (removed) {
    auto d = options.fs->OpenDirectory(options.dir);
    if (!d.ok()) return d.status();
    absl::Status s = (*d)->Sync();
    if (!s.ok()) return s;
  }
  std::unique_ptr<Preallocator> p(new Preallocator(options));
  p->thread_ = std::thread([raw = p.get()] { raw->Loop(); });
  return p;
}

Preallocator::~Preallocator() { Stop(); }

void Preallocator::Stop() {
  {
    sync::MutexLock l(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  // Spares that were not taken hold no data: remove them so a closed log
  // directory holds only the log.
  sync::MutexLock l(&mu_);
  for (const std::string& p : ready_) {
    options_.fs->Remove(p).IgnoreError();  // best effort; Start() cleans up too
  }
  ready_.clear();
}

void Preallocator::Request() {
  if (requested_.load(std::memory_order_relaxed)) return;
  requested_.store(true, std::memory_order_relaxed);
  sync::MutexLock l(&mu_);
  demand_ = true;
  cv_.SignalAll();
}

absl::StatusOr<std::string> Preallocator::TakeReady() {
  sync::MutexLock l(&mu_);
  if (ready_.empty()) {
    // Nothing ready: the caller creates the file itself; prepare one now.
    demand_ = true;
    requested_.store(true, std::memory_order_relaxed);
    cv_.SignalAll();
    return absl::NotFoundError("no preallocated file ready");
  }
  std::string p = std::move(ready_.front());
  ready_.pop_front();
  // The next spare is prepared when the owner asks again (a log asks when
  // its new file is half full), not now: writing a file's worth of zeros
  // right after a rotation competes with the first commits in the new file.
  demand_ = false;
  requested_.store(false, std::memory_order_relaxed);
  return p;
}

absl::Status Preallocator::WaitReady(int n) {
  sync::MutexLock l(&mu_);
  demand_ = true;
  requested_.store(true, std::memory_order_relaxed);
  cv_.SignalAll();
  while (static_cast<int>(ready_.size()) < n && error_.ok() && !stop_) {
    cv_.Wait(&mu_);
  }
  return error_;
}

absl::Status Preallocator::last_error() const {
  sync::MutexLock l(&mu_);
  return error_;
}

void Preallocator::Retry() {
  sync::MutexLock l(&mu_);
  error_ = absl::OkStatus();
  cv_.SignalAll();
}

void Preallocator::Loop() {
  for (;;) {
    uint64_t n;
    {
      sync::MutexLock l(&mu_);
      while (!stop_ && (!error_.ok() || !demand_ ||
                        static_cast<int>(ready_.size()) >= options_.spares)) {
        cv_.Wait(&mu_);
      }
      if (stop_) return;
      n = next_++;
    }
    std::string path;
    absl::Status s = PrepareOne(n, &path);
    sync::MutexLock l(&mu_);
    if (!s.ok()) {
      error_ = s;
    } else if (stop_) {
      options_.fs->Remove(path).IgnoreError();  // shutting down: not needed
    } else {
      ready_.push_back(std::move(path));
      prepared_.fetch_add(1, std::memory_order_relaxed);
    }
    cv_.SignalAll();
  }
}

absl::Status Preallocator::PrepareOne(uint64_t n, std::string* path) {
  FileSystem* fs = options_.fs;
  std::string final_path =
      JoinPath(options_.dir, absl::StrCat(options_.prefix, ".prealloc.", n));
  std::string tmp = final_path + ".tmp";
  auto f = fs->OpenWritable(tmp, OpenMode::kCreateOrTruncate, options_.file_mode);
  if (!f.ok()) return f.status();
  absl::Status s;
  if (options_.mode == PreallocMode::kFallocate) {
    s = (*f)->Allocate(0, options_.file_size, /*keep_size=*/false);
  } else {
    // Written zeros: the file's extents are real, so the log's later
    // overwrites plus fdatasync persist data only.
    constexpr size_t kChunk = 1 << 20;
    static const std::vector<char>* zeros = new std::vector<char>(kChunk, 0);
    for (uint64_t off = 0; s.ok() && off < options_.file_size; off += kChunk) {
      size_t len = static_cast<size_t>(
          std::min<uint64_t>(kChunk, options_.file_size - off));
      s = (*f)->Write(off, absl::string_view(zeros->data(), len));
      sync::MutexLock l(&mu_);
      if (stop_) s = absl::CancelledError("preallocator stopping");
    }
  }
  if (s.ok()) s = (*f)->Sync();
  absl::Status c = (*f)->Close();
  if (s.ok()) s = c;
  if (s.ok()) s = fs->Rename(tmp, final_path);
  if (s.ok()) {
    auto d = fs->OpenDirectory(options_.dir);
    s = d.ok() ? (*d)->Sync() : d.status();
  }
  if (!s.ok()) {
    fs->Remove(tmp).IgnoreError();  // partial spare: useless
    return s;
  }
  *path = final_path;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WritableFile>> CreateLogFileOrTakeSpare(
    FileSystem* fs, Preallocator* preallocator, const std::string& path, uint64_t size,
    bool use_spare, bool* from_spare, bool* allocated, uint32_t file_mode) {
  *from_spare = false;
  *allocated = false;
  if (preallocator != nullptr && use_spare) {
    absl::StatusOr<std::string> spare = preallocator->TakeReady();
    if (spare.ok()) {
      absl::Status r = fs->Rename(*spare, path);
      if (!r.ok()) return r;
      *from_spare = true;
      absl::StatusOr<std::unique_ptr<WritableFile>> f =
          fs->OpenWritable(path, OpenMode::kOpenExisting);
      if (!f.ok()) fs->Remove(path).IgnoreError();  // the open error is the one to report
      return f;
    }
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> f =
      fs->OpenWritable(path, OpenMode::kCreateNew, file_mode);
  if (f.ok() && preallocator != nullptr) {
    // Reserving the space with fallocate is a metadata-only operation, so
    // at least the file size does not change on every commit.
    *allocated = (*f)->Allocate(0, size, /*keep_size=*/false).ok();
  }
  return f;
}

}  // namespace io
}  // namespace binlog
