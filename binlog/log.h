// File: binlog/log.h
//
// Binlog: an append-only log of MySQL binlog v4 files (MySQL 8.0's, or
// MariaDB 10.11's with Options::flavor) in one directory:
// `<basename>.000001`, `<basename>.000002`, ... and `<basename>.index`, as a
// MySQL server writes them. This is the class a server links in place of its
// own binary-log code.
//
// Writing. The caller builds a whole transaction in a TransactionBuffer and
// calls Commit(). The log assigns the position, fills each event's log_pos
// and CRC32, writes the transaction at the end of the active file, makes it
// durable under the SyncPolicy, and returns its position. A transaction
// never splits across files; the log rotates to a new file after the commit
// that makes the active file reach Options::max_file_size.
//
// Reading. NewReader() returns a tailing Reader. Readers never read past the
// published end: under SyncPolicy::kEveryGroup that is the durable end (a
// reader never sees a transaction a crash could take back); under the other
// policies it is the written end. Readers never take a lock that the writer
// holds during I/O.
//
// Files on disk. Every file starts with the magic, a Format_description
// event with the in-use flag set while the file is active, and the header
// events of Options::file_header. A rotated file ends with a Rotate event, the
// last file of a clean Close() with a Stop event; both then get the in-use
// flag cleared, so closed files are exact MySQL binlogs that mysqlbinlog reads.
//
// Open and recovery. Open() takes `<basename>.lock` (one writer per log),
// reads the index, and recovers the last file if it was not closed cleanly:
// the file is cut at the end of its last complete, checksum-valid
// transaction (torn events, half transactions and zeros after it are
// removed so they can never be mistaken for events) and the cut is made
// durable; only then is its in-use flag cleared and that made durable, so a
// crash at any point of recovery leaves a file that is either still marked
// in use or clean. Damage a crash cannot explain is refused, not cut (see
// RecoveryMode). recovery() tells what was cut. Then a new file is started,
// as MySQL does after every server start.
//
// Thread safety: thread-safe. Any number of threads may call Commit()
// concurrently; commits are ordered by the positions they return, and
// concurrent commits share one write and one fdatasync per group.
// Errors: after a failed write, fdatasync or rotation the log is poisoned:
// that commit and every later one fail with FailedPrecondition carrying the
// original error, and nothing written after the failure becomes visible to
// readers. The log never retries an fdatasync (a failed fdatasync may have
// dropped dirty pages; a retry can report success for lost data). Reopen to
// recover.
// Durability: see SyncPolicy. Rotation makes new files and index updates
// durable (file fdatasync, directory fsync) before anything is written to
// the new file.
// Lifetime: Options::file_system must outlive the Binlog and its readers.

#ifndef BINLOG_BINLOG_LOG_H_
#define BINLOG_BINLOG_LOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/gtid_reader.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "binlog/xid_recovery.h"

