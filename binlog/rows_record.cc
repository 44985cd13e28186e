// The record path of RowsWriter: see rows_record.h for the record forms.
//
// RecordImagePlan packs an image in one pass over its steps, after a
// check of the lengths a record can get wrong: Bound reads the VARCHAR
// and BLOB lengths (checking them) and bounds the image's size, counting
// CHARs at their slots, so that a refused row leaves no trace and the
// writer makes room once; Pack then trims the CHARs as it copies them and
// the writer keeps the bytes Pack wrote. Fixed-size NOT NULL columns that
// sit next to each other in the record and in the image are one step and
// one memcpy.

#include "binlog/rows_record.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "binlog/format.h"

namespace binlog {
namespace {

bool IsBlobLike(uint8_t t) {
  return t == kColBlob || t == kColTinyBlob || t == kColMediumBlob ||
         t == kColLongBlob || t == kColJson || t == kColGeometry || t == kColVector;
}

// Length of `p[0, n)` without trailing `pad` bytes. A utf8mb4 CHAR(n)
// holds up to 3n bytes of padding (sysbench's c CHAR(120): 361 of its 480
// bytes), so the scan goes a block at a time from the end: 128 bytes with
// AVX2 where the CPU has it, else 64 with SSE2 (x86-64's baseline), and
// ends with one mask instead of a byte loop.
size_t TrimmedTail(const uint8_t* p, size_t n, uint8_t pad) {
#if defined(__SSE2__)
  const __m128i v = _mm_set1_epi8(static_cast<char>(pad));
  auto same = [&](size_t at) {
    return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)), v);
  };
  while (n >= 64) {
    const __m128i all = _mm_and_si128(_mm_and_si128(same(n - 64), same(n - 48)),
                                      _mm_and_si128(same(n - 32), same(n - 16)));
    if (_mm_movemask_epi8(all) != 0xffff) break;
    n -= 64;
  }
  while (n >= 16) {
    const unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(same(n - 16))) & 0xffff;
    if (other != 0) return n - 16 + (32 - static_cast<size_t>(__builtin_clz(other)));
    n -= 16;
  }
#else
  const uint64_t pat = 0x0101010101010101ULL * pad;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p + n - 8, 8);
    if (w != pat) break;
    n -= 8;
  }
#endif
  while (n > 0 && p[n - 1] == pad) --n;
  return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) size_t TrimmedAvx2(const uint8_t* p, size_t n,
                                                   uint8_t pad) {
  const __m256i v = _mm256_set1_epi8(static_cast<char>(pad));
  auto same = [&](size_t at) __attribute__((target("avx2"))) {
    return _mm256_cmpeq_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + at)), v);
  };
  while (n >= 128) {
    const __m256i all = _mm256_and_si256(_mm256_and_si256(same(n - 128), same(n - 96)),
                                         _mm256_and_si256(same(n - 64), same(n - 32)));
    if (static_cast<uint32_t>(_mm256_movemask_epi8(all)) != 0xffffffffu) break;
    n -= 128;
  }
  while (n >= 32) {
    const uint32_t other = ~static_cast<uint32_t>(_mm256_movemask_epi8(same(n - 32)));
    if (other != 0) return n - 32 + (32 - static_cast<size_t>(__builtin_clz(other)));
    n -= 32;
  }
  return TrimmedTail(p, n, pad);
}

// 64 bytes a step with AVX-512 BW: one compare gives a 64-bit mask whose
// highest set bit is the last byte kept, and a masked load reads the
// slot's first bytes without touching memory before it.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline size_t
TrimmedAvx512Inline(const uint8_t* p, size_t n, uint8_t pad) {
  const __m512i v = _mm512_set1_epi8(static_cast<char>(pad));
  auto other = [&](size_t at) __attribute__((target("avx512f,avx512bw"))) {
    return static_cast<uint64_t>(_mm512_cmpneq_epi8_mask(
        _mm512_loadu_si512(reinterpret_cast<const void*>(p + at)), v));
  };
  while (n >= 128) {
    const uint64_t hi = other(n - 64);
    if (hi != 0) return n - static_cast<size_t>(__builtin_clzll(hi));
    const uint64_t lo = other(n - 128);
    if (lo != 0) return n - 64 - static_cast<size_t>(__builtin_clzll(lo));
    n -= 128;
  }
  if (n >= 64) {
    const uint64_t hi = other(n - 64);
    if (hi != 0) return n - static_cast<size_t>(__builtin_clzll(hi));
    n -= 64;
  }
  if (n == 0) return 0;
  // The first n (1..63) bytes, right-aligned into a 64-bit mask's top.
  const __mmask64 k = (uint64_t{1} << n) - 1;
  const uint64_t rest = static_cast<uint64_t>(
      _mm512_mask_cmpneq_epi8_mask(k, _mm512_maskz_loadu_epi8(k, p), v));
  return rest == 0 ? 0 : 64 - static_cast<size_t>(__builtin_clzll(rest));
}

