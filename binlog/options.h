// File: binlog/options.h
//
// Options of a Binlog (the writer side of a log) and of its readers.
// Defaults are durable: sync every commit group, checksums on.
//
// Thread safety: thread-compatible (plain values, copied by Binlog::Open
// and by each reader). The callbacks (on_group_commit, file_header) are
// called from the log's own threads; their comments say which, and what
// they may not do.
// Errors: Binlog::Open checks the values and returns InvalidArgument for
// a bad one (naming it); nothing here fails by itself.
// Lifetime: `file_system`, when set, must outlive the Binlog and its
// readers; whatever the callbacks capture must outlive the Binlog.

#ifndef BINLOG_BINLOG_OPTIONS_H_
#define BINLOG_BINLOG_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/keyring.h"
#include "binlog/transaction.h"
#include "binlog/writeset.h"
#include "io/file_system.h"
#include "io/types.h"  // io::PreallocMode, io::Codec

namespace binlog {

// When the log makes committed data durable.
enum class SyncPolicy {
  // fdatasync after every commit group before Commit returns. Durable: a
  // Commit that returned OK survives power loss. (sync_binlog=1)
  kEveryGroup,
  // fdatasync after every `sync_every_n` groups. NOT durable: up to N-1
  // acknowledged groups can be lost on power loss. (sync_binlog=N)
  kEveryNGroups,
  // Never fdatasync on commit (the OS writes back when it likes). NOT
  // durable: acknowledged commits can be lost on power loss; a process crash
  // loses nothing. (sync_binlog=0)
  kNever,
};

// When readers of the live log may see a committed group.
enum class ReaderVisibility {
  // After the group is durable under the SyncPolicy: under kEveryGroup,
  // after its fdatasync, so a reader (a replica) never receives a
  // transaction that a crash could take back. Under kEveryNGroups and kNever
  // groups are not synced one by one, so they become visible once written.
  kAfterSync,
  // As soon as the group is written (before its fdatasync). Lower latency
  // for readers; a reader may see transactions a power loss then removes.
  kAfterWrite,
};

// How Open treats damage in the last file (the file a crash interrupted).
enum class RecoveryMode {
  // Cut only what a crash can explain. The file is cut at the end of its
  // last complete transaction when what follows is a torn tail. When the
  // file was written under SyncPolicy::kEveryGroup and a valid event ends
  // further past the first bad event than one unsynced window
  // (Options::max_unsynced_bytes when the file was written, plus the bad
  // event's declared size) can reach, the damage is media corruption, not
  // a torn write: Open fails with DataLoss naming the file and offset and
  // changes nothing. Files written under the other policies (and files
  // whose policy is unknown) have no such bound and are cut.
  kTornTailOnly,
  // Cut at the end of the last complete transaction before the first bad
  // event, whatever follows (salvage: acknowledged transactions after the
  // damage are lost). recovery() reports what was cut.
  kCutAtFirstBadEvent,
};

// One transaction of a commit group, as the ordered-commit callback and
// the before-write hook see it.
struct CommittedTransaction {
  void* cookie = nullptr;      // TransactionBuffer::cookie()
  uint64_t file_number = 0;
  uint64_t start = 0;          // offset of its first event
  uint64_t end = 0;            // offset after its last event
  AssignedIdentity identity;   // with a CommitGtid: what the log assigned
};

// What the ordered-commit callback is told about a group.
struct GroupCommitInfo {
  uint64_t file_number = 0;
  uint64_t start = 0;        // offset of the group's first transaction
  uint64_t end = 0;          // end of its last transaction
  uint32_t transactions = 0;
  uint64_t group_seq = 0;    // 1, 2, 3, ... in log order
  // The group's transactions in log order (transactions of them). Valid
  // during the call only.
  absl::Span<const CommittedTransaction> txns;
};

// What the file-header callback is told about the new file.
struct FileHeaderContext {
  uint64_t file_number = 0;
  std::string file_name;  // base name, e.g. "binlog.000007"
  // The GTIDs of every transaction in the files before this one (what
  // MySQL's Previous_gtids event holds). Valid during the call only.
  const GtidSet* previous_gtids = nullptr;
  // kMariaDB: the MariaDB binlog GTID state of the files before this one
  // (what MariaDB's Gtid_list event holds). Valid during the call only;
  // nullptr for kMySQL.
  const MariaGtidState* mariadb_gtid_state = nullptr;
};

// Fills the events that follow the Format_description event of each new
// file (for example Previous_gtids, or for kMariaDB Gtid_list and
// Binlog_checkpoint). Called with the log's writer mutex held
// (during Open and rotation), so it must be quick and must not call back into
// the Binlog. A non-OK status fails the rotation and poisons the log.
using FileHeaderCallback =
    std::function<absl::Status(const FileHeaderContext&, TransactionBuffer*)>;

struct Options {
  // Whose files the log writes (binlog/format.h).
  //   kMySQL    MySQL files (the default), of the layout `mysql_layout`.
  //   kMariaDB  MariaDB 10.11 files, as mariadbd writes them: its
  //             Format_description (binlog v4, MariaDB's 171-entry
  //             post-header array, server_version below), then a Gtid_list
  //             event holding the MariaDB GTID state of the files before
  //             (Binlog::mariadb_gtid_state), then a Binlog_checkpoint
  //             naming the file itself, then the transactions, each
  //             starting with a MariaDB Gtid event
  //             (TransactionBuffer::AppendMariaCommitGtid). The checkpoint
  //             names the file itself, not an older one as MariaDB may:
  //             rotation runs after every earlier group's ordered-commit
  //             callback returned (the engine commits ran), so no earlier
  //             file holds a transaction recovery must look for, provided
  //             those commits are durable in the engine by then (an engine
  //             that commits without flushing its log, like InnoDB with
  //             innodb_flush_log_at_trx_commit != 1, must flush it before
  //             the rotation, as MariaDB waits for its checkpoint).
  //             Compression is refused (MariaDB cannot read
  //             Transaction_payload events).
  LogFlavor flavor = LogFlavor::kMySQL;

