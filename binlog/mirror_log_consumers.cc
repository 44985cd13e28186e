// The side of a MirrorLog (binlog/mirror_log.h) that its consumers use:
// tailing and GTID readers of the copy, the published state they start
// from, and retention (PurgeTo, with its `<basename>.purge` record, and
// ListFileFacts). The state is in binlog/mirror_log_state.h; Open, Append,
// Sync, Close and the failover switch are in mirror_log.cc.

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "binlog/gtid_reader.h"
#include "binlog/gtid_scan.h"
#include "binlog/live_log.h"
#include "binlog/log_directory.h"
#include "binlog/mirror_log.h"
#include "binlog/mirror_log_state.h"
#include "binlog/reader.h"
#include "binlog/retention.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace mirror_internal {

// `<basename>.purge`: the copy files a purge removes (first and last
// number), written durably before the purge rewrites the index and removed
// once the files are gone. Open removes the unindexed files it names (a
// purge a crash interrupted), and no other file below the first indexed
// one (a directory seeded with older files keeps them).
constexpr char kPurgeHeader[] = "binlog-mirror-purge 1";

std::string PurgeRecordPath(const std::string& dir, const std::string& basename) {
  return io::JoinPath(dir, absl::StrCat(basename, ".purge"));
}

absl::Status WritePurgeRecord(io::FileSystem* fs, io::Directory* dir_handle,
                              const std::string& path, uint64_t first, uint64_t last,
                              uint32_t file_mode) {
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          fs->OpenWritable(path, io::OpenMode::kCreateOrTruncate, file_mode));
  absl::Status s = f->Write(0, absl::StrCat(kPurgeHeader, "\n", first, " ", last, "\n"));
  if (s.ok()) s = f->Sync();
  absl::Status cs = f->Close();
  if (s.ok()) s = cs;
  if (s.ok()) s = dir_handle->Sync();
  return s;
}

// The range a purge record names; false if there is none or it is not
// whole (a crash while it was written: the index was not rewritten yet).
absl::StatusOr<bool> ReadPurgeRecord(io::FileSystem* fs, const std::string& path,
                                     uint64_t* first, uint64_t* last) {
  absl::StatusOr<std::string> text = ReadSmallFile(fs, path, 4096);
  if (absl::IsNotFound(text.status())) return false;
  if (!text.ok()) return text.status();
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
  if (lines.size() != 3 || lines[0] != kPurgeHeader || !lines[2].empty()) return false;
  std::vector<absl::string_view> f = absl::StrSplit(lines[1], ' ');
  return f.size() == 2 && absl::SimpleAtoi(f[0], first) && absl::SimpleAtoi(f[1], last) &&
         *first <= *last;
}

}  // namespace mirror_internal

using mirror_internal::IsMariaDbFde;
using mirror_internal::PurgeRecordPath;
using mirror_internal::WritePurgeRecord;

absl::StatusOr<std::unique_ptr<Reader>> MirrorLog::NewReader(
    const ReaderOptions& options) const {
  sync::MutexLock l(&st_->mu);
  return std::unique_ptr<Reader>(new Reader(live_, options, st_->fs));
}

absl::StatusOr<std::unique_ptr<GtidReader>> MirrorLog::NewGtidReader(
    const GtidSet& have, const Uuid& server_uuid, const ReaderOptions& options) const {
  const std::vector<uint64_t> files = live_->Files();
  GtidSet executed;
  {
    sync::MutexLock l(&st_->published_mu);
    executed = st_->published_gtids;
  }
  if (files.empty()) return absl::FailedPreconditionError("the copy holds no file yet");
  BINLOG_ASSIGN_OR_RETURN(
      GtidSet purged,
      internal::FileGtids(st_->fs, io::JoinPath(dir_, BinlogFileName(basename_, files.front())),
                          /*with_transactions=*/false));
  if (!purged.IsSubsetOf(have)) {
    purged.Subtract(have);
    return absl::FailedPreconditionError(absl::StrCat(
        "purged: the replica lacks GTIDs that were purged from the copy: ", purged.ToString()));
  }
  if (!server_uuid.IsZero()) {
    GtidSet own;
    for (const GnoInterval& iv : have.Intervals(server_uuid)) {
      own.AddInterval(server_uuid, iv.first, iv.last);
    }
    if (!own.IsSubsetOf(executed)) {
      own.Subtract(executed);
      return absl::FailedPreconditionError(absl::StrCat(
          "ahead: the replica has GTIDs of the source that the copy never had: ",
          own.ToString()));
    }
  }
  BINLOG_ASSIGN_OR_RETURN(uint64_t start,
                          internal::GtidStartFile(st_->fs, dir_, basename_, files, have));
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  auto g = std::make_unique<GtidReader>(std::move(reader), have);
  UseGtidIndex(g.get(), start, files, ro, LogFlavor::kMySQL, have, MariaGtidState());
  return g;
}

