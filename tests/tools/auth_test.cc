// server/auth.h: the stored credentials against published vectors and a
// real server's, the users file, the RSA key pair, and every path of the
// server's authentication exchange driven by a scripted client.

#include "server/auth.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <set>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {

std::string Hex(absl::string_view s) { return absl::BytesToHexString(s); }

std::string NewTempDir() {
  char tmpl[] = "/tmp/auth_test_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d == nullptr ? std::string("/tmp") : std::string(d);
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::trunc) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

TEST(AuthDigestTest, OpensslDigestsMatchFipsVectors) {
  EXPECT_EQ(Hex(Sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Hex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AuthDigestTest, ScramblesArePrintableAndRandom) {
  auto a = NewScramble();
  auto b = NewScramble();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 20u);
  EXPECT_NE(*a, *b);
  for (char c : *a) {
    EXPECT_TRUE(c > ' ' && c <= '~' && c != '$') << static_cast<int>(c);
  }
}

// The values of PASSWORD() on MariaDB 10.11 (SELECT PASSWORD('x'), ...),
// which MySQL 5.7's mysql_native_password stores the same way.
TEST(StoredCredentialTest, NativeHashMatchesMariaDbPassword) {
  EXPECT_EQ(NativePasswordHash("x"), "*B69027D44F6E5EDC07F1AEAD1477967B16F28227");
  EXPECT_EQ(NativePasswordHash("pw"), "*D821809F681A40A6E379B50D0463EFAE20BDD122");
  EXPECT_EQ(NativePasswordHash("p:w $x"), "*2CF5B4303A56AB52BF52E16C1744CF708006707D");
  EXPECT_EQ(NativePasswordHash(""), "");
}

// U. Drepper's "Unix crypt using SHA-256 and SHA-512", the published
// SHA-256 test vectors. Sha256Crypt takes the salt and rounds as used: the
// specification truncates salts to 16 bytes and raises rounds to 1000,
// which the vectors' expected strings show.
TEST(StoredCredentialTest, Sha256CryptMatchesDreppersVectors) {
  struct V {
    const char* password;
    const char* salt;
    int rounds;
    const char* digest;
  };
  const V vectors[] = {
      {"Hello world!", "saltstring", 5000, "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
      {"Hello world!", "saltstringsaltst", 10000, "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"},
      {"This is just a test", "toolongsaltstrin", 5000,
       "Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"},
      {"a very much longer text to encrypt.  This one even stretches over more"
       "than one line.",
       "anotherlongsalts", 1400, "Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1"},
      {"we have a short salt string but not a short password", "short", 77777,
       "JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/"},
      {"a short string", "asaltof16chars..", 123456,
       "gP3VQ/6X7UUEW3HkBn2w1/Ptq2jxPyzV/cZKmF/wJvD"},
      {"the minimum number is still observed", "roundstoolow", 1000,
       "yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC"},
  };
  for (const V& v : vectors) {
    EXPECT_EQ(Sha256Crypt(v.password, v.salt, v.rounds), v.digest) << v.password;
  }
}

// Where MySQL's caching_sha2_password differs from the specification: the
// salt has 20 bytes, all of them used (the specification would use 16);
// the rounds are written "$005$" (thousands) instead of "rounds=5000$";
// the stored string is "$A$005$" + salt + digest, with no '$' between.
TEST(StoredCredentialTest, CachingSha2LayoutIsMySqls) {
  const std::string salt = "abcdefghijklmnopqrst";
  const std::string h = CachingSha2PasswordHash("secret", salt);
  ASSERT_EQ(h.size(), 7u + 20 + 43);
  EXPECT_EQ(h.substr(0, 7), "$A$005$");
  EXPECT_EQ(h.substr(7, 20), salt);
  EXPECT_EQ(h.substr(27), Sha256Crypt("secret", salt, 5000));
  EXPECT_NE(Sha256Crypt("secret", salt, 5000), Sha256Crypt("secret", salt.substr(0, 16), 5000));
  EXPECT_EQ(CachingSha2PasswordHash("", salt), "");
  EXPECT_TRUE(ValidateAuthenticationString(AuthPlugin::kCachingSha2Password, h).ok());

  auto fresh = NewCachingSha2PasswordHash("secret");
  ASSERT_TRUE(fresh.ok());
  auto again = NewCachingSha2PasswordHash("secret");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*fresh, *again);  // a new salt each time
  EXPECT_TRUE(ValidateAuthenticationString(AuthPlugin::kCachingSha2Password, *fresh).ok());
  for (char c : fresh->substr(7, 20)) {
    EXPECT_TRUE(c > ' ' && c <= '~' && c != ':' && c != '$') << static_cast<int>(c);
  }
  EXPECT_EQ(fresh->substr(27), Sha256Crypt("secret", fresh->substr(7, 20), 5000));

  for (const char* bad : {"$A$005$short", "$B$005$abcdefghijklmnopqrstUn/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5",
                          "$A$004$abcdefghijklmnopqrstUn/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5",
                          "$A$005$abcdefghijklmnopqrstUn/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvx!5"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(
        ValidateAuthenticationString(AuthPlugin::kCachingSha2Password, bad)))
        << bad;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      ValidateAuthenticationString(AuthPlugin::kNativePassword, "*b69027d44f6e5edc07f1aead1477967b16f28227")));
}

