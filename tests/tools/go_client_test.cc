// binlog_server and the library's files read by go-mysql (tests/tools/
// gomysql: a Go module pinning go-mysql v1.15.0 in its go.mod/go.sum;
// tools/setup.sh downloads the modules and warms the build cache), an
// implementation of the MySQL binlog format and replication protocol
// independent of ours. Two programs:
//   - gomysql_check (main.go): replication.BinlogSyncer by file and
//     position (COM_BINLOG_DUMP) and by GTID set (COM_BINLOG_DUMP_GTID),
//     with CRC32 verification on, over plain and lz4 logs (lz4 payloads
//     reach the client expanded), and with a TLSConfig verifying the
//     server's certificate against a CA made at test time, against a
//     server that refuses plaintext (3159), which the test also checks;
//   - gomysql_tagged (tagged/main.go): a MySQL 8.4 log with tagged and
//     untagged GTIDs (Commit with CommitGtid::tag, automatic and assigned)
//     and row events from RowsWriter, read at rest by
//     replication.BinlogParser and streamed by BinlogSyncer with a tagged
//     GTID set; it prints what it decoded (GTIDs with their tags, the
//     event type, last_committed / sequence_number, commit timestamps,
//     transaction_length, rows, Previous_gtids, its own executed set),
//     which the test compares with what the log reported at each Commit.
//
// The programs are built offline (GOFLAGS=-mod=readonly, GOPROXY=off,
// GOTOOLCHAIN=local) from the module cache of the user running the test
// (`go env GOMODCACHE` with HOME set from the passwd entry, since Bazel may
// set HOME elsewhere), with the build cache /tmp/binlog_gomysql_gocache_UID
// (tools/setup.sh warms it). go.mod needs Go 1.25 or later. Skipped when
// no go command or no downloaded modules are found (tests/expected_skips.txt
// accepts only the first). Environment: BINLOG_GO names the go command.

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/format.h"
#include "binlog/options.h"
#include "binlog/rows.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "tests/testutil/external_tools.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

const char kSourceDir[] = "tests/tools/gomysql";
const char kModule[] = "github.com/go-mysql-org/go-mysql@v1.15.0";

