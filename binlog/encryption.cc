#include "binlog/encryption.h"

#include <immintrin.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "binlog/index_file.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "binlog/format.h"
#include "binlog/status_macros.h"
#include "binlog/zero_words.h"
#include "io/file_system_wrapper.h"

namespace binlog {
namespace internal {
namespace {

constexpr size_t kVersionOffset = 4;
constexpr size_t kFieldsOffset = 5;
constexpr uint8_t kFieldEnd = 0;
constexpr uint8_t kFieldKeyId = 1;
constexpr uint8_t kFieldPassword = 2;
constexpr uint8_t kFieldIv = 3;
constexpr char kKeyIdPrefix[] = "MySQLReplicationKey_";

// A zero run of the ciphertext this long is raw zeros (preallocated or
// never written space, or the zero frontier's fill), not ciphertext: 32
// zero bytes of real ciphertext have a chance of 2^-256. Shorter runs are
// ciphertext (see kGuardSize for why real ciphertext never touches raw
// zeros).
constexpr size_t kRawZeroRun = 32;

EVP_CIPHER_CTX* Ctx(void* p) { return static_cast<EVP_CIPHER_CTX*>(p); }

absl::Status CryptoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat("OpenSSL: ", what, " failed"));
}

// AES-256-CBC without padding of whole blocks.
absl::Status Cbc(bool encrypt, absl::string_view key, const uint8_t* iv,
                 const uint8_t* in, size_t n, uint8_t* out) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return CryptoError("EVP_CIPHER_CTX_new");
  int len1 = 0, len2 = 0;
  bool ok =
      EVP_CipherInit_ex(ctx, EVP_aes_256_cbc(), nullptr,
                        reinterpret_cast<const uint8_t*>(key.data()), iv,
                        encrypt ? 1 : 0) == 1 &&
      EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
      EVP_CipherUpdate(ctx, out, &len1, in, static_cast<int>(n)) == 1 &&
      EVP_CipherFinal_ex(ctx, out + len1, &len2) == 1 &&
      static_cast<size_t>(len1 + len2) == n;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return CryptoError("AES-256-CBC of the file password");
  return absl::OkStatus();
}

absl::Status CheckKey(absl::string_view key, absl::string_view id) {
  if (key.size() != kMasterKeySize) {
    return absl::InvalidArgumentError(
        absl::StrCat("binlog encryption key ", id, " has ", key.size(),
                     " bytes; AES-256 needs ", kMasterKeySize));
  }
  return absl::OkStatus();
}

// The guard: 16 raw bytes 0xff written after the end of every write that
// reaches the written end, so the last bytes of the data are never next to
// raw zeros (preallocated or never written space). Without it a
// transaction whose last ciphertext bytes happen to be 0 (one in 256)
// would merge with the raw zeros after it and read back as zeros: a
// checksum mismatch, and recovery would cut an acknowledged transaction.
//
// The guard is not ciphertext: the next write covers it with data at the
// same stream offsets, so a guard of encrypted zeros (keystream, as it
// once was) gave anyone with two copies of the file the plaintext of that
// data (XOR of the copies). No keystream byte ever covers two plaintexts:
// the guard and the zero frontier's fill are raw bytes.
//
// Readers see the guard as zeros, as in a plain preallocated file: 16
// bytes 0xff right before a raw zero run, or at the end of the file (or
// before zeros up to it), read as zeros (PlainZeroRanges). Real ciphertext
// looks like that with a chance of 2^-128 (a closed file whose last 16
// ciphertext bytes are 0xff). Close's trim (Options::trim_preallocated)
// cuts the guard with the spare space.
constexpr size_t kGuardSize = 16;
constexpr char kGuardByte = '\xff';
const char kGuard[kGuardSize] = {
    kGuardByte, kGuardByte, kGuardByte, kGuardByte, kGuardByte, kGuardByte,
    kGuardByte, kGuardByte, kGuardByte, kGuardByte, kGuardByte, kGuardByte,
    kGuardByte, kGuardByte, kGuardByte, kGuardByte};

bool AllZeroBytes(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}
const char kZeros48[48] = {0};

bool AllZeroParts(absl::Span<const absl::string_view> parts) {
  for (absl::string_view p : parts) {
    if (p.empty()) continue;
    if (p[0] != 0 || std::memcmp(p.data(), p.data() + 1, p.size() - 1) != 0) {
      return false;
    }
  }
  return true;
}

using internal::FindZeroWord;

// Raw context a reader looks at around a window: enough to widen a zero
// run at an edge to kRawZeroRun and to see a guard before it.
constexpr size_t kContext = kRawZeroRun + kGuardSize;

// The raw bytes (stream offsets) of a window of an encrypted file, `mid`
// (n bytes), with up to kContext bytes before it (`pre`) and after it
// (`post`). `eof`: the file ends right after `post`.
struct RawView {
  const char* pre = nullptr;
  size_t pre_n = 0;
  const char* mid = nullptr;
  size_t n = 0;
  const char* post = nullptr;
  size_t post_n = 0;
  bool eof = false;
  // The byte at i, window coordinates: -pre_n <= i < n + post_n.
  char at(int64_t i) const {
    if (i < 0) return pre[static_cast<int64_t>(pre_n) + i];
    if (i < static_cast<int64_t>(n)) return mid[i];
    return post[i - static_cast<int64_t>(n)];
  }
};

using Ranges = std::vector<std::pair<size_t, size_t>>;