// The client's first caching_sha2_password answer, as another client
// computes it (Boost.MySQL's test vector, taken from MySQL's Python
// connector): password "hola".
TEST(StoredCredentialTest, CachingSha2TokenMatchesAnIndependentClient) {
  const unsigned char nonce[20] = {0x3e, 0x3b, 0x04, 0x55, 0x04, 0x70, 0x16, 0x3a, 0x4c, 0x15,
                                   0x35, 0x03, 0x15, 0x76, 0x73, 0x22, 0x46, 0x08, 0x18, 0x01};
  EXPECT_EQ(Hex(CachingSha2Token("hola", absl::string_view(reinterpret_cast<const char*>(nonce),
                                                           sizeof(nonce)))),
            "a1c1e1e91bb6544ba7374b9c566d693e06ca070298acd10618c690389d88e120");
  EXPECT_EQ(CachingSha2Token("", "x"), "");
}

// --- the users file -----------------------------------------------------------

TEST(UsersFileTest, ParsesBothPluginsAndRoundTripsLines) {
  const std::string sha2 = CachingSha2PasswordHash("pw2", "abc:defghijklmnopqrs");
  // MySQL's salts may hold any byte but NUL and '$': the 0x form.
  const std::string odd_salt = "a\nb\x01" "efghijklmnopqrst";
  ASSERT_EQ(odd_salt.size(), 20u);
  const std::string odd = CachingSha2PasswordHash("pw3", odd_salt);
  Credential oc{AuthPlugin::kCachingSha2Password, odd};
  const std::string odd_line = UserLine("odd", oc);
  EXPECT_TRUE(absl::StartsWith(odd_line, "odd:caching_sha2_password:0x")) << odd_line;
  const std::string text = absl::StrCat(
      "# replicas\n\nrepl:mysql_native_password:", NativePasswordHash("pw"), "\r\n",
      "sha2:caching_sha2_password:", sha2, "\n", odd_line, "\n",
      "nopw:caching_sha2_password:\n");
  auto users = ParseUsersFile(text, "users");
  ASSERT_TRUE(users.ok()) << users.status();
  ASSERT_EQ(users->size(), 4u);
  EXPECT_EQ(users->at("repl").plugin, AuthPlugin::kNativePassword);
  EXPECT_EQ(users->at("repl").authentication_string, NativePasswordHash("pw"));
  EXPECT_EQ(users->at("sha2").authentication_string, sha2);  // ':' in the salt
  EXPECT_EQ(users->at("odd").authentication_string, odd);
  EXPECT_EQ(users->at("nopw").authentication_string, "");
  EXPECT_EQ(UserLine("sha2", users->at("sha2")), "sha2:caching_sha2_password:" + sha2);
}

TEST(UsersFileTest, RefusesThePlaintextFormatAndMalformedLines) {
  auto old = ParseUsersFile("# old\nrepl:secret\n", "users");
  ASSERT_TRUE(absl::IsInvalidArgument(old.status()));
  EXPECT_TRUE(absl::StrContains(old.status().message(), "users:2:")) << old.status();
  EXPECT_TRUE(absl::StrContains(old.status().message(), "--hash_user")) << old.status();
  EXPECT_TRUE(absl::StrContains(old.status().message(), "plain-text")) << old.status();
  for (const char* bad : {"repl:sha256_password:x", "repl:mysql_native_password:secret",
                          "repl:caching_sha2_password:secret", "repl:caching_sha2_password:0xZZ",
                          ":mysql_native_password:", "norm", "a:mysql_native_password:\na:mysql_native_password:"}) {
    auto r = ParseUsersFile(bad, "f");
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "f:")) << r.status();
  }
}

