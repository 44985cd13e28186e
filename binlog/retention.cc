// Purge and automatic expiry. See binlog/retention.h.

#include "binlog/retention.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/reader.h"
#include "binlog/transaction_scan.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {

absl::StatusOr<bool> ClosedFileEndTime(io::FileSystem* fs, const std::string& basename,
                                       const std::string& path, uint32_t* ts) {
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
  bool found = false;
  // A closed file of this log ends with its Rotate or Stop event: look for
  // it in the last few KiB (its header says it ends exactly at the file's
  // end, and a Rotate names a file of the log).
  const uint64_t tail = std::min<uint64_t>(size, 4096);
  if (tail >= kMagicSize + kHeaderSize) {
    std::string buf(tail, '\0');
    size_t got = 0;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs->OpenReadable(path));
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
          ok = ParseBinlogFileName(basename, body, &next) ||
               (body.size() > kChecksumSize &&
                ParseBinlogFileName(basename, body.substr(0, body.size() - kChecksumSize),
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

absl::StatusOr<uint32_t> FileLastEventTime(io::FileSystem* fs, const std::string& basename,
                                           const std::string& path) {
  uint32_t ts = 0;
  BINLOG_ASSIGN_OR_RETURN(bool found, ClosedFileEndTime(fs, basename, path, &ts));
  if (found) return ts;
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kSkip;
  ro.payloads = PayloadMode::kRaw;
  BINLOG_ASSIGN_OR_RETURN(TransactionScan t, TransactionScan::Open(fs, path, ro));
  ts = t.fde_header().timestamp;
  // Every event counts, whatever transaction it belongs to.
  BINLOG_RETURN_IF_ERROR(t.Run(
      [](const Event&) { return TransactionScan::Result::kOutside; },
      [&](const Event& ev, TransactionScan::Result) {
        ts = ev.header.timestamp;
        return ScanNext::kContinue;
      }));
  if (t.stop() == ScanStop::kDamaged) return t.reader_error();
  return ts;
}

std::string Retention::PathOf(uint64_t number) const {
  return io::JoinPath(deps_.dir, BinlogFileName(deps_.basename, number));
}

void Retention::StartNewGeneration() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void Retention::ForgetEventTimes() {
  sync::MutexLock l(&last_event_mu_);
  last_event_time_.clear();
}

std::string Retention::last_expiry_error() const {
  sync::MutexLock l(&expiry_error_mu_);
  return last_expiry_error_;
}

absl::StatusOr<int> Retention::PurgeTo(uint64_t file_number) {
  BINLOG_ASSIGN_OR_RETURN(
      PurgeResult r,
      PurgeUpTo(file_number, generation_.load(std::memory_order_acquire)));
  return static_cast<int>(r.purged.size());
}

absl::StatusOr<PurgeResult> Retention::PurgeUpTo(uint64_t file_number,
                                                   uint64_t generation) {
  PurgeResult result;
  std::vector<uint64_t> victims;
  {
  sync::MutexLock il(deps_.index->mu());
  if (deps_.closed->load(std::memory_order_acquire)) {
    // The lock is released: another writer may own the index now.
    return absl::FailedPreconditionError("the log is closed");
  }
  if (generation != generation_.load(std::memory_order_acquire)) {
    return result;  // a Reset replaced the files this purge looked at
  }
  if (deps_.index->unindexed_file() != 0 && file_number >= deps_.index->unindexed_file()) {
    // Right after a rotation off the commit path the index file names the
    // file before the newest as its last one until the rotation thread
    // rewrites it: that file stays, or the index could name no file.
    file_number = deps_.index->unindexed_file() - 1;
    result.kept.push_back({BinlogFileName(deps_.basename, file_number),
                           "being closed after a rotation"});
  }
  uint64_t pinned = 0;
  victims = deps_.live->TakePurgeable(file_number, &pinned);
  if (pinned != 0) {
    result.kept.push_back({BinlogFileName(deps_.basename, pinned), "open by a reader"});
  } else {
    std::vector<uint64_t> files = deps_.live->Files();
    if (!files.empty() && file_number > files.back()) {
      result.kept.push_back({BinlogFileName(deps_.basename, files.back()), "the active file"});
    }
  }
  if (victims.empty()) return result;
  // gtid_purged after the purge: what the new first file's Previous_gtids
  // says came before it. Read before the index changes, published with it.
  std::vector<uint64_t> left = deps_.live->Files();
  absl::StatusOr<GtidSet> purged = GtidSet();
  absl::StatusOr<MariaGtidState> maria_purged = MariaGtidState();
  if (!left.empty()) {
    std::string first = PathOf(left.front());
    if (deps_.flavor == LogFlavor::kMariaDB) {
      maria_purged = FileMariaGtids(deps_.fs, first, /*with_transactions=*/false);
    } else {
      purged = FileGtids(deps_.fs, first, /*with_transactions=*/false);
    }
  }
  if (!purged.ok() || !maria_purged.ok()) {
    deps_.live->RestoreFront(victims);
    return !purged.ok() ? purged.status() : maria_purged.status();
  }
  absl::Status s = deps_.index->WriteLocked();
  if (!s.ok()) {
    deps_.live->RestoreFront(victims);
    return s;
  }
  deps_.gtids->SetPurged(std::move(*purged), std::move(*maria_purged));
  }  // index_mu_: rotations need it; the removals below do not.
  // The index no longer names the victims (a crash from here leaves files
  // that Open removes). A Reset meanwhile deleted them already and may
  // have created files with the same numbers: then leave them.
  sync::MutexLock rl(&removal_mu_);
  if (generation != generation_.load(std::memory_order_acquire)) return result;
  absl::Status first_error;
  for (uint64_t n : victims) {
    // Its GTID index first (it must not outlive its file); a failure is
    // the purge's error, the file is purged all the same (the next Open
    // removes the orphan index).
    absl::Status ir = RemoveGtidIndex(deps_.fs, PathOf(n));
    if (!ir.ok() && first_error.ok()) first_error = ir;
    absl::Status r = deps_.fs->Remove(PathOf(n));
    if (r.ok()) {
      result.purged.push_back(BinlogFileName(deps_.basename, n));
    } else if (first_error.ok()) {
      first_error = r;
    }
  }
  {
    sync::MutexLock l(&last_event_mu_);
    for (uint64_t n : victims) last_event_time_.erase(n);
  }
  absl::Status ds = deps_.index->directory()->Sync();
  if (!first_error.ok()) return first_error;
  if (!ds.ok()) return ds;
  return result;
}

absl::StatusOr<uint32_t> Retention::LastEventTime(uint64_t number,
                                                   uint64_t generation) {
  {
    sync::MutexLock l(&last_event_mu_);
    auto it = last_event_time_.find(number);
    if (it != last_event_time_.end()) return it->second;
  }
  BINLOG_ASSIGN_OR_RETURN(uint32_t ts,
                          FileLastEventTime(deps_.fs, deps_.basename, PathOf(number)));
  sync::MutexLock l(&last_event_mu_);
  // Not for a file of an earlier generation (a Reset reuses numbers).
  if (generation == generation_.load(std::memory_order_acquire)) {
    last_event_time_[number] = ts;
  }
  return ts;
}

absl::StatusOr<PurgeResult> Retention::PurgeBefore(absl::Time cutoff) {
  if (deps_.closed->load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("the log is closed");
  }
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  std::vector<uint64_t> files = deps_.live->Files();
  if (files.empty()) return PurgeResult();
  uint64_t target = files.back();
  PurgeResult::Kept newer;
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    BINLOG_ASSIGN_OR_RETURN(uint32_t ts, LastEventTime(files[i], generation));
    if (absl::FromUnixSeconds(ts) >= cutoff) {
      target = files[i];
      newer.file = BinlogFileName(deps_.basename, files[i]);
      newer.reason = absl::StrCat("its last event (", absl::FormatTime(absl::FromUnixSeconds(ts)),
                                  ") is not before ", absl::FormatTime(cutoff));
      break;
    }
  }
  BINLOG_ASSIGN_OR_RETURN(PurgeResult r, PurgeUpTo(target, generation));
  if (!newer.file.empty()) {
    if (r.kept.empty() || r.kept.back().file != newer.file) r.kept.push_back(newer);
  } else if (r.kept.empty()) {
    r.kept.push_back({BinlogFileName(deps_.basename, target), "the active file"});
  }
  return r;
}

void Retention::StartExpiry() {
  if (deps_.expire_after <= absl::ZeroDuration()) return;
  sync::MutexLock l(&expiry_mu_);
  expiry_thread_ = std::thread([this] { ExpiryLoop(); });
}

void Retention::StopExpiry() {
  std::thread t;
  {
    sync::MutexLock l(&expiry_mu_);
    expiry_stop_ = true;
    expiry_cv_.SignalAll();
    t = std::move(expiry_thread_);  // one caller joins it
  }
  if (t.joinable()) t.join();
}

void Retention::Kick() {
  if (deps_.expire_after <= absl::ZeroDuration()) return;
  sync::MutexLock l(&expiry_mu_);
  expiry_kicked_ = true;
  expiry_cv_.SignalAll();
}

void Retention::ExpiryLoop() {
  const absl::Duration interval = std::min(
      absl::Hours(1), std::max(absl::Seconds(1), deps_.expire_after / 8));
  for (;;) {
    // Now() is the clock of the events the log writes (Options::now_seconds).
    absl::Time cutoff = absl::FromUnixSeconds(deps_.now()) - deps_.expire_after;
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
