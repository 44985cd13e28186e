#include "binlog/rows_decode.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/byte_reader.h"
#include "binlog/statement_events.h"
#include "binlog/json_binary.h"
#include "binlog/values.h"

namespace binlog {
namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(what);
}


}  // namespace

std::string ColumnTypeName(const Column& c) {
  std::string s;
  switch (c.real_type) {
    case kColDecimal: s = "DECIMAL(old)"; break;
    case kColTiny: s = "TINYINT"; break;
    case kColShort: s = "SMALLINT"; break;
    case kColInt24: s = "MEDIUMINT"; break;
    case kColLong: s = "INT"; break;
    case kColLongLong: s = "BIGINT"; break;
    case kColFloat: s = "FLOAT"; break;
    case kColDouble: s = "DOUBLE"; break;
    case kColNull: s = "NULL"; break;
    case kColTimestamp: s = "TIMESTAMP"; break;
    case kColDate:
    case kColNewDate: s = "DATE"; break;
    case kColTime: s = "TIME"; break;
    case kColDatetime: s = "DATETIME"; break;
    case kColYear: s = "YEAR"; break;
    case kColTimestamp2:
      s = c.meta ? absl::StrCat("TIMESTAMP(", c.meta, ")") : "TIMESTAMP";
      break;
    case kColDatetime2:
      s = c.meta ? absl::StrCat("DATETIME(", c.meta, ")") : "DATETIME";
      break;
    case kColTime2:
      s = c.meta ? absl::StrCat("TIME(", c.meta, ")") : "TIME";
      break;
    case kColVarchar:
    case kColVarString: s = absl::StrCat("VARCHAR(", c.meta, ")"); break;
    case kColString: s = absl::StrCat("CHAR(", c.length, ")"); break;
    case kColBit:
      s = absl::StrCat("BIT(", (c.meta >> 8) * 8 + (c.meta & 0xff), ")");
      break;
    case kColNewDecimal:
      s = absl::StrCat("DECIMAL(", c.meta >> 8, ",", c.meta & 0xff, ")");
      break;
    case kColEnum: s = "ENUM"; break;
    case kColSet: s = "SET"; break;
    case kColTinyBlob:
    case kColMediumBlob:
    case kColLongBlob:
    case kColBlob:
      switch (c.meta) {
        case 1: s = "TINYBLOB"; break;
        case 2: s = "BLOB"; break;
        case 3: s = "MEDIUMBLOB"; break;
        default: s = "LONGBLOB"; break;
      }
      break;
    case kColJson: s = "JSON"; break;
    case kColGeometry: s = "GEOMETRY"; break;
    case kColVector: s = "VECTOR"; break;
    default: s = absl::StrCat("TYPE_", static_cast<int>(c.real_type)); break;
  }
  if (c.is_unsigned && IsNumericColumnType(c.type)) s += " UNSIGNED";
  return s;
}

