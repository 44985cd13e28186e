// BinlogImpl: file lifecycle: create (from a spare or prepared file),
// start with its header events, close with Rotate or Stop, rotate, Sync,
// Reset, Close, and what the files look like (ListFiles, stats). See
// binlog/log_impl.h.

#include "binlog/log_impl.h"
#include "binlog/transaction_internal.h"

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

absl::StatusOr<std::unique_ptr<io::WritableFile>> BinlogImpl::CreateLogFile(
    uint64_t number, const std::string& path, bool* from_spare, bool* name_durable) {
  *from_spare = false;
  *name_durable = false;
  created_allocated_ = false;
  if (rotation_ != nullptr) {
    std::unique_ptr<io::WritableFile> prepared =
        rotation_->TakePrepared(number, from_spare, &created_allocated_);
    if (prepared != nullptr) {
      *name_durable = true;
      return prepared;
    }
  }
  // At Open no spare can be ready yet (and asking would start preparing
  // spares for a log that may never fill its first file). Otherwise no
  // spare to come from means the background thread was late.
  const bool use_spare = startup_file_created_;
  if (preallocator_ != nullptr) startup_file_created_ = true;
  return io::CreateLogFileOrTakeSpare(fs_, preallocator_.get(), path, preallocated_size_,
                                      use_spare, from_spare, &created_allocated_,
                                      options_.file_mode);
}

