// MirrorLog: an exact copy of a source's binlog files. See binlog/mirror_log.h
// for the contract and binlog/FORMAT.md ("Mirror mode") for the rules.
//
// Design. One mutex serializes every call; the state below is the copy's
// last file and the dump's stream:
//   - the last file: its number and name, the writable handle while it takes
//     events (none once a Rotate or a Stop ended it), `written` bytes on disk
//     of which `synced` are covered by the last fdatasync, `pending` bytes
//     not written yet, its Format_description, the boundary parser and the
//     end of its last complete transaction or file-level event
//     (`boundary_end`), and the GTID state at that point;
//   - the stream: the file the dump is in and where its next event starts
//     (`stream_pos`). Normally the stream is at the copy's end. After an
//     artificial Rotate back into the last file it is behind: events up to
//     the copy's end are re-sends, compared with the copy and skipped.
// Invariants: written - synced <= max_unsynced_bytes (FlushPending syncs
// first); an indexed file's start (magic and Format_description) is durable;
// every file before the last is durable and ended (by a Rotate, a Stop, or
// a dump that moved on to a later file).

#include "binlog/mirror_log.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_reader.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/live_log.h"
#include "binlog/log_directory.h"
#include "binlog/log_recovery.h"
#include "binlog/mirror_log_state.h"
#include "binlog/reader.h"
#include "binlog/retention.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_scan.h"
#include "sync/mutex.h"

namespace binlog {

namespace {

// Pending bytes are written (not synced) once they reach this much.
constexpr size_t kWriteBufferBytes = 1 << 20;

// The server id in the header of a file's Format_description (the server
// that wrote the file).
absl::StatusOr<uint32_t> FileServerId(io::FileSystem* fs, const std::string& path) {
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs->OpenReadable(path));
  char b[4];
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(kMagicSize + kServerIdOffset, sizeof(b), b, &got));
  if (got != sizeof(b)) return absl::DataLossError(absl::StrCat(path, ": no Format_description"));
  return LoadLe32(b);
}

}  // namespace

using mirror_internal::IsMariaDbFde;
using mirror_internal::PurgeRecordPath;
using mirror_internal::ReadPurgeRecord;

TransactionBoundaryParser::Result MirrorLog::State::Observe(const EventHeader& h,
                                                            absl::string_view body,
                                                            uint64_t end) {
  using Result = TransactionBoundaryParser::Result;
  // A file's header state replaces the copy's: it is the source's own word
  // for everything before this file.
  if (h.type == kPreviousGtidsEvent) {
    auto set = GtidSet::DecodePreviousGtidsBody(body);
    if (set.ok()) gtids = std::move(*set);
  } else if (h.type == kMariaGtidListEvent) {
    auto list = DecodeMariaGtidList(body);
    if (list.ok()) {
      maria = MariaGtidState();
      for (const MariaGtidListEntry& e : list->entries) maria.Add(e);
    }
  }
  Result r = parser.Feed(h, body);
  if (r == Result::kStarted || r == Result::kUnexpected) {
    has_pending_gtid = false;
    has_pending_maria = false;
    if (IsMySqlGtidEventType(h.type)) {
      auto g = DecodeAnyMySqlGtidEvent(h.type, body);
      if (g.ok() && !g->anonymous()) {
        has_pending_gtid = true;
        pending_tsid = g->tsid();
        pending_gno = g->gno;
      }
    } else if (h.type == kMariaGtidEvent) {
      auto g = DecodeMariaGtid(body);
      if (g.ok()) {
        has_pending_maria = true;
        pending_maria = MariaGtidListEntry{g->domain_id, h.server_id, g->seq_no};
      }
    }
  }
  if (r == Result::kEnded) {
    if (has_pending_gtid) gtids.Add(pending_tsid, pending_gno);
    if (has_pending_maria) maria.Add(pending_maria);
    has_pending_gtid = false;
    has_pending_maria = false;
  }
  if (r == Result::kEnded || r == Result::kOutside) boundary_end = end;
  return r;
}

MirrorLog::MirrorLog(std::string dir, std::string basename, const MirrorOptions& o)
    : dir_(std::move(dir)), basename_(std::move(basename)), options_(o),
      st_(std::make_unique<State>()) {
  st_->fs = o.file_system != nullptr ? o.file_system : io::FileSystem::Default();
}

MirrorLog::~MirrorLog() {
  bool closed;
  {
    sync::MutexLock l(&st_->mu);
    closed = st_->closed;
  }
  if (!closed) Close().IgnoreError();
}

