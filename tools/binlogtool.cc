// binlogtool: the operator's inspection tool for MySQL/MariaDB binlog v4
// files (ours and any server's).
//
//   binlogtool list   DIR|FILE...   one line per file: size, events,
//                                   transactions, first/last time, status
//   binlogtool dump   FILE...|DIR   every event, as text or JSON lines
//   binlogtool verify DIR|FILE...   checksums, structure, transactions,
//                                   torn tails, index; exit 1 on problems
//
// Everything is read through binlog::Reader, which validates each event
// (bounds, log_pos, CRC32) before handing it out, so hostile files reach the
// tool only as DataLoss errors or as events whose checksum is "bad". Field
// decoding uses the library's bounds-checked decoders only.
//
// Exit status: 0 success; 1 damaged data (a DataLoss error, or problems
// found by verify); 2 usage error or I/O error. See tools/README.md.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"
#include "io/file_system.h"
#include "tools/file_walker.h"
#include "tools/output.h"

namespace binlog {
namespace tools {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitDamaged = 1;  // DataLoss, or verify found problems
constexpr int kExitUsage = 2;    // bad command line, or an I/O error

// ---------------------------------------------------------------------------
// Output

void Out(absl::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void Err(absl::string_view s) {
  std::fflush(stdout);  // keep stdout and stderr in order on a terminal
  std::fwrite(s.data(), 1, s.size(), stderr);
}

// "binlogtool COMMAND: message" on stderr. Library messages can quote bytes
// from the files (index entries), hence Printable.
void ErrStatus(absl::string_view command, const absl::Status& s) {
  Err(absl::StrCat("binlogtool ", command, ": ", Printable(s.message()),
                   "\n"));
}

// ---------------------------------------------------------------------------
// Usage

constexpr char kMainUsage[] =
    R"usage(binlogtool: inspect MySQL / MariaDB binary log (binlog v4) files.

Usage:
  binlogtool list   [--format=text|jsonl] [--basename=NAME] DIR|FILE...
  binlogtool dump   [--format=text|jsonl] [--basename=NAME] FILE...|DIR
  binlogtool verify [--basename=NAME] DIR|FILE...
  binlogtool help [COMMAND]        (or: binlogtool COMMAND --help)

A single DIR argument means the binlog of that directory: the files listed
in its <basename>.index, or, without an index, every <basename>.NNNNNN file
in number order (--basename picks one log when a directory holds several).
Otherwise every argument is a binlog file, read in the order given.

Exit status: 0 OK; 1 damaged data (or, for verify, problems found);
2 usage or I/O error.

Examples:
  binlogtool list /var/lib/mysql
  binlogtool dump --format=jsonl /var/lib/mysql/binlog.000042 | jq .type_name
  binlogtool verify /var/lib/mysql
)usage";

constexpr char kListUsage[] =
    R"usage(Usage: binlogtool list [--format=text|jsonl] [--basename=NAME] DIR|FILE...

One line per binlog file: name, size in bytes, number of events, number of
transactions, first and last event timestamp (UTC), and status:
  clean                      in-use flag clear, ends on an event boundary
  in-use                     in-use flag set (file open, or server crashed)
  torn at OFF (N bytes, ...) the file ends in N bytes that are not a
                             complete event, after offset OFF
  error at OFF               unreadable from OFF on (details on stderr)
", N bad checksums" is appended when events fail their CRC32.

--format=jsonl prints one JSON object per file with the keys file, size,
events, transactions, first_timestamp, last_timestamp, first_time,
last_time, status ("clean", "in-use", "torn" or "error"), in_use,
bad_checksums, and for torn files torn_offset, torn_bytes, torn_reason.

Exit status: 0 OK (torn tails included); 1 a file is damaged (reading
stops there); 2 usage or I/O error.

Examples:
  binlogtool list /var/lib/mysql
  binlogtool list --format=jsonl /var/lib/mysql
  binlogtool list binlog.000001 binlog.000002
)usage";

constexpr char kDumpUsage[] =
    R"usage(Usage: binlogtool dump [--format=text|jsonl] [--basename=NAME] FILE...|DIR

Prints every event of the files, in order. Checksums are checked and
reported ("ok", "none" for files without checksums, "bad"); a bad checksum
does not stop the dump.

Text format, one line per event (strings are JSON-quoted):
  #<pos> end=<end_pos> <TYPE_NAME> size=<n> server_id=<id> time=<UTC>
      crc=<ok|none|bad> flags=<hex> [type-specific fields]
  a "# file NAME" line starts each file, and a torn tail ends its file with
  "# torn tail in FILE at OFFSET: REASON (N bytes)".

JSON lines format (--format=jsonl), one object per event with the keys
  file pos end_pos type type_name size checksum timestamp time server_id
  log_pos flags
plus, by type:
  QUERY_EVENT, EXECUTE_LOAD_QUERY_EVENT  db query thread_id exec_time
                                         error_code
  ROTATE_EVENT                           next_file next_pos
  FORMAT_DESCRIPTION_EVENT               server_version binlog_version
                                         checksum_alg in_use create_timestamp
  GTID_EVENT (MariaDB)                   gtid gtid_flags
  XID_EVENT                              xid
A field that cannot be decoded gives decode_error instead. A torn tail
is the object
  {"torn_tail":true,"file":...,"pos":...,"bytes":...,"reason":...,
   "in_use":...,"zeros":...}

Exit status: 0 OK (bad checksums and torn tails included); 1 a malformed
event stopped the dump (stderr names file and offset); 2 usage or I/O error.

Examples:
  binlogtool dump binlog.000042
  binlogtool dump --format=jsonl binlog.000041 binlog.000042 > events.jsonl
)usage";

