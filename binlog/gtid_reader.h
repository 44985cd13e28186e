// File: binlog/gtid_reader.h
//
// GtidReader: what a source does for a replica that connects with the set
// of GTIDs it already has (MySQL's SOURCE_AUTO_POSITION, COM_BINLOG_DUMP_GTID):
// start at the file where the first missing transaction can be, and skip
// every transaction whose GTID the replica has.
//
// The start file is found as MySQL finds it: going back from the newest
// file, the first file whose Previous_gtids is contained in the replica's
// set (every transaction before it is then in the set). Files and events
// that belong to no transaction (Format_description, Previous_gtids,
// Rotate, Stop) are returned; transactions are returned whole or not at
// all; anonymous transactions are always returned.
//
// MariaDB-flavor logs (Binlog::NewMariaGtidReader), as MariaDB 10.11
// serves a replica that connects with its GTID position (one D-S-N per
// domain, @@gtid_slave_pos): the start file is, going back from the
// newest file, the first whose Gtid_list has, in every domain it lists, a
// GTID the replica's position contains (MariaDB's gtid_find_binlog_file).
// Then, per domain, transactions are skipped until the replica's own GTID
// of that domain has gone by (MariaDB stops skipping a domain there, even
// for lower seq_nos logged later without gtid_strict_mode); a domain the
// replica has no position in is sent whole; a lower seq_no logged after a
// higher one (no gtid_strict_mode) is sent too, as MariaDB sends it.
// A log may repeat transactions: a mirror copy's first file from a new
// server after a failover (binlog/mirror_log.h) starts with transactions
// the copy held already. MySQL: a transaction whose GTID was returned
// already is skipped. MariaDB: in a file whose Format_description was
// written by another server than the previous file's, per domain up to the
// last GTID read before that file, a group whose exact GTID (domain,
// server id, seq_no) was read already (returned, or skipped as the
// replica's) is skipped; nothing else is. Anonymous transactions (no GTID)
// are always returned, repeated ones too: a copy's repeated prefix returns
// them twice.
// Errors: FailedPrecondition
// when the log purged transactions the replica lacks (MariaDB's "Could not
// find GTID state requested by slave in any binlog files") or when the
// replica's GTID is not in the log's binlog state (MariaDB's "which is not
// in the master's binlog").
//
// The GTID index (binlog/gtid_index.h, FORMAT.md "GTID index files"):
// every factory below and Binlog's look, after picking the start file, for
// the index beside it (ReaderOptions::gtid_index_interval; 0: none). For a
// closed start file (not the newest) a missing index, or one that does not
// check out, is built by reading the file once and written back through the
// FileSystem (a failed write is ignored). With an index the reader returns
// the start file's events the replica needs whatever its position (the
// file-level events, anonymous transactions), then continues at the index
// entry nearest the replica's position: exactly the events of reading the
// file from its start, in far fewer reads, for an index the library wrote.
// The CRCs of an index are not keyed: against a crafted one the reader
// checks only the events where it jumps (at the entry, and where each gap
// jumped over begins and ends), not a transaction inside a gap, so an
// entry whose GTID state leaves one out makes it skip that transaction
// (binlog/gtid_index.h; VerifyGtidIndexFile checks the rest). The newest
// file may have no index: it is read from its start.
//
// Transaction_payload events (compressed transactions) under PayloadMode::
// kDecoded: the payload ends its transaction, as the payload event does
// under kRaw.
//
// Errors (from Binlog::NewGtidReader): FailedPrecondition when the
// replica lacks GTIDs the log has purged (MySQL's
// ER_SOURCE_HAS_PURGED_REQUIRED_GTIDS; the message lists them) or has
// GTIDs of this server's UUID that the log never had
// (ER_REPLICA_HAS_MORE_GTIDS_THAN_SOURCE). Next() returns what
// Reader::Next() returns.
//
// Thread safety: not thread-safe (one reader per thread), as Reader.
// Lifetime: as Reader (a tailing reader may outlive its Binlog).

#ifndef BINLOG_BINLOG_GTID_READER_H_
#define BINLOG_BINLOG_GTID_READER_H_

