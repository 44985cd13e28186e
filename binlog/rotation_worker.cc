// The rotation thread of Options::background_rotation. See
// binlog/rotation_worker.h.

#include "binlog/rotation_worker.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {

std::string RotationWorker::PathOf(uint64_t number) const {
  return io::JoinPath(deps_.dir_path, BinlogFileName(deps_.basename, number));
}

void RotationWorker::Start() {
  sync::MutexLock l(&mu_);
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void RotationWorker::Stop() {
  std::thread t;
  {
    sync::MutexLock l(&mu_);
    stop_ = true;
    cv_.SignalAll();
    t = std::move(thread_);
  }
  if (t.joinable()) t.join();
  DiscardPrepared();
}

void RotationWorker::RequestPrepare(uint64_t number) {
  sync::MutexLock l(&mu_);
  prepare_number_ = number;
  cv_.SignalAll();
}

std::unique_ptr<io::WritableFile> RotationWorker::TakePrepared(uint64_t number,
                                                               bool* from_spare,
                                                               bool* allocated) {
  sync::MutexLock l(&mu_);
  if (prepared_file_ == nullptr || prepared_number_ != number) return nullptr;
  *from_spare = prepared_from_spare_;
  *allocated = prepared_allocated_;
  prepared_number_ = 0;
  prepared_taken_.fetch_add(1, std::memory_order_relaxed);
  return std::move(prepared_file_);
}

void RotationWorker::HandOffClose(std::unique_ptr<PendingClose> job) {
  {
    sync::MutexLock l(&mu_);
    close_ = std::move(job);
    closing_ = true;
    cv_.SignalAll();
  }
  closes_.fetch_add(1, std::memory_order_relaxed);
}

void RotationWorker::SyncedNewFile(uint64_t file) {
  // Once per file: a close may be waiting for this sync.
  synced_file_.store(file, std::memory_order_seq_cst);
  if (waits_for_sync_.load(std::memory_order_seq_cst)) {
    sync::MutexLock l(&mu_);
    cv_.SignalAll();
  }
}

void RotationWorker::Loop() {
  mu_.Lock();
  for (;;) {
    if (close_ != nullptr) {
      std::unique_ptr<PendingClose> job = std::move(close_);
      mu_.Unlock();
      absl::Status s = FinishClose(job.get());
      job.reset();
      mu_.Lock();
      if (!s.ok() && error_.ok()) {
        error_ = absl::Status(s.code(), absl::StrCat(
            "closing the previous binlog file after a rotation: ", s.message()));
        failed_.store(true, std::memory_order_release);
      }
      closing_ = false;
      cv_.SignalAll();
      continue;
    }
    if (prepare_number_ != 0 && !stop_) {
      const uint64_t n = prepare_number_;
      prepare_number_ = 0;
      if (prepared_file_ != nullptr || failed_.load(std::memory_order_acquire)) {
        continue;
      }
      preparing_ = true;
      mu_.Unlock();
      std::unique_ptr<io::WritableFile> f;
      bool spare = false, allocated = false;
      absl::Status s = Prepare(n, &f, &spare, &allocated);
      mu_.Lock();
      preparing_ = false;
      if (s.ok()) {
        prepared_file_ = std::move(f);
        prepared_number_ = n;
        prepared_from_spare_ = spare;
        prepared_allocated_ = allocated;
      }
      // On failure the rotation creates the file itself, as without this
      // thread (and reports the error if it fails there too).
      cv_.SignalAll();
      continue;
    }
    if (stop_) break;
    cv_.Wait(&mu_);
  }
  mu_.Unlock();
}

absl::Status RotationWorker::WaitIdle() {
  sync::MutexLock l(&mu_);
  // A request the thread has not started is dropped: the caller is about
  // to create (or remove) the file it names.
  prepare_number_ = 0;
  // Every caller runs with the pipeline drained: the group that followed
  // the rotation was synced by now, or failed.
  give_up_ = true;
  cv_.SignalAll();
  while (closing_ || preparing_) cv_.Wait(&mu_);
  give_up_ = false;
  return error_;
}

absl::Status RotationWorker::FinishClose(PendingClose* job) {
  // The first group in the new file (the one that rotated) syncs first:
  // its fdatasync makes the new file's header durable, and the old file's
  // syncs would otherwise run beside it on the same disk, so that the
  // first commits in every new file waited for both. The index names the
  // new file once that sync succeeded; this thread waits for it rather
  // than syncing the file itself (a second fdatasync after a failed one
  // could succeed without the lost pages: never retry one). Either order
  // of the two files' syncs is one a crash could leave before (they ran
  // concurrently), and Open closes an old file left unclosed.
  bool new_synced = false;
  {
    sync::MutexLock l(&mu_);
    waits_for_sync_.store(true, std::memory_order_seq_cst);
    while (synced_file_.load(std::memory_order_seq_cst) < job->new_number && !give_up_ &&
           !stop_) {
      cv_.Wait(&mu_);
    }
    waits_for_sync_.store(false, std::memory_order_relaxed);
    new_synced = synced_file_.load(std::memory_order_seq_cst) >= job->new_number;
  }
  io::WritableFile* old = job->old_file.get();
  // As a close in the flush stage: the cut and the end event durable, then
  // the flag cleared and durable (also when the new file's sync failed:
  // the old file is complete).
  absl::Status s = FinishFileClose(
      old, job->old_end, deps_.trim_preallocated, /*flags_lo=*/0,
      [this](io::WritableFile* f) { return deps_.syncs->TimedSync(f); });
  absl::Status cs = old->Close();
  if (s.ok()) s = cs;
  if (!s.ok()) return s;
  if (!new_synced) {
    return absl::AbortedError(absl::StrCat(
        "the first group in ", BinlogFileName(deps_.basename, job->new_number),
        " failed before its fdatasync: the index does not name the file"));
  }
  s = deps_.index->MarkIndexed(job->new_number);
  if (s.ok() && deps_.on_file_closed) deps_.on_file_closed(job->old_number);
  return s;
}

absl::Status RotationWorker::Prepare(uint64_t number,
                                     std::unique_ptr<io::WritableFile>* file,
                                     bool* from_spare, bool* allocated) {
  const std::string path = PathOf(number);
  io::FileSystem* fs = deps_.fs;
  BINLOG_ASSIGN_OR_RETURN(
      std::unique_ptr<io::WritableFile> f,
      io::CreateLogFileOrTakeSpare(fs, deps_.preallocator, path, deps_.preallocated_size,
                                   /*use_spare=*/true, from_spare, allocated,
                                   deps_.file_mode));
  // The name durable before any commit goes to the file. Until then (and
  // after a crash before the rotation) it is an unindexed file of zeros,
  // which Open removes.
  absl::Status s = deps_.dir->Sync();
  if (!s.ok()) {
    f->Close().IgnoreError();
    fs->Remove(path).IgnoreError();
    return s;
  }
  *file = std::move(f);
  return absl::OkStatus();
}

void RotationWorker::DiscardPrepared() {
  std::unique_ptr<io::WritableFile> f;
  uint64_t n = 0;
  {
    sync::MutexLock l(&mu_);
    f = std::move(prepared_file_);
    n = prepared_number_;
    prepared_number_ = 0;
    prepare_number_ = 0;
  }
  if (f == nullptr) return;
  f->Close().IgnoreError();
  // Best effort: a file of zeros left behind is removed by the next Open.
  deps_.fs->Remove(PathOf(n)).IgnoreError();
}

}  // namespace internal
}  // namespace binlog