namespace binlog {

namespace internal {
class BinlogImpl;
}  // namespace internal

class PendingRecovery;

// Where a committed transaction lives, and the identity the log gave it.
struct CommitPosition {
  uint64_t file_number = 0;  // e.g. 3 for "<basename>.000003"
  uint64_t start = 0;        // offset of its first event
  uint64_t end = 0;          // offset after its last event (its last log_pos)
  // With a CommitGtid (TransactionBuffer::AppendCommitGtid): the GTID,
  // logical clocks and commit timestamp assigned in commit order; for
  // kMariaDB (AppendMariaCommitGtid) the GTID domain-server-seq and the
  // group's commit_id.
  AssignedIdentity identity;
};

// What Open() found and did.
struct RecoveryReport {
  bool recovered = false;        // the last file needed recovery
  std::string file_name;         // that file
  uint64_t valid_end = 0;        // end of its last complete transaction
  uint64_t bytes_cut = 0;        // bytes removed after valid_end
  uint64_t events_cut = 0;       // complete events removed (half transactions)
  bool partial_event_cut = false;  // a torn event was removed too
  std::string reason;            // why the scan stopped where it did
  // The sync policy the file was written under, as `<basename>.recovery`
  // records it ("every_group", "every_n_groups", "never"), or "unknown".
  std::string sync_policy;
  std::vector<std::string> ignored_files;  // binlog-named files not in the index
  // Files that were removed: of an interrupted rotation (named right after
  // the last indexed file, not indexed, and empty: zeros, or header events
  // only, so they held no transaction), and of an interrupted purge
  // (numbered below the first indexed file and ending with the Rotate or
  // Stop event this log closes its files with: a purge removes files only
  // after the index no longer names them; other files there are left
  // alone and listed in ignored_files).
  std::vector<std::string> removed_files;
  // Options::background_rotation: a crash during a rotation can leave the
  // file before the newest one without its end event or with its in-use
  // flag set (closed_files: Open cut any torn end event, wrote the Rotate
  // event naming the next file and cleared the flag), and a newest file
  // that holds transactions but that the index does not name yet
  // (adopted_files: added to the index).
  std::vector<std::string> closed_files;
  std::vector<std::string> adopted_files;
};

struct LogStats {
  uint64_t commits = 0;
  uint64_t groups = 0;        // commit groups written (one pwritev each)
  uint64_t max_group_size = 0;
  uint64_t sync_rounds = 0;   // sync-stage rounds (one fdatasync at most)
  uint64_t fsyncs = 0;
  uint64_t bytes_written = 0;
  uint64_t fsync_micros = 0;  // time spent in fdatasync
  uint64_t rotations = 0;
  uint64_t files_preallocated = 0;   // spares prepared in the background
  uint64_t rotations_from_spare = 0; // rotations that renamed a ready spare
  uint64_t rotations_waited = 0;     // rotations that created the file
  // Rotations whose old-file close and index update ran on the background
  // thread (Options::background_rotation), and those of them that found
  // the next file already created.
  uint64_t rotations_in_background = 0;
  uint64_t rotations_prepared = 0;
  // Chunks (1 MiB, or Options::zero_ahead if smaller) zero-filled ahead of
  // the writer in files that did not come from a spare.
  uint64_t zero_fill_chunks = 0;
  // Commits and operations (Sync, Rotate, Close) waiting for their turn in
  // the commit pipeline right now.
  uint64_t queued_requests = 0;
  // Commits refused alone in the serial section (a transaction that did not
  // fit below the 4 GiB offset limit even in a new file).
  uint64_t rejected_commits = 0;
  // Files deleted by automatic expiry (Options::expire_after), and the
  // error of the last expiry run that failed ("" if none did).
  uint64_t files_expired = 0;
  std::string last_expiry_error;
};

struct LogFileInfo {
  uint64_t number = 0;
  std::string name;
  // Bytes in the file: for the active file, the end readers may read now
  // (SHOW BINARY LOGS' File_size).
  uint64_t size = 0;
  // The file is encrypted at rest (starts with the encrypted-binlog header;
  // Options::encryption). `size` is then the plain size (without the
  // 512-byte header).
  bool encrypted = false;
};

// What a purge did (PurgeBefore, and automatic expiry).
struct PurgeResult {
  std::vector<std::string> purged;  // deleted files, oldest first
  // Files the request covered that were kept, and why: "the active file",
  // "open by a reader" (MySQL warns "file is in use"), "being closed after
  // a rotation" (Options::background_rotation: for the moment after a
  // rotation, the file before the newest is the last the index names), or,
  // for PurgeBefore,
  // the first file whose last event is not older than the cutoff (files
  // after it are newer still and are not listed).
  struct Kept {
    std::string file;
    std::string reason;
  };
  std::vector<Kept> kept;
};

class Binlog {
 public:
  // Opens or creates the log `<dir>/<basename>.*`. See the file comment.
  // Errors: Unavailable if another writer holds the log; InvalidArgument for
  // bad options; FailedPrecondition if Options::flush_engine_logs is set (a
  // server with an engine) and the last file was not closed cleanly: such a
  // server must use BeginRecovery, or the XIDs its engine recovery needs
  // would be lost; DataLoss for an index or last file that cannot be trusted
  // (the message names the file and offset; nothing is changed on disk),
  // and for a file after the last indexed one whose header is damaged
  // rather than torn (data follows it: it may hold acknowledged commits of
  // a rotation off the commit path; nothing is changed);
  // NotFound for a missing directory (create_if_missing false) or an index
  // entry whose file is missing; FailedPrecondition (naming both) when the
  // newest file is of another flavor than Options::flavor, or of MySQL
  // 8.4's layout while Options::mysql_layout asks for 8.0's (a log keeps
  // the flavor of its files; 8.0 files are continued as 8.4);
  // FailedPrecondition when a file of the log is encrypted and the options
  // give no keyring to read it (the message says so); Unimplemented when a
  // file the index names is of a format the library does not read (binlog
  // v1/v3, MySQL 3.23-4.x; the message names the file; nothing is changed).
  static absl::StatusOr<std::unique_ptr<Binlog>> Open(const std::string& dir,
                                                      const std::string& basename,
                                                      const Options& options);