#include <map>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"
#include "binlog/gtid.h"
#include "binlog/options.h"
#include "io/file_system.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"

namespace binlog {

class GtidReader {
 public:
  GtidReader(std::unique_ptr<Reader> reader, GtidSet have);
  // A MariaDB replica at GTID position `position`.
  GtidReader(std::unique_ptr<Reader> reader, MariaGtidState position);

  // The next event the replica lacks (see the file comment). Events of a
  // skipped transaction are read and dropped.
  absl::Status Next(Event* event);
  absl::Status WaitForMore(absl::Time deadline) {
    return reader_->WaitForMore(deadline);
  }
  Reader* reader() { return reader_.get(); }
  // Continues with `reader`, which must start where reader() stopped
  // (reader()->file_number() and position(), an event boundary), keeping
  // what has been skipped and which MariaDB domains have been reached. For
  // a process that follows files at rest another process is writing: an
  // at-rest Reader ends at the last complete event, and a fresh one opened
  // at that point later sees what was written since.
  void ResumeWith(std::unique_ptr<Reader> reader) { reader_ = std::move(reader); }
  // Transactions skipped so far because the replica has them (with a GTID
  // index: counted as the full scan would, including the ones jumped over).
  uint64_t skipped_transactions() const { return skipped_; }

  // Opens a reader of file `file` at event boundary `offset`.
  using ReaderOpener =
      std::function<absl::StatusOr<std::unique_ptr<Reader>>(uint64_t file, uint64_t offset)>;
  // For the library's factories (the GTID index): in file `file`, which
  // reader() reads from its first event, after the event that ends at
  // jumps[i].first, continue at jumps[i].second (with a reader `open`
  // returns); at the last jump the MariaDB domains `reached` count as
  // reached and `skipped` transactions as skipped. A jump whose event never
  // comes is not made (the file is then read whole).
  void SetJumps(uint64_t file, std::vector<std::pair<uint64_t, uint64_t>> jumps,
                std::set<uint32_t> reached, uint64_t skipped, ReaderOpener open);
  // Where the last jump of SetJumps went, once made (0: none made).
  uint64_t jumped_to() const { return jumped_to_; }
  // The jumps SetJumps planned (each one a reader opened).
  size_t planned_jumps() const { return jumps_.size(); }

 private:
  absl::Status MaybeJump();