namespace {

uint64_t CountBits(absl::string_view bitmap, uint64_t n) {
  uint64_t count = 0;
  for (uint64_t i = 0; i < n; ++i) {
    count += (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
  }
  return count;
}

uint64_t LoadLe(absl::string_view b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i > 0; --i) v = (v << 8) | static_cast<uint8_t>(b[i - 1]);
  return v;
}

uint64_t LoadBe(absl::string_view b) {
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

void SetNumber(RowCell* cell, int64_t v) {
  cell->kind = RowCell::kNumber;
  absl::StrAppend(&cell->text, v);
}

void SetNumberU(RowCell* cell, uint64_t v) {
  cell->kind = RowCell::kNumber;
  absl::StrAppend(&cell->text, v);
}

void SetInteger(RowCell* cell, absl::string_view b, bool is_unsigned) {
  uint64_t u = LoadLe(b);
  if (is_unsigned) {
    SetNumberU(cell, u);
    return;
  }
  const int bits = static_cast<int>(8 * b.size());
  uint64_t m = uint64_t{1} << (bits - 1);
  if (bits < 64) u &= (m << 1) - 1;
  SetNumber(cell, static_cast<int64_t>((u ^ m) - m));
}

// Length of a string or BLOB value: a little-endian prefix of
// `prefix_bytes`, then the bytes.
bool ReadPrefixed(ByteReader* r, size_t prefix_bytes, absl::string_view* out,
                  uint64_t* len) {
  if (!r->LeN(prefix_bytes, len)) return false;
  if (*len > r->remaining()) return false;
  r->Bytes(static_cast<size_t>(*len), out);
  return true;
}

void SetString(RowCell* cell, const Column& c, absl::string_view bytes) {
  cell->kind = c.collation == kBinaryCollation ? RowCell::kBinary : RowCell::kBytes;
  cell->bytes = bytes;
}

}  // namespace

absl::Status RowsDecoder::Image(const TableMap& table,
                                absl::string_view present, uint64_t n_present,
                                absl::string_view data, size_t* pos,
                                bool want_cells, uint64_t row) {
  ByteReader r(data.substr(*pos));
  absl::string_view nulls;
  if (!r.Bytes(static_cast<size_t>((n_present + 7) / 8), &nulls)) {
    return Malformed(absl::StrCat("row ", row + 1,
                                  ": NULL bitmap runs past the end of the "
                                  "event"));
  }
  if (want_cells) {
    columns_.clear();
    if (cells_.size() < n_present) cells_.resize(static_cast<size_t>(n_present));
  }
  uint64_t k = 0;  // index among present columns
  const size_t ncols = table.columns.size();
  for (size_t i = 0; i < ncols; ++i) {
    if (!((static_cast<uint8_t>(present[i / 8]) >> (i % 8)) & 1)) continue;
    const Column& c = table.columns[i];
    const bool is_null = (static_cast<uint8_t>(nulls[k / 8]) >> (k % 8)) & 1;
    RowCell* cell = nullptr;
    if (want_cells) {
      columns_.push_back(static_cast<uint32_t>(i));
      cell = &cells_[static_cast<size_t>(k)];
      cell->kind = RowCell::kNull;
      cell->text.clear();
      cell->bytes = absl::string_view();
    }
    ++k;
    if (is_null) continue;

    auto fail = [&](absl::string_view what) {
      return Malformed(absl::StrCat("row ", row + 1, ": column @", i + 1, " (",
                                    ColumnTypeName(c), "): ", what));
    };
    auto fixed = [&](size_t n, absl::string_view* b) -> bool {
      return r.Bytes(n, b);
    };
    constexpr char kPastEnd[] = "value runs past the end of the event";
    absl::string_view b;
    switch (c.real_type) {
      case kColTiny:
      case kColShort:
      case kColInt24:
      case kColLong:
      case kColLongLong: {
        size_t n = c.real_type == kColTiny    ? 1
                   : c.real_type == kColShort ? 2
                   : c.real_type == kColInt24 ? 3
                   : c.real_type == kColLong  ? 4
                                              : 8;
        if (!fixed(n, &b)) return fail(kPastEnd);
        if (cell) SetInteger(cell, b, c.is_unsigned);
        break;
      }
      case kColFloat: {
        if (!fixed(4, &b)) return fail(kPastEnd);
        if (cell) {
          uint32_t bits = static_cast<uint32_t>(LoadLe(b));
          float f;
          std::memcpy(&f, &bits, sizeof(f));
          AppendFloat(f, &cell->text);
          cell->kind = std::isfinite(f) ? RowCell::kNumber : RowCell::kText;
        }
        break;
      }
      case kColDouble: {
        if (!fixed(8, &b)) return fail(kPastEnd);
        if (cell) {
          uint64_t bits = LoadLe(b);
          double d;
          std::memcpy(&d, &bits, sizeof(d));
          AppendDouble(d, &cell->text);
          cell->kind = std::isfinite(d) ? RowCell::kNumber : RowCell::kText;
        }
        break;
      }
      case kColNull:
        break;
      case kColYear: {
        if (!fixed(1, &b)) return fail(kPastEnd);
        if (cell) {
          uint64_t y = static_cast<uint8_t>(b[0]);
          SetNumberU(cell, y == 0 ? 0 : 1900 + y);
        }
        break;
      }
      case kColTimestamp:
      case kColDate:
      case kColNewDate:
      case kColTime:
      case kColDatetime: {
        size_t n = c.real_type == kColTimestamp ? 4
                   : c.real_type == kColDatetime ? 8
                                                 : 3;
        if (!fixed(n, &b)) return fail(kPastEnd);
        if (cell) {
          cell->kind = RowCell::kText;
          bool ok = c.real_type == kColTimestamp ? AppendTimestampOld(b, &cell->text)
                    : c.real_type == kColDatetime ? AppendDatetimeOld(b, &cell->text)
                    : c.real_type == kColTime     ? AppendTimeOld(b, &cell->text)
                                                  : AppendDate(b, &cell->text);
          if (!ok) return fail("invalid temporal value");
        }
        break;
      }
      case kColTime2:
      case kColDatetime2:
      case kColTimestamp2: {
        int fsp = static_cast<int>(c.meta);
        if (fsp > 6) return fail("fractional precision above 6");
        size_t base = c.real_type == kColTime2       ? 3
                      : c.real_type == kColDatetime2 ? 5
                                                     : 4;
        if (!fixed(base + TemporalFracBytes(fsp), &b)) return fail(kPastEnd);
        if (cell) {
          cell->kind = RowCell::kText;
          bool ok = c.real_type == kColTime2 ? AppendTime2(b, fsp, &cell->text)
                    : c.real_type == kColDatetime2
                        ? AppendDatetime2(b, fsp, &cell->text)
                        : AppendTimestamp2(b, fsp, &cell->text);
          if (!ok) return fail("invalid temporal value");
        }
        break;
      }
      case kColNewDecimal: {
        int precision = static_cast<int>(c.meta >> 8);
        int scale = static_cast<int>(c.meta & 0xff);
        size_t n = DecimalBinarySize(precision, scale);
        if (n == 0) return fail("invalid DECIMAL precision or scale");
        if (!fixed(n, &b)) return fail(kPastEnd);
        if (cell) {
          cell->kind = RowCell::kText;
          if (!AppendDecimal(b, precision, scale, &cell->text)) {
            return fail("invalid DECIMAL digits");
          }
        }
        break;
      }
      case kColBit: {
        size_t n = (c.meta >> 8) + ((c.meta & 0xff) ? 1 : 0);
        if (n == 0 || n > 8) return fail("invalid BIT length");
        if (!fixed(n, &b)) return fail(kPastEnd);
        if (cell) SetNumberU(cell, LoadBe(b));
        break;
      }
      case kColEnum: {
        if (c.length != 1 && c.length != 2) return fail("invalid ENUM size");
        if (!fixed(c.length, &b)) return fail(kPastEnd);
        if (cell) {
          uint64_t idx = LoadLe(b);
          if (idx == 0 && !c.enum_values.empty()) {
            cell->kind = RowCell::kText;  // the "" error value
          } else if (idx >= 1 && idx <= c.enum_values.size()) {
            cell->kind = RowCell::kText;
            cell->text = c.enum_values[static_cast<size_t>(idx - 1)];
          } else {
            SetNumberU(cell, idx);
          }
        }
        break;
      }
      case kColSet: {
        if (c.length < 1 || c.length > 8) return fail("invalid SET size");
        if (!fixed(c.length, &b)) return fail(kPastEnd);
        if (cell) {
          uint64_t mask = LoadLe(b);
          bool named = !c.enum_values.empty() &&
                       (c.enum_values.size() >= 64 ||
                        (mask >> c.enum_values.size()) == 0);
          if (named) {
            cell->kind = RowCell::kText;
            for (size_t bit = 0; bit < c.enum_values.size() && bit < 64; ++bit) {
              if (!((mask >> bit) & 1)) continue;
              if (!cell->text.empty()) cell->text.push_back(',');
              cell->text += c.enum_values[bit];
            }
          } else {
            SetNumberU(cell, mask);
          }
        }
        break;
      }
      case kColVarchar:
      case kColVarString:
      case kColString: {
        uint32_t max = c.real_type == kColString ? c.length : c.meta;
        uint64_t len;
        if (!ReadPrefixed(&r, max > 255 ? 2 : 1, &b, &len)) {
          return fail("string length runs past the end of the event");
        }
        if (cell) SetString(cell, c, b);
        break;
      }
      case kColBlob:
      case kColTinyBlob:
      case kColMediumBlob:
      case kColLongBlob:
      case kColGeometry:
      case kColVector:
      case kColJson: {
        if (c.meta < 1 || c.meta > 4) return fail("invalid length-prefix size");
        uint64_t len;
        if (!ReadPrefixed(&r, c.meta, &b, &len)) {
          return fail("length runs past the end of the event");
        }
        if (!cell) break;
        if (c.real_type == kColGeometry) {
          cell->kind = RowCell::kBinary;
          cell->bytes = b;
        } else if (c.real_type == kColVector) {
          // float32 values, little-endian: a JSON array of numbers; bytes
          // that are not whole floats, or a NaN/infinity, as hex.
          bool numbers = b.size() % 4 == 0;
          std::string text = "[";
          for (size_t i = 0; numbers && i < b.size(); i += 4) {
            uint32_t bits = static_cast<uint32_t>(LoadLe(b.substr(i, 4)));
            float f;
            std::memcpy(&f, &bits, sizeof(f));
            if (!std::isfinite(f)) numbers = false;
            if (i > 0) text += ',';
            AppendFloat(f, &text);
          }
          if (numbers) {
            cell->kind = RowCell::kJson;
            cell->text = text + "]";
          } else {
            cell->kind = RowCell::kBinary;
            cell->bytes = b;
          }
        } else if (c.real_type == kColJson) {
          std::string error;
          if (AppendMySqlJson(b, &cell->text, &error)) {
            cell->kind = RowCell::kJson;
          } else {
            // Unreadable binary JSON: show the bytes rather than fail the
            // whole event (the value's extent is known).
            cell->text.clear();
            cell->kind = RowCell::kBinary;
            cell->bytes = b;
          }
        } else {
          SetString(cell, c, b);
        }
        break;
      }
      default:
        return fail("this column type cannot be decoded (its size is unknown)");
    }
  }
  if (k == 0 && r.pos() == 0) {
    return Malformed(absl::StrCat("row ", row + 1,
                                  ": empty row image (no column present)"));
  }
  *pos += r.pos();
  return absl::OkStatus();
}

bool RowsDecoder::CountRows(const TableMap& table, const RowsEvent& ev,
                            uint64_t n_before, uint64_t n_after,
                            uint64_t* rows) {
  // The images are walked with each column's skip plan: no value is
  // decoded. Any doubt (an unplanned column, a value past the end, an
  // empty image) returns false, and the full decoder runs and reports it.
  // The present columns' plans are gathered once per event, so the loop
  // per image touches only them.
  auto gather = [&table](absl::string_view present,
                         std::vector<const Column*>* out) {
    out->clear();
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if ((static_cast<uint8_t>(present[i / 8]) >> (i % 8)) & 1) {
        out->push_back(&table.columns[i]);
      }
    }
  };
  gather(ev.columns_before, &plan_before_);
  if (ev.kind == RowsKind::kUpdate) gather(ev.columns_after, &plan_after_);
  (void)n_before;
  (void)n_after;
  const char* p = ev.rows.data();
  const char* end = p + ev.rows.size();
  uint64_t count = 0;
  auto image = [&p, end](const std::vector<const Column*>& plan) -> bool {
    const size_t n_present = plan.size();
    const size_t null_bytes = (n_present + 7) / 8;
    if (n_present == 0 || static_cast<size_t>(end - p) < null_bytes) {
      return false;
    }
    const unsigned char* nulls = reinterpret_cast<const unsigned char*>(p);
    p += null_bytes;
    for (size_t k = 0; k < n_present; ++k) {
      if ((nulls[k / 8] >> (k % 8)) & 1) continue;
      const Column& c = *plan[k];
      const size_t left = static_cast<size_t>(end - p);
      if (c.skip_fixed >= 0) {
        if (static_cast<size_t>(c.skip_fixed) > left) return false;
        p += c.skip_fixed;
      } else if (c.skip_prefix > 0) {
        if (c.skip_prefix > left) return false;
        uint64_t len = 0;
        for (size_t b = c.skip_prefix; b > 0; --b) {
          len = (len << 8) | static_cast<uint8_t>(p[b - 1]);
        }
        p += c.skip_prefix;
        if (len > left - c.skip_prefix) return false;
        p += len;
      } else {
        return false;
      }
    }
    return true;
  };
  const bool update = ev.kind == RowsKind::kUpdate;
  while (p < end) {
    if (!image(plan_before_)) return false;
    if (update && !image(plan_after_)) return false;
    ++count;
  }
  *rows = count;
  return true;
}