  // kMySQL: which MySQL release's files (binlog/flavor.h).
  //   k84 (the default): MySQL 8.4 LTS files: its Format_description (42
  //     post-header lengths, server_version "8.4.6" unless set), WRITESET
  //     logical clocks by default (dependency_tracking), tagged GTIDs
  //     written as Gtid_tagged_log_event (type 42).
  //   k80: MySQL 8.0 files (the 8.0.26 - 8.2 layout, server_version
  //     "8.0.36"), for readers that predate 8.4; tagged GTIDs are refused.
  // The layout belongs to the log's files: Open refuses (FailedPrecondition)
  // to continue a log whose newest file has another flavor, or the 8.4
  // layout when k80 is asked; a log of 8.0 files opened with k84 is
  // upgraded, its next file starting with the 8.4 layout, as a server
  // upgrade does. After Reset a log may take any flavor and layout.
  MySqlLayout mysql_layout = MySqlLayout::k84;

  // kMySQL: how the log computes each transaction's last_committed in its
  // serial section (MySQL's binlog_transaction_dependency_tracking, which
  // 8.4 removed, keeping only WRITESET):
  //   kDefault: kWriteset for k84 files, kCommitOrder for k80.
  //   kCommitOrder: the commit-order clock the transaction captured at
  //     prepare (TransactionBuffer::set_commit_parent, or
  //     Binlog::CommitClock at Commit).
  //   kWriteset: that value lowered to the newest earlier transaction that
  //     wrote one of the same unique keys (TransactionBuffer's writeset,
  //     filled by RowsWriter or the caller; rules in binlog/writeset.h), as
  //     MySQL 8.4 does; a transaction without a usable writeset, or an
  //     isolated one, keeps its commit-order value and later ones depend on
  //     it. Computed in commit order, so concurrent transactions on the
  //     same row see each other in the order the log gives them.
  enum class DependencyTracking { kDefault, kCommitOrder, kWriteset };
  DependencyTracking dependency_tracking = DependencyTracking::kDefault;
  // binlog_transaction_dependency_history_size: the most key hashes the
  // writeset history keeps, 1..1000000 (InvalidArgument otherwise). When
  // full it is cleared and later transactions depend on the one that filled
  // it. Memory: 16-byte slots, at least two per entry (1 MiB at the
  // default), allocated at Open.
  size_t writeset_history_size = kDefaultWritesetHistorySize;

