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
// Spilling (TransactionBufferOptions, Binlog::NewTransactionBuffer): a
// buffer with a spill directory keeps at most `memory_limit` bytes of
// completed events in memory (MySQL's binlog_cache_size). When an Append*
// call would pass it, the completed events (all but the first event of a
// transaction with a CommitGtid, which Commit patches) are checksummed for
// log_pos 0 and written in one piece to an unlinked temporary file
// (io::FileSystem::NewTempFile), and memory is reused. The event being
// built always stays in memory, so AppendEvent's pointer, ExtendLastEvent
// and LastEventBody work as before. Memory is then bounded by memory_limit
// plus the largest event (at most kMaxEventSize) plus the first event, for
// a transaction of any size up to `max_size`. Commit streams the spilled
// events from the file into the log in large chunks, fixing log_pos and
// checksums on the way (binlog/log.h). Spilled transactions are never
// compressed (Options::compression): compressing them would need them in
// memory. While spilled(), data() and appended_data() hold only the events
// still in memory (the first, then those after the spilled ones), and
// event_offset() / appended_event_*() describe only those; size() and
// event_count() count every event. The temporary file is kept (emptied) by
// Clear() for the next transaction and closed with the buffer.
// Errors of spilling (the temporary file's I/O, or passing max_size) are
// sticky until Clear(): the buffer stops writing to the file (so neither
// memory nor disk grows), status() reports the error, and Commit refuses
// the transaction with it (nothing reaches the log).
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
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/writeset.h"
#include "io/file_system.h"

