// File: benchmarks/workload.h
//
// Realistic row-based transactions for the benchmarks: what a MySQL 8.0
// server with binlog_format=ROW, binlog_row_image=FULL and
// binlog_row_metadata=MINIMAL writes for
//
//   sysbench  oltp_write_only on sbtest1 (id INT, k INT, c CHAR(120),
//             pad CHAR(60), utf8mb4, all NOT NULL): per row one statement,
//             cycling through UPDATE k=k+1, UPDATE c=<new>, DELETE, INSERT
//             (sysbench's index update, non-index update, delete+insert).
//             c and pad are sysbench's digit groups ("###########-...").
//   wide      an orders-like table: id BIGINT, customer_id INT, status
//             TINYINT, email VARCHAR(128), name VARCHAR(64), created_at
//             DATETIME, updated_at DATETIME(6) NULL, amount DOUBLE, note
//             TEXT NULL, attrs JSON NULL; 40% updates (status, updated_at,
//             amount, attrs change), 40% inserts, 20% deletes.
//   random    commit_bench's original transaction: BEGIN, a Rows_query
//             event of `random_payload` random printable bytes, Xid (the
//             figures of the group-commit work use it).
//
// Each transaction: Anonymous_gtid (MySQL 8.0 layout: logical clocks,
// immediate commit timestamp, transaction_length, server version), Query
// BEGIN with the status variables MySQL 8.0 writes, then per statement a
// Table_map and one Write/Update/Delete_rows v2 event (types 30/31/32)
// with STMT_END_F, then Xid. 1 to 20 rows per transaction (options).
//
// Layouts follow the binlog-format reference (sections 6.4-6.8); the
// Table_map and Rows events come from binlog::RowsWriter.
// Simplified, on purpose (sizes and entropy are what matter here):
//   - transaction_length is always a 4-byte packed integer (0xfd + 3
//     bytes); MySQL uses the shortest form (3 bytes below 64 KiB): 1 byte
//     of difference.
//   - JSON values are stored as their text (MySQL stores its binary JSON
//     format, of similar size and entropy); DOUBLE stands in for DECIMAL.
//   - Rows are drawn at random rather than read from a table, so an
//     UPDATE's before image is not a row an earlier transaction wrote;
//     within one row change before and after images share what they
//     share in MySQL (an UPDATE k=k+1 changes 4 bytes of 190).
//   - Table ids, thread ids and xids count up per generator.
//
// Thread safety: thread-compatible; use one generator per thread. After its
// first transactions Next() allocates nothing (it writes into the
// TransactionBuffer in place).

#ifndef BINLOG_BENCHMARKS_WORKLOAD_H_
#define BINLOG_BENCHMARKS_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"

namespace binlog {
namespace bench {

enum class Workload { kRandom, kSysbench, kWide };

// "random", "sysbench", "wide".
const char* WorkloadName(Workload w);
bool ParseWorkload(absl::string_view name, Workload* w);

struct WorkloadOptions {
  Workload kind = Workload::kSysbench;
  // Rows per transaction, uniformly in [min_rows, max_rows] (1..1000).
  int min_rows = 1;
  int max_rows = 20;
  // kRandom: bytes of Rows_query text (>= 1).
  size_t random_payload = 256;
  uint32_t server_id = 1;
  uint64_t seed = 1;
  // Header timestamps; 0: the wall clock at construction.
  uint32_t timestamp = 0;
};

class WorkloadGenerator {
 public:
  explicit WorkloadGenerator(const WorkloadOptions& options);

  // Clears `txn` and appends the next transaction.
  void Next(TransactionBuffer* txn);

  uint64_t transactions() const { return seq_; }

 private:
  uint64_t Rand();
  uint64_t Uniform(uint64_t n) { return Rand() % n; }
  void Gtid(TransactionBuffer* txn, uint64_t length);
  void Begin(TransactionBuffer* txn);
  void Xid(TransactionBuffer* txn);
  void DescribeTables();
  void SysbenchStatement(TransactionBuffer* txn, int i);
  void WideStatement(TransactionBuffer* txn);
  void RandomBody(TransactionBuffer* txn);

  WorkloadOptions o_;
  uint64_t rng_;
  uint64_t seq_ = 0;
  uint64_t xid_ = 0;
  uint32_t ts_;
  std::string scratch_;  // the strings of one statement's images (reused)
  // Writes the Table_map and Rows events (binlog/rows_writer.h).
  std::unique_ptr<RowsWriter> rows_;
  RowsWriter::TableHandle sbtest_ = 0;
  RowsWriter::TableHandle wide_ = 0;
  std::unique_ptr<TransactionBuffer> body_;  // the events after the Gtid
};

// The bytes MySQL compresses for a transaction: every event after the
// first (the Gtid event), without checksum footers, with event_size
// adjusted and log_pos 0. Appends to `*out`.
void AppendInnerStream(const TransactionBuffer& txn, std::string* out);

}  // namespace bench
}  // namespace binlog

#endif  // BINLOG_BENCHMARKS_WORKLOAD_H_
