// File: binlog/live_log.h (internal)
//
// LiveLog: the live view of a log that its readers follow (a LogSource):
// the published end (one atomic word), the file list and the readers' pins.
// The writer publishes; readers read without taking a lock the writer holds
// during I/O. Thread safety: thread-safe.

#ifndef BINLOG_BINLOG_LIVE_LOG_H_
#define BINLOG_BINLOG_LIVE_LOG_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log_source.h"
#include "binlog/tail_ring.h"
#include "io/file_system.h"
#include "sync/mutex.h"
#include "sync/tail_notifier.h"

namespace binlog {
namespace internal {

// The live view of a log that readers follow.
class LiveLog final : public LogSource {
 public:
  // `ring_bytes`: Options::reader_ring_bytes (0: no ring).
  LiveLog(std::string dir, std::string basename,
          const sync::TailNotifierOptions& wake, size_t ring_bytes = 0)
      : dir_(std::move(dir)), basename_(std::move(basename)),
        ring_(ring_bytes != 0 ? std::make_unique<TailRing>(ring_bytes)
                              : nullptr),
        notifier_(wake) {}

  // Packs (file, offset) in one word so readers load both atomically.
  // Offsets stay below 2^32 (log_pos is 32-bit), file numbers below 2^31.
  static uint64_t Pack(uint64_t file, uint64_t offset) {
    return (file << 32) | offset;
  }

  // Called by the writer (one pipeline stage at a time) after the bytes up
  // to `offset` are visible under the sync policy. A reader that loads the
  // new value and then preads sees the bytes.
  void Publish(uint64_t file, uint64_t offset) {
    published_.store(Pack(file, offset), std::memory_order_seq_cst);
    notifier_.Notify();
  }

  // Clean close: every file is complete and readable to its end.
  void MarkClosed(bool clean) {
    if (clean) clean_closed_.store(true, std::memory_order_seq_cst);
    ended_.store(true, std::memory_order_seq_cst);
    notifier_.Shutdown();
  }

  void SetFiles(std::vector<uint64_t> files) {
    sync::MutexLock l(&files_mu_);
    files_ = std::move(files);
  }
  void AddFile(uint64_t n) {
    sync::MutexLock l(&files_mu_);
    files_.push_back(n);
  }
  std::vector<uint64_t> Files() {
    sync::MutexLock l(&files_mu_);
    return files_;
  }

  // Removes the oldest files below `target` that no reader pins and that
  // are not the newest file, up to the first that must stay; returns them.
  // *pinned is the file a reader pinned that stopped it (0 if none).
  std::vector<uint64_t> TakePurgeable(uint64_t target, uint64_t* pinned = nullptr) {
    sync::MutexLock l(&files_mu_);
    std::vector<uint64_t> out;
    if (pinned != nullptr) *pinned = 0;
    size_t i = 0;
    for (; i + 1 < files_.size(); ++i) {
      uint64_t n = files_[i];
      if (n >= target) break;
      auto it = pins_.find(n);
      if (it != pins_.end() && it->second > 0) {
        if (pinned != nullptr) *pinned = n;
        break;
      }
      out.push_back(n);
    }
    files_.erase(files_.begin(), files_.begin() + static_cast<long>(i));
    return out;
  }
  void RestoreFront(const std::vector<uint64_t>& front) {
    sync::MutexLock l(&files_mu_);
    files_.insert(files_.begin(), front.begin(), front.end());
  }

  uint64_t published() const {
    return published_.load(std::memory_order_acquire);
  }

  // LogSource.
  uint64_t FirstFile() override {
    sync::MutexLock l(&files_mu_);
    return files_.empty() ? 0 : files_.front();
  }
  uint64_t NextFile(uint64_t n) override {
    sync::MutexLock l(&files_mu_);
    auto it = std::upper_bound(files_.begin(), files_.end(), n);
    return it == files_.end() ? 0 : *it;
  }
  std::string FileName(uint64_t n) override {
    return BinlogFileName(basename_, n);
  }
  std::string FilePath(uint64_t n) override {
    return io::JoinPath(dir_, BinlogFileName(basename_, n));
  }
  uint64_t Limit(uint64_t n) override {
    if (clean_closed_.load(std::memory_order_acquire)) return kNoLimit;
    uint64_t p = published();
    uint64_t pf = p >> 32;
    if (n < pf) return kNoLimit;  // closed by rotation: complete
    if (n == pf) return p & 0xFFFFFFFFu;
    return 0;
  }
  bool live() const override { return true; }
  TailRing* Ring() override { return ring_.get(); }
  bool WrittenHere(uint64_t n) override {
    return n >= first_written_here_.load(std::memory_order_acquire);
  }

