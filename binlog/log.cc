// Binlog: the writer side of a log, and the live source its readers follow.
//
// Actors and state.
//   Committing threads: build a TransactionBuffer and Seal() it (checksums
//     with log_pos = 0) in their own thread, then enter the group-commit
//     pipeline (sync/group_commit.h). The pipeline's flush leader runs
//     FlushGroup: rotation if due, Place() of every transaction (final
//     log_pos and checksum correction, 8 bytes per event), one pwritev for
//     the group. Its sync leader runs SyncGroups (one fdatasync for every
//     group flushed meanwhile) and GroupDone (publish, ordered-commit
//     callback). One thread at a time holds each role, so the flush-stage
//     state (active_, end_, header_buf_, iov_) and the sync-stage state
//     (synced_end_, groups_since_sync_) need no mutex. Rotation, Sync() and
//     Close() run as exclusive pipeline operations: after every earlier
//     group is done, before any later one is flushed.
//   Readers: take no lock the writer holds during I/O. They read
//     LiveLog::published_ (one atomic word), the file list under
//     LiveLog::files_mu_ (held only for list operations, never during I/O),
//     and sleep on a sync::TailNotifier when they have caught up (one futex
//     wake for all of them, coalesced under load).
//   Purge: takes index_mu_ and files_mu_, never a pipeline role.
//
// Invariants.
//   - published_ only moves forward, always to an event boundary, and only to
//     bytes that are durable under kEveryGroup (written under the other
//     policies).
//   - A file is listed in the index only after its header is durable and its
//     directory entry is synced; a transaction is written to a file only
//     after the file is listed in a durable index. So after a crash every
//     acknowledged transaction is in a file the index names.
//   - After any I/O error in the serial section, error_ is set and nothing
//     more is written or published.

#include "binlog/log.h"

#include <algorithm>
#include <cstring>

#include <ctime>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log_source.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "sync/mutex.h"
#include "sync/tail_notifier.h"

namespace binlog {
namespace internal {

// The live view of a log that readers follow.
class LiveLog final : public LogSource {
 public:
  LiveLog(std::string dir, std::string basename, absl::Duration coalesce)
      : dir_(std::move(dir)), basename_(std::move(basename)),
        notifier_(coalesce) {}

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

