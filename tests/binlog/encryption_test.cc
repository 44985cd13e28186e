// Encryption at rest (issue 18 part 4): MySQL 8.0.14+'s encrypted binlog
// files, checked against OpenSSL's command line, recovery, readers, key
// rotation (also interrupted), the keyring file, and the MariaDB refusal.

#include "binlog/encryption.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/keyring.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/file_system_wrapper.h"
#include "io/zero_frontier.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using internal::kEncryptionHeaderSize;
using testing_util::BuildTransaction;
using testing_util::EventRef;
using testing_util::NewTempDir;
using testing_util::ReadAll;
using testing_util::ReadFile;
using testing_util::WriteFile;

constexpr char kUuid[] = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
// The binlog magic, which an encrypted file's stream starts with: the file
// password check (a wrong key is told from the right one) decrypts it.
const std::string kMagic = "\xfe" "bin";

std::string KeyIdForTest() {
  return absl::StrCat("MySQLReplicationKey_", kUuid, "_1");
}

Options Base(Keyring* keyring, bool encryption) {
  Options o;
  o.max_file_size = 16 << 10;
  o.now_seconds = [] { return 1700000000u; };
  o.server_uuid = *Uuid::Parse(kUuid);
  o.keyring = keyring;
  o.encryption = encryption;
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

// Writes `n` transactions, closes; returns the file names.
std::vector<std::string> WriteLog(const std::string& dir, const Options& o,
                                  int n) {
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(log.ok()) << log.status();
  if (!log.ok()) return {};
  TransactionBuffer txn;
  for (int i = 0; i < n; ++i) {
    BuildTransaction(&txn, i, 300 + (i * 37) % 700);
    EXPECT_TRUE((*log)->Commit(&txn).ok());
  }
  std::vector<std::string> names;
  for (const LogFileInfo& f : (*log)->ListFiles()) names.push_back(f.name);
  EXPECT_TRUE((*log)->Close().ok());
  return names;
}

// The plain form of a file, read through the decrypting file system.
std::string ReadPlain(io::FileSystem* fs, const std::string& path) {
  auto f = fs->OpenReadable(path);
  if (!f.ok()) return "error: " + std::string(f.status().message());
  auto size = (*f)->Size();
  if (!size.ok()) return "error";
  std::string out(*size, '\0');
  size_t got = 0;
  if (!(*f)->Read(0, *size, &out[0], &got).ok()) return "error";
  out.resize(got);
  return out;
}

std::vector<EventRef> ReadDir(const std::string& dir, io::FileSystem* fs,
                              absl::Status* status) {
  std::vector<EventRef> events;
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions(), fs);
  if (!r.ok()) {
    *status = r.status();
    return events;
  }
  *status = ReadAll(r->get(), &events);
  return events;
}

TEST(EncryptionHeaderTest, LayoutIsMySQLs) {
  internal::EncryptionHeader h;
  h.key_id = "MySQLReplicationKey_x_1";
  for (int i = 0; i < 32; ++i) h.encrypted_password[i] = static_cast<uint8_t>(i + 1);
  for (int i = 0; i < 16; ++i) h.iv[i] = static_cast<uint8_t>(0xa0 + i);
  auto bytes = internal::EncodeEncryptionHeader(h);
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 512u);
  const std::string& b = *bytes;
  EXPECT_EQ(b.substr(0, 4), std::string("\xfd" "bin"));
  EXPECT_EQ(b[4], 1);                        // version
  EXPECT_EQ(b[5], 1);                        // key id field
  EXPECT_EQ(b[6], static_cast<char>(h.key_id.size()));
  EXPECT_EQ(b.substr(7, h.key_id.size()), h.key_id);
  size_t p = 7 + h.key_id.size();
  EXPECT_EQ(b[p], 2);                        // password field, no length
  EXPECT_EQ(b[p + 1], 1);
  EXPECT_EQ(b[p + 33], 3);                   // IV field, no length
  EXPECT_EQ(static_cast<uint8_t>(b[p + 34]), 0xa0);
  EXPECT_EQ(b.substr(p + 50), std::string(512 - p - 50, '\0'));
  auto back = internal::DecodeEncryptionHeader(b);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->key_id, h.key_id);
  EXPECT_EQ(back->encrypted_password, h.encrypted_password);
  EXPECT_EQ(back->iv, h.iv);
}

TEST(EncryptionHeaderTest, DamagedHeadersAreDataLoss) {
  internal::EncryptionHeader h;
  h.key_id = "k";
  std::string good = *internal::EncodeEncryptionHeader(h);
  std::string v2 = good;
  v2[4] = 2;
  EXPECT_TRUE(absl::IsDataLoss(internal::DecodeEncryptionHeader(v2).status()));
  std::string unknown = good;
  unknown[5] = 9;
  EXPECT_TRUE(absl::IsDataLoss(internal::DecodeEncryptionHeader(unknown).status()));
  std::string no_iv = good;
  no_iv[5 + 2 + 1 + 33] = 0;
  EXPECT_TRUE(absl::IsDataLoss(internal::DecodeEncryptionHeader(no_iv).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      internal::DecodeEncryptionHeader(good.substr(0, 100)).status()));
}

TEST(CtrCipherTest, AnyOffsetMatchesTheWholeStream) {
  auto c = internal::CtrCipher::Create(std::string(32, 'p'));
  ASSERT_TRUE(c.ok());
  std::string plain(5000, '\0');
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<char>(i * 7);
  std::string whole(plain.size(), '\0');
  ASSERT_TRUE((*c)->Crypt(0, plain.data(), &whole[0], plain.size()).ok());
  EXPECT_NE(whole, plain);
  for (size_t off : {0, 1, 15, 16, 17, 1000, 4095, 4999}) {
    for (size_t len : {1, 5, 16, 33, 1000}) {
      if (off + len > plain.size()) continue;
      std::string piece(len, '\0');
      ASSERT_TRUE((*c)->Crypt(off, whole.data() + off, &piece[0], len).ok());
      EXPECT_EQ(piece, plain.substr(off, len)) << off << "+" << len;
    }
  }
}

// The VAES engine gives OpenSSL's bytes at every offset and length:
// inside a block, across the 256-byte rounds, in the masked tail, in place.
TEST(CtrCipherTest, EnginesAgreeAtEveryOffsetAndLength) {
  const std::string password = "0123456789abcdef0123456789ABCDEF";
  auto fast = internal::CtrCipher::Create(password);
  auto ossl = internal::CtrCipher::Create(
      password, internal::CtrCipher::Engine::kOpenSsl);
  ASSERT_TRUE(fast.ok() && ossl.ok());
  EXPECT_FALSE((*ossl)->uses_vaes());
  EXPECT_EQ((*fast)->uses_vaes(), internal::vaes::Supported());
  std::string plain(70000, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& ch : plain) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    ch = static_cast<char>(x);
  }
  std::vector<uint64_t> offsets = {0, 1, 7, 15, 16, 17, 255, 256, 257, 4095};
  // Counter blocks whose low bytes carry into higher ones.
  offsets.push_back((1ull << 32) * 16 - 48);
  offsets.push_back((1ull << 40) * 16 - 5);
  for (uint64_t off : offsets) {
    for (size_t len : {0, 1, 5, 16, 31, 63, 64, 65, 255, 256, 257, 300, 1000,
                       4096, 65536 + 13, 70000}) {
      std::string a(len, '\0'), b(len, '\0');
      ASSERT_TRUE((*fast)->Crypt(off, plain.data(), &a[0], len).ok());
      ASSERT_TRUE((*ossl)->Crypt(off, plain.data(), &b[0], len).ok());
      ASSERT_EQ(a, b) << "offset " << off << " length " << len;
      std::string in_place = plain.substr(0, len);
      ASSERT_TRUE((*fast)->Crypt(off, in_place.data(), &in_place[0], len).ok());
      ASSERT_EQ(in_place, b) << "in place, offset " << off << " length " << len;
    }
  }
}

// CryptUnlessZeroRun decrypts what Crypt decrypts when the input holds no
// zero run, and leaves the input as it was when it holds one of 32 bytes or
// more, wherever it lies (in a partial first block's wake, in the 512-byte
// rounds, in the masked tail), with either engine.
TEST(CtrCipherTest, CryptUnlessZeroRunFindsEveryLongRun) {
  const std::string password(32, 'z');
  for (auto engine : {internal::CtrCipher::Engine::kFastest,
                      internal::CtrCipher::Engine::kOpenSsl}) {
    auto c = internal::CtrCipher::Create(password, engine);
    ASSERT_TRUE(c.ok());
    std::string input(3000, '\0');
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (char& ch : input) {
      do {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ch = static_cast<char>(x);
      } while (ch == 0);  // no zero runs at all
    }
    for (uint64_t off : {0, 3, 16, 4101}) {
      for (size_t len : {40, 100, 600, 1100, 3000}) {
        std::string buf = input.substr(0, len);
        std::string expect(len, '\0');
        ASSERT_TRUE((*c)->Crypt(off, buf.data(), &expect[0], len).ok());
        auto z = (*c)->CryptUnlessZeroRun(off, &buf[0], len);
        ASSERT_TRUE(z.ok());
        EXPECT_FALSE(*z) << off << "+" << len;
        EXPECT_EQ(buf, expect) << off << "+" << len;
        for (size_t at = 0; at + 32 <= len; at += (len < 200 ? 1 : 37)) {
          std::string with_run = input.substr(0, len);
          with_run.replace(at, 32, std::string(32, '\0'));
          std::string copy = with_run;
          auto zr = (*c)->CryptUnlessZeroRun(off, &copy[0], len);
          ASSERT_TRUE(zr.ok());
          EXPECT_TRUE(*zr) << off << "+" << len << " run at " << at;
          EXPECT_EQ(copy, with_run) << off << "+" << len << " run at " << at;
        }
      }
    }
  }
}