using testing_util::RunCommand;

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The go command: $BINLOG_GO, else `go` on PATH, else the usual install
// places. "" if none.
std::string FindGo() {
  const char* env = ::getenv("BINLOG_GO");
  if (env != nullptr && *env != '\0') return ::access(env, X_OK) == 0 ? env : "";
  std::string out;
  if (RunCommand("command -v go", &out) == 0) {
    std::string p(absl::StripAsciiWhitespace(out));
    if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  }
  for (const char* p : {"/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/usr/bin/go"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// The home directory of the user running the test, from the passwd entry
// (Bazel's test environment may point HOME at a temporary directory).
std::string RealHome() {
  struct passwd* pw = ::getpwuid(::getuid());
  if (pw != nullptr && pw->pw_dir != nullptr && *pw->pw_dir != '\0') return pw->pw_dir;
  const char* h = ::getenv("HOME");
  return h != nullptr ? h : "";
}

// Builds the Go programs once for the whole suite; the binaries' paths,
// or the reason it could not (skip set when the tools are missing).
struct GoProgram {
  std::string binary;         // gomysql_check
  std::string tagged_binary;  // gomysql_tagged
  std::string skip;   // why the tests skip
  std::string error;  // why the build failed (a failure)
};

GoProgram BuildGoProgram() {
  GoProgram r;
  const std::string go = FindGo();
  if (go.empty()) {
    r.skip = "no go command (PATH, BINLOG_GO, /usr/local/go/bin/go); go_client_test needs Go 1.25 or later";
    return r;
  }
  const std::string home = RealHome();
  // The module cache as the user's `go env` reports it (their GOPATH,
  // GOMODCACHE, go env file), with the real home directory.
  std::string out;
  const std::string home_env = home.empty() ? "" : absl::StrCat("HOME=", ShellQuote(home), " ");
  if (RunCommand(absl::StrCat("env ", home_env, "GOTOOLCHAIN=local ", ShellQuote(go),
                              " env GOMODCACHE"),
                 &out) != 0) {
    r.skip = absl::StrCat("`go env` failed: ", out);
    return r;
  }
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipWhitespace());
  if (lines.size() != 1) {
    r.skip = absl::StrCat("unexpected `go env` output: ", out);
    return r;
  }
  const std::string modcache(absl::StripAsciiWhitespace(lines[0]));
  if (!IsDir(absl::StrCat(modcache, "/", kModule))) {
    r.skip = absl::StrCat(kModule, " is not in the module cache ", modcache,
                          " (tools/setup.sh downloads it: cd tests/tools/gomysql && go mod "
                          "download)");
    return r;
  }
  const char* tmp = ::getenv("TEST_TMPDIR");
  const std::string work = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/gomysql_build");
  // A cold build cache takes over a minute (go-mysql's dependencies), and
  // the user's is read-only in Bazel's sandbox: a build cache of its own
  // under /tmp, kept across runs, which tools/setup.sh warms.
  const std::string gocache = absl::StrCat("/tmp/binlog_gomysql_gocache_", ::getuid());
  // Copy the sources out of the runfiles tree (symlinks; no VCS there).
  const std::string src = absl::StrCat(work, "/src");
  out.clear();
  if (RunCommand(absl::StrCat("rm -rf ", ShellQuote(work), " && mkdir -p ", ShellQuote(src),
                              "/tagged && cp ", kSourceDir, "/go.mod ", kSourceDir, "/go.sum ",
                              kSourceDir, "/main.go ", ShellQuote(src), " && cp ", kSourceDir,
                              "/tagged/main.go ", ShellQuote(src + "/tagged")),
                 &out) != 0) {
    r.error = absl::StrCat("copying ", kSourceDir, ": ", out);
    return r;
  }
  for (auto [binary, package] : {std::make_pair(&r.binary, "gomysql_check ."),
                                 std::make_pair(&r.tagged_binary, "gomysql_tagged ./tagged")}) {
    std::vector<std::string> name_and_package = absl::StrSplit(package, ' ');
    *binary = absl::StrCat(work, "/", name_and_package[0]);
    out.clear();
    const std::string cmd = absl::StrCat(
        "cd ", ShellQuote(src), " && env ", home_env, "GOMODCACHE=", ShellQuote(modcache),
        " GOCACHE=", ShellQuote(gocache),
        " GOFLAGS='-mod=readonly -buildvcs=false' GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local"
        " GOWORK=off CGO_ENABLED=0 ",
        ShellQuote(go), " build -o ", ShellQuote(*binary), " ", name_and_package[1]);
    if (RunCommand(cmd, &out) != 0) {
      r.error = absl::StrCat("go build failed (", cmd, "):\n", out);
      r.binary.clear();
      r.tagged_binary.clear();
      return r;
    }
  }
  return r;
}

// The programs, built at the first call, for every suite of the binary.
const GoProgram& Programs() {
  static const GoProgram* const programs = new GoProgram(BuildGoProgram());
  return *programs;
}

class GoClientTest : public ServedLogTest {
 protected:
  void SetUp() override {
    program_ = &Programs();
    if (!program_->skip.empty()) GTEST_SKIP() << program_->skip;
    ASSERT_TRUE(program_->error.empty()) << program_->error;
  }

  void SetUpServer(bool tls) {
    if (tls) EnableTls(/*require_secure_transport=*/true);
    StartServedLog("binlog_goclient_", 50, /*xid_base=*/1000);
  }

  // Runs the Go program; its exit status, its output in *out.
  int Check(const std::string& how, int first, int last, std::string* out,
            const std::string& user = "repl", const std::string& password = "pw") {
    return RunCommand(absl::StrCat(ShellQuote(program_->binary), " -port=", port_, " -user=",
                                   user, " -password=", password, " -uuid=", kServedUuid,
                                   " -first=", first, " -last=", last, " -timeout=20s ", how),
                      out);
  }

  // The lines "txn GNO xid=X queries=Q rows=R" for GNOs first..last.
  static std::string Expected(int first, int last) {
    std::string s;
    for (int i = first; i <= last; ++i) {
      absl::StrAppend(&s, "txn ", i, " xid=", 1000 + i, " queries=2 rows=0\n");
    }
    return absl::StrCat(s, "ok: ", last - first + 1, " transactions\n");
  }

  const GoProgram* program_ = nullptr;
};

TEST_P(GoClientTest, ByFileAndPosition) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check("-file=binlog.000001 -pos=4", 1, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(1, 50));
}

TEST_P(GoClientTest, ByGtidSet) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(21, 50));
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(50, 50));
}