  // Removes up to `count` of the oldest files below `target` that no reader
  // pins and that are not the newest file; returns them.
  std::vector<uint64_t> TakePurgeable(uint64_t target) {
    sync::MutexLock l(&files_mu_);
    std::vector<uint64_t> out;
    size_t i = 0;
    for (; i + 1 < files_.size(); ++i) {
      uint64_t n = files_[i];
      if (n >= target) break;
      auto it = pins_.find(n);
      if (it != pins_.end() && it->second > 0) break;
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

  absl::Status Wait(uint64_t file, uint64_t offset,
                    absl::Time deadline) override {
    auto more = [&]() {
      uint64_t p = published();
      return (p >> 32) > file || (p & 0xFFFFFFFFu) > offset;
    };
    if (notifier_.Wait(more, deadline)) return absl::OkStatus();
    if (ended_.load(std::memory_order_acquire)) {
      return absl::CancelledError("the log was closed");
    }
    return absl::DeadlineExceededError("no new events before the deadline");
  }

  bool Pin(uint64_t n) override {
    sync::MutexLock l(&files_mu_);
    if (!std::binary_search(files_.begin(), files_.end(), n)) return false;
    ++pins_[n];
    return true;
  }
  void Unpin(uint64_t n) override {
    sync::MutexLock l(&files_mu_);
    auto it = pins_.find(n);
    if (it != pins_.end() && --it->second == 0) pins_.erase(it);
  }

 private:
  const std::string dir_;
  const std::string basename_;

  // (file << 32) | offset of the end readers may read. Written only by the
  // writer holding Binlog::write_mu_; loaded by readers without locks.
  // Kept on its own cache line: every reader polls it, the writer stores it
  // once per group.
  alignas(64) std::atomic<uint64_t> published_{0};
  std::atomic<bool> clean_closed_{false};
  std::atomic<bool> ended_{false};
  sync::TailNotifier notifier_;  // readers sleep here when caught up

  sync::Mutex files_mu_;
  std::vector<uint64_t> files_ ABSL_GUARDED_BY(files_mu_);
  std::map<uint64_t, int> pins_ ABSL_GUARDED_BY(files_mu_);
};

}  // namespace internal

namespace {

// Room kept below the 32-bit offset limit for the Rotate/Stop event.
constexpr uint64_t kEndReserve = 1024;

absl::Status ValidateOptions(const std::string& basename, const Options& o) {
  if (basename.empty() || basename.find('/') != std::string::npos ||
      basename == "." || basename == "..") {
    return absl::InvalidArgumentError(absl::StrCat(
        "basename '", basename, "' must be a non-empty file name without '/'"));
  }
  constexpr uint64_t kMaxSize = kMaxFileOffset - (64ull << 20);
  if (o.max_file_size < 4096 || o.max_file_size > kMaxSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_file_size ", o.max_file_size, " outside [4096, ", kMaxSize, "]"));
  }
  if (o.sync_policy == SyncPolicy::kEveryNGroups && o.sync_every_n == 0) {
    return absl::InvalidArgumentError("sync_every_n must be >= 1");
  }
  if (!ServerVersionHasChecksumAlg(o.server_version) ||
      o.server_version.size() >= kFdeServerVersionLen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server_version '", o.server_version,
        "' must parse as X.Y.Z >= 5.6.1 and be shorter than 50 bytes"));
  }
  BINLOG_RETURN_IF_ERROR(ValidatePayloadCompression(PayloadCompression{
      o.compression, o.compression_level, o.compression_threshold}));
  return absl::OkStatus();
}

}  // namespace

class Binlog::Hooks final : public sync::GroupCommitHooks {
 public:
  explicit Hooks(Binlog* log) : log_(log) {}
  absl::Status Flush(sync::CommitGroup* g) override { return log_->FlushGroup(g); }
  absl::Status Sync(sync::CommitGroup* first, sync::CommitGroup* last) override {
    return log_->SyncGroups(first, last);
  }
  void GroupDone(sync::CommitGroup* g) override { log_->GroupDone(g); }

