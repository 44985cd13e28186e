// RowsWriter: see rows_writer.h for the contract.
//
// The current Rows event is always the last event of the buffer: each row
// grows it with TransactionBuffer::ExtendLastEvent and is packed straight
// into the returned bytes. Values: sizes are computed (and every value
// checked) before anything is written, so a refused row leaves no trace,
// and the buffer is grown once per row. Records: the lengths a record can
// get wrong are checked first, then the row is packed in one pass into
// room past the event's end (TransactionBuffer::LastEventRoom) and kept;
// CHARs are trimmed once, as they are copied.

#include "binlog/rows_writer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/writeset.h"

namespace binlog {
namespace {

void SetBit(std::string* bits, size_t i) {
  (*bits)[i / 8] = static_cast<char>((*bits)[i / 8] | (1 << (i % 8)));
}

bool TestBit(absl::string_view bits, size_t i) {
  return (static_cast<uint8_t>(bits[i / 8]) >> (i % 8)) & 1;
}

// Bitmap and index list of the columns `pick` selects.
template <typename Pick>
void Columns(size_t n, Pick pick, std::string* bits, std::vector<uint32_t>* cols) {
  bits->assign((n + 7) / 8, '\0');
  cols->clear();
  for (size_t i = 0; i < n; ++i) {
    if (!pick(i)) continue;
    SetBit(bits, i);
    cols->push_back(static_cast<uint32_t>(i));
  }
}

// Collations under which a string equals only itself up to trailing
// spaces (PAD SPACE _bin collations; NO PAD ones are stricter, so treating
// them alike is only coarser).
bool BinCollation(uint32_t collation) {
  switch (collation) {
    case 46:   // utf8mb4_bin
    case 47:   // latin1_bin
    case 65:   // ascii_bin
    case 83:   // utf8mb3_bin
    case 309:  // utf8mb4_0900_bin
      return true;
    default:
      return false;
  }
}

// The value standing for "any value" of a key part (kAny) and for zero
// (kReal, kDecimal): any fixed number works, it only has to be the same
// every time.
constexpr uint64_t kAnyPart = 0x6a09e667f3bcc908ULL;
constexpr uint64_t kZeroPart = 0xbb67ae8584caa73bULL;

bool DecimalIsZero(absl::string_view text) {
  for (char c : text) {
    if (c >= '1' && c <= '9') return false;
  }
  return true;
}

}  // namespace

absl::Status RowsWriter::MakeKeys(const TableDef& def,
                                  const std::vector<ColumnCodec>& codecs,
                                  std::vector<Key>* keys) {
  const size_t n = def.columns.size();
  auto make = [&](uint32_t number, const std::vector<uint32_t>& cols,
                  const std::vector<uint32_t>& prefix) -> absl::Status {
    if (cols.empty()) return absl::InvalidArgumentError("a unique key has no columns");
    Key k;
    k.seed = WritesetKeySeed(def.schema, def.table, number);
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i] >= n) {
        return absl::InvalidArgumentError("a unique key names a missing column");
      }
      KeyPart p;
      p.column = cols[i];
      p.prefix = i < prefix.size() ? prefix[i] : 0;
      const ColumnCodec& c = codecs[cols[i]];
      const ColumnDef& d = def.columns[cols[i]];
      switch (c.pack) {
        case ColumnCodec::kFixedLe:
          p.mode = KeyPart::kInteger;
          p.mask = c.size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * c.size)) - 1;
          break;
        case ColumnCodec::kFloat:
        case ColumnCodec::kDouble:
          p.mode = KeyPart::kReal;
          break;
        case ColumnCodec::kDecimal:
          p.mode = KeyPart::kDecimal;
          break;
        case ColumnCodec::kPrefixed:
          if (d.type == kColJson || d.type == kColGeometry) {
            p.mode = KeyPart::kAny;
          } else if (d.collation == kBinaryCollation) {
            p.mode = d.type == kColString ? KeyPart::kBytesBinary : KeyPart::kBytes;
          } else if (BinCollation(d.collation)) {
            p.mode = KeyPart::kBytesPadded;
          } else {
            p.mode = KeyPart::kAny;
          }
          break;
        default:
          p.mode = KeyPart::kPacked;
          break;
      }
      k.parts.push_back(p);
    }
    keys->push_back(std::move(k));
    return absl::OkStatus();
  };
  keys->clear();
  if (!def.primary_key.empty()) {
    absl::Status s = make(0, def.primary_key, def.primary_key_prefix);
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < def.unique_keys.size(); ++i) {
    absl::Status s = make(static_cast<uint32_t>(i + 1), def.unique_keys[i].columns,
                          def.unique_keys[i].prefix);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

bool RowsWriter::KeyHashOf(const Table& tab, const Key& key,
                           absl::Span<const Value> row, uint64_t* hash) {
  uint64_t h = key.seed;
  for (const KeyPart& p : key.parts) {
    const Value& v = row[p.column];
    if (v.kind == Value::kNull) return false;
    uint64_t part;
    switch (p.mode) {
      case KeyPart::kInteger:
        part = v.u & p.mask;
        break;
      case KeyPart::kBytes:
      case KeyPart::kBytesPadded:
      case KeyPart::kBytesBinary: {
        size_t size = v.s.size;
        if (p.prefix != 0 && size > p.prefix) size = p.prefix;
        if (p.mode != KeyPart::kBytes) {
          while (size > 0 && (v.s.data[size - 1] == ' ' ||
                              (p.mode == KeyPart::kBytesBinary &&
                               v.s.data[size - 1] == '\0'))) {
            --size;
          }
        }
        part = WritesetBytes(v.s.data, size);
        break;
      }
      case KeyPart::kAny:
        part = kAnyPart;
        break;
      case KeyPart::kReal:
      case KeyPart::kDecimal:
      case KeyPart::kPacked: {
        const ColumnCodec& c = tab.codecs[p.column];
        if (p.mode == KeyPart::kReal) {
          const double d = v.kind == Value::kDouble ? v.d
                           : v.kind == Value::kUInt ? static_cast<double>(v.u)
                                                    : static_cast<double>(v.i);
          if (d == 0) {
            part = kZeroPart;
            break;
          }
        } else if (p.mode == KeyPart::kDecimal &&
                   (v.kind == Value::kDecimalBinary ? DecimalBinaryIsZero(v.bytes())
                                                    : DecimalIsZero(v.bytes()))) {
          part = kZeroPart;
          break;
        }
        // Fixed-size encodings: at most 30 bytes (DECIMAL(65)).
        char buf[64];
        const int64_t size = PackedValueSize(c, v);
        if (size <= 0 || size > static_cast<int64_t>(sizeof(buf))) {
          part = kAnyPart;  // not reached for an accepted row
          break;
        }
        PackValue(c, v, buf);
        part = WritesetBytes(buf, static_cast<size_t>(size));
        break;
      }
      default:
        part = kAnyPart;
        break;
    }
    h = WritesetMix(h, part);
  }
  *hash = h;
  return true;
}

bool RowsWriter::KeyHashOfRecord(const Table& tab, const Key& key,
                                 const uint8_t* rec, uint64_t* hash) {
  using record_internal::RecordColumn;
  uint64_t h = key.seed;
  for (const KeyPart& p : key.parts) {
    const RecordColumn& c = tab.rec_cols[p.column];
    if (c.null_bit != 0 && (rec[c.null_byte] & c.null_bit) != 0) return false;
    const char* field = reinterpret_cast<const char*>(rec + c.offset);
    uint64_t part;
    switch (p.mode) {
      case KeyPart::kInteger:
        // The stored bytes as an integer: the Value path's masked value.
        // INT and BIGINT (most keys) without the byte loop.
        part = c.size == 4   ? LoadLe32(field)
               : c.size == 8 ? LoadLe64(field)
                             : LoadLeN(field, c.size);
        break;
      case KeyPart::kBytes:
      case KeyPart::kBytesPadded:
      case KeyPart::kBytesBinary: {
        const char* data = nullptr;
        size_t size = 0;
        if (!record_internal::VariableBytes(c, rec, &data, &size)) {
          part = kAnyPart;  // not reached for an accepted row
          break;
        }
        if (p.prefix != 0 && size > p.prefix) size = p.prefix;
        if (p.mode != KeyPart::kBytes) {
          while (size > 0 && (data[size - 1] == ' ' ||
                              (p.mode == KeyPart::kBytesBinary &&
                               data[size - 1] == '\0'))) {
            --size;
          }
        }
        part = WritesetBytes(data, size);
        break;
      }
      case KeyPart::kAny:
        part = kAnyPart;
        break;
      case KeyPart::kReal: {
        bool zero;
        if (c.size == 4) {
          float f;
          std::memcpy(&f, field, 4);
          zero = f == 0;
        } else {
          double d;
          std::memcpy(&d, field, 8);
          zero = d == 0;
        }
        part = zero ? kZeroPart : WritesetBytes(field, c.size);
        break;
      }
      case KeyPart::kDecimal:
        part = DecimalBinaryIsZero(absl::string_view(field, c.size))
                   ? kZeroPart
                   : WritesetBytes(field, c.size);
        break;
      case KeyPart::kPacked:
      default:
        part = WritesetBytes(field, c.size);
        break;
    }
    h = WritesetMix(h, part);
  }
  *hash = h;
  return true;
}

void RowsWriter::AddWritesetRecord(const Table& tab, const uint8_t* first,
                                   const uint8_t* second) {
  if (tab.def.foreign_key_parent) {
    txn_->MarkWritesetUnusable();
    return;
  }
  if (!tab.has_primary_key) {
    txn_->MarkWritesetMissingKeys();
    return;
  }
  for (const Key& k : tab.keys) {
    uint64_t h1 = 0, h2 = 0;
    const bool has1 = KeyHashOfRecord(tab, k, first, &h1);
    if (has1) txn_->AddWritesetHash(h1);
    if (second != nullptr && KeyHashOfRecord(tab, k, second, &h2) &&
        (!has1 || h2 != h1)) {
      txn_->AddWritesetHash(h2);
    }
  }
}

void RowsWriter::AddWriteset(const Table& tab, absl::Span<const Value> first,
                             absl::Span<const Value> second) {
  if (tab.def.foreign_key_parent) {
    txn_->MarkWritesetUnusable();
    return;
  }
  if (!tab.has_primary_key) {
    txn_->MarkWritesetMissingKeys();
    return;
  }
  for (const Key& k : tab.keys) {
    uint64_t h1 = 0, h2 = 0;
    const bool has1 = KeyHashOf(tab, k, first, &h1);
    if (has1) txn_->AddWritesetHash(h1);
    if (!second.empty() && KeyHashOf(tab, k, second, &h2) && (!has1 || h2 != h1)) {
      txn_->AddWritesetHash(h2);
    }
  }
}

absl::StatusOr<RowsWriter> RowsWriter::Create(const RowsWriterOptions& options) {
  if (options.max_event_size < 256 || options.max_event_size > (size_t{1} << 30)) {
    return absl::InvalidArgumentError("max_event_size must be 256..2^30");
  }
  return RowsWriter(options);
}

absl::StatusOr<RowsWriter::TableHandle> RowsWriter::DescribeTable(
    const TableDef& def) {
  absl::StatusOr<std::string> tm = EncodeTableMapBody(def, o_.flavor);
  if (!tm.ok()) return tm.status();
  Table t;
  t.def = def;
  // The header fields AppendPreparedEvent takes as they are: type,
  // server_id and flags (0).
  auto head = [&](uint8_t type, size_t reserve) {
    std::string h(kHeaderSize, '\0');
    h.reserve(kHeaderSize + reserve);
    EventHeader eh;
    eh.type = type;
    eh.server_id = o_.server_id;
    EncodeHeader(eh, h.data());
    return h;
  };
  t.table_map = head(kTableMapEvent, tm->size());
  t.table_map += *tm;
  const size_t n = def.columns.size();
  for (const ColumnDef& c : def.columns) t.codecs.push_back(*MakeColumnCodec(c));
  {
    absl::Status s = MakeKeys(def, t.codecs, &t.keys);
    if (!s.ok()) return s;
  }
  t.has_primary_key = !def.primary_key.empty();
  std::vector<bool> key(n, false);
  for (uint32_t k : def.primary_key) key[k] = true;
  const bool has_key = !def.primary_key.empty();
  Columns(n, [](size_t) { return true; }, &t.all_bits, &t.all_cols);
  switch (o_.row_image) {
    case RowImage::kFull:
      t.before_bits = t.all_bits;
      t.before_cols = t.all_cols;
      break;
    case RowImage::kMinimal:
      Columns(n, [&](size_t i) { return !has_key || key[i]; }, &t.before_bits,
              &t.before_cols);
      break;
    case RowImage::kNoBlob:
      Columns(n, [&](size_t i) { return !has_key || key[i] || !t.codecs[i].is_blob; },
              &t.before_bits, &t.before_cols);
      break;
  }
  {
    // Rows event heads: table_id, flags 0, (v2) extra_data_len 2, the
    // column count, the bitmaps.
    const bool v2 = o_.flavor == LogFlavor::kMySQL;
    char b[8 + 2 + 9];  // the widest packed column count
    StoreLeN(b, def.table_id, 6);
    StoreLe16(b + 6, 0);
    size_t len = 8;
    if (v2) {
      StoreLe16(b + len, 2);  // extra_data_len: the length field alone
      len += 2;
    }
    len = static_cast<size_t>(StorePackedInt(b + len, n) - b);
    const RowsKind kinds[3] = {RowsKind::kWrite, RowsKind::kUpdate, RowsKind::kDelete};
    for (RowsKind k : kinds) {
      std::string& h = t.rows_head[static_cast<int>(k)];
      h = head(RowsType(k), len + 2 * t.all_bits.size());
      h.append(b, len);
      h += k == RowsKind::kWrite ? t.all_bits : t.before_bits;
      if (k == RowsKind::kUpdate) h += t.all_bits;
    }
  }
  tables_.push_back(std::move(t));
  // tables_ may have moved: forget the bitmap sources that pointed into it.
  cur_bits_src_[0] = cur_bits_src_[1] = nullptr;
  scratch_bits_.reserve((n + 7) / 8);
  scratch_cols_.reserve(n);
  cur_bits_[0].reserve((n + 7) / 8);
  cur_bits_[1].reserve((n + 7) / 8);
  stmt_tables_.reserve(tables_.size());
  return static_cast<TableHandle>(tables_.size() - 1);
}

absl::StatusOr<RowsWriter::TableHandle> RowsWriter::DescribeTable(
    const TableDef& def, const RecordLayout& layout) {
  // Check the layout before the table is added: a refused description
  // leaves the writer as it was.
  std::vector<record_internal::RecordColumn> cols;
  {
    absl::Status s = record_internal::ResolveColumns(def, layout, &cols);
    if (!s.ok()) return s;
  }
  absl::StatusOr<TableHandle> t = DescribeTable(def);
  if (!t.ok()) return t;
  Table& tab = tables_[*t];
  tab.has_record = true;
  tab.record_length = layout.record_length;
  tab.rec_cols = std::move(cols);
  const bool maria = o_.flavor == LogFlavor::kMariaDB;
  tab.all_plan.Compile(tab.rec_cols, tab.all_cols, maria);
  tab.before_plan.Compile(tab.rec_cols, tab.before_cols, maria);
  const size_t n = def.columns.size();
  scratch_plan_.Reserve(n);
  return t;
}

absl::Status RowsWriter::BeginStatement(TransactionBuffer* txn,
                                        uint32_t timestamp,
                                        absl::string_view query,
                                        absl::Span<const TableHandle> tables) {
  if (txn_ != nullptr) {
    return absl::FailedPreconditionError("a statement is already open");
  }
  if (txn == nullptr) return absl::InvalidArgumentError("no transaction buffer");
  for (TableHandle t : tables) {
    if (t >= tables_.size()) return absl::InvalidArgumentError("unknown table");
  }
  txn_ = txn;
  timestamp_ = timestamp;
  ++statement_;
  annotated_ = query.empty();
  // query_ is read only when there is one, stmt_tables_ always.
  if (!query.empty()) query_.assign(query.data(), query.size());
  rows_written_ = false;
  cur_open_ = false;
  if (!tables.empty() || !stmt_tables_.empty()) {
    stmt_tables_.assign(tables.begin(), tables.end());
  }
  return absl::OkStatus();
}

void RowsWriter::MapTable(Table* tab) {
  txn_->AppendPreparedEvent(tab->table_map, timestamp_, 0);
  tab->mapped_in = statement_;
}

uint8_t RowsWriter::RowsType(RowsKind kind) const {
  const bool maria = o_.flavor == LogFlavor::kMariaDB;
  switch (kind) {
    case RowsKind::kWrite: return maria ? kWriteRowsEventV1 : kWriteRowsEvent;
    case RowsKind::kUpdate: return maria ? kUpdateRowsEventV1 : kUpdateRowsEvent;
    case RowsKind::kDelete: return maria ? kDeleteRowsEventV1 : kDeleteRowsEvent;
  }
  return 0;
}

int64_t RowsWriter::ImageSize(const Table& tab, const Image& im,
                              size_t* bad) const {
  const std::vector<uint32_t>& cols = *im.cols;
  int64_t size = static_cast<int64_t>((cols.size() + 7) / 8);
  const ColumnCodec* codecs = tab.codecs.data();
  const Value* values = im.values.data();
  for (uint32_t i : cols) {
    const ColumnCodec& c = codecs[i];
    const Value& v = values[i];
    // The common cases inline: strings and 4/8-byte integers.
    if (c.pack == ColumnCodec::kPrefixed && v.kind == Value::kBytes &&
        v.s.size <= c.max_len) {
      size += c.prefix + static_cast<int64_t>(v.s.size);
      continue;
    }
    if (c.pack == ColumnCodec::kFixedLe && v.kind == Value::kInt && !c.is_unsigned &&
        (c.size == 8 || (c.size == 4 && v.i >= INT32_MIN && v.i <= INT32_MAX))) {
      size += c.size;
      continue;
    }
    int64_t n = PackedValueSize(c, v);
    if (n < 0) {
      *bad = i;
      return -1;
    }
    size += n;
  }
  return size;
}

char* RowsWriter::PackImage(const Table& tab, const Image& im, char* p) const {
  const std::vector<uint32_t>& cols = *im.cols;
  const size_t nb = (cols.size() + 7) / 8;
  char* nulls = p;
  std::memset(nulls, 0, nb);
  // MariaDB's pack_row sets the unused high bits of the last NULL byte
  // (the MariaDB corpus has them so); MySQL 8.0's Bit_writer leaves them 0.
  if (o_.flavor == LogFlavor::kMariaDB && cols.size() % 8 != 0) {
    nulls[nb - 1] = static_cast<char>(0xff << (cols.size() % 8));
  }
  p += nb;
  for (size_t k = 0; k < cols.size(); ++k) {
    const uint32_t i = cols[k];
    const Value& v = im.values[i];
    if (v.kind == Value::kNull) {
      nulls[k / 8] = static_cast<char>(nulls[k / 8] | (1 << (k % 8)));
      continue;
    }
    const ColumnCodec& c = tab.codecs[i];
    if (c.pack == ColumnCodec::kPrefixed) {
      if (c.prefix == 1) {
        *p++ = static_cast<char>(v.s.size);
      } else {
        StoreLeN(p, v.s.size, c.prefix);
        p += c.prefix;
      }
      if (v.s.size != 0) std::memcpy(p, v.s.data, v.s.size);
      p += v.s.size;
    } else if (c.pack == ColumnCodec::kFixedLe && c.size == 4) {
      StoreLe32(p, static_cast<uint32_t>(v.u));
      p += 4;
    } else if (c.pack == ColumnCodec::kFixedLe && c.size == 8) {
      StoreLe64(p, v.u);
      p += 8;
    } else {
      p = PackValue(c, v, p);
    }
  }
  return p;
}

void RowsWriter::AfterImage(const Table& tab, absl::Span<const uint8_t> changed,
                            Image* im) {
  im->bits = &tab.all_bits;
  im->cols = &tab.all_cols;
  if (changed.empty() || o_.row_image == RowImage::kFull) return;
  const absl::string_view ch(reinterpret_cast<const char*>(changed.data()),
                             changed.size());
  if (o_.row_image == RowImage::kMinimal) {
    Columns(tab.codecs.size(), [&](size_t i) { return TestBit(ch, i); },
            &scratch_bits_, &scratch_cols_);
  } else {
    Columns(tab.codecs.size(),
            [&](size_t i) { return !tab.codecs[i].is_blob || TestBit(ch, i); },
            &scratch_bits_, &scratch_cols_);
  }
  im->bits = &scratch_bits_;
  im->cols = &scratch_cols_;
}

absl::Status RowsWriter::Insert(TableHandle t, absl::Span<const Value> row) {
  if (t >= tables_.size()) return absl::InvalidArgumentError("unknown table");
  const Table& tab = tables_[t];
  const Image none{nullptr, nullptr, {}};
  return Row(t, RowsKind::kWrite, Image{&tab.all_bits, &tab.all_cols, row}, none);
}

absl::Status RowsWriter::Delete(TableHandle t, absl::Span<const Value> row) {
  if (t >= tables_.size()) return absl::InvalidArgumentError("unknown table");
  const Table& tab = tables_[t];
  const Image none{nullptr, nullptr, {}};
  return Row(t, RowsKind::kDelete, Image{&tab.before_bits, &tab.before_cols, row},
             none);
}

absl::Status RowsWriter::Update(TableHandle t, absl::Span<const Value> before,
                                absl::Span<const Value> after,
                                absl::Span<const uint8_t> changed) {
  if (t >= tables_.size()) return absl::InvalidArgumentError("unknown table");
  const Table& tab = tables_[t];
  if (!changed.empty() && changed.size() < (tab.codecs.size() + 7) / 8) {
    return absl::InvalidArgumentError("`changed` bitmap is shorter than the table");
  }
  Image a{nullptr, nullptr, after};
  AfterImage(tab, changed, &a);
  return Row(t, RowsKind::kUpdate, Image{&tab.before_bits, &tab.before_cols, before},
             a);
}

absl::Status RowsWriter::Row(TableHandle t, RowsKind kind, const Image& first,
                             const Image& second) {
  if (txn_ == nullptr) return absl::FailedPreconditionError("no statement open");
  Table& tab = tables_[t];
  const size_t ncols = tab.codecs.size();
  const bool update = kind == RowsKind::kUpdate;
  if (first.values.size() != ncols || (update && second.values.size() != ncols)) {
    return CountError(tab, first, second, update);
  }
  size_t bad = 0;
  int64_t size = ImageSize(tab, first, &bad);
  int64_t size2 = 0;
  const Image* failed = &first;
  if (size >= 0 && update) {
    size2 = ImageSize(tab, second, &bad);
    failed = &second;
  }
  if (size < 0 || size2 < 0) return ValueError(tab, *failed, bad);
  const size_t row_size = static_cast<size_t>(size + size2);
  if (tab.mapped_in != statement_ && rows_written_) return UnmappedError(tab);

  if (o_.writeset) AddWriteset(tab, first.values, update ? second.values
                                                        : absl::Span<const Value>());

  char* p = RowSpace(t, kind, first.bits, update ? second.bits : nullptr, row_size);
  p = PackImage(tab, first, p);
  if (update) PackImage(tab, second, p);
  return absl::OkStatus();
}

absl::Status RowsWriter::UnmappedError(const Table& tab) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "table ", tab.def.table, " is not mapped in this statement and a Rows "
      "event was already written: name it in BeginStatement"));
}

