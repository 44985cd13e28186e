#include "binlog/relay_log.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log_directory.h"
#include "binlog/reader.h"
#include "binlog/transaction_scan.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"

namespace binlog {

namespace {

// Pending bytes are written (not synced) once they reach this much.
constexpr size_t kWriteBufferBytes = 1 << 20;

uint32_t NowSeconds() {
  return static_cast<uint32_t>(absl::ToUnixSeconds(absl::Now()));
}

}  // namespace

struct RelayLog::Impl {
  io::FileSystem* fs = nullptr;
  std::unique_ptr<io::FileLock> lock;
  std::unique_ptr<io::Directory> dir_handle;
  std::vector<uint64_t> files;  // indexed relay files, oldest first

  std::unique_ptr<io::WritableFile> active;
  uint64_t active_number = 0;
  uint64_t written = 0;   // bytes in the file
  std::string pending;    // bytes after `written`, not yet written
  uint64_t end() const { return written + pending.size(); }
  bool checksums = true;  // the active file's checksum setting

  // The last Format_description received from the source ("" if none).
  std::string source_fde;
  TransactionBoundaryParser parser;
  // The Gtid event of the open transaction (added to the retrieved set at
  // its end).
  bool has_pending_gtid = false;
  Tsid pending_tsid;
  int64_t pending_gno = 0;

  // After the last event that left no transaction open.
  uint64_t boundary_end = 0;
  SourcePosition boundary_source;

  uint32_t events_since_sync = 0;
  absl::Status error;
  bool closed = false;

  // Applies `ev` (a whole, validated event ending at relay offset `end`,
  // read with checksum setting `checksums`) to the stream state: source
  // position, source Format_description, retrieved GTIDs (a Gtid counts at
  // its transaction's end), transaction boundary. Returns the parser's
  // verdict.
  TransactionBoundaryParser::Result Observe(absl::string_view ev,
                                            bool checksums, uint64_t end,
                                            SourcePosition* source,
                                            GtidSet* retrieved);
};

RelayLog::RelayLog(std::string dir, std::string basename,
                   const RelayLogOptions& o)
    : dir_(std::move(dir)),
      basename_(std::move(basename)),
      options_(o),
      impl_(std::make_unique<Impl>()) {
  impl_->fs = o.file_system != nullptr ? o.file_system : io::FileSystem::Default();
  impl_->checksums = o.checksums;
}

RelayLog::~RelayLog() {
  if (!impl_->closed) Close().IgnoreError();
}

absl::Status RelayLog::Poison(absl::Status s) {
  if (impl_->error.ok()) impl_->error = s;
  return s;
}

absl::Status RelayLog::CheckUsable() const {
  if (impl_->closed) return absl::FailedPreconditionError("relay log is closed");
  if (!impl_->error.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "relay log is poisoned by an earlier error: ", impl_->error.ToString()));
  }
  return absl::OkStatus();
}

bool RelayLog::inside_transaction() const { return !impl_->parser.outside(); }

std::vector<std::string> RelayLog::files() const {
  std::vector<std::string> out;
  for (uint64_t n : impl_->files) out.push_back(BinlogFileName(basename_, n));
  return out;
}

TransactionBoundaryParser::Result RelayLog::Impl::Observe(
    absl::string_view ev, bool checksums, uint64_t end, SourcePosition* source,
    GtidSet* retrieved) {
  EventHeader h = DecodeHeader(ev);
  absl::string_view body = EventBody(ev, checksums);
  const bool artificial = (h.flags & kFlagArtificial) != 0;
  switch (h.type) {
    case kFormatDescriptionEvent: {
      auto fd = DecodeFormatDescription(ev);
      if (fd.ok()) {
        source_fde = std::string(ev);
        parser.set_query_post_header_len(fd->PostHeaderLen(kQueryEvent));
      }
      if (h.log_pos != 0 && !artificial) source->pos = h.log_pos;
      break;
    }
    case kRotateEvent: {
      if ((h.flags & kFlagRelayLog) == 0) {
        auto r = DecodeRotate(body);
        if (r.ok()) {
          source->file = r->next_file;
          source->pos = r->position;
        }
      }
      break;
    }
    case kPreviousGtidsEvent: {
      // Only the relay log's own Previous_gtids is stored (the source's is
      // replaced): the GTIDs received before this file.
      auto set = GtidSet::DecodePreviousGtidsBody(body);
      if (set.ok()) *retrieved = std::move(*set);
      break;
    }
    default:
      if (h.log_pos != 0 && !artificial) source->pos = h.log_pos;
      break;
  }
  auto r = parser.Feed(h, body);
  if (r == TransactionBoundaryParser::Result::kStarted ||
      r == TransactionBoundaryParser::Result::kUnexpected) {
    has_pending_gtid = false;
    if (IsMySqlGtidEventType(h.type)) {
      auto g = DecodeAnyMySqlGtidEvent(h.type, body);
      if (g.ok() && !g->anonymous()) {
        has_pending_gtid = true;
        pending_tsid = g->tsid();
        pending_gno = g->gno;
      }
    }
  }
  if (r == TransactionBoundaryParser::Result::kEnded) {
    if (has_pending_gtid) retrieved->Add(pending_tsid, pending_gno);
    has_pending_gtid = false;
  }
  if (r == TransactionBoundaryParser::Result::kEnded ||
      r == TransactionBoundaryParser::Result::kOutside) {
    boundary_end = end;
    boundary_source = *source;
  }
  return r;
}