absl::StatusOr<std::unique_ptr<MirrorLog>> MirrorLog::Open(const std::string& dir,
                                                           const std::string& basename,
                                                           const MirrorOptions& options) {
  if (basename.empty() || basename.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("bad mirror basename '", basename, "'"));
  }
  if (options.max_unsynced_bytes < (64u << 10) || options.max_unsynced_bytes > (1u << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_unsynced_bytes ", options.max_unsynced_bytes, " outside 64 KiB .. 1 GiB"));
  }
  std::unique_ptr<MirrorLog> log(new MirrorLog(dir, basename, options));
  log->live_ = std::make_shared<internal::LiveLog>(dir, basename, sync::TailNotifierOptions());
  {
    sync::MutexLock l(&log->st_->mu);
    absl::Status s = log->OpenImpl();
    if (!s.ok()) {
      log->st_->closed = true;  // nothing to close: the destructor only unlocks
      log->live_->MarkClosed(false);
      return s;
    }
    log->live_->SetFiles(log->st_->files);
    log->Publish();
  }
  return log;
}

absl::Status MirrorLog::OpenImpl() {
  State* m = st_.get();
  io::FileSystem* fs = m->fs;
  BINLOG_RETURN_IF_ERROR(internal::CreateLogDirectory(fs, dir_, options_.create_if_missing,
                                                      options_.directory_mode));
  BINLOG_ASSIGN_OR_RETURN(
      m->lock, fs->LockFile(io::JoinPath(dir_, absl::StrCat(basename_, ".lock")),
                            options_.file_mode));
  BINLOG_ASSIGN_OR_RETURN(m->dir_handle, fs->OpenDirectory(dir_));
  if (options_.gtid_index_interval > 0) {  // its thread now, not in Append
    BINLOG_ASSIGN_OR_RETURN(m->gidx, internal::GtidIndexBuilder::Start(
                                         fs, options_.gtid_index_interval, ReaderOptions()));
  }
  auto index = ReadIndex(fs, dir_, basename_);
  bool write_empty_index = false;
  if (index.ok()) {
    m->files = std::move(*index);
  } else if (absl::IsNotFound(index.status()) && options_.create_if_missing) {
    write_empty_index = true;
  } else {
    return index.status();
  }
  // The source map: a record past the last indexed file is what a crash
  // between the record and the file's start leaves (dropped; the file is
  // started again after it is rewritten).
  BINLOG_ASSIGN_OR_RETURN(m->sources, ReadSourceMap(fs, dir_, basename_));
  const size_t records_on_disk = m->sources.size();
  while (!m->sources.empty() &&
         (m->files.empty() || m->sources.back().file > m->files.back())) {
    m->sources.pop_back();
  }
  // A record whose server is not the one that wrote its first file (the
  // header of the file's Format_description) is such a record that an
  // older copy kept on disk while the old server's next file took its
  // number: dropped too.
  while (!m->sources.empty() && m->sources.back().file >= m->files.front()) {
    const SourceFileRecord& r = m->sources.back();
    BINLOG_ASSIGN_OR_RETURN(
        uint32_t writer, FileServerId(fs, io::JoinPath(dir_, BinlogFileName(basename_, r.file))));
    if (writer == r.server_id) break;
    m->sources.pop_back();
  }
  // Made durable before anything else is stored: a dropped record left on
  // disk would bind to the next file created under its number.
  const bool rewrite_sources = m->sources.size() != records_on_disk;
  m->seg_base = basename_;
  for (uint64_t n : m->files) {
    BINLOG_ASSIGN_OR_RETURN(bool e, fs->Exists(io::JoinPath(dir_, BinlogFileName(basename_, n))));
    if (!e) {
      return absl::NotFoundError(absl::StrCat(dir_, ": ", BinlogFileName(basename_, n),
                                              " is in the index but missing"));
    }
  }
  // Files after the last indexed one: a file is indexed only once its start
  // is durable, so a crash in between leaves one holding at most that.
  const uint64_t last = m->files.empty() ? 0 : m->files.back();
  BINLOG_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDirectory(dir_));
  std::sort(names.begin(), names.end());
  std::set<std::string> indexed;  // GTID index files none of these needs go
  for (uint64_t n : m->files) indexed.insert(BinlogFileName(basename_, n));
  internal::SweepGtidIndexFiles(fs, dir_, basename_, names, indexed);
  std::vector<std::string> strays;
  const uint64_t first = m->files.empty() ? 0 : m->files.front();
  const std::string purge_record = PurgeRecordPath(dir_, basename_);
  uint64_t purge_first = 0, purge_last = 0;
  BINLOG_ASSIGN_OR_RETURN(const bool purging,
                          ReadPurgeRecord(fs, purge_record, &purge_first, &purge_last));
  BINLOG_ASSIGN_OR_RETURN(const bool purge_record_exists, fs->Exists(purge_record));
  for (const std::string& name : names) {
    uint64_t n = 0;
    if (!ParseBinlogFileName(basename_, name, &n)) continue;
    if (n < first) {
      // Before the first indexed file: removed only if a purge that
      // rewrote the index and was interrupted before it removed the file
      // names it; any other is not the copy's to remove.
      if (purging && n >= purge_first && n <= purge_last) strays.push_back(name);
      continue;
    }
    if (n <= last) continue;
    if (!internal::HoldsOnlyHeaderEvents(fs, io::JoinPath(dir_, name),
                                         {kFormatDescriptionEvent})) {
      return absl::FailedPreconditionError(absl::StrCat(
          dir_, ": ", name, " is not in ", IndexFileName(basename_),
          " and holds events; refusing to guess whether it belongs to the copy"));
    }
    strays.push_back(name);
  }

  if (!m->files.empty()) {
    m->last = last;
    m->last_name = BinlogFileName(basename_, last);
    const std::string path = io::JoinPath(dir_, m->last_name);
    // The segment of the last file: its record, or the copy's own names.
    m->last_source_name = m->last_name;
    if (const SourceFileRecord* seg = SegmentOf(m->sources, last)) {
      absl::string_view base;
      uint64_t k = 0;
      SplitBinlogFileName(seg->source_file, &base, &k);
      m->seg_base = std::string(base);
      m->seg_offset = static_cast<int64_t>(seg->file) - static_cast<int64_t>(k);
      m->last_source_name = m->SourceName(basename_, last);
    }
    ReaderOptions ro;
    ro.checksum_mode = ChecksumMode::kVerify;
    ro.payloads = PayloadMode::kRaw;
    absl::StatusOr<internal::TransactionScan> opened =
        internal::TransactionScan::Open(fs, path, ro);
    if (!opened.ok()) {
      if (!absl::IsDataLoss(opened.status())) return opened.status();
      return absl::DataLossError(absl::StrCat("cannot recover ", opened.status().message()));
    }
    internal::TransactionScan& t = *opened;
    m->fde = t.format_description();
    m->checksums = m->fde.has_checksums();
    m->fde_end = t.header_end();
    m->parser.set_query_post_header_len(m->fde.PostHeaderLen(kQueryEvent));
    m->boundary_end = t.header_end();
    // The state at each boundary: a Rotate or a Stop there ends the file.
    bool ended = false;
    std::string next_file;
    BINLOG_RETURN_IF_ERROR(t.Run(
        [&](const Event& ev) { return m->Observe(ev.header, ev.body(), ev.end_offset); },
        [&](const Event& ev, internal::TransactionScan::Result r) {
          if (r == internal::TransactionScan::Result::kOutside ||
              r == internal::TransactionScan::Result::kEnded) {
            ended = false;
            next_file.clear();
            if (ev.header.type == kStopEvent) ended = true;
            if (ev.header.type == kRotateEvent) {
              auto rot = DecodeRotate(ev.body());
              if (rot.ok()) {
                ended = true;
                next_file = rot->next_file;
              }
            }
          }
          return internal::ScanNext::kContinue;
        }));
    const uint64_t valid_end = t.valid_end();
    const std::string reason = t.reason();
    const bool damaged = t.damaged();
    const uint64_t bad_at = t.bad_at();
    t.Close();
    if (damaged) {
      absl::Status s = internal::CheckBeyondTornTail(fs, path, bad_at,
                                                     options_.max_unsynced_bytes, m->checksums);
      if (!s.ok()) {
        if (!absl::IsDataLoss(s)) return s;
        return absl::DataLossError(absl::StrCat(
            "not a torn tail, refusing to cut the copy (", reason, "): ", s.message()));
      }
    }
    BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
    recovery_.file_name = m->last_name;
    recovery_.valid_end = valid_end;
    recovery_.bytes_cut = size > valid_end ? size - valid_end : 0;
    recovery_.reason = recovery_.bytes_cut > 0 ? reason : "clean end";
    if (size > valid_end || !ended) {
      BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                              fs->OpenWritable(path, io::OpenMode::kOpenExisting,
                                               options_.file_mode));
      if (size > valid_end) {
        // What a crash left after the last complete transaction: the dump
        // sends it again from ResumePoint().
        BINLOG_RETURN_IF_ERROR(f->Truncate(valid_end));
        BINLOG_RETURN_IF_ERROR(f->Sync());
      }
      if (ended) {
        BINLOG_RETURN_IF_ERROR(f->Close());
      } else {
        m->active = std::move(f);
      }
    }
    m->ForgetOpenTransaction();
    m->written = m->synced = valid_end;
    m->boundary_end = valid_end;
    m->ended = ended;
    m->next_file = next_file;
    BINLOG_ASSIGN_OR_RETURN(m->last_server, FileServerId(fs, path));
  }
  // Removed only once the copy's own files were found sound (an Open that
  // fails changes nothing on disk).
  for (const std::string& name : strays) {
    BINLOG_RETURN_IF_ERROR(internal::RemoveGtidIndex(fs, io::JoinPath(dir_, name)));
    BINLOG_RETURN_IF_ERROR(fs->Remove(io::JoinPath(dir_, name)));
    recovery_.removed_files.push_back(name);
  }
  if (!strays.empty()) BINLOG_RETURN_IF_ERROR(m->dir_handle->Sync());
  if (rewrite_sources) {
    if (m->sources.empty()) {
      BINLOG_RETURN_IF_ERROR(fs->Remove(io::JoinPath(dir_, SourceMapFileName(basename_))));
      BINLOG_RETURN_IF_ERROR(m->dir_handle->Sync());
    } else {
      BINLOG_RETURN_IF_ERROR(WriteSourceMap(fs, m->dir_handle.get(), dir_, basename_,
                                            m->sources, options_.file_mode));
    }
  }
  // The purge is finished (or never rewrote the index).
  if (purge_record_exists) BINLOG_RETURN_IF_ERROR(fs->Remove(purge_record));
  if (write_empty_index) {
    BINLOG_RETURN_IF_ERROR(
        WriteIndex(fs, m->dir_handle.get(), dir_, basename_, {}, options_.file_mode));
  }
  return absl::OkStatus();
}