bool RowsWriter::Continues(TableHandle t, RowsKind kind, const std::string* bits1,
                           const std::string* bits2) const {
  return cur_open_ && cur_table_ == t && cur_kind_ == kind &&
         txn_->appended_event_count() == cur_event_ + 1 && SameBits(0, bits1) &&
         (bits2 == nullptr || SameBits(1, bits2));
}

char* RowsWriter::RowSpace(TableHandle t, RowsKind kind, const std::string* bits1,
                           const std::string* bits2, size_t row_size) {
  const bool fits =
      Continues(t, kind, bits1, bits2) &&
      txn_->appended_event_size(cur_event_) + row_size <= o_.max_event_size;
  if (__builtin_expect(fits, 1)) return txn_->ExtendLastEvent(row_size);
  return StartRowsEvent(t, kind, bits1, bits2, row_size);
}

absl::Status RowsWriter::CountError(const Table& tab, const Image& first,
                                    const Image& second, bool update) const {
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", tab.def.table, " has ", tab.codecs.size(), " columns; the row has ",
      first.values.size(), update ? absl::StrCat(" and ", second.values.size()) : ""));
}

absl::Status RowsWriter::ValueError(const Table& tab, const Image& im,
                                    size_t bad) const {
  const ColumnDef& c = tab.def.columns[bad];
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", tab.def.table, " column ", bad + 1,
      c.name.empty() ? "" : absl::StrCat(" (", c.name, ")"), ": ",
      PackValueError(tab.codecs[bad], im.values[bad])));
}

