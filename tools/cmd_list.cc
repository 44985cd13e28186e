// binlogtool list: one line per binlog file.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "binlog/format.h"
#include "tools/commands.h"
#include "tools/file_walker.h"

namespace binlog {
namespace tools {
namespace {

struct ListRow {
  FileFacts facts;
  std::string path;
  bool failed = false;
  uint64_t error_offset = 0;
  bool size_known = false;
  uint64_t size = 0;
  uint64_t trailing = 0;  // bytes after the last event, no torn tail
  uint64_t payload_events = 0;  // Transaction_payload events (type 40)
  uint64_t payload_bytes = 0;   // and their bytes
};

class ListCollector final : public FileWalker::Observer {
 public:
  ListCollector(const Source* src, Progress* progress)
      : src_(src), progress_(progress) {}
  void set_first_index(size_t i) { first_index_ = i; }
  void OnEvent(const FileFacts& file, const Event& ev,
               TransactionBoundaryParser::Result) override {
    progress_->Add(ev.header.event_size, file.name);
    if (ev.header.type == kTransactionPayloadEvent) {
      ++payload_events_;
      payload_bytes_ += ev.header.event_size;
    }
  }
  void OnFileEnd(const FileFacts& file, bool) override {
    ListRow row;
    row.facts = file;
    row.path = PathOf(*src_, file.name, file.number, first_index_);
    TakePayload(&row);
    rows.push_back(std::move(row));
  }
  void OnDataLoss(const FileFacts& file, absl::string_view message,
                  uint64_t reader_position) {
    ListRow row;
    row.facts = file;
    row.path = PathOf(*src_, file.name, file.number, first_index_);
    row.failed = true;
    row.error_offset = reader_position;
    absl::string_view what;
    SplitReaderError(message, file.name, &row.error_offset, &what);
    TakePayload(&row);
    rows.push_back(std::move(row));
  }
  std::vector<ListRow> rows;

 private:
  void TakePayload(ListRow* row) {
    row->payload_events = payload_events_;
    row->payload_bytes = payload_bytes_;
    payload_events_ = 0;
    payload_bytes_ = 0;
  }

