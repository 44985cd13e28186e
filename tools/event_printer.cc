#include "tools/event_printer.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/statement_events.h"
#include "binlog/payload.h"
#include "binlog/values.h"

namespace binlog {
namespace tools {
namespace {

const char* ChecksumAlgName(ChecksumAlg alg) {
  switch (alg) {
    case ChecksumAlg::kOff: return "none";
    case ChecksumAlg::kCrc32: return "crc32";
    case ChecksumAlg::kUndefined: return "undefined";
  }
  return "undefined";
}

// Bytes of an unknown event's body printed as hex.
constexpr size_t kMaxRawBody = 1024;

// Formats row images for one Rows event: a JSON array of objects, or text
// lines below the event line.
class RowFormatter final : public RowVisitor {
 public:
  RowFormatter(OutputFormat format, std::string* json, std::string* lines)
      : format_(format), json_(json), lines_(lines) {}

  void OnImage(uint64_t row, bool after, const std::vector<uint32_t>& columns,
               const std::vector<RowCell>& cells) override {
    const char* which = after ? "after" : "before";
    if (format_ == OutputFormat::kText) {
      absl::StrAppend(lines_, "  row ", row + 1, " ", which, ":");
      for (size_t i = 0; i < columns.size(); ++i) {
        absl::StrAppend(lines_, " @", columns[i] + 1, "=");
        AppendCellText(cells[i], lines_);
      }
      lines_->push_back('\n');
      return;
    }
    if (!open_ || row != row_) {
      if (open_) json_->append("},");
      json_->push_back('{');
      open_ = true;
      row_ = row;
    } else {
      json_->push_back(',');
    }
    json_->append(after ? "\"after\":{" : "\"before\":{");
    for (size_t i = 0; i < columns.size(); ++i) {
      // ,"@N":  (N = column + 1), built without a formatting call
      char key[32];
      char* p = key;
      if (i > 0) *p++ = ',';
      *p++ = '"';
      *p++ = '@';
      p = absl::numbers_internal::FastIntToBuffer(columns[i] + 1, p);
      *p++ = '"';
      *p++ = ':';
      json_->append(key, static_cast<size_t>(p - key));
      AppendCellJson(cells[i], json_);
    }
    json_->push_back('}');
  }

  // Closes the JSON array.
  void Finish() {
    if (open_) json_->push_back('}');
    json_->push_back(']');
  }

