// Tests for binlog/statement_events.h: the Xid and XA_prepare bodies and the
// Query status-variable walk, on the real MariaDB "create database d1"
// event quoted in the binlog-format reference (6.6), on hand-built blocks
// with every code of the reference table, and on every Query, Xid and
// XA_prepare event of the MariaDB corpus against what mariadb-binlog
// printed for it (its "xid=N" is the Q_XID status variable).

#include "binlog/statement_events.h"

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testutil/corpus.h"
#include "tests/testutil/hex.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testutil::Hex;
using ::binlog::testutil::StatusIs;
using ::testing::ElementsAre;

// --- Xid ----------------------------------------------------------------------

TEST(DecodeXidTest, ReadsTheLittleEndianXid) {
  ASSERT_OK_AND_ASSIGN(uint64_t xid, DecodeXid(Hex("2a00000000000000")));
  EXPECT_EQ(xid, 42u);
  ASSERT_OK_AND_ASSIGN(xid, DecodeXid(Hex("0807060504030201")));
  EXPECT_EQ(xid, 0x0102030405060708u);
}

TEST(DecodeXidTest, ShorterThan8BytesIsDataLoss) {
  for (size_t n = 0; n < 8; ++n) {
    EXPECT_THAT(DecodeXid(std::string(n, '\x01')),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
}

// --- XA_prepare ---------------------------------------------------------------

TEST(DecodeRowsQueryTest, SkipsTheLengthByte) {
  ASSERT_OK_AND_ASSIGN(absl::string_view text, DecodeRowsQuery("\003abc"));
  EXPECT_EQ(text, "abc");
}

TEST(DecodeRowsQueryTest, EmptyBodyIsDataLoss) {
  EXPECT_THAT(DecodeRowsQuery(""), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeXaPrepareTest, ReadsTheXid) {
  // one_phase 0, formatID 1, gtrid "vis-xa-1" (8), bqual "b" (1).
  std::string body = Hex("00 | 01000000 | 08000000 | 01000000 | 7669732d78612d31 | 62");
  ASSERT_OK_AND_ASSIGN(XaPrepareInfo x, DecodeXaPrepare(body));
  EXPECT_FALSE(x.one_phase);
  EXPECT_EQ(x.format_id, 1u);
  EXPECT_EQ(x.gtrid, "vis-xa-1");
  EXPECT_EQ(x.bqual, "b");
  body[0] = 1;
  ASSERT_OK_AND_ASSIGN(x, DecodeXaPrepare(body));
  EXPECT_TRUE(x.one_phase);
}

TEST(DecodeXaPrepareTest, LongestXidIs64Plus64Bytes) {
  std::string body = Hex("00 01000000 40000000 40000000") + std::string(128, 'x');
  ASSERT_OK_AND_ASSIGN(XaPrepareInfo x, DecodeXaPrepare(body));
  EXPECT_EQ(x.gtrid.size(), 64u);
  EXPECT_EQ(x.bqual.size(), 64u);
}

TEST(DecodeXaPrepareTest, MalformedBodiesAreDataLoss) {
  std::string good = Hex("00 01000000 02000000 01000000 616263");
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_THAT(DecodeXaPrepare(good.substr(0, n)),
                StatusIs(absl::StatusCode::kDataLoss))
        << n;
  }
  EXPECT_THAT(DecodeXaPrepare(Hex("00 01000000 41000000 00000000") + std::string(65, 'x')),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeXaPrepare(Hex("00 01000000 00000000 41000000") + std::string(65, 'x')),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeXaPrepare(Hex("00 01000000 ffffffff ffffffff")),
              StatusIs(absl::StatusCode::kDataLoss));
}

// --- Query status variables ---------------------------------------------------

// The reference's real MariaDB event for `create database d1` (83 bytes with
// header and CRC): post-header, 26 bytes of status variables, "d1" + NUL,
// the statement.
const char kCreateDatabaseD1Body[] =
    "05000000 00000000 02 0000 1a00"                  // thread 5, db_len 2
    "| 00 00000000"                                   // Q_FLAGS2
    "| 01 0000205400000000"                           // Q_SQL_MODE
    "| 06 03 737464"                                  // Q_CATALOG_NZ "std"
    "| 04 2100 2100 0800"                             // Q_CHARSET 33 33 8
    "| 6431 00"                                       // "d1"
    "| 637265617465206461746162617365206431";         // create database d1

TEST(QueryStatusVarsTest, RealMariaDbCreateDatabase) {
  std::string body = Hex(kCreateDatabaseD1Body);
  EXPECT_EQ(kHeaderSize + body.size() + kChecksumSize, 83u);
  ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
  EXPECT_EQ(q.thread_id, 5u);
  EXPECT_EQ(q.db, "d1");
  EXPECT_EQ(q.query, "create database d1");
  EXPECT_EQ(q.status_vars.size(), 26u);
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(q.status_vars));
  EXPECT_TRUE(v.has_flags2);
  EXPECT_EQ(v.flags2, 0u);
  EXPECT_TRUE(v.has_sql_mode);
  EXPECT_EQ(v.sql_mode, 0x54200000u);
  EXPECT_TRUE(v.has_catalog);
  EXPECT_EQ(v.catalog, "std");
  EXPECT_TRUE(v.has_charset);
  EXPECT_EQ(v.charset_client, 33);
  EXPECT_EQ(v.collation_connection, 33);
  EXPECT_EQ(v.collation_server, 8);
  EXPECT_FALSE(v.stopped_at_unknown);
  uint64_t xid;
  EXPECT_FALSE(v.xid(&xid));  // mariadb-binlog prints xid=0
  EXPECT_FALSE(v.has_time_zone);
  EXPECT_FALSE(v.has_maria_xid);
}

TEST(QueryStatusVarsTest, MariaDbDdlCarriesQXid) {
  // A MariaDB 10.11 CREATE TABLE (the corpus's first one): the charset
  // triple 45/45/45 and Q_XID 5.
  std::string block = Hex(
      "00 00000000 | 01 0000205400000000 | 06 03 737464 | 04 2d00 2d00 2d00"
      "| 81 0500000000000000");
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(block));
  EXPECT_TRUE(v.has_maria_xid);
  EXPECT_EQ(v.maria_xid, 5u);
  uint64_t xid = 0;
  ASSERT_TRUE(v.xid(&xid));
  EXPECT_EQ(xid, 5u);
  EXPECT_FALSE(v.has_ddl_xid);
}