// A users file its group or other users may read or write is refused
// before it is read: its hashes can be tested offline.
TEST(UsersFileTest, AFileOthersOrTheGroupCanReadIsRefused) {
  const std::string dir = NewTempDir();
  const std::string path = dir + "/users";
  WriteFile(path, "repl:mysql_native_password:" + NativePasswordHash("pw") + "\n", 0600);
  for (mode_t mode : {0640, 0604, 0660, 0620, 0644, 0602}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    auto r = LoadUsersFile(nullptr, path);
    EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << std::oct << mode << " " << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), path)) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "chmod go-rwx")) << r.status();
  }
  for (mode_t mode : {0600, 0400}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    auto r = LoadUsersFile(nullptr, path);
    ASSERT_TRUE(r.ok()) << std::oct << mode << " " << r.status();
    EXPECT_EQ(r->count("repl"), 1u);
  }
  EXPECT_TRUE(absl::IsNotFound(LoadUsersFile(nullptr, dir + "/none").status()));
}

// --- RSA -------------------------------------------------------------------------

TEST(RsaKeyPairTest, GeneratedAndLoadedPairsDecryptWhatClientsEncrypt) {
  auto gen = RsaKeyPair::Generate(2048);
  ASSERT_TRUE(gen.ok()) << gen.status();
  EXPECT_EQ((*gen)->cipher_length(), 256u);
  EXPECT_TRUE(absl::StartsWith((*gen)->public_pem(), "-----BEGIN PUBLIC KEY-----"));
  auto c = RsaKeyPair::Encrypt((*gen)->public_pem(), "pw");
  ASSERT_TRUE(c.ok()) << c.status();
  auto p = (*gen)->Decrypt(*c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "pw");
  EXPECT_FALSE((*gen)->Decrypt(std::string(256, 'x')).ok());

  // Key files as `openssl genrsa` writes them (PKCS#8 private, SPKI public).
  EVP_PKEY* k = EVP_RSA_gen(2048);
  ASSERT_NE(k, nullptr);
  auto pem = [k](bool priv) {
    BIO* b = BIO_new(BIO_s_mem());
    if (priv) {
      PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
    } else {
      PEM_write_bio_PUBKEY(b, k);
    }
    char* data = nullptr;
    long n = BIO_get_mem_data(b, &data);
    std::string out(data, static_cast<size_t>(n));
    BIO_free(b);
    return out;
  };
  const std::string dir = NewTempDir();
  const std::string public_pem = pem(false);
  WriteFile(dir + "/private.pem", pem(true), 0600);
  WriteFile(dir + "/public.pem", public_pem, 0644);
  EVP_PKEY_free(k);
  auto loaded = RsaKeyPair::Load(nullptr, dir + "/private.pem", dir + "/public.pem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->public_pem(), public_pem);
  c = RsaKeyPair::Encrypt((*loaded)->public_pem(), "secret");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*(*loaded)->Decrypt(*c), "secret");
  // A private key others may read, a mismatched public key, garbage.
  ASSERT_EQ(::chmod((dir + "/private.pem").c_str(), 0644), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(
      RsaKeyPair::Load(nullptr, dir + "/private.pem", dir + "/public.pem").status()));
  ASSERT_EQ(::chmod((dir + "/private.pem").c_str(), 0600), 0);
  WriteFile(dir + "/other.pem", (*gen)->public_pem(), 0644);
  EXPECT_TRUE(absl::IsFailedPrecondition(
      RsaKeyPair::Load(nullptr, dir + "/private.pem", dir + "/other.pem").status()));
  WriteFile(dir + "/junk.pem", "junk", 0600);
  EXPECT_TRUE(absl::IsInvalidArgument(
      RsaKeyPair::Load(nullptr, dir + "/junk.pem", dir + "/public.pem").status()));
}

// --- the exchange -------------------------------------------------------------------

