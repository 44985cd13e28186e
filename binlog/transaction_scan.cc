// The one walk of a log file by transactions. See binlog/transaction_scan.h.

#include "binlog/transaction_scan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {

absl::StatusOr<TransactionScan> TransactionScan::Open(io::FileSystem* fs,
                                                      const std::string& path,
                                                      const ReaderOptions& options) {
  TransactionScan t;
  t.path_ = path;
  BINLOG_ASSIGN_OR_RETURN(t.reader_, Reader::OpenFiles({path}, options, fs));
  absl::Status s = t.reader_->Next(&t.ev_);
  if (!s.ok()) {
    if (!absl::IsDataLoss(s) && !absl::IsOutOfRange(s)) return s;  // I/O
    return absl::DataLossError(absl::StrCat(
        path, ": its Format_description event is unreadable: ", s.message()));
  }
  t.fde_ = t.reader_->format_description();
  t.fde_header_ = t.ev_.header;
  t.header_end_ = t.ev_.end_offset;
  t.valid_end_ = t.header_end_;
  return t;
}

absl::Status TransactionScan::Run(Visitor visit) {
  TransactionBoundaryParser parser(fde_.PostHeaderLen(kQueryEvent));
  auto classify = [&](const Event& ev) {
    if (ev.header.type == kFormatDescriptionEvent) {
      // A later Format_description (a relay log's copy of the source's)
      // is a file-level event that sets the rules for what follows.
      parser.set_query_post_header_len(
          reader_->format_description().PostHeaderLen(kQueryEvent));
      return parser.outside() ? Result::kOutside : Result::kInside;
    }
    return parser.Feed(ev.header, ev.body());
  };
  return Run(classify, visit);
}

absl::Status TransactionScan::Run(Classifier classify, Visitor visit) {
  absl::Status s;
  for (;;) {
    s = reader_->Next(&ev_);
    if (!s.ok()) break;
    Result r = classify(ev_);
    if (r != Result::kUnexpected || tolerate_unexpected_) {
      BINLOG_ASSIGN_OR_RETURN(ScanNext next, visit(ev_, r));
      if (next == ScanNext::kStop) {
        stop_ = ScanStop::kStopped;
        return absl::OkStatus();
      }
      if (next == ScanNext::kUnexpected) {
        r = Result::kUnexpected;
      } else if (r == Result::kUnexpected) {
        continue;  // tolerated: the visitor has seen it
      }
    }
    if (r == Result::kUnexpected) {
      // The writer never accepts such an event, so it is damage its size
      // and log_pos survived (a torn header without checksums, say): the
      // first bad event.
      stop_ = ScanStop::kUnexpected;
      partial_ = true;
      bad_at_ = ev_.offset;
      reason_ = absl::StrCat("event of type ", ev_.header.type, " at offset ", ev_.offset,
                             " does not fit a transaction");
      return absl::OkStatus();
    }
    if (r == Result::kOutside || r == Result::kEnded) {
      valid_end_ = ev_.end_offset;
      pending_ = 0;
    } else {
      ++pending_;
    }
  }
  if (absl::IsOutOfRange(s)) {
    if (!reader_->torn_tails().empty()) {
      const TornTail& t = reader_->torn_tails().front();
      stop_ = ScanStop::kTornTail;
      partial_ = !t.zeros;
      bad_at_ = t.offset;
      reason_ = t.reason;
    } else {
      stop_ = ScanStop::kEnd;
      if (pending_ > 0) reason_ = "file ends inside a transaction";
    }
    return absl::OkStatus();
  }
  if (absl::IsDataLoss(s)) {
    stop_ = ScanStop::kDamaged;
    partial_ = true;
    bad_at_ = reader_->position();
    reason_ = std::string(s.message());
    reader_error_ = s;
    return absl::OkStatus();
  }
  return s;  // I/O error
}

}  // namespace internal
}  // namespace binlog