TEST(QueryStatusVarsTest, EveryCodeOfTheReferenceTable) {
  std::string block = Hex(
      "00 00400800"                           // Q_FLAGS2
      "| 01 0807060504030201"                 // Q_SQL_MODE
      "| 03 0200 0300"                        // Q_AUTO_INCREMENT 2, 3
      "| 04 2100 2d00 ff00"                   // Q_CHARSET
      "| 05 06 2b30303a3030"                  // Q_TIME_ZONE "+00:00"
      "| 06 03 737464"                        // Q_CATALOG_NZ
      "| 07 0100"                             // Q_LC_TIME_NAMES
      "| 08 0800"                             // Q_CHARSET_DATABASE
      "| 09 0100000000000000"                 // Q_TABLE_MAP_FOR_UPDATE
      "| 0a 00000000"                         // Q_MASTER_DATA_WRITTEN
      "| 0b 04 726f6f74 09 6c6f63616c686f7374"  // Q_INVOKER root@localhost
      "| 0c 02 6400 653100"                   // Q_UPDATED_DB_NAMES d, e1
      "| 0d 40e201"                           // Q_MICROSECONDS 123456
      "| 10 01"                               // Q_EXPLICIT_DEFAULTS_FOR_TS
      "| 11 3930000000000000"                 // Q_DDL_LOGGED_WITH_XID 12345
      "| 12 ff00"                             // Q_DEFAULT_COLLATION_FOR_UTF8MB4
      "| 13 01"                               // Q_SQL_REQUIRE_PRIMARY_KEY
      "| 14 00"                               // Q_DEFAULT_TABLE_ENCRYPTION
      "| 80 40e201"                           // Q_HRNOW (MariaDB)
      "| 81 0700000000000000"                 // Q_XID (MariaDB)
      "| 82 04 0900000000000000");            // Q_GTID_FLAGS3 + alter seq
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(block));
  EXPECT_FALSE(v.stopped_at_unknown);
  EXPECT_EQ(v.flags2, 0x84000u);
  EXPECT_EQ(v.sql_mode, 0x0102030405060708u);
  EXPECT_EQ(v.auto_increment_increment, 2);
  EXPECT_EQ(v.auto_increment_offset, 3);
  EXPECT_EQ(v.collation_server, 255);
  EXPECT_EQ(v.time_zone, "+00:00");
  EXPECT_EQ(v.catalog, "std");
  EXPECT_EQ(v.lc_time_names, 1);
  EXPECT_EQ(v.charset_database, 8);
  EXPECT_EQ(v.table_map_for_update, 1u);
  EXPECT_TRUE(v.has_master_data_written);
  EXPECT_EQ(v.invoker_user, "root");
  EXPECT_EQ(v.invoker_host, "localhost");
  EXPECT_THAT(v.updated_db_names, ElementsAre("d", "e1"));
  EXPECT_FALSE(v.updated_db_names_over_max);
  EXPECT_EQ(v.microseconds, 123456u);
  EXPECT_EQ(v.explicit_defaults_for_timestamp, 1);
  EXPECT_TRUE(v.has_ddl_xid);
  EXPECT_EQ(v.ddl_xid, 12345u);
  EXPECT_EQ(v.default_collation_for_utf8mb4, 255);
  EXPECT_EQ(v.sql_require_primary_key, 1);
  EXPECT_TRUE(v.has_default_table_encryption);
  EXPECT_EQ(v.hrnow, 123456u);
  EXPECT_EQ(v.maria_xid, 7u);
  EXPECT_EQ(v.gtid_flags3, 4);
  EXPECT_TRUE(v.has_start_alter_seq_no);
  EXPECT_EQ(v.start_alter_seq_no, 9u);
  // MySQL's code wins where both could be present (they never are).
  uint64_t xid;
  ASSERT_TRUE(v.xid(&xid));
  EXPECT_EQ(xid, 12345u);
}