  // kMariaDB: MariaDB's gtid_domain_id, the domain of the GTIDs the log
  // assigns to this server's transactions (CommitGtid kAutomatic without a
  // domain of its own).
  uint32_t gtid_domain_id = 0;

  // kMariaDB: MariaDB's gtid_strict_mode. When true, a CommitGtid of kind
  // kAssigned whose seq_no is not above the highest seq_no its domain has
  // in the log is refused with AlreadyExists (nothing of it is written);
  // when false (MariaDB's default, followed here) it is logged. Automatic
  // GTIDs are in order either way.
  bool gtid_strict_mode = false;

  // File system to use; nullptr means io::FileSystem::Default() (POSIX).
  // Must outlive the Binlog and its readers.
  io::FileSystem* file_system = nullptr;

  // Permission bits (before the process umask) of the files the log
  // creates (binlog files, the index, the lock file and its other small
  // files) and of its directory when Open creates it. The defaults are
  // MySQL's, rw-r----- and rwxr-x---: a binlog holds every row change, so
  // other users must not read it (an unencrypted one is the data in the
  // clear). Existing files and directories keep their modes. Transaction
  // spill files are unnamed and 0600 (io::FileSystem::NewTempFile).
  uint32_t file_mode = io::kDefaultFilePermissions;
  uint32_t directory_mode = io::kDefaultDirectoryPermissions;

  // Encryption at rest (MySQL 8.0.14+'s binlog_encryption=ON; format in
  // binlog/FORMAT.md "Encrypted files"). When true every new file is
  // encrypted: a 512-byte header (key id, the file's random password
  // encrypted under the master key, IV) and then the plain file's bytes
  // under AES-256-CTR. Offsets, log_pos values, CommitPosition and reader
  // positions are those of the plain file (the header is not counted).
  // Needs `keyring`; refused with InvalidArgument for kMariaDB (MariaDB
  // encrypts its binlogs in its own, different format). The master key is
  // MySQLReplicationKey_<server_uuid>_<seqno>: at the first encrypted file
  // of a log the keyring generates seqno 1; later Opens use the key of the
  // newest encrypted file; Binlog::RotateEncryptionKey moves to the next.
  // Files written before encryption was turned on stay plain (as MySQL).
  bool encryption = false;
  // Where master keys come from (binlog/keyring.h). Also needed, with
  // encryption off, to read (and recover) encrypted files written earlier.
  // Must outlive the Binlog and its readers.
  Keyring* keyring = nullptr;

  // Transaction buffers made by Binlog::NewTransactionBuffer() (see
  // TransactionBufferOptions in binlog/transaction.h): they spill the
  // completed events beyond transaction_memory_limit bytes to an unlinked
  // temporary file in transaction_spill_dir (empty: the log's directory),
  // through file_system, and refuse transactions larger than
  // max_transaction_size (ResourceExhausted; MySQL's
  // max_binlog_cache_size). Defaults: 8 MiB
  // (kDefaultTransactionMemoryLimit) and just under 4 GiB
  // (kMaxTransactionSize, the most log_pos allows). Open refuses a
  // memory limit below 4096 or a max_transaction_size above
  // kMaxTransactionSize (InvalidArgument).
  std::string transaction_spill_dir;
  size_t transaction_memory_limit = 8 << 20;
  uint64_t max_transaction_size = 0xFFFFFFFFull - (1ull << 20);

  // Create the directory and an empty log if missing.
  bool create_if_missing = true;

  // server_id written in the headers of events the library creates.
  uint32_t server_id = 1;

  // This server's UUID (MySQL's server_uuid): the source of the GTIDs the
  // log assigns to transactions with a CommitGtid of kind kAutomatic. All
  // zero (the default): such transactions are refused.
  Uuid server_uuid;

  // Server version announced in the Format_description event. Must parse as
  // X.Y.Z >= 5.6.1 so that readers honour the checksum byte. Empty (the
  // default) means the flavor's: "8.4.6" for kMySQL with the k84 layout,
  // "8.0.36" with k80 (the event layout is MySQL 8.0.26 - 8.2's, so a
  // version in that range is the honest choice), "10.11.19-MariaDB-log"
  // for kMariaDB (the MariaDB release whose
  // files the flavor reproduces; MariaDB readers recognize their own
  // server by "MariaDB" in the string).
  std::string server_version;

