#include "server/auth.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "binlog/encryption.h"
#include "binlog/index_file.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {

constexpr size_t kSaltLength = 20;
constexpr size_t kCryptDigestLength = 43;
constexpr int kStoredRounds = 5000;
// MySQL's caching_sha2_password refuses longer passwords.
constexpr size_t kMaxSha2Password = 256;
constexpr char kCryptAlphabet[] =
    "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

std::string OpensslError(absl::string_view what) {
  const unsigned long e = ERR_get_error();
  char buf[256] = {0};
  if (e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return absl::StrCat(what, e != 0 ? ": " : "", buf);
}

std::string Xor(absl::string_view a, absl::string_view b) {
  std::string out(a);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(out[i] ^ b[i % b.size()]);
  return out;
}

bool ConstantTimeEqual(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

// The three parts of a caching_sha2_password string (validated).
struct Sha2Stored {
  int rounds = 0;
  std::string salt;
  std::string digest;
};

absl::StatusOr<Sha2Stored> ParseSha2(absl::string_view s) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a caching_sha2_password authentication_string (", why,
        "; expected $A$005$ + 20 bytes of salt + 43 characters)"));
  };
  if (!absl::ConsumePrefix(&s, "$A$")) return bad("it does not start with $A$");
  if (s.size() < 4 || s[3] != '$') return bad("no 3-digit rounds field");
  int thousands = 0;
  if (!absl::ascii_isdigit(s[0]) || !absl::ascii_isdigit(s[1]) || !absl::ascii_isdigit(s[2]) ||
      !absl::SimpleAtoi(s.substr(0, 3), &thousands) || thousands < 5) {
    return bad("a rounds field below 005");
  }
  s.remove_prefix(4);
  if (s.size() != kSaltLength + kCryptDigestLength) return bad("wrong length");
  Sha2Stored out;
  out.rounds = thousands * 1000;
  out.salt = std::string(s.substr(0, kSaltLength));
  out.digest = std::string(s.substr(kSaltLength));
  for (char c : out.salt) {
    if (c == '\0' || c == '$') return bad("a NUL or '$' in the salt");
  }
  for (char c : out.digest) {
    if (std::strchr(kCryptAlphabet, c) == nullptr || c == '\0') {
      return bad("a digest character outside the crypt alphabet");
    }
  }
  return out;
}

