#include "binlog/transaction.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_spill.h"

namespace binlog {

namespace {
void DeleteSpillState(internal::SpillState* s) { delete s; }
}  // namespace

TransactionBuffer::TransactionBuffer(bool checksums) : checksums_(checksums) {}

TransactionBuffer::TransactionBuffer(const TransactionBufferOptions& options)
    : checksums_(options.checksums),
      spill_(new internal::SpillState, &DeleteSpillState) {
  internal::SpillState& st = *spill_;
  st.fs = options.file_system != nullptr ? options.file_system
                                         : io::FileSystem::Default();
  st.dir = options.spill_dir;
  st.memory_limit = std::max<size_t>(options.memory_limit, 4096);
  st.max_size = std::min(options.max_size, kMaxTransactionSize);
  st.encrypt = options.encrypt_spill;
  ResetSpill();
}

TransactionBuffer::~TransactionBuffer() = default;

void TransactionBuffer::ResetSpill() {
  internal::SpillState& st = *spill_;
  st.status = absl::OkStatus();
  st.parser = TransactionBoundaryParser();
  st.read_off = 0;
  st.big_left = 0;
  // Without a spill directory the buffer still stops growing at max_size
  // (the transaction is refused then; its events need not be kept).
  spill_at_ = st.dir.empty() ? static_cast<size_t>(std::min<uint64_t>(
                                   st.max_size, ~size_t{0}))
                             : st.memory_limit;
}

absl::Status TransactionBuffer::status() const {
  if (spill_ == nullptr) return absl::OkStatus();
  if (spill_->status.ok() && size() > spill_->max_size) {
    return MaxSizeError(size());
  }
  return spill_->status;
}

absl::Status TransactionBuffer::MaxSizeError(uint64_t size) const {
  return absl::ResourceExhaustedError(absl::StrCat(
      "transaction of ", size, " bytes or more is larger than the "
      "transaction buffer's limit max_size = ", spill_->max_size,
      " bytes (TransactionBufferOptions::max_size, "
      "Options::max_transaction_size; MySQL's max_binlog_cache_size)"));
}

void TransactionBuffer::SpillCompleted(size_t n) {
  internal::SpillState& st = *spill_;
  const uint64_t logical = static_cast<uint64_t>(size_ - front_) + spilled_bytes_ + n;
  if (st.status.ok() && logical > st.max_size) st.status = MaxSizeError(logical);
  if (st.dir.empty() && st.status.ok()) {
    // Not a spilling buffer and still within max_size (spill_at_ is
    // max_size): nothing to do.
    spill_at_ = ~size_t{0};
    return;
  }
  if (spilled_bytes_ == 0) {
    // The first spill: the first event stays in memory if Commit patches
    // it (a CommitGtid); it precedes the spilled events.
    head_events_ = identity_.present && !events_.empty() ? 1 : 0;
    head_end_ = head_events_ ? events_[0].end : 0;
  }
  if (size_ <= head_end_) return;  // nothing completed beyond the head
  const size_t footer = checksums_ ? kChecksumSize : 0;
  const size_t first = head_events_;
  char* b = buf_.get();
  if (st.status.ok()) {
    // The boundary rules (Commit checks the events still in memory) and
    // the event size limit, for the events about to leave memory; and the
    // checksum for log_pos 0 into each footer, corrected for the final
    // log_pos as the flush stage streams them (NextSpilledPiece).
    if (spilled_bytes_ == 0 && head_events_) {
      absl::string_view ev(b + events_[0].offset, events_[0].end - events_[0].offset);
      st.parser.Feed(DecodeHeader(ev), EventBody(ev, checksums_));
    }
    for (size_t i = first; i < events_.size() && st.status.ok(); ++i) {
      const EventMeta& e = events_[i];
      char* ev = b + e.offset;
      const uint64_t esize = e.end - e.offset;
      const uint64_t index = spilled_events_ + i;
      if (esize > kMaxEventSize) {
        st.status = absl::InvalidArgumentError(absl::StrCat(
            "event ", index, " (", EventTypeName(static_cast<uint8_t>(ev[4])),
            ") of the transaction is ", esize,
            " bytes, above the largest event readers and recovery accept "
            "(kMaxEventSize = ", kMaxEventSize, " bytes)"));
        break;
      }
      StoreLe32(ev + kLogPosOffset, 0);
      absl::string_view view(ev, esize);
      if (st.parser.Feed(DecodeHeader(view), EventBody(view, checksums_)) ==
          TransactionBoundaryParser::Result::kUnexpected) {
        st.status = absl::InvalidArgumentError(absl::StrCat(
            "event ", index, " (", EventTypeName(static_cast<uint8_t>(ev[4])),
            ") does not fit the transaction's events before it (transaction "
            "boundary rules of binlog/transaction_boundary.h); recovery could "
            "not tell such a transaction from damage"));
        break;
      }
      if (footer) StoreLe32(ev + esize - footer, Crc32(ev, esize - footer));
    }
  }
  if (st.status.ok() && st.file == nullptr) {
    absl::StatusOr<std::unique_ptr<io::TempFile>> f = st.fs->NewTempFile(st.dir);
    if (f.ok() && st.encrypt) f = internal::NewEncryptedTempFile(std::move(*f));
    if (f.ok()) {
      st.file = std::move(*f);
    } else {
      st.status = SpillError(f.status());
    }
  }
  if (st.status.ok()) {
    absl::Status ws = st.file->Write(
        spilled_bytes_, absl::string_view(b + head_end_, size_ - head_end_));
    if (!ws.ok()) st.status = SpillError(ws);
  }
  // After an error the events are dropped, not written: the transaction
  // will be refused, and neither memory nor the file grows further.
  spilled_bytes_ += size_ - head_end_;
  spilled_events_ += events_.size() - first;
  size_ = head_end_;
  events_.resize(first);
  // A buffer without a spill directory gets here only past max_size: it
  // keeps dropping at that size.
  spill_at_ = head_end_ + (st.dir.empty() ? static_cast<size_t>(std::min<uint64_t>(
                                                st.max_size, ~size_t{0} / 2))
                                          : st.memory_limit);
}

absl::Status TransactionBuffer::SpillError(const absl::Status& s) const {
  return absl::AbortedError(absl::StrCat(
      "spilling the transaction to a temporary file in ", spill_->dir,
      " failed (nothing of it was written to the log): ", s.ToString()));
}

absl::Status TransactionBuffer::NextSpilledPiece(char* buf, size_t cap,
                                                 size_t* n) {
  internal::SpillState& st = *spill_;
  const size_t footer = checksums_ ? kChecksumSize : 0;
  *n = 0;
  if (st.read_off >= spilled_bytes_) {
    // The end of the spilled bytes inside an event: its size was not what
    // the buffer wrote (the file changed under it).
    return st.big_left > 0 ? TruncatedSpill() : absl::OkStatus();
  }
  size_t got = 0;
  if (st.big_left > 0) {
    // The rest of an event larger than a piece: its footer is corrected in
    // the piece that holds it, which never splits it.
    size_t m = static_cast<size_t>(std::min<uint64_t>(cap, st.big_left));
    if (m < st.big_left && st.big_left - m < footer) m = st.big_left - footer;
    BINLOG_RETURN_IF_ERROR(st.file->Read(st.read_off, m, buf, &got));
    if (got != m) return TruncatedSpill();
    if (m == st.big_left && footer) {
      StoreLe32(buf + m - footer, LoadLe32(buf + m - footer) ^ st.big_delta);
    }
    st.read_off += m;
    st.big_left -= m;
    *n = m;
    return absl::OkStatus();
  }
  const size_t want = static_cast<size_t>(std::min<uint64_t>(cap, spilled_bytes_ - st.read_off));
  BINLOG_RETURN_IF_ERROR(st.file->Read(st.read_off, want, buf, &got));
  if (got != want) return TruncatedSpill();
  size_t p = 0;
  while (p + kHeaderSize <= got) {
    char* ev = buf + p;
    const uint32_t esize = LoadLe32(ev + kEventSizeOffset);
    if (esize < kHeaderSize + footer) return TruncatedSpill();
    // An event reaching past what the buffer wrote: nothing of this piece
    // goes out (the bytes changed under the buffer).
    if (st.read_off + p + esize > spilled_bytes_) return TruncatedSpill();
    const uint32_t log_pos = static_cast<uint32_t>(st.base + st.read_off + p + esize);
    const size_t covered = esize - footer;
    uint32_t delta = 0;
    if (footer) {
      delta = covered > kLogPosCrcDirectMax
                  ? LogPosCrcDelta(log_pos, LogPosCrcOperator(covered))
                  : LogPosCrcDeltaDirect(log_pos, covered);
    }
    if (p + esize <= got) {
      StoreLe32(ev + kLogPosOffset, log_pos);
      if (footer) StoreLe32(ev + covered, LoadLe32(ev + covered) ^ delta);
      p += esize;
      continue;
    }
    if (p > 0) break;  // the next piece starts with this event
    // An event larger than the piece, starting at its head: the header
    // now, the footer when its last piece comes.
    StoreLe32(ev + kLogPosOffset, log_pos);
    p = got;
    if (esize - p < footer) p = esize - footer;
    st.big_left = esize - p;
    st.big_delta = delta;
    break;
  }
  if (p == 0) return TruncatedSpill();
  st.read_off += p;
  *n = p;
  return absl::OkStatus();
}

absl::Status TransactionBuffer::TruncatedSpill() const {
  return absl::DataLossError(absl::StrCat(
      "the spill file in ", spill_->dir, " holds fewer or other bytes than "
      "the transaction buffer wrote to it"));
}

void TransactionBuffer::Grow(size_t n) {
  const size_t cap = std::max<size_t>({capacity_ * 2, size_ + n, 4096});
  std::unique_ptr<char[]> nb(new char[cap]);
  if (size_ > 0) std::memcpy(nb.get(), buf_.get(), size_);
  buf_ = std::move(nb);
  capacity_ = cap;
}

char* TransactionBuffer::AppendEvent(uint8_t type, uint32_t server_id,
                                     uint32_t timestamp, uint16_t flags,
                                     size_t body_size) {
  written_ = nullptr;
  size_t footer = checksums_ ? kChecksumSize : 0;
  size_t total = kHeaderSize + body_size + footer;
  BeforeAppend(total);
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
  // Filled in place: a temporary EventMeta was stored as 4- and 8-byte
  // halves and reloaded as one 16-byte value, a failed store forward
  // (about 15 cycles) on every event.
  EventMeta& m = events_.emplace_back();
  m.offset = static_cast<uint32_t>(start);
  m.end = static_cast<uint32_t>(start + total);
  m.base_crc = 0;
  m.crc_op = 0;
  return p + kHeaderSize;
}

char* TransactionBuffer::ExtendLastEventSlow(size_t n) {
  const size_t footer = checksums_ ? kChecksumSize : 0;
  Reserve(n);  // may move buf_
  EventMeta& e = events_.back();
  char* ev = buf_.get() + e.offset;
  char* p = ev + (e.end - e.offset) - footer;
  e.end += static_cast<uint32_t>(n);
  StoreLe32(ev + kEventSizeOffset, e.end - e.offset);
  // The footer is a placeholder (Seal computes it): just keep it zeroed.
  if (footer) std::memset(p + n, 0, footer);
  return p;
}

void TransactionBuffer::AppendEvent(uint8_t type, uint32_t server_id,
                                    uint32_t timestamp, uint16_t flags,
                                    absl::string_view body) {
  char* p = AppendEvent(type, server_id, timestamp, flags, body.size());
  if (!body.empty()) std::memcpy(p, body.data(), body.size());
}

char* TransactionBuffer::AppendPreparedEvent(absl::string_view head,
                                             uint32_t timestamp, size_t tail) {
  written_ = nullptr;
  const size_t footer = checksums_ ? kChecksumSize : 0;
  const size_t total = head.size() + tail + footer;
  BeforeAppend(total);
  const size_t start = size_;
  char* p = Reserve(total);
  // Heads are short (a sysbench Table_map event 60 bytes, a Rows head
  // 31): up to 64 bytes as two overlapping copies instead of a call.
  const size_t n = head.size();
  if (n >= 32 && n <= 64) {
    char a[32], b[32];
    std::memcpy(a, head.data(), 32);
    std::memcpy(b, head.data() + n - 32, 32);
    std::memcpy(p, a, 32);
    std::memcpy(p + n - 32, b, 32);
  } else if (n >= 19 && n < 32) {
    char a[16], b[16];
    std::memcpy(a, head.data(), 16);
    std::memcpy(b, head.data() + n - 16, 16);
    std::memcpy(p, a, 16);
    std::memcpy(p + n - 16, b, 16);
  } else {
    std::memcpy(p, head.data(), n);
  }
  StoreLe32(p + kTimestampOffset, timestamp);
  StoreLe32(p + kEventSizeOffset, static_cast<uint32_t>(total));
  StoreLe32(p + kLogPosOffset, 0);
  if (footer) StoreLe32(p + total - footer, 0);
  EventMeta& m = events_.emplace_back();
  m.offset = static_cast<uint32_t>(start);
  m.end = static_cast<uint32_t>(start + total);
  m.base_crc = 0;
  m.crc_op = 0;
  return p + head.size();
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
  BeforeAppend(event.size());
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
  // Copies of constant defaults: assigning fresh temporaries made the
  // compiler zero a stack temporary with `rep stos` on every Clear, a
  // fifth of a one-row transaction's cost in row_event_bench.
  // And only when set: a transaction without a CommitGtid (one that a
  // caller fills, or a statement's events) leaves both as they were, and
  // copying the CommitGtid's tag string was a tenth of a one-row
  // transaction's cost. Everything that writes identity_ sets `present`
  // or `misplaced` (AppendCommitGtid and its MariaDB form; the fields
  // written later are written only when `present`) except the writeset
  // the log records at Commit; everything that writes assigned_ sets
  // `assigned`.
  static const IdentityState kNoIdentity;
  static const AssignedIdentity kNotAssigned;
  if (identity_.present || identity_.misplaced || !identity_.writeset.empty() ||
      identity_.writeset_state != WritesetState::kNone) {
    identity_ = kNoIdentity;
  }
  if (assigned_.assigned) assigned_ = kNotAssigned;
  commit_parent_ = 0;
  cookie_ = nullptr;
  writeset_.clear();
  writeset_declared_ = WritesetDeclared::kNothing;
  if (spill_ != nullptr) {
    if (spilled_bytes_ > 0 && spill_->file != nullptr) {
      // Give the disk space back (an encrypted spill file also takes a new
      // password here, binlog/encryption.h). An error is harmless: the
      // next spill writes from offset 0 and only what it wrote is ever
      // read.
      spill_->file->Truncate(0).IgnoreError();
    }
    spilled_bytes_ = 0;
    spilled_events_ = 0;
    head_end_ = 0;
    head_events_ = 0;
    ResetSpill();
  }
}

namespace {

// A tagged Gtid event whose fields the log fills hold their widest values,
// so that its size is the largest the real event can take: the UUID bytes
// each >= 128 (two varlen bytes), the signed fields and the unsigned
// 64-bit ones at 9 bytes, the server version at 5, transaction_length at
// 9; the original timestamp and version present when the CommitGtid gives
// them (MySQL writes them only when they differ from the immediate ones:
// the placeholder makes them differ). The flags, the tag and the original
// values are the CommitGtid's.
void WidestTaggedGtid(const CommitGtid& gtid, MySqlGtidEvent* g) {
  g->flags = gtid.may_have_sbr ? MySqlGtidEvent::kFlagMayHaveSbr : 0;
  std::memset(g->uuid.bytes, 0xff, sizeof(g->uuid.bytes));
  g->gno = std::numeric_limits<int64_t>::max() - 1;  // the largest GNO
  g->tag = gtid.tag;
  g->last_committed = std::numeric_limits<int64_t>::max();
  g->sequence_number = std::numeric_limits<int64_t>::max();
  g->immediate_commit_timestamp = ~uint64_t{0};
  g->original_commit_timestamp = g->immediate_commit_timestamp;
  if (gtid.original_commit_timestamp_us != 0) {
    g->original_commit_timestamp = gtid.original_commit_timestamp_us;
    if (g->original_commit_timestamp == g->immediate_commit_timestamp) {
      --g->immediate_commit_timestamp;  // still 9 bytes
    }
  }
  g->transaction_length = ~uint64_t{0};
  g->immediate_server_version = ~uint32_t{0};
  g->original_server_version = g->immediate_server_version;
  if (gtid.original_server_version != 0) {
    g->original_server_version = gtid.original_server_version;
    if (g->original_server_version == g->immediate_server_version) {
      --g->immediate_server_version;  // still 5 bytes
    }
  }
  g->commit_group_ticket = 0;  // MySQL 8.4 writes none outside its
                               // group-commit ticket feature
  g->tagged = true;
}

}  // namespace

void TransactionBuffer::AppendCommitGtid(uint32_t timestamp, uint32_t server_id,
                                         const CommitGtid& gtid) {
  const bool first = events_.empty();
  if (!gtid.tag.empty() && gtid.kind != CommitGtid::Kind::kAnonymous) {
    // MySQL 8.4's Gtid_tagged_log_event, at the largest size this tag's
    // event can take; AssignIdentity writes the real one at the end of
    // this room.
    WidestTaggedGtid(gtid, &tagged_gtid_);
    const size_t body = MySqlGtidTaggedEventBodySize(tagged_gtid_);
    const size_t start = size_;
    char* p = AppendEvent(kGtidTaggedEvent, server_id, timestamp, 0, body);
    EncodeMySqlGtidTaggedEventBodyTo(tagged_gtid_, p);
    if (!first) {
      identity_.misplaced = true;
      return;
    }
    identity_.present = true;
    identity_.tagged = true;
    identity_.length_at = start;
    identity_.gtid = gtid;
    return;
  }
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
  if (identity_.tagged) {
    identity_.server_version = version;  // encoded with the identity
    return;
  }
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
  if (identity_.tagged) {
    return AssignTaggedIdentity(uuid, gno, sequence_number, last_committed,
                                timestamp_us);
  }
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

absl::Status TransactionBuffer::AssignIdentity(const Uuid& uuid, const Tag& tag,
                                               int64_t gno, int64_t sequence_number,
                                               int64_t last_committed,
                                               uint64_t timestamp_us) {
  if (!identity_.present || identity_.mariadb || tag != identity_.gtid.tag ||
      (identity_.tagged != !tag.empty())) {
    return absl::InternalError(absl::StrCat(
        "the GTID tag '", tag.str(), "' is not the one the transaction's "
        "CommitGtid reserved its Gtid event for ('",
        identity_.present && !identity_.mariadb ? identity_.gtid.tag.str() : "",
        "'", identity_.present && !identity_.mariadb ? "" : ", none: no MySQL CommitGtid",
        ")"));
  }
  AssignIdentity(uuid, gno, sequence_number, last_committed, timestamp_us);
  return absl::OkStatus();
}

void TransactionBuffer::AssignTaggedIdentity(const Uuid& uuid, int64_t gno,
                                             int64_t sequence_number,
                                             int64_t last_committed,
                                             uint64_t timestamp_us) {
  const CommitGtid& cg = identity_.gtid;
  MySqlGtidEvent& g = tagged_gtid_;
  g.flags = cg.may_have_sbr ? MySqlGtidEvent::kFlagMayHaveSbr : 0;
  g.uuid = uuid;
  g.gno = gno;
  g.tag = cg.tag;  // inline: no allocation
  g.last_committed = last_committed;
  g.sequence_number = sequence_number;
  g.immediate_commit_timestamp = timestamp_us;
  g.original_commit_timestamp = cg.original_commit_timestamp_us != 0
                                    ? cg.original_commit_timestamp_us
                                    : timestamp_us;
  g.immediate_server_version = identity_.server_version;
  g.original_server_version = cg.original_server_version != 0
                                  ? cg.original_server_version
                                  : identity_.server_version;
  g.commit_group_ticket = 0;
  g.tagged = true;
  // transaction_length counts every byte of the transaction, this event's
  // own body included, whose size depends on the length's varlen width:
  // the fixpoint over everything else (the other events, spilled ones
  // too, and this event's header and footer).
  const size_t footer = checksums_ ? kChecksumSize : 0;
  EventMeta& e = events_[0];
  const size_t reserved_body = e.end - e.offset - kHeaderSize - footer;
  const uint64_t rest = size_ - front_ + spilled_bytes_ - reserved_body;
  g.transaction_length = MySqlGtidTaggedTransactionLength(g, rest);
  const size_t body = static_cast<size_t>(g.transaction_length - rest);
  // body <= reserved_body: the reservation holds the widest value of every
  // field the log fills, and the CommitGtid's fields are these.
  const size_t shift = reserved_body - body;
  char* b = buf_.get();
  if (shift != 0) {
    // The head moves forward so that the event ends where its room ended
    // (no other event moves), as for MariaDB's commit_id slot.
    std::memmove(b + e.offset + shift, b + e.offset, kHeaderSize);
    e.offset += static_cast<uint32_t>(shift);
    StoreLe32(b + e.offset + kEventSizeOffset, e.end - e.offset);
    front_ = e.offset;
  }
  EncodeMySqlGtidTaggedEventBodyTo(g, b + e.offset + kHeaderSize);
  assigned_.assigned = true;
  assigned_.uuid = uuid;
  assigned_.tag = cg.tag;
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
    const uint64_t base = size_ + spilled_bytes_ - 9;
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
  // The events in memory after the spilled ones follow them in the log.
  const uint64_t tail = start + spilled_bytes_;
  if (spilled_bytes_ != 0) {
    spill_->base = start + head_end_;
    spill_->read_off = 0;
    spill_->big_left = 0;
  }
  for (const EventMeta& e : events_) {
    char* ev = b + e.offset;
    uint32_t log_pos = static_cast<uint32_t>(tail + e.end);
    if (identity_.present && &e == &events_[0]) {
      log_pos = static_cast<uint32_t>(start + e.end);
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