TEST(QueryStatusVarsTest, MySqlAtomicDdlXid) {
  // MySQL 8.0 DDL: flags2, sql_mode, catalog, charset, then
  // Q_UPDATED_DB_NAMES and Q_DDL_LOGGED_WITH_XID.
  std::string block = Hex(
      "00 00000000 | 01 2000a04400000000 | 06 03 737464 | 04 ff00 ff00 ff00"
      "| 0c 01 7400 | 11 1a00000000000000");
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(block));
  uint64_t xid;
  ASSERT_TRUE(v.xid(&xid));
  EXPECT_EQ(xid, 26u);
  EXPECT_THAT(v.updated_db_names, ElementsAre("t"));
}

TEST(QueryStatusVarsTest, OldCatalogCodeAndTooManyDatabases) {
  // Q_CATALOG (5.0.0-5.0.3): length, string, NUL. Q_UPDATED_DB_NAMES 254:
  // more than 16 databases, no names; the walk goes on after it.
  std::string block = Hex("02 03 737464 00 | 0c fe | 10 00");
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(block));
  EXPECT_EQ(v.catalog, "std");
  EXPECT_TRUE(v.updated_db_names_over_max);
  EXPECT_TRUE(v.updated_db_names.empty());
  EXPECT_TRUE(v.has_explicit_defaults_for_timestamp);
}

