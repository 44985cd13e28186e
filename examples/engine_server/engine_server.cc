// EngineServer: see engine_server.h.
//
// Ordering, and why each step is where it is:
//
//   client thread                       log (group commit)
//   -------------                       ------------------
//   engine: Put rows, SetName(xid)
//   engine: Prepare       ........ (A) prepare durable: WAL sync here, or
//   clock = CommitClock()               in before_group_write (B)
//   Binlog::Commit  ------------------> before_group_write: engine WAL sync (B)
//                                       write + fdatasync the group
//                                       on_group_commit, in log order:
//                                         engine Commit (+ GTID record)
//   <-- Commit returns (acknowledge) --
//
//   rotation / Close: flush_engine_logs: engine WAL sync, then the log
//   leaves the file.
//
// (A)/(B): a transaction's binlog bytes must never be durable while its
// engine prepare is not: after a power loss the log would hold a
// transaction the engine cannot commit. kill -9 keeps the page cache, so
// only power loss tells the two apart; the order is the same either way.
//
// Engine commits are not synced one by one: a crash that loses an engine
// commit leaves the transaction prepared, and recovery commits it because
// its XID is in the last binlog file. That holds only while the file is the
// last one, hence flush_engine_logs before every rotation and at Close.
//
// Recovery (OpenAndRecover): RocksDB replays its WAL (prepared
// transactions come back prepared); BeginRecovery scans the log without
// changing it; each prepared transaction is committed if its XID is in the
// scan, else rolled back; the engine WAL is synced; only then Finish cuts
// the log's tail. If the engine's decisions were not durable before the
// cut, a power loss could undo a commit whose transaction the log then no
// longer marks for recovery (Finish closes the file and starts a new one).

#include "examples/engine_server/engine_server.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "binlog/event_builder.h"
#include "binlog/transaction.h"
#include "rocksdb/options.h"
#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/transaction_db.h"

namespace binlog {
namespace examples {
namespace {

constexpr char kBasename[] = "binlog";
constexpr uint32_t kServerId = 1;

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("rocksdb ", what, ": ", s.ToString()));
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return std::string(buf, 16);
}

uint32_t Now() { return static_cast<uint32_t>(std::time(nullptr)); }

}  // namespace

// The ordered-commit callback's view of a transaction (the binlog cookie).
struct EngineServer::Pending {
  rocksdb::Transaction* txn = nullptr;
  uint64_t xid = 0;
  absl::Status engine_status;  // set by the callback
};

std::string EngineServer::RowKey(uint64_t xid, int row) {
  return absl::StrCat("r/", Hex16(xid), "/", row);
}
std::string EngineServer::RecordKey(uint64_t xid) {
  return absl::StrCat("t/", Hex16(xid));
}
std::string EngineServer::GtidKey(uint64_t xid) {
  return absl::StrCat("g/", Hex16(xid));
}
std::string EngineServer::XidName(uint64_t xid) {
  return absl::StrCat("xid-", xid);
}
bool EngineServer::ParseXidName(absl::string_view name, uint64_t* xid) {
  if (!absl::ConsumePrefix(&name, "xid-")) return false;
  return absl::SimpleAtoi(name, xid);
}
std::string EngineServer::RowsQueryPrefix(uint64_t xid) {
  return absl::StrCat("/* xid ", xid, " */ ");
}

EngineServer::EngineServer(const EngineServerOptions& options)
    : options_(options) {}

EngineServer::~EngineServer() { Close().IgnoreError(); }

void EngineServer::Pause(absl::string_view point) const {
  if (options_.pause_point) options_.pause_point(point);
}

absl::StatusOr<std::unique_ptr<EngineServer>> EngineServer::Open(
    const EngineServerOptions& options) {
  if (options.server_uuid.IsZero()) {
    return absl::InvalidArgumentError("EngineServer: server_uuid is zero");
  }
  std::unique_ptr<EngineServer> server(new EngineServer(options));
  absl::Status s = server->OpenAndRecover();
  if (!s.ok()) return s;
  return server;
}

