// File: tests/testutil/format_variants.h
//
// Binlog files in layouts that servers other than the corpus's MariaDB
// 10.11 write, made for tests from real files of the corpus
// (tests/data/mariadb) or from the library's event encoders:
//
//   AsMariaDb114      a MariaDB 10.11 file rewritten as MariaDB 11.4+
//                     writes it: the server version says 11.4, and the
//                     events a transaction wrote through the server's
//                     binlog cache (Annotate_rows, Table_map, Rows, the
//                     statements' Query events) carry log_pos 0, CRC32
//                     footers recomputed. The group's Gtid and its end
//                     (Xid, COMMIT) keep their positions, as MariaDB
//                     11.4's MYSQL_BIN_LOG::write_cache leaves them.
//   MySql55RelayLog   a relay log as a MySQL 5.0-5.5 replica writes it:
//                     its own Format_description (server 5.5, no checksum
//                     algorithm byte, no relay flag), the source's Rotate
//                     with log_pos 0 and no artificial flag, the source's
//                     Format_description, then transactions carrying the
//                     source's log_pos values, and the relay log's own
//                     Rotate at the end.
//   MySql40Binlog     the start of a binlog v3 file (MySQL 4.0-4.1): a
//                     Start_v3 event, then a Query event.
//
// Thread safety: thread-safe (pure functions).

#ifndef BINLOG_TESTS_TESTUTIL_FORMAT_VARIANTS_H_
#define BINLOG_TESTS_TESTUTIL_FORMAT_VARIANTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {
namespace testutil {

struct Variant {
  std::string bytes;
  // AsMariaDb114: events whose log_pos was set to 0. MySql55RelayLog:
  // events in the file.
  uint64_t count = 0;
};

// `file` is a whole MariaDB file (magic included). DataLoss if it does not
// parse as one.
absl::StatusOr<Variant> AsMariaDb114(absl::string_view file);

// `transactions` source transactions (BEGIN, INSERT, Xid), the source's
// positions starting at `source_pos`.
Variant MySql55RelayLog(int transactions, uint32_t source_pos);

Variant MySql40Binlog();

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_FORMAT_VARIANTS_H_