// Zeros of real ciphertext are data, raw zeros (32 or more) are the end.
// The first n bytes of the keystream of encrypted file `path`.
std::string Keystream(io::FileSystem* base, Keyring* keyring,
                      const std::string& path, size_t n) {
  auto h = internal::ReadEncryptionHeader(base, path);
  EXPECT_TRUE(h.ok()) << h.status();
  if (!h.ok()) return "";
  auto password = internal::FilePasswordFromKeyring(*h, keyring);
  EXPECT_TRUE(password.ok()) << password.status();
  if (!password.ok()) return "";
  auto c = internal::CtrCipher::Create(*password);
  EXPECT_TRUE(c.ok());
  std::string out(n, '\0');
  EXPECT_TRUE((*c)->Crypt(0, out.data(), &out[0], n).ok());
  return out;
}

// Changes the bytes of `plain` (after the magic) whose ciphertext would be
// a zero byte: next to raw zeros such a byte is read as one of them (the
// format's rule: a zero byte of ciphertext cannot be told from a raw one),
// which made the tests below fail once in a few hundred runs.
void NoZeroCiphertext(const std::string& keystream, std::string* plain) {
  for (size_t i = kMagic.size(); i < plain->size() && i < keystream.size(); ++i) {
    if ((*plain)[i] == keystream[i]) (*plain)[i] = static_cast<char>((*plain)[i] ^ 1);
  }
}

// Found by the power-loss test: a Stop event whose last ciphertext byte
// was 0 at the end of the file read back as 0 (a checksum mismatch); the
// same would hit a tailing reader whose window ends at the published end
// with unwritten space after it.
TEST(EncryptedFileTest, ShortZeroRunsAreCiphertextLongOnesRawZeros) {
  std::string dir = NewTempDir("enc_zero_runs");
  std::string path = dir + "/binlog.000001";
  io::FileSystem* base = io::FileSystem::Default();
  MemoryKeyring keyring;
  ASSERT_TRUE(keyring.GenerateKey("k").ok());
  auto raw_file = base->OpenWritable(path, io::OpenMode::kCreateNew);
  ASSERT_TRUE(raw_file.ok());
  auto f = internal::StartEncryptedFile(std::move(*raw_file), "k",
                                        *keyring.FetchKey("k"));
  ASSERT_TRUE(f.ok()) << f.status();
  // Learn the keystream (from the file's password), then write plain bytes
  // equal to it at the end, so the ciphertext ends with 10 zero bytes.
  std::string keystream = Keystream(base, &keyring, path, 100);
  std::string plain(100, 'x');
  plain.replace(0, 4, kMagic);  // the password check reads it
  NoZeroCiphertext(keystream, &plain);
  plain.replace(90, 10, keystream.substr(90, 10));
  ASSERT_TRUE((*f)->Write(0, plain).ok());
  ASSERT_EQ(ReadFile(path).size(), 512u + 116);  // with the guard
  ASSERT_EQ(ReadFile(path).substr(512 + 90, 10), std::string(10, '\0'));
  auto fs = NewDecryptingFileSystem(base, &keyring);
  // The guard: 16 raw bytes 0xff after the end (not keystream), read as
  // zeros at the end of the file.
  EXPECT_EQ(ReadPlain(fs.get(), path), plain + std::string(16, '\0'));
  ASSERT_EQ(ReadFile(path).substr(512 + 100), std::string(16, '\xff'));
  // Trimmed to the end, the file ends with ciphertext zeros.
  ASSERT_TRUE((*f)->Truncate(100).ok());
  EXPECT_EQ(ReadPlain(fs.get(), path), plain);
  // Unwritten (raw zero) space after it: a read that ends at byte 100
  // still sees the data; a read past it sees the raw zeros as zeros.
  ASSERT_TRUE((*f)->Write(0, plain).ok());  // the guard again
  ASSERT_TRUE((*f)->Allocate(100, 4096, /*keep_size=*/false).ok());
  ASSERT_TRUE((*f)->Close().ok());
  auto rf = fs->OpenReadable(path);
  ASSERT_TRUE(rf.ok());
  std::string buf(100, '\0');
  size_t got = 0;
  ASSERT_TRUE((*rf)->Read(0, 100, &buf[0], &got).ok());
  EXPECT_EQ(buf, plain);
  std::string longer(300, '\1');
  ASSERT_TRUE((*rf)->Read(0, 300, &longer[0], &got).ok());
  ASSERT_EQ(got, 300u);
  EXPECT_EQ(longer.substr(0, 100), plain);
  EXPECT_EQ(longer.substr(100), std::string(200, '\0'));
  // Windows that start or end inside the data's zero ciphertext, the guard
  // or the raw zeros after it see the same bytes.
  const std::string whole = plain + std::string(4096 - 100, '\0');
  for (size_t start : {0, 89, 95, 99, 100, 101, 108, 115, 116, 117, 140}) {
    for (size_t end : {99, 100, 101, 104, 110, 115, 116, 117, 130, 150, 300}) {
      if (end <= start) continue;
      std::string part(end - start, '\1');
      ASSERT_TRUE((*rf)->Read(start, part.size(), &part[0], &got).ok());
      ASSERT_EQ(got, part.size());
      EXPECT_EQ(part, whole.substr(start, end - start)) << start << ".." << end;
    }
  }
  // A raw-zero hole inside (sectors lost out of order): zeros there, the
  // data around it decrypted at its own offsets, windows at any offset.
  std::string raw = ReadFile(path);
  raw.replace(512 + 37, 45, std::string(45, '\0'));
  WriteFile(path, raw);
  std::string expect = plain;
  expect.replace(37, 45, std::string(45, '\0'));
  auto rf2 = fs->OpenReadable(path);
  ASSERT_TRUE(rf2.ok());
  for (size_t start : {0, 5, 36, 40, 81, 83}) {
    std::string part(100 - start, '\1');
    ASSERT_TRUE((*rf2)->Read(start, part.size(), &part[0], &got).ok());
    EXPECT_EQ(part, expect.substr(start)) << start;
  }
}

// The same rule inside large windows (the zero scan takes 128 bytes a
// step): raw zero holes of 32 bytes or more read as zeros wherever they
// lie, ciphertext zero runs shorter than that decrypt as data, from any
// window start.
TEST(EncryptedFileTest, ZeroRunsAnywhereInALargeWindow) {
  std::string dir = NewTempDir("enc_zero_scan");
  std::string path = dir + "/binlog.000001";
  io::FileSystem* base = io::FileSystem::Default();
  MemoryKeyring keyring;
  ASSERT_TRUE(keyring.GenerateKey("k").ok());
  auto raw_file = base->OpenWritable(path, io::OpenMode::kCreateNew);
  ASSERT_TRUE(raw_file.ok());
  auto f = internal::StartEncryptedFile(std::move(*raw_file), "k",
                                        *keyring.FetchKey("k"));
  ASSERT_TRUE(f.ok()) << f.status();
  constexpr size_t kSize = 8192;
  std::string keystream = Keystream(base, &keyring, path, kSize);
  std::string plain(kSize, '\0');
  for (size_t i = 0; i < kSize; ++i) plain[i] = static_cast<char>(i * 131 + 7);
  plain.replace(0, 4, kMagic);
  // Ciphertext zeros (plain = keystream) of 8 to 31 bytes, at several
  // phases of the 128-byte steps.
  const std::vector<std::pair<size_t, size_t>> short_runs = {
      {200, 8}, {333, 16}, {1005, 31}, {2047, 24}, {3071, 9}};
  // No other ciphertext byte is zero: next to a run or a hole it would
  // lengthen it (a short run to 32, a hole by one byte read as zero), as
  // in a real file; this test is about where runs lie.
  NoZeroCiphertext(keystream, &plain);
  for (const auto& r : short_runs) {
    plain.replace(r.first, r.second, keystream.substr(r.first, r.second));
  }
  ASSERT_EQ(plain.substr(0, 4), kMagic);
  ASSERT_TRUE((*f)->Write(0, plain).ok());
  ASSERT_TRUE((*f)->Close().ok());
  std::string raw = ReadFile(path);
  for (const auto& r : short_runs) {
    ASSERT_EQ(raw.substr(512 + r.first, r.second), std::string(r.second, '\0'));
  }
  // Raw zero holes (sectors lost out of order) of 32 bytes and more.
  std::string expect = plain;
  for (const auto& h : std::vector<std::pair<size_t, size_t>>{
           {520, 32}, {1501, 40}, {2500, 33}, {4000, 200}, {8100, 50}}) {
    raw.replace(512 + h.first, h.second, std::string(h.second, '\0'));
    expect.replace(h.first, h.second, std::string(h.second, '\0'));
  }
  WriteFile(path, raw);
  auto fs = NewDecryptingFileSystem(base, &keyring);
  auto rf = fs->OpenReadable(path);
  ASSERT_TRUE(rf.ok());
  for (size_t start : {0, 1, 130, 530, 1024, 1505, 4000, 4100, 8120}) {
    std::string part(kSize - start, '\1');
    size_t got = 0;
    ASSERT_TRUE((*rf)->Read(start, part.size(), &part[0], &got).ok());
    ASSERT_EQ(got, part.size());
    EXPECT_EQ(part, expect.substr(start)) << "window from " << start;
  }
}

