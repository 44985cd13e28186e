#include "binlog/values.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace binlog {

using values_internal::kDigitsPerGroup;
using values_internal::kDigitsToBytes;
using values_internal::kPow10;

size_t DecimalBinarySize(int precision, int scale) {
  if (precision < 1 || precision > 65 || scale < 0 || scale > 38 ||
      scale > precision) {
    return 0;
  }
  int intg = precision - scale;
  int intg0 = intg / kDigitsPerGroup;
  int frac0 = scale / kDigitsPerGroup;
  int intg0x = intg - intg0 * kDigitsPerGroup;
  int frac0x = scale - frac0 * kDigitsPerGroup;
  return static_cast<size_t>(intg0 * 4 + kDigitsToBytes[intg0x] + frac0 * 4 +
                             kDigitsToBytes[frac0x]);
}

size_t TemporalFracBytes(int fsp) {
  return fsp <= 0 ? 0 : static_cast<size_t>((fsp + 1) / 2);
}

namespace {

uint64_t LoadBe(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t LoadLe(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i - 1]);
  return v;
}

// Sign-extends the low `bits` bits of `v`.
int64_t SignExtend(uint64_t v, int bits) {
  uint64_t m = uint64_t{1} << (bits - 1);
  v &= (m << 1) - 1;
  return static_cast<int64_t>((v ^ m) - m);
}

// Writes `v` as at least `width` digits (zero-padded) at `p`; returns the
// end. At most 20 digits.
char* PutPadded(char* p, uint64_t v, int width) {
  if (width == 2 && v < 100) {  // months, days, hours, ...: the common case
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
    return p + 2;
  }
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < 24);
  while (n < width && n < 24) tmp[n++] = '0';
  while (n > 0) *p++ = tmp[--n];
  return p;
}

// Appends `v` as at least `width` digits (zero-padded), in one append.
void AppendPadded(uint64_t v, int width, std::string* out) {
  char buf[24];
  char* end = PutPadded(buf, v, width);
  out->append(buf, static_cast<size_t>(end - buf));
}

// Appends ".ffff" (fsp digits) for a fraction of `micros` microseconds.
void AppendFraction(uint64_t micros, int fsp, std::string* out) {
  if (fsp <= 0) return;
  out->push_back('.');
  AppendPadded(micros / kPow10[6 - fsp], fsp, out);
}

// "A<sep>BB<sep>CC": a date (A in 4 digits) or a time of day (A in 2).
void AppendTriple(uint64_t a, int a_width, char sep, uint64_t b, uint64_t c,
                  std::string* out) {
  AppendPadded(a, a_width, out);
  out->push_back(sep);
  AppendPadded(b, 2, out);
  out->push_back(sep);
  AppendPadded(c, 2, out);
}

void AppendYmdHms(int64_t year, uint32_t month, uint32_t day, uint32_t hour,
                  uint32_t minute, uint32_t second, std::string* out) {
  char buf[64];
  char* p = buf;
  if (year < 0) {
    *p++ = '-';
    year = -year;
  }
  p = PutPadded(p, static_cast<uint64_t>(year), 4);
  *p++ = '-';
  p = PutPadded(p, month, 2);
  *p++ = '-';
  p = PutPadded(p, day, 2);
  *p++ = ' ';
  p = PutPadded(p, hour, 2);
  *p++ = ':';
  p = PutPadded(p, minute, 2);
  *p++ = ':';
  p = PutPadded(p, second, 2);
  out->append(buf, static_cast<size_t>(p - buf));
}

// The fractional part of a TIME2/DATETIME2/TIMESTAMP2 value, as the servers
// read it (my_time.cc): 1 byte of hundredths, 2 bytes of ten-thousandths,
// or 3 bytes of microseconds, big-endian. `is_signed` for TIME2/DATETIME2
// (the servers read those with mi_sint*korr).
int64_t ReadFraction(const char* p, int fsp, bool is_signed) {
  size_t n = TemporalFracBytes(fsp);
  if (n == 0) return 0;
  uint64_t raw = LoadBe(p, n);
  int64_t v = is_signed ? SignExtend(raw, static_cast<int>(8 * n))
                        : static_cast<int64_t>(raw);
  if (n == 1) return v * 10000;
  if (n == 2) return v * 100;
  return v;
}

}  // namespace