// The ranges of v's window that read as zeros, in order: raw zero runs
// (kRawZeroRun or longer, or a guarded run up to the end of the file) and
// the guard right before such a run or at the end of the file. Everything
// else is ciphertext. A run at an edge of the window is widened into the
// context (so a window that starts or ends inside raw zeros sees them as
// raw); a run that goes on past the context is long enough anyway.
void PlainZeroRanges(const RawView& v, Ranges* out) {
  out->clear();
  const int64_t n = static_cast<int64_t>(v.n);
  const int64_t lo = -static_cast<int64_t>(v.pre_n);
  const int64_t hi = n + static_cast<int64_t>(v.post_n);
  const int64_t guard = static_cast<int64_t>(kGuardSize);
  auto guard_before = [&](int64_t a) {
    if (a - guard < lo) return false;
    for (int64_t k = a - guard; k < a; ++k) {
      if (v.at(k) != kGuardByte) return false;
    }
    return true;
  };
  auto add = [&](int64_t s, int64_t e) {
    s = std::max<int64_t>(s, 0);
    e = std::min(e, n);
    if (s < e) out->emplace_back(static_cast<size_t>(s), static_cast<size_t>(e));
  };
  auto run = [&](int64_t a, int64_t b) {
    while (a > lo && v.at(a - 1) == 0) --a;
    while (b < hi && v.at(b) == 0) ++b;
    const bool guarded = guard_before(a);
    const bool to_eof = b == hi && v.eof;
    if (b - a >= static_cast<int64_t>(kRawZeroRun) || (guarded && to_eof)) {
      add(guarded ? a - guard : a, b);
    }
  };
  const char* buf = v.mid;
  int64_t i = 0;
  if (n > 0 && buf[0] == 0) {
    // Zeros at the start: their run may have begun before the window.
    int64_t b = 0;
    while (b < n && buf[b] == 0) ++b;
    run(0, b);
    i = b;
  }
  // A raw run of 32 zero bytes holds a zero word at any alignment; real
  // ciphertext has one with chance 2^-64 per word. So look at words
  // (cheap, no call per zero byte) and widen a zero word to its run.
  while (i < n) {
    const int64_t w = static_cast<int64_t>(
        FindZeroWord(buf, static_cast<size_t>(i), static_cast<size_t>(n)));
    if (w + 8 <= n) {
      int64_t a = w;
      while (a > i && buf[a - 1] == 0) --a;
      int64_t b = w + 8;
      while (b < n && buf[b] == 0) ++b;
      run(a, b);
      i = b;
      continue;
    }
    // No zero word: only zeros at the very end can matter (a run that goes
    // on after the window, or a guarded one up to the end of the file).
    int64_t a = n;
    while (a > i && buf[a - 1] == 0) --a;
    if (a < n) run(a, n);
    break;
  }
  // A guard that overlaps the end of the window, with its zeros after it.
  int64_t t = n;
  while (t < hi && v.at(t) == kGuardByte) ++t;
  if (t < hi && t > n - guard && v.at(t) == 0) run(t, t + 1);
  // A guard at the end of the file.
  if (v.eof && guard_before(hi)) add(hi - guard, hi);
  std::sort(out->begin(), out->end());
  size_t k = 0;
  for (size_t j = 0; j < out->size(); ++j) {
    if (k > 0 && (*out)[j].first <= (*out)[k - 1].second) {
      (*out)[k - 1].second = std::max((*out)[k - 1].second, (*out)[j].second);
    } else {
      (*out)[k++] = (*out)[j];
    }
  }
  out->resize(k);
}

// The file password check: whether `cipher` (of the password a key
// unwrapped from the header of encrypted file `raw`) decrypts the first
// bytes of its stream to the binlog magic. MySQL makes no such check (the
// password is AES-CBC without padding, which any key "decrypts"; a MySQL
// reader then finds no binlog magic); here a wrong key is named as such.
// True (no verdict) while the magic is not written, or torn: a torn first
// write leaves a prefix of its bytes and zeros after it (raw zeros), so a
// wrong magic followed by nothing but zeros in the stream's first 32
// bytes is left to the reader's own checks. With the wrong key, real
// ciphertext there is all zeros with a chance of 2^-224.
absl::StatusOr<bool> PasswordChecks(const io::RandomAccessFile& raw,
                                    CtrCipher* cipher) {
  constexpr size_t kLook = 32;
  char head[kLook];
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(raw.Read(kEncryptionHeaderSize, kLook, head, &got));
  if (got < kMagicSize || AllZeroBytes(head, kMagicSize)) return true;
  char magic[kMagicSize];
  BINLOG_RETURN_IF_ERROR(cipher->Crypt(0, head, magic, kMagicSize));
  if (std::memcmp(magic, kBinlogMagic, kMagicSize) == 0) return true;
  return AllZeroBytes(head + kMagicSize, got - kMagicSize);
}

absl::Status WrongKeyError(const std::string& path, const std::string& key_id) {
  return absl::DataLossError(absl::StrCat(
      path, ": binlog encryption key ", key_id,
      " does not decrypt the file header (the file password check fails: the "
      "password the key unwraps does not decrypt the binlog magic at the start "
      "of the data); the keyring holds another key under that id, or the "
      "file's first bytes are damaged"));
}

