// A real server applies the row events the library writes: the test starts
// Debian's mariadbd on a temporary data directory (unix socket only),
// creates tables, writes transactions through RowsWriter into a log
// (inserts, updates, deletes, every type the value helpers pack that
// MariaDB has, NULLs, statements whose rows span several Rows events),
// pipes the closed files through `mariadb-binlog | mariadb`, and compares
// every table's contents with what it wrote.
//
// Both flavors: MySQL Rows v2 events (30-32; MariaDB applies them with its
// v1 code) with FULL row images and MINIMAL table metadata, no JSON column
// (MariaDB stores JSON as text, MySQL as binary), in a MySQL-flavor log;
// and MariaDB's own v1 rows (23-25) with Annotate_rows, MINIMAL row images,
// FULL metadata and a JSON column, in a MariaDB-flavor log
// (Options::flavor) whose transactions start with MariaDB Gtid events.
//
// Each flavor twice: rows handed over as Values (RowsWriter::Insert...),
// and as server records (binlog/rows_record.h: the tables described with
// ServerRecordLayout, rows stored with StoreRecord, InsertRecord...).
//
// Skipped (GTEST_SKIP) only when the MariaDB binaries are not installed
// (tools/setup.sh installs mariadb-server).

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/rows_record.h"
#include "binlog/rows_writer.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace {

constexpr char kMariadbd[] = "/usr/sbin/mariadbd";
constexpr char kInstallDb[] = "/usr/bin/mariadb-install-db";
constexpr char kClient[] = "/usr/bin/mariadb";
constexpr char kBinlogTool[] = "/usr/bin/mariadb-binlog";

bool Exists(const char* path) { return ::access(path, X_OK) == 0; }

using testing_util::RunCommand;

// The server: one per test binary, started in SetUpTestSuite.
struct Server {
  std::string dir;  // datadir, socket, logs
  pid_t pid = -1;
  std::string Socket() const { return dir + "/sock"; }
  std::string Client() const {
    return absl::StrCat(kClient, " --no-defaults -S ", Socket(), " -uroot");
  }
};
Server* g_server = nullptr;

struct ApplyCase {
  LogFlavor flavor;
  bool records;  // rows as server records, not Values
};

class MariadbApplyTest : public ::testing::TestWithParam<ApplyCase> {
 protected:
  static void SetUpTestSuite() {
    if (!Exists(kMariadbd) || !Exists(kInstallDb) || !Exists(kClient) ||
        !Exists(kBinlogTool)) {
      return;
    }
    // A short path: the socket's must fit in sockaddr_un.
    char tmpl[] = "/tmp/binlog_apply_XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return;
    auto* s = new Server;
    s->dir = tmpl;
    const passwd* pw = ::getpwuid(::geteuid());
    const std::string user = pw ? pw->pw_name : "root";
    std::string out;
    if (RunCommand(absl::StrCat(kInstallDb, " --no-defaults --datadir=", s->dir,
                         "/data --user=", user,
                         " --auth-root-authentication-method=normal"
                         " --skip-test-db"),
            &out) != 0) {
      ADD_FAILURE() << "mariadb-install-db failed:\n" << out;
      delete s;
      return;
    }
    const std::vector<std::string> args = {
        kMariadbd, "--no-defaults", "--datadir=" + s->dir + "/data",
        "--socket=" + s->Socket(), "--skip-networking", "--user=" + user,
        "--log-error=" + s->dir + "/error.log", "--pid-file=" + s->dir + "/pid",
        "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
        "--skip-log-bin", "--character-set-server=utf8mb4"};
    pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(kMariadbd, argv.data());
      ::_exit(127);
    }
    s->pid = pid;
    g_server = s;
    for (int i = 0; i < 300; ++i) {  // up to 30 s
      std::string ping;
      if (RunCommand(s->Client() + " -e 'SELECT 1'", &ping) == 0) return;
      int st;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        s->pid = -1;
        break;
      }
      // Polls an external process for its state (bounded), not a delay.
      absl::SleepFor(absl::Milliseconds(100));
    }
    std::string log;
    RunCommand("cat " + s->dir + "/error.log", &log);
    ADD_FAILURE() << "mariadbd did not start:\n" << log;
  }

  static void TearDownTestSuite() {
    if (g_server == nullptr) return;
    if (g_server->pid > 0) {
      ::kill(g_server->pid, SIGTERM);
      int st;
      bool done = false;
      for (int i = 0; i < 300 && !done; ++i) {  // clean shutdown, up to 30 s
        done = ::waitpid(g_server->pid, &st, WNOHANG) == g_server->pid;
        if (!done) absl::SleepFor(absl::Milliseconds(100));  // polls the exit
      }
      if (!done) {
        ::kill(g_server->pid, SIGKILL);
        while (::waitpid(g_server->pid, &st, 0) < 0 && errno == EINTR) {
        }
      }
    }
    std::string out;
    RunCommand("rm -rf '" + g_server->dir + "'", &out);
    delete g_server;
    g_server = nullptr;
  }

  void SetUp() override {
    if (!Exists(kMariadbd) || !Exists(kInstallDb) || !Exists(kClient) ||
        !Exists(kBinlogTool)) {
      GTEST_SKIP() << "MariaDB server binaries not installed (tools/setup.sh "
                      "installs mariadb-server)";
    }
    ASSERT_NE(g_server, nullptr);
    ASSERT_GT(g_server->pid, 0);
  }

  // Runs SQL through the client; -N -B output.
  std::string Sql(const std::string& sql) {
    std::string out;
    int rc = RunCommand(absl::StrCat(g_server->Client(), " -N -B -e \"", sql, "\""), &out);
    EXPECT_EQ(rc, 0) << sql << "\n" << out;
    return out;
  }
};