namespace binlog {

class Binlog;

namespace internal {
class TransactionBufferInternal;
struct PackState;
struct SpillState;
}  // namespace internal

// The largest transaction a TransactionBuffer accepts (its max_size cap):
// just under 4 GiB, because log_pos is 32-bit; the log keeps room for the
// file's header events and its end event on top (Commit refuses with
// InvalidArgument what does not fit in a new file).
inline constexpr uint64_t kMaxTransactionSize = 0xFFFFFFFFull - (1ull << 20);

// The default TransactionBufferOptions::memory_limit: 8 MiB. Chosen by
// measurement (benchmarks/README.md, "large_txn_bench"; 2026-11-23, 2
// shared vCPUs, virtio disk, ext4): building and committing a 256 MiB
// transaction took (median of 3) 0.90 s with 64 KiB, 1.37 s with 1 MiB,
// 0.58 s with 8 MiB, 0.93 s with 64 MiB and 0.67 s all in memory: nothing
// gained beyond 8 MiB. MySQL's binlog_cache_size defaults to 32 KiB; here
// a transaction below the limit never touches the file system, so the
// limit is set where spilling stops costing, not as low as possible.
inline constexpr size_t kDefaultTransactionMemoryLimit = 8 << 20;

struct TransactionBufferOptions {
  // Must match the log's Options::checksums (see TransactionBuffer).
  bool checksums = true;
  // Directory for the spill file. Empty (the default): never spill; the
  // buffer keeps the whole transaction in memory, as the one-argument
  // constructor does.
  std::string spill_dir;
  // File system of the spill file; nullptr: io::FileSystem::Default().
  // Must outlive the buffer.
  io::FileSystem* file_system = nullptr;
  // Bytes of completed events kept in memory before spilling (>= 4096;
  // smaller values are raised to 4096). Ignored without spill_dir.
  size_t memory_limit = kDefaultTransactionMemoryLimit;
  // The largest transaction the buffer accepts (MySQL's
  // max_binlog_cache_size): past it, status() and Commit report
  // ResourceExhausted naming this limit. Values above kMaxTransactionSize
  // are lowered to it.
  uint64_t max_size = kMaxTransactionSize;
  // Encrypt the spill file (AES-256-CTR under a random key that exists only
  // in the buffer's memory), as MySQL 8.0.17+ encrypts the binlog cache's
  // temporary files with binlog encryption on. Binlog::NewTransactionBuffer
  // sets it when Options::encryption is on.
  bool encrypt_spill = false;
};

// A Gtid event whose identity the log assigns at Commit, in commit order.
//
// MySQL flavor (TransactionBuffer::AppendCommitGtid). Follows MySQL 8.0:
// the event has the 8.0 layout (a tagged GTID: MySQL 8.4's
// Gtid_tagged_log_event, see `tag`), the GNO is the log's next free one for its
// server UUID (or one the caller acquired), sequence_number counts from 1
// in each file, last_committed is the commit-order clock (see
// Binlog::CommitClock), and the immediate commit timestamp is taken when
// the group is written.
//
// MariaDB flavor (TransactionBuffer::AppendMariaCommitGtid, for a log with
// Options::flavor == LogFlavor::kMariaDB). Follows MariaDB 10.11: a Gtid
// event (162) takes the place of BEGIN (no BEGIN query follows it). The
// GTID is domain-server-seq; its server_id is the event header's (the
// `server_id` given to AppendMariaCommitGtid: Options::server_id for this
// server's transactions, the source's for a replica applying a source's
// transaction, as MariaDB keeps the originating server_id).
//   kAutomatic: domain_id if has_domain_id (MariaDB's session
//     @@gtid_domain_id), else Options::gtid_domain_id; seq_no is the
//     domain's highest seq_no in the log + 1, assigned in commit order
//     (gap-free and increasing per domain, as MariaDB's
//     rpl_binlog_state::next_seq_no).
//   kAssigned: domain_id and seq_no as given (a replica applying a
//     source's GTID, MariaDB's @@gtid_seq_no). With
//     Options::gtid_strict_mode a seq_no not above the domain's highest
//     seq_no in the log is refused with AlreadyExists (MariaDB's
//     ER_GTID_STRICT_OUT_OF_ORDER); without it, it is logged (the domain's
//     position moves back, its next automatic seq_no does not), as MariaDB
//     does. No AcquireGtid is needed.
//   kAnonymous: refused (MariaDB has no anonymous transactions).
// The event's flags2: FL_TRANSACTIONAL (`transactional`, not for
// `isolated`), FL_STANDALONE | FL_DDL (`isolated`: a DDL statement, which
// then ends the transaction, see AppendMariaDdlQuery), FL_ALLOW_PARALLEL
// (`allow_parallel`), FL_WAITED (`waited`), FL_PREPARED_XA (`xa` kPrepared:
// the transaction ends with XA_prepare) or FL_COMPLETED_XA | FL_STANDALONE
// (`xa` kCompleted: an XA COMMIT / XA ROLLBACK statement), and
// FL_GROUP_COMMIT_ID with the commit_id the log gives every transaction of
// a commit group of more than one transaction (see Binlog::Commit).
struct CommitGtid {
  enum class Kind {
    kAutomatic,  // MySQL: Options::server_uuid and the next free GNO;
                 // MariaDB: the next seq_no of the domain
    kAnonymous,  // MySQL only: an Anonymous_gtid event (gtid_mode=OFF),
                 // same clocks
    kAssigned,   // MySQL: `uuid:gno`, acquired first with
                 // Binlog::AcquireGtid; MariaDB: domain_id-server-seq_no
                 // (a replica applying its source's transaction)
  };
  Kind kind = Kind::kAutomatic;
  Uuid uuid;        // MySQL kAssigned
  int64_t gno = 0;  // MySQL kAssigned
  // MySQL flavor: the GTID's tag (MySQL 8.3+, binlog/gtid.h Tag; empty: an
  // untagged GTID, as in 8.0).
  //   kAutomatic with a tag: MySQL's SET gtid_next='AUTOMATIC:tag': the
  //     server UUID with that tag, and the next free GNO of that (uuid,
  //     tag), which has its own sequence.
  //   kAssigned with a tag: `uuid:tag:gno`, acquired first (as an untagged
  //     one is).
  // A tagged transaction starts with a Gtid_tagged_log_event (type 42,
  // binlog/FORMAT.md "Gtid_tagged_log_event") instead of a Gtid event (33),
  // as MySQL 8.4 writes it: AppendCommitGtid reserves room for the largest
  // such event of the tag, and the log writes the real one, of its real
  // size, when it assigns the identity. With Options::compression a tagged
  // transaction is compressed as MySQL 8.4 compresses it: the tagged Gtid
  // event outside, before the Transaction_payload (binlog/payload.h).
  // kAnonymous: must be empty (the
  // event is an Anonymous_gtid, which has no tag). Commit refuses a tag in
  // a log of MySQL 8.0 files (Options::mysql_layout k80) and in kMariaDB.
  Tag tag;
  // MySQL FLAG_MAY_HAVE_SBR: the transaction may hold statement-based
  // events.
  bool may_have_sbr = false;
  // The transaction must run alone on a replica (DDL). MySQL: its
  // last_committed is its sequence_number - 1, and every later transaction
  // of the file depends on it. MariaDB: FL_STANDALONE | FL_DDL.
  bool isolated = false;
  // MySQL, a replica applying its source's transaction: the source's commit
  // timestamp (microseconds) and server version; 0 means "this server's".
  uint64_t original_commit_timestamp_us = 0;
  uint32_t original_server_version = 0;

