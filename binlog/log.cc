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
//   Rotation thread (Options::background_rotation, kEveryGroup only):
//     creates the next file ahead of time (PrepareNextFile: name durable),
//     and after a rotation Flush started, which only wrote the old file's
//     Rotate event and the new file's header, closes the old file (sync,
//     in-use flag, sync) and, once the first group's fdatasync made the new
//     header durable, writes the index. Takes rot_mu_ (never across I/O)
//     and index_mu_; every rotation, Reset and Close first waits for it
//     (WaitRotationIdle), so it never touches a file the flush stage uses
//     next.
//
// Close and errors.
//   Close() is the pipeline's closing operation: commits queued before it
//   finish, then it writes the Stop event (unless the log is poisoned) and
//   releases everything, inside the pipeline, so no later operation ever
//   runs on a closed log. Every wait (for a sync round, a drain) is
//   followed by a check of the pipeline's error: nothing is written after a
//   failed fdatasync (a second fdatasync would report success for lost
//   pages).
//
// The unsynced window (Options::max_unsynced_bytes). Under kEveryGroup the
//   pipeline never lets more than the window be written past the last
//   completed fdatasync (a larger transaction is written in window-sized
//   pieces, each synced), and `<basename>.recovery` records the window for
//   each file. Recovery uses it to tell a torn tail (damage within one
//   window of the first bad event) from corruption (a valid event beyond
//   it), which it refuses to cut.
//
// Invariants.
//   - published_ only moves forward, always to an event boundary, and only to
//     bytes that are durable under kEveryGroup (written under the other
//     policies).
//   - A file is listed in the index only after its header is durable and its
//     directory entry is synced. A transaction is written to a file only
//     after the file is listed in a durable index, or, after a rotation off
//     the commit path, to the file right after the last indexed one once
//     its name is durable (its header becomes durable with the transaction's
//     own fdatasync; the file before it may still be unclosed). Open adopts
//     such a file (AdoptUnindexedFile) and closes the one before it
//     (CloseUnclosedFile). So after a crash every acknowledged transaction
//     is in a file the index names once Open is done.
//   - After any I/O error in the serial section, error_ is set and nothing
//     more is written or published.

#include "binlog/log.h"

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
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/index_file.h"
#include "binlog/log_source.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"
#include "sync/tail_notifier.h"

namespace binlog {
namespace internal {

// The live view of a log that readers follow.
class LiveLog final : public LogSource {
 public:
  LiveLog(std::string dir, std::string basename,
          const sync::TailNotifierOptions& wake)
      : dir_(std::move(dir)), basename_(std::move(basename)),
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
  int readers_ ABSL_GUARDED_BY(files_mu_) = 0;
  bool resetting_ ABSL_GUARDED_BY(files_mu_) = false;
};

}  // namespace internal

namespace {

// Room kept below the 32-bit offset limit for the Rotate/Stop event.
constexpr uint64_t kEndReserve = 1024;
// The flush stage streams spilled transactions through a buffer of this
// size (one per log). Not tuned separately: half the default unsynced
// window, so a window is two chunks; with it a spilled 1 GiB transaction
// committed as fast as the same one in memory (benchmarks/README.md,
// "large_txn_bench").
constexpr size_t kSpillChunk = 4 << 20;
// Room Commit keeps for the header events of a new file on top of the
// largest header seen so far (Previous_gtids grows with the GTID state).
constexpr uint64_t kHeaderSlack = 64 << 10;

const char* SyncPolicyName(SyncPolicy p) {
  switch (p) {
    case SyncPolicy::kEveryGroup:
      return "every_group";
    case SyncPolicy::kEveryNGroups:
      return "every_n_groups";
    case SyncPolicy::kNever:
      return "never";
  }
  return "unknown";
}

// A widest window below the narrowest is the narrowest (a caller that
// only raised reader_wake_coalesce_us keeps a fixed window).
sync::TailNotifierOptions WakeOptions(const Options& o) {
  sync::TailNotifierOptions w;
  w.min_window = absl::Microseconds(o.reader_wake_coalesce_us);
  w.max_window = absl::Microseconds(
      std::max(o.reader_wake_coalesce_us, o.reader_wake_coalesce_max_us));
  w.wakeups_per_second = o.reader_wakeups_per_second;
  return w;
}

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
  if (o.transaction_memory_limit < 4096 || o.max_transaction_size > kMaxTransactionSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction_memory_limit ", o.transaction_memory_limit,
        " must be >= 4096 and max_transaction_size ", o.max_transaction_size,
        " <= ", kMaxTransactionSize));
  }
  if (o.reader_wake_coalesce_us > 100000 ||
      o.reader_wake_coalesce_max_us > 100000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reader_wake_coalesce_us ", o.reader_wake_coalesce_us,
        " and reader_wake_coalesce_max_us ", o.reader_wake_coalesce_max_us,
        " must be <= 100000"));
  }
  if (o.sync_policy == SyncPolicy::kEveryNGroups && o.sync_every_n == 0) {
    return absl::InvalidArgumentError("sync_every_n must be >= 1");
  }
  if (o.max_group_bytes < (64 << 10) || o.max_group_bytes > (1ull << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_group_bytes ", o.max_group_bytes, " outside [65536, 1073741824]"));
  }
  if (o.max_unsynced_bytes < o.max_group_bytes ||
      o.max_unsynced_bytes > (1ull << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_unsynced_bytes ", o.max_unsynced_bytes,
        " outside [max_group_bytes (", o.max_group_bytes, "), 1073741824]"));
  }
  if (!ServerVersionHasChecksumAlg(o.server_version) ||
      o.server_version.size() >= kFdeServerVersionLen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server_version '", o.server_version,
        "' must parse as X.Y.Z >= 5.6.1 and be shorter than 50 bytes"));
  }
  BINLOG_RETURN_IF_ERROR(ValidatePayloadCompression(PayloadCompression{
      o.compression, o.compression_level, o.compression_threshold}));
  if (o.encryption && o.flavor == LogFlavor::kMariaDB) {
    return absl::InvalidArgumentError(
        "encryption is not available for a kMariaDB log: this library writes "
        "MySQL 8.0.14+'s encrypted binlog format, which MariaDB servers and "
        "mariadb-binlog cannot read (MariaDB has its own encrypt_binlog "
        "format)");
  }
  if (o.encryption && o.keyring == nullptr) {
    return absl::InvalidArgumentError("encryption needs Options::keyring");
  }
  if (o.flavor == LogFlavor::kMariaDB && o.compression != io::Codec::kNone) {
    return absl::InvalidArgumentError(
        "compression must be kNone for a kMariaDB log: MariaDB servers and "
        "mariadb-binlog cannot read Transaction_payload events");
  }
  return absl::OkStatus();
}

// Options::server_version when left empty.
std::string DefaultServerVersion(LogFlavor flavor) {
  return flavor == LogFlavor::kMariaDB ? "10.11.19-MariaDB-log" : "8.0.36";
}

// "8.0.36-log" -> 80036, as MySQL writes immediate_server_version.
uint32_t ServerVersionId(absl::string_view v) {
  uint32_t parts[3] = {0, 0, 0};
  int i = 0;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      parts[i] = parts[i] * 10 + static_cast<uint32_t>(c - '0');
    } else if (c == '.' && i < 2) {
      ++i;
    } else {
      break;
    }
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

// Walks a log file for its GTID state: the header event that holds the
// state of the files before it (`state_type`: Previous_gtids or Gtid_list,
// given to `on_state`) and, with `with_transactions`, the GTID of each
// complete transaction (`gtid_type`; `on_gtid` decodes it into a pending
// GTID and returns false if it has none, `add` records a complete one).
template <typename Pending, typename OnState, typename OnGtid, typename Add>
absl::Status ScanFileGtids(io::FileSystem* fs, const std::string& path,
                           bool with_transactions, uint8_t state_type,
                           const char* what, OnState on_state, uint8_t gtid_type,
                           OnGtid on_gtid, Add add) {
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kSkip;
  ro.payloads = PayloadMode::kRaw;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                          Reader::OpenFiles({path}, ro, fs));
  Event ev;
  TransactionBoundaryParser parser;
  bool have_pending = false;
  Pending pending{};
  bool in_header = true;
  absl::Status s;
  while ((s = reader->Next(&ev)).ok()) {
    const uint8_t type = ev.header.type;
    if (type == kFormatDescriptionEvent) {
      parser.set_query_post_header_len(
          reader->format_description().PostHeaderLen(kQueryEvent));
      continue;
    }
    if (in_header && type == state_type) {
      absl::Status hs = on_state(ev.body());
      if (!hs.ok()) {
        // Open's contract: a file that cannot be trusted is DataLoss, with
        // the file and offset (a tagged set of MySQL 8.3+ is not ours).
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset,
                                                ": cannot read the GTID ", what,
                                                ": ", hs.message()));
      }
      continue;
    }
    auto r = parser.Feed(ev.header, ev.body());
    if (r == TransactionBoundaryParser::Result::kOutside && in_header) {
      continue;  // other header events (Binlog_checkpoint, a callback's)
    }
    in_header = false;
    if (!with_transactions) break;
    if (type == gtid_type) have_pending = on_gtid(ev, &pending);
    if (r == TransactionBoundaryParser::Result::kEnded) {
      if (have_pending) add(pending);
      have_pending = false;
    } else if (r == TransactionBoundaryParser::Result::kUnexpected) {
      have_pending = false;
    }
  }
  if (!s.ok() && !absl::IsOutOfRange(s)) return s;
  return absl::OkStatus();
}

// The GTIDs of a log file: its Previous_gtids (the files before it) and,
// with `with_transactions`, the GTIDs of its complete transactions.
absl::StatusOr<GtidSet> FileGtids(io::FileSystem* fs, const std::string& path,
                                  bool with_transactions) {
  GtidSet set;
  using Pending = std::pair<Uuid, int64_t>;
  absl::Status s = ScanFileGtids<Pending>(
      fs, path, with_transactions, kPreviousGtidsEvent, "set of its Previous_gtids event",
      [&](absl::string_view body) -> absl::Status {
        absl::StatusOr<GtidSet> prev = GtidSet::DecodePreviousGtidsBody(body);
        if (!prev.ok()) return prev.status();
        set.Union(*prev);
        return absl::OkStatus();
      },
      kGtidEvent,
      [](const Event& ev, Pending* pending) {
        auto g = DecodeMySqlGtidEvent(ev.body());
        if (!g.ok() || g->gno <= 0) return false;  // anonymous: no GTID
        *pending = {g->uuid, g->gno};
        return true;
      },
      [&](const Pending& g) { set.Add(g.first, g.second); });
  if (!s.ok()) return s;
  return set;
}

// The MariaDB GTID state of a log file: its Gtid_list (the files before it)
// and, with `with_transactions`, the GTIDs of its complete transactions.
absl::StatusOr<MariaGtidState> FileMariaGtids(io::FileSystem* fs,
                                              const std::string& path,
                                              bool with_transactions) {
  MariaGtidState state;
  absl::Status s = ScanFileGtids<MariaGtidListEntry>(
      fs, path, with_transactions, kMariaGtidListEvent, "state of its Gtid_list event",
      [&](absl::string_view body) -> absl::Status {
        absl::StatusOr<MariaGtidList> list = DecodeMariaGtidList(body);
        if (!list.ok()) return list.status();
        for (const MariaGtidListEntry& e : list->entries) state.Add(e);
        return absl::OkStatus();
      },
      kMariaGtidEvent,
      [](const Event& ev, MariaGtidListEntry* pending) {
        auto g = DecodeMariaGtid(ev.body());
        if (!g.ok()) return false;
        *pending = MariaGtidListEntry{g->domain_id, ev.header.server_id, g->seq_no};
        return true;
      },
      [&](const MariaGtidListEntry& g) { state.Add(g); });
  if (!s.ok()) return s;
  return state;
}

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