  // CRC32 footers on every event (binlog_checksum=CRC32).
  bool checksums = true;

  // Rotate after the commit that makes the active file reach this size. A
  // transaction never splits across files, so a file can be larger. Range
  // 4096 .. 4 GiB - 64 MiB (log_pos is 32-bit).
  uint64_t max_file_size = 1ull << 30;

  // Preallocated files (io/preallocator.h): once the active file is half
  // full, a background thread prepares the next file(s) at full size, so a
  // rotation renames a ready file instead of creating one, and commits
  // never pay for growing a file (fdatasync then persists no size change).
  // kZeroFill writes the zeros (no metadata updates at all later; costs
  // background disk bandwidth equal to the log's); kFallocate only reserves
  // space (unwritten extents: the first write of each block still updates
  // metadata); kNone creates files as they are needed.
  io::PreallocMode preallocate = io::PreallocMode::kZeroFill;
  // Spare files kept ready (1..8).
  int preallocated_files = 1;
  // With kZeroFill, a file that did not come from a spare (the first file
  // after Open or Reset, or a rotation that found no spare ready) is only
  // fallocated; a background thread then zero-fills it this many bytes
  // ahead of the written end (1 MiB written and fdatasync'ed at a time,
  // through a handle of its own; io/zero_frontier.h), so commits in it get
  // the speed of a zero-filled spare once the thread is ahead, without
  // Open waiting for it. 0 turns it off; it is off with SyncPolicy::kNever
  // (no fdatasync waits on the extent conversions it saves) and on kernels
  // older than Linux 4.13 (its handle's fdatasync could consume a write-back
  // error the log's own fdatasync must see). A failed fdatasync of the
  // thread's is also reported by the log's next fdatasync, which then
  // fails the commit (and the log) as any fdatasync failure does. Costs
  // background disk writes of up to this much beyond the log's own per
  // file.
  uint64_t zero_ahead = 8 << 20;
  // At rotation and Close, cut the unused preallocated space, so closed
  // files end at their last event (mysqlbinlog reads files to the end).
  // Turning this off leaves zeros after the Rotate/Stop event.
  bool trim_preallocated = true;
  // Rotation off the commit path (with SyncPolicy::kEveryGroup; rotations
  // that Flush starts when a file is full, not Binlog::Rotate): a
  // background thread creates the next file and makes its name durable
  // ahead of time (once the active file is 3/4 full); at rotation the
  // commit path only writes the old file's Rotate event and the new file's
  // header events, and the rotating group's own fdatasync makes that
  // header durable. Once that sync returned, the same thread syncs the old
  // file's end, clears its in-use flag, closes it and adds the new file to
  // the index (after, not beside it: two syncs on one disk made the first
  // commit in each new file wait for both; 1 thread: 360-380 us before,
  // 246-286 after, benchmarks/README.md "Regression guards"). A crash can
  // therefore leave the file before the last one unclosed, or a newest file
  // the index does not name yet; Open closes the former and adopts the
  // latter (RecoveryReport::closed_files, adopted_files). false: every
  // rotation closes, creates, syncs and indexes in line, as MySQL does.
  bool background_rotation = true;

  SyncPolicy sync_policy = SyncPolicy::kEveryGroup;
  // For kEveryNGroups: groups per fdatasync (>= 1).
  uint32_t sync_every_n = 1;

  // Before each fdatasync, wait up to this many microseconds for more
  // commits to join the group (binlog_group_commit_sync_delay). 0: no wait.
  // Trades latency for fewer fdatasyncs; 0..1000000.
  uint32_t sync_delay_us = 0;
  // Stop waiting once this many transactions are in the group
  // (binlog_group_commit_sync_no_delay_count). 0: wait the whole delay.
  uint32_t sync_no_delay_count = 0;

  ReaderVisibility reader_visibility = ReaderVisibility::kAfterSync;