// A client scripted as a function of each server packet: its answer, if
// any, is what the server reads next; Read() without one is a closed
// connection.
class ScriptedChannel : public AuthChannel {
 public:
  using Script = std::function<std::vector<std::string>(absl::string_view)>;
  explicit ScriptedChannel(Script s) : script_(std::move(s)) {}
  absl::Status Send(absl::string_view payload) override {
    sent_.emplace_back(payload);
    for (std::string& a : script_(payload)) answers_.push_back(std::move(a));
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Read() override {
    if (answers_.empty()) return absl::UnavailableError("closed");
    std::string a = std::move(answers_.front());
    answers_.pop_front();
    return a;
  }
  const std::vector<std::string>& sent() const { return sent_; }

 private:
  Script script_;
  std::deque<std::string> answers_;
  std::vector<std::string> sent_;
};

const std::string kScramble = "0123456789abcdefghij";
const std::string kFast = std::string("\x01\x03", 2);
const std::string kFull = std::string("\x01\x04", 2);

// A real client's behaviour: answers an auth switch with the named
// plugin's token; on perform_full_authentication sends the password in
// clear when `secure`, else asks for the public key (or, with `has_key`,
// uses it at once) and sends it RSA-encrypted.
ScriptedChannel::Script Client(const std::string& password, bool secure,
                               const RsaKeyPair* known_key = nullptr) {
  return [=](absl::string_view p) -> std::vector<std::string> {
    if (!p.empty() && static_cast<uint8_t>(p[0]) == 0xfe) {
      const std::string plugin(p.substr(1, p.find('\0') - 1));
      std::string nonce(p.substr(p.find('\0') + 1));
      nonce.pop_back();
      return {plugin == kNativePasswordPlugin ? NativePasswordToken(password, nonce)
                                              : CachingSha2Token(password, nonce)};
    }
    const std::string with_nul = password + std::string(1, '\0');
    if (p == kFull) {
      if (secure) return {with_nul};
      if (known_key != nullptr) {
        return {*RsaKeyPair::Encrypt(known_key->public_pem(), XorWithScramble(with_nul, kScramble))};
      }
      return {std::string(1, '\x02')};
    }
    if (absl::StartsWith(p, "\x01-----BEGIN PUBLIC KEY")) {
      return {*RsaKeyPair::Encrypt(p.substr(1), XorWithScramble(with_nul, kScramble))};
    }
    return {};
  };
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = RsaKeyPair::Generate(2048);
    ASSERT_TRUE(k.ok());
    key_ = std::move(*k);
    UserMap users;
    users["native"] = {AuthPlugin::kNativePassword, NativePasswordHash("npw")};
    users["sha2"] = {AuthPlugin::kCachingSha2Password,
                     CachingSha2PasswordHash("spw", "SALTsaltSALTsaltSALT")};
    users["empty"] = {AuthPlugin::kCachingSha2Password, ""};
    auth_ = std::make_unique<Authenticator>(users, key_);
  }

  // Runs an exchange; the packets the server sent come back in *sent.
  absl::Status Run(const std::string& user, const std::string& plugin, const std::string& token,
                   bool secure, ScriptedChannel::Script script,
                   std::vector<std::string>* sent = nullptr) {
    AuthRequest r;
    r.user = user;
    r.client_plugin = plugin;
    r.auth_response = token;
    r.scramble = kScramble;
    r.secure = secure;
    ScriptedChannel ch(std::move(script));
    absl::Status s = auth_->Authenticate(r, AuthPlugin::kCachingSha2Password, &ch);
    if (sent != nullptr) *sent = ch.sent();
    return s;
  }
  absl::Status Sha2(const std::string& user, const std::string& pw, bool secure,
                    std::vector<std::string>* sent = nullptr, const RsaKeyPair* known = nullptr) {
    return Run(user, kCachingSha2Plugin, CachingSha2Token(pw, kScramble), secure,
               Client(pw, secure, known), sent);
  }

  std::shared_ptr<RsaKeyPair> key_;
  std::unique_ptr<Authenticator> auth_;
};

