// File: server/queries.h
//
// The SQL a replica sends at connect, answered from the log's state: the
// few statements MySQL and MariaDB replicas (and replication client
// libraries) issue before they ask for the binlog. binlog_server is not a
// SQL server; anything else gets a clear error (ER_NOT_SUPPORTED_YET).
//
// Understood (case-insensitive, one statement, optional trailing ';'):
//   SET @var = expr[, ...]          user variables (e.g. @master_binlog_checksum,
//                                   @master_heartbeat_period, @slave_connect_state,
//                                   @mariadb_slave_capability, @rpl_semi_sync_slave);
//                                   SET NAMES / SET @@session.x / SET x = y: accepted, ignored
//   SELECT expr[, ...] [LIMIT n]    expr: UNIX_TIMESTAMP(), VERSION(), @var,
//                                   @@[global.|session.]sysvar, a number or 'string'
//   SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pattern']
//   SHOW MASTER STATUS | SHOW BINARY LOG STATUS
//   SHOW BINARY LOGS | SHOW MASTER LOGS
//   SHOW REPLICAS                   the registered replicas, MySQL 8.4's columns
//                                   (Server_Id, Host, Port, Source_Id, Replica_UUID)
//   SHOW SLAVE HOSTS | SHOW REPLICA HOSTS
//                                   the same; MariaDB's columns for MariaDB-flavor
//                                   logs (Server_id, Host, Port, Master_id), MySQL
//                                   8.0's otherwise (Server_Id, Host, Port,
//                                   Master_Id, Slave_UUID)
//                                   Each list ends with four columns of ours:
//                                   Semi_Sync_Acked_File and
//                                   Semi_Sync_Acked_Position, the last position a
//                                   semi-sync replica acknowledged (NULL for other
//                                   replicas and before the first ack), and
//                                   Sent_File and Sent_Position, the end of the
//                                   last event its dump sent (NULL before its
//                                   dump starts).
//
// Thread safety: thread-safe (no shared state; the caller owns the vars).

#ifndef BINLOG_SERVER_QUERIES_H_
#define BINLOG_SERVER_QUERIES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"

namespace binlog {
namespace server {

// A replica registered with COM_REGISTER_SLAVE, while its connection
// lasts.
struct ReplicaFacts {
  uint32_t server_id = 0;
  std::string host;       // as announced; the peer's address when it announced none
  uint16_t port = 0;
  uint32_t source_id = 0;  // the source it announced, else this server's id
  std::string uuid;        // @replica_uuid / @slave_uuid, "" when not sent
  // Semi-sync: the last acknowledged position.
  bool acked = false;
  std::string acked_file;
  uint64_t acked_position = 0;
  // The end of the last event a dump sent it (a file-and-position dump:
  // its start until the first event goes).
  bool sent = false;
  std::string sent_file;
  uint64_t sent_position = 0;
};

// What the answers report; filled by the server from the log.
struct ServerFacts {
  LogFlavor flavor = LogFlavor::kMySQL;
  uint32_t server_id = 1;
  std::string server_uuid;
  bool checksums = true;  // binlog_checksum CRC32 or NONE
  bool semisync = false;  // rpl_semi_sync_master_enabled
  std::string version;    // the handshake's server version
  uint16_t port = 0;
  // The newest file and its end (SHOW MASTER STATUS); every file and size.
  std::string current_file;
  uint64_t current_position = 0;
  std::vector<std::pair<std::string, uint64_t>> files;
  std::string gtid_executed;       // MySQL GTID set text
  std::string gtid_purged;
  std::string maria_binlog_pos;    // MariaDB @@gtid_binlog_pos
  std::string maria_binlog_state;  // MariaDB @@gtid_binlog_state
  std::vector<ReplicaFacts> replicas;  // ordered by server id
};

// A session's user variables (lower-case names without '@'), as text.
using SessionVars = std::map<std::string, std::optional<std::string>>;

struct QueryResult {
  enum Kind { kOk, kResultSet, kError } kind = kOk;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  uint16_t error_code = 0;
  std::string sql_state;
  std::string message;
};

// Bounds on a session's user variables (the server passes
// ServerOptions::max_session_variables and max_session_variable_bytes): a
// SET that would pass either changes nothing and gets ER_OUT_OF_RESOURCES.
//
// A SELECT's answer (its column names and values) is bounded by
// max_result_bytes (the server passes ServerOptions::max_packet): past it
// the statement gets ER_NET_PACKET_TOO_LARGE, as a row past MySQL's
// max_allowed_packet cannot be sent.
struct QueryLimits {
  size_t max_variables = 64;
  size_t max_variable_bytes = 256 << 10;  // names and values
  size_t max_result_bytes = 4 << 20;
};

// Answers `sql`; updates `*vars` for SET. `now` for UNIX_TIMESTAMP().
// Time is linear in the length of `sql` (LIKE patterns included), and
// so is memory, plus at most limits.max_result_bytes for a SELECT's
// answer.
QueryResult AnswerQuery(absl::string_view sql, const ServerFacts& facts,
                        SessionVars* vars, absl::Time now,
                        const QueryLimits& limits = QueryLimits());

// The system variables the server reports, name (lower case) and value.
std::vector<std::pair<std::string, std::string>> SystemVariables(
    const ServerFacts& facts);

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_QUERIES_H_
