// File: binlog/gtid_scan.h (internal)
//
// The GTID state a log file carries: its header's set (Previous_gtids, or
// MariaDB's Gtid_list) and, optionally, the GTIDs of its complete
// transactions. Used by Open, purge and the GTID readers (live and at rest).

#ifndef BINLOG_BINLOG_GTID_SCAN_H_
#define BINLOG_BINLOG_GTID_SCAN_H_

#include <cstdint>
#include <string>
#include <vector>

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

// The start-file rules of the GTID readers, live and at rest (binlog/
// gtid_reader.h), over the log `dir`/`basename` whose files are `files`
// (numbers, oldest first):
// MySQL: back from the newest file, the first whose Previous_gtids the
// replica's `have` contains (every transaction before it is then in
// `have`); the oldest file if none.
absl::StatusOr<uint64_t> GtidStartFile(io::FileSystem* fs, const std::string& dir,
                                       const std::string& basename,
                                       const std::vector<uint64_t>& files,
                                       const GtidSet& have);
// MariaDB: back from the newest file, the first whose Gtid_list the
// replica's `position` covers in every domain; 0 if none does (the log
// purged transactions the replica lacks).
absl::StatusOr<uint64_t> MariaGtidStartFile(io::FileSystem* fs, const std::string& dir,
                                            const std::string& basename,
                                            const std::vector<uint64_t>& files,
                                            const MariaGtidState& position);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_SCAN_H_
