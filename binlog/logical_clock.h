// File: binlog/logical_clock.h (internal)
//
// LogicalClock: the logical clock of the active file that the flush stage
// assigns in commit order, as MySQL 8.0's commit-order dependency tracking
// does: sequence_number counts the file's transactions from 1, and
// last_committed is the commit-order clock the transaction captured when it
// prepared (TransactionBuffer::set_commit_parent), bounded so that a
// transaction never depends on itself or a later one and never runs before
// the last one that had to run alone (CommitGtid::isolated, DDL).
//
// Thread safety: not thread-safe: only the pipeline's flush stage (one
// thread at a time) uses it.

#ifndef BINLOG_BINLOG_LOGICAL_CLOCK_H_
#define BINLOG_BINLOG_LOGICAL_CLOCK_H_

#include <cstdint>

namespace binlog {
namespace internal {

class LogicalClock {
 public:
  // A new file starts: clocks restart in every file (as MySQL's).
  void StartFile(uint64_t number) {
    file_ = number;
    seq_ = 0;
    last_isolated_ = 0;
  }

  // The next transaction's sequence_number and last_committed.
  // `commit_parent` is (file << 32) | sequence_number of the clock at
  // prepare (0: not captured).
  void Next(uint64_t commit_parent, bool isolated, int64_t* sequence_number,
            int64_t* last_committed) {
    const int64_t seq = ++seq_;
    // last_committed: the commit-order clock captured at prepare, if it is
    // in this file; never at or past this transaction; never before the
    // last transaction that had to run alone; seq - 1 for one that must.
    int64_t lc = (commit_parent >> 32) == file_
                     ? static_cast<int64_t>(commit_parent & 0xFFFFFFFFu)
                     : 0;
    if (lc >= seq) lc = seq - 1;
    if (lc < last_isolated_) lc = last_isolated_;
    if (isolated) {
      lc = seq - 1;
      last_isolated_ = seq;
    }
    *sequence_number = seq;
    *last_committed = lc;
  }

  // The sequence_number of the last transaction given one in this file.
  int64_t last_sequence_number() const { return seq_; }

 private:
  uint64_t file_ = 0;
  int64_t seq_ = 0;
  int64_t last_isolated_ = 0;
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOGICAL_CLOCK_H_
