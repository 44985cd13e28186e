#include "binlog/aes_ctr_vaes.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstring>

// Every function that uses the instructions carries the target attribute,
// so the rest of the library is built for the baseline x86-64 and this
// code runs only after Supported() said yes.
#define BINLOG_VAES_TARGET \
  __attribute__((target("aes,sse4.1,avx2,avx512f,avx512bw,vaes")))

namespace binlog {
namespace internal {
namespace vaes {
namespace {

// One step of the AES-256 key schedule (FIPS-197 5.2): `t` is
// AESKEYGENASSIST's word broadcast to the four lanes; the result is `prev`
// with each word XORed with all the words before it, then with `t`.
BINLOG_VAES_TARGET inline __m128i Step(__m128i prev, __m128i t) {
  __m128i s = _mm_slli_si128(prev, 4);
  prev = _mm_xor_si128(prev, s);
  s = _mm_slli_si128(s, 4);
  prev = _mm_xor_si128(prev, s);
  s = _mm_slli_si128(s, 4);
  prev = _mm_xor_si128(prev, s);
  return _mm_xor_si128(prev, t);
}

// The round constant is an immediate of AESKEYGENASSIST: a template
// argument.
template <int kRcon>
BINLOG_VAES_TARGET inline void Pair(__m128i* even, __m128i* odd,
                                    __m128i* out_even, __m128i* out_odd) {
  // Even round keys: RotWord + SubWord of the previous odd key's last word,
  // XOR rcon (lane 3 of AESKEYGENASSIST).
  *even = Step(*even, _mm_shuffle_epi32(
                          _mm_aeskeygenassist_si128(*odd, kRcon), 0xff));
  _mm_store_si128(out_even, *even);
  if (out_odd == nullptr) return;
  // Odd round keys: SubWord only (lane 2, rcon 0).
  *odd = Step(*odd, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(*even, 0),
                                      0xaa));
  _mm_store_si128(out_odd, *odd);
}

BINLOG_VAES_TARGET void ExpandKeyImpl(const uint8_t* key, RoundKeys* out) {
  __m128i* rk = reinterpret_cast<__m128i*>(out->bytes);
  __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  _mm_store_si128(&rk[0], even);
  _mm_store_si128(&rk[1], odd);
  Pair<0x01>(&even, &odd, &rk[2], &rk[3]);
  Pair<0x02>(&even, &odd, &rk[4], &rk[5]);
  Pair<0x04>(&even, &odd, &rk[6], &rk[7]);
  Pair<0x08>(&even, &odd, &rk[8], &rk[9]);
  Pair<0x10>(&even, &odd, &rk[10], &rk[11]);
  Pair<0x20>(&even, &odd, &rk[12], &rk[13]);
  Pair<0x40>(&even, &odd, &rk[14], nullptr);
}

// A 128-bit value in the four lanes. (_mm512_broadcast_i32x4 reads an
// "undefined" vector that GCC 12 warns about: -Wuninitialized.)
BINLOG_VAES_TARGET inline __m512i Broadcast(__m128i v) {
  return _mm512_maskz_broadcast_i32x4(0xffff, v);
}

// Four counter blocks per register: 128-bit lane i holds the prefix and
// block number b + i as a little-endian word, which the byte shuffle in
// CtrXorImpl turns into the big-endian counter block.
BINLOG_VAES_TARGET inline __m512i CounterBlocks(long long prefix, uint64_t b) {
  return _mm512_set_epi64(static_cast<long long>(b + 3), prefix,
                          static_cast<long long>(b + 2), prefix,
                          static_cast<long long>(b + 1), prefix,
                          static_cast<long long>(b), prefix);
}

BINLOG_VAES_TARGET inline __m512i Encrypt(__m512i block, const __m512i* rk) {
  __m512i x = _mm512_xor_si512(block, rk[0]);
  for (int r = 1; r < 14; ++r) x = _mm512_aesenc_epi128(x, rk[r]);
  return _mm512_aesenclast_epi128(x, rk[14]);
}

// Eight registers (32 blocks) per round: VAESENC has a latency of several
// cycles and issues up to two a cycle, so eight independent chains keep it
// busy (12% more than four on the development machine, CPU time).
#define BINLOG_VAES_EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

// Returns whether one of the 8-byte words of `in` at a stream offset that
// is a multiple of 8 (outside the partial first block, if any) is zero.
BINLOG_VAES_TARGET bool CtrXorImpl(const RoundKeys& keys,
                                   const uint8_t* prefix,
                                   uint64_t stream_offset, const char* in,
                                   char* out, size_t n) {
  __m512i rk[15];
  for (int i = 0; i < 15; ++i) {
    rk[i] = Broadcast(
        _mm_load_si128(reinterpret_cast<const __m128i*>(keys.bytes[i])));
  }
  // Bytes 0-7 of each lane stay (the prefix); bytes 8-15 are reversed.
  const __m512i swap = Broadcast(
      _mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 7, 6, 5, 4, 3, 2, 1, 0));
  const __m512i four = _mm512_set_epi64(4, 0, 4, 0, 4, 0, 4, 0);
  const __m512i zero = _mm512_setzero_si512();
  long long pre;
  std::memcpy(&pre, prefix, 8);
  uint64_t block = stream_offset / 16;
  const size_t skip = static_cast<size_t>(stream_offset % 16);
  if (skip != 0) {
    // The rest of a block the stream offset starts inside.
    alignas(64) unsigned char ks[64];
    _mm512_store_si512(
        ks, Encrypt(_mm512_shuffle_epi8(CounterBlocks(pre, block), swap), rk));
    const size_t m = std::min(n, 16 - skip);
    for (size_t i = 0; i < m; ++i) {
      out[i] = static_cast<char>(in[i] ^ static_cast<char>(ks[skip + i]));
    }
    in += m;
    out += m;
    n -= m;
    ++block;
  }
  __m512i c0 = CounterBlocks(pre, block);
  __mmask8 zeros = 0;  // zero words seen in the input
  while (n >= 512) {
#define BINLOG_VAES_START(j)                                        \
  __m512i x##j = _mm512_xor_si512(_mm512_shuffle_epi8(c0, swap), rk[0]); \
  c0 = _mm512_add_epi64(c0, four);
    BINLOG_VAES_EACH(BINLOG_VAES_START)
#undef BINLOG_VAES_START
    for (int r = 1; r < 14; ++r) {
      const __m512i k = rk[r];
#define BINLOG_VAES_ROUND(j) x##j = _mm512_aesenc_epi128(x##j, k);
      BINLOG_VAES_EACH(BINLOG_VAES_ROUND)
#undef BINLOG_VAES_ROUND
    }
#define BINLOG_VAES_FINISH(j)                                            \
  {                                                                      \
    const __m512i d = _mm512_loadu_si512(in + 64 * j);                   \
    zeros |= _mm512_cmpeq_epi64_mask(d, zero);                           \
    _mm512_storeu_si512(out + 64 * j,                                    \
                        _mm512_xor_si512(                                \
                            _mm512_aesenclast_epi128(x##j, rk[14]), d)); \
  }
    BINLOG_VAES_EACH(BINLOG_VAES_FINISH)
#undef BINLOG_VAES_FINISH
    in += 512;
    out += 512;
    n -= 512;
  }
  // The last bytes, 64 at a time with masked loads and stores (bytes past
  // the end are neither read nor written; only whole words are checked).
  while (n > 0) {
    const __m512i ks = Encrypt(_mm512_shuffle_epi8(c0, swap), rk);
    const size_t m = std::min<size_t>(n, 64);
    const __mmask64 mask = m == 64 ? ~__mmask64{0} : (__mmask64{1} << m) - 1;
    const __m512i data = _mm512_maskz_loadu_epi8(mask, in);
    const __mmask8 words = static_cast<__mmask8>((1u << (m / 8)) - 1);
    zeros |= _mm512_mask_cmpeq_epi64_mask(words, data, zero);
    _mm512_mask_storeu_epi8(out, mask, _mm512_xor_si512(ks, data));
    c0 = _mm512_add_epi64(c0, four);
    in += m;
    out += m;
    n -= m;
  }
  return zeros != 0;
}

}  // namespace

bool Supported() {
  // CPUID and XGETBV directly: GCC's __builtin_cpu_supports knows "vaes",
  // Clang's (which builds the fuzzers) does not.
  static const bool supported = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    const bool aes = (c & (1u << 25)) != 0;
    const bool osxsave = (c & (1u << 27)) != 0;
    if (!aes || !osxsave) return false;
    // The OS saves the SSE, AVX and AVX-512 state (opmask, the upper halves
    // of ZMM0-15, ZMM16-31): XCR0 bits 1, 2, 5, 6, 7.
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & 0xe6u) != 0xe6u) return false;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    const bool avx2 = (b & (1u << 5)) != 0;
    const bool avx512f = (b & (1u << 16)) != 0;
    const bool avx512bw = (b & (1u << 30)) != 0;
    const bool vaes = (c & (1u << 9)) != 0;
    return avx2 && avx512f && avx512bw && vaes;
  }();
  return supported;
}

void ExpandKey(const uint8_t* key, RoundKeys* out) { ExpandKeyImpl(key, out); }

void CtrXor(const RoundKeys& keys, const uint8_t* prefix,
            uint64_t stream_offset, const char* in, char* out, size_t n) {
  if (n == 0) return;
  CtrXorImpl(keys, prefix, stream_offset, in, out, n);
}

bool CtrXorFindZeros(const RoundKeys& keys, const uint8_t* prefix,
                     uint64_t stream_offset, const char* in, char* out,
                     size_t n) {
  if (n == 0) return false;
  return CtrXorImpl(keys, prefix, stream_offset, in, out, n);
}

}  // namespace vaes
}  // namespace internal
}  // namespace binlog
