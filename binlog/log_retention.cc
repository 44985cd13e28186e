// BinlogImpl: retention: purge by file number and by time, and automatic
// expiry (Options::expire_after). See binlog/log_impl.h.

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

absl::StatusOr<int> BinlogImpl::PurgeTo(uint64_t file_number) {
  BINLOG_ASSIGN_OR_RETURN(
      PurgeResult r,
      PurgeUpTo(file_number, reset_generation_.load(std::memory_order_acquire)));
  return static_cast<int>(r.purged.size());
}

absl::StatusOr<PurgeResult> BinlogImpl::PurgeUpTo(uint64_t file_number,
                                                   uint64_t generation) {
  PurgeResult result;
  std::vector<uint64_t> victims;
  {
  sync::MutexLock il(&index_mu_);
  if (closed_.load(std::memory_order_acquire)) {
    // The lock is released: another writer may own the index now.
    return absl::FailedPreconditionError("the log is closed");
  }
  if (generation != reset_generation_.load(std::memory_order_acquire)) {
    return result;  // a Reset replaced the files this purge looked at
  }
  if (unindexed_file_ != 0 && file_number >= unindexed_file_) {
    // Right after a rotation off the commit path the index file names the
    // file before the newest as its last one until the rotation thread
    // rewrites it: that file stays, or the index could name no file.
    file_number = unindexed_file_ - 1;
    result.kept.push_back({BinlogFileName(basename_, file_number),
                           "being closed after a rotation"});
  }
  uint64_t pinned = 0;
  victims = live_->TakePurgeable(file_number, &pinned);
  if (pinned != 0) {
    result.kept.push_back({BinlogFileName(basename_, pinned), "open by a reader"});
  } else {
    std::vector<uint64_t> files = live_->Files();
    if (!files.empty() && file_number > files.back()) {
      result.kept.push_back({BinlogFileName(basename_, files.back()), "the active file"});
    }
  }
  if (victims.empty()) return result;
  // gtid_purged after the purge: what the new first file's Previous_gtids
  // says came before it. Read before the index changes, published with it.
  std::vector<uint64_t> left = live_->Files();
  absl::StatusOr<GtidSet> purged = GtidSet();
  absl::StatusOr<MariaGtidState> maria_purged = MariaGtidState();
  if (!left.empty()) {
    std::string first = io::JoinPath(dir_, BinlogFileName(basename_, left.front()));
    if (options_.flavor == LogFlavor::kMariaDB) {
      maria_purged = FileMariaGtids(fs_, first, /*with_transactions=*/false);
    } else {
      purged = FileGtids(fs_, first, /*with_transactions=*/false);
    }
  }
  if (!purged.ok() || !maria_purged.ok()) {
    live_->RestoreFront(victims);
    return !purged.ok() ? purged.status() : maria_purged.status();
  }
  absl::Status s = WriteIndexLocked();
  if (!s.ok()) {
    live_->RestoreFront(victims);
    return s;
  }
  {
    sync::MutexLock l(&gtid_mu_);
    purged_ = std::move(*purged);
    maria_purged_ = std::move(*maria_purged);
  }
  }  // index_mu_: rotations need it; the removals below do not.
  // The index no longer names the victims (a crash from here leaves files
  // that Open removes). A Reset meanwhile deleted them already and may
  // have created files with the same numbers: then leave them.
  sync::MutexLock rl(&removal_mu_);
  if (generation != reset_generation_.load(std::memory_order_acquire)) return result;
  absl::Status first_error;
  for (uint64_t n : victims) {
    absl::Status r = fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n)));
    if (r.ok()) {
      result.purged.push_back(BinlogFileName(basename_, n));
    } else if (first_error.ok()) {
      first_error = r;
    }
  }
  {
    sync::MutexLock l(&last_event_mu_);
    for (uint64_t n : victims) last_event_time_.erase(n);
  }
  absl::Status ds = dir_handle_->Sync();
  if (!first_error.ok()) return first_error;
  if (!ds.ok()) return ds;
  return result;
}

// If the file at `path` ends with a Rotate (naming a file of this log) or
// Stop event, as every file this log closed does: true and its timestamp.
absl::StatusOr<bool> BinlogImpl::EndEventTime(const std::string& path, uint32_t* ts) {
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs_->FileSize(path));
  bool found = false;
  // A closed file of this log ends with its Rotate or Stop event: look for
  // it in the last few KiB (its header says it ends exactly at the file's
  // end, and a Rotate names a file of the log).
  const uint64_t tail = std::min<uint64_t>(size, 4096);
  if (tail >= kMagicSize + kHeaderSize) {
    std::string buf(tail, '\0');
    size_t got = 0;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs_->OpenReadable(path));
    BINLOG_RETURN_IF_ERROR(f->Read(size - tail, tail, buf.data(), &got));
    buf.resize(got);
    for (size_t p = buf.size() >= kHeaderSize ? buf.size() - kHeaderSize : 0;; --p) {
      const char* h = buf.data() + p;
      const uint8_t type = static_cast<uint8_t>(h[4]);
      const uint64_t at = size - tail + p;
      if ((type == kRotateEvent || type == kStopEvent) && at >= kMagicSize &&
          LoadLe32(h + 9) == size - at && LoadLe32(h + 13) == size) {
        bool ok = type == kStopEvent ? (size - at == kHeaderSize ||
                                        size - at == kHeaderSize + kChecksumSize)
                                     : size - at > kHeaderSize + kRotatePostHeaderSize;
        if (ok && type == kRotateEvent) {
          absl::string_view body(h + kHeaderSize + kRotatePostHeaderSize,
                                 size - at - kHeaderSize - kRotatePostHeaderSize);
          uint64_t next = 0;
          ok = ParseBinlogFileName(basename_, body, &next) ||
               (body.size() > kChecksumSize &&
                ParseBinlogFileName(basename_, body.substr(0, body.size() - kChecksumSize),
                                    &next));
        }
        if (ok) {
          *ts = LoadLe32(h);
          found = true;
          break;
        }
      }
      if (p == 0) break;
    }
  }
  return found;
}