absl::Status BinlogImpl::StartNewFile(uint64_t number, bool at_startup, bool deferred) {
  std::string name = BinlogFileName(basename_, number);
  std::string path = io::JoinPath(dir_, name);
  bool from_spare = false;
  bool name_durable = false;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> file,
                          CreateLogFile(number, path, &from_spare, &name_durable));
  if (options_.encryption) {
    // The 512-byte encryption header first; from here on `file` takes the
    // plain stream (offsets exclude the header) and encrypts it.
    std::string key_id, key;
    keys_->Current(&key_id, &key);
    auto enc = StartEncryptedFile(std::move(file), key_id, key, base_fs_);
    if (!enc.ok()) return enc.status();
    file = std::move(*enc);
  }
  if (!at_startup) {
    (from_spare ? rotations_from_spare_ : rotations_waited_)
        .fetch_add(1, std::memory_order_relaxed);
  }
  uint32_t now = Now();
  FdeParams fp;
  fp.timestamp = now;
  fp.server_id = options_.server_id;
  fp.server_version = options_.server_version;
  fp.create_timestamp = at_startup ? now : 0;
  fp.checksums = options_.checksums;
  fp.in_use = true;
  fp.flavor = options_.flavor;
  fp.mysql_layout = options_.mysql_layout;
  std::string fde = EncodeFormatDescription(fp);
  header_buf_.Clear();
  const bool mariadb = options_.flavor == LogFlavor::kMariaDB;
  if (options_.file_header) {
    GtidSet previous = gtids_.executed();
    MariaGtidState maria_previous;
    if (mariadb) maria_previous = gtids_.mariadb_state();
    FileHeaderContext ctx{number, name, &previous,
                          mariadb ? &maria_previous : nullptr};
    absl::Status s = options_.file_header(ctx, &header_buf_);
    if (!s.ok()) {
      file->Close().IgnoreError();  // the callback's error is the one to report
      return s;
    }
  } else if (mariadb) {
    // As MariaDB 10.11: Gtid_list with the binlog state of the files before
    // (rotation runs between groups, so that is the whole state now), then
    // the Binlog_checkpoint. It names this file: rotation runs after every
    // earlier group's ordered-commit callback (the engine commits) returned,
    // so no earlier file holds a transaction crash recovery must find.
    AppendMariaGtidList(&header_buf_, now, options_.server_id,
                        gtids_.mariadb_state());
    AppendBinlogCheckpoint(&header_buf_, now, options_.server_id, name);
  } else {
    // Previous_gtids: the GTIDs of every file before this one (8 zero
    // bytes of body without GTIDs, as MySQL writes it with GTIDs off).
    std::string body = gtids_.PreviousGtidsBody();
    header_buf_.AppendEvent(kPreviousGtidsEvent, options_.server_id, now, 0, body);
  }
  uint64_t header_start = kMagicSize + fde.size();
  if (header_start + header_buf_.size() + kEndReserve > options_.max_file_size &&
      header_buf_.size() > options_.max_file_size / 2) {
    file->Close().IgnoreError();
    return absl::InvalidArgumentError(absl::StrCat(
        "the file_header callback returned ", header_buf_.size(),
        " bytes of header events for ", name,
        ", more than half of max_file_size (", options_.max_file_size, ")"));
  }
  if (!header_buf_.empty()) {
    TransactionBufferInternal::Seal(&header_buf_);
    TransactionBufferInternal::Place(&header_buf_, header_start);
  }
  absl::string_view parts[3] = {absl::string_view(kBinlogMagic, kMagicSize),
                                fde, header_buf_.data()};
  absl::Status s = file->WriteV(0, parts);
  if (!deferred) {
    if (s.ok()) s = file->Sync();
    if (s.ok()) s = dir_handle_->Sync();
  } else if (s.ok() && !name_durable) {
    // No file was prepared ahead: the name must be durable before the
    // first commit in the file is (its header is made durable by that
    // commit's group).
    s = dir_handle_->Sync();
  }
  if (!s.ok()) {
    file->Close().IgnoreError();  // the write/sync error is the one to report
    return s;
  }
  // Before the file is listed: readers trust its published bytes
  // (ReaderOptions::verify_published_checksums).
  live_->NoteWrittenHere(number);
  // Deferred: readers may follow the Rotate event to it; the index file
  // names it once its header is durable (the rotation thread's close).
  s = index_.AddFile(number, deferred);
  if (!s.ok()) {
    file->Close().IgnoreError();
    return s;
  }
  active_ = std::move(file);
  active_number_ = number;
  end_ = synced_end_ = header_end_ = header_start + header_buf_.size();
  if (header_end_ > largest_header_.load(std::memory_order_relaxed)) {
    largest_header_.store(header_end_, std::memory_order_relaxed);
  }
  groups_since_sync_ = 0;
  clock_.StartFile(number);  // logical clocks restart in every file (MySQL)
  if (at_startup) {
    // Nothing committed in this file yet; never 0, which a transaction's
    // commit parent uses for "not captured".
    commit_clock_.store(number << 32, std::memory_order_release);
  }
  // Deferred: the group that follows publishes the file once it is synced.
  if (!deferred) live_->Publish(number, end_);
  if (created_allocated_ && options_.preallocate == io::PreallocMode::kZeroFill &&
      options_.zero_ahead > 0 && options_.sync_policy != SyncPolicy::kNever &&
      end_ < preallocated_size_ && io::WritebackErrorsPerDescriptor()) {
    // A file that is only fallocated (no spare was ready): zero-fill it
    // ahead of the writer in the background, as the Preallocator fills its
    // spares (io/zero_frontier.h). Through a handle of its own, which
    // needs a kernel that reports write-back errors to every descriptor.
    // Best effort: without it the file is written as it is.
    auto handle = fs_->OpenWritable(path, io::OpenMode::kOpenExisting);
    if (handle.ok()) {
      io::ZeroFrontierOptions zo;
      zo.ahead = options_.zero_ahead;
      zo.chunk = std::min<uint64_t>(1 << 20, options_.zero_ahead);
      // The space was reserved in raw bytes; the frontier's handle writes
      // stream offsets (512 bytes less in an encrypted file).
      zo.limit = preallocated_size_ - (options_.encryption ? kEncryptionHeaderSize : 0);
      zo.chunk_counter = &zero_fill_chunks_;
      frontier_ = std::make_unique<io::ZeroFrontier>(std::move(*handle), end_, zo);
    }
  }
  return absl::OkStatus();
}