char* RowsWriter::StartRowsEvent(TableHandle t, RowsKind kind,
                                 const std::string* bits1,
                                 const std::string* bits2, size_t row_size) {
  Table& tab = tables_[t];
  const size_t ncols = tab.codecs.size();
  const bool update = kind == RowsKind::kUpdate;
  if (!rows_written_) {
    if (!annotated_) {
      if (o_.flavor == LogFlavor::kMariaDB) {
        txn_->AppendEvent(kMariaAnnotateRowsEvent, o_.server_id, timestamp_, 0,
                          query_);
      } else {
        // Rows_query: a length byte (ignored by readers; the text runs
        // to the end of the event) then the statement.
        char* b = txn_->AppendEvent(kRowsQueryEvent, o_.server_id, timestamp_,
                                    kFlagIgnorable, 1 + query_.size());
        b[0] = static_cast<char>(query_.size() > 255 ? 255 : query_.size());
        std::memcpy(b + 1, query_.data(), query_.size());
      }
      annotated_ = true;
    }
    for (TableHandle s : stmt_tables_) {
      if (tables_[s].mapped_in != statement_) MapTable(&tables_[s]);
    }
    if (tab.mapped_in != statement_) MapTable(&tab);
  }
  const size_t nb = (ncols + 7) / 8;
  // The event header, its post-header and bitmaps, and the first row in
  // one reservation: the prepared head when the bitmaps are the kind's
  // default ones (every INSERT and DELETE, and UPDATEs without `changed`).
  char* p;
  const std::string* def1 = kind == RowsKind::kWrite ? &tab.all_bits : &tab.before_bits;
  if (bits1 == def1 && (!update || bits2 == &tab.all_bits)) {
    p = txn_->AppendPreparedEvent(tab.rows_head[static_cast<int>(kind)], timestamp_,
                                  row_size);
  } else {
    const bool v2 = o_.flavor == LogFlavor::kMySQL;
    const size_t head =
        8 + (v2 ? 2 : 0) + PackedIntSize(ncols) + nb * (update ? 2 : 1);
    p = txn_->AppendEvent(RowsType(kind), o_.server_id, timestamp_, 0, head + row_size);
    StoreLeN(p, tab.def.table_id, 6);
    StoreLe16(p + 6, 0);
    p += 8;
    if (v2) {
      StoreLe16(p, 2);  // extra_data_len: the length field alone
      p += 2;
    }
    p = StorePackedInt(p, ncols);
    std::memcpy(p, bits1->data(), nb);
    p += nb;
    if (update) {
      std::memcpy(p, bits2->data(), nb);
      p += nb;
    }
  }
  if (cur_bits_src_[0] != bits1 || bits1 == &scratch_bits_) {
    cur_bits_[0].assign(*bits1);
    cur_bits_src_[0] = bits1 == &scratch_bits_ ? nullptr : bits1;
  }
  if (update) {
    if (cur_bits_src_[1] != bits2 || bits2 == &scratch_bits_) {
      cur_bits_[1].assign(*bits2);
      cur_bits_src_[1] = bits2 == &scratch_bits_ ? nullptr : bits2;
    }
  }
  cur_event_ = txn_->appended_event_count() - 1;
  cur_open_ = true;
  cur_table_ = t;
  cur_kind_ = kind;
  rows_written_ = true;
  return p;
}

