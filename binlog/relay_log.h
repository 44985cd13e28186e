// File: binlog/relay_log.h
//
// RelayLog: a replica's relay log (MySQL 8.0 behaviour). The replica's
// receiver (MySQL's I/O thread) gets the source's binlog as a stream of
// events and appends each one here as it arrives; the applier reads the
// files back with Reader (binlog/reader.h) and records how far it got in a
// PositionStore (binlog/position_store.h).
//
// Files. The same naming, index file and readers as the binlog:
// `<basename>.000001`, ... and `<basename>.index` in one directory (the
// index protocol of binlog/index_file.h). Each relay file is laid out as
// MySQL lays out its relay logs (verified against MySQL's
// MYSQL_BIN_LOG::open_binlog and the receiver's queue_event, sql/binlog.cc
// and sql/rpl_replica.cc):
//   magic
//   Format_description of this replica, flagged as a relay log
//     (LOG_EVENT_RELAY_LOG_F, 0x40, in its header flags; the in-use flag
//     while the file is active), server_id = RelayLogOptions::server_id
//   Previous_gtids of this replica, flagged as a relay log too: the GTIDs
//     received in earlier relay files (MySQL's Retrieved_Gtid_Set when the
//     file was started)
//   [the source's Format_description, once one was received: a copy marked
//     artificial (LOG_EVENT_ARTIFICIAL_F, log_pos 0) with created = 0, as
//     open_binlog writes it]
//   [a Rotate to the source position (server_id 0, the source's file name
//     and the position where this file's events continue in it), once the
//     source file is known. MySQL writes this event where the source's
//     Previous_gtids arrives (write_rotate_to_master_pos_into_relay_log);
//     this writer also writes it at the start of every relay file, so that
//     every file names its source coordinates by itself (recovery reads one
//     file, not the whole relay log)]
//   the source's events as received, byte for byte: their log_pos (the
//     source's positions) and checksums are kept. Exceptions, as MySQL's
//     receiver: the source's Previous_gtids is not stored (a Rotate to the
//     source position takes its place), Stop and Heartbeat events are not
//     stored. And an artificial Rotate (log_pos 0, not part of the
//     source's binlog) whose checksum setting is not the relay file's is
//     stored re-encoded under the file's (a sender checksums it with the
//     setting of the file it names, which arrives just after it).
//   at rotation: a Rotate naming the next relay file, with the relay flag
//     (MySQL's Rotate_log_event::RELAY_LOG), then the in-use flag cleared.
// Events this replica writes (its Format_description, Previous_gtids and
// Rotate events) carry their end offset in the relay file as log_pos, as
// MySQL's Log_event::write_header computes it for a relay log's own events.
// The relay file's checksum setting is the source's (the algorithm of the
// last Format_description received; RelayLogOptions::checksums before one
// is known). A source Format_description with another algorithm starts a
// new relay file, so one file never mixes the two.
//
// Rotation: after an event that leaves no transaction open, when the file
// reached RelayLogOptions::max_file_size (max_relay_log_size), and after a
// Rotate from the source that is not artificial (the source rotated; the
// artificial Rotate a source sends when a replica connects does not
// rotate). A transaction is never split across relay files (MySQL 8.0
// also waits for the end of the transaction when GTIDs are on).
//
// Durability (RelayLogOptions::sync, MySQL's sync_relay_log): data are
// made durable (fdatasync) at the end of every transaction (kEveryGroup),
// or every N events (kEveryNEvents). durable_source_position() is the
// source position (file, log_pos) after the last complete transaction that
// is durable: what the receiver may record in its PositionStore, and where
// it fetches from after a crash.
//
// Open and recovery. Open() takes `<basename>.lock`, reads the index and
// the last relay file. If that file was not closed cleanly, what follows
// its last complete transaction (a partial transaction, torn or
// checksum-bad events, zeros) is cut, durably, then its in-use flag is
// cleared, durably (the binlog's recovery, binlog/file_recovery.h). Damage
// in an active relay file is cut like a torn tail: everything after the
// cut is fetched again from the source, from recovery().fetch_from, so no
// data is lost. With RelayRecovery::kDiscard (relay_log_recovery=ON) the
// relay files are not read at all: they are all deleted and the receiver
// fetches again from RelayLogOptions::discard_fetch_from (the applier's
// position from its PositionStore). Either way a new relay file is then
// started, as MySQL does at every receiver start, and the index and the
// files agree after a crash at any point of recovery.
//
// Thread safety: thread-compatible. One thread (the receiver) calls
// Append, Sync, Rotate and Close; const accessors may be called by other
// threads only under the caller's own locking. Readers (Reader::OpenFiles
// or OpenDirectory) may read closed relay files at any time, and the
// active file up to durable_relay_position().
// Errors: InvalidArgument for a malformed event (nothing written); after an
// I/O error the relay log is poisoned: every later call fails with
// FailedPrecondition carrying the original error, nothing is retried
// (reopen to recover). FailedPrecondition after Close().
// Lifetime: RelayLogOptions::file_system must outlive the RelayLog.
// Flavor: MySQL sources (Previous_gtids, Gtid events). MariaDB relay logs
// (Gtid_list headers) are not written by this version.