 private:
  Binlog* log_;
};

Binlog::Binlog(std::string dir, std::string basename, const Options& options)
    : dir_(std::move(dir)),
      basename_(std::move(basename)),
      options_(options),
      fs_(options.file_system != nullptr ? options.file_system
                                         : io::FileSystem::Default()),
      live_(std::make_shared<internal::LiveLog>(
          dir_, basename_, absl::Microseconds(options.reader_wake_coalesce_us))),
      header_buf_(options.checksums) {
  hooks_ = std::make_unique<Hooks>(this);
  sync::GroupCommitOptions go;
  go.sync_delay = absl::Microseconds(options_.sync_delay_us);
  go.sync_no_delay_count = options_.sync_no_delay_count;
  pipeline_ = std::make_unique<sync::GroupCommitPipeline>(hooks_.get(), go);
  iov_.reserve(256);
}

Binlog::~Binlog() {
  // Best effort: the caller did not call Close(); its error has nowhere to go.
  if (!closed_.load()) Close().IgnoreError();
}

uint32_t Binlog::Now() const {
  if (options_.now_seconds) return options_.now_seconds();
  return static_cast<uint32_t>(::time(nullptr));
}

absl::StatusOr<std::unique_ptr<Binlog>> Binlog::Open(
    const std::string& dir, const std::string& basename,
    const Options& options) {
  BINLOG_RETURN_IF_ERROR(ValidateOptions(basename, options));
  std::unique_ptr<Binlog> log(new Binlog(dir, basename, options));
  absl::Status s = log->OpenImpl();
  if (!s.ok()) {
    log->closed_.store(true);  // nothing to close
    return s;
  }
  return log;
}

absl::Status Binlog::OpenImpl() {
  if (options_.create_if_missing) {
    BINLOG_RETURN_IF_ERROR(fs_->CreateDirectory(dir_));
  } else {
    BINLOG_ASSIGN_OR_RETURN(bool exists, fs_->Exists(dir_));
    if (!exists) return absl::NotFoundError(absl::StrCat("no directory ", dir_));
  }
  BINLOG_ASSIGN_OR_RETURN(
      lock_, fs_->LockFile(io::JoinPath(dir_, absl::StrCat(basename_, ".lock"))));
  BINLOG_ASSIGN_OR_RETURN(dir_handle_, fs_->OpenDirectory(dir_));
  BINLOG_ASSIGN_OR_RETURN(std::vector<std::string> names,
                          fs_->ListDirectory(dir_));
  std::vector<uint64_t> on_disk;
  for (const auto& n : names) {
    uint64_t num;
    if (ParseBinlogFileName(basename_, n, &num)) on_disk.push_back(num);
  }
  std::sort(on_disk.begin(), on_disk.end());

  // This library replaces the index with an atomic rename, so a
  // `.index_crash_safe` without `.index` is the first index of a log whose
  // first Open died before the index was durable: no transaction was ever
  // acknowledged (commits start after it). It may be torn: drop it.
  {
    std::string index_path = io::JoinPath(dir_, IndexFileName(basename_));
    std::string tmp_path = io::JoinPath(dir_, IndexTempFileName(basename_));
    BINLOG_ASSIGN_OR_RETURN(bool has_index, fs_->Exists(index_path));
    BINLOG_ASSIGN_OR_RETURN(bool has_tmp, fs_->Exists(tmp_path));
    if (!has_index && has_tmp) {
      BINLOG_RETURN_IF_ERROR(fs_->Remove(tmp_path));
      BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
    }
  }
  std::vector<uint64_t> numbers;
  auto index = ReadIndex(fs_, dir_, basename_);
  if (index.ok()) {
    numbers = std::move(*index);
  } else if (absl::IsNotFound(index.status())) {
    // No index: a first Open that died before its index was durable leaves
    // binlog files holding header events only (or zeros). Remove those;
    // refuse if any file holds more.
    std::vector<uint64_t> kept;
    for (uint64_t n : on_disk) {
      bool removed = false;
      BINLOG_RETURN_IF_ERROR(RemoveInterruptedRotation(n, &removed));
      if (!removed) kept.push_back(n);
    }
    if (!kept.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          dir_, ": ", kept.size(), " binlog files ", basename_,
          ".NNNNNN with events exist but there is no ",
          IndexFileName(basename_), "; refusing to guess which belong to the log"));
    }
    on_disk.clear();
  } else {
    return index.status();
  }
  for (uint64_t n : numbers) {
    if (!std::binary_search(on_disk.begin(), on_disk.end(), n)) {
      return absl::NotFoundError(absl::StrCat(
          io::JoinPath(dir_, IndexFileName(basename_)), " names ",
          BinlogFileName(basename_, n), ", which does not exist"));
    }
  }
  uint64_t max_number = numbers.empty() ? 0 : numbers.back();
  for (uint64_t n : on_disk) {
    if (n == max_number + 1 && !std::binary_search(numbers.begin(), numbers.end(), n)) {
      bool removed = false;
      BINLOG_RETURN_IF_ERROR(RemoveInterruptedRotation(n, &removed));
      if (removed) continue;
    }
    if (!std::binary_search(numbers.begin(), numbers.end(), n)) {
      // Left alone: a file of an interrupted rotation (it holds no
      // acknowledged transaction, since commits go only to indexed files)
      // or a file someone else put here. New files number past it.
      recovery_.ignored_files.push_back(BinlogFileName(basename_, n));
      max_number = std::max(max_number, n);
    }
  }
  if (!numbers.empty()) BINLOG_RETURN_IF_ERROR(RecoverLastFile(numbers.back()));
  live_->SetFiles(numbers);
  if (max_number + 1 > kMaxFileNumber) {
    return absl::ResourceExhaustedError("binlog file numbers exhausted");
  }
  if (options_.preallocate != io::PreallocMode::kNone) {
    io::PreallocatorOptions po;
    po.fs = fs_;
    po.dir = dir_;
    po.prefix = basename_;
    // Room for the file plus some slack for the group that crosses the
    // limit; a bigger group simply extends the file.
    po.file_size = options_.max_file_size +
                   std::min<uint64_t>(4 << 20, options_.max_file_size / 8);
    preallocated_size_ = po.file_size;
    po.mode = options_.preallocate;
    po.spares = options_.preallocated_files;
    BINLOG_ASSIGN_OR_RETURN(preallocator_, io::Preallocator::Start(po));
  }
  // No pipeline activity yet: this thread owns the flush-stage state.
  return StartNewFile(max_number + 1, /*at_startup=*/true);
}

