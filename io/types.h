// File: io/types.h
//
// Small value types of io/ that the public options name:
//   PreallocMode  how the log prepares new binlog files
//   Codec         the compression of Transaction_payload events
//   SequentialReaderStats  I/O counters of a reader (Reader::io_stats())
// and their names (PreallocModeName, CodecName, ParseCodec), for flags and
// messages. Their behavior lives with the code that uses them
// (io/preallocator.h, io/codec.h, io/sequential_reader.h, which are
// internal); this header holds only the types, so the public headers need
// nothing internal.
//
// Thread safety: thread-safe (types and pure functions).
// Errors: none (ParseCodec returns false for an unknown name).

#ifndef BINLOG_IO_TYPES_H_
#define BINLOG_IO_TYPES_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace binlog {
namespace io {

// How new binlog files are prepared (Options::preallocate).
enum class PreallocMode {
  kNone,       // no spare files
  kFallocate,  // fallocate: space reserved, extents unwritten
  kZeroFill,   // zeros written and synced
};

// "none", "fallocate", "zerofill".
const char* PreallocModeName(PreallocMode m);

// Compression of Transaction_payload events (Options::compression). The
// values are this library's, not the on-disk compression type field.
enum class Codec : uint8_t {
  kNone = 0,
  kZstd = 1,  // what MySQL 8.0.20+ writes and reads
  kLz4 = 2,   // an extension only this library reads
};

// "none", "zstd", "lz4".
const char* CodecName(Codec codec);
// Parses a CodecName; false for anything else.
bool ParseCodec(absl::string_view name, Codec* codec);

// I/O counters of a binlog::Reader's read-ahead (Reader::io_stats()), since
// the reader was created. Read calls and bytes count both the reading
// thread and the prefetch helper.
struct SequentialReaderStats {
  uint64_t read_calls = 0;        // RandomAccessFile::Read calls
  uint64_t bytes_read = 0;        // bytes those calls returned
  uint64_t prefetch_reads = 0;    // of the read calls, made by the helper
  uint64_t prefetch_hits = 0;     // a Peek needed a prefetched window: ready
  uint64_t prefetch_waits = 0;    // ... still being read: the Peek waited
  uint64_t prefetch_wait_us = 0;  // total time of those waits
  uint64_t prefetch_unused = 0;   // prefetched windows thrown away (seek,
                                  // reset, error, limit lowered)
  uint64_t bytes_copied = 0;      // bytes copied to assemble ranges
  uint64_t advise_calls = 0;      // RandomAccessFile::Advise calls
  uint64_t read_errors = 0;       // failed Read calls (both threads)
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_TYPES_H_
