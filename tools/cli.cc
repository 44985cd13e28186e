#include "tools/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "binlog/index_file.h"

namespace binlog {
namespace tools {

// ---------------------------------------------------------------------------
// Output

namespace {
constexpr size_t kOutFlushAt = 1 << 20;

bool WriteOut(std::string* buf) {
  bool ok = true;
  if (!buf->empty()) {
    ok = std::fwrite(buf->data(), 1, buf->size(), stdout) == buf->size();
    buf->clear();
  }
  return ok;
}
}  // namespace

std::string* OutBuffer() {
  static std::string* buf = [] {
    auto* s = new std::string;
    s->reserve(kOutFlushAt + (64 << 10));
    return s;
  }();
  return buf;
}

void OutMaybeFlush() {
  std::string* buf = OutBuffer();
  if (buf->size() >= kOutFlushAt) WriteOut(buf);
}

bool OutFlush() {
  bool ok = WriteOut(OutBuffer());
  return std::fflush(stdout) == 0 && ok && !std::ferror(stdout);
}

void Out(absl::string_view s) {
  OutBuffer()->append(s.data(), s.size());
  OutMaybeFlush();
}

void Err(absl::string_view s) {
  OutFlush();  // keep stdout and stderr in order on a terminal
  std::fwrite(s.data(), 1, s.size(), stderr);
}

void ErrStatus(absl::string_view command, const absl::Status& s) {
  Err(absl::StrCat("binlogtool ", command, ": ", Printable(s.message()),
                   "\n"));
}

namespace {
std::map<uint32_t, std::string>& MariaDbKeys() {
  static auto* keys = new std::map<uint32_t, std::string>();
  return *keys;
}
}  // namespace

ReaderOptions BaseReaderOptions() {
  ReaderOptions o;
  o.mariadb_binlog_keys = MariaDbKeys();
  return o;
}

void SetMariaDbKeys(std::map<uint32_t, std::string> keys) {
  MariaDbKeys() = std::move(keys);
}

int ExitForStatus(const absl::Status& s) {
  if (absl::IsDataLoss(s)) return kExitDamaged;
  if (absl::IsUnimplemented(s)) return kExitUnsupported;
  return kExitUsage;
}

int ReportUnreadTails(absl::string_view command,
                      const std::vector<TornTail>& tails) {
  int rc = kExitOk;
  for (const TornTail& t : tails) {
    if (!t.unread_data()) continue;
    ErrStatus(command, absl::DataLossError(absl::StrCat(
                           t.file_name, ": offset ", t.offset, ": ",
                           t.trailing_bytes, " bytes not read (", t.reason,
                           ")")));
    rc = kExitDamaged;
  }
  return rc;
}

// ---------------------------------------------------------------------------
// Command line

bool Args::Has(absl::string_view name) const {
  return flags.count(std::string(name)) > 0;
}

std::string Args::Get(absl::string_view name, absl::string_view def) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? std::string(def) : it->second;
}

bool ParseCommandArgs(int argc, char** argv, const std::vector<FlagSpec>& specs,
                      Args* args, std::string* error) {
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
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : specs) {
      if (name == s.name) spec = &s;
    }
    if (spec == nullptr) {
      *error = absl::StrCat("unknown flag '", a, "'");
      return false;
    }
    if (spec->takes_value && !has_value) {
      if (i + 1 >= argc) {
        *error = absl::StrCat("flag ", name, " needs a value");
        return false;
      }
      value = argv[++i];
    } else if (!spec->takes_value && has_value) {
      *error = absl::StrCat("flag ", name, " takes no value");
      return false;
    }
    args->flags[std::string(name)] = std::string(value);
  }
  return true;
}

bool GetFormat(const Args& args, OutputFormat* format, std::string* error) {
  if (!args.Has("--format")) return true;
  std::string v = args.Get("--format");
  if (v == "text") {
    *format = OutputFormat::kText;
  } else if (v == "jsonl") {
    *format = OutputFormat::kJsonl;
  } else {
    *error = absl::StrCat("--format must be text or jsonl, not '", v, "'");
    return false;
  }
  return true;
}