  std::unique_ptr<Reader> reader_;
  const GtidSet have_;
  const bool mariadb_ = false;
  const MariaGtidState position_;
  // MariaDB: domains whose replica GTID has gone by (sent whole from there).
  std::set<uint32_t> reached_;
  // What was returned, so that a transaction a log repeats (a mirror's
  // first file from a new server after a failover, binlog/mirror_log.h)
  // is returned once. MySQL: the GTIDs returned.
  GtidSet returned_;
  // MariaDB: seq_nos as runs (first -> last), so that a server's growing
  // seq_nos take one entry.
  struct SeqNos {
    std::map<uint64_t, uint64_t> runs;
    bool Contains(uint64_t n) const;
    void Add(uint64_t n);
  };
  // MariaDB: per (domain, server id) the seq_nos of the groups read
  // (returned, or skipped as the replica's); per domain the last GTID read;
  // the writer of the file being read (its Format_description's server
  // id); and, in a file another server wrote than the previous one, per
  // domain the GTID up to which groups already read are repeats.
  std::map<std::pair<uint32_t, uint32_t>, SeqNos> read_;
  std::map<uint32_t, MariaGtidListEntry> last_read_;
  uint32_t file_server_ = 0;
  std::map<uint32_t, MariaGtidListEntry> repeats_until_;
  TransactionBoundaryParser parser_;
  bool skipping_ = false;
  uint64_t skipped_ = 0;
  // SetJumps.
  uint64_t jump_file_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> jumps_;
  size_t next_jump_ = 0;
  std::set<uint32_t> jump_reached_;
  uint64_t jump_skipped_ = 0;
  // skipped_ when SetJumps ran: the last jump makes it this plus
  // jump_skipped_ (the transactions read between jumps are among those).
  uint64_t jump_skipped_base_ = 0;
  ReaderOpener open_;
  uint64_t jumped_to_ = 0;
  // The last event read: its file, its end, and whether it ended its
  // payload's inner events (or was no inner event).
  uint64_t last_file_ = 0;
  uint64_t last_end_ = 0;
  bool last_whole_ = false;
  bool fresh_reader_ = false;  // opened by a jump, no event read yet
};

// The GTID state of a log read from its files at rest (the log of another
// process, or a closed one; `basename`'s index lists the files): for
// MySQL-flavor files, executed = the last file's Previous_gtids plus the
// GTIDs of its complete transactions, purged = the first file's
// Previous_gtids; for MariaDB-flavor files the same from Gtid_list events.
// DataLoss when a header's GTID state cannot be decoded; NotFound without
// an index.
struct AtRestGtidState {
  GtidSet executed;
  GtidSet purged;
  MariaGtidState maria_state;
  MariaGtidState maria_purged;
  std::vector<uint64_t> files;  // the indexed file numbers, oldest first
};
absl::StatusOr<AtRestGtidState> ReadAtRestGtidState(const std::string& dir,
                                                   const std::string& basename,
                                                   LogFlavor flavor,
                                                   io::FileSystem* fs = nullptr);

// GtidReaders over files at rest (Reader::OpenDirectory), with the start
// file and the errors of Binlog::NewGtidReader / NewMariaGtidReader, from
// `state` (ReadAtRestGtidState). `server_uuid` is the UUID whose GTIDs the
// replica may not have more of than the log (zero: not checked). The
// FailedPrecondition messages begin "purged:" when the log purged
// transactions the replica lacks and "ahead:" when the replica has
// transactions the log never had, so a server can tell them apart.
absl::StatusOr<std::unique_ptr<GtidReader>> OpenGtidReaderAtRest(
    const std::string& dir, const std::string& basename,
    const AtRestGtidState& state, const GtidSet& have, const Uuid& server_uuid,
    const ReaderOptions& options, io::FileSystem* fs = nullptr);
absl::StatusOr<std::unique_ptr<GtidReader>> OpenMariaGtidReaderAtRest(
    const std::string& dir, const std::string& basename,
    const AtRestGtidState& state, const MariaGtidState& position,
    const ReaderOptions& options, io::FileSystem* fs = nullptr);

// The GTID index file of the binlog file at `binlog_path`: `<file>.gidx`
// beside it (FORMAT.md, "GTID index files"). Derived data: a reader checks
// its structure and the binlog file's events where it jumps, and rebuilds
// an index that does not check out; VerifyGtidIndexFile checks every entry
// against the file. Removing it loses nothing.
std::string GtidIndexFilePath(const std::string& binlog_path);

// What VerifyGtidIndexFile finds.
struct GtidIndexCheck {
  enum class Verdict {
    kChecksOut,
    // An index of an older format version: GTID readers refuse it and
    // rebuild it as a missing one (not a bad index).
    kOlderVersion,
    kBad,  // does not check out
  };
  Verdict verdict = Verdict::kChecksOut;
  // kOlderVersion: its version and this library's; kBad: the first
  // discrepancy; kChecksOut: "".
  std::string what;
};

// For verifiers (binlogtool verify): checks the GTID index file beside the
// binlog file `binlog_path` against a scan of that file: its format
// version, its structure and CRCs, its limits, that it is this file's
// (size, Format_description, flavor), and that every entry is the one the
// library's builder writes there (at a GTID event that starts a
// transaction, with the GTID state, the count of GTID transactions and the
// returned ranges a scan has there). Reads the whole binlog file (not for
// an index of an older format version). Errors: NotFound when there is no
// index; the binlog file's errors (I/O; DataLoss or Unimplemented when its
// Format_description does not read); I/O errors reading the index.
// `options` supplies keys (MariaDB-encrypted files). Thread-safe.
absl::StatusOr<GtidIndexCheck> VerifyGtidIndexFile(io::FileSystem* fs,
                                                   const std::string& binlog_path,
                                                   const ReaderOptions& options);

}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_READER_H_
