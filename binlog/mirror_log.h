// File: binlog/mirror_log.h
//
// MirrorLog: an exact, durable copy of a source server's binlog files, kept
// from the events its dump sends (the library side of a binlog relay). The
// receiver appends every event as it arrives; the copy holds the source's
// files under the source's names, byte for byte: every stored event as
// received (same log_pos, same checksum setting, same file boundaries, the
// source's own Format_description at each file's start). Nothing is
// assigned: positions are checked. The layout and the recovery rules are in
// binlog/FORMAT.md, "Mirror mode".
//
// Files. One directory: `<basename>.NNNNNN`, the source's file names, and
// `<basename>.index` listing them (the index protocol of
// binlog/index_file.h), plus `<basename>.lock`. `basename` is the SOURCE's
// basename (what its file names start with, e.g. "mysql-bin" or
// "binlog"): the copy is then a log directory like any other, read by
// Reader::OpenDirectory(dir, basename) and served at rest by
// binlog_server. A dump that names a file outside that basename is refused.
// After a failover to another server with the same GTID history
// (BeginStream), the copy keeps its basename and numbering and takes the
// new server's files under its next numbers; `<basename>.sources` maps
// them to the server and its own names (binlog/FORMAT.md, "Mirror mode").
//
// The stream (what Append takes), as MySQL and MariaDB sources send it:
//   - An artificial Rotate (log_pos 0 or LOG_EVENT_ARTIFICIAL_F; with or
//     without a CRC32, whichever it carries) names the file and position the
//     dump continues from. It is never stored. It may name the copy's last
//     file at any position up to the copy's end there (a reconnect: the
//     events the copy already holds are re-sent, see below), or, at
//     position 4, a file after the copy's last one (the first file of an
//     empty copy; the next file when the last one ended with a Rotate or a
//     Stop; or the file a source starts after a crash, when the copy's last
//     file ended without either: that file is then finished where it is, a
//     partial transaction at its end cut).
//   - The Format_description that starts a file (log_pos 4 + its size) is
//     stored as received and starts the file: magic, then that event. Its
//     in-use flag (file offset 21) is what the source sent: a dump clears it
//     in the Format_description of every file it sends, so the copy holds
//     the bytes of the source's closed files there, and the copy marks
//     nothing itself (the last file of the copy is always treated as
//     possibly torn: see recovery). A Format_description sent again for a
//     file the copy holds (log_pos 0, or a reconnect's re-send, with its
//     created time zeroed and CRC recomputed) is checked for the same
//     checksum setting and not stored. A file whose start the copy lacks
//     cannot be begun from a re-sent (log_pos 0) Format_description.
//   - Every other event is checked: size, CRC32 under the file's setting,
//     and its position: it must start exactly where the copy ends (start =
//     log_pos - event_size; MariaDB 11.4+ cache events with log_pos 0 start
//     at the copy's end). After a reconnect, events that end at or before
//     the copy's end are re-sends: each must lie at or after the previous
//     one and equal, byte for byte, what the copy holds at its position
//     (the source is the same), and is not stored; the first event past
//     the copy's end must start exactly there.
//   - Artificial events are never stored: those with LOG_EVENT_ARTIFICIAL_F
//     (a MariaDB dump's Gtid_list after skipped groups), Heartbeat (27) and
//     Heartbeat_v2 (41) events. A MariaDB dump must ask for Annotate_rows
//     events (BINLOG_SEND_ANNOTATE_ROWS_EVENT): left out, they are gaps and
//     are refused; replaced by dummy events, they would not be the source's
//     bytes.
//   - A Rotate from the source (not artificial) is stored, then its file is
//     closed (durable) and the next event must be the Format_description of
//     the file it names. A Stop is stored and closes its file too.
//
// Durability. Append buffers and writes; Sync() makes everything appended so
// far durable with one fdatasync (grouped: call it once for all events
// received, e.g. before one semi-sync acknowledgement); durable_end() is
// then the copy's end. A new file's start (magic and Format_description) is
// durable, and its name in the directory, before the index names it; a file
// is durable before the next one is started. Close times: when the copy
// starts a file, the file before it is finished (closed) at that moment, on
// the local clock (MirrorOptions::clock): the copy sets that file's
// modification time to it, durably (io::FileSystem::SetModificationTime),
// before the new file exists. A file's age for retention (ListFileFacts)
// is measured from that time, never from the source's event timestamps,
// and it survives restarts with the file (binlog/FORMAT.md, "Mirror
// mode"). When the file system refuses to set it (a file another user
// owns, some NFS or FUSE mounts), the copy goes on: the file keeps its
// last write time, at most a moment before its close, as its close time,
// and Stats::close_times_not_set counts it. Append itself never lets more
// than MirrorOptions::max_unsynced_bytes sit in the last file past its last
// completed fdatasync (it syncs first), which bounds what a power cut can
// tear (see recovery).
//
// Recovery (Open). The last indexed file is scanned (TransactionScan) to the
// end of its last complete transaction or file-level event, and everything
// after it is cut (truncate, fdatasync): a partial transaction, a torn
// event, zeros. Only what a crash can explain is cut: damage followed by a
// valid event farther than max_unsynced_bytes (plus the damaged event's
// size) is refused with DataLoss, nothing changed. Earlier files are not
// scanned (each was durable before the next one was started); damage there
// is DataLoss to every reader, never cut. A file after the last indexed one
// that holds only a (possibly torn) Format_description is what a crash
// between a file's start and its index entry leaves: removed. Any other
// unindexed file after it is refused (FailedPrecondition). Unindexed files
// before the first indexed one that `<basename>.purge` names are what a
// purge interrupted between its index rewrite and its removals leaves:
// removed; others (older files an operator put there) are left alone. Close() cuts a
// partial transaction the same way and makes everything durable: the files
// then hold nothing past the last complete event received (no preallocated
// zeros, no Stop event of the copy's own).
//
// Resume. ResumePoint() is where a dump must restart so that the copy
// continues exactly: the file and position (the end of the last complete
// transaction or file-level event; the next file at 4 after a Rotate), and
// the GTID state of the copy (MySQL: the last file's Previous_gtids plus
// its complete transactions' GTIDs; MariaDB: its Gtid_list plus its
// groups), for COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID / MariaDB's
// slave_connect_state. A file-and-position dump keeps the files exact in
// every case. A GTID dump after a disconnect between a file's last
// transaction and its Rotate starts at the next file: the copy's file then
// ends without that Rotate, as a crashed source's file does. The file is
// named as the source names it (after a failover, the new server's name;
// see BeginStream), with the server id of the copy's last file.
//
// Thread safety: thread-safe. Every method takes one internal mutex, so a
// receiver thread may Append while an acknowledger thread calls Sync() and
// durable_end(); Sync holds the mutex during its fdatasync, so an Append
// waits for a Sync in progress (the socket buffers meanwhile). The
// readers' calls (NewReader, NewGtidReader, NewMariaGtidReader,
// published_state) never wait for an fdatasync: they read the published
// state, kept apart under a mutex of its own.
// Errors:
//   InvalidArgument    a malformed event (size, CRC32, an undecodable
//                      Format_description or Rotate, an event that fits no
//                      transaction, a file name outside the basename or
//                      not after the copy's last file); nothing written.
//   OutOfRange         the stream does not continue the copy: a log_pos gap
//                      or overlap, a re-sent event that differs from the
//                      copy, a dump that restarts past the copy's end or in
//                      an earlier file, a file whose start is missing, an
//                      event before the dump named its file; nothing
//                      written. Restart the dump from ResumePoint().
//   FailedPrecondition after Close(), or after an I/O error: the copy is
//                      poisoned (every later call fails, carrying the
//                      first error; nothing is retried: reopen to recover).
//   I/O errors         from the FileSystem (they poison the copy), except a
//                      refused close time (SetModificationTime; counted in
//                      Stats::close_times_not_set, see Durability).
// Lifetime: MirrorOptions::file_system must outlive the MirrorLog.
// Readers: NewReader() gives tailing readers that follow the copy as a
// live log's readers follow it (binlog/reader.h): they read only below the
// published end, which is the end of the last complete transaction or
// file-level event that is durable (published by Sync(), at each file's
// start and end, and by Open), so a downstream replica never sees a
// transaction a crash of the copy could lose or a partial one; they wait
// for more with WaitForMore() and end (Cancelled) after Close().
// Reader::OpenDirectory (and the at-rest GTID readers, binlog/gtid_reader.h)
// read the copy like any log directory, also while it is appended: after
// Sync() the files hold whole events only, which a reader opened then reads
// to the end; a reader at rest that meets a write in progress may find a
// partial event at the end of the last file, which it reports as DataLoss
// at that offset (the in-use flag is clear).