void MirrorLog::Publish() {
  State* m = st_.get();
  // The boundary is durable only once synced covers it (after Sync, and at
  // a file's start and end, where synced is the file's end).
  if (m->files.empty() || m->boundary_end > m->synced) return;
  if (m->published_file != m->last || m->published_pos != m->boundary_end) {
    // The GTID state is the one at boundary_end (Observe keeps both).
    sync::MutexLock l(&m->published_mu);
    m->published_flavor = IsMariaDbFde(m->fde) ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
    m->published_gtids = m->gtids;
    m->published_maria = m->maria;
    m->published_file = m->last;
    m->published_pos = m->boundary_end;
  }
  live_->Publish(m->last, m->boundary_end);
}

absl::Status MirrorLog::Poison(absl::Status s) {
  if (st_->error.ok()) st_->error = s;
  return s;
}

absl::Status MirrorLog::CheckUsable() const {
  if (st_->closed) return absl::FailedPreconditionError("mirror log is closed");
  if (!st_->error.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "mirror log is poisoned by an earlier error: ", st_->error.ToString()));
  }
  return absl::OkStatus();
}

namespace {

// Writes the pending bytes of the last file, never leaving more than
// `window` bytes past its last fdatasync (syncing first when needed).
absl::Status FlushPending(io::WritableFile* f, uint64_t window, std::string* pending,
                          uint64_t* written, uint64_t* synced, uint64_t* syncs) {
  size_t off = 0;
  while (off < pending->size()) {
    if (*written - *synced >= window) {
      BINLOG_RETURN_IF_ERROR(f->Sync());
      *synced = *written;
      ++*syncs;
    }
    size_t n = static_cast<size_t>(
        std::min<uint64_t>(pending->size() - off, window - (*written - *synced)));
    BINLOG_RETURN_IF_ERROR(f->Write(*written, absl::string_view(*pending).substr(off, n)));
    *written += n;
    off += n;
  }
  pending->clear();
  return absl::OkStatus();
}

}  // namespace

