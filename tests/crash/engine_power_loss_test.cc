// Two-phase commit under power loss: the log and a small transactional
// engine share the fault-injecting file system, and power is cut at every
// step of a workload (and, in part of the runs, again at a step of the
// recovery that follows).
//
// The engine (MarkerEngine below) is a journal of prepare / commit /
// rollback markers, each record checksummed, on the same FileSystem as the
// log, so a power cut drops whatever of it was not synced, exactly as it
// drops the log's unsynced bytes. A server built on it (Server below) does
// what the example server does with RocksDB:
//   - prepare in the engine (a marker, not synced by itself);
//   - Options::before_group_write syncs the engine's journal, so every
//     prepare of a group is durable before the group's binlog bytes can be
//     (MySQL's "flush engine logs first" in its flush stage);
//   - Binlog::Commit; the engine commit (a marker, not synced) in the
//     ordered-commit callback, in binlog order;
//   - Options::flush_engine_logs syncs the journal before every rotation
//     and Close, so no file but the last holds a transaction whose engine
//     commit a cut could lose;
//   - on start: Binlog::BeginRecovery, commit the prepared engine
//     transactions whose XID the scan reports and roll back the others,
//     sync, then PendingRecovery::Finish.
// The oracle, after a final clean recovery: the XIDs of the transactions
// in the log and the XIDs the engine committed are the same set (nothing
// in the log whose prepare the engine lost or whose commit it rolled back;
// no engine commit whose transaction the log lost); no engine transaction
// is left prepared; every acknowledged transaction is in both.
//
// And the oracle is shown able to fail: a server without the pre-write
// sync, or without the rotation hook, is caught at some cut point.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/statement_events.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/crash/crash_test_util.h"

namespace binlog {
namespace {

// The logs live on tmpfs when it is writable (crash_test_util.h).
std::string ScratchDir(const std::string& tag) {
  return crash_test::NewLogDir("binlog_engine", tag);
}
using crash_test::RemoveDir;

constexpr uint32_t kTs = 1700000000;
constexpr size_t kRecordSize = 13;  // type, xid (8), crc32 (4)

// A journal of 2PC markers. Thread-safe.
class MarkerEngine {
 public:
  enum class State { kPrepared, kCommitted, kRolledBack };

  static absl::StatusOr<std::unique_ptr<MarkerEngine>> Open(io::FileSystem* fs,
                                                            const std::string& dir) {
    auto e = std::unique_ptr<MarkerEngine>(new MarkerEngine());
    std::string path = io::JoinPath(dir, "engine.journal");
    auto exists = fs->Exists(path);
    if (!exists.ok()) return exists.status();
    if (!*exists) {
      auto f = fs->OpenWritable(path, io::OpenMode::kCreateNew);
      if (!f.ok()) return f.status();
      absl::Status s = (*f)->Sync();
      if (s.ok()) s = (*f)->Close();
      if (!s.ok()) return s;
      auto d = fs->OpenDirectory(dir);
      if (!d.ok()) return d.status();
      s = (*d)->Sync();
      if (!s.ok()) return s;
    }
    auto bytes = ReadSmallFile(fs, path);
    if (!bytes.ok()) return bytes.status();
    size_t off = 0;
    while (off + kRecordSize <= bytes->size()) {
      const char* r = bytes->data() + off;
      if (Crc32(r, 9) != LoadLe32(r + 9)) break;  // torn or never written
      uint64_t xid = LoadLe64(r + 1);
      switch (r[0]) {
        case 'P': e->state_[xid] = State::kPrepared; break;
        case 'C': e->state_[xid] = State::kCommitted; break;
        case 'R': e->state_[xid] = State::kRolledBack; break;
        default: off = bytes->size(); continue;
      }
      off += kRecordSize;
    }
    auto f = fs->OpenWritable(path, io::OpenMode::kOpenExisting);
    if (!f.ok()) return f.status();
    e->file_ = std::move(*f);
    if (off != bytes->size()) {
      // Cut what a power cut tore, durably, before appending after it.
      absl::Status s = e->file_->Truncate(off);
      if (s.ok()) s = e->file_->Sync();
      if (!s.ok()) return s;
    }
    e->end_ = off;
    return e;
  }