// Everything behind a Binlog. See the design comment at the top.
class BinlogImpl final : public sync::GroupCommitHooks {
 public:
  BinlogImpl(std::string dir, std::string basename, const Options& options);
  ~BinlogImpl() override {
    StopExpiry();
    StopRotationThread();
    StopFrontier();
  }

  // Open = BeginOpen (no writes a crash could need again; scans the last
  // file, into *scan when not null) + FinishOpen (cut, flag, new file).
  absl::Status OpenImpl() {
    BINLOG_RETURN_IF_ERROR(BeginOpen(nullptr));
    return FinishOpen();
  }
  absl::Status BeginOpen(XidRecoveryScan* scan);
  absl::Status FinishOpen();
  // After BeginOpen: the last file was not closed cleanly.
  bool needs_recovery() const { return open_cut_pending_; }
  absl::StatusOr<CommitPosition> Commit(TransactionBuffer* txn);
  TransactionBufferOptions TransactionBufferOptionsFor() const {
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
  absl::Status Sync();
  absl::Status Rotate();
  absl::StatusOr<int> PurgeTo(uint64_t file_number);
  absl::StatusOr<PurgeResult> PurgeBefore(absl::Time cutoff);
  absl::Status Reset(uint64_t first_file_number);
  absl::Status Close();
  std::vector<LogFileInfo> ListFiles() const;
  CommitPosition VisibleEnd() const;
  LogStats stats() const;
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  LogFlavor flavor() const { return options_.flavor; }
  const Uuid& server_uuid() const { return options_.server_uuid; }

  const std::shared_ptr<LiveLog>& live() const { return live_; }
  io::FileSystem* fs() const { return fs_; }

  const std::string dir_;
  const std::string basename_;
  RecoveryReport recovery_;

 private:
  // Automatic expiry.
  sync::Mutex expiry_mu_;
  sync::CondVar expiry_cv_;
  bool expiry_stop_ ABSL_GUARDED_BY(expiry_mu_) = false;
  bool expiry_kicked_ ABSL_GUARDED_BY(expiry_mu_) = false;
  std::thread expiry_thread_ ABSL_GUARDED_BY(expiry_mu_);
  std::atomic<uint64_t> files_expired_{0};
  mutable sync::Mutex expiry_error_mu_;
  std::string last_expiry_error_ ABSL_GUARDED_BY(expiry_error_mu_);
  // Bumped by every Reset (under index_mu_): a purge that looked at the
  // files of an earlier generation does nothing.
  std::atomic<uint64_t> reset_generation_{0};
  // Held by a purge's file removals and by a whole Reset.
  sync::Mutex removal_mu_;
  sync::Mutex last_event_mu_;
  std::map<uint64_t, uint32_t> last_event_time_ ABSL_GUARDED_BY(last_event_mu_);

  // Between BeginOpen and FinishOpen.
  uint64_t reset_first_ = 0;  // an interrupted Reset's first file number
  std::vector<uint64_t> open_numbers_;
  uint64_t open_max_number_ = 0;
  bool open_cut_pending_ = false;  // the last file needs CutLastFile
  std::string cut_path_;
  uint64_t cut_size_ = 0;
  uint64_t cut_valid_end_ = 0;

  // sync::GroupCommitHooks: the flush and sync stages.
  absl::Status Flush(sync::CommitGroup* g) override;
  absl::Status Sync(sync::CommitGroup* first, sync::CommitGroup* last) override;
  void GroupDone(sync::CommitGroup* g) override;

  absl::Status CreateLogDirectory();
  absl::Status RecordSyncPolicy(uint64_t first_new_file,
                                const std::vector<uint64_t>& indexed);
  // Scans the last file (read-only): what recovery will cut, and with
  // `scan`, what two-phase-commit recovery needs. CutLastFile then cuts
  // and clears the in-use flag.
  absl::Status ScanLastFile(uint64_t number, XidRecoveryScan* scan);
  absl::Status ScanCheckpointedFiles(const std::vector<uint64_t>& numbers,
                                     const std::string& checkpoint,
                                     XidRecoveryScan* scan);
  absl::Status CutLastFile();
  // Finishes a Reset a crash interrupted (its intent record exists).
  absl::Status FinishInterruptedReset(uint64_t first, std::vector<uint64_t>* on_disk);
  absl::Status ResetNow(uint64_t first);
  // Deletes the files below `file_number` that may go (see PurgeTo).
  absl::StatusOr<PurgeResult> PurgeUpTo(uint64_t file_number, uint64_t generation);
  // The timestamp of the last event of closed file `number` (cached: a
  // closed file does not change).
  absl::StatusOr<uint32_t> LastEventTime(uint64_t number, uint64_t generation);
  absl::StatusOr<bool> EndEventTime(const std::string& path, uint32_t* ts);
  // Automatic expiry (Options::expire_after).
  void StartExpiry();
  void StopExpiry();
  void KickExpiry();
  void ExpiryLoop();
  absl::Status CheckBeyondTornTail(const std::string& path, uint64_t bad_at,
                                   uint64_t window, bool checksums);
  absl::Status WriteGroup(uint64_t offset);
  absl::Status WriteGroupStreaming(uint64_t offset);
  void PublishSynced(sync::CommitGroup* last);
  // deferred: a rotation off the commit path (Options::background_rotation):
  // the header is written but not synced, the file is listed for readers
  // but not yet in the index file, and nothing is published (the group
  // that follows does both with its own fdatasync).
  absl::Status StartNewFile(uint64_t number, bool at_startup, bool deferred = false);
  absl::Status CloseActiveFile(bool rotate, uint64_t next_number);
  absl::Status CloseInPipeline();
  // from_flush: a rotation Flush started because the file is full (the
  // group that follows syncs the new file); only those may go off the
  // commit path.
  absl::Status RotateNow(bool from_flush = false);
  // Options::background_rotation: the rotation thread's work.
  struct PendingClose {
    std::unique_ptr<io::WritableFile> old_file;
    uint64_t old_number = 0;
    uint64_t old_end = 0;  // after its Rotate event
    uint64_t new_number = 0;  // the active file (header not yet synced)
  };
  void StartRotationThread();
  void StopRotationThread();
  void RotationLoop();
  // Waits until no background close or file preparation is in progress;
  // returns the error of a background close that failed (the log must
  // then write nothing more).
  absl::Status WaitRotationIdle();
  absl::Status FinishBackgroundClose(PendingClose* job);
  absl::Status PrepareNextFile(uint64_t number, std::unique_ptr<io::WritableFile>* file,
                               bool* from_spare, bool* allocated);
  void DiscardPreparedFile();
  // Recovery of a rotation done off the commit path.
  absl::Status AdoptUnindexedFile(std::vector<uint64_t>* numbers, uint64_t n,
                                  bool* adopted);
  absl::Status CloseUnclosedFile(uint64_t number, uint64_t next_number);
  absl::Status SyncNow();
  absl::Status TimedSync();  // fdatasync of active_, counted in stats()
  void StopFrontier();
  absl::Status WriteIndexLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_);
  uint32_t Now() const;
  // *name_durable: the file was prepared ahead (its directory entry is
  // durable already).
  absl::StatusOr<std::unique_ptr<io::WritableFile>> CreateLogFile(
      uint64_t number, const std::string& path, bool* from_spare, bool* name_durable);
  absl::Status RemoveInterruptedRotation(uint64_t number, bool* removed);
  absl::Status LoadMasterKey();
  absl::Status UseMasterKey(uint32_t seqno);

 public:
  absl::Status RotateEncryptionKey();

