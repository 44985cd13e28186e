// File: binlog/checksum.h
//
// The binlog event checksum: zlib's CRC-32 (ISO-HDLC, reflected polynomial
// 0xEDB88320), not CRC32C. Crc32("123456789") == 0xCBF43926.
//
// The bulk routine is ISA-L's crc32_gzip_refl, chosen over zlib's crc32 by
// measurement (benchmarks/crc32_bench.cc, numbers in benchmarks/README.md);
// both compute the same function.
//
// CRC-32 is linear over GF(2), which lets the writer checksum an event in the
// committing thread with log_pos = 0 and correct the checksum for the final
// log_pos in the serial section without re-reading the event:
//
//   crc(M with log_pos = P) = crc(M with log_pos = 0)
//                             ^ Shift(Raw4(P), len(M) - 17)
//
// where Raw4 is the register-only CRC of the 4 log_pos bytes and Shift
// multiplies by x^(8n) modulo the CRC polynomial (the effect of n trailing
// bytes). LogPosCrcDelta computes that term without touching the event: for
// events up to 64 KiB it runs the hardware CRC over the 4 bytes and n bytes
// of a static zero buffer (about as fast as the CRC of the event itself, but
// it reads no event byte, so the serial section never pulls the event
// through the cache again); for larger events it multiplies by a shift
// operator computed outside the serial section (LogPosCrcOperator, a few
// hundred nanoseconds of GF(2) arithmetic).
//
// Thread safety: all functions are thread-safe (pure).

#ifndef BINLOG_BINLOG_CHECKSUM_H_
#define BINLOG_BINLOG_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace binlog {

// CRC-32 of data[0, n).
uint32_t Crc32(const void* data, size_t n);

// Continues a CRC-32: Crc32Extend(Crc32(a), b) == Crc32(a || b).
uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n);

// Events whose checksummed length is at most this use the zero-buffer path.
inline constexpr size_t kLogPosCrcDirectMax = 64 * 1024;

// Operator that moves the effect of the log_pos field of an event whose
// checksummed length (event_size minus the 4-byte footer) is `covered_len`
// to the end of the event. REQUIRES: covered_len >= 19.
uint32_t LogPosCrcOperator(size_t covered_len);

// The XOR to apply to the CRC of an event computed with log_pos = 0 so that
// it becomes the CRC of the same event with log_pos = `log_pos`.
// `op` comes from LogPosCrcOperator(covered_len) of the same event.
uint32_t LogPosCrcDelta(uint32_t log_pos, uint32_t op);

// Same result for an event of checksummed length `covered_len`
// REQUIRES: 17 < covered_len <= kLogPosCrcDirectMax.
uint32_t LogPosCrcDeltaDirect(uint32_t log_pos, size_t covered_len);

namespace internal {
// The two candidate implementations, exposed for the benchmark and tests.
uint32_t Crc32Zlib(uint32_t crc, const void* data, size_t n);
uint32_t Crc32Isal(uint32_t crc, const void* data, size_t n);
}  // namespace internal

}  // namespace binlog

#endif  // BINLOG_BINLOG_CHECKSUM_H_