absl::Status Binlog::RemoveInterruptedRotation(uint64_t number, bool* removed) {
  // The file right after the last indexed one, not in the index: a
  // rotation was interrupted before its index update. Commits go only to
  // indexed files, so it holds no acknowledged transaction. Remove it if it
  // is provably ours and empty: all zeros (a renamed spare), or a binlog
  // with nothing but header events. Anything else is left alone.
  *removed = false;
  std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          fs_->OpenReadable(path));
  char head[kMagicSize] = {0, 0, 0, 0};
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(0, kMagicSize, head, &got));
  bool ours_and_empty = false;
  if (got == 0 || (got == kMagicSize && std::memcmp(head, "\0\0\0\0", 4) == 0)) {
    ours_and_empty = true;  // empty or zero-filled spare
  } else if (got == kMagicSize && std::memcmp(head, kBinlogMagic, kMagicSize) == 0) {
    ReaderOptions ro;
    auto reader = Reader::OpenFiles({path}, ro, fs_);
    if (!reader.ok()) return reader.status();
    Event ev;
    ours_and_empty = true;
    int events = 0;
    absl::Status s;
    while ((s = (*reader)->Next(&ev)).ok()) {
      ++events;
      uint8_t t = ev.header.type;
      if (t != kFormatDescriptionEvent && t != kPreviousGtidsEvent &&
          t != kMariaGtidListEvent && t != kMariaBinlogCheckpointEvent) {
        ours_and_empty = false;
        break;
      }
    }
    // A file with our magic and no complete event at all (a torn
    // Format_description) holds no transaction either.
    (void)events;
  }
  if (!ours_and_empty) return absl::OkStatus();
  BINLOG_RETURN_IF_ERROR(fs_->Remove(path));
  BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
  recovery_.removed_files.push_back(BinlogFileName(basename_, number));
  *removed = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<io::WritableFile>> Binlog::CreateLogFile(
    const std::string& path, bool* from_spare) {
  *from_spare = false;
  // At Open no spare can be ready yet (and asking would start preparing
  // spares for a log that may never fill its first file).
  if (preallocator_ != nullptr && startup_file_created_) {
    auto spare = preallocator_->TakeReady();
    if (spare.ok()) {
      // The spare is sized, synced and its name durable; give it its final
      // name (made durable by the caller's directory fsync).
      BINLOG_RETURN_IF_ERROR(fs_->Rename(*spare, path));
      *from_spare = true;
      return fs_->OpenWritable(path, io::OpenMode::kOpenExisting);
    }
  }
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          fs_->OpenWritable(path, io::OpenMode::kCreateNew));
  if (preallocator_ != nullptr) {
    // No spare to come from (the first file after Open, or the background
    // thread was late). Reserving the space with fallocate is a
    // metadata-only operation, so at least the file size does not change on
    // every commit. Best effort: without fallocate the file simply grows.
    startup_file_created_ = true;
    f->Allocate(0, preallocated_size_, /*keep_size=*/false).IgnoreError();
  }
  return f;
}