TEST(QueryStatusVarsTest, UnknownCodeStopsTheWalk) {
  // Code 14 (Q_COMMIT_TS, never written) and 21 are unknown: the rest is
  // skipped, whatever it holds.
  for (const char* hex : {"00 01000000 | 0e ffffff | 11 0100000000000000",
                          "00 01000000 | 15 | 11 0100000000000000",
                          "00 01000000 | 83 02"}) {
    ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(Hex(hex)));
    EXPECT_TRUE(v.has_flags2) << hex;
    EXPECT_TRUE(v.stopped_at_unknown) << hex;
    EXPECT_EQ(v.unknown_offset, 5u) << hex;
    EXPECT_FALSE(v.has_ddl_xid) << hex;
  }
  ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(Hex("0e")));
  EXPECT_EQ(v.unknown_code, 14);
  ASSERT_OK_AND_ASSIGN(v, DecodeQueryStatusVars(""));
  EXPECT_FALSE(v.stopped_at_unknown);
  EXPECT_FALSE(v.has_flags2);
}

TEST(QueryStatusVarsTest, ValuesPastTheBlockAreDataLoss) {
  for (const char* hex : {"00 000000", "01 00000000000000", "03 0100", "04 21002100",
                          "05 05 2b3030", "06 04 737464", "02 03 737464",
                          "0b 04 726f6f74", "0b 04 726f6f74 03 6c6f", "0c 02 6400 65",
                          "0c 01", "0d 40e2", "11 39300000", "81 05000000",
                          "82 08 0900", "10", "80 00"}) {
    EXPECT_THAT(DecodeQueryStatusVars(Hex(hex)),
                StatusIs(absl::StatusCode::kDataLoss))
        << hex;
  }
}

TEST(StatementDecodersTest, RandomBytesDecodeToAnErrorOrAValue) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string body(rng() % 64, '\0');
    // Small codes and lengths, so the walk gets somewhere.
    for (char& c : body) c = static_cast<char>(rng() % 2 ? rng() % 24 : rng());
    DecodeXid(body).status().IgnoreError();
    DecodeXaPrepare(body).status().IgnoreError();
    auto v = DecodeQueryStatusVars(body);
    if (v.ok() && v->stopped_at_unknown) {
      ASSERT_LT(v->unknown_offset, body.size());
      ASSERT_EQ(static_cast<uint8_t>(body[v->unknown_offset]), v->unknown_code);
    }
    auto q = DecodeQuery(body, 13);
    if (q.ok()) DecodeQueryStatusVars(q->status_vars).status().IgnoreError();
  }
}

// --- The MariaDB corpus -------------------------------------------------------

// "XID = X'7669732d78612d31',X'',1" as mariadb-binlog prints an XA xid.
std::string PrintedXid(const XaPrepareInfo& x) {
  return absl::StrCat("XID = X'", absl::BytesToHexString(x.gtrid), "',X'",
                      absl::BytesToHexString(x.bqual), "',", x.format_id);
}

TEST(StatementEventsCorpusTest, XidsAreWhatMariadbBinlogPrinted) {
  ASSERT_OK_AND_ASSIGN(testutil::CorpusIds ids, testutil::LoadCorpusIds());
  std::map<std::string, bool> checksums;
  for (const auto& [scenario, name, crc] : ids.files) {
    checksums[scenario + "/" + name] = crc;
  }
  std::string loaded;
  std::unique_ptr<testutil::CorpusFileEvents> file;
  size_t queries = 0, ddl_xids = 0, xids = 0, xa = 0;
  for (const testutil::CorpusPrintedEvent& p : ids.events) {
    if (p.type != kQueryEvent && p.type != kXidEvent && p.type != kXaPrepareEvent) {
      continue;
    }
    SCOPED_TRACE(absl::StrCat(p.scenario, "/", p.file, " at ", p.pos, ": ", p.desc));
    std::string key = p.scenario + "/" + p.file;
    if (loaded != key) {
      ASSERT_OK_AND_ASSIGN(file, testutil::LoadCorpusFileEvents(p.scenario, p.file));
      loaded = key;
    }
    auto it = file->at.find(p.pos);
    ASSERT_NE(it, file->at.end());
    absl::string_view body = EventBody(it->second, checksums[key]);
    if (p.type == kXidEvent) {  // "Xid = 12"
      ASSERT_OK_AND_ASSIGN(uint64_t xid, DecodeXid(body));
      EXPECT_EQ(absl::StrCat("Xid = ", xid), p.desc);
      ++xids;
    } else if (p.type == kXaPrepareEvent) {
      ASSERT_OK_AND_ASSIGN(XaPrepareInfo x, DecodeXaPrepare(body));
      EXPECT_EQ(PrintedXid(x), p.desc);
      ++xa;
    } else {  // "Query thread_id=5 exec_time=0 error_code=0 xid=6"
      ASSERT_OK_AND_ASSIGN(QueryInfo q, DecodeQuery(body, 13));
      ASSERT_OK_AND_ASSIGN(QueryStatusVars v, DecodeQueryStatusVars(q.status_vars));
      EXPECT_FALSE(v.stopped_at_unknown);
      EXPECT_TRUE(v.has_flags2 && v.has_sql_mode && v.has_charset);
      EXPECT_TRUE(absl::StartsWith(
          p.desc, absl::StrCat("Query thread_id=", q.thread_id, " exec_time=",
                               q.exec_time, " error_code=", q.error_code, " ")));
      uint64_t xid = 0;
      bool has_xid = v.xid(&xid);
      EXPECT_TRUE(absl::EndsWith(p.desc, absl::StrCat(" xid=", xid)));
      EXPECT_EQ(has_xid, !absl::EndsWith(p.desc, " xid=0"));
      ddl_xids += has_xid;
      ++queries;
    }
  }
  EXPECT_GT(queries, 1000u);
  EXPECT_GT(ddl_xids, 10u);
  EXPECT_GT(xids, 500u);
  EXPECT_GE(xa, 1u);
}