bool AppendDecimal(absl::string_view bytes, int precision, int scale,
                   std::string* out) {
  size_t size = DecimalBinarySize(precision, scale);
  if (size == 0 || bytes.size() != size) return false;
  int intg = precision - scale;
  int intg0 = intg / kDigitsPerGroup;
  int frac0 = scale / kDigitsPerGroup;
  int intg0x = intg - intg0 * kDigitsPerGroup;
  int frac0x = scale - frac0 * kDigitsPerGroup;

  // Undo the sign encoding in a copy: top bit set = positive; a negative
  // number has every byte inverted.
  char copy[64];
  for (size_t i = 0; i < size; ++i) copy[i] = bytes[i];
  const bool negative = (static_cast<uint8_t>(copy[0]) & 0x80) == 0;
  copy[0] = static_cast<char>(copy[0] ^ 0x80);
  if (negative) {
    for (size_t i = 0; i < size; ++i) copy[i] = static_cast<char>(~copy[i]);
  }

  std::string int_digits;
  std::string frac_digits;
  size_t pos = 0;
  auto group = [&](int digits, std::string* dst) -> bool {
    size_t n = static_cast<size_t>(kDigitsToBytes[digits]);
    uint64_t v = LoadBe(copy + pos, n);
    pos += n;
    if (v >= kPow10[digits]) return false;
    AppendPadded(v, digits, dst);
    return true;
  };
  if (intg0x > 0 && !group(intg0x, &int_digits)) return false;
  for (int i = 0; i < intg0; ++i) {
    if (!group(kDigitsPerGroup, &int_digits)) return false;
  }
  for (int i = 0; i < frac0; ++i) {
    if (!group(kDigitsPerGroup, &frac_digits)) return false;
  }
  if (frac0x > 0 && !group(frac0x, &frac_digits)) return false;

  size_t first = int_digits.find_first_not_of('0');
  absl::string_view int_part =
      first == std::string::npos ? absl::string_view("0")
                                 : absl::string_view(int_digits).substr(first);
  bool zero = first == std::string::npos &&
              frac_digits.find_first_not_of('0') == std::string::npos;
  if (negative && !zero) out->push_back('-');
  out->append(int_part.data(), int_part.size());
  if (scale > 0) {
    out->push_back('.');
    out->append(frac_digits);
  }
  return true;
}