absl::Status MirrorLog::State::CutOpenTransactionAndSync(uint64_t window) {
  absl::Status s;
  if (!parser.outside()) {
    if (boundary_end >= written) {
      pending.resize(boundary_end - written);
    } else {
      pending.clear();
      s = active->Truncate(boundary_end);
      written = boundary_end;
      synced = std::min(synced, written);
    }
    ForgetOpenTransaction();
  }
  if (s.ok()) s = FlushPending(active.get(), window, &pending, &written, &synced, &stats.syncs);
  if (s.ok()) s = active->Sync();
  if (s.ok()) {
    synced = written;
    ++stats.syncs;
  }
  return s;
}

absl::Status MirrorLog::Append(absl::string_view event) {
  sync::MutexLock l(&st_->mu);
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  return AppendLocked(event);
}

absl::Status MirrorLog::AppendLocked(absl::string_view event) {
  State* m = st_.get();
  if (event.size() < kHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("event of ", event.size(), " bytes is shorter than its header"));
  }
  const EventHeader h = DecodeHeader(event);
  if (h.event_size != event.size()) {
    return absl::InvalidArgumentError(absl::StrCat("event_size ", h.event_size,
                                                   " does not match the ", event.size(),
                                                   " bytes given (", EventTypeName(h.type), ")"));
  }
  if (h.event_size > kMaxEventSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("event of ", h.event_size, " bytes is above the maximum ", kMaxEventSize));
  }
  const bool artificial = (h.flags & kFlagArtificial) != 0;

  // Heartbeats and the artificial events of a dump: never stored.
  if (h.type == kHeartbeatEvent || h.type == kHeartbeatEventV2) {
    ++m->stats.events;
    ++m->stats.heartbeats;
    return absl::OkStatus();
  }
  if (h.type == kRotateEvent && (artificial || h.log_pos == 0)) {
    bool has_crc = false;
    auto r = DecodeRotateAnyChecksum(event, &has_crc);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad artificial Rotate from the source: ", r.status().message()));
    }
    const std::string& name = r->next_file;
    const uint64_t pos = r->position;
    if (m->switching) {
      // A failover's dump: a file of the new source, from its start, that
      // becomes the copy's next file (begun at its Format_description).
      absl::string_view base;
      uint64_t k = 0;
      if (!IsValidSourceFileName(name) || !SplitBinlogFileName(name, &base, &k)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the new source's dump names '", absl::CHexEscape(name.substr(0, 100)),
            name.size() > 100 ? "...'" : "'",
            ", not a binlog file name the copy can record (printable ASCII without "
            "whitespace or '/', at most ", kMaxSourceFileNameLength, " bytes)"));
      }
      if (pos != kMagicSize) {
        return absl::OutOfRangeError(absl::StrCat(
            "the new source's dump starts inside ", name, " (at ", pos,
            "); the copy takes a new source's file from its start (position 4)"));
      }
      m->switch_base = std::string(base);
      m->switch_offset = static_cast<int64_t>(m->last + 1) - static_cast<int64_t>(k);
      m->streaming = true;
      m->stream_file = name;
      m->stream_pos = kMagicSize;
      m->expect_file_start = true;
      ++m->stats.events;
      ++m->stats.artificial;
      return absl::OkStatus();
    }
    if (!m->files.empty() && name == m->last_source_name) {
      // A restart in the copy's last file: what it holds up to its end
      // comes again.
      if (pos < kMagicSize || pos > m->end()) {
        return absl::OutOfRangeError(absl::StrCat(
            "the dump restarts at ", name, ":", pos, ", past the copy's end there (",
            m->end(), "): a gap"));
      }
      m->streaming = true;
      m->stream_file = name;
      m->stream_pos = pos;
      m->expect_file_start = false;
      if (m->ended && pos == m->end() && !m->next_file.empty()) {
        // At the end of a file that rotated: the next file's start follows.
        m->stream_file = m->next_file;
        m->stream_pos = kMagicSize;
        m->expect_file_start = true;
      }
    } else {
      uint64_t n = 0;
      if (!m->CopyNumber(name, &n)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the dump names file '", name, "', not one of '", m->seg_base, "'"));
      }
      if (!m->files.empty() && n <= m->last) {
        return absl::OutOfRangeError(absl::StrCat("the dump restarts in ", name,
                                                  ", before the copy's last file ",
                                                  m->last_source_name));
      }
      if (pos != kMagicSize) {
        return absl::OutOfRangeError(absl::StrCat(
            "the dump starts inside ", name, " (at ", pos,
            "); the copy needs the file from its start (position 4)"));
      }
      if (m->ended && !m->next_file.empty() && name != m->next_file) {
        return absl::OutOfRangeError(absl::StrCat("the dump names ", name, " but ",
                                                  m->last_source_name, " rotated to ",
                                                  m->next_file));
      }
      // The source moved on without a Rotate (it crashed, or the dump
      // skipped one): the copy's last file ends here.
      BINLOG_RETURN_IF_ERROR(FinishLastFile());
      m->streaming = true;
      m->stream_file = name;
      m->stream_pos = kMagicSize;
      m->expect_file_start = true;
    }
    ++m->stats.events;
    ++m->stats.artificial;
    return absl::OkStatus();
  }
  if (artificial && h.type != kFormatDescriptionEvent) {
    // MariaDB's Gtid_list after skipped groups, and any other event a dump
    // makes up.
    ++m->stats.events;
    ++m->stats.artificial;
    return absl::OkStatus();
  }
  if (!m->streaming) {
    return absl::OutOfRangeError(absl::StrCat(
        EventTypeName(h.type), " event before the dump named its file (an artificial Rotate)"));
  }

  if (h.type == kFormatDescriptionEvent) {
    auto fd = DecodeFormatDescription(event);
    if (!fd.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad Format_description from the source: ", fd.status().message()));
    }
    if (fd->has_checksums() && !EventChecksumMatches(event)) {
      return absl::InvalidArgumentError("Format_description checksum mismatch");
    }
    if (m->expect_file_start) {
      if (h.log_pos != kMagicSize + event.size()) {
        return absl::OutOfRangeError(absl::StrCat(
            "the Format_description that starts ", m->stream_file, " has log_pos ", h.log_pos,
            ", not ", kMagicSize + event.size(),
            h.log_pos == 0 ? " (a re-send: the dump starts inside the file)" : ""));
      }
      uint64_t n = 0;
      if (m->switching) {
        // A failover: the new source's file must be the declared server's.
        if (h.server_id != m->stream_server) {
          return absl::OutOfRangeError(absl::StrCat(
              m->stream_file, " was written by server ", h.server_id, ", not by server ",
              m->stream_server, " that the dump comes from"));
        }
        // The copy's last file ends where it is; the new source's file is
        // its next one.
        BINLOG_RETURN_IF_ERROR(FinishLastFile());
        n = m->last + 1;
      } else if (!m->CopyNumber(m->stream_file, &n)) {
        return absl::InternalError("stream file outside the segment's basename");
      }
      if (n > kMaxFileNumber) {
        return absl::OutOfRangeError(absl::StrCat("the copy's file number ", n, " is too large"));
      }
      // A new segment: its record, durable before its first file exists.
      // The records of segments that no longer hold a file are left out.
      if (m->switching) {
        std::vector<SourceFileRecord> recs;
        const SourceFileRecord* first =
            m->files.empty() ? nullptr : SegmentOf(m->sources, m->files.front());
        for (const SourceFileRecord& r : m->sources) {
          if (&r == first || (!m->files.empty() && r.file >= m->files.front())) {
            recs.push_back(r);
          }
        }
        recs.push_back(SourceFileRecord{n, h.server_id, m->stream_file});
        absl::Status s = WriteSourceMap(m->fs, m->dir_handle.get(), dir_, basename_, recs,
                                        options_.file_mode);
        if (!s.ok()) return Poison(s);
        m->sources = std::move(recs);
      }
      // The copy's last file is closed now: its close time (its age for
      // retention, ListFileFacts) is this moment on the local clock, kept
      // durably as its modification time before the next file exists. A
      // file system that refuses it (a file another user owns, some
      // network mounts) leaves the file's last write time, which is at
      // most a moment earlier: counted, never a reason to stop copying.
      if (!m->files.empty()) {
        absl::Status s = m->fs->SetModificationTime(
            io::JoinPath(dir_, m->last_name), options_.clock ? options_.clock() : absl::Now());
        if (!s.ok()) ++m->stats.close_times_not_set;
      }
      // Start the file: magic and the source's event, durable, and its
      // name durable, before the index names it.
      const std::string copy_name = BinlogFileName(basename_, n);
      const std::string path = io::JoinPath(dir_, copy_name);
      auto opened = m->fs->OpenWritable(path, io::OpenMode::kCreateNew, options_.file_mode);
      if (!opened.ok()) return Poison(opened.status());
      std::unique_ptr<io::WritableFile> file = std::move(*opened);
      std::string header(kBinlogMagic, kMagicSize);
      header.append(event.data(), event.size());
      absl::Status s = file->Write(0, header);
      if (s.ok()) s = file->Sync();
      if (s.ok()) s = m->dir_handle->Sync();
      std::vector<uint64_t> files = m->files;
      files.push_back(n);
      if (s.ok()) {
        s = WriteIndex(m->fs, m->dir_handle.get(), dir_, basename_, files, options_.file_mode);
      }
      if (!s.ok()) {
        file->Close().IgnoreError();  // the write/sync error is the one to report
        return Poison(s);
      }
      m->files = std::move(files);
      live_->AddFile(n);
      m->last = n;
      m->last_name = copy_name;
      m->last_source_name = m->stream_file;
      m->last_server = h.server_id;
      if (m->switching) {
        m->seg_base = m->switch_base;
        m->seg_offset = m->switch_offset;
        m->switching = false;
      }
      m->active = std::move(file);
      m->readback.reset();
      m->written = m->synced = header.size();
      m->pending.clear();
      m->checksums = fd->has_checksums();
      m->fde = *fd;
      m->fde_end = header.size();
      m->ForgetOpenTransaction();
      m->parser.set_query_post_header_len(fd->PostHeaderLen(kQueryEvent));
      m->boundary_end = header.size();
      m->ended = false;
      m->next_file.clear();
      m->stream_pos = header.size();
      m->expect_file_start = false;
      ++m->stats.events;
      ++m->stats.events_stored;
      ++m->stats.syncs;
      ++m->stats.files_started;
      Publish();
      return absl::OkStatus();
    }
    // A re-send of the Format_description of the file the copy holds.
    if (fd->checksum_alg != m->fde.checksum_alg) {
      return absl::OutOfRangeError(absl::StrCat(
          "the re-sent Format_description of ", m->last_name,
          " has another checksum setting than the copy's"));
    }
    if (h.log_pos != 0) {
      if (h.log_pos != m->fde_end || m->stream_pos > kMagicSize) {
        return absl::OutOfRangeError(absl::StrCat(
            "a Format_description ending at ", h.log_pos, " where the dump is at ",
            m->stream_file, ":", m->stream_pos));
      }
      m->stream_pos = h.log_pos;
    }
    ++m->stats.events;
    ++m->stats.resent;
    return absl::OkStatus();
  }

  // Every other event belongs at a position of the copy's last file.
  if (m->expect_file_start) {
    return absl::OutOfRangeError(absl::StrCat("expected the Format_description that starts ",
                                              m->stream_file, ", got a ",
                                              EventTypeName(h.type), " event"));
  }
  const size_t min_size = kHeaderSize + (m->checksums ? kChecksumSize : 0);
  if (event.size() < min_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("event of ", event.size(), " bytes is below the minimum ", min_size));
  }
  if (m->checksums && !EventChecksumMatches(event)) {
    return absl::InvalidArgumentError(
        absl::StrCat("checksum mismatch in ", EventTypeName(h.type), " event from the source"));
  }
  uint64_t start = 0, ev_end = 0;
  if (h.log_pos == 0) {
    if (!LogPosMayBeZero(m->fde, h.type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          EventTypeName(h.type), " event with log_pos 0 in ", m->last_name,
          ", whose events carry their positions"));
    }
    start = m->stream_pos;  // MariaDB 11.4+ cache events: where the stream is
    ev_end = start + event.size();
  } else {
    if (h.log_pos < event.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          EventTypeName(h.type), " event of ", event.size(), " bytes with log_pos ", h.log_pos));
    }
    ev_end = h.log_pos;
    start = ev_end - event.size();
  }
  if (ev_end <= m->end()) {
    // A re-send after a restart: the copy holds it (the skipped groups of a
    // GTID dump make the stream jump forward, never back).
    if (start < m->stream_pos) {
      return absl::OutOfRangeError(absl::StrCat(
          EventTypeName(h.type), " event at ", m->last_name, ":", start, " overlaps ",
          "what the copy holds (its end is ", m->end(), ")"));
    }
    std::string held(event.size(), '\0');
    size_t got = 0;
    if (start < m->written) {
      if (m->readback == nullptr) {
        auto r = m->fs->OpenReadable(io::JoinPath(dir_, m->last_name));
        if (!r.ok()) return Poison(r.status());
        m->readback = std::move(*r);
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>(m->written - start, event.size()));
      absl::Status s = m->readback->Read(start, n, held.data(), &got);
      if (!s.ok()) return Poison(s);
    }
    if (got < event.size()) {
      const uint64_t from = start + got;  // >= written: in pending
      m->pending.copy(held.data() + got, event.size() - got,
                      static_cast<size_t>(from - m->written));
    }
    if (held != event) {
      return absl::OutOfRangeError(absl::StrCat(
          "the re-sent ", EventTypeName(h.type), " event at ", m->last_name, ":", start,
          " differs from the copy's bytes there"));
    }
    m->stream_pos = ev_end;
    ++m->stats.events;
    ++m->stats.resent;
    if (m->ended && ev_end == m->end() && !m->next_file.empty()) {
      // The re-sent Rotate: the dump goes on with the next file's start.
      m->stream_file = m->next_file;
      m->stream_pos = kMagicSize;
      m->expect_file_start = true;
    }
    return absl::OkStatus();
  }
  if (start != m->end()) {
    return absl::OutOfRangeError(absl::StrCat(
        EventTypeName(h.type), " event at ", m->last_name, ":", start, " (log_pos ", h.log_pos,
        ") does not continue the copy, which ends at ", m->end(), ": ",
        start > m->end() ? "a gap" : "an overlap"));
  }
  if (m->ended) {
    return absl::OutOfRangeError(absl::StrCat(EventTypeName(h.type), " event after the end of ",
                                              m->last_name, " (its Rotate or Stop)"));
  }
  const absl::string_view body = EventBody(event, m->checksums);
  std::string next_file;
  if (h.type == kRotateEvent) {
    auto r = DecodeRotate(body);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad Rotate from the source: ", r.status().message()));
    }
    uint64_t n = 0;
    if (!m->CopyNumber(r->next_file, &n) || n <= m->last) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the source's Rotate names '", r->next_file, "', not a file of '", m->seg_base,
          "' after ", m->last_source_name));
    }
    if (!m->parser.outside()) {
      return absl::InvalidArgumentError("a Rotate from the source inside a transaction");
    }
    next_file = r->next_file;
  }
  {
    TransactionBoundaryParser probe = m->parser;
    if (probe.Feed(h, body) == TransactionBoundaryParser::Result::kUnexpected) {
      return absl::InvalidArgumentError(absl::StrCat(
          EventTypeName(h.type), " event at ", m->last_name, ":", start,
          " does not fit a transaction here"));
    }
  }
  m->pending.append(event.data(), event.size());
  m->Observe(h, body, m->end());
  m->stream_pos = m->end();
  ++m->stats.events;
  ++m->stats.events_stored;
  if (h.type == kRotateEvent || h.type == kStopEvent) {
    // The file is complete: durable before the next one starts.
    absl::Status s = FlushPending(m->active.get(), options_.max_unsynced_bytes, &m->pending,
                                  &m->written, &m->synced, &m->stats.syncs);
    if (s.ok()) s = m->active->Sync();
    if (s.ok()) {
      m->synced = m->written;
      ++m->stats.syncs;
      s = m->active->Close();
    }
    m->active.reset();
    m->readback.reset();
    if (!s.ok()) return Poison(s);
    m->ended = true;
    m->next_file = next_file;
    Publish();
    if (m->gidx != nullptr) {  // its GTID index, off this thread
      m->gidx->Add(io::JoinPath(dir_, m->last_name),
                   IsMariaDbFde(m->fde) ? LogFlavor::kMariaDB : LogFlavor::kMySQL);
    }
    if (!next_file.empty()) {
      m->stream_file = next_file;
      m->stream_pos = kMagicSize;
      m->expect_file_start = true;
    }
    return absl::OkStatus();
  }
  if (m->pending.size() >= kWriteBufferBytes) {
    absl::Status s = FlushPending(m->active.get(), options_.max_unsynced_bytes, &m->pending,
                                  &m->written, &m->synced, &m->stats.syncs);
    if (!s.ok()) return Poison(s);
  }
  return absl::OkStatus();
}