absl::Status Binlog::RecoverLastFile(uint64_t number) {
  std::string name = BinlogFileName(basename_, number);
  std::string path = io::JoinPath(dir_, name);
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kVerify;
  // A complete, checksum-valid Transaction_payload ends its transaction;
  // recovery need not decompress it (and must not cut an acknowledged
  // transaction because of its content).
  ro.payloads = PayloadMode::kRaw;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                          Reader::OpenFiles({path}, ro, fs_));
  Event ev;
  absl::Status s = reader->Next(&ev);
  if (!s.ok()) {
    return absl::DataLossError(absl::StrCat(
        "cannot recover ", path, ": its Format_description event is unreadable: ",
        s.message()));
  }
  const FormatDescription fde = reader->format_description();
  if (!fde.in_use) return absl::OkStatus();  // closed cleanly
  if (!fde.has_checksums()) {
    // Without checksums a torn Transaction_payload can look complete; only
    // decompressing it (sizes and frame checked) tells. Rescan decoded.
    ro.payloads = PayloadMode::kDecoded;
    BINLOG_ASSIGN_OR_RETURN(reader, Reader::OpenFiles({path}, ro, fs_));
    BINLOG_RETURN_IF_ERROR(reader->Next(&ev));
  }

  // Scan: the valid end advances only past events that leave no
  // transaction open (the Format_description and header events count).
  TransactionBoundaryParser parser(fde.PostHeaderLen(kQueryEvent));
  uint64_t valid_end = ev.end_offset;
  uint64_t pending = 0;
  std::string reason = "end of file";
  for (;;) {
    s = reader->Next(&ev);
    if (!s.ok()) break;
    auto r = parser.Feed(ev.header, ev.body());
    if (r == TransactionBoundaryParser::Result::kOutside ||
        r == TransactionBoundaryParser::Result::kEnded) {
      valid_end = ev.end_offset;
      pending = 0;
    } else {
      ++pending;
    }
  }
  bool partial = false;
  if (absl::IsOutOfRange(s)) {
    if (!reader->torn_tails().empty()) {
      const TornTail& t = reader->torn_tails().front();
      partial = !t.zeros;
      reason = t.reason;
    } else if (pending > 0) {
      reason = "file ends inside a transaction";
    }
  } else if (absl::IsDataLoss(s)) {
    partial = true;
    reason = std::string(s.message());
  } else {
    return s;  // I/O error: change nothing
  }
  reader.reset();

  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs_->FileSize(path));
  recovery_.recovered = true;
  recovery_.file_name = name;
  recovery_.valid_end = valid_end;
  recovery_.bytes_cut = size > valid_end ? size - valid_end : 0;
  recovery_.events_cut = pending;
  recovery_.partial_event_cut = partial && recovery_.bytes_cut > 0;
  recovery_.reason = recovery_.bytes_cut > 0 ? reason : "clean end";

  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          fs_->OpenWritable(path, io::OpenMode::kOpenExisting));
  absl::Status ws = absl::OkStatus();
  if (size > valid_end) ws = f->Truncate(valid_end);
  // Clear the in-use flag (one byte in place; the FDE checksum is defined
  // with the flag clear, so it stays valid).
  char flags_lo = 0;
  size_t got = 0;
  if (ws.ok()) {
    auto rf = fs_->OpenReadable(path);
    ws = rf.ok() ? (*rf)->Read(kInUseFlagFileOffset, 1, &flags_lo, &got)
                 : rf.status();
  }
  if (ws.ok()) {
    flags_lo = static_cast<char>(flags_lo & ~kFlagBinlogInUse);
    ws = f->Write(kInUseFlagFileOffset, absl::string_view(&flags_lo, 1));
  }
  if (ws.ok()) ws = f->Sync();
  absl::Status cs = f->Close();
  if (!ws.ok()) return ws;
  return cs;
}

absl::Status Binlog::StartNewFile(uint64_t number, bool at_startup) {
  std::string name = BinlogFileName(basename_, number);
  std::string path = io::JoinPath(dir_, name);
  bool from_spare = false;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> file,
                          CreateLogFile(path, &from_spare));
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
  std::string fde = EncodeFormatDescription(fp);
  header_buf_.Clear();
  if (options_.file_header) {
    FileHeaderContext ctx{number, name};
    absl::Status s = options_.file_header(ctx, &header_buf_);
    if (!s.ok()) {
      file->Close().IgnoreError();  // the callback's error is the one to report
      return s;
    }
  } else {
    AppendEmptyPreviousGtids(&header_buf_, now, options_.server_id);
  }
  uint64_t header_start = kMagicSize + fde.size();
  if (!header_buf_.empty()) {
    header_buf_.Seal();
    header_buf_.Place(header_start);
  }
  absl::string_view parts[3] = {absl::string_view(kBinlogMagic, kMagicSize),
                                fde, header_buf_.data()};
  absl::Status s = file->WriteV(0, parts);
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = dir_handle_->Sync();
  if (!s.ok()) {
    file->Close().IgnoreError();  // the write/sync error is the one to report
    return s;
  }
  {
    sync::MutexLock il(&index_mu_);
    live_->AddFile(number);
    s = WriteIndexLocked();
  }
  if (!s.ok()) {
    file->Close().IgnoreError();
    return s;
  }
  active_ = std::move(file);
  active_number_ = number;
  end_ = synced_end_ = header_end_ = header_start + header_buf_.size();
  groups_since_sync_ = 0;
  live_->Publish(number, end_);
  return absl::OkStatus();
}