TEST(MariaCompressionTest, CompressRoundTripsAndMatchesTheServersBlock) {
  // zlib's compress() of "hello" behind MariaDB's header (0x81: zlib, a
  // 1-byte length; 5).
  EXPECT_EQ(MariaCompress("hello"), Hex("8105789ccb48cdc9c90700062c0215"));
  for (size_t n : {0u, 1u, 255u, 256u, 70000u}) {
    std::string data(n, 'q');
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<char>('a' + (i * 7) % 26);
    std::string out;
    ASSERT_TRUE(MariaUncompress(MariaCompress(data), 1 << 20, &out).ok()) << n;
    EXPECT_EQ(out, data);
  }
  std::string out;
  EXPECT_TRUE(absl::IsDataLoss(MariaUncompress("\x81", 1 << 20, &out)));
}

TEST(MariaCompressionTest, UncompressReadsAServerBlockAndRefusesLengthLies) {
  // zlib stream of "hello" (from zlib's compress()), announced length 5.
  std::string block = Hex("81 05 789ccb48cdc9c90700062c0215");
  std::string out;
  ASSERT_TRUE(MariaUncompress(block, 1 << 20, &out).ok());
  EXPECT_EQ(out, "hello");
  // A lie about the length is refused without allocating it.
  EXPECT_FALSE(MariaUncompress(Hex("84 7fffffff 789ccb48cdc9c90700062c0215"),
                               size_t{1} << 30, &out)
                   .ok());
  EXPECT_FALSE(MariaUncompress(Hex("81 06 789ccb48cdc9c90700062c0215"),
                               1 << 20, &out)
                   .ok());
}

// --- Statement-support events -------------------------------------------------