TEST_F(AuthenticatorTest, CachingSha2FullAuthenticationOverASecureTransportThenFastPath) {
  std::vector<std::string> sent;
  ASSERT_TRUE(Sha2("sha2", "spw", true, &sent).ok());
  EXPECT_EQ(sent, std::vector<std::string>{kFull});
  EXPECT_TRUE(auth_->cached("sha2"));
  EXPECT_EQ(auth_->stats().sha256_crypts, 1u);
  // The next connection: the fast path, no crypt, no password sent.
  ASSERT_TRUE(Sha2("sha2", "spw", false, &sent).ok());
  EXPECT_EQ(sent, std::vector<std::string>{kFast});
  EXPECT_EQ(auth_->stats().sha256_crypts, 1u);
  EXPECT_EQ(auth_->stats().fast_auths, 1u);
  // A wrong password with a cached user: not the fast path; the full
  // authentication refuses it.
  EXPECT_TRUE(absl::IsPermissionDenied(Sha2("sha2", "nope", true, &sent)));
  EXPECT_EQ(sent, std::vector<std::string>{kFull});
}

TEST_F(AuthenticatorTest, CachingSha2FullAuthenticationWithRsaOverPlaintext) {
  std::vector<std::string> sent;
  ASSERT_TRUE(Sha2("sha2", "spw", false, &sent).ok());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], kFull);
  EXPECT_EQ(sent[1], "\x01" + key_->public_pem());
  EXPECT_EQ(auth_->stats().public_key_requests, 1u);
  // A client that has the key already sends the cipher at once.
  ASSERT_TRUE(Sha2("sha2", "spw", false, &sent, key_.get()).ok());
  // Over plaintext, a password in clear is refused (it is not a cipher).
  EXPECT_TRUE(absl::IsPermissionDenied(
      Run("sha2", kCachingSha2Plugin, CachingSha2Token("x", kScramble), false,
          [](absl::string_view p) -> std::vector<std::string> {
            if (p == kFull) return {std::string("spw\0", 4)};
            return {};
          })));
  EXPECT_TRUE(absl::IsPermissionDenied(Sha2("sha2", "spW", false)));
}

// Without a configured key pair, one is generated at the first full
// authentication over plaintext that needs it, and kept.
TEST_F(AuthenticatorTest, AKeyPairIsGeneratedWhenFirstNeeded) {
  UserMap users;
  users["sha2"] = {AuthPlugin::kCachingSha2Password,
                   CachingSha2PasswordHash("spw", "SALTsaltSALTsaltSALT")};
  auth_ = std::make_unique<Authenticator>(users, nullptr);
  std::vector<std::string> first, second;
  ASSERT_TRUE(Sha2("sha2", "spw", false, &first).ok());
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(first[1], "\x01-----BEGIN PUBLIC KEY-----")) << first[1];
  EXPECT_TRUE(absl::IsPermissionDenied(Sha2("sha2", "wrong", false, &second)));
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1], first[1]);  // the same key
}

TEST_F(AuthenticatorTest, NativePasswordAndTheAuthSwitch) {
  std::vector<std::string> sent;
  // A client announcing mysql_native_password for a native user: no switch.
  ASSERT_TRUE(Run("native", kNativePasswordPlugin, NativePasswordToken("npw", kScramble), false,
                  Client("npw", false), &sent)
                  .ok());
  EXPECT_TRUE(sent.empty());
  // A caching_sha2_password client for a native user: switched.
  ASSERT_TRUE(Sha2("native", "npw", false, &sent).ok());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0], EncodeAuthSwitch(kNativePasswordPlugin, kScramble));
  // A native client for a caching_sha2_password user: switched, then the
  // full authentication.
  ASSERT_TRUE(Run("sha2", kNativePasswordPlugin, NativePasswordToken("spw", kScramble), true,
                  Client("spw", true), &sent)
                  .ok());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], EncodeAuthSwitch(kCachingSha2Plugin, kScramble));
  EXPECT_EQ(sent[1], kFull);
  // Another plugin (here sha256_password): switched to the user's.
  ASSERT_TRUE(Run("native", "sha256_password", "x", false, Client("npw", false), &sent).ok());
  EXPECT_EQ(sent[0], EncodeAuthSwitch(kNativePasswordPlugin, kScramble));
  EXPECT_EQ(auth_->stats().auth_switches, 3u);
  // Wrong passwords.
  EXPECT_TRUE(absl::IsPermissionDenied(Run("native", kNativePasswordPlugin,
                                           NativePasswordToken("nPw", kScramble), false,
                                           Client("nPw", false))));
  EXPECT_TRUE(absl::IsPermissionDenied(
      Run("native", kNativePasswordPlugin, "", false, Client("", false))));
  EXPECT_EQ(auth_->stats().sha256_crypts, 1u);  // the switched sha2 user only
}

