// File: binlog/transaction.h
//
// TransactionBuffer: the reusable buffer in which a caller builds the events
// of one transaction (the server's "binlog cache") before handing it to
// Binlog::Commit.
//
// The caller writes each event body in place into memory the buffer owns
// (AppendEvent returns a pointer to the body), so appending an event costs a
// header store plus the caller's own writes: no intermediate copy, and no
// allocation once the buffer has grown to its working size. Clear() keeps the
// memory for the next transaction.
//
// The buffer fills event_size and leaves log_pos = 0 and the checksum footer
// as placeholders. Commit computes each event's checksum in the caller's
// thread (before the serial section) and, in the serial section, writes the
// final log_pos and corrects the checksum for it (see binlog/checksum.h).
//
// Compression (Options::compression): Commit may store the transaction as a
// Gtid event plus one Transaction_payload event (binlog/payload.h). It
// builds that form in a second buffer that this buffer owns and reuses, so
// the events the caller appended stay untouched (appended_data()), while
// data(), size(), event_count() and event_offset() describe the bytes as
// written until the next Append*/Clear call; compressed() tells which.
//
// Thread safety: not thread-safe; one thread builds and commits a buffer at a
// time. A buffer must not be modified while Commit runs on it.
// Lifetime: pointers returned by AppendEvent stay valid until the next
// Append*/Clear call.

#ifndef BINLOG_BINLOG_TRANSACTION_H_
#define BINLOG_BINLOG_TRANSACTION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace binlog {

class Binlog;

namespace internal {
class BinlogImpl;
class PayloadPacker;
struct PackState;
}  // namespace internal

class TransactionBuffer {
 public:
  // `checksums` must match the log's Options::checksums; Commit rejects a
  // mismatched buffer with InvalidArgument.
  explicit TransactionBuffer(bool checksums = true);
  TransactionBuffer(const TransactionBuffer&) = delete;
  TransactionBuffer& operator=(const TransactionBuffer&) = delete;

  // Appends an event with the given header fields and a body of `body_size`
  // bytes, and returns a pointer to the body for the caller to fill. The
  // body bytes are uninitialized.
  char* AppendEvent(uint8_t type, uint32_t server_id, uint32_t timestamp,
                    uint16_t flags, size_t body_size);

  // Appends an event whose body is `body` (one copy).
  void AppendEvent(uint8_t type, uint32_t server_id, uint32_t timestamp,
                   uint16_t flags, absl::string_view body);

  // Appends an event the caller encoded completely: a 19-byte header whose
  // event_size equals event.size(), the body, and (with checksums) a 4-byte
  // footer whose value is ignored. log_pos is ignored. InvalidArgument if
  // the sizes do not agree.
  absl::Status AppendEncodedEvent(absl::string_view event);

  // Forgets the events, keeps the memory.
  void Clear();

  bool checksums() const { return checksums_; }
  size_t size() const { return written_ ? written_->size() : size_; }
  size_t event_count() const {
    return written_ ? written_->event_count() : events_.size();
  }
  // True if no event was appended since the last Clear().
  bool empty() const { return events_.empty(); }
  // The events as they will be written. After Commit, log_pos and footers
  // hold their final values; after a Commit that compressed the
  // transaction, the Gtid and Transaction_payload events as written.
  absl::string_view data() const {
    return written_ ? written_->data() : absl::string_view(buf_.get(), size_);
  }
  // Offset of event `i` within data().
  size_t event_offset(size_t i) const {
    return written_ ? written_->event_offset(i) : events_[i].offset;
  }
  // True after a Commit that stored the transaction compressed (until the
  // next Append*/Clear call).
  bool compressed() const { return written_ != nullptr; }
  // The events as appended. Equal to data() unless compressed(); then they
  // still hold log_pos 0 and unset checksum footers.
  absl::string_view appended_data() const {
    return absl::string_view(buf_.get(), size_);
  }
  // The events as appended, one by one: their number, and the size and
  // type of event `i` (from its header).
  size_t appended_event_count() const { return events_.size(); }
  uint64_t appended_event_size(size_t i) const {
    return events_[i].end - events_[i].offset;
  }
  uint8_t appended_event_type(size_t i) const {
    return static_cast<uint8_t>(buf_[events_[i].offset + 4]);
  }

 private:
  friend class internal::BinlogImpl;
  friend class internal::PayloadPacker;

  struct EventMeta {
    uint32_t offset;      // start within the buffer
    uint32_t end;         // end within the buffer (= offset + event_size)
    uint32_t base_crc;    // checksum with log_pos = 0 (after Seal)
    uint32_t crc_op;      // LogPosCrcOperator(covered length) (after Seal)
  };

  char* Reserve(size_t n);

  // Caller-thread work before the serial section: zero log_pos and compute
  // each event's checksum for log_pos = 0.
  void Seal();
  // Serial-section work: final log_pos = start + end of each event, and the
  // checksum corrected for it. Touches 8 bytes per event.
  void Place(uint64_t start);

  bool checksums_;
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  std::vector<EventMeta> events_;

  // Compression state, created by PayloadPacker on first use and reused
  // (an incomplete type here: the deleter comes with it).
  std::unique_ptr<internal::PackState, void (*)(internal::PackState*)> pack_{
      nullptr, nullptr};
  // The packed form while it is what data() shows, else nullptr.
  const TransactionBuffer* written_ = nullptr;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_H_
