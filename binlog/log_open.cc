// BinlogImpl: Open (BeginOpen / FinishOpen) and the crash leftovers it
// handles: an interrupted Reset, an interrupted rotation (an unindexed
// file), a rotation off the commit path (an unclosed file, an unindexed
// file with transactions), an interrupted purge. See binlog/log_impl.h.

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
namespace {

// The directory that holds `path` ("." for a relative name without '/').
std::string ParentDirectory(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}


}  // namespace

namespace internal {

BinlogImpl::BinlogImpl(std::string dir, std::string basename,
                       const Options& options)
    : dir_(std::move(dir)),
      basename_(std::move(basename)),
      options_(options),
      base_fs_(options.file_system != nullptr ? options.file_system
                                              : io::FileSystem::Default()),
      crypt_fs_(options.keyring != nullptr
                    ? NewEncryptionFileSystem(base_fs_, options.keyring)
                    : nullptr),
      fs_(crypt_fs_ != nullptr ? crypt_fs_.get() : base_fs_),
      live_(std::make_shared<LiveLog>(dir_, basename_, WakeOptions(options))),
      header_buf_(options.checksums) {
  sync::GroupCommitOptions go;
  go.sync_delay = absl::Microseconds(options_.sync_delay_us);
  go.sync_no_delay_count = options_.sync_no_delay_count;
  go.max_group_bytes = options_.max_group_bytes;
  go.max_unsynced_bytes = options_.max_unsynced_bytes;
  pipeline_ = std::make_unique<sync::GroupCommitPipeline>(this, go);
  iov_.reserve(256);
  server_version_id_ = ServerVersionId(options_.server_version);
}

uint32_t BinlogImpl::Now() const {
  if (options_.now_seconds) return options_.now_seconds();
  return static_cast<uint32_t>(::time(nullptr));
}

absl::Status BinlogImpl::PoisonedStatus(const absl::Status& cause) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "the log stopped after an earlier error (reopen to recover): ",
      cause.ToString()));
}

absl::Status BinlogImpl::CreateLogDirectory() {
  BINLOG_ASSIGN_OR_RETURN(bool existed, fs_->Exists(dir_));
  if (existed) return absl::OkStatus();
  if (!options_.create_if_missing) {
    return absl::NotFoundError(absl::StrCat("no directory ", dir_));
  }
  BINLOG_RETURN_IF_ERROR(fs_->CreateDirectory(dir_));
  // The new directory's entry lives in its parent: without this fsync a
  // power cut can take the directory, and every file in it, away.
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::Directory> parent,
                          fs_->OpenDirectory(ParentDirectory(dir_)));
  return parent->Sync();
}

absl::Status BinlogImpl::BeginOpen(XidRecoveryScan* scan) {
  BINLOG_RETURN_IF_ERROR(CreateLogDirectory());
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

  // A Reset that a crash interrupted: finish it (delete every file, empty
  // index); the new first file is numbered as the reset asked.
  {
    absl::StatusOr<uint64_t> first = ReadResetIntent(fs_, dir_, basename_);
    if (first.ok()) {
      BINLOG_RETURN_IF_ERROR(FinishInterruptedReset(*first, &on_disk));
    } else if (!absl::IsNotFound(first.status())) {
      return first.status();
    }
  }

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
  if (reset_first_ != 0) max_number = reset_first_ - 1;
  for (uint64_t n : on_disk) {
    if (n == max_number + 1 && !std::binary_search(numbers.begin(), numbers.end(), n)) {
      bool removed = false;
      BINLOG_RETURN_IF_ERROR(RemoveInterruptedRotation(n, &removed));
      if (removed) continue;
      // Not empty: a rotation off the commit path may have committed to it
      // before the index named it (Options::background_rotation).
      bool adopted = false;
      BINLOG_RETURN_IF_ERROR(AdoptUnindexedFile(&numbers, n, &adopted));
      if (adopted) {
        max_number = n;
        continue;
      }
    }
    if (!numbers.empty() && n < numbers.front()) {
      // Below the first indexed file and closed by this log (it ends with
      // its Rotate or Stop event): a purge rewrites the index before it
      // removes the files, so this is a file of a purge a crash
      // interrupted (or whose removal the crash undid). Finish it. Any
      // other file there is left alone (an operator's copy, say).
      const std::string path = io::JoinPath(dir_, BinlogFileName(basename_, n));
      uint32_t ts = 0;
      absl::StatusOr<bool> closed = EndEventTime(path, &ts);
      if (closed.ok() && *closed) {
        BINLOG_RETURN_IF_ERROR(fs_->Remove(path));
        BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
        recovery_.removed_files.push_back(BinlogFileName(basename_, n));
        continue;
      }
    }
    if (!std::binary_search(numbers.begin(), numbers.end(), n)) {
      // Left alone: a file of an interrupted rotation (it holds no
      // acknowledged transaction, since commits go only to indexed files)
      // or a file someone else put here. New files number past it.
      recovery_.ignored_files.push_back(BinlogFileName(basename_, n));
      max_number = std::max(max_number, n);
    }
  }
  open_numbers_ = std::move(numbers);
  if (!open_numbers_.empty()) {
    BINLOG_RETURN_IF_ERROR(ScanLastFile(open_numbers_.back(), scan));
  }
  open_max_number_ = max_number;
  return absl::OkStatus();
}

