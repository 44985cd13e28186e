// BinlogImpl: GTID state (recovered at Open, updated in commit order) and
// the identity the flush stage assigns. See binlog/log_impl.h.

#include "binlog/log_impl.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/log_options.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

absl::Status BinlogImpl::RecoverGtidState(const std::vector<uint64_t>& numbers) {
  if (options_.flavor == LogFlavor::kMariaDB) {
    // As MariaDB: the last file's Gtid_list plus its (complete)
    // transactions; the first file's Gtid_list for what was purged.
    MariaGtidState state, purged;
    if (!numbers.empty()) {
      BINLOG_ASSIGN_OR_RETURN(
          state, FileMariaGtids(fs_,
                                io::JoinPath(dir_, BinlogFileName(basename_, numbers.back())),
                                /*with_transactions=*/true));
      BINLOG_ASSIGN_OR_RETURN(
          purged, FileMariaGtids(fs_,
                                 io::JoinPath(dir_, BinlogFileName(basename_, numbers.front())),
                                 /*with_transactions=*/false));
    }
    sync::MutexLock l(&gtid_mu_);
    maria_state_ = std::move(state);
    maria_purged_ = std::move(purged);
    return absl::OkStatus();
  }
  GtidSet executed, purged;
  if (!numbers.empty()) {
    // As MySQL: the last file's Previous_gtids plus its transactions (it
    // was recovered above, so every transaction left in it is complete),
    // and the first file's Previous_gtids for what was purged.
    BINLOG_ASSIGN_OR_RETURN(
        executed,
        FileGtids(fs_, io::JoinPath(dir_, BinlogFileName(basename_, numbers.back())),
                  /*with_transactions=*/true));
    BINLOG_ASSIGN_OR_RETURN(
        purged,
        FileGtids(fs_, io::JoinPath(dir_, BinlogFileName(basename_, numbers.front())),
                  /*with_transactions=*/false));
  }
  sync::MutexLock l(&gtid_mu_);
  executed_ = std::move(executed);
  purged_ = std::move(purged);
  next_auto_gno_ = executed_.FirstFreeGno(options_.server_uuid);
  return absl::OkStatus();
}

absl::Status BinlogImpl::AcquireGtid(const Uuid& uuid, int64_t gno) {
  if (gno < 1 || uuid.IsZero()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is not valid (GNO >= 1, UUID not zero)"));
  }
  sync::MutexLock l(&gtid_mu_);
  if (executed_.Contains(uuid, gno)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is already in the log"));
  }
  if (!owned_.insert({uuid, gno}).second) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", uuid.ToString(), ":", gno, " is owned by another transaction"));
  }
  return absl::OkStatus();
}

void BinlogImpl::ReleaseGtid(const Uuid& uuid, int64_t gno) {
  sync::MutexLock l(&gtid_mu_);
  if (owned_.erase({uuid, gno}) != 0 && uuid == options_.server_uuid &&
      gno < next_auto_gno_ && !executed_.Contains(uuid, gno)) {
    next_auto_gno_ = gno;  // automatic GNOs fill gaps first, as MySQL's
  }
}

GtidSet BinlogImpl::executed_gtids() const {
  sync::MutexLock l(&gtid_mu_);
  return executed_;
}

GtidSet BinlogImpl::purged_gtids() const {
  sync::MutexLock l(&gtid_mu_);
  return purged_;
}

MariaGtidState BinlogImpl::mariadb_gtid_state() const {
  sync::MutexLock l(&gtid_mu_);
  return maria_state_;
}

MariaGtidState BinlogImpl::mariadb_purged_gtid_state() const {
  sync::MutexLock l(&gtid_mu_);
  return maria_purged_;
}