// BinlogSyncer with a TLSConfig trusting the test CA: both dump commands
// over verified TLS; without TLS the server refuses it with 3159, and with
// another CA it refuses the server.
TEST_P(GoClientTest, OverVerifiedTls) {
  SetUpServer(true);
  const std::string tls = absl::StrCat("-ssl_ca=", ShellQuote(pki_.ca), " ");
  std::string out;
  EXPECT_EQ(Check(tls + "-file=binlog.000001 -pos=4", 1, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(1, 50));
  out.clear();
  EXPECT_EQ(Check(absl::StrCat(tls, "-gtid=", kServedUuid, ":1-20"), 21, 50, &out), 0) << out;
  EXPECT_EQ(out, Expected(21, 50));
  out.clear();
  EXPECT_EQ(Check("-file=binlog.000001 -pos=4", 1, 50, &out), 1) << out;
  EXPECT_NE(out.find("3159"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-ssl_ca=", ShellQuote(pki_.other_ca),
                               " -file=binlog.000001 -pos=4"),
                  1, 50, &out),
            1)
      << out;
  EXPECT_NE(out.find("certificate"), std::string::npos) << out;
  // caching_sha2_password over the verified TLS: the full authentication
  // sends the password in clear (no RSA key), then the fast path.
  out.clear();
  const AuthStats before = server_->stats().auth;
  EXPECT_EQ(Check(absl::StrCat(tls, "-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"),
            0)
      << out;
  EXPECT_EQ(out, Expected(50, 50));
  const AuthStats after = server_->stats().auth;
  EXPECT_EQ(after.full_auths, before.full_auths + 1);
  EXPECT_GT(after.fast_auths, before.fast_auths);  // BinlogSyncer connects twice
  EXPECT_EQ(after.public_key_requests, 0u);
}

// go-mysql's caching_sha2_password over plaintext TCP: the full
// authentication with the server's RSA public key once, then the fast path
// (BinlogSyncer connects more than once per run).
TEST_P(GoClientTest, CachingSha2Password) {
  SetUpServer(false);
  std::string out;
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"), 0)
      << out;
  EXPECT_EQ(out, Expected(50, 50));
  AuthStats a = server_->stats().auth;
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(a.public_key_requests, 1u);
  const uint64_t fast = a.fast_auths;
  out.clear();
  EXPECT_EQ(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "pw2"), 0)
      << out;
  a = server_->stats().auth;
  EXPECT_GT(a.fast_auths, fast);
  EXPECT_EQ(a.full_auths, 1u);
  EXPECT_EQ(server_->stats().auth_failures, 0u);
  out.clear();
  EXPECT_NE(Check(absl::StrCat("-gtid=", kServedUuid, ":1-49"), 50, 50, &out, "sha2", "nope"), 0);
  EXPECT_GE(server_->stats().auth_failures, 1u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, GoClientTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Lz4");
                         });


// A MySQL 8.4 log written through the library's identity path (Commit
// assigns every GTID), with tagged and untagged transactions, read by
// go-mysql at rest and from binlog_server.
class GoTaggedTest : public ::testing::TestWithParam<io::Codec> {
 protected:
  static constexpr char kOtherUuid[] = "cda8356d-0452-11ef-8f6d-0242ac110002";
  static constexpr int kTransactions = 32;
  static constexpr int kStreamFrom = 12;  // the replica has the first 11