 private:
  absl::Status PoisonedStatus(const absl::Status& cause) const;
  absl::Status RecoverGtidState(const std::vector<uint64_t>& numbers);
  absl::Status AssignIdentity(TransactionBuffer* txn, uint64_t now_us,
                              uint64_t commit_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(gtid_mu_);
  absl::Status AssignMariaIdentity(TransactionBuffer* txn, uint64_t now_us,
                                   uint64_t commit_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(gtid_mu_);
  void FillTransactions(sync::CommitGroup* g,
                        std::vector<CommittedTransaction>* out) const;

 public:
  absl::Status AcquireGtid(const Uuid& uuid, int64_t gno);
  void ReleaseGtid(const Uuid& uuid, int64_t gno);
  GtidSet executed_gtids() const;
  GtidSet purged_gtids() const;
  MariaGtidState mariadb_gtid_state() const;
  MariaGtidState mariadb_purged_gtid_state() const;
  uint64_t CommitClock() const {
    return commit_clock_.load(std::memory_order_acquire);
  }

 private:

  Options options_;
  // With a keyring, fs_ is crypt_fs_: binlog files read and written in
  // their plain form (binlog/encryption.h); base_fs_ is the caller's.
  io::FileSystem* base_fs_;
  std::unique_ptr<io::FileSystem> crypt_fs_;
  io::FileSystem* fs_;
  // The master key new files are encrypted with (Options::encryption).
  // Written by Open and RotateEncryptionKey, read by the flush stage's
  // rotation (StartNewFile): never during a commit's write.
  mutable sync::Mutex key_mu_;
  std::string master_key_id_ ABSL_GUARDED_BY(key_mu_);
  std::string master_key_ ABSL_GUARDED_BY(key_mu_);
  // Serializes RotateEncryptionKey calls.
  sync::Mutex key_rotation_mu_;
  std::shared_ptr<LiveLog> live_;
  std::unique_ptr<io::FileLock> lock_;
  std::unique_ptr<io::Directory> dir_handle_;

  // Stopped (not destroyed) by Close, so stats() may read it at any time.
  std::unique_ptr<io::Preallocator> preallocator_;
  uint64_t preallocated_size_ = 0;
  bool startup_file_created_ = false;
  // The file CreateLogFile made last was fallocated to preallocated_size_
  // (not a spare): the zero frontier may fill it.
  bool created_allocated_ = false;
  std::unique_ptr<sync::GroupCommitPipeline> pipeline_;

  // Serializes index rewrites (rotation and purge).
  mutable sync::Mutex index_mu_;

  // The file the index file must not name yet: the newest one, after a
  // rotation off the commit path, until its header is durable.
  uint64_t unindexed_file_ ABSL_GUARDED_BY(index_mu_) = 0;

  // Options::background_rotation with SyncPolicy::kEveryGroup (set at Open).
  bool background_rotation_ = false;
  std::thread rotation_thread_;
  // Guards the rot_ and prepared_ members below.
  sync::Mutex rot_mu_;
  sync::CondVar rot_cv_;
  bool rot_stop_ = false;
  std::unique_ptr<PendingClose> rot_close_;  // queued for the thread
  bool rot_closing_ = false;     // a close queued or in progress
  bool rot_preparing_ = false;   // a preparation in progress
  // Set by WaitRotationIdle: a close still waiting for the new file's
  // first sync gives up (the group that should have synced it failed).
  bool rot_give_up_ = false;
  // The newest file a sync-stage fdatasync succeeded on (its header and
  // groups durable); the rotation thread waits for it.
  std::atomic<uint64_t> synced_file_{0};
  std::atomic<bool> rot_waits_for_sync_{false};
  uint64_t rot_prepare_number_ = 0;  // requested, not yet served
  absl::Status rot_error_;
  std::atomic<bool> rot_failed_{false};
  std::unique_ptr<io::WritableFile> prepared_file_;
  uint64_t prepared_number_ = 0;
  bool prepared_from_spare_ = false;
  bool prepared_allocated_ = false;
  // Flush stage: the file number a preparation was last requested for.
  uint64_t prepare_requested_for_ = 0;
  std::atomic<uint64_t> rotations_in_background_{0};
  std::atomic<uint64_t> rotations_prepared_{0};

  // Flush-stage state (one thread at a time by the pipeline's roles).
  std::unique_ptr<io::WritableFile> active_;
  // Zero-fills active_ ahead of end_ when it did not come from a spare.
  std::unique_ptr<io::ZeroFrontier> frontier_;
  uint64_t active_number_ = 0;
  uint64_t end_ = 0;         // written end of the active file
  uint64_t header_end_ = 0;  // end of the active file's header events
  TransactionBuffer header_buf_;
  std::vector<absl::string_view> iov_;
  std::vector<absl::string_view> piece_iov_;
  // Spilled transactions of the group being flushed: each one's spilled
  // events go in before iov_[index] (WriteGroupStreaming).
  struct SpillAt {
    size_t index;
    TransactionBuffer* txn;
  };
  std::vector<SpillAt> spills_;
  // The flush stage's buffer for streaming spilled transactions
  // (kSpillChunk bytes), allocated once per log by the first committer of
  // a spilled transaction, outside the serial section.
  std::once_flag spill_chunk_once_;
  std::unique_ptr<char[]> spill_chunk_;
  // Sync-stage state.
  uint64_t synced_end_ = 0;
  uint32_t groups_since_sync_ = 0;

  // kAfterWrite: the flush stage publishes a group only if no fdatasync
  // failed before; the sync stage sets the flag under the same mutex, so a
  // group written just after a failed sync is never shown to readers.
  sync::Mutex publish_mu_;
  bool sync_failed_ ABSL_GUARDED_BY(publish_mu_) = false;

  // Set (release) inside Close's pipeline operation; read (acquire) by
  // Commit/Sync/Rotate as a fast path (the pipeline is what guarantees
  // that nothing runs after Close).
  std::atomic<bool> closed_{false};
  // Largest header seen (header_end_ of any file), for Commit's room check;
  // written by the flush stage, read by committers (relaxed: a stale value
  // only makes the later per-request check in Flush do the refusing).
  std::atomic<uint64_t> largest_header_{0};

  // GTID state. gtid_mu_ is taken by the flush stage once per group that
  // carries CommitGtids (never during I/O), and briefly by AcquireGtid and
  // the accessors.
  mutable sync::Mutex gtid_mu_;
  GtidSet executed_ ABSL_GUARDED_BY(gtid_mu_);
  GtidSet purged_ ABSL_GUARDED_BY(gtid_mu_);
  std::set<std::pair<Uuid, int64_t>> owned_ ABSL_GUARDED_BY(gtid_mu_);
  int64_t next_auto_gno_ ABSL_GUARDED_BY(gtid_mu_) = 1;
  // kMariaDB: the binlog GTID state and the purged files' state.
  MariaGtidState maria_state_ ABSL_GUARDED_BY(gtid_mu_);
  MariaGtidState maria_purged_ ABSL_GUARDED_BY(gtid_mu_);
  // Flush-stage state: the logical clocks of the active file.
  int64_t seq_in_file_ = 0;
  int64_t last_isolated_ = 0;
  uint32_t server_version_id_ = 0;  // immediate_server_version, e.g. 80036
  // (file << 32) | highest sequence_number whose ordered-commit callback
  // returned. Stored (release) by the commit stage, which runs one round at
  // a time in log order; loaded (acquire) by committers.
  std::atomic<uint64_t> commit_clock_{0};
  // Reused per group (flush stage / commit stage): no allocation once they
  // reached the largest group.
  std::vector<CommittedTransaction> flush_txns_;
  std::vector<CommittedTransaction> done_txns_;

  // Counters: written by the stage that owns them, read by stats().
  std::atomic<uint64_t> fsyncs_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> fsync_micros_{0};
  std::atomic<uint64_t> rotations_{0};
  std::atomic<uint64_t> rotations_from_spare_{0};
  std::atomic<uint64_t> rotations_waited_{0};
  std::atomic<uint64_t> zero_fill_chunks_{0};
  std::atomic<uint64_t> rejected_{0};
};

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

absl::Status BinlogImpl::RecoverGtidState(const std::vector<uint64_t>& numbers) {
  if (options_.flavor == LogFlavor::kMariaDB) {
    // As MariaDB: the last file's Gtid_list plus its (complete)
    // transactions; the first file's Gtid_list for what was purged.
    MariaGtidState state, purged;
    if (!numbers.empty()) {
      BINLOG_ASSIGN_OR_RETURN(
          state, FileMariaGtids(fs_,
                                io::JoinPath(dir_, BinlogFileName(basename_, numbers.back())),
                                /*with_transactions=*/true));
      BINLOG_ASSIGN_OR_RETURN(
          purged, FileMariaGtids(fs_,
                                 io::JoinPath(dir_, BinlogFileName(basename_, numbers.front())),
                                 /*with_transactions=*/false));
    }
    sync::MutexLock l(&gtid_mu_);
    maria_state_ = std::move(state);
    maria_purged_ = std::move(purged);
    return absl::OkStatus();
  }
  GtidSet executed, purged;
  if (!numbers.empty()) {
    // As MySQL: the last file's Previous_gtids plus its transactions (it
    // was recovered above, so every transaction left in it is complete),
    // and the first file's Previous_gtids for what was purged.
    BINLOG_ASSIGN_OR_RETURN(
        executed,
        FileGtids(fs_, io::JoinPath(dir_, BinlogFileName(basename_, numbers.back())),
                  /*with_transactions=*/true));
    BINLOG_ASSIGN_OR_RETURN(
        purged,
        FileGtids(fs_, io::JoinPath(dir_, BinlogFileName(basename_, numbers.front())),
                  /*with_transactions=*/false));
  }
  sync::MutexLock l(&gtid_mu_);
  executed_ = std::move(executed);
  purged_ = std::move(purged);
  next_auto_gno_ = executed_.FirstFreeGno(options_.server_uuid);
  return absl::OkStatus();
}

absl::Status BinlogImpl::AcquireGtid(const Uuid& uuid, int64_t gno) {
  if (gno < 1 || uuid.IsZero()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is not valid (GNO >= 1, UUID not zero)"));
  }
  sync::MutexLock l(&gtid_mu_);
  if (executed_.Contains(uuid, gno)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is already in the log"));
  }
  if (!owned_.insert({uuid, gno}).second) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is owned by another transaction"));
  }
  return absl::OkStatus();
}

void BinlogImpl::ReleaseGtid(const Uuid& uuid, int64_t gno) {
  sync::MutexLock l(&gtid_mu_);
  if (owned_.erase({uuid, gno}) != 0 && uuid == options_.server_uuid &&
      gno < next_auto_gno_ && !executed_.Contains(uuid, gno)) {
    next_auto_gno_ = gno;  // automatic GNOs fill gaps first, as MySQL's
  }
}

GtidSet BinlogImpl::executed_gtids() const {
  sync::MutexLock l(&gtid_mu_);
  return executed_;
}

GtidSet BinlogImpl::purged_gtids() const {
  sync::MutexLock l(&gtid_mu_);
  return purged_;
}

MariaGtidState BinlogImpl::mariadb_gtid_state() const {
  sync::MutexLock l(&gtid_mu_);
  return maria_state_;
}

MariaGtidState BinlogImpl::mariadb_purged_gtid_state() const {
  sync::MutexLock l(&gtid_mu_);
  return maria_purged_;
}

absl::Status BinlogImpl::AssignMariaIdentity(TransactionBuffer* txn,
                                             uint64_t now_us,
                                             uint64_t commit_id) {
  const CommitGtid& g = txn->identity_.gtid;
  uint32_t domain = options_.gtid_domain_id;
  uint64_t seq;
  if (g.kind == CommitGtid::Kind::kAssigned) {
    domain = g.domain_id;
    seq = g.seq_no;
    // gtid_strict_mode (MariaDB's rpl_binlog_state::check_strict_sequence):
    // a seq_no must be above every seq_no the domain logged.
    const uint64_t next = maria_state_.NextSeqNo(domain);
    if (options_.gtid_strict_mode && seq < next) {
      MariaGtidListEntry last;
      maria_state_.Position(domain, &last);
      return absl::AlreadyExistsError(absl::StrCat(
          "MariaDB GTID ", domain, "-", txn->identity_.server_id, "-", seq,
          " is out of order: domain ", domain, " already logged seq_no ",
          next - 1, " (its last GTID is ", last.domain_id, "-", last.server_id,
          "-", last.seq_no, ") and gtid_strict_mode is on"));
    }
  } else {
    if (g.has_domain_id) domain = g.domain_id;
    seq = maria_state_.NextSeqNo(domain);
  }
  maria_state_.Add(domain, txn->identity_.server_id, seq);
  txn->AssignMariaIdentity(domain, seq, commit_id, now_us);
  return absl::OkStatus();
}

absl::Status BinlogImpl::AssignIdentity(TransactionBuffer* txn, uint64_t now_us,
                                        uint64_t commit_id) {
  if (txn->identity_.mariadb) return AssignMariaIdentity(txn, now_us, commit_id);
  const CommitGtid& g = txn->identity_.gtid;
  // Ownership is checked again here, where the GTID is used: between
  // Commit's check and now another commit may have used it, or a
  // ReleaseGtid and AcquireGtid may have handed it to someone else.
  if (g.kind == CommitGtid::Kind::kAssigned) {
    if (executed_.Contains(g.uuid, g.gno)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "GTID ", g.uuid.ToString(), ":", g.gno, " is already in the log"));
    }
    if (owned_.erase({g.uuid, g.gno}) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GTID ", g.uuid.ToString(), ":", g.gno, " is no longer acquired"));
    }
  } else if (g.kind == CommitGtid::Kind::kAutomatic) {
    // Skip GNOs acquired since the last assignment (AcquireGtid does not
    // move next_auto_gno_).
    while (executed_.Contains(options_.server_uuid, next_auto_gno_) ||
           owned_.count({options_.server_uuid, next_auto_gno_}) != 0) {
      ++next_auto_gno_;
    }
    if (next_auto_gno_ >= std::numeric_limits<int64_t>::max() - 1) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "every GNO of ", options_.server_uuid.ToString(), " is used"));
    }
  }
  const int64_t seq = ++seq_in_file_;
  // last_committed: the commit-order clock captured at prepare, if it is in
  // this file; never at or past this transaction; never before the last
  // transaction that had to run alone; seq - 1 for one that must.
  const uint64_t parent = txn->commit_parent_;
  int64_t lc = (parent >> 32) == active_number_
                   ? static_cast<int64_t>(parent & 0xFFFFFFFFu)
                   : 0;
  if (lc >= seq) lc = seq - 1;
  if (lc < last_isolated_) lc = last_isolated_;
  if (g.isolated) {
    lc = seq - 1;
    last_isolated_ = seq;
  }
  Uuid uuid;
  int64_t gno = 0;
  if (g.kind == CommitGtid::Kind::kAutomatic) {
    uuid = options_.server_uuid;
    gno = next_auto_gno_;
  } else if (g.kind == CommitGtid::Kind::kAssigned) {
    uuid = g.uuid;
    gno = g.gno;
  }
  if (gno != 0) {
    executed_.Add(uuid, gno);  // extends the last interval: no allocation
    if (uuid == options_.server_uuid) {
      while (executed_.Contains(uuid, next_auto_gno_) ||
             owned_.count({uuid, next_auto_gno_}) != 0) {
        ++next_auto_gno_;
      }
    }
  }
  txn->AssignIdentity(uuid, gno, seq, lc, now_us);
  return absl::OkStatus();
}