ColumnDef Col(ColumnType t, uint32_t length = 0, const char* name = "") {
  ColumnDef c;
  c.type = t;
  c.length = length;
  c.name = name;
  c.collation = 8;  // latin1_swedish_ci: one byte per character
  return c;
}

// One column of the `types` table: its SQL, its description, how to select
// it as text, and two values with the text the server returns for them.
struct TypeColumn {
  const char* sql;
  ColumnDef def;
  const char* select;
  Value a;
  const char* a_text;
  Value b;
  const char* b_text;
};

TEST_P(MariadbApplyTest, ServerAppliesWhatTheWriterWrote) {
  const LogFlavor flavor = GetParam().flavor;
  const bool records = GetParam().records;
  const bool maria = flavor == LogFlavor::kMariaDB;
  const std::string db = absl::StrCat(maria ? "apply_maria" : "apply_mysql",
                                      records ? "_rec" : "");
  static const std::string kVarchar(300, 'v');
  static const std::string kChar4 = [] {
    std::string s;
    for (int i = 0; i < 70; ++i) s += "\xc3\xa9";  // 71 characters, 141 bytes
    return s + "x";
  }();
  // The client prints in latin1: compare the stored bytes.
  static const std::string kChar4Hex = [] {
    std::string s;
    for (int i = 0; i < 70; ++i) s += "C3A9";
    return s + "78";
  }();
  static const std::string kMedium(70000, 'm');
  // POINT(1 2) as servers store it: SRID 0, then WKB.
  static const std::string kPoint =
      std::string("\0\0\0\0\x01\x01\0\0\0\0\0\0\0\0\0\xf0\x3f", 17) +
      std::string("\0\0\0\0\0\0\0\x40", 8);
  static const std::string kPoint2 =
      std::string("\0\0\0\0\x01\x01\0\0\0", 9) + std::string(16, '\0');
  static const std::string kBlob("bin\0\xff" "ary", 8);
  std::vector<TypeColumn> cols = {
      {"tiny TINYINT", Col(kColTiny), "tiny", Value::Int(-128), "-128",
       Value::Int(127), "127"},
      {"utiny TINYINT UNSIGNED", Col(kColTiny), "utiny", Value::UInt(255), "255",
       Value::UInt(0), "0"},
      {"small SMALLINT", Col(kColShort), "small", Value::Int(-32768), "-32768",
       Value::Int(12345), "12345"},
      {"med MEDIUMINT", Col(kColInt24), "med", Value::Int(-8388608), "-8388608",
       Value::Int(8388607), "8388607"},
      {"i INT", Col(kColLong), "i", Value::Int(-2147483647 - 1), "-2147483648",
       Value::Int(7), "7"},
      {"big BIGINT", Col(kColLongLong), "big", Value::Int(INT64_MIN),
       "-9223372036854775808", Value::Int(INT64_MAX), "9223372036854775807"},
      {"ubig BIGINT UNSIGNED", Col(kColLongLong), "ubig", Value::UInt(UINT64_MAX),
       "18446744073709551615", Value::UInt(1), "1"},
      {"f FLOAT", Col(kColFloat), "f", Value::Double(1.5), "1.5",
       Value::Double(-0.25), "-0.25"},
      {"d DOUBLE", Col(kColDouble), "d", Value::Double(0.1), "0.1",
       Value::Double(-12345.5), "-12345.5"},
      {"dec1 DECIMAL(12,3)", Col(kColNewDecimal, 12), "dec1",
       Value::Decimal("-123456789.125"), "-123456789.125", Value::Decimal("0.5"),
       "0.500"},
      {"dec2 DECIMAL(30,10)", Col(kColNewDecimal, 30), "dec2",
       Value::Decimal("12345678901234567890.0123456789"),
       "12345678901234567890.0123456789", Value::Decimal("-1"),
       "-1.0000000000"},
      {"ch CHAR(10) CHARACTER SET latin1", Col(kColString, 10), "ch",
       Value::Bytes("abc"), "abc", Value::Bytes("0123456789"), "0123456789"},
      {"vc VARCHAR(300) CHARACTER SET latin1", Col(kColVarchar, 300), "vc",
       Value::Bytes(kVarchar), kVarchar.c_str(), Value::Bytes(""), ""},
      {"bl BLOB", Col(kColBlob, 2), "HEX(bl)", Value::Bytes(kBlob),
       "62696E00FF617279", Value::Bytes("x"), "78"},
      {"tx TEXT CHARACTER SET latin1", Col(kColBlob, 2), "tx",
       Value::Bytes("some text"), "some text", Value::Bytes(""), ""},
      {"dt0 DATE", Col(kColDate), "dt0", Value::Time(MakeTemporal(2024, 2, 29)),
       "2024-02-29", Value::Time(MakeTemporal(1000, 1, 1)), "1000-01-01"},
      {"t0 TIME", Col(kColTime2, 0), "t0", Value::Time(MakeTemporal(0, 0, 0, 838, 59, 59)),
       "838:59:59", Value::Time(MakeTemporal(0, 0, 0, 12, 0, 1, 0, true)), "-12:00:01"},
      {"t2 TIME(2)", Col(kColTime2, 2), "t2",
       Value::Time(MakeTemporal(0, 0, 0, 0, 0, 1, 500000, true)), "-00:00:01.50",
       Value::Time(MakeTemporal(0, 0, 0, 23, 59, 59, 990000)), "23:59:59.99"},
      {"t6 TIME(6)", Col(kColTime2, 6), "t6",
       Value::Time(MakeTemporal(0, 0, 0, 12, 34, 56, 789012, true)), "-12:34:56.789012",
       Value::Time(MakeTemporal(0, 0, 0, 0, 0, 0, 1)), "00:00:00.000001"},
      {"dtm DATETIME", Col(kColDatetime2, 0), "dtm",
       Value::Time(MakeTemporal(2024, 1, 2, 3, 4, 5)), "2024-01-02 03:04:05",
       Value::Time(MakeTemporal(1999, 12, 31, 23, 59, 59)), "1999-12-31 23:59:59"},
      {"dt4 DATETIME(4)", Col(kColDatetime2, 4), "dt4",
       Value::Time(MakeTemporal(2000, 1, 1, 0, 0, 0, 123456)), "2000-01-01 00:00:00.1234",
       Value::Time(MakeTemporal(9999, 12, 31, 23, 59, 59, 999900)),
       "9999-12-31 23:59:59.9999"},
      {"ts3 TIMESTAMP(3) NULL", Col(kColTimestamp2, 3), "ts3",
       Value::Timestamp(1700000000, 123456), "2023-11-14 22:13:20.123",
       Value::Timestamp(1, 0), "1970-01-01 00:00:01.000"},
      {"y YEAR", Col(kColYear), "y", Value::Int(2024), "2024", Value::Int(1901),
       "1901"},
      {"e ENUM('a','b','c')", Col(kColEnum, 3), "e", Value::UInt(2), "b",
       Value::UInt(3), "c"},
      {"s SET('x','y','z')", Col(kColSet, 3), "s", Value::UInt(5), "x,z",
       Value::UInt(2), "y"},
      {"b BIT(12)", Col(kColBit, 12), "b+0", Value::UInt(0xABC), "2748",
       Value::UInt(1), "1"},
      // CHAR of more than 255 bytes (a 2-byte length), multi-byte text.
      {"ch4 CHAR(100) CHARACTER SET utf8mb4", Col(kColString, 400), "HEX(ch4)",
       Value::Bytes(kChar4), kChar4Hex.c_str(), Value::Bytes("short"), "73686F7274"},
      // BINARY pads with 0x00 (the row image trims it).
      {"bn BINARY(6)", Col(kColString, 6), "HEX(bn)", Value::Bytes("ab"),
       "616200000000", Value::Bytes("abcdef"), "616263646566"},
      {"tb TINYBLOB", Col(kColTinyBlob, 1), "HEX(tb)", Value::Bytes("t"), "74",
       Value::Bytes(""), ""},
      {"mb MEDIUMTEXT CHARACTER SET latin1", Col(kColMediumBlob, 3), "mb",
       Value::Bytes(kMedium), kMedium.c_str(), Value::Bytes("m"), "m"},
      {"lb LONGBLOB", Col(kColLongBlob, 4), "HEX(lb)", Value::Bytes("\x01\x02"),
       "0102", Value::Bytes("z"), "7A"},
      {"g POINT", Col(kColGeometry), "ST_AsText(g)", Value::Bytes(kPoint),
       "POINT(1 2)", Value::Bytes(kPoint2), "POINT(0 0)"},
  };
  cols[1].def.is_unsigned = true;
  cols[6].def.is_unsigned = true;
  cols[9].def.scale = 3;
  cols[10].def.scale = 10;
  cols[23].def.enum_values = {"a", "b", "c"};
  cols[24].def.enum_values = {"x", "y", "z"};
  cols[26].def.collation = 45;  // utf8mb4_general_ci
  cols[27].def.collation = 63;  // binary
  cols[28].def.collation = 63;
  cols[30].def.collation = 63;
  cols[31].def.geometry_type = 1;  // POINT
  if (maria) {
    // MariaDB's JSON is LONGTEXT with a validity check.
    ColumnDef j = Col(kColJson, 0, "j");
    j.collation = 46;  // utf8mb4_bin
    cols.push_back({"j JSON", j, "j", Value::Bytes("{\"k\": [1, 2]}"),
                    "{\"k\": [1, 2]}", Value::Bytes("null"), "null"});
  }
  for (TypeColumn& c : cols) {
    c.def.name = std::string(c.sql, std::string(c.sql).find(' '));
  }

  // The tables, on the server and in the writer.
  std::vector<std::string> ddl;
  for (const TypeColumn& c : cols) ddl.push_back(c.sql);
  Sql(absl::StrCat("CREATE DATABASE ", db, "; CREATE TABLE ", db,
                   ".types (id INT NOT NULL PRIMARY KEY, ",
                   absl::StrJoin(ddl, ", "), ") ENGINE=InnoDB; CREATE TABLE ", db,
                   ".wide (id INT NOT NULL PRIMARY KEY, n INT, payload "
                   "VARCHAR(2000) CHARACTER SET latin1) ENGINE=InnoDB"));
  RowsWriterOptions wo;
  wo.flavor = flavor;
  wo.row_image = maria ? RowImage::kMinimal : RowImage::kFull;
  auto writer = RowsWriter::Create(wo);
  ASSERT_TRUE(writer.ok());
  TableDef types;
  types.table_id = 70;
  types.schema = db;
  types.table = "types";
  types.metadata = maria ? RowMetadata::kFull : RowMetadata::kMinimal;
  ColumnDef id = Col(kColLong, 0, "id");
  id.nullable = false;
  types.columns.push_back(id);
  for (const TypeColumn& c : cols) types.columns.push_back(c.def);
  types.primary_key = {0};
  TableDef wide;
  wide.table_id = 71;
  wide.schema = db;
  wide.table = "wide";
  wide.metadata = types.metadata;
  wide.columns = {id, Col(kColLong, 0, "n"), Col(kColVarchar, 2000, "payload")};
  wide.primary_key = {0};
  const RecordLayout types_layout = ServerRecordLayout(types);
  const RecordLayout wide_layout = ServerRecordLayout(wide);
  auto t_types = records ? writer->DescribeTable(types, types_layout)
                         : writer->DescribeTable(types);
  auto t_wide = records ? writer->DescribeTable(wide, wide_layout)
                        : writer->DescribeTable(wide);
  ASSERT_TRUE(t_types.ok()) << t_types.status();
  ASSERT_TRUE(t_wide.ok()) << t_wide.status();

  // What each table must hold, as the client prints it.
  std::map<int, std::string> want_types, want_wide;
  auto row_of = [&](int key, int which) {
    std::vector<Value> v = {Value::Int(key)};
    for (const TypeColumn& c : cols) {
      v.push_back(which == 0 ? c.a : which == 1 ? c.b : Value::Null());
    }
    return v;
  };
  auto text_of = [&](int key, int which) {
    std::vector<std::string> t = {absl::StrCat(key)};
    for (const TypeColumn& c : cols) {
      t.push_back(which == 0 ? c.a_text : which == 1 ? c.b_text : "NULL");
    }
    return absl::StrJoin(t, "\t");
  };
  auto payload = [](int k, int version) {
    return std::string(400 + (k * 37) % 500, static_cast<char>('a' + (k + version) % 26));
  };

  Options o;
  o.flavor = flavor;
  o.max_file_size = 16384;  // several files
  const std::string dir = absl::StrCat(g_server->dir, "/log_", db);
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn(o.checksums);
  uint64_t xid = 0;
  int multi_event_statements = 0;
  auto begin = [&]() {
    txn.Clear();
    if (maria) {
      txn.AppendMariaCommitGtid(1700000000, 1, CommitGtid());  // takes BEGIN's place
    } else {
      AppendAnonymousGtid(&txn, 1700000000, 1, 0, 1);
      AppendQuery(&txn, 1700000000, 1, 5, db, "BEGIN");
    }
  };
  auto commit = [&]() {
    AppendXid(&txn, 1700000000, 1, ++xid);
    absl::StatusOr<CommitPosition> c = (*log)->Commit(&txn);
    ASSERT_TRUE(c.ok()) << c.status();
  };
  // Runs one statement; counts those that took more than one Rows event.
  auto statement = [&](const char* query, auto body) {
    const size_t events_before = txn.appended_event_count();
    ASSERT_TRUE(writer->BeginStatement(&txn, 1700000000, query).ok());
    body();
    ASSERT_TRUE(writer->EndStatement().ok());
    size_t rows_events = 0;
    for (size_t i = events_before; i < txn.appended_event_count(); ++i) {
      uint8_t t = txn.appended_event_type(i);
      rows_events += IsRowsEvent(t);
    }
    if (rows_events > 1) ++multi_event_statements;
  };
  // Every row goes through these: as Values, or as records built from them.
  auto to_record = [&](RowsWriter::TableHandle t, const std::vector<Value>& row) {
    const bool is_types = t == *t_types;
    const RecordLayout& l = is_types ? types_layout : wide_layout;
    std::vector<uint8_t> rec(l.record_length);
    absl::Status s = StoreRecord(is_types ? types : wide, l, row, absl::MakeSpan(rec));
    EXPECT_TRUE(s.ok()) << s;
    return rec;
  };
  auto insert = [&](RowsWriter::TableHandle t, const std::vector<Value>& row) {
    return records ? writer->InsertRecord(t, to_record(t, row)) : writer->Insert(t, row);
  };
  auto update = [&](RowsWriter::TableHandle t, const std::vector<Value>& before,
                    const std::vector<Value>& after, absl::Span<const uint8_t> changed) {
    return records ? writer->UpdateRecord(t, to_record(t, before), to_record(t, after),
                                          changed)
                   : writer->Update(t, before, after, changed);
  };
  auto erase = [&](RowsWriter::TableHandle t, const std::vector<Value>& row) {
    return records ? writer->DeleteRecord(t, to_record(t, row)) : writer->Delete(t, row);
  };
  const std::vector<uint8_t> all_changed(
      (types.columns.size() + 7) / 8, 0xff);

  // 1. Inserts: extremes, typical, all NULL.
  begin();
  statement("INSERT INTO types ...", [&] {
    for (int k = 1; k <= 3; ++k) {
      ASSERT_TRUE(insert(*t_types, row_of(k, k - 1)).ok());
      want_types[k] = text_of(k, k - 1);
    }
  });
  commit();
  // 2. Update row 1 to the b values and row 3 from NULLs to a values;
  //    delete row 2.
  begin();
  statement("UPDATE types ...", [&] {
    ASSERT_TRUE(update(*t_types, row_of(1, 0), row_of(1, 1), all_changed).ok());
    ASSERT_TRUE(update(*t_types, row_of(3, 2), row_of(3, 0), all_changed).ok());
  });
  want_types[1] = text_of(1, 1);
  want_types[3] = text_of(3, 0);
  statement("DELETE FROM types WHERE id = 2",
            [&] { ASSERT_TRUE(erase(*t_types, row_of(2, 1)).ok()); });
  want_types.erase(2);
  commit();
  // 3. Many rows in single statements, crossing the Rows event size.
  begin();
  statement("INSERT INTO wide ...", [&] {
    for (int k = 1; k <= 60; ++k) {
      std::string p = payload(k, 0);
      ASSERT_TRUE(
          insert(*t_wide, {Value::Int(k), Value::Int(k * 10), Value::Bytes(p)}).ok());
      want_wide[k] = absl::StrCat(k, "\t", k * 10, "\t", p);
    }
  });
  commit();
  begin();
  const uint8_t payload_changed[] = {0x04};
  statement("UPDATE wide SET payload = ...", [&] {
    for (int k = 1; k <= 60; k += 2) {
      std::string before = payload(k, 0), after = payload(k, 1);
      ASSERT_TRUE(update(*t_wide,
                         {Value::Int(k), Value::Int(k * 10), Value::Bytes(before)},
                         {Value::Int(k), Value::Int(k * 10), Value::Bytes(after)},
                         payload_changed)
                      .ok());
      want_wide[k] = absl::StrCat(k, "\t", k * 10, "\t", after);
    }
  });
  statement("DELETE FROM wide WHERE id % 3 = 0", [&] {
    for (int k = 3; k <= 60; k += 3) {
      std::string p = payload(k, k % 2 == 1 ? 1 : 0);
      ASSERT_TRUE(
          erase(*t_wide, {Value::Int(k), Value::Int(k * 10), Value::Bytes(p)}).ok());
      want_wide.erase(k);
    }
  });
  commit();
  ASSERT_TRUE((*log)->Close().ok());
  EXPECT_GE(multi_event_statements, 2);

  // Apply the closed files in order.
  std::string files;
  // Binlog files only (not their GTID indexes, binlog.NNNNNN.gidx).
  RunCommand(absl::StrCat("ls ", dir, "/binlog.0* | grep -E '/binlog[.][0-9]+$' | sort"),
             &files);
  std::vector<std::string> paths = absl::StrSplit(files, '\n', absl::SkipEmpty());
  ASSERT_GE(paths.size(), 2u) << files;
  const std::string sql_file = dir + "/apply.sql";
  std::string out;
  int rc = RunCommand(absl::StrCat(kBinlogTool, " --no-defaults ", absl::StrJoin(paths, " "),
                            " 2>&1 > ", sql_file),
               &out);
  if (rc != 0) RunCommand("tail -c 1500 " + sql_file, &out);
  ASSERT_EQ(rc, 0) << "mariadb-binlog: " << out;
  // The rows events (and MariaDB's annotations) reached mariadb-binlog.
  // (rows_test checks their type codes: mariadb-binlog names v1 and v2
  // alike.)
  for (const char* name : {"Write_rows:", "Update_rows:", "Delete_rows:",
                           maria ? "Annotate_rows:" : "Write_rows:"}) {
    std::string n;
    RunCommand(absl::StrCat("grep -c '", name, "' ", sql_file), &n);
    EXPECT_GT(std::atoi(n.c_str()), 0) << name;
  }
  rc = RunCommand(absl::StrCat(g_server->Client(), " < ", sql_file), &out);
  ASSERT_EQ(rc, 0) << "mariadb: " << out;

  // Compare every table.
  std::vector<std::string> selects;
  for (const TypeColumn& c : cols) selects.push_back(c.select);
  std::string got_types = Sql(absl::StrCat(
      "SET time_zone = '+00:00'; SELECT id, ", absl::StrJoin(selects, ", "),
      " FROM ", db, ".types ORDER BY id"));
  std::string want;
  for (const auto& [k, line] : want_types) absl::StrAppend(&want, line, "\n");
  EXPECT_EQ(got_types, want);
  std::string got_wide =
      Sql(absl::StrCat("SELECT id, n, payload FROM ", db, ".wide ORDER BY id"));
  want.clear();
  for (const auto& [k, line] : want_wide) absl::StrAppend(&want, line, "\n");
  EXPECT_EQ(got_wide, want);
}

INSTANTIATE_TEST_SUITE_P(
    Flavors, MariadbApplyTest,
    ::testing::Values(ApplyCase{LogFlavor::kMySQL, false},
                      ApplyCase{LogFlavor::kMariaDB, false},
                      ApplyCase{LogFlavor::kMySQL, true},
                      ApplyCase{LogFlavor::kMariaDB, true}),
    [](const ::testing::TestParamInfo<ApplyCase>& i) {
      return absl::StrCat(i.param.flavor == LogFlavor::kMySQL ? "MySQL" : "MariaDB",
                          i.param.records ? "Records" : "");
    });

}  // namespace
}  // namespace binlog