#ifndef BINLOG_BINLOG_MIRROR_LOG_H_
#define BINLOG_BINLOG_MIRROR_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"
#include "binlog/gtid.h"
#include "io/file_system.h"

namespace binlog {

// A position in the source's (and the copy's) files.
struct MirrorPosition {
  std::string file;  // e.g. "mysql-bin.000042"; empty: none yet
  uint64_t pos = 0;
  friend bool operator==(const MirrorPosition& a, const MirrorPosition& b) {
    return a.file == b.file && a.pos == b.pos;
  }
  friend bool operator!=(const MirrorPosition& a, const MirrorPosition& b) {
    return !(a == b);
  }
};

struct MirrorOptions {
  // nullptr: io::FileSystem::Default().
  io::FileSystem* file_system = nullptr;
  bool create_if_missing = true;
  uint32_t file_mode = io::kDefaultFilePermissions;
  uint32_t directory_mode = io::kDefaultDirectoryPermissions;
  // The most bytes the last file may hold past its last completed
  // fdatasync (Append syncs first when more would be written). Recovery
  // cuts damage only within this reach of the first bad event; keep it the
  // same across Opens of one copy. 64 KiB .. 1 GiB.
  uint64_t max_unsynced_bytes = 8 << 20;
  // The entry spacing of the GTID index (binlog/gtid_index.h) built, in a
  // thread of the copy's own, for each file a Rotate or Stop ended; 0:
  // none (the GTID readers build one on demand). Default 4 MiB. The
  // thread starts at Open (ResourceExhausted when it cannot), never in
  // Append.
  uint64_t gtid_index_interval = uint64_t{4} << 20;
  // How long Close (and the destructor) waits, without holding the
  // copy's lock (the other calls go on meanwhile), for the index builds
  // still queued; the rest are cancelled (the readers build those on
  // demand). Zero: cancel at once. Default 10 s.
  absl::Duration gtid_index_close_wait = absl::Seconds(10);
  // The local clock a file's close time is taken from (see Durability in
  // the file comment); nullptr: absl::Now().
  std::function<absl::Time()> clock;
};

// What Open() found and did.
struct MirrorRecoveryReport {
  std::string file_name;    // the last file, scanned ("" for an empty copy)
  uint64_t valid_end = 0;   // end of its last complete transaction
  uint64_t bytes_cut = 0;   // bytes removed after valid_end
  std::string reason;       // why the scan stopped where it did
  // Unindexed files after the last indexed one holding only a file start
  // (an interrupted file start), and unindexed files before the first
  // indexed one (an interrupted purge), removed.
  std::vector<std::string> removed_files;
};

// Where a dump must restart (MirrorLog::ResumePoint).
struct MirrorResumePoint {
  // File and position for COM_BINLOG_DUMP. Empty file: the copy holds no
  // file yet (dump from the source's first file, position 4).
  MirrorPosition position;
  // The flavor of the copy's last file (its Format_description's server
  // version); kMySQL for an empty copy.
  LogFlavor flavor = LogFlavor::kMySQL;
  // MySQL: the GTIDs of the copy (for COM_BINLOG_DUMP_GTID).
  GtidSet gtids;
  // MariaDB: the GTID position of the copy (for slave_connect_state).
  MariaGtidState maria_gtids;
  // The server the copy's last file came from (its Format_description's
  // server id; 0 for an empty copy). `position` is in that server's names.
  uint32_t server_id = 0;
};

namespace internal {
class LiveLog;
}  // namespace internal
class GtidReader;
class Reader;
struct ReaderOptions;

class MirrorLog {
 public:
  // Opens or creates the copy in `dir` for the source's files named
  // `<basename>.NNNNNN`, recovering it (see the file comment). Errors:
  // InvalidArgument for a bad basename or options; Unavailable if another
  // writer holds the lock; NotFound for a missing directory or index
  // (create_if_missing false) or an indexed file that is missing;
  // FailedPrecondition for an unindexed file that a crash cannot explain;
  // DataLoss for an unreadable index or last file, or damage a crash
  // cannot explain (nothing changed on disk); I/O errors.
  static absl::StatusOr<std::unique_ptr<MirrorLog>> Open(const std::string& dir,
                                                         const std::string& basename,
                                                         const MirrorOptions& options);