absl::StatusOr<std::unique_ptr<RelayLog>> RelayLog::Open(
    const std::string& dir, const std::string& basename,
    const RelayLogOptions& options) {
  if (basename.empty() || basename.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad relay log basename '", basename, "'"));
  }
  if (options.max_file_size < 4096 || options.max_file_size > 0xFFFFFFFFull) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_file_size ", options.max_file_size, " outside 4096 .. 2^32-1"));
  }
  if (options.sync == RelaySyncPolicy::kEveryNEvents &&
      options.sync_every_events == 0) {
    return absl::InvalidArgumentError("sync_every_events must be >= 1");
  }
  if (options.recovery == RelayRecovery::kDiscard &&
      options.discard_fetch_from.file.empty()) {
    return absl::InvalidArgumentError(
        "RelayRecovery::kDiscard needs discard_fetch_from (the applier's "
        "source position)");
  }
  std::unique_ptr<RelayLog> log(new RelayLog(dir, basename, options));
  BINLOG_RETURN_IF_ERROR(log->OpenImpl());
  return log;
}


absl::Status RelayLog::OpenImpl() {
  Impl* m = impl_.get();
  io::FileSystem* fs = m->fs;
  BINLOG_RETURN_IF_ERROR(internal::CreateLogDirectory(fs, dir_, options_.create_if_missing,
                                                      options_.directory_mode));
  BINLOG_ASSIGN_OR_RETURN(
      m->lock, fs->LockFile(io::JoinPath(dir_, absl::StrCat(basename_, ".lock")),
                            options_.file_mode));
  BINLOG_ASSIGN_OR_RETURN(m->dir_handle, fs->OpenDirectory(dir_));

  auto index = ReadIndex(fs, dir_, basename_);
  const bool has_index = index.ok();
  if (index.ok()) {
    m->files = std::move(*index);
  } else if (absl::IsNotFound(index.status())) {
    if (!options_.create_if_missing) return index.status();
  } else {
    return index.status();
  }
  for (uint64_t n : m->files) {
    BINLOG_ASSIGN_OR_RETURN(bool e,
                            fs->Exists(io::JoinPath(dir_, BinlogFileName(basename_, n))));
    if (!e) {
      return absl::NotFoundError(absl::StrCat(
          "relay file ", BinlogFileName(basename_, n), " is in the index but missing"));
    }
  }

  // Files a crash left outside the index: of an interrupted rotation
  // (after the last indexed file: the header is all a new file holds
  // before it is indexed) and of an interrupted discard (below the first
  // indexed file: a discard deletes files only after the new index no
  // longer names them).
  BINLOG_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDirectory(dir_));
  std::sort(names.begin(), names.end());
  uint64_t first = m->files.empty() ? 0 : m->files.front();
  uint64_t last = m->files.empty() ? 0 : m->files.back();
  std::set<uint64_t> indexed(m->files.begin(), m->files.end());
  std::vector<std::string> strays;
  for (const std::string& name : names) {
    uint64_t n = 0;
    if (!ParseBinlogFileName(basename_, name, &n) || indexed.count(n) != 0) continue;
    if (!has_index && internal::HoldsOnlyHeaderEvents(
                          fs, io::JoinPath(dir_, name),
                          {kFormatDescriptionEvent, kPreviousGtidsEvent, kRotateEvent})) {
      // A first Open that died before its index was durable: the header
      // is all the file got (events are appended only to indexed files).
      strays.push_back(name);
      continue;
    }
    if (!has_index || n > last + 1) {
      // Not a file a crash of this relay log can leave (no index at all,
      // or past the next file): refuse rather than guess, as the binlog
      // does; nothing is changed.
      return absl::FailedPreconditionError(absl::StrCat(
          dir_, ": relay file ", name, " is not in ", IndexFileName(basename_),
          has_index ? "" : " (which is missing)",
          "; refusing to guess whether it belongs to the relay log"));
    }
    if (n == last + 1 || n < first) strays.push_back(name);
  }
  // Removed only once the relay log's own files were found sound (an Open
  // that fails changes nothing on disk).
  auto remove_strays = [&]() -> absl::Status {
    for (const std::string& name : strays) {
      BINLOG_RETURN_IF_ERROR(fs->Remove(io::JoinPath(dir_, name)));
      recovery_.removed_files.push_back(name);
    }
    if (!strays.empty()) BINLOG_RETURN_IF_ERROR(m->dir_handle->Sync());
    strays.clear();
    return absl::OkStatus();
  };

  if (options_.recovery == RelayRecovery::kDiscard) {
    // relay_log_recovery=ON: the new file is indexed alone first, then the
    // old files go (a crash in between leaves files below the first
    // indexed one, which the next Open removes).
    BINLOG_RETURN_IF_ERROR(remove_strays());
    std::vector<uint64_t> old = m->files;
    uint64_t next = last + 1;
    m->files.clear();
    source_ = options_.discard_fetch_from;
    m->boundary_source = source_;
    retrieved_ = GtidSet();
    m->checksums = options_.checksums;
    BINLOG_RETURN_IF_ERROR(StartNewFile(next, /*at_startup=*/true));
    for (uint64_t n : old) {
      std::string name = BinlogFileName(basename_, n);
      BINLOG_RETURN_IF_ERROR(fs->Remove(io::JoinPath(dir_, name)));
      recovery_.removed_files.push_back(name);
    }
    if (!old.empty()) BINLOG_RETURN_IF_ERROR(m->dir_handle->Sync());
    recovery_.discarded = true;
    recovery_.fetch_from = source_;
  } else {
    if (!m->files.empty()) {
      // Read the last file: the stream state at its last complete
      // transaction, and whether anything after it must be cut.
      std::string name = BinlogFileName(basename_, last);
      std::string path = io::JoinPath(dir_, name);
      ReaderOptions ro;
      ro.checksum_mode = ChecksumMode::kVerify;
      ro.payloads = PayloadMode::kRaw;
      absl::StatusOr<internal::TransactionScan> opened =
          internal::TransactionScan::Open(fs, path, ro);
      if (!opened.ok()) {
        if (!absl::IsDataLoss(opened.status())) return opened.status();
        return absl::DataLossError(
            absl::StrCat("cannot recover ", opened.status().message()));
      }
      internal::TransactionScan& t = *opened;
      const FormatDescription own = t.format_description();
      if (!own.relay_log) {
        return absl::DataLossError(absl::StrCat(
            path, " is not a relay log file (no LOG_EVENT_RELAY_LOG_F in its "
                  "Format_description)"));
      }
      m->checksums = own.has_checksums();
      m->boundary_end = t.header_end();
      // The relay log's own parser classifies (it also tracks the source
      // position and the retrieved GTIDs), with the checksum setting that
      // applies to each event: the file's latest Format_description (a
      // source copy replaces the file's).
      BINLOG_RETURN_IF_ERROR(t.Run(
          [&](const Event& ev) {
            return m->Observe(ev.data, ev.file_has_checksums, ev.end_offset, &source_,
                              &retrieved_);
          },
          [&](const Event& ev, internal::TransactionScan::Result) {
            if (ev.header.type == kFormatDescriptionEvent) m->checksums = ev.file_has_checksums;
            return internal::ScanNext::kContinue;
          }));
      const std::string reason = t.reason();
      t.Close();
      BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
      if (!own.in_use && (size != m->boundary_end || !m->parser.outside())) {
        // A closed file ends at a complete event outside a transaction
        // (Close cuts a partial one); anything else is damage a crash
        // cannot explain.
        return absl::DataLossError(absl::StrCat(
            "closed relay file ", path, " does not end after a complete "
            "transaction: ", reason));
      }
      BINLOG_RETURN_IF_ERROR(remove_strays());
      if (own.in_use) {
        recovery_.recovered = true;
        recovery_.file_name = name;
        recovery_.valid_end = m->boundary_end;
        recovery_.bytes_cut = size > m->boundary_end ? size - m->boundary_end : 0;
        recovery_.reason = recovery_.bytes_cut > 0 ? reason : "clean end";
        BINLOG_RETURN_IF_ERROR(
            internal::CutAndClearInUse(fs, path, size, m->boundary_end));
      }
      // The state at the last complete transaction.
      source_ = m->boundary_source;
      m->parser.Reset();
      m->has_pending_gtid = false;
    }
    BINLOG_RETURN_IF_ERROR(remove_strays());
    recovery_.fetch_from = source_;
    BINLOG_RETURN_IF_ERROR(StartNewFile(last + 1, /*at_startup=*/true));
  }
  durable_source_ = m->boundary_source;
  durable_relay_ = RelayPosition{active_name_, m->boundary_end};
  return absl::OkStatus();
}