absl::Status BinlogImpl::FinishOpen() {
  if (open_cut_pending_) {
    BINLOG_RETURN_IF_ERROR(CutLastFile());
    open_cut_pending_ = false;
  }
  const std::vector<uint64_t> numbers = std::move(open_numbers_);
  const uint64_t max_number = open_max_number_;
  live_->SetFiles(numbers);
  BINLOG_RETURN_IF_ERROR(RecoverGtidState(numbers));
  if (max_number + 1 > kMaxFileNumber) {
    return absl::ResourceExhaustedError("binlog file numbers exhausted");
  }
  BINLOG_RETURN_IF_ERROR(RecordSyncPolicy(max_number + 1, numbers));
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
  if (options_.encryption) BINLOG_RETURN_IF_ERROR(LoadMasterKey());
  // No pipeline activity yet: this thread owns the flush-stage state.
  BINLOG_RETURN_IF_ERROR(StartNewFile(max_number + 1, /*at_startup=*/true));
  background_rotation_ = options_.background_rotation &&
                         options_.sync_policy == SyncPolicy::kEveryGroup;
  StartRotationThread();
  if (reset_first_ != 0) {
    // The interrupted Reset is done: its first file is indexed.
    BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, ResetIntentFileName(basename_))));
    BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
    reset_first_ = 0;
  }
  StartExpiry();
  return absl::OkStatus();
}

absl::Status BinlogImpl::RecordSyncPolicy(uint64_t first_new_file,
                                          const std::vector<uint64_t>& indexed) {
  // A missing or unreadable record file is rewritten: it only loses the
  // bound for older files (recovery then cuts as for an unknown policy).
  auto read = ReadSyncRecords(fs_, dir_, basename_);
  std::vector<FileSyncRecord> records;
  if (read.ok()) records = std::move(*read);
  FileSyncRecord now;
  now.first_file = first_new_file;
  now.sync_policy = SyncPolicyName(options_.sync_policy);
  now.unsynced_window = options_.max_unsynced_bytes;
  if (read.ok() && !records.empty() &&
      records.back().first_file <= first_new_file &&
      records.back().sync_policy == now.sync_policy &&
      records.back().unsynced_window == now.unsynced_window) {
    return absl::OkStatus();  // the last record already covers the new file
  }
  // Records for files no longer in the log are dropped (the last one that
  // starts at or before the oldest file still covers it).
  uint64_t oldest = indexed.empty() ? first_new_file : indexed.front();
  std::vector<FileSyncRecord> kept;
  for (size_t i = 0; i < records.size(); ++i) {
    bool superseded = i + 1 < records.size() && records[i + 1].first_file <= oldest;
    if (!superseded && records[i].first_file < first_new_file) {
      kept.push_back(records[i]);
    }
  }
  kept.push_back(now);
  // Durable before the new file exists: its commits rely on it.
  return WriteSyncRecords(fs_, dir_handle_.get(), dir_, basename_, kept);
}

