// File: server/auth.h
//
// Authentication for binlog_server: the stored credentials (what MySQL's
// mysql.user.authentication_string holds, so an operator can copy them
// from a server), the users file that lists them, and the server side of
// the two authentication plugins:
//
//   mysql_native_password   stored "*" + 40 uppercase hex of
//                           SHA1(SHA1(password)); the client proves it
//                           knows SHA1(password) against the 20-byte
//                           scramble. Kept for MariaDB replicas.
//   caching_sha2_password   stored "$A$005$" + 20-byte salt + 43 characters
//                           of SHA-256 crypt (5000 rounds); the fast path
//                           checks the client's scramble against a cache of
//                           SHA256(SHA256(password)) filled by a successful
//                           full authentication, which takes the password
//                           itself: in clear over a secure transport (TLS,
//                           a unix socket), RSA-OAEP encrypted otherwise
//                           (the server's key pair, sent on request).
//
// All cryptography is OpenSSL's (libcrypto); random bytes come from
// RAND_bytes, as the binlog encryption's (binlog/encryption.h).
//
// Thread safety: the free functions are thread-safe; RsaKeyPair is
// immutable after creation; Authenticator is thread-safe (one per server,
// shared by the sessions).

#ifndef BINLOG_SERVER_AUTH_H_
#define BINLOG_SERVER_AUTH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/file_system.h"

namespace binlog {
namespace server {

inline constexpr char kNativePasswordPlugin[] = "mysql_native_password";
inline constexpr char kCachingSha2Plugin[] = "caching_sha2_password";

enum class AuthPlugin { kNativePassword, kCachingSha2Password };

// The plugin's name as the protocol and the users file spell it.
const char* AuthPluginName(AuthPlugin p);
// InvalidArgument for a name that is neither plugin.
absl::StatusOr<AuthPlugin> ParseAuthPlugin(absl::string_view name);

// --- primitives (OpenSSL) -------------------------------------------------

std::string Sha1(absl::string_view data);    // 20 bytes
std::string Sha256(absl::string_view data);  // 32 bytes

// `n` random bytes from RAND_bytes; Internal if OpenSSL fails.
absl::StatusOr<std::string> AuthRandomBytes(size_t n);

// The 20-byte scramble (nonce) of a handshake: random, printable and never
// NUL or '$' (clients treat it as a C string), as the servers make it.
absl::StatusOr<std::string> NewScramble();

// SHA-256 crypt (U. Drepper's "Unix crypt using SHA-256", as glibc's
// crypt(3) "$5$") of `password` with `salt` and `rounds`: the 43 characters
// of its custom base64 encoding, the part after the last '$'. Unlike the
// specification, which truncates the salt to 16 bytes, every byte of
// `salt` is used (MySQL's salts have 20); `rounds` is used as given (the
// specification clamps it to 1000..999999999). For salts of at most 16
// bytes and rounds in that range the result is the specification's.
std::string Sha256Crypt(absl::string_view password, absl::string_view salt, int rounds);

// --- stored credentials ------------------------------------------------------

// mysql_native_password's authentication_string: "*" + 40 uppercase hex
// of SHA1(SHA1(password)), "" for an empty password (MySQL's and MariaDB's
// PASSWORD()).
std::string NativePasswordHash(absl::string_view password);

// caching_sha2_password's authentication_string: "$A$005$" + `salt` (20
// bytes, none of them NUL or '$') + Sha256Crypt(password, salt, 5000);
// "" for an empty password.
std::string CachingSha2PasswordHash(absl::string_view password, absl::string_view salt);
// The same with a new random salt of printable characters (never ':' or
// '$'), so the string fits on one line of the users file as is.
absl::StatusOr<std::string> NewCachingSha2PasswordHash(absl::string_view password);

// One user's stored credential.
struct Credential {
  AuthPlugin plugin = AuthPlugin::kCachingSha2Password;
  std::string authentication_string;  // "" = empty password
};

// InvalidArgument unless `s` is a well-formed authentication_string of
// `plugin` (empty, or the layouts above; caching_sha2_password: digest
// type 'A', a rounds field of 3 digits from 005 to 4095 thousands).
absl::Status ValidateAuthenticationString(AuthPlugin plugin, absl::string_view s);

// --- the users file ------------------------------------------------------------
//
// One user per line, `user:plugin:authentication_string`; blank lines and
// lines starting with '#' are ignored. The user name runs to the first
// ':', the plugin to the second, the authentication_string to the end of
// the line (it may hold ':'). An authentication_string of
// caching_sha2_password may also be written "0x" + hex (its salt may hold
// any byte but NUL and '$': MySQL prints it that way, e.g.
// SELECT CONCAT('0x', HEX(authentication_string)) FROM mysql.user).
// The old plaintext `user:password` format is refused (a line of two
// fields), naming `binlog_server --hash_user`.

using UserMap = std::map<std::string, Credential>;

// The line of `user` (no newline): the authentication_string as is when
// it is printable ASCII, else in the 0x form.
std::string UserLine(const std::string& user, const Credential& c);

// Parses a users file's text; `name` names it in errors (InvalidArgument
// naming the line: a plaintext line, an unknown plugin, a malformed
// authentication_string, a repeated or empty user).
absl::StatusOr<UserMap> ParseUsersFile(absl::string_view text, absl::string_view name);

// Reads and parses the users file at `path` (fs nullptr: POSIX).
// FailedPrecondition when its group or other users may read or write it
// (any of the mode bits 0077: it holds password hashes, which a guessing
// attack can test offline), before anything is read; the file system's
// errors otherwise (NotFound for a missing file).
absl::StatusOr<UserMap> LoadUsersFile(io::FileSystem* fs, const std::string& path);

// Reads a password file (binlog_server's --source_password_file): its
// first line, without the line end. FailedPrecondition when its group or
// other users may read or write it (mode bits 0077), before anything is
// read; ResourceExhausted for a file over 64 KiB; the file system's errors
// otherwise.
absl::StatusOr<std::string> LoadPasswordFile(io::FileSystem* fs, const std::string& path);

// --- RSA (caching_sha2_password over a plaintext transport) ------------------

class RsaKeyPair {
 public:
  // A new key of `bits` bits (public exponent 65537), in memory only.
  static absl::StatusOr<std::unique_ptr<RsaKeyPair>> Generate(int bits = 2048);
  // The PEM private key at `private_pem_path` (PKCS#8 or PKCS#1) and the
  // PEM public key at `public_pem_path` (SubjectPublicKeyInfo).
  // FailedPrecondition when the private key file is open to other users
  // (mode bits 0007) or the two keys do not match; InvalidArgument for
  // files that are not PEM keys; the file system's errors.
  static absl::StatusOr<std::unique_ptr<RsaKeyPair>> Load(io::FileSystem* fs,
                                                          const std::string& private_pem_path,
                                                          const std::string& public_pem_path);
  ~RsaKeyPair();

