// File: binlog/byte_reader.h
//
// ByteReader: a bounds-checked cursor over the bytes of one event body, for
// every decoder of the library and the tools.
// Every read checks the remaining length first; a read that does not fit
// returns false and leaves the cursor where it was, so decoders can bail out
// with a message instead of reading past the end of a hostile event.
//
// Integers are little-endian unless the name says Be (big-endian, as used by
// the row-image encodings of DECIMAL and the temporal types).
//
// Thread safety: thread-compatible.
// Lifetime: the bytes passed to the constructor must outlive the reader and
// every string_view it returns.

#ifndef BINLOG_BINLOG_BYTE_READER_H_
#define BINLOG_BINLOG_BYTE_READER_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace binlog {

class ByteReader {
 public:
  explicit ByteReader(absl::string_view data) : data_(data) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  // The unread bytes.
  absl::string_view Rest() const { return data_.substr(pos_); }

  bool Skip(size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

  bool U8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }

  // `n` bytes (0..8), little-endian.
  bool LeN(size_t n, uint64_t* v) {
    if (n > 8 || n > remaining()) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i) {
      x |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i]))
           << (8 * i);
    }
    pos_ += n;
    *v = x;
    return true;
  }

  // `n` bytes (0..8), big-endian.
  bool BeN(size_t n, uint64_t* v) {
    if (n > 8 || n > remaining()) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i) {
      x = (x << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    }
    pos_ += n;
    *v = x;
    return true;
  }

  bool Le16(uint16_t* v) {
    uint64_t x;
    if (!LeN(2, &x)) return false;
    *v = static_cast<uint16_t>(x);
    return true;
  }
  bool Le32(uint32_t* v) {
    uint64_t x;
    if (!LeN(4, &x)) return false;
    *v = static_cast<uint32_t>(x);
    return true;
  }
  bool Le64(uint64_t* v) { return LeN(8, v); }

  bool Bytes(size_t n, absl::string_view* out) {
    if (n > remaining()) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  // MySQL "packed integer" (length-encoded): < 0xFB is the value itself,
  // 0xFC + 2 bytes, 0xFD + 3 bytes, 0xFE + 8 bytes. 0xFB (the NULL marker
  // of the client protocol) and 0xFF are not valid in binlog events.
  bool PackedInt(uint64_t* v) {
    size_t start = pos_;
    uint8_t first;
    if (!U8(&first)) return false;
    bool ok;
    if (first < 0xFB) {
      *v = first;
      ok = true;
    } else if (first == 0xFC) {
      ok = LeN(2, v);
    } else if (first == 0xFD) {
      ok = LeN(3, v);
    } else if (first == 0xFE) {
      ok = LeN(8, v);
    } else {
      ok = false;
    }
    if (!ok) pos_ = start;
    return ok;
  }

  // A variable-length integer of MySQL's field serialization (format.h,
  // VarlenSize): the first byte's trailing one bits, plus one, give the
  // length, 1..9 bytes. Values written longer than needed are accepted, as
  // MySQL's reader accepts them.
  bool Varlen(uint64_t* v) {
    if (remaining() < 1) return false;
    const uint8_t first = static_cast<uint8_t>(data_[pos_]);
    size_t n = 1;
    while (n < 9 && (first >> (n - 1)) & 1) ++n;
    if (n > remaining()) return false;
    uint64_t x = 0;
    if (n == 9) {
      for (size_t i = 0; i < 8; ++i) {
        x |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + 1 + i]))
             << (8 * i);
      }
    } else {
      for (size_t i = 0; i < n; ++i) {
        x |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i]))
             << (8 * i);
      }
      x >>= n;
    }
    pos_ += n;
    *v = x;
    return true;
  }

 private:
  absl::string_view data_;
  size_t pos_ = 0;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_BYTE_READER_H_