absl::Status Binlog::WriteIndexLocked() {
  return WriteIndex(fs_, dir_handle_.get(), dir_, basename_, live_->Files());
}

absl::Status Binlog::CloseActiveFile(bool rotate, uint64_t next_number) {
  std::string ev;
  if (rotate) {
    std::string next = BinlogFileName(basename_, next_number);
    size_t size = kHeaderSize + kRotatePostHeaderSize + next.size() +
                  (options_.checksums ? kChecksumSize : 0);
    ev = EncodeRotate(Now(), options_.server_id, next,
                      static_cast<uint32_t>(end_ + size), options_.checksums);
  } else {
    size_t size = kHeaderSize + (options_.checksums ? kChecksumSize : 0);
    ev = EncodeStop(Now(), options_.server_id,
                    static_cast<uint32_t>(end_ + size), options_.checksums);
  }
  BINLOG_RETURN_IF_ERROR(active_->Write(end_, ev));
  end_ += ev.size();
  if (options_.trim_preallocated) {
    // Cut preallocated space after the last event before clearing the
    // in-use flag: a closed file with zeros after its end fails mysqlbinlog,
    // while an in-use file with zeros is read correctly (and recovery would
    // cut them).
    BINLOG_ASSIGN_OR_RETURN(uint64_t size, active_->Size());
    if (size > end_) BINLOG_RETURN_IF_ERROR(active_->Truncate(end_));
  }
  // The end event (and the cut) must be durable before the flag clears:
  // pages reach the disk in any order before an fdatasync returns, and a
  // cleared flag without its Rotate/Stop event would claim a clean close
  // for a file that ends in zeros or a torn event, which recovery then
  // leaves alone.
  BINLOG_RETURN_IF_ERROR(SyncNow());
  const char cleared = 0;  // FDE flags low byte with kFlagBinlogInUse clear
  BINLOG_RETURN_IF_ERROR(
      active_->Write(kInUseFlagFileOffset, absl::string_view(&cleared, 1)));
  BINLOG_RETURN_IF_ERROR(SyncNow());
  absl::Status s = active_->Close();
  active_.reset();
  return s;
}

absl::Status Binlog::SyncNow() {
  absl::Time t0 = absl::Now();
  absl::Status s = active_->Sync();
  fsync_micros_.fetch_add(
      static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - t0)),
      std::memory_order_relaxed);
  fsyncs_.fetch_add(1, std::memory_order_relaxed);
  if (!s.ok()) return s;
  synced_end_ = end_;
  groups_since_sync_ = 0;
  return absl::OkStatus();
}

absl::Status Binlog::RotateNow() {
  uint64_t next = active_number_ + 1;
  if (next > kMaxFileNumber) {
    return absl::ResourceExhaustedError("binlog file numbers exhausted");
  }
  rotations_.fetch_add(1, std::memory_order_relaxed);
  BINLOG_RETURN_IF_ERROR(CloseActiveFile(/*rotate=*/true, next));
  BINLOG_RETURN_IF_ERROR(StartNewFile(next, /*at_startup=*/false));
  return absl::OkStatus();
}

