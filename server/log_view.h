// File: server/log_view.h
//
// LogView: where the server (server/server.h) takes the log it serves
// from. Three sources, one interface, so a dump and the statements that
// report the log's state do not branch on the source:
//   - files at rest (NewAtRestView): the log in a directory, possibly
//     written by another process, read with Reader::OpenDirectory and the
//     at-rest GTID readers. Not live: a reader ends at the last complete
//     event on disk (written, maybe not fdatasync'ed), and the server
//     reopens one there to follow growth.
//   - a live Binlog in this process (NewBinlogView): Binlog::NewReader /
//     NewGtidReader / NewMariaGtidReader, tailing readers that wait on the
//     published end.
//   - a relay's copy in this process (NewMirrorView): MirrorLog::NewReader
//     / NewGtidReader / NewMariaGtidReader, tailing readers of the copy's
//     durable published end (binlog/mirror_log.h): a downstream replica
//     never receives bytes the copy has not fdatasync'ed. The state
//     statements answer from the copy's published state.
//
// Thread safety: thread-safe (every session calls the one view).
// Lifetime: the Binlog or MirrorLog must outlive the view.

#ifndef BINLOG_SERVER_LOG_VIEW_H_
#define BINLOG_SERVER_LOG_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "binlog/flavor.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/reader.h"

namespace binlog {
namespace server {

// The log's state, as SHOW BINARY LOG STATUS, SHOW BINARY LOGS and the
// GTID variables report it.
struct LogViewState {
  GtidSet executed;
  GtidSet purged;
  MariaGtidState maria_state;
  // Every file, oldest first, with its size; the newest and its end.
  std::vector<std::pair<std::string, uint64_t>> files;
  std::string current_file;
  uint64_t current_position = 0;
};

class LogView {
 public:
  virtual ~LogView() = default;

  // True: readers wait for more on the published end (Reader::WaitForMore)
  // and never see a partial event. False (files at rest): a reader ends
  // at the last complete event found, a torn event at the tail may be a
  // write in progress, and a fresh reader opened where the last one ended
  // sees what was written since.
  virtual bool live() const = 0;
  // The log's files, numbers oldest first. NotFound / empty without files.
  virtual absl::StatusOr<std::vector<uint64_t>> Files() = 0;
  // A reader from options.start_file / start_offset.
  virtual absl::StatusOr<std::unique_ptr<Reader>> NewReader(const ReaderOptions& options) = 0;
  // GTID readers (binlog/gtid_reader.h). FailedPrecondition messages that
  // contain "purged" mean the log purged transactions the replica lacks;
  // "never had" that the replica has GTIDs of the log's own UUID the log
  // never had (a live Binlog knows its UUID; for files at rest and a copy
  // it is the only UUID of the log's GTIDs, when there is one).
  virtual absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(
      const GtidSet& have, const ReaderOptions& options) = 0;
  virtual absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options) = 0;
  // The state for statements (a scan of the newest file at rest).
  virtual absl::StatusOr<LogViewState> State(LogFlavor flavor) = 0;
  // The end of file `file` that the view's readers may read now, for the
  // checks of a dump by file and position (ScanLogFile's `limit`): live
  // views the published end (a relay's copy: its durable end, so a
  // replica never starts at bytes a crash of the copy could take back; a
  // closed file: its size); 0 for a file they cannot read yet. Files at
  // rest: no limit (kNoReadableLimit: the scan finds the last complete
  // event, where their readers end).
  virtual uint64_t ReadableEnd(uint64_t file) = 0;
};

inline constexpr uint64_t kNoReadableLimit = ~uint64_t{0};

// The end of the complete events of the file at `path` (or, for a `pos`
// inside the file, of the events up to the first past `pos`), whether
// `pos` is one of their boundaries (or the start of the first event after
// the header), and the file's Format_description as stored. Reads the file
// at rest: a torn or CRC-failing event ends the scan, and so does
// `limit` (LogView::ReadableEnd: events past a live view's published end
// do not count, whatever the disk holds).
struct FileScan {
  uint64_t end = 0;
  bool boundary = false;
  std::string fde;
};
absl::StatusOr<FileScan> ScanLogFile(const std::string& path, uint64_t pos,
                                     uint64_t limit = kNoReadableLimit);

std::unique_ptr<LogView> NewAtRestView(const std::string& dir, const std::string& basename);
std::unique_ptr<LogView> NewBinlogView(Binlog* log);
std::unique_ptr<LogView> NewMirrorView(MirrorLog* mirror);

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_LOG_VIEW_H_
