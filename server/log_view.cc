// The server's sources of the log. See server/log_view.h.

#include "server/log_view.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "io/file_system.h"

namespace binlog {
namespace server {

absl::StatusOr<FileScan> ScanLogFile(const std::string& path, uint64_t pos, uint64_t limit) {
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  ro.checksum_mode = ChecksumMode::kVerify;
  auto reader = Reader::OpenFiles({path}, ro);
  if (!reader.ok()) return reader.status();
  FileScan scan;
  Event ev;
  absl::Status s = (*reader)->Next(&ev);
  if (!s.ok()) return s;
  scan.fde = std::string(ev.data);
  if (ev.end_offset > limit) return scan;  // nothing readable yet: end 0
  scan.end = ev.end_offset;
  scan.boundary = pos <= kMagicSize || pos == ev.end_offset;
  EventBatch batch;
  BatchOptions bo;  // boundaries only: the dump verifies what it sends
  bool done = false;
  while (!done && (s = (*reader)->NextBatch(&batch, bo)).ok()) {
    for (size_t i = 0; i < batch.size(); ++i) {
      const uint64_t at = batch.offset + batch.starts[i];
      const uint64_t end = at + batch.event(i).size();
      // Past what the view's readers may read (a live view's published
      // end): the bytes on disk there do not count.
      if (end > limit) {
        done = true;
        break;
      }
      if (at == pos) scan.boundary = true;
      scan.end = end;
    }
    if (scan.end == pos) scan.boundary = true;
    // Past a start position inside the file: whether it is a boundary is
    // known, and it is not past the end.
    if (pos > kMagicSize && scan.end > pos) break;
  }
  if (!done && !s.ok() && !absl::IsOutOfRange(s) && !absl::IsDataLoss(s)) return s;
  return scan;
}

namespace {

// The UUID of a log's GTIDs when they have one only (zero otherwise): the
// UUID whose GTIDs a replica may not have more of than the log.
Uuid SoleUuid(const GtidSet& executed) {
  std::vector<Uuid> u = executed.Uuids();
  return u.size() == 1 ? u[0] : Uuid();
}

// The state of the log in `dir` read from its files: the GTID state of
// ReadAtRestGtidState; closed files' sizes; the newest file's end of
// complete events (it may be preallocated past them): one scan, of one
// file.
absl::StatusOr<LogViewState> AtRestState(const std::string& dir, const std::string& basename,
                                         LogFlavor flavor) {
  auto st = ReadAtRestGtidState(dir, basename, flavor);
  if (!st.ok()) return st.status();
  LogViewState out;
  out.executed = std::move(st->executed);
  out.purged = std::move(st->purged);
  out.maria_state = std::move(st->maria_state);
  for (size_t i = 0; i < st->files.size(); ++i) {
    const uint64_t n = st->files[i];
    const std::string name = BinlogFileName(basename, n);
    const std::string path = io::JoinPath(dir, name);
    uint64_t size = 0;
    if (i + 1 < st->files.size()) {
      auto sz = io::FileSystem::Default()->FileSize(path);
      size = sz.ok() ? *sz : 0;
    } else {
      auto scan = ScanLogFile(path, 0);
      size = scan.ok() ? scan->end : 0;
      out.current_file = name;
      out.current_position = size;
    }
    out.files.emplace_back(name, size);
  }
  return out;
}

class AtRestView final : public LogView {
 public:
  AtRestView(std::string dir, std::string basename)
      : dir_(std::move(dir)), basename_(std::move(basename)) {}
  bool live() const override { return false; }
  absl::StatusOr<std::vector<uint64_t>> Files() override {
    return ReadIndex(io::FileSystem::Default(), dir_, basename_);
  }
  absl::StatusOr<std::unique_ptr<Reader>> NewReader(const ReaderOptions& options) override {
    return Reader::OpenDirectory(dir_, basename_, options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(
      const GtidSet& have, const ReaderOptions& options) override {
    auto st = ReadAtRestGtidState(dir_, basename_, LogFlavor::kMySQL);
    if (!st.ok()) return st.status();
    return OpenGtidReaderAtRest(dir_, basename_, *st, have, SoleUuid(st->executed), options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options) override {
    auto st = ReadAtRestGtidState(dir_, basename_, LogFlavor::kMariaDB);
    if (!st.ok()) return st.status();
    return OpenMariaGtidReaderAtRest(dir_, basename_, *st, position, options);
  }
  absl::StatusOr<LogViewState> State(LogFlavor flavor) override {
    return AtRestState(dir_, basename_, flavor);
  }
  uint64_t ReadableEnd(uint64_t /*file*/) override { return kNoReadableLimit; }

 private:
  const std::string dir_;
  const std::string basename_;
};

class BinlogView final : public LogView {
 public:
  explicit BinlogView(Binlog* log) : log_(log) {}
  bool live() const override { return true; }
  absl::StatusOr<std::vector<uint64_t>> Files() override {
    std::vector<uint64_t> out;
    for (const LogFileInfo& f : log_->ListFiles()) out.push_back(f.number);
    return out;
  }
  absl::StatusOr<std::unique_ptr<Reader>> NewReader(const ReaderOptions& options) override {
    return log_->NewReader(options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(
      const GtidSet& have, const ReaderOptions& options) override {
    return log_->NewGtidReader(have, options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options) override {
    return log_->NewMariaGtidReader(position, options);
  }
  // As the files at rest report it (the sizes on disk of closed files,
  // encrypted ones with their header, as SHOW BINARY LOGS shows them).
  absl::StatusOr<LogViewState> State(LogFlavor flavor) override {
    return AtRestState(log_->dir(), log_->basename(), flavor);
  }
  // ListFiles' sizes: the active file's published end.
  uint64_t ReadableEnd(uint64_t file) override {
    for (const LogFileInfo& f : log_->ListFiles()) {
      if (f.number == file) return f.size;
    }
    return 0;
  }

 private:
  Binlog* const log_;
};

class MirrorView final : public LogView {
 public:
  explicit MirrorView(MirrorLog* mirror) : mirror_(mirror) {}
  bool live() const override { return true; }
  absl::StatusOr<std::vector<uint64_t>> Files() override {
    std::vector<uint64_t> out;
    for (const auto& f : mirror_->published_state().files) out.push_back(f.number);
    return out;
  }
  absl::StatusOr<std::unique_ptr<Reader>> NewReader(const ReaderOptions& options) override {
    return mirror_->NewReader(options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(
      const GtidSet& have, const ReaderOptions& options) override {
    return mirror_->NewGtidReader(have, SoleUuid(mirror_->published_state().gtids), options);
  }
  absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options) override {
    return mirror_->NewMariaGtidReader(position, options);
  }
  // The copy's published state: what a downstream replica can read now.
  // gtid_purged: the first file's Previous_gtids.
  absl::StatusOr<LogViewState> State(LogFlavor /*flavor: the copy's own*/) override {
    MirrorLog::PublishedState p = mirror_->published_state();
    LogViewState out;
    out.executed = std::move(p.gtids);
    out.maria_state = std::move(p.maria_gtids);
    for (const auto& f : p.files) out.files.emplace_back(f.name, f.size);
    out.current_file = p.end.file;
    out.current_position = p.end.pos;
    out.purged = std::move(p.purged);
    return out;
  }
  // The published state's sizes: the last file's durable published end.
  uint64_t ReadableEnd(uint64_t file) override {
    for (const auto& f : mirror_->published_state().files) {
      if (f.number == file) return f.size;
    }
    return 0;
  }

 private:
  MirrorLog* const mirror_;
};

}  // namespace

std::unique_ptr<LogView> NewAtRestView(const std::string& dir, const std::string& basename) {
  return std::make_unique<AtRestView>(dir, basename);
}
std::unique_ptr<LogView> NewBinlogView(Binlog* log) { return std::make_unique<BinlogView>(log); }
std::unique_ptr<LogView> NewMirrorView(MirrorLog* mirror) {
  return std::make_unique<MirrorView>(mirror);
}

}  // namespace server
}  // namespace binlog