  // The public key in PEM (SubjectPublicKeyInfo), as the server sends it.
  const std::string& public_pem() const { return public_pem_; }
  // The modulus size in bytes: the length of every ciphertext.
  size_t cipher_length() const;
  // RSA-OAEP (SHA-1, MGF1 SHA-1: what the clients use) decryption;
  // InvalidArgument for a ciphertext that does not decrypt.
  absl::StatusOr<std::string> Decrypt(absl::string_view cipher) const;
  // The client side (tests, server/client.h): RSA-OAEP encryption of
  // `plain` with the public key `public_pem`.
  static absl::StatusOr<std::string> Encrypt(absl::string_view public_pem,
                                             absl::string_view plain);

 private:
  RsaKeyPair() = default;
  void* pkey_ = nullptr;  // EVP_PKEY*
  std::string public_pem_;
};

// --- the client's side (server/client.h, tests) --------------------------------

// mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))),
// empty for an empty password.
std::string NativePasswordToken(absl::string_view password, absl::string_view scramble);
// caching_sha2_password's first answer: SHA256(pw) XOR
// SHA256(SHA256(SHA256(pw)) + scramble), empty for an empty password.
std::string CachingSha2Token(absl::string_view password, absl::string_view scramble);
// The RSA full authentication's plaintext: (password + NUL) XOR the
// scramble, repeated.
std::string XorWithScramble(absl::string_view password_nul, absl::string_view scramble);

// caching_sha2_password's codes after the first answer, each sent as the
// payload {0x01 (more data), code}; kRequestPublicKey is the client's.
inline constexpr uint8_t kAuthMoreData = 0x01;
inline constexpr uint8_t kRequestPublicKey = 0x02;
inline constexpr uint8_t kFastAuthSuccess = 0x03;
inline constexpr uint8_t kPerformFullAuthentication = 0x04;

// --- the server's side ----------------------------------------------------------

// The packets of one authentication exchange after the handshake
// response: the session frames and moves them.
class AuthChannel {
 public:
  virtual ~AuthChannel() = default;
  virtual absl::Status Send(absl::string_view payload) = 0;
  virtual absl::StatusOr<std::string> Read() = 0;
};

// What the handshake response says, and the connection.
struct AuthRequest {
  std::string user;
  std::string client_plugin;  // empty when the client names none
  std::string auth_response;
  std::string scramble;       // the handshake's, 20 bytes
  // TLS or a unix socket: caching_sha2_password's full authentication
  // then takes the password in clear, as MySQL does.
  bool secure = false;
};

// Counters (tests: an unknown user and a wrong password cost the same).
struct AuthStats {
  uint64_t sha256_crypts = 0;   // stored-digest computations (5000 rounds)
  uint64_t native_checks = 0;   // mysql_native_password token checks
  uint64_t fast_auths = 0;      // caching_sha2_password fast-path successes
  uint64_t full_auths = 0;      // full authentications begun
  uint64_t public_key_requests = 0;
  uint64_t auth_switches = 0;
};

class Authenticator {
 public:
  // `rsa` nullptr: a 2048-bit pair is generated when a full
  // authentication over a plaintext transport first needs one (about
  // 0.1 s, once); if that fails, such authentications fail (as MySQL's
  // without RSA keys) and the next one tries again.
  Authenticator(UserMap users, std::shared_ptr<const RsaKeyPair> rsa);