bool GetBasename(const Args& args, std::string* basename, std::string* error) {
  if (!args.Has("--basename")) return true;
  std::string v = args.Get("--basename");
  if (v.empty() || v.find('/') != std::string::npos) {
    *error = absl::StrCat("--basename must be a file base name, not '", v, "'");
    return false;
  }
  *basename = v;
  return true;
}

bool GetUint(const Args& args, absl::string_view name, uint64_t* value,
             std::string* error) {
  if (!args.Has(name)) return true;
  std::string v = args.Get(name);
  if (v.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(v[0])) ||
      !absl::SimpleAtoi(v, value)) {
    *error = absl::StrCat(name, " must be a non-negative integer, not '", v,
                          "'");
    return false;
  }
  return true;
}

bool GetSeconds(const Args& args, absl::string_view name, double* value,
                std::string* error) {
  if (!args.Has(name)) return true;
  std::string v = args.Get(name);
  double d;
  if (!absl::SimpleAtod(v, &d) || !(d >= 0) || d > 1e9) {
    *error = absl::StrCat(name, " must be a number of seconds, not '", v, "'");
    return false;
  }
  *value = d;
  return true;
}

bool ParseTimeArg(absl::string_view text, absl::Time* value) {
  if (absl::StartsWith(text, "@")) {
    int64_t s;
    if (!absl::SimpleAtoi(text.substr(1), &s)) return false;
    *value = absl::FromUnixSeconds(s);
    return true;
  }
  static const char* const kFormats[] = {
      "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ",
      "%Y-%m-%d",
  };
  for (const char* f : kFormats) {
    std::string err;
    if (absl::ParseTime(f, std::string(text), absl::UTCTimeZone(), value,
                        &err)) {
      return true;
    }
  }
  return false;
}

