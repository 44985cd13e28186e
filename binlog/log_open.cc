// BinlogImpl: Open (BeginOpen / FinishOpen) and the crash leftovers it
// handles: an interrupted Reset, an interrupted rotation (an unindexed
// file), a rotation off the commit path (an unclosed file, an unindexed
// file with transactions), an interrupted purge. See binlog/log_impl.h.

#include "binlog/log_impl.h"
#include "binlog/log_directory.h"

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
#include "binlog/transaction_scan.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
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
      live_(std::make_shared<LiveLog>(dir_, basename_, WakeOptions(options),
                                      options.reader_ring_bytes)),
      index_(fs_, dir_, basename_, live_.get(), options.file_mode),
      gtids_(options),
      header_buf_(options.checksums),
      clock_(options.flavor == LogFlavor::kMySQL &&
                     options.dependency_tracking == Options::DependencyTracking::kWriteset
                 ? std::make_unique<WritesetHistory>(
                       *WritesetHistory::Create(options.writeset_history_size))
                 : nullptr) {
  if (options_.keyring != nullptr) {
    keys_ = std::make_unique<MasterKeys>(options_.keyring, options_.server_uuid);
  }
  Retention::Deps rd;
  rd.fs = fs_;
  rd.dir = dir_;
  rd.basename = basename_;
  rd.flavor = options_.flavor;
  rd.live = live_.get();
  rd.index = &index_;
  rd.gtids = &gtids_;
  rd.closed = &closed_;
  rd.expire_after = options_.expire_after;
  rd.now = [this] { return Now(); };
  retention_ = std::make_unique<Retention>(std::move(rd));
  sync::GroupCommitOptions go;
  go.sync_delay = absl::Microseconds(options_.sync_delay_us);
  go.sync_no_delay_count = options_.sync_no_delay_count;
  go.max_group_bytes = options_.max_group_bytes;
  go.max_unsynced_bytes = options_.max_unsynced_bytes;
  pipeline_ = std::make_unique<sync::GroupCommitPipeline>(this, go);
  iov_.reserve(256);
  server_version_id_ = ServerVersionId(options_.server_version);
}

BinlogImpl::~BinlogImpl() {
  retention_->StopExpiry();
  if (rotation_ != nullptr) rotation_->Stop();
  if (gidx_ != nullptr) gidx_->Stop();
  StopFrontier();
}

TransactionBufferOptions BinlogImpl::TransactionBufferOptionsFor() const {
  TransactionBufferOptions o;
  o.checksums = options_.checksums;
  o.spill_dir = options_.transaction_spill_dir.empty() ? dir_
                                                       : options_.transaction_spill_dir;
  // The caller's file system (which outlives the buffer as documented),
  // not the log's own decrypting wrapper; the spill file is encrypted by
  // the buffer itself when the log is.
  o.file_system = base_fs_;
  o.encrypt_spill = options_.encryption;
  o.memory_limit = options_.transaction_memory_limit;
  o.max_size = options_.max_transaction_size;
  return o;
}

