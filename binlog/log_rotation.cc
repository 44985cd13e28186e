// BinlogImpl: the rotation thread (Options::background_rotation): the
// next file prepared ahead, the old file closed and the index updated off
// the commit path. See binlog/log_impl.h.

#include "binlog/log_impl.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/log_options.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

void BinlogImpl::StartRotationThread() {
  if (!background_rotation_) return;
  sync::MutexLock l(&rot_mu_);
  rot_stop_ = false;
  rotation_thread_ = std::thread([this] { RotationLoop(); });
}

void BinlogImpl::StopRotationThread() {
  std::thread t;
  {
    sync::MutexLock l(&rot_mu_);
    rot_stop_ = true;
    rot_cv_.SignalAll();
    t = std::move(rotation_thread_);
  }
  if (t.joinable()) t.join();
  DiscardPreparedFile();
}

void BinlogImpl::RotationLoop() {
  rot_mu_.Lock();
  for (;;) {
    if (rot_close_ != nullptr) {
      std::unique_ptr<PendingClose> job = std::move(rot_close_);
      rot_mu_.Unlock();
      absl::Status s = FinishBackgroundClose(job.get());
      job.reset();
      rot_mu_.Lock();
      if (!s.ok() && rot_error_.ok()) {
        rot_error_ = absl::Status(s.code(), absl::StrCat(
            "closing the previous binlog file after a rotation: ", s.message()));
        rot_failed_.store(true, std::memory_order_release);
      }
      rot_closing_ = false;
      rot_cv_.SignalAll();
      continue;
    }
    if (rot_prepare_number_ != 0 && !rot_stop_) {
      const uint64_t n = rot_prepare_number_;
      rot_prepare_number_ = 0;
      if (prepared_file_ != nullptr || rot_failed_.load(std::memory_order_acquire)) {
        continue;
      }
      rot_preparing_ = true;
      rot_mu_.Unlock();
      std::unique_ptr<io::WritableFile> f;
      bool spare = false, allocated = false;
      absl::Status s = PrepareNextFile(n, &f, &spare, &allocated);
      rot_mu_.Lock();
      rot_preparing_ = false;
      if (s.ok()) {
        prepared_file_ = std::move(f);
        prepared_number_ = n;
        prepared_from_spare_ = spare;
        prepared_allocated_ = allocated;
      }
      // On failure the rotation creates the file itself, as without this
      // thread (and reports the error if it fails there too).
      rot_cv_.SignalAll();
      continue;
    }
    if (rot_stop_) break;
    rot_cv_.Wait(&rot_mu_);
  }
  rot_mu_.Unlock();
}

absl::Status BinlogImpl::WaitRotationIdle() {
  if (!background_rotation_) return absl::OkStatus();
  sync::MutexLock l(&rot_mu_);
  // A request the thread has not started is dropped: the caller is about
  // to create (or remove) the file it names.
  rot_prepare_number_ = 0;
  // Every caller runs with the pipeline drained: the group that followed
  // the rotation was synced by now, or failed.
  rot_give_up_ = true;
  rot_cv_.SignalAll();
  while (rot_closing_ || rot_preparing_) rot_cv_.Wait(&rot_mu_);
  rot_give_up_ = false;
  return rot_error_;
}

absl::Status BinlogImpl::FinishBackgroundClose(PendingClose* job) {
  io::WritableFile* old = job->old_file.get();
  // As CloseActiveFile: the cut and the end event durable, then the flag
  // cleared and durable.
  absl::Status s;
  if (options_.trim_preallocated) {
    absl::StatusOr<uint64_t> size = old->Size();
    s = size.status();
    if (s.ok() && *size > job->old_end) s = old->Truncate(job->old_end);
  }
  auto timed_sync = [this](io::WritableFile* f) {
    absl::Time t0 = absl::Now();
    absl::Status r = f->Sync();
    fsync_micros_.fetch_add(
        static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - t0)),
        std::memory_order_relaxed);
    fsyncs_.fetch_add(1, std::memory_order_relaxed);
    return r;
  };
  if (s.ok()) s = timed_sync(old);
  const char cleared = 0;  // FDE flags low byte with kFlagBinlogInUse clear
  if (s.ok()) s = old->Write(kInUseFlagFileOffset, absl::string_view(&cleared, 1));
  if (s.ok()) s = timed_sync(old);
  absl::Status cs = old->Close();
  if (s.ok()) s = cs;
  if (!s.ok()) return s;
  // The index names the new file once its header events are durable: by
  // the first group's own fdatasync, which this thread waits for rather
  // than syncing the file itself (a second fdatasync after a failed one
  // could succeed without the lost pages: never retry one).
  {
    sync::MutexLock l(&rot_mu_);
    rot_waits_for_sync_.store(true, std::memory_order_seq_cst);
    while (synced_file_.load(std::memory_order_seq_cst) < job->new_number &&
           !rot_give_up_ && !rot_stop_) {
      rot_cv_.Wait(&rot_mu_);
    }
    rot_waits_for_sync_.store(false, std::memory_order_relaxed);
    if (synced_file_.load(std::memory_order_seq_cst) < job->new_number) {
      return absl::AbortedError(absl::StrCat(
          "the first group in ", BinlogFileName(basename_, job->new_number),
          " failed before its fdatasync: the index does not name the file"));
    }
  }
  sync::MutexLock il(&index_mu_);
  if (unindexed_file_ == job->new_number) unindexed_file_ = 0;
  s = WriteIndexLocked();
  if (s.ok()) KickExpiry();  // a file was closed: it may be old enough already
  return s;
}

absl::Status BinlogImpl::PrepareNextFile(uint64_t number,
                                         std::unique_ptr<io::WritableFile>* file,
                                         bool* from_spare, bool* allocated) {
  const std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  *from_spare = false;
  *allocated = false;
  if (preallocator_ != nullptr) {
    auto spare = preallocator_->TakeReady();
    if (spare.ok()) {
      BINLOG_RETURN_IF_ERROR(fs_->Rename(*spare, path));
      *from_spare = true;
    }
  }
  std::unique_ptr<io::WritableFile> f;
  if (*from_spare) {
    auto opened = fs_->OpenWritable(path, io::OpenMode::kOpenExisting);
    if (!opened.ok()) {
      // Not left under the name the rotation creates the file with.
      fs_->Remove(path).IgnoreError();
      return opened.status();
    }
    f = std::move(*opened);
  } else {
    BINLOG_ASSIGN_OR_RETURN(f, fs_->OpenWritable(path, io::OpenMode::kCreateNew));
    if (preallocator_ != nullptr) {
      *allocated = f->Allocate(0, preallocated_size_, /*keep_size=*/false).ok();
    }
  }
  // The name durable before any commit goes to the file. Until then (and
  // after a crash before the rotation) it is an unindexed file of zeros,
  // which Open removes.
  absl::Status s = dir_handle_->Sync();
  if (!s.ok()) {
    f->Close().IgnoreError();
    fs_->Remove(path).IgnoreError();
    return s;
  }
  *file = std::move(f);
  return absl::OkStatus();
}

void BinlogImpl::DiscardPreparedFile() {
  std::unique_ptr<io::WritableFile> f;
  uint64_t n = 0;
  {
    sync::MutexLock l(&rot_mu_);
    f = std::move(prepared_file_);
    n = prepared_number_;
    prepared_number_ = 0;
    rot_prepare_number_ = 0;
  }
  if (f == nullptr) return;
  f->Close().IgnoreError();
  // Best effort: a file of zeros left behind is removed by the next Open.
  fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n))).IgnoreError();
}

}  // namespace internal
}  // namespace binlog