// A write larger than the encrypting file's slice (4 MiB) goes out in
// slices, each with the guard after it, so the scratch stays bounded; the
// plain stream is the same as written whole.
TEST(EncryptedFileTest, LargeWritesGoOutInBoundedSlices) {
  class Recording : public io::WritableFileWrapper {
   public:
    Recording(std::unique_ptr<io::WritableFile> f, std::vector<size_t>* sizes)
        : io::WritableFileWrapper(std::move(f)), sizes_(sizes) {}
    absl::Status Write(uint64_t offset, absl::string_view data) override {
      sizes_->push_back(data.size());
      return io::WritableFileWrapper::Write(offset, data);
    }

   private:
    std::vector<size_t>* sizes_;
  };
  std::string dir = NewTempDir("enc_slices");
  std::string path = dir + "/binlog.000001";
  io::FileSystem* base = io::FileSystem::Default();
  MemoryKeyring keyring;
  ASSERT_TRUE(keyring.GenerateKey("k").ok());
  auto raw_file = base->OpenWritable(path, io::OpenMode::kCreateNew);
  ASSERT_TRUE(raw_file.ok());
  std::vector<size_t> sizes;
  auto f = internal::StartEncryptedFile(
      std::make_unique<Recording>(std::move(*raw_file), &sizes), "k",
      *keyring.FetchKey("k"));
  ASSERT_TRUE(f.ok()) << f.status();
  std::string a(3 << 20, 'a'), b((5 << 20) + 7, 'b'), c(1000, 'c');
  a.replace(0, 4, kMagic);  // the password check reads it
  for (size_t i = 0; i < b.size(); i += 4093) b[i] = static_cast<char>(i);
  sizes.clear();  // the header's write
  absl::string_view parts[3] = {a, b, c};
  ASSERT_TRUE((*f)->WriteV(0, parts).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(sizes.size(), 3u);  // 9 MiB in slices of at most 4 MiB
  for (size_t n : sizes) EXPECT_LE(n, (4u << 20) + 16);
  auto fs = NewDecryptingFileSystem(base, &keyring);
  EXPECT_EQ(ReadPlain(fs.get(), path), a + b + c + std::string(16, '\0'));
}

// Plain bytes that an attacker holding two copies of the raw file learns:
// at every offset where both copies hold a non-zero byte and the bytes
// differ, the XOR of the copies is the XOR of the plaintexts if the same
// keystream byte covered both; with the first copy's plaintext guessed as
// zeros (the guard, zero-filled space), the XOR is the second copy's
// plaintext. Counts the offsets where it is (`plain2`: the second copy's
// plain stream), and in *compared the offsets looked at.
size_t RecoveredBytes(const std::string& raw1, const std::string& raw2,
                      const std::string& plain2, size_t* compared) {
  size_t recovered = 0;
  *compared = 0;
  const size_t end = std::min({raw1.size(), raw2.size(),
                               plain2.size() + kEncryptionHeaderSize});
  for (size_t o = kEncryptionHeaderSize; o < end; ++o) {
    if (raw1[o] == 0 || raw2[o] == 0 || raw1[o] == raw2[o]) continue;
    ++*compared;
    const char x = static_cast<char>(raw1[o] ^ raw2[o]);
    if (x == plain2[o - kEncryptionHeaderSize]) ++recovered;
  }
  return recovered;
}

// No byte of keystream covers two plaintexts: what an encrypted file's
// writer puts after its data (the guard) is not keystream. It was the
// ciphertext of 16 zero bytes, which the next write covered with data
// under the same counters: XOR of two copies of the file gave that data.
TEST(EncryptedFileTest, TwoCopiesOfAGrowingFileRevealNoPlaintext) {
  std::string dir = NewTempDir("enc_two_copies");
  std::string path = dir + "/binlog.000001";
  io::FileSystem* base = io::FileSystem::Default();
  MemoryKeyring keyring;
  ASSERT_TRUE(keyring.GenerateKey("k").ok());
  auto raw_file = base->OpenWritable(path, io::OpenMode::kCreateNew);
  ASSERT_TRUE(raw_file.ok());
  ASSERT_TRUE((*raw_file)->Allocate(0, 64 << 10, /*keep_size=*/false).ok());
  auto f = internal::StartEncryptedFile(std::move(*raw_file), "k",
                                        *keyring.FetchKey("k"), base);
  ASSERT_TRUE(f.ok()) << f.status();
  auto fs = NewDecryptingFileSystem(base, &keyring);
  std::string plain;
  std::string before;
  size_t recovered = 0, compared = 0;
  for (int round = 0; round < 20; ++round) {
    std::string data(100 + 37 * round, '\0');
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = static_cast<char>('A' + (i * 7 + round) % 50);
    }
    if (round == 0) data.replace(0, 4, kMagic);  // the password check reads it
    ASSERT_TRUE((*f)->Write(plain.size(), data).ok());
    plain += data;
    std::string after = ReadFile(path);
    ASSERT_EQ(ReadPlain(fs.get(), path).substr(0, plain.size()), plain);
    if (!before.empty()) {
      size_t c = 0;
      recovered += RecoveredBytes(before, after, plain, &c);
      compared += c;
    }
    before = after;
  }
  ASSERT_TRUE((*f)->Close().ok());
  // Chance alone recovers one byte in 256.
  EXPECT_LE(recovered, 3 + compared / 64)
      << recovered << " of " << compared << " bytes recovered";
}

// The same for a log whose first file is zero-filled ahead of the writer
// (Options::zero_ahead): the zeros are raw, not the keystream the
// transactions written there later use.
TEST(EncryptedLogTest, TwoCopiesOfAZeroFilledFileRevealNoPlaintext) {
  if (!io::WritebackErrorsPerDescriptor()) {
    GTEST_SKIP() << "this kernel gets no zero frontier";
  }
  // Tells when the zero frontier's first piece (a write of 4 KiB or more
  // of the log's file) is written.
  class PieceFs : public io::FileSystemWrapper {
   public:
    PieceFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
    absl::Mutex mu;
    bool piece = false;
    absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
        const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
      auto f = target()->OpenWritable(path, mode, permissions);
      if (!f.ok()) return f.status();
      return std::unique_ptr<io::WritableFile>(new File(std::move(*f), this));
    }
    class File : public io::WritableFileWrapper {
     public:
      File(std::unique_ptr<io::WritableFile> f, PieceFs* fs)
          : io::WritableFileWrapper(std::move(f)), fs_(fs) {}
      absl::Status Write(uint64_t offset, absl::string_view data) override {
        absl::Status s = io::WritableFileWrapper::Write(offset, data);
        if (data.size() >= 4096 && absl::EndsWith(path(), ".000001")) {
          absl::MutexLock l(&fs_->mu);
          fs_->piece = true;
        }
        return s;
      }

     private:
      PieceFs* fs_;
    };
  };
  PieceFs pfs;
  MemoryKeyring keyring;
  Options o = Base(&keyring, true);
  o.max_file_size = 4 << 20;
  o.preallocate = io::PreallocMode::kZeroFill;
  o.zero_ahead = 1 << 20;
  o.file_system = &pfs;
  std::string dir = NewTempDir("enc_zero_ahead");
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  {
    absl::MutexLock l(&pfs.mu);
    ASSERT_TRUE(pfs.mu.AwaitWithTimeout(absl::Condition(&pfs.piece),
                                        absl::Seconds(60)))
        << "no zero-fill piece written";
  }
  std::string path = dir + "/binlog.000001";
  auto dfs = NewDecryptingFileSystem(nullptr, &keyring);
  TransactionBuffer txn;
  std::string before = ReadFile(path);
  size_t recovered = 0, compared = 0;
  for (int i = 0; i < 10; ++i) {
    BuildTransaction(&txn, i, 300 + 50 * i);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    std::string after = ReadFile(path);
    size_t c = 0;
    recovered += RecoveredBytes(before, after, ReadPlain(dfs.get(), path), &c);
    compared += c;
    before = after;
  }
  ASSERT_TRUE((*log)->Close().ok());
  EXPECT_LE(recovered, 3 + compared / 64)
      << recovered << " of " << compared << " bytes recovered";
}

// Found by the power-loss test: recovery saw an event whose last bytes were
// never written (raw zeros of a preallocated file, read as zeros), kept it
// (without checksums it looked complete) and cut the file right after it.
// The cut left fewer than 32 raw zeros at the end of the file, which then
// read as ciphertext (garbage), and every later reader failed. Truncate
// rewrites such bytes as encrypted zeros.
TEST(EncryptedFileTest, CutInsideRawZerosKeepsThemZeros) {
  std::string dir = NewTempDir("enc_cut_zeros");
  std::string path = dir + "/binlog.000001";
  io::FileSystem* base = io::FileSystem::Default();
  MemoryKeyring keyring;
  ASSERT_TRUE(keyring.GenerateKey("k").ok());
  auto raw_file = base->OpenWritable(path, io::OpenMode::kCreateNew);
  ASSERT_TRUE(raw_file.ok());
  ASSERT_TRUE((*raw_file)->Allocate(0, 8192, /*keep_size=*/false).ok());
  auto f = internal::StartEncryptedFile(std::move(*raw_file), "k",
                                        *keyring.FetchKey("k"), base);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string plain(100, 'x');
  plain.replace(0, 4, kMagic);  // the password check reads it
  NoZeroCiphertext(Keystream(base, &keyring, path, 100), &plain);
  ASSERT_TRUE((*f)->Write(0, plain).ok());
  // A torn write: its last 10 bytes (and the guard) never reached the disk.
  std::string raw = ReadFile(path);
  raw.replace(512 + 90, 26, std::string(26, '\0'));
  WriteFile(path, raw);
  auto fs = NewDecryptingFileSystem(base, &keyring);
  std::string expect = plain.substr(0, 90) + std::string(10, '\0');
  EXPECT_EQ(ReadPlain(fs.get(), path).substr(0, 100), expect);
  // Recovery cuts after byte 100; the view must not change.
  ASSERT_TRUE((*f)->Truncate(100).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadPlain(fs.get(), path), expect);
}