  // Two-phase-commit recovery, in two steps (for a server with a
  // transactional engine; see binlog/xid_recovery.h). BeginRecovery takes
  // the log's lock, reads the index and scans the files recovery needs,
  // and changes nothing a crash could need again: the last file keeps its
  // in-use flag and nothing is cut. (It may remove the empty file of an
  // interrupted rotation and a stale index temporary, as Open does: they
  // hold no transaction. After a rotation off the commit path it closes
  // the file before the newest and adds the newest to the index, as Open
  // does: the transactions of the file it closes are committed in the
  // engine already, see Options::background_rotation.) The server recovers its engine with
  // PendingRecovery::scan(), makes those decisions durable in the engine,
  // then calls PendingRecovery::Finish(), which does what Open does next:
  // cuts the last file after its last complete transaction, clears its
  // in-use flag (each step durable before the next), recovers the GTID
  // state and starts a new file. If the server fails or crashes before
  // Finish, the next BeginRecovery returns the same scan.
  // Open() is BeginRecovery + Finish for callers without an engine.
  //
  // A failed Commit and the engine: a Commit that failed with
  // InvalidArgument, ResourceExhausted, Aborted or FailedPrecondition wrote nothing
  // (roll the engine transaction back). Any other error (an I/O error of
  // the group's write or fdatasync) may have left the transaction
  // complete on disk: the log is poisoned; leave the engine transaction
  // prepared, and restart through BeginRecovery, which decides it.
  // Errors: those of Open(); DataLoss when a scanned file cannot be read
  // to its end or a transaction's XID event is malformed (the message
  // names the file and offset).
  static absl::StatusOr<std::unique_ptr<PendingRecovery>> BeginRecovery(
      const std::string& dir, const std::string& basename,
      const Options& options);

  // Closes the log if Close() was not called (errors are lost then).
  // REQUIRES: no Commit or other call is in progress.
  ~Binlog();

  Binlog(const Binlog&) = delete;
  Binlog& operator=(const Binlog&) = delete;

  // Appends the transaction in `txn` and returns its position once durable
  // under the SyncPolicy (and after the ordered-commit callback of its group
  // ran). Concurrent calls are grouped: one write and one fdatasync per
  // group (see sync/group_commit.h). On return `txn` holds the bytes as
  // written (final log_pos and checksums); Clear() it to reuse it. With
  // Options::compression, an eligible transaction is compressed here, in
  // the calling thread, before it joins a group; then txn->data() is the
  // Gtid and Transaction_payload events as written, and
  // txn->appended_data() still holds the events as appended (see
  // TransactionBuffer).
  // A spilled transaction (TransactionBuffer::spilled()) is written from
  // its spill file in 4 MiB chunks by the flush stage (log_pos and CRC32
  // fixed in the chunk), never read whole into memory, and is not
  // compressed; its bytes in the log are those of the same transaction
  // built in memory. A read error of the spill file there poisons the log
  // like a write error. Under kEveryGroup it is written in
  // max_unsynced_bytes pieces, each synced, as any large transaction.
  // Errors: InvalidArgument for an empty buffer, a buffer whose checksum
  // setting differs from the log's, an event larger than kMaxEventSize
  // (the limit readers and recovery apply; the message names the event and
  // the limit), events that do not form complete transactions by the rules
  // recovery applies (binlog/transaction_boundary.h: a GTID inside a
  // transaction, an unknown event type without the ignorable flag, a
  // transaction that does not end), or a transaction that cannot fit below
  // the 4 GiB offset limit even in a new file; ResourceExhausted if the file header a
  // rotation wrote leaves too little room for it (nothing is written, the
  // log goes on), or for a transaction larger than its buffer's max_size
  // (Options::max_transaction_size; nothing is written, the log goes on);
  // Aborted when its buffer failed to spill (TransactionBuffer::status();
  // nothing is written, the log goes on); FailedPrecondition after
  // Close() or once the log is
  // poisoned; the I/O error that poisoned it for the commits of the group
  // that hit it. With compression, a transaction whose events would
  // decompress to more than kMaxPayloadSize is stored uncompressed.
  //
  // kMariaDB (see CommitGtid in binlog/transaction.h): a transaction whose
  // first event came from AppendMariaCommitGtid gets its seq_no in commit
  // order, per domain. When a commit group holds more than one such
  // transaction, each of them carries the group's commit_id
  // (FL_GROUP_COMMIT_ID): (file number << 32) | the group's start offset,
  // unique in the log. A group of one carries none, as MariaDB writes it:
  // the event is sized in the serial section (the 8-byte slot reserved at
  // append is dropped by moving the event's first 32 bytes, whose checksum
  // is computed there anyway), which measured no dearer than always
  // writing a commit_id (benchmarks/README.md, "commit_bench --flavor"),
  // so the files stay byte-compatible with MariaDB's. Errors on top of the
  // above: InvalidArgument for an AppendCommitGtid event in a kMariaDB log
  // or an AppendMariaCommitGtid one in a kMySQL log, a kAnonymous or
  // seq_no-0 kAssigned MariaDB CommitGtid, or an XA xid out of range;
  // AlreadyExists (this transaction alone; the log goes on) for a
  // kAssigned seq_no that is out of order under Options::gtid_strict_mode.
  absl::StatusOr<CommitPosition> Commit(TransactionBuffer* txn);