absl::Status BinlogImpl::AssignMariaIdentity(TransactionBuffer* txn,
                                             uint64_t now_us,
                                             uint64_t commit_id) {
  const CommitGtid& g = txn->identity_.gtid;
  uint32_t domain = options_.gtid_domain_id;
  uint64_t seq;
  if (g.kind == CommitGtid::Kind::kAssigned) {
    domain = g.domain_id;
    seq = g.seq_no;
    // gtid_strict_mode (MariaDB's rpl_binlog_state::check_strict_sequence):
    // a seq_no must be above every seq_no the domain logged.
    const uint64_t next = maria_state_.NextSeqNo(domain);
    if (options_.gtid_strict_mode && seq < next) {
      MariaGtidListEntry last;
      maria_state_.Position(domain, &last);
      return absl::AlreadyExistsError(absl::StrCat(
          "MariaDB GTID ", domain, "-", txn->identity_.server_id, "-", seq,
          " is out of order: domain ", domain, " already logged seq_no ",
          next - 1, " (its last GTID is ", last.domain_id, "-", last.server_id,
          "-", last.seq_no, ") and gtid_strict_mode is on"));
    }
  } else {
    if (g.has_domain_id) domain = g.domain_id;
    seq = maria_state_.NextSeqNo(domain);
  }
  maria_state_.Add(domain, txn->identity_.server_id, seq);
  txn->AssignMariaIdentity(domain, seq, commit_id, now_us);
  return absl::OkStatus();
}

absl::Status BinlogImpl::AssignIdentity(TransactionBuffer* txn, uint64_t now_us,
                                        uint64_t commit_id) {
  if (txn->identity_.mariadb) return AssignMariaIdentity(txn, now_us, commit_id);
  const CommitGtid& g = txn->identity_.gtid;
  // Ownership is checked again here, where the GTID is used: between
  // Commit's check and now another commit may have used it, or a
  // ReleaseGtid and AcquireGtid may have handed it to someone else.
  if (g.kind == CommitGtid::Kind::kAssigned) {
    if (executed_.Contains(g.uuid, g.gno)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "GTID ", g.uuid.ToString(), ":", g.gno, " is already in the log"));
    }
    if (owned_.erase({g.uuid, g.gno}) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GTID ", g.uuid.ToString(), ":", g.gno, " is no longer acquired"));
    }
  } else if (g.kind == CommitGtid::Kind::kAutomatic) {
    // Skip GNOs acquired since the last assignment (AcquireGtid does not
    // move next_auto_gno_).
    while (executed_.Contains(options_.server_uuid, next_auto_gno_) ||
           owned_.count({options_.server_uuid, next_auto_gno_}) != 0) {
      ++next_auto_gno_;
    }
    if (next_auto_gno_ >= std::numeric_limits<int64_t>::max() - 1) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "every GNO of ", options_.server_uuid.ToString(), " is used"));
    }
  }
  const int64_t seq = ++seq_in_file_;
  // last_committed: the commit-order clock captured at prepare, if it is in
  // this file; never at or past this transaction; never before the last
  // transaction that had to run alone; seq - 1 for one that must.
  const uint64_t parent = txn->commit_parent_;
  int64_t lc = (parent >> 32) == active_number_
                   ? static_cast<int64_t>(parent & 0xFFFFFFFFu)
                   : 0;
  if (lc >= seq) lc = seq - 1;
  if (lc < last_isolated_) lc = last_isolated_;
  if (g.isolated) {
    lc = seq - 1;
    last_isolated_ = seq;
  }
  Uuid uuid;
  int64_t gno = 0;
  if (g.kind == CommitGtid::Kind::kAutomatic) {
    uuid = options_.server_uuid;
    gno = next_auto_gno_;
  } else if (g.kind == CommitGtid::Kind::kAssigned) {
    uuid = g.uuid;
    gno = g.gno;
  }
  if (gno != 0) {
    executed_.Add(uuid, gno);  // extends the last interval: no allocation
    if (uuid == options_.server_uuid) {
      while (executed_.Contains(uuid, next_auto_gno_) ||
             owned_.count({uuid, next_auto_gno_}) != 0) {
        ++next_auto_gno_;
      }
    }
  }
  txn->AssignIdentity(uuid, gno, seq, lc, now_us);
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace binlog
