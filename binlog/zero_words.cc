#include "binlog/zero_words.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace binlog {
namespace internal {
namespace {

// The first w in {from, from + 8, ...} with w + 8 <= n and buf[w, w + 8)
// all zeros; n if there is none.
size_t FindZeroWordScalar(const char* buf, size_t from, size_t n) {
  for (size_t w = from; w + 8 <= n; w += 8) {
    uint64_t word;
    std::memcpy(&word, buf + w, 8);
    if (word == 0) return w;
  }
  return n;
}

// The same, 128 bytes per step with AVX2. Without VAES (which looks for
// zero words as it decrypts: CryptUnlessZeroRun) every window of an
// encrypted file is scanned so before it is decrypted; the scalar loop (8
// bytes a step, a branch each) cost as much CPU as the VAES decryption
// itself (perf, read_bench rd1m_enc, 2026-11-26).
__attribute__((target("avx2"))) size_t FindZeroWordAvx2(const char* buf,
                                                        size_t from,
                                                        size_t n) {
  size_t w = from;
  const __m256i zero = _mm256_setzero_si256();
  for (; w + 128 <= n; w += 128) {
    const __m256i* p = reinterpret_cast<const __m256i*>(buf + w);
    const __m256i a = _mm256_cmpeq_epi64(_mm256_loadu_si256(p), zero);
    const __m256i b = _mm256_cmpeq_epi64(_mm256_loadu_si256(p + 1), zero);
    const __m256i c = _mm256_cmpeq_epi64(_mm256_loadu_si256(p + 2), zero);
    const __m256i d = _mm256_cmpeq_epi64(_mm256_loadu_si256(p + 3), zero);
    const __m256i any = _mm256_or_si256(_mm256_or_si256(a, b),
                                        _mm256_or_si256(c, d));
    if (!_mm256_testz_si256(any, any)) break;  // the scalar loop finds it
  }
  return FindZeroWordScalar(buf, w, n);
}

}  // namespace

size_t FindZeroWord(const char* buf, size_t from, size_t n) {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
  }();
  return avx2 ? FindZeroWordAvx2(buf, from, n)
              : FindZeroWordScalar(buf, from, n);
}

}  // namespace internal
}  // namespace binlog
