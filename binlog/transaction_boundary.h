// File: binlog/transaction_boundary.h
//
// TransactionBoundaryParser: finds where transactions start and end in a
// stream of events from MySQL (5.6 - 9.x) or MariaDB (10.x, 11.x) binlogs.
// Recovery uses it to find the end of the last complete transaction; readers
// and binlogtool use it to count and delimit transactions.
//
// Rules (binlog-format reference, section 8):
//   MySQL:   [Gtid|Anonymous_gtid] then BEGIN ... (Xid | COMMIT | ROLLBACK |
//            XA_prepare), or one DDL/other statement, or one
//            Transaction_payload. Intvar/Rand/User_var precede a statement.
//   MariaDB: Gtid(162) starts a group; with FL_STANDALONE the group is the
//            next statement; otherwise it ends at Xid, COMMIT/ROLLBACK
//            query, or XA_prepare.
//   File-level events (FDE, Rotate, Stop, Previous_gtids, Gtid_list,
//   Binlog_checkpoint, ...) belong to no transaction.
//
// Thread safety: thread-compatible.

#ifndef BINLOG_BINLOG_TRANSACTION_BOUNDARY_H_
#define BINLOG_BINLOG_TRANSACTION_BOUNDARY_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "binlog/event.h"

namespace binlog {

class TransactionBoundaryParser {
 public:
  enum class Result {
    kOutside,      // the event belongs to no transaction (file-level event)
    kStarted,      // the event opened a transaction that is still open
    kInside,       // the event is inside an open transaction
    kEnded,        // the event completed a transaction
    kUnexpected,   // the event does not fit (e.g. GTID inside a transaction,
                   // unknown non-ignorable type). The parser recovers so a
                   // caller can continue: a GTID opens the new transaction
                   // (as MySQL's parser does); anything else leaves it
                   // outside any transaction.
  };

  // `query_post_header_len`: the file's FDE entry for QUERY_EVENT.
  explicit TransactionBoundaryParser(uint8_t query_post_header_len = 13)
      : query_phl_(query_post_header_len) {}

  void set_query_post_header_len(uint8_t n) { query_phl_ = n; }

  // Classifies one event. `body` is the event body (no header, no footer).
  Result Feed(const EventHeader& header, absl::string_view body);

  // True when no transaction is open.
  bool outside() const { return state_ == State::kNone; }

  // Forgets any open transaction (for example at a new file).
  void Reset() {
    state_ = State::kNone;
    maria_standalone_ = false;
  }

 private:
  enum class State { kNone, kGtid, kDdl, kDml };
  uint8_t query_phl_;
  State state_ = State::kNone;
  bool maria_standalone_ = false;  // MariaDB group with FL_STANDALONE
};

const char* BoundaryResultName(TransactionBoundaryParser::Result r);

}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_BOUNDARY_H_