absl::Status EngineServer::OpenAndRecover() {
  absl::Status s = io::FileSystem::Default()->CreateDirectory(options_.dir);
  if (!s.ok()) return s;

  // 1. The engine. allow_2pc: prepared sections of the WAL are kept and
  // replayed as prepared transactions.
  rocksdb::Options ro;
  ro.create_if_missing = true;
  ro.allow_2pc = true;
  rocksdb::TransactionDBOptions to;
  s = FromRocks(rocksdb::TransactionDB::Open(ro, to, options_.dir + "/engine", &db_),
                "open");
  if (!s.ok()) return s;

  // 2. The log, first step: what reached it, changing nothing yet.
  Options lo;
  lo.file_system = options_.binlog_file_system;
  lo.server_id = kServerId;
  lo.server_uuid = options_.server_uuid;
  lo.sync_policy = SyncPolicy::kEveryGroup;
  lo.max_file_size = options_.max_binlog_file_size;
  lo.on_group_commit = [this](const GroupCommitInfo& info) {
    OnGroupCommit(info);
  };
  if (options_.prepare_durability ==
      PrepareDurability::kSyncWalBeforeGroupWrite) {
    lo.before_group_write = [this](const GroupCommitInfo&) {
      return FromRocks(db_->FlushWAL(/*sync=*/true), "WAL sync before write");
    };
  }
  lo.flush_engine_logs = [this] {
    return FromRocks(db_->FlushWAL(/*sync=*/true), "WAL sync before rotation");
  };
  auto pending = Binlog::BeginRecovery(options_.dir + "/binlog", kBasename, lo);
  if (!pending.ok()) return pending.status();
  const XidRecoveryScan& scan = (*pending)->scan();
  recovery_.log_needed_recovery = scan.in_use;
  recovery_.scanned_files = absl::StrJoin(scan.files, ",");
  recovery_.binlog_xids = scan.xids.size();
  recovery_.bytes_cut = scan.bytes_to_cut;
  uint64_t max_xid = scan.xids.empty() ? 0 : *scan.xids.rbegin();
  Pause("recovery:begun");

  // 3. The engine's recovery: commit what the log has, roll back the rest.
  std::vector<rocksdb::Transaction*> prepared;
  db_->GetAllPreparedTransactions(&prepared);
  recovery_.prepared = prepared.size();
  for (rocksdb::Transaction* txn : prepared) {
    uint64_t xid = 0;
    if (!ParseXidName(txn->GetName(), &xid)) {
      s = absl::DataLossError(absl::StrCat(
          "prepared engine transaction with a foreign name: ", txn->GetName()));
    } else if (scan.xids.count(xid)) {
      s = FromRocks(txn->Commit(), "recovery commit");
      ++recovery_.committed;
    } else {
      s = FromRocks(txn->Rollback(), "recovery rollback");
      ++recovery_.rolled_back;
    }
    max_xid = std::max(max_xid, xid);
    delete txn;
    if (!s.ok()) {
      for (rocksdb::Transaction* t : prepared) {
        if (t != txn) delete t;  // leaves them prepared for the next Open
      }
      return s;
    }
    txn = nullptr;
    Pause("recovery:resolved");
  }
  // 4. Those decisions durable before the log forgets what it scanned.
  s = FromRocks(db_->FlushWAL(/*sync=*/true), "WAL sync after recovery");
  if (!s.ok()) return s;
  Pause("recovery:engine_durable");

  // 5. The log, second step: cut its tail, start a new file.
  auto log = (*pending)->Finish();
  if (!log.ok()) return log.status();
  log_ = std::move(*log);
  Pause("recovery:finished");

  // XIDs go on after every one the engine or the log ever used (a
  // rolled-back one may be reused: it exists in neither).
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev("t/ffffffffffffffff");
  if (it->Valid() && it->key().starts_with("t/")) {
    uint64_t xid = 0;
    if (absl::SimpleHexAtoi(it->key().ToString().substr(2), &xid)) {
      max_xid = std::max(max_xid, xid);
    }
  }
  next_xid_.store(max_xid + 1);
  return absl::OkStatus();
}

// In log order, once per group, after the group is durable. Commits in the
// engine in exactly the log's order, so that what the engine exposes is
// always a prefix of the log (as MySQL's binlog_order_commits).
void EngineServer::OnGroupCommit(const GroupCommitInfo& info) {
  Pause("commit:group_durable");
  for (const CommittedTransaction& t : info.txns) {
    auto* p = static_cast<Pending*>(t.cookie);
    if (p == nullptr) continue;  // engine_commit_first: committed already
    std::string gtid =
        absl::StrCat(t.identity.uuid.ToString(), ":", t.identity.gno);
    p->engine_status = FromRocks(
        p->txn->GetCommitTimeWriteBatch()->Put(GtidKey(p->xid), gtid),
        "commit-time batch");
    if (p->engine_status.ok()) {
      p->engine_status = FromRocks(p->txn->Commit(), "commit");
    }
    if (!p->engine_status.ok()) failed_.store(true);
    Pause("commit:engine_committed");
  }
}

