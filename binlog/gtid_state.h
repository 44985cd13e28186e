// File: binlog/gtid_state.h (internal)
//
// GtidState: a log's GTID state and the GTID half of identity assignment.
// For a kMySQL log, gtid_executed (every GTID in the log), gtid_purged
// (those of purged files), the GTIDs acquired for transactions about to
// commit (AcquireGtid), and the next automatic GNO of the server's UUID;
// for a kMariaDB log, the binlog GTID state and the purged files' state.
// Recovered at Open from the files (binlog/gtid_scan.h), updated in commit
// order by the flush stage, written into each new file's header.
//
// The logical clock (sequence_number, last_committed) is not here: it is
// the flush stage's (binlog/logical_clock.h).
//
// Thread safety: thread-safe. mu() is taken by the flush stage once per
// group that carries identities (never during I/O), and briefly by the
// other calls.

#ifndef BINLOG_BINLOG_GTID_STATE_H_
#define BINLOG_BINLOG_GTID_STATE_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "binlog/gtid.h"
#include "binlog/options.h"
#include "binlog/transaction.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

class GtidState {
 public:
  explicit GtidState(const Options& options)
      : flavor_(options.flavor),
        server_uuid_(options.server_uuid),
        domain_id_(options.gtid_domain_id),
        strict_mode_(options.gtid_strict_mode) {}

  GtidState(const GtidState&) = delete;
  GtidState& operator=(const GtidState&) = delete;

  // Recovers the state from the log's files `numbers` (oldest first; the
  // last one already recovered, so every transaction in it is complete).
  // Errors: DataLoss for a header set that does not decode; I/O errors.
  absl::Status Recover(io::FileSystem* fs, const std::string& dir,
                       const std::string& basename,
                       const std::vector<uint64_t>& numbers);

  // Binlog::AcquireGtid / ReleaseGtid (a GTID with or without a tag).
  absl::Status Acquire(const Tsid& tsid, int64_t gno);
  void Release(const Tsid& tsid, int64_t gno);

  // Commit's check in the committing thread: `tsid:gno` is acquired.
  absl::Status CheckAcquired(const Tsid& tsid, int64_t gno) const;

  GtidSet executed() const;
  GtidSet purged() const;
  MariaGtidState mariadb_state() const;
  MariaGtidState mariadb_purged() const;

  // The body of the next file's Previous_gtids event (kMySQL).
  std::string PreviousGtidsBody() const;

  // After a purge: the state of the files that are left.
  void SetPurged(GtidSet purged, MariaGtidState mariadb_purged);
  // Reset: everything empty, automatic GNOs from 1.
  void Clear();

  // The flush stage holds mu() while it assigns the identities of a group.
  sync::Mutex* mu() ABSL_LOCK_RETURNED(mu_) { return &mu_; }

  // kMySQL: the GTID of a transaction with CommitGtid `g`: the next free
  // GNO of the server's UUID with g.tag (kAutomatic), `g`'s own (kAssigned,
  // which must still be acquired and not executed), none for kAnonymous
  // (*gno = 0). Adds it to the executed set. Errors (nothing changed):
  // AlreadyExists, FailedPrecondition (no longer acquired),
  // ResourceExhausted (every GNO used).
  absl::Status TakeGtid(const CommitGtid& g, Tsid* tsid, int64_t* gno)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // kMariaDB: the domain and seq_no of a transaction whose Gtid event
  // carries server id `server_id`, added to the binlog state. Errors:
  // AlreadyExists for an out-of-order kAssigned seq_no under
  // gtid_strict_mode (nothing changed).
  absl::Status TakeMariaGtid(const CommitGtid& g, uint32_t server_id,
                             uint32_t* domain_id, uint64_t* seq_no)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

 private:
  const LogFlavor flavor_;
  const Uuid server_uuid_;
  const uint32_t domain_id_;
  const bool strict_mode_;

  mutable sync::Mutex mu_;
  GtidSet executed_ ABSL_GUARDED_BY(mu_);
  GtidSet purged_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<Tsid, int64_t>> owned_ ABSL_GUARDED_BY(mu_);
  // The next automatic GNO of the server's UUID without a tag (tagged
  // automatic GNOs start from the tag's first gap each time).
  int64_t next_auto_gno_ ABSL_GUARDED_BY(mu_) = 1;
  // kMariaDB: the binlog GTID state and the purged files' state.
  MariaGtidState maria_state_ ABSL_GUARDED_BY(mu_);
  MariaGtidState maria_purged_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_STATE_H_
