#include "binlog/gtid_reader.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/status_macros.h"

namespace binlog {

GtidReader::GtidReader(std::unique_ptr<Reader> reader, GtidSet have)
    : reader_(std::move(reader)), have_(std::move(have)) {}

GtidReader::GtidReader(std::unique_ptr<Reader> reader, MariaGtidState position)
    : reader_(std::move(reader)), mariadb_(true), position_(std::move(position)) {}

bool GtidReader::SeqNos::Contains(uint64_t n) const {
  auto it = runs.upper_bound(n);  // the first run starting after n
  if (it == runs.begin()) return false;
  --it;
  return n <= it->second;
}

void GtidReader::SeqNos::Add(uint64_t n) {
  if (Contains(n)) return;
  auto next = runs.upper_bound(n);
  // Joins the run ending at n - 1 and / or the one starting at n + 1.
  if (next != runs.begin()) {
    auto prev = std::prev(next);
    if (prev->second + 1 == n) {
      prev->second = n;
      if (next != runs.end() && next->first == n + 1) {
        prev->second = next->second;
        runs.erase(next);
      }
      return;
    }
  }
  if (next != runs.end() && next->first == n + 1) {
    const uint64_t end = next->second;
    runs.erase(next);
    runs[n] = end;
    return;
  }
  runs[n] = n;
}

void GtidReader::SetJumps(uint64_t file, std::vector<std::pair<uint64_t, uint64_t>> jumps,
                          std::set<uint32_t> reached, uint64_t skipped,
                          ReaderOpener open) {
  jump_file_ = file;
  jumps_ = std::move(jumps);
  next_jump_ = 0;
  jump_reached_ = std::move(reached);
  jump_skipped_ = skipped;
  jump_skipped_base_ = skipped_;
  open_ = std::move(open);
}

absl::Status GtidReader::MaybeJump() {
  if (next_jump_ >= jumps_.size() || !last_whole_ || last_file_ != jump_file_ ||
      last_end_ != jumps_[next_jump_].first) {
    return absl::OkStatus();
  }
  const uint64_t to = jumps_[next_jump_].second;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> r, open_(jump_file_, to));
  reader_ = std::move(r);
  fresh_reader_ = true;
  // What the full scan's state is there: no transaction open.
  parser_.Reset();
  skipping_ = false;
  if (++next_jump_ == jumps_.size()) {
    reached_.insert(jump_reached_.begin(), jump_reached_.end());
    skipped_ = jump_skipped_base_ + jump_skipped_;
    jumped_to_ = to;
  }
  return absl::OkStatus();
}