  // MariaDB flavor only (see above).
  bool has_domain_id = false;  // kAutomatic: use domain_id
  uint32_t domain_id = 0;      // kAssigned; kAutomatic with has_domain_id
  uint64_t seq_no = 0;         // kAssigned, >= 1
  bool transactional = true;   // FL_TRANSACTIONAL (DML on a transactional
                               // engine)
  bool allow_parallel = true;  // FL_ALLOW_PARALLEL (false: MariaDB's
                               // @@skip_parallel_replication)
  bool waited = false;         // FL_WAITED: it waited for a row lock of
                               // another transaction
  enum class Xa {
    kNone,
    kPrepared,   // XA PREPARE: ends with an XA_prepare event
    kCompleted,  // XA COMMIT / XA ROLLBACK of a prepared XA transaction
  };
  Xa xa = Xa::kNone;
  // The XA transaction's xid: formatID, gtrid (1..64 bytes), bqual (0..64
  // bytes). Commit refuses other lengths (InvalidArgument).
  uint32_t xa_format_id = 0;
  std::string xa_gtrid;
  std::string xa_bqual;
};

// What the log assigned to a transaction with a CommitGtid.
struct AssignedIdentity {
  bool assigned = false;  // the transaction had a CommitGtid
  // MySQL flavor.
  Uuid uuid;              // zero for anonymous
  Tag tag;                // the GTID's tag (empty: untagged)
  int64_t gno = 0;        // 0 for anonymous
  int64_t sequence_number = 0;
  int64_t last_committed = 0;
  // Both flavors: when its group was written (MySQL writes it in the
  // event as the immediate commit timestamp).
  uint64_t immediate_commit_timestamp_us = 0;
  // MariaDB flavor: the GTID domain_id-server_id-seq_no, and the commit_id
  // of its group (0 when the event carries none: a group of one).
  bool mariadb = false;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
  uint64_t commit_id = 0;
};

class TransactionBuffer {
 public:
  // `checksums` must match the log's Options::checksums; Commit rejects a
  // mismatched buffer with InvalidArgument.
  // Never spills (the whole transaction stays in memory); max_size is
  // kMaxTransactionSize.
  explicit TransactionBuffer(bool checksums = true);
  // With spilling when options.spill_dir is set (see the file comment).
  // The spill file is created on first need; its creation error is
  // reported like any spill error.
  explicit TransactionBuffer(const TransactionBufferOptions& options);
  ~TransactionBuffer();
  TransactionBuffer(const TransactionBuffer&) = delete;
  TransactionBuffer& operator=(const TransactionBuffer&) = delete;

  // Appends an event with the given header fields and a body of `body_size`
  // bytes, and returns a pointer to the body for the caller to fill. The
  // body bytes are uninitialized.
  char* AppendEvent(uint8_t type, uint32_t server_id, uint32_t timestamp,
                    uint16_t flags, size_t body_size);

  // Grows the last appended event's body by `n` bytes at its end (before
  // the checksum footer) and returns a pointer to them, uninitialized;
  // event_size follows. For encoders that fill an event in place as its
  // contents arrive (binlog/rows_writer.h appends row images this way).
  // May move the buffer: earlier pointers into it become invalid.
  // REQUIRES: an event was appended since the last Clear().
  char* ExtendLastEvent(size_t n) {
    written_ = nullptr;
    if (size_ + n > capacity_) return ExtendLastEventSlow(n);
    // The common case inline: room in the buffer (see transaction.cc).
    EventMeta& e = events_.back();
    char* ev = buf_.get() + e.offset;
    const size_t footer = checksums_ ? kChecksumSize : 0;
    char* p = buf_.get() + size_ - footer;
    size_ += n;
    e.end += static_cast<uint32_t>(n);
    StoreLe32(ev + kEventSizeOffset, e.end - e.offset);
    if (footer) StoreLe32(p + n, 0);
    return p;
  }