void BinlogImpl::StopFrontier() {
  if (frontier_ == nullptr) return;
  frontier_->Stop();
  frontier_.reset();
}

absl::Status BinlogImpl::CloseActiveFile(bool rotate, uint64_t next_number) {
  // Nothing more is zero-filled: the end event and the cut come next.
  StopFrontier();
  std::string ev;
  if (rotate) {
    std::string next = BinlogFileName(basename_, next_number);
    size_t size = RotateEventSize(next, options_.checksums);
    ev = EncodeRotate(Now(), options_.server_id, next,
                      static_cast<uint32_t>(end_ + size), options_.checksums);
  } else {
    size_t size = kHeaderSize + (options_.checksums ? kChecksumSize : 0);
    ev = EncodeStop(Now(), options_.server_id,
                    static_cast<uint32_t>(end_ + size), options_.checksums);
  }
  BINLOG_RETURN_IF_ERROR(active_->Write(end_, ev));
  end_ += ev.size();
  // Zeros after the end cut (trim_preallocated), the end event durable,
  // then the in-use flag cleared (FDE flags low byte) and durable.
  BINLOG_RETURN_IF_ERROR(FinishFileClose(
      active_.get(), end_, options_.trim_preallocated, /*flags_lo=*/0,
      [this](io::WritableFile* f) { return syncs_.TimedSync(f); }));
  synced_end_ = end_;
  groups_since_sync_ = 0;
  absl::Status s = active_->Close();
  active_.reset();
  return s;
}

absl::Status BinlogImpl::SyncNow() {
  absl::Status s = TimedSync();
  if (!s.ok()) return s;
  synced_end_ = end_;
  groups_since_sync_ = 0;
  return absl::OkStatus();
}

absl::Status BinlogImpl::RotateNow(bool from_flush) {
  uint64_t next = active_number_ + 1;
  if (next > kMaxFileNumber) {
    return absl::ResourceExhaustedError("binlog file numbers exhausted");
  }
  // One rotation's background close at a time (the next one reuses the
  // slot, and the index must name the previous file first).
  BINLOG_RETURN_IF_ERROR(WaitRotationIdle());
  // Every earlier ordered-commit callback has returned (the pipeline is
  // drained): the engine makes those commits durable before the file is
  // left for good, so recovery never needs to scan it.
  if (options_.flush_engine_logs) {
    absl::Status fs = options_.flush_engine_logs();
    if (!fs.ok()) {
      return absl::Status(fs.code(), absl::StrCat("flush_engine_logs before rotating ",
                                                  BinlogFileName(basename_, active_number_),
                                                  ": ", fs.message()));
    }
  }
  rotations_.fetch_add(1, std::memory_order_relaxed);
  if (!(from_flush && rotation_ != nullptr)) {
    BINLOG_RETURN_IF_ERROR(CloseActiveFile(/*rotate=*/true, next));
    // Its GTID index, in the builder's thread.
    if (gidx_ != nullptr) gidx_->Add(PathOf(next - 1), options_.flavor);
    BINLOG_RETURN_IF_ERROR(StartNewFile(next, /*at_startup=*/false));
    retention_->Kick();  // a file was closed: it may be old enough already
    return absl::OkStatus();
  }
  // Off the commit path: here only the old file's Rotate event and the new
  // file's header are written. Every group in the old file is synced
  // already (SyncPolicy::kEveryGroup, and Flush drained the sync stage), so
  // a crash before the rotation thread is done can leave only the Rotate
  // event torn or missing and the flag set: Open closes such a file
  // (CloseUnclosedFile). The engine's commits of the old file are durable
  // (flush_engine_logs above), so no prepared transaction of it can need a
  // two-phase-commit scan.
  StopFrontier();
  std::string name = BinlogFileName(basename_, next);
  size_t size = RotateEventSize(name, options_.checksums);
  std::string ev = EncodeRotate(Now(), options_.server_id, name,
                                static_cast<uint32_t>(end_ + size), options_.checksums);
  BINLOG_RETURN_IF_ERROR(active_->Write(end_, ev));
  end_ += ev.size();
  auto job = std::make_unique<RotationWorker::PendingClose>();
  job->old_number = active_number_;
  job->old_end = end_;
  job->old_file = std::move(active_);
  absl::Status s = StartNewFile(next, /*at_startup=*/false, /*deferred=*/true);
  if (!s.ok()) {
    // The log fails (the caller poisons it); the old file keeps its flag
    // and Open closes it.
    job->old_file->Close().IgnoreError();
    return s;
  }
  job->new_number = next;
  rotation_->HandOffClose(std::move(job));
  return absl::OkStatus();
}

