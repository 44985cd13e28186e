// File: binlog/format.h
//
// On-disk constants of the MySQL binlog v4 format: the file magic, the
// common event header, event type codes, header flags, and the layout of the
// Format_description event. binlog/FORMAT.md is the prose specification; the
// two must agree. All multi-byte integers are little-endian.
//
// Thread safety: thread-safe (constants and pure functions).
// Stability: values are fixed by the on-disk format and never change;
// new event types may be added.

#ifndef BINLOG_BINLOG_FORMAT_H_
#define BINLOG_BINLOG_FORMAT_H_

#include <cstddef>
#include <cstdint>

#include "binlog/flavor.h"

namespace binlog {

// The 4 bytes at offset 0 of every binlog file: 0xFE 'b' 'i' 'n'.
inline constexpr char kBinlogMagic[4] = {'\xfe', 'b', 'i', 'n'};
inline constexpr size_t kMagicSize = 4;

// Common event header (19 bytes). Offsets from the event start.
inline constexpr size_t kHeaderSize = 19;
inline constexpr size_t kTimestampOffset = 0;   // 4 bytes
inline constexpr size_t kTypeOffset = 4;        // 1 byte
inline constexpr size_t kServerIdOffset = 5;    // 4 bytes
inline constexpr size_t kEventSizeOffset = 9;   // 4 bytes
inline constexpr size_t kLogPosOffset = 13;     // 4 bytes
inline constexpr size_t kFlagsOffset = 17;      // 2 bytes

// CRC32 footer size when checksums are on.
inline constexpr size_t kChecksumSize = 4;

// Largest event, for the writer and every reader alike (one limit, so the
// log never accepts what it cannot read back): MySQL's max_log_event_size
// is 1 GiB of payload; the header and footer come on top. Commit refuses a
// larger event with InvalidArgument; readers and recovery report one as
// DataLoss.
inline constexpr uint64_t kMaxEventSize = (1ull << 30) + kHeaderSize + 64;

// Largest Format_description event, for the writer and every reader alike:
// its post-header lengths are one byte per event type code, so a real one
// is at most a few hundred bytes (MySQL 8.4's is 123, MariaDB 10.11's
// about 190). Readers report a larger one as DataLoss
// (DecodeFormatDescription refuses it, so a mirror copy never stores one
// from a source), and a GTID index naming a larger one is refused
// (FORMAT.md, "GTID index files").
inline constexpr uint64_t kMaxFormatDescriptionSize = 4096;

// Largest decompressed Transaction_payload (the events it holds), for the
// writer and readers alike: Commit stores a transaction whose events would
// decompress to more than this uncompressed, and ReaderOptions::
// max_payload_size defaults to it.
inline constexpr uint64_t kMaxPayloadSize = 1ull << 30;

// log_pos is a 32-bit field, so no event may end past 4 GiB - 1 in a file.
inline constexpr uint64_t kMaxFileOffset = 0xFFFFFFFFull;

// Event type codes (MySQL enum Log_event_type, MariaDB 160+). Never renumber.
enum EventType : uint8_t {
  kUnknownEvent = 0,
  kStartEventV3 = 1,
  kQueryEvent = 2,
  kStopEvent = 3,
  kRotateEvent = 4,
  kIntvarEvent = 5,
  kLoadEvent = 6,
  kSlaveEvent = 7,
  kCreateFileEvent = 8,
  kAppendBlockEvent = 9,
  kExecLoadEvent = 10,
  kDeleteFileEvent = 11,
  kNewLoadEvent = 12,
  kRandEvent = 13,
  kUserVarEvent = 14,
  kFormatDescriptionEvent = 15,
  kXidEvent = 16,
  kBeginLoadQueryEvent = 17,
  kExecuteLoadQueryEvent = 18,
  kTableMapEvent = 19,
  kPreGaWriteRowsEvent = 20,
  kPreGaUpdateRowsEvent = 21,
  kPreGaDeleteRowsEvent = 22,
  kWriteRowsEventV1 = 23,
  kUpdateRowsEventV1 = 24,
  kDeleteRowsEventV1 = 25,
  kIncidentEvent = 26,
  kHeartbeatEvent = 27,
  kIgnorableEvent = 28,
  kRowsQueryEvent = 29,
  kWriteRowsEvent = 30,
  kUpdateRowsEvent = 31,
  kDeleteRowsEvent = 32,
  kGtidEvent = 33,
  kAnonymousGtidEvent = 34,
  kPreviousGtidsEvent = 35,
  kTransactionContextEvent = 36,
  kViewChangeEvent = 37,
  kXaPrepareEvent = 38,
  kPartialUpdateRowsEvent = 39,
  kTransactionPayloadEvent = 40,
  kHeartbeatEventV2 = 41,
  kGtidTaggedEvent = 42,
  // MariaDB
  kMariaAnnotateRowsEvent = 160,
  kMariaBinlogCheckpointEvent = 161,
  kMariaGtidEvent = 162,
  kMariaGtidListEvent = 163,
  kMariaStartEncryptionEvent = 164,
  kMariaQueryCompressedEvent = 165,
  kMariaWriteRowsCompressedEventV1 = 166,
  kMariaUpdateRowsCompressedEventV1 = 167,
  kMariaDeleteRowsCompressedEventV1 = 168,
  kMariaWriteRowsCompressedEvent = 169,
  kMariaUpdateRowsCompressedEvent = 170,
  kMariaDeleteRowsCompressedEvent = 171,
};

// Name of an event type as in the servers' log_event.h ("QUERY_EVENT"), or
// "UNKNOWN_EVENT_<n>" for codes neither server defines.
const char* EventTypeName(uint8_t type);

// Header flags.
inline constexpr uint16_t kFlagBinlogInUse = 0x0001;      // FDE only
inline constexpr uint16_t kFlagThreadSpecific = 0x0004;
inline constexpr uint16_t kFlagSuppressUse = 0x0008;
inline constexpr uint16_t kFlagArtificial = 0x0020;
inline constexpr uint16_t kFlagRelayLog = 0x0040;
inline constexpr uint16_t kFlagIgnorable = 0x0080;

// Format_description event body layout (offsets from the event start).
inline constexpr size_t kFdeBinlogVersionOffset = 19;   // 2 bytes
inline constexpr size_t kFdeServerVersionOffset = 21;   // 50 bytes
inline constexpr size_t kFdeServerVersionLen = 50;
inline constexpr size_t kFdeCreateTimestampOffset = 71; // 4 bytes
inline constexpr size_t kFdeHeaderLenOffset = 75;       // 1 byte
inline constexpr size_t kFdePostHeaderOffset = 76;      // N bytes
// File offset of the low byte of the FDE flags: the one byte a writer
// rewrites in place to clear the in-use flag at clean close.
inline constexpr size_t kInUseFlagFileOffset = kMagicSize + kFlagsOffset;

// Checksum algorithm byte of the FDE.
enum class ChecksumAlg : uint8_t {
  kOff = 0,
  kCrc32 = 1,
  kUndefined = 255,  // pre-5.6.1 servers: no algorithm byte at all
};

// Rotate event: 8-byte position then the next file name.
inline constexpr size_t kRotatePostHeaderSize = 8;

// Query event post-header.
inline constexpr size_t kQueryPostHeaderSize = 13;

// LogFlavor (Options::flavor) is in binlog/flavor.h.

// MariaDB Gtid event flags2 bits.
inline constexpr uint8_t kMariaGtidStandalone = 0x01;
inline constexpr uint8_t kMariaGtidGroupCommitId = 0x02;
inline constexpr uint8_t kMariaGtidPreparedXa = 0x40;
inline constexpr uint8_t kMariaGtidCompletedXa = 0x80;

// Little-endian helpers.
inline uint16_t LoadLe16(const char* p) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline uint32_t LoadLe32(const char* p) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) |
         (static_cast<uint32_t>(u[3]) << 24);
}
inline uint64_t LoadLe64(const char* p) {
  return static_cast<uint64_t>(LoadLe32(p)) |
         (static_cast<uint64_t>(LoadLe32(p + 4)) << 32);
}
inline uint64_t LoadLeN(const char* p, size_t n) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(u[i]) << (8 * i);
  return v;
}
inline void StoreLe16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
}
inline void StoreLe32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
  p[2] = static_cast<char>(v >> 16);
  p[3] = static_cast<char>(v >> 24);
}
inline void StoreLe64(char* p, uint64_t v) {
  StoreLe32(p, static_cast<uint32_t>(v));
  StoreLe32(p + 4, static_cast<uint32_t>(v >> 32));
}
inline void StoreLeN(char* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

// Packed integers (reference section 0; MySQL's net_store_length): the size
// of the shortest encoding of `v` (1, 3, 4 or 9 bytes) and the encoder,
// which returns the end of what it wrote. One definition for the Gtid and
// Transaction_payload encoders (binlog/payload.h declares them too); the
// decoders are ByteReader::PackedInt and ConsumePackedInt.
size_t PackedIntSize(uint64_t v);
char* StorePackedInt(char* p, uint64_t v);

// Variable-length unsigned integers of MySQL's field serialization
// (libs/mysql/serialization, 8.3+: Gtid_tagged_log_event and the tags of an
// encoded GTID set; binlog/FORMAT.md "Tagged GTIDs"). A value of up to 56
// bits takes k = max(1, ceil(bits / 7)) bytes and is stored as the k-byte
// little-endian number (v << k) | (2^(k-1) - 1): the count of trailing one
// bits of the first byte, plus one, is the length. Wider values take 9
// bytes: 0xFF, then the 8-byte little-endian value. VarlenSize is the
// length (1..9); StoreVarlen writes it and returns the end. The decoder is
// ByteReader::Varlen. Signed values are zigzag-mapped first
// (VarlenZigZag: x >= 0 -> 2x, x < 0 -> -2x - 1).
size_t VarlenSize(uint64_t v);
char* StoreVarlen(char* p, uint64_t v);
inline uint64_t VarlenZigZag(int64_t x) {
  return x >= 0 ? static_cast<uint64_t>(x) << 1
                : ((~static_cast<uint64_t>(x)) << 1) | 1;
}
inline int64_t VarlenUnZigZag(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

}  // namespace binlog

#endif  // BINLOG_BINLOG_FORMAT_H_