  absl::Status Prepare(uint64_t xid) { return Append('P', xid); }
  absl::Status Commit(uint64_t xid) { return Append('C', xid); }
  absl::Status Rollback(uint64_t xid) { return Append('R', xid); }
  absl::Status Sync() {
    std::lock_guard<std::mutex> l(mu_);
    return file_->Sync();
  }
  std::map<uint64_t, State> state() {
    std::lock_guard<std::mutex> l(mu_);
    return state_;
  }
  void Close() { file_->Close().IgnoreError(); }

 private:
  MarkerEngine() = default;

  absl::Status Append(char type, uint64_t xid) {
    char r[kRecordSize];
    r[0] = type;
    StoreLe64(r + 1, xid);
    StoreLe32(r + 9, Crc32(r, 9));
    std::lock_guard<std::mutex> l(mu_);
    absl::Status s = file_->Write(end_, absl::string_view(r, kRecordSize));
    if (!s.ok()) return s;
    end_ += kRecordSize;
    state_[xid] = type == 'P' ? State::kPrepared
                  : type == 'C' ? State::kCommitted : State::kRolledBack;
    return absl::OkStatus();
  }

  std::mutex mu_;
  std::unique_ptr<io::WritableFile> file_;
  uint64_t end_ = 0;
  std::map<uint64_t, State> state_;
};

// Which safeguards the server uses (all, except in the oracle's tests).
struct ServerMode {
  bool sync_prepares_before_write = true;  // before_group_write
  bool flush_engine_on_rotation = true;    // flush_engine_logs
  bool compress = false;  // zstd transactions (the scan must expand them)
  bool background_rotation = true;  // Options::background_rotation
};

// One life of the server: recover, then commit `txns` transactions from
// `threads` threads (XIDs first_xid, first_xid + 1, ...). Returns false if
// the power went (a call failed on the frozen file system) or anything
// failed; `acked` gets the XIDs whose Commit returned OK.
class Server {
 public:
  Server(io::FileSystem* fs, std::string dir, ServerMode mode)
      : fs_(fs), dir_(std::move(dir)), mode_(mode) {}