TEST_F(AuthenticatorTest, EmptyPasswords) {
  EXPECT_TRUE(Run("empty", kCachingSha2Plugin, "", false, Client("", false)).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(Sha2("empty", "x", true)));
  EXPECT_TRUE(absl::IsPermissionDenied(Run("sha2", kCachingSha2Plugin, "", false, Client("", false))));
}

// An unknown user goes through the same exchange as a known user with a
// wrong password: the same packets, the same hash work (one SHA-256 crypt
// of 5000 rounds, counted), the same refusal. (Users of one plugin each
// time: with both, an unknown name may get either plugin, see
// TheAnnouncedPluginDoesNotRevealWhichUsersExist.)
TEST_F(AuthenticatorTest, UnknownUsersCostWhatWrongPasswordsCost) {
  auth_ = std::make_unique<Authenticator>(
      UserMap{{"sha2", {AuthPlugin::kCachingSha2Password,
                        CachingSha2PasswordHash("spw", "SALTsaltSALTsaltSALT")}}},
      key_);
  for (bool secure : {true, false}) {
    SCOPED_TRACE(secure);
    std::vector<std::string> wrong_sent, unknown_sent;
    AuthStats before = auth_->stats();
    absl::Status wrong = Sha2("sha2", "guess", secure, &wrong_sent);
    AuthStats mid = auth_->stats();
    absl::Status unknown = Sha2("nobody", "guess", secure, &unknown_sent);
    AuthStats after = auth_->stats();
    EXPECT_TRUE(absl::IsPermissionDenied(wrong));
    EXPECT_TRUE(absl::IsPermissionDenied(unknown));
    EXPECT_EQ(wrong.message(), unknown.message());
    EXPECT_EQ(wrong_sent, unknown_sent);
    EXPECT_EQ(mid.sha256_crypts - before.sha256_crypts, 1u);
    EXPECT_EQ(after.sha256_crypts - mid.sha256_crypts, 1u);
    EXPECT_EQ(after.full_auths - mid.full_auths, mid.full_auths - before.full_auths);
  }
  // mysql_native_password: one token check each.
  auth_ = std::make_unique<Authenticator>(
      UserMap{{"native", {AuthPlugin::kNativePassword, NativePasswordHash("npw")}}}, key_);
  AuthStats before = auth_->stats();
  std::vector<std::string> wrong_sent, unknown_sent;
  absl::Status wrong = Run("native", kNativePasswordPlugin, NativePasswordToken("g", kScramble),
                           false, Client("g", false), &wrong_sent);
  AuthStats mid = auth_->stats();
  absl::Status unknown = Run("nobody", kNativePasswordPlugin, NativePasswordToken("g", kScramble),
                             false, Client("g", false), &unknown_sent);
  AuthStats after = auth_->stats();
  EXPECT_TRUE(absl::IsPermissionDenied(wrong));
  EXPECT_TRUE(absl::IsPermissionDenied(unknown));
  EXPECT_EQ(wrong_sent, unknown_sent);
  EXPECT_EQ(mid.native_checks - before.native_checks, 1u);
  EXPECT_EQ(after.native_checks - mid.native_checks, 1u);
  EXPECT_FALSE(auth_->cached("nobody"));
}