absl::Status MirrorLog::FinishLastFile() {
  State* m = st_.get();
  if (m->files.empty() || m->ended) return absl::OkStatus();
  // A partial transaction at its end can never complete: cut it.
  absl::Status s = m->CutOpenTransactionAndSync(options_.max_unsynced_bytes);
  if (s.ok()) s = m->active->Close();
  m->active.reset();
  m->readback.reset();
  if (!s.ok()) return Poison(s);
  m->ended = true;
  m->next_file.clear();
  Publish();
  return absl::OkStatus();
}

void MirrorLog::BeginStream(uint32_t source_server_id) {
  sync::MutexLock l(&st_->mu);
  State* m = st_.get();
  m->stream_server = source_server_id;
  m->streaming = false;
  m->expect_file_start = false;
  m->switching = !m->files.empty() && source_server_id != 0 && m->last_server != 0 &&
                 source_server_id != m->last_server;
}

bool MirrorLog::switch_pending() const {
  sync::MutexLock l(&st_->mu);
  return st_->switching;
}

uint32_t MirrorLog::source_server_id() const {
  sync::MutexLock l(&st_->mu);
  return st_->files.empty() ? 0 : st_->last_server;
}

std::string MirrorLog::SourceFileName(const std::string& copy_file) const {
  sync::MutexLock l(&st_->mu);
  uint64_t n = 0;
  if (!ParseBinlogFileName(basename_, copy_file, &n)) return copy_file;
  return st_->SourceName(basename_, n);
}