  // Room for up to `n` more bytes at the last event's end: where
  // ExtendLastEvent(k) for any k <= n puts its bytes, and it will not move
  // the buffer. For encoders that learn a piece's size as they write it:
  // they write it here, then ExtendLastEvent(size) keeps it. The event is
  // unchanged until then but for its footer placeholder, which the room
  // overlaps and ExtendLastEvent rewrites (ExtendLastEvent(0) rewrites it
  // alone). May move the buffer: earlier pointers into it become invalid.
  // The memory limit (spilling) and max_size are not checked here: the
  // next Append* checks them, as after ExtendLastEvent.
  // REQUIRES: an event was appended since the last Clear().
  char* LastEventRoom(size_t n) {
    written_ = nullptr;
    if (size_ + n > capacity_) Grow(n);
    return buf_.get() + size_ - (checksums_ ? kChecksumSize : 0);
  }

  // The body of the last appended event, writable in place (for example
  // to set a flag once the event is complete). Valid until the next
  // Append*/Extend*/Clear call. REQUIRES: !empty().
  char* LastEventBody() {
    written_ = nullptr;
    return buf_.get() + events_.back().offset + kHeaderSize;
  }

  // Appends an event whose body is `body` (one copy).
  void AppendEvent(uint8_t type, uint32_t server_id, uint32_t timestamp,
                   uint16_t flags, absl::string_view body);

  // Appends an event whose first bytes the caller prepared once for many
  // events: `head` is its 19-byte header, whose type, server_id and flags
  // are taken as they are (timestamp, event_size and log_pos are written
  // here: `timestamp`, the event's size, 0), then the start of its body.
  // `tail` more body bytes follow, uninitialized; returns a pointer to
  // them. The event equals AppendEvent(type, server_id, timestamp, flags,
  // head.size() - 19 + tail) with the body's start copied from `head`, in
  // one copy (binlog/rows_writer.h keeps its Table_map events and Rows
  // event heads so). REQUIRES: head.size() >= 19.
  char* AppendPreparedEvent(absl::string_view head, uint32_t timestamp,
                            size_t tail);

  // Appends an event the caller encoded completely: a 19-byte header whose
  // event_size equals event.size(), the body, and (with checksums) a 4-byte
  // footer whose value is ignored. log_pos is ignored. InvalidArgument if
  // the sizes do not agree.
  absl::Status AppendEncodedEvent(absl::string_view event);

  // Appends the transaction's Gtid event, whose identity (GNO, logical
  // clocks, commit timestamp) the log fills at Commit, in commit order, and
  // whose transaction_length Commit computes. It must be the first event
  // of the transaction; Commit refuses it elsewhere (InvalidArgument).
  // With a tag (CommitGtid::tag, not kAnonymous) the event is a
  // Gtid_tagged_log_event (42): until Commit assigns the identity it is a
  // placeholder holding the widest values of the fields the log fills (the
  // largest event of that tag); Commit writes the real, possibly smaller,
  // event in its place, so size() shrinks then (by a few dozen bytes).
  void AppendCommitGtid(uint32_t timestamp, uint32_t server_id,
                        const CommitGtid& gtid);

  // The MariaDB form of AppendCommitGtid, for a log with Options::flavor ==
  // kMariaDB: appends the transaction's MariaDB Gtid event (162, header
  // flag LOG_EVENT_SUPPRESS_USE_F as MariaDB writes it), whose seq_no,
  // domain and commit_id the log fills at Commit, in commit order. It
  // takes the place of BEGIN: the transaction's events follow it, ending
  // with Xid, a COMMIT/ROLLBACK query, XA_prepare (xa kPrepared), or, for
  // `isolated` and xa kCompleted, the one statement that follows. It must
  // be the first event of the transaction; Commit refuses it elsewhere, in
  // a kMySQL log, and with a bad xid (InvalidArgument). `server_id` is the
  // GTID's server_id (see CommitGtid).
  void AppendMariaCommitGtid(uint32_t timestamp, uint32_t server_id,
                             const CommitGtid& gtid);

  // The commit-order clock value (Binlog::CommitClock()) captured when the
  // transaction prepared in the engine: the log derives last_committed from
  // it. A caller with its own dependency tracking (WRITESET) may pass a
  // clock of its own choosing; the log clamps it the same way. 0 (the
  // default): the clock is read when Commit is entered.
  void set_commit_parent(uint64_t clock) { commit_parent_ = clock; }
  uint64_t commit_parent() const { return commit_parent_; }

