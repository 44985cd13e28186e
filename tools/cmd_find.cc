// binlogtool find: the file and position of the first transaction at or
// after a time, or of a GTID.

#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "tools/commands.h"
#include "tools/file_walker.h"

namespace binlog {
namespace tools {
namespace {

using Result = TransactionBoundaryParser::Result;

struct Found {
  bool found = false;
  bool ended = false;  // the transaction's last event was seen
  std::string file;
  std::string path;
  uint64_t pos = 0;
  uint64_t end_pos = 0;
  uint32_t timestamp = 0;
  std::string gtid;
};

class Finder final : public FileWalker::Observer {
 public:
  Finder(const Source* src, bool by_time, uint32_t time,
         const GtidSpec& gtid, Progress* progress)
      : src_(src),
        by_time_(by_time),
        time_(time),
        gtid_(gtid),
        progress_(progress) {}

  void set_walker(FileWalker* w) { walker_ = w; }
  const Found& found() const { return found_; }

  void OnEvent(const FileFacts& file, const Event& ev, Result r) override {
    progress_->Add(ev.header.event_size, file.name);
    const bool starts =
        r == Result::kStarted ||
        (r == Result::kUnexpected && file.open_transaction_start == ev.offset) ||
        (r == Result::kEnded && outside_);
    if (starts) {
      outside_ = false;
      start_ = ev.offset;
      start_time_ = ev.header.timestamp;
      start_gtid_.clear();
      start_gtid_matches_ = false;
      Gtid(ev);
      if (!found_.found &&
          (by_time_ ? ev.header.timestamp >= time_ : start_gtid_matches_)) {
        found_.found = true;
        found_.file = file.name;
        found_.path = PathOf(*src_, file.name, file.number);
        found_.pos = start_;
        found_.timestamp = start_time_;
        found_.gtid = start_gtid_;
      }
    }
    if (r == Result::kEnded || r == Result::kOutside) {
      if (r == Result::kEnded && found_.found && !found_.ended &&
          found_.pos == start_ && found_.file == file.name) {
        found_.ended = true;
        found_.end_pos = ev.end_offset;
        walker_->RequestStop();
      }
      outside_ = true;
    }
  }

  void OnFileEnd(const FileFacts&, bool) override { outside_ = true; }

 private:
  void Gtid(const Event& ev) {
    const uint8_t type = ev.header.type;
    if (IsMySqlGtidEventType(type)) {
      auto g = DecodeAnyMySqlGtidEvent(type, ev.body());
      if (!g.ok()) return;
      start_gtid_ = g->ToString();
      // The GTID spec names untagged GTIDs only: a tagged one is another.
      start_gtid_matches_ = gtid_.mysql && g->gno == gtid_.gno &&
                            g->uuid == gtid_.uuid && g->tag == gtid_.tag;
    } else if (type == kMariaGtidEvent) {
      auto g = DecodeMariaGtid(ev.body());
      if (!g.ok()) return;
      start_gtid_ = g->ToString(ev.header.server_id);
      start_gtid_matches_ = gtid_.maria && g->domain_id == gtid_.domain_id &&
                            ev.header.server_id == gtid_.server_id &&
                            g->seq_no == gtid_.seq_no;
    }
  }

  const Source* src_;
  bool by_time_;
  uint32_t time_;
  GtidSpec gtid_;
  Progress* progress_;
  FileWalker* walker_ = nullptr;
  bool outside_ = true;
  uint64_t start_ = 0;
  uint32_t start_time_ = 0;
  std::string start_gtid_;
  bool start_gtid_matches_ = false;
  Found found_;
};

}  // namespace

int RunFind(io::FileSystem* fs, const Args& args) {
  std::string error;
  OutputFormat format = OutputFormat::kText;
  std::string basename;
  absl::Time when;
  if (!GetFormat(args, &format, &error) ||
      !GetBasename(args, &basename, &error) ||
      !GetTime(args, "--datetime", &when, &error)) {
    return UsageError("find", error);
  }
  const bool by_time = args.Has("--datetime");
  if (by_time == args.Has("--gtid")) {
    return UsageError("find", "give exactly one of --datetime and --gtid");
  }
  GtidSpec gtid;
  if (!by_time && !ParseGtidSpec(args.Get("--gtid"), &gtid)) {
    return UsageError("find", absl::StrCat("--gtid must be UUID:N or UUID:TAG:N (MySQL) or "
                                           "D-S-N (MariaDB), not '",
                                           args.Get("--gtid"), "'"));
  }
  Source src;
  if (!ResolveSource(fs, args.paths, basename, &src, &error)) {
    return UsageError("find", error);
  }
  int64_t secs = by_time ? absl::ToUnixSeconds(when) : 0;
  uint32_t time = secs < 0 ? 0 : secs > 0xFFFFFFFFll ? 0xFFFFFFFFu
                                                      : static_cast<uint32_t>(secs);
  ReaderOptions o = BaseReaderOptions();
  o.checksum_mode = ChecksumMode::kReport;
  auto reader = OpenReader(fs, src, o);
  if (!reader.ok()) {
    ErrStatus("find", reader.status());
    return ExitForStatus(reader.status());
  }
  Progress progress("find", SourceBytes(fs, src), /*stdout_is_output=*/false);
  Finder finder(&src, by_time, time, gtid, &progress);
  FileWalker walker(reader->get(), &finder);
  finder.set_walker(&walker);
  absl::Status s = walker.Run();
  progress.Done();
  const Found& f = finder.found();
  if (f.found) {
    std::string out;
    RecordWriter w(format, &out);
    if (format == OutputFormat::kText) {
      out += Printable(f.file);
      absl::StrAppend(&out, " ", f.pos);
    } else {
      w.Str("file", f.file);
      w.Str("path", f.path);
      w.Num("pos", f.pos);
    }
    if (f.ended) w.Num("end_pos", f.end_pos);
    w.Num("timestamp", f.timestamp);
    w.Word("time", FormatUtcIso(f.timestamp));
    if (!f.gtid.empty()) w.Word("gtid", f.gtid);
    if (format == OutputFormat::kText) w.Str("path", f.path);
    w.End();
    Out(out);
  }
  if (!s.ok()) {
    ErrStatus("find", s);
    if (!absl::IsDataLoss(s) && !absl::IsUnimplemented(s)) return kExitUsage;
    return f.found ? kExitOk : ExitForStatus(s);
  }
  if (!f.found) {
    Err(by_time ? "binlogtool find: no transaction at or after that time\n"
                : "binlogtool find: no transaction with that GTID\n");
    return kExitNotFound;
  }
  return kExitOk;
}

}  // namespace tools
}  // namespace binlog