  // Largest commit group in bytes (LevelDB caps its write groups the same
  // way): a group is written with one pwritev and synced once, so the cap
  // bounds the latency one group adds to its first committer and the bytes
  // a crash can tear. A transaction larger than this is a group of its own.
  // 64 KiB .. 1 GiB.
  uint64_t max_group_bytes = 4 << 20;
  // Under kEveryGroup, the log never writes more than this many bytes past
  // the end its last completed fdatasync covers: the flush stage waits for
  // sync rounds before writing ahead, and a transaction larger than this is
  // written in pieces of this size, each synced before the next. So after
  // a crash, damage further than this past the first bad byte cannot be a
  // torn tail (see recovery_mode). Recorded for every file in
  // `<basename>.recovery`, where recovery reads it. >= max_group_bytes,
  // <= 1 GiB.
  uint64_t max_unsynced_bytes = 8 << 20;

  // What Open does when the last file is damaged beyond a torn tail.
  RecoveryMode recovery_mode = RecoveryMode::kTornTailOnly;

  // Tailing readers that caught up are woken at most once per window while
  // commits keep coming (see sync/tail_notifier.h): a reader sees a commit
  // at most one window after it became visible, and the writer does not
  // pay for waking every reader after every group. The window is this many
  // microseconds with few sleeping readers, and widens with their number
  // (reader_wakeups_per_second) up to reader_wake_coalesce_max_us. 0: wake
  // readers after every group, whatever their number (lowest reader
  // latency, e.g. for semi-sync replication acknowledgements; the two
  // options below are then ignored). 0..100000.
  uint32_t reader_wake_coalesce_us = 1000;

  // Bytes of the most recent groups kept in memory for tailing readers
  // (binlog/tail_ring.h): a reader that has caught up takes its events
  // from there (Reader::NextBatch returns views of it, Next decodes from
  // it) instead of reading the file: no system call and no copy per
  // reader, and, for an encrypted log, no decryption per reader. A reader
  // further behind than this reads the file (with read-ahead) and comes
  // back when it catches up. The writer copies each group once (a memcpy
  // in the flush stage, no allocation). A reader that holds a view (an
  // Event or EventBatch it has not moved past) while the writer writes
  // this many bytes past it makes the ring start anew: the readers then
  // read the file until they reach the new start. Up to 1024 readers of
  // a log at a time use the ring; the ones beyond read the file. 0: no
  // ring; else a power of two in [65536, 1073741824].
  size_t reader_ring_bytes = 8 << 20;

  // With many sleeping readers the window widens so that they are woken
  // about this many times per second in all: window = sleepers /
  // reader_wakeups_per_second, within [reader_wake_coalesce_us,
  // reader_wake_coalesce_max_us]. Each reader woken costs a context switch
  // in and out; with the defaults up to 8 readers get 1 ms, 16 get 2 ms,
  // 64 get 8 ms (benchmarks/README.md "Round two": 64 batch readers cost
  // 105-117 ns per reader per transaction at 8 ms, 175-191 at 1 ms). 0: the
  // window is reader_wake_coalesce_us whatever the number of readers.
  // The trade is lag for CPU: a reader woken costs it 3.5-5.2 us on the
  // development VM, and a reader waits up to one window. With 64 readers
  // of a log taking 50k transactions per second, the default gives a lag
  // p99 of 7.9 ms (batch readers) / 7.8 ms (decoded); 32000, 2.1 ms for
  // 2.2x / 1.4x the reader CPU; 0 (a 1 ms window whatever the number of
  // readers), 1.1 / 1.2 ms for 3.2x / 1.8x, and a writer that keeps less
  // of its throughput when unpaced (0.74 / 0.80 of it alone, against 1.05
  // / 0.89 at the default) (benchmarks/README.md "Round three: tailing
  // readers").
  uint32_t reader_wakeups_per_second = 8000;

  // The widest window (<= 100000; below reader_wake_coalesce_us it counts
  // as reader_wake_coalesce_us): the most a caught-up reader waits behind a
  // visible commit.
  uint32_t reader_wake_coalesce_max_us = 10000;

  // Ordered-commit callback: called once per group, in log order, after the
  // group is durable under the policy and visible to readers, before the
  // group's Commit calls return (a server runs its engine commits and
  // semi-sync waits here). It runs on one committing thread while the next
  // group may be written; it must not call back into the Binlog. Commits of
  // the group wait for it, so it bounds their latency.
  std::function<void(const GroupCommitInfo&)> on_group_commit;