absl::Status GtidReader::Next(Event* ev) {
  using R = TransactionBoundaryParser::Result;
  for (;;) {
    BINLOG_RETURN_IF_ERROR(MaybeJump());
    absl::Status s = reader_->Next(ev);
    if (!s.ok()) return s;
    last_file_ = ev->file_number;
    last_end_ = ev->end_offset;
    last_whole_ = !ev->from_payload || ev->payload_index + 1 >= ev->payload_events;
    if (fresh_reader_) {
      // A reader opened inside its file returns no Format_description.
      fresh_reader_ = false;
      parser_.set_query_post_header_len(
          reader_->format_description().PostHeaderLen(kQueryEvent));
    }
    if (ev->header.type == kFormatDescriptionEvent) {
      // A file another server wrote than the previous file's writer: a
      // mirror copy's first file from a new server after a failover, whose
      // start repeats what the copy held. Per domain, up to the last GTID
      // read before it, a group already read is a repeat.
      repeats_until_.clear();
      if (mariadb_ && file_server_ != 0 && ev->header.server_id != file_server_) {
        repeats_until_ = last_read_;
      }
      file_server_ = ev->header.server_id;
      parser_.Reset();
      parser_.set_query_post_header_len(
          reader_->format_description().PostHeaderLen(kQueryEvent));
      skipping_ = false;
      return absl::OkStatus();
    }
    // Expanded payload events belong to their payload's transaction, whose
    // Gtid event decided already. The last one ends it, as the payload
    // event does for a reader of raw payloads.
    if (ev->from_payload) {
      const bool skip = skipping_;
      if (last_whole_) {
        EventHeader h = ev->header;
        h.type = kTransactionPayloadEvent;
        R r = parser_.Feed(h, absl::string_view());
        if (r == R::kEnded || r == R::kOutside || r == R::kUnexpected) skipping_ = false;
      }
      if (skip) continue;
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
      if (g.ok()) {
        const MariaGtidListEntry id{g->domain_id, ev->header.server_id, g->seq_no};
        const auto key = std::make_pair(id.domain_id, id.server_id);
        auto rep = repeats_until_.find(id.domain_id);
        if (rep != repeats_until_.end()) {
          // In the repeated start of a new server's file: a group read
          // already (returned, or skipped as the replica's) is skipped by
          // its exact GTID; the prefix ends at the last one read before.
          auto it = read_.find(key);
          if (!skipping_ && it != read_.end() && it->second.Contains(id.seq_no)) {
            skipping_ = true;
          }
          if (rep->second.server_id == id.server_id && rep->second.seq_no == id.seq_no) {
            repeats_until_.erase(rep);
          }
        }
        read_[key].Add(id.seq_no);
        last_read_[id.domain_id] = id;
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

namespace internal {

void ApplyGtidSeek(GtidReader* reader, uint64_t file, const GtidSeek& seek,
                   GtidReader::ReaderOpener open) {
  const auto& r = seek.returned;
  if (seek.offset == 0 || r.empty() || r.front().first != kMagicSize ||
      r.back().second > seek.offset) {
    return;
  }
  std::vector<std::pair<uint64_t, uint64_t>> jumps;
  for (size_t i = 0; i + 1 < r.size(); ++i) jumps.emplace_back(r[i].second, r[i + 1].first);
  jumps.emplace_back(r.back().second, seek.offset);
  reader->SetJumps(file, std::move(jumps), seek.reached, seek.skipped, std::move(open));
}

}  // namespace internal

std::string GtidIndexFilePath(const std::string& binlog_path) {
  return internal::GtidIndexPath(binlog_path);
}

absl::StatusOr<GtidIndexCheck> VerifyGtidIndexFile(io::FileSystem* fs,
                                                   const std::string& binlog_path,
                                                   const ReaderOptions& options) {
  return internal::VerifyGtidIndex(fs, binlog_path, options);
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

namespace {

// The GTID index of the start file of an at-rest reader (binlog/
// gtid_index.h); the newest file may be growing: it is never indexed here.
void UseIndexAtRest(GtidReader* g, const std::string& dir, const std::string& basename,
                    const AtRestGtidState& state, uint64_t start, LogFlavor flavor,
                    const ReaderOptions& ro, io::FileSystem* fs, const GtidSet& have,
                    const MariaGtidState& position) {
  const bool closed = !state.files.empty() && start != state.files.back();
  internal::GtidSeek seek = internal::PlanGtidSeek(
      fs, io::JoinPath(dir, BinlogFileName(basename, start)), closed, flavor, ro, have,
      position);
  internal::ApplyGtidSeek(
      g, start, seek,
      [dir, basename, ro, fs](uint64_t file,
                              uint64_t offset) -> absl::StatusOr<std::unique_ptr<Reader>> {
        ReaderOptions o = ro;
        o.start_file = file;
        o.start_offset = offset;
        return Reader::OpenDirectory(dir, basename, o, fs);
      });
}

}  // namespace

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
  auto g = std::make_unique<GtidReader>(std::move(reader), have);
  UseIndexAtRest(g.get(), dir, basename, state, start, LogFlavor::kMySQL, ro, fs, have, {});
  return g;
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
  auto g = std::make_unique<GtidReader>(std::move(reader), position);
  UseIndexAtRest(g.get(), dir, basename, state, start, LogFlavor::kMariaDB, ro, fs, {},
                 position);
  return g;
}

}  // namespace binlog