// The plain stream of every encrypted file equals the file the same
// workload writes unencrypted, byte for byte (offsets exclude the header).
TEST(EncryptedLogTest, PlainStreamEqualsTheUnencryptedLog) {
  MemoryKeyring keyring;
  std::string plain_dir = NewTempDir("enc_plain");
  std::string enc_dir = NewTempDir("enc_enc");
  std::vector<std::string> plain_names = WriteLog(plain_dir, Base(nullptr, false), 120);
  std::vector<std::string> enc_names = WriteLog(enc_dir, Base(&keyring, true), 120);
  ASSERT_GT(plain_names.size(), 3u);
  ASSERT_EQ(plain_names, enc_names);
  auto fs = NewDecryptingFileSystem(nullptr, &keyring);
  for (const std::string& n : enc_names) {
    std::string raw = ReadFile(enc_dir + "/" + n);
    ASSERT_GT(raw.size(), kEncryptionHeaderSize);
    EXPECT_EQ(raw.substr(0, 4), std::string("\xfd" "bin")) << n;
    std::string plain = ReadFile(plain_dir + "/" + n);
    EXPECT_EQ(raw.size(), plain.size() + kEncryptionHeaderSize) << n;
    EXPECT_EQ(ReadPlain(fs.get(), enc_dir + "/" + n), plain) << n;
    // Ciphertext, not the plain bytes.
    EXPECT_EQ(raw.find("txn 5 "), std::string::npos);
  }
  // Readers: the log's own and one through the decrypting file system.
  absl::Status s;
  std::vector<EventRef> plain_events = ReadDir(plain_dir, nullptr, &s);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<EventRef> enc_events = ReadDir(enc_dir, fs.get(), &s);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(plain_events.size(), enc_events.size());
  for (size_t i = 0; i < plain_events.size(); ++i) {
    EXPECT_EQ(plain_events[i].offset, enc_events[i].offset);
    EXPECT_EQ(plain_events[i].bytes, enc_events[i].bytes);
  }
  // Without a keyring: a clear error, not garbage.
  std::vector<EventRef> none = ReadDir(enc_dir, nullptr, &s);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "encrypted binlog file")) << s;
  // ListFiles says which files are encrypted; the sizes are plain sizes.
  auto log = Binlog::Open(enc_dir, "binlog", Base(&keyring, true));
  ASSERT_TRUE(log.ok()) << log.status();
  for (const LogFileInfo& f : (*log)->ListFiles()) {
    EXPECT_TRUE(f.encrypted) << f.name;
    if (f.name != (*log)->ListFiles().back().name) {
      EXPECT_EQ(f.size, ReadFile(plain_dir + "/" + f.name).size()) << f.name;
    }
  }
  // A live reader of the log decrypts too.
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> live;
  ASSERT_TRUE(ReadAll(r->get(), &live).ok());
  EXPECT_GE(live.size(), plain_events.size());
  ASSERT_TRUE((*log)->Close().ok());
  // Turned off again: old files stay encrypted and readable, new ones plain.
  auto log2 = Binlog::Open(enc_dir, "binlog", Base(&keyring, false));
  ASSERT_TRUE(log2.ok()) << log2.status();
  auto files = (*log2)->ListFiles();
  EXPECT_TRUE(files.front().encrypted);
  EXPECT_FALSE(files.back().encrypted);
  ASSERT_TRUE((*log2)->Close().ok());
}

// Writes the same 40 transactions of 300 B .. 150 KB into a plain log in
// `plain_dir` and an encrypted one in `enc_dir` (one file each): with
// 64 KiB windows, events straddle windows and some are larger than one.
void WriteWindowLogs(const std::string& plain_dir, const std::string& enc_dir,
                     Keyring* keyring) {
  const size_t sizes[] = {300, 5000, 40000, 150000, 999, 70000};
  auto write = [&](const std::string& dir, const Options& o) {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (int i = 0; i < 40; ++i) {
      BuildTransaction(&txn, i, sizes[i % 6] + i);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  };
  Options po = Base(nullptr, false);
  Options eo = Base(keyring, true);
  po.max_file_size = eo.max_file_size = 64 << 20;  // one file
  write(plain_dir, po);
  write(enc_dir, eo);
}

// The windows of a reader of an encrypted log (64 KiB, the smallest), with
// the windows decrypted on the reader's thread and, with prefetch, by the
// helper thread that reads them ahead: events that straddle two windows,
// and events larger than a window, read as in the plain log; a byte
// damaged inside an event (in a window the helper decrypted, with
// prefetch) is DataLoss naming that event's offset, and the reader stays
// there.
TEST(EncryptedLogTest, EventsAcrossWindowsAndADamagedByte) {
  MemoryKeyring keyring;
  std::string plain_dir = NewTempDir("enc_windows_plain");
  std::string enc_dir = NewTempDir("enc_windows_enc");
  WriteWindowLogs(plain_dir, enc_dir, &keyring);
  auto fs = NewDecryptingFileSystem(nullptr, &keyring);
  for (bool prefetch : {false, true}) {
    SCOPED_TRACE(absl::StrCat("prefetch ", prefetch));
    ReaderOptions ro;
    ro.buffer_size = 64 << 10;
    ro.prefetch = prefetch;
    io::SequentialReaderStats stats;
    auto read = [&](const std::string& dir, io::FileSystem* f,
                    std::vector<EventRef>* events) {
      auto r = Reader::OpenDirectory(dir, "binlog", ro, f);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) return r.status();
      absl::Status s = ReadAll(r->get(), events);
      stats = (*r)->io_stats();
      return s;
    };
    std::vector<EventRef> plain_events, enc_events;
    ASSERT_TRUE(read(plain_dir, nullptr, &plain_events).ok());
    ASSERT_TRUE(read(enc_dir, fs.get(), &enc_events).ok());
    // With prefetch, the helper read (and so decrypted) windows.
    EXPECT_EQ(stats.prefetch_reads > 0, prefetch) << stats.prefetch_reads;
    ASSERT_EQ(plain_events.size(), enc_events.size());
    size_t straddling = 0, larger = 0;
    for (size_t i = 0; i < plain_events.size(); ++i) {
      EXPECT_EQ(plain_events[i].offset, enc_events[i].offset);
      EXPECT_EQ(plain_events[i].bytes, enc_events[i].bytes) << i;
      const uint64_t n = plain_events[i].end - plain_events[i].offset;
      if (n > ro.buffer_size) ++larger;
      if (plain_events[i].offset / ro.buffer_size !=
          (plain_events[i].end - 1) / ro.buffer_size) {
        ++straddling;
      }
    }
    EXPECT_GT(larger, 5u);
    EXPECT_GT(straddling, 10u);
  }
  // One byte of ciphertext flipped inside a 40 KB event: its plain byte
  // flips (CTR), the CRC32 fails.
  std::vector<EventRef> clean;
  {
    auto r = Reader::OpenDirectory(enc_dir, "binlog", ReaderOptions(), fs.get());
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(ReadAll(r->get(), &clean).ok());
  }
  const EventRef* victim = nullptr;
  for (const EventRef& e : clean) {
    if (e.end - e.offset > 40000 && e.end - e.offset < 50000 &&
        e.offset > 200000) {
      victim = &e;
      break;
    }
  }
  ASSERT_NE(victim, nullptr);
  const std::string path = enc_dir + "/binlog.000001";
  std::string raw = ReadFile(path);
  raw[kEncryptionHeaderSize + victim->offset + 1000] ^= 0x20;
  WriteFile(path, raw);
  for (bool prefetch : {false, true}) {
    SCOPED_TRACE(absl::StrCat("prefetch ", prefetch));
    ReaderOptions ro;
    ro.buffer_size = 64 << 10;
    ro.prefetch = prefetch;
    auto r = Reader::OpenDirectory(enc_dir, "binlog", ro, fs.get());
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> before;
    absl::Status s = ReadAll(r->get(), &before);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_TRUE(absl::StrContains(
        s.message(), absl::StrCat("binlog.000001: offset ", victim->offset, ":")))
        << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "checksum mismatch")) << s;
    EXPECT_EQ((*r)->position(), victim->offset);
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(before.back().end, victim->offset);
    // Sticky: the same error again, the reader stays.
    Event ev;
    EXPECT_EQ((*r)->Next(&ev), s);
    EXPECT_EQ((*r)->position(), victim->offset);
  }
}