bool Printable(absl::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

const char* AuthPluginName(AuthPlugin p) {
  return p == AuthPlugin::kNativePassword ? kNativePasswordPlugin : kCachingSha2Plugin;
}

absl::StatusOr<AuthPlugin> ParseAuthPlugin(absl::string_view name) {
  if (name == kNativePasswordPlugin) return AuthPlugin::kNativePassword;
  if (name == kCachingSha2Plugin) return AuthPlugin::kCachingSha2Password;
  return absl::InvalidArgumentError(absl::StrCat("unknown authentication plugin '",
                                                 name.substr(0, 64), "' (", kCachingSha2Plugin,
                                                 " or ", kNativePasswordPlugin, ")"));
}

std::string Sha1(absl::string_view data) {
  unsigned char d[SHA_DIGEST_LENGTH];
  ::SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  return std::string(reinterpret_cast<const char*>(d), sizeof(d));
}

std::string Sha256(absl::string_view data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  ::SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  return std::string(reinterpret_cast<const char*>(d), sizeof(d));
}

absl::StatusOr<std::string> AuthRandomBytes(size_t n) { return internal::RandomBytes(n); }

absl::StatusOr<std::string> NewScramble() {
  absl::StatusOr<std::string> s = AuthRandomBytes(20);
  if (!s.ok()) return s.status();
  // Printable: 94 characters from '!' to '~' but '$' (93 values).
  for (char& c : *s) {
    char v = static_cast<char>(33 + static_cast<uint8_t>(c) % 93);
    if (v >= '$') ++v;
    c = v;
  }
  return s;
}

std::string Sha256Crypt(absl::string_view password, absl::string_view salt, int rounds) {
  const size_t pl = password.size();
  const size_t sl = salt.size();
  // B = SHA256(password + salt + password).
  const std::string b = Sha256(absl::StrCat(password, salt, password));
  // A = SHA256(password + salt + B repeated to len(password) + for each
  // bit of len(password) from the lowest: B if set, password if not).
  std::string a_in = absl::StrCat(password, salt);
  for (size_t n = pl; n > 0; n -= std::min<size_t>(n, 32)) a_in.append(b, 0, std::min<size_t>(n, 32));
  for (size_t n = pl; n > 0; n >>= 1) {
    if (n & 1) {
      a_in.append(b);
    } else {
      a_in.append(password.data(), password.size());
    }
  }
  std::string c = Sha256(a_in);
  // P: SHA256(password repeated len(password) times), repeated to
  // len(password) bytes; S: SHA256(salt repeated 16 + A[0] times), to
  // len(salt) bytes.
  std::string dp_in;
  for (size_t i = 0; i < pl; ++i) dp_in.append(password.data(), pl);
  const std::string dp = Sha256(dp_in);
  std::string p;
  for (size_t n = pl; n > 0; n -= std::min<size_t>(n, 32)) p.append(dp, 0, std::min<size_t>(n, 32));
  std::string ds_in;
  for (int i = 0; i < 16 + static_cast<uint8_t>(c[0]); ++i) ds_in.append(salt.data(), sl);
  const std::string ds = Sha256(ds_in);
  std::string s;
  for (size_t n = sl; n > 0; n -= std::min<size_t>(n, 32)) s.append(ds, 0, std::min<size_t>(n, 32));
  // The rounds.
  unsigned char d[SHA256_DIGEST_LENGTH];
  std::memcpy(d, c.data(), sizeof(d));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const EVP_MD* md = EVP_sha256();
  for (int r = 0; ctx != nullptr && r < rounds; ++r) {
    EVP_DigestInit_ex(ctx, md, nullptr);
    if (r & 1) {
      EVP_DigestUpdate(ctx, p.data(), p.size());
    } else {
      EVP_DigestUpdate(ctx, d, sizeof(d));
    }
    if (r % 3 != 0) EVP_DigestUpdate(ctx, s.data(), s.size());
    if (r % 7 != 0) EVP_DigestUpdate(ctx, p.data(), p.size());
    if (r & 1) {
      EVP_DigestUpdate(ctx, d, sizeof(d));
    } else {
      EVP_DigestUpdate(ctx, p.data(), p.size());
    }
    EVP_DigestFinal_ex(ctx, d, nullptr);
  }
  EVP_MD_CTX_free(ctx);
  // The specification's byte order, 6 bits per character, lowest first.
  static constexpr int kOrder[10][3] = {{0, 10, 20},  {21, 1, 11},  {12, 22, 2}, {3, 13, 23},
                                        {24, 4, 14},  {15, 25, 5},  {6, 16, 26}, {27, 7, 17},
                                        {18, 28, 8},  {9, 19, 29}};
  std::string out;
  auto put = [&out](uint32_t w, int n) {
    for (int i = 0; i < n; ++i, w >>= 6) out.push_back(kCryptAlphabet[w & 0x3f]);
  };
  for (const auto& o : kOrder) put((uint32_t{d[o[0]]} << 16) | (uint32_t{d[o[1]]} << 8) | d[o[2]], 4);
  put((uint32_t{d[31]} << 8) | d[30], 3);
  return out;
}

std::string NativePasswordHash(absl::string_view password) {
  if (password.empty()) return std::string();
  return absl::StrCat("*", absl::AsciiStrToUpper(absl::BytesToHexString(Sha1(Sha1(password)))));
}

std::string CachingSha2PasswordHash(absl::string_view password, absl::string_view salt) {
  if (password.empty()) return std::string();
  return absl::StrCat("$A$005$", salt, Sha256Crypt(password, salt, kStoredRounds));
}

absl::StatusOr<std::string> NewCachingSha2PasswordHash(absl::string_view password) {
  absl::StatusOr<std::string> salt = AuthRandomBytes(kSaltLength);
  if (!salt.ok()) return salt.status();
  // Printable, never ':' or '$': 92 characters from '!' to '~'.
  for (char& c : *salt) {
    char v = static_cast<char>(33 + static_cast<uint8_t>(c) % 92);
    if (v >= '$') ++v;
    if (v >= ':') ++v;
    c = v;
  }
  return CachingSha2PasswordHash(password, *salt);
}

absl::Status ValidateAuthenticationString(AuthPlugin plugin, absl::string_view s) {
  if (s.empty()) return absl::OkStatus();
  if (plugin == AuthPlugin::kCachingSha2Password) return ParseSha2(s).status();
  bool ok = s.size() == 41 && s[0] == '*';
  for (size_t i = 1; ok && i < s.size(); ++i) {
    ok = absl::ascii_isdigit(s[i]) || (s[i] >= 'A' && s[i] <= 'F');
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        "not a mysql_native_password authentication_string (expected * + 40 "
        "uppercase hex digits, as PASSWORD() makes)");
  }
  return absl::OkStatus();
}

