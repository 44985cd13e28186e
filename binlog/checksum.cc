#include "binlog/checksum.h"

#include <array>

#include "isa-l/crc.h"
#include "zlib.h"

namespace binlog {
namespace {

constexpr uint32_t kPoly = 0xEDB88320u;  // reflected CRC-32 polynomial

struct Tables {
  uint32_t byte[256];     // register update per input byte
  uint32_t x2n[32];       // x^(2^k) mod P, reflected
};

// a * b mod P in the reflected representation (bit 31 is x^0).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31;
  uint32_t p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t.byte[i] = c;
  }
  uint32_t p = 1u << 30;  // x^1
  t.x2n[0] = p;
  for (int k = 1; k < 32; ++k) t.x2n[k] = p = MultModP(p, p);
  return t;
}

const Tables& GetTables() {
  static const Tables t = MakeTables();
  return t;
}

// x^(n * 2^k) mod P.
uint32_t X2nModP(uint64_t n, unsigned k) {
  const Tables& t = GetTables();
  uint32_t p = 1u << 31;  // x^0
  while (n) {
    if (n & 1) p = MultModP(t.x2n[k & 31], p);
    n >>= 1;
    ++k;
  }
  return p;
}

}  // namespace

namespace internal {

uint32_t Crc32Zlib(uint32_t crc, const void* data, size_t n) {
  // zlib takes uInt lengths; feed large buffers in pieces.
  const Bytef* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    uInt chunk = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
    crc = static_cast<uint32_t>(::crc32(crc, p, chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

uint32_t Crc32Isal(uint32_t crc, const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    uint64_t chunk = n > (1u << 30) ? (1u << 30) : n;
    crc = crc32_gzip_refl(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return crc;
}

}  // namespace internal

uint32_t Crc32(const void* data, size_t n) {
  return internal::Crc32Isal(0, data, n);
}

uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n) {
  return internal::Crc32Isal(crc, data, n);
}

uint32_t LogPosCrcOperator(size_t covered_len) {
  // The log_pos field occupies bytes [13, 17); 17 = kLogPosOffset + 4.
  return X2nModP(static_cast<uint64_t>(covered_len - 17), 3);
}

uint32_t LogPosCrcDeltaDirect(uint32_t log_pos, size_t covered_len) {
  // Register-only CRC (init 0, no final xor) of P || zeros(covered_len - 17):
  // in zlib's convention crc32(0xFFFFFFFF, m) == ~R(0, m).
  static const char* zeros = new char[kLogPosCrcDirectMax]();
  char p[4];
  p[0] = static_cast<char>(log_pos);
  p[1] = static_cast<char>(log_pos >> 8);
  p[2] = static_cast<char>(log_pos >> 16);
  p[3] = static_cast<char>(log_pos >> 24);
  uint32_t c = internal::Crc32Isal(0xFFFFFFFFu, p, 4);
  c = internal::Crc32Isal(c, zeros, covered_len - 17);
  return ~c;
}

uint32_t LogPosCrcDelta(uint32_t log_pos, uint32_t op) {
  const Tables& t = GetTables();
  uint32_t c = 0;
  for (int i = 0; i < 4; ++i) {
    c = t.byte[(c ^ (log_pos >> (8 * i))) & 0xff] ^ (c >> 8);
  }
  return MultModP(op, c);
}

}  // namespace binlog