// ---------------------------------------------------------------------------
// The record path

absl::Status RowsWriter::InsertRecord(TableHandle t,
                                      absl::Span<const uint8_t> record) {
  return RecordRow(t, RowsKind::kWrite, record, {}, {});
}

absl::Status RowsWriter::DeleteRecord(TableHandle t,
                                      absl::Span<const uint8_t> record) {
  return RecordRow(t, RowsKind::kDelete, record, {}, {});
}

absl::Status RowsWriter::UpdateRecord(TableHandle t, absl::Span<const uint8_t> before,
                                      absl::Span<const uint8_t> after,
                                      absl::Span<const uint8_t> changed) {
  return RecordRow(t, RowsKind::kUpdate, before, after, changed);
}

absl::Status RowsWriter::RecordRow(TableHandle t, RowsKind kind,
                                   absl::Span<const uint8_t> first,
                                   absl::Span<const uint8_t> second,
                                   absl::Span<const uint8_t> changed) {
  if (txn_ == nullptr) return absl::FailedPreconditionError("no statement open");
  if (t >= tables_.size()) return absl::InvalidArgumentError("unknown table");
  Table& tab = tables_[t];
  const bool update = kind == RowsKind::kUpdate;
  if (!tab.has_record) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", tab.def.table, " was described without a record layout"));
  }
  if (first.size() < tab.record_length ||
      (update && second.size() < tab.record_length)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", tab.def.table, ": a record is shorter than its ",
        tab.record_length, " bytes"));
  }
  const std::string* bits1 = kind == RowsKind::kWrite ? &tab.all_bits : &tab.before_bits;
  const record_internal::RecordImagePlan* plan1 =
      kind == RowsKind::kWrite ? &tab.all_plan : &tab.before_plan;
  const std::string* bits2 = nullptr;
  const record_internal::RecordImagePlan* plan2 = nullptr;
  if (update) {
    if (!changed.empty() && changed.size() < (tab.codecs.size() + 7) / 8) {
      return absl::InvalidArgumentError("`changed` bitmap is shorter than the table");
    }
    Image a{nullptr, nullptr, {}};
    AfterImage(tab, changed, &a);
    bits2 = a.bits;
    plan2 = &tab.all_plan;
    if (a.cols == &scratch_cols_) {
      scratch_plan_.Compile(tab.rec_cols, scratch_cols_,
                            o_.flavor == LogFlavor::kMariaDB);
      plan2 = &scratch_plan_;
    }
  }
  uint32_t bad = 0;
  int64_t bound = plan1->Bound(first.data(), &bad);
  int64_t bound2 = 0;
  if (bound >= 0 && update) bound2 = plan2->Bound(second.data(), &bad);
  if (bound < 0 || bound2 < 0) return RecordError(tab, bad);
  if (tab.mapped_in != statement_ && rows_written_) return UnmappedError(tab);

  if (o_.writeset) AddWritesetRecord(tab, first.data(), update ? second.data() : nullptr);

  // Packed in one pass into room at the end of the current Rows event (a
  // new one first if the row cannot join it), then kept. A row that cannot
  // fit even at its smallest (CHARs empty, nullable columns NULL) opens
  // the next event before it is packed: packed once, not twice (a large
  // BLOB row).
  bool joins = Continues(t, kind, bits1, bits2);
  if (joins) {
    const int64_t least = bound + bound2 - plan1->slack() -
                          (update ? plan2->slack() : 0);
    if (txn_->appended_event_size(cur_event_) + static_cast<uint64_t>(least) >
        o_.max_event_size) {
      joins = false;
    }
  }
  if (!joins) StartRowsEvent(t, kind, bits1, bits2, 0);
  char* p = txn_->LastEventRoom(static_cast<size_t>(bound + bound2));
  char* end = plan1->Pack(first.data(), p);
  if (update) end = plan2->Pack(second.data(), end);
  const size_t row_size = static_cast<size_t>(end - p);
  if (__builtin_expect(
          joins && txn_->appended_event_size(cur_event_) + row_size > o_.max_event_size,
          0)) {
    // The row opens the next event instead (an event holds at least one).
    txn_->ExtendLastEvent(0);
    p = StartRowsEvent(t, kind, bits1, bits2, row_size);
    end = plan1->Pack(first.data(), p);
    if (update) plan2->Pack(second.data(), end);
    return absl::OkStatus();
  }
  txn_->ExtendLastEvent(row_size);
  return absl::OkStatus();
}

