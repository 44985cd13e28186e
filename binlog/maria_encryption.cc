#include "binlog/maria_encryption.h"

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

// AES without padding over `n` bytes (a multiple of 16).
bool Aes(const EVP_CIPHER* cipher, bool decrypt, absl::string_view key,
         const unsigned char* iv, const unsigned char* in, size_t n,
         unsigned char* out) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return false;
  int len1 = 0, len2 = 0;
  const bool ok =
      EVP_CipherInit_ex(ctx, cipher, nullptr,
                        reinterpret_cast<const unsigned char*>(key.data()), iv,
                        decrypt ? 0 : 1) == 1 &&
      EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
      (n == 0 || EVP_CipherUpdate(ctx, out, &len1, in, static_cast<int>(n)) == 1) &&
      EVP_CipherFinal_ex(ctx, out + len1, &len2) == 1 &&
      static_cast<size_t>(len1 + len2) == n;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
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
  const EVP_CIPHER* cbc = Cipher(key.size(), true);
  if (cbc == nullptr || nonce.size() != kNonceSize) {
    return absl::InvalidArgumentError("MariaDB binlog key or nonce size");
  }
  if (stored.size() < kHeaderSize) {
    return absl::DataLossError("encrypted event shorter than a header");
  }
  unsigned char iv[kBlock];
  std::memcpy(iv, nonce.data(), kNonceSize);
  StoreLe32(reinterpret_cast<char*>(iv) + kNonceSize, offset);
  // The encrypted stream: bytes 4.. of the stored event, with its bytes
  // 0-3 put back where they were encrypted (9-12).
  std::string in(stored.substr(4));
  std::memcpy(in.data() + kEventSizeOffset - 4, stored.data(), 4);
  out->assign(stored.size(), '\0');
  unsigned char* dst = reinterpret_cast<unsigned char*>(out->data()) + 4;
  const unsigned char* src = reinterpret_cast<const unsigned char*>(in.data());
  const size_t full = in.size() / kBlock * kBlock;
  if (!Aes(cbc, /*decrypt=*/true, key, iv, src, full, dst)) {
    return absl::DataLossError("AES-CBC decryption failed");
  }
  if (full < in.size()) {
    unsigned char mask[kBlock];
    if (!Aes(Cipher(key.size(), false), /*decrypt=*/false, key, nullptr, iv,
             kBlock, mask)) {
      return absl::DataLossError("AES-ECB failed");
    }
    for (size_t i = full; i < in.size(); ++i) dst[i] = src[i] ^ mask[i - full];
  }
  // The timestamp travelled in the event_size field; event_size is the
  // stored one (in the clear).
  char* p = out->data();
  std::memcpy(p, p + kEventSizeOffset, 4);
  std::memcpy(p + kEventSizeOffset, stored.data() + kEventSizeOffset, 4);
  return absl::OkStatus();
}

}  // namespace binlog