// Writes the header of relay file `number` (see the layout in relay_log.h),
// makes it and its name durable, and indexes it.
absl::Status RelayLog::StartNewFile(uint64_t number, bool at_startup) {
  Impl* m = impl_.get();
  const SourcePosition& source = source_;
  if (number == 0 || number > kMaxFileNumber) {
    return absl::ResourceExhaustedError("relay log file numbers exhausted");
  }
  std::string name = BinlogFileName(basename_, number);
  std::string path = io::JoinPath(dir_, name);
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> file,
                          m->fs->OpenWritable(path, io::OpenMode::kCreateNew,
                                              options_.file_mode));
  const uint32_t now = NowSeconds();
  std::string header(kBinlogMagic, kMagicSize);
  FdeParams fp;
  fp.timestamp = now;
  fp.server_id = options_.server_id;
  fp.server_version = options_.server_version;
  fp.create_timestamp = at_startup ? now : 0;
  fp.checksums = m->checksums;
  fp.in_use = true;
  fp.relay_log = true;
  header += EncodeFormatDescription(fp);
  header += EncodePreviousGtids(now, options_.server_id, retrieved_,
                                static_cast<uint32_t>(header.size()),
                                kFlagRelayLog, m->checksums);
  if (!m->source_fde.empty()) {
    BINLOG_ASSIGN_OR_RETURN(std::string copy,
                            EncodeArtificialFormatDescription(m->source_fde));
    header += copy;
  }
  if (!source.file.empty()) {
    size_t size = RotateEventSize(source.file, m->checksums);
    header += EncodeRotateTo(now, /*server_id=*/0, source.file, source.pos,
                             static_cast<uint32_t>(header.size() + size), 0,
                             m->checksums);
  }
  absl::Status s = file->Write(0, header);
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = m->dir_handle->Sync();
  if (s.ok()) {
    std::vector<uint64_t> files = m->files;
    files.push_back(number);
    s = WriteIndex(m->fs, m->dir_handle.get(), dir_, basename_, files, options_.file_mode);
    if (s.ok()) m->files = std::move(files);
  }
  if (!s.ok()) {
    file->Close().IgnoreError();  // the write/sync error is the one to report
    return s;
  }
  m->active = std::move(file);
  m->active_number = number;
  m->written = header.size();
  m->pending.clear();
  m->boundary_end = header.size();
  m->boundary_source = source;
  m->events_since_sync = 0;
  active_name_ = name;
  return absl::OkStatus();
}

