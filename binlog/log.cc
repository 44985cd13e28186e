// Binlog: the public facade (binlog/log.h) over BinlogImpl
// (binlog/log_impl.h), PendingRecovery, and the GTID readers of a live log.
// binlog/README.md maps the implementation's files.

#include "binlog/log.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/log_impl.h"
#include "binlog/log_options.h"
#include "binlog/status_macros.h"

namespace binlog {

Binlog::Binlog(std::unique_ptr<internal::BinlogImpl> impl)
    : impl_(std::move(impl)) {}

Binlog::~Binlog() {
  // Best effort: the caller did not call Close(); its error has nowhere to go.
  if (!impl_->closed()) impl_->Close().IgnoreError();
}

absl::StatusOr<std::unique_ptr<PendingRecovery>> Binlog::BeginRecovery(
    const std::string& dir, const std::string& basename,
    const Options& options) {
  const Options resolved = internal::ResolvedOptions(options);
  BINLOG_RETURN_IF_ERROR(internal::ValidateOptions(basename, resolved));
  auto impl = std::make_unique<internal::BinlogImpl>(dir, basename, resolved);
  XidRecoveryScan scan;
  BINLOG_RETURN_IF_ERROR(impl->BeginOpen(&scan));
  return std::unique_ptr<PendingRecovery>(
      new PendingRecovery(std::move(impl), std::move(scan)));
}

PendingRecovery::PendingRecovery(std::unique_ptr<internal::BinlogImpl> impl,
                                 XidRecoveryScan scan)
    : impl_(std::move(impl)), scan_(std::move(scan)) {}

PendingRecovery::~PendingRecovery() = default;

absl::StatusOr<std::unique_ptr<Binlog>> PendingRecovery::Finish() {
  if (impl_ == nullptr) {
    return absl::FailedPreconditionError("PendingRecovery::Finish was already called");
  }
  std::unique_ptr<internal::BinlogImpl> impl = std::move(impl_);
  BINLOG_RETURN_IF_ERROR(impl->FinishOpen());
  return std::unique_ptr<Binlog>(new Binlog(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Binlog>> Binlog::Open(
    const std::string& dir, const std::string& basename,
    const Options& options) {
  const Options resolved = internal::ResolvedOptions(options);
  BINLOG_RETURN_IF_ERROR(internal::ValidateOptions(basename, resolved));
  auto impl = std::make_unique<internal::BinlogImpl>(dir, basename, resolved);
  BINLOG_RETURN_IF_ERROR(impl->BeginOpen(nullptr));
  if (resolved.flush_engine_logs && impl->needs_recovery()) {
    // A server with an engine (it set the rotation hook) must learn which
    // prepared transactions reached the log before the file is cut and
    // its flag cleared: after that no later start can tell it.
    return absl::FailedPreconditionError(absl::StrCat(
        io::JoinPath(dir, impl->recovery_.file_name),
        " was not closed cleanly and Options::flush_engine_logs is set: "
        "recover the engine with Binlog::BeginRecovery, not Open"));
  }
  BINLOG_RETURN_IF_ERROR(impl->FinishOpen());
  return std::unique_ptr<Binlog>(new Binlog(std::move(impl)));
}

absl::StatusOr<CommitPosition> Binlog::Commit(TransactionBuffer* txn) {
  return impl_->Commit(txn);
}

std::unique_ptr<TransactionBuffer> Binlog::NewTransactionBuffer() const {
  auto txn = std::make_unique<TransactionBuffer>(impl_->TransactionBufferOptionsFor());
  // MySQL's per-transaction writeset limit is the history size.
  txn->set_writeset_limit(impl_->writeset_history_size());
  return txn;
}
absl::Status Binlog::Sync() { return impl_->Sync(); }
absl::Status Binlog::Rotate() { return impl_->Rotate(); }
absl::Status Binlog::RotateEncryptionKey() {
  return impl_->RotateEncryptionKey();
}
absl::StatusOr<int> Binlog::PurgeTo(uint64_t file_number) {
  return impl_->PurgeTo(file_number);
}
absl::StatusOr<PurgeResult> Binlog::PurgeBefore(absl::Time cutoff) {
  return impl_->PurgeBefore(cutoff);
}
absl::Status Binlog::Reset(uint64_t first_file_number) {
  return impl_->Reset(first_file_number);
}
absl::Status Binlog::Close() { return impl_->Close(); }

absl::StatusOr<std::unique_ptr<Reader>> Binlog::NewReader(
    const ReaderOptions& options) {
  return std::unique_ptr<Reader>(new Reader(impl_->live(), options, impl_->fs()));
}

absl::StatusOr<std::unique_ptr<GtidReader>> Binlog::NewGtidReader(
    const GtidSet& have, const ReaderOptions& options) {
  if (impl_->flavor() != LogFlavor::kMySQL) {
    return absl::FailedPreconditionError(
        "NewGtidReader takes a MySQL GTID set: a kMariaDB log serves "
        "replicas by GTID position with NewMariaGtidReader");
  }
  GtidSet purged = impl_->gtids().purged();
  if (!purged.IsSubsetOf(have)) {
    GtidSet missing = purged;
    missing.Subtract(have);
    return absl::FailedPreconditionError(absl::StrCat(
        "the replica lacks GTIDs that were purged from the log: ",
        missing.ToString()));
  }
  const Uuid& self = impl_->server_uuid();
  if (!self.IsZero()) {
    GtidSet own;
    for (const GnoInterval& iv : have.Intervals(self)) {
      own.AddInterval(self, iv.first, iv.last);
    }
    GtidSet executed = impl_->gtids().executed();
    if (!own.IsSubsetOf(executed)) {
      own.Subtract(executed);
      return absl::FailedPreconditionError(absl::StrCat(
          "the replica has GTIDs of this server that the log never had: ",
          own.ToString()));
    }
  }
  std::vector<uint64_t> numbers;
  for (const LogFileInfo& f : ListFiles()) numbers.push_back(f.number);
  BINLOG_ASSIGN_OR_RETURN(
      uint64_t start, internal::GtidStartFile(impl_->fs(), impl_->dir_, impl_->basename_,
                                              numbers, have));
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  auto g = std::make_unique<GtidReader>(std::move(reader), have);
  UseGtidIndex(g.get(), start, numbers, ro, have, MariaGtidState());
  return g;
}

absl::StatusOr<std::unique_ptr<GtidReader>> Binlog::NewMariaGtidReader(
    const MariaGtidState& position, const ReaderOptions& options) {
  if (impl_->flavor() != LogFlavor::kMariaDB) {
    return absl::FailedPreconditionError(
        "NewMariaGtidReader needs a log with Options::flavor kMariaDB "
        "(use NewGtidReader with a GTID set)");
  }
  const MariaGtidState state = impl_->gtids().mariadb_state();
  for (const MariaGtidListEntry& g : position.Positions()) {
    if (!state.Contains(g.domain_id, g.server_id, g.seq_no)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the replica's GTID position ", g.domain_id, "-", g.server_id, "-", g.seq_no,
          " is not in the log's binlog state (", state.StateToString(), ")"));
    }
  }
  std::vector<uint64_t> numbers;
  for (const LogFileInfo& f : ListFiles()) numbers.push_back(f.number);
  BINLOG_ASSIGN_OR_RETURN(
      uint64_t start, internal::MariaGtidStartFile(impl_->fs(), impl_->dir_,
                                                   impl_->basename_, numbers, position));
  if (start == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the log purged transactions the replica at ", position.ToString(),
        " lacks (purged state ", impl_->gtids().mariadb_purged().StateToString(),
        ")"));
  }
  ReaderOptions ro = options;
  ro.start_file = start;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, NewReader(ro));
  auto g = std::make_unique<GtidReader>(std::move(reader), position);
  UseGtidIndex(g.get(), start, numbers, ro, GtidSet(), position);
  return g;
}