void BinlogImpl::FillTransactions(sync::CommitGroup* g,
                                  std::vector<CommittedTransaction>* out) const {
  out->clear();
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    if (!r->rejected.ok()) continue;
    auto* txn = static_cast<TransactionBuffer*>(r->payload);
    out->push_back(CommittedTransaction{txn->cookie(), r->file, r->start,
                                        r->end, txn->identity()});
  }
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

absl::StatusOr<std::unique_ptr<io::WritableFile>> BinlogImpl::CreateLogFile(
    uint64_t number, const std::string& path, bool* from_spare, bool* name_durable) {
  *from_spare = false;
  *name_durable = false;
  created_allocated_ = false;
  if (background_rotation_) {
    sync::MutexLock l(&rot_mu_);
    if (prepared_file_ != nullptr && prepared_number_ == number) {
      *from_spare = prepared_from_spare_;
      created_allocated_ = prepared_allocated_;
      *name_durable = true;
      prepared_number_ = 0;
      rotations_prepared_.fetch_add(1, std::memory_order_relaxed);
      return std::move(prepared_file_);
    }
  }
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
    created_allocated_ =
        f->Allocate(0, preallocated_size_, /*keep_size=*/false).ok();
  }
  return f;
}

absl::Status BinlogImpl::UseMasterKey(uint32_t seqno) {
  std::string id = MasterKeyId(options_.server_uuid.ToString(), seqno);
  // A key already there is one an interrupted rotation generated (or the
  // first Open's): use it.
  absl::Status g = options_.keyring->GenerateKey(id);
  if (!g.ok() && !absl::IsAlreadyExists(g)) {
    return absl::Status(g.code(), absl::StrCat("binlog encryption: generating key ",
                                               id, ": ", g.message()));
  }
  auto key = options_.keyring->FetchKey(id);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("binlog encryption: fetching key ", id,
                                     ": ", key.status().message()));
  }
  if (key->size() != kMasterKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binlog encryption key ", id, " has ", key->size(), " bytes, not 32"));
  }
  sync::MutexLock l(&key_mu_);
  master_key_id_ = id;
  master_key_ = std::move(*key);
  return absl::OkStatus();
}

absl::Status BinlogImpl::LoadMasterKey() {
  // The key of the newest encrypted file (what the last rotation left),
  // else the first key of this server.
  std::vector<uint64_t> files = live_->Files();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    auto h = ReadEncryptionHeader(
        base_fs_, io::JoinPath(dir_, BinlogFileName(basename_, *it)));
    if (absl::IsNotFound(h.status())) continue;
    if (!h.ok()) return h.status();
    uint32_t seqno = MasterKeySeqno(h->key_id);
    if (seqno != 0 &&
        h->key_id == MasterKeyId(options_.server_uuid.ToString(), seqno)) {
      return UseMasterKey(seqno);
    }
    break;  // another server's key: start this server's own sequence
  }
  return UseMasterKey(1);
}

absl::Status BinlogImpl::RotateEncryptionKey() {
  if (!options_.encryption) {
    return absl::FailedPreconditionError(
        "RotateEncryptionKey: the log is not encrypted (Options::encryption)");
  }
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("RotateEncryptionKey after Close");
  }
  sync::MutexLock rl(&key_rotation_mu_);
  uint32_t seqno;
  {
    sync::MutexLock l(&key_mu_);
    seqno = MasterKeySeqno(master_key_id_);
  }
  BINLOG_RETURN_IF_ERROR(UseMasterKey(seqno + 1));
  // New files (from this rotation on) use the new key.
  BINLOG_RETURN_IF_ERROR(Rotate());
  std::string id, key;
  {
    sync::MutexLock l(&key_mu_);
    id = master_key_id_;
    key = master_key_;
  }
  // Then every older file's password is re-encrypted under it, one header
  // (one 512-byte write + fdatasync) at a time. Each file is readable with
  // its old key until its header is replaced, and with the new one after.
  // Under removal_mu_: no purge removes, and no Reset replaces, a file
  // between the read of its header and the write of the new one (a Reset
  // reuses file names: the header of its new file must not get an old
  // file's password).
  sync::MutexLock removal_lock(&removal_mu_);
  for (uint64_t n : live_->Files()) {
    std::string path = io::JoinPath(dir_, BinlogFileName(basename_, n));
    auto h = ReadEncryptionHeader(base_fs_, path);
    if (absl::IsNotFound(h.status())) continue;  // plain, or purged before
    if (!h.ok()) return h.status();
    if (h->key_id == id) continue;
    BINLOG_RETURN_IF_ERROR(
        RewrapFileHeader(base_fs_, path, options_.keyring, id, key));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::CheckBeyondTornTail(const std::string& path,
                                             uint64_t bad_at, uint64_t window,
                                             bool checksums) {
  // A torn write under kEveryGroup damages at most the window after the
  // last completed fdatasync, which ends at or before the first bad event
  // (or inside it: the event may straddle the sync point). So a valid event
  // that ends beyond bad_at + that event's size + window was durable before
  // the crash, and the damage before it is not a torn tail.
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          fs_->OpenReadable(path));
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs_->FileSize(path));
  char hdr[kHeaderSize];
  size_t got = 0;
  uint64_t bad_size = kHeaderSize;
  BINLOG_RETURN_IF_ERROR(f->Read(bad_at, kHeaderSize, hdr, &got));
  if (got == kHeaderSize) {
    uint64_t declared = LoadLe32(hdr + kEventSizeOffset);
    if (declared >= kHeaderSize && declared <= kMaxEventSize) bad_size = declared;
  }
  // The bad event's declared size is trusted only if no valid event starts
  // inside it: in a real tear nothing valid starts inside the torn event,
  // so a valid event there means its size field is damaged (a flipped bit
  // could otherwise stretch the reach over the whole file).
  const uint64_t min_reach = bad_at + kHeaderSize + window;
  if (min_reach >= size) return absl::OkStatus();
  // Scan every offset after bad_at for an event header whose log_pos is its
  // own end (what every event of a binlog file carries), with a valid
  // checksum. Zeros (preallocated space) are skipped four bytes at a time.
  constexpr size_t kChunk = 4 << 20;
  std::string buf(kChunk + kHeaderSize, '\0');
  std::string ev;
  bool size_field_damaged = false;
  uint64_t witness_off = 0, witness_end = 0;          // ends past min_reach
  uint64_t far_witness_off = 0, far_witness_end = 0;  // past the full reach
  const uint64_t full_reach = bad_at + bad_size + window;
  for (uint64_t base = bad_at + 1; base < size && far_witness_end == 0; base += kChunk) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk + kHeaderSize, size - base));
    BINLOG_RETURN_IF_ERROR(f->Read(base, want, buf.data(), &got));
    size_t limit = std::min(got, kChunk);
    for (size_t i = 0; i < limit; ++i) {
      if ((i & 3) == 0 && i + 8 + kHeaderSize <= got) {
        // Eight zero bytes at i: an event starting at i .. i+3 would have
        // type 0 (byte 4 of the header), which no event has.
        uint64_t w;
        std::memcpy(&w, buf.data() + i, 8);
        if (w == 0) {
          i += 3;
          continue;
        }
      }
      if (i + kHeaderSize > got) break;
      const char* p = buf.data() + i;
      uint64_t off = base + i;
      uint64_t esize = LoadLe32(p + kEventSizeOffset);
      if (esize < kHeaderSize + (checksums ? kChecksumSize : 0) ||
          esize > kMaxEventSize) {
        continue;
      }
      uint64_t end = off + esize;
      if (LoadLe32(p + kLogPosOffset) != static_cast<uint32_t>(end) || end > size) {
        continue;
      }
      bool inside_bad = off < bad_at + bad_size;
      if (!inside_bad && end <= min_reach) continue;  // proves nothing
      if (checksums) {
        ev.resize(esize);
        size_t evgot = 0;
        BINLOG_RETURN_IF_ERROR(f->Read(off, esize, ev.data(), &evgot));
        if (evgot != esize || !EventChecksumMatches(ev)) continue;
      }
      if (inside_bad) size_field_damaged = true;
      if (end > min_reach && witness_end == 0) {
        witness_off = off;
        witness_end = end;
      }
      if (end > full_reach) {
        far_witness_off = off;
        far_witness_end = end;
        break;
      }
    }
  }
  uint64_t off = 0, end = 0;
  if (far_witness_end != 0) {
    off = far_witness_off;
    end = far_witness_end;
  } else if (size_field_damaged && witness_end != 0) {
    off = witness_off;
    end = witness_end;
  }
  if (end != 0) {
    return absl::DataLossError(absl::StrCat(
        path, ": offset ", bad_at,
        ": damaged event, but a valid event lies at offset ", off,
        " (ending at ", end, "), beyond what a torn write can reach (the "
        "file was written with fdatasync per group and an unsynced window "
        "of ", window, " bytes): this is corruption, not a crash tail; "
        "nothing was changed. Options::recovery_mode = "
        "kCutAtFirstBadEvent cuts the file at offset ", bad_at,
        " anyway, losing what follows"));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::ScanLastFile(uint64_t number, XidRecoveryScan* scan) {
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
  if (scan != nullptr) {
    scan->in_use = true;
    scan->last_file = name;
  }
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
  // Two-phase-commit recovery: what the file's complete transactions
  // carry (kept apart until the scan ends, then merged after any
  // checkpointed earlier files).
  XidRecoveryScan last;
  internal::XidCollector collector(&last, fde.PostHeaderLen(kQueryEvent));
  std::string checkpoint;  // the last Binlog_checkpoint's file name
  uint64_t valid_end = ev.end_offset;
  uint64_t pending = 0;
  std::string reason = "end of file";
  bool unexpected = false;  // an event the writer never accepts
  uint64_t unexpected_at = 0;
  for (;;) {
    s = reader->Next(&ev);
    if (!s.ok()) break;
    auto r = parser.Feed(ev.header, ev.body());
    if (r == TransactionBoundaryParser::Result::kUnexpected) {
      // Commit refuses transactions that do not follow the boundary rules,
      // so this event is damage that its size and log_pos survived (a torn
      // header without checksums, say): the first bad event.
      unexpected = true;
      unexpected_at = ev.offset;
      break;
    }
    if (scan != nullptr) {
      if (r == TransactionBoundaryParser::Result::kStarted) collector.Drop();
      if (r == TransactionBoundaryParser::Result::kOutside) {
        if (ev.header.type == kMariaBinlogCheckpointEvent) {
          absl::StatusOr<absl::string_view> cp = DecodeBinlogCheckpoint(ev.body());
          if (!cp.ok()) {
            return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset,
                                                    ": ", cp.status().message()));
          }
          checkpoint = std::string(*cp);
        }
      } else {
        absl::Status as = collector.Add(ev.header, ev.body());
        if (!as.ok()) {
          return absl::DataLossError(absl::StrCat(
              path, ": offset ", ev.offset, ": two-phase-commit recovery cannot "
              "read this event of a transaction: ", as.message()));
        }
      }
    }
    if (r == TransactionBoundaryParser::Result::kOutside ||
        r == TransactionBoundaryParser::Result::kEnded) {
      valid_end = ev.end_offset;
      pending = 0;
      if (scan != nullptr && r == TransactionBoundaryParser::Result::kEnded) {
        absl::Status cs = collector.Commit();
        if (!cs.ok()) {
          return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                  cs.message()));
        }
      }
    } else {
      ++pending;
    }
  }
  bool partial = false;
  bool damaged = false;     // a bad event (not zeros, not a clean end)
  uint64_t bad_at = 0;      // where the first bad or missing event starts
  if (unexpected) {
    partial = true;
    damaged = true;
    bad_at = unexpected_at;
    reason = absl::StrCat("event of type ", ev.header.type, " at offset ",
                          unexpected_at, " does not fit a transaction");
  } else if (absl::IsOutOfRange(s)) {
    if (!reader->torn_tails().empty()) {
      const TornTail& t = reader->torn_tails().front();
      partial = !t.zeros;
      reason = t.reason;
      damaged = true;  // zeros may hide valid events after them too
      bad_at = t.offset;
    } else if (pending > 0) {
      reason = "file ends inside a transaction";
    }
  } else if (absl::IsDataLoss(s)) {
    partial = true;
    damaged = true;
    bad_at = reader->position();
    reason = std::string(s.message());
  } else {
    return s;  // I/O error: change nothing
  }
  reader.reset();

  // Which bound the writer kept for this file (see RecoveryMode).
  auto records = ReadSyncRecords(fs_, dir_, basename_);
  const FileSyncRecord* rec =
      records.ok() ? SyncRecordFor(*records, number) : nullptr;
  recovery_.sync_policy = rec != nullptr ? rec->sync_policy : "unknown";
  if (damaged && options_.recovery_mode == RecoveryMode::kTornTailOnly &&
      rec != nullptr && rec->sync_policy == "every_group") {
    BINLOG_RETURN_IF_ERROR(CheckBeyondTornTail(path, bad_at, rec->unsynced_window,
                                               fde.has_checksums()));
  }

  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs_->FileSize(path));
  recovery_.recovered = true;
  recovery_.file_name = name;
  recovery_.valid_end = valid_end;
  recovery_.bytes_cut = size > valid_end ? size - valid_end : 0;
  recovery_.events_cut = pending;
  recovery_.partial_event_cut = partial && recovery_.bytes_cut > 0;
  recovery_.reason = recovery_.bytes_cut > 0 ? reason : "clean end";

  if (scan != nullptr) {
    scan->valid_end = valid_end;
    scan->bytes_to_cut = recovery_.bytes_cut;
    scan->reason = recovery_.reason;
    if (!checkpoint.empty() && checkpoint != name) {
      // A MariaDB-flavor file whose checkpoint names an earlier file:
      // transactions there may lack their engine commit too.
      BINLOG_RETURN_IF_ERROR(ScanCheckpointedFiles(open_numbers_, checkpoint, scan));
    }
    scan->files.push_back(name);
    for (uint64_t x : last.xids) scan->xids.insert(x);
    std::map<XaId, size_t> index;
    for (size_t i = 0; i < scan->xa.size(); ++i) index.emplace(scan->xa[i].xid, i);
    for (XaRecord& r : last.xa) {
      auto it = index.find(r.xid);
      if (it != index.end()) {
        scan->xa[it->second].state = r.state;
      } else {
        scan->xa.push_back(std::move(r));
      }
    }
    scan->gtids.Union(last.gtids);
    scan->mariadb_gtids.insert(scan->mariadb_gtids.end(), last.mariadb_gtids.begin(),
                               last.mariadb_gtids.end());
  }
  open_cut_pending_ = true;
  cut_path_ = path;
  cut_size_ = size;
  cut_valid_end_ = valid_end;
  return absl::OkStatus();
}

