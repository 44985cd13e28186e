// File: binlog/event_builder.h
//
// Encoders for the events the library writes itself (Format_description,
// Rotate, Stop, empty Previous_gtids, MariaDB Gtid_list and
// Binlog_checkpoint) and helpers that append common
// transaction events (GTID, Query, Xid, rows-like events) to a
// TransactionBuffer. The layouts follow the binlog-format reference; golden
// bytes are checked in tests/binlog/event_builder_test.cc.
//
// Thread safety: all functions are thread-safe (no shared state); the
// Append* helpers modify only the TransactionBuffer they are given, which
// is not thread-safe itself.
// Errors: none; the encoders cannot fail (sizes are the caller's: an event
// that cannot fit in a file fails at Binlog::Commit).

#ifndef BINLOG_BINLOG_EVENT_BUILDER_H_
#define BINLOG_BINLOG_EVENT_BUILDER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/transaction.h"

namespace binlog {

// The MySQL 8.0.26 - 8.2 post-header length array (41 entries, types 1-41),
// including the server's quirk of 40 for TRANSACTION_PAYLOAD_EVENT.
absl::string_view MySql80PostHeaderLengths();

// The MySQL 8.4 post-header length array (42 entries, types 1-42), as 8.4's
// Format_description_event constructor declares it: 8.0's with 0 for the
// V1 Rows events 23-25 (removed in 8.4.0), 99 for Format_description
// itself (57 + 42 event types) and 0 for Gtid_tagged_log_event (42).
absl::string_view MySql84PostHeaderLengths();

// The MariaDB 10.2 - 11.x post-header length array (171 entries, types
// 1-171), byte for byte as MariaDB 10.11.19 writes it (reference 4.2; the
// corpus in tests/data/mariadb). Its Query entry is 13, Gtid (162) 19.
absl::string_view MariaDb1011PostHeaderLengths();

struct FdeParams {
  uint32_t timestamp = 0;
  uint32_t server_id = 1;
  std::string server_version = "8.0.36";
  // kMySQL: MySql80PostHeaderLengths() or MySql84PostHeaderLengths() (by
  // mysql_layout; a 122- or 123-byte event); kMariaDB:
  // MariaDb1011PostHeaderLengths() (a 252-byte event, as MariaDB 10.2+).
  LogFlavor flavor = LogFlavor::kMySQL;
  // For kMySQL: the release whose Format_description to write. MySQL 8.4
  // writes server versions "8.4.x" (set server_version to match).
  MySqlLayout mysql_layout = MySqlLayout::k80;
  uint32_t create_timestamp = 0;  // non-zero only for the first file after start
  bool checksums = true;
  bool in_use = true;             // sets kFlagBinlogInUse in the header flags
  // Sets LOG_EVENT_RELAY_LOG_F (kFlagRelayLog) in the header flags: the
  // Format_description a replica writes at the start of each relay log
  // file (binlog/relay_log.h).
  bool relay_log = false;
};

// A complete Format_description event for a file starting at offset 4
// (log_pos = 4 + size). Its CRC is computed with the in-use bit clear, so
// clearing the bit later keeps it valid. The 4 checksum bytes are present
// (and correct) even with checksums off, as the servers write them.
std::string EncodeFormatDescription(const FdeParams& p);

// Size of a Rotate event naming `file` (header, position, name, footer).
inline size_t RotateEventSize(absl::string_view file, bool checksums) {
  return kHeaderSize + kRotatePostHeaderSize + file.size() +
         (checksums ? kChecksumSize : 0);
}

// Rotate event ending at `log_pos`, naming `next_file` (position 4).
std::string EncodeRotate(uint32_t timestamp, uint32_t server_id,
                         absl::string_view next_file, uint32_t log_pos,
                         bool checksums);

// Rotate event naming `file` at `position`, with header `flags` and
// `log_pos` as given. A relay log writes two kinds (binlog/relay_log.h):
// its own rotation (flags kFlagRelayLog, position 4, as MySQL's
// Rotate_log_event::RELAY_LOG), and the Rotate to the source position that
// takes the place of the source's Previous_gtids (server_id 0, the source's
// file and position).
std::string EncodeRotateTo(uint32_t timestamp, uint32_t server_id,
                           absl::string_view file, uint64_t position,
                           uint32_t log_pos, uint16_t flags, bool checksums);

// The copy of a source's Format_description that a relay log file stores
// after its own header, as MySQL writes it at relay-log rotation
// (MYSQL_BIN_LOG::open_binlog: `created = 0` and set_artificial_event()):
// the same event with LOG_EVENT_ARTIFICIAL_F set, the in-use flag clear,
// log_pos 0 (artificial events carry none), create_timestamp 0, and its
// CRC recomputed. DataLoss if `fde` is not a decodable Format_description
// (DecodeFormatDescription).
absl::StatusOr<std::string> EncodeArtificialFormatDescription(
    absl::string_view fde);

// The Format_description a source sends a replica at the start of a dump
// or after a rotation (MySQL's Binlog_sender::send_format_description_event,
// MariaDB's send of the file's description): the stored event with the
// in-use flag clear (so the replica does not take the source for crashed),
// log_pos 0 when `zero_log_pos` (the dump starts inside the file: the
// replica must not take the event's end as its position), and the CRC32
// footer recomputed when the event has one. DataLoss if `fde` is not a
// decodable Format_description.
absl::StatusOr<std::string> EncodeSentFormatDescription(absl::string_view fde,
                                                        bool zero_log_pos);

// Heartbeat event (27) a source sends an idle replica: artificial
// (timestamp 0, LOG_EVENT_ARTIFICIAL_F), log_pos = the source's position
// `position` in `file`, the file name as the body. Decoded by MySQL's and
// MariaDB's replicas; the library never stores one.
std::string EncodeHeartbeat(uint32_t server_id, absl::string_view file,
                            uint32_t position, bool checksums);

// Stop event (empty body) ending at `log_pos`.
std::string EncodeStop(uint32_t timestamp, uint32_t server_id,
                       uint32_t log_pos, bool checksums);

// A Previous_gtids event holding `gtids` (GtidSet::EncodePreviousGtidsBody)
// that starts at file offset `start` (log_pos = start + its size), with
// header `flags` (a relay log's own carries kFlagRelayLog, as MySQL 8.0's
// open_binlog sets it).
std::string EncodePreviousGtids(uint32_t timestamp, uint32_t server_id,
                                const GtidSet& gtids, uint32_t start,
                                uint16_t flags, bool checksums);

// Appends an empty Previous_gtids event (8 zero bytes of body).
void AppendEmptyPreviousGtids(TransactionBuffer* txn, uint32_t timestamp,
                              uint32_t server_id);

// Appends a MySQL Gtid (33) or, with an all-zero `sid` and gno 0,
// Anonymous_gtid (34) event with the 5.7 layout: flags, SID, GNO, logical
// clock type 2, last_committed, sequence_number (42 bytes of body).
void AppendGtid(TransactionBuffer* txn, uint32_t timestamp, uint32_t server_id,
                const uint8_t sid[16], int64_t gno, int64_t last_committed,
                int64_t sequence_number);
void AppendAnonymousGtid(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, int64_t last_committed,
                         int64_t sequence_number);

// Appends a Query event with no status variables. `event_flags` go into
// the common header (e.g. kFlagSuppressUse for a BEGIN that needs no USE).
void AppendQuery(TransactionBuffer* txn, uint32_t timestamp,
                 uint32_t server_id, uint32_t thread_id, absl::string_view db,
                 absl::string_view query, uint16_t event_flags = 0);

// Appends a Rows_query event (29): the statement that produced the row
// events after it (MySQL's binlog_rows_query_log_events), as a length byte
// (the text's length capped at 255; readers ignore it and take the text to
// the end of the body) and the text. Flagged ignorable, as the servers
// write it, so readers that do not know the type (MariaDB's) skip it.
// Decoder: DecodeRowsQuery (binlog/statement_events.h).
void AppendRowsQuery(TransactionBuffer* txn, uint32_t timestamp,
                     uint32_t server_id, absl::string_view text);

// Appends a Query event with the status-variable block `status_vars`
// (codes and values as reference 6.6 lays them out; at most 65535 bytes).
void AppendQueryWithStatusVars(TransactionBuffer* txn, uint32_t timestamp,
                               uint32_t server_id, uint32_t thread_id,
                               absl::string_view db, absl::string_view query,
                               absl::string_view status_vars,
                               uint16_t event_flags = 0);

// The status variable that logs a DDL statement with its engine XID, so
// that two-phase-commit recovery finds it: Q_DDL_LOGGED_WITH_XID (17) in
// MySQL files, Q_XID (129) in MariaDB files. Decoded by
// DecodeQueryStatusVars (binlog/statement_events.h).
std::string DdlXidStatusVar(uint64_t xid, bool mariadb);

// Appends an XA_prepare event (38): XA PREPARE, or with `one_phase` XA
// COMMIT ... ONE PHASE. InvalidArgument (nothing appended) if gtrid or
// bqual exceeds 64 bytes. Decoded by DecodeXaPrepare.
absl::Status AppendXaPrepare(TransactionBuffer* txn, uint32_t timestamp,
                             uint32_t server_id, uint32_t format_id,
                             absl::string_view gtrid, absl::string_view bqual,
                             bool one_phase);

// Appends a MariaDB DDL statement that carries the XID of its engine
// transaction in the Q_XID status variable (129), as MariaDB 10.11 logs DDL
// on transactional tables (mariadb-binlog prints "xid=<xid>"; crash
// recovery reads it like an Xid event). The status-variable block holds
// Q_XID only (EncodeMariaXidStatusVar, binlog/statement_events.h). In a
// kMariaDB log it follows a Gtid event with CommitGtid::isolated set
// (FL_STANDALONE | FL_DDL) and ends the transaction.
void AppendMariaDdlQuery(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, uint32_t thread_id,
                         absl::string_view db, absl::string_view query,
                         uint64_t xid);

// MariaDB file-header events, as MariaDB 10.11 writes them after its
// Format_description (header flags 0):
//   Gtid_list (163) holding `state` (MariaGtidState::EncodeGtidListBody:
//   the binlog state of the files before this one);
//   Binlog_checkpoint (161) naming `file_name` (a base name such as
//   "binlog.000007"): the oldest file crash recovery must scan.
// A FileHeaderCallback of a kMariaDB log appends both (binlog/options.h).
void AppendMariaGtidList(TransactionBuffer* txn, uint32_t timestamp,
                         uint32_t server_id, const MariaGtidState& state);
void AppendBinlogCheckpoint(TransactionBuffer* txn, uint32_t timestamp,
                            uint32_t server_id, absl::string_view file_name);

// Appends an Xid event.
void AppendXid(TransactionBuffer* txn, uint32_t timestamp, uint32_t server_id,
               uint64_t xid);

}  // namespace binlog

#endif  // BINLOG_BINLOG_EVENT_BUILDER_H_
