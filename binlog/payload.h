// File: binlog/payload.h
//
// Transaction_payload events (type 40): compressed transactions, as MySQL
// 8.0.20+ writes them with binlog_transaction_compression=ON (binlog-format
// reference, section 7; binlog/FORMAT.md, "Compressed transactions").
//
// A compressed transaction is two events:
//
//   Gtid / Anonymous_gtid /   stays outside, with its own CRC32
//   Gtid_tagged (8.4)
//   Transaction_payload       header fields (TLV, packed integers, in
//                             MySQL's order: compression type, uncompressed
//                             size, payload size, end mark), then one
//                             compressed frame; the event's CRC32 covers it
//
// The frame holds every other event of the transaction (BEGIN, Table_map,
// rows events, ..., Xid) concatenated, each with its 19-byte header,
// event_size without a checksum footer, log_pos = 0, and no footer.
// Compression type 0 is zstd (MySQL's only codec); kPayloadCompressionLz4
// is this library's extension, which only this library reads. MariaDB's
// tools cannot read type 40 at all.
//
// Writing: PayloadPacker::Pack (used by Binlog::Commit) turns a
// TransactionBuffer into that layout in the committing thread, before the
// group-commit pipeline, reusing the buffer's memory and a pooled codec
// context (io/codec.h), so a steady-state commit allocates nothing.
// Reading: DecodePayload validates every header field, decompresses with a
// hard cap, and checks that the inner events tile the decompressed bytes
// exactly; Reader (ReaderOptions::payloads) uses it to expand payloads.
//
// Errors: decoders return DataLoss with a message that names the problem;
// callers add the file and offset (Reader does). Pack returns
// InvalidArgument for bad options and the codec's error otherwise.
// Thread safety: functions are thread-safe; a TransactionBuffer is not.

#ifndef BINLOG_BINLOG_PAYLOAD_H_
#define BINLOG_BINLOG_PAYLOAD_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/payload_header.h"
#include "binlog/transaction.h"
#include "io/codec.h"

namespace binlog {

// Header field types (MySQL's OTW_PAYLOAD_*).
inline constexpr uint64_t kPayloadHeaderEndMark = 0;
inline constexpr uint64_t kPayloadSizeField = 1;
inline constexpr uint64_t kPayloadCompressionTypeField = 2;
inline constexpr uint64_t kPayloadUncompressedSizeField = 3;

// Compression type values. 0 and 255 are MySQL's
// (mysql::binlog::event::compression::type). 128 is this library's lz4
// extension: far from MySQL's values, so a future MySQL codec is unlikely
// to take it; MySQL readers reject it as an unknown compression type.
inline constexpr uint64_t kPayloadCompressionZstd = 0;
inline constexpr uint64_t kPayloadCompressionLz4 = 128;
inline constexpr uint64_t kPayloadCompressionNone = 255;

// Largest decompressed payload readers accept by default: MySQL's
// max_log_event_size (1 GiB).
inline constexpr size_t kDefaultMaxPayloadSize = size_t{1} << 30;

// "ZSTD", "LZ4", "NONE" (as mysqlbinlog prints them), or "UNKNOWN".
const char* PayloadCompressionName(uint64_t type);

// Packed integers (reference section 0): size of the shortest encoding,
// and the encoder; the decoder consumes from the front of `*in` and returns
// false on truncation or on the invalid first bytes 0xFB and 0xFF.
bool ConsumePackedInt(absl::string_view* in, uint64_t* v);

// PayloadHeader, the decoded header fields of a Transaction_payload body,
// is in binlog/payload_header.h (public: Reader::payload_header()).

// True for event types that may be inside a payload: not file-level events
// (Format_description, Rotate, Stop, Previous_gtids, heartbeats), not
// GTIDs, Incident or Transaction_payload events, not MariaDB types.
bool AllowedInsidePayload(uint8_t type);

// Decodes and validates the header of `body` (the event body: after the
// common header, before the footer). DataLoss if a field is truncated or
// malformed, a mandatory field (1, 2) is missing or repeated, the end mark
// is missing, or the payload size does not match the bytes that follow.
absl::StatusOr<PayloadHeader> DecodePayloadHeader(absl::string_view body);

// Decodes a whole payload: the header, then the compressed data into
// `*out` (replacing its contents), then the inner events. The decompressed
// data may not exceed `max_size` bytes (nor the declared uncompressed size);
// a declared size above `max_size` fails before anything is allocated.
// ResourceExhausted (not DataLoss: the file may be fine) when the memory
// for the decompressed data cannot be had, e.g. under a memory limit; the
// buffer grows with the real output, so this takes a payload that really
// inflates that far.
// On success `*out` holds the inner events back to back (each validated:
// 19 <= event_size <= remaining bytes, log_pos 0, not a type that cannot
// be inside a payload) and `*inner_events` their number (>= 1).
absl::Status DecodePayload(absl::string_view body, size_t max_size,
                           PayloadHeader* header, io::ByteBuffer* out,
                           size_t* inner_events);

// How Binlog::Commit compresses (from Options).
struct PayloadCompression {
  io::Codec codec = io::Codec::kNone;
  int level = 0;           // 0: io::DefaultCodecLevel(codec)
  size_t threshold = 0;    // inner events below this many bytes stay plain
};

// InvalidArgument for an unusable combination.
absl::Status ValidatePayloadCompression(const PayloadCompression& c);

namespace internal {

// Used by Binlog::Commit (see TransactionBuffer).
class PayloadPacker {
 public:
  // Returns the buffer to write for `txn`: `txn` itself (codec none, not
  // eligible, below the threshold, or compression would not make it
  // smaller), or the packed form, which `txn` keeps and exposes as its
  // data() until the next Append*/Clear. Eligible transactions start with a
  // Gtid, Anonymous_gtid or Gtid_tagged event (a tagged one as the log
  // reserved it: the log encodes the real event, transaction_length over
  // the packed size, when it assigns the identity) followed by at least
  // one event, none of
  // which is a GTID, Format_description, Rotate, Stop, Previous_gtids,
  // Incident or Transaction_payload event (MySQL does not compress
  // transactions with incidents either). The Gtid event's
  // transaction_length, when it has one, is rewritten for the packed size.
  static absl::StatusOr<TransactionBuffer*> Pack(TransactionBuffer* txn,
                                                 const PayloadCompression& c);
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_PAYLOAD_H_