absl::Status BinlogImpl::CutLastFile() {
  return CutAndClearInUse(fs_, cut_path_, cut_size_, cut_valid_end_);
}

absl::Status BinlogImpl::ScanCheckpointedFiles(
    const std::vector<uint64_t>& numbers, const std::string& checkpoint,
    XidRecoveryScan* scan) {
  uint64_t from = 0;
  if (!ParseBinlogFileName(basename_, checkpoint, &from) ||
      !std::binary_search(numbers.begin(), numbers.end(), from)) {
    return absl::NotFoundError(absl::StrCat(
        "the Binlog_checkpoint event of ", BinlogFileName(basename_, numbers.back()),
        " names ", checkpoint, ", which is not a file of the log: recovery cannot "
        "know which transactions of it reached the engine"));
  }
  for (uint64_t n : numbers) {
    if (n < from || n == numbers.back()) continue;
    std::string name = BinlogFileName(basename_, n);
    std::string path = io::JoinPath(dir_, name);
    ReaderOptions ro;
    ro.checksum_mode = ChecksumMode::kVerify;
    ro.payloads = PayloadMode::kRaw;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                            Reader::OpenFiles({path}, ro, fs_));
    Event ev;
    absl::Status s = reader->Next(&ev);
    if (!s.ok()) {
      return absl::DataLossError(absl::StrCat(path, ": Format_description unreadable: ",
                                              s.message()));
    }
    const uint8_t qlen = reader->format_description().PostHeaderLen(kQueryEvent);
    TransactionBoundaryParser parser(qlen);
    internal::XidCollector collector(scan, qlen);
    for (;;) {
      s = reader->Next(&ev);
      if (!s.ok()) break;
      auto r = parser.Feed(ev.header, ev.body());
      if (r == TransactionBoundaryParser::Result::kUnexpected) {
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset,
                                                ": event does not fit a transaction"));
      }
      if (r == TransactionBoundaryParser::Result::kOutside) continue;
      if (r == TransactionBoundaryParser::Result::kStarted) collector.Drop();
      absl::Status as = collector.Add(ev.header, ev.body());
      if (!as.ok()) {
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                as.message()));
      }
      if (r == TransactionBoundaryParser::Result::kEnded) {
        absl::Status cs = collector.Commit();
        if (!cs.ok()) {
          return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                  cs.message()));
        }
      }
    }
    if (!absl::IsOutOfRange(s)) return s;
    if (!reader->torn_tails().empty()) {
      const TornTail& t = reader->torn_tails().front();
      if (!t.zeros) {
        return absl::DataLossError(absl::StrCat(path, ": offset ", t.offset, ": ", t.reason));
      }
    }
    scan->files.push_back(name);
  }
  return absl::OkStatus();
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
    {
      sync::MutexLock l(&key_mu_);
      key_id = master_key_id_;
      key = master_key_;
    }
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
  std::string fde = EncodeFormatDescription(fp);
  header_buf_.Clear();
  const bool mariadb = options_.flavor == LogFlavor::kMariaDB;
  if (options_.file_header) {
    GtidSet previous = executed_gtids();
    MariaGtidState maria_previous;
    if (mariadb) maria_previous = mariadb_gtid_state();
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
                        mariadb_gtid_state());
    AppendBinlogCheckpoint(&header_buf_, now, options_.server_id, name);
  } else {
    // Previous_gtids: the GTIDs of every file before this one (8 zero
    // bytes of body without GTIDs, as MySQL writes it with GTIDs off).
    std::string body;
    {
      sync::MutexLock l(&gtid_mu_);
      body = executed_.EncodePreviousGtidsBody();
    }
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
    header_buf_.Seal();
    header_buf_.Place(header_start);
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
  {
    sync::MutexLock il(&index_mu_);
    live_->AddFile(number);
    if (deferred) {
      // Readers may follow the Rotate event to it; the index file names it
      // once its header is durable (FinishBackgroundClose). A crash before
      // that leaves it unindexed: Open adopts it if it holds transactions.
      unindexed_file_ = number;
    } else {
      s = WriteIndexLocked();
    }
  }
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
  seq_in_file_ = 0;  // logical clocks restart in every file (MySQL)
  last_isolated_ = 0;
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

absl::Status BinlogImpl::WriteIndexLocked() {
  std::vector<uint64_t> files = live_->Files();
  if (unindexed_file_ != 0 && !files.empty() && files.back() == unindexed_file_) {
    files.pop_back();  // its header is not durable yet
  }
  return WriteIndex(fs_, dir_handle_.get(), dir_, basename_, files);
}

absl::Status BinlogImpl::CloseActiveFile(bool rotate, uint64_t next_number) {
  // Nothing more is zero-filled: the end event and the cut come next.
  StopFrontier();
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

absl::Status BinlogImpl::TimedSync() {
  absl::Time t0 = absl::Now();
  absl::Status s = active_->Sync();
  fsync_micros_.fetch_add(
      static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - t0)),
      std::memory_order_relaxed);
  fsyncs_.fetch_add(1, std::memory_order_relaxed);
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
  if (!(from_flush && background_rotation_)) {
    BINLOG_RETURN_IF_ERROR(CloseActiveFile(/*rotate=*/true, next));
    BINLOG_RETURN_IF_ERROR(StartNewFile(next, /*at_startup=*/false));
    KickExpiry();  // a file was closed: it may be old enough already
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
  size_t size = kHeaderSize + kRotatePostHeaderSize + name.size() +
                (options_.checksums ? kChecksumSize : 0);
  std::string ev = EncodeRotate(Now(), options_.server_id, name,
                                static_cast<uint32_t>(end_ + size), options_.checksums);
  BINLOG_RETURN_IF_ERROR(active_->Write(end_, ev));
  end_ += ev.size();
  auto job = std::make_unique<PendingClose>();
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
  {
    sync::MutexLock l(&rot_mu_);
    rot_close_ = std::move(job);
    rot_closing_ = true;
    rot_cv_.SignalAll();
  }
  rotations_in_background_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

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

absl::Status BinlogImpl::WriteGroup(uint64_t offset) {
  const uint64_t window = options_.max_unsynced_bytes;
  uint64_t total = 0;
  for (absl::string_view v : iov_) total += v.size();
  if (options_.sync_policy != SyncPolicy::kEveryGroup || total <= window) {
    return active_->WriteV(offset, iov_);
  }
  // Larger than the unsynced window (one large transaction: the pipeline
  // made sure nothing else is unsynced): write it a window at a time, each
  // piece synced before the next, so a crash can tear at most one window.
  // The sync stage syncs the last piece with the group.
  uint64_t pos = offset;
  uint64_t in_piece = 0;
  piece_iov_.clear();
  for (absl::string_view v : iov_) {
    while (!v.empty()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(v.size(), window - in_piece));
      piece_iov_.push_back(v.substr(0, n));
      v.remove_prefix(n);
      in_piece += n;
      if (in_piece == window) {
        BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
        pos += in_piece;
        in_piece = 0;
        piece_iov_.clear();
        if (pos < offset + total) BINLOG_RETURN_IF_ERROR(TimedSync());
      }
    }
  }
  if (!piece_iov_.empty()) BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
  return absl::OkStatus();
}

// A group with spilled transactions: the same pieces and syncs as
// WriteGroup (a crash tears at most one unsynced window), with each spilled
// transaction's events read from its spill file kSpillChunk bytes at a time
// into spill_chunk_ (log_pos and checksums fixed there, see
// TransactionBuffer::NextSpilledPiece) and written from it. The pending
// pieces are written before the chunk is reused, so a spilled transaction
// costs one pread and one pwritev per chunk, and no allocation.
absl::Status BinlogImpl::WriteGroupStreaming(uint64_t offset) {
  uint64_t total = 0;
  for (absl::string_view v : iov_) total += v.size();
  for (const SpillAt& sp : spills_) total += sp.txn->spilled_bytes();
  const uint64_t window =
      options_.sync_policy == SyncPolicy::kEveryGroup &&
              total > options_.max_unsynced_bytes
          ? options_.max_unsynced_bytes
          : ~uint64_t{0};
  uint64_t pos = offset;     // where the pending pieces go
  uint64_t pending = 0;      // bytes in piece_iov_
  uint64_t since_sync = 0;   // bytes written or pending since the last sync
  piece_iov_.clear();
  auto write_pending = [&]() -> absl::Status {
    if (piece_iov_.empty()) return absl::OkStatus();
    BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
    pos += pending;
    pending = 0;
    piece_iov_.clear();
    return absl::OkStatus();
  };
  auto add = [&](absl::string_view v) -> absl::Status {
    while (!v.empty()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(v.size(), window - since_sync));
      piece_iov_.push_back(v.substr(0, n));
      v.remove_prefix(n);
      pending += n;
      since_sync += n;
      if (since_sync == window) {
        BINLOG_RETURN_IF_ERROR(write_pending());
        since_sync = 0;
        // The sync stage syncs the last piece with the group.
        if (pos < offset + total) BINLOG_RETURN_IF_ERROR(TimedSync());
      }
    }
    return absl::OkStatus();
  };
  size_t next_spill = 0;
  for (size_t i = 0; i <= iov_.size(); ++i) {
    while (next_spill < spills_.size() && spills_[next_spill].index == i) {
      TransactionBuffer* txn = spills_[next_spill++].txn;
      for (;;) {
        // spill_chunk_ may still be referenced by the pending pieces.
        BINLOG_RETURN_IF_ERROR(write_pending());
        size_t n = 0;
        absl::Status rs = txn->NextSpilledPiece(spill_chunk_.get(), kSpillChunk, &n);
        if (!rs.ok()) {
          return absl::Status(rs.code(), absl::StrCat(
              "reading a spilled transaction back from its temporary file: ",
              rs.message()));
        }
        if (n == 0) break;
        BINLOG_RETURN_IF_ERROR(add(absl::string_view(spill_chunk_.get(), n)));
      }
    }
    if (i < iov_.size()) BINLOG_RETURN_IF_ERROR(add(iov_[i]));
  }
  BINLOG_RETURN_IF_ERROR(write_pending());
  if (pos != offset + total) {
    // The group's positions were given out for `total` bytes: anything else
    // would leave a hole or an overlap in the file.
    return absl::DataLossError(absl::StrCat(
        "a group with spilled transactions wrote ", pos - offset,
        " bytes where ", total, " were placed"));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::Flush(sync::CommitGroup* g) {
  // Rotation happens between groups: once the active file has reached
  // max_file_size, or when this group would cross the 32-bit offset limit.
  bool full = end_ >= options_.max_file_size ||
              end_ + g->bytes + kEndReserve > kMaxFileOffset;
  if (full && end_ > header_end_) {
    // Every earlier group synced and published; if one failed meanwhile,
    // nothing more may be written.
    BINLOG_RETURN_IF_ERROR(pipeline_->DrainSync());
    BINLOG_RETURN_IF_ERROR(RotateNow(/*from_flush=*/true));
  }
  if (rot_failed_.load(std::memory_order_acquire)) {
    // A background close failed: nothing more may be written.
    return WaitRotationIdle();
  }
  if (preallocator_ != nullptr && end_ >= options_.max_file_size / 2) {
    preallocator_->Request();  // the next file, prepared in the background
  }
  if (background_rotation_ && prepare_requested_for_ <= active_number_ &&
      end_ >= options_.max_file_size / 4 * 3) {
    // Once per file: the next file created and its name made durable
    // before the rotation needs it (a spare renamed if one is ready).
    prepare_requested_for_ = active_number_ + 1;
    sync::MutexLock l(&rot_mu_);
    rot_prepare_number_ = active_number_ + 1;
    rot_cv_.SignalAll();
  }
  if (options_.before_group_write) {
    // Before anything of the group is decided or written (MySQL flushes
    // the engines' logs first in its flush stage too): on failure the
    // group fails and no identity or position was given out.
    flush_txns_.clear();
    for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
      CommittedTransaction t;
      t.cookie = static_cast<TransactionBuffer*>(r->payload)->cookie();
      flush_txns_.push_back(t);
    }
    GroupCommitInfo info;
    info.file_number = active_number_;
    info.transactions = static_cast<uint32_t>(flush_txns_.size());
    info.group_seq = g->seq;
    info.txns = absl::MakeConstSpan(flush_txns_);
    BINLOG_RETURN_IF_ERROR(options_.before_group_write(info));
  }
  uint64_t pos = end_;
  uint64_t first = end_;
  bool placed = false;
  iov_.clear();
  spills_.clear();
  // Identities are assigned here, in commit order, under gtid_mu_ (once per
  // group that carries any), with one clock read for the group.
  uint32_t identities = 0;
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    identities += static_cast<TransactionBuffer*>(r->payload)->identity_.present;
  }
  // MariaDB's commit_id (FL_GROUP_COMMIT_ID), only for groups of more than
  // one transaction, as MariaDB writes it: the group's (file, start
  // offset), unique in the log and never 0.
  const uint64_t commit_id =
      identities > 1 ? (active_number_ << 32) | end_ : 0;
  const uint64_t now_us =
      identities ? static_cast<uint64_t>(absl::GetCurrentTimeNanos() / 1000) : 0;
  if (identities) gtid_mu_.Lock();
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    auto* txn = static_cast<TransactionBuffer*>(r->payload);
    if (pos + r->bytes + kEndReserve > kMaxFileOffset) {
      // Only possible in a new file whose header left less room than
      // Commit assumed: refuse this transaction alone.
      r->rejected = absl::ResourceExhaustedError(absl::StrCat(
          "a transaction of ", r->bytes, " bytes does not fit below the "
          "4 GiB log_pos limit after the ", header_end_,
          " bytes of header events of ", BinlogFileName(basename_, active_number_)));
      rejected_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (txn->identity_.present) {
      absl::Status is = AssignIdentity(txn, now_us, commit_id);
      if (!is.ok()) {
        r->rejected = is;  // this transaction alone; nothing of it is written
        rejected_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
    }
    txn->Place(pos);
    if (!placed) first = pos;
    placed = true;
    r->file = active_number_;
    r->start = pos;
    pos += txn->size();
    r->end = pos;
    if (txn->spilled()) {
      // The first event (in memory), the spilled ones, the rest.
      absl::string_view d = txn->data();
      const size_t head = txn->head_end_ - txn->front_;
      iov_.push_back(d.substr(0, head));
      spills_.push_back(SpillAt{iov_.size(), txn});
      iov_.push_back(d.substr(head));
    } else {
      iov_.push_back(txn->data());
    }
  }
  if (identities) gtid_mu_.Unlock();
  g->last_sequence_number = seq_in_file_;
  if (!iov_.empty() || !spills_.empty()) {
    // The zero frontier keeps out of [.., pos) from here on, and out of
    // the 16 bytes of encrypted zeros an encrypted file's writer puts
    // after its data (binlog/encryption.cc: the same bytes the frontier
    // would write there through its own encrypting handle, but not raced).
    if (frontier_ != nullptr) frontier_->BeforeWrite(pos + 16);
  }
  if (!spills_.empty()) {
    BINLOG_RETURN_IF_ERROR(WriteGroupStreaming(end_));
  } else if (!iov_.empty()) {
    BINLOG_RETURN_IF_ERROR(WriteGroup(end_));
  }
  bytes_written_.fetch_add(pos - end_, std::memory_order_relaxed);
  g->file = active_number_;
  g->start = first;
  g->end = pos;
  end_ = pos;
  if (options_.reader_visibility == ReaderVisibility::kAfterWrite) {
    sync::MutexLock l(&publish_mu_);
    if (!sync_failed_) live_->Publish(active_number_, end_);
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::Sync(sync::CommitGroup* first, sync::CommitGroup* last) {
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
  // The flush stage may be writing the next group into the same file: the
  // fdatasync covers at least everything up to `last`.
  absl::Status s = TimedSync();
  if (!s.ok()) {
    sync::MutexLock l(&publish_mu_);
    sync_failed_ = true;
    return s;
  }
  synced_end_ = last->end;
  groups_since_sync_ = 0;
  if (synced_file_.load(std::memory_order_relaxed) < last->file) {
    // Once per file: a background close may be waiting for this sync.
    synced_file_.store(last->file, std::memory_order_seq_cst);
    if (rot_waits_for_sync_.load(std::memory_order_seq_cst)) {
      sync::MutexLock l(&rot_mu_);
      rot_cv_.SignalAll();
    }
  }
  PublishSynced(last);
  return absl::OkStatus();
}

void BinlogImpl::PublishSynced(sync::CommitGroup* last) {
  // Readers see the round here, in the sync stage, not in the commit stage
  // behind the ordered-commit callbacks of earlier rounds: a callback that
  // waits for a replica's acknowledgement (semi-sync) must not keep the
  // replica from reading the groups synced after its own. Sync rounds run
  // one at a time, in log order, so the published end only grows.
  if (options_.reader_visibility == ReaderVisibility::kAfterSync) {
    live_->Publish(last->file, last->end);
  }
}

void BinlogImpl::GroupDone(sync::CommitGroup* g) {
  if (options_.on_group_commit) {
    FillTransactions(g, &done_txns_);
    GroupCommitInfo info;
    info.file_number = g->file;
    info.start = g->start;
    info.end = g->end;
    info.transactions = static_cast<uint32_t>(done_txns_.size());
    info.group_seq = g->seq;
    info.txns = absl::MakeConstSpan(done_txns_);
    options_.on_group_commit(info);
  }
  // The group's transactions are committed (their engine commits ran in
  // the callback): later prepares may depend on them.
  commit_clock_.store((g->file << 32) | static_cast<uint64_t>(g->last_sequence_number),
                      std::memory_order_release);
}

absl::StatusOr<CommitPosition> BinlogImpl::Commit(TransactionBuffer* txn) {
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
  // A spill error or a transaction past the buffer's max_size: nothing of
  // it reaches the log.
  BINLOG_RETURN_IF_ERROR(txn->status());
  const uint64_t size = txn->appended_data().size() + txn->spilled_bytes();
  const uint64_t room = kMaxFileOffset - kEndReserve -
                        largest_header_.load(std::memory_order_relaxed) -
                        kHeaderSlack;
  if (size > room) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction of ", size,
        " bytes cannot fit in a binlog file (log_pos is 32-bit)"));
  }
  // One limit for the writer and every reader (binlog/format.h): a log
  // that accepts an event its readers reject has already lost it. And one
  // notion of a transaction for the writer and recovery: the events must
  // form complete transactions by the rules recovery applies, or recovery
  // could not tell an acknowledged transaction from damage.
  // A spilled transaction's first and spilled events were checked as
  // they were spilled (TransactionBuffer::SpillCompleted); the parser goes
  // on from there.
  TransactionBoundaryParser parser;
  size_t first_unchecked = 0;
  if (txn->spilled()) {
    parser = txn->spill_->parser;
    first_unchecked = txn->head_events_ + txn->spilled_events();
  }
  TransactionBoundaryParser::Result last = TransactionBoundaryParser::Result::kOutside;
  const absl::string_view bytes = txn->appended_data();
  for (size_t i = first_unchecked; i < txn->appended_event_count(); ++i) {
    uint64_t esize = txn->appended_event_size(i);
    if (esize > kMaxEventSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event ", i, " (", EventTypeName(txn->appended_event_type(i)),
          ") of the transaction is ", esize,
          " bytes, above the largest event readers and recovery accept "
          "(kMaxEventSize = ", kMaxEventSize, " bytes)"));
    }
    absl::string_view ev = bytes.substr(txn->appended_event_offset(i), esize);
    last = parser.Feed(DecodeHeader(ev), EventBody(ev, options_.checksums));
    if (last == TransactionBoundaryParser::Result::kUnexpected) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event ", i, " (", EventTypeName(txn->appended_event_type(i)),
          ") does not fit the transaction's events before it (transaction "
          "boundary rules of binlog/transaction_boundary.h); recovery could "
          "not tell such a transaction from damage"));
    }
  }
  if (!parser.outside()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transaction's last event (",
        EventTypeName(txn->appended_event_type(txn->appended_event_count() - 1)),
        ") does not end it (Xid, COMMIT or ROLLBACK, a DDL statement after a "
        "GTID, XA_prepare, or a Transaction_payload); recovery would cut it"));
  }
  if (txn->identity_.misplaced) {
    return absl::InvalidArgumentError(
        "AppendCommitGtid must append the transaction's first event");
  }
  if (txn->identity_.present &&
      txn->identity_.mariadb != (options_.flavor == LogFlavor::kMariaDB)) {
    return absl::InvalidArgumentError(
        txn->identity_.mariadb
            ? "AppendMariaCommitGtid needs a log with Options::flavor kMariaDB"
            : "a kMariaDB log takes AppendMariaCommitGtid, not AppendCommitGtid");
  }
  if (txn->identity_.present && txn->identity_.mariadb) {
    const CommitGtid& g = txn->identity_.gtid;
    if (g.kind == CommitGtid::Kind::kAnonymous) {
      return absl::InvalidArgumentError(
          "MariaDB has no anonymous transactions: a MariaDB CommitGtid is "
          "kAutomatic or kAssigned");
    }
    if (g.kind == CommitGtid::Kind::kAssigned && g.seq_no == 0) {
      return absl::InvalidArgumentError(
          "a MariaDB CommitGtid of kind kAssigned needs seq_no >= 1");
    }
    if (txn->identity_.bad_xid) {
      return absl::InvalidArgumentError(absl::StrCat(
          "XA xid of a MariaDB CommitGtid: gtrid must be 1..64 bytes (is ",
          g.xa_gtrid.size(), "), bqual 0..64 (is ", g.xa_bqual.size(), ")"));
    }
    if (g.xa == CommitGtid::Xa::kCompleted) {
      // Recovery must learn from the statement whether the XA transaction
      // committed or rolled back (binlog/xid_recovery.h): refuse what it
      // could not read.
      XaId want;
      want.format_id = g.xa_format_id;
      want.gtrid = g.xa_gtrid;
      want.bqual = g.xa_bqual;
      bool found = false;
      for (size_t i = 0; i < txn->appended_event_count() && !found; ++i) {
        // Spilled events are not searched (a completion is a Gtid and one
        // small statement, which stay in memory; one whose statement was
        // spilled is refused as not found).
        if (!txn->appended_event_in_memory(i)) continue;
        if (txn->appended_event_type(i) != kQueryEvent) continue;
        absl::string_view ev = txn->appended_data().substr(
            txn->appended_event_offset(i), txn->appended_event_size(i));
        absl::StatusOr<QueryInfo> q =
            DecodeQuery(EventBody(ev, txn->checksums()), kQueryPostHeaderSize);
        XaId got;
        bool commit;
        found = q.ok() && ParseXaCompletion(q->query, &got, &commit) && got == want;
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a MariaDB XA completion (CommitGtid::Xa::kCompleted) of ", want.ToString(),
            " must hold its XA COMMIT or XA ROLLBACK statement for that xid"));
      }
    }
  } else if (txn->identity_.present) {
    const CommitGtid& g = txn->identity_.gtid;
    if (g.kind == CommitGtid::Kind::kAutomatic && options_.server_uuid.IsZero()) {
      return absl::InvalidArgumentError(
          "a CommitGtid of kind kAutomatic needs Options::server_uuid");
    }
    if (g.kind == CommitGtid::Kind::kAssigned) {
      sync::MutexLock l(&gtid_mu_);
      if (owned_.count({g.uuid, g.gno}) == 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "GTID ", g.uuid.ToString(), ":", g.gno,
            " was not acquired (Binlog::AcquireGtid) or is already committed"));
      }
    }
    txn->SetServerVersion(server_version_id_);
    if (txn->commit_parent_ == 0) {
      txn->commit_parent_ = commit_clock_.load(std::memory_order_acquire);
    }
  }
  // Compression (if on) and the per-byte checksum work happen here, in the
  // committing thread, outside the serial stages. `w` is `txn` or its
  // packed form (Gtid + Transaction_payload), which `txn` owns.
  TransactionBuffer* w = txn;
  if (txn->spilled()) {
    // Not compressed (that would need it all in memory); streamed by the
    // flush stage through a buffer allocated here, once per log.
    std::call_once(spill_chunk_once_, [this] { spill_chunk_.reset(new char[kSpillChunk]); });
  } else if (options_.compression != io::Codec::kNone) {
    BINLOG_ASSIGN_OR_RETURN(
        w, internal::PayloadPacker::Pack(
               txn, PayloadCompression{options_.compression,
                                       options_.compression_level,
                                       options_.compression_threshold}));
  }
  if (w != txn) {
    // The packed form carries the same identity request (its Gtid event is
    // already at its final size, transaction_length counting the payload).
    w->identity_ = txn->identity_;
    w->identity_.length_slot = false;
    w->commit_parent_ = txn->commit_parent_;
    w->cookie_ = txn->cookie_;
  }
  w->Seal();
  sync::CommitRequest req;
  req.payload = w;
  req.bytes = w->size();
  BINLOG_RETURN_IF_ERROR(pipeline_->Commit(&req));
  if (w != txn) txn->assigned_ = w->assigned_;
  CommitPosition pos;
  pos.file_number = req.file;
  pos.start = req.start;
  pos.end = req.end;
  pos.identity = txn->assigned_;
  return pos;
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
    absl::Status s = ResetNow(first);
    live_->EndReset();
    if (!s.ok()) pipeline_->Poison(s);
    return s;
  });
}