std::string UserLine(const std::string& user, const Credential& c) {
  const std::string& a = c.authentication_string;
  return absl::StrCat(user, ":", AuthPluginName(c.plugin), ":",
                      Printable(a) ? a : absl::StrCat("0x", absl::BytesToHexString(a)));
}

absl::StatusOr<UserMap> ParseUsersFile(absl::string_view text, absl::string_view name) {
  UserMap users;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty() || line[0] == '#') continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ":", line_no, ": ", why,
                       " (expected user:plugin:authentication_string)"));
    };
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() == 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ":", line_no,
          ": a user:password line; plain-text passwords are no longer read: "
          "write user:plugin:authentication_string lines, e.g. the output of "
          "`binlog_server --hash_user=USER --auth_plugin=caching_sha2_password` "
          "(it reads the password on standard input)"));
    }
    if (f.size() != 3) return bad("a line without ':'");
    if (f[0].empty()) return bad("an empty user name");
    absl::StatusOr<AuthPlugin> plugin = ParseAuthPlugin(f[1]);
    if (!plugin.ok()) return bad(plugin.status().message());
    std::string auth(f[2]);
    if (absl::StartsWith(auth, "0x") || absl::StartsWith(auth, "0X")) {
      const absl::string_view hex = absl::string_view(auth).substr(2);
      bool hex_ok = hex.size() % 2 == 0;
      for (char c : hex) hex_ok = hex_ok && absl::ascii_isxdigit(c);
      if (!hex_ok) return bad("a 0x authentication_string that is not hex");
      auth = absl::HexStringToBytes(hex);
    }
    absl::Status v = ValidateAuthenticationString(*plugin, auth);
    if (!v.ok()) return bad(v.message());
    Credential c;
    c.plugin = *plugin;
    c.authentication_string = std::move(auth);
    if (!users.emplace(std::string(f[0]), std::move(c)).second) {
      return bad(absl::StrCat("user '", f[0], "' listed twice"));
    }
  }
  return users;
}

absl::StatusOr<UserMap> LoadUsersFile(io::FileSystem* fs, const std::string& path) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  absl::Status mode = io::CheckPrivateFile(fs, path, 0077, "password hashes");
  if (!mode.ok()) return mode;
  absl::StatusOr<std::string> text = ReadSmallFile(fs, path, 16 << 20);
  if (!text.ok()) return text.status();
  return ParseUsersFile(*text, path);
}

absl::StatusOr<std::string> LoadPasswordFile(io::FileSystem* fs, const std::string& path) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  absl::Status mode = io::CheckPrivateFile(fs, path, 0077, "a password");
  if (!mode.ok()) return mode;
  absl::StatusOr<std::string> text = ReadSmallFile(fs, path, 64 << 10);
  if (!text.ok()) return text.status();
  std::string pw = std::move(*text);
  const size_t nl = pw.find_first_of("\r\n");
  if (nl != std::string::npos) pw.resize(nl);
  return pw;
}

// --- RSA -----------------------------------------------------------------------

RsaKeyPair::~RsaKeyPair() { EVP_PKEY_free(static_cast<EVP_PKEY*>(pkey_)); }