absl::Status Binlog::FlushGroup(sync::CommitGroup* g) {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("the log is closed");
  }
  // Rotation happens between groups: once the active file has reached
  // max_file_size, or when this group would cross the 32-bit offset limit.
  bool full = end_ >= options_.max_file_size ||
              end_ + g->bytes + kEndReserve > kMaxFileOffset;
  if (full && end_ > header_end_) {
    pipeline_->DrainSync();  // every earlier group synced and published
    BINLOG_RETURN_IF_ERROR(RotateNow());
  }
  if (end_ + g->bytes + kEndReserve > kMaxFileOffset) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a commit group of ", g->bytes,
        " bytes does not fit below the 4 GiB log_pos limit"));
  }
  if (preallocator_ != nullptr && end_ >= options_.max_file_size / 2) {
    preallocator_->Request();  // the next file, prepared in the background
  }
  uint64_t pos = end_;
  iov_.clear();
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    auto* txn = static_cast<TransactionBuffer*>(r->payload);
    txn->Place(pos);
    r->out[0] = active_number_;
    r->out[1] = pos;
    pos += txn->size();
    r->out[2] = pos;
    iov_.push_back(txn->data());
  }
  BINLOG_RETURN_IF_ERROR(active_->WriteV(end_, iov_));
  bytes_written_.fetch_add(pos - end_, std::memory_order_relaxed);
  g->user[0] = active_number_;
  g->user[1] = g->first->out[1];
  g->user[2] = pos;
  end_ = pos;
  if (options_.reader_visibility == ReaderVisibility::kAfterWrite) {
    live_->Publish(active_number_, end_);
  }
  return absl::OkStatus();
}

absl::Status Binlog::SyncGroups(sync::CommitGroup* first,
                                sync::CommitGroup* last) {
  for (sync::CommitGroup* g = first; g != nullptr; g = g->next) {
    ++groups_since_sync_;
  }
  bool sync = options_.sync_policy == SyncPolicy::kEveryGroup ||
              (options_.sync_policy == SyncPolicy::kEveryNGroups &&
               groups_since_sync_ >= options_.sync_every_n);
  if (!sync) {
    PublishSynced(last);
    return absl::OkStatus();
  }
  absl::Time t0 = absl::Now();
  // The flush stage may be writing the next group into the same file: the
  // fdatasync covers at least everything up to `last`.
  absl::Status s = active_->Sync();
  fsync_micros_.fetch_add(
      static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - t0)),
      std::memory_order_relaxed);
  fsyncs_.fetch_add(1, std::memory_order_relaxed);
  if (!s.ok()) return s;
  synced_end_ = last->user[2];
  groups_since_sync_ = 0;
  PublishSynced(last);
  return absl::OkStatus();
}

void Binlog::PublishSynced(sync::CommitGroup* last) {
  // Readers see the round here, in the sync stage, not in the commit stage
  // behind the ordered-commit callbacks of earlier rounds: a callback that
  // waits for a replica's acknowledgement (semi-sync) must not keep the
  // replica from reading the groups synced after its own. Sync rounds run
  // one at a time, in log order, so the published end only grows.
  if (options_.reader_visibility == ReaderVisibility::kAfterSync) {
    live_->Publish(last->user[0], last->user[2]);
  }
}

void Binlog::GroupDone(sync::CommitGroup* g) {
  if (options_.on_group_commit) {
    GroupCommitInfo info;
    info.file_number = g->user[0];
    info.start = g->user[1];
    info.end = g->user[2];
    info.transactions = g->count;
    info.group_seq = g->seq;
    options_.on_group_commit(info);
  }
}

absl::StatusOr<CommitPosition> Binlog::Commit(TransactionBuffer* txn) {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("the log is closed");
  }
  if (txn == nullptr || txn->empty()) {
    return absl::InvalidArgumentError("commit of an empty transaction");
  }
  if (txn->checksums() != options_.checksums) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction buffer built with checksums ",
        txn->checksums() ? "on" : "off", " but the log has them ",
        options_.checksums ? "on" : "off"));
  }
  const uint64_t size = txn->size();
  if (size + 64 * 1024 > kMaxFileOffset - kEndReserve) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction of ", size,
        " bytes cannot fit in a binlog file (log_pos is 32-bit)"));
  }
  // Compression (if on) and the per-byte checksum work happen here, in the
  // committing thread, outside the serial stages. `w` is `txn` or its
  // packed form (Gtid + Transaction_payload), which `txn` owns.
  TransactionBuffer* w = txn;
  if (options_.compression != io::Codec::kNone) {
    BINLOG_ASSIGN_OR_RETURN(
        w, internal::PayloadPacker::Pack(
               txn, PayloadCompression{options_.compression,
                                       options_.compression_level,
                                       options_.compression_threshold}));
  }
  w->Seal();
  sync::CommitRequest req;
  req.payload = w;
  req.bytes = w->size();
  BINLOG_RETURN_IF_ERROR(pipeline_->Commit(&req));
  return CommitPosition{req.out[0], req.out[1], req.out[2]};
}

