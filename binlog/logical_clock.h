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
// Under Options::DependencyTracking::kWriteset, last_committed is then
// lowered by the transaction's writeset (binlog/writeset.h): the newest
// earlier transaction of the file that wrote one of the same keys.
//
// Thread safety: not thread-safe: only the pipeline's flush stage (one
// thread at a time) uses it.

#ifndef BINLOG_BINLOG_LOGICAL_CLOCK_H_
#define BINLOG_BINLOG_LOGICAL_CLOCK_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/types/span.h"
#include "binlog/writeset.h"

namespace binlog {
namespace internal {

class LogicalClock {
 public:
  // `writeset`: the history WRITESET tracking uses (null: commit order).
  explicit LogicalClock(std::unique_ptr<WritesetHistory> writeset = nullptr)
      : writeset_(std::move(writeset)) {}

  // A new file starts: clocks restart in every file (as MySQL's), and the
  // writeset history is cleared.
  void StartFile(uint64_t number) {
    file_ = number;
    seq_ = 0;
    last_isolated_ = 0;
    if (writeset_ != nullptr) writeset_->StartFile();
  }

  // The next transaction's sequence_number and last_committed.
  // `commit_parent` is (file << 32) | sequence_number of the clock at
  // prepare (0: not captured).
  // `hashes` and `state`: the transaction's writeset (ignored under commit
  // order).
  void Next(uint64_t commit_parent, bool isolated, absl::Span<const uint64_t> hashes,
            WritesetState state, int64_t* sequence_number, int64_t* last_committed) {
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
    if (writeset_ != nullptr) {
      // An isolated transaction has no usable writeset: it keeps seq - 1
      // and clears the history, so every later one depends on it.
      lc = writeset_->Assign(hashes, isolated ? WritesetState::kNone : state, seq, lc);
    }
    *sequence_number = seq;
    *last_committed = lc;
  }

  // The sequence_number of the last transaction given one in this file.
  int64_t last_sequence_number() const { return seq_; }

  // The writeset history (null under commit order).
  const WritesetHistory* writeset() const { return writeset_.get(); }

 private:
  uint64_t file_ = 0;
  int64_t seq_ = 0;
  int64_t last_isolated_ = 0;
  std::unique_ptr<WritesetHistory> writeset_;
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOGICAL_CLOCK_H_
