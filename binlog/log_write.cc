// BinlogImpl: the commit path: Commit's checks (in the committing
// thread), the flush stage (identity, positions, the group's write), the
// sync stage and the commit stage. See binlog/log_impl.h.

#include "binlog/log_impl.h"
#include "binlog/transaction_internal.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/log_options.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

using Txn = TransactionBufferInternal;

absl::Status BinlogImpl::AssignIdentity(TransactionBuffer* txn, uint64_t now_us,
                                        uint64_t commit_id) {
  const Txn::Identity& id = Txn::identity(txn);
  const CommitGtid& g = id.gtid;
  if (id.mariadb) {
    uint32_t domain = 0;
    uint64_t seq_no = 0;
    BINLOG_RETURN_IF_ERROR(gtids_.TakeMariaGtid(g, id.server_id, &domain, &seq_no));
    Txn::AssignMariaIdentity(txn, domain, seq_no, commit_id, now_us);
    return absl::OkStatus();
  }
  Tsid tsid;
  int64_t gno = 0;
  BINLOG_RETURN_IF_ERROR(gtids_.TakeGtid(g, &tsid, &gno));
  int64_t seq = 0, last_committed = 0;
  clock_.Next(Txn::commit_parent(txn), g.isolated, id.writeset, id.writeset_state, &seq,
              &last_committed);
  // The CommitGtid's own tag: the event reserved for it is written (it
  // cannot fail for that tag, so no GNO is taken without being written).
  BINLOG_RETURN_IF_ERROR(
      Txn::AssignIdentity(txn, tsid.uuid, g.tag, gno, seq, last_committed, now_us));
  return absl::OkStatus();
}

void BinlogImpl::FillTransactions(sync::CommitGroup* g,
                                  std::vector<CommittedTransaction>* out) const {
  out->clear();
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    if (!r->rejected.ok()) continue;
    auto* txn = static_cast<TransactionBuffer*>(r->payload);
    out->push_back(CommittedTransaction{txn->cookie(), r->file, r->start,
                                        r->end, txn->identity()});
  }
}

absl::Status BinlogImpl::WriteGroup(uint64_t offset) {
  const uint64_t window = options_.max_unsynced_bytes;
  uint64_t total = 0;
  for (absl::string_view v : iov_) total += v.size();
  if (options_.sync_policy != SyncPolicy::kEveryGroup || total <= window) {
    return active_->WriteV(offset, iov_);
  }
  // Larger than the unsynced window (one large transaction: the pipeline
  // made sure nothing else is unsynced): write it a window at a time, each
  // piece synced before the next, so a crash can tear at most one window.
  // The sync stage syncs the last piece with the group.
  uint64_t pos = offset;
  uint64_t in_piece = 0;
  piece_iov_.clear();
  for (absl::string_view v : iov_) {
    while (!v.empty()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(v.size(), window - in_piece));
      piece_iov_.push_back(v.substr(0, n));
      v.remove_prefix(n);
      in_piece += n;
      if (in_piece == window) {
        BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
        pos += in_piece;
        in_piece = 0;
        piece_iov_.clear();
        if (pos < offset + total) BINLOG_RETURN_IF_ERROR(TimedSync());
      }
    }
  }
  if (!piece_iov_.empty()) BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
  return absl::OkStatus();
}