__attribute__((target("avx512f,avx512bw"))) size_t TrimmedAvx512(const uint8_t* p,
                                                                size_t n,
                                                                uint8_t pad) {
  return TrimmedAvx512Inline(p, n, pad);
}

// Before main (a caller from another static initializer may see 0 and
// take the SSE2 path, which gives the same lengths). 2: AVX-512 BW, 1:
// AVX2, 0: neither.
const int kTrimLevel = [] {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f")) return 2;
  return __builtin_cpu_supports("avx2") ? 1 : 0;
}();
#endif

size_t TrimmedLength(const uint8_t* p, size_t n, uint8_t pad) {
  // A value that fills its slot (or an empty slot) needs no scan.
  if (n == 0 || p[n - 1] != pad) return n;
#if defined(__x86_64__) && defined(__GNUC__)
  if (kTrimLevel == 2) return TrimmedAvx512(p, n, pad);
  if (kTrimLevel == 1) return TrimmedAvx2(p, n, pad);
#endif
  return TrimmedTail(p, n, pad);
}

// memcpy for the short copies of row images (most columns and runs are
// under 32 bytes): two overlapping loads and stores inline instead of a
// call; never touches a byte outside [src, src + n) or [dst, dst + n).
inline void CopyBytes(char* dst, const uint8_t* src, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n > 16 && n <= 32) {
    uint64_t a[2], b[2];
    std::memcpy(a, src, 16);
    std::memcpy(b, src + n - 16, 16);
    std::memcpy(dst, a, 16);
    std::memcpy(dst + n - 16, b, 16);
  } else if (n < 4) {
    if (n == 0) return;
    // 1..3 bytes: first, middle, last.
    const uint8_t first = src[0], mid = src[n / 2], last = src[n - 1];
    dst[0] = static_cast<char>(first);
    dst[n / 2] = static_cast<char>(mid);
    dst[n - 1] = static_cast<char>(last);
  } else {
    std::memcpy(dst, src, n);
  }
}

const uint8_t* LoadPointer(const uint8_t* p) {
  const uint8_t* ptr;
  std::memcpy(&ptr, p, sizeof(ptr));
  return ptr;
}

absl::Status ColumnError(const TableDef& def, size_t i, absl::string_view why) {
  const ColumnDef& c = def.columns[i];
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", def.table, " column ", i + 1,
      c.name.empty() ? "" : absl::StrCat(" (", c.name, ")"), ": ", why));
}

}  // namespace

uint32_t RecordPackLength(const ColumnDef& c) {
  absl::StatusOr<ColumnCodec> k = MakeColumnCodec(c);
  if (!k.ok()) return 0;
  switch (c.type) {
    case kColVarString:
      return 0;
    case kColVarchar:
      return k->prefix + c.length;
    case kColString:
      return c.length;
    default:
      break;
  }
  if (IsBlobLike(c.type)) return k->prefix + static_cast<uint32_t>(sizeof(void*));
  return k->size;
}

RecordLayout ServerRecordLayout(const TableDef& def) {
  RecordLayout l;
  uint32_t nullable = 0;
  for (const ColumnDef& c : def.columns) nullable += c.nullable ? 1 : 0;
  uint32_t off = (nullable + 7) / 8;
  uint32_t bit = 0;
  for (const ColumnDef& c : def.columns) {
    ColumnRecord r;
    r.offset = off;
    if (c.nullable) {
      r.null_byte = bit / 8;
      r.null_bit = static_cast<uint8_t>(1 << (bit % 8));
      ++bit;
    }
    off += RecordPackLength(c);
    l.columns.push_back(r);
  }
  l.record_length = off;
  return l;
}

