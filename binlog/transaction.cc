#include "binlog/transaction.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"

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
  front_ = 0;
  events_.clear();
  identity_ = IdentityState();
  assigned_ = AssignedIdentity();
  commit_parent_ = 0;
  cookie_ = nullptr;
}

void TransactionBuffer::AppendCommitGtid(uint32_t timestamp, uint32_t server_id,
                                         const CommitGtid& gtid) {
  const bool first = events_.empty();
  const bool orig_ts = gtid.original_commit_timestamp_us != 0;
  const bool orig_version = gtid.original_server_version != 0;
  // flags .. sequence_number, immediate (and original) commit timestamp,
  // transaction_length placeholder (9 bytes: the widest packed integer),
  // immediate (and original) server version.
  const size_t len_at_body = 42 + 7 + (orig_ts ? 7 : 0);
  const size_t body = len_at_body + 9 + 4 + (orig_version ? 4 : 0);
  const bool anonymous = gtid.kind == CommitGtid::Kind::kAnonymous;
  const size_t start = size_;
  char* p = AppendEvent(anonymous ? kAnonymousGtidEvent : kGtidEvent, server_id,
                        timestamp, 0, body);
  std::memset(p, 0, body);
  p[kGtidFlagsOffset] =
      static_cast<char>(gtid.may_have_sbr ? MySqlGtidEvent::kFlagMayHaveSbr : 0);
  if (gtid.kind == CommitGtid::Kind::kAssigned) {
    std::memcpy(p + kGtidUuidOffset, gtid.uuid.bytes, 16);
    StoreLe64(p + kGtidGnoOffset, static_cast<uint64_t>(gtid.gno));
  }
  p[25] = 2;  // LOGICAL_TIMESTAMP_TYPECODE
  if (orig_ts) {
    // The marker bit now, so that every parser of the event (the payload
    // packer finds transaction_length by it) sees the original timestamp.
    StoreLeN(p + kGtidImmediateTimestampOffset, uint64_t{1} << 55, 7);
    StoreLeN(p + kGtidImmediateTimestampOffset + 7,
             gtid.original_commit_timestamp_us, 7);
  }
  p[len_at_body] = static_cast<char>(0xFE);  // 8-byte form, value set at Seal
  if (orig_version) {
    StoreLe32(p + len_at_body + 9 + 4, gtid.original_server_version);
  }
  if (!first) {
    identity_.misplaced = true;
    return;
  }
  identity_.present = true;
  identity_.length_slot = true;
  identity_.length_at = start + kHeaderSize + len_at_body;
  identity_.version_at = start + kHeaderSize + len_at_body + 9;
  identity_.gtid = gtid;
}

void TransactionBuffer::AppendMariaCommitGtid(uint32_t timestamp,
                                              uint32_t server_id,
                                              const CommitGtid& gtid) {
  const bool first = events_.empty();
  const bool xa = gtid.xa != CommitGtid::Xa::kNone;
  const bool bad_xid = xa && (gtid.xa_gtrid.empty() || gtid.xa_gtrid.size() > 64 ||
                              gtid.xa_bqual.size() > 64);
  const size_t xid_len =
      xa && !bad_xid ? 6 + gtid.xa_gtrid.size() + gtid.xa_bqual.size() : 0;
  // seq_no (8), domain_id (4), flags2 (1), the commit_id slot (8), the xid.
  // The slot is dropped in the serial section when the group has one
  // transaction (AssignMariaIdentity).
  const size_t body = 21 + xid_len;
  const size_t start = size_;
  char* p = AppendEvent(kMariaGtidEvent, server_id, timestamp, kFlagSuppressUse,
                        body);
  std::memset(p, 0, body);
  uint8_t flags2 = 0;
  if (gtid.isolated) {
    flags2 |= MariaGtid::kFlagStandalone | MariaGtid::kFlagDdl;
  } else if (gtid.transactional) {
    flags2 |= MariaGtid::kFlagTransactional;
  }
  if (gtid.allow_parallel) flags2 |= MariaGtid::kFlagAllowParallel;
  if (gtid.waited) flags2 |= MariaGtid::kFlagWaited;
  if (gtid.xa == CommitGtid::Xa::kPrepared) flags2 |= MariaGtid::kFlagPreparedXa;
  if (gtid.xa == CommitGtid::Xa::kCompleted) {
    flags2 |= MariaGtid::kFlagCompletedXa | MariaGtid::kFlagStandalone;
  }
  p[12] = static_cast<char>(flags2);
  if (xid_len > 0) {
    char* x = p + 21;
    StoreLe32(x, gtid.xa_format_id);
    x[4] = static_cast<char>(gtid.xa_gtrid.size());
    x[5] = static_cast<char>(gtid.xa_bqual.size());
    std::memcpy(x + 6, gtid.xa_gtrid.data(), gtid.xa_gtrid.size());
    std::memcpy(x + 6 + gtid.xa_gtrid.size(), gtid.xa_bqual.data(),
                gtid.xa_bqual.size());
  }
  if (!first) {
    identity_.misplaced = true;
    return;
  }
  identity_.present = true;
  identity_.mariadb = true;
  identity_.bad_xid = bad_xid;
  identity_.server_id = server_id;
  identity_.commit_id_slot = true;
  identity_.length_at = start;
  identity_.gtid = gtid;
}