  struct Written {
    uint64_t file = 0;
    Tsid tsid;
    int64_t gno = 0;
    std::string lines;  // what gomysql_tagged prints for it
  };

  void SetUp() override {
    program_ = &Programs();
    if (!program_->skip.empty()) GTEST_SKIP() << program_->skip;
    ASSERT_TRUE(program_->error.empty()) << program_->error;
    std::string tmpl = "/tmp/binlog_gotagged_XXXXXX";
    ASSERT_NE(::mkdtemp(&tmpl[0]), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    if (server_) {
      server_->Shutdown();
      runner_.join();
      server_.reset();
    }
    log_.reset();
    if (!dir_.empty()) {
      std::string out;
      RunCommand("rm -rf " + ShellQuote(dir_), &out);
    }
  }

  // Writes kTransactions transactions, four kinds in turn: untagged
  // automatic, AUTOMATIC:blue, AUTOMATIC with a 32-character tag given in
  // mixed case (the log normalizes it), and assigned GTIDs of another
  // source (kOtherUuid:red:N and kOtherUuid:N in turn, with the source's
  // commit timestamp and version). Each: BEGIN, an INSERT of one row
  // through RowsWriter (every fifth also an UPDATE of it, every seventh a
  // DELETE of an earlier row), Xid. Small files: several rotations.
  void WriteLog() {
    Options o;
    o.max_file_size = 4096;
    o.server_uuid = *Uuid::Parse(kServedUuid);
    o.sync_policy = SyncPolicy::kNever;
    o.compression = GetParam();
    o.compression_threshold = 0;
    o.mysql_layout = MySqlLayout::k84;
    auto log = Binlog::Open(dir_, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    auto rows = RowsWriter::Create(RowsWriterOptions());
    ASSERT_TRUE(rows.ok()) << rows.status();
    TableDef def;
    def.table_id = 77;
    def.schema = "shop";
    def.table = "items";
    ColumnDef id;
    id.type = kColLongLong;
    id.nullable = false;
    ColumnDef name;
    name.type = kColVarchar;
    name.length = 255;
    name.collation = 255;
    def.columns = {id, name};
    def.primary_key = {0};
    auto table = rows->DescribeTable(def);
    ASSERT_TRUE(table.ok()) << table.status();
    const Uuid other = *Uuid::Parse(kOtherUuid);
    const Tag blue = *Tag::Parse("blue");
    const Tag long_tag = *Tag::Parse("Tag_Of_Thirty_Two_Characters_x32");
    ASSERT_EQ(long_tag.str().size(), 32u);
    ASSERT_EQ(long_tag.str(), "tag_of_thirty_two_characters_x32");
    const Tag red = *Tag::Parse("red");
    std::unique_ptr<TransactionBuffer> txn = log_->NewTransactionBuffer();
    for (int i = 1; i <= kTransactions; ++i) {
      CommitGtid g;
      switch (i % 4) {
        case 0:
          break;
        case 1:
          g.tag = blue;
          break;
        case 2:
          g.tag = long_tag;
          break;
        case 3:
          g.kind = CommitGtid::Kind::kAssigned;
          g.uuid = other;
          g.gno = 100 + i;
          if (i % 8 == 3) g.tag = red;
          g.original_commit_timestamp_us = 1600000000000000 + i;
          g.original_server_version = 80036;
          ASSERT_TRUE(log_->AcquireGtid(Tsid(other, g.tag), g.gno).ok());
          break;
      }
      txn->Clear();
      txn->AppendCommitGtid(kServedTs, 1, g);
      AppendQuery(txn.get(), kServedTs, 1, 5, "shop", "BEGIN");
      std::string lines;
      ASSERT_TRUE(rows->BeginStatement(txn.get(), kServedTs).ok());
      // Compressible: with a codec most transactions are packed.
      const std::string value = absl::StrCat("item-", i, "-", std::string(120, 'a' + i % 26));
      ASSERT_TRUE(rows->Insert(*table, {Value::Int(i), Value::Bytes(value)}).ok());
      absl::StrAppend(&lines, "row shop.items insert [", i, " ", value, "]\n");
      if (i % 5 == 0) {
        const std::string renamed = absl::StrCat("renamed-", i, std::string(100, 'r'));
        ASSERT_TRUE(rows->Update(*table, {Value::Int(i), Value::Bytes(value)},
                                 {Value::Int(i), Value::Bytes(renamed)})
                        .ok());
        absl::StrAppend(&lines, "row shop.items update [", i, " ", value, "] [", i, " ",
                        renamed, "]\n");
      }
      if (i % 7 == 0) {
        const std::string old = absl::StrCat("item-", i - 6, "-", std::string(120, 'a' + (i - 6) % 26));
        ASSERT_TRUE(rows->Delete(*table, {Value::Int(i - 6), Value::Bytes(old)}).ok());
        absl::StrAppend(&lines, "row shop.items delete [", i - 6, " ", old, "]\n");
      }
      ASSERT_TRUE(rows->EndStatement().ok());
      AppendXid(txn.get(), kServedTs, 1, 5000 + i);
      auto pos = log_->Commit(txn.get());
      ASSERT_TRUE(pos.ok()) << pos.status();
      const AssignedIdentity& a = txn->identity();
      ASSERT_TRUE(a.assigned);
      Written w;
      w.file = pos->file_number;
      w.tsid = Tsid(a.uuid, a.tag);
      w.gno = a.gno;
      const uint64_t length = pos->end - pos->start;
      // A packed transaction: its Transaction_payload holds every event
      // after the GTID event (zstd: compression type 0).
      std::string payload;
      last_compressed_ = txn->compressed();
      if (txn->compressed()) {
        ++compressed_;
        if (!a.tag.empty()) ++compressed_tagged_;
        absl::string_view rest = txn->appended_data();
        rest.remove_prefix(txn->appended_event_size(0));
        size_t events = 0;
        while (!rest.empty()) {
          rest.remove_prefix(DecodeHeader(rest).event_size);
          ++events;
        }
        payload = absl::StrCat("payload compression=0 events=", events, "\n");
      }
      w.lines = absl::StrCat(
          "gtid ", w.tsid.ToString(), ":", a.gno,
          " type=", a.tag.empty() ? "GTIDEvent" : "Gtid_tagged_log_event",
          " last_committed=", a.last_committed, " sequence_number=", a.sequence_number,
          " immediate_us=", a.immediate_commit_timestamp_us, " original_us=",
          g.original_commit_timestamp_us != 0 ? g.original_commit_timestamp_us
                                              : a.immediate_commit_timestamp_us,
          " length=", length, "\n", payload, lines, "xid ", 5000 + i, " span=", length, "\n");
      written_.push_back(std::move(w));
    }
  }

  // The GTIDs of written_[first..last) (0-based).
  GtidSet GtidsOf(size_t first, size_t last) const {
    GtidSet s;
    for (size_t i = first; i < last; ++i) s.Add(written_[i].tsid, written_[i].gno);
    return s;
  }

  void StartServer() {
    ServerOptions so;
    so.dir = dir_;
    so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}}};
    auto s = Server::Create(so);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto l = io::Socket::ListenLoopback(0);
    ASSERT_TRUE(l.ok()) << l.status();
    listener_ = std::move(*l);
    runner_ = std::thread([this] { server_->Run(&listener_); });
  }

  const GoProgram* program_ = nullptr;
  std::string dir_;
  std::unique_ptr<Binlog> log_;
  std::vector<Written> written_;
  int compressed_ = 0;         // transactions Commit packed
  int compressed_tagged_ = 0;  // tagged ones among them
  bool last_compressed_ = false;
  std::unique_ptr<Server> server_;
  io::Socket listener_;
  std::thread runner_;
};