  // Called once per group in the flush stage, in log order, before the
  // group's positions and identities are assigned and before its bytes are
  // written: MySQL's "flush the engine's log first" point, so that a
  // transaction prepared in an engine is durable there before its binlog
  // bytes can be. GroupCommitInfo carries the group's cookies (positions
  // and identities are not known yet: zero). A non-OK status fails the
  // group and poisons the log (nothing of the group is written). It must
  // not call back into the Binlog; commits of later groups wait for it.
  std::function<absl::Status(const GroupCommitInfo&)> before_group_write;

  // Called before the log leaves a file for good, at every rotation (by
  // size or Rotate()) and at Close() (also the Close of ~Binlog), after
  // every earlier ordered-commit callback has returned and before the
  // Rotate or Stop event is written: the server makes its engine's commits
  // durable here (MySQL's ha_flush_logs before rotating). Two-phase-commit
  // recovery (BeginRecovery) then scans only the last file: no earlier
  // file holds a transaction whose engine commit a crash could lose. So
  // the hook must fail if an engine commit in an ordered-commit callback
  // failed since the last call (that transaction is only prepared: the
  // log must not leave its file). A non-OK status fails the rotation (and
  // poisons the log) or the Close (the file keeps its in-use flag for
  // recovery). It runs with the log's writer role held, on a committing
  // thread (rotation by size) or the thread that called Rotate() or
  // Close(): it must not call back into the Binlog, and commits wait for
  // it. What it uses (the engine) must outlive the Binlog. A server that
  // sets it must open the log with Binlog::BeginRecovery after a crash
  // (Open refuses).
  std::function<absl::Status()> flush_engine_logs;

  // Events after the Format_description event of every new file. When
  // unset the library writes a Previous_gtids event holding the GTIDs of
  // every transaction in the files before (empty without GTIDs, as MySQL
  // 5.7+ writes it with GTIDs off); for kMariaDB, a Gtid_list event
  // holding FileHeaderContext::mariadb_gtid_state and a Binlog_checkpoint
  // naming the new file (see `flavor`).
  // A callback should write a Previous_gtids event holding
  // FileHeaderContext::previous_gtids: Open recovers the GTIDs of earlier
  // files from the last file's Previous_gtids. For kMariaDB it should
  // write, first, a Gtid_list event holding *mariadb_gtid_state (Open
  // recovers the MariaDB GTID state from the last file's Gtid_list, and
  // the purged state from the first file's) and a Binlog_checkpoint
  // naming FileHeaderContext::file_name (AppendMariaGtidList and
  // AppendBinlogCheckpoint in binlog/event_builder.h write both).
  FileHeaderCallback file_header;

  // Automatic expiry (binlog_expire_logs_seconds): files whose last event
  // is older than this are purged in the background (as PurgeBefore(now -
  // expire_after)), at Open, after every rotation, and at least every
  // expire_after / 8 (between 1 second and 1 hour). Never the active file
  // or a file a reader has open. Zero (the default): never. MySQL 8.0's
  // default is 30 days; a server that wants it sets it. LogStats counts
  // the files expired and the last expiry error.
  absl::Duration expire_after = absl::ZeroDuration();

  // Seconds since the epoch for events the library writes (FDE, Rotate,
  // Stop). When unset, the system clock.
  std::function<uint32_t()> now_seconds;

  // Transaction compression (binlog/payload.h, FORMAT.md "Compressed
  // transactions"). Commit stores each eligible transaction (a Gtid or
  // Anonymous_gtid event followed by its other events) as the Gtid event
  // plus one Transaction_payload event holding the other events compressed,
  // as MySQL 8.0.20+ does with binlog_transaction_compression=ON. The work
  // is done in the committing thread before it joins a commit group.
  //   kNone  plain events (the default: files stay readable by MariaDB's
  //          mariadb-binlog, which cannot read Transaction_payload events;
  //          the only value a kMariaDB log accepts: Open refuses the others
  //          with InvalidArgument)
  //   kZstd  MySQL's format: MySQL 8.0.20+ mysqlbinlog and servers read it
  //   kLz4   this library's extension (compression type 128): faster, only
  //          this library's readers understand it
  io::Codec compression = io::Codec::kNone;
  // Codec level; 0 means the codec's default (zstd 3, as MySQL's
  // binlog_transaction_compression_level_zstd; lz4 fast mode). zstd 1..22,
  // lz4 -16..12 (see io/codec.h).
  int compression_level = 0;
  // Transactions whose compressible events (all but the Gtid event) total
  // fewer bytes than this are written plainly: below a few hundred bytes
  // the payload header and frame overhead eat most of the gain, and readers
  // pay a decompression per transaction. A transaction that does not get
  // smaller is written plainly too.
  size_t compression_threshold = 256;

