// BinlogImpl: the recovery scan of the last file (what Open cuts, and
// what two-phase-commit recovery needs), the torn-tail bound, and the
// scan of earlier files a Binlog_checkpoint names. See binlog/log_impl.h.

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

}  // namespace internal
}  // namespace binlog