  // Closes the copy if Close() was not called (errors are lost).
  ~MirrorLog();
  MirrorLog(const MirrorLog&) = delete;
  MirrorLog& operator=(const MirrorLog&) = delete;

  // Takes one whole event as received from the source's dump (header, body
  // and, if the event has one, its CRC32 footer): checks it, then stores
  // it, skips it as a re-send, or takes it as an artificial event (see the
  // file comment). Errors: see the file comment; on any error nothing of
  // the event is written.
  absl::Status Append(absl::string_view event);

  // Declares the server the next dump comes from (its server id, as its
  // @@server_id says; 0: unknown, nothing checked), before the dump's first
  // event. A server other than source_server_id() of a non-empty copy is a
  // failover: the dump must start (its artificial Rotate) at position 4 of
  // one of the new server's files, under any basename, the file holding
  // the copy's GTID position (found by a GTID dump's first Rotate). When
  // that file's Format_description arrives (written by `source_server_id`,
  // else OutOfRange), the copy's last file is finished where it is (a
  // partial transaction at its end cut, as after a crashed source), the
  // new segment's record is made durable in `<basename>.sources` (one
  // record per failover) and the file is
  // begun as the copy's next file (the copy's number and basename), whole
  // and byte for byte from offset 4. Later files of that server follow
  // under the copy's numbering (the copy number minus the source's stays
  // the same). A failover's dump that fails before that file starts
  // changes nothing. The same server (or 0): an ordinary dump, by file and
  // position in the source's names (ResumePoint) or by GTID.
  void BeginStream(uint32_t source_server_id);
  // The server the copy's last file came from (0: empty copy).
  uint32_t source_server_id() const;
  // True from a failover's BeginStream until the new server's file has
  // started (its Format_description stored): meanwhile durable_end() and
  // SourceFileName() still name the previous server's file, which a
  // semi-sync ack to the new server must not name.
  bool switch_pending() const;
  // The source's name of a copy file (from its segment's
  // `<basename>.sources` record; a file before the first record, or a
  // name outside the basename, is its own name). A binary search.
  // For semi-sync acknowledgements, which name the source's files.
  std::string SourceFileName(const std::string& copy_file) const;