void MirrorLog::UseGtidIndex(GtidReader* g, uint64_t start, const std::vector<uint64_t>& files,
                             const ReaderOptions& ro, LogFlavor flavor, const GtidSet& have,
                             const MariaGtidState& position) const {
  // Files before the last are complete: their index is built (and
  // written) here when missing, as Binlog's GTID readers do.
  const bool closed = !files.empty() && start < files.back();
  internal::GtidSeek seek = internal::PlanGtidSeek(
      st_->fs, io::JoinPath(dir_, BinlogFileName(basename_, start)), closed, flavor, ro, have,
      position);
  internal::ApplyGtidSeek(
      g, start, seek,
      [live = live_, fs = st_->fs, ro](uint64_t file,
                                       uint64_t offset) -> absl::StatusOr<std::unique_ptr<Reader>> {
        ReaderOptions o = ro;
        o.start_file = file;
        o.start_offset = offset;
        return std::unique_ptr<Reader>(new Reader(live, o, fs));
      });
}

absl::StatusOr<std::unique_ptr<GtidReader>> MirrorLog::NewMariaGtidReader(
    const MariaGtidState& position, const ReaderOptions& options) const {
  const std::vector<uint64_t> files = live_->Files();
  MariaGtidState state;
  {
    sync::MutexLock l(&st_->published_mu);
    state = st_->published_maria;
  }
  if (files.empty()) return absl::FailedPreconditionError("the copy holds no file yet");
  for (const MariaGtidListEntry& g : position.Positions()) {
    if (!state.Contains(g.domain_id, g.server_id, g.seq_no)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ahead: the replica's GTID position ", g.domain_id, "-", g.server_id, "-", g.seq_no,
          " is not in the copy's binlog state (", state.StateToString(), ")"));
    }
  }
  BINLOG_ASSIGN_OR_RETURN(
      uint64_t start, internal::MariaGtidStartFile(st_->fs, dir_, basename_, files, position));
  if (start == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "purged: the copy purged transactions the replica at ", position.ToString(),
        " lacks"));
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  auto g = std::make_unique<GtidReader>(std::move(reader), position);
  UseGtidIndex(g.get(), start, files, ro, LogFlavor::kMariaDB, GtidSet(), position);
  return g;
}