// The plain stream of an encrypted file, written through a scratch buffer.
class EncryptingWritableFile : public io::WritableFile {
 public:
  // `fs` (may be null) reads the file back for Truncate.
  EncryptingWritableFile(std::unique_ptr<io::WritableFile> target,
                         std::unique_ptr<CtrCipher> cipher, uint64_t end,
                         io::FileSystem* fs)
      : target_(std::move(target)), cipher_(std::move(cipher)), end_(end),
        fs_(fs) {}

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    absl::string_view parts[1] = {data};
    return WriteV(offset, parts);
  }

  absl::Status WriteV(uint64_t offset,
                      absl::Span<const absl::string_view> parts) override {
    // Encrypted through the scratch in slices of at most kSlice bytes, so a
    // large group (or a large in-memory transaction) costs no buffer of its
    // size. Each slice goes out in one pwrite; one that reaches past the
    // file's end carries the guard after it (the next slice overwrites
    // it), as every write reaching the end does.
    size_t total = 0;
    for (absl::string_view p : parts) total += p.size();
    if (total >= kRawZeroRun && AllZeroParts(parts)) {
      return WriteRawZeros(offset, total);
    }
    const size_t need = std::min(total, kSlice) + kGuardSize;
    if (scratch_.size() < need) scratch_.resize(need);
    size_t part = 0;
    size_t part_off = 0;  // bytes of parts[part] already encrypted
    uint64_t pos = offset;
    for (;;) {
      size_t fill = 0;
      while (part < parts.size() && fill < kSlice) {
        const absl::string_view p = parts[part];
        const size_t n = std::min(p.size() - part_off, kSlice - fill);
        BINLOG_RETURN_IF_ERROR(cipher_->Crypt(pos + fill, p.data() + part_off,
                                              scratch_.data() + fill, n));
        fill += n;
        part_off += n;
        if (part_off == p.size()) {
          ++part;
          part_off = 0;
        }
      }
      // An in-place rewrite (the in-use flag) gets no guard: data follows it.
      const bool guard = pos + fill >= end_;
      if (guard) std::memcpy(scratch_.data() + fill, kGuard, kGuardSize);
      if (fill > 0 || guard) {
        BINLOG_RETURN_IF_ERROR(target_->Write(
            pos + kEncryptionHeaderSize,
            absl::string_view(scratch_.data(), fill + (guard ? kGuardSize : 0))));
      }
      pos += fill;
      end_ = std::max(end_, pos);
      if (part == parts.size()) break;
    }
    return absl::OkStatus();
  }

  absl::Status Sync() override { return target_->Sync(); }
  absl::Status SyncAll() override { return target_->SyncAll(); }
  absl::Status Allocate(uint64_t offset, uint64_t len,
                        bool keep_size) override {
    return target_->Allocate(offset + kEncryptionHeaderSize, len, keep_size);
  }
  // A cut inside raw zeros or a guard (recovery cutting after an event
  // whose last bytes were never written, which read as zeros) could leave
  // a short zero run or part of a guard at the end of the file, which
  // reads as ciphertext: garbage where recovery saw zeros. So the bytes
  // before the cut that read as zeros now and would not after it are first
  // rewritten as encrypted zeros, which read as zeros at the end of a file
  // too. (They are the file's content from then on: no other plaintext
  // is written under their keystream, the writer goes on after the cut.)
  absl::Status Truncate(uint64_t size) override {
    end_ = std::min(end_, size);
    if (fs_ != nullptr && size > 0) {
      BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> rf,
                              fs_->OpenReadable(target_->path()));
      const size_t back = static_cast<size_t>(std::min<uint64_t>(size, 2 * kContext));
      char buf[3 * kContext];
      size_t got = 0;
      BINLOG_RETURN_IF_ERROR(rf->Read(size - back + kEncryptionHeaderSize,
                                      back + kContext, buf, &got));
      if (got >= back) {
        RawView now;
        now.mid = buf;
        now.n = got;
        now.eof = got < back + kContext;
        RawView cut;
        cut.mid = buf;
        cut.n = back;
        cut.eof = true;
        Ranges zn, zc;
        PlainZeroRanges(now, &zn);
        PlainZeroRanges(cut, &zc);
        bool lost[kContext] = {};  // [back - len, back): zeros now, not after
        const size_t len = std::min(back, kContext);
        const size_t first = back - len;
        for (const auto& r : zn) {
          for (size_t j = std::max(r.first, first); j < std::min(r.second, back); ++j) {
            lost[j - first] = true;
          }
        }
        for (const auto& r : zc) {
          for (size_t j = std::max(r.first, first); j < std::min(r.second, back); ++j) {
            lost[j - first] = false;
          }
        }
        for (size_t j = 0; j < len;) {
          if (!lost[j]) {
            ++j;
            continue;
          }
          size_t e = j;
          while (e < len && lost[e]) ++e;
          char enc[kContext];
          const uint64_t at = size - len + j;
          BINLOG_RETURN_IF_ERROR(cipher_->Crypt(at, kZeros48, enc, e - j));
          BINLOG_RETURN_IF_ERROR(target_->Write(at + kEncryptionHeaderSize,
                                                absl::string_view(enc, e - j)));
          j = e;
        }
      }
    }
    return target_->Truncate(size + kEncryptionHeaderSize);
  }
  absl::StatusOr<uint64_t> Size() override {
    BINLOG_ASSIGN_OR_RETURN(uint64_t s, target_->Size());
    return s > kEncryptionHeaderSize ? s - kEncryptionHeaderSize : 0;
  }
  absl::Status Close() override { return target_->Close(); }
  const std::string& path() const override { return target_->path(); }

 private:
  // A zero fill (the zero frontier's pieces: a write of kRawZeroRun or more
  // zero bytes) goes out as raw zeros, which read as zeros: as encrypted
  // zeros it would be keystream that the data written there later reuses.
  // It does not move the end of the data and gets no guard. The callers
  // write it only past the data and its guard (io/zero_frontier.h keeps
  // ZeroFrontierOptions::writer_tail bytes free after the writer's end).
  absl::Status WriteRawZeros(uint64_t offset, size_t total) {
    const size_t slice = std::min(total, kSlice);
    if (scratch_.size() < slice) scratch_.resize(slice);
    std::memset(scratch_.data(), 0, slice);
    while (total > 0) {
      const size_t n = std::min(total, slice);
      BINLOG_RETURN_IF_ERROR(target_->Write(offset + kEncryptionHeaderSize,
                                            absl::string_view(scratch_.data(), n)));
      offset += n;
      total -= n;
    }
    return absl::OkStatus();
  }

  std::unique_ptr<io::WritableFile> target_;
  std::unique_ptr<CtrCipher> cipher_;
  uint64_t end_;  // end of the data written (stream offset), guard excluded
  io::FileSystem* fs_;
  // Plain bytes encrypted per pwrite by WriteV: bounds the scratch.
  static constexpr size_t kSlice = 4 << 20;
  std::vector<char> scratch_;  // grows to the largest slice + guard, reused
};