namespace {

// The shortest text that reads back as `v` (std::to_chars), or nan / inf /
// -inf.
template <typename Floating>
void AppendFloating(Floating v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append(std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"));
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

void AppendFloat(float v, std::string* out) { AppendFloating(v, out); }

void AppendDouble(double v, std::string* out) { AppendFloating(v, out); }

bool AppendTime2(absl::string_view bytes, int fsp, std::string* out) {
  if (fsp < 0 || fsp > 6 || bytes.size() != 3 + TemporalFracBytes(fsp)) {
    return false;
  }
  constexpr int64_t kIntOffset = 0x800000;
  const int64_t kUnit = int64_t{1} << 24;
  const char* p = bytes.data();
  int64_t packed;
  if (fsp >= 5) {
    packed = static_cast<int64_t>(LoadBe(p, 6)) - 0x800000000000LL;
  } else {
    int64_t intpart = static_cast<int64_t>(LoadBe(p, 3)) - kIntOffset;
    int64_t frac = 0;
    if (fsp >= 1) {
      // Unsigned here; a negative time borrows one second (my_time.cc).
      size_t n = TemporalFracBytes(fsp);
      frac = static_cast<int64_t>(LoadBe(p + 3, n));
      if (intpart < 0 && frac != 0) {
        intpart++;
        frac -= n == 1 ? 0x100 : 0x10000;
      }
      frac *= n == 1 ? 10000 : 100;
    }
    packed = intpart * kUnit + frac;
  }
  bool negative = packed < 0;
  uint64_t t = negative ? static_cast<uint64_t>(-packed)
                        : static_cast<uint64_t>(packed);
  uint64_t hms = t >> 24;
  uint64_t micros = t % (uint64_t{1} << 24);
  uint64_t hour = (hms >> 12) % (1 << 10);
  uint64_t minute = (hms >> 6) % (1 << 6);
  uint64_t second = hms % (1 << 6);
  if (minute > 59 || second > 59 || micros > 999999) return false;
  if (negative) out->push_back('-');
  AppendTriple(hour, 2, ':', minute, second, out);
  AppendFraction(micros, fsp, out);
  return true;
}

bool AppendDatetime2(absl::string_view bytes, int fsp, std::string* out) {
  if (fsp < 0 || fsp > 6 || bytes.size() != 5 + TemporalFracBytes(fsp)) {
    return false;
  }
  const char* p = bytes.data();
  int64_t intpart = static_cast<int64_t>(LoadBe(p, 5)) - 0x8000000000LL;
  int64_t packed =
      intpart * (int64_t{1} << 24) + ReadFraction(p + 5, fsp, true);
  bool negative = packed < 0;
  uint64_t t = negative ? static_cast<uint64_t>(-packed)
                        : static_cast<uint64_t>(packed);
  uint64_t micros = t % (uint64_t{1} << 24);
  uint64_t ymdhms = t >> 24;
  uint64_t ymd = ymdhms >> 17;
  uint64_t ym = ymd >> 5;
  uint64_t hms = ymdhms % (1 << 17);
  uint64_t day = ymd % (1 << 5);
  uint64_t month = ym % 13;
  uint64_t year = ym / 13;
  uint64_t second = hms % (1 << 6);
  uint64_t minute = (hms >> 6) % (1 << 6);
  uint64_t hour = hms >> 12;
  if (year > 9999 || hour > 23 || minute > 59 || second > 59 ||
      micros > 999999) {
    return false;
  }
  if (negative) out->push_back('-');
  AppendYmdHms(static_cast<int64_t>(year), static_cast<uint32_t>(month),
               static_cast<uint32_t>(day), static_cast<uint32_t>(hour),
               static_cast<uint32_t>(minute), static_cast<uint32_t>(second),
               out);
  AppendFraction(micros, fsp, out);
  return true;
}

bool AppendTimestamp2(absl::string_view bytes, int fsp, std::string* out) {
  if (fsp < 0 || fsp > 6 || bytes.size() != 4 + TemporalFracBytes(fsp)) {
    return false;
  }
  uint64_t seconds = LoadBe(bytes.data(), 4);
  int64_t micros = ReadFraction(bytes.data() + 4, fsp, false);
  if (micros > 999999) return false;
  if (seconds == 0 && micros == 0) {
    out->append("0000-00-00 00:00:00");
  } else {
    AppendUtcSeconds(static_cast<int64_t>(seconds), out);
  }
  AppendFraction(static_cast<uint64_t>(micros), fsp, out);
  return true;
}

bool AppendTimestampOld(absl::string_view bytes, std::string* out) {
  if (bytes.size() != 4) return false;
  uint64_t seconds = LoadLe(bytes.data(), 4);
  if (seconds == 0) {
    out->append("0000-00-00 00:00:00");
  } else {
    AppendUtcSeconds(static_cast<int64_t>(seconds), out);
  }
  return true;
}

bool AppendDate(absl::string_view bytes, std::string* out) {
  if (bytes.size() != 3) return false;
  uint32_t v = static_cast<uint32_t>(LoadLe(bytes.data(), 3));
  uint32_t day = v & 31;
  uint32_t month = (v >> 5) & 15;
  uint32_t year = v >> 9;
  if (month > 12) return false;
  AppendTriple(year, 4, '-', month, day, out);
  return true;
}

bool AppendTimeOld(absl::string_view bytes, std::string* out) {
  if (bytes.size() != 3) return false;
  int64_t v = SignExtend(LoadLe(bytes.data(), 3), 24);
  if (v < 0) {
    out->push_back('-');
    v = -v;
  }
  uint64_t u = static_cast<uint64_t>(v);
  uint64_t minute = u / 100 % 100;
  uint64_t second = u % 100;
  if (minute > 59 || second > 59) return false;
  AppendTriple(u / 10000, 2, ':', minute, second, out);
  return true;
}

bool AppendDatetimeOld(absl::string_view bytes, std::string* out) {
  if (bytes.size() != 8) return false;
  uint64_t v = LoadLe(bytes.data(), 8);
  uint64_t d = v / 1000000;
  uint64_t t = v % 1000000;
  uint64_t year = d / 10000;
  uint64_t month = d / 100 % 100;
  uint64_t day = d % 100;
  uint64_t hour = t / 10000;
  uint64_t minute = t / 100 % 100;
  uint64_t second = t % 100;
  if (year > 9999 || month > 12 || day > 31 || hour > 23 || minute > 59 ||
      second > 59) {
    return false;
  }
  AppendYmdHms(static_cast<int64_t>(year), static_cast<uint32_t>(month),
               static_cast<uint32_t>(day), static_cast<uint32_t>(hour),
               static_cast<uint32_t>(minute), static_cast<uint32_t>(second),
               out);
  return true;
}

void AppendUtcSeconds(int64_t seconds, std::string* out) {
  // Days since the epoch and the time of day, then the civil date by
  // Howard Hinnant's days_from_civil inverse (valid for every int64 input
  // divided by 86400).
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  AppendYmdHms(y, static_cast<uint32_t>(m), static_cast<uint32_t>(d),
               static_cast<uint32_t>(rem / 3600),
               static_cast<uint32_t>(rem / 60 % 60),
               static_cast<uint32_t>(rem % 60), out);
}

void AppendHex(absl::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t at = out->size();
  out->resize(at + 2 * bytes.size());
  char* p = &(*out)[at];
  for (unsigned char c : bytes) {
    *p++ = kHex[c >> 4];
    *p++ = kHex[c & 15];
  }
}

bool DecimalBinaryValid(absl::string_view bytes, int precision, int scale) {
  const size_t size = DecimalBinarySize(precision, scale);
  if (size == 0 || bytes.size() != size) return false;
  // Top bit of the first byte set: positive; a negative value has every
  // byte inverted (strings/decimal.cc decimal2bin).
  const uint8_t mask = (static_cast<uint8_t>(bytes[0]) & 0x80) ? 0 : 0xff;
  const int intg = precision - scale;
  const int intg0 = intg / kDigitsPerGroup, intg0x = intg % kDigitsPerGroup;
  const int frac0 = scale / kDigitsPerGroup, frac0x = scale % kDigitsPerGroup;
  size_t pos = 0;
  auto group = [&](int ndigits) {
    const size_t nb = static_cast<size_t>(kDigitsToBytes[ndigits]);
    uint64_t v = 0;
    for (size_t i = 0; i < nb; ++i) {
      uint8_t b = static_cast<uint8_t>(bytes[pos + i]) ^ mask;
      if (pos + i == 0) b ^= 0x80;
      v = (v << 8) | b;
    }
    pos += nb;
    return v < kPow10[ndigits];
  };
  bool ok = true;
  if (intg0x > 0) ok = ok && group(intg0x);
  for (int i = 0; i < intg0; ++i) ok = ok && group(kDigitsPerGroup);
  for (int i = 0; i < frac0; ++i) ok = ok && group(kDigitsPerGroup);
  if (frac0x > 0) ok = ok && group(frac0x);
  return ok;
}

bool DecimalBinaryIsZero(absl::string_view bytes) {
  if (bytes.empty()) return true;
  const uint8_t mask = (static_cast<uint8_t>(bytes[0]) & 0x80) ? 0 : 0xff;
  if ((static_cast<uint8_t>(bytes[0]) ^ mask ^ 0x80) != 0) return false;
  for (size_t i = 1; i < bytes.size(); ++i) {
    if ((static_cast<uint8_t>(bytes[i]) ^ mask) != 0) return false;
  }
  return true;
}

}  // namespace binlog