  // Makes everything appended so far durable (one fdatasync, none if
  // nothing was written since the last one). Errors: the I/O error that
  // poisons the copy; FailedPrecondition after Close or poisoning.
  absl::Status Sync();

  // Cuts a partial transaction at the end (the dump sends it again from
  // ResumePoint()), makes everything durable and releases the lock. Later
  // calls fail with FailedPrecondition. Errors: the poisoning error, or an
  // I/O error of the close.
  absl::Status Close();

  // The copy's end that is durable: every byte of `file` before `pos` (and
  // every earlier file) survives a power cut. The position of the last
  // event stored when Sync() returned (a Rotate's end, not the next file).
  // Empty file: nothing stored yet.
  MirrorPosition durable_end() const;
  // The copy's end: after the last event stored (maybe not durable, maybe
  // inside a transaction).
  MirrorPosition end() const;
  // Where a dump must restart, with the copy's GTID state (see the file
  // comment). Covers the complete transactions appended; after Sync() they
  // are durable, and after a crash Open() recovers to a point at or after
  // the last Sync().
  MirrorResumePoint ResumePoint() const;
  // True while a transaction is open (its end not yet appended).
  bool inside_transaction() const;

  // A tailing reader of the copy (see the file comment), from the first
  // file or ReaderOptions::start_file / start_offset. It may outlive the
  // MirrorLog (it then ends at the last published end).
  absl::StatusOr<std::unique_ptr<Reader>> NewReader(const ReaderOptions& options) const;

  // Tailing GTID readers of the copy (binlog/gtid_reader.h: the start file,
  // the GTID index's seek in it (binlog/gtid_index.h) and the skipping
  // rules of Binlog::NewGtidReader / NewMariaGtidReader),
  // reading through NewReader(), so only below the published end. The
  // checks use the published GTID state (published_state()). Errors:
  // FailedPrecondition for an empty copy, or with a message beginning
  // "purged:" when the copy's first file's Previous_gtids (MariaDB:
  // Gtid_list) holds transactions the replica lacks, "ahead:" when the
  // replica has GTIDs of `server_uuid` (zero: not checked) the copy never
  // had (MariaDB: a position outside the copy's binlog state); NotFound
  // when a purge removed the start file meanwhile (try again); I/O errors
  // reading the files' headers.
  absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(const GtidSet& have,
                                                           const Uuid& server_uuid,
                                                           const ReaderOptions& options) const;
  absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options) const;

  // What tailing readers can read: the published end and the GTID state
  // there, the files with their sizes. For SHOW BINARY LOG STATUS, SHOW
  // BINARY LOGS and the GTID variables of a server serving the copy.
  struct PublishedState {
    MirrorPosition end;        // the published end (empty file: none yet)
    LogFlavor flavor = LogFlavor::kMySQL;
    GtidSet gtids;             // MySQL: every GTID up to `end`
    MariaGtidState maria_gtids;  // MariaDB: the binlog state at `end`
    // MySQL: the first file's Previous_gtids (gtid_purged).
    GtidSet purged;
    // Every indexed file, oldest first: its number, name and readable size
    // (a closed file's size; the last file's published end).
    struct File {
      uint64_t number = 0;
      std::string name;
      uint64_t size = 0;
    };
    std::vector<File> files;
  };
  PublishedState published_state() const;