// A binlog file read in its plain form. Whether it is encrypted is decided
// at the first read that sees a magic: a reader may open a new file of a
// live log before its first bytes are written.
class BinlogReadFile : public io::RandomAccessFile {
 public:
  BinlogReadFile(std::unique_ptr<io::RandomAccessFile> target,
                 Keyring* keyring)
      : target_(std::move(target)), keyring_(keyring) {}

  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    int kind = kind_.load(std::memory_order_acquire);
    if (kind == kUnknown) {
      BINLOG_RETURN_IF_ERROR(Detect());
      kind = kind_.load(std::memory_order_acquire);
    }
    if (kind != kEncrypted) return target_->Read(offset, n, scratch, bytes_read);
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(
        target_->Read(offset + kEncryptionHeaderSize, n, scratch, &got));
    *bytes_read = got;
    return Decrypt(offset, scratch, got, /*at_eof=*/got < n);
  }

  absl::StatusOr<uint64_t> Size() const override {
    if (kind_.load(std::memory_order_acquire) == kUnknown) {
      BINLOG_RETURN_IF_ERROR(Detect());
    }
    BINLOG_ASSIGN_OR_RETURN(uint64_t s, target_->Size());
    if (kind_.load(std::memory_order_acquire) != kEncrypted) return s;
    return s > kEncryptionHeaderSize ? s - kEncryptionHeaderSize : 0;
  }

  absl::Status Advise(uint64_t offset, uint64_t len,
                      io::AccessHint hint) override {
    if (kind_.load(std::memory_order_acquire) == kEncrypted) {
      offset += kEncryptionHeaderSize;
    }
    return target_->Advise(offset, len, hint);
  }

  const std::string& path() const override { return target_->path(); }

 private:
  enum { kUnknown = 0, kPlain = 1, kEncrypted = 2 };

  absl::Status Detect() const {
    std::lock_guard<std::mutex> l(mu_);
    if (kind_.load(std::memory_order_relaxed) != kUnknown) {
      return absl::OkStatus();
    }
    char head[kEncryptionHeaderSize];
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(target_->Read(0, 4, head, &got));
    if (got < 4 || (head[0] == 0 && head[1] == 0 && head[2] == 0 &&
                    head[3] == 0)) {
      return absl::OkStatus();  // nothing written yet: undecided
    }
    if (!HasEncryptedMagic(absl::string_view(head, got))) {
      kind_.store(kPlain, std::memory_order_release);
      return absl::OkStatus();
    }
    if (keyring_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          target_->path(), ": encrypted binlog file, and no keyring given"));
    }
    // Binlog::RotateEncryptionKey rewrites the header of a closed file in
    // place; a read racing with it may see part of each header. A header
    // whose password does not decrypt the binlog magic at the start of the
    // stream (once written), or does not decode, is read again until two
    // reads agree: a stable header is the file's, whatever it holds.
    constexpr int kAttempts = 4;
    std::string previous;
    for (int attempt = 1;; ++attempt) {
      size_t got = 0;
      BINLOG_RETURN_IF_ERROR(
          target_->Read(0, kEncryptionHeaderSize, head, &got));
      std::unique_ptr<CtrCipher> cipher;
      bool magic_ok = false;
      std::string key_id;
      absl::Status s = UnwrapHeader(absl::string_view(head, got), &cipher,
                                    &magic_ok, &key_id);
      const std::string current(head, got);
      const bool stable = attempt > 1 && current == previous;
      // A stable header whose password fails the magic check is the
      // file's: the key under its id is not the one the file was written
      // with (or the stream's first bytes are damaged).
      if ((s.ok() && magic_ok) || stable || attempt == kAttempts) {
        if (!s.ok()) return s;
        if (!magic_ok) return WrongKeyError(target_->path(), key_id);
        cipher_ = std::move(cipher);
        kind_.store(kEncrypted, std::memory_order_release);
        return absl::OkStatus();
      }
      previous = current;
    }
  }

  // Decodes `header`, unwraps the file password into *cipher and says
  // whether it decrypts the stream's first bytes to the binlog magic (true
  // too while nothing is written there yet).
  absl::Status UnwrapHeader(absl::string_view header,
                            std::unique_ptr<CtrCipher>* cipher,
                            bool* magic_ok, std::string* key_id) const {
    auto h = DecodeEncryptionHeader(header);
    if (!h.ok()) {
      return absl::DataLossError(
          absl::StrCat(target_->path(), ": ", h.status().message()));
    }
    *key_id = h->key_id;
    auto password = FilePasswordFromKeyring(*h, keyring_);
    if (!password.ok()) {
      return absl::Status(password.status().code(),
                          absl::StrCat(target_->path(), ": ",
                                       password.status().message()));
    }
    BINLOG_ASSIGN_OR_RETURN(*cipher, CtrCipher::Create(*password));
    BINLOG_ASSIGN_OR_RETURN(*magic_ok, PasswordChecks(*target_, cipher->get()));
    return absl::OkStatus();
  }

  // Decrypts buf[0, n) (stream offset `offset`) in place, in as few calls
  // as there are stretches between raw-zero runs (one for a window of
  // events). Raw zeros and guards read as zeros (PlainZeroRanges). The raw
  // bytes around the window are read only when an edge byte may belong to
  // a zero run or a guard. `at_eof`: the file ends at offset + n.
  absl::Status Decrypt(uint64_t offset, char* buf, size_t n,
                       bool at_eof) const {
    std::lock_guard<std::mutex> l(mu_);
    if (n == 0) return absl::OkStatus();
    // The common case in one pass: no zero run inside, and edge bytes that
    // cannot belong to a zero run or a guard at an edge. Then no range
    // reads as zeros (PlainZeroRanges: every range it returns lies in a run
    // of kRawZeroRun zeros or more, touches an edge of the window with a
    // zero, or is a guard of 0xff bytes before such a run or at the end of
    // the file), and the whole window is ciphertext.
    const auto edge = [](char c) { return c == 0 || c == kGuardByte; };
    if (!edge(buf[0]) && !edge(buf[n - 1])) {
      BINLOG_ASSIGN_OR_RETURN(bool zero_run,
                              cipher_->CryptUnlessZeroRun(offset, buf, n));
      if (!zero_run) return absl::OkStatus();
    }
    char pre[kContext];
    char post[kContext];
    RawView v;
    v.mid = buf;
    v.n = n;
    v.pre = pre;
    v.post = post;
    if (offset > 0 && (buf[0] == 0 || buf[0] == kGuardByte)) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(offset, kContext));
      size_t got = 0;
      BINLOG_RETURN_IF_ERROR(target_->Read(
          offset - want + kEncryptionHeaderSize, want, pre, &got));
      if (got == want) v.pre_n = want;
    }
    if (at_eof) {
      v.eof = true;
    } else if (buf[n - 1] == 0 || buf[n - 1] == kGuardByte) {
      size_t got = 0;
      BINLOG_RETURN_IF_ERROR(target_->Read(
          offset + n + kEncryptionHeaderSize, kContext, post, &got));
      v.post_n = got;
      v.eof = got < kContext;
    }
    PlainZeroRanges(v, &zeros_);
    size_t from = 0;  // start of the stretch still to decrypt
    for (const auto& r : zeros_) {
      if (r.first > from) {
        BINLOG_RETURN_IF_ERROR(
            cipher_->Crypt(offset + from, buf + from, buf + from, r.first - from));
      }
      std::memset(buf + r.first, 0, r.second - r.first);
      from = r.second;
    }
    if (n > from) {
      BINLOG_RETURN_IF_ERROR(
          cipher_->Crypt(offset + from, buf + from, buf + from, n - from));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<io::RandomAccessFile> target_;
  Keyring* keyring_;
  mutable std::mutex mu_;  // Detect, and the cipher's one context
  mutable std::atomic<int> kind_{kUnknown};
  mutable std::unique_ptr<CtrCipher> cipher_;
  mutable Ranges zeros_;  // Decrypt's, under mu_
};