absl::Status CheckRecordLayout(const TableDef& def, const RecordLayout& layout) {
  if (layout.columns.size() != def.columns.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("record layout of table ", def.table, " has ",
                     layout.columns.size(), " columns; the table has ",
                     def.columns.size()));
  }
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const ColumnDef& c = def.columns[i];
    const ColumnRecord& r = layout.columns[i];
    const uint32_t len = RecordPackLength(c);
    if (len == 0) {
      return ColumnError(def, i, absl::StrCat("type ", static_cast<int>(c.type),
                                              " is not supported in records"));
    }
    if (c.type == kColString && r.mbminlen != 1) {
      return ColumnError(def, i,
                         "CHAR in a character set of 2+ byte characters (ucs2, "
                         "utf16, utf32) is not supported in records");
    }
    if (r.pack_length != 0 && r.pack_length != len) {
      return ColumnError(def, i, absl::StrCat("pack_length ", r.pack_length,
                                              "; the column takes ", len));
    }
    if (r.length_bytes != 0) {
      const ColumnCodec k = *MakeColumnCodec(c);
      if ((c.type != kColVarchar && !IsBlobLike(c.type)) ||
          r.length_bytes != k.prefix) {
        return ColumnError(def, i, absl::StrCat("length_bytes ",
                                                static_cast<int>(r.length_bytes),
                                                " does not match the column"));
      }
    }
    if (static_cast<uint64_t>(r.offset) + len > layout.record_length) {
      return ColumnError(def, i, "lies outside the record");
    }
    if (c.nullable != (r.null_bit != 0)) {
      return ColumnError(def, i, c.nullable ? "nullable but has no NULL bit"
                                            : "NOT NULL but has a NULL bit");
    }
    if (r.null_bit != 0 &&
        (r.null_byte >= layout.record_length || (r.null_bit & (r.null_bit - 1)) != 0)) {
      return ColumnError(def, i, "NULL bit outside the record or not one bit");
    }
  }
  return absl::OkStatus();
}

absl::Status StoreRecord(const TableDef& def, const RecordLayout& layout,
                         absl::Span<const Value> row, absl::Span<uint8_t> record) {
  absl::Status s = CheckRecordLayout(def, layout);
  if (!s.ok()) return s;
  if (record.size() < layout.record_length) {
    return absl::InvalidArgumentError("record buffer shorter than the layout");
  }
  if (row.size() != def.columns.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", def.table, " has ", def.columns.size(), " columns; the row has ",
        row.size()));
  }
  uint8_t* rec = record.data();
  std::memset(rec, 0, layout.record_length);
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const ColumnDef& c = def.columns[i];
    const ColumnRecord& r = layout.columns[i];
    const ColumnCodec k = *MakeColumnCodec(c);
    const Value& v = row[i];
    if (PackedValueSize(k, v) < 0) return ColumnError(def, i, PackValueError(k, v));
    if (v.kind == Value::kNull) {
      rec[r.null_byte] = static_cast<uint8_t>(rec[r.null_byte] | r.null_bit);
      continue;
    }
    uint8_t* p = rec + r.offset;
    if (c.type == kColString) {
      std::memcpy(p, v.s.data, v.s.size);
      std::memset(p + v.s.size, c.collation == kBinaryCollation ? 0 : ' ',
                  c.length - v.s.size);
    } else if (c.type == kColVarchar) {
      StoreLeN(reinterpret_cast<char*>(p), v.s.size, k.prefix);
      if (v.s.size != 0) std::memcpy(p + k.prefix, v.s.data, v.s.size);
    } else if (IsBlobLike(c.type)) {
      StoreLeN(reinterpret_cast<char*>(p), v.s.size, k.prefix);
      const char* ptr = v.s.data;
      std::memcpy(p + k.prefix, &ptr, sizeof(ptr));
    } else {
      // Every fixed-size form is the row-image form (see the header).
      PackValue(k, v, reinterpret_cast<char*>(p));
    }
  }
  return absl::OkStatus();
}