  // Retention of the copy (binlog_server's retention options follow the
  // downstream replicas with it: server/copy_retention.h).
  //
  // PurgeTo: removes the files before `file` (a file of the copy), oldest
  // first, as PURGE BINARY LOGS TO does. Never the last file, and never a
  // file a reader has open (its pin) nor any after it: the purge stops
  // there and says so. A durable record of the victims
  // (`<basename>.purge`, binlog/FORMAT.md) is written first, then the
  // index is rewritten (write-temp, fdatasync, rename, directory fsync),
  // then the files are removed, the directory synced and the record
  // removed: a crash in between leaves unindexed files before the first
  // indexed one that the record names, which Open removes
  // (MirrorRecoveryReport::removed_files). The removals and the
  // directory's fsync run without the copy's lock (appends and readers
  // go on); one purge at a time, and Close waits for it.
  // Readers that would start in a purged file get NotFound; the GTID
  // readers' purged check then reads the new first file's Previous_gtids
  // (MariaDB: Gtid_list). Errors: NotFound for a file not in the copy;
  // FailedPrecondition after Close or poisoning; the index write's I/O
  // error (nothing removed, the copy poisoned, as any failed write of it;
  // the record's: nothing changed);
  // a removal's error (the index no longer names the file: Open removes
  // it).
  struct PurgeResult {
    std::vector<std::string> purged;  // names, oldest first
    // Why the purge stopped before `file` ("" if it did not): the file a
    // reader has open.
    std::string kept_file;
    std::string kept_reason;
  };
  absl::StatusOr<PurgeResult> PurgeTo(const std::string& file);

  // The copy's files for a retention policy, oldest first: name, number,
  // size on disk, and when the copy closed each one, on the local clock
  // (the file's modification time, which the copy sets when it starts the
  // next file: see Durability in the file comment; for a file closed
  // before the copy set such times, its last write). The source's event
  // timestamps play no part: a source with a skewed or hostile clock can
  // neither age files nor keep them young. The last file (the one the
  // copy writes) is never closed: absl::InfiniteFuture(). A file purged
  // meanwhile is left out. Errors: the file system's.
  struct FileFacts {
    uint64_t number = 0;
    std::string name;
    uint64_t size = 0;
    absl::Time closed_at = absl::InfiniteFuture();
  };
  absl::StatusOr<std::vector<FileFacts>> ListFileFacts() const;

  const MirrorRecoveryReport& recovery() const { return recovery_; }
  // The indexed files, oldest first (names).
  std::vector<std::string> files() const;

  struct Stats {
    uint64_t events = 0;        // events given to Append (accepted)
    uint64_t events_stored = 0;
    uint64_t artificial = 0;    // artificial Rotate / FDE / flagged events
    uint64_t heartbeats = 0;
    uint64_t resent = 0;        // re-sends the copy already held
    uint64_t syncs = 0;         // fdatasyncs of the copy's files
    uint64_t files_started = 0;
    uint64_t files_purged = 0;  // files PurgeTo removed
    // Files whose close time could not be set (SetModificationTime
    // failed): each ages from its last write instead (see Durability).
    uint64_t close_times_not_set = 0;
  };
  Stats stats() const;

 private:
  struct State;
  MirrorLog(std::string dir, std::string basename, const MirrorOptions& o);

  absl::Status OpenImpl();
  absl::Status AppendLocked(absl::string_view event);
  absl::Status CheckUsable() const;
  absl::Status Poison(absl::Status s);
  // Ends the last file where it is (a partial transaction cut, durable,
  // closed); nothing if it ended already.
  absl::Status FinishLastFile();
  // Publishes the last file's durable boundary to tailing readers.
  void Publish();
  // The GTID index's seek in a GTID reader's start file (binlog/
  // gtid_index.h), as Binlog's readers use it.
  void UseGtidIndex(GtidReader* g, uint64_t start, const std::vector<uint64_t>& files,
                    const ReaderOptions& ro, LogFlavor flavor, const GtidSet& have,
                    const MariaGtidState& position) const;

  const std::string dir_;
  const std::string basename_;
  const MirrorOptions options_;
  MirrorRecoveryReport recovery_;  // set by Open, then constant

  // The copy's state and the one mutex every method takes (defined in
  // mirror_log.cc; the pointer itself never changes).
  const std::unique_ptr<State> st_;
  // What tailing readers follow (thread-safe itself; set by Open).
  std::shared_ptr<internal::LiveLog> live_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_MIRROR_LOG_H_