class EncryptionFileSystemImpl : public io::FileSystemWrapper {
 public:
  EncryptionFileSystemImpl(io::FileSystem* base, Keyring* keyring)
      : io::FileSystemWrapper(base), base_(base), keyring_(keyring) {}

  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    BINLOG_RETURN_IF_ERROR(RefuseIndexOfEncrypted(path));
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                            base_->OpenWritable(path, mode, permissions));
    if (mode != io::OpenMode::kOpenExisting || !IsBinlogFileName(path)) {
      return f;
    }
    auto h = ReadEncryptionHeader(base_, path);
    if (absl::IsNotFound(h.status())) return f;  // a plain file
    if (!h.ok()) return h.status();
    if (keyring_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": encrypted binlog file, and no keyring given"));
    }
    BINLOG_ASSIGN_OR_RETURN(std::string password,
                            FilePasswordFromKeyring(*h, keyring_));
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<CtrCipher> cipher,
                            CtrCipher::Create(password));
    {
      BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> raw,
                              base_->OpenReadable(path));
      BINLOG_ASSIGN_OR_RETURN(bool checks, PasswordChecks(*raw, cipher.get()));
      if (!checks) return WrongKeyError(path, h->key_id);
    }
    BINLOG_ASSIGN_OR_RETURN(uint64_t size, f->Size());
    uint64_t end = size > kEncryptionHeaderSize ? size - kEncryptionHeaderSize : 0;
    return std::unique_ptr<io::WritableFile>(
        new EncryptingWritableFile(std::move(f), std::move(cipher), end, base_));
  }

  absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    BINLOG_RETURN_IF_ERROR(RefuseIndexOfEncrypted(path));
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                            base_->OpenReadable(path));
    if (!IsBinlogFileName(path)) return f;
    return std::unique_ptr<io::RandomAccessFile>(
        new BinlogReadFile(std::move(f), keyring_));
  }

  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    if (!IsBinlogFileName(path)) return base_->FileSize(path);
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                            OpenReadable(path));
    return f->Size();
  }

 private:
  // The GTID index files of an encrypted binlog file (`<file>.gidx`,
  // `<file>.gidx.tmp...`, binlog/gtid_index.h) would hold its GTID states
  // in clear: neither written nor read (FailedPrecondition; the GTID
  // readers then read the file from its start, and build no index).
  absl::Status RefuseIndexOfEncrypted(const std::string& path) {
    const size_t at = path.rfind(".gidx");
    if (at == std::string::npos) return absl::OkStatus();
    const std::string bin = path.substr(0, at);
    if (!IsBinlogFileName(bin)) return absl::OkStatus();
    if (!ReadEncryptionHeader(base_, bin).ok()) return absl::OkStatus();  // plain, or none
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": the GTID index of an encrypted binlog file (it would hold its GTID "
              "states in clear)"));
  }

  io::FileSystem* base_;
  Keyring* keyring_;
};

}  // namespace

absl::StatusOr<std::string> EncodeEncryptionHeader(const EncryptionHeader& h) {
  if (h.key_id.size() >= 255) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binlog encryption key id of ", h.key_id.size(), " bytes (max 254)"));
  }
  std::string out(kEncryptionHeaderSize, '\0');
  std::memcpy(&out[0], kEncryptedMagic, 4);
  out[kVersionOffset] = static_cast<char>(h.version);
  size_t p = kFieldsOffset;
  out[p++] = static_cast<char>(kFieldKeyId);
  out[p++] = static_cast<char>(h.key_id.size());
  std::memcpy(&out[p], h.key_id.data(), h.key_id.size());
  p += h.key_id.size();
  out[p++] = static_cast<char>(kFieldPassword);
  std::memcpy(&out[p], h.encrypted_password.data(), kFilePasswordSize);
  p += kFilePasswordSize;
  out[p++] = static_cast<char>(kFieldIv);
  std::memcpy(&out[p], h.iv.data(), kAesBlock);
  return out;
}