  const Source* src_;
  Progress* progress_;
  size_t first_index_ = 0;
  uint64_t payload_events_ = 0;
  uint64_t payload_bytes_ = 0;
};

std::string ListStatusWord(const ListRow& r) {
  if (r.failed) return "error";
  if (r.facts.torn) return "torn";
  if (r.trailing > 0) return "trailing";
  if (r.facts.in_use) return "in-use";
  return "clean";
}

std::string ListStatusText(const ListRow& r) {
  std::string s;
  const FileFacts& f = r.facts;
  if (r.failed) {
    s = absl::StrCat("error at ", r.error_offset);
  } else if (f.torn) {
    s = absl::StrCat("torn at ", f.torn_tail.offset, " (",
                     f.torn_tail.trailing_bytes, " bytes",
                     f.torn_tail.zeros ? ", zeros" : "",
                     f.in_use ? ", in-use" : "", ")");
  } else if (r.trailing > 0) {
    s = absl::StrCat("trailing at ", f.end, " (", r.trailing,
                     " bytes after the last event",
                     f.in_use ? ", in-use" : "", ")");
  } else {
    s = f.in_use ? "in-use" : "clean";
  }
  if (f.bad_checksums > 0) {
    absl::StrAppend(&s, ", ", f.bad_checksums, " bad checksum",
                    f.bad_checksums == 1 ? "" : "s");
  }
  return s;
}

std::string PadLeft(absl::string_view s, size_t width) {
  std::string out;
  if (s.size() < width) out.assign(width - s.size(), ' ');
  out.append(s.data(), s.size());
  return out;
}

std::string PadRight(absl::string_view s, size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

void PrintListJsonl(const std::vector<ListRow>& rows) {
  std::string out;
  for (const ListRow& r : rows) {
    const FileFacts& f = r.facts;
    RecordWriter w(OutputFormat::kJsonl);
    w.Str("file", f.name);
    if (r.size_known) w.Num("size", r.size);
    w.Num("events", f.events);
    w.Num("transactions", f.transactions);
    if (f.have_time) {
      w.Num("first_timestamp", f.first_time);
      w.Num("last_timestamp", f.last_time);
      w.Str("first_time", FormatUtc(f.first_time));
      w.Str("last_time", FormatUtc(f.last_time));
    }
    w.Str("status", ListStatusWord(r));
    w.Bool("in_use", f.in_use);
    w.Num("bad_checksums", f.bad_checksums);
    w.Num("payload_events", r.payload_events);
    w.Num("payload_bytes", r.payload_bytes);
    if (f.torn) {
      w.Num("torn_offset", f.torn_tail.offset);
      w.Num("torn_bytes", f.torn_tail.trailing_bytes);
      w.Str("torn_reason", f.torn_tail.reason);
    }
    if (r.trailing > 0) {
      w.Num("trailing_offset", f.end);
      w.Num("trailing_bytes", r.trailing);
    }
    if (r.failed) w.Num("error_offset", r.error_offset);
    out += w.Finish();
  }
  Out(out);
}

// Share of the file's bytes in Transaction_payload events: "-" without
// any, else a percentage with one decimal.
std::string CompressedShare(const ListRow& r) {
  if (r.payload_events == 0) return "-";
  uint64_t size = r.size_known && r.size > 0 ? r.size : r.facts.end;
  if (size == 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(r.payload_bytes) /
                                       static_cast<double>(size));
}

void PrintListTable(const std::vector<ListRow>& rows) {
  struct Cells {
    std::string file, size, events, transactions, first, last, compressed,
        status;
  };
  std::vector<Cells> cells;
  cells.push_back(Cells{"FILE", "SIZE", "EVENTS", "TRANSACTIONS",
                        "FIRST EVENT (UTC)", "LAST EVENT (UTC)", "COMPRESSED",
                        "STATUS"});
  for (const ListRow& r : rows) {
    const FileFacts& f = r.facts;
    cells.push_back(Cells{
        Printable(f.name), r.size_known ? absl::StrCat(r.size) : "?",
        absl::StrCat(f.events), absl::StrCat(f.transactions),
        f.have_time ? FormatUtc(f.first_time) : "-",
        f.have_time ? FormatUtc(f.last_time) : "-", CompressedShare(r),
        ListStatusText(r)});
  }
  size_t w[7] = {0, 0, 0, 0, 0, 0, 0};
  for (const Cells& c : cells) {
    w[0] = std::max(w[0], c.file.size());
    w[1] = std::max(w[1], c.size.size());
    w[2] = std::max(w[2], c.events.size());
    w[3] = std::max(w[3], c.transactions.size());
    w[4] = std::max(w[4], c.first.size());
    w[5] = std::max(w[5], c.last.size());
    w[6] = std::max(w[6], c.compressed.size());
  }
  std::string table;
  for (const Cells& c : cells) {
    absl::StrAppend(&table, PadRight(c.file, w[0]), "  ", PadLeft(c.size, w[1]),
                    "  ", PadLeft(c.events, w[2]), "  ",
                    PadLeft(c.transactions, w[3]), "  ",
                    PadRight(c.first, w[4]), "  ", PadRight(c.last, w[5]),
                    "  ", PadLeft(c.compressed, w[6]), "  ", c.status, "\n");
  }
  Out(table);
}

}  // namespace

int RunList(io::FileSystem* fs, const Args& args) {
  Source src;
  std::string error;
  OutputFormat format = OutputFormat::kText;
  std::string basename;
  if (!GetFormat(args, &format, &error) ||
      !GetBasename(args, &basename, &error) ||
      !ResolveSource(fs, args.paths, basename, &src, &error)) {
    return UsageError("list", error);
  }
  ReaderOptions o = BaseReaderOptions();
  o.checksum_mode = ChecksumMode::kReport;
  SetRawPayloads(&o);  // count Transaction_payload events as stored
  Progress progress("list", SourceBytes(fs, src), /*stdout_is_output=*/false);
  ListCollector collector(&src, &progress);
  int exit_code = kExitOk;
  // A directory is read by one reader, which cannot go on after a DataLoss
  // (it stays at the bad event). Files are read again from the one after
  // the damaged file, so every file gets its line.
  size_t first = 0;
  for (;;) {
    absl::StatusOr<std::unique_ptr<Reader>> reader;
    if (src.is_dir) {
      reader = OpenReader(fs, src, o);
    } else {
      reader = Reader::OpenFiles(
          std::vector<std::string>(src.files.begin() + first, src.files.end()),
          o, fs);
    }
    if (!reader.ok()) {
      ErrStatus("list", reader.status());
      return ExitForStatus(reader.status());
    }
    collector.set_first_index(first);
    FileWalker walker(reader->get(), &collector);
    absl::Status s = walker.Run();
    if (s.ok()) break;
    ErrStatus("list", s);
    if (!absl::IsDataLoss(s) && !absl::IsUnimplemented(s)) {
      exit_code = kExitUsage;
      break;
    }
    if (exit_code != kExitDamaged) exit_code = ExitForStatus(s);
    collector.OnDataLoss(walker.failed_file(), s.message(),
                         (*reader)->position());
    if (src.is_dir) break;
    uint64_t failed_number = walker.failed_file().number;
    if (failed_number == 0) failed_number = 1;
    first += static_cast<size_t>(failed_number);
    if (first >= src.files.size()) break;
  }

  for (ListRow& r : collector.rows) {
    auto size = fs->FileSize(r.path);
    if (!size.ok()) {
      ErrStatus("list", size.status());
      if (exit_code == kExitOk) exit_code = kExitUsage;
      continue;
    }
    r.size_known = true;
    r.size = *size;
    if (!r.failed && !r.facts.torn && r.size > r.facts.end) {
      r.trailing = r.size - r.facts.end;
    }
  }
  progress.Done();
  std::vector<TornTail> tails;
  for (const ListRow& r : collector.rows) {
    if (r.facts.torn) tails.push_back(r.facts.torn_tail);
  }
  if (ReportUnreadTails("list", tails) != kExitOk && exit_code == kExitOk) {
    exit_code = kExitDamaged;
  }
  if (format == OutputFormat::kJsonl) {
    PrintListJsonl(collector.rows);
  } else {
    PrintListTable(collector.rows);
  }
  return exit_code;
}

}  // namespace tools
}  // namespace binlog