TEST_P(GoTaggedTest, BinlogParserReadsTheFilesAtRest) {
  ASSERT_NO_FATAL_FAILURE(WriteLog());
  std::vector<LogFileInfo> files = log_->ListFiles();
  ASSERT_GE(files.size(), 3u);  // Previous_gtids with tags in later files
  // Closed, as a stopped server leaves its files: go-mysql checks the
  // Format_description's CRC32 over the bytes as they are, while MySQL
  // (and the library) compute it with LOG_EVENT_BINLOG_IN_USE_F clear, so
  // go-mysql refuses the active file of a running server (or of an open
  // log) at rest.
  ASSERT_TRUE(log_->Close().ok());
  std::string paths, want;
  size_t next = 0;
  for (const LogFileInfo& f : files) {
    absl::StrAppend(&paths, paths.empty() ? "" : ",", dir_, "/", f.name);
    // Previous_gtids: every GTID of the earlier files.
    absl::StrAppend(&want, "previous_gtids ", GtidsOf(0, next).ToString(), "\n");
    for (; next < written_.size() && written_[next].file == f.number; ++next) {
      want += written_[next].lines;
    }
  }
  ASSERT_EQ(next, written_.size());
  absl::StrAppend(&want, "ok: ", kTransactions, " transactions\n");
  if (GetParam() == io::Codec::kZstd) {
    EXPECT_GE(compressed_tagged_, kTransactions / 2);
  } else {
    EXPECT_EQ(compressed_, 0);
  }
  // Every kind of identity reached the files.
  EXPECT_NE(want.find(":blue:"), std::string::npos);
  EXPECT_NE(want.find(":tag_of_thirty_two_characters_x32:"), std::string::npos);
  EXPECT_NE(want.find(absl::StrCat(kOtherUuid, ":red:")), std::string::npos);
  EXPECT_NE(want.find(":blue:1-"), std::string::npos);  // a tagged Previous_gtids
  std::string out;
  EXPECT_EQ(RunCommand(absl::StrCat(ShellQuote(program_->tagged_binary), " -files=",
                                    ShellQuote(paths)),
                       &out),
            0)
      << out;
  EXPECT_EQ(out, want);
}