  // The transaction's writeset (binlog/writeset.h): the hashes of the
  // unique-key values of the rows it changed, from which the log computes
  // last_committed under WRITESET dependency tracking. RowsWriter adds them
  // as it packs rows; a caller writing its own row events adds them itself
  // (WritesetKeySeed/WritesetMix give the same hashes RowsWriter would).
  // The state starts as kNone ("nothing declared": the log falls back to
  // commit order and every later transaction depends on this one), so a
  // transaction that nobody described can never be reordered.
  //   AddWritesetHash: records a hash; kNone becomes kComplete unless the
  //     writeset was marked unusable.
  //   MarkWritesetMissingKeys: a row of a table without a primary key was
  //     changed (commit order for this transaction; history kept).
  //   MarkWritesetUnusable: the hashes do not describe the transaction
  //     (DDL, statement events, a foreign-key parent table); sticky until
  //     Clear().
  // More than writeset_limit() hashes (default kDefaultWritesetHistorySize,
  // MySQL's per-transaction limit) make the writeset unusable and stop
  // recording, which bounds its memory. Clear() empties it and keeps the
  // memory: no allocation in steady state.
  void AddWritesetHash(uint64_t hash) {
    if (writeset_declared_ == WritesetDeclared::kUnusable) return;
    if (writeset_.size() >= writeset_limit_) return MarkWritesetUnusable();
    writeset_.push_back(hash);
    if (writeset_declared_ == WritesetDeclared::kNothing) {
      writeset_declared_ = WritesetDeclared::kComplete;
    }
  }
  void MarkWritesetMissingKeys() {
    if (writeset_declared_ != WritesetDeclared::kUnusable) {
      writeset_declared_ = WritesetDeclared::kMissingKeys;
    }
  }
  void MarkWritesetUnusable() {
    writeset_declared_ = WritesetDeclared::kUnusable;
    writeset_.clear();
  }
  // Declares the writeset complete as it is (possibly empty: a transaction
  // that changed no row, which then needs no dependency). No effect on a
  // writeset already marked.
  void DeclareWritesetComplete() {
    if (writeset_declared_ == WritesetDeclared::kNothing) {
      writeset_declared_ = WritesetDeclared::kComplete;
    }
  }
  WritesetState writeset_state() const {
    switch (writeset_declared_) {
      case WritesetDeclared::kComplete: return WritesetState::kComplete;
      case WritesetDeclared::kMissingKeys: return WritesetState::kMissingKeys;
      default: return WritesetState::kNone;
    }
  }
  absl::Span<const uint64_t> writeset() const { return writeset_; }
  // 1.. (values below 1 are raised to 1).
  void set_writeset_limit(size_t limit) {
    writeset_limit_ = limit < 1 ? 1 : limit;
  }
  size_t writeset_limit() const { return writeset_limit_; }

  // A caller's pointer handed back in the ordered-commit callback (for
  // example the engine transaction to commit). Cleared by Clear().
  void set_cookie(void* cookie) { cookie_ = cookie; }
  void* cookie() const { return cookie_; }

  // What the last Commit assigned (assigned == false without a CommitGtid).
  const AssignedIdentity& identity() const { return assigned_; }

  // Forgets the events, keeps the memory.
  void Clear();