constexpr char kVerifyUsage[] =
    R"usage(Usage: binlogtool verify [--basename=NAME] DIR|FILE...

Reads everything and prints one line per finding, "FILE:OFFSET: ...":
  - an event whose CRC32 does not match;
  - a malformed event or a log_pos that does not match the event's end
    (reading that file, or for a DIR the whole log, stops there);
  - an event that does not fit the transaction structure (e.g. a GTID inside
    an open transaction);
  - a closed (in-use flag clear) file that is not the last one and ends
    inside an open transaction;
  - a torn tail (bytes after the last complete event) in a closed file;
  - for a DIR: an index entry whose file is missing, a malformed index.
Findings marked "warning:" are not failures: a torn tail or an incomplete
last transaction in a file whose in-use flag is set (what a crash leaves),
the in-use flag itself, and binlog files missing from the index.
The last line is a summary:
  verified N files, M events, K transactions: OK
  verified N files, M events, K transactions: P problems

Exit status: 0 no problems (warnings allowed); 1 problems found; 2 usage or
I/O error.

Examples:
  binlogtool verify /var/lib/mysql
  binlogtool verify binlog.000041 binlog.000042
)usage";

const char* CommandUsage(absl::string_view command) {
  if (command == "list") return kListUsage;
  if (command == "dump") return kDumpUsage;
  if (command == "verify") return kVerifyUsage;
  return nullptr;
}

int UsageError(absl::string_view command, absl::string_view message) {
  const char* usage = CommandUsage(command);
  Err(absl::StrCat("binlogtool: ", Printable(message), "\n\n",
                   usage != nullptr ? usage : kMainUsage));
  return kExitUsage;
}

// ---------------------------------------------------------------------------
// Command line

struct Args {
  std::string command;
  std::vector<std::string> paths;
  OutputFormat format = OutputFormat::kText;
  bool format_given = false;
  std::string basename;
  bool help = false;
};