TEST_P(GoTaggedTest, BinlogSyncerStreamsFromATaggedGtidSet) {
  ASSERT_NO_FATAL_FAILURE(WriteLog());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // The replica has the first transactions, tagged ones included: the
  // request's set is tagged (go-mysql encodes it as MySQL 8.4 does).
  const GtidSet has = GtidsOf(0, kStreamFrom - 1);
  ASSERT_TRUE(has.HasTags());
  std::string want;
  for (size_t i = kStreamFrom - 1; i < written_.size(); ++i) want += written_[i].lines;
  // go-mysql's own executed set after the last transaction: the request's
  // plus every GTID that arrived, tags included.
  // (go-mysql attaches it to top-level Xid events only: "-" after a
  // packed transaction.)
  absl::StrAppend(&want, "executed ",
                  last_compressed_ ? "-" : log_->executed_gtids().ToString(), "\n");
  absl::StrAppend(&want, "ok: ", kTransactions - kStreamFrom + 1, " transactions\n");
  std::string out;
  EXPECT_EQ(RunCommand(absl::StrCat(ShellQuote(program_->tagged_binary),
                                    " -port=", listener_.port(),
                                    " -user=repl -password=pw -timeout=20s -count=",
                                    kTransactions - kStreamFrom + 1, " -gtid=",
                                    ShellQuote(has.ToString())),
                       &out),
            0)
      << out;
  EXPECT_EQ(out, want);
}

// zstd: tagged transactions packed as MySQL 8.4 packs them (go-mysql
// expands the Transaction_payload after the Gtid_tagged event).
INSTANTIATE_TEST_SUITE_P(Codecs, GoTaggedTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kZstd),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Zstd");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