absl::StatusOr<EncryptionHeader> DecodeEncryptionHeader(absl::string_view b) {
  auto bad = [](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("binlog encryption header: ", what));
  };
  if (b.size() < kEncryptionHeaderSize) return bad("incomplete (file too short)");
  if (!HasEncryptedMagic(b)) return bad("no encrypted-binlog magic fd 62 69 6e");
  EncryptionHeader h;
  h.version = static_cast<uint8_t>(b[kVersionOffset]);
  if (h.version != 1) {
    return bad(absl::StrCat("unsupported version ", h.version));
  }
  bool have_key = false, have_password = false, have_iv = false;
  size_t p = kFieldsOffset;
  while (p < kEncryptionHeaderSize) {
    uint8_t type = static_cast<uint8_t>(b[p++]);
    if (type == kFieldEnd) break;
    size_t len = 0;
    if (type == kFieldKeyId) {
      if (p >= kEncryptionHeaderSize) return bad("corrupted (key id)");
      len = static_cast<uint8_t>(b[p++]);
    } else if (type == kFieldPassword) {
      len = kFilePasswordSize;
    } else if (type == kFieldIv) {
      len = kAesBlock;
    } else {
      return bad(absl::StrCat("unknown field type ", type));
    }
    if (p + len > kEncryptionHeaderSize) return bad("corrupted (field overruns)");
    if (type == kFieldKeyId) {
      h.key_id.assign(b.data() + p, len);
      have_key = len > 0;
    } else if (type == kFieldPassword) {
      std::memcpy(h.encrypted_password.data(), b.data() + p, len);
      have_password = true;
    } else {
      std::memcpy(h.iv.data(), b.data() + p, len);
      have_iv = true;
    }
    p += len;
  }
  if (!have_key) return bad("no key id");
  if (!have_password) return bad("no encrypted file password");
  if (!have_iv) return bad("no IV");
  return h;
}

bool HasEncryptedMagic(absl::string_view first_bytes) {
  return first_bytes.size() >= 4 &&
         std::memcmp(first_bytes.data(), kEncryptedMagic, 4) == 0;
}

std::string MasterKeyId(const std::string& uuid, uint32_t seqno) {
  return absl::StrCat(kKeyIdPrefix, uuid, "_", seqno);
}

uint32_t MasterKeySeqno(absl::string_view key_id) {
  if (!absl::ConsumePrefix(&key_id, kKeyIdPrefix)) return 0;
  size_t us = key_id.rfind('_');
  if (us == absl::string_view::npos) return 0;
  uint32_t seqno = 0;
  if (!absl::SimpleAtoi(key_id.substr(us + 1), &seqno)) return 0;
  return seqno;
}

absl::StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<uint8_t*>(&out[0]), static_cast<int>(n)) !=
      1) {
    return CryptoError("RAND_bytes");
  }
  return out;
}

absl::StatusOr<EncryptionHeader> SealFilePassword(
    absl::string_view password, const std::string& key_id,
    absl::string_view master_key) {
  BINLOG_RETURN_IF_ERROR(CheckKey(master_key, key_id));
  if (password.size() != kFilePasswordSize) {
    return absl::InvalidArgumentError("file password must be 32 bytes");
  }
  EncryptionHeader h;
  h.key_id = key_id;
  BINLOG_ASSIGN_OR_RETURN(std::string iv, RandomBytes(kAesBlock));
  std::memcpy(h.iv.data(), iv.data(), kAesBlock);
  BINLOG_RETURN_IF_ERROR(Cbc(true, master_key, h.iv.data(),
                             reinterpret_cast<const uint8_t*>(password.data()),
                             kFilePasswordSize, h.encrypted_password.data()));
  return h;
}

absl::StatusOr<std::string> OpenFilePassword(const EncryptionHeader& h,
                                             absl::string_view master_key) {
  BINLOG_RETURN_IF_ERROR(CheckKey(master_key, h.key_id));
  std::string password(kFilePasswordSize, '\0');
  BINLOG_RETURN_IF_ERROR(Cbc(false, master_key, h.iv.data(),
                             h.encrypted_password.data(), kFilePasswordSize,
                             reinterpret_cast<uint8_t*>(&password[0])));
  return password;
}

absl::StatusOr<std::string> FilePasswordFromKeyring(const EncryptionHeader& h,
                                                    Keyring* keyring) {
  auto key = keyring->FetchKey(h.key_id);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("binlog encryption key ", h.key_id, ": ",
                                     key.status().message()));
  }
  return OpenFilePassword(h, *key);
}

absl::StatusOr<std::unique_ptr<CtrCipher>> CtrCipher::Create(
    absl::string_view file_password, Engine engine) {
  std::unique_ptr<CtrCipher> c(new CtrCipher());
  // EVP_BytesToKey with SHA-512, no salt, one round: the key and IV are
  // the first 48 bytes of SHA-512(password), as in MySQL.
  if (EVP_BytesToKey(EVP_aes_256_ctr(), EVP_sha512(), nullptr,
                     reinterpret_cast<const uint8_t*>(file_password.data()),
                     static_cast<int>(file_password.size()), 1, c->key_,
                     c->iv_) != 32) {
    return CryptoError("EVP_BytesToKey");
  }
  if (engine == Engine::kFastest && vaes::Supported()) {
    c->round_keys_ = std::make_unique<vaes::RoundKeys>();
    vaes::ExpandKey(c->key_, c->round_keys_.get());
    return c;
  }
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return CryptoError("EVP_CIPHER_CTX_new");
  c->ctx_ = ctx;
  if (EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, c->key_, c->iv_) !=
      1) {
    return CryptoError("EVP_EncryptInit_ex(AES-256-CTR)");
  }
  return c;
}

CtrCipher::~CtrCipher() {
  if (ctx_ != nullptr) EVP_CIPHER_CTX_free(Ctx(ctx_));  // wipes its schedule
  if (round_keys_ != nullptr) {
    OPENSSL_cleanse(round_keys_.get(), sizeof(vaes::RoundKeys));
  }
}

