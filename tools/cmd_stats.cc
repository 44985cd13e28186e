// binlogtool stats: what is in a binlog, in numbers.

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "binlog/format.h"
#include "binlog/payload.h"
#include "binlog/rows.h"
#include "binlog/rows_decode.h"
#include "tools/commands.h"
#include "tools/file_walker.h"

namespace binlog {
namespace tools {
namespace {

using Result = TransactionBoundaryParser::Result;

struct TableStats {
  std::string db;
  std::string name;
  uint64_t inserted = 0;
  uint64_t updated = 0;
  uint64_t deleted = 0;
  uint64_t rows_events = 0;
  uint64_t bytes = 0;
  uint64_t rows_unknown_events = 0;  // images that could not be decoded
};

class StatsCollector final : public FileWalker::Observer {
 public:
  explicit StatsCollector(Progress* progress) : progress_(progress) {}

  void OnEvent(const FileFacts& file, const Event& ev, Result r) override {
    const uint8_t type = ev.header.type;
    if (ev.from_payload) {
      // An inner event of an expanded Transaction_payload: the payload is
      // counted (once) as the stored event, its inner events by type with
      // their uncompressed sizes.
      if (ev.payload_index == 0) {
        const uint64_t size = ev.end_offset - ev.offset;
        progress_->Add(size, file.name);
        ++events_;
        bytes_ += size;
        ++type_events_[kTransactionPayloadEvent];
        type_bytes_[kTransactionPayloadEvent] += size;
        ++payload_events_;
        payload_bytes_ += size;
        compressed_bytes_ += reader_->payload_header().payload_size;
        compressed_with_size_ += reader_->payload_header().payload_size;
      }
      ++inner_events_[type];
      inner_bytes_[type] += ev.header.event_size;
      uncompressed_bytes_ += ev.header.event_size;
    } else {
      progress_->Add(ev.header.event_size, file.name);
      ++events_;
      bytes_ += ev.header.event_size;
      ++type_events_[type];
      type_bytes_[type] += ev.header.event_size;
    }
    if (!have_time_ || ev.header.timestamp < first_time_) {
      first_time_ = ev.header.timestamp;
    }
    if (!have_time_ || ev.header.timestamp > last_time_) {
      last_time_ = ev.header.timestamp;
    }
    have_time_ = true;

    if (file.number != file_number_) {
      file_number_ = file.number;
      open_ = false;
      tables_by_id_.clear();
    }
    if (type == kFormatDescriptionEvent) tables_by_id_.clear();
    fde_ = &reader_->format_description();

    // Transactions: from the event that opened one to the event that ended
    // it; a one-event transaction (a DDL without GTID) both opens and ends.
    if (r == Result::kStarted ||
        (r == Result::kUnexpected && file.open_transaction_start == ev.offset)) {
      open_ = true;
      open_start_ = ev.offset;
    } else if (r == Result::kEnded) {
      uint64_t start = open_ ? open_start_ : ev.offset;
      sizes_.push_back(ev.end_offset - start);
      ++commits_per_second_[ev.header.timestamp];
      open_ = false;
    }

    if (type == kTableMapEvent) {
      TableMap(ev);
    } else if (binlog::IsRowsEvent(type)) {
      Rows(ev);
    } else if (type == kTransactionPayloadEvent && !ev.from_payload) {
      // Stored as is: a raw reader, or a payload whose checksum is bad
      // (the Reader does not expand those).
      ++payload_events_;
      payload_bytes_ += ev.header.event_size;
      auto p = DecodePayloadHeader(ev.body());
      if (p.ok()) {
        compressed_bytes_ += p->payload_size;
        if (p->has_uncompressed_size) {
          uncompressed_bytes_ += p->uncompressed_size;
          compressed_with_size_ += p->payload_size;
        }
      } else {
        ++payload_undecodable_;
      }
    }
  }

  void OnFileEnd(const FileFacts&, bool) override { ++files_; }
  void CountFailedFile() { ++files_; }
  void set_reader(Reader* r) { reader_ = r; }

  void Print(OutputFormat format, uint64_t bucket_flag);

 private:
  struct CachedMap {
    std::string raw;
    binlog::TableMap map;
  };

  void TableMap(const Event& ev) {
    const absl::string_view body = ev.body();
    uint8_t phl = fde_->PostHeaderLen(kTableMapEvent);
    absl::StatusOr<uint64_t> table_id = DecodeTableId(body, phl);
    if (!table_id.ok()) return;
    const uint64_t id = *table_id;
    auto it = tables_by_id_.find(id);
    if (it != tables_by_id_.end() && it->second.raw == body) return;
    auto t = binlog::DecodeTableMap(body, phl);
    if (!t.ok()) {
      tables_by_id_.erase(id);
      return;
    }
    CachedMap& c = tables_by_id_[id];
    c.raw.assign(body.data(), body.size());
    c.map = std::move(*t);
  }

