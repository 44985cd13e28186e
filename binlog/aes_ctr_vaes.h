// File: binlog/aes_ctr_vaes.h (internal; not installed)
//
// AES-256-CTR with the VAES and AVX-512 instructions: four blocks per
// instruction, 32 blocks in flight. The keystream layout is the one
// CtrCipher (binlog/encryption.h) documents for MySQL's encrypted binlog
// files: the counter block of stream block b is the 8-byte prefix followed
// by b as a big-endian 64-bit number.
//
// Why: the OpenSSL the library links (3.0) runs AES-256-CTR with AES-NI
// on one 128-bit block per instruction: 8.5-8.9 GB/s on the development
// machine (AMD EPYC, VAES and AVX-512, 2026-11-26, `openssl speed -evp
// aes-256-ctr`), more than half of the CPU an encrypted read costs. This
// kernel runs 32 GB/s there (CPU time). CtrCipher uses it when the CPU has the
// instructions (Supported()) and OpenSSL's EVP API otherwise; tests check
// both against each other at every offset and length, and against the
// openssl command line.
//
// The instructions are constant-time (no table lookups): as safe against
// timing as OpenSSL's AES-NI path.
//
// Thread safety: thread-safe (pure functions over caller-owned memory).

#ifndef BINLOG_BINLOG_AES_CTR_VAES_H_
#define BINLOG_BINLOG_AES_CTR_VAES_H_

#include <cstddef>
#include <cstdint>

namespace binlog {
namespace internal {
namespace vaes {

// The 15 round keys of AES-256, 16 bytes each.
struct RoundKeys {
  alignas(16) uint8_t bytes[15][16];
};

// True when this CPU (and the OS, which must save AVX-512 state) runs the
// instructions the functions below need: AES-NI, VAES, AVX-512F and BW.
// Computed once.
bool Supported();

// The AES-256 key schedule of `key` (32 bytes). REQUIRES: Supported().
void ExpandKey(const uint8_t* key, RoundKeys* out);

// out[0, n) = in[0, n) XOR keystream[stream_offset, stream_offset + n),
// the counter block of stream block b being prefix[0..8) || BE64(b).
// in == out is allowed; other overlap is not. REQUIRES: Supported().
void CtrXor(const RoundKeys& keys, const uint8_t* prefix,
            uint64_t stream_offset, const char* in, char* out, size_t n);

// CtrXor, and whether `in` held a run of zero bytes, checked on the way
// (the input is loaded anyway): true when in[0, n) holds 32 or more
// consecutive zero bytes, and possibly for a shorter run of 8 or more (the
// 8-byte words at stream offsets that are multiples of 8 are checked,
// except in the partial block the stream offset may start inside).
// REQUIRES: Supported().
bool CtrXorFindZeros(const RoundKeys& keys, const uint8_t* prefix,
                     uint64_t stream_offset, const char* in, char* out,
                     size_t n);

}  // namespace vaes
}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_AES_CTR_VAES_H_
