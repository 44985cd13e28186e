// File: binlog/reader_buffers.h  (internal)
//
// Reader::Buffers: the members of a Reader whose types are internal (the
// read-ahead reader and the payload buffer), kept out of the public
// binlog/reader.h. Used by reader.cc and reader_payload.cc only.
//
// Thread safety: as Reader (not thread-safe).

#ifndef BINLOG_BINLOG_READER_BUFFERS_H_
#define BINLOG_BINLOG_READER_BUFFERS_H_

#include <memory>
#include <string>

#include "binlog/maria_encryption.h"
#include "binlog/reader.h"
#include "io/codec.h"
#include "io/sequential_reader.h"

namespace binlog {

struct Reader::Buffers {
  // Reads the current file in windows of ReaderOptions::buffer_size.
  std::unique_ptr<io::SequentialReader> seq;
  // The inner events of the payload being expanded (PayloadMode::kDecoded).
  io::ByteBuffer payload;
  // The event being returned, decrypted (MariaDB-encrypted files), and
  // the cipher contexts that decrypt it (set up once per key).
  std::string decrypted;
  MariaEventDecryptor maria;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_READER_BUFFERS_H_