// Parses argv[2..] of a command. Returns false with `*error` set on a bad
// flag. Accepts "--flag=value" and "--flag value"; "--" ends the flags.
bool ParseCommandArgs(int argc, char** argv, Args* args, std::string* error) {
  bool flags_done = false;
  for (int i = 2; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (flags_done || a.empty() || a[0] != '-' || a == "-") {
      args->paths.emplace_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      args->help = true;
      continue;
    }
    absl::string_view name = a;
    absl::string_view value;
    bool has_value = false;
    size_t eq = a.find('=');
    if (eq != absl::string_view::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (name != "--format" && name != "--basename") {
      *error = absl::StrCat("unknown flag '", a, "'");
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = absl::StrCat("flag ", name, " needs a value");
        return false;
      }
      value = argv[++i];
    }
    if (name == "--format") {
      if (value == "text") {
        args->format = OutputFormat::kText;
      } else if (value == "jsonl") {
        args->format = OutputFormat::kJsonl;
      } else {
        *error = absl::StrCat("--format must be text or jsonl, not '", value,
                              "'");
        return false;
      }
      args->format_given = true;
    } else {
      if (value.empty() || value.find('/') != absl::string_view::npos) {
        *error = absl::StrCat("--basename must be a file base name, not '",
                              value, "'");
        return false;
      }
      args->basename = std::string(value);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// What to read: one directory, or a list of files.

struct Source {
  bool is_dir = false;
  std::string dir;
  std::string basename;            // for a directory; empty = find it
  std::vector<std::string> files;  // for files, in order
};

bool IsDirectory(io::FileSystem* fs, const std::string& path) {
  // The FileSystem has no stat-like call; listing succeeds for directories
  // only (ENOTDIR / ENOENT otherwise).
  return fs->ListDirectory(path).ok();
}

// Returns false with `*error` set for a usage problem.
bool ResolveSource(io::FileSystem* fs, const Args& args, Source* src,
                   std::string* error) {
  if (args.paths.empty()) {
    *error = "missing DIR or FILE argument";
    return false;
  }
  if (args.paths.size() == 1 && IsDirectory(fs, args.paths[0])) {
    src->is_dir = true;
    src->dir = args.paths[0];
    src->basename = args.basename;
    return true;
  }
  for (const auto& p : args.paths) {
    if (IsDirectory(fs, p)) {
      *error = absl::StrCat("'", p,
                            "' is a directory; give one directory or only "
                            "files");
      return false;
    }
  }
  if (!args.basename.empty()) {
    *error = "--basename applies to a directory argument only";
    return false;
  }
  src->files = args.paths;
  return true;
}

absl::StatusOr<std::unique_ptr<Reader>> OpenReader(io::FileSystem* fs,
                                                   const Source& src,
                                                   const ReaderOptions& o) {
  if (src.is_dir) return Reader::OpenDirectory(src.dir, src.basename, o, fs);
  return Reader::OpenFiles(src.files, o, fs);
}

// The path of file `number` (Event::file_number) named `name`. For
// OpenFiles readers the number is the 1-based position in `files`, offset
// by `first_index` when a reader was opened on a tail of the list.
std::string PathOf(const Source& src, const std::string& name,
                   uint64_t number, size_t first_index = 0) {
  if (src.is_dir) return io::JoinPath(src.dir, name);
  size_t i = first_index + static_cast<size_t>(number) - 1;
  if (number >= 1 && i < src.files.size()) return src.files[i];
  return name;
}

// The reader's DataLoss messages read "<file>: offset <N>: <what>". Splits
// such a message; returns false for any other shape.
bool SplitReaderError(absl::string_view message, absl::string_view file,
                      uint64_t* offset, absl::string_view* what) {
  std::string prefix = absl::StrCat(file, ": offset ");
  if (file.empty() || !absl::StartsWith(message, prefix)) return false;
  absl::string_view rest = message.substr(prefix.size());
  size_t colon = rest.find(": ");
  if (colon == absl::string_view::npos) return false;
  if (!absl::SimpleAtoi(rest.substr(0, colon), offset)) return false;
  *what = rest.substr(colon + 2);
  return true;
}

const char* ChecksumAlgName(ChecksumAlg alg) {
  switch (alg) {
    case ChecksumAlg::kOff: return "none";
    case ChecksumAlg::kCrc32: return "crc32";
    case ChecksumAlg::kUndefined: return "undefined";
  }
  return "undefined";
}

// Bytes of the file past the end of its last event, for a file the reader
// left without recording a torn tail. The Reader stops reading a file at its
// Rotate event and never looks at what follows, so anything after it (zeros,
// garbage, more events) is found only by comparing with the file size.
// Returns 0 when the size cannot be read: the reader has just read the file,
// so a failure here says nothing about the data, and the caller reports
// what it can.
uint64_t BytesAfterEnd(io::FileSystem* fs, const std::string& path,
                       const FileFacts& file) {
  if (file.torn) return 0;
  auto size = fs->FileSize(path);
  if (!size.ok() || *size <= file.end) return 0;
  return *size - file.end;
}

// ---------------------------------------------------------------------------
// dump

// Adds the decoded type-specific fields of `ev`. Every decoder is
// bounds-checked; a failure is reported as decode_error, never fatal.
void AddEventDetails(const Event& ev, const Reader& reader, RecordWriter* w) {
  switch (ev.header.type) {
    case kQueryEvent:
    case kExecuteLoadQueryEvent: {
      // Execute_load_query has the Query layout with a longer post-header
      // (13 + 13 bytes), which the FDE declares; DecodeQuery skips it.
      auto q = DecodeQuery(
          ev.body(), reader.format_description().PostHeaderLen(ev.header.type));
      if (!q.ok()) {
        w->Str("decode_error", q.status().message());
        return;
      }
      w->Num("thread_id", q->thread_id);
      w->Num("exec_time", q->exec_time);
      w->Num("error_code", q->error_code);
      w->Str("db", q->db);
      w->Str("query", q->query);
      return;
    }
    case kRotateEvent: {
      auto r = DecodeRotate(ev.body());
      if (!r.ok()) {
        w->Str("decode_error", r.status().message());
        return;
      }
      w->Str("next_file", r->next_file);
      w->Num("next_pos", r->position);
      return;
    }
    case kFormatDescriptionEvent: {
      auto f = DecodeFormatDescription(ev.data);
      if (!f.ok()) {
        w->Str("decode_error", f.status().message());
        return;
      }
      w->Str("server_version", f->server_version);
      w->Num("binlog_version", f->binlog_version);
      w->Word("checksum_alg", ChecksumAlgName(f->checksum_alg));
      w->Bool("in_use", f->in_use);
      w->Num("create_timestamp", f->create_timestamp);
      return;
    }
    case kMariaGtidEvent: {
      auto g = DecodeMariaGtid(ev.body());
      if (!g.ok()) {
        w->Str("decode_error", g.status().message());
        return;
      }
      w->Word("gtid", absl::StrCat(g->domain_id, "-", ev.header.server_id, "-",
                                   g->seq_no));
      w->Num("gtid_flags", g->flags2);
      return;
    }
    case kXidEvent: {
      absl::string_view body = ev.body();
      if (body.size() < 8) {
        w->Str("decode_error", "xid event too short");
        return;
      }
      w->Num("xid", LoadLe64(body.data()));
      return;
    }
    default:
      return;
  }
}

class DumpPrinter final : public FileWalker::Observer {
 public:
  DumpPrinter(OutputFormat format, const Reader* reader)
      : format_(format), reader_(reader) {}

  void OnEvent(const FileFacts& file, const Event& ev,
               TransactionBoundaryParser::Result) override {
    const bool text = format_ == OutputFormat::kText;
    if (text && file.events == 1) {
      Out(absl::StrCat("# file ", JsonString(file.name), "\n"));
    }
    RecordWriter w(format_);
    if (text) {
      w.Text(absl::StrCat("#", ev.offset, " end=", ev.end_offset, " ",
                          EventTypeName(ev.header.type)));
    } else {
      w.Str("file", file.name);
      w.Num("pos", ev.offset);
      w.Num("end_pos", ev.end_offset);
      w.Num("type", ev.header.type);
      w.Str("type_name", EventTypeName(ev.header.type));
    }
    w.Num("size", ev.header.event_size);
    w.Num("server_id", ev.header.server_id);
    if (text) {
      w.Word("time", FormatUtcIso(ev.header.timestamp));
      w.Word("crc", ChecksumStateName(ev.checksum));
      w.Word("flags", absl::StrCat("0x", absl::Hex(ev.header.flags)));
      if (ev.header.log_pos != ev.end_offset) {
        w.Num("log_pos", ev.header.log_pos);  // artificial events only
      }
    } else {
      w.Word("checksum", ChecksumStateName(ev.checksum));
      w.Num("timestamp", ev.header.timestamp);
      w.Word("time", FormatUtcIso(ev.header.timestamp));
      w.Num("log_pos", ev.header.log_pos);
      w.Num("flags", ev.header.flags);
    }
    AddEventDetails(ev, *reader_, &w);
    Out(w.Finish());
  }

  void OnFileEnd(const FileFacts& file, bool) override {
    if (!file.torn) return;
    const TornTail& t = file.torn_tail;
    if (format_ == OutputFormat::kText) {
      Out(absl::StrCat("# torn tail in ", Printable(t.file_name), " at ",
                       t.offset, ": ", Printable(t.reason), " (",
                       t.trailing_bytes, " bytes",
                       t.in_use ? ", in-use flag set" : "", ")\n"));
      return;
    }
    RecordWriter w(format_);
    w.Bool("torn_tail", true);
    w.Str("file", t.file_name);
    w.Num("pos", t.offset);
    w.Num("bytes", t.trailing_bytes);
    w.Str("reason", t.reason);
    w.Bool("in_use", t.in_use);
    w.Bool("zeros", t.zeros);
    Out(w.Finish());
  }

 private:
  OutputFormat format_;
  const Reader* reader_;
};

int RunDump(io::FileSystem* fs, const Args& args) {
  Source src;
  std::string error;
  if (!ResolveSource(fs, args, &src, &error)) return UsageError("dump", error);
  ReaderOptions o;
  o.checksum_mode = ChecksumMode::kReport;
  auto reader = OpenReader(fs, src, o);
  if (!reader.ok()) {
    ErrStatus("dump", reader.status());
    return absl::IsDataLoss(reader.status()) ? kExitDamaged : kExitUsage;
  }
  DumpPrinter printer(args.format, reader->get());
  FileWalker walker(reader->get(), &printer);
  absl::Status s = walker.Run();
  if (!s.ok()) {
    ErrStatus("dump", s);
    return absl::IsDataLoss(s) ? kExitDamaged : kExitUsage;
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------
// list

struct ListRow {
  FileFacts facts;
  std::string path;
  bool failed = false;
  uint64_t error_offset = 0;
  bool size_known = false;
  uint64_t size = 0;
  uint64_t trailing = 0;  // bytes after the last event, no torn tail
};

class ListCollector final : public FileWalker::Observer {
 public:
  explicit ListCollector(const Source* src) : src_(src) {}
  void set_first_index(size_t i) { first_index_ = i; }
  void OnEvent(const FileFacts&, const Event&,
               TransactionBoundaryParser::Result) override {}
  void OnFileEnd(const FileFacts& file, bool) override {
    ListRow row;
    row.facts = file;
    row.path = PathOf(*src_, file.name, file.number, first_index_);
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
    rows.push_back(std::move(row));
  }
  std::vector<ListRow> rows;

 private:
  const Source* src_;
  size_t first_index_ = 0;
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

void PrintListTable(const std::vector<ListRow>& rows) {
  struct Cells {
    std::string file, size, events, transactions, first, last, status;
  };
  std::vector<Cells> cells;
  cells.push_back(Cells{"FILE", "SIZE", "EVENTS", "TRANSACTIONS",
                        "FIRST EVENT (UTC)", "LAST EVENT (UTC)", "STATUS"});
  for (const ListRow& r : rows) {
    const FileFacts& f = r.facts;
    cells.push_back(Cells{
        Printable(f.name), r.size_known ? absl::StrCat(r.size) : "?",
        absl::StrCat(f.events), absl::StrCat(f.transactions),
        f.have_time ? FormatUtc(f.first_time) : "-",
        f.have_time ? FormatUtc(f.last_time) : "-", ListStatusText(r)});
  }
  size_t w[6] = {0, 0, 0, 0, 0, 0};
  for (const Cells& c : cells) {
    w[0] = std::max(w[0], c.file.size());
    w[1] = std::max(w[1], c.size.size());
    w[2] = std::max(w[2], c.events.size());
    w[3] = std::max(w[3], c.transactions.size());
    w[4] = std::max(w[4], c.first.size());
    w[5] = std::max(w[5], c.last.size());
  }
  std::string table;
  for (const Cells& c : cells) {
    absl::StrAppend(&table, PadRight(c.file, w[0]), "  ", PadLeft(c.size, w[1]),
                    "  ", PadLeft(c.events, w[2]), "  ",
                    PadLeft(c.transactions, w[3]), "  ",
                    PadRight(c.first, w[4]), "  ", PadRight(c.last, w[5]),
                    "  ", c.status, "\n");
  }
  Out(table);
}

int RunList(io::FileSystem* fs, const Args& args) {
  Source src;
  std::string error;
  if (!ResolveSource(fs, args, &src, &error)) return UsageError("list", error);
  ReaderOptions o;
  o.checksum_mode = ChecksumMode::kReport;
  ListCollector collector(&src);
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
      return absl::IsDataLoss(reader.status()) ? kExitDamaged : kExitUsage;
    }
    collector.set_first_index(first);
    FileWalker walker(reader->get(), &collector);
    absl::Status s = walker.Run();
    if (s.ok()) break;
    ErrStatus("list", s);
    if (!absl::IsDataLoss(s)) {
      exit_code = kExitUsage;
      break;
    }
    exit_code = kExitDamaged;
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
  if (args.format == OutputFormat::kJsonl) {
    PrintListJsonl(collector.rows);
  } else {
    PrintListTable(collector.rows);
  }
  return exit_code;
}

// ---------------------------------------------------------------------------
// verify

class Verifier final : public FileWalker::Observer {
 public:
  Verifier(io::FileSystem* fs, const Source* src) : fs_(fs), src_(src) {}

  // The reader currently walked was opened on src->files[first_index...].
  void set_first_index(size_t i) { first_index_ = i; }

  void OnEvent(const FileFacts& file, const Event& ev,
               TransactionBoundaryParser::Result r) override {
    if (ev.checksum == ChecksumState::kBad) {
      uint32_t stored =
          LoadLe32(ev.data.data() + ev.data.size() - kChecksumSize);
      uint32_t computed = ComputeEventChecksum(ev.data);
      Problem(file, ev.offset,
              absl::StrCat("checksum mismatch in ",
                           EventTypeName(ev.header.type), " event (stored 0x",
                           absl::Hex(stored, absl::kZeroPad8), ", computed 0x",
                           absl::Hex(computed, absl::kZeroPad8), ")"));
    }
    if (r == TransactionBoundaryParser::Result::kUnexpected) {
      Problem(file, ev.offset,
              absl::StrCat(EventTypeName(ev.header.type),
                           " event does not fit the transaction structure "
                           "(e.g. a GTID inside an open transaction, or an "
                           "unknown event type without the ignorable flag)"));
    }
  }

  void OnFileEnd(const FileFacts& file, bool last) override {
    ++files_;
    transactions_ += file.transactions;
    if (file.torn) {
      const TornTail& t = file.torn_tail;
      std::string what = absl::StrCat("torn tail: ", t.reason, "; ",
                                      t.trailing_bytes,
                                      " bytes after the last complete event");
      if (t.in_use) {
        Warning(file, t.offset,
                absl::StrCat(what, " (in-use flag set: the server crashed or "
                                   "is still writing this file)"));
      } else {
        Problem(file, t.offset,
                absl::StrCat(what, t.zeros ? " (zeros: preallocated space "
                                             "not trimmed at close?)"
                                           : "",
                             " in a closed file"));
      }
    } else {
      uint64_t extra = BytesAfterEnd(fs_, PathOf(*src_, file.name, file.number,
                                                 first_index_),
                                     file);
      if (extra > 0) {
        std::string what = absl::StrCat(
            extra, " bytes after the last event (the reader stops at a "
                   "Rotate event and does not read them)");
        if (file.in_use) {
          Warning(file, file.end, what);
        } else {
          Problem(file, file.end, absl::StrCat(what, " in a closed file"));
        }
      }
      if (file.in_use) {
        Warning(file, kMagicSize,
                "in-use flag set: the file is still open, or the server "
                "crashed");
      }
    }
    if (file.open_transaction) {
      std::string what = absl::StrCat(
          "file ends inside a transaction that started at ",
          file.open_transaction_start);
      if (!file.torn && !file.in_use && !last) {
        Problem(file, file.end,
                absl::StrCat(what, " (closed file followed by another)"));
      } else {
        Warning(file, file.end,
                absl::StrCat(what, " (incomplete: a server would discard it "
                                   "at recovery)"));
      }
    }
  }

  // A DataLoss from the reader: the rest of the file (or log) is not read.
  void OnDataLoss(const FileFacts& file, absl::string_view message,
                  uint64_t reader_position) {
    ++files_;
    transactions_ += file.transactions;
    uint64_t offset = reader_position;
    absl::string_view what = message;
    SplitReaderError(message, file.name, &offset, &what);
    Problem(file, offset, what);
  }

  // A problem not tied to a file offset (index, directory).
  void GeneralProblem(absl::string_view where, absl::string_view what) {
    ++problems_;
    Out(Printable(absl::StrCat(where, ": ", what)) + "\n");
  }
  void GeneralWarning(absl::string_view where, absl::string_view what) {
    Out(Printable(absl::StrCat(where, ": warning: ", what)) + "\n");
  }

  uint64_t files() const { return files_; }
  uint64_t transactions() const { return transactions_; }
  uint64_t problems() const { return problems_; }

 private:
  std::string Where(const FileFacts& file, uint64_t offset) const {
    return absl::StrCat(PathOf(*src_, file.name, file.number, first_index_),
                        ":", offset);
  }
  void Problem(const FileFacts& file, uint64_t offset, absl::string_view what) {
    ++problems_;
    Out(Printable(absl::StrCat(Where(file, offset), ": ", what)) + "\n");
  }
  void Warning(const FileFacts& file, uint64_t offset, absl::string_view what) {
    Out(Printable(absl::StrCat(Where(file, offset), ": warning: ", what)) +
        "\n");
  }

  io::FileSystem* fs_;
  const Source* src_;
  size_t first_index_ = 0;
  uint64_t files_ = 0;
  uint64_t transactions_ = 0;
  uint64_t problems_ = 0;
};

// Warns about files of the log's basename that its index does not list:
// servers ignore them (and the library's recovery reports them as ignored),
// which is usually a leftover of a failed purge or a restore.
absl::Status CheckUnlistedFiles(io::FileSystem* fs, const Source& src,
                                Verifier* v) {
  auto names = fs->ListDirectory(src.dir);
  if (!names.ok()) return names.status();
  std::string basename = src.basename;
  if (basename.empty()) {
    for (const auto& n : *names) {
      if (absl::EndsWith(n, ".index") && n.size() > 6) {
        if (!basename.empty()) return absl::OkStatus();  // ambiguous; reader
        basename = n.substr(0, n.size() - 6);            // already refused
      }
    }
  }
  if (basename.empty()) return absl::OkStatus();  // no index: nothing to check
  auto listed = ReadIndex(fs, src.dir, basename);
  if (!listed.ok()) {
    return absl::IsNotFound(listed.status()) ? absl::OkStatus()
                                             : listed.status();
  }
  std::set<uint64_t> in_index(listed->begin(), listed->end());
  std::set<std::string> unlisted;
  for (const auto& n : *names) {
    uint64_t number;
    if (ParseBinlogFileName(basename, n, &number) && !in_index.count(number)) {
      unlisted.insert(n);
    }
  }
  for (const auto& n : unlisted) {
    v->GeneralWarning(io::JoinPath(src.dir, n),
                      absl::StrCat("not listed in ", IndexFileName(basename),
                                   " (servers ignore it)"));
  }
  return absl::OkStatus();
}

int RunVerify(io::FileSystem* fs, const Args& args) {
  if (args.format_given) {
    return UsageError("verify", "verify has no --format");
  }
  Source src;
  std::string error;
  if (!ResolveSource(fs, args, &src, &error)) {
    return UsageError("verify", error);
  }
  ReaderOptions o;
  o.checksum_mode = ChecksumMode::kReport;
  o.check_log_pos = true;
  Verifier v(fs, &src);
  uint64_t events = 0;

  auto io_error = [](const absl::Status& s) {
    ErrStatus("verify", s);
    return kExitUsage;
  };

  if (src.is_dir) {
    auto reader = OpenReader(fs, src, o);
    if (!reader.ok()) {
      // A missing index entry (NotFound) or a malformed index (DataLoss) is
      // a finding about the log; anything else is an I/O or usage error.
      if (absl::IsNotFound(reader.status()) ||
          absl::IsDataLoss(reader.status())) {
        v.GeneralProblem(src.dir, reader.status().message());
      } else {
        return io_error(reader.status());
      }
    } else {
      FileWalker walker(reader->get(), &v);
      absl::Status s = walker.Run();
      events = walker.total_events();
      if (absl::IsDataLoss(s)) {
        v.OnDataLoss(walker.failed_file(), s.message(), (*reader)->position());
      } else if (!s.ok()) {
        return io_error(s);
      }
      absl::Status u = CheckUnlistedFiles(fs, src, &v);
      if (absl::IsDataLoss(u)) {
        v.GeneralProblem(src.dir, u.message());
      } else if (!u.ok()) {
        return io_error(u);
      }
    }
  } else {
    // After a DataLoss the reader stays at the bad event, so the files after
    // the damaged one are read by a new reader.
    size_t first = 0;
    while (first < src.files.size()) {
      std::vector<std::string> rest(src.files.begin() + first,
                                    src.files.end());
      auto reader = Reader::OpenFiles(rest, o, fs);
      if (!reader.ok()) return io_error(reader.status());
      v.set_first_index(first);
      FileWalker walker(reader->get(), &v);
      absl::Status s = walker.Run();
      events += walker.total_events();
      if (s.ok()) break;
      if (!absl::IsDataLoss(s)) return io_error(s);
      v.OnDataLoss(walker.failed_file(), s.message(), (*reader)->position());
      uint64_t failed_number = walker.failed_file().number;
      if (failed_number == 0) failed_number = 1;  // before any file: the first
      first += static_cast<size_t>(failed_number);
    }
  }

  std::string summary =
      absl::StrCat("verified ", v.files(), " file", v.files() == 1 ? "" : "s",
                   ", ", events, " event", events == 1 ? "" : "s", ", ",
                   v.transactions(), " transaction",
                   v.transactions() == 1 ? "" : "s", ": ");
  if (v.problems() == 0) {
    absl::StrAppend(&summary, "OK\n");
  } else {
    absl::StrAppend(&summary, v.problems(), " problem",
                    v.problems() == 1 ? "" : "s", "\n");
  }
  Out(summary);
  return v.problems() == 0 ? kExitOk : kExitDamaged;
}

// ---------------------------------------------------------------------------

int Main(int argc, char** argv) {
  if (argc < 2) return UsageError("", "missing command");
  absl::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    if (argc > 2) {
      const char* usage = CommandUsage(argv[2]);
      if (usage == nullptr) {
        return UsageError("", absl::StrCat("unknown command '", argv[2], "'"));
      }
      Out(usage);
    } else {
      Out(kMainUsage);
    }
    return kExitOk;
  }
  if (CommandUsage(command) == nullptr) {
    return UsageError("", absl::StrCat("unknown command '", command, "'"));
  }
  Args args;
  args.command = std::string(command);
  std::string error;
  if (!ParseCommandArgs(argc, argv, &args, &error)) {
    return UsageError(command, error);
  }
  if (args.help) {
    Out(CommandUsage(command));
    return kExitOk;
  }
  io::FileSystem* fs = io::FileSystem::Default();
  int rc;
  if (command == "list") {
    rc = RunList(fs, args);
  } else if (command == "dump") {
    rc = RunDump(fs, args);
  } else {
    rc = RunVerify(fs, args);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fputs("binlogtool: error writing to stdout\n", stderr);
    return kExitUsage;
  }
  return rc;
}

}  // namespace
}  // namespace tools
}  // namespace binlog

int main(int argc, char** argv) { return binlog::tools::Main(argc, argv); }
