// GTID scans of log files. See binlog/gtid_scan.h.

#include "binlog/gtid_scan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/reader.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_scan.h"

namespace binlog {
namespace internal {
namespace {

// Walks a log file for its GTID state: the header event that holds the
// state of the files before it (`state_type`: Previous_gtids or Gtid_list,
// given to `on_state`) and, with `with_transactions`, the GTID of each
// complete transaction (an event of a type `is_gtid_type` accepts; `on_gtid` decodes it into a pending
// GTID and returns false if it has none, `add` records a complete one).
template <typename Pending, typename OnState, typename OnGtid, typename Add>
absl::Status ScanFileGtids(io::FileSystem* fs, const std::string& path,
                           bool with_transactions, uint8_t state_type,
                           const char* what, OnState on_state,
                           bool (*is_gtid_type)(uint8_t), OnGtid on_gtid, Add add) {
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kSkip;
  ro.payloads = PayloadMode::kRaw;
  BINLOG_ASSIGN_OR_RETURN(TransactionScan t, TransactionScan::Open(fs, path, ro));
  // The files of other servers are read for what they hold, past events
  // this scan does not understand.
  t.set_tolerate_unexpected(true);
  bool have_pending = false;
  Pending pending{};
  bool in_header = true;
  BINLOG_RETURN_IF_ERROR(t.Run([&](const Event& ev, TransactionScan::Result r)
                                   -> absl::StatusOr<ScanNext> {
    const uint8_t type = ev.header.type;
    if (type == kFormatDescriptionEvent) return ScanNext::kContinue;
    if (in_header && type == state_type) {
      absl::Status hs = on_state(ev.body());
      if (!hs.ok()) {
        // Open's contract: a file that cannot be trusted is DataLoss, with
        // the file and offset.
        return absl::DataLossError(absl::StrCat(path, ": offset ", ev.offset,
                                                ": cannot read the GTID ", what,
                                                ": ", hs.message()));
      }
      return ScanNext::kContinue;
    }
    if (r == TransactionScan::Result::kOutside && in_header) {
      return ScanNext::kContinue;  // other header events (Binlog_checkpoint, a callback's)
    }
    in_header = false;
    if (!with_transactions) return ScanNext::kStop;
    if (is_gtid_type(type)) have_pending = on_gtid(ev, &pending);
    if (r == TransactionScan::Result::kEnded) {
      if (have_pending) add(pending);
      have_pending = false;
    } else if (r == TransactionScan::Result::kUnexpected) {
      have_pending = false;
    }
    return ScanNext::kContinue;
  }));
  // Damage ends what the scan can know; the GTIDs of the complete
  // transactions before it stand (a crash's torn tail).
  if (t.stop() == ScanStop::kDamaged) return t.reader_error();
  return absl::OkStatus();
}

}  // namespace

// The GTIDs of a log file: its Previous_gtids (the files before it) and,
// with `with_transactions`, the GTIDs of its complete transactions.
absl::StatusOr<GtidSet> FileGtids(io::FileSystem* fs, const std::string& path,
                                  bool with_transactions) {
  GtidSet set;
  using Pending = std::pair<Tsid, int64_t>;
  absl::Status s = ScanFileGtids<Pending>(
      fs, path, with_transactions, kPreviousGtidsEvent, "set of its Previous_gtids event",
      [&](absl::string_view body) -> absl::Status {
        absl::StatusOr<GtidSet> prev = GtidSet::DecodePreviousGtidsBody(body);
        if (!prev.ok()) return prev.status();
        set.Union(*prev);
        return absl::OkStatus();
      },
      // Gtid (33) and Gtid_tagged (42); Anonymous_gtid (34) has no GTID.
      IsMySqlGtidEventType,
      [](const Event& ev, Pending* pending) {
        auto g = DecodeAnyMySqlGtidEvent(ev.header.type, ev.body());
        if (!g.ok() || g->gno <= 0) return false;  // anonymous: no GTID
        *pending = {g->tsid(), g->gno};
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
      [](uint8_t type) { return type == kMariaGtidEvent; },
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

absl::StatusOr<uint64_t> GtidStartFile(io::FileSystem* fs, const std::string& dir,
                                       const std::string& basename,
                                       const std::vector<uint64_t>& files,
                                       const GtidSet& have) {
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        GtidSet previous,
        FileGtids(fs, io::JoinPath(dir, BinlogFileName(basename, *it)),
                  /*with_transactions=*/false));
    if (previous.IsSubsetOf(have)) return *it;
  }
  return files.empty() ? 0 : files.front();
}

absl::StatusOr<uint64_t> MariaGtidStartFile(io::FileSystem* fs, const std::string& dir,
                                            const std::string& basename,
                                            const std::vector<uint64_t>& files,
                                            const MariaGtidState& position) {
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    BINLOG_ASSIGN_OR_RETURN(
        MariaGtidState list,
        FileMariaGtids(fs, io::JoinPath(dir, BinlogFileName(basename, *it)),
                       /*with_transactions=*/false));
    bool covered = true;
    for (const MariaGtidListEntry& g : list.Positions()) {
      covered = covered && position.Contains(g.domain_id, g.server_id, g.seq_no);
    }
    if (covered) return *it;
  }
  return 0;
}

}  // namespace internal
}  // namespace binlog