// A read error under the decrypting file system (the raw bytes of one
// stream offset cannot be read) surfaces at the same event, with the same
// status, whether the window holding it is read and decrypted by the
// reader's thread or by the prefetch helper, for a failing byte at every
// window boundary of a 64 KiB reader and just before it: every event
// before it is returned, the event that needs the byte gets the error, and
// the reader stays there. Reads of 48 bytes or fewer do not fail: those
// are the reads of the raw bytes next to a window that decryption makes
// when an edge byte of the window may belong to a run of raw zeros (the
// random key decides when), and a failure there would make the error come
// one event early, in either mode alike.
TEST(EncryptedLogTest, ReadErrorAtEveryWindowBoundarySurfacesAtItsEvent) {
  MemoryKeyring keyring;
  std::string plain_dir = NewTempDir("enc_err_plain");
  std::string enc_dir = NewTempDir("enc_err_enc");
  WriteWindowLogs(plain_dir, enc_dir, &keyring);
  // Fails every raw read that covers raw byte bad_ (when set).
  class FailingFs : public io::FileSystemWrapper {
   public:
    FailingFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
    void set_bad(uint64_t raw_offset) { bad_ = raw_offset; }
    absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
        const std::string& path) override {
      auto f = io::FileSystemWrapper::OpenReadable(path);
      if (!f.ok()) return f.status();
      return std::unique_ptr<io::RandomAccessFile>(
          new File(std::move(*f), bad_));
    }

   private:
    class File : public io::RandomAccessFileWrapper {
     public:
      File(std::unique_ptr<io::RandomAccessFile> f, uint64_t bad)
          : io::RandomAccessFileWrapper(std::move(f)), bad_(bad) {}
      absl::Status Read(uint64_t offset, size_t n, char* scratch,
                        size_t* bytes_read) const override {
        if (n > 48 && offset <= bad_ && bad_ - offset < n) {
          *bytes_read = 0;
          return absl::UnavailableError("injected read error");
        }
        return io::RandomAccessFileWrapper::Read(offset, n, scratch, bytes_read);
      }

     private:
      const uint64_t bad_;
    };
    uint64_t bad_ = ~uint64_t{0};
  };
  FailingFs failing;
  auto fs = NewDecryptingFileSystem(&failing, &keyring);
  constexpr size_t kWindow = 64 << 10;
  std::vector<EventRef> clean;
  {
    auto r = Reader::OpenDirectory(enc_dir, "binlog", ReaderOptions(), fs.get());
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(ReadAll(r->get(), &clean).ok());
  }
  ASSERT_GT(clean.back().end, 25 * kWindow);
  size_t helper_reads = 0, cases = 0;
  for (uint64_t b = kWindow; b < clean.back().end; b += kWindow) {
    for (uint64_t bad : {b - 1, b}) {
      SCOPED_TRACE(absl::StrCat("bad stream byte ", bad));
      // The event that needs the byte.
      size_t victim = 0;
      while (clean[victim].end <= bad) ++victim;
      failing.set_bad(kEncryptionHeaderSize + bad);
      absl::Status first;
      for (bool prefetch : {false, true}) {
        SCOPED_TRACE(absl::StrCat("prefetch ", prefetch));
        ReaderOptions ro;
        ro.buffer_size = kWindow;
        ro.prefetch = prefetch;
        auto r = Reader::OpenDirectory(enc_dir, "binlog", ro, fs.get());
        ASSERT_TRUE(r.ok()) << r.status();
        std::vector<EventRef> got;
        absl::Status s = ReadAll(r->get(), &got);
        EXPECT_TRUE(absl::IsUnavailable(s)) << s;
        EXPECT_TRUE(absl::StrContains(s.message(), "injected read error")) << s;
        ASSERT_EQ(got.size(), victim);
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i].bytes, clean[i].bytes) << i;
        }
        EXPECT_EQ((*r)->position(), clean[victim].offset);
        // Not sticky (an I/O error): the reader tries the same event again.
        Event ev;
        EXPECT_TRUE(absl::IsUnavailable((*r)->Next(&ev)));
        EXPECT_EQ((*r)->position(), clean[victim].offset);
        if (prefetch) {
          EXPECT_EQ(s.code(), first.code());
          ++cases;
          if ((*r)->io_stats().prefetch_reads > 0) ++helper_reads;
        } else {
          first = s;
        }
      }
      failing.set_bad(~uint64_t{0});
    }
  }
  // The helper read windows ahead in all but the first windows' cases.
  EXPECT_GE(helper_reads + 2, cases);
}

// A tailing reader of an encrypted, zero-filled log reads each group as it
// is published: its window ends at the published end, with raw zeros (or
// the guard) right after it, and the last byte of the data is 0x00 or 0xff
// now and then (one window in 128), which sends the window to the general
// path; either way every event is read once, as written.
TEST(EncryptedLogTest, TailingReaderReadsEachGroupAsItIsPublished) {
  MemoryKeyring keyring;
  Options o = Base(&keyring, true);
  o.max_file_size = 256 << 10;
  o.preallocate = io::PreallocMode::kZeroFill;
  std::string dir = NewTempDir("enc_tail");
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  TransactionBuffer txn;
  std::vector<EventRef> events;
  size_t rows_queries = 0;
  for (int i = 0; i < 400; ++i) {
    BuildTransaction(&txn, i, 50 + (i * 131) % 3000);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    // Everything published so far, then OutOfRange (caught up).
    for (;;) {
      Event ev;
      absl::Status s = (*r)->Next(&ev);
      if (absl::IsOutOfRange(s)) break;
      ASSERT_TRUE(s.ok()) << "after commit " << i << ": " << s;
      if (ev.header.type == kRowsQueryEvent) {
        ASSERT_TRUE(absl::StrContains(
            ev.data, absl::StrCat("txn ", rows_queries, " ")))
            << "commit " << i;
        ++rows_queries;
      }
    }
    ASSERT_EQ(rows_queries, static_cast<size_t>(i + 1));
  }
  EXPECT_GT((*log)->ListFiles().size(), 2u);  // rotations too
  ASSERT_TRUE((*log)->Close().ok());
}

// Compressed and encrypted: the Transaction_payload events decrypt to the
// bytes the same log writes unencrypted, and expand to the same inner
// events (decoded) or come out as stored (raw), through 64 KiB windows.
TEST(EncryptedLogTest, CompressedAndEncryptedReadsAsCompressed) {
  MemoryKeyring keyring;
  auto write = [&](const std::string& dir, Options o) {
    o.compression = io::Codec::kZstd;
    o.max_file_size = 1 << 20;
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (int i = 0; i < 150; ++i) {
      BuildTransaction(&txn, i, 200 + (i * 977) % 20000);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  };
  std::string plain_dir = NewTempDir("enc_zstd_plain");
  std::string enc_dir = NewTempDir("enc_zstd_enc");
  write(plain_dir, Base(nullptr, false));
  write(enc_dir, Base(&keyring, true));
  auto fs = NewDecryptingFileSystem(nullptr, &keyring);
  for (PayloadMode mode : {PayloadMode::kDecoded, PayloadMode::kRaw}) {
    ReaderOptions ro;
    ro.buffer_size = 64 << 10;
    ro.payloads = mode;
    std::vector<EventRef> plain_events, enc_events;
    auto p = Reader::OpenDirectory(plain_dir, "binlog", ro);
    auto e = Reader::OpenDirectory(enc_dir, "binlog", ro, fs.get());
    ASSERT_TRUE(p.ok() && e.ok());
    ASSERT_TRUE(ReadAll(p->get(), &plain_events).ok());
    ASSERT_TRUE(ReadAll(e->get(), &enc_events).ok());
    ASSERT_EQ(plain_events.size(), enc_events.size());
    size_t payloads = 0;
    for (size_t i = 0; i < plain_events.size(); ++i) {
      EXPECT_EQ(plain_events[i].bytes, enc_events[i].bytes) << i;
      if (enc_events[i].type == kTransactionPayloadEvent) ++payloads;
    }
    if (mode == PayloadMode::kRaw) {
      EXPECT_GT(payloads, 100u);
    } else {
      EXPECT_EQ(payloads, 0u);
    }
  }
}

std::string Hex(absl::string_view s) { return absl::BytesToHexString(s); }

std::string Shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << cmd;
  return out;
}

