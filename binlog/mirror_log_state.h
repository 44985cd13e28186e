// File: binlog/mirror_log_state.h  (internal)
//
// The state of a MirrorLog (binlog/mirror_log.h), shared by the files that
// implement it: mirror_log.cc (Open and recovery, Append, Sync, Close, the
// failover switch) and mirror_log_consumers.cc (what the copy's consumers
// use: readers, the published state, purge and file facts). The design
// and its invariants are described at the top of mirror_log.cc.
//
// Thread safety: as the comments of the members say (`mu` guards most).

#ifndef BINLOG_BINLOG_MIRROR_LOG_STATE_H_
#define BINLOG_BINLOG_MIRROR_LOG_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_index.h"
#include "binlog/index_file.h"
#include "binlog/mirror_log.h"
#include "binlog/transaction_boundary.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace mirror_internal {

inline bool IsMariaDbFde(const FormatDescription& fd) {
  return absl::StrContains(fd.server_version, "MariaDB");
}

// `<basename>.purge` (see mirror_log_consumers.cc): its path, and the range
// of file numbers it names; false if there is none or it is not whole.
std::string PurgeRecordPath(const std::string& dir, const std::string& basename);
absl::StatusOr<bool> ReadPurgeRecord(io::FileSystem* fs, const std::string& path,
                                     uint64_t* first, uint64_t* last);

}  // namespace mirror_internal

struct MirrorLog::State {
  // Held by PurgeTo throughout and by Close (before `mu`).
  sync::Mutex purge_mu;
  // Taken by every method of MirrorLog; guards everything below.
  mutable sync::Mutex mu;
  io::FileSystem* fs = nullptr;
  std::unique_ptr<io::FileLock> lock;
  std::unique_ptr<io::Directory> dir_handle;
  std::vector<uint64_t> files;  // indexed, oldest first

  // The last file (files.back()).
  uint64_t last = 0;
  std::string last_name;  // the copy's name
  // Its source and the source's name for it (the copy's name unless the
  // copy followed another server: see `<basename>.sources`).
  uint32_t last_server = 0;
  std::string last_source_name;
  std::unique_ptr<io::WritableFile> active;        // while it takes events
  std::unique_ptr<io::RandomAccessFile> readback;  // re-sends are compared
  uint64_t written = 0;
  uint64_t synced = 0;
  std::string pending;
  uint64_t end() const { return written + pending.size(); }
  bool checksums = false;
  FormatDescription fde;
  uint64_t fde_end = 0;  // where the file's Format_description ends
  TransactionBoundaryParser parser;
  uint64_t boundary_end = 0;
  // A Rotate or a Stop was stored, or the dump moved on to a later file.
  bool ended = false;
  std::string next_file;  // named by the Rotate that ended it ("" if none)

  // The segment the last file belongs to: the source's basename and the
  // copy's file number minus the source's (the copy's own basename and 0
  // until the copy follows another server).
  std::string seg_base;
  int64_t seg_offset = 0;
  // `<basename>.sources` (empty: the copy never followed another server).
  std::vector<SourceFileRecord> sources;

  // The server the current stream comes from (BeginStream; 0: unknown).
  uint32_t stream_server = 0;
  // The stream is a failover's: it starts a new segment, from a file of
  // `stream_server` (named with `switch_base`) that becomes the copy's
  // next file.
  bool switching = false;
  std::string switch_base;
  int64_t switch_offset = 0;

  // The copy's number of a source file name of the current segment.
  bool CopyNumber(absl::string_view source_name, uint64_t* n) const {
    absl::string_view base;
    uint64_t k = 0;
    if (!SplitBinlogFileName(source_name, &base, &k) || base != seg_base) return false;
    const int64_t c = static_cast<int64_t>(k) + seg_offset;
    if (c < 1 || c > static_cast<int64_t>(kMaxFileNumber)) return false;
    *n = static_cast<uint64_t>(c);
    return true;
  }
  // The source's name of copy file `n` (its segment's, else the copy's
  // name).
  std::string SourceName(const std::string& basename, uint64_t n) const {
    return SourceFileNameOf(sources, basename, n);
  }

  // The dump's stream.
  bool streaming = false;  // an artificial Rotate named its file
  std::string stream_file;
  uint64_t stream_pos = 0;
  bool expect_file_start = false;  // its next event starts stream_file

  // GTID state after the last complete transaction.
  GtidSet gtids;
  MariaGtidState maria;
  bool has_pending_gtid = false;
  Tsid pending_tsid;
  int64_t pending_gno = 0;
  bool has_pending_maria = false;
  MariaGtidListEntry pending_maria;

  // What Publish() last published to tailing readers: the end (file
  // number, offset), the flavor and the GTID state there. Written under
  // `mu` and `published_mu`, read under either: the readers' calls
  // (NewGtidReader, published_state) take only published_mu, so they do
  // not wait for an fdatasync that Sync runs holding `mu`.
  mutable sync::Mutex published_mu;
  uint64_t published_file = 0;
  uint64_t published_pos = 0;
  LogFlavor published_flavor = LogFlavor::kMySQL;
  GtidSet published_gtids;
  MariaGtidState published_maria;

  Stats stats;
  absl::Status error;
  bool closed = false;
  // Indexes the ended files (MirrorOptions::gtid_index_interval).
  std::unique_ptr<internal::GtidIndexBuilder> gidx;

  // Applies one stored event (header `h`, body `body`) to the boundary
  // parser and the GTID state; `end` is where it ends in the file.
  TransactionBoundaryParser::Result Observe(const EventHeader& h, absl::string_view body,
                                            uint64_t end);
  // Cuts a partial transaction at the end of the last file (it can never
  // complete), writes what is pending and makes the file durable (one
  // fdatasync). Needs `active`; `window` is max_unsynced_bytes.
  absl::Status CutOpenTransactionAndSync(uint64_t window);
  void ForgetOpenTransaction() {
    parser.Reset();
    has_pending_gtid = false;
    has_pending_maria = false;
  }
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_MIRROR_LOG_STATE_H_