absl::Status BinlogImpl::RemoveInterruptedRotation(uint64_t number, bool* removed) {
  // The file right after the last indexed one, not in the index: a
  // rotation was interrupted before its index update. Commits go only to
  // indexed files, so it holds no acknowledged transaction. Remove it if it
  // is provably ours and empty: all zeros (a renamed spare), or a binlog
  // with nothing but header events. Anything else is left alone.
  *removed = false;
  std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  if (crypt_fs_ != nullptr) {
    // An encrypted file whose header write was torn (a prefix of the
    // encrypted magic, or a header that does not decode): its data is
    // written after the header, so it holds nothing. Removed like a torn
    // magic below.
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> rf,
                            base_fs_->OpenReadable(path));
    char raw[kEncryptionHeaderSize];
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(rf->Read(0, kEncryptionHeaderSize, raw, &got));
    size_t prefix = 0;
    while (prefix < std::min<size_t>(got, 4) && raw[prefix] == kEncryptedMagic[prefix]) {
      ++prefix;
    }
    if (prefix > 0 &&
        (prefix < 4 ||
         !DecodeEncryptionHeader(absl::string_view(raw, got)).ok())) {
      BINLOG_RETURN_IF_ERROR(fs_->Remove(path));
      BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
      recovery_.removed_files.push_back(BinlogFileName(basename_, number));
      *removed = true;
      return absl::OkStatus();
    }
  }
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          fs_->OpenReadable(path));
  char head[kMagicSize] = {0, 0, 0, 0};
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(0, kMagicSize, head, &got));
  // A torn first write leaves a prefix of the magic followed by zeros (the
  // magic, the Format_description and the header events go out in one
  // write): no event can be in such a file either.
  size_t magic_prefix = 0;
  while (magic_prefix < got && head[magic_prefix] == kBinlogMagic[magic_prefix]) {
    ++magic_prefix;
  }
  bool zeros_after = true;
  for (size_t i = magic_prefix; i < got; ++i) zeros_after &= head[i] == 0;
  bool ours_and_empty = false;
  if (got == 0 || (zeros_after && magic_prefix < kMagicSize)) {
    ours_and_empty = true;  // empty or zero-filled spare, or a torn magic
  } else if (got == kMagicSize && std::memcmp(head, kBinlogMagic, kMagicSize) == 0) {
    ReaderOptions ro;
    auto reader = Reader::OpenFiles({path}, ro, fs_);
    if (!reader.ok()) return reader.status();
    Event ev;
    // A file with our magic and no complete event at all (a torn
    // Format_description) holds no transaction either.
    ours_and_empty = true;
    while ((*reader)->Next(&ev).ok()) {
      uint8_t t = ev.header.type;
      if (t != kFormatDescriptionEvent && t != kPreviousGtidsEvent &&
          t != kMariaGtidListEvent && t != kMariaBinlogCheckpointEvent) {
        ours_and_empty = false;
        break;
      }
    }
  }
  if (!ours_and_empty) return absl::OkStatus();
  BINLOG_RETURN_IF_ERROR(fs_->Remove(path));
  BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
  recovery_.removed_files.push_back(BinlogFileName(basename_, number));
  *removed = true;
  return absl::OkStatus();
}

absl::Status BinlogImpl::AdoptUnindexedFile(std::vector<uint64_t>* numbers, uint64_t n,
                                            bool* adopted) {
  // A rotation off the commit path (Options::background_rotation) commits
  // to the new file once its name is durable, before the index names it;
  // it is the file right after the last indexed one, which the rotation
  // left unclosed (in use) or closed with a Rotate event naming it. Any
  // other file is not one this log wrote: left alone, as before.
  *adopted = false;
  if (numbers->empty() || numbers->back() + 1 != n) return absl::OkStatus();
  const uint64_t prev = numbers->back();
  const std::string name = BinlogFileName(basename_, n);
  const std::string path = io::JoinPath(dir_, name);
  const std::string prev_path = io::JoinPath(dir_, BinlogFileName(basename_, prev));
  {
    ReaderOptions ro;
    auto reader = Reader::OpenFiles({path}, ro, fs_);
    if (!reader.ok()) return absl::OkStatus();
    Event ev;
    if (!(*reader)->Next(&ev).ok() || ev.header.type != kFormatDescriptionEvent) {
      return absl::OkStatus();
    }
  }
  bool prev_in_use = false;
  {
    ReaderOptions ro;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                            Reader::OpenFiles({prev_path}, ro, fs_));
    Event ev;
    absl::Status s = reader->Next(&ev);
    if (!s.ok()) return absl::OkStatus();  // recovery of the last file reports it
    prev_in_use = reader->format_description().in_use;
  }
  if (!prev_in_use) {
    // Closed: only a last event that is a Rotate naming `name` makes the
    // unindexed file its successor (zeros may follow it with
    // trim_preallocated off).
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                            Reader::OpenFiles({prev_path}, ro, fs_));
    Event ev;
    bool found = false;
    while (reader->Next(&ev).ok()) {
      absl::string_view body = ev.body();
      found = ev.header.type == kRotateEvent && body.size() >= kRotatePostHeaderSize &&
              absl::StartsWith(body.substr(kRotatePostHeaderSize), name);
    }
    if (!found) return absl::OkStatus();
  } else {
    BINLOG_RETURN_IF_ERROR(CloseUnclosedFile(prev, n));
    recovery_.closed_files.push_back(BinlogFileName(basename_, prev));
  }
  numbers->push_back(n);
  BINLOG_RETURN_IF_ERROR(WriteIndex(fs_, dir_handle_.get(), dir_, basename_, *numbers));
  recovery_.adopted_files.push_back(name);
  *adopted = true;
  return absl::OkStatus();
}

