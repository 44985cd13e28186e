// File: binlog/encryption.h (internal; not installed)
//
// MySQL 8.0.14+ binlog encryption, the one home of its format in this
// library (binlog/FORMAT.md "Encrypted files"):
//
//   EncryptionHeader       the 512-byte file header: encode / decode
//   SealFilePassword       a file password encrypted under a master key
//   OpenFilePassword       ... and back
//   CtrCipher              AES-256-CTR keystream at any stream offset
//   StartEncryptedFile     writes the header of a new file, returns the
//                          encrypting WritableFile for it
//   RewrapFileHeader       re-encrypts a file's password under a new key
//   EncryptionFileSystem   FileSystem that reads/writes binlog files in
//                          their plain form (keyring.h's
//                          NewDecryptingFileSystem)
//
// AES is OpenSSL's EVP API, except AES-256-CTR on CPUs with VAES and
// AVX-512 (binlog/aes_ctr_vaes.h; the same bytes, 3.7x faster).

#ifndef BINLOG_BINLOG_ENCRYPTION_H_
#define BINLOG_BINLOG_ENCRYPTION_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/aes_ctr_vaes.h"
#include "binlog/keyring.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

inline constexpr size_t kEncryptionHeaderSize = 512;
inline constexpr char kEncryptedMagic[4] = {'\xfd', 'b', 'i', 'n'};
inline constexpr size_t kFilePasswordSize = 32;
inline constexpr size_t kMasterKeySize = 32;
inline constexpr size_t kAesBlock = 16;

struct EncryptionHeader {
  uint8_t version = 1;
  std::string key_id;                           // < 255 bytes
  std::array<uint8_t, kFilePasswordSize> encrypted_password{};
  std::array<uint8_t, kAesBlock> iv{};          // IV of the password's CBC
};

// 512 bytes: magic, version, TLV fields (1 key id, 2 password, 3 IV),
// zero padding. InvalidArgument for a key id of 255 bytes or more.
absl::StatusOr<std::string> EncodeEncryptionHeader(const EncryptionHeader& h);
// DataLoss (naming what is wrong) for a header that is short, of another
// version, has an unknown field or misses a field.
absl::StatusOr<EncryptionHeader> DecodeEncryptionHeader(absl::string_view b);

bool HasEncryptedMagic(absl::string_view first_bytes);

// "MySQLReplicationKey_<uuid>_<seqno>" and its seqno (0 if not of that form).
std::string MasterKeyId(const std::string& uuid, uint32_t seqno);
uint32_t MasterKeySeqno(absl::string_view key_id);

// Random password and IV; the password encrypted with AES-256-CBC (no
// padding) under `master_key` with the IV, as MySQL does.
absl::StatusOr<EncryptionHeader> SealFilePassword(
    absl::string_view password, const std::string& key_id,
    absl::string_view master_key);
absl::StatusOr<std::string> OpenFilePassword(const EncryptionHeader& h,
                                             absl::string_view master_key);
absl::StatusOr<std::string> RandomBytes(size_t n);
// Fetches the header's key from `keyring` and opens the password.
absl::StatusOr<std::string> FilePasswordFromKeyring(const EncryptionHeader& h,
                                                    Keyring* keyring);

// AES-256-CTR of one file. Key and IV are EVP_BytesToKey(SHA-512, no salt,
// count 1) of the file password (= SHA-512(password): bytes 0..31 key,
// 32..47 IV). The counter block for stream offset o is the IV's first 8
// bytes followed by o / 16 as a big-endian 64-bit number (MySQL replaces
// the IV's last 8 bytes; it does not add to them).
// Thread safety: not thread-safe (one EVP context).
// Wraps a transaction spill file (TransactionBufferOptions::encrypt_spill):
// its bytes are AES-256-CTR under a random password kept only in memory,
// as MySQL 8.0.17+ encrypts the binlog cache's temporary files when binlog
// encryption is on. Nothing about the key is written anywhere: the file is
// unreadable once the object is gone (it is unlinked scratch anyway).
// Truncate(0) starts over under a new random password (the buffer does it
// after every spilled transaction), so no keystream covers two
// transactions; a failure to make one fails every later call.
absl::StatusOr<std::unique_ptr<io::TempFile>> NewEncryptedTempFile(
    std::unique_ptr<io::TempFile> file);

