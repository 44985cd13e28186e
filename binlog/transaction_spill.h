// File: binlog/transaction_spill.h  (internal, not installed)
//
// The spill state of a TransactionBuffer (binlog/transaction.h): its
// temporary file, the sticky error, the transaction-boundary parser state
// of the spilled events (so Commit validates only the events still in
// memory), and the cursor the flush stage streams the spilled events with.
//
// Thread safety: owned by one TransactionBuffer; used by its thread, and
// by the flush leader while the buffer's Commit runs.

#ifndef BINLOG_BINLOG_TRANSACTION_SPILL_H_
#define BINLOG_BINLOG_TRANSACTION_SPILL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "binlog/transaction_boundary.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

struct SpillState {
  io::FileSystem* fs = nullptr;
  std::string dir;            // empty: never spill (max_size only)
  size_t memory_limit = 0;
  uint64_t max_size = 0;
  bool encrypt = false;       // TransactionBufferOptions::encrypt_spill
  std::unique_ptr<io::TempFile> file;  // created on first spill, kept
  absl::Status status;        // sticky until Clear()
  // Fed with the head and the spilled events, in order.
  TransactionBoundaryParser parser;
  // Streaming cursor (set by Place, advanced by NextSpilledPiece).
  uint64_t base = 0;          // file offset of the first spilled byte
  uint64_t read_off = 0;      // next byte of the spill file to read
  uint64_t big_left = 0;      // bytes left of an event larger than a piece
  uint32_t big_delta = 0;     // its checksum correction
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_SPILL_H_