absl::StatusOr<uint32_t> BinlogImpl::LastEventTime(uint64_t number,
                                                   uint64_t generation) {
  {
    sync::MutexLock l(&last_event_mu_);
    auto it = last_event_time_.find(number);
    if (it != last_event_time_.end()) return it->second;
  }
  std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  uint32_t ts = 0;
  BINLOG_ASSIGN_OR_RETURN(bool found, EndEventTime(path, &ts));
  if (!found) {
    // A file that ends otherwise (the last file of a crash, recovered; a
    // file another server wrote): read it through.
    ReaderOptions ro;
    ro.checksum_mode = ChecksumMode::kSkip;
    ro.payloads = PayloadMode::kRaw;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, Reader::OpenFiles({path}, ro, fs_));
    Event ev;
    absl::Status rs;
    while ((rs = reader->Next(&ev)).ok()) ts = ev.header.timestamp;
    if (!absl::IsOutOfRange(rs)) return rs;
  }
  sync::MutexLock l(&last_event_mu_);
  // Not for a file of an earlier generation (a Reset reuses numbers).
  if (generation == reset_generation_.load(std::memory_order_acquire)) {
    last_event_time_[number] = ts;
  }
  return ts;
}

absl::StatusOr<PurgeResult> BinlogImpl::PurgeBefore(absl::Time cutoff) {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("the log is closed");
  }
  const uint64_t generation = reset_generation_.load(std::memory_order_acquire);
  std::vector<uint64_t> files = live_->Files();
  if (files.empty()) return PurgeResult();
  uint64_t target = files.back();
  PurgeResult::Kept newer;
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BINLOG_ASSIGN_OR_RETURN(uint32_t ts, LastEventTime(files[i], generation));
    if (absl::FromUnixSeconds(ts) >= cutoff) {
      target = files[i];
      newer.file = BinlogFileName(basename_, files[i]);
      newer.reason = absl::StrCat("its last event (", absl::FormatTime(absl::FromUnixSeconds(ts)),
                                  ") is not before ", absl::FormatTime(cutoff));
      break;
    }
  }
  BINLOG_ASSIGN_OR_RETURN(PurgeResult r, PurgeUpTo(target, generation));
  if (!newer.file.empty()) {
    if (r.kept.empty() || r.kept.back().file != newer.file) r.kept.push_back(newer);
  } else if (r.kept.empty()) {
    r.kept.push_back({BinlogFileName(basename_, target), "the active file"});
  }
  return r;
}

void BinlogImpl::StartExpiry() {
  if (options_.expire_after <= absl::ZeroDuration()) return;
  sync::MutexLock l(&expiry_mu_);
  expiry_thread_ = std::thread([this] { ExpiryLoop(); });
}

void BinlogImpl::StopExpiry() {
  std::thread t;
  {
    sync::MutexLock l(&expiry_mu_);
    expiry_stop_ = true;
    expiry_cv_.SignalAll();
    t = std::move(expiry_thread_);  // one caller joins it
  }
  if (t.joinable()) t.join();
}

void BinlogImpl::KickExpiry() {
  if (options_.expire_after <= absl::ZeroDuration()) return;
  sync::MutexLock l(&expiry_mu_);
  expiry_kicked_ = true;
  expiry_cv_.SignalAll();
}

void BinlogImpl::ExpiryLoop() {
  const absl::Duration interval = std::min(
      absl::Hours(1), std::max(absl::Seconds(1), options_.expire_after / 8));
  for (;;) {
    // Now() is the clock of the events the log writes (Options::now_seconds).
    absl::Time cutoff = absl::FromUnixSeconds(Now()) - options_.expire_after;
    absl::StatusOr<PurgeResult> r = PurgeBefore(cutoff);
    if (r.ok()) {
      files_expired_.fetch_add(r->purged.size(), std::memory_order_relaxed);
    } else {
      sync::MutexLock l(&expiry_error_mu_);
      last_expiry_error_ = r.status().ToString();
    }
    sync::MutexLock l(&expiry_mu_);
    const absl::Time deadline = absl::Now() + interval;
    while (!expiry_stop_ && !expiry_kicked_) {
      if (expiry_cv_.WaitWithDeadline(&expiry_mu_, deadline)) break;
    }
    if (expiry_stop_) return;
    expiry_kicked_ = false;
  }
}

}  // namespace internal
}  // namespace binlog
