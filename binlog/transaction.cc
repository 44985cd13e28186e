#include "binlog/transaction.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/format.h"

namespace binlog {

TransactionBuffer::TransactionBuffer(bool checksums) : checksums_(checksums) {}

char* TransactionBuffer::Reserve(size_t n) {
  if (size_ + n > capacity_) {
    size_t cap = std::max<size_t>({capacity_ * 2, size_ + n, 4096});
    std::unique_ptr<char[]> nb(new char[cap]);
    if (size_ > 0) std::memcpy(nb.get(), buf_.get(), size_);
    buf_ = std::move(nb);
    capacity_ = cap;
  }
  char* p = buf_.get() + size_;
  size_ += n;
  return p;
}

char* TransactionBuffer::AppendEvent(uint8_t type, uint32_t server_id,
                                     uint32_t timestamp, uint16_t flags,
                                     size_t body_size) {
  written_ = nullptr;
  size_t footer = checksums_ ? kChecksumSize : 0;
  size_t total = kHeaderSize + body_size + footer;
  size_t start = size_;
  char* p = Reserve(total);
  EventHeader h;
  h.timestamp = timestamp;
  h.type = type;
  h.server_id = server_id;
  h.event_size = static_cast<uint32_t>(total);
  h.log_pos = 0;
  h.flags = flags;
  EncodeHeader(h, p);
  if (footer) std::memset(p + total - footer, 0, footer);
  events_.push_back(EventMeta{static_cast<uint32_t>(start),
                              static_cast<uint32_t>(start + total), 0, 0});
  return p + kHeaderSize;
}

void TransactionBuffer::AppendEvent(uint8_t type, uint32_t server_id,
                                    uint32_t timestamp, uint16_t flags,
                                    absl::string_view body) {
  char* p = AppendEvent(type, server_id, timestamp, flags, body.size());
  if (!body.empty()) std::memcpy(p, body.data(), body.size());
}

absl::Status TransactionBuffer::AppendEncodedEvent(absl::string_view event) {
  size_t footer = checksums_ ? kChecksumSize : 0;
  if (event.size() < kHeaderSize + footer) {
    return absl::InvalidArgumentError(absl::StrCat(
        "encoded event of ", event.size(), " bytes is shorter than header",
        footer ? " and checksum" : ""));
  }
  uint32_t declared = LoadLe32(event.data() + kEventSizeOffset);
  if (declared != event.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "encoded event declares event_size ", declared, " but has ",
        event.size(), " bytes"));
  }
  written_ = nullptr;
  size_t start = size_;
  char* p = Reserve(event.size());
  std::memcpy(p, event.data(), event.size());
  events_.push_back(EventMeta{static_cast<uint32_t>(start),
                              static_cast<uint32_t>(start + event.size()), 0,
                              0});
  return absl::OkStatus();
}

void TransactionBuffer::Clear() {
  written_ = nullptr;
  size_ = 0;
  events_.clear();
}

void TransactionBuffer::Seal() {
  char* b = buf_.get();
  for (EventMeta& e : events_) {
    char* ev = b + e.offset;
    StoreLe32(ev + kLogPosOffset, 0);
    if (checksums_) {
      size_t covered = e.end - e.offset - kChecksumSize;
      e.base_crc = Crc32(ev, covered);
      // Small events are corrected directly in Place(); only large ones need
      // the (slower to compute) shift operator.
      e.crc_op = covered > kLogPosCrcDirectMax ? LogPosCrcOperator(covered) : 0;
    }
  }
}

void TransactionBuffer::Place(uint64_t start) {
  char* b = buf_.get();
  for (const EventMeta& e : events_) {
    char* ev = b + e.offset;
    uint32_t log_pos = static_cast<uint32_t>(start + e.end);
    StoreLe32(ev + kLogPosOffset, log_pos);
    if (checksums_) {
      size_t covered = e.end - e.offset - kChecksumSize;
      uint32_t delta = covered > kLogPosCrcDirectMax
                           ? LogPosCrcDelta(log_pos, e.crc_op)
                           : LogPosCrcDeltaDirect(log_pos, covered);
      StoreLe32(ev + covered, e.base_crc ^ delta);
    }
  }
}

}  // namespace binlog