absl::StatusOr<TransactionResult> EngineServer::RunTransaction(int client) {
  if (failed_.load()) {
    return absl::FailedPreconditionError(
        "an engine commit failed: restart the server to recover");
  }
  const uint64_t xid = next_xid_.fetch_add(1);
  rocksdb::WriteOptions wo;
  wo.sync = options_.prepare_durability == PrepareDurability::kSyncEachPrepare;
  std::unique_ptr<rocksdb::Transaction> txn(db_->BeginTransaction(wo));
  std::string rows;
  absl::Status s;
  for (int i = 0; i < options_.rows_per_transaction && s.ok(); ++i) {
    s = FromRocks(txn->Put(RowKey(xid, i),
                           absl::StrCat("xid=", xid, " row=", i, " client=", client)),
                  "put");
    absl::StrAppend(&rows, i == 0 ? "" : ",", "(", xid, ",", i, ",", client, ")");
  }
  if (s.ok()) {
    s = FromRocks(txn->Put(RecordKey(xid),
                           absl::StrCat("rows=", options_.rows_per_transaction,
                                        " client=", client)),
                  "put");
  }
  if (s.ok()) s = FromRocks(txn->SetName(XidName(xid)), "set name");
  if (s.ok()) s = FromRocks(txn->Prepare(), "prepare");
  if (!s.ok()) {
    txn->Rollback().PermitUncheckedError();
    return s;
  }
  // The commit parent: what had committed in the engine when this
  // transaction prepared (it saw no later commit).
  const uint64_t clock = log_->CommitClock();
  // Engine commits need no sync of their own (see the file comment).
  wo.sync = false;
  txn->SetWriteOptions(wo);

  Pending pending;
  pending.txn = txn.get();
  pending.xid = xid;
  if (options_.engine_commit_first) {
    // THE WRONG ORDER (testing the checker): a crash before the log write
    // leaves an engine commit the log never gets.
    s = FromRocks(txn->Commit(), "commit");
    if (!s.ok()) return s;
    Pause("commit:engine_committed_before_binlog");
  }

  TransactionBuffer buf;
  const uint32_t now = Now();
  buf.AppendCommitGtid(now, kServerId, CommitGtid());
  AppendQuery(&buf, now, kServerId, static_cast<uint32_t>(client), "db", "BEGIN");
  AppendRowsQuery(&buf, now, kServerId,
                  absl::StrCat(RowsQueryPrefix(xid),
                               "INSERT INTO t (xid, row, client) VALUES ", rows));
  AppendXid(&buf, now, kServerId, xid);
  buf.set_commit_parent(clock);
  if (!options_.engine_commit_first) buf.set_cookie(&pending);
  Pause("commit:prepared");
  auto pos = log_->Commit(&buf);
  if (!pos.ok()) {
    // Whether the group reached the disk is unknown (the log is poisoned):
    // leave the transaction prepared for recovery to decide, and take no
    // more transactions.
    failed_.store(true);
    return pos.status();
  }
  if (!pending.engine_status.ok()) return pending.engine_status;
  return TransactionResult{xid, *pos};
}

absl::Status EngineServer::RunClients(
    int clients, const std::atomic<bool>* stop,
    const std::function<void(int, const TransactionResult&)>& on_ack) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> errors(static_cast<size_t>(clients));
  std::atomic<bool> failed{false};
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      while (!stop->load(std::memory_order_relaxed) && !failed.load()) {
        auto r = RunTransaction(c);
        if (!r.ok()) {
          errors[static_cast<size_t>(c)] = r.status();
          failed.store(true);
          return;
        }
        if (on_ack) on_ack(c, *r);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  return absl::OkStatus();
}

absl::Status EngineServer::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  absl::Status s;
  if (log_ != nullptr) {
    // Runs flush_engine_logs (engine commits durable), then the Stop event.
    s = log_->Close();
    log_.reset();
  }
  if (db_ != nullptr) {
    absl::Status e = FromRocks(db_->Close(), "close");
    if (s.ok()) s = e;
    delete db_;
    db_ = nullptr;
  }
  return s;
}

}  // namespace examples
}  // namespace binlog