absl::Status BinlogImpl::ResetNow(uint64_t first) {
  // No background close or preparation under way, and no prepared file
  // left to collide with the new numbering.
  BINLOG_RETURN_IF_ERROR(WaitRotationIdle());
  DiscardPreparedFile();
  prepare_requested_for_ = 0;
  // File numbers start over: a rotation's wait for the new file's first
  // sync compares against this (the pipeline is drained here).
  synced_file_.store(0, std::memory_order_seq_cst);
  sync::MutexLock rl(&removal_mu_);
  {
    sync::MutexLock il(&index_mu_);
    // Purges that looked at the old files must not act on the new ones.
    reset_generation_.fetch_add(1, std::memory_order_acq_rel);
    // Nothing more is zero-filled in the file about to be removed (also
    // if the reset fails here: the log is then poisoned).
    StopFrontier();
    // Durable intent first: from here on, Open finishes the reset.
    BINLOG_RETURN_IF_ERROR(WriteResetIntent(fs_, dir_handle_.get(), dir_, basename_, first));
    if (active_ != nullptr) {
      absl::Status cs = active_->Close();
      active_.reset();
      BINLOG_RETURN_IF_ERROR(cs);
    }
    for (uint64_t n : live_->Files()) {
      absl::Status r = fs_->Remove(io::JoinPath(dir_, BinlogFileName(basename_, n)));
      if (!r.ok() && !absl::IsNotFound(r)) return r;
    }
    live_->ResetFiles();
    BINLOG_RETURN_IF_ERROR(WriteIndexLocked());
  }
  {
    sync::MutexLock l(&last_event_mu_);
    last_event_time_.clear();
  }
  {
    sync::MutexLock l(&gtid_mu_);
    executed_ = GtidSet();
    purged_ = GtidSet();
    next_auto_gno_ = 1;
    maria_state_ = MariaGtidState();
    maria_purged_ = MariaGtidState();
  }
  BINLOG_RETURN_IF_ERROR(RecordSyncPolicy(first, {}));
  BINLOG_RETURN_IF_ERROR(StartNewFile(first, /*at_startup=*/true));
  BINLOG_RETURN_IF_ERROR(fs_->Remove(io::JoinPath(dir_, ResetIntentFileName(basename_))));
  return dir_handle_->Sync();
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

absl::Status BinlogImpl::CloseInPipeline() {
  // Runs after every earlier request is done and no stage is busy; nothing
  // runs after it. Under index_mu_: a purge either finished its index
  // update before, or sees the log closed (the lock is released below).
  // First the last rotation's background close (it indexes the active file).
  absl::Status rs = WaitRotationIdle();
  {
    sync::MutexLock il(&index_mu_);
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
  StopRotationThread();  // removes a prepared file no rotation used
  if (preallocator_ != nullptr) preallocator_->Stop();  // removes spares
  lock_.reset();
  return s;
}

absl::Status BinlogImpl::Close() {
  StopExpiry();
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
  s.fsyncs = fsyncs_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.fsync_micros = fsync_micros_.load(std::memory_order_relaxed);
  s.rotations = rotations_.load(std::memory_order_relaxed);
  s.files_preallocated =
      preallocator_ != nullptr ? preallocator_->files_prepared() : 0;
  s.rotations_from_spare = rotations_from_spare_.load(std::memory_order_relaxed);
  s.rotations_waited = rotations_waited_.load(std::memory_order_relaxed);
  s.rotations_in_background = rotations_in_background_.load(std::memory_order_relaxed);
  s.rotations_prepared = rotations_prepared_.load(std::memory_order_relaxed);
  s.zero_fill_chunks = zero_fill_chunks_.load(std::memory_order_relaxed);
  s.rejected_commits = rejected_.load(std::memory_order_relaxed);
  s.files_expired = files_expired_.load(std::memory_order_relaxed);
  {
    sync::MutexLock l(&expiry_error_mu_);
    s.last_expiry_error = last_expiry_error_;
  }
  return s;
}

}  // namespace internal

Binlog::Binlog(std::unique_ptr<internal::BinlogImpl> impl)
    : impl_(std::move(impl)) {}

Binlog::~Binlog() {
  // Best effort: the caller did not call Close(); its error has nowhere to go.
  if (!impl_->closed()) impl_->Close().IgnoreError();
}

namespace {

// Options with the flavor's defaults filled in.
Options ResolvedOptions(const Options& options) {
  Options resolved = options;
  if (resolved.server_version.empty()) {
    resolved.server_version = DefaultServerVersion(resolved.flavor);
  }
  return resolved;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PendingRecovery>> Binlog::BeginRecovery(
    const std::string& dir, const std::string& basename,
    const Options& options) {
  const Options resolved = ResolvedOptions(options);
  BINLOG_RETURN_IF_ERROR(ValidateOptions(basename, resolved));
  auto impl = std::make_unique<internal::BinlogImpl>(dir, basename, resolved);
  XidRecoveryScan scan;
  BINLOG_RETURN_IF_ERROR(impl->BeginOpen(&scan));
  return std::unique_ptr<PendingRecovery>(
      new PendingRecovery(std::move(impl), std::move(scan)));
}

PendingRecovery::PendingRecovery(std::unique_ptr<internal::BinlogImpl> impl,
                                 XidRecoveryScan scan)
    : impl_(std::move(impl)), scan_(std::move(scan)) {}

PendingRecovery::~PendingRecovery() = default;

absl::StatusOr<std::unique_ptr<Binlog>> PendingRecovery::Finish() {
  if (impl_ == nullptr) {
    return absl::FailedPreconditionError("PendingRecovery::Finish was already called");
  }
  std::unique_ptr<internal::BinlogImpl> impl = std::move(impl_);
  BINLOG_RETURN_IF_ERROR(impl->FinishOpen());
  return std::unique_ptr<Binlog>(new Binlog(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Binlog>> Binlog::Open(
    const std::string& dir, const std::string& basename,
    const Options& options) {
  const Options resolved = ResolvedOptions(options);
  BINLOG_RETURN_IF_ERROR(ValidateOptions(basename, resolved));
  auto impl = std::make_unique<internal::BinlogImpl>(dir, basename, resolved);
  BINLOG_RETURN_IF_ERROR(impl->BeginOpen(nullptr));
  if (resolved.flush_engine_logs && impl->needs_recovery()) {
    // A server with an engine (it set the rotation hook) must learn which
    // prepared transactions reached the log before the file is cut and
    // its flag cleared: after that no later start can tell it.
    return absl::FailedPreconditionError(absl::StrCat(
        io::JoinPath(dir, impl->recovery_.file_name),
        " was not closed cleanly and Options::flush_engine_logs is set: "
        "recover the engine with Binlog::BeginRecovery, not Open"));
  }
  BINLOG_RETURN_IF_ERROR(impl->FinishOpen());
  return std::unique_ptr<Binlog>(new Binlog(std::move(impl)));
}

absl::StatusOr<CommitPosition> Binlog::Commit(TransactionBuffer* txn) {
  return impl_->Commit(txn);
}

std::unique_ptr<TransactionBuffer> Binlog::NewTransactionBuffer() const {
  return std::make_unique<TransactionBuffer>(impl_->TransactionBufferOptionsFor());
}
absl::Status Binlog::Sync() { return impl_->Sync(); }
absl::Status Binlog::Rotate() { return impl_->Rotate(); }
absl::Status Binlog::RotateEncryptionKey() {
  return impl_->RotateEncryptionKey();
}
absl::StatusOr<int> Binlog::PurgeTo(uint64_t file_number) {
  return impl_->PurgeTo(file_number);
}
absl::StatusOr<PurgeResult> Binlog::PurgeBefore(absl::Time cutoff) {
  return impl_->PurgeBefore(cutoff);
}
absl::Status Binlog::Reset(uint64_t first_file_number) {
  return impl_->Reset(first_file_number);
}
absl::Status Binlog::Close() { return impl_->Close(); }

absl::StatusOr<std::unique_ptr<Reader>> Binlog::NewReader(
    const ReaderOptions& options) {
  return std::unique_ptr<Reader>(new Reader(impl_->live(), options, impl_->fs()));
}

absl::StatusOr<std::unique_ptr<GtidReader>> Binlog::NewGtidReader(
    const GtidSet& have, const ReaderOptions& options) {
  if (impl_->flavor() != LogFlavor::kMySQL) {
    return absl::FailedPreconditionError(
        "NewGtidReader takes a MySQL GTID set: a kMariaDB log serves "
        "replicas by GTID position with NewMariaGtidReader");
  }
  GtidSet purged = impl_->purged_gtids();
  if (!purged.IsSubsetOf(have)) {
    GtidSet missing = purged;
    missing.Subtract(have);
    return absl::FailedPreconditionError(absl::StrCat(
        "the replica lacks GTIDs that were purged from the log: ",
        missing.ToString()));
  }
  const Uuid& self = impl_->server_uuid();
  if (!self.IsZero()) {
    GtidSet own;
    for (const GnoInterval& iv : have.Intervals(self)) {
      own.AddInterval(self, iv.first, iv.last);
    }
    GtidSet executed = impl_->executed_gtids();
    if (!own.IsSubsetOf(executed)) {
      own.Subtract(executed);
      return absl::FailedPreconditionError(absl::StrCat(
          "the replica has GTIDs of this server that the log never had: ",
          own.ToString()));
    }
  }
  // Back from the newest file: the first whose Previous_gtids the replica
  // has; every transaction before that file is then in `have`.
  std::vector<LogFileInfo> files = ListFiles();
  uint64_t start = files.empty() ? 0 : files.front().number;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        GtidSet previous,
        FileGtids(impl_->fs(), io::JoinPath(impl_->dir_, it->name),
                  /*with_transactions=*/false));
    if (previous.IsSubsetOf(have)) {
      start = it->number;
      break;
    }
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  return std::make_unique<GtidReader>(std::move(reader), have);
}

absl::StatusOr<std::unique_ptr<GtidReader>> Binlog::NewMariaGtidReader(
    const MariaGtidState& position, const ReaderOptions& options) {
  if (impl_->flavor() != LogFlavor::kMariaDB) {
    return absl::FailedPreconditionError(
        "NewMariaGtidReader needs a log with Options::flavor kMariaDB "
        "(use NewGtidReader with a GTID set)");
  }
  const MariaGtidState state = impl_->mariadb_gtid_state();
  for (const MariaGtidListEntry& g : position.Positions()) {
    if (!state.Contains(g.domain_id, g.server_id, g.seq_no)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the replica's GTID position ", g.domain_id, "-", g.server_id, "-", g.seq_no,
          " is not in the log's binlog state (", state.StateToString(), ")"));
    }
  }
  // Back from the newest file: the first whose Gtid_list the replica's
  // position covers in every domain; the transactions before it are then
  // the replica's already.
  std::vector<LogFileInfo> files = ListFiles();
  uint64_t start = 0;
  for (auto it = files.rbegin(); it != files.rend() && start == 0; ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        MariaGtidState list,
        FileMariaGtids(impl_->fs(), io::JoinPath(impl_->dir_, it->name),
                       /*with_transactions=*/false));
    bool covered = true;
    for (const MariaGtidListEntry& g : list.Positions()) {
      covered = covered && position.Contains(g.domain_id, g.server_id, g.seq_no);
    }
    if (covered) start = it->number;
  }
  if (start == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the log purged transactions the replica at ", position.ToString(),
        " lacks (purged state ", impl_->mariadb_purged_gtid_state().StateToString(),
        ")"));
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  return std::make_unique<GtidReader>(std::move(reader), position);
}

absl::Status Binlog::AcquireGtid(const Uuid& uuid, int64_t gno) {
  return impl_->AcquireGtid(uuid, gno);
}
void Binlog::ReleaseGtid(const Uuid& uuid, int64_t gno) {
  impl_->ReleaseGtid(uuid, gno);
}
GtidSet Binlog::executed_gtids() const { return impl_->executed_gtids(); }
GtidSet Binlog::purged_gtids() const { return impl_->purged_gtids(); }
MariaGtidState Binlog::mariadb_gtid_state() const {
  return impl_->mariadb_gtid_state();
}
MariaGtidState Binlog::mariadb_purged_gtid_state() const {
  return impl_->mariadb_purged_gtid_state();
}
uint64_t Binlog::CommitClock() const { return impl_->CommitClock(); }

std::vector<LogFileInfo> Binlog::ListFiles() const { return impl_->ListFiles(); }
CommitPosition Binlog::VisibleEnd() const { return impl_->VisibleEnd(); }
const RecoveryReport& Binlog::recovery() const { return impl_->recovery_; }
LogStats Binlog::stats() const { return impl_->stats(); }
const std::string& Binlog::dir() const { return impl_->dir_; }
const std::string& Binlog::basename() const { return impl_->basename_; }

// Readers by GTID over files at rest (binlog/gtid_reader.h). The start
// file and the errors follow Binlog::NewGtidReader / NewMariaGtidReader.
absl::StatusOr<AtRestGtidState> ReadAtRestGtidState(const std::string& dir,
                                                   const std::string& basename,
                                                   LogFlavor flavor,
                                                   io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  AtRestGtidState st;
  BINLOG_ASSIGN_OR_RETURN(st.files, ReadIndex(fs, dir, basename));
  if (st.files.empty()) return st;
  const std::string first = io::JoinPath(dir, BinlogFileName(basename, st.files.front()));
  const std::string last = io::JoinPath(dir, BinlogFileName(basename, st.files.back()));
  if (flavor == LogFlavor::kMariaDB) {
    BINLOG_ASSIGN_OR_RETURN(st.maria_purged, FileMariaGtids(fs, first, false));
    BINLOG_ASSIGN_OR_RETURN(st.maria_state, FileMariaGtids(fs, last, true));
  } else {
    BINLOG_ASSIGN_OR_RETURN(st.purged, FileGtids(fs, first, false));
    BINLOG_ASSIGN_OR_RETURN(st.executed, FileGtids(fs, last, true));
  }
  return st;
}

absl::StatusOr<std::unique_ptr<GtidReader>> OpenGtidReaderAtRest(
    const std::string& dir, const std::string& basename,
    const AtRestGtidState& state, const GtidSet& have, const Uuid& server_uuid,
    const ReaderOptions& options, io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  if (!state.purged.IsSubsetOf(have)) {
    GtidSet missing = state.purged;
    missing.Subtract(have);
    return absl::FailedPreconditionError(absl::StrCat(
        "purged: the replica lacks GTIDs that were purged from the log: ",
        missing.ToString()));
  }
  if (!server_uuid.IsZero()) {
    GtidSet own;
    for (const GnoInterval& iv : have.Intervals(server_uuid)) {
      own.AddInterval(server_uuid, iv.first, iv.last);
    }
    if (!own.IsSubsetOf(state.executed)) {
      own.Subtract(state.executed);
      return absl::FailedPreconditionError(absl::StrCat(
          "ahead: the replica has GTIDs of this server that the log never had: ",
          own.ToString()));
    }
  }
  uint64_t start = state.files.empty() ? 0 : state.files.front();
  for (auto it = state.files.rbegin(); it != state.files.rend(); ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        GtidSet previous,
        FileGtids(fs, io::JoinPath(dir, BinlogFileName(basename, *it)), false));
    if (previous.IsSubsetOf(have)) {
      start = *it;
      break;
    }
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                          Reader::OpenDirectory(dir, basename, ro, fs));
  return std::make_unique<GtidReader>(std::move(reader), have);
}