absl::Status BinlogImpl::Sync() {
  if (closed_.load()) return absl::FailedPreconditionError("the log is closed");
  return pipeline_->RunExclusive([this]() -> absl::Status {
    if (synced_end_ < end_) {
      absl::Status s = SyncNow();
      if (!s.ok()) {
        pipeline_->Poison(s);
        return s;
      }
    }
    live_->Publish(active_number_, end_);
    return absl::OkStatus();
  });
}

absl::Status BinlogImpl::Rotate() {
  if (closed_.load()) return absl::FailedPreconditionError("the log is closed");
  return pipeline_->RunExclusive([this]() -> absl::Status {
    absl::Status s = RotateNow();
    if (!s.ok()) pipeline_->Poison(s);
    return s;
  });
}

absl::Status BinlogImpl::RotateEncryptionKey() {
  if (!options_.encryption) {
    return absl::FailedPreconditionError(
        "RotateEncryptionKey: the log is not encrypted (Options::encryption)");
  }
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("RotateEncryptionKey after Close");
  }
  sync::MutexLock rl(keys_->rotation_mu());
  BINLOG_RETURN_IF_ERROR(keys_->Use(keys_->seqno() + 1));
  // New files (from this rotation on) use the new key.
  BINLOG_RETURN_IF_ERROR(Rotate());
  std::string id, key;
  keys_->Current(&id, &key);
  // Then every older file's password is re-encrypted under it, one header
  // (one 512-byte write + fdatasync) at a time. Each file is readable with
  // its old key until its header is replaced, and with the new one after.
  // Under the removal lock: no purge removes, and no Reset replaces, a file
  // between the read of its header and the write of the new one (a Reset
  // reuses file names: the header of its new file must not get an old
  // file's password).
  sync::MutexLock removal_lock(retention_->removal_mu());
  for (uint64_t n : live_->Files()) {
    std::string path = PathOf(n);
    auto h = ReadEncryptionHeader(base_fs_, path);
    if (absl::IsNotFound(h.status())) continue;  // plain, or purged before
    if (!h.ok()) return h.status();
    if (h->key_id == id) continue;
    BINLOG_RETURN_IF_ERROR(
        RewrapFileHeader(base_fs_, path, options_.keyring, id, key));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::Reset(uint64_t first) {
  if (first < 1 || first > kMaxFileNumber) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Reset: the first file number must be 1..", kMaxFileNumber, ", not ", first));
  }
  if (closed_.load()) return absl::FailedPreconditionError("the log is closed");
  return pipeline_->RunExclusive([this, first]() -> absl::Status {
    if (options_.flush_engine_logs) {
      // As before any file is left for good: after the reset no scan can
      // find the transactions of the deleted files. Nothing changed yet:
      // a failure refuses the Reset.
      absl::Status fs = options_.flush_engine_logs();
      if (!fs.ok()) {
        return absl::Status(fs.code(), absl::StrCat("flush_engine_logs before Reset: ",
                                                    fs.message()));
      }
    }
    // From here until the new first file is published, readers cannot
    // open files (a reader created meanwhile gets NotFound).
    int readers = 0;
    if (!live_->BeginReset(&readers)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Reset: ", readers, " reader(s) of the log are open; close them first"));
    }
    absl::Status index_error;
    absl::Status s = ResetNow(first, &index_error);
    live_->EndReset();
    if (!s.ok()) pipeline_->Poison(s);
    // A GTID index that could not be removed: the reset is done, the log
    // sound (the error is reported, nothing poisoned).
    return s.ok() ? index_error : s;
  });
}