absl::Status MirrorLog::Sync() {
  sync::MutexLock l(&st_->mu);
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  State* m = st_.get();
  if (m->active == nullptr) return absl::OkStatus();  // an ended file is durable
  absl::Status s = FlushPending(m->active.get(), options_.max_unsynced_bytes, &m->pending,
                                &m->written, &m->synced, &m->stats.syncs);
  if (s.ok() && m->written > m->synced) {
    s = m->active->Sync();
    if (s.ok()) {
      m->synced = m->written;
      ++m->stats.syncs;
    }
  }
  if (!s.ok()) return Poison(s);
  Publish();
  return absl::OkStatus();
}

absl::Status MirrorLog::Close() {
  sync::MutexLock purging(&st_->purge_mu);  // a purge's removals end first
  // The ended files' index builds are waited for (MirrorOptions::
  // gtid_index_close_wait) without the lock, then cancelled.
  std::unique_ptr<internal::GtidIndexBuilder> gidx;
  absl::Status result;
  {
    sync::MutexLock l(&st_->mu);
    State* m = st_.get();
    if (m->closed) return absl::FailedPreconditionError("mirror log is closed");
    m->closed = true;
    gidx = std::move(m->gidx);
    result = m->error;
    if (result.ok() && m->active != nullptr) {
      // Cut a partial transaction: the dump sends it again from ResumePoint().
      absl::Status s = m->CutOpenTransactionAndSync(options_.max_unsynced_bytes);
      absl::Status cs = m->active->Close();
      if (s.ok()) s = cs;
      result = s;
    } else if (m->active != nullptr) {
      m->active->Close().IgnoreError();  // the poisoning error is the one to report
    }
    m->active.reset();
    m->readback.reset();
    m->lock.reset();
    if (result.ok()) Publish();
    live_->MarkClosed(result.ok());
  }
  if (gidx != nullptr) {
    gidx->WaitIdleFor(options_.gtid_index_close_wait);
    gidx->Stop();
  }
  return result;
}