absl::StatusOr<std::unique_ptr<GtidReader>> OpenMariaGtidReaderAtRest(
    const std::string& dir, const std::string& basename,
    const AtRestGtidState& state, const MariaGtidState& position,
    const ReaderOptions& options, io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  for (const MariaGtidListEntry& g : position.Positions()) {
    if (!state.maria_state.Contains(g.domain_id, g.server_id, g.seq_no)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ahead: the replica's GTID position ", g.domain_id, "-", g.server_id, "-",
          g.seq_no, " is not in the log's binlog state (",
          state.maria_state.StateToString(), ")"));
    }
  }
  uint64_t start = 0;
  for (auto it = state.files.rbegin(); it != state.files.rend() && start == 0; ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        MariaGtidState list,
        FileMariaGtids(fs, io::JoinPath(dir, BinlogFileName(basename, *it)), false));
    bool covered = true;
    for (const MariaGtidListEntry& g : list.Positions()) {
      covered = covered && position.Contains(g.domain_id, g.server_id, g.seq_no);
    }
    if (covered) start = *it;
  }
  if (start == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "purged: the log purged transactions the replica at ", position.ToString(),
        " lacks (purged state ", state.maria_purged.StateToString(), ")"));
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader,
                          Reader::OpenDirectory(dir, basename, ro, fs));
  return std::make_unique<GtidReader>(std::move(reader), position);
}

}  // namespace binlog
