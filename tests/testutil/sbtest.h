// File: tests/testutil/sbtest.h
//
// sysbench's table sbtest1, the row shape of the oltp_* workloads that the
// benchmarks replay and the tests write: id INT, k INT, c CHAR(120),
// pad CHAR(60), all NOT NULL, utf8mb4 (collation 255, so the CHAR columns
// take 480 and 240 bytes at most), primary key id, minimal row metadata.
// One description, shared by the benchmarks' workload, the row-event
// benchmark and the row tests, so they all measure and check the same
// table.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_TESTS_TESTUTIL_SBTEST_H_
#define BINLOG_TESTS_TESTUTIL_SBTEST_H_

#include <cstdint>

#include "binlog/rows.h"

namespace binlog {
namespace testutil {

// sbtest.sbtest1 with table id `table_id`, for RowsWriter::DescribeTable.
TableDef SbtestTable(uint64_t table_id);

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_SBTEST_H_