bool ParseGtidSpec(absl::string_view text, GtidSpec* spec) {
  *spec = GtidSpec();
  size_t colon = text.rfind(':');
  if (colon != absl::string_view::npos) {
    // UUID:N or UUID:TAG:N.
    absl::string_view source = text.substr(0, colon);
    size_t tag_colon = source.find(':');
    if (tag_colon != absl::string_view::npos) {
      absl::StatusOr<Tag> tag = Tag::Parse(source.substr(tag_colon + 1));
      if (!tag.ok() || tag->empty()) return false;
      spec->tag = *tag;
      source = source.substr(0, tag_colon);
    }
    absl::StatusOr<Uuid> uuid = Uuid::Parse(source);
    if (!uuid.ok()) return false;
    spec->uuid = *uuid;
    if (!absl::SimpleAtoi(text.substr(colon + 1), &spec->gno) ||
        spec->gno <= 0) {
      return false;
    }
    spec->mysql = true;
    return true;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(text, '-');
  if (parts.size() != 3) return false;
  if (!absl::SimpleAtoi(parts[0], &spec->domain_id) ||
      !absl::SimpleAtoi(parts[1], &spec->server_id) ||
      !absl::SimpleAtoi(parts[2], &spec->seq_no)) {
    return false;
  }
  for (absl::string_view p : parts) {
    if (p.empty() || p[0] == '+' || p[0] == '-') return false;
  }
  spec->maria = true;
  return true;
}

bool GetTime(const Args& args, absl::string_view name, absl::Time* value,
             std::string* error) {
  if (!args.Has(name)) return true;
  std::string v = args.Get(name);
  if (!ParseTimeArg(v, value)) {
    *error = absl::StrCat(name,
                          " must be 'YYYY-MM-DD HH:MM:SS' (UTC) or @SECONDS, "
                          "not '",
                          v, "'");
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Source

bool IsDirectory(io::FileSystem* fs, const std::string& path) {
  // The FileSystem has no stat-like call; listing succeeds for directories
  // only (ENOTDIR / ENOENT otherwise).
  return fs->ListDirectory(path).ok();
}

bool ResolveSource(io::FileSystem* fs, const std::vector<std::string>& paths,
                   const std::string& basename, Source* src,
                   std::string* error) {
  if (paths.empty()) {
    *error = "missing DIR or FILE argument";
    return false;
  }
  if (paths.size() == 1 && IsDirectory(fs, paths[0])) {
    src->is_dir = true;
    src->dir = paths[0];
    src->basename = basename;
    return true;
  }
  for (const auto& p : paths) {
    if (IsDirectory(fs, p)) {
      *error = absl::StrCat("'", p,
                            "' is a directory; give one directory or only "
                            "files");
      return false;
    }
  }
  if (!basename.empty()) {
    *error = "--basename applies to a directory argument only";
    return false;
  }
  src->files = paths;
  return true;
}

IndexState InspectIndex(io::FileSystem* fs, const std::string& dir,
                        const std::string& basename) {
  IndexState st;
  auto names = fs->ListDirectory(dir);
  if (!names.ok()) return st;
  std::string b = basename;
  if (b.empty()) {
    // The same choice as Reader::OpenDirectory: the one *.index file, else
    // the one basename of the numbered files.
    std::vector<std::string> indexes, bases;
    for (const auto& n : *names) {
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".index") == 0) {
        indexes.push_back(n.substr(0, n.size() - 6));
      }
      size_t dot = n.rfind('.');
      uint64_t num;
      if (dot != std::string::npos && dot > 0 &&
          ParseBinlogFileName(n.substr(0, dot), n, &num)) {
        std::string base = n.substr(0, dot);
        if (std::find(bases.begin(), bases.end(), base) == bases.end()) {
          bases.push_back(base);
        }
      }
    }
    if (indexes.size() == 1) {
      b = indexes[0];
    } else if (indexes.empty() && bases.size() == 1) {
      b = bases[0];
    } else {
      return st;
    }
  }
  st.basename = b;
  bool index = false, temp = false;
  for (const auto& n : *names) {
    if (n == IndexFileName(b)) index = true;
    if (n == IndexTempFileName(b)) temp = true;
  }
  st.pending_rename = temp && !index;
  return st;
}

std::string PendingIndexMessage(const std::string& dir,
                                const std::string& basename) {
  return absl::StrCat(
      dir, ": ", IndexTempFileName(basename), " exists without ",
      IndexFileName(basename),
      ": an index update is in progress or was interrupted. Not reading the "
      "directory: binlog::Reader::OpenDirectory would complete the update "
      "(rename the file), and an inspection tool does not write. Retry, or "
      "give the binlog files as arguments");
}

absl::StatusOr<std::unique_ptr<Reader>> OpenReader(io::FileSystem* fs,
                                                   const Source& src,
                                                   const ReaderOptions& o) {
  if (src.is_dir) {
    IndexState st = InspectIndex(fs, src.dir, src.basename);
    if (st.pending_rename) {
      return absl::FailedPreconditionError(
          PendingIndexMessage(src.dir, st.basename));
    }
    return Reader::OpenDirectory(src.dir, src.basename, o, fs);
  }
  return Reader::OpenFiles(src.files, o, fs);
}

std::string PathOf(const Source& src, const std::string& name,
                   uint64_t number, size_t first_index) {
  if (src.is_dir) return io::JoinPath(src.dir, name);
  size_t i = first_index + static_cast<size_t>(number) - 1;
  if (number >= 1 && i < src.files.size()) return src.files[i];
  return name;
}

uint64_t SourceBytes(io::FileSystem* fs, const Source& src) {
  uint64_t total = 0;
  if (!src.is_dir) {
    for (const auto& f : src.files) {
      auto size = fs->FileSize(f);
      if (size.ok()) total += *size;
    }
    return total;
  }
  auto names = fs->ListDirectory(src.dir);
  if (!names.ok()) return 0;
  for (const auto& n : *names) {
    size_t dot = n.rfind('.');
    if (dot == std::string::npos || n.size() - dot - 1 < 6) continue;
    bool digits = true;
    for (size_t i = dot + 1; i < n.size(); ++i) {
      digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(n[i]));
    }
    if (!digits) continue;
    if (!src.basename.empty() && n.substr(0, dot) != src.basename) continue;
    auto size = fs->FileSize(io::JoinPath(src.dir, n));
    if (size.ok()) total += *size;
  }
  return total;
}

