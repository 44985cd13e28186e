// File: binlog/values.h
//
// The binary value encodings that MySQL and MariaDB use in row images (and,
// for DECIMAL, in User_var events): their sizes, and their decoders to
// text. The encoders are beside the row codec (PackDecimal, PackTime2, ...
// in binlog/rows.h), which shares the sizes below with these decoders.
//   - DecimalBinarySize, TemporalFracBytes: value sizes; DecimalBinaryValid
//     and DecimalBinaryIsZero for a binary DECIMAL's bytes;
//   - Append*: the text form of one stored value, as the servers print it:
//   - DECIMAL (MYSQL_TYPE_NEWDECIMAL): the "binary decimal" of
//     strings/decimal.cc: groups of 9 digits in 4 bytes, big-endian, the
//     sign in the top bit of the first byte (set = positive), every byte
//     inverted for a negative number;
//   - TIME2 / DATETIME2 / TIMESTAMP2 (MySQL 5.6.4+ and MariaDB 10.1.2+
//     "temporal format"), big-endian with a fractional part of
//     (fsp + 1) / 2 bytes;
//   - the old TIME / DATE / DATETIME / TIMESTAMP / YEAR encodings;
//   - FLOAT / DOUBLE in their shortest round-trip decimal form.
//
// Every decoder checks its input; malformed bytes give false, never a read
// out of bounds.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_BINLOG_VALUES_H_
#define BINLOG_BINLOG_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace binlog {

// Bytes of a binary DECIMAL(precision, scale), or 0 if precision/scale are
// out of range: precision 1..65 and scale 0..38, scale <= precision (the
// union of MySQL's 65/30 and MariaDB's 65/38 limits).
size_t DecimalBinarySize(int precision, int scale);
// Whether `bytes` is a binary DECIMAL(precision, scale) as servers store
// it: the right size, and every digit group below its power of ten.
bool DecimalBinaryValid(absl::string_view bytes, int precision, int scale);
// Whether a valid binary DECIMAL is zero (0 or -0).
bool DecimalBinaryIsZero(absl::string_view bytes);
// Bytes of the fractional part of TIME2/DATETIME2/TIMESTAMP2 values:
// (fsp + 1) / 2, 0 for fsp 0.
size_t TemporalFracBytes(int fsp);

namespace values_internal {
// The binary DECIMAL layout (strings/decimal.cc): groups of 9 digits in 4
// bytes; a partial group of n digits takes kDigitsToBytes[n] bytes. Shared
// by the encoder (binlog/rows.cc) and the decoder (values.cc).
inline constexpr int kDigitsPerGroup = 9;
inline constexpr int kDigitsToBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
inline constexpr uint32_t kPow10[10] = {1,         10,        100,
                                        1000,      10000,     100000,
                                        1000000,   10000000,  100000000,
                                        1000000000};
}  // namespace values_internal

// Appends the decimal text ("-123.450", "0.001", "17") of `bytes`, which
// must be exactly DecimalBinarySize(precision, scale) bytes. False if the
// size is wrong or a 9-digit group holds a value above 999999999.
bool AppendDecimal(absl::string_view bytes, int precision, int scale,
                   std::string* out);

// Shortest decimal text that reads back as the same float / double, as
// std::to_chars writes it ("0.1", "1e+21", "-0"). Non-finite values
// (which no server stores) give "nan", "inf", "-inf": callers that need
// JSON must quote those.
void AppendFloat(float v, std::string* out);
void AppendDouble(double v, std::string* out);

// The formats below all take exactly the bytes of one stored value and
// return false if fsp is out of range (0..6) or a field is out of range.
//
// TIME2: "[-]HH:MM:SS[.ffffff]" with fsp fraction digits (HH up to 838).
bool AppendTime2(absl::string_view bytes, int fsp, std::string* out);
// DATETIME2: "YYYY-MM-DD HH:MM:SS[.ffffff]".
bool AppendDatetime2(absl::string_view bytes, int fsp, std::string* out);
// TIMESTAMP2: seconds since the epoch, shown in UTC as
// "YYYY-MM-DD HH:MM:SS[.ffffff]"; 0 is the zero value
// "0000-00-00 00:00:00".
bool AppendTimestamp2(absl::string_view bytes, int fsp, std::string* out);

// Old encodings (before MySQL 5.6.4 / MariaDB's mysql56_temporal_format):
// TIMESTAMP: 4 bytes LE seconds (shown in UTC); DATE / NEWDATE: 3 bytes LE
// day | month << 5 | year << 9; TIME: 3 bytes LE signed HHMMSS;
// DATETIME: 8 bytes LE YYYYMMDDHHMMSS.
bool AppendTimestampOld(absl::string_view bytes, std::string* out);
bool AppendDate(absl::string_view bytes, std::string* out);
bool AppendTimeOld(absl::string_view bytes, std::string* out);
bool AppendDatetimeOld(absl::string_view bytes, std::string* out);

// Seconds since the epoch as "YYYY-MM-DD HH:MM:SS" (UTC), for any 64-bit
// value (proleptic Gregorian calendar).
void AppendUtcSeconds(int64_t seconds, std::string* out);

// Lowercase hex of `bytes`.
void AppendHex(absl::string_view bytes, std::string* out);

}  // namespace binlog

#endif  // BINLOG_BINLOG_VALUES_H_