 private:
  OutputFormat format_;
  std::string* json_;
  std::string* lines_;
  bool open_ = false;
  uint64_t row_ = 0;
};

}  // namespace

void AppendCellJson(const RowCell& cell, std::string* out) {
  switch (cell.kind) {
    case RowCell::kNull: out->append("null"); return;
    case RowCell::kNumber:
    case RowCell::kJson: out->append(cell.text); return;
    case RowCell::kText: AppendJsonString(cell.text, out); return;
    case RowCell::kBytes:
      // A string column whose character set is unknown (no optional
      // metadata): text when the bytes are UTF-8, else the bytes in hex,
      // never \u00XX escapes a reader would take for characters.
      if (IsValidUtf8(cell.bytes)) {
        AppendJsonString(cell.bytes, out);
        return;
      }
      [[fallthrough]];
    case RowCell::kBinary:
      out->append("{\"hex\":\"");
      AppendHex(cell.bytes, out);
      out->append("\"}");
      return;
  }
}

void AppendCellText(const RowCell& cell, std::string* out) {
  switch (cell.kind) {
    case RowCell::kNull: out->append("NULL"); return;
    case RowCell::kNumber:
    case RowCell::kJson: out->append(cell.text); return;
    case RowCell::kText: AppendTextString(cell.text, out); return;
    case RowCell::kBytes:
      if (IsValidUtf8(cell.bytes)) {  // as in AppendCellJson
        AppendTextString(cell.bytes, out);
        return;
      }
      [[fallthrough]];
    case RowCell::kBinary:
      out->append("0x");
      AppendHex(cell.bytes, out);
      return;
  }
}

std::string FormatXid(uint32_t format_id, absl::string_view gtrid,
                      absl::string_view bqual) {
  std::string s = "X'";
  AppendHex(gtrid, &s);
  s += "',X'";
  AppendHex(bqual, &s);
  absl::StrAppend(&s, "',", format_id);
  return s;
}

std::string CompressionTypeName(uint64_t type) {
  return absl::AsciiStrToLower(PayloadCompressionName(type));
}

namespace {

// The checksum an event itself carries: an inner event of a
// Transaction_payload has no footer (ChecksumState::kNone); the payload's
// CRC32 is printed as payload_checksum.
ChecksumState OwnChecksum(const Event& ev) {
  return ev.from_payload ? ChecksumState::kNone : ev.checksum;
}

}  // namespace

EventPrinter::EventPrinter(const PrintOptions& options) : options_(options) {}

void EventPrinter::PrintFileStart(absl::string_view file_name,
                                  std::string* out) {
  if (options_.format != OutputFormat::kText) return;
  out->append("# file ");
  AppendTextString(file_name, out);
  out->push_back('\n');
}

void EventPrinter::PrintEvent(absl::string_view file_name, const Event& ev,
                              const FormatDescription& fde, std::string* out,
                              const PayloadHeader* payload) {
  const bool text = options_.format == OutputFormat::kText;
  if (ev.header.type == kFormatDescriptionEvent) ResetTables();
  std::string row_lines;
  if (!text && AppendJsonHeader(file_name, ev, out)) {
    RecordWriter w(options_.format, out, RecordWriter::Continue());
    AddPayloadFields(ev, payload, &w);
    AddDetails(ev, fde, &w, &row_lines);
    w.End();
    return;
  }
  RecordWriter w(options_.format, out);
  if (text) {
    absl::StrAppend(out, "#", ev.offset, " end=", ev.end_offset, " ",
                    EventTypeName(ev.header.type));
  } else {
    if (file_json_.empty() || file_name != file_name_) {
      file_name_ = std::string(file_name);
      file_json_.clear();
      AppendJsonString(file_name, &file_json_);
    }
    w.Raw("file", file_json_);
    w.Num("pos", ev.offset);
    w.Num("end_pos", ev.end_offset);
    w.Num("type", ev.header.type);
    w.Word("type_name", EventTypeName(ev.header.type));
  }
  w.Num("size", ev.header.event_size);
  w.Num("server_id", ev.header.server_id);
  if (text) {
    w.Word("time", utc_.Iso(ev.header.timestamp));
    w.Word("crc", ChecksumStateName(OwnChecksum(ev)));
    w.Word("flags", absl::StrCat("0x", absl::Hex(ev.header.flags)));
    if (ev.header.log_pos != ev.end_offset && !ev.from_payload) {
      // Artificial events, relay logs, MariaDB 11.4+ cache events (0).
      w.Num("log_pos", ev.header.log_pos);
    }
  } else {
    w.Word("checksum", ChecksumStateName(OwnChecksum(ev)));
    w.Num("timestamp", ev.header.timestamp);
    w.Word("time", utc_.Iso(ev.header.timestamp));
    w.Num("log_pos", ev.header.log_pos);
    w.Num("flags", ev.header.flags);
  }
  AddPayloadFields(ev, payload, &w);
  AddDetails(ev, fde, &w, &row_lines);
  w.End();
  out->append(row_lines);
}

void EventPrinter::AddPayloadFields(const Event& ev,
                                    const PayloadHeader* payload,
                                    RecordWriter* w) {
  if (!ev.from_payload) return;
  // An inner event of a Transaction_payload: pos/end_pos are the payload's
  // (where a reader resumes), log_pos is 0 as stored.
  w->Num("payload_index", ev.payload_index);
  w->Num("payload_events", ev.payload_events);
  // The payload event's CRC32, which covered this event's bytes.
  w->Word("payload_checksum", ChecksumStateName(ev.checksum));
  if (ev.payload_index == 0 && payload != nullptr) {
    w->Word("payload_compression",
            CompressionTypeName(payload->compression_type));
    w->Num("payload_size", payload->payload_size);
    if (payload->has_uncompressed_size) {
      w->Num("payload_uncompressed_size", payload->uncompressed_size);
    }
  }
}

namespace {

// Appends the decimal digits of `v` (20 digits at most).
inline void PutNum(char** p, uint64_t v) {
  *p = absl::numbers_internal::FastIntToBuffer(v, *p);
}

constexpr size_t kPiece = 96;

// Copies a whole piece (fixed size, so the compiler inlines it) and
// advances by its length. The caller's buffer has room for kPiece bytes.
inline void PutPiece(char** p, const char* data, size_t len) {
  std::memcpy(*p, data, kPiece);
  *p += len;
}

}  // namespace

bool EventPrinter::Piece::Set(absl::string_view s) {
  static_assert(kCap == kPiece, "piece size");
  if (s.empty() || s.size() > kCap) {
    len = 0;
    return false;
  }
  std::memset(data, 0, kCap);
  std::memcpy(data, s.data(), s.size());
  len = static_cast<uint8_t>(s.size());
  return true;
}

bool EventPrinter::AppendJsonHeader(absl::string_view file_name,
                                    const Event& ev, std::string* out) {
  if (file_part_.len == 0 || file_name != file_name_) {
    file_name_ = std::string(file_name);
    std::string json;
    AppendJsonString(file_name, &json);
    if (!file_part_.Set(absl::StrCat("{\"file\":", json, ",\"pos\":"))) {
      return false;  // a very long file name: the RecordWriter path
    }
  }
  Piece& type_part = type_part_[ev.header.type];
  if (type_part.len == 0) {
    type_part.Set(absl::StrCat(",\"type\":", ev.header.type,
                               ",\"type_name\":\"",
                               EventTypeName(ev.header.type), "\",\"size\":"));
  }
  if (time_part_.len == 0 || ev.header.timestamp != time_seconds_) {
    time_seconds_ = ev.header.timestamp;
    time_part_.Set(absl::StrCat(",\"time\":\"", utc_.Iso(ev.header.timestamp),
                                "\",\"log_pos\":"));
  }
  static const Piece kChecksum[3] = {
      MakePiece(",\"checksum\":\"none\",\"timestamp\":"),
      MakePiece(",\"checksum\":\"ok\",\"timestamp\":"),
      MakePiece(",\"checksum\":\"bad\",\"timestamp\":"),
  };
  static const Piece kEndPos = MakePiece(",\"end_pos\":");
  static const Piece kServerId = MakePiece(",\"server_id\":");
  static const Piece kFlags = MakePiece(",\"flags\":");
  const Piece& checksum = kChecksum[OwnChecksum(ev) == ChecksumState::kOk    ? 1
                                    : OwnChecksum(ev) == ChecksumState::kBad ? 2
                                                                         : 0];
  // 8 pieces and 7 numbers of at most 20 digits.
  char buf[8 * kPiece + 7 * 24];
  char* p = buf;
  PutPiece(&p, file_part_.data, file_part_.len);
  PutNum(&p, ev.offset);
  PutPiece(&p, kEndPos.data, kEndPos.len);
  PutNum(&p, ev.end_offset);
  PutPiece(&p, type_part.data, type_part.len);
  PutNum(&p, ev.header.event_size);
  PutPiece(&p, kServerId.data, kServerId.len);
  PutNum(&p, ev.header.server_id);
  PutPiece(&p, checksum.data, checksum.len);
  PutNum(&p, ev.header.timestamp);
  PutPiece(&p, time_part_.data, time_part_.len);
  PutNum(&p, ev.header.log_pos);
  PutPiece(&p, kFlags.data, kFlags.len);
  PutNum(&p, ev.header.flags);
  out->append(buf, static_cast<size_t>(p - buf));
  return true;
}

void EventPrinter::PrintTornTail(const TornTail& t, std::string* out) {
  if (options_.format == OutputFormat::kText) {
    absl::StrAppend(out, "# torn tail in ", Printable(t.file_name), " at ",
                    t.offset, ": ", Printable(t.reason), " (",
                    t.trailing_bytes, " bytes",
                    t.in_use ? ", in-use flag set" : "", ")\n");
    return;
  }
  RecordWriter w(options_.format, out);
  w.Bool("torn_tail", true);
  w.Str("file", t.file_name);
  w.Num("pos", t.offset);
  w.Num("bytes", t.trailing_bytes);
  w.Str("reason", t.reason);
  w.Bool("in_use", t.in_use);
  w.Bool("zeros", t.zeros);
  w.End();
}

void EventPrinter::AddDetails(const Event& ev, const FormatDescription& fde,
                              RecordWriter* w, std::string* row_lines) {
  const absl::string_view body = ev.body();
  auto error = [w](const absl::Status& s) {
    w->Str("decode_error", s.message());
  };
  const uint8_t type = ev.header.type;
  switch (type) {
    case kQueryEvent:
    case kExecuteLoadQueryEvent: {
      // Execute_load_query has the Query layout with a longer post-header
      // (13 + 13 bytes), which the FDE declares; DecodeQuery skips it.
      auto q = DecodeQuery(body, fde.PostHeaderLen(type));
      if (!q.ok()) return error(q.status());
      w->Num("thread_id", q->thread_id);
      w->Num("exec_time", q->exec_time);
      w->Num("error_code", q->error_code);
      w->Str("db", q->db);
      w->Str("query", q->query);
      return;
    }
    case kMariaQueryCompressedEvent: {
      uint8_t phl = fde.PostHeaderLen(type);
      auto q = binlog::DecodeMariaCompressedQuery(body, phl ? phl : 13);
      if (!q.ok()) return error(q.status());
      w->Num("thread_id", q->thread_id);
      w->Num("exec_time", q->exec_time);
      w->Num("error_code", q->error_code);
      w->Str("db", q->db);
      w->Str("query", q->query);
      return;
    }
    case kRotateEvent: {
      auto r = DecodeRotate(body);
      if (!r.ok()) return error(r.status());
      w->Str("next_file", r->next_file);
      w->Num("next_pos", r->position);
      return;
    }
    case kFormatDescriptionEvent: {
      auto f = DecodeFormatDescription(ev.data);
      if (!f.ok()) return error(f.status());
      w->Str("server_version", f->server_version);
      w->Num("binlog_version", f->binlog_version);
      w->Word("checksum_alg", ChecksumAlgName(f->checksum_alg));
      w->Bool("in_use", f->in_use);
      w->Num("create_timestamp", f->create_timestamp);
      return;
    }
    case kMariaGtidEvent: {
      auto g = DecodeMariaGtid(body);
      if (!g.ok()) return error(g.status());
      w->Word("gtid", g->ToString(ev.header.server_id));
      w->Num("gtid_flags", g->flags2);
      if (g->has_commit_id) w->Num("commit_id", g->commit_id);
      if (g->has_xid) {
        w->Str("xa_xid", FormatXid(g->xid_format_id, g->xid_gtrid,
                                           g->xid_bqual));
      }
      return;
    }
    case kGtidEvent:
    case kAnonymousGtidEvent:
    case kGtidTaggedEvent: {
      auto g = DecodeAnyMySqlGtidEvent(ev.header.type, body);
      if (!g.ok()) return error(g.status());
      if (g->anonymous()) {
        w->Word("gtid", "ANONYMOUS");
      } else if (!g->tag.empty()) {
        w->Word("gtid", g->ToString());  // uuid:tag:gno
      } else {
        if (last_uuid_.empty() || last_sid_ != g->uuid) {
          last_sid_ = g->uuid;
          last_uuid_ = g->uuid.ToString();
        }
        char buf[64];
        std::memcpy(buf, last_uuid_.data(), 36);
        buf[36] = ':';
        char* end = absl::numbers_internal::FastIntToBuffer(g->gno, buf + 37);
        w->Word("gtid", absl::string_view(buf, static_cast<size_t>(end - buf)));
      }
      w->Num("gtid_flags", g->flags);
      if (g->has_logical_clock) {
        w->Int("last_committed", g->last_committed);
        w->Int("sequence_number", g->sequence_number);
      }
      if (g->has_commit_timestamps) {
        w->Num("immediate_commit_timestamp", g->immediate_commit_timestamp);
        w->Num("original_commit_timestamp", g->original_commit_timestamp);
      }
      if (g->has_transaction_length) {
        w->Num("transaction_length", g->transaction_length);
      }
      if (g->has_server_versions) {
        w->Num("immediate_server_version", g->immediate_server_version);
        w->Num("original_server_version", g->original_server_version);
      }
      if (g->commit_group_ticket != 0) {
        w->Num("commit_group_ticket", g->commit_group_ticket);
      }
      return;
    }
    case kHeartbeatEventV2: {
      auto hb = DecodeHeartbeatV2(body);
      if (!hb.ok()) return error(hb.status());
      if (hb->has_log_filename) w->Str("log_file", hb->log_filename);
      if (hb->has_log_position) w->Num("log_position", hb->log_position);
      return;
    }
    case kPreviousGtidsEvent: {
      auto s = GtidSet::DecodePreviousGtidsBody(body);
      if (!s.ok()) return error(s.status());
      w->Str("previous_gtids", s->ToString());
      return;
    }
    case kMariaGtidListEvent: {
      auto l = DecodeMariaGtidList(body);
      if (!l.ok()) return error(l.status());
      w->Str("gtid_list", l->ToString());
      return;
    }
    case kMariaBinlogCheckpointEvent: {
      auto f = binlog::DecodeBinlogCheckpoint(body);
      if (!f.ok()) return error(f.status());
      w->Str("checkpoint_file", *f);
      return;
    }
    case kXidEvent: {
      auto x = DecodeXid(body);
      if (!x.ok()) return error(x.status());
      w->Num("xid", *x);
      return;
    }
    case kIntvarEvent: {
      auto i = DecodeIntvar(body);
      if (!i.ok()) return error(i.status());
      w->Word("intvar_type", IntvarTypeName(i->type));
      w->Num("intvar_value", i->value);
      return;
    }
    case kRandEvent: {
      auto r = DecodeRand(body);
      if (!r.ok()) return error(r.status());
      w->Num("rand_seed1", r->seed1);
      w->Num("rand_seed2", r->seed2);
      return;
    }
    case kUserVarEvent: {
      auto u = DecodeUserVar(body);
      if (!u.ok()) return error(u.status());
      w->Str("user_var_name", u->name);
      if (u->is_null) {
        w->Raw("user_var_value", w->format() == OutputFormat::kText ? "NULL"
                                                                   : "null");
      } else if (u->is_string || u->type == 4) {
        w->Str("user_var_value", u->value);
      } else if (u->value == "nan" || u->value == "inf" ||
                 u->value == "-inf") {
        w->Str("user_var_value", u->value);
      } else {
        w->Raw("user_var_value", u->value);
      }
      return;
    }
    case kRowsQueryEvent: {
      auto q = DecodeRowsQuery(body);
      if (!q.ok()) return error(q.status());
      w->Str("query", *q);
      return;
    }
    case kMariaAnnotateRowsEvent:
      w->Str("query", body);
      return;
    case kXaPrepareEvent: {
      auto x = DecodeXaPrepare(body);
      if (!x.ok()) return error(x.status());
      w->Str("xa_xid", FormatXid(x->format_id, x->gtrid, x->bqual));
      w->Bool("one_phase", x->one_phase);
      return;
    }
    case kIncidentEvent: {
      auto i = DecodeIncident(body);
      if (!i.ok()) return error(i.status());
      w->Num("incident", i->number);
      w->Str("message", i->message);
      return;
    }
    case kTransactionPayloadEvent: {
      auto p = DecodePayloadHeader(body);
      if (!p.ok()) return error(p.status());
      w->Word("compression", CompressionTypeName(p->compression_type));
      w->Num("payload_size", p->payload_size);
      if (p->has_uncompressed_size) {
        w->Num("uncompressed_size", p->uncompressed_size);
      }
      return;
    }
    case kBeginLoadQueryEvent:
    case kAppendBlockEvent: {
      // LOAD DATA: a 4-byte file id, then a block of the file's data.
      if (body.size() < 4) {
        w->Str("decode_error", "load event shorter than its file id");
        return;
      }
      w->Num("file_id", LoadLe32(body.data()));
      w->Num("block_size", body.size() - 4);
      return;
    }
    case kTableMapEvent:
      AddTableMap(ev, fde, w);
      return;
    default:
      break;
  }
  if (binlog::IsRowsEvent(type)) {
    AddRows(ev, fde, w, row_lines);
    return;
  }
  if (absl::StartsWith(EventTypeName(type), "UNKNOWN_EVENT")) {
    // An event type neither server defines: its bytes, so an operator can
    // see what it is. Not fatal: the reader has validated its framing.
    std::string hex;
    AppendHex(body.substr(0, kMaxRawBody), &hex);
    w->Word("body_hex", hex);
    if (body.size() > kMaxRawBody) w->Bool("body_truncated", true);
  }
}

void EventPrinter::AddTableMap(const Event& ev, const FormatDescription& fde,
                               RecordWriter* w) {
  const absl::string_view body = ev.body();
  const uint8_t phl = fde.PostHeaderLen(kTableMapEvent);
  absl::StatusOr<uint64_t> table_id = DecodeTableId(body, phl);
  if (!table_id.ok()) {
    w->Str("decode_error", "Table_map event too short for its table id");
    return;
  }
  const uint64_t id = *table_id;
  CachedTable& c = tables_[id];
  // A server writes the same Table_map before every statement on a table:
  // decode it again only when its bytes changed.
  if (!c.ok || c.raw != body) {
    auto t = binlog::DecodeTableMap(body, phl);
    if (!t.ok()) {
      tables_.erase(id);
      w->Str("decode_error", t.status().message());
      return;
    }
    c.raw.assign(body.data(), body.size());
    c.ok = true;
    c.map = std::move(*t);
    c.types_value.clear();
    c.names_value.clear();
    c.db_value.clear();
    c.table_value.clear();
  }
  const binlog::TableMap& m = c.map;
  w->Num("table_id", m.table_id);
  w->Str("db", m.db);
  w->Str("table", m.table);
  w->Num("column_count", m.columns.size());
  if (!m.columns_error.empty()) {
    w->Str("decode_error", m.columns_error);
    return;
  }
  if (c.types_value.empty()) FormatColumns(&c, w->format());
  w->Raw("column_types", c.types_value);
  if (m.has_names) w->Raw("column_names", c.names_value);
}

void EventPrinter::FormatColumns(CachedTable* c, OutputFormat format) {
  const binlog::TableMap& m = c->map;
  const bool json = format == OutputFormat::kJsonl;
  std::string& types = c->types_value;
  types = json ? "[" : "";
  for (size_t i = 0; i < m.columns.size(); ++i) {
    if (i > 0) types.push_back(',');
    std::string name = ColumnTypeName(m.columns[i]);
    if (json) {
      AppendJsonString(name, &types);
    } else {
      // Text: one token for all columns, no spaces ("BIGINT_UNSIGNED").
      for (char& ch : name) {
        if (ch == ' ') ch = '_';
      }
      types += name;
    }
  }
  if (json) types.push_back(']');
  std::string& names = c->names_value;
  names = "[";
  for (size_t i = 0; i < m.columns.size(); ++i) {
    if (i > 0) names.push_back(',');
    if (json) {
      AppendJsonString(m.columns[i].name, &names);
    } else {
      AppendTextString(m.columns[i].name, &names);
    }
  }
  names.push_back(']');
}

void EventPrinter::AddRows(const Event& ev, const FormatDescription& fde,
                           RecordWriter* w, std::string* row_lines) {
  binlog::RowsEvent rows;
  absl::Status s = binlog::DecodeRowsEvent(
      ev.header.type, ev.body(), fde.PostHeaderLen(ev.header.type), &scratch_,
      &rows);
  if (!s.ok()) {
    w->Str("decode_error", s.message());
    return;
  }
  w->Num("table_id", rows.table_id);
  auto it = tables_.find(rows.table_id);
  if (it == tables_.end() || !it->second.ok) {
    w->Str("rows_error", absl::StrCat("no Table_map for table id ",
                                      rows.table_id, " before this event"));
    return;
  }
  CachedTable& cached = it->second;
  const binlog::TableMap& table = cached.map;
  if (cached.db_value.empty()) {
    AppendJsonString(table.db, &cached.db_value);
    AppendJsonString(table.table, &cached.table_value);
  }
  w->Raw("db", cached.db_value);
  w->Raw("table", cached.table_value);
  if (w->format() == OutputFormat::kText) {
    w->Word("rows_flags", absl::StrCat("0x", absl::Hex(rows.flags)));
  } else {
    w->Num("rows_flags", rows.flags);
  }
  uint64_t count = 0;
  std::string lines;
  if (!options_.decode_rows) {
    s = rows_decoder_.Decode(table, rows, nullptr, &count);
    if (s.ok()) {
      w->Num("row_count", count);
    } else {
      w->Str("rows_error", s.message());
    }
    return;
  }
  if (w->format() == OutputFormat::kJsonl) {
    // The rows array goes straight into the output line.
    std::string* json = w->RawValue("rows");
    json->push_back('[');
    RowFormatter formatter(w->format(), json, &lines);
    s = rows_decoder_.Decode(table, rows, &formatter, &count);
    formatter.Finish();
  } else {
    RowFormatter formatter(w->format(), &rows_json_, &lines);
    s = rows_decoder_.Decode(table, rows, &formatter, &count);
    row_lines->append(lines);
  }
  if (s.ok()) w->Num("row_count", count);
  if (!s.ok()) w->Str("rows_error", s.message());
}

}  // namespace tools
}  // namespace binlog