// CtrCipher's engines: the VAES/AVX-512 kernel of binlog/aes_ctr_vaes.h
// where the CPU has it (3.7x OpenSSL 3.0's AES-NI path on the development
// machine), and OpenSSL's EVP API otherwise; both give the same bytes.
// The key schedule is wiped when the cipher is destroyed.
class CtrCipher {
 public:
  enum class Engine {
    kFastest,  // VAES when vaes::Supported(), else OpenSSL
    kOpenSsl,  // always OpenSSL's EVP API (tests compare the two)
  };
  static absl::StatusOr<std::unique_ptr<CtrCipher>> Create(
      absl::string_view file_password, Engine engine = Engine::kFastest);
  ~CtrCipher();
  CtrCipher(const CtrCipher&) = delete;
  CtrCipher& operator=(const CtrCipher&) = delete;
  // out = in XOR keystream[stream_offset, +n). in == out is allowed.
  absl::Status Crypt(uint64_t stream_offset, const char* in, char* out,
                     size_t n);
  // Decrypts buf[0, n) in place in the same pass that looks for zero runs
  // in it, unless it holds one: true, with buf as it was, when buf holds
  // 32 or more consecutive zero bytes (possibly also for a shorter run of 8
  // or more); false once decrypted. For readers, whose raw zeros are not
  // ciphertext (EncryptionFileSystem): a window without zero runs, the
  // common case, is decrypted in one pass.
  absl::StatusOr<bool> CryptUnlessZeroRun(uint64_t stream_offset, char* buf,
                                          size_t n);
  const uint8_t* key() const { return key_; }
  const uint8_t* iv() const { return iv_; }
  // Whether Crypt runs the VAES kernel.
  bool uses_vaes() const { return round_keys_ != nullptr; }

 private:
  CtrCipher() = default;
  void* ctx_ = nullptr;  // EVP_CIPHER_CTX (the OpenSSL engine)
  std::unique_ptr<vaes::RoundKeys> round_keys_;  // the VAES engine's, or null
  uint8_t key_[32];
  uint8_t iv_[16];
};

// Writes the encryption header of a new, empty (or zero-filled) file with
// a random password sealed under `master_key` (id `key_id`), and returns
// the WritableFile through which the plain stream is written: offsets are
// stream offsets (file offset - 512), bytes are encrypted on the way
// through a reusable scratch buffer (no allocation once it reached the
// largest write). The header write is not synced here. `fs` (may be
// null) is the file system of `file`, read back by Truncate.
absl::StatusOr<std::unique_ptr<io::WritableFile>> StartEncryptedFile(
    std::unique_ptr<io::WritableFile> file, const std::string& key_id,
    absl::string_view master_key, io::FileSystem* fs = nullptr);

// The header of an encrypted file (raw read through `base`); NotFound if
// the file is not encrypted.
absl::StatusOr<EncryptionHeader> ReadEncryptionHeader(io::FileSystem* base,
                                                      const std::string& path);

// Re-encrypts the file password of `path` under the new master key and
// rewrites the header in place (one 512-byte write at offset 0, then
// fdatasync). The password itself, so the rest of the file, is unchanged.
// OK without change when the header already names `new_key_id`.
absl::Status RewrapFileHeader(io::FileSystem* base, const std::string& path,
                              Keyring* keyring, const std::string& new_key_id,
                              absl::string_view new_key);

// True for a binlog file name ("<base>.NNNNNN", six digits or more).
bool IsBinlogFileName(absl::string_view path);

// The FileSystem of NewDecryptingFileSystem (binlog/keyring.h).
std::unique_ptr<io::FileSystem> NewEncryptionFileSystem(io::FileSystem* base,
                                                        Keyring* keyring);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_ENCRYPTION_H_