absl::Status CtrCipher::Crypt(uint64_t stream_offset, const char* in,
                              char* out, size_t n) {
  if (n == 0) return absl::OkStatus();
  if (round_keys_ != nullptr) {
    vaes::CtrXor(*round_keys_, iv_, stream_offset, in, out, n);
    return absl::OkStatus();
  }
  uint8_t counter[kAesBlock];
  std::memcpy(counter, iv_, 8);
  uint64_t block = stream_offset / kAesBlock;
  for (int i = 0; i < 8; ++i) {
    counter[15 - i] = static_cast<uint8_t>(block >> (8 * i));
  }
  EVP_CIPHER_CTX* ctx = Ctx(ctx_);
  // A new IV keeps the key schedule and restarts the keystream there.
  if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, counter) != 1) {
    return CryptoError("EVP_EncryptInit_ex(IV)");
  }
  int len = 0;
  size_t skip = stream_offset % kAesBlock;
  if (skip != 0) {
    uint8_t sink[kAesBlock] = {0};
    if (EVP_EncryptUpdate(ctx, sink, &len, sink, static_cast<int>(skip)) != 1) {
      return CryptoError("EVP_EncryptUpdate");
    }
  }
  while (n > 0) {
    int chunk = static_cast<int>(std::min<size_t>(n, 1u << 30));
    if (EVP_EncryptUpdate(ctx, reinterpret_cast<uint8_t*>(out), &len,
                          reinterpret_cast<const uint8_t*>(in), chunk) != 1 ||
        len != chunk) {
      return CryptoError("EVP_EncryptUpdate");
    }
    in += chunk;
    out += chunk;
    n -= chunk;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> CtrCipher::CryptUnlessZeroRun(uint64_t stream_offset,
                                                    char* buf, size_t n) {
  if (round_keys_ != nullptr) {
    if (!vaes::CtrXorFindZeros(*round_keys_, iv_, stream_offset, buf, buf, n)) {
      return false;
    }
    // Rare (raw zeros of a preallocated or damaged file): XOR the same
    // keystream again, which gives back the input.
    vaes::CtrXor(*round_keys_, iv_, stream_offset, buf, buf, n);
    return true;
  }
  if (FindZeroWord(buf, 0, n) < n) return true;
  BINLOG_RETURN_IF_ERROR(Crypt(stream_offset, buf, buf, n));
  return false;
}

absl::StatusOr<std::unique_ptr<io::WritableFile>> StartEncryptedFile(
    std::unique_ptr<io::WritableFile> file, const std::string& key_id,
    absl::string_view master_key, io::FileSystem* fs) {
  BINLOG_ASSIGN_OR_RETURN(std::string password, RandomBytes(kFilePasswordSize));
  BINLOG_ASSIGN_OR_RETURN(EncryptionHeader h,
                          SealFilePassword(password, key_id, master_key));
  BINLOG_ASSIGN_OR_RETURN(std::string bytes, EncodeEncryptionHeader(h));
  BINLOG_RETURN_IF_ERROR(file->Write(0, bytes));
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<CtrCipher> cipher,
                          CtrCipher::Create(password));
  return std::unique_ptr<io::WritableFile>(
      new EncryptingWritableFile(std::move(file), std::move(cipher), 0, fs));
}

absl::StatusOr<EncryptionHeader> ReadEncryptionHeader(io::FileSystem* base,
                                                      const std::string& path) {
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          base->OpenReadable(path));
  char head[kEncryptionHeaderSize];
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(0, kEncryptionHeaderSize, head, &got));
  if (!HasEncryptedMagic(absl::string_view(head, got))) {
    return absl::NotFoundError(absl::StrCat(path, " is not encrypted"));
  }
  auto h = DecodeEncryptionHeader(absl::string_view(head, got));
  if (!h.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", h.status().message()));
  }
  return h;
}

absl::Status RewrapFileHeader(io::FileSystem* base, const std::string& path,
                              Keyring* keyring, const std::string& new_key_id,
                              absl::string_view new_key) {
  BINLOG_ASSIGN_OR_RETURN(EncryptionHeader h, ReadEncryptionHeader(base, path));
  if (h.key_id == new_key_id) return absl::OkStatus();
  auto password = FilePasswordFromKeyring(h, keyring);
  if (!password.ok()) {
    return absl::Status(password.status().code(),
                        absl::StrCat(path, ": ", password.status().message()));
  }
  BINLOG_ASSIGN_OR_RETURN(EncryptionHeader nh,
                          SealFilePassword(*password, new_key_id, new_key));
  BINLOG_ASSIGN_OR_RETURN(std::string bytes, EncodeEncryptionHeader(nh));
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          base->OpenWritable(path, io::OpenMode::kOpenExisting));
  absl::Status s = f->Write(0, bytes);
  if (s.ok()) s = f->Sync();
  absl::Status cs = f->Close();
  return s.ok() ? cs : s;
}

bool IsBinlogFileName(absl::string_view path) {
  absl::string_view base;
  uint64_t number = 0;
  const size_t slash = path.rfind('/');
  return SplitBinlogFileName(
      slash == absl::string_view::npos ? path : path.substr(slash + 1), &base, &number);
}

std::unique_ptr<io::FileSystem> NewEncryptionFileSystem(io::FileSystem* base,
                                                        Keyring* keyring) {
  return std::make_unique<EncryptionFileSystemImpl>(base, keyring);
}


namespace {

// A cipher under a new random password, which exists only in memory.
absl::StatusOr<std::unique_ptr<CtrCipher>> NewRandomCipher() {
  BINLOG_ASSIGN_OR_RETURN(std::string password, RandomBytes(kFilePasswordSize));
  return CtrCipher::Create(password);
}

// A transaction spill file whose bytes are AES-256-CTR under a random
// password that exists only in this object (stream offset = file offset).
// Truncate(0) starts a new stream under a new password: a TransactionBuffer
// truncates the file to 0 after every spilled transaction and writes the
// next one from offset 0, so one password would put the same keystream
// over every transaction (MySQL likewise sets up a new password for the
// binlog cache's temporary file whenever it resets the cache).
class EncryptedTempFile final : public io::TempFile {
 public:
  EncryptedTempFile(std::unique_ptr<io::TempFile> file,
                    std::unique_ptr<CtrCipher> cipher)
      : file_(std::move(file)), cipher_(std::move(cipher)) {}

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    BINLOG_RETURN_IF_ERROR(status_);
    scratch_.resize(data.size());
    BINLOG_RETURN_IF_ERROR(
        cipher_->Crypt(offset, data.data(), &scratch_[0], data.size()));
    return file_->Write(offset, scratch_);
  }
  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    BINLOG_RETURN_IF_ERROR(status_);
    BINLOG_RETURN_IF_ERROR(file_->Read(offset, n, scratch, bytes_read));
    return cipher_->Crypt(offset, scratch, scratch, *bytes_read);
  }
  // The new password is set up even if the truncation fails (only what is
  // written after it is ever read); if that fails, every later call fails.
  absl::Status Truncate(uint64_t size) override {
    if (size == 0) {
      auto cipher = NewRandomCipher();
      if (cipher.ok()) {
        cipher_ = std::move(*cipher);
      } else {
        status_ = cipher.status();
        cipher_.reset();
      }
    }
    BINLOG_RETURN_IF_ERROR(status_);
    return file_->Truncate(size);
  }
  const std::string& path() const override { return file_->path(); }

 private:
  std::unique_ptr<io::TempFile> file_;
  // Used by one thread at a time, as the TempFile is (the buffer's owner,
  // then the log's flush stage while the owner waits in Commit).
  std::unique_ptr<CtrCipher> cipher_;
  absl::Status status_;  // a failed re-keying, sticky
  std::string scratch_;  // grows to the largest write, reused
};

}  // namespace