absl::Status BinlogImpl::ResetNow(uint64_t first, absl::Status* index_error) {
  // No background close or preparation under way, and no prepared file
  // left to collide with the new numbering.
  BINLOG_RETURN_IF_ERROR(WaitRotationIdle());
  if (rotation_ != nullptr) {
    rotation_->DiscardPrepared();
    // File numbers start over: a rotation's wait for the new file's first
    // sync compares against this (the pipeline is drained here).
    rotation_->ResetNumbering();
  }
  prepare_requested_for_ = 0;
  sync::MutexLock rl(retention_->removal_mu());
  {
    sync::MutexLock il(index_.mu());
    // Purges that looked at the old files must not act on the new ones.
    retention_->StartNewGeneration();
    // Nothing more is zero-filled in the file about to be removed (also
    // if the reset fails here: the log is then poisoned).
    StopFrontier();
    // Durable intent first: from here on, Open finishes the reset.
    BINLOG_RETURN_IF_ERROR(WriteResetIntent(fs_, dir_handle_.get(), dir_, basename_, first,
                                            options_.file_mode));
    if (active_ != nullptr) {
      absl::Status cs = active_->Close();
      active_.reset();
      BINLOG_RETURN_IF_ERROR(cs);
    }
    // No build of an old file may run on (or index) a new file that
    // reuses its name.
    if (gidx_ != nullptr) gidx_->Cancel();
    for (uint64_t n : live_->Files()) {
      // The GTID index first (it must not outlive its file). Its failure
      // does not stop the reset (the reset's error once it is done).
      absl::Status ir = RemoveGtidIndex(fs_, PathOf(n));
      if (!ir.ok() && index_error->ok()) *index_error = ir;
      absl::Status r = fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n)));
      if (!r.ok() && !absl::IsNotFound(r)) return r;
    }
    live_->ResetFiles();
    BINLOG_RETURN_IF_ERROR(index_.WriteLocked());
  }
  retention_->ForgetEventTimes();
  gtids_.Clear();
  BINLOG_RETURN_IF_ERROR(index_.RecordSyncPolicy(options_, first, {}));
  BINLOG_RETURN_IF_ERROR(StartNewFile(first, /*at_startup=*/true));
  BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, ResetIntentFileName(basename_))));
  return dir_handle_->Sync();
}

absl::Status BinlogImpl::CloseInPipeline() {
  // Runs after every earlier request is done and no stage is busy; nothing
  // runs after it. Under index_mu_: a purge either finished its index
  // update before, or sees the log closed (the lock is released below).
  // First the last rotation's background close (it indexes the active file).
  absl::Status rs = WaitRotationIdle();
  {
    sync::MutexLock il(index_.mu());
    closed_.store(true, std::memory_order_release);
  }
  // Nothing is written after Close, not even zeros past the end (also
  // when the log failed earlier and writes nothing more of its own).
  StopFrontier();
  absl::Status s = pipeline_->error();
  if (s.ok()) s = rs;
  if (!s.ok()) {
    s = PoisonedStatus(s);  // write nothing after a failure
  } else if (active_ != nullptr) {
    uint64_t number = active_number_;
    if (options_.flush_engine_logs) {
      // As at rotation: the engine's commits are durable before the file
      // claims a clean close (after which recovery scans nothing).
      s = options_.flush_engine_logs();
      if (!s.ok()) {
        s = absl::Status(s.code(), absl::StrCat("flush_engine_logs before closing ",
                                                BinlogFileName(basename_, number), ": ",
                                                s.message()));
      }
    }
    if (s.ok()) s = CloseActiveFile(/*rotate=*/false, 0);
    // The Stop event is durable: publish it, so waiting readers read to it
    // and then learn that the log ended.
    if (s.ok()) live_->Publish(number, end_);
  }
  live_->MarkClosed(s.ok());
  if (active_ != nullptr) {
    // Failed before or during the close: readers stop at the last
    // published end, the file keeps its in-use flag for recovery.
    active_->Close().IgnoreError();  // the error to report is `s`
    active_.reset();
  }
  if (rotation_ != nullptr) rotation_->Stop();  // removes a prepared file no rotation used
  if (preallocator_ != nullptr) preallocator_->Stop();  // removes spares
  lock_.reset();
  return s;
}