namespace record_internal {

int TrimLevel() {
#if defined(__x86_64__) && defined(__GNUC__)
  return kTrimLevel;
#else
  return 0;
#endif
}

size_t TrimmedLengthAt(int level, const uint8_t* p, size_t n, uint8_t pad) {
  if (level > TrimLevel()) level = TrimLevel();
#if defined(__x86_64__) && defined(__GNUC__)
  if (level == 2) return TrimmedAvx512(p, n, pad);
  if (level == 1) return TrimmedAvx2(p, n, pad);
#endif
  return TrimmedTail(p, n, pad);
}

absl::Status ResolveColumns(const TableDef& def, const RecordLayout& layout,
                            std::vector<RecordColumn>* out) {
  absl::Status s = CheckRecordLayout(def, layout);
  if (!s.ok()) return s;
  out->clear();
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const ColumnDef& c = def.columns[i];
    const ColumnRecord& r = layout.columns[i];
    const ColumnCodec k = *MakeColumnCodec(c);
    RecordColumn rc;
    rc.null_bit = r.null_bit;
    rc.null_byte = r.null_byte;
    rc.offset = r.offset;
    if (c.type == kColVarchar) {
      rc.form = RecordColumn::kVarchar;
      rc.prefix = k.prefix;
      rc.size = c.length;
    } else if (c.type == kColString) {
      rc.form = RecordColumn::kChar;
      rc.prefix = k.prefix;
      rc.pad = c.collation == kBinaryCollation ? 0 : ' ';
      rc.size = c.length;
    } else if (IsBlobLike(c.type)) {
      rc.form = RecordColumn::kBlob;
      rc.prefix = k.prefix;
    } else {
      rc.form = RecordColumn::kFixed;
      rc.size = k.size;
    }
    out->push_back(rc);
  }
  return absl::OkStatus();
}

bool VariableBytes(const RecordColumn& c, const uint8_t* rec, const char** data,
                   size_t* size) {
  const uint8_t* p = rec + c.offset;
  switch (c.form) {
    case RecordColumn::kVarchar: {
      const size_t n = c.prefix == 1 ? p[0] : LoadLe16(reinterpret_cast<const char*>(p));
      if (n > c.size) return false;
      *data = reinterpret_cast<const char*>(p + c.prefix);
      *size = n;
      return true;
    }
    case RecordColumn::kChar:
      *data = reinterpret_cast<const char*>(p);
      *size = TrimmedLength(p, c.size, c.pad);
      return true;
    case RecordColumn::kBlob: {
      const size_t n = LoadLeN(reinterpret_cast<const char*>(p), c.prefix);
      const uint8_t* ptr = LoadPointer(p + c.prefix);
      if (n != 0 && ptr == nullptr) return false;
      *data = reinterpret_cast<const char*>(ptr);
      *size = n;
      return true;
    }
    case RecordColumn::kFixed:
      *data = reinterpret_cast<const char*>(p);
      *size = c.size;
      return true;
  }
  return false;
}

void RecordImagePlan::Compile(absl::Span<const RecordColumn> cols,
                              absl::Span<const uint32_t> image, bool maria) {
  steps_.clear();
  checked_.clear();
  char_slots_ = 0;
  nb_ = static_cast<uint32_t>((image.size() + 7) / 8);
  fixed_ = nb_;
  last_init_ = 0;
  if (maria && image.size() % 8 != 0) {
    last_init_ = static_cast<uint8_t>(0xff << (image.size() % 8));
  }
  slack_ = 0;
  for (size_t k = 0; k < image.size(); ++k) {
    const RecordColumn& c = cols[image[k]];
    Step s;
    s.form = c.form;
    s.prefix = c.prefix;
    s.pad = c.pad;
    s.null_bit = c.null_bit;
    s.null_byte = c.null_byte;
    s.offset = c.offset;
    s.size = c.size;
    s.bit = static_cast<uint32_t>(k);
    s.fixed = c.form == RecordColumn::kFixed ? c.size : c.prefix;
    s.column = image[k];
    fixed_ += s.fixed;
    if (c.null_bit != 0) slack_ += s.fixed;  // not written when NULL
    // A NOT NULL fixed column right after the previous one in the record
    // joins its copy.
    if (!steps_.empty() && s.form == RecordColumn::kFixed && s.null_bit == 0) {
      Step& prev = steps_.back();
      if (prev.form == RecordColumn::kFixed && prev.null_bit == 0 &&
          prev.offset + prev.size == s.offset) {
        prev.size += s.size;
        prev.fixed += s.fixed;
        continue;
      }
    }
    if (s.form == RecordColumn::kChar) {
      char_slots_ += s.size;
      slack_ += s.size;  // trimmed to nothing at most
    }
    if (s.form == RecordColumn::kVarchar || s.form == RecordColumn::kBlob) {
      checked_.push_back(static_cast<uint32_t>(steps_.size()));
    }
    steps_.push_back(s);
  }
}