  void Rows(const Event& ev) {
    binlog::RowsEvent rows;
    absl::Status s = binlog::DecodeRowsEvent(
        ev.header.type, ev.body(), fde_->PostHeaderLen(ev.header.type),
        &scratch_, &rows);
    std::string key = "(undecodable Rows events)";
    const binlog::TableMap* map = nullptr;
    if (s.ok()) {
      auto it = tables_by_id_.find(rows.table_id);
      if (it != tables_by_id_.end()) {
        map = &it->second.map;
        key = map->QualifiedName();
      } else {
        key = "(no Table_map)";
      }
    }
    TableStats& t = tables_[key];
    if (map != nullptr && t.name.empty()) {
      t.db = map->db;
      t.name = map->table;
    }
    ++t.rows_events;
    t.bytes += ev.header.event_size;
    uint64_t count = 0;
    if (map == nullptr || !decoder_.Decode(*map, rows, nullptr, &count).ok()) {
      ++t.rows_unknown_events;
      return;
    }
    switch (rows.kind) {
      case binlog::RowsKind::kWrite: t.inserted += count; break;
      case binlog::RowsKind::kUpdate: t.updated += count; break;
      case binlog::RowsKind::kDelete: t.deleted += count; break;
    }
  }

  Progress* progress_;
  Reader* reader_ = nullptr;
  const FormatDescription* fde_ = nullptr;
  uint64_t files_ = 0;
  uint64_t events_ = 0;
  uint64_t bytes_ = 0;
  uint64_t type_events_[256] = {};   // events as stored in the files
  uint64_t type_bytes_[256] = {};
  uint64_t inner_events_[256] = {};  // events inside payloads
  uint64_t inner_bytes_[256] = {};   // (uncompressed)
  bool have_time_ = false;
  uint32_t first_time_ = 0;
  uint32_t last_time_ = 0;

  uint64_t file_number_ = 0;
  bool open_ = false;
  uint64_t open_start_ = 0;
  std::vector<uint64_t> sizes_;
  std::map<uint32_t, uint64_t> commits_per_second_;

  std::unordered_map<uint64_t, CachedMap> tables_by_id_;
  std::map<std::string, TableStats> tables_;
  RowsDecoder decoder_;
  std::string scratch_;