  // Runs the exchange for `req` over `ch`, up to (not including) the final
  // OK or ERR, which the caller sends. OK: authenticated.
  // PermissionDenied: unknown user, wrong password, or a malformed answer
  // (the caller answers ER_ACCESS_DENIED_ERROR, the same for each). Other
  // errors: the channel's (the connection is gone).
  //
  // A user configured with another plugin than the client's gets an auth
  // switch (0xFE, plugin, the same scramble). An unknown user is treated as
  // a user with a credential nobody knows, so the exchange, the hash work
  // and the answer are those of a wrong password. Its plugin does not
  // depend on the client's (which the client picks: else a switch, or its
  // absence, would tell existing names from unknown ones) but on the name
  // alone, through a keyed hash whose key is a digest of the stored
  // credentials (secret as they are, and stable across restarts): the same
  // name gets the same plugin on every attempt, and names get each plugin
  // in the proportion of the configured users that have it (with no users
  // configured: `default_plugin`).
  absl::Status Authenticate(const AuthRequest& req, AuthPlugin default_plugin,
                            AuthChannel* ch);

  AuthStats stats() const;
  // The cache of SHA256(SHA256(password)) per caching_sha2_password user.
  bool cached(const std::string& user) const;

 private:
  absl::Status Native(const Credential& c, absl::string_view scramble, absl::string_view token);
  absl::Status CachingSha2(const std::string& user, const Credential& c, bool known,
                           const AuthRequest& req, absl::string_view token, AuthChannel* ch);
  // Whether `password` matches the stored caching_sha2_password string
  // (one SHA-256 crypt, counted).
  bool CheckSha2Password(const Credential& c, absl::string_view password);

  // The plugin an unknown user is given (see Authenticate()).
  AuthPlugin UnknownUserPlugin(const std::string& user, AuthPlugin default_plugin) const;

  // The key pair (generated on first use when none was given).
  std::shared_ptr<const RsaKeyPair> Rsa();

  const UserMap users_;
  // Credentials nobody knows, for unknown users.
  Credential dummy_native_;
  Credential dummy_sha2_;
  // UnknownUserPlugin()'s key and the count of native users.
  std::string unknown_key_;
  size_t native_users_ = 0;

  mutable std::mutex mu_;
  std::map<std::string, std::string> cache_;  // guarded by mu_
  std::shared_ptr<const RsaKeyPair> rsa_;     // guarded by rsa_mu_
  std::mutex rsa_mu_;
  AuthStats stats_;                           // guarded by mu_
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_AUTH_H_