  bool checksums() const { return checksums_; }
  size_t size() const {
    return written_ ? written_->size() : size_ - front_ + spilled_bytes_;
  }
  size_t event_count() const {
    return written_ ? written_->event_count() : events_.size() + spilled_events_;
  }
  // True if some events of this transaction are in the spill file.
  bool spilled() const { return spilled_bytes_ != 0; }
  // Bytes and events in the spill file now.
  uint64_t spilled_bytes() const { return spilled_bytes_; }
  uint64_t spilled_events() const { return spilled_events_; }
  // OK, or the sticky error of spilling or of passing max_size (see the
  // file comment), until Clear().
  absl::Status status() const;
  // Most bytes this buffer has held in memory for events (its capacity),
  // since construction: what spilling bounds.
  size_t peak_memory() const { return capacity_; }
  // True if no event was appended since the last Clear().
  bool empty() const { return events_.empty(); }
  // The events as they will be written. After Commit, log_pos and footers
  // hold their final values; after a Commit that compressed the
  // transaction, the Gtid and Transaction_payload events as written.
  absl::string_view data() const {
    return written_ ? written_->data()
                    : absl::string_view(buf_.get() + front_, size_ - front_);
  }
  // Offset of event `i` within data(). REQUIRES: event `i` is in memory
  // (see spilled()).
  size_t event_offset(size_t i) const {
    return written_ ? written_->event_offset(i) : meta(i).offset - front_;
  }
  // True after a Commit that stored the transaction compressed (until the
  // next Append*/Clear call).
  bool compressed() const { return written_ != nullptr; }
  // The events as appended. Equal to data() unless compressed(); then they
  // still hold log_pos 0 and unset checksum footers.
  absl::string_view appended_data() const {
    return absl::string_view(buf_.get() + front_, size_ - front_);
  }
  // The events as appended, one by one: their number (spilled ones
  // included), and the size, offset within appended_data() and type of
  // event `i` (from its header). REQUIRES for the last three: event `i` is
  // in memory (the first event, the last one, and those after the spilled
  // ones; all of them unless spilled()).
  size_t appended_event_count() const { return events_.size() + spilled_events_; }
  // True if event `i` is in memory (not in the spill file).
  bool appended_event_in_memory(size_t i) const {
    return i < head_events_ || i >= head_events_ + spilled_events_;
  }
  uint64_t appended_event_size(size_t i) const {
    return meta(i).end - meta(i).offset;
  }
  size_t appended_event_offset(size_t i) const {
    return meta(i).offset - front_;
  }
  uint8_t appended_event_type(size_t i) const {
    return static_cast<uint8_t>(buf_[meta(i).offset + 4]);
  }

 private:
  // The log and the payload packer reach the internals through it
  // (binlog/transaction_internal.h).
  friend class internal::TransactionBufferInternal;

  struct EventMeta {
    uint32_t offset;      // start within the buffer
    uint32_t end;         // end within the buffer (= offset + event_size)
    uint32_t base_crc;    // checksum with log_pos = 0 (after Seal)
    uint32_t crc_op;      // LogPosCrcOperator(covered length) (after Seal)
  };

  // Event `i` in the transaction's numbering: the spilled events sit
  // between the head (head_events_) and the events in memory after them.
  const EventMeta& meta(size_t i) const {
    return events_[i < head_events_ ? i : i - spilled_events_];
  }

  // `n` more bytes at the end; Grow makes room for `n` more (out of line).
  char* Reserve(size_t n) {
    if (__builtin_expect(size_ + n > capacity_, 0)) Grow(n);
    char* p = buf_.get() + size_;
    size_ += n;
    return p;
  }
  void Grow(size_t n);
  char* ExtendLastEventSlow(size_t n);
  // Before appending an event of `n` bytes: spills the completed events if
  // the memory limit would be passed, and checks max_size.
  void BeforeAppend(size_t n) {
    if (size_ + n > spill_at_) SpillCompleted(n);
  }
  void SpillCompleted(size_t n);
  void ResetSpill();
  absl::Status MaxSizeError(uint64_t size) const;
  absl::Status SpillError(const absl::Status& s) const;
  absl::Status TruncatedSpill() const;
  // Serial section, for a spilled transaction after Place: the next piece
  // of the spilled events, read into `buf` (at most `cap` bytes, cap >= 64
  // KiB) with log_pos and checksum final. *n == 0 at the end.
  absl::Status NextSpilledPiece(char* buf, size_t cap, size_t* n);