// Independent check of the layout with the openssl command line only: the
// header fields at MySQL's offsets, the password decrypted with
// AES-256-CBC (no padding) under the master key and the header IV, key and
// IV = SHA-512(password)[0..32) and [32..48) with the IV's last 8 bytes
// being the block counter (0 at stream offset 0), then AES-256-CTR of the
// bytes after the 512-byte header gives the plain binlog file.
TEST(EncryptedLogTest, OpensslCommandLineDecryptsAFile) {
  if (std::system("openssl version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no openssl command";
  }
  MemoryKeyring keyring;
  std::string plain_dir = NewTempDir("enc_cli_plain");
  std::string enc_dir = NewTempDir("enc_cli");
  WriteLog(plain_dir, Base(nullptr, false), 40);
  std::vector<std::string> names = WriteLog(enc_dir, Base(&keyring, true), 40);
  ASSERT_FALSE(names.empty());
  std::string path = enc_dir + "/" + names[0];
  std::string raw = ReadFile(path);
  ASSERT_GT(raw.size(), 512u);
  // Fields at fixed offsets (key id length at 6).
  ASSERT_EQ(raw[5], 1);
  size_t id_len = static_cast<uint8_t>(raw[6]);
  std::string key_id = raw.substr(7, id_len);
  EXPECT_EQ(key_id, absl::StrCat("MySQLReplicationKey_", kUuid, "_1"));
  size_t p = 7 + id_len;
  ASSERT_EQ(raw[p], 2);
  std::string enc_password = raw.substr(p + 1, 32);
  ASSERT_EQ(raw[p + 33], 3);
  std::string iv = raw.substr(p + 34, 16);
  std::string master = *keyring.FetchKey(key_id);
  std::string t = enc_dir + "/cli_";
  WriteFile(t + "pw.enc", enc_password);
  WriteFile(t + "body", raw.substr(512));
  Shell(absl::StrCat("openssl enc -d -aes-256-cbc -nopad -K ", Hex(master),
                   " -iv ", Hex(iv), " -in ", t, "pw.enc -out ", t, "pw"));
  std::string digest = Shell(absl::StrCat("openssl dgst -sha512 -binary ", t, "pw"));
  ASSERT_EQ(digest.size(), 64u);
  std::string ctr_iv = digest.substr(32, 8) + std::string(8, '\0');
  Shell(absl::StrCat("openssl enc -d -aes-256-ctr -K ", Hex(digest.substr(0, 32)),
                   " -iv ", Hex(ctr_iv), " -in ", t, "body -out ", t, "plain"));
  std::string decrypted = ReadFile(t + "plain");
  EXPECT_EQ(decrypted.substr(0, 4), std::string("\xfe" "bin"));
  EXPECT_EQ(decrypted, ReadFile(plain_dir + "/" + names[0]));
}

// A crash with preallocated space: the space past the written end is raw
// zeros on disk (not encrypted zeros); recovery finds the end exactly as
// in a plain file and cuts a torn transaction the same way.
TEST(EncryptedLogTest, RecoveryFindsTheEndInRawZerosAndTornTails) {
  for (io::PreallocMode mode :
       {io::PreallocMode::kZeroFill, io::PreallocMode::kFallocate}) {
    MemoryKeyring keyring;
    RecoveryReport reports[2];
    for (int enc = 0; enc < 2; ++enc) {
      std::string dir = NewTempDir("enc_recover");
      std::string crashed = NewTempDir("enc_recover_copy");
      Options o = Base(enc ? &keyring : nullptr, enc == 1);
      o.max_file_size = 1 << 20;
      o.preallocate = mode;
      auto log = Binlog::Open(dir, "binlog", o);
      ASSERT_TRUE(log.ok()) << log.status();
      TransactionBuffer txn;
      for (int i = 0; i < 30; ++i) {
        BuildTransaction(&txn, i, 200 + i);
        ASSERT_TRUE((*log)->Commit(&txn).ok());
      }
      CommitPosition end = (*log)->VisibleEnd();
      // "Crash": copy the files while the log is open.
      ASSERT_EQ(std::system(absl::StrCat("cp -a ", dir, "/. ", crashed).c_str()), 0);
      ASSERT_TRUE((*log)->Close().ok());
      std::string last = absl::StrCat(crashed, "/binlog.",
                                       std::string(6 - std::to_string(end.file_number).size(), '0'),
                                       end.file_number);
      std::string raw = ReadFile(last);
      uint64_t hdr = enc ? kEncryptionHeaderSize : 0;
      ASSERT_GE(raw.size(), hdr + end.end);
      // Damage: a torn transaction after the end (random bytes, as a
      // half-written group would leave ciphertext), then the zeros.
      std::string torn = "\x20\x00\x00\x00\x21\x01\x00\x00\x00";
      raw.replace(hdr + end.end, torn.size(), torn);
      WriteFile(last, raw);
      auto reopened = Binlog::Open(crashed, "binlog", o);
      ASSERT_TRUE(reopened.ok()) << reopened.status();
      reports[enc] = (*reopened)->recovery();
      EXPECT_TRUE(reports[enc].recovered);
      EXPECT_EQ(reports[enc].valid_end, end.end);
      absl::Status s;
      auto fs = NewDecryptingFileSystem(nullptr, &keyring);
      ASSERT_TRUE((*reopened)->Close().ok());
      std::vector<EventRef> events = ReadDir(crashed, fs.get(), &s);
      EXPECT_TRUE(s.ok()) << s;
      int xids = 0;
      for (const EventRef& e : events) xids += e.type == kXidEvent;
      EXPECT_EQ(xids, 30);
    }
    EXPECT_EQ(reports[0].valid_end, reports[1].valid_end);
  }
}

// A rotation interrupted while it wrote the new file's encryption header
// (a torn 512-byte write: magic and part of the fields): the file is not
// in the index and holds nothing; Open removes it, as a torn magic.
TEST(EncryptedLogTest, TornHeaderOfAnInterruptedRotationIsRemoved) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_torn_header");
  std::vector<std::string> names = WriteLog(dir, Base(&keyring, true), 5);
  ASSERT_FALSE(names.empty());
  internal::EncryptionHeader h;
  h.key_id = KeyIdForTest();
  std::string header = *internal::EncodeEncryptionHeader(h);
  uint64_t next = names.size() + 1;
  std::string next_name = absl::StrCat("binlog.00000", next);
  for (size_t torn : {2, 4, 20}) {
    WriteFile(dir + "/" + next_name,
              header.substr(0, torn) + std::string(4096 - torn, '\0'));
    auto log = Binlog::Open(dir, "binlog", Base(&keyring, true));
    ASSERT_TRUE(log.ok()) << torn << ": " << log.status();
    ASSERT_EQ((*log)->recovery().removed_files.size(), 1u) << torn;
    EXPECT_EQ((*log)->recovery().removed_files[0], next_name);
    ASSERT_TRUE((*log)->Close().ok());
    next += 1;  // that Open started file `next`; the next torn one follows
    next_name = absl::StrCat("binlog.00000", next);
  }
}

// A rotation cut while it wrote the new file's binlog header after its
// encryption header: a byte prefix of the encrypted magic and
// Format_description, the file ending there (inside the event_size field
// too) or zeros after it. Nothing lies after the header: Open removes it.
TEST(EncryptedLogTest, TornBinlogHeaderOfAnInterruptedRotationIsRemoved) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_torn_binlog_header");
  std::vector<std::string> names = WriteLog(dir, Base(&keyring, true), 5);
  ASSERT_FALSE(names.empty());
  // A whole file's encryption header and ciphertext (its own password).
  const std::string whole = ReadFile(dir + "/" + names.front());
  uint64_t next = names.size() + 1;
  for (size_t cut : {kMagicSize + 2, kMagicSize + kEventSizeOffset + 1,
                     kMagicSize + kEventSizeOffset + 3, kMagicSize + 40}) {
    for (bool zeros_after : {false, true}) {
      const std::string next_name = BinlogFileName("binlog", next);
      std::string bytes = whole.substr(0, kEncryptionHeaderSize + cut);
      if (zeros_after) bytes += std::string(4096 - bytes.size(), '\0');
      WriteFile(dir + "/" + next_name, bytes);
      auto log = Binlog::Open(dir, "binlog", Base(&keyring, true));
      ASSERT_TRUE(log.ok()) << cut << " " << zeros_after << ": " << log.status();
      ASSERT_EQ((*log)->recovery().removed_files.size(), 1u) << cut << " " << zeros_after;
      EXPECT_EQ((*log)->recovery().removed_files[0], next_name);
      ASSERT_TRUE((*log)->Close().ok());
      next += 1;  // that Open started file `next`
    }
  }
}

// A header that does not decode with data after it is damage, not a torn
// write (a torn header write leaves nothing after it): with a rotation off
// the commit path the unindexed file may hold acknowledged commits, so
// Open refuses instead of removing it.
TEST(EncryptedLogTest, DamagedHeaderOfAnUnindexedFileWithDataIsRefused) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_damaged_header");
  std::vector<std::string> names = WriteLog(dir, Base(&keyring, true), 5);
  ASSERT_FALSE(names.empty());
  // A whole encrypted file with events, its version byte damaged, as the
  // file after the last indexed one.
  std::string bytes = ReadFile(dir + "/" + names.front());
  ASSERT_GT(bytes.size(), 1024u);
  bytes[4] ^= 0x7f;
  const std::string next = dir + "/" + absl::StrCat("binlog.00000", names.size() + 1);
  WriteFile(next, bytes);
  auto log = Binlog::Open(dir, "binlog", Base(&keyring, true));
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsDataLoss(log.status())) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "encryption header"))
      << log.status();
  EXPECT_EQ(ReadFile(next), bytes);
}

// Open's contract: an encrypted log opened without a keyring is refused
// with FailedPrecondition that says so; nothing is changed.
TEST(EncryptedLogTest, OpeningAnEncryptedLogWithoutAKeyringIsFailedPrecondition) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_no_keyring");
  std::vector<std::string> names = WriteLog(dir, Base(&keyring, true), 5);
  ASSERT_FALSE(names.empty());
  const std::string last = dir + "/" + names.back();
  const std::string before = ReadFile(last);
  auto log = Binlog::Open(dir, "binlog", Base(nullptr, false));
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
  EXPECT_TRUE(absl::StrContains(log.status().message(), "reading it needs the keyring"))
      << log.status();
  EXPECT_EQ(ReadFile(last), before);
}

TEST(EncryptedLogTest, MariaDBFlavorRefusesEncryption) {
  MemoryKeyring keyring;
  Options o = Base(&keyring, true);
  o.flavor = LogFlavor::kMariaDB;
  auto log = Binlog::Open(NewTempDir("enc_maria"), "binlog", o);
  ASSERT_FALSE(log.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(log.status()));
  EXPECT_TRUE(absl::StrContains(log.status().message(), "kMariaDB"));
  Options nokey = Base(nullptr, true);
  EXPECT_TRUE(absl::IsInvalidArgument(
      Binlog::Open(NewTempDir("enc_nokey"), "binlog", nokey).status()));
}