void Binlog::UseGtidIndex(GtidReader* g, uint64_t start,
                          const std::vector<uint64_t>& files, const ReaderOptions& ro,
                          const GtidSet& have, const MariaGtidState& position) {
  if (!impl_->gtid_index_allowed()) return;
  // The active file grows: only the files before it are indexed.
  const bool closed = !files.empty() && start < files.back();
  internal::GtidSeek seek = internal::PlanGtidSeek(
      impl_->fs(), io::JoinPath(impl_->dir_, BinlogFileName(impl_->basename_, start)),
      closed, impl_->flavor(), ro, have, position);
  internal::ApplyGtidSeek(
      g, start, seek,
      // What NewReader does, without the Binlog: a tailing reader may
      // outlive it.
      [live = impl_->live(), fs = impl_->fs(), ro](
          uint64_t file, uint64_t offset) -> absl::StatusOr<std::unique_ptr<Reader>> {
        ReaderOptions o = ro;
        o.start_file = file;
        o.start_offset = offset;
        return std::unique_ptr<Reader>(new Reader(live, o, fs));
      });
}

absl::Status Binlog::AcquireGtid(const Uuid& uuid, int64_t gno) {
  return impl_->gtids().Acquire(Tsid(uuid), gno);
}
void Binlog::ReleaseGtid(const Uuid& uuid, int64_t gno) {
  impl_->gtids().Release(Tsid(uuid), gno);
}
absl::Status Binlog::AcquireGtid(const Tsid& tsid, int64_t gno) {
  return impl_->gtids().Acquire(tsid, gno);
}
void Binlog::ReleaseGtid(const Tsid& tsid, int64_t gno) {
  impl_->gtids().Release(tsid, gno);
}
GtidSet Binlog::executed_gtids() const { return impl_->gtids().executed(); }
GtidSet Binlog::purged_gtids() const { return impl_->gtids().purged(); }
MariaGtidState Binlog::mariadb_gtid_state() const {
  return impl_->gtids().mariadb_state();
}
MariaGtidState Binlog::mariadb_purged_gtid_state() const {
  return impl_->gtids().mariadb_purged();
}
uint64_t Binlog::CommitClock() const { return impl_->CommitClock(); }

std::vector<LogFileInfo> Binlog::ListFiles() const { return impl_->ListFiles(); }
CommitPosition Binlog::VisibleEnd() const { return impl_->VisibleEnd(); }
const RecoveryReport& Binlog::recovery() const { return impl_->recovery_; }
LogStats Binlog::stats() const { return impl_->stats(); }
const std::string& Binlog::dir() const { return impl_->dir_; }
const std::string& Binlog::basename() const { return impl_->basename_; }

}  // namespace binlog
