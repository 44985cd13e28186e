#include "binlog/gtid_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/status_macros.h"

namespace binlog {

GtidReader::GtidReader(std::unique_ptr<Reader> reader, GtidSet have)
    : reader_(std::move(reader)), have_(std::move(have)) {}

GtidReader::GtidReader(std::unique_ptr<Reader> reader, MariaGtidState position)
    : reader_(std::move(reader)), mariadb_(true), position_(std::move(position)) {
  for (const MariaGtidListEntry& e : position_.Positions()) {
    highest_[std::make_pair(e.domain_id, e.server_id)] = e.seq_no;
  }
}

absl::Status GtidReader::Next(Event* ev) {
  using R = TransactionBoundaryParser::Result;
  for (;;) {
    absl::Status s = reader_->Next(ev);
    if (!s.ok()) return s;
    if (ev->header.type == kFormatDescriptionEvent) {
      parser_.Reset();
      parser_.set_query_post_header_len(
          reader_->format_description().PostHeaderLen(kQueryEvent));
      skipping_ = false;
      return absl::OkStatus();
    }
    // Expanded payload events belong to their payload's transaction, whose
    // Gtid event decided already.
    if (ev->from_payload) {
      if (skipping_) continue;
      return absl::OkStatus();
    }
    R r = parser_.Feed(ev->header, ev->body());
    if ((ev->header.type == kGtidEvent || ev->header.type == kGtidTaggedEvent) &&
        !mariadb_) {
      auto g = DecodeAnyMySqlGtidEvent(ev->header.type, ev->body());
      skipping_ = g.ok() && g->gno > 0 &&
                  (have_.Contains(g->tsid(), g->gno) || returned_.Contains(g->tsid(), g->gno));
      if (skipping_) ++skipped_;
      if (!skipping_ && g.ok() && g->gno > 0) returned_.Add(g->tsid(), g->gno);
    } else if (ev->header.type == kMariaGtidEvent && mariadb_) {
      auto g = DecodeMariaGtid(ev->body());
      skipping_ = false;
      MariaGtidListEntry at;
      if (g.ok() && reached_.count(g->domain_id) == 0 &&
          position_.Position(g->domain_id, &at)) {
        if (g->seq_no <= at.seq_no) skipping_ = true;
        if (g->seq_no == at.seq_no && ev->header.server_id == at.server_id) {
          reached_.insert(g->domain_id);  // the replica's own GTID: the last skipped
        }
      }
      if (g.ok() && !skipping_) {
        // A group the replica had or was sent (a log that repeats groups:
        // a mirror's file after a failover).
        const auto key = std::make_pair(g->domain_id, ev->header.server_id);
        auto it = highest_.find(key);
        if (it != highest_.end() && g->seq_no <= it->second) {
          skipping_ = true;
        } else {
          highest_[key] = g->seq_no;
        }
      }
      if (skipping_) ++skipped_;
    }
    const bool ends = r == R::kEnded || r == R::kOutside || r == R::kUnexpected;
    if (skipping_) {
      if (ends) skipping_ = false;
      continue;
    }
    return absl::OkStatus();
  }
}

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
    BINLOG_ASSIGN_OR_RETURN(st.maria_purged, internal::FileMariaGtids(fs, first, false));
    BINLOG_ASSIGN_OR_RETURN(st.maria_state, internal::FileMariaGtids(fs, last, true));
  } else {
    BINLOG_ASSIGN_OR_RETURN(st.purged, internal::FileGtids(fs, first, false));
    BINLOG_ASSIGN_OR_RETURN(st.executed, internal::FileGtids(fs, last, true));
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
  BINLOG_ASSIGN_OR_RETURN(
      uint64_t start, internal::GtidStartFile(fs, dir, basename, state.files, have));
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
  BINLOG_ASSIGN_OR_RETURN(
      uint64_t start,
      internal::MariaGtidStartFile(fs, dir, basename, state.files, position));
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