void TransactionBuffer::AssignMariaIdentity(uint32_t domain_id,
                                            uint64_t seq_no, uint64_t commit_id,
                                            uint64_t timestamp_us) {
  char* b = buf_.get();
  EventMeta& g = events_[0];
  char* body = b + g.offset + kHeaderSize;
  StoreLe64(body, seq_no);
  StoreLe32(body + 8, domain_id);
  if (identity_.commit_id_slot) {
    identity_.commit_id_slot = false;
    if (commit_id != 0) {
      body[12] = static_cast<char>(static_cast<uint8_t>(body[12]) |
                                   MariaGtid::kFlagGroupCommitId);
      StoreLe64(body + 13, commit_id);
    } else {
      // MariaDB's layout without a commit_id: the xid right after flags2,
      // or 6 zero bytes of padding (a 19-byte body). Move the event's
      // first 32 bytes forward over the unused part of the slot; the
      // event then ends where it ended (no other event moves).
      const size_t footer = checksums_ ? kChecksumSize : 0;
      const size_t xid_len = g.end - g.offset - kHeaderSize - 21 - footer;
      const size_t shift = xid_len > 0 ? 8 : 2;
      std::memmove(b + g.offset + shift, b + g.offset, kHeaderSize + 13);
      g.offset += static_cast<uint32_t>(shift);
      StoreLe32(b + g.offset + kEventSizeOffset, g.end - g.offset);
      front_ = g.offset;
    }
  }
  assigned_.assigned = true;
  assigned_.mariadb = true;
  assigned_.domain_id = domain_id;
  assigned_.server_id = identity_.server_id;
  assigned_.seq_no = seq_no;
  assigned_.commit_id = commit_id;
  assigned_.immediate_commit_timestamp_us = timestamp_us;
}

void TransactionBuffer::SetServerVersion(uint32_t version) {
  if (!identity_.present || identity_.mariadb) return;
  char* v = buf_.get() + identity_.version_at;
  if (identity_.gtid.original_server_version != 0) {
    StoreLe32(v, version | (uint32_t{1} << 31));  // the original follows
  } else {
    StoreLe32(v, version);
  }
}

void TransactionBuffer::AssignIdentity(const Uuid& uuid, int64_t gno,
                                       int64_t sequence_number,
                                       int64_t last_committed,
                                       uint64_t timestamp_us) {
  char* body = buf_.get() + events_[0].offset + kHeaderSize;
  std::memcpy(body + kGtidUuidOffset, uuid.bytes, 16);
  StoreLe64(body + kGtidGnoOffset, static_cast<uint64_t>(gno));
  StoreLe64(body + kGtidLastCommittedOffset, static_cast<uint64_t>(last_committed));
  StoreLe64(body + kGtidSequenceNumberOffset, static_cast<uint64_t>(sequence_number));
  uint64_t ts = timestamp_us & ((uint64_t{1} << 55) - 1);
  if (identity_.gtid.original_commit_timestamp_us != 0) ts |= uint64_t{1} << 55;
  StoreLeN(body + kGtidImmediateTimestampOffset, ts, 7);
  assigned_.assigned = true;
  assigned_.uuid = uuid;
  assigned_.gno = gno;
  assigned_.sequence_number = sequence_number;
  assigned_.last_committed = last_committed;
  assigned_.immediate_commit_timestamp_us = timestamp_us;
}

void TransactionBuffer::Seal() {
  char* b = buf_.get();
  if (identity_.present && identity_.length_slot) {
    // transaction_length counts every byte of the transaction, its own
    // packed width included: pick the width that holds the total, then
    // move the Gtid event's head forward so the event ends where its
    // 9-byte placeholder ended (no other event moves).
    const uint64_t base = size_ - 9;
    size_t width = 1;
    while (PackedIntSize(base + width) != width) {
      width = width == 1 ? 3 : width == 3 ? 4 : 9;
    }
    const size_t shift = 9 - width;
    EventMeta& g = events_[0];
    std::memmove(b + g.offset + shift, b + g.offset, identity_.length_at - g.offset);
    StorePackedInt(b + identity_.length_at + shift, base + width);
    g.offset += static_cast<uint32_t>(shift);
    StoreLe32(b + g.offset + kEventSizeOffset, g.end - g.offset);
    front_ = g.offset;
    identity_.length_slot = false;
  }
  for (EventMeta& e : events_) {
    char* ev = b + e.offset;
    StoreLe32(ev + kLogPosOffset, 0);
    if (identity_.present && &e == &events_[0]) continue;  // see Place
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
  start -= front_;  // events_ offsets count from buf_, data() from front_
  for (const EventMeta& e : events_) {
    char* ev = b + e.offset;
    uint32_t log_pos = static_cast<uint32_t>(start + e.end);
    if (identity_.present && &e == &events_[0]) {
      // The Gtid event's identity was just filled in: its checksum is
      // computed anew (a 70-90 byte event: cheaper than correcting for
      // each patched field, see benchmarks/crc32_bench).
      StoreLe32(ev + kLogPosOffset, log_pos);
      if (checksums_) {
        size_t covered = e.end - e.offset - kChecksumSize;
        StoreLe32(ev + covered, Crc32(ev, covered));
      }
      continue;
    }
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