absl::Status RowsDecoder::Decode(const TableMap& table, const RowsEvent& ev,
                                 RowVisitor* visitor, uint64_t* rows) {
  *rows = 0;
  if (!table.columns_error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("table map of ", table.QualifiedName(), ": ",
                     table.columns_error));
  }
  if (ev.column_count != table.columns.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Rows event has ", ev.column_count, " columns, its Table_map (",
        table.QualifiedName(), ") has ", table.columns.size()));
  }
  const uint64_t n = ev.column_count;
  const uint64_t n_before = CountBits(ev.columns_before, n);
  const uint64_t n_after =
      ev.kind == RowsKind::kUpdate ? CountBits(ev.columns_after, n) : 0;
  const bool want = visitor != nullptr;
  if (!want && !ev.partial && CountRows(table, ev, n_before, n_after, rows)) {
    return absl::OkStatus();
  }
  *rows = 0;
  size_t pos = 0;
  while (pos < ev.rows.size()) {
    const uint64_t row = *rows;
    absl::Status s = Image(table, ev.columns_before, n_before, ev.rows, &pos,
                           want, row);
    if (!s.ok()) return s;
    if (want) visitor->OnImage(row, ev.kind == RowsKind::kWrite, columns_, cells_);
    if (ev.kind == RowsKind::kUpdate) {
      if (ev.partial) {
        // PARTIAL_UPDATE_ROWS_EVENT: value options between the images;
        // bit 0 (PARTIAL_JSON_UPDATES) means JSON diffs in the after
        // image, which this decoder does not read.
        ByteReader r(ev.rows.substr(pos));
        uint64_t options;
        if (!r.PackedInt(&options)) {
          return Malformed(absl::StrCat("row ", row + 1,
                                        ": value options run past the end"));
        }
        if (options & 1) {
          return Malformed(absl::StrCat(
              "row ", row + 1,
              ": partial JSON updates (binlog_row_value_options="
              "PARTIAL_JSON) are not decoded"));
        }
        pos += r.pos();
      }
      s = Image(table, ev.columns_after, n_after, ev.rows, &pos, want, row);
      if (!s.ok()) return s;
      if (want) visitor->OnImage(row, true, columns_, cells_);
    }
    ++*rows;
  }
  return absl::OkStatus();
}

}  // namespace binlog