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
// replica has no position in is sent whole. Errors: FailedPrecondition
// when the log purged transactions the replica lacks (MariaDB's "Could not
// find GTID state requested by slave in any binlog files") or when the
// replica's GTID is not in the log's binlog state (MariaDB's "which is not
// in the master's binlog").
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

#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "binlog/gtid.h"
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
  // Transactions skipped so far because the replica has them.
  uint64_t skipped_transactions() const { return skipped_; }

 private:
  std::unique_ptr<Reader> reader_;
  const GtidSet have_;
  const bool mariadb_ = false;
  const MariaGtidState position_;
  // MariaDB: domains whose replica GTID has gone by (sent whole from there).
  std::set<uint32_t> reached_;
  TransactionBoundaryParser parser_;
  bool skipping_ = false;
  uint64_t skipped_ = 0;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_READER_H_