  // The GTID index (binlog/gtid_index.h, FORMAT.md "GTID index files"):
  // after each rotation (and at Open, for the newest file a Close or a
  // crash ended) a thread of the log's own reads the closed file once and
  // writes `<file>.gidx` beside it, an entry about every this many bytes
  // of the file, so a GTID reader (Binlog::NewGtidReader,
  // NewMariaGtidReader, the at-rest readers) starts near the replica's
  // position instead of reading the whole start file. Never on the commit
  // path; Close waits for the files closed before it, at most
  // gtid_index_close_wait. Purge and Reset remove the index with its file.
  // 0: the log writes none (readers still build one on demand,
  // ReaderOptions::gtid_index_interval). Default 4 MiB (a few KiB of index
  // per 256 MiB file). Encrypted logs (`keyring`) get no index (it would
  // hold their GTID states in clear). The builder's thread starts at Open
  // (ResourceExhausted when it cannot), never on the commit path.
  uint64_t gtid_index_interval = uint64_t{4} << 20;
  // How long Close waits for the GTID index builds still queued (a queue
  // of large files takes as long as reading them); then the rest are
  // cancelled (those files get their index from the next reader that
  // starts in them). Zero: cancel at once. Default 10 s.
  absl::Duration gtid_index_close_wait = absl::Seconds(10);
};

// How a reader treats the CRC32 footer of each event.
enum class ChecksumMode {
  kVerify,  // a mismatch is a DataLoss error naming file and offset
  kReport,  // deliver the event with Event::checksum == kBad
  kSkip,    // do not compute checksums (Event::checksum == kNone)
};

// How a reader returns Transaction_payload events (type 40).
enum class PayloadMode {
  // Expanded: the payload's inner events, one by one, each with the
  // payload's position (Event::offset and end_offset are the payload
  // event's) and Event::from_payload set. The payload event itself is not
  // returned. What applications and tools want.
  kDecoded,
  // As stored: the payload event itself, byte for byte, for a server that
  // forwards it to a replica without decompressing and recompressing.
  kRaw,
};

struct ReaderOptions {
  // First file to read (its number, e.g. 3 for "binlog.000003"); 0 means the
  // oldest file.
  uint64_t start_file = 0;
  // Offset in the first file of the first event to return; 0 (or 4) means
  // the file's first event, the Format_description event. Otherwise it must
  // be an event boundary (an end position a Commit returned, for example);
  // the Format_description event is still read, because it says whether
  // events carry checksums, but not returned.
  uint64_t start_offset = 0;

  // Bytes read per I/O. 64 KiB .. 64 MiB.
  size_t buffer_size = 1 << 20;

  // Read the next buffer_size window in a helper thread while the events of
  // the current one are validated and returned (io/sequential_reader.h).
  // Off by default, for live and at-rest readers alike, because measured it
  // did not pay (benchmarks/README.md, "read_bench"): on the development
  // machine (2 vCPUs shared with other work, a virtio disk with 8 MiB of
  // kernel read-ahead) it cost 10-45% of read throughput, hot and cold:
  // the kernel's read-ahead, asked for with SEQUENTIAL and a WILLNEED hint
  // per window (always on), already starts the disk reads early, and the
  // handoff to the helper adds two thread wake-ups per window. Turn it on
  // for readers of old files on slow disks with idle cores, where the
  // helper's read overlaps the caller's checksumming. Only whole windows
  // below the readable end are prefetched, so a caught-up tailing reader
  // never starts the helper either way. Costs, per reader that lags a
  // window or more: one helper thread and one more buffer_size buffer.
  // Encrypted files (binlog_encryption, read through a decrypting file
  // system): the helper also decrypts the window it reads (and looks for
  // runs of raw zeros in it), so decryption leaves the caller's thread;
  // errors come at the same event as without it (a failed read ahead is
  // read again when the caller needs the bytes). Off by default for them
  // too: measured (benchmarks/README.md "Encryption"), it cost 10-25% more
  // CPU in all (a window crosses to the caller's core; two thread
  // wake-ups per window) and gained no wall time on the development VM,
  // even with its other core idle (VAES decryption, about 31 GB/s on one
  // core, is a quarter of an encrypted reader's CPU per byte).
  bool prefetch = false;
  // Drop the pages of consumed bytes from the page cache (posix_fadvise
  // DONTNEED, a window at a time), so a replica reading old files does not
  // evict what the writer and the caught-up readers use. Off by default:
  // on a live file the pages behind one reader are often the ones the next
  // reader needs.
  bool drop_behind = false;