RecoveryContext BinlogImpl::RecoveryContextFor() const {
  RecoveryContext ctx;
  ctx.fs = fs_;
  ctx.dir = dir_;
  ctx.basename = basename_;
  ctx.mode = options_.recovery_mode;
  ctx.server_id = options_.server_id;
  ctx.now = [this] { return Now(); };
  return ctx;
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


absl::Status BinlogImpl::BeginOpen(XidRecoveryScan* scan) {
  BINLOG_RETURN_IF_ERROR(
      CreateLogDirectory(fs_, dir_, options_.create_if_missing, options_.directory_mode));
  BINLOG_ASSIGN_OR_RETURN(
      lock_, fs_->LockFile(io::JoinPath(dir_, absl::StrCat(basename_, ".lock")),
                           options_.file_mode));
  BINLOG_ASSIGN_OR_RETURN(dir_handle_, fs_->OpenDirectory(dir_));
  index_.set_directory(dir_handle_.get());
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
  if (plan_.reset_first != 0) max_number = plan_.reset_first - 1;
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
      absl::StatusOr<bool> closed = ClosedFileEndTime(fs_, basename_, path, &ts);
      if (closed.ok() && *closed) {
        BINLOG_RETURN_IF_ERROR(RemoveGtidIndex(fs_, path));  // never outlives its file
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
  if (!numbers.empty()) BINLOG_RETURN_IF_ERROR(CheckFilesLayout(numbers.back()));
  plan_.numbers = std::move(numbers);
  if (!plan_.numbers.empty()) {
    BINLOG_RETURN_IF_ERROR(
        ScanLastFile(RecoveryContextFor(), plan_.numbers, scan, &recovery_, &plan_.cut));
  }
  plan_.max_number = max_number;
  return absl::OkStatus();
}

absl::Status BinlogImpl::FinishOpen() {
  if (plan_.cut.pending) {
    BINLOG_RETURN_IF_ERROR(
        CutAndClearInUse(fs_, plan_.cut.path, plan_.cut.size, plan_.cut.valid_end));
    plan_.cut.pending = false;
  }
  const std::vector<uint64_t> numbers = std::move(plan_.numbers);
  const uint64_t max_number = plan_.max_number;
  live_->SetFiles(numbers);
  BINLOG_RETURN_IF_ERROR(gtids_.Recover(fs_, dir_, basename_, numbers));
  if (max_number + 1 > kMaxFileNumber) {
    return absl::ResourceExhaustedError("binlog file numbers exhausted");
  }
  BINLOG_RETURN_IF_ERROR(index_.RecordSyncPolicy(options_, max_number + 1, numbers));
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
    po.file_mode = options_.file_mode;
    BINLOG_ASSIGN_OR_RETURN(preallocator_, io::Preallocator::Start(po));
  }
  if (options_.encryption) {
    std::vector<std::string> paths;
    for (uint64_t n : live_->Files()) paths.push_back(PathOf(n));
    BINLOG_RETURN_IF_ERROR(keys_->LoadNewest(base_fs_, paths));
  }
  // No pipeline activity yet: this thread owns the flush-stage state.
  BINLOG_RETURN_IF_ERROR(StartNewFile(max_number + 1, /*at_startup=*/true));
  {
    // GTID index files no binlog file needs: temporary files a crash left,
    // indexes of files no longer in the index file.
    absl::StatusOr<std::vector<std::string>> listed = fs_->ListDirectory(dir_);
    if (listed.ok()) {
      std::set<std::string> binlog_names;
      for (uint64_t n : live_->Files()) binlog_names.insert(BinlogFileName(basename_, n));
      SweepGtidIndexFiles(fs_, dir_, basename_, *listed, binlog_names);
    }
  }
  if (options_.gtid_index_interval > 0 && gtid_index_allowed()) {
    ReaderOptions ro;
    ro.gtid_index_interval = options_.gtid_index_interval;
    BINLOG_ASSIGN_OR_RETURN(gidx_,
                            GtidIndexBuilder::Start(fs_, options_.gtid_index_interval, ro));
    // The newest file before this Open's own was ended by a Close or by
    // recovery, not by a rotation: index it now if it has no index.
    const std::vector<uint64_t> files = live_->Files();
    if (files.size() >= 2) {
      const std::string last_closed = PathOf(files[files.size() - 2]);
      absl::StatusOr<bool> has = fs_->Exists(GtidIndexPath(last_closed));
      if (has.ok() && !*has) gidx_->Add(last_closed, options_.flavor);
    }
  }
  if (options_.background_rotation && options_.sync_policy == SyncPolicy::kEveryGroup) {
    RotationWorker::Deps wd;
    wd.fs = fs_;
    wd.dir = dir_handle_.get();
    wd.dir_path = dir_;
    wd.basename = basename_;
    wd.preallocator = preallocator_.get();
    wd.preallocated_size = preallocated_size_;
    wd.trim_preallocated = options_.trim_preallocated;
    wd.file_mode = options_.file_mode;
    wd.index = &index_;
    wd.syncs = &syncs_;
    // A file was closed: it may be old enough already.
    wd.on_file_closed = [this](uint64_t closed) {
      if (gidx_ != nullptr) gidx_->Add(PathOf(closed), options_.flavor);
      retention_->Kick();
    };
    rotation_ = std::make_unique<RotationWorker>(std::move(wd));
    rotation_->Start();
  }
  if (plan_.reset_first != 0) {
    // The interrupted Reset is done: its first file is indexed.
    BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, ResetIntentFileName(basename_))));
    BINLOG_RETURN_IF_ERROR(dir_handle_->Sync());
    plan_.reset_first = 0;
  }
  retention_->StartExpiry();
  return absl::OkStatus();
}