absl::Status RelayLog::Sync() {
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  Impl* m = impl_.get();
  if (!m->pending.empty()) {
    absl::Status s = m->active->Write(m->written, m->pending);
    if (!s.ok()) return Poison(s);
    m->written += m->pending.size();
    m->pending.clear();
  }
  absl::Status s = m->active->Sync();
  if (!s.ok()) return Poison(s);
  ++stats_.syncs;
  m->events_since_sync = 0;
  durable_source_ = m->boundary_source;
  durable_relay_ = RelayPosition{active_name_, m->boundary_end};
  return absl::OkStatus();
}

absl::Status RelayLog::Rotate() {
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  if (!impl_->parser.outside()) {
    return absl::FailedPreconditionError(
        "cannot rotate the relay log inside a transaction");
  }
  return RotateTo(impl_->checksums);
}

// Closes the active file with a Rotate naming the next one (durable, then
// the in-use flag cleared, durable) and starts the next file with checksum
// setting `next_checksums`. REQUIRES: outside a transaction.
absl::Status RelayLog::RotateTo(bool next_checksums) {
  Impl* m = impl_.get();
  const uint64_t next = m->active_number + 1;
  std::string next_name = BinlogFileName(basename_, next);
  size_t size = RotateEventSize(next_name, m->checksums);
  m->pending += EncodeRotateTo(NowSeconds(), options_.server_id, next_name, 4,
                               static_cast<uint32_t>(m->end() + size),
                               kFlagRelayLog, m->checksums);
  m->boundary_end = m->end();
  // The Rotate must be durable before the flag clears (a cleared flag
  // without its end event would claim a clean close).
  BINLOG_RETURN_IF_ERROR(Sync());
  const char cleared = static_cast<char>(kFlagRelayLog & 0xFF);
  absl::Status s =
      m->active->Write(kInUseFlagFileOffset, absl::string_view(&cleared, 1));
  if (s.ok()) s = m->active->Sync();
  if (s.ok()) s = m->active->Close();
  m->active.reset();
  if (!s.ok()) return Poison(s);
  m->checksums = next_checksums;
  s = StartNewFile(next, /*at_startup=*/false);
  if (!s.ok()) return Poison(s);
  ++stats_.rotations;
  durable_source_ = m->boundary_source;
  durable_relay_ = RelayPosition{active_name_, m->boundary_end};
  return absl::OkStatus();
}