absl::Status BinlogImpl::Close() {
  retention_->StopExpiry();
  // The files closed before this one get their indexes first, within
  // Options::gtid_index_close_wait; the rest are cancelled.
  if (gidx_ != nullptr) {
    gidx_->WaitIdleFor(options_.gtid_index_close_wait);
    gidx_->Stop();
  }
  return pipeline_->Close([this]() { return CloseInPipeline(); });
}

std::vector<LogFileInfo> BinlogImpl::ListFiles() const {
  std::vector<LogFileInfo> out;
  const std::vector<uint64_t> files = live_->Files();
  const uint64_t published = live_->published();
  for (uint64_t n : files) {
    LogFileInfo info;
    info.number = n;
    info.name = BinlogFileName(basename_, n);
    if (n == (published >> 32) && n == files.back() && !closed_.load()) {
      info.size = published & 0xFFFFFFFFu;  // the active file: what readers may read
    } else if (n > (published >> 32) && !closed_.load()) {
      info.size = 0;  // a rotation's new file before its first sync
    } else {
      // A closed file; 0 if it went away meanwhile (purged).
      absl::StatusOr<uint64_t> size = fs_->FileSize(io::JoinPath(dir_, info.name));
      info.size = size.ok() ? *size : 0;
    }
    info.encrypted =
        ReadEncryptionHeader(base_fs_, io::JoinPath(dir_, info.name)).ok();
    out.push_back(std::move(info));
  }
  return out;
}

CommitPosition BinlogImpl::VisibleEnd() const {
  uint64_t p = live_->published();
  CommitPosition pos;
  pos.file_number = p >> 32;
  pos.start = pos.end = p & 0xFFFFFFFFu;
  return pos;
}

LogStats BinlogImpl::stats() const {
  sync::GroupCommitPipeline::Stats ps = pipeline_->stats();
  LogStats s;
  s.commits = ps.commits;
  s.groups = ps.groups;
  s.max_group_size = ps.max_group;
  s.sync_rounds = ps.sync_rounds;
  s.queued_requests = ps.queued;
  s.fsyncs = syncs_.fsyncs.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.fsync_micros = syncs_.micros.load(std::memory_order_relaxed);
  s.rotations = rotations_.load(std::memory_order_relaxed);
  s.files_preallocated =
      preallocator_ != nullptr ? preallocator_->files_prepared() : 0;
  s.rotations_from_spare = rotations_from_spare_.load(std::memory_order_relaxed);
  s.rotations_waited = rotations_waited_.load(std::memory_order_relaxed);
  if (rotation_ != nullptr) {
    s.rotations_in_background = rotation_->closes();
    s.rotations_prepared = rotation_->prepared_taken();
  }
  s.zero_fill_chunks = zero_fill_chunks_.load(std::memory_order_relaxed);
  s.rejected_commits = rejected_.load(std::memory_order_relaxed);
  s.files_expired = retention_->files_expired();
  s.last_expiry_error = retention_->last_expiry_error();
  return s;
}

}  // namespace internal
}  // namespace binlog
