// File: binlog/payload_header.h
//
// PayloadHeader: the decoded header fields of a Transaction_payload event
// (a compressed transaction; layout in binlog/FORMAT.md). Reader hands it
// out for the payload whose inner events it is returning
// (Reader::payload_header()); the decoder is internal (binlog/payload.h).
//
// Thread safety: thread-compatible (a plain value).
// Errors: none here; a Reader reports a malformed payload as DataLoss.

#ifndef BINLOG_BINLOG_PAYLOAD_HEADER_H_
#define BINLOG_BINLOG_PAYLOAD_HEADER_H_

#include <cstddef>
#include <cstdint>

namespace binlog {

struct PayloadHeader {
  // On-disk compression type: 0 zstd (MySQL), 128 lz4 (this library's
  // extension), 255 none.
  uint64_t compression_type = 0;
  uint64_t payload_size = 0;             // bytes of the compressed data
  bool has_uncompressed_size = false;    // field 3 present
  uint64_t uncompressed_size = 0;
  size_t header_size = 0;                // bytes of the TLV header
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_PAYLOAD_HEADER_H_