  bool Run(uint64_t first_xid, int txns, int threads, std::set<uint64_t>* acked,
           std::string* error) {
    auto engine = MarkerEngine::Open(fs_, dir_);
    if (!engine.ok()) {
      *error = absl::StrCat("engine open: ", engine.status().ToString());
      return false;
    }
    engine_ = std::move(*engine);
    Options o;
    o.file_system = fs_;
    o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
    o.preallocate = io::PreallocMode::kNone;
    o.max_file_size = 4096;  // a rotation every dozen transactions
    o.background_rotation = mode_.background_rotation;
    if (mode_.compress) {
      o.compression = io::Codec::kZstd;
      o.compression_threshold = 1;
    }
    if (mode_.sync_prepares_before_write) {
      o.before_group_write = [this](const GroupCommitInfo&) { return engine_->Sync(); };
    }
    o.on_group_commit = [this](const GroupCommitInfo& info) {
      for (const CommittedTransaction& t : info.txns) {
        // A failed engine commit (power gone) leaves it prepared: the next
        // start decides by the log. Remembered: with the power on it is a
        // failure of the run.
        absl::Status cs = engine_->Commit(reinterpret_cast<uintptr_t>(t.cookie));
        std::lock_guard<std::mutex> l(engine_commit_mu_);
        if (!cs.ok() && engine_commit_error_.empty()) {
          engine_commit_error_ = absl::StrCat("engine commit: ", cs.ToString());
        }
      }
    };
    if (mode_.flush_engine_on_rotation) {
      o.flush_engine_logs = [this]() { return engine_->Sync(); };
    }
    auto pending = Binlog::BeginRecovery(dir_, "binlog", o);
    if (!pending.ok()) {
      *error = absl::StrCat("BeginRecovery: ", pending.status().ToString());
      return Stop(false);
    }
    for (const auto& [xid, st] : engine_->state()) {
      if (st != MarkerEngine::State::kPrepared) continue;
      absl::Status s = (*pending)->scan().xids.count(xid) != 0 ? engine_->Commit(xid)
                                                               : engine_->Rollback(xid);
      if (!s.ok()) {
        *error = absl::StrCat("engine recovery: ", s.ToString());
        return Stop(false);
      }
    }
    absl::Status s = engine_->Sync();
    if (!s.ok()) {
      *error = absl::StrCat("engine recovery sync: ", s.ToString());
      return Stop(false);
    }
    auto log = (*pending)->Finish();
    if (!log.ok()) {
      *error = absl::StrCat("Finish: ", log.status().ToString());
      return Stop(false);
    }
    std::atomic<uint64_t> next{first_xid};
    const uint64_t last = first_xid + txns;
    std::mutex acked_mu;
    std::atomic<bool> failed{false};
    // The first failure of the workload, for *error.
    auto fail = [&](const std::string& what, const absl::Status& s) {
      std::lock_guard<std::mutex> l(acked_mu);
      if (!failed.exchange(true)) *error = absl::StrCat(what, ": ", s.ToString());
    };
    auto client = [&] {
      TransactionBuffer t;
      for (;;) {
        uint64_t xid = next.fetch_add(1);
        if (xid >= last || failed.load()) return;
        absl::Status ps = engine_->Prepare(xid);
        if (!ps.ok()) {
          fail(absl::StrCat("engine prepare of XID ", xid), ps);
          return;
        }
        t.Clear();
        if (xid % 5 == 0) {
          // A DDL statement, its XID in Q_DDL_LOGGED_WITH_XID.
          CommitGtid g;
          g.isolated = true;
          t.AppendCommitGtid(kTs, 1, g);
          AppendQueryWithStatusVars(&t, kTs, 1, 7, "db",
                                    absl::StrCat("CREATE TABLE t", xid, " (a INT)"),
                                    DdlXidStatusVar(xid, /*mariadb=*/false));
        } else {
          t.AppendCommitGtid(kTs, 1, CommitGtid());
          AppendQuery(&t, kTs, 1, 7, "db", "BEGIN");
          AppendQuery(&t, kTs, 1, 7, "db", absl::StrCat("INSERT INTO t VALUES (", xid, ")"));
          AppendXid(&t, kTs, 1, xid);
        }
        t.set_cookie(reinterpret_cast<void*>(static_cast<uintptr_t>(xid)));
        t.set_commit_parent((*log)->CommitClock());
        auto pos = (*log)->Commit(&t);
        if (!pos.ok()) {
          fail(absl::StrCat("Commit of XID ", xid), pos.status());
          return;
        }
        std::lock_guard<std::mutex> l(acked_mu);
        acked->insert(xid);
      }
    };
    std::vector<std::thread> ts;
    for (int i = 0; i < threads; ++i) ts.emplace_back(client);
    for (auto& th : ts) th.join();
    absl::Status c = (*log)->Close();
    if (!c.ok() && !failed.load()) {
      failed = true;
      *error = absl::StrCat("Close: ", c.ToString());
    }
    {
      std::lock_guard<std::mutex> l(engine_commit_mu_);
      if (!engine_commit_error_.empty() && !failed.load()) {
        failed = true;
        *error = engine_commit_error_;
      }
    }
    return Stop(!failed.load());
  }

 private:
  bool Stop(bool ok) {
    engine_->Close();
    engine_.reset();
    return ok;
  }