  ChecksumMode checksum_mode = ChecksumMode::kVerify;

  // For a tailing reader of a live log (Binlog::NewReader): also verify,
  // under checksum_mode, the CRC32 of events it reads from the log's
  // in-memory ring of recent groups (Options::reader_ring_bytes: the bytes
  // this Binlog object wrote and published, never read back from a file).
  // Off by default: the writer computed those checksums over those very
  // bytes a moment ago, and
  // every tailing reader re-verifying them is CRC32 of each byte once per
  // reader (64 readers: 64 times; the largest cost of a decoded tailing
  // reader, benchmarks/README.md "Round three: tailing readers"). MySQL's
  // dump threads do not verify either by default (source_verify_checksum,
  // formerly master_verify_checksum, OFF). Such events are returned with
  // Event::checksum == kNone, as under ChecksumMode::kSkip.
  // Whatever this says, checksum_mode applies in full to every byte read
  // from a file (the disk or the page cache may have changed it): every
  // file of Reader::OpenDirectory / OpenFiles, and, in a tailing reader,
  // events read from the files, this Binlog's included, and the files of
  // the log written before this Binlog was opened. Each file's
  // Format_description event is always verified under checksum_mode.
  // NextBatch does not consult it (BatchOptions::verify_checksums decides).
  bool verify_published_checksums = false;

  // Check that every event's log_pos equals its end offset (true for every
  // binlog a server writes). Relay-log files (the relay flag in their
  // Format_description) are never checked, whatever this says.
  bool check_log_pos = true;

  // GTID readers (Binlog::NewGtidReader, NewMariaGtidReader and the
  // at-rest readers of binlog/gtid_reader.h): the spacing, in bytes of the
  // binlog file, of the entries of the GTID index (`<file>.gidx`, FORMAT.md
  // "GTID index files") a reader builds for a closed start file that has
  // none, or none that checks out (written back when the directory allows).
  // With an index, a GTID connect reads from the entry nearest the
  // replica's position instead of the file's start. 0: the readers neither
  // use nor build an index (every connect reads its start file from its
  // first event). Default 4 MiB (a few KiB of index per 256 MiB file).
  // MariaDB-encrypted files (Start_encryption) get none; a caller reading
  // MySQL-encrypted files through a decrypting FileSystem should set 0,
  // or the index holds their GTID states in clear.
  uint64_t gtid_index_interval = uint64_t{4} << 20;

  // How Transaction_payload events (compressed transactions) are returned.
  PayloadMode payloads = PayloadMode::kDecoded;
  // Largest decompressed payload accepted (kDecoded); a payload that
  // declares or inflates to more is DataLoss, and nothing near that size
  // is allocated for a payload that only claims it. Default 1 GiB
  // (MySQL's max_log_event_size), the limit the writer enforces
  // (kMaxPayloadSize): a reader with the default reads every payload the
  // log accepts. A payload that really inflates to a size whose memory
  // cannot be had (a memory limit) is ResourceExhausted naming the file
  // and offset, never an exception.
  size_t max_payload_size = kMaxPayloadSize;

  // Keys for MariaDB-encrypted binlogs (encrypt_binlog): key id -> key, as
  // MariaDB's file_key_management plugin reads them from its key file
  // (ParseMariaKeyFile in binlog/maria_encryption.h). With the key of id 1
  // the events after a file's Start_encryption event are decrypted and
  // returned as the server wrote them; without it the reader stops there
  // (Unimplemented).
  std::map<uint32_t, std::string> mariadb_binlog_keys;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_OPTIONS_H_