absl::Status Binlog::Sync() {
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

absl::Status Binlog::Rotate() {
  if (closed_.load()) return absl::FailedPreconditionError("the log is closed");
  return pipeline_->RunExclusive([this]() -> absl::Status {
    absl::Status s = RotateNow();
    if (!s.ok()) pipeline_->Poison(s);
    return s;
  });
}

absl::StatusOr<int> Binlog::PurgeTo(uint64_t file_number) {
  sync::MutexLock il(&index_mu_);
  std::vector<uint64_t> victims = live_->TakePurgeable(file_number);
  if (victims.empty()) return 0;
  absl::Status s = WriteIndexLocked();
  if (!s.ok()) {
    live_->RestoreFront(victims);
    return s;
  }
  int removed = 0;
  absl::Status first_error;
  for (uint64_t n : victims) {
    absl::Status r = fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n)));
    if (r.ok()) {
      ++removed;
    } else if (first_error.ok()) {
      first_error = r;
    }
  }
  absl::Status ds = dir_handle_->Sync();
  if (!first_error.ok()) return first_error;
  if (!ds.ok()) return ds;
  return removed;
}

absl::Status Binlog::Close() {
  if (closed_.exchange(true)) {
    return absl::FailedPreconditionError("the log is already closed");
  }
  absl::Status s = pipeline_->RunExclusive([this]() -> absl::Status {
    uint64_t number = active_number_;
    absl::Status cs = CloseActiveFile(/*rotate=*/false, 0);
    // The Stop event is durable: publish it, so waiting readers read to it
    // and then learn that the log ended.
    if (cs.ok()) live_->Publish(number, end_);
    live_->MarkClosed(cs.ok());
    return cs;
  });
  if (!s.ok()) {
    // Poisoned before (the exclusive operation did not run) or the close
    // itself failed: readers stop at the last published end.
    live_->MarkClosed(false);
    if (active_ != nullptr) {
      active_->Close().IgnoreError();  // the log already failed; keep `s`
      active_.reset();
    }
  }
  preallocator_.reset();  // removes spares not taken
  lock_.reset();
  return s;
}

absl::StatusOr<std::unique_ptr<Reader>> Binlog::NewReader(
    const ReaderOptions& options) {
  return std::unique_ptr<Reader>(new Reader(live_, options, fs_));
}

std::vector<LogFileInfo> Binlog::ListFiles() const {
  std::vector<LogFileInfo> out;
  for (uint64_t n : live_->Files()) {
    out.push_back(LogFileInfo{n, BinlogFileName(basename_, n)});
  }
  return out;
}

CommitPosition Binlog::VisibleEnd() const {
  uint64_t p = live_->published();
  return CommitPosition{p >> 32, p & 0xFFFFFFFFu, p & 0xFFFFFFFFu};
}

LogStats Binlog::stats() const {
  sync::GroupCommitPipeline::Stats ps = pipeline_->stats();
  LogStats s;
  s.commits = ps.commits;
  s.groups = ps.groups;
  s.max_group_size = ps.max_group;
  s.sync_rounds = ps.sync_rounds;
  s.fsyncs = fsyncs_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.fsync_micros = fsync_micros_.load(std::memory_order_relaxed);
  s.rotations = rotations_.load(std::memory_order_relaxed);
  s.files_preallocated =
      preallocator_ != nullptr ? preallocator_->files_prepared() : 0;
  s.rotations_from_spare = rotations_from_spare_.load(std::memory_order_relaxed);
  s.rotations_waited = rotations_waited_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace binlog
