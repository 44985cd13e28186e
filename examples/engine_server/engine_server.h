// File: examples/engine_server/engine_server.h
//
// EngineServer: a small server that uses the binlog library the way a
// MySQL server with a transactional storage engine does (MyRocks: RocksDB
// under the MySQL binlog). It is the worked example of README.md "Using it
// in a server", and the process tests/crash/engine_crash_test.cc kills.
//
// The engine is RocksDB's pessimistic TransactionDB (two-phase commit:
// SetName, Prepare, Commit; prepared transactions survive a restart). Each
// transaction commits in three steps, in this order:
//   1. prepare in the engine (the XID is the transaction's name), durable
//      before any of its binlog bytes can be (see PrepareDurability);
//   2. Binlog::Commit: the log assigns the GTID and logical clocks in commit
//      order and writes the transaction (Gtid, BEGIN, Rows_query describing
//      the rows, Xid) durably (SyncPolicy::kEveryGroup);
//   3. commit in the engine, in binlog order, in the log's ordered-commit
//      callback (Options::on_group_commit), which also records the assigned
//      GTID in the engine (a commit-time write batch, as MyRocks records its
//      binlog position).
// The client is acknowledged (RunTransaction returns) after step 3.
//
// Open recovers both sides in two steps (Binlog::BeginRecovery): the
// engine's prepared transactions whose XID reached the log are committed,
// the others rolled back, that is made durable in the engine, and only
// then PendingRecovery::Finish() cuts the log's torn tail and starts a new
// file. A crash anywhere in between repeats the same decisions at the next
// Open. Before the log leaves a file (rotation, Close) it calls
// Options::flush_engine_logs, where the server makes the engine's commits
// durable, so recovery never needs an older file.
//
// What a crash leaves (the contract tests/crash/engine_crash_test.cc
// checks after every restart): the engine's committed transactions and the
// log's complete transactions are the same set of XIDs, each engine GTID
// record names its transaction's GTID in the log, and every acknowledged
// transaction is in both. With EngineServerOptions::engine_commit_first
// (the wrong order, for the checker's own test) this does not hold.
//
// Data layout in the engine (default column family), XIDs as 16 hex digits:
//   r/<xid>/<i>  row i of the transaction: "xid=<xid> row=<i> client=<c>"
//   t/<xid>      the transaction's record: "rows=<n> client=<c>"
//   g/<xid>      its GTID "uuid:gno", written at engine commit in binlog
//                order (absent for transactions committed by recovery: the
//                log's scan gives XIDs, not which GTID each had)
// The log is `<dir>/binlog/binlog.*`, the engine `<dir>/engine`.
//
// Thread safety: RunTransaction may be called from any number of threads
// concurrently; Open and Close from one thread, with no RunTransaction in
// progress during Close.
// Errors: absl::Status; RocksDB errors are mapped to kInternal with the
// RocksDB message. After an engine commit fails in the ordered-commit
// callback the server refuses further transactions (FailedPrecondition):
// the transaction is in the log and still prepared in the engine, so the
// next Open commits it. The same after a failed Binlog::Commit (the log is
// poisoned; the transaction stays prepared for the next Open to decide).
// Lifetime: EngineServerOptions::binlog_file_system must outlive the server.

#ifndef BINLOG_EXAMPLES_ENGINE_SERVER_ENGINE_SERVER_H_
#define BINLOG_EXAMPLES_ENGINE_SERVER_ENGINE_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/log.h"
#include "io/file_system.h"

namespace rocksdb {
class TransactionDB;
}  // namespace rocksdb