  io::FileSystem* fs_;
  std::string dir_;
  ServerMode mode_;
  std::unique_ptr<MarkerEngine> engine_;
  std::mutex engine_commit_mu_;
  std::string engine_commit_error_;  // the first failed engine commit
};

// The oracle. Empty when it holds.
std::vector<std::string> CheckAfterCleanRecovery(const std::string& dir,
                                                 const std::set<uint64_t>& acked) {
  std::vector<std::string> v;
  io::FaultInjectionFileSystem fs;  // tracking only: no faults
  Server server(&fs, dir, ServerMode());
  std::set<uint64_t> none;
  std::string error;
  if (!server.Run(0, 0, 0, &none, &error)) {
    v.push_back(absl::StrCat("clean recovery failed: ", error));
    return v;
  }
  auto engine = MarkerEngine::Open(&fs, dir);
  if (!engine.ok()) {
    v.push_back(engine.status().ToString());
    return v;
  }
  std::set<uint64_t> committed;
  for (const auto& [xid, st] : (*engine)->state()) {
    if (st == MarkerEngine::State::kCommitted) committed.insert(xid);
    if (st == MarkerEngine::State::kPrepared) {
      v.push_back(absl::StrCat("XID ", xid, " still prepared in the engine after recovery"));
    }
  }
  (*engine)->Close();
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  if (!r.ok()) {
    v.push_back(r.status().ToString());
    return v;
  }
  std::set<uint64_t> logged;
  Event ev;
  absl::Status s;
  while ((s = (*r)->Next(&ev)).ok()) {
    uint64_t xid = 0;
    if (ev.header.type == kXidEvent) {
      xid = *DecodeXid(ev.body());
    } else if (ev.header.type == kQueryEvent) {
      auto q = DecodeQuery(ev.body(), 13);
      if (!q.ok()) continue;
      auto vars = DecodeQueryStatusVars(q->status_vars);
      if (!vars.ok() || !vars->xid(&xid)) continue;
    } else {
      continue;
    }
    if (!logged.insert(xid).second) v.push_back(absl::StrCat("XID ", xid, " twice in the log"));
  }
  if (!absl::IsOutOfRange(s)) v.push_back(absl::StrCat("reading the log: ", s.ToString()));
  for (uint64_t x : logged) {
    if (committed.count(x) == 0) {
      v.push_back(absl::StrCat("XID ", x, " is in the log but not committed in the engine"));
    }
  }
  for (uint64_t x : committed) {
    if (logged.count(x) == 0) {
      v.push_back(absl::StrCat("XID ", x, " is committed in the engine but not in the log"));
    }
  }
  for (uint64_t x : acked) {
    if (logged.count(x) == 0 || committed.count(x) == 0) {
      v.push_back(absl::StrCat("acknowledged XID ", x, " lost"));
    }
  }
  return v;
}

struct SweepResult {
  int cuts = 0;
  int violations = 0;  // cut points whose oracle failed
  std::string first;   // the first violation, for the message
};

// Cuts the power after each step of a workload (and, for odd steps, again
// inside the recovery that follows), then recovers and checks.
SweepResult Sweep(const ServerMode& mode, int txns, int threads, uint64_t seed,
                  io::PowerLossOptions::Data data) {
  SweepResult result;
  std::mt19937_64 rng(seed);
  for (uint64_t step = 0;; ++step) {
    std::string dir = ScratchDir("sweep");
    io::FaultInjectionFileSystem fs;
    std::set<uint64_t> acked;
    std::string error;
    fs.FreezeAfter(step);
    Server life(&fs, dir, mode);
    bool completed = life.Run(1, txns, threads, &acked, &error);
    if (!fs.frozen()) {
      // The power was on the whole time: the run must have succeeded and
      // acknowledged every transaction; then the workload ran out of steps.
      if (!completed || acked.size() != static_cast<size_t>(txns)) {
        result.first = absl::StrCat(
            "the uncut run (", step, " steps) failed or lost commits: ",
            acked.size(), " of ", txns, " acknowledged; error: ", error);
        ++result.violations;
      }
      RemoveDir(dir);
      break;
    }
    io::PowerLossOptions loss;
    loss.data = data;
    loss.seed = rng();
    fs.Freeze();
    if (!fs.SimulatePowerLoss(loss).ok()) std::abort();
    ++result.cuts;
    if (step % 2 == 1) {
      // A second life that dies inside its recovery or first commits.
      fs.FreezeAfter(rng() % 24);
      Server again(&fs, dir, mode);
      std::string again_error;
      const bool again_done = again.Run(100000, 4, 1, &acked, &again_error);
      if (!fs.frozen() && !again_done) {
        // Failed with the power still on: not what the cut caused.
        if (result.violations == 0) {
          result.first = absl::StrCat("cut after step ", step,
                                      ": the second life failed before its "
                                      "cut: ", again_error);
        }
        ++result.violations;
      }
      fs.Freeze();
      loss.seed = rng();
      if (!fs.SimulatePowerLoss(loss).ok()) std::abort();
      ++result.cuts;
    }
    std::vector<std::string> v = CheckAfterCleanRecovery(dir, acked);
    if (!v.empty()) {
      if (result.violations == 0) {
        result.first = absl::StrCat("cut after step ", step, " (", dir,
                                    "): ", absl::StrJoin(v, "; "));
      }
      ++result.violations;
    } else {
      RemoveDir(dir);
    }
    if (step > 5000) {
      result.first = "the workload did not end";
      ++result.violations;
      break;
    }
  }
  return result;
}

TEST(EnginePowerLossTest, EveryCutKeepsTheLogAndTheEngineInAgreement) {
  for (auto data : {io::PowerLossOptions::Data::kDropUnsynced,
                    io::PowerLossOptions::Data::kKeepRandomPrefix,
                    io::PowerLossOptions::Data::kTearLastSector}) {
    SweepResult r = Sweep(ServerMode(), /*txns=*/30, /*threads=*/1, /*seed=*/7, data);
    EXPECT_EQ(r.violations, 0) << r.first;
    EXPECT_GT(r.cuts, 100) << "the sweep should cut at every step of 30 commits";
    std::printf("engine power loss (mode %d): %d cuts, %d violations\n",
                static_cast<int>(data), r.cuts, r.violations);
  }
}

TEST(EnginePowerLossTest, CompressedTransactionsKeepTheLogAndTheEngineInAgreement) {
  ServerMode mode;
  mode.compress = true;
  SweepResult r = Sweep(mode, /*txns=*/30, /*threads=*/1, /*seed=*/11,
                        io::PowerLossOptions::Data::kKeepRandomPrefix);
  EXPECT_EQ(r.violations, 0) << r.first;
  EXPECT_GT(r.cuts, 100);
}

TEST(EnginePowerLossTest, ConcurrentCommittersKeepTheLogAndTheEngineInAgreement) {
  // Several committers form real groups; the cut points then fall at
  // thread-dependent places, so run the sweep with a few seeds.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SweepResult r = Sweep(ServerMode(), /*txns=*/40, /*threads=*/4, seed,
                          io::PowerLossOptions::Data::kKeepRandomPrefix);
    EXPECT_EQ(r.violations, 0) << r.first;
  }
}

