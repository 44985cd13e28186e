// binlogtool verify: structure, log_pos chain, checksums, transaction
// boundaries, torn tails, index consistency, the GTID index files beside
// the binlog files.

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "tools/commands.h"
#include "binlog/statement_events.h"
#include "tools/file_walker.h"

namespace binlog {
namespace tools {
namespace {

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

class Verifier final : public FileWalker::Observer {
 public:
  Verifier(io::FileSystem* fs, const Source* src, Progress* progress)
      : fs_(fs), src_(src), progress_(progress) {}

  // The reader currently walked was opened on src->files[first_index...].
  void set_first_index(size_t i) { first_index_ = i; }

  void OnEvent(const FileFacts& file, const Event& ev,
               TransactionBoundaryParser::Result r) override {
    progress_->Add(ev.header.event_size, file.name);
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
    if (ev.header.type == kIncidentEvent) {
      // MySQL's and MariaDB's readers reject an Incident event whose
      // number is not one they define (1, LOST_EVENTS) as invalid.
      auto incident = DecodeIncident(ev.body());
      if (!incident.ok()) {
        Problem(file, ev.offset, incident.status().message());
      } else if (incident->number != kIncidentLostEvents) {
        Problem(file, ev.offset,
                absl::StrCat("Incident event with invalid incident number ",
                             incident->number, " (servers define only 1, "
                             "LOST_EVENTS)"));
      }
    }
    if (r == TransactionBoundaryParser::Result::kUnexpected &&
        ev.header.type >= kPreGaWriteRowsEvent &&
        ev.header.type <= kPreGaDeleteRowsEvent) {
      Problem(file, ev.offset,
              absl::StrCat(EventTypeName(ev.header.type),
                           ": unsupported: a row event of the pre-GA MySQL "
                           "5.1 format (types 20-22, MySQL 5.1.0-5.1.15), "
                           "which the library does not decode or place in "
                           "transactions"));
    } else if (r == TransactionBoundaryParser::Result::kUnexpected) {
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

  // An Unimplemented from the reader: a file (or the rest of one) in a
  // format the library does not read. Not a problem of the data; the
  // exit status says so (kExitUnsupported).
  void OnUnsupported(const FileFacts& file, absl::string_view message,
                     uint64_t reader_position) {
    ++files_;
    ++unsupported_;
    transactions_ += file.transactions;
    uint64_t offset = reader_position;
    absl::string_view what = message;
    SplitReaderError(message, file.name, &offset, &what);
    Out(Printable(absl::StrCat(Where(file, offset), ": unsupported: ", what)) +
        "\n");
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

  // A GTID index file (derived data) that does not check out against its
  // binlog file: a finding of its own (kExitBadIndex), not damage to the
  // log.
  void BadIndex(absl::string_view path, absl::string_view what) {
    ++bad_indexes_;
    Out(Printable(absl::StrCat(path, ": bad GTID index: ", what,
                               " (derived data: GTID readers check it and rebuild what does "
                               "not check out; removing it loses nothing)")) +
        "\n");
  }

  // A GTID index file of an older format version: GTID readers rebuild
  // it. A note, not a bad index: the exit status does not change.
  void OlderIndex(absl::string_view path, absl::string_view what) {
    Out(Printable(absl::StrCat(path, ": note: GTID index of ", what,
                               ": GTID readers rebuild it (derived data; removing it "
                               "loses nothing)")) +
        "\n");
  }

  uint64_t files() const { return files_; }
  uint64_t bad_indexes() const { return bad_indexes_; }
  uint64_t transactions() const { return transactions_; }
  uint64_t problems() const { return problems_; }
  uint64_t unsupported() const { return unsupported_; }

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
  Progress* progress_;
  size_t first_index_ = 0;
  uint64_t files_ = 0;
  uint64_t transactions_ = 0;
  uint64_t problems_ = 0;
  uint64_t unsupported_ = 0;
  uint64_t bad_indexes_ = 0;
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
  auto listed = ReadIndexReadOnly(fs, src.dir, basename);
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

// Checks the GTID index beside each of `paths` that has one
// (VerifyGtidIndexFile, binlog/gtid_reader.h). An index that cannot be checked
// because its binlog file does not read is a warning (the file's own
// finding is reported by the walk), one of an older format version a note;
// I/O errors are returned.
absl::Status CheckGtidIndexes(io::FileSystem* fs, const std::vector<std::string>& paths,
                              const ReaderOptions& o, Verifier* v) {
  for (const std::string& p : paths) {
    const std::string ipath = GtidIndexFilePath(p);
    absl::StatusOr<bool> exists = fs->Exists(ipath);
    if (!exists.ok()) return exists.status();
    if (!*exists) continue;
    absl::StatusOr<GtidIndexCheck> r = VerifyGtidIndexFile(fs, p, o);
    if (absl::IsNotFound(r.status())) continue;  // removed meanwhile
    if (absl::IsDataLoss(r.status()) || absl::IsUnimplemented(r.status())) {
      v->GeneralWarning(ipath, absl::StrCat("GTID index not checked: its binlog file: ",
                                            r.status().message()));
      continue;
    }
    if (!r.ok()) return r.status();
    switch (r->verdict) {
      case GtidIndexCheck::Verdict::kChecksOut:
        break;
      case GtidIndexCheck::Verdict::kOlderVersion:
        v->OlderIndex(ipath, r->what);
        break;
      case GtidIndexCheck::Verdict::kBad:
        v->BadIndex(ipath, r->what);
        break;
    }
  }
  return absl::OkStatus();
}

// The binlog files of a DIR source: those its index lists.
std::vector<std::string> ListedPaths(io::FileSystem* fs, const Source& src) {
  std::vector<std::string> out;
  auto names = fs->ListDirectory(src.dir);
  if (!names.ok()) return out;
  std::string basename = src.basename;
  if (basename.empty()) {
    for (const auto& n : *names) {
      if (absl::EndsWith(n, ".index") && n.size() > 6) {
        if (!basename.empty()) return out;  // ambiguous: the reader refused it
        basename = n.substr(0, n.size() - 6);
      }
    }
  }
  if (basename.empty()) return out;
  auto listed = ReadIndexReadOnly(fs, src.dir, basename);
  if (!listed.ok()) return out;
  for (uint64_t n : *listed) out.push_back(io::JoinPath(src.dir, BinlogFileName(basename, n)));
  return out;
}

}  // namespace

int RunVerify(io::FileSystem* fs, const Args& args) {
  Source src;
  std::string error;
  std::string basename;
  if (!GetBasename(args, &basename, &error) ||
      !ResolveSource(fs, args.paths, basename, &src, &error)) {
    return UsageError("verify", error);
  }
  ReaderOptions o = BaseReaderOptions();
  o.checksum_mode = ChecksumMode::kReport;
  o.check_log_pos = true;
  Progress progress("verify", SourceBytes(fs, src), /*stdout_is_output=*/false);
  Verifier v(fs, &src, &progress);
  uint64_t events = 0;

  auto io_error = [](const absl::Status& s) {
    ErrStatus("verify", s);
    return kExitUsage;
  };

  if (src.is_dir) {
    // An interrupted index update is a finding; the files the pending index
    // lists are then verified as a list of files (without completing the
    // update: see IndexState in cli.h).
    IndexState st = InspectIndex(fs, src.dir, src.basename);
    if (st.pending_rename) {
      v.GeneralProblem(src.dir, absl::StrCat(IndexTempFileName(st.basename),
                                             " exists without ",
                                             IndexFileName(st.basename),
                                             ": an index update was "
                                             "interrupted (or is running)"));
      std::string tmp = io::JoinPath(src.dir, IndexTempFileName(st.basename));
      auto content = ReadSmallFile(fs, tmp);
      auto numbers = content.ok() ? ParseIndex(*content, src.dir, st.basename,
                                               tmp)
                                  : absl::StatusOr<std::vector<uint64_t>>(
                                        content.status());
      if (!numbers.ok()) {
        v.GeneralProblem(tmp, numbers.status().message());
        src.files.clear();
      } else {
        for (uint64_t n : *numbers) {
          src.files.push_back(
              io::JoinPath(src.dir, BinlogFileName(st.basename, n)));
        }
      }
      src.is_dir = false;
    }
  }
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
      } else if (absl::IsUnimplemented(s)) {
        v.OnUnsupported(walker.failed_file(), s.message(),
                        (*reader)->position());
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
      if (absl::IsUnimplemented(s)) {
        v.OnUnsupported(walker.failed_file(), s.message(),
                        (*reader)->position());
      } else if (absl::IsDataLoss(s)) {
        v.OnDataLoss(walker.failed_file(), s.message(), (*reader)->position());
      } else {
        return io_error(s);
      }
      uint64_t failed_number = walker.failed_file().number;
      if (failed_number == 0) failed_number = 1;  // before any file: the first
      first += static_cast<size_t>(failed_number);
    }
  }

  {
    absl::Status g = CheckGtidIndexes(fs, src.is_dir ? ListedPaths(fs, src) : src.files,
                                      BaseReaderOptions(), &v);
    if (!g.ok()) return io_error(g);
  }

  progress.Done();
  std::string summary =
      absl::StrCat("verified ", v.files(), " file", v.files() == 1 ? "" : "s",
                   ", ", events, " event", events == 1 ? "" : "s", ", ",
                   v.transactions(), " transaction",
                   v.transactions() == 1 ? "" : "s", ": ");
  if (v.problems() == 0 && v.unsupported() == 0) {
    absl::StrAppend(&summary, "OK\n");
  } else if (v.problems() == 0) {
    absl::StrAppend(&summary, "unsupported format\n");
  } else {
    absl::StrAppend(&summary, v.problems(), " problem",
                    v.problems() == 1 ? "" : "s", "\n");
  }
  if (v.bad_indexes() != 0) {
    // The binlog files' verdict, then the derived files'.
    summary.pop_back();
    absl::StrAppend(&summary, "; ", v.bad_indexes(), " bad GTID index file",
                    v.bad_indexes() == 1 ? "" : "s", "\n");
  }
  Out(summary);
  if (v.problems() != 0) return kExitDamaged;
  if (v.bad_indexes() != 0) return kExitBadIndex;
  return v.unsupported() == 0 ? kExitOk : kExitUnsupported;
}

}  // namespace tools
}  // namespace binlog