absl::Status RowsWriter::RecordError(const Table& tab, uint32_t bad) const {
  const ColumnDef& c = tab.def.columns[bad];
  return absl::InvalidArgumentError(absl::StrCat(
      "table ", tab.def.table, " column ", bad + 1,
      c.name.empty() ? "" : absl::StrCat(" (", c.name, ")"), ": ",
      tab.rec_cols[bad].form == record_internal::RecordColumn::kVarchar
          ? absl::StrCat("the record's length is over the column's ",
                         tab.rec_cols[bad].size, " bytes")
          : "the record holds a length but no pointer"));
}

absl::Status RowsWriter::EndStatement() {
  if (txn_ == nullptr) return absl::FailedPreconditionError("no statement open");
  TransactionBuffer* txn = txn_;
  txn_ = nullptr;
  if (!rows_written_) return absl::OkStatus();
  if (!cur_open_ || txn->appended_event_count() != cur_event_ + 1) {
    return absl::FailedPreconditionError(
        "an event was appended after the statement's last Rows event");
  }
  char* body = txn->LastEventBody();
  StoreLe16(body + 6, static_cast<uint16_t>(LoadLe16(body + 6) | kRowsStmtEndF));
  cur_open_ = false;
  return absl::OkStatus();
}

}  // namespace binlog
