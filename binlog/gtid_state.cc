// A log's GTID state. See binlog/gtid_state.h.

#include "binlog/gtid_state.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {

absl::Status GtidState::Recover(io::FileSystem* fs, const std::string& dir,
                                const std::string& basename,
                                const std::vector<uint64_t>& numbers) {
  if (flavor_ == LogFlavor::kMariaDB) {
    // As MariaDB: the last file's Gtid_list plus its (complete)
    // transactions; the first file's Gtid_list for what was purged.
    MariaGtidState state, purged;
    if (!numbers.empty()) {
      BINLOG_ASSIGN_OR_RETURN(
          state, FileMariaGtids(fs,
                                io::JoinPath(dir, BinlogFileName(basename, numbers.back())),
                                /*with_transactions=*/true));
      BINLOG_ASSIGN_OR_RETURN(
          purged, FileMariaGtids(fs,
                                 io::JoinPath(dir, BinlogFileName(basename, numbers.front())),
                                 /*with_transactions=*/false));
    }
    sync::MutexLock l(&mu_);
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
        FileGtids(fs, io::JoinPath(dir, BinlogFileName(basename, numbers.back())),
                  /*with_transactions=*/true));
    BINLOG_ASSIGN_OR_RETURN(
        purged,
        FileGtids(fs, io::JoinPath(dir, BinlogFileName(basename, numbers.front())),
                  /*with_transactions=*/false));
  }
  sync::MutexLock l(&mu_);
  executed_ = std::move(executed);
  purged_ = std::move(purged);
  next_auto_gno_ = executed_.FirstFreeGno(Tsid(server_uuid_));
  return absl::OkStatus();
}

absl::Status GtidState::Acquire(const Tsid& tsid, int64_t gno) {
  if (gno < 1 || tsid.uuid.IsZero()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GTID ", tsid.ToString(), ":", gno, " is not valid (GNO >= 1, UUID not zero)"));
  }
  sync::MutexLock l(&mu_);
  if (executed_.Contains(tsid, gno)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", tsid.ToString(), ":", gno, " is already in the log"));
  }
  if (!owned_.insert({tsid, gno}).second) {
    return absl::AlreadyExistsError(absl::StrCat(
        "GTID ", tsid.ToString(), ":", gno, " is owned by another transaction"));
  }
  return absl::OkStatus();
}

void GtidState::Release(const Tsid& tsid, int64_t gno) {
  sync::MutexLock l(&mu_);
  if (owned_.erase({tsid, gno}) != 0 && tsid.tag.empty() && tsid.uuid == server_uuid_ &&
      gno < next_auto_gno_ && !executed_.Contains(tsid, gno)) {
    next_auto_gno_ = gno;  // automatic GNOs fill gaps first, as MySQL's
  }
}

absl::Status GtidState::CheckAcquired(const Tsid& tsid, int64_t gno) const {
  sync::MutexLock l(&mu_);
  if (owned_.count({tsid, gno}) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GTID ", tsid.ToString(), ":", gno,
        " was not acquired (Binlog::AcquireGtid) or is already committed"));
  }
  return absl::OkStatus();
}

GtidSet GtidState::executed() const {
  sync::MutexLock l(&mu_);
  return executed_;
}

GtidSet GtidState::purged() const {
  sync::MutexLock l(&mu_);
  return purged_;
}

MariaGtidState GtidState::mariadb_state() const {
  sync::MutexLock l(&mu_);
  return maria_state_;
}

MariaGtidState GtidState::mariadb_purged() const {
  sync::MutexLock l(&mu_);
  return maria_purged_;
}

std::string GtidState::PreviousGtidsBody() const {
  sync::MutexLock l(&mu_);
  return executed_.EncodePreviousGtidsBody();
}

void GtidState::SetPurged(GtidSet purged, MariaGtidState mariadb_purged) {
  sync::MutexLock l(&mu_);
  purged_ = std::move(purged);
  maria_purged_ = std::move(mariadb_purged);
}

