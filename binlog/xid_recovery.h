// File: binlog/xid_recovery.h
//
// What a server's two-phase-commit recovery needs to know from the binary
// log after a crash: which transactions reached the log (MySQL 8.0
// MYSQL_BIN_LOG::recover, MariaDB 10.11 TC_LOG_BINLOG::recover).
//
// A server commits in two phases: prepare in the engine, write the binlog
// (Binlog::Commit), commit in the engine (in the ordered-commit callback).
// After a crash the engine may hold prepared transactions. Those whose XID
// reached the log are committed (replicas received them), the others are
// rolled back. Binlog::BeginRecovery (binlog/log.h) scans the files that
// can hold such transactions and returns an XidRecoveryScan; the server
// recovers its engine with it, then calls PendingRecovery::Finish().
//
// Which files are scanned. The last file, when its in-use flag is set (it
// was not closed cleanly). The log rotates only after every earlier
// ordered-commit callback returned and Options::flush_engine_logs made the
// engine's commits durable (as MySQL rotates after ha_flush_logs), so no
// earlier file can hold a transaction whose engine commit may be lost.
// In MariaDB-flavor logs the last file's Binlog_checkpoint events name the
// oldest file recovery needs (MariaDB's rule); the scan starts at the file
// the last such event names, which for files this library wrote is the
// last file itself, and for files a MariaDB server wrote may be earlier.
// A last file that was closed cleanly needs no recovery: in_use is false
// and the sets are empty (MySQL then rolls back the prepared engine
// transactions that are not XA; none should exist after a clean
// shutdown, since Close runs after every ordered-commit callback).
//
// XA transactions. A prepared XA transaction stays prepared across
// restarts until a client finishes it, and its XA PREPARE may be in a file
// before the scanned ones, which no scan reads again. So for an XA
// transaction the engine holds prepared: if `xa` lists it, do what its
// state says (kPrepared: keep it prepared; kCommitted / kRolledBack:
// finish it so); if not, the log cannot tell whether its XA PREPARE never
// reached the log (roll it back) or reached an earlier file (keep it
// prepared). The engine must record which: when the ordered-commit
// callback reports the XA PREPARE's transaction, mark it "prepared in the
// log" in the engine (MySQL 8.0.30+ marks it "prepared in TC");
// flush_engine_logs makes the mark durable before the log leaves the file.
//
// What counts. Only complete transactions: a transaction torn by the crash
// (the ones Finish cuts) is not reported, so its engine prepare is rolled
// back, which is correct because no reader can ever have seen it (readers
// see only what is durable under SyncPolicy::kEveryGroup) and its Commit
// never returned OK.
//
// Thread safety: plain values.

#ifndef BINLOG_BINLOG_XID_RECOVERY_H_
#define BINLOG_BINLOG_XID_RECOVERY_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/gtid.h"

namespace binlog {

// An X/Open XA transaction identifier (XID): formatID, gtrid and bqual
// (each at most 64 bytes).
struct XaId {
  uint32_t format_id = 1;
  std::string gtrid;
  std::string bqual;

  // As MySQL and MariaDB write it in XA COMMIT / XA ROLLBACK queries and
  // print it: X'6774726964',X'6271',1 (hex of gtrid and bqual, then the
  // formatID in decimal).
  std::string ToString() const;

  friend bool operator<(const XaId& a, const XaId& b) {
    if (a.format_id != b.format_id) return a.format_id < b.format_id;
    if (a.gtrid != b.gtrid) return a.gtrid < b.gtrid;
    return a.bqual < b.bqual;
  }
  friend bool operator==(const XaId& a, const XaId& b) {
    return a.format_id == b.format_id && a.gtrid == b.gtrid && a.bqual == b.bqual;
  }
};

// Parses the text form above (also with the bqual and formatID omitted, as
// the statements accept: X'..' or X'..',X'..'; and quoted strings 'abc').
// InvalidArgument for anything else.
absl::StatusOr<XaId> ParseXaId(absl::string_view text);

// An "XA COMMIT <xid>" or "XA ROLLBACK <xid>" statement (any case, spaces
// as the servers write them; "XA COMMIT <xid> ONE PHASE" too): sets *xid
// and *commit and returns true. False for any other statement.
bool ParseXaCompletion(absl::string_view query, XaId* xid, bool* commit);

// The state of an XA transaction as the scanned files leave it: the last
// of its XA PREPARE / XA COMMIT / XA ROLLBACK in log order.
enum class XaState { kPrepared, kCommitted, kRolledBack };

struct XaRecord {
  XaId xid;
  XaState state = XaState::kPrepared;
};

struct XidRecoveryScan {
  // The last file was not closed cleanly: the server must recover its
  // engine with the sets below before calling Finish.
  bool in_use = false;
  // The files scanned (base names), oldest first. Empty when !in_use.
  std::vector<std::string> files;

  // XIDs of the complete transactions in the scanned files: Xid events
  // (16), and the XID of DDL Query events (Q_DDL_LOGGED_WITH_XID in MySQL
  // files, Q_XID in MariaDB files). The engine commits its prepared
  // transactions with these XIDs and rolls back the others.
  std::set<uint64_t> xids;

  // XA transactions met in the scanned files, one record per XID with its
  // last state: XA_prepare events (MySQL) or Gtid events flagged
  // FL_PREPARED_XA (MariaDB) make it kPrepared (XA COMMIT ... ONE PHASE,
  // an XA_prepare flagged one_phase, kCommitted); XA COMMIT / XA ROLLBACK
  // statements (MySQL; MariaDB's follow a Gtid flagged FL_COMPLETED_XA,
  // compressed or not) make it kCommitted or kRolledBack. See the file
  // comment for XA transactions not listed here.
  std::vector<XaRecord> xa;

  // GTIDs of the complete transactions in the scanned files: MySQL GTIDs
  // (anonymous transactions have none), and MariaDB GTIDs in log order.
  GtidSet gtids;
  std::vector<MariaGtidListEntry> mariadb_gtids;

  // The last file and where its last complete transaction ends: Finish cuts
  // everything after valid_end (bytes_to_cut bytes, reason says why the
  // scan stopped there).
  std::string last_file;
  uint64_t valid_end = 0;
  uint64_t bytes_to_cut = 0;
  std::string reason;

  // The state of `xid`'s XA transaction, or nullptr if the scan did not
  // meet it.
  const XaRecord* FindXa(const XaId& xid) const;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_XID_RECOVERY_H_
