// Recovery of a log's files after a crash: the last-file scan, the
// torn-tail bound, the checkpointed files, and the close of an unclosed
// file. See binlog/log_recovery.h.

#include "binlog/log_recovery.h"

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
#include "binlog/transaction_scan.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {
namespace {

// How recovery reads a file: checksums verified; a complete, checksum-valid
// Transaction_payload ends its transaction, so recovery need not decompress
// it (and must not cut an acknowledged transaction because of its content).
ReaderOptions RecoveryReaderOptions() {
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kVerify;
  ro.payloads = PayloadMode::kRaw;
  return ro;
}

absl::Status ScanCheckpointedFiles(
    const RecoveryContext& ctx, const std::vector<uint64_t>& numbers, const std::string& checkpoint,
    XidRecoveryScan* scan) {
  uint64_t from = 0;
  if (!ParseBinlogFileName(ctx.basename, checkpoint, &from) ||
      !std::binary_search(numbers.begin(), numbers.end(), from)) {
    return absl::NotFoundError(absl::StrCat(
        "the Binlog_checkpoint event of ", BinlogFileName(ctx.basename, numbers.back()),
        " names ", checkpoint, ", which is not a file of the log: recovery cannot "
        "know which transactions of it reached the engine"));
  }
  for (uint64_t n : numbers) {
    if (n < from || n == numbers.back()) continue;
    std::string name = BinlogFileName(ctx.basename, n);
    std::string path = io::JoinPath(ctx.dir, name);
    BINLOG_ASSIGN_OR_RETURN(TransactionScan t,
                            TransactionScan::Open(ctx.fs, path, RecoveryReaderOptions()));
    internal::XidCollector collector(scan, t.format_description().PostHeaderLen(kQueryEvent));
    BINLOG_RETURN_IF_ERROR(t.Run([&](const Event& ev, TransactionScan::Result r)
                                     -> absl::StatusOr<ScanNext> {
      if (r == TransactionScan::Result::kOutside) return ScanNext::kContinue;
      if (r == TransactionScan::Result::kStarted) collector.Drop();
      absl::Status as = collector.Add(ev.header, ev.body());
      if (as.ok() && r == TransactionScan::Result::kEnded) as = collector.Commit();
      if (!as.ok()) {
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                as.message()));
      }
      return ScanNext::kContinue;
    }));
    // A file before the last one was synced whole before the next began:
    // only zeros (preallocated space) may follow its last event.
    if (t.stop() == ScanStop::kDamaged) return t.reader_error();
    if (t.stop() == ScanStop::kUnexpected ||
        (t.stop() == ScanStop::kTornTail && t.partial())) {
      return absl::DataLossError(absl::StrCat(path, ": offset ", t.bad_at(), ": ", t.reason()));
    }
    scan->files.push_back(name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckBeyondTornTail(io::FileSystem* fs, const std::string& path,
                                 uint64_t bad_at, uint64_t window, bool checksums) {
  // A torn write under kEveryGroup damages at most the window after the
  // last completed fdatasync, which ends at or before the first bad event
  // (or inside it: the event may straddle the sync point). So a valid event
  // that ends beyond bad_at + that event's size + window was durable before
  // the crash, and the damage before it is not a torn tail.
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          fs->OpenReadable(path));
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
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

absl::Status ScanLastFile(const RecoveryContext& ctx, const std::vector<uint64_t>& numbers,
                          XidRecoveryScan* scan, RecoveryReport* report, LastFileCut* cut) {
  const uint64_t number = numbers.back();
  std::string name = BinlogFileName(ctx.basename, number);
  std::string path = io::JoinPath(ctx.dir, name);
  ReaderOptions ro = RecoveryReaderOptions();
  BINLOG_ASSIGN_OR_RETURN(TransactionScan t, TransactionScan::Open(ctx.fs, path, ro));
  const FormatDescription fde = t.format_description();
  if (!fde.in_use) return absl::OkStatus();  // closed cleanly
  if (scan != nullptr) {
    scan->in_use = true;
    scan->last_file = name;
  }
  if (!fde.has_checksums()) {
    // Without checksums a torn Transaction_payload can look complete; only
    // decompressing it (sizes and frame checked) tells. Scan decoded.
    ro.payloads = PayloadMode::kDecoded;
    BINLOG_ASSIGN_OR_RETURN(t, TransactionScan::Open(ctx.fs, path, ro));
  }

  // Two-phase-commit recovery: what the file's complete transactions
  // carry (kept apart until the scan ends, then merged after any
  // checkpointed earlier files).
  XidRecoveryScan last;
  internal::XidCollector collector(&last, fde.PostHeaderLen(kQueryEvent));
  std::string checkpoint;  // the last Binlog_checkpoint's file name
  BINLOG_RETURN_IF_ERROR(t.Run([&](const Event& ev, TransactionScan::Result r)
                                   -> absl::StatusOr<ScanNext> {
    if (scan == nullptr) return ScanNext::kContinue;
    if (r == TransactionScan::Result::kOutside) {
      if (ev.header.type == kMariaBinlogCheckpointEvent) {
        absl::StatusOr<absl::string_view> cp = DecodeBinlogCheckpoint(ev.body());
        if (!cp.ok()) {
          return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                  cp.status().message()));
        }
        checkpoint = std::string(*cp);
      }
      return ScanNext::kContinue;
    }
    if (r == TransactionScan::Result::kStarted) collector.Drop();
    absl::Status as = collector.Add(ev.header, ev.body());
    if (!as.ok()) {
      return absl::DataLossError(absl::StrCat(
          path, ": offset ", ev.offset, ": two-phase-commit recovery cannot "
          "read this event of a transaction: ", as.message()));
    }
    if (r == TransactionScan::Result::kEnded) {
      absl::Status cs = collector.Commit();
      if (!cs.ok()) {
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset, ": ",
                                                cs.message()));
      }
    }
    return ScanNext::kContinue;
  }));
  const uint64_t valid_end = t.valid_end();
  const uint64_t pending = t.pending();
  const bool partial = t.partial();
  const bool damaged = t.damaged();  // zeros may hide valid events after them too
  const uint64_t bad_at = t.bad_at();
  const std::string reason = t.reason();
  t.Close();  // before the file is cut

  // Which bound the writer kept for this file (see RecoveryMode).
  auto records = ReadSyncRecords(ctx.fs, ctx.dir, ctx.basename);
  const FileSyncRecord* rec =
      records.ok() ? SyncRecordFor(*records, number) : nullptr;
  report->sync_policy = rec != nullptr ? rec->sync_policy : "unknown";
  if (damaged && ctx.mode == RecoveryMode::kTornTailOnly &&
      rec != nullptr && rec->sync_policy == "every_group") {
    BINLOG_RETURN_IF_ERROR(CheckBeyondTornTail(ctx.fs, path, bad_at, rec->unsynced_window,
                                               fde.has_checksums()));
  }

  BINLOG_ASSIGN_OR_RETURN(uint64_t size, ctx.fs->FileSize(path));
  report->recovered = true;
  report->file_name = name;
  report->valid_end = valid_end;
  report->bytes_cut = size > valid_end ? size - valid_end : 0;
  report->events_cut = pending;
  report->partial_event_cut = partial && report->bytes_cut > 0;
  report->reason = report->bytes_cut > 0 ? reason : "clean end";

  if (scan != nullptr) {
    scan->valid_end = valid_end;
    scan->bytes_to_cut = report->bytes_cut;
    scan->reason = report->reason;
    if (!checkpoint.empty() && checkpoint != name) {
      // A MariaDB-flavor file whose checkpoint names an earlier file:
      // transactions there may lack their engine commit too.
      BINLOG_RETURN_IF_ERROR(ScanCheckpointedFiles(ctx, numbers, checkpoint, scan));
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
  cut->pending = true;
  cut->path = path;
  cut->size = size;
  cut->valid_end = valid_end;
  return absl::OkStatus();
}

absl::Status CloseUnclosedFile(const RecoveryContext& ctx, uint64_t number,
                               uint64_t next_number) {
  // The file a rotation off the commit path left: every group in it was
  // synced before the rotation, so only its Rotate event can be missing or
  // torn. Cut whatever follows its last complete transaction, write the
  // Rotate event if it is not there, then clear the flag (each durable
  // before the next, as a clean close does).
  const std::string path = io::JoinPath(ctx.dir, BinlogFileName(ctx.basename, number));
  const std::string next = BinlogFileName(ctx.basename, next_number);
  BINLOG_ASSIGN_OR_RETURN(TransactionScan t,
                          TransactionScan::Open(ctx.fs, path, RecoveryReaderOptions()));
  const FormatDescription fde = t.format_description();
  bool ends_with_rotate = false;
  BINLOG_RETURN_IF_ERROR(t.Run([&](const Event& ev, TransactionScan::Result r)
                                   -> absl::StatusOr<ScanNext> {
    if (ev.header.type == kRotateEvent) {
      // Only the Rotate event naming the next file ends it (without
      // checksums a torn one can pass the reader's checks).
      absl::string_view body = ev.body();
      if (body.size() < kRotatePostHeaderSize ||
          body.substr(kRotatePostHeaderSize) != next) {
        return ScanNext::kUnexpected;
      }
    }
    if (r == TransactionScan::Result::kOutside || r == TransactionScan::Result::kEnded) {
      ends_with_rotate = ev.header.type == kRotateEvent;
    }
    return ScanNext::kContinue;
  }));
  uint64_t valid_end = t.valid_end();
  const uint64_t pending = t.pending();
  const bool damaged = t.damaged();
  t.Close();
  if (pending > 0) {
    return absl::DataLossError(absl::StrCat(
        path, " is not the last file of the log but ends inside a transaction "
        "at offset ", valid_end, ": a file is left only after its last group was synced"));
  }
  const size_t rotate_len = RotateEventSize(next, fde.has_checksums());
  if (damaged && ctx.mode == RecoveryMode::kTornTailOnly) {
    // Only the Rotate event was unsynced at the crash: damage with a valid
    // event more than one Rotate event past it is not a torn tail.
    BINLOG_RETURN_IF_ERROR(
        CheckBeyondTornTail(ctx.fs, path, valid_end, rotate_len, fde.has_checksums()));
  }
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, ctx.fs->FileSize(path));
  if (!ends_with_rotate) {
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                            ctx.fs->OpenWritable(path, io::OpenMode::kOpenExisting));
    std::string rot = EncodeRotate(ctx.now(), ctx.server_id, next,
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
    BINLOG_ASSIGN_OR_RETURN(size, ctx.fs->FileSize(path));
  }
  return CutAndClearInUse(ctx.fs, path, size, valid_end);
}

}  // namespace internal
}  // namespace binlog
