// See engine_crash_harness.h.

#include "tests/crash/engine_crash_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <set>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/statement_events.h"
#include "examples/engine_server/engine_server.h"
#include "io/fault_injection_file_system.h"
#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/transaction_db.h"
#include "tests/crash/child_process.h"
#include "tests/crash/crash_test_util.h"

// The child's flags (the parent passes them; see RunIteration).
ABSL_FLAG(bool, child, false,
          "run as the server child (set by the harness, with --fd)");
ABSL_FLAG(std::string, dir, "", "child: the server's directory");
ABSL_FLAG(int, fd, -1, "child: the descriptor its records go to");
ABSL_FLAG(uint64_t, seed, 0,
          "child: the seed of its configuration and workload; "
          "engine_crash_test: the run's random seed (0: a fresh one, printed)");
ABSL_FLAG(std::string, pause_point, "",
          "child: stop at this pause point of the server (and report it)");
ABSL_FLAG(int, pause_hit, 1, "child: at this hit of --pause_point (1: the first)");
ABSL_FLAG(uint64_t, pause_fs_call, 0,
          "child: stop at this mutating call of the binlog's file system "
          "(0: none)");
ABSL_FLAG(bool, engine_commit_first, false,
          "child: commit in the engine before the binlog (the wrong order)");