absl::Status RelayLog::Append(absl::string_view event) {
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  Impl* m = impl_.get();
  if (event.size() < kHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("event of ", event.size(), " bytes is shorter than its header"));
  }
  EventHeader h = DecodeHeader(event);
  std::string normalized;
  if (h.type == kRotateEvent && (h.flags & kFlagArtificial) != 0 &&
      h.event_size == event.size() &&
      event.size() >= kHeaderSize + kRotatePostHeaderSize) {
    // A source's sender checksums the artificial Rotate that names a file
    // with the setting of that file, which comes to the replica only with
    // the file's Format_description, just after. The event is not part of
    // the source's binlog (log_pos 0): it is stored re-encoded under the
    // relay file's setting, so the file stays readable.
    bool has_crc = false;
    auto r = DecodeRotateAnyChecksum(event, &has_crc);
    if (has_crc != m->checksums) {
      if (!r.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bad artificial Rotate from the source: ", r.status().message()));
      }
      normalized = EncodeRotateTo(h.timestamp, h.server_id, r->next_file,
                                  r->position, h.log_pos, h.flags, m->checksums);
      event = normalized;
      h = DecodeHeader(event);
    }
  }
  if (h.event_size != event.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event_size ", h.event_size, " does not match the ", event.size(),
        " bytes given (", EventTypeName(h.type), ")"));
  }
  if (h.event_size > kMaxEventSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event of ", h.event_size, " bytes is above the maximum ", kMaxEventSize));
  }
  ++stats_.events;
  if (h.type == kFormatDescriptionEvent) {
    auto fd = DecodeFormatDescription(event);
    if (!fd.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad Format_description from the source: ", fd.status().message()));
    }
    if (fd->has_checksums() && !EventChecksumMatches(event)) {
      return absl::InvalidArgumentError("Format_description checksum mismatch");
    }
    if (fd->has_checksums() != m->checksums) {
      // One checksum setting per relay file: start a new file whose own
      // events and header copy follow the source's new setting.
      if (!m->parser.outside()) {
        return absl::InvalidArgumentError(
            "a Format_description that changes the checksum setting inside a "
            "transaction");
      }
      m->source_fde = std::string(event);
      m->parser.set_query_post_header_len(fd->PostHeaderLen(kQueryEvent));
      if (h.log_pos != 0 && (h.flags & kFlagArtificial) == 0) source_.pos = h.log_pos;
      m->boundary_source = source_;
      return RotateTo(fd->has_checksums());
    }
  } else {
    size_t min_size = kHeaderSize + (m->checksums ? kChecksumSize : 0);
    if (event.size() < min_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event of ", event.size(), " bytes is below the minimum ", min_size));
    }
    if (m->checksums && !EventChecksumMatches(event)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checksum mismatch in ", EventTypeName(h.type), " event from the source"));
    }
  }

  std::string replacement;  // an event stored in place of the received one
  absl::string_view stored = event;
  switch (h.type) {
    case kStopEvent:
    case kHeartbeatEvent:
    case kHeartbeatEventV2:
      // Not stored, as MySQL's receiver (a Stop only says the source shut
      // down; heartbeats keep the connection alive).
      return absl::OkStatus();
    case kPreviousGtidsEvent: {
      // Replaced by a Rotate to the source position after it (MySQL's
      // write_rotate_to_master_pos_into_relay_log), server_id 0.
      if (h.log_pos != 0) source_.pos = h.log_pos;
      m->boundary_source = m->parser.outside() ? source_ : m->boundary_source;
      if (source_.file.empty()) return absl::OkStatus();
      size_t size = RotateEventSize(source_.file, m->checksums);
      replacement = EncodeRotateTo(h.timestamp, /*server_id=*/0, source_.file,
                                   source_.pos,
                                   static_cast<uint32_t>(m->end() + size), 0,
                                   m->checksums);
      stored = replacement;
      break;
    }
    default: {
      // Refuse what the applier could not delimit (a GTID inside a
      // transaction, an unknown event without the ignorable flag).
      TransactionBoundaryParser probe = m->parser;
      EventHeader ph = h;
      if (probe.Feed(ph, EventBody(event, m->checksums)) ==
          TransactionBoundaryParser::Result::kUnexpected) {
        return absl::InvalidArgumentError(absl::StrCat(
            EventTypeName(h.type), " event does not fit a transaction here"));
      }
      break;
    }
  }

  m->pending.append(stored.data(), stored.size());
  ++stats_.events_stored;
  ++m->events_since_sync;
  auto r = m->Observe(stored, m->checksums, m->end(), &source_, &retrieved_);
  const bool source_rotated = h.type == kRotateEvent &&
                              (h.flags & kFlagArtificial) == 0 &&
                              replacement.empty();
  bool sync_now = false;
  if (options_.sync == RelaySyncPolicy::kEveryGroup) {
    sync_now = r == TransactionBoundaryParser::Result::kEnded;
  } else {
    sync_now = m->events_since_sync >= options_.sync_every_events;
  }
  if (m->parser.outside() && (m->end() >= options_.max_file_size || source_rotated)) {
    return RotateTo(m->checksums);  // syncs
  }
  if (sync_now) return Sync();
  if (m->pending.size() >= kWriteBufferBytes) {
    absl::Status s = m->active->Write(m->written, m->pending);
    if (!s.ok()) return Poison(s);
    m->written += m->pending.size();
    m->pending.clear();
  }
  return absl::OkStatus();
}