TEST(EnginePowerLossTest, TheOracleCatchesAServerThatWritesBeforeItsPreparesAreDurable) {
  ServerMode mode;
  mode.sync_prepares_before_write = false;
  mode.flush_engine_on_rotation = false;  // else a rotation syncs prepares too
  SweepResult r = Sweep(mode, 30, 1, 7, io::PowerLossOptions::Data::kDropUnsynced);
  EXPECT_GT(r.violations, 0);
  EXPECT_NE(r.first.find("in the log but not committed in the engine"), std::string::npos)
      << r.first;
}

TEST(EnginePowerLossTest, TheOracleCatchesAServerWithoutTheRotationBarrierHook) {
  ServerMode mode;
  mode.flush_engine_on_rotation = false;
  // With the rotation in line, the new file is indexed (and so is the one
  // recovery scans) before any group goes to it: a cut there finds the
  // old file's last transactions prepared in the engine and not scanned.
  // (With background_rotation the new file becomes the scanned one only
  // after its first group's fdatasync, which this server's
  // before_group_write hook precedes with an engine sync: no such window
  // here.)
  mode.background_rotation = false;
  SweepResult r = Sweep(mode, 30, 1, 7, io::PowerLossOptions::Data::kDropUnsynced);
  EXPECT_GT(r.violations, 0);
  EXPECT_NE(r.first.find("in the log but not committed in the engine"), std::string::npos)
      << r.first;
}

}  // namespace
}  // namespace binlog