// A group with spilled transactions: the same pieces and syncs as
// WriteGroup (a crash tears at most one unsynced window), with each spilled
// transaction's events read from its spill file kSpillChunk bytes at a time
// into spill_chunk_ (log_pos and checksums fixed there, see
// TransactionBuffer::NextSpilledPiece) and written from it. The pending
// pieces are written before the chunk is reused, so a spilled transaction
// costs one pread and one pwritev per chunk, and no allocation.
absl::Status BinlogImpl::WriteGroupStreaming(uint64_t offset) {
  uint64_t total = 0;
  for (absl::string_view v : iov_) total += v.size();
  for (const SpillAt& sp : spills_) total += sp.txn->spilled_bytes();
  const uint64_t window =
      options_.sync_policy == SyncPolicy::kEveryGroup &&
              total > options_.max_unsynced_bytes
          ? options_.max_unsynced_bytes
          : ~uint64_t{0};
  uint64_t pos = offset;     // where the pending pieces go
  uint64_t pending = 0;      // bytes in piece_iov_
  uint64_t since_sync = 0;   // bytes written or pending since the last sync
  piece_iov_.clear();
  auto write_pending = [&]() -> absl::Status {
    if (piece_iov_.empty()) return absl::OkStatus();
    BINLOG_RETURN_IF_ERROR(active_->WriteV(pos, piece_iov_));
    pos += pending;
    pending = 0;
    piece_iov_.clear();
    return absl::OkStatus();
  };
  auto add = [&](absl::string_view v) -> absl::Status {
    while (!v.empty()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(v.size(), window - since_sync));
      piece_iov_.push_back(v.substr(0, n));
      v.remove_prefix(n);
      pending += n;
      since_sync += n;
      if (since_sync == window) {
        BINLOG_RETURN_IF_ERROR(write_pending());
        since_sync = 0;
        // The sync stage syncs the last piece with the group.
        if (pos < offset + total) BINLOG_RETURN_IF_ERROR(TimedSync());
      }
    }
    return absl::OkStatus();
  };
  size_t next_spill = 0;
  for (size_t i = 0; i <= iov_.size(); ++i) {
    while (next_spill < spills_.size() && spills_[next_spill].index == i) {
      TransactionBuffer* txn = spills_[next_spill++].txn;
      for (;;) {
        // spill_chunk_ may still be referenced by the pending pieces.
        BINLOG_RETURN_IF_ERROR(write_pending());
        size_t n = 0;
        absl::Status rs = Txn::NextSpilledPiece(txn, spill_chunk_.get(), kSpillChunk, &n);
        if (!rs.ok()) {
          return absl::Status(rs.code(), absl::StrCat(
              "reading a spilled transaction back from its temporary file: ",
              rs.message()));
        }
        if (n == 0) break;
        BINLOG_RETURN_IF_ERROR(add(absl::string_view(spill_chunk_.get(), n)));
      }
    }
    if (i < iov_.size()) BINLOG_RETURN_IF_ERROR(add(iov_[i]));
  }
  BINLOG_RETURN_IF_ERROR(write_pending());
  if (pos != offset + total) {
    // The group's positions were given out for `total` bytes: anything else
    // would leave a hole or an overlap in the file.
    return absl::DataLossError(absl::StrCat(
        "a group with spilled transactions wrote ", pos - offset,
        " bytes where ", total, " were placed"));
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::Flush(sync::CommitGroup* g) {
  // Rotation happens between groups: once the active file has reached
  // max_file_size, or when this group would cross the 32-bit offset limit.
  bool full = end_ >= options_.max_file_size ||
              end_ + g->bytes + kEndReserve > kMaxFileOffset;
  if (full && end_ > header_end_) {
    // Every earlier group synced and published; if one failed meanwhile,
    // nothing more may be written.
    BINLOG_RETURN_IF_ERROR(pipeline_->DrainSync());
    BINLOG_RETURN_IF_ERROR(RotateNow(/*from_flush=*/true));
  }
  if (rotation_ != nullptr && rotation_->failed()) {
    // A background close failed: nothing more may be written.
    return WaitRotationIdle();
  }
  if (preallocator_ != nullptr && end_ >= options_.max_file_size / 2) {
    preallocator_->Request();  // the next file, prepared in the background
  }
  if (rotation_ != nullptr && prepare_requested_for_ <= active_number_ &&
      end_ >= options_.max_file_size / 4 * 3) {
    // Once per file: the next file created and its name made durable
    // before the rotation needs it (a spare renamed if one is ready).
    prepare_requested_for_ = active_number_ + 1;
    rotation_->RequestPrepare(active_number_ + 1);
  }
  if (options_.before_group_write) {
    // Before anything of the group is decided or written (MySQL flushes
    // the engines' logs first in its flush stage too): on failure the
    // group fails and no identity or position was given out.
    flush_txns_.clear();
    for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
      CommittedTransaction t;
      t.cookie = static_cast<TransactionBuffer*>(r->payload)->cookie();
      flush_txns_.push_back(t);
    }
    GroupCommitInfo info;
    info.file_number = active_number_;
    info.transactions = static_cast<uint32_t>(flush_txns_.size());
    info.group_seq = g->seq;
    info.txns = absl::MakeConstSpan(flush_txns_);
    BINLOG_RETURN_IF_ERROR(options_.before_group_write(info));
  }
  uint64_t pos = end_;
  uint64_t first = end_;
  bool placed = false;
  iov_.clear();
  spills_.clear();
  // Identities are assigned here, in commit order, under GtidState::mu() (once per
  // group that carries any), with one clock read for the group.
  uint32_t identities = 0;
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    identities += Txn::identity(static_cast<TransactionBuffer*>(r->payload)).present;
  }
  // MariaDB's commit_id (FL_GROUP_COMMIT_ID), only for groups of more than
  // one transaction, as MariaDB writes it: the group's (file, start
  // offset), unique in the log and never 0.
  const uint64_t commit_id =
      identities > 1 ? (active_number_ << 32) | end_ : 0;
  const uint64_t now_us =
      identities ? static_cast<uint64_t>(absl::GetCurrentTimeNanos() / 1000) : 0;
  if (identities) gtids_.mu()->Lock();
  for (sync::CommitRequest* r = g->first; r != nullptr; r = r->next) {
    auto* txn = static_cast<TransactionBuffer*>(r->payload);
    if (pos + r->bytes + kEndReserve > kMaxFileOffset) {
      // Only possible in a new file whose header left less room than
      // Commit assumed: refuse this transaction alone.
      r->rejected = absl::ResourceExhaustedError(absl::StrCat(
          "a transaction of ", r->bytes, " bytes does not fit below the "
          "4 GiB log_pos limit after the ", header_end_,
          " bytes of header events of ", BinlogFileName(basename_, active_number_)));
      rejected_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (Txn::identity(txn).present) {
      absl::Status is = AssignIdentity(txn, now_us, commit_id);
      if (!is.ok()) {
        r->rejected = is;  // this transaction alone; nothing of it is written
        rejected_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
    }
    Txn::Place(txn, pos);
    if (!placed) first = pos;
    placed = true;
    r->file = active_number_;
    r->start = pos;
    pos += txn->size();
    r->end = pos;
    if (txn->spilled()) {
      // The first event (in memory), the spilled ones, the rest.
      absl::string_view d = txn->data();
      const size_t head = Txn::head_size(txn);
      iov_.push_back(d.substr(0, head));
      spills_.push_back(SpillAt{iov_.size(), txn});
      iov_.push_back(d.substr(head));
    } else {
      iov_.push_back(txn->data());
    }
  }
  if (identities) gtids_.mu()->Unlock();
  g->last_sequence_number = clock_.last_sequence_number();
  if (!iov_.empty() || !spills_.empty()) {
    // The zero frontier keeps out of [.., pos) from here on, and out of
    // the 16 bytes of encrypted zeros an encrypted file's writer puts
    // after its data (binlog/encryption.cc: the same bytes the frontier
    // would write there through its own encrypting handle, but not raced).
    if (frontier_ != nullptr) frontier_->BeforeWrite(pos + 16);
  }
  if (!spills_.empty()) {
    BINLOG_RETURN_IF_ERROR(WriteGroupStreaming(end_));
  } else if (!iov_.empty()) {
    BINLOG_RETURN_IF_ERROR(WriteGroup(end_));
    // The group's bytes for caught-up tailing readers, before it is
    // published (binlog/tail_ring.h). A spilled group is not copied: the
    // ring starts anew at the next group.
    if (TailRing* ring = live_->Ring()) {
      ring->Append(active_number_, end_, iov_);
    }
  }
  bytes_written_.fetch_add(pos - end_, std::memory_order_relaxed);
  g->file = active_number_;
  g->start = first;
  g->end = pos;
  end_ = pos;
  if (options_.reader_visibility == ReaderVisibility::kAfterWrite) {
    sync::MutexLock l(&publish_mu_);
    if (!sync_failed_) live_->Publish(active_number_, end_);
  }
  return absl::OkStatus();
}

absl::Status BinlogImpl::Sync(sync::CommitGroup* first, sync::CommitGroup* last) {
  for (sync::CommitGroup* g = first; g != nullptr; g = g->next) {
    ++groups_since_sync_;
  }
  bool sync = options_.sync_policy == SyncPolicy::kEveryGroup ||
              (options_.sync_policy == SyncPolicy::kEveryNGroups &&
               groups_since_sync_ >= options_.sync_every_n);
  if (!sync) {
    PublishSynced(last);
    return absl::OkStatus();
  }
  // The flush stage may be writing the next group into the same file: the
  // fdatasync covers at least everything up to `last`.
  absl::Status s = TimedSync();
  if (!s.ok()) {
    sync::MutexLock l(&publish_mu_);
    sync_failed_ = true;
    return s;
  }
  synced_end_ = last->end;
  groups_since_sync_ = 0;
  // A background close may be waiting for the new file's first sync.
  if (rotation_ != nullptr) rotation_->OnSynced(last->file);
  PublishSynced(last);
  return absl::OkStatus();
}

void BinlogImpl::PublishSynced(sync::CommitGroup* last) {
  // Readers see the round here, in the sync stage, not in the commit stage
  // behind the ordered-commit callbacks of earlier rounds: a callback that
  // waits for a replica's acknowledgement (semi-sync) must not keep the
  // replica from reading the groups synced after its own. Sync rounds run
  // one at a time, in log order, so the published end only grows.
  if (options_.reader_visibility == ReaderVisibility::kAfterSync) {
    live_->Publish(last->file, last->end);
  }
}

void BinlogImpl::GroupDone(sync::CommitGroup* g) {
  if (options_.on_group_commit) {
    FillTransactions(g, &done_txns_);
    GroupCommitInfo info;
    info.file_number = g->file;
    info.start = g->start;
    info.end = g->end;
    info.transactions = static_cast<uint32_t>(done_txns_.size());
    info.group_seq = g->seq;
    info.txns = absl::MakeConstSpan(done_txns_);
    options_.on_group_commit(info);
  }
  // The group's transactions are committed (their engine commits ran in
  // the callback): later prepares may depend on them.
  commit_clock_.store((g->file << 32) | static_cast<uint64_t>(g->last_sequence_number),
                      std::memory_order_release);
}

absl::StatusOr<CommitPosition> BinlogImpl::Commit(TransactionBuffer* txn) {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("the log is closed");
  }
  if (txn == nullptr || txn->empty()) {
    return absl::InvalidArgumentError("commit of an empty transaction");
  }
  if (txn->checksums() != options_.checksums) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction buffer built with checksums ",
        txn->checksums() ? "on" : "off", " but the log has them ",
        options_.checksums ? "on" : "off"));
  }
  // A spill error or a transaction past the buffer's max_size: nothing of
  // it reaches the log.
  BINLOG_RETURN_IF_ERROR(txn->status());
  const uint64_t size = txn->appended_data().size() + txn->spilled_bytes();
  const uint64_t room = kMaxFileOffset - kEndReserve -
                        largest_header_.load(std::memory_order_relaxed) -
                        kHeaderSlack;
  if (size > room) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction of ", size,
        " bytes cannot fit in a binlog file (log_pos is 32-bit)"));
  }
  // One limit for the writer and every reader (binlog/format.h): a log
  // that accepts an event its readers reject has already lost it. And one
  // notion of a transaction for the writer and recovery: the events must
  // form complete transactions by the rules recovery applies, or recovery
  // could not tell an acknowledged transaction from damage.
  // A spilled transaction's first and spilled events were checked as
  // they were spilled (TransactionBuffer::SpillCompleted); the parser goes
  // on from there.
  TransactionBoundaryParser parser;
  size_t first_unchecked = 0;
  if (txn->spilled()) {
    parser = Txn::spill_parser(txn);
    first_unchecked = Txn::first_unchecked_event(txn);
  }
  TransactionBoundaryParser::Result last = TransactionBoundaryParser::Result::kOutside;
  const absl::string_view bytes = txn->appended_data();
  for (size_t i = first_unchecked; i < txn->appended_event_count(); ++i) {
    uint64_t esize = txn->appended_event_size(i);
    if (esize > kMaxEventSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event ", i, " (", EventTypeName(txn->appended_event_type(i)),
          ") of the transaction is ", esize,
          " bytes, above the largest event readers and recovery accept "
          "(kMaxEventSize = ", kMaxEventSize, " bytes)"));
    }
    absl::string_view ev = bytes.substr(txn->appended_event_offset(i), esize);
    last = parser.Feed(DecodeHeader(ev), EventBody(ev, options_.checksums));
    if (last == TransactionBoundaryParser::Result::kUnexpected) {
      return absl::InvalidArgumentError(absl::StrCat(
          "event ", i, " (", EventTypeName(txn->appended_event_type(i)),
          ") does not fit the transaction's events before it (transaction "
          "boundary rules of binlog/transaction_boundary.h); recovery could "
          "not tell such a transaction from damage"));
    }
  }
  if (!parser.outside()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transaction's last event (",
        EventTypeName(txn->appended_event_type(txn->appended_event_count() - 1)),
        ") does not end it (Xid, COMMIT or ROLLBACK, a DDL statement after a "
        "GTID, XA_prepare, or a Transaction_payload); recovery would cut it"));
  }
  if (Txn::identity(txn).misplaced) {
    return absl::InvalidArgumentError(
        "AppendCommitGtid must append the transaction's first event");
  }
  if (Txn::identity(txn).present &&
      Txn::identity(txn).mariadb != (options_.flavor == LogFlavor::kMariaDB)) {
    return absl::InvalidArgumentError(
        Txn::identity(txn).mariadb
            ? "AppendMariaCommitGtid needs a log with Options::flavor kMariaDB"
            : "a kMariaDB log takes AppendMariaCommitGtid, not AppendCommitGtid");
  }
  if (Txn::identity(txn).present && Txn::identity(txn).mariadb) {
    const CommitGtid& g = Txn::identity(txn).gtid;
    if (g.kind == CommitGtid::Kind::kAnonymous) {
      return absl::InvalidArgumentError(
          "MariaDB has no anonymous transactions: a MariaDB CommitGtid is "
          "kAutomatic or kAssigned");
    }
    if (!g.tag.empty()) {
      return absl::InvalidArgumentError(
          "a MariaDB CommitGtid has no GTID tag (tags are MySQL 8.4's)");
    }
    if (g.kind == CommitGtid::Kind::kAssigned && g.seq_no == 0) {
      return absl::InvalidArgumentError(
          "a MariaDB CommitGtid of kind kAssigned needs seq_no >= 1");
    }
    if (Txn::identity(txn).bad_xid) {
      return absl::InvalidArgumentError(absl::StrCat(
          "XA xid of a MariaDB CommitGtid: gtrid must be 1..64 bytes (is ",
          g.xa_gtrid.size(), "), bqual 0..64 (is ", g.xa_bqual.size(), ")"));
    }
    if (g.xa == CommitGtid::Xa::kCompleted) {
      // Recovery must learn from the statement whether the XA transaction
      // committed or rolled back (binlog/xid_recovery.h): refuse what it
      // could not read.
      XaId want;
      want.format_id = g.xa_format_id;
      want.gtrid = g.xa_gtrid;
      want.bqual = g.xa_bqual;
      bool found = false;
      for (size_t i = 0; i < txn->appended_event_count() && !found; ++i) {
        // Spilled events are not searched (a completion is a Gtid and one
        // small statement, which stay in memory; one whose statement was
        // spilled is refused as not found).
        if (!txn->appended_event_in_memory(i)) continue;
        if (txn->appended_event_type(i) != kQueryEvent) continue;
        absl::string_view ev = txn->appended_data().substr(
            txn->appended_event_offset(i), txn->appended_event_size(i));
        absl::StatusOr<QueryInfo> q =
            DecodeQuery(EventBody(ev, txn->checksums()), kQueryPostHeaderSize);
        XaId got;
        bool commit;
        found = q.ok() && ParseXaCompletion(q->query, &got, &commit) && got == want;
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a MariaDB XA completion (CommitGtid::Xa::kCompleted) of ", want.ToString(),
            " must hold its XA COMMIT or XA ROLLBACK statement for that xid"));
      }
    }
  } else if (Txn::identity(txn).present) {
    const CommitGtid& g = Txn::identity(txn).gtid;
    if (!g.tag.empty() && options_.mysql_layout != MySqlLayout::k84) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GTID tag '", g.tag.str(), "': tagged GTIDs need MySQL 8.4 files "
          "(Options::mysql_layout k84); MySQL 8.0 readers cannot read them"));
    }
    if (!g.tag.empty() && g.kind == CommitGtid::Kind::kAnonymous) {
      return absl::InvalidArgumentError("an anonymous transaction has no GTID tag");
    }
    if (g.kind == CommitGtid::Kind::kAutomatic && options_.server_uuid.IsZero()) {
      return absl::InvalidArgumentError(
          "a CommitGtid of kind kAutomatic needs Options::server_uuid");
    }
    if (g.kind == CommitGtid::Kind::kAssigned) {
      BINLOG_RETURN_IF_ERROR(gtids_.CheckAcquired(Tsid(g.uuid, g.tag), g.gno));
    }
    Txn::SetServerVersion(txn, server_version_id_);
    // The writeset travels with the identity request (to the packed form
    // too); its hashes stay in `txn` until this call returns.
    Txn::identity(txn).writeset = txn->writeset();
    Txn::identity(txn).writeset_state = txn->writeset_state();
    if (Txn::commit_parent(txn) == 0) {
      Txn::commit_parent(txn) = commit_clock_.load(std::memory_order_acquire);
    }
  }
  // Compression (if on) and the per-byte checksum work happen here, in the
  // committing thread, outside the serial stages. `w` is `txn` or its
  // packed form (Gtid + Transaction_payload), which `txn` owns.
  TransactionBuffer* w = txn;
  if (txn->spilled()) {
    // Not compressed (that would need it all in memory); streamed by the
    // flush stage through a buffer allocated here, once per log.
    std::call_once(spill_chunk_once_, [this] { spill_chunk_.reset(new char[kSpillChunk]); });
  } else if (options_.compression != io::Codec::kNone) {
    BINLOG_ASSIGN_OR_RETURN(
        w, internal::PayloadPacker::Pack(
               txn, PayloadCompression{options_.compression,
                                       options_.compression_level,
                                       options_.compression_threshold}));
  }
  if (w != txn) {
    // The packed form carries the same identity request (its Gtid event is
    // already at its final size, transaction_length counting the payload).
    Txn::identity(w) = Txn::identity(txn);
    Txn::identity(w).length_slot = false;
    Txn::commit_parent(w) = Txn::commit_parent(txn);
    Txn::cookie(w) = Txn::cookie(txn);
  }
  Txn::Seal(w);
  sync::CommitRequest req;
  req.payload = w;
  req.bytes = w->size();
  BINLOG_RETURN_IF_ERROR(pipeline_->Commit(&req));
  if (w != txn) Txn::assigned(txn) = Txn::assigned(w);
  CommitPosition pos;
  pos.file_number = req.file;
  pos.start = req.start;
  pos.end = req.end;
  pos.identity = Txn::assigned(txn);
  return pos;
}

}  // namespace internal
}  // namespace binlog