absl::Status BinlogImpl::CloseUnclosedFile(uint64_t number, uint64_t next_number) {
  // The file a rotation off the commit path left: every group in it was
  // synced before the rotation, so only its Rotate event can be missing or
  // torn. Cut whatever follows its last complete transaction, write the
  // Rotate event if it is not there, then clear the flag (each durable
  // before the next, as a clean close does).
  const std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  const std::string next = BinlogFileName(basename_, next_number);
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kVerify;
  ro.payloads = PayloadMode::kRaw;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                          Reader::OpenFiles({path}, ro, fs_));
  Event ev;
  BINLOG_RETURN_IF_ERROR(reader->Next(&ev));
  const FormatDescription fde = reader->format_description();
  TransactionBoundaryParser parser(fde.PostHeaderLen(kQueryEvent));
  uint64_t valid_end = ev.end_offset;
  bool ends_with_rotate = false;
  bool unexpected = false;  // an event the writer never writes there
  uint64_t pending = 0;
  absl::Status s;
  for (;;) {
    s = reader->Next(&ev);
    if (!s.ok()) break;
    auto r = parser.Feed(ev.header, ev.body());
    if (r == TransactionBoundaryParser::Result::kUnexpected) {
      unexpected = true;
      break;
    }
    if (ev.header.type == kRotateEvent) {
      // Only the Rotate event naming the next file ends it (without
      // checksums a torn one can pass the reader's checks).
      absl::string_view body = ev.body();
      if (body.size() < kRotatePostHeaderSize ||
          body.substr(kRotatePostHeaderSize) != next) {
        unexpected = true;
        break;
      }
    }
    if (r == TransactionBoundaryParser::Result::kOutside ||
        r == TransactionBoundaryParser::Result::kEnded) {
      valid_end = ev.end_offset;
      pending = 0;
      ends_with_rotate = ev.header.type == kRotateEvent;
    } else {
      ++pending;
    }
  }
  if (!s.ok() && !absl::IsOutOfRange(s) && !absl::IsDataLoss(s)) return s;  // I/O
  const bool damaged =
      unexpected || (!s.ok() && (!absl::IsOutOfRange(s) || !reader->torn_tails().empty()));
  reader.reset();
  if (pending > 0) {
    return absl::DataLossError(absl::StrCat(
        path, " is not the last file of the log but ends inside a transaction "
        "at offset ", valid_end, ": a file is left only after its last group was synced"));
  }
  const size_t rotate_len = kHeaderSize + kRotatePostHeaderSize + next.size() +
                            (fde.has_checksums() ? kChecksumSize : 0);
  if (damaged && options_.recovery_mode == RecoveryMode::kTornTailOnly) {
    // Only the Rotate event was unsynced at the crash: damage with a valid
    // event more than one Rotate event past it is not a torn tail.
    BINLOG_RETURN_IF_ERROR(
        CheckBeyondTornTail(path, valid_end, rotate_len, fde.has_checksums()));
  }
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs_->FileSize(path));
  if (!ends_with_rotate) {
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                            fs_->OpenWritable(path, io::OpenMode::kOpenExisting));
    std::string rot = EncodeRotate(Now(), options_.server_id, next,
                                   static_cast<uint32_t>(valid_end + rotate_len),
                                   fde.has_checksums());
    absl::Status ws = absl::OkStatus();
    if (size > valid_end) ws = f->Truncate(valid_end);
    if (ws.ok()) ws = f->Write(valid_end, rot);
    if (ws.ok()) ws = f->Sync();
    absl::Status cs = f->Close();
    BINLOG_RETURN_IF_ERROR(ws);
    BINLOG_RETURN_IF_ERROR(cs);
    valid_end += rot.size();
    // An encrypted file's write leaves its guard bytes after the event.
    BINLOG_ASSIGN_OR_RETURN(size, fs_->FileSize(path));
  }
  return CutAndClearInUse(fs_, path, size, valid_end);
}

absl::Status BinlogImpl::FinishInterruptedReset(uint64_t first,
                                                std::vector<uint64_t>* on_disk) {
  for (uint64_t n : *on_disk) {
    BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n))));
  }
  on_disk->clear();
  BINLOG_RETURN_IF_ERROR(WriteIndex(fs_, dir_handle_.get(), dir_, basename_, {}));
  reset_first_ = first;
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace binlog