TEST(DecodeIntvarTest, ReadsTypeAndValue) {
  ASSERT_OK_AND_ASSIGN(IntvarInfo i, DecodeIntvar(Hex("02 0a00000000000000")));
  EXPECT_EQ(i.type, 2);
  EXPECT_EQ(i.value, 10u);
  EXPECT_STREQ(IntvarTypeName(i.type), "INSERT_ID");
  EXPECT_STREQ(IntvarTypeName(1), "LAST_INSERT_ID");
  EXPECT_STREQ(IntvarTypeName(7), "INVALID_INT");
  EXPECT_THAT(DecodeIntvar(Hex("02 0a000000000000")),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST(DecodeRandTest, ReadsBothSeeds) {
  ASSERT_OK_AND_ASSIGN(RandInfo r,
                       DecodeRand(Hex("0100000000000000 0200000000000080")));
  EXPECT_EQ(r.seed1, 1u);
  EXPECT_EQ(r.seed2, 0x8000000000000002u);
  EXPECT_THAT(DecodeRand(Hex("0100000000000000 02000000000000")),
              StatusIs(absl::StatusCode::kDataLoss));
}

// User_var bodies: name length (4), name, is_null (1), then type (1),
// charset (4), value length (4), value, and an optional flags byte.
TEST(DecodeUserVarTest, EveryValueTypeAsText) {
  // @a = -1 (INT, signed), then the same bytes with the unsigned flag.
  // (`name` points into the body, which must outlive the result.)
  const std::string int_body =
      Hex("01000000 61 00 02 3f000000 08000000 ffffffffffffffff 00");
  ASSERT_OK_AND_ASSIGN(UserVarInfo u, DecodeUserVar(int_body));
  EXPECT_EQ(u.name, "a");
  EXPECT_FALSE(u.is_null);
  EXPECT_FALSE(u.is_string);
  EXPECT_EQ(u.charset, 63u);
  EXPECT_EQ(u.value, "-1");
  ASSERT_OK_AND_ASSIGN(
      u, DecodeUserVar(Hex("01000000 61 00 02 3f000000 08000000 ffffffffffffffff 01")));
  EXPECT_EQ(u.value, "18446744073709551615");
  // REAL 0.5.
  ASSERT_OK_AND_ASSIGN(
      u, DecodeUserVar(Hex("01000000 62 00 01 3f000000 08000000 000000000000e03f")));
  EXPECT_EQ(u.value, "0.5");
  // DECIMAL(4,2) 12.34: precision, scale, then the binary decimal.
  ASSERT_OK_AND_ASSIGN(
      u, DecodeUserVar(Hex("01000000 63 00 04 3f000000 04000000 0402 8c22")));
  EXPECT_EQ(u.value, "12.34");
  // STRING 'abc' in utf8mb3 (33): the bytes as they are.
  ASSERT_OK_AND_ASSIGN(
      u, DecodeUserVar(Hex("01000000 64 00 00 21000000 03000000 616263")));
  EXPECT_TRUE(u.is_string);
  EXPECT_EQ(u.charset, 33u);
  EXPECT_EQ(u.value, "abc");
  // NULL: nothing after the flag.
  const std::string null_body = Hex("01000000 65 01");
  ASSERT_OK_AND_ASSIGN(u, DecodeUserVar(null_body));
  EXPECT_TRUE(u.is_null);
  EXPECT_EQ(u.name, "e");
}

TEST(DecodeUserVarTest, MalformedBodiesAreDataLoss) {
  for (const char* hex : {
           "",
           "05000000 61",                                       // name
           "01000000 61 00 02 3f000000",                        // value length
           "01000000 61 00 02 3f000000 09000000 00",            // value
           "01000000 61 00 01 3f000000 04000000 0000803f",      // REAL, 4 bytes
           "01000000 61 00 02 3f000000 02000000 0100",          // INT, 2 bytes
           "01000000 61 00 04 3f000000 01000000 04",            // DECIMAL
           "01000000 61 00 04 3f000000 03000000 0402 8c",       // DECIMAL size
       }) {
    EXPECT_THAT(DecodeUserVar(Hex(hex)), StatusIs(absl::StatusCode::kDataLoss))
        << hex;
  }
}

TEST(DecodeIncidentTest, NumberAndOptionalMessage) {
  // (`message` points into the body, which must outlive the result.)
  const std::string body = Hex("0100 0b 4c4f53545f4556454e5453");
  ASSERT_OK_AND_ASSIGN(IncidentInfo i, DecodeIncident(body));
  EXPECT_EQ(i.number, 1);
  EXPECT_EQ(i.message, "LOST_EVENTS");
  ASSERT_OK_AND_ASSIGN(i, DecodeIncident(Hex("0100")));
  EXPECT_EQ(i.number, 1);
  EXPECT_TRUE(i.message.empty());
  EXPECT_THAT(DecodeIncident(Hex("01")), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeIncident(Hex("0100 05 41")),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace binlog
