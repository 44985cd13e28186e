// File: binlog/maria_encryption.h
//
// MariaDB binlog encryption (encrypt_binlog=ON, MariaDB 10.1+), read side.
//
// A MariaDB-encrypted binlog file starts in the clear: the Format_description
// event, then a Start_encryption event (type 164) whose body is the scheme
// (1 byte, 1), the key version (4 bytes) and a 12-byte nonce. Every later
// event is stored encrypted with AES in CBC mode without padding (the key of
// the server's key management plugin: key id 1, ENCRYPTION_KEY_SYSTEM_DATA,
// at the Start_encryption event's key version), the IV being the nonce
// followed by the event's file offset (4 bytes, little-endian):
//   - before encryption the server moves the timestamp (bytes 0-3) into the
//     event_size field (bytes 9-12), then encrypts bytes 4 to the end (the
//     CRC32 footer, computed over the plain event, included);
//   - a last partial block is XORed with the AES-ECB encryption of the IV
//     (MariaDB's my_crypt "nopad" rule);
//   - in the stored event, bytes 0-3 hold the encrypted bytes that belong at
//     9-12, and bytes 9-12 hold event_size in the clear, so a reader can
//     frame events without the key.
// DecryptMariaEvent undoes this and returns the event as the server built
// it (its CRC32 then verifies).
//
// Keys: the file of MariaDB's file_key_management plugin
// (file_key_management_filename): one key per line, "<id>;<hex key>"
// (16, 24 or 32 bytes: AES-128/192/256), '#' starts a comment. That plugin
// has one version of each key, so the Start_encryption key version is 1.
// Files the plugin stores encrypted (file_key_management_filekey) are not
// read.
//
// Thread safety: thread-safe (pure functions).
// Errors: InvalidArgument for a malformed key file; DataLoss for a malformed
// Start_encryption body or an event that cannot be an encrypted event.

#ifndef BINLOG_BINLOG_MARIA_ENCRYPTION_H_
#define BINLOG_BINLOG_MARIA_ENCRYPTION_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {

// The key id MariaDB encrypts binlogs with (ENCRYPTION_KEY_SYSTEM_DATA).
inline constexpr uint32_t kMariaBinlogKeyId = 1;

// Key id -> key bytes, from a file_key_management key file's text.
absl::StatusOr<std::map<uint32_t, std::string>> ParseMariaKeyFile(
    absl::string_view text);

struct MariaStartEncryption {
  uint8_t scheme = 0;       // 1: the only scheme MariaDB writes
  uint32_t key_version = 0;
  std::string nonce;        // 12 bytes
};
// The body of a Start_encryption event (after the header, before the
// footer).
absl::StatusOr<MariaStartEncryption> DecodeMariaStartEncryption(
    absl::string_view body);

// Decrypts the stored event `stored` (whole, as framed by its clear
// event_size) that starts at file offset `offset`, with `key` (16, 24 or 32
// bytes) and the Start_encryption `nonce`, into `*out` (resized).
absl::Status DecryptMariaEvent(absl::string_view key, absl::string_view nonce,
                               uint32_t offset, absl::string_view stored,
                               std::string* out);

// DecryptMariaEvent for a stream of events: the cipher contexts (the key
// schedule) are set up once per key, not per event, and an event is copied
// once (into *out, where it is decrypted in place). A reader of a
// MariaDB-encrypted file keeps one.
//
// Thread safety: not thread-safe (one object per reader). Errors: as
// DecryptMariaEvent; a failure to make a cipher context is Internal.
class MariaEventDecryptor {
 public:
  MariaEventDecryptor() = default;
  ~MariaEventDecryptor();
  MariaEventDecryptor(const MariaEventDecryptor&) = delete;
  MariaEventDecryptor& operator=(const MariaEventDecryptor&) = delete;

  absl::Status Decrypt(absl::string_view key, absl::string_view nonce,
                       uint32_t offset, absl::string_view stored,
                       std::string* out);

 private:
  absl::Status SetKey(absl::string_view key);

  void* cbc_ = nullptr;  // EVP_CIPHER_CTX: AES-CBC decryption under key_
  void* ecb_ = nullptr;  // EVP_CIPHER_CTX: AES-ECB encryption (the tail mask)
  std::string key_;      // the key the contexts hold; empty: none yet
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_MARIA_ENCRYPTION_H_