int64_t RecordImagePlan::Bound(const uint8_t* rec, uint32_t* bad) const {
  int64_t size = int64_t{fixed_} + char_slots_;
  for (uint32_t j : checked_) {
    const Step& s = steps_[j];
    if (s.null_bit != 0 && (rec[s.null_byte] & s.null_bit) != 0) continue;
    const uint8_t* p = rec + s.offset;
    if (s.form == RecordColumn::kVarchar) {
      const uint32_t len =
          s.prefix == 1 ? p[0] : LoadLe16(reinterpret_cast<const char*>(p));
      if (len > s.size) {
        *bad = s.column;
        return -1;
      }
      size += len;
    } else {
      const uint32_t len =
          static_cast<uint32_t>(LoadLeN(reinterpret_cast<const char*>(p), s.prefix));
      if (len != 0 && LoadPointer(p + s.prefix) == nullptr) {
        *bad = s.column;
        return -1;
      }
      size += len;
    }
  }
  return size;
}

namespace {

// Pack's loop over its steps; `Trim` gives a CHAR's length. Inlined into
// each Pack variant.
template <typename Trim>
__attribute__((always_inline)) inline char* PackSteps(const RecordImagePlan::Step* s,
                                                      const RecordImagePlan::Step* end,
                                                      const uint8_t* rec, char* nulls,
                                                      char* p, Trim trim) {
  for (; s != end; ++s) {
    if (s->null_bit != 0 && (rec[s->null_byte] & s->null_bit) != 0) {
      nulls[s->bit / 8] = static_cast<char>(nulls[s->bit / 8] | (1 << (s->bit % 8)));
      continue;
    }
    const uint8_t* src = rec + s->offset;
    switch (s->form) {
      case RecordColumn::kFixed:
        CopyBytes(p, src, s->size);
        p += s->size;
        break;
      case RecordColumn::kVarchar: {
        // The record's length prefix is the image's (Bound checked it;
        // the record must not change between Bound and Pack: see
        // RowsWriter::InsertRecord).
        size_t len = s->prefix == 1 ? src[0] : LoadLe16(reinterpret_cast<const char*>(src));
        if (len > s->size) len = s->size;
        CopyBytes(p, src, s->prefix + len);
        p += s->prefix + len;
        break;
      }
      case RecordColumn::kChar: {
        const size_t len = trim(src, s->size, s->pad);
        if (s->prefix == 1) {
          *p++ = static_cast<char>(len);
        } else {
          StoreLe16(p, static_cast<uint16_t>(len));
          p += 2;
        }
        CopyBytes(p, src, len);
        p += len;
        break;
      }
      case RecordColumn::kBlob: {
        const size_t len = LoadLeN(reinterpret_cast<const char*>(src), s->prefix);
        CopyBytes(p, src, s->prefix);
        p += s->prefix;
        if (len != 0) CopyBytes(p, LoadPointer(src + s->prefix), len);
        p += len;
        break;
      }
    }
  }
  return p;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The AVX-512 BW variant: the trimming inlined into the loop (no call and
// no vzeroupper per CHAR).
__attribute__((target("avx512f,avx512bw"), flatten)) char* PackStepsAvx512(
    const RecordImagePlan::Step* s, const RecordImagePlan::Step* end,
    const uint8_t* rec, char* nulls, char* p) {
  return PackSteps(s, end, rec, nulls, p,
                   [](const uint8_t* q, size_t n, uint8_t pad)
                       __attribute__((target("avx512f,avx512bw"))) {
                         return n == 0 || q[n - 1] != pad ? n : TrimmedAvx512Inline(q, n, pad);
                       });
}
#endif

}  // namespace

char* RecordImagePlan::Pack(const uint8_t* rec, char* out) const {
  char* nulls = out;
  if (nb_ != 0) {
    std::memset(nulls, 0, nb_);
    nulls[nb_ - 1] = static_cast<char>(last_init_);
  }
  const Step* s = steps_.data();
  const Step* const end = s + steps_.size();
#if defined(__x86_64__) && defined(__GNUC__)
  if (kTrimLevel == 2) return PackStepsAvx512(s, end, rec, nulls, out + nb_);
#endif
  return PackSteps(s, end, rec, nulls, out + nb_, TrimmedLength);
}

char* RecordImagePlan::PackAt(int level, const uint8_t* rec, char* out) const {
  if (level >= TrimLevel()) return Pack(rec, out);
  char* nulls = out;
  if (nb_ != 0) {
    std::memset(nulls, 0, nb_);
    nulls[nb_ - 1] = static_cast<char>(last_init_);
  }
  return PackSteps(steps_.data(), steps_.data() + steps_.size(), rec, nulls, out + nb_,
                   [level](const uint8_t* q, size_t n, uint8_t pad) {
                     return TrimmedLengthAt(level, q, n, pad);
                   });
}

}  // namespace record_internal
}  // namespace binlog