namespace binlog {
namespace examples {

// How a prepared engine transaction is made durable before its binlog
// bytes can be. kSyncWalBeforeGroupWrite is the default because it syncs
// the engine's WAL once per binlog group instead of once per prepare, and
// keeps that sync out of the clients' path before they join a group (so
// groups are larger). Measured with engine_server_main, 8 clients, 4 s,
// three alternating runs each (2026-11-23, 2 vCPUs shared with other work
// at load ~8, ext4 on a virtual disk): before_group_write 2101, 1614 and
// 2113 commits/s; sync each prepare 942, 1155 and 1449 commits/s (and more
// binlog groups for fewer commits: 3083 vs 2376 in the first pair). With
// one client the two are equal within noise (about 110 commits/s: one WAL
// sync and one binlog fdatasync per transaction either way).
enum class PrepareDurability {
  // Prepare with WriteOptions::sync: every client syncs the engine's WAL
  // (RocksDB groups concurrent syncs of its own).
  kSyncEachPrepare,
  // Prepare without sync; Options::before_group_write syncs the engine's
  // WAL once per binlog commit group, before the group's bytes are written
  // (MySQL's "flush engine logs" in the flush stage of group commit).
  kSyncWalBeforeGroupWrite,
};

struct EngineServerOptions {
  std::string dir;  // created if missing
  // The source of the GTIDs the log assigns. Must not be zero.
  Uuid server_uuid;
  uint64_t max_binlog_file_size = 1 << 20;
  int rows_per_transaction = 3;
  PrepareDurability prepare_durability =
      PrepareDurability::kSyncWalBeforeGroupWrite;
  // WRONG ORDER, for testing the checker only: commit in the engine before
  // the binlog write, so a crash in between leaves an engine commit the log
  // does not have.
  bool engine_commit_first = false;
  // The binlog's file system (nullptr: POSIX). The engine manages its own
  // files.
  io::FileSystem* binlog_file_system = nullptr;
  // Test hook: called at the named points below (with no lock of the server
  // held; the ones inside the ordered-commit callback block the log's
  // commits while they run). A test blocks here and kills the process.
  //   "recovery:begun"          the scan is done, no engine decision yet
  //   "recovery:resolved"       after each prepared transaction's commit or
  //                             rollback
  //   "recovery:engine_durable" decisions durable, Finish not called yet
  //   "recovery:finished"       the log is open
  //   "commit:prepared"         a transaction prepared, before Binlog::Commit
  //   "commit:group_durable"    in the ordered-commit callback, before the
  //                             group's engine commits
  //   "commit:engine_committed" in the ordered-commit callback, after each
  //                             engine commit
  //   "commit:engine_committed_before_binlog"  engine_commit_first only
  std::function<void(absl::string_view point)> pause_point;
};

// What Open's recovery found and did.
struct EngineRecoveryReport {
  bool log_needed_recovery = false;  // the last binlog file was in use
  std::string scanned_files;         // the files the log scanned
  size_t binlog_xids = 0;            // complete transactions found there
  size_t prepared = 0;               // prepared engine transactions found
  size_t committed = 0;              // ... committed (XID in the log)
  size_t rolled_back = 0;            // ... rolled back (XID not in the log)
  uint64_t bytes_cut = 0;            // binlog bytes Finish cut
};

// An acknowledged transaction.
struct TransactionResult {
  uint64_t xid = 0;
  CommitPosition position;  // its place and identity in the log
};

class EngineServer {
 public:
  // Opens the engine and the log and recovers both (see the file comment).
  // Errors: InvalidArgument for a zero server_uuid; the log's errors
  // (binlog/log.h); Internal for RocksDB errors.
  static absl::StatusOr<std::unique_ptr<EngineServer>> Open(
      const EngineServerOptions& options);

  // Closes if Close was not called (errors are lost then).
  ~EngineServer();
  EngineServer(const EngineServer&) = delete;
  EngineServer& operator=(const EngineServer&) = delete;

  // One client transaction: rows_per_transaction rows and its record,
  // prepared, committed to the log, committed in the engine. Returns once
  // all of that is done (durable in the log; the engine's commit is made
  // durable at the next rotation or Close, or recovered from the log).
  // `client` only labels the rows.
  absl::StatusOr<TransactionResult> RunTransaction(int client);

  // Runs `clients` threads of RunTransaction until *stop is set or one
  // fails; calls on_ack(client, result) after each acknowledged one.
  // Returns the first error.
  absl::Status RunClients(
      int clients, const std::atomic<bool>* stop,
      const std::function<void(int, const TransactionResult&)>& on_ack);

  // Clean shutdown: closes the log (which makes the engine's commits
  // durable through flush_engine_logs, then writes the Stop event), then
  // the engine. REQUIRES: no RunTransaction in progress. A second call
  // returns OK and does nothing.
  absl::Status Close();

  const EngineRecoveryReport& recovery() const { return recovery_; }
  // For checkers and tools: the open engine and log (owned by the server).
  rocksdb::TransactionDB* engine() const { return db_; }
  Binlog* log() const { return log_.get(); }

  // The engine's key of each kind for `xid` (see the file comment).
  static std::string RowKey(uint64_t xid, int row);
  static std::string RecordKey(uint64_t xid);
  static std::string GtidKey(uint64_t xid);
  // The engine transaction name for `xid`, and back (false if `name` is
  // not one).
  static std::string XidName(uint64_t xid);
  static bool ParseXidName(absl::string_view name, uint64_t* xid);
  // The Rows_query text the server logs for a transaction starts with this.
  static std::string RowsQueryPrefix(uint64_t xid);

 private:
  struct Pending;  // a transaction between prepare and engine commit
  explicit EngineServer(const EngineServerOptions& options);
  absl::Status OpenAndRecover();
  void OnGroupCommit(const GroupCommitInfo& info);
  void Pause(absl::string_view point) const;

  const EngineServerOptions options_;
  rocksdb::TransactionDB* db_ = nullptr;
  std::unique_ptr<Binlog> log_;
  EngineRecoveryReport recovery_;
  std::atomic<uint64_t> next_xid_{1};
  // Set when an engine commit failed in the ordered-commit callback, or a
  // Binlog::Commit failed (the log is poisoned).
  std::atomic<bool> failed_{false};
  bool closed_ = false;
};

}  // namespace examples
}  // namespace binlog

#endif  // BINLOG_EXAMPLES_ENGINE_SERVER_ENGINE_SERVER_H_