namespace {

absl::StatusOr<std::string> PublicPem(EVP_PKEY* k) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return absl::InternalError(OpensslError("BIO_new"));
  std::string out;
  if (PEM_write_bio_PUBKEY(bio, k) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  if (out.empty()) return absl::InternalError(OpensslError("PEM_write_bio_PUBKEY"));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RsaKeyPair>> RsaKeyPair::Generate(int bits) {
  EVP_PKEY* k = EVP_RSA_gen(static_cast<unsigned>(bits));
  if (k == nullptr) return absl::InternalError(OpensslError("EVP_RSA_gen"));
  std::unique_ptr<RsaKeyPair> pair(new RsaKeyPair());
  pair->pkey_ = k;
  absl::StatusOr<std::string> pem = PublicPem(k);
  if (!pem.ok()) return pem.status();
  pair->public_pem_ = std::move(*pem);
  return pair;
}

absl::StatusOr<std::unique_ptr<RsaKeyPair>> RsaKeyPair::Load(io::FileSystem* fs,
                                                             const std::string& private_pem_path,
                                                             const std::string& public_pem_path) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  absl::Status mode = io::CheckPrivateFile(fs, private_pem_path, 0007, "an RSA private key");
  if (!mode.ok()) return mode;
  absl::StatusOr<std::string> priv = ReadSmallFile(fs, private_pem_path, 1 << 20);
  if (!priv.ok()) return priv.status();
  absl::StatusOr<std::string> pub = ReadSmallFile(fs, public_pem_path, 1 << 20);
  if (!pub.ok()) return pub.status();
  BIO* b = BIO_new_mem_buf(priv->data(), static_cast<int>(priv->size()));
  EVP_PKEY* k = b == nullptr ? nullptr : PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  if (k == nullptr || EVP_PKEY_base_id(k) != EVP_PKEY_RSA) {
    EVP_PKEY_free(k);
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(private_pem_path, ": not a PEM RSA private key"));
  }
  std::unique_ptr<RsaKeyPair> pair(new RsaKeyPair());
  pair->pkey_ = k;
  b = BIO_new_mem_buf(pub->data(), static_cast<int>(pub->size()));
  EVP_PKEY* pk = b == nullptr ? nullptr : PEM_read_bio_PUBKEY(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  if (pk == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(public_pem_path, ": not a PEM public key (SubjectPublicKeyInfo)"));
  }
  const int same = EVP_PKEY_eq(k, pk);
  EVP_PKEY_free(pk);
  if (same != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        public_pem_path, " is not the public key of ", private_pem_path));
  }
  absl::StatusOr<std::string> pem = PublicPem(k);
  if (!pem.ok()) return pem.status();
  pair->public_pem_ = std::move(*pem);
  return pair;
}

size_t RsaKeyPair::cipher_length() const {
  return static_cast<size_t>(EVP_PKEY_get_size(static_cast<EVP_PKEY*>(pkey_)));
}