absl::Status BinlogImpl::CheckFilesLayout(uint64_t newest) {
  // The flavor and layout belong to the log's files: a log continued in
  // another flavor would mix two servers' files in one log (and start an
  // empty GTID state of the other kind). Upgrading MySQL 8.0 files to 8.4
  // at the next file is what a server upgrade does; the reverse is not.
  const std::string path = PathOf(newest);
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kSkip;
  ro.payloads = PayloadMode::kRaw;
  absl::StatusOr<TransactionScan> header = TransactionScan::Open(fs_, path, ro);
  if (!header.ok()) {
    if (!absl::IsDataLoss(header.status())) return header.status();
    return absl::OkStatus();  // no readable header: recovery judges the file
  }
  const FormatDescription& fde = header->format_description();
  // By the post-header lengths the Format_description declares (the
  // server version string is the caller's choice, Options::server_version):
  // MariaDB declares 171 (10.x), MySQL 8.4 42, MySQL 8.0 41.
  const size_t lengths = fde.post_header_len.size();
  const bool file_maria = lengths >= 100 || absl::StrContains(fde.server_version, "MariaDB");
  const bool file_84 = !file_maria && lengths >= 42;
  auto name = [](bool maria, bool is84) {
    return maria ? "MariaDB" : is84 ? "MySQL 8.4" : "MySQL 8.0";
  };
  const bool want_maria = options_.flavor == LogFlavor::kMariaDB;
  const bool want_84 = !want_maria && options_.mysql_layout == MySqlLayout::k84;
  if (file_maria != want_maria || (file_84 && !want_84)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is a ", name(file_maria, file_84), " file (server version '",
        fde.server_version, "') but the log is opened for ", name(want_maria, want_84),
        " files (Options::flavor, Options::mysql_layout): a log keeps the flavor of "
        "its files (only MySQL 8.0 files may be continued as 8.4); open it with "
        "its own, or Reset it first"));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::RemoveInterruptedRotation(uint64_t number, bool* removed) {
  // The file right after the last indexed one, not in the index: a
  // rotation was interrupted before its index update. Commits go only to
  // indexed files, so it holds no acknowledged transaction. Remove it if it
  // is provably ours and empty: all zeros (a renamed spare), or a binlog
  // with nothing but header events. Anything else is left alone.
  *removed = false;
  std::string path = io::JoinPath(dir_, BinlogFileName(basename_, number));
  // A header that does not decode is a torn write only if nothing lies
  // after it: the file's writes persist in order up to the tear (or whole
  // 512-byte pieces of them, and sector 0, which holds the magic, the
  // encryption header or the Format_description, is then zeros), so a tear
  // inside the header leaves zeros from there to the end of the file. A
  // header that does not decode with data after it was damaged after it
  // was written: with a rotation off the commit path the file may hold
  // acknowledged commits (the index names it only after its first group's
  // fdatasync), so it is refused, never removed.
  auto refuse_damaged_header = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(
        path, ": this file is not in the index, its ", what,
        " does not decode, and it holds data after that header; a torn "
        "header write leaves nothing after it, so this is damage, and the "
        "file may hold acknowledged transactions (a rotation off the "
        "commit path commits to a file before the index names it). Nothing "
        "was changed: restore the file, or move it away if its "
        "transactions are not needed"));
  };
  if (crypt_fs_ != nullptr) {
    // An encrypted file whose header write was torn (a prefix of the
    // encrypted magic, or a header that does not decode with nothing after
    // it): no commit in it was acknowledged, since the first group's
    // fdatasync, which acknowledges its commits, would have made the
    // header durable too. Removed like a torn magic below.
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> rf,
                            base_fs_->OpenReadable(path));
    char raw[kEncryptionHeaderSize];
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(rf->Read(0, kEncryptionHeaderSize, raw, &got));
    size_t prefix = 0;
    while (prefix < std::min<size_t>(got, 4) && raw[prefix] == kEncryptedMagic[prefix]) {
      ++prefix;
    }
    const bool header_bad =
        prefix > 0 && (prefix < 4 || !DecodeEncryptionHeader(absl::string_view(raw, got)).ok());
    if (header_bad) {
      BINLOG_ASSIGN_OR_RETURN(bool torn,
                              OnlyZerosFrom(base_fs_, path, kEncryptionHeaderSize));
      if (!torn) return refuse_damaged_header("encryption header");
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
  const uint64_t base_offset = crypt_fs_ != nullptr ? kEncryptionHeaderSize : 0;
  if (got == 0) {
    ours_and_empty = true;  // empty
  } else if (zeros_after && magic_prefix < kMagicSize) {
    // Zeros where the magic goes: a zero-filled spare, or a header write
    // that did not reach the disk while later writes did (each unsynced
    // write's pieces persist or not on their own), which reads the same as
    // magic bytes damaged to zeros: removed. A prefix of the magic is a
    // torn write (a byte prefix persisted, in order) only with nothing
    // after it; the piece holding the header persists whole or not at all.
    bool torn = true;
    if (magic_prefix > 0) {
      BINLOG_ASSIGN_OR_RETURN(torn, OnlyZerosFrom(base_fs_, path, base_offset + kMagicSize));
    }
    if (!torn) return refuse_damaged_header("binlog magic");
    ours_and_empty = true;
  } else if (got == kMagicSize && std::memcmp(head, kBinlogMagic, kMagicSize) == 0) {
    ReaderOptions ro;
    ro.checksum_mode = ChecksumMode::kVerify;
    ro.payloads = PayloadMode::kRaw;
    absl::StatusOr<TransactionScan> header = TransactionScan::Open(fs_, path, ro);
    if (!header.ok() && (absl::IsUnimplemented(header.status()) ||
                         absl::IsFailedPrecondition(header.status()))) {
      // A file in a format this log does not read (binlog v1-v3), or an
      // encrypted file in a log without keys: not one this log wrote. Left
      // alone, as before.
      return absl::OkStatus();
    }
    if (!header.ok() && !absl::IsDataLoss(header.status())) return header.status();
    if (!header.ok()) {
      // The Format_description does not decode. Torn (nothing from inside
      // it to the end of the file, as stored), the file holds no
      // transaction; otherwise it was damaged later.
      // Magic and Format_description lie in the file's first 512 bytes
      // (its post-header lengths are one byte per event type).
      constexpr uint64_t kMaxFormatDescriptionSize = 512 - kMagicSize;
      // Torn at or before the end of its size field (the file may end
      // inside that field: a byte prefix of the write persisted): nothing
      // after it, whatever the partial field reads as.
      constexpr uint64_t kSizeFieldEnd = kMagicSize + kEventSizeOffset + 4;
      BINLOG_ASSIGN_OR_RETURN(bool torn,
                              OnlyZerosFrom(base_fs_, path, base_offset + kSizeFieldEnd));
      if (!torn) {
        // The size field lies before data that persisted, so it was
        // written whole: torn inside the event it sizes, or damaged.
        char size_field[4] = {0, 0, 0, 0};
        size_t n = 0;
        BINLOG_RETURN_IF_ERROR(f->Read(kMagicSize + kEventSizeOffset, 4, size_field, &n));
        const uint64_t declared = n == 4 ? LoadLe32(size_field) : 0;
        if (declared < kHeaderSize || declared > kMaxFormatDescriptionSize) {
          return refuse_damaged_header("Format_description event");
        }
        BINLOG_ASSIGN_OR_RETURN(torn,
                                OnlyZerosFrom(base_fs_, path, base_offset + kMagicSize + declared));
        if (!torn) return refuse_damaged_header("Format_description event");
      }
      ours_and_empty = true;
    } else {
      // A file with our magic, a whole Format_description and nothing but
      // header events (possibly torn) holds no transaction either.
      header->Close();
      ours_and_empty = HoldsOnlyHeaderEvents(
          fs_, path, {kFormatDescriptionEvent, kPreviousGtidsEvent, kMariaGtidListEvent,
                      kMariaBinlogCheckpointEvent});
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
  // A file whose Format_description does not decode is not one this log
  // rotated to.
  if (!TransactionScan::Open(fs_, path, ReaderOptions()).ok()) return absl::OkStatus();
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  absl::StatusOr<TransactionScan> prev_scan = TransactionScan::Open(fs_, prev_path, ro);
  if (!prev_scan.ok()) {
    if (!absl::IsDataLoss(prev_scan.status())) return prev_scan.status();
    return absl::OkStatus();  // recovery of the last file reports it
  }
  if (!prev_scan->format_description().in_use) {
    // Closed: only a last event that is a Rotate naming `name` makes the
    // unindexed file its successor (zeros may follow it with
    // trim_preallocated off).
    bool found = false;
    BINLOG_RETURN_IF_ERROR(prev_scan->Run(
        [](const Event&) { return TransactionScan::Result::kOutside; },
        [&](const Event& ev, TransactionScan::Result) {
          absl::string_view body = ev.body();
          found = ev.header.type == kRotateEvent && body.size() >= kRotatePostHeaderSize &&
                  absl::StartsWith(body.substr(kRotatePostHeaderSize), name);
          return ScanNext::kContinue;
        }));
    if (!found) return absl::OkStatus();
  } else {
    BINLOG_RETURN_IF_ERROR(CloseUnclosedFile(RecoveryContextFor(), prev, n));
    recovery_.closed_files.push_back(BinlogFileName(basename_, prev));
  }
  numbers->push_back(n);
  BINLOG_RETURN_IF_ERROR(index_.WriteExactly(*numbers));
  recovery_.adopted_files.push_back(name);
  *adopted = true;
  return absl::OkStatus();
}

absl::Status BinlogImpl::FinishInterruptedReset(uint64_t first,
                                                std::vector<uint64_t>* on_disk) {
  for (uint64_t n : *on_disk) {
    BINLOG_RETURN_IF_ERROR(RemoveGtidIndex(fs_, PathOf(n)));  // never outlives its file
    BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n))));
  }
  on_disk->clear();
  BINLOG_RETURN_IF_ERROR(index_.WriteExactly({}));
  plan_.reset_first = first;
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace binlog