#ifndef BINLOG_BINLOG_RELAY_LOG_H_
#define BINLOG_BINLOG_RELAY_LOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/gtid.h"
#include "io/file_system.h"

namespace binlog {

// A position in the source's binlog: file name and offset (log_pos).
struct SourcePosition {
  std::string file;  // e.g. "binlog.000042"; empty if not known yet
  uint64_t pos = 0;
  friend bool operator==(const SourcePosition& a, const SourcePosition& b) {
    return a.file == b.file && a.pos == b.pos;
  }
  friend bool operator!=(const SourcePosition& a, const SourcePosition& b) {
    return !(a == b);
  }
};

// A position in the relay log: relay file name and offset.
struct RelayPosition {
  std::string file;  // e.g. "relay.000007"
  uint64_t pos = 0;
  friend bool operator==(const RelayPosition& a, const RelayPosition& b) {
    return a.file == b.file && a.pos == b.pos;
  }
};

enum class RelaySyncPolicy {
  kEveryGroup,    // fdatasync at the end of every transaction (default)
  kEveryNEvents,  // fdatasync every RelayLogOptions::sync_every_events events
};

enum class RelayRecovery {
  // Keep the relay log; cut a partial transaction at its tail (default;
  // relay_log_recovery=OFF, made crash-safe).
  kDropPartial,
  // Delete every relay file and fetch again from discard_fetch_from
  // (relay_log_recovery=ON).
  kDiscard,
};

struct RelayLogOptions {
  // nullptr: io::FileSystem::Default().
  io::FileSystem* file_system = nullptr;
  bool create_if_missing = true;
  // Permission bits of the files and of a directory the relay log creates
  // (as Options::file_mode and directory_mode: MySQL's 0640 and 0750).
  uint32_t file_mode = io::kDefaultFilePermissions;
  uint32_t directory_mode = io::kDefaultDirectoryPermissions;
  // The replica's server_id and version, for the events it writes itself.
  uint32_t server_id = 2;
  std::string server_version = "8.0.36";
  // max_relay_log_size: 4096 .. 2^32 - 1 (log_pos is 32 bits).
  uint64_t max_file_size = 1ull << 30;
  // The checksum setting of a relay file started before any source
  // Format_description is known (later files follow the source's). Set
  // it to the source's binlog_checksum, as MySQL's receiver asks the
  // source for @master_binlog_checksum before the dump: the events that
  // precede the source's Format_description (its artificial Rotate) are
  // checked with it.
  bool checksums = true;
  RelaySyncPolicy sync = RelaySyncPolicy::kEveryGroup;
  uint32_t sync_every_events = 1;  // kEveryNEvents: N >= 1
  RelayRecovery recovery = RelayRecovery::kDropPartial;
  // kDiscard: where the receiver fetches from after the relay log is
  // discarded: the applier's source position (PositionStore's source_file
  // and source_pos). Required (non-empty file) with kDiscard.
  SourcePosition discard_fetch_from;
};

// What Open() found and did.
struct RelayRecoveryReport {
  bool recovered = false;   // the last file was not closed cleanly
  std::string file_name;    // that file
  uint64_t valid_end = 0;   // end of its last complete transaction
  uint64_t bytes_cut = 0;   // bytes removed after valid_end
  std::string reason;       // why the scan stopped where it did
  bool discarded = false;   // kDiscard deleted the relay files
  // Files removed: of an interrupted rotation (not indexed, numbered after
  // the last indexed file), of an interrupted discard (numbered below the
  // first indexed file), and every relay file with kDiscard.
  std::vector<std::string> removed_files;
  // Where the receiver must fetch from: the source position after the last
  // complete transaction kept (kDropPartial), or discard_fetch_from
  // (kDiscard). Empty file if the relay log never saw a source position.
  SourcePosition fetch_from;
};

class RelayLog {
 public:
  // Opens or creates the relay log `<dir>/<basename>.*`, recovering it (see
  // the file comment). Errors: Unavailable if another writer holds the
  // lock; InvalidArgument for bad options; NotFound for a missing directory
  // or index (create_if_missing false) or an indexed file that is missing;
  // DataLoss for an index or a cleanly closed last file that cannot be read
  // (nothing is changed on disk); I/O errors.
  static absl::StatusOr<std::unique_ptr<RelayLog>> Open(
      const std::string& dir, const std::string& basename,
      const RelayLogOptions& options);

