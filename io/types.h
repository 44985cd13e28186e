// File: io/types.h
//
// Small value types of io/ that the public options name:
//   PreallocMode  how the log prepares new binlog files
//   Codec         the compression of Transaction_payload events
// Their behavior lives with the code that uses them (io/preallocator.h,
// io/codec.h, which are internal); this header holds only the names, so
// binlog/options.h needs nothing internal.
//
// Thread safety: thread-safe (types only).

#ifndef BINLOG_IO_TYPES_H_
#define BINLOG_IO_TYPES_H_

#include <cstdint>

namespace binlog {
namespace io {

// How new binlog files are prepared (Options::preallocate).
enum class PreallocMode {
  kNone,       // no spare files
  kFallocate,  // fallocate: space reserved, extents unwritten
  kZeroFill,   // zeros written and synced
};

// Compression of Transaction_payload events (Options::compression). The
// values are this library's, not the on-disk compression type field.
enum class Codec : uint8_t {
  kNone = 0,
  kZstd = 1,  // what MySQL 8.0.20+ writes and reads
  kLz4 = 2,   // an extension only this library reads
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_TYPES_H_
