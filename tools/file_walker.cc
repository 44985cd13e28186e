#include "tools/file_walker.h"

#include <utility>

#include "binlog/format.h"

namespace binlog {
namespace tools {

using Result = TransactionBoundaryParser::Result;

FileWalker::FileWalker(Reader* reader, Observer* observer)
    : reader_(reader), observer_(observer) {}

void FileWalker::TakeTornTails() {
  const auto& tails = reader_->torn_tails();
  for (; torn_seen_ < tails.size(); ++torn_seen_) {
    // The reader records a torn tail while leaving a file whose first event
    // (the Format_description event) it has returned, so it names the
    // current file. A tail naming another file would be a reader bug; it
    // is dropped rather than pinned on the wrong file.
    if (in_file_ && tails[torn_seen_].file_name == cur_.name) {
      cur_.torn = true;
      cur_.torn_tail = tails[torn_seen_];
    }
  }
}

void FileWalker::StartFile(const Event& event) {
  cur_ = FileFacts();
  cur_.name = reader_->file_name();
  cur_.number = event.file_number;
  in_file_ = true;
  parser_.Reset();
  parser_.set_query_post_header_len(
      reader_->format_description().PostHeaderLen(kQueryEvent));
}

void FileWalker::EndFile(bool last) {
  cur_.open_transaction = !parser_.outside();
  observer_->OnFileEnd(cur_, last);
  in_file_ = false;
}

absl::Status FileWalker::Run() {
  Event ev;
  for (;;) {
    absl::Status s = reader_->Next(&ev);
    TakeTornTails();
    if (!s.ok()) {
      if (absl::IsOutOfRange(s)) {
        if (in_file_) EndFile(/*last=*/true);
        return absl::OkStatus();
      }
      // An error while opening the next file leaves the reader in that
      // file: the current one was complete.
      if (in_file_ && reader_->file_number() != cur_.number) {
        EndFile(/*last=*/false);
      }
      if (in_file_) {
        failed_ = cur_;
      } else {
        failed_ = FileFacts();
        failed_.name = reader_->file_name();
        failed_.number = reader_->file_number();
      }
      return s;
    }
    if (!in_file_ || ev.file_number != cur_.number) {
      if (in_file_) EndFile(/*last=*/false);
      StartFile(ev);
    }
    if (ev.header.type == kFormatDescriptionEvent) {
      // The file's own FDE, or a later one that replaced it (relay logs):
      // the reader has decoded it by now.
      cur_.in_use = reader_->format_description().in_use;
      parser_.set_query_post_header_len(
          reader_->format_description().PostHeaderLen(kQueryEvent));
    }
    ++total_events_;
    ++cur_.events;
    if (ev.checksum == ChecksumState::kBad) ++cur_.bad_checksums;
    if (!cur_.have_time) {
      cur_.have_time = true;
      cur_.first_time = ev.header.timestamp;
    }
    cur_.last_time = ev.header.timestamp;
    cur_.end = ev.end_offset;
    Result r = parser_.Feed(ev.header, ev.body());
    if (r == Result::kStarted ||
        (r == Result::kUnexpected && !parser_.outside())) {
      // kUnexpected with the parser inside: the event (a GTID inside an
      // open transaction) started a new one.
      cur_.open_transaction_start = ev.offset;
    } else if (r == Result::kEnded) {
      ++cur_.transactions;
    }
    observer_->OnEvent(cur_, ev, r);
    if (stop_) return absl::OkStatus();
  }
}

}  // namespace tools
}  // namespace binlog
