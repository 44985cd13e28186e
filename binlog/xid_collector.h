// File: binlog/xid_collector.h
//
// Internal (not installed): gathers what two-phase-commit recovery reports
// (binlog/xid_recovery.h) from the events of a scanned file, one
// transaction at a time, so that only complete transactions count.
//
// Thread safety: thread-compatible.

#ifndef BINLOG_BINLOG_XID_COLLECTOR_H_
#define BINLOG_BINLOG_XID_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/xid_recovery.h"
#include "io/codec.h"

namespace binlog {
namespace internal {

class XidCollector {
 public:
  // `query_post_header_len`: the file's FDE value for Query events.
  XidCollector(XidRecoveryScan* out, uint8_t query_post_header_len)
      : out_(out), query_post_header_len_(query_post_header_len) {}

  // Notes an event of the current transaction (a Transaction_payload is
  // expanded). DataLoss (the message says what, the caller adds file and
  // offset) for a malformed body of an event recovery must understand.
  absl::Status Add(const EventHeader& header, absl::string_view body);

  // The current transaction is complete: what it carried counts.
  // DataLoss if it was a MariaDB XA completion (FL_COMPLETED_XA) whose
  // statement does not say whether it committed or rolled back.
  absl::Status Commit();
  // The current transaction will not count (nothing to do until the next
  // Add; pending notes are dropped).
  void Drop();

 private:
  absl::Status AddOne(const EventHeader& header, absl::string_view body);

  struct PendingXa {
    XaId xid;
    XaState state;
  };

  XidRecoveryScan* out_;
  uint8_t query_post_header_len_;
  std::vector<uint64_t> xids_;
  std::vector<PendingXa> xa_;
  bool has_gtid_ = false;
  Tsid tsid_;  // UUID and tag (Gtid_tagged_log_event)
  int64_t gno_ = 0;
  bool has_maria_gtid_ = false;
  MariaGtidListEntry maria_;
  // A MariaDB Gtid flagged FL_COMPLETED_XA: its query says commit or
  // rollback.
  bool maria_completed_xa_ = false;
  XaId maria_xid_;
  io::ByteBuffer payload_;
  // out_->xa's index by XID (one record per XID, updated in log order).
  std::map<XaId, size_t> xa_index_;
  size_t indexed_ = 0;      // out_->xa[0, indexed_) are in xa_index_
  std::string query_text_;  // an expanded Query_compressed statement
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_XID_COLLECTOR_H_