  // A transaction buffer for this log: checksums as the log's, spilling
  // beyond Options::transaction_memory_limit to an unlinked temporary file
  // in Options::transaction_spill_dir (default: the log's directory)
  // through Options::file_system, and refusing transactions larger than
  // Options::max_transaction_size (see TransactionBufferOptions). Reuse it
  // across transactions (Clear()). Thread-safe; the buffer itself is not.
  // It must not outlive Options::file_system.
  std::unique_ptr<TransactionBuffer> NewTransactionBuffer() const;

  // Transaction identity (MySQL 8.0 behaviour).
  //
  // Reserves `uuid:gno` for a transaction that will commit with a
  // CommitGtid of kind kAssigned (MySQL's gtid_next): call it before the
  // engine work. AlreadyExists if the GTID is executed (committed to the
  // log) or owned by another transaction; InvalidArgument for gno < 1.
  // The reservation ends when the transaction commits, or with
  // ReleaseGtid() (rollback). Thread-safe.
  absl::Status AcquireGtid(const Uuid& uuid, int64_t gno);
  void ReleaseGtid(const Uuid& uuid, int64_t gno);
  // The same for a tagged GTID `uuid:tag:gno` (MySQL 8.4; a Tsid without a
  // tag is the untagged GTID).
  absl::Status AcquireGtid(const Tsid& tsid, int64_t gno);
  void ReleaseGtid(const Tsid& tsid, int64_t gno);

  // The GTIDs of every transaction in the log (gtid_executed), and of the
  // transactions in purged files (gtid_purged). Recovered at Open from the
  // last file (its Previous_gtids and complete transactions) and the first
  // file's Previous_gtids. Thread-safe; a copy. Once the log is poisoned,
  // the executed set may hold GTIDs of the group that failed (they were
  // assigned before its write); the next Open recovers the set from disk.
  // A Gtid event the caller encodes itself (AppendGtid, not a CommitGtid)
  // is written as it is and not added to the set, nor to the next file's
  // Previous_gtids; Open, which replays the Gtid events of the last file,
  // counts those of the last file only. A server gives replicated
  // transactions their GTID with a CommitGtid of kind kAssigned.
  GtidSet executed_gtids() const;
  GtidSet purged_gtids() const;

  // MariaDB flavor (Options::flavor == kMariaDB), following MariaDB 10.11.
  //
  // The log's binlog GTID state (@@gtid_binlog_state; ToString() is
  // @@gtid_binlog_pos): every GTID logged, per domain and server. Recovered
  // at Open from the last file's Gtid_list plus the Gtid events of its
  // complete transactions; updated in commit order as the flush stage
  // assigns GTIDs; written as the Gtid_list of each new file. Empty for
  // kMySQL. Thread-safe; a copy. Once the log is poisoned it may hold
  // GTIDs of the group that failed, as executed_gtids(). A MariaDB Gtid
  // event the caller encodes itself (not with AppendMariaCommitGtid) is
  // not added to the state; Open, which replays the Gtid events of the
  // last file, counts those of the last file only.
  MariaGtidState mariadb_gtid_state() const;
  // The state of the purged files: the first file's Gtid_list (what
  // MariaDB's replicas compare against when they connect). Recovered at
  // Open, updated by PurgeTo. Thread-safe; a copy.
  MariaGtidState mariadb_purged_gtid_state() const;