absl::StatusOr<std::string> RsaKeyPair::Decrypt(absl::string_view cipher) const {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(static_cast<EVP_PKEY*>(pkey_), nullptr);
  std::string out(cipher_length(), '\0');
  size_t n = out.size();
  const bool ok = ctx != nullptr && EVP_PKEY_decrypt_init(ctx) == 1 &&
                  EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
                  EVP_PKEY_decrypt(ctx, reinterpret_cast<unsigned char*>(out.data()), &n,
                                   reinterpret_cast<const unsigned char*>(cipher.data()),
                                   cipher.size()) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) {
    ERR_clear_error();
    return absl::InvalidArgumentError("RSA-OAEP decryption failed");
  }
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> RsaKeyPair::Encrypt(absl::string_view public_pem,
                                                absl::string_view plain) {
  BIO* b = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* pk = b == nullptr ? nullptr : PEM_read_bio_PUBKEY(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  if (pk == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM public key");
  }
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(pk, nullptr);
  std::string out(static_cast<size_t>(EVP_PKEY_get_size(pk)), '\0');
  size_t n = out.size();
  const bool ok = ctx != nullptr && EVP_PKEY_encrypt_init(ctx) == 1 &&
                  EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
                  EVP_PKEY_encrypt(ctx, reinterpret_cast<unsigned char*>(out.data()), &n,
                                   reinterpret_cast<const unsigned char*>(plain.data()),
                                   plain.size()) == 1;
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(pk);
  if (!ok) return absl::InvalidArgumentError(OpensslError("RSA-OAEP encryption failed"));
  out.resize(n);
  return out;
}

// --- the client's side -----------------------------------------------------------

std::string NativePasswordToken(absl::string_view password, absl::string_view scramble) {
  if (password.empty()) return std::string();
  const std::string stage1 = Sha1(password);
  return Xor(stage1, Sha1(absl::StrCat(scramble, Sha1(stage1))));
}

std::string CachingSha2Token(absl::string_view password, absl::string_view scramble) {
  if (password.empty()) return std::string();
  const std::string d1 = Sha256(password);
  return Xor(d1, Sha256(absl::StrCat(Sha256(d1), scramble)));
}

std::string XorWithScramble(absl::string_view password_nul, absl::string_view scramble) {
  return Xor(password_nul, scramble);
}

// --- the server's side -------------------------------------------------------------

Authenticator::Authenticator(UserMap users, std::shared_ptr<const RsaKeyPair> rsa)
    : users_(std::move(users)), rsa_(std::move(rsa)) {
  // Credentials of a password nobody knows (random, never shown), with
  // the same costs as a real user's.
  absl::StatusOr<std::string> secret = AuthRandomBytes(32);
  const std::string pw =
      absl::BytesToHexString(secret.ok() ? *secret : std::string(32, '\x5a'));
  dummy_native_.plugin = AuthPlugin::kNativePassword;
  dummy_native_.authentication_string = NativePasswordHash(pw);
  dummy_sha2_.plugin = AuthPlugin::kCachingSha2Password;
  absl::StatusOr<std::string> h = NewCachingSha2PasswordHash(pw);
  dummy_sha2_.authentication_string =
      h.ok() ? *h : CachingSha2PasswordHash(pw, std::string(kSaltLength, 'x'));
  // The key of UnknownUserPlugin(): a digest of the stored credentials,
  // as secret as they are, and the same after a restart (a random key
  // would give an unknown name another plugin after each restart, while
  // a known name keeps its own).
  std::string key_in = "binlog_server unknown users";
  for (const auto& [name, c] : users_) {
    if (c.plugin == AuthPlugin::kNativePassword) ++native_users_;
    absl::StrAppend(&key_in, name.size(), ":", name, AuthPluginName(c.plugin), ":",
                    c.authentication_string.size(), ":", c.authentication_string);
  }
  unknown_key_ = Sha256(key_in);
}

AuthPlugin Authenticator::UnknownUserPlugin(const std::string& user,
                                            AuthPlugin default_plugin) const {
  if (users_.empty()) return default_plugin;
  const std::string h = Sha256(absl::StrCat(unknown_key_, user));
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(h[i]);
  return v % users_.size() < native_users_ ? AuthPlugin::kNativePassword
                                           : AuthPlugin::kCachingSha2Password;
}

std::shared_ptr<const RsaKeyPair> Authenticator::Rsa() {
  std::lock_guard<std::mutex> l(rsa_mu_);
  if (rsa_ == nullptr) {
    absl::StatusOr<std::unique_ptr<RsaKeyPair>> k = RsaKeyPair::Generate();
    if (k.ok()) rsa_ = std::move(*k);
  }
  return rsa_;
}

AuthStats Authenticator::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool Authenticator::cached(const std::string& user) const {
  std::lock_guard<std::mutex> l(mu_);
  return cache_.count(user) != 0;
}

absl::Status Authenticator::Authenticate(const AuthRequest& req, AuthPlugin default_plugin,
                                         AuthChannel* ch) {
  const absl::Status denied = absl::PermissionDeniedError("access denied");
  // The plugin the client answered with. No name (an old client without
  // CLIENT_PLUGIN_AUTH): a 20-byte or empty answer is
  // mysql_native_password's.
  AuthPlugin client = default_plugin;
  bool client_known = true;
  if (req.client_plugin.empty()) {
    if (req.auth_response.empty() || req.auth_response.size() == 20) {
      client = AuthPlugin::kNativePassword;
    } else {
      client_known = false;
    }
  } else {
    absl::StatusOr<AuthPlugin> p = ParseAuthPlugin(req.client_plugin);
    if (p.ok()) {
      client = *p;
    } else {
      client_known = false;  // another plugin: switch to one of ours
    }
  }
  auto it = users_.find(req.user);
  const bool known = it != users_.end();
  const Credential* c = nullptr;
  if (known) {
    c = &it->second;
  } else {
    // Not the client's plugin (the client chooses it: a switch for known
    // names and none for unknown ones would tell them apart) but one
    // derived from the name alone.
    c = UnknownUserPlugin(req.user, default_plugin) == AuthPlugin::kNativePassword
            ? &dummy_native_
            : &dummy_sha2_;
  }
  std::string token = req.auth_response;
  if (!client_known || client != c->plugin) {
    const std::string sw = EncodeAuthSwitch(AuthPluginName(c->plugin), req.scramble);
    {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.auth_switches;
    }
    absl::Status s = ch->Send(sw);
    if (!s.ok()) return s;
    absl::StatusOr<std::string> r = ch->Read();
    if (!r.ok()) return r.status();
    token = std::move(*r);
  }
  absl::Status s = c->plugin == AuthPlugin::kNativePassword
                       ? Native(*c, req.scramble, token)
                       : CachingSha2(req.user, *c, known, req, token, ch);
  if (s.ok() && !known) return denied;  // unreachable: nobody knows the password
  return s;
}

absl::Status Authenticator::Native(const Credential& c, absl::string_view scramble,
                                   absl::string_view token) {
  const absl::Status denied = absl::PermissionDeniedError("access denied");
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.native_checks;
  }
  const std::string& stored = c.authentication_string;
  if (stored.empty() || token.empty()) {
    return stored.empty() && token.empty() ? absl::OkStatus() : denied;
  }
  if (token.size() != 20) return denied;
  // stored = "*" + hex(SHA1(SHA1(pw))); token = SHA1(pw) XOR
  // SHA1(scramble + SHA1(SHA1(pw))): recover SHA1(pw), hash it, compare.
  const std::string stage2 = absl::HexStringToBytes(absl::string_view(stored).substr(1));
  const std::string stage1 = Xor(token, Sha1(absl::StrCat(scramble, stage2)));
  return ConstantTimeEqual(Sha1(stage1), stage2) ? absl::OkStatus() : denied;
}

