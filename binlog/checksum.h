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
// bytes). The shift operator depends only on the event length, so it is also
// computed outside the serial section (LogPosCrcOperator); the serial part
// is LogPosCrcDelta: four table look-ups and one GF(2) multiplication.
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

// Operator that moves the effect of the log_pos field of an event whose
// checksummed length (event_size minus the 4-byte footer) is `covered_len`
// to the end of the event. REQUIRES: covered_len >= 19.
uint32_t LogPosCrcOperator(size_t covered_len);

// The XOR to apply to the CRC of an event computed with log_pos = 0 so that
// it becomes the CRC of the same event with log_pos = `log_pos`.
// `op` comes from LogPosCrcOperator(covered_len) of the same event.
uint32_t LogPosCrcDelta(uint32_t log_pos, uint32_t op);

namespace internal {
// The two candidate implementations, exposed for the benchmark and tests.
uint32_t Crc32Zlib(uint32_t crc, const void* data, size_t n);
uint32_t Crc32Isal(uint32_t crc, const void* data, size_t n);
}  // namespace internal

}  // namespace binlog

#endif  // BINLOG_BINLOG_CHECKSUM_H_
