// File: binlog/transaction_internal.h (internal)
//
// TransactionBufferInternal: what the log's commit path needs of a
// TransactionBuffer beyond its public API (the identity request its first
// event carries, the commit parent, the cookie, the identity assigned, the
// serial-section steps Seal/Place, the spilled pieces), and what the
// payload packer (binlog/payload.cc) needs (the events' bytes, the packing
// state the buffer keeps, the packed form it shows), so that
// binlog/transaction.h names one internal friend instead of the log's
// classes, as LevelDB's write_batch_internal.h does. Not installed; not
// for users of the library.
//
// Thread safety: as TransactionBuffer's (one thread at a time; the log's
// pipeline hands a buffer from the committing thread to the flush stage).

#ifndef BINLOG_BINLOG_TRANSACTION_INTERNAL_H_
#define BINLOG_BINLOG_TRANSACTION_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "binlog/transaction.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"

namespace binlog {
namespace internal {

class TransactionBufferInternal {
 public:
  using Identity = TransactionBuffer::IdentityState;

  static Identity& identity(TransactionBuffer* t) { return t->identity_; }
  static uint64_t& commit_parent(TransactionBuffer* t) { return t->commit_parent_; }
  static void*& cookie(TransactionBuffer* t) { return t->cookie_; }
  static AssignedIdentity& assigned(TransactionBuffer* t) { return t->assigned_; }

  // The bytes of the first event of a spilled transaction (in memory, with
  // the spilled events after it).
  static size_t head_size(const TransactionBuffer* t) { return t->head_end_ - t->front_; }
  // Where Commit's boundary check of a spilled transaction goes on: the
  // parser after the spilled events, and the first event not yet checked.
  static TransactionBoundaryParser spill_parser(const TransactionBuffer* t) {
    return t->spill_->parser;
  }
  static size_t first_unchecked_event(const TransactionBuffer* t) {
    return t->head_events_ + t->spilled_events();
  }

  static void SetServerVersion(TransactionBuffer* t, uint32_t version) {
    t->SetServerVersion(version);
  }
  static void Seal(TransactionBuffer* t) { t->Seal(); }
  static void Place(TransactionBuffer* t, uint64_t start) { t->Place(start); }
  static void AssignIdentity(TransactionBuffer* t, const Uuid& uuid, int64_t gno,
                             int64_t sequence_number, int64_t last_committed,
                             uint64_t timestamp_us) {
    t->AssignIdentity(uuid, gno, sequence_number, last_committed, timestamp_us);
  }
  // The same, naming the GTID's tag: uuid:tag:gno for a tagged CommitGtid
  // (written as a MySQL 8.4 Gtid_tagged_log_event, type 42, of its real
  // size, transaction_length included; the event's head moves forward),
  // uuid:gno for an untagged one. `tag` must be the CommitGtid's
  // (identity(t).gtid.tag): Internal otherwise, and the buffer is left as
  // it was. Call it in the serial section after Seal and before Place, as
  // the untagged form (the five-argument form does the same with the
  // CommitGtid's tag).
  static absl::Status AssignIdentity(TransactionBuffer* t, const Uuid& uuid,
                                     const Tag& tag, int64_t gno,
                                     int64_t sequence_number,
                                     int64_t last_committed,
                                     uint64_t timestamp_us) {
    return t->AssignIdentity(uuid, tag, gno, sequence_number, last_committed,
                             timestamp_us);
  }
  static void AssignMariaIdentity(TransactionBuffer* t, uint32_t domain_id,
                                  uint64_t seq_no, uint64_t commit_id,
                                  uint64_t timestamp_us) {
    t->AssignMariaIdentity(domain_id, seq_no, commit_id, timestamp_us);
  }
  static absl::Status NextSpilledPiece(TransactionBuffer* t, char* buf, size_t cap,
                                       size_t* n) {
    return t->NextSpilledPiece(buf, cap, n);
  }

  // Payload packing (PayloadPacker::Pack). The events in memory, each as
  // [offset, end) in bytes(); whether they end in a checksum.
  using EventMeta = TransactionBuffer::EventMeta;
  static const std::vector<EventMeta>& events(const TransactionBuffer* t) {
    return t->events_;
  }
  static const char* bytes(const TransactionBuffer* t) { return t->buf_.get(); }
  static bool checksums(const TransactionBuffer* t) { return t->checksums_; }
  // The packing state the buffer owns (created on first use, kept across
  // Clear so that steady-state packing allocates nothing).
  using PackStatePtr = std::unique_ptr<PackState, void (*)(PackState*)>;
  static PackStatePtr& pack_state(TransactionBuffer* t) { return t->pack_; }
  // The packed form data() shows while set (nullptr: the buffer's own).
  static const TransactionBuffer*& written(TransactionBuffer* t) {
    return t->written_;
  }
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_INTERNAL_H_
