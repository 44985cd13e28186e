// File: binlog/writeset.h
//
// WRITESET dependency tracking: the logical clock (last_committed) of a
// MySQL transaction computed from the keys of the rows it changed, as MySQL
// 8.4 does for every transaction (its only mode since 8.4 removed
// binlog_transaction_dependency_tracking).
//
//   WritesetState     what a transaction's writeset says about its changes
//   WritesetHistory   the history of recent writesets (hash -> sequence
//                     number) that turns a writeset into last_committed
//   WritesetKeySeed,  the hash function of unique-key values, shared by
//   WritesetMix, ...  RowsWriter (binlog/rows_writer.h) and callers that
//                     write their own row events
//
// The rules (MySQL 8.4, sql/rpl_trx_tracking.cc, in our words)
// -------------------------------------------------------------
// Every transaction first gets a commit-order clock: its sequence_number in
// the file (1, 2, ... restarting in each file) and a commit-order
// last_committed (the newest transaction known committed when it prepared,
// or sequence_number - 1 for a transaction that must run alone). WRITESET
// then tries to lower last_committed:
//
//   - The writeset of a transaction is one 64-bit hash per unique key (the
//     primary key and every UNIQUE key whose columns are all non-NULL) of
//     every row image it wrote: an INSERT's row, an UPDATE's before AND
//     after images, a DELETE's row.
//   - The history maps a hash to the sequence_number of the last
//     transaction that wrote it, and has a floor (MySQL's
//     m_writeset_history_start): the sequence number before which the
//     history knows nothing.
//   - last_committed = min(commit-order last_committed,
//                          max(floor, history[h] for each h of the
//                              writeset found in the history and older than
//                              this transaction)).
//     The floor stands for every transaction the history forgot: a
//     transaction may never be placed before one whose keys are no longer
//     known. The commit-order value stays an upper bound: writeset only
//     ever adds parallelism.
//   - Every hash of the transaction is then recorded with its
//     sequence_number (an existing entry is overwritten; a new one is
//     inserted unless the history would pass its size, below).
//   - History size (binlog_transaction_dependency_history_size, default
//     25000, 1..1000000): when the entries present plus the transaction's
//     hashes would pass it, the transaction still uses the history as it
//     is (lookups, and updates of entries already there), new hashes are
//     not inserted, and afterwards the history is cleared with floor = this
//     transaction's sequence_number.
//   - A transaction whose changes the writeset does not describe (DDL, an
//     isolated transaction, statement-based events, a table referenced by a
//     foreign key, a writeset larger than the history size, or simply
//     nothing declared) keeps its commit-order last_committed, and the
//     history is cleared with floor = its sequence_number: every later
//     transaction depends on it.
//   - A transaction that changed rows of a table without a primary key has
//     "missing keys": it keeps its commit-order last_committed, but the
//     history is NOT cleared; the hashes it has (rows of keyed tables) are
//     recorded as usual. This is safe because every later transaction that
//     touches the keyless table has missing keys too, and so falls back to
//     commit order itself.
//   - Rotation: sequence numbers restart in every file, so the history is
//     cleared with floor 1 (MySQL's choice: the first transaction of the
//     new file, sequence_number 1, is then the oldest possible parent; its
//     own commit-order last_committed is 0). Replicas treat a file
//     boundary as a barrier (their clocks restart), so nothing of the
//     previous file is needed.
//
// Thread safety: WritesetHistory is not thread-safe. It belongs to the log's
// serial section (the one thread that assigns sequence numbers in commit
// order); no lock is taken. The hash functions are pure.
// Errors: Create refuses a history size out of range (InvalidArgument).
// Allocation: the history's table is allocated once by Create; Assign and
// Clear never allocate.

#ifndef BINLOG_BINLOG_WRITESET_H_
#define BINLOG_BINLOG_WRITESET_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace binlog {

// binlog_transaction_dependency_history_size: MySQL's default and range.
inline constexpr size_t kDefaultWritesetHistorySize = 25000;
inline constexpr size_t kMaxWritesetHistorySize = 1000000;

// What a transaction's writeset says about the rows it changed.
enum class WritesetState : uint8_t {
  // Nothing usable: no writeset was declared, or it was declared unusable
  // (DDL, statements, foreign-key parents, too many hashes). Commit order;
  // the history is cleared (every later transaction depends on this one).
  kNone,
  // The hashes cover every row the transaction changed (an empty writeset
  // declared complete means it changed none).
  kComplete,
  // Rows of a table without a primary key were changed: commit order for
  // this transaction, its hashes are still recorded, the history is kept.
  kMissingKeys,
};