  // The CommitGtid of the first event, if any.
  struct IdentityState {
    bool present = false;
    bool misplaced = false;    // AppendCommitGtid on a non-empty buffer
    bool mariadb = false;      // AppendMariaCommitGtid
    bool bad_xid = false;      // an XA xid with lengths out of range
    uint32_t server_id = 0;    // MariaDB: the event header's
    bool commit_id_slot = false;  // MariaDB: 8 bytes reserved for commit_id
    bool length_slot = false;  // transaction_length is a 9-byte placeholder
    size_t length_at = 0;      // buffer offset of that placeholder
    size_t version_at = 0;     // buffer offset of immediate_server_version
    // MySQL, a tagged CommitGtid: the first event is a
    // Gtid_tagged_log_event (42) holding a placeholder of the largest size
    // the tag's event can take; AssignIdentity writes the real one.
    bool tagged = false;
    uint32_t server_version = 0;  // tagged: from SetServerVersion
    CommitGtid gtid;
    // Set by Commit from writeset() / writeset_state() (the vector stays
    // the caller's buffer's until Commit returns), for the flush stage.
    absl::Span<const uint64_t> writeset;
    WritesetState writeset_state = WritesetState::kNone;
  };
  // Commit (caller's thread): the server version into the Gtid event.
  void SetServerVersion(uint32_t version);
  // Serial section: the identity into the Gtid event (its checksum is
  // recomputed in Place). For a tagged CommitGtid (identity_.tagged), the
  // GTID is uuid:tag:gno with the CommitGtid's tag: the real
  // Gtid_tagged_log_event, transaction_length included, is encoded at the
  // end of the room AppendCommitGtid reserved and the event's head moves
  // forward (front_), as AssignMariaIdentity does.
  void AssignIdentity(const Uuid& uuid, int64_t gno, int64_t sequence_number,
                      int64_t last_committed, uint64_t timestamp_us);
  // The same, naming the tag: Internal (and nothing changes) unless `tag`
  // is the CommitGtid's tag, the one whose room AppendCommitGtid reserved.
  absl::Status AssignIdentity(const Uuid& uuid, const Tag& tag, int64_t gno,
                              int64_t sequence_number, int64_t last_committed,
                              uint64_t timestamp_us);
  // The tagged form of AssignIdentity.
  void AssignTaggedIdentity(const Uuid& uuid, int64_t gno,
                            int64_t sequence_number, int64_t last_committed,
                            uint64_t timestamp_us);

  // Serial section, MariaDB: seq_no and domain into the Gtid event, and the
  // commit_id (0: none, and the event shrinks to MariaDB's size without it:
  // its head moves forward, as Seal does for transaction_length).
  void AssignMariaIdentity(uint32_t domain_id, uint64_t seq_no,
                           uint64_t commit_id, uint64_t timestamp_us);

  // Caller-thread work before the serial section: zero log_pos and compute
  // each event's checksum for log_pos = 0.
  void Seal();
  // Serial-section work: final log_pos = start + end of each event, and the
  // checksum corrected for it. Touches 8 bytes per event.
  void Place(uint64_t start);

  // The writeset (see AddWritesetHash).
  enum class WritesetDeclared : uint8_t {
    kNothing, kComplete, kMissingKeys, kUnusable
  };
  std::vector<uint64_t> writeset_;
  WritesetDeclared writeset_declared_ = WritesetDeclared::kNothing;
  size_t writeset_limit_ = kDefaultWritesetHistorySize;

  bool checksums_;
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  // Bytes before data(): Seal writes the Gtid event of a CommitGtid at its
  // final size so that it ends where its placeholder ended.
  size_t front_ = 0;
  IdentityState identity_;
  AssignedIdentity assigned_;
  // The fields of a tagged Gtid event being encoded (AppendCommitGtid's
  // placeholder, AssignIdentity's event). A member, kept by Clear(), so
  // that copying the tag into it reuses its storage: no allocation in
  // steady state whatever the tag's length.
  MySqlGtidEvent tagged_gtid_;
  uint64_t commit_parent_ = 0;
  void* cookie_ = nullptr;
  size_t capacity_ = 0;
  std::vector<EventMeta> events_;

  // Compression state, created by the payload packer on first use and reused
  // (an incomplete type here: the deleter comes with it).
  std::unique_ptr<internal::PackState, void (*)(internal::PackState*)> pack_{
      nullptr, nullptr};
  // The packed form while it is what data() shows, else nullptr.
  const TransactionBuffer* written_ = nullptr;

  // Spilling. spill_at_: the buffer size past which completed events are
  // spilled (SIZE_MAX: never). head_end_: end of the first event kept in
  // memory when it carries a CommitGtid (0 otherwise); the spilled events
  // come after it in the transaction, and the events in memory after it
  // follow them.
  size_t spill_at_ = ~size_t{0};
  size_t head_end_ = 0;
  size_t head_events_ = 0;
  uint64_t spilled_bytes_ = 0;
  uint64_t spilled_events_ = 0;
  std::unique_ptr<internal::SpillState, void (*)(internal::SpillState*)> spill_{
      nullptr, nullptr};
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_H_