MirrorPosition MirrorLog::durable_end() const {
  sync::MutexLock l(&st_->mu);
  if (st_->files.empty()) return MirrorPosition{};
  return MirrorPosition{st_->last_name, st_->synced};
}

MirrorPosition MirrorLog::end() const {
  sync::MutexLock l(&st_->mu);
  if (st_->files.empty()) return MirrorPosition{};
  return MirrorPosition{st_->last_name, st_->end()};
}

MirrorResumePoint MirrorLog::ResumePoint() const {
  sync::MutexLock l(&st_->mu);
  const State* m = st_.get();
  MirrorResumePoint r;
  if (m->files.empty()) return r;
  if (m->ended && !m->next_file.empty()) {
    r.position = MirrorPosition{m->next_file, kMagicSize};
  } else {
    r.position = MirrorPosition{m->last_source_name, m->boundary_end};
  }
  r.server_id = m->last_server;
  r.flavor = IsMariaDbFde(m->fde) ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
  r.gtids = m->gtids;
  r.maria_gtids = m->maria;
  return r;
}

bool MirrorLog::inside_transaction() const {
  sync::MutexLock l(&st_->mu);
  return !st_->parser.outside();
}

std::vector<std::string> MirrorLog::files() const {
  sync::MutexLock l(&st_->mu);
  std::vector<std::string> out;
  for (uint64_t n : st_->files) out.push_back(BinlogFileName(basename_, n));
  return out;
}

MirrorLog::Stats MirrorLog::stats() const {
  sync::MutexLock l(&st_->mu);
  return st_->stats;
}

}  // namespace binlog