// WritesetHistory
//
// The recent writesets of one log, as an open-addressing hash table of
// (hash, sequence_number) entries allocated once, with room for
// `history_size` entries at a load factor of at most 1/2. Not
// std::unordered_map: that allocates a node per inserted key and frees them
// all on every clear, in the log's serial section, where every nanosecond
// is paid by every committer; here an insert is a store, and Clear is O(1)
// (entries carry a generation; a clear starts a new one), which matters
// because a stream of DDL or keyless transactions clears the history at
// every commit. Lookups and inserts are O(1) expected per hash, so Assign
// is O(number of hashes).
//
// Example (the log's serial section, for each transaction in commit order):
//   int64_t lc = history.Assign(txn.writeset(), txn.writeset_state(),
//                               sequence_number, commit_order_lc);
// and at rotation, before the new file's first transaction:
//   history.StartFile();
class WritesetHistory {
 public:
  // InvalidArgument unless 1 <= history_size <= kMaxWritesetHistorySize.
  static absl::StatusOr<WritesetHistory> Create(
      size_t history_size = kDefaultWritesetHistorySize);
  WritesetHistory(WritesetHistory&&) = default;
  WritesetHistory& operator=(WritesetHistory&&) = default;

  // The last_committed of the transaction with `sequence_number` in the
  // current file, whose commit-order last_committed is
  // `commit_order_last_committed`, following the rules in the file
  // comment; records its hashes. Duplicate hashes are allowed (they cost a
  // lookup each). A sequence number of 2^48 or more cannot be recorded
  // and is treated as kNone.
  // REQUIRES: 1 <= sequence_number; sequence numbers increase from call to
  // call within a file; 0 <= commit_order_last_committed < sequence_number.
  int64_t Assign(absl::Span<const uint64_t> hashes, WritesetState state,
                 int64_t sequence_number, int64_t commit_order_last_committed);

  // Forgets every entry; later transactions get last_committed >= floor.
  void Clear(int64_t floor);
  // At rotation, before the new file's first transaction: Clear(1).
  void StartFile() { Clear(1); }

  // Entries recorded since the last clear.
  size_t size() const { return size_; }
  // The history size it was created with.
  size_t history_size() const { return history_size_; }
  // The current floor (see the file comment).
  int64_t floor() const { return floor_; }
  // Clears so far, by Clear or by the rules of Assign (for tests and
  // statistics).
  uint64_t clears() const { return clears_; }

 private:
  // One slot: the hash and, packed in one word, the generation that wrote
  // it (top 16 bits) and the sequence number (low 48 bits). A slot whose
  // generation is not the current one is empty, so a clear only has to
  // bump the generation; generation 0 is never current, so the zeroed
  // table starts empty.
  struct Slot {
    uint64_t hash;
    uint64_t value;
  };
  static constexpr int kSeqBits = 48;
  static constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;

  WritesetHistory(size_t history_size, int bits);
  size_t Home(uint64_t hash) const {
    // Fibonacci hashing: the caller's hashes need not be well mixed.
    return static_cast<size_t>((hash * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  size_t history_size_ = 0;
  int shift_ = 64;  // 64 - log2(slot count)
  size_t mask_ = 0;
  std::unique_ptr<Slot[]> slots_;
  uint64_t generation_ = 1;  // in the top 16 bits of Slot::value
  size_t size_ = 0;
  int64_t floor_ = 0;
  uint64_t clears_ = 0;
};

// ---------------------------------------------------------------------------
// The hash of a unique-key value
//
// A key's hash is built as
//   h = WritesetKeySeed(schema, table, key_number)
//   for each key part in key order: h = WritesetMix(h, part)
// where `part` is WritesetBytes(canonical bytes) for strings and the value
// itself for integers (binlog/rows_writer.h lists the canonical form of
// every column type). key_number is 0 for the primary key and i + 1 for
// TableDef::unique_keys[i].
//
// Why this is safe: the hashes never leave the process (they are not
// written to the file), so they need only agree with each other within one
// log, and they do because the function is fixed (no per-process seed: the
// same key gives the same hash in every run). Equal keys always give equal
// hashes, because each part's canonical form is the same for every value
// the key treats as equal (or coarser). Two different keys can collide
// (probability about 2^-64 per pair); a collision only makes two
// independent transactions look dependent, which costs parallelism on the
// replica and never correctness. Not a cryptographic hash: a client that
// crafts colliding keys can only slow its own replica's parallelism down.

// Mixes `v` into `h` (order-sensitive).
inline uint64_t WritesetMix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 32;
  return x;
}

// A 64-bit digest of `data` (length included), for string key parts.
uint64_t WritesetBytes(const char* data, size_t size);
inline uint64_t WritesetBytes(absl::string_view s) {
  return WritesetBytes(s.data(), s.size());
}

// The starting value of the hashes of key `key_number` of schema.table.
uint64_t WritesetKeySeed(absl::string_view schema, absl::string_view table,
                         uint32_t key_number);

}  // namespace binlog

#endif  // BINLOG_BINLOG_WRITESET_H_
