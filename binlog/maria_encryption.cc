#include "binlog/maria_encryption.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "binlog/format.h"

namespace binlog {
namespace {

constexpr size_t kBlock = 16;
constexpr size_t kNonceSize = 12;

const EVP_CIPHER* Cipher(size_t key_size, bool cbc) {
  switch (key_size) {
    case 16: return cbc ? EVP_aes_128_cbc() : EVP_aes_128_ecb();
    case 24: return cbc ? EVP_aes_192_cbc() : EVP_aes_192_ecb();
    case 32: return cbc ? EVP_aes_256_cbc() : EVP_aes_256_ecb();
    default: return nullptr;
  }
}

}  // namespace

absl::StatusOr<std::map<uint32_t, std::string>> ParseMariaKeyFile(
    absl::string_view text) {
  std::map<uint32_t, std::string> keys;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits(';', 1));
    uint32_t id;
    absl::string_view hex = absl::StripAsciiWhitespace(parts.second);
    bool hex_ok = !hex.empty() && hex.size() % 2 == 0;
    for (char c : hex) hex_ok = hex_ok && absl::ascii_isxdigit(c);
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(parts.first), &id) ||
        !hex_ok || Cipher(hex.size() / 2, true) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key file line ", line_no,
          ": not \"<id>;<hex key of 16, 24 or 32 bytes>\""));
    }
    keys[id] = absl::HexStringToBytes(hex);
  }
  return keys;
}

absl::StatusOr<MariaStartEncryption> DecodeMariaStartEncryption(
    absl::string_view body) {
  if (body.size() != 1 + 4 + kNonceSize) {
    return absl::DataLossError(absl::StrCat(
        "Start_encryption body of ", body.size(), " bytes (need 17)"));
  }
  MariaStartEncryption s;
  s.scheme = static_cast<uint8_t>(body[0]);
  s.key_version = LoadLe32(body.data() + 1);
  s.nonce = std::string(body.substr(5, kNonceSize));
  if (s.scheme != 1) {
    return absl::DataLossError(
        absl::StrCat("Start_encryption scheme ", s.scheme, " (only 1 exists)"));
  }
  return s;
}

absl::Status DecryptMariaEvent(absl::string_view key, absl::string_view nonce,
                               uint32_t offset, absl::string_view stored,
                               std::string* out) {
  MariaEventDecryptor d;
  return d.Decrypt(key, nonce, offset, stored, out);
}

namespace {
EVP_CIPHER_CTX* Ctx(void* p) { return static_cast<EVP_CIPHER_CTX*>(p); }
}  // namespace

MariaEventDecryptor::~MariaEventDecryptor() {
  // EVP_CIPHER_CTX_free wipes the key schedules.
  if (cbc_ != nullptr) EVP_CIPHER_CTX_free(Ctx(cbc_));
  if (ecb_ != nullptr) EVP_CIPHER_CTX_free(Ctx(ecb_));
  OPENSSL_cleanse(key_.data(), key_.size());
}

absl::Status MariaEventDecryptor::SetKey(absl::string_view key) {
  OPENSSL_cleanse(key_.data(), key_.size());
  key_.clear();
  if (cbc_ == nullptr) cbc_ = EVP_CIPHER_CTX_new();
  if (ecb_ == nullptr) ecb_ = EVP_CIPHER_CTX_new();
  if (cbc_ == nullptr || ecb_ == nullptr) {
    return absl::InternalError("OpenSSL: EVP_CIPHER_CTX_new failed");
  }
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  if (EVP_DecryptInit_ex(Ctx(cbc_), Cipher(key.size(), true), nullptr, k,
                         nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(Ctx(cbc_), 0) != 1 ||
      EVP_EncryptInit_ex(Ctx(ecb_), Cipher(key.size(), false), nullptr, k,
                         nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(Ctx(ecb_), 0) != 1) {
    return absl::InternalError("OpenSSL: AES key setup failed");
  }
  key_.assign(key.data(), key.size());
  return absl::OkStatus();
}

absl::Status MariaEventDecryptor::Decrypt(absl::string_view key,
                                          absl::string_view nonce,
                                          uint32_t offset,
                                          absl::string_view stored,
                                          std::string* out) {
  if (Cipher(key.size(), true) == nullptr || nonce.size() != kNonceSize) {
    return absl::InvalidArgumentError("MariaDB binlog key or nonce size");
  }
  if (stored.size() < kHeaderSize) {
    return absl::DataLossError("encrypted event shorter than a header");
  }
  if (key_.empty() || key != key_) {
    absl::Status s = SetKey(key);
    if (!s.ok()) return s;
  }
  unsigned char iv[kBlock];
  std::memcpy(iv, nonce.data(), kNonceSize);
  StoreLe32(reinterpret_cast<char*>(iv) + kNonceSize, offset);
  // The encrypted stream is bytes 4.. of the stored event with its bytes
  // 0-3 put back where they were encrypted (9-12): one copy into *out,
  // then decrypted there in place.
  out->assign(stored.data(), stored.size());
  char* p = out->data();
  std::memcpy(p + kEventSizeOffset, stored.data(), 4);
  unsigned char* data = reinterpret_cast<unsigned char*>(p) + 4;
  const size_t n = stored.size() - 4;
  const size_t full = n / kBlock * kBlock;
  int len = 0;
  int fin = 0;
  // A new IV keeps the key schedule.
  if (EVP_DecryptInit_ex(Ctx(cbc_), nullptr, nullptr, nullptr, iv) != 1 ||
      (full > 0 && (EVP_DecryptUpdate(Ctx(cbc_), data, &len, data,
                                      static_cast<int>(full)) != 1 ||
                    static_cast<size_t>(len) != full)) ||
      EVP_DecryptFinal_ex(Ctx(cbc_), data + full, &fin) != 1 || fin != 0) {
    return absl::DataLossError("AES-CBC decryption failed");
  }
  if (full < n) {
    unsigned char mask[kBlock];
    if (EVP_EncryptUpdate(Ctx(ecb_), mask, &len, iv, kBlock) != 1 ||
        len != static_cast<int>(kBlock)) {
      return absl::DataLossError("AES-ECB failed");
    }
    for (size_t i = full; i < n; ++i) data[i] ^= mask[i - full];
  }
  // The timestamp travelled in the event_size field; event_size is the
  // stored one (in the clear).
  std::memcpy(p, p + kEventSizeOffset, 4);
  std::memcpy(p + kEventSizeOffset, stored.data() + kEventSizeOffset, 4);
  return absl::OkStatus();
}

}  // namespace binlog