absl::StatusOr<std::unique_ptr<io::TempFile>> NewEncryptedTempFile(
    std::unique_ptr<io::TempFile> file) {
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<CtrCipher> cipher, NewRandomCipher());
  return std::unique_ptr<io::TempFile>(
      new EncryptedTempFile(std::move(file), std::move(cipher)));
}

}  // namespace internal

// --- binlog/keyring.h ---

absl::StatusOr<std::string> MemoryKeyring::FetchKey(const std::string& key_id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = keys_.find(key_id);
  if (it == keys_.end()) {
    return absl::NotFoundError(absl::StrCat("no key ", key_id, " in keyring"));
  }
  return it->second;
}

absl::Status MemoryKeyring::GenerateKey(const std::string& key_id) {
  BINLOG_ASSIGN_OR_RETURN(std::string key,
                          internal::RandomBytes(internal::kMasterKeySize));
  std::lock_guard<std::mutex> l(mu_);
  if (!keys_.emplace(key_id, std::move(key)).second) {
    return absl::AlreadyExistsError(absl::StrCat("key ", key_id, " exists"));
  }
  return absl::OkStatus();
}

absl::Status MemoryKeyring::AddKey(const std::string& key_id,
                                   const std::string& key) {
  BINLOG_RETURN_IF_ERROR(internal::CheckKey(key, key_id));
  std::lock_guard<std::mutex> l(mu_);
  keys_[key_id] = key;
  return absl::OkStatus();
}

absl::Status MemoryKeyring::RemoveKey(const std::string& key_id) {
  std::lock_guard<std::mutex> l(mu_);
  if (keys_.erase(key_id) == 0) {
    return absl::NotFoundError(absl::StrCat("no key ", key_id, " in keyring"));
  }
  return absl::OkStatus();
}

std::map<std::string, std::string> MemoryKeyring::keys() const {
  std::lock_guard<std::mutex> l(mu_);
  return keys_;
}

absl::StatusOr<std::unique_ptr<MemoryKeyring>> LoadKeyringFile(
    io::FileSystem* fs, const std::string& path) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                          fs->OpenReadable(path));
  // Its keys decrypt every file of the log: a file that other users may
  // read or write is refused (its group may read it: a service group).
  BINLOG_RETURN_IF_ERROR(
      io::CheckPrivateFile(fs, path, 0007, "the binlog encryption keys"));
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, f->Size());
  std::string text(size, '\0');
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(0, size, &text[0], &got));
  text.resize(got);
  auto keyring = std::make_unique<MemoryKeyring>();
  int line_no = 0;
  std::map<std::string, bool> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> f2 =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": ", why,
                       " (expected \"<key_id> <64 hex digits>\")"));
    };
    if (f2.size() != 2) return bad("malformed line");
    std::string hex(f2[1]);
    bool hex_ok = hex.size() == 2 * internal::kMasterKeySize;
    for (char c : hex) hex_ok &= absl::ascii_isxdigit(static_cast<unsigned char>(c));
    if (!hex_ok) return bad("the key is not 64 hex digits");
    std::string id(f2[0]);
    if (seen[id]) return bad(absl::StrCat("key ", id, " repeated"));
    seen[id] = true;
    BINLOG_RETURN_IF_ERROR(keyring->AddKey(id, absl::HexStringToBytes(hex)));
  }
  return keyring;
}

std::string KeyringFileText(const MemoryKeyring& keyring) {
  std::string out;
  for (const auto& kv : keyring.keys()) {
    absl::StrAppend(&out, kv.first, " ", absl::BytesToHexString(kv.second),
                    "\n");
  }
  return out;
}

absl::Status WriteKeyringFile(io::FileSystem* fs, const std::string& path,
                              const MemoryKeyring& keyring) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  const std::string tmp = absl::StrCat(path, ".tmp");
  // A temporary left behind keeps its mode through O_TRUNC: start anew.
  absl::Status rs = fs->Remove(tmp);
  if (!rs.ok() && !absl::IsNotFound(rs)) return rs;
  BINLOG_ASSIGN_OR_RETURN(
      std::unique_ptr<io::WritableFile> f,
      fs->OpenWritable(tmp, io::OpenMode::kCreateNew, 0600));
  absl::Status s = f->Write(0, KeyringFileText(keyring));
  if (s.ok()) s = f->Sync();
  absl::Status cs = f->Close();
  BINLOG_RETURN_IF_ERROR(s);
  BINLOG_RETURN_IF_ERROR(cs);
  BINLOG_RETURN_IF_ERROR(fs->Rename(tmp, path));
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0              ? "/"
                                                    : path.substr(0, slash);
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::Directory> d, fs->OpenDirectory(dir));
  return d->Sync();
}

std::unique_ptr<io::FileSystem> NewDecryptingFileSystem(io::FileSystem* base,
                                                        Keyring* keyring) {
  if (base == nullptr) base = io::FileSystem::Default();
  return internal::NewEncryptionFileSystem(base, keyring);
}

}  // namespace binlog