TEST(EncryptedLogTest, MissingKeyIsNotFoundNamingTheKey) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_missing");
  WriteLog(dir, Base(&keyring, true), 10);
  MemoryKeyring empty;
  auto fs = NewDecryptingFileSystem(nullptr, &empty);
  absl::Status s;
  ReadDir(dir, fs.get(), &s);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "MySQLReplicationKey_")) << s;
}

// A wrong key under the file's key id: the file password it unwraps does
// not decrypt the stream's binlog magic (the check this library makes;
// MySQL's AES-CBC of the password has no padding to fail, and a MySQL
// reader reports a bad magic number). It once read as "not a binlog file
// (no binlog magic)"; the error names the key and says what failed, for
// reading and for appending to the file.
TEST(EncryptedLogTest, WrongKeyIsReportedAsSuchNamingTheKey) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_wrong_key");
  std::vector<std::string> names = WriteLog(dir, Base(&keyring, true), 10);
  ASSERT_FALSE(names.empty());
  MemoryKeyring wrong;
  std::string id;
  for (const auto& kv : keyring.keys()) {
    id = kv.first;
    ASSERT_TRUE(wrong.AddKey(kv.first, std::string(32, 'w')).ok());
  }
  ASSERT_FALSE(id.empty());
  auto fs = NewDecryptingFileSystem(nullptr, &wrong);
  absl::Status s;
  ReadDir(dir, fs.get(), &s);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), id)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "does not decrypt")) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "no binlog magic")) << s;
  // Opening it to append is refused the same way (nothing is written
  // under a password that is not the file's).
  const std::string path = dir + "/" + names.back();
  const std::string before = ReadFile(path);
  auto w = fs->OpenWritable(path, io::OpenMode::kOpenExisting);
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::IsDataLoss(w.status())) << w.status();
  EXPECT_TRUE(absl::StrContains(w.status().message(), id)) << w.status();
  EXPECT_EQ(ReadFile(path), before);
  // A torn first write (one byte of the stream, zeros after it, as a power
  // cut leaves it; found by the power-loss test) is no wrong key: the right
  // key reads it as a file without its magic.
  std::string torn = ReadFile(dir + "/" + names.front());
  torn.replace(kEncryptionHeaderSize + 1, torn.size() - kEncryptionHeaderSize - 1,
               std::string(torn.size() - kEncryptionHeaderSize - 1, '\0'));
  WriteFile(dir + "/" + names.front(), torn);
  auto right = NewDecryptingFileSystem(nullptr, &keyring);
  ReadDir(dir, right.get(), &s);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "no binlog magic")) << s;
}

std::string KeyId(int seqno) {
  return absl::StrCat("MySQLReplicationKey_", kUuid, "_", seqno);
}

TEST(KeyRotationTest, OldFilesMoveToTheNewKeyAndTheOldKeyCanGo) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_rotate");
  Options o = Base(&keyring, true);
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  for (int i = 0; i < 60; ++i) {
    BuildTransaction(&txn, i, 500);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  size_t files_before = (*log)->ListFiles().size();
  ASSERT_TRUE((*log)->RotateEncryptionKey().ok());
  EXPECT_EQ((*log)->ListFiles().size(), files_before + 1);
  for (const LogFileInfo& f : (*log)->ListFiles()) {
    auto h = internal::ReadEncryptionHeader(io::FileSystem::Default(),
                                            dir + "/" + f.name);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->key_id, KeyId(2)) << f.name;
  }
  for (int i = 60; i < 70; ++i) {
    BuildTransaction(&txn, i, 500);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(keyring.RemoveKey(KeyId(1)).ok());
  auto fs = NewDecryptingFileSystem(nullptr, &keyring);
  absl::Status s;
  std::vector<EventRef> events = ReadDir(dir, fs.get(), &s);
  ASSERT_TRUE(s.ok()) << s;
  int xids = 0;
  for (const EventRef& e : events) xids += e.type == kXidEvent;
  EXPECT_EQ(xids, 70);
  // Reopen: the log goes on with key 2.
  auto again = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(again.ok()) << again.status();
  auto h = internal::ReadEncryptionHeader(
      io::FileSystem::Default(), dir + "/" + (*again)->ListFiles().back().name);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->key_id, KeyId(2));
  ASSERT_TRUE((*again)->Close().ok());
}

// Fails the n-th header rewrite (a 512-byte write at offset 0 of an
// existing file) with an I/O error.
// RotateEncryptionKey rewrites a closed file's header in place; a reader
// opening the file meanwhile may read part of the old header and part of
// the new. The reader checks the unwrapped password against the binlog
// magic and reads the header again instead of failing.
TEST(KeyRotationTest, AReaderThatSeesAHalfRewrittenHeaderReadsItAgain) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_torn_header");
  Options o = Base(&keyring, true);
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (int i = 0; i < 5; ++i) {
      BuildTransaction(&txn, i, 500);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  const std::string path = dir + "/binlog.000001";
  const std::string old_header = ReadFile(path).substr(0, 512);
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE((*log)->RotateEncryptionKey().ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  const std::string new_header = ReadFile(path).substr(0, 512);
  ASSERT_NE(old_header, new_header);
  auto plain_fs = NewDecryptingFileSystem(nullptr, &keyring);
  const std::string want = ReadPlain(plain_fs.get(), path);
  ASSERT_EQ(want.substr(0, 4), std::string(kBinlogMagic, 4));

  // The first read of the whole header sees the new key id and the old
  // sealed password (a rewrite caught halfway), every later read the file.
  class TornOnce : public io::FileSystemWrapper {
   public:
    TornOnce(std::string torn, int* served)
        : io::FileSystemWrapper(io::FileSystem::Default()),
          torn_(std::move(torn)), served_(served) {}
    absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
        const std::string& path) override {
      auto f = io::FileSystemWrapper::OpenReadable(path);
      if (!f.ok()) return f.status();
      return std::unique_ptr<io::RandomAccessFile>(
          new File(std::move(*f), torn_, served_));
    }

   private:
    class File : public io::RandomAccessFileWrapper {
     public:
      File(std::unique_ptr<io::RandomAccessFile> f, const std::string& torn,
           int* served)
          : io::RandomAccessFileWrapper(std::move(f)), torn_(torn), served_(served) {}
      absl::Status Read(uint64_t offset, size_t n, char* scratch,
                        size_t* bytes_read) const override {
        if (offset == 0 && n == 512 && *served_ == 0) {
          ++*served_;
          std::memcpy(scratch, torn_.data(), 512);
          *bytes_read = 512;
          return absl::OkStatus();
        }
        return io::RandomAccessFileWrapper::Read(offset, n, scratch, bytes_read);
      }

     private:
      const std::string& torn_;
      int* served_;
    };
    std::string torn_;
    int* served_;
  };
  // Key id and IV from the new header, the sealed password from the old:
  // it unwraps (same length) to a wrong password.
  auto old_h = internal::DecodeEncryptionHeader(old_header);
  auto new_h = internal::DecodeEncryptionHeader(new_header);
  ASSERT_TRUE(old_h.ok() && new_h.ok());
  internal::EncryptionHeader mixed = *new_h;
  mixed.encrypted_password = old_h->encrypted_password;
  auto torn = internal::EncodeEncryptionHeader(mixed);
  ASSERT_TRUE(torn.ok()) << torn.status();
  int served = 0;
  TornOnce base(*torn, &served);
  auto fs = NewDecryptingFileSystem(&base, &keyring);
  EXPECT_EQ(ReadPlain(fs.get(), path), want);
  EXPECT_EQ(served, 1);
}

class FailingHeaderWrites : public io::FileSystemWrapper {
 public:
  FailingHeaderWrites(io::FileSystem* t, int fail_at)
      : io::FileSystemWrapper(t), fail_at_(fail_at) {}
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    auto f = io::FileSystemWrapper::OpenWritable(path, mode, permissions);
    if (!f.ok() || mode != io::OpenMode::kOpenExisting) return f;
    return std::unique_ptr<io::WritableFile>(new File(std::move(*f), this));
  }

 private:
  class File : public io::WritableFileWrapper {
   public:
    File(std::unique_ptr<io::WritableFile> t, FailingHeaderWrites* fs)
        : io::WritableFileWrapper(std::move(t)), fs_(fs) {}
    absl::Status Write(uint64_t offset, absl::string_view data) override {
      if (offset == 0 && data.size() == 512 && ++fs_->seen_ == fs_->fail_at_) {
        return absl::DataLossError("injected: header write failed");
      }
      return io::WritableFileWrapper::Write(offset, data);
    }
    FailingHeaderWrites* fs_;
  };
  int fail_at_;
  int seen_ = 0;
};