absl::StatusOr<std::vector<uint64_t>> ReadIndexReadOnly(
    io::FileSystem* fs, const std::string& dir, const std::string& basename) {
  std::string path = io::JoinPath(dir, IndexFileName(basename));
  auto content = ReadSmallFile(fs, path);
  if (!content.ok()) return content.status();
  return ParseIndex(*content, dir, basename, path);
}

// The number of the last file `src` reads: for files, their count (the
// reader numbers them 1..N); for a directory, the highest number in its
// index (or among its numbered files).
absl::StatusOr<uint64_t> LastFileNumber(io::FileSystem* fs,
                                        const Source& src) {
  if (!src.is_dir) return static_cast<uint64_t>(src.files.size());
  auto names = fs->ListDirectory(src.dir);
  if (!names.ok()) return names.status();
  std::string basename = src.basename;
  if (basename.empty()) {
    for (const auto& n : *names) {
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".index") == 0) {
        basename = n.substr(0, n.size() - 6);
        break;
      }
    }
  }
  if (!basename.empty()) {
    auto listed = ReadIndexReadOnly(fs, src.dir, basename);
    if (listed.ok() && !listed->empty()) {
      uint64_t last = 0;
      for (uint64_t n : *listed) last = std::max(last, n);
      return last;
    }
  }
  uint64_t last = 0;
  for (const auto& n : *names) {
    size_t dot = n.rfind('.');
    if (dot == std::string::npos) continue;
    uint64_t number;
    if (ParseBinlogFileName(n.substr(0, dot), n, &number) &&
        (basename.empty() || n.substr(0, dot) == basename)) {
      last = std::max(last, number);
    }
  }
  return last;
}

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

// Readers expand Transaction_payload events into their inner events by
// default (ReaderOptions::payloads = kDecoded); --raw and the commands that
// count payloads as stored ask for them as written.
void SetRawPayloads(ReaderOptions* o) { o->payloads = PayloadMode::kRaw; }

// ---------------------------------------------------------------------------
// Progress

Progress::Progress(absl::string_view command, uint64_t total_bytes,
                   bool stdout_is_output)
    : command_(command), total_(total_bytes) {
  const char* mode = std::getenv("BINLOGTOOL_PROGRESS");
  absl::string_view m = mode != nullptr ? mode : "auto";
  if (m == "always") {
    enabled_ = true;
  } else if (m == "never") {
    enabled_ = false;
  } else {
    enabled_ = isatty(STDERR_FILENO) &&
               !(stdout_is_output && isatty(STDOUT_FILENO));
  }
  delay_ = absl::Seconds(1);
  if (const char* d = std::getenv("BINLOGTOOL_PROGRESS_DELAY_MS")) {
    int64_t ms;
    if (absl::SimpleAtoi(d, &ms) && ms >= 0) delay_ = absl::Milliseconds(ms);
  }
  start_ = absl::Now();
  last_ = absl::InfinitePast();
}

Progress::~Progress() { Done(); }

void Progress::Tick(absl::string_view file) {
  absl::Time now = absl::Now();
  if (now - start_ < delay_ || now - last_ < absl::Milliseconds(250)) return;
  last_ = now;
  double secs = absl::ToDoubleSeconds(now - start_);
  double mb = static_cast<double>(done_) / 1e6;
  std::string line = absl::StrFormat("\r%s: ", command_);
  if (total_ > 0 && done_ <= total_) {
    absl::StrAppendFormat(&line, "%3d%% ",
                          static_cast<int>(100.0 * static_cast<double>(done_) /
                                           static_cast<double>(total_)));
  }
  absl::StrAppendFormat(&line, "%.1f", mb);
  if (total_ > 0) {
    absl::StrAppendFormat(&line, " of %.1f", static_cast<double>(total_) / 1e6);
  }
  absl::StrAppendFormat(&line, " MB, %.0f MB/s  %s\033[K",
                        secs > 0 ? mb / secs : 0.0, Printable(file));
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::Done() {
  if (!shown_) return;
  shown_ = false;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace tools
}  // namespace binlog
