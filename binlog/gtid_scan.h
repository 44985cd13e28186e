// File: binlog/gtid_scan.h (internal)
//
// The GTID state a log file carries: its header's set (Previous_gtids, or
// MariaDB's Gtid_list) and, optionally, the GTIDs of its complete
// transactions. Used by Open, purge and the GTID readers (live and at rest).

#ifndef BINLOG_BINLOG_GTID_SCAN_H_
#define BINLOG_BINLOG_GTID_SCAN_H_

#include <string>

#include "absl/status/statusor.h"
#include "binlog/gtid.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

// The GTIDs of a log file: its Previous_gtids (the files before it) and,
// with `with_transactions`, the GTIDs of its complete transactions.
absl::StatusOr<GtidSet> FileGtids(io::FileSystem* fs, const std::string& path,
                                  bool with_transactions);

// The MariaDB GTID state of a log file: its Gtid_list (the files before it)
// and, with `with_transactions`, the GTIDs of its complete transactions.
absl::StatusOr<MariaGtidState> FileMariaGtids(io::FileSystem* fs,
                                              const std::string& path,
                                              bool with_transactions);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_SCAN_H_