TEST(KeyRotationTest, InterruptedRotationLeavesEveryFileReadable) {
  MemoryKeyring keyring;
  std::string dir = NewTempDir("enc_rotate_fail");
  FailingHeaderWrites failing(io::FileSystem::Default(), 2);
  Options o = Base(&keyring, true);
  o.file_system = &failing;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  for (int i = 0; i < 60; ++i) {
    BuildTransaction(&txn, i, 500);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  absl::Status rs = (*log)->RotateEncryptionKey();
  EXPECT_TRUE(absl::IsDataLoss(rs)) << rs;
  // Commits go on.
  BuildTransaction(&txn, 60, 500);
  ASSERT_TRUE((*log)->Commit(&txn).ok());
  int on_old = 0, on_new = 0;
  for (const LogFileInfo& f : (*log)->ListFiles()) {
    auto h = internal::ReadEncryptionHeader(io::FileSystem::Default(),
                                            dir + "/" + f.name);
    ASSERT_TRUE(h.ok()) << h.status();
    on_old += h->key_id == KeyId(1);
    on_new += h->key_id == KeyId(2);
  }
  EXPECT_GT(on_old, 0);
  EXPECT_GT(on_new, 1);
  // Every file reads with the keyring holding both keys.
  auto fs = NewDecryptingFileSystem(nullptr, &keyring);
  absl::Status s;
  std::vector<EventRef> events = ReadDir(dir, fs.get(), &s);
  ASSERT_TRUE(s.ok()) << s;
  // Again: everything moves to key 3; keys 1 and 2 can go.
  ASSERT_TRUE((*log)->RotateEncryptionKey().ok());
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(keyring.RemoveKey(KeyId(1)).ok());
  ASSERT_TRUE(keyring.RemoveKey(KeyId(2)).ok());
  events = ReadDir(dir, fs.get(), &s);
  ASSERT_TRUE(s.ok()) << s;
  int xids = 0;
  for (const EventRef& e : events) xids += e.type == kXidEvent;
  EXPECT_EQ(xids, 61);
}

TEST(KeyringFileTest, LoadsTheDocumentedFormatAndRefusesBadLines) {
  std::string dir = NewTempDir("keyring_file");
  MemoryKeyring k;
  ASSERT_TRUE(k.GenerateKey("a").ok());
  EXPECT_TRUE(absl::IsAlreadyExists(k.GenerateKey("a")));
  ASSERT_TRUE(k.GenerateKey("b").ok());
  WriteFile(dir + "/keys", "# comment\n\n" + KeyringFileText(k));
  ASSERT_EQ(::chmod((dir + "/keys").c_str(), 0600), 0);
  auto loaded = LoadKeyringFile(nullptr, dir + "/keys");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->keys(), k.keys());
  WriteFile(dir + "/bad", "a 1234\n");
  ASSERT_EQ(::chmod((dir + "/bad").c_str(), 0600), 0);
  auto bad = LoadKeyringFile(nullptr, dir + "/bad");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_TRUE(absl::StrContains(bad.status().message(), ":1:"));
}

// A key file that other users may read (or write) is refused: its keys
// decrypt every file of the log. Its owner's group may read it (a service
// group), as with MySQL's own key files.
TEST(KeyringFileTest, AKeyFileOthersCanReadIsRefused) {
  std::string dir = NewTempDir("keyring_modes");
  MemoryKeyring k;
  ASSERT_TRUE(k.GenerateKey("a").ok());
  const std::string path = dir + "/keys";
  WriteFile(path, KeyringFileText(k));
  for (unsigned mode : {0644u, 0604u, 0602u, 0666u}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    auto loaded = LoadKeyringFile(nullptr, path);
    EXPECT_TRUE(absl::IsFailedPrecondition(loaded.status()))
        << std::oct << mode << ": " << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), path))
        << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), "other users"))
        << loaded.status();
  }
  for (unsigned mode : {0600u, 0640u, 0400u}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    auto loaded = LoadKeyringFile(nullptr, path);
    EXPECT_TRUE(loaded.ok()) << std::oct << mode << ": " << loaded.status();
  }
}

// With encryption on, a transaction larger than the memory limit is not
// spilled to disk in the clear: the spill file holds ciphertext (under a
// key only the buffer knows), and the log still gets the plain events.
TEST(EncryptedLogTest, SpilledTransactionsAreEncryptedInTheSpillFile) {
  // Records every byte written to temporary files.
  class RecordingFs : public io::FileSystemWrapper {
   public:
    RecordingFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
    std::string written;
    class File : public io::TempFile {
     public:
      File(std::unique_ptr<io::TempFile> f, RecordingFs* fs)
          : f_(std::move(f)), fs_(fs) {}
      absl::Status Write(uint64_t offset, absl::string_view data) override {
        fs_->written.append(data.data(), data.size());
        return f_->Write(offset, data);
      }
      absl::Status Read(uint64_t offset, size_t n, char* scratch,
                        size_t* got) const override {
        return f_->Read(offset, n, scratch, got);
      }
      absl::Status Truncate(uint64_t size) override { return f_->Truncate(size); }
      const std::string& path() const override { return f_->path(); }

     private:
      std::unique_ptr<io::TempFile> f_;
      RecordingFs* fs_;
    };
    absl::StatusOr<std::unique_ptr<io::TempFile>> NewTempFile(
        const std::string& dir) override {
      auto f = target()->NewTempFile(dir);
      if (!f.ok()) return f.status();
      return std::unique_ptr<io::TempFile>(new File(std::move(*f), this));
    }
  };
  for (bool encryption : {false, true}) {
    SCOPED_TRACE(encryption);
    RecordingFs fs;
    MemoryKeyring keyring;
    Options o = Base(&keyring, encryption);
    o.max_file_size = 1 << 20;
    o.file_system = &fs;
    o.transaction_memory_limit = 4096;
    std::string dir = NewTempDir("enc_spill");
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    std::unique_ptr<TransactionBuffer> txn = (*log)->NewTransactionBuffer();
    BuildTransaction(txn.get(), 77, 64 << 10);
    ASSERT_TRUE(txn->spilled());
    ASSERT_TRUE((*log)->Commit(txn.get()).ok());
    ASSERT_TRUE((*log)->Close().ok());
    ASSERT_GT(fs.written.size(), 16u << 10);
    // BuildTransaction's text starts "txn 77 ".
    EXPECT_EQ(absl::StrContains(fs.written, "txn 77 "), !encryption);
    // The log has the transaction, in the clear once decrypted.
    std::unique_ptr<io::FileSystem> dfs = NewDecryptingFileSystem(nullptr, &keyring);
    auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions(), dfs.get());
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<EventRef> events;
    ASSERT_TRUE(testing_util::ReadAll(r->get(), &events).ok());
    bool found = false;
    for (const EventRef& e : events) {
      found = found || (e.type == kRowsQueryEvent &&
                        absl::StrContains(e.bytes, "txn 77 "));
    }
    EXPECT_TRUE(found);
  }
}

// Each spilled transaction gets its own password (MySQL sets up a new
// password for the binlog cache's temporary file whenever it resets it):
// the spill file is rewritten from offset 0 by every transaction, and one
// password for the buffer's life put the same keystream over all of them
// (two spills of the same events wrote the same ciphertext).
TEST(EncryptedLogTest, EachSpilledTransactionHasItsOwnKeystream) {
  class RecordingFs : public io::FileSystemWrapper {
   public:
    RecordingFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
    std::vector<std::pair<uint64_t, std::string>> writes;
    class File : public io::TempFile {
     public:
      File(std::unique_ptr<io::TempFile> f, RecordingFs* fs)
          : f_(std::move(f)), fs_(fs) {}
      absl::Status Write(uint64_t offset, absl::string_view data) override {
        fs_->writes.emplace_back(offset, std::string(data));
        return f_->Write(offset, data);
      }
      absl::Status Read(uint64_t offset, size_t n, char* scratch,
                        size_t* got) const override {
        return f_->Read(offset, n, scratch, got);
      }
      absl::Status Truncate(uint64_t size) override { return f_->Truncate(size); }
      const std::string& path() const override { return f_->path(); }

     private:
      std::unique_ptr<io::TempFile> f_;
      RecordingFs* fs_;
    };
    absl::StatusOr<std::unique_ptr<io::TempFile>> NewTempFile(
        const std::string& dir) override {
      auto f = target()->NewTempFile(dir);
      if (!f.ok()) return f.status();
      return std::unique_ptr<io::TempFile>(new File(std::move(*f), this));
    }
  };
  RecordingFs fs;
  MemoryKeyring keyring;
  Options o = Base(&keyring, true);
  o.max_file_size = 1 << 20;
  o.file_system = &fs;
  o.transaction_memory_limit = 4096;
  std::string dir = NewTempDir("enc_spill_keys");
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  std::unique_ptr<TransactionBuffer> txn = (*log)->NewTransactionBuffer();
  // The spill file's bytes of each transaction, by offset.
  std::vector<std::string> spilled;
  for (int i = 0; i < 3; ++i) {
    fs.writes.clear();
    BuildTransaction(txn.get(), 77, 64 << 10);  // the same events each time
    ASSERT_TRUE(txn->spilled());
    ASSERT_TRUE((*log)->Commit(txn.get()).ok());
    std::string bytes;
    for (const auto& w : fs.writes) {
      if (bytes.size() < w.first + w.second.size()) {
        bytes.resize(w.first + w.second.size(), '\0');
      }
      bytes.replace(w.first, w.second.size(), w.second);
    }
    ASSERT_GT(bytes.size(), 32u << 10);
    spilled.push_back(bytes);
  }
  ASSERT_TRUE((*log)->Close().ok());
  // Same plaintext, same offsets: under one keystream the ciphertexts
  // would be equal (and XOR of any two would be XOR of the plaintexts).
  for (size_t a = 0; a < spilled.size(); ++a) {
    for (size_t b = a + 1; b < spilled.size(); ++b) {
      const size_t n = std::min(spilled[a].size(), spilled[b].size());
      size_t same = 0;
      for (size_t k = 0; k < n; ++k) same += spilled[a][k] == spilled[b][k];
      // Chance alone: one byte in 256.
      EXPECT_LT(same, n / 64) << "transactions " << a << " and " << b << ": "
                              << same << " of " << n << " bytes equal";
    }
  }
}

}  // namespace
}  // namespace binlog
