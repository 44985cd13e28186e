// File: binlog/flavor.h
//
// Which server's file flavor the library writes: MySQL 8.0's or MariaDB
// 10.11's. The two share the v4 file layout and most events but differ in
// their Format_description, their GTID events (MySQL Gtid 33 with a UUID;
// MariaDB Gtid 162 with domain-server-seq, which also stands in for BEGIN),
// their GTID state events (Previous_gtids 35; Gtid_list 163 and
// Binlog_checkpoint 161), where DDL carries its XID (Q_DDL_LOGGED_WITH_XID;
// Q_XID) and their Rows events (v2 30-32; v1 23-25 with Annotate_rows).
//
// Thread safety: a plain value.

#ifndef BINLOG_BINLOG_FLAVOR_H_
#define BINLOG_BINLOG_FLAVOR_H_

namespace binlog {

enum class LogFlavor {
  kMySQL,    // MySQL 8.0
  kMariaDB,  // MariaDB 10.11
};

// Which MySQL release's file layout a kMySQL log writes. The two differ in
// the Format_description (binlog/FORMAT.md "MySQL 8.4 files"): 8.4 declares
// 42 event types (Gtid_tagged_log_event, 42, has post-header length 0) and
// post-header length 0 for the V1 Rows events 23-25 it no longer knows; the
// server version string is the caller's (FdeParams::server_version).
enum class MySqlLayout {
  k80,  // MySQL 8.0.26 - 8.2: 41 post-header lengths, a 122-byte event
  k84,  // MySQL 8.4 LTS: 42 post-header lengths, a 123-byte event
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_FLAVOR_H_