  uint64_t payload_events_ = 0;
  uint64_t payload_bytes_ = 0;
  uint64_t compressed_bytes_ = 0;
  uint64_t uncompressed_bytes_ = 0;
  uint64_t compressed_with_size_ = 0;
  uint64_t payload_undecodable_ = 0;
};

// Nearest-rank percentile of sorted `v`.
uint64_t Percentile(const std::vector<uint64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (rank < 1) rank = 1;
  return v[rank - 1];
}

std::string Pad(absl::string_view s, size_t width, bool left) {
  std::string out;
  if (!left) out.append(s.data(), s.size());
  if (s.size() < width) out.append(width - s.size(), ' ');
  if (left) out.append(s.data(), s.size());
  return out;
}

void StatsCollector::Print(OutputFormat format, uint64_t bucket_flag) {
  const bool json = format == OutputFormat::kJsonl;
  std::sort(sizes_.begin(), sizes_.end());
  uint64_t transactions = sizes_.size();
  uint64_t sum = 0;
  for (uint64_t s : sizes_) sum += s;

  // Buckets of commit timestamps.
  uint64_t bucket = bucket_flag;
  uint32_t first_commit = 0, last_commit = 0;
  if (!commits_per_second_.empty()) {
    first_commit = commits_per_second_.begin()->first;
    last_commit = commits_per_second_.rbegin()->first;
  }
  uint64_t span = last_commit - first_commit;
  if (bucket == 0) {
    bucket = span <= 600 ? 1 : span <= 2 * 86400 ? 60 : 3600;
  }
  // At most 100000 buckets, whatever --bucket says.
  while (span / bucket > 100000) bucket *= 10;
  std::map<uint64_t, uint64_t> buckets;  // bucket start -> transactions
  for (const auto& [sec, n] : commits_per_second_) {
    buckets[sec - sec % bucket] += n;
  }

  std::string out;
  if (json) {
    RecordWriter w(OutputFormat::kJsonl, &out);
    w.Num("files", files_);
    w.Num("events", events_);
    w.Num("bytes", bytes_);
    w.Num("transactions", transactions);
    if (have_time_) {
      w.Num("first_timestamp", first_time_);
      w.Num("last_timestamp", last_time_);
      w.Str("first_time", FormatUtc(first_time_));
      w.Str("last_time", FormatUtc(last_time_));
    }
    std::string types = "[";
    for (int t = 0; t < 256; ++t) {
      if (type_events_[t] == 0 && inner_events_[t] == 0) continue;
      if (types.size() > 1) types.push_back(',');
      RecordWriter e(OutputFormat::kJsonl, &types);
      e.Num("type", static_cast<uint64_t>(t));
      e.Str("type_name", EventTypeName(static_cast<uint8_t>(t)));
      e.Num("events", type_events_[t]);
      e.Num("bytes", type_bytes_[t]);
      e.Num("in_payload_events", inner_events_[t]);
      e.Num("in_payload_bytes", inner_bytes_[t]);
      types.push_back('}');
    }
    types.push_back(']');
    w.Raw("event_types", types);
    w.Num("bucket_seconds", bucket);
    std::string tps = "[";
    if (!buckets.empty()) {
      for (uint64_t b = buckets.begin()->first; b <= buckets.rbegin()->first;
           b += bucket) {
        if (tps.size() > 1) tps.push_back(',');
        auto it = buckets.find(b);
        RecordWriter e(OutputFormat::kJsonl, &tps);
        e.Num("timestamp", b);
        e.Str("time", FormatUtc(static_cast<uint32_t>(b)));
        e.Num("transactions", it == buckets.end() ? 0 : it->second);
        tps.push_back('}');
      }
    }
    tps.push_back(']');
    w.Raw("transactions_per_bucket", tps);
    std::string size;
    {
      RecordWriter e(OutputFormat::kJsonl, &size);
      e.Num("count", transactions);
      e.Num("p50", Percentile(sizes_, 0.50));
      e.Num("p99", Percentile(sizes_, 0.99));
      e.Num("max", sizes_.empty() ? 0 : sizes_.back());
      e.Num("mean", transactions ? sum / transactions : 0);
      size.push_back('}');
    }
    w.Raw("transaction_size", size);
    std::string tables = "[";
    for (const auto& [key, t] : tables_) {
      if (tables.size() > 1) tables.push_back(',');
      RecordWriter e(OutputFormat::kJsonl, &tables);
      e.Str("table", key);
      e.Num("inserted", t.inserted);
      e.Num("updated", t.updated);
      e.Num("deleted", t.deleted);
      e.Num("rows", t.inserted + t.updated + t.deleted);
      e.Num("rows_events", t.rows_events);
      e.Num("bytes", t.bytes);
      e.Num("rows_unknown_events", t.rows_unknown_events);
      tables.push_back('}');
    }
    tables.push_back(']');
    w.Raw("tables", tables);
    std::string comp;
    {
      RecordWriter e(OutputFormat::kJsonl, &comp);
      e.Num("payload_events", payload_events_);
      e.Num("payload_bytes", payload_bytes_);
      e.Num("compressed_bytes", compressed_bytes_);
      e.Num("uncompressed_bytes", uncompressed_bytes_);
      if (compressed_with_size_ > 0) {
        std::string ratio;
        absl::StrAppendFormat(&ratio, "%.3f",
                              static_cast<double>(uncompressed_bytes_) /
                                  static_cast<double>(compressed_with_size_));
        e.Raw("ratio", ratio);
      }
      comp.push_back('}');
    }
    w.Raw("compression", comp);
    w.End();
    Out(out);
    return;
  }

  absl::StrAppend(&out, "files ", files_, ", events ", events_, ", ", bytes_,
                  " bytes, ", transactions, " transactions\n");
  if (have_time_) {
    absl::StrAppend(&out, "events from ", FormatUtc(first_time_), " to ",
                    FormatUtc(last_time_), " UTC (",
                    last_time_ - first_time_, " s)\n");
  }

  const bool inner = payload_events_ > 0 && uncompressed_bytes_ > 0;
  out += "\nEVENT TYPE                          EVENTS           BYTES";
  out += inner ? "  IN PAYLOADS  (UNCOMPRESSED BYTES)\n" : "\n";
  for (int t = 0; t < 256; ++t) {
    if (type_events_[t] == 0 && inner_events_[t] == 0) continue;
    absl::StrAppend(&out, Pad(EventTypeName(static_cast<uint8_t>(t)), 30, false),
                    Pad(absl::StrCat(type_events_[t]), 12, true),
                    Pad(absl::StrCat(type_bytes_[t]), 16, true));
    if (inner) {
      absl::StrAppend(&out, Pad(absl::StrCat(inner_events_[t]), 13, true),
                      Pad(absl::StrCat(inner_bytes_[t]), 21, true));
    }
    out += "\n";
  }

  absl::StrAppend(&out, "\nTRANSACTIONS PER ",
                  bucket == 1 ? std::string("SECOND")
                              : absl::StrCat(bucket, " SECONDS"),
                  " (by commit event time, UTC)\n");
  if (buckets.empty()) {
    out += "(no complete transactions)\n";
  } else {
    out += "TIME                 TRANSACTIONS\n";
    uint64_t peak = 0, peak_at = 0, n = 0;
    for (uint64_t b = buckets.begin()->first; b <= buckets.rbegin()->first;
         b += bucket) {
      auto it = buckets.find(b);
      uint64_t c = it == buckets.end() ? 0 : it->second;
      if (c > peak) {
        peak = c;
        peak_at = b;
      }
      ++n;
      absl::StrAppend(&out, FormatUtc(static_cast<uint32_t>(b)),
                      Pad(absl::StrCat(c), 15, true), "\n");
    }
    absl::StrAppendFormat(
        &out, "peak %d at %s, mean %.1f per second over %d s\n", peak,
        FormatUtc(static_cast<uint32_t>(peak_at)),
        static_cast<double>(transactions) / static_cast<double>(n * bucket),
        n * bucket);
  }

  absl::StrAppend(&out, "\nTRANSACTION SIZE (bytes, ", transactions,
                  " transactions): p50 ", Percentile(sizes_, 0.50), "  p99 ",
                  Percentile(sizes_, 0.99), "  max ",
                  sizes_.empty() ? 0 : sizes_.back(), "  mean ",
                  transactions ? sum / transactions : 0, "\n");

  out += "\nTABLE";
  size_t width = 30;
  for (const auto& [key, t] : tables_) width = std::max(width, key.size() + 2);
  out += std::string(width - 5, ' ');
  out += "   INSERTED    UPDATED    DELETED  ROWS EVENTS           BYTES\n";
  if (tables_.empty()) out += "(no Rows events)\n";
  for (const auto& [key, t] : tables_) {
    absl::StrAppend(&out, Pad(Printable(key), width, false),
                    Pad(absl::StrCat(t.inserted), 11, true),
                    Pad(absl::StrCat(t.updated), 11, true),
                    Pad(absl::StrCat(t.deleted), 11, true),
                    Pad(absl::StrCat(t.rows_events), 13, true),
                    Pad(absl::StrCat(t.bytes), 16, true));
    if (t.rows_unknown_events > 0) {
      absl::StrAppend(&out, "  (rows unknown in ", t.rows_unknown_events,
                      " events)");
    }
    out += "\n";
  }

  out += "\nCOMPRESSION: ";
  if (payload_events_ == 0) {
    out += "no Transaction_payload events\n";
  } else {
    absl::StrAppend(&out, payload_events_, " Transaction_payload events, ",
                    payload_bytes_, " bytes (",
                    absl::StrFormat("%.1f%%", 100.0 *
                                                  static_cast<double>(payload_bytes_) /
                                                  static_cast<double>(bytes_)),
                    " of all event bytes); payloads ", compressed_bytes_,
                    " bytes compressed");
    if (compressed_with_size_ > 0) {
      absl::StrAppendFormat(&out, ", %d uncompressed: ratio %.2f",
                            uncompressed_bytes_,
                            static_cast<double>(uncompressed_bytes_) /
                                static_cast<double>(compressed_with_size_));
    }
    out += "\n";
  }
  Out(out);
}

}  // namespace

int RunStats(io::FileSystem* fs, const Args& args) {
  Source src;
  std::string error;
  OutputFormat format = OutputFormat::kText;
  std::string basename;
  uint64_t bucket = 0;
  if (!GetFormat(args, &format, &error) ||
      !GetBasename(args, &basename, &error) ||
      !GetUint(args, "--bucket", &bucket, &error)) {
    return UsageError("stats", error);
  }
  if (args.Has("--bucket") && bucket == 0) {
    return UsageError("stats", "--bucket must be at least 1 second");
  }
  if (!ResolveSource(fs, args.paths, basename, &src, &error)) {
    return UsageError("stats", error);
  }
  ReaderOptions o = BaseReaderOptions();
  o.checksum_mode = ChecksumMode::kReport;
  // Payloads expanded (the default): their rows count per table, and the
  // Reader's payload header gives the compressed size.
  auto reader = OpenReader(fs, src, o);
  if (!reader.ok()) {
    ErrStatus("stats", reader.status());
    return ExitForStatus(reader.status());
  }
  Progress progress("stats", SourceBytes(fs, src), /*stdout_is_output=*/false);
  StatsCollector stats(&progress);
  stats.set_reader(reader->get());
  FileWalker walker(reader->get(), &stats);
  absl::Status s = walker.Run();
  progress.Done();
  int rc = kExitOk;
  if (!s.ok()) {
    ErrStatus("stats", s);
    if (!absl::IsDataLoss(s) && !absl::IsUnimplemented(s)) return kExitUsage;
    stats.CountFailedFile();
    Err("binlogtool stats: the statistics below cover the events before "
        "the damage\n");
    rc = ExitForStatus(s);
  }
  stats.Print(format, bucket);
  return rc;
}

}  // namespace tools
}  // namespace binlog