absl::StatusOr<MirrorLog::PurgeResult> MirrorLog::PurgeTo(const std::string& file) {
  State* m = st_.get();
  // One purge at a time (its record); Close waits for it. The removals
  // and the directory's fsync run without `mu`: appends, syncs and
  // readers' calls do not wait for them.
  sync::MutexLock purging(&m->purge_mu);
  PurgeResult result;
  std::vector<uint64_t> victims;
  const std::string purge_record = PurgeRecordPath(dir_, basename_);
  {
    sync::MutexLock l(&m->mu);
    BINLOG_RETURN_IF_ERROR(CheckUsable());
    uint64_t target = 0;
    if (!ParseBinlogFileName(basename_, file, &target) ||
        !std::binary_search(m->files.begin(), m->files.end(), target)) {
      return absl::NotFoundError(absl::StrCat(file, " is not a file of the copy"));
    }
    uint64_t pinned = 0;
    // Takes them from the readers' list first: a reader cannot open one
    // from here on, and one a reader holds stops the purge.
    victims = live_->TakePurgeable(target, &pinned);
    if (pinned != 0) {
      result.kept_file = BinlogFileName(basename_, pinned);
      result.kept_reason = "open by a reader";
    }
    if (victims.empty()) return result;
    std::vector<uint64_t> left(m->files.begin() + static_cast<long>(victims.size()),
                               m->files.end());
    // What a crash from here leaves for Open to finish, durable first.
    absl::Status s = WritePurgeRecord(m->fs, m->dir_handle.get(), purge_record, victims.front(),
                                      victims.back(), options_.file_mode);
    if (!s.ok()) {
      live_->RestoreFront(victims);
      m->fs->Remove(purge_record).IgnoreError();
      return s;
    }
    s = WriteIndex(m->fs, m->dir_handle.get(), dir_, basename_, left, options_.file_mode);
    if (!s.ok()) {
      live_->RestoreFront(victims);
      return Poison(s);
    }
    m->files = std::move(left);
  }
  // The index no longer names them: a crash from here leaves files Open
  // removes.
  absl::Status first_error;
  for (uint64_t n : victims) {
    const std::string name = BinlogFileName(basename_, n);
    // Its GTID index first, never outliving its file (a failure is the
    // purge's error, the file is purged all the same).
    absl::Status ir = internal::RemoveGtidIndex(m->fs, io::JoinPath(dir_, name));
    if (!ir.ok() && first_error.ok()) first_error = ir;
    absl::Status r = m->fs->Remove(io::JoinPath(dir_, name));
    if (r.ok()) {
      result.purged.push_back(name);
    } else if (first_error.ok()) {
      first_error = r;
    }
  }
  absl::Status ds = m->dir_handle->Sync();
  // Done once the removals are durable (else Open finishes them).
  if (first_error.ok() && ds.ok()) ds = m->fs->Remove(purge_record);
  {
    sync::MutexLock l(&m->mu);
    m->stats.files_purged += result.purged.size();
  }
  if (!first_error.ok()) return first_error;
  if (!ds.ok()) return ds;
  return result;
}

absl::StatusOr<std::vector<MirrorLog::FileFacts>> MirrorLog::ListFileFacts() const {
  const std::vector<uint64_t> files = live_->Files();
  std::vector<FileFacts> out;
  for (size_t i = 0; i < files.size(); ++i) {
    FileFacts f;
    f.number = files[i];
    f.name = BinlogFileName(basename_, files[i]);
    const std::string path = io::JoinPath(dir_, f.name);
    auto size = st_->fs->FileSize(path);
    if (!size.ok()) {
      if (absl::IsNotFound(size.status())) continue;  // purged meanwhile
      return size.status();
    }
    f.size = *size;
    if (i + 1 < files.size()) {
      // A closed file: the time the copy started the next one (its
      // modification time, set then), never a time the source sent.
      auto closed = st_->fs->ModificationTime(path);
      if (!closed.ok()) {
        if (absl::IsNotFound(closed.status())) continue;  // purged meanwhile
        return closed.status();
      }
      f.closed_at = *closed;
    }
    out.push_back(std::move(f));
  }
  return out;
}

MirrorLog::PublishedState MirrorLog::published_state() const {
  PublishedState out;
  const std::vector<uint64_t> files = live_->Files();
  {
    sync::MutexLock l(&st_->published_mu);
    const State* m = st_.get();
    if (m->published_file != 0) {
      out.end = MirrorPosition{BinlogFileName(basename_, m->published_file), m->published_pos};
    }
    out.flavor = m->published_flavor;
    out.gtids = m->published_gtids;
    out.maria_gtids = m->published_maria;
  }
  const uint64_t published_file = live_->published() >> 32;
  for (uint64_t n : files) {
    const std::string name = BinlogFileName(basename_, n);
    uint64_t size = 0;
    if (name == out.end.file) {
      size = out.end.pos;
    } else {
      // A closed file, or one not published yet (0). A purge may have
      // removed it meanwhile: then it is left out.
      auto sz = st_->fs->FileSize(io::JoinPath(dir_, name));
      if (!sz.ok()) continue;
      if (n < published_file) size = *sz;
    }
    out.files.push_back(PublishedState::File{n, name, size});
  }
  if (!out.files.empty() && out.flavor == LogFlavor::kMySQL) {
    auto purged = internal::FileGtids(
        st_->fs, io::JoinPath(dir_, out.files.front().name), /*with_transactions=*/false);
    if (purged.ok()) out.purged = std::move(*purged);
  }
  return out;
}

}  // namespace binlog