  // The commit-order clock: (file number << 32) | the highest
  // sequence_number whose transaction's ordered-commit callback has
  // returned (its engine commit is done). Capture it when a transaction
  // prepares and pass it to TransactionBuffer::set_commit_parent(): the log
  // makes it the transaction's last_committed (0 when that transaction is
  // in an earlier file), so replicas may apply in parallel what committed
  // concurrently here. Thread-safe, lock-free.
  uint64_t CommitClock() const;

  // Makes everything committed so far durable now (for kNever and
  // kEveryNGroups users), then publishes it. Runs between commit groups.
  // Errors: FailedPrecondition after Close() or once the log is poisoned
  // (also by a group that failed while this call waited for its turn); the
  // fdatasync error, which poisons the log.
  absl::Status Sync();

  // Closes the active file with a Rotate event and starts a new one
  // (FLUSH BINARY LOGS). Runs between commit groups. Errors as Sync().
  absl::Status Rotate();

  // Master key rotation for an encrypted log (Options::encryption; MySQL's
  // ALTER INSTANCE ROTATE BINLOG MASTER KEY). In order: the keyring
  // generates the next key (MySQLReplicationKey_<uuid>_<seqno+1>; a key
  // already stored under that id, left by an interrupted rotation, is
  // used); the active file is rotated, so new files use the new key; then
  // the header of every older encrypted file of the log is rewritten with
  // its file password re-encrypted under the new key (one 512-byte write
  // at offset 0, then fdatasync, file by file; the password, so every
  // other byte of the file, is unchanged). When it returns OK no file of
  // the log needs an older key: the server may delete them from its
  // keyring. Commits go on meanwhile (only the rotation waits its turn);
  // readers already in a file keep reading it, readers opening a file
  // read whichever header is on disk. Crash or error midway: every file
  // is readable with either its old key or the new one (each header write
  // is one sector); keep the old keys and call RotateEncryptionKey again,
  // which moves to yet another key and rewraps every file not on it.
  // Thread-safe; concurrent calls run one after the other.
  // Errors: FailedPrecondition if encryption is off, after Close or once
  // the log is poisoned; the keyring's error (the old key missing for a
  // file: NotFound naming the key id); an I/O error of a header rewrite
  // (the log itself goes on).
  absl::Status RotateEncryptionKey();

  // Deletes the files numbered below `file_number` (PURGE BINARY LOGS TO),
  // never the active file and never a file a reader of this log has open:
  // purging stops at the first such file. The index is rewritten first
  // (crash-safe), then the files are removed. Does not block commits.
  // Returns the number of files deleted. FailedPrecondition after Close.
  absl::StatusOr<int> PurgeTo(uint64_t file_number);

  // Deletes the files whose last event is older than `cutoff` (PURGE
  // BINARY LOGS BEFORE): the oldest files up to the first whose last
  // event's timestamp is at or after `cutoff` (the timestamps of a log
  // grow from file to file). As PurgeTo: never the active file, never a
  // file a reader has open (purging stops there), the index first. The
  // result says what was deleted and what was kept and why. Thread-safe;
  // does not block commits; a purge that a concurrent Reset overtakes
  // deletes nothing. Errors: FailedPrecondition after Close; the I/O error
  // of reading a file's last event or of the index update (nothing
  // deleted then), or of a removal.
  absl::StatusOr<PurgeResult> PurgeBefore(absl::Time cutoff);