// Whatever plugin a client announces, an unknown user's exchange is that
// of an existing user's with a wrong password: the plugin it is given does
// not follow the client's announcement (which the client chooses), else an
// auth switch, or its absence, would tell which names exist.
TEST_F(AuthenticatorTest, TheAnnouncedPluginDoesNotRevealWhichUsersExist) {
  UserMap users;
  users["sha2"] = {AuthPlugin::kCachingSha2Password,
                   CachingSha2PasswordHash("spw", "SALTsaltSALTsaltSALT")};
  auth_ = std::make_unique<Authenticator>(users, key_);
  for (const std::string& plugin :
       {std::string(kNativePasswordPlugin), std::string(kCachingSha2Plugin),
        std::string("sha256_password"), std::string()}) {
    SCOPED_TRACE(plugin);
    const std::string token = plugin == kNativePasswordPlugin
                                  ? NativePasswordToken("guess", kScramble)
                                  : CachingSha2Token("guess", kScramble);
    std::vector<std::string> wrong_sent, unknown_sent;
    absl::Status wrong = Run("sha2", plugin, token, true, Client("guess", true), &wrong_sent);
    absl::Status unknown = Run("nobody", plugin, token, true, Client("guess", true), &unknown_sent);
    EXPECT_TRUE(absl::IsPermissionDenied(wrong));
    EXPECT_TRUE(absl::IsPermissionDenied(unknown));
    EXPECT_EQ(wrong_sent, unknown_sent);
  }
  // Users of both plugins: an unknown name gets one of them, the same on
  // every attempt and whatever the client announces; across names, each
  // plugin comes up (so a name's plugin tells nothing of its existence).
  auth_ = std::make_unique<Authenticator>(
      UserMap{{"native", {AuthPlugin::kNativePassword, NativePasswordHash("npw")}},
              {"sha2", users["sha2"]}},
      key_);
  std::set<std::string> switches;
  for (int i = 0; i < 64; ++i) {
    const std::string name = absl::StrCat("nobody", i);
    std::vector<std::string> from_native, from_sha2, again;
    EXPECT_TRUE(absl::IsPermissionDenied(Run(name, kNativePasswordPlugin,
                                             NativePasswordToken("g", kScramble), true,
                                             Client("g", true), &from_native)));
    EXPECT_TRUE(absl::IsPermissionDenied(
        Run(name, kCachingSha2Plugin, CachingSha2Token("g", kScramble), true,
            Client("g", true), &from_sha2)));
    EXPECT_TRUE(absl::IsPermissionDenied(Run(name, kNativePasswordPlugin,
                                             NativePasswordToken("g", kScramble), true,
                                             Client("g", true), &again)));
    EXPECT_EQ(from_native, again) << name;
    // Exactly one of the two announcements was switched, to the other.
    ASSERT_FALSE(from_native.empty() && from_sha2.empty()) << name;
    const bool native = from_sha2.empty() || from_sha2[0] != kFull;
    EXPECT_EQ(native, !from_sha2.empty() &&
                          from_sha2[0] == EncodeAuthSwitch(kNativePasswordPlugin, kScramble))
        << name;
    EXPECT_EQ(from_native.empty(), native) << name;
    switches.insert(native ? kNativePasswordPlugin : kCachingSha2Plugin);
  }
  EXPECT_EQ(switches.size(), 2u);
  // After a restart (the same users), each name keeps its plugin: a
  // plugin that changed would mark the name unknown.
  const UserMap both{{"native", {AuthPlugin::kNativePassword, NativePasswordHash("npw")}},
                     {"sha2", users["sha2"]}};
  Authenticator restarted(both, key_);
  for (int i = 0; i < 16; ++i) {
    const std::string name = absl::StrCat("nobody", i);
    std::vector<std::string> before, after;
    auto run = [&](Authenticator* a, std::vector<std::string>* sent) {
      AuthRequest r;
      r.user = name;
      r.client_plugin = kCachingSha2Plugin;
      r.auth_response = CachingSha2Token("g", kScramble);
      r.scramble = kScramble;
      r.secure = true;
      ScriptedChannel ch(Client("g", true));
      EXPECT_TRUE(absl::IsPermissionDenied(a->Authenticate(r, AuthPlugin::kCachingSha2Password, &ch)));
      *sent = ch.sent();
    };
    run(auth_.get(), &before);
    run(&restarted, &after);
    EXPECT_EQ(before, after) << name;
  }
}

TEST_F(AuthenticatorTest, MalformedAnswersAreRefusedAndAClosedConnectionIsNotADenial) {
  // A first answer of the wrong length.
  EXPECT_TRUE(absl::IsPermissionDenied(
      Run("sha2", kCachingSha2Plugin, "short", false, Client("spw", false))));
  // No NUL after the password on a secure transport.
  EXPECT_TRUE(absl::IsPermissionDenied(Run("sha2", kCachingSha2Plugin,
                                           CachingSha2Token("spw", kScramble), true,
                                           [](absl::string_view p) -> std::vector<std::string> {
                                             if (p == kFull) return {"spw"};
                                             return {};
                                           })));
  // The client goes away after perform_full_authentication.
  absl::Status gone = Run("sha2", kCachingSha2Plugin, CachingSha2Token("spw", kScramble), true,
                          [](absl::string_view) { return std::vector<std::string>{}; });
  EXPECT_TRUE(absl::IsUnavailable(gone)) << gone;
}

}  // namespace
}  // namespace server
}  // namespace binlog