namespace binlog {
namespace engine_crash {
namespace {

using examples::EngineServer;
using examples::EngineServerOptions;
using examples::PrepareDurability;

constexpr char kUuid[] = "5ee0c0de-0000-4000-8000-00000000e001";

// The server's pause points (engine_server.h), by index in pipe records.
const char* const kPoints[] = {
    "recovery:begun",          "recovery:resolved",
    "recovery:engine_durable", "recovery:finished",
    "commit:prepared",         "commit:engine_committed",
    "commit:engine_committed_before_binlog",
    "commit:group_durable",
};
constexpr int kNumPoints = sizeof(kPoints) / sizeof(kPoints[0]);
constexpr uint64_t kFsPoint = 100;  // the binlog file system's K-th call

enum : uint64_t {
  kAck = 1,       // xid, file, start, end, gno
  kPaused = 2,    // point index (or kFsPoint), hit
  kEntering = 3,  // about to open the server
  kOpened = 4,    // prepared, committed, rolled back by its recovery
};

// One pipe record, written with one write(2) (atomic: < PIPE_BUF).
struct Record {
  uint64_t kind;
  uint64_t a, b, c, d, e;
};

Uuid ServerUuid() { return *Uuid::Parse(kUuid); }

struct SeedConfig {
  EngineServerOptions options;
  int clients = 1;
};

// The server's options for a seed (every life of a directory and the
// parent's restart use the seed of their iteration).
SeedConfig ConfigForSeed(uint64_t seed, const std::string& dir) {
  std::mt19937_64 rng(seed);
  SeedConfig c;
  c.options.dir = dir;
  c.options.server_uuid = ServerUuid();
  static const uint64_t kSizes[] = {8192, 16384, 65536};
  c.options.max_binlog_file_size = kSizes[rng() % 3];
  c.options.rows_per_transaction = 1 + static_cast<int>(rng() % 4);
  c.options.prepare_durability =
      rng() % 2 == 0 ? PrepareDurability::kSyncEachPrepare
                     : PrepareDurability::kSyncWalBeforeGroupWrite;
  c.clients = 1 + static_cast<int>(rng() % 6);
  return c;
}

void WriteRecord(int fd, const Record& r) {
  const char* p = reinterpret_cast<const char*>(&r);
  size_t left = sizeof(r);
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(3);  // the parent is gone
    p += n;
    left -= static_cast<size_t>(n);
  }
}

int PointIndex(absl::string_view point) {
  for (int i = 0; i < kNumPoints; ++i) {
    if (point == kPoints[i]) return i;
  }
  return -1;
}

struct ChildArgs {
  std::string dir;
  int fd = -1;
  uint64_t seed = 0;
  std::string pause_point;
  int pause_hit = 1;
  uint64_t pause_fs_call = 0;
  bool engine_commit_first = false;
};

[[noreturn]] void ChildMain(const ChildArgs& a) {
  SeedConfig c = ConfigForSeed(a.seed, a.dir);
  c.options.engine_commit_first = a.engine_commit_first;
  std::atomic<int> hits{0};
  if (!a.pause_point.empty()) {
    const int index = PointIndex(a.pause_point);
    c.options.pause_point = [&, index](absl::string_view p) {
      if (p == a.pause_point && ++hits == a.pause_hit) {
        WriteRecord(a.fd, Record{kPaused, static_cast<uint64_t>(index),
                                 static_cast<uint64_t>(a.pause_hit), 0, 0, 0});
        for (;;) ::pause();
      }
    };
  }
  // The fault-injecting file system only for its pause point (it injects
  // nothing here); it mirrors files in memory, so only when asked.
  std::unique_ptr<io::FaultInjectionFileSystem> fs;
  std::atomic<uint64_t> calls{0};
  if (a.pause_fs_call > 0) {
    fs = std::make_unique<io::FaultInjectionFileSystem>();
    fs->SetOpHook([&](io::FaultOp, const std::string&) {
      if (++calls == a.pause_fs_call) {
        WriteRecord(a.fd, Record{kPaused, kFsPoint, a.pause_fs_call, 0, 0, 0});
        for (;;) ::pause();
      }
    });
    c.options.binlog_file_system = fs.get();
  }
  WriteRecord(a.fd, Record{kEntering, 0, 0, 0, 0, 0});
  auto server = EngineServer::Open(c.options);
  if (!server.ok()) {
    std::fprintf(stderr, "engine child: open failed: %s\n",
                 server.status().ToString().c_str());
    std::_Exit(2);
  }
  const auto& r = (*server)->recovery();
  WriteRecord(a.fd, Record{kOpened, r.prepared, r.committed, r.rolled_back, 0, 0});
  std::atomic<bool> never{false};
  absl::Status s = (*server)->RunClients(
      c.clients, &never, [&](int, const examples::TransactionResult& t) {
        WriteRecord(a.fd, Record{kAck, t.xid, t.position.file_number,
                                 t.position.start, t.position.end,
                                 static_cast<uint64_t>(t.position.identity.gno)});
      });
  std::fprintf(stderr, "engine child: clients stopped: %s\n",
               s.ToString().c_str());
  std::_Exit(2);
}

std::vector<Record> Records(const std::string& buf) {
  std::vector<Record> out(buf.size() / sizeof(Record));
  for (size_t i = 0; i < out.size(); ++i) {
    std::memcpy(&out[i], buf.data() + i * sizeof(Record), sizeof(Record));
  }
  return out;
}

const Record* Find(const std::vector<Record>& rs, uint64_t kind) {
  for (const Record& r : rs) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

// How the parent ends a child.
struct KillPlan {
  // Kill this long after the start (InfiniteDuration: only at a pause).
  absl::Duration after_start = absl::InfiniteDuration();
  // Kill this long after the child says it opened (a pause point that
  // never comes, e.g. no prepared transaction to resolve).
  absl::Duration after_open = absl::InfiniteDuration();
  bool expect_pause = false;  // the oracle test: the point must be hit
};

struct ChildRun {
  std::vector<Record> records;
  const Record* paused = nullptr;
  std::string where;  // for summaries
};

ChildRun RunChild(const std::string& self, const std::vector<std::string>& args,
                  const KillPlan& plan, std::vector<std::string>* violations) {
  ChildRun run;
  int fd = -1;
  pid_t pid = crash_test::StartChild(self, args, &fd);
  if (pid < 0) {
    violations->push_back("fork failed");
    return run;
  }
  std::string buf;
  bool exited = false;
  const absl::Time start = absl::Now();
  const absl::Time limit = start + absl::Seconds(60);  // a hung child
  absl::Time kill_at = start + plan.after_start;
  bool open_seen = false;
  for (;;) {
    const absl::Time now = absl::Now();
    if (now >= kill_at) break;
    if (now >= limit) {
      violations->push_back(absl::StrCat(
          "the child neither stopped at its pause point nor was killed within "
          "60 s (args: ", absl::StrJoin(args, " "), ")"));
      break;
    }
    int ms = static_cast<int>(
        absl::ToInt64Milliseconds(std::min(kill_at, limit) - now));
    if (!crash_test::Drain(fd, &buf, ms < 1 ? 1 : (ms > 10 ? 10 : ms))) {
      exited = true;
      break;
    }
    std::vector<Record> rs = Records(buf);
    if (Find(rs, kPaused) != nullptr) break;
    if (!open_seen && Find(rs, kOpened) != nullptr) {
      open_seen = true;
      if (plan.after_open != absl::InfiniteDuration()) {
        kill_at = std::min(kill_at, absl::Now() + plan.after_open);
      }
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (crash_test::Drain(fd, &buf, 1000)) {
  }
  ::close(fd);
  if (exited || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    violations->push_back(absl::StrCat("the child ended by itself (status ",
                                       status, ") before the kill; see its "
                                       "stderr above"));
  }
  run.records = Records(buf);
  run.paused = Find(run.records, kPaused);
  if (plan.expect_pause && run.paused == nullptr) {
    violations->push_back("the child was killed before its pause point");
  }
  if (run.paused != nullptr) {
    run.where = run.paused->a == kFsPoint
                    ? absl::StrCat("binlog fs call #", run.paused->b)
                    : absl::StrCat(kPoints[run.paused->a], " #", run.paused->b);
  } else if (Find(run.records, kOpened) == nullptr) {
    run.where = "in open (random)";
  } else {
    run.where = "in commits (random)";
  }
  return run;
}

void CollectAcks(const ChildRun& run, std::vector<Acked>* acked) {
  for (const Record& r : run.records) {
    if (r.kind == kAck) {
      acked->push_back(Acked{r.a, r.b, r.c, r.d, static_cast<int64_t>(r.e)});
    }
  }
}

void CheckCleanFlags(const std::string& dir, const std::string& when,
                     Totals* totals, std::vector<std::string>* violations) {
  // A child killed early (in the engine's open) may not have created the
  // log's directory yet: no file claims anything then.
  std::error_code ec;
  if (!std::filesystem::exists(dir + "/binlog", ec)) return;
  int clean = 0;
  for (std::string& v : crash_test::CheckClosedFilesEnd(
           dir + "/binlog", "binlog", /*allow_zero_tails=*/true, &clean)) {
    violations->push_back(absl::StrCat(when, ": ", v));
  }
  totals->files_checked += static_cast<uint64_t>(clean);
}

// One transaction of the log.
struct LogTxn {
  uint64_t xid = 0;
  int64_t gno = 0;
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

// Reads the closed log and checks what can be checked on it alone.
std::map<uint64_t, LogTxn> ReadLog(const std::string& dir, const Uuid& uuid,
                                   std::vector<std::string>* v) {
  std::map<uint64_t, LogTxn> by_xid;
  const std::string bdir = dir + "/binlog";
  auto numbers = ReadIndex(io::FileSystem::Default(), bdir, "binlog");
  if (!numbers.ok()) {
    v->push_back(absl::StrCat("cannot read the index: ",
                              numbers.status().ToString()));
    return by_xid;
  }
  GtidSet before;  // GTIDs of the files before the current one
  std::set<int64_t> gnos;
  for (uint64_t number : *numbers) {
    const std::string name = BinlogFileName("binlog", number);
    auto reader = Reader::OpenFiles({bdir + "/" + name}, ReaderOptions());
    if (!reader.ok()) {
      v->push_back(absl::StrCat("cannot open ", name, ": ",
                                reader.status().ToString()));
      continue;
    }
    GtidSet in_file;
    bool saw_previous = false;
    int64_t last_seq = 0;
    std::vector<uint8_t> shape;  // event types of the current transaction
    LogTxn cur;
    Event ev;
    absl::Status s;
    while ((s = (*reader)->Next(&ev)).ok()) {
      const uint8_t type = ev.header.type;
      const std::string where = absl::StrCat(name, ":", ev.offset);
      if (type == kFormatDescriptionEvent) {
        if ((*reader)->format_description().in_use) {
          v->push_back(absl::StrCat(name, " still has its in-use flag after "
                                    "a clean Close"));
        }
        continue;
      }
      if (type == kPreviousGtidsEvent) {
        saw_previous = true;
        auto prev = GtidSet::DecodePreviousGtidsBody(ev.body());
        if (!prev.ok()) {
          v->push_back(absl::StrCat(where, ": bad Previous_gtids: ",
                                    prev.status().ToString()));
        } else if (*prev != before) {
          v->push_back(absl::StrCat(name, ": Previous_gtids is '",
                                    prev->ToString(), "', the GTIDs before it '",
                                    before.ToString(), "'"));
        }
        continue;
      }
      if (type == kRotateEvent || type == kStopEvent) continue;
      if (type == kGtidEvent) {
        if (!shape.empty()) {
          v->push_back(absl::StrCat(where, ": a Gtid event inside a transaction"));
        }
        shape.assign(1, type);
        auto g = DecodeMySqlGtidEvent(ev.body());
        if (!g.ok()) {
          v->push_back(absl::StrCat(where, ": bad Gtid event: ",
                                    g.status().ToString()));
          shape.clear();
          continue;
        }
        cur = LogTxn();
        cur.gno = g->gno;
        cur.file = number;
        cur.start = ev.offset;
        if (g->uuid != uuid) {
          v->push_back(absl::StrCat(where, ": GTID of another UUID: ",
                                    g->ToString()));
        }
        if (!gnos.insert(g->gno).second) {
          v->push_back(absl::StrCat(where, ": duplicate GTID ", g->ToString()));
        }
        in_file.Add(g->uuid, g->gno);
        if (!g->has_logical_clock || g->sequence_number <= last_seq) {
          v->push_back(absl::StrCat(where, ": sequence_number ",
                                    g->sequence_number, " after ", last_seq));
        }
        if (g->last_committed >= g->sequence_number) {
          v->push_back(absl::StrCat(where, ": last_committed ", g->last_committed,
                                    " >= sequence_number ",
                                    g->sequence_number));
        }
        last_seq = g->sequence_number;
        continue;
      }
      if (shape.empty()) {
        v->push_back(absl::StrCat(where, ": event type ", int{type},
                                  " outside a transaction"));
        continue;
      }
      shape.push_back(type);
      if (type == kRowsQueryEvent) {
        auto text = DecodeRowsQuery(ev.body());
        if (!text.ok()) {
          v->push_back(absl::StrCat(where, ": bad Rows_query"));
        } else {
          // The XID comes later; keep the text's claim to compare.
          uint64_t claimed = 0;
          absl::string_view t = *text;
          if (!absl::ConsumePrefix(&t, "/* xid ") ||
              !absl::SimpleAtoi(t.substr(0, t.find(' ')), &claimed)) {
            v->push_back(absl::StrCat(where, ": Rows_query without an XID"));
          }
          cur.xid = claimed;
        }
        continue;
      }
      if (type == kXidEvent) {
        auto x = DecodeXid(ev.body());
        const std::vector<uint8_t> expected = {kGtidEvent, kQueryEvent,
                                               kRowsQueryEvent, kXidEvent};
        if (!x.ok() || shape != expected || *x != cur.xid) {
          v->push_back(absl::StrCat(where, ": malformed transaction (",
                                    shape.size(), " events, XID ",
                                    x.ok() ? *x : 0, ", Rows_query says ",
                                    cur.xid, ")"));
        }
        cur.end = ev.end_offset;
        if (x.ok()) {
          if (by_xid.count(*x)) {
            v->push_back(absl::StrCat(where, ": XID ", *x, " appears twice"));
          }
          by_xid[*x] = cur;
        }
        shape.clear();
        continue;
      }
    }
    if (!absl::IsOutOfRange(s)) {
      v->push_back(absl::StrCat(name, ": reader error: ", s.ToString()));
    }
    for (const TornTail& t : (*reader)->torn_tails()) {
      v->push_back(crash_test::TornTailViolation(t));
    }
    if (!shape.empty()) {
      v->push_back(absl::StrCat(name, ": ends inside a transaction"));
    }
    if (!saw_previous) v->push_back(absl::StrCat(name, ": no Previous_gtids"));
    before.Union(in_file);
  }
  // No holes: the GNOs are 1..N.
  int64_t expect = 1;
  for (int64_t g : gnos) {
    if (g != expect) {
      v->push_back(absl::StrCat("GTID hole: ", kUuid, ":", expect,
                                " missing (next is ", g, ")"));
      break;
    }
    ++expect;
  }
  return by_xid;
}

// What the engine holds, per XID.
struct EngineTxn {
  int rows_expected = -1;  // from the record; -1: no record
  int rows_found = 0;
  std::string gtid;  // "uuid:gno", or empty
};

std::map<uint64_t, EngineTxn> ReadEngine(rocksdb::TransactionDB* db,
                                         std::vector<std::string>* v) {
  std::map<uint64_t, EngineTxn> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    const std::string value = it->value().ToString();
    uint64_t xid = 0;
    if (key.size() < 18 || key[1] != '/' ||
        !absl::SimpleHexAtoi(key.substr(2, 16), &xid)) {
      v->push_back(absl::StrCat("engine: unexpected key '", key, "'"));
      continue;
    }
    EngineTxn& t = out[xid];
    if (key[0] == 'r') {
      ++t.rows_found;
      if (!absl::StartsWith(value, absl::StrCat("xid=", xid, " "))) {
        v->push_back(absl::StrCat("engine: row ", key, " holds '", value, "'"));
      }
    } else if (key[0] == 't') {
      if (!absl::StartsWith(value, "rows=") ||
          !absl::SimpleAtoi(
              absl::string_view(value).substr(5, value.find(' ') - 5),
              &t.rows_expected)) {
        v->push_back(absl::StrCat("engine: record ", key, " holds '", value, "'"));
      }
    } else if (key[0] == 'g') {
      t.gtid = value;
    } else {
      v->push_back(absl::StrCat("engine: unexpected key '", key, "'"));
    }
  }
  if (!it->status().ok()) {
    v->push_back(absl::StrCat("engine: iterator: ", it->status().ToString()));
  }
  return out;
}

// Restarts the server in this process (recovery), checks the engine and,
// after a clean Close, the log and both together.
void RestartAndCheck(const IterationConfig& cfg, std::vector<Acked>* acked,
                     Totals* totals, std::vector<std::string>* v,
                     std::string* summary) {
  SeedConfig c = ConfigForSeed(cfg.seed, cfg.dir);
  auto server = EngineServer::Open(c.options);
  if (!server.ok()) {
    v->push_back(absl::StrCat("restart failed: ", server.status().ToString()));
    return;
  }
  const examples::EngineRecoveryReport rep = (*server)->recovery();
  {
    const RecoveryReport& lr = (*server)->log()->recovery();
    if (lr.bytes_cut != rep.bytes_cut ||
        lr.recovered != rep.log_needed_recovery) {
      v->push_back(absl::StrCat(
          "the scan said cut ", rep.bytes_cut, " bytes (in use: ",
          rep.log_needed_recovery, "), Finish reports ", lr.bytes_cut,
          " (recovered: ", lr.recovered, ", ", lr.reason, ")"));
    }
  }
  totals->prepared_committed += rep.committed;
  totals->prepared_rolled_back += rep.rolled_back;
  std::vector<rocksdb::Transaction*> prepared;
  (*server)->engine()->GetAllPreparedTransactions(&prepared);
  if (!prepared.empty()) {
    v->push_back(absl::StrCat(prepared.size(), " engine transactions still "
                              "prepared after recovery"));
  }
  for (int i = 0; i < 3; ++i) {
    auto t = (*server)->RunTransaction(0);
    if (!t.ok()) {
      v->push_back(absl::StrCat("commit after restart failed: ",
                                t.status().ToString()));
      return;
    }
    acked->push_back(Acked{t->xid, t->position.file_number, t->position.start,
                           t->position.end, t->position.identity.gno});
  }
  std::map<uint64_t, EngineTxn> engine = ReadEngine((*server)->engine(), v);
  absl::Status cs = (*server)->Close();
  if (!cs.ok()) {
    v->push_back(absl::StrCat("close failed: ", cs.ToString()));
    return;
  }
  std::map<uint64_t, LogTxn> log = ReadLog(cfg.dir, ServerUuid(), v);

  // The same set, both ways.
  int engine_only = 0, log_only = 0;
  for (const auto& [xid, t] : engine) {
    if (t.rows_expected < 0) {
      v->push_back(absl::StrCat("engine: rows of XID ", xid, " without its record"));
    } else if (t.rows_found != t.rows_expected) {
      v->push_back(absl::StrCat("engine: XID ", xid, " has ", t.rows_found,
                                " rows of ", t.rows_expected));
    }
    auto l = log.find(xid);
    if (l == log.end()) {
      if (++engine_only <= 5) {
        v->push_back(absl::StrCat("XID ", xid, " is committed in the engine "
                                  "but not in the binlog"));
      }
      continue;
    }
    const std::string want = absl::StrCat(kUuid, ":", l->second.gno);
    if (!t.gtid.empty() && t.gtid != want) {
      v->push_back(absl::StrCat("XID ", xid, ": the engine recorded GTID ",
                                t.gtid, ", the binlog has ", want));
    }
  }
  for (const auto& [xid, l] : log) {
    if (!engine.count(xid) && ++log_only <= 5) {
      v->push_back(absl::StrCat("XID ", xid, " (GTID ", kUuid, ":", l.gno,
                                ") is in the binlog but not in the engine"));
    }
  }
  if (engine_only > 5 || log_only > 5) {
    v->push_back(absl::StrCat(engine_only, " XIDs only in the engine, ",
                              log_only, " only in the binlog"));
  }
  // Every acknowledged transaction, in both, where and as it was told.
  int missing = 0;
  for (const Acked& a : *acked) {
    ++totals->acked_checked;
    auto l = log.find(a.xid);
    if (l == log.end() || !engine.count(a.xid)) {
      if (++missing <= 5) {
        v->push_back(absl::StrCat("acknowledged XID ", a.xid, " (GTID ", kUuid,
                                  ":", a.gno, ") is missing from the ",
                                  l == log.end() ? "binlog" : "engine"));
      }
      continue;
    }
    if (l->second.file != a.file || l->second.start != a.start ||
        l->second.end != a.end || l->second.gno != a.gno) {
      v->push_back(absl::StrCat("acknowledged XID ", a.xid, " was told ",
                                a.file, ":", a.start, "-", a.end, " GNO ", a.gno,
                                ", the binlog has ", l->second.file, ":",
                                l->second.start, "-", l->second.end, " GNO ",
                                l->second.gno));
    }
  }
  totals->transactions_checked += log.size();
  *summary = absl::StrCat(
      "restart: ", rep.prepared, " prepared (", rep.committed, " committed, ",
      rep.rolled_back, " rolled back), ", rep.bytes_cut, " binlog bytes cut; ",
      log.size(), " transactions in both, ", acked->size(), " acknowledged");
}

}  // namespace

void MaybeRunChild() {
  if (!absl::GetFlag(FLAGS_child)) return;
  ChildArgs a;
  a.dir = absl::GetFlag(FLAGS_dir);
  a.fd = absl::GetFlag(FLAGS_fd);
  a.seed = absl::GetFlag(FLAGS_seed);
  a.pause_point = absl::GetFlag(FLAGS_pause_point);
  a.pause_hit = absl::GetFlag(FLAGS_pause_hit);
  a.pause_fs_call = absl::GetFlag(FLAGS_pause_fs_call);
  a.engine_commit_first = absl::GetFlag(FLAGS_engine_commit_first);
  ChildMain(a);
}

std::vector<std::string> RunIteration(const IterationConfig& cfg,
                                      std::vector<Acked>* acked, Totals* totals,
                                      std::string* summary) {
  std::vector<std::string> v;
  std::mt19937_64 rng(cfg.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<std::string> base = {absl::StrCat("--dir=", cfg.dir),
                                   absl::StrCat("--seed=", cfg.seed)};
  if (cfg.engine_commit_first) base.push_back("--engine_commit_first");

  // The writer life.
  std::vector<std::string> args = base;
  KillPlan plan;
  if (!cfg.fixed.point.empty()) {
    args.push_back(absl::StrCat("--pause_point=", cfg.fixed.point));
    args.push_back(absl::StrCat("--pause_hit=", cfg.fixed.hit));
    plan.expect_pause = true;
  } else {
    // Usually within 400 ms; one time in ten within the first 40 ms
    // (inside the engine's open and the recovery).
    plan.after_start = absl::Microseconds(
        rng() % 10 == 0 ? rng() % 40000 : rng() % 400000);
  }
  ++totals->writer_kills;
  ChildRun run = RunChild(cfg.self, args, plan, &v);
  CollectAcks(run, acked);
  if (Find(run.records, kAck) == nullptr) ++totals->writer_killed_before_ack;
  if (run.paused != nullptr) {
    ++totals->killed_at_point;
    ++totals->kills_by_point[run.where.substr(0, run.where.find(" #"))];
  }
  std::vector<std::string> lives = {absl::StrCat("writer killed ", run.where)};
  CheckCleanFlags(cfg.dir, "after killing the writer", totals, &v);

  // Recovering lives, each killed early.
  const int n = cfg.fixed.point.empty() && rng() % 3 != 0
                    ? 1 + static_cast<int>(rng() % 2)
                    : 0;
  for (int i = 0; i < n && v.empty(); ++i) {
    std::vector<std::string> a = base;
    KillPlan p;
    const uint64_t how = rng() % 10;
    if (how < 5) {
      // A named point of the server (recovery steps, or the first
      // commits); killed 100 ms after opening if it never comes.
      static const int kChoices[] = {0, 1, 1, 2, 3, 4, 5, 7};
      const int point = kChoices[rng() % 8];
      const int hit = point == 1 ? 1 + static_cast<int>(rng() % 3)
                                 : point >= 4 ? 1 + static_cast<int>(rng() % 20)
                                              : 1;
      a.push_back(absl::StrCat("--pause_point=", kPoints[point]));
      a.push_back(absl::StrCat("--pause_hit=", hit));
      p.after_open = absl::Milliseconds(100);
    } else if (how < 8) {
      // The K-th mutating call of the binlog's file system: inside Finish
      // (cut, flag, new file, index), or the first commits and rotation.
      a.push_back(absl::StrCat("--pause_fs_call=", 1 + rng() % 40));
      p.after_open = absl::Milliseconds(100);
    } else {
      // A random moment in the first 40 ms: the engine's open, its
      // recovery, or the log's.
      p.after_start = absl::Microseconds(rng() % 40000);
    }
    ++totals->recovering_children;
    ChildRun r = RunChild(cfg.self, a, p, &v);
    CollectAcks(r, acked);
    if (r.paused != nullptr) {
      ++totals->killed_at_point;
      ++totals->kills_by_point[r.where.substr(0, r.where.find(" #"))];
    }
    lives.push_back(absl::StrCat("recovering child killed ", r.where));
    CheckCleanFlags(cfg.dir, "after killing a recovering child", totals, &v);
  }
  if (!v.empty()) return v;

  std::string restart;
  RestartAndCheck(cfg, acked, totals, &v, &restart);
  *summary = absl::StrCat(absl::StrJoin(lives, "; "), "; ", restart);
  return v;
}

std::string NewServerDir() {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base ? base : "/tmp", "/engine_crash_",
                                 ::getpid(), "_", counter++);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  return dir;
}

void RemoveServerDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

std::string SelfPath() { return crash_test::SelfPath(); }

}  // namespace engine_crash
}  // namespace binlog