  // Deletes every file and starts again with an empty log whose first file
  // is `first_file_number` (RESET MASTER; MySQL 8.0.23+'s RESET MASTER TO
  // N). The GTID state (executed and purged sets) is cleared. Runs between
  // commit groups. Crash-safe: an intent record (`<basename>.reset`) is
  // made durable first, and Open finishes a reset a crash interrupted, so
  // the index and the files always agree. Options::flush_engine_logs runs
  // first (the files' transactions can never be scanned again); its error
  // refuses the Reset and changes nothing. A reader created while Reset
  // runs gets NotFound. Errors: FailedPrecondition while any reader of
  // this log is open (nothing changes), after Close or once the log is
  // poisoned; InvalidArgument for a number outside 1..2^31-1; the hook's
  // error; an I/O error poisons the log (reopen to finish the reset). A
  // GTID index (`<file>.gidx`) that cannot be removed does not stop the
  // reset: its error is returned once the reset is done, the log not
  // poisoned. Indexes are removed before their files, and index builds
  // under way are cancelled first.
  absl::Status Reset(uint64_t first_file_number = 1);

  // Closes the log: runs after every Commit, Sync and Rotate that started
  // before it has finished (they complete normally), writes a Stop event,
  // makes it durable, clears the in-use flag, makes that durable, removes
  // unused preallocated space and spare files, and releases the lock.
  // Calls that start after Close (and a second Close) fail with
  // FailedPrecondition. Readers see the end of the log.
  // Errors: if the log was poisoned before Close ran (also by a group that
  // failed while Close waited for its turn), nothing is written: the file
  // keeps its in-use flag for the next Open to recover, the log is closed
  // all the same, and the poisoning error is returned. A write or sync
  // error of the close itself is returned the same way.
  absl::Status Close();

  // A tailing reader of this log. See binlog/reader.h.
  absl::StatusOr<std::unique_ptr<Reader>> NewReader(
      const ReaderOptions& options);

  // A tailing reader for a replica that has the GTIDs `have` (GTID
  // auto-positioning): it starts in the file where the first transaction
  // the replica lacks can be and skips the transactions it has. See
  // binlog/gtid_reader.h for the rule and the errors. options.start_file
  // and start_offset are ignored.
  absl::StatusOr<std::unique_ptr<GtidReader>> NewGtidReader(
      const GtidSet& have, const ReaderOptions& options);

  // The same for a MariaDB replica at GTID position `position` (its
  // @@gtid_slave_pos, one GTID per domain) in a kMariaDB log: see
  // binlog/gtid_reader.h for MariaDB's rule and errors.
  absl::StatusOr<std::unique_ptr<GtidReader>> NewMariaGtidReader(
      const MariaGtidState& position, const ReaderOptions& options);

  // The files of the log, oldest first.
  std::vector<LogFileInfo> ListFiles() const;

  // The end readers may read up to now: (file number, offset).
  CommitPosition VisibleEnd() const;

  const RecoveryReport& recovery() const;
  LogStats stats() const;
  const std::string& dir() const;
  const std::string& basename() const;

 private:
  friend class PendingRecovery;
  explicit Binlog(std::unique_ptr<internal::BinlogImpl> impl);
  // Gives a GTID reader starting in file `start` the jumps of its GTID
  // index (binlog/gtid_index.h); `files` are the log's, oldest first.
  void UseGtidIndex(GtidReader* g, uint64_t start, const std::vector<uint64_t>& files,
                    const ReaderOptions& ro, const GtidSet& have,
                    const MariaGtidState& position);

  std::unique_ptr<internal::BinlogImpl> impl_;
};

// A log between BeginRecovery and Finish: it holds the log's lock.
// Destroying it without Finish releases the lock and changes nothing.
// Thread safety: not thread-safe (one thread recovers).
class PendingRecovery {
 public:
  ~PendingRecovery();
  PendingRecovery(const PendingRecovery&) = delete;
  PendingRecovery& operator=(const PendingRecovery&) = delete;

  // What the scan found. Valid until Finish or destruction.
  const XidRecoveryScan& scan() const { return scan_; }

  // Finishes recovery and returns the open log (see BeginRecovery).
  // Call it once the engine's recovery decisions are durable. Errors: as
  // Open(); FailedPrecondition on a second call. After an error the log
  // is not open and the lock is released; a later BeginRecovery starts
  // over.
  absl::StatusOr<std::unique_ptr<Binlog>> Finish();

 private:
  friend class Binlog;
  PendingRecovery(std::unique_ptr<internal::BinlogImpl> impl,
                  XidRecoveryScan scan);

  std::unique_ptr<internal::BinlogImpl> impl_;
  XidRecoveryScan scan_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_H_