bool Authenticator::CheckSha2Password(const Credential& c, absl::string_view password) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.sha256_crypts;
  }
  absl::StatusOr<Sha2Stored> st = ParseSha2(c.authentication_string);
  if (!st.ok() || password.size() > kMaxSha2Password) return false;
  return ConstantTimeEqual(Sha256Crypt(password, st->salt, st->rounds), st->digest);
}

absl::Status Authenticator::CachingSha2(const std::string& user, const Credential& c, bool known,
                                        const AuthRequest& req, absl::string_view token,
                                        AuthChannel* ch) {
  const absl::Status denied = absl::PermissionDeniedError("access denied");
  // An empty answer: an empty password.
  if (token.empty() || (token.size() == 1 && token[0] == '\0')) {
    return c.authentication_string.empty() ? absl::OkStatus() : denied;
  }
  if (token.size() != 32) return denied;
  // The fast path: the cache holds SHA256(SHA256(pw)); the token is
  // SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble).
  std::string cached;
  if (known) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = cache_.find(user);
    if (it != cache_.end()) cached = it->second;
  }
  if (!cached.empty()) {
    const std::string d1 = Xor(token, Sha256(absl::StrCat(cached, req.scramble)));
    if (ConstantTimeEqual(Sha256(d1), cached)) {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.fast_auths;
      }
      return ch->Send(std::string{static_cast<char>(kAuthMoreData),
                                  static_cast<char>(kFastAuthSuccess)});
    }
  }
  // The full authentication: the password itself.
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.full_auths;
  }
  absl::Status s = ch->Send(std::string{static_cast<char>(kAuthMoreData),
                                        static_cast<char>(kPerformFullAuthentication)});
  if (!s.ok()) return s;
  absl::StatusOr<std::string> r = ch->Read();
  if (!r.ok()) return r.status();
  std::string password;
  if (req.secure) {
    // The password in clear, NUL-terminated.
    password = std::move(*r);
    const size_t nul = password.find('\0');
    if (nul == std::string::npos) return denied;
    password.resize(nul);
  } else {
    const std::shared_ptr<const RsaKeyPair> rsa = Rsa();
    if (rsa == nullptr) return denied;
    if (r->size() == 1 && static_cast<uint8_t>((*r)[0]) == kRequestPublicKey) {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.public_key_requests;
      }
      s = ch->Send(absl::StrCat(std::string(1, static_cast<char>(kAuthMoreData)),
                                rsa->public_pem()));
      if (!s.ok()) return s;
      r = ch->Read();
      if (!r.ok()) return r.status();
    }
    if (r->size() != rsa->cipher_length()) return denied;
    absl::StatusOr<std::string> plain = rsa->Decrypt(*r);
    if (!plain.ok()) return denied;
    password = Xor(*plain, req.scramble);
    const size_t nul = password.find('\0');
    if (nul == std::string::npos) return denied;
    password.resize(nul);
  }
  if (password.empty()) return c.authentication_string.empty() ? absl::OkStatus() : denied;
  if (!CheckSha2Password(c, password)) return denied;
  if (known) {
    std::lock_guard<std::mutex> l(mu_);
    cache_[user] = Sha256(Sha256(password));
  }
  return absl::OkStatus();
}

}  // namespace server
}  // namespace binlog
