#include "binlog/gtid_reader.h"

#include <utility>

namespace binlog {

GtidReader::GtidReader(std::unique_ptr<Reader> reader, GtidSet have)
    : reader_(std::move(reader)), have_(std::move(have)) {}

GtidReader::GtidReader(std::unique_ptr<Reader> reader, MariaGtidState position)
    : reader_(std::move(reader)), mariadb_(true), position_(std::move(position)) {}

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
      skipping_ = g.ok() && g->gno > 0 && have_.Contains(g->tsid(), g->gno);
      if (skipping_) ++skipped_;
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

}  // namespace binlog