void GtidState::Clear() {
  sync::MutexLock l(&mu_);
  executed_ = GtidSet();
  purged_ = GtidSet();
  next_auto_gno_ = 1;
  maria_state_ = MariaGtidState();
  maria_purged_ = MariaGtidState();
}

absl::Status GtidState::TakeMariaGtid(const CommitGtid& g, uint32_t server_id,
                                      uint32_t* domain_id, uint64_t* seq_no) {
  uint32_t domain = domain_id_;
  uint64_t seq;
  if (g.kind == CommitGtid::Kind::kAssigned) {
    domain = g.domain_id;
    seq = g.seq_no;
    // gtid_strict_mode (MariaDB's rpl_binlog_state::check_strict_sequence):
    // a seq_no must be above every seq_no the domain logged.
    const uint64_t next = maria_state_.NextSeqNo(domain);
    if (strict_mode_ && seq < next) {
      MariaGtidListEntry last;
      maria_state_.Position(domain, &last);
      return absl::AlreadyExistsError(absl::StrCat(
          "MariaDB GTID ", domain, "-", server_id, "-", seq,
          " is out of order: domain ", domain, " already logged seq_no ",
          next - 1, " (its last GTID is ", last.domain_id, "-", last.server_id,
          "-", last.seq_no, ") and gtid_strict_mode is on"));
    }
  } else {
    if (g.has_domain_id) domain = g.domain_id;
    seq = maria_state_.NextSeqNo(domain);
  }
  maria_state_.Add(domain, server_id, seq);
  *domain_id = domain;
  *seq_no = seq;
  return absl::OkStatus();
}

absl::Status GtidState::TakeGtid(const CommitGtid& g, Tsid* tsid, int64_t* gno) {
  *tsid = Tsid();
  *gno = 0;
  if (g.kind == CommitGtid::Kind::kAnonymous) return absl::OkStatus();
  if (g.kind == CommitGtid::Kind::kAssigned) {
    // Ownership is checked again here, where the GTID is used: between
    // Commit's check and now another commit may have used it, or a
    // ReleaseGtid and AcquireGtid may have handed it to someone else.
    const Tsid assigned(g.uuid, g.tag);
    if (executed_.Contains(assigned, g.gno)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "GTID ", assigned.ToString(), ":", g.gno, " is already in the log"));
    }
    if (owned_.erase({assigned, g.gno}) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "GTID ", assigned.ToString(), ":", g.gno, " is no longer acquired"));
    }
    *tsid = assigned;
    *gno = g.gno;
  } else if (g.tag.empty()) {
    // Skip GNOs acquired since the last assignment (Acquire does not move
    // next_auto_gno_).
    const Tsid self(server_uuid_);
    while (executed_.Contains(self, next_auto_gno_) ||
           owned_.count({self, next_auto_gno_}) != 0) {
      ++next_auto_gno_;
    }
    if (next_auto_gno_ >= std::numeric_limits<int64_t>::max() - 1) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "every GNO of ", server_uuid_.ToString(), " is used"));
    }
    *tsid = self;
    *gno = next_auto_gno_;
  } else {
    // AUTOMATIC:tag: each (uuid, tag) has its own GNO sequence, gaps
    // filled first, as MySQL's.
    const Tsid self(server_uuid_, g.tag);
    int64_t next = executed_.FirstFreeGno(self);
    while (owned_.count({self, next}) != 0 || executed_.Contains(self, next)) ++next;
    if (next >= std::numeric_limits<int64_t>::max() - 1) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "every GNO of ", self.ToString(), " is used"));
    }
    *tsid = self;
    *gno = next;
  }
  executed_.Add(*tsid, *gno);  // extends the last interval: no allocation
  if (tsid->tag.empty() && tsid->uuid == server_uuid_) {
    const Tsid self(server_uuid_);
    while (executed_.Contains(self, next_auto_gno_) ||
           owned_.count({self, next_auto_gno_}) != 0) {
      ++next_auto_gno_;
    }
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace binlog
