// File: binlog/zero_words.h  (internal)
//
// FindZeroWord: the first 8-byte word of zeros in a buffer, at 8-byte
// steps (AVX2 where the CPU has it). Encrypted log files are read around
// runs of raw zeros (preallocated space is zeros on disk, not ciphertext):
// binlog/encryption.cc looks for them in every window it decrypts without
// VAES.
//
// Thread safety: thread-safe (no state but a CPU-feature flag set once).

#ifndef BINLOG_BINLOG_ZERO_WORDS_H_
#define BINLOG_BINLOG_ZERO_WORDS_H_

#include <cstddef>

namespace binlog {
namespace internal {

// The first w in {from, from + 8, ...} with w + 8 <= n and buf[w, w + 8)
// all zeros; n if there is none.
size_t FindZeroWord(const char* buf, size_t from, size_t n);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_ZERO_WORDS_H_