  // The writer created file `n` (called before the file is listed, so
  // before any reader can open it). Files are created in ascending number,
  // and a Reset removes every older file first, so the files this process
  // wrote are exactly those numbered from the lowest it created.
  void NoteWrittenHere(uint64_t n) {
    if (n < first_written_here_.load(std::memory_order_relaxed)) {
      first_written_here_.store(n, std::memory_order_release);
    }
  }

  absl::Status Wait(uint64_t file, uint64_t offset,
                    absl::Time deadline) override {
    // (file, offset) pairs compare in log order: a reader on a file listed
    // but not yet published (offset 0 of a newer file) waits for it.
    // seq_cst pairs with Publish(); see TailNotifier::Wait.
    auto more = [&]() {
      uint64_t p = published_.load(std::memory_order_seq_cst);
      uint64_t pf = p >> 32;
      return pf > file || (pf == file && (p & 0xFFFFFFFFu) > offset);
    };
    if (notifier_.Wait(more, deadline)) return absl::OkStatus();
    if (ended_.load(std::memory_order_acquire)) {
      return absl::CancelledError("the log was closed");
    }
    return absl::DeadlineExceededError("no new events before the deadline");
  }

  bool Pin(uint64_t n) override {
    sync::MutexLock l(&files_mu_);
    if (resetting_) return false;
    if (!std::binary_search(files_.begin(), files_.end(), n)) return false;
    ++pins_[n];
    return true;
  }
  void Unpin(uint64_t n) override {
    sync::MutexLock l(&files_mu_);
    auto it = pins_.find(n);
    if (it != pins_.end() && --it->second == 0) pins_.erase(it);
  }
  void ReaderOpened() override {
    sync::MutexLock l(&files_mu_);
    ++readers_;
  }
  void ReaderClosed() override {
    sync::MutexLock l(&files_mu_);
    --readers_;
  }
  // Reset: false (and *readers) if readers are open; else no file can be
  // pinned until EndReset.
  bool BeginReset(int* readers) {
    sync::MutexLock l(&files_mu_);
    *readers = readers_;
    if (readers_ > 0) return false;
    resetting_ = true;
    return true;
  }
  void EndReset() {
    sync::MutexLock l(&files_mu_);
    resetting_ = false;
  }

  // Reset: the log starts over at file `first`, published at `offset`
  // later by the new file. REQUIRES: no reader (Binlog::Reset checks).
  void ResetFiles() {
    sync::MutexLock l(&files_mu_);
    files_.clear();
    pins_.clear();
    published_.store(0, std::memory_order_seq_cst);
    if (ring_ != nullptr) ring_->Clear();
  }

 private:
  const std::string dir_;
  const std::string basename_;
  // The writer's flush stage appends every group (BinlogImpl::FlushGroup).
  const std::unique_ptr<TailRing> ring_;

  // (file << 32) | offset of the end readers may read. Written only by the
  // writer holding Binlog::write_mu_; loaded by readers without locks.
  // Kept on its own cache line: every reader polls it, the writer stores it
  // once per group.
  alignas(64) std::atomic<uint64_t> published_{0};
  std::atomic<bool> clean_closed_{false};
  // The lowest file number this process's writer created (kNoLimit:
  // none yet). Written by the writer (file creation: Open, rotation,
  // Reset; one at a time) with release, before the file is listed;
  // readers load it with acquire when they open a file they found in the
  // list (under files_mu_, which orders it as well).
  std::atomic<uint64_t> first_written_here_{kNoLimit};
  std::atomic<bool> ended_{false};
  sync::TailNotifier notifier_;  // readers sleep here when caught up

  sync::Mutex files_mu_;
  std::vector<uint64_t> files_ ABSL_GUARDED_BY(files_mu_);
  std::map<uint64_t, int> pins_ ABSL_GUARDED_BY(files_mu_);
  int readers_ ABSL_GUARDED_BY(files_mu_) = 0;
  bool resetting_ ABSL_GUARDED_BY(files_mu_) = false;
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LIVE_LOG_H_