  // Closes the relay log if Close() was not called (errors are lost).
  ~RelayLog();
  RelayLog(const RelayLog&) = delete;
  RelayLog& operator=(const RelayLog&) = delete;

  // Appends one whole event as received from the source (header, body and,
  // under the current checksum setting, CRC32 footer). The event is checked
  // first: its event_size must equal event.size() and lie within the
  // limits readers apply, and its CRC32 must match (MySQL's receiver
  // verifies it too); a Format_description must decode. Then it is
  // written (see the file comment for the events that are not stored), the
  // source position advances (a Rotate sets the file and position, other
  // events with a log_pos set the position), and the file is synced and
  // rotated as the policies say. A transaction may be incomplete between
  // calls. Errors: InvalidArgument for a malformed event or a Format_
  // description that changes the checksum setting inside a transaction
  // (nothing written); the I/O error that poisons the log.
  absl::Status Append(absl::string_view event);

  // Makes everything appended durable now.
  absl::Status Sync();

  // Starts a new relay file now (FLUSH RELAY LOGS). FailedPrecondition
  // inside a transaction (a transaction never spans relay files).
  absl::Status Rotate();

  // Cuts a partial transaction at the tail (it is fetched again after the
  // next Open, from durable_source_position()), makes the file durable,
  // clears its in-use flag (durable) and releases the lock. Later calls
  // fail with FailedPrecondition. Errors: the poisoning error (nothing is
  // written then: the next Open recovers), or an I/O error of the close.
  absl::Status Close();

  // The source position after the last complete transaction that is
  // durable (or after a durable file-level event that followed it, such as
  // the source's Rotate: then the next source file at 4), and the relay
  // position where it ends. Never inside a transaction. Persist these
  // (PositionStore) only after they were returned here: a store that
  // names them never names more than the relay log holds after a crash.
  const SourcePosition& durable_source_position() const { return durable_source_; }
  const RelayPosition& durable_relay_position() const { return durable_relay_; }
  // The source position after the last event appended (maybe inside a
  // transaction, maybe not durable).
  const SourcePosition& received_source_position() const { return source_; }
  // True while a transaction is open (its end not yet appended).
  bool inside_transaction() const;
  // The GTIDs of the complete transactions received (Retrieved_Gtid_Set),
  // recovered at Open from the last file.
  const GtidSet& retrieved_gtids() const { return retrieved_; }

  const RelayRecoveryReport& recovery() const { return recovery_; }
  // The indexed relay files, oldest first (names, not paths).
  std::vector<std::string> files() const;
  const std::string& active_file() const { return active_name_; }

  struct Stats {
    uint64_t events = 0;      // events appended
    uint64_t events_stored = 0;
    uint64_t syncs = 0;
    uint64_t rotations = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Impl;
  RelayLog(std::string dir, std::string basename, const RelayLogOptions& o);

  absl::Status OpenImpl();
  absl::Status StartNewFile(uint64_t number, bool at_startup);
  absl::Status RotateTo(bool next_checksums);
  absl::Status Poison(absl::Status s);
  absl::Status CheckUsable() const;

  std::string dir_;
  std::string basename_;
  RelayLogOptions options_;
  std::unique_ptr<Impl> impl_;
  SourcePosition source_;
  SourcePosition durable_source_;
  RelayPosition durable_relay_;
  GtidSet retrieved_;
  RelayRecoveryReport recovery_;
  std::string active_name_;
  Stats stats_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_RELAY_LOG_H_