absl::Status RelayLog::Close() {
  Impl* m = impl_.get();
  if (m->closed) return absl::FailedPreconditionError("relay log is closed");
  m->closed = true;
  absl::Status result = m->error;
  if (result.ok() && m->active != nullptr) {
    // Cut a partial transaction: it is fetched again from
    // durable_source_position() after the next Open.
    absl::Status s = absl::OkStatus();
    if (!m->parser.outside()) {
      if (m->boundary_end >= m->written) {
        m->pending.resize(m->boundary_end - m->written);
      } else {
        m->pending.clear();
        s = m->active->Truncate(m->boundary_end);
        m->written = m->boundary_end;
      }
      source_ = m->boundary_source;
      m->parser.Reset();
    }
    if (s.ok() && !m->pending.empty()) {
      s = m->active->Write(m->written, m->pending);
      m->written += m->pending.size();
      m->pending.clear();
    }
    if (s.ok()) s = m->active->Sync();
    if (s.ok()) {
      durable_source_ = m->boundary_source;
      durable_relay_ = RelayPosition{active_name_, m->boundary_end};
      const char cleared = static_cast<char>(kFlagRelayLog & 0xFF);
      s = m->active->Write(kInUseFlagFileOffset, absl::string_view(&cleared, 1));
    }
    if (s.ok()) s = m->active->Sync();
    absl::Status cs = m->active->Close();
    if (s.ok()) s = cs;
    result = s;
  } else if (m->active != nullptr) {
    m->active->Close().IgnoreError();  // the poisoning error is the one to report
  }
  m->active.reset();
  m->lock.reset();
  return result;
}

}  // namespace binlog
