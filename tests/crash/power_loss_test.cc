// Power-loss tests: randomized workloads on the fault-injecting file system
// (io/fault_injection_file_system.h), a power cut after a random number of
// file-system calls, a "reboot" that applies the cut to the files (unsynced
// data dropped, kept in part or torn; unsynced directory entries undone),
// then recovery with the POSIX file system and the oracle of
// tests/crash/crash_test_util.h:
//   - every transaction whose Commit returned OK (SyncPolicy::kEveryGroup)
//     is present, byte-equal, at the position Commit returned, in order;
//   - nothing else is visible but complete transactions the writer built;
//     no torn tail, no duplicate;
//   - the directory and the index open cleanly, and appends continue and
//     read back.
// Each log lives through several cut/reboot cycles, so later cycles recover
// logs that were recovered before, and cuts also land inside Open (during
// recovery, preallocation, the first index write).
//
// Knobs (environment): BINLOG_POWER_LOSS_CUTS (default 2000) and
// BINLOG_POWER_LOSS_SECONDS (default 60) bound the random test, whichever
// comes first; BINLOG_POWER_LOSS_SEED fixes the master seed (printed). Long
// run: BINLOG_POWER_LOSS_CUTS=100000 BINLOG_POWER_LOSS_SECONDS=3600.
// The logs live on /dev/shm when it is writable (fsync costs nothing there
// and the fault FS, not the device, decides what is durable); set
// BINLOG_POWER_LOSS_TMPFS=0 to use TEST_TMPDIR.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/codec.h"
#include "io/fault_injection_file_system.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/crash/crash_test_util.h"

namespace binlog {
namespace {

using crash_test::AckedTxn;
using crash_test::AckLog;
using crash_test::BuildTxn;
using crash_test::VerifyLog;
using crash_test::VerifyResult;

uint64_t EnvU64(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  return std::strtoull(v, nullptr, 10);
}

// A fresh directory for one log: on tmpfs if possible (see file comment).
std::string NewLogDir(const std::string& tag) {
  static int counter = 0;
  const char* tmpfs = std::getenv("BINLOG_POWER_LOSS_TMPFS");
  bool use_shm = (tmpfs == nullptr || std::string(tmpfs) != "0") &&
                 ::access("/dev/shm", W_OK) == 0;
  if (!use_shm) return testing_util::NewTempDir(tag);
  std::string dir =
      absl::StrCat("/dev/shm/binlog_power_loss_", ::getpid(), "_", tag, "_",
                   counter++);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
  return dir;
}

void RemoveDir(const std::string& dir) {
  std::string cmd = absl::StrCat("rm -rf '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
}

const char* DataModeName(io::PowerLossOptions::Data d) {
  switch (d) {
    case io::PowerLossOptions::Data::kDropUnsynced: return "drop-unsynced";
    case io::PowerLossOptions::Data::kKeepRandomPrefix: return "keep-prefix";
    case io::PowerLossOptions::Data::kTearLastSector: return "tear-sector";
    case io::PowerLossOptions::Data::kRandomSectors: return "random-sectors";
  }
  return "?";
}

// One cut: the workload, where the power goes, how the disk reacts.
struct CutConfig {
  uint64_t seed = 0;
  int threads = 1;
  int commits_per_thread = 10;
  uint64_t max_file_size = 8192;
  bool checksums = true;
  io::PreallocMode prealloc = io::PreallocMode::kNone;
  bool trim = true;
  io::Codec compression = io::Codec::kNone;
  double rotate_p = 0;  // per commit of thread 0
  double purge_p = 0;
  uint64_t freeze_after = 0;  // mutating file-system calls before the cut
  bool close_before_cut = false;
  io::PowerLossOptions loss;

  std::string ToString() const {
    return absl::StrCat(
        "seed=", seed, " threads=", threads, " commits/thread=",
        commits_per_thread, " max_file_size=", max_file_size,
        " checksums=", checksums, " prealloc=", io::PreallocModeName(prealloc),
        " trim=", trim, " compression=", io::CodecName(compression),
        " rotate_p=", rotate_p, " purge_p=", purge_p,
        " cut_after_ops=", freeze_after, " close_before_cut=",
        close_before_cut, " loss=", DataModeName(loss.data),
        " keep_dir_prefix=", loss.keep_random_dir_prefix,
        " loss_seed=", loss.seed);
  }
};

struct CycleOutcome {
  std::vector<std::string> violations;
  bool cut_in_open = false;    // the power went during Binlog::Open
  bool cut_idle = false;       // the workload finished before the cut
  uint64_t ops = 0;            // mutating calls the writer made
  uint64_t acked_checked = 0;
  uint64_t unacked_found = 0;
  io::PowerLossReport loss;
  int undetectable_damage = 0;  // see Reboot
};

// BINLOG_POWER_LOSS_STRICT=1 fails on damage no reader can detect too
// (logs without checksums; see Reboot).
bool Strict() { return EnvU64("BINLOG_POWER_LOSS_STRICT", 0) != 0; }



// A log that lives through cut/reboot cycles.
class PowerLossHarness {
 public:
  // `writer_fs`, if set, is what the writer uses (a wrapper over fs()).
  explicit PowerLossHarness(const std::string& tag) : dir_(NewLogDir(tag)) {}
  ~PowerLossHarness() { RemoveDir(dir_); }

  io::FaultInjectionFileSystem* fs() { return &fs_; }
  const std::string& dir() const { return dir_; }
  void set_writer_fs(io::FileSystem* f) { writer_fs_ = f; }
  uint64_t next_id() const { return next_id_.load(); }

  CycleOutcome RunCycle(const CutConfig& c) {
    CycleOutcome out;
    if (!c.trim) untrimmed_ = true;  // the crashed writer may close files
    Options o = MakeOptions(c);
    o.file_system = writer_fs_ != nullptr ? writer_fs_ : &fs_;
    fs_.ResetState();  // what is on disk now is durable
    fs_.FreezeAfter(c.freeze_after);  // 0: frozen at once
    {
      auto log = Binlog::Open(dir_, "binlog", o);
      if (!log.ok()) {
        if (!fs_.frozen()) {
          out.violations.push_back(absl::StrCat(
              "Open through the fault FS failed before the cut: ",
              log.status().ToString()));
          return out;
        }
        out.cut_in_open = true;
      } else {
        RunWorkload(c, log->get());
        if (!fs_.frozen()) {
          out.cut_idle = true;
          if (c.close_before_cut) {
            absl::Status s = (*log)->Close();
            if (!s.ok() && !fs_.frozen()) {
              out.violations.push_back(
                  absl::StrCat("Close failed: ", s.ToString()));
            }
          }
        }
        out.ops = fs_.mutating_ops();
        fs_.Freeze();
        log->reset();  // Close fails on the frozen FS: a crash
      }
    }
    fs_.Freeze();
    auto loss = fs_.SimulatePowerLoss(c.loss);
    if (!loss.ok()) {
      out.violations.push_back(
          absl::StrCat("power loss simulation failed: ", loss.status().ToString()));
      return out;
    }
    out.loss = *loss;
    Reboot(c, &out);
    return out;
  }

  // After the reboot: recover with the POSIX file system, append, close,
  // check everything.
  void Reboot(const CutConfig& c, CycleOutcome* out) {
    Options o = MakeOptions(c);
    o.file_system = nullptr;
    {
      auto log = Binlog::Open(dir_, "binlog", o);
      if (!log.ok()) {
        out->violations.push_back(
            absl::StrCat("reopen after the power cut failed: ",
                         log.status().ToString()));
        return;
      }
      TransactionBuffer txn(c.checksums);
      for (int i = 0; i < 3; ++i) {
        uint64_t id = next_id_++;
        BuildTxn(&txn, id);
        auto pos = (*log)->Commit(&txn);
        if (!pos.ok()) {
          out->violations.push_back(absl::StrCat(
              "commit after recovery failed: ", pos.status().ToString()));
          return;
        }
        acks_.Add(AckedTxn{id, *pos, std::string(txn.data())});
      }
      absl::Status s = (*log)->Close();
      if (!s.ok()) {
        out->violations.push_back(
            absl::StrCat("close after recovery failed: ", s.ToString()));
        return;
      }
    }
    // Zeros after the last event of a closed file are by design once any
    // life of this log ran without trimming.
    if (!c.trim) untrimmed_ = true;
    VerifyResult r = VerifyLog(dir_, "binlog", acks_.acked(), acks_.purge_floor(),
                               /*allow_zero_tails=*/untrimmed_);
    for (auto& v : r.violations) out->violations.push_back(std::move(v));
    // Damage no reader can see: without checksums, sectors persisted out of
    // order, or a torn event whose header persisted over preallocated zeros
    // (its size and log_pos are right, its body is zeros), pass for valid
    // events (tests/README.md, "limitations"). Tolerated damage stays in the
    // log, so later lives of it meet it again: remembered per position.
    bool undetectable =
        !c.checksums &&
        (c.loss.data == io::PowerLossOptions::Data::kRandomSectors ||
         c.prealloc != io::PreallocMode::kNone);
    for (const TornTail& t : r.torn_tails) {
      auto key = std::make_pair(t.file_name, t.offset);
      if (tolerated_tails_.count(key)) continue;
      out->violations.push_back(crash_test::TornTailViolation(t));
    }
    for (const crash_test::ReadError& e : r.read_errors) {
      auto key = std::make_pair(e.file_name, e.offset);
      if (tolerated_tails_.count(key)) continue;
      out->violations.push_back(crash_test::ReadErrorViolation(e));
    }
    for (const crash_test::FoundTxn& d : r.corrupted) {
      auto key = std::make_pair(d.file, d.start);
      if (tolerated_damage_.count(key)) continue;
      if (undetectable && !Strict()) {
        tolerated_damage_.insert(key);
        ++out->undetectable_damage;
        continue;
      }
      out->violations.push_back(absl::StrCat(
          "unacknowledged transaction at ", d.file, ":", d.start, "-", d.end,
          " is damaged: ", d.bytes, " (checksums ", c.checksums ? "on" : "off",
          ")"));
    }
    out->acked_checked = r.acked_checked;
    out->unacked_found = r.unacked_found;
  }

 private:
  static Options MakeOptions(const CutConfig& c) {
    Options o;
    o.max_file_size = c.max_file_size;
    o.checksums = c.checksums;
    o.preallocate = c.prealloc;
    o.trim_preallocated = c.trim;
    o.compression = c.compression;
    o.now_seconds = [] { return 1700000000u; };
    return o;
  }

  void RunWorkload(const CutConfig& c, Binlog* log) {
    std::vector<std::thread> threads;
    for (int t = 0; t < c.threads; ++t) {
      threads.emplace_back([this, &c, log, t] {
        std::mt19937_64 rng(c.seed * 131 + static_cast<uint64_t>(t));
        std::uniform_real_distribution<double> u(0, 1);
        TransactionBuffer txn(c.checksums);
        for (int i = 0; i < c.commits_per_thread; ++i) {
          uint64_t id = next_id_++;
          BuildTxn(&txn, id);
          auto pos = log->Commit(&txn);
          if (!pos.ok()) return;  // the cut (or what it caused)
          acks_.Add(AckedTxn{id, *pos, std::string(txn.data())});
          if (t != 0) continue;
          if (u(rng) < c.rotate_p && !log->Rotate().ok()) return;
          if (u(rng) < c.purge_p) {
            std::vector<LogFileInfo> files = log->ListFiles();
            if (files.size() > 1) {
              uint64_t target = files[rng() % files.size()].number;
              acks_.PurgeRequested(target);
              log->PurgeTo(target).status().IgnoreError();  // may be cut
            }
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  }

  io::FaultInjectionFileSystem fs_;
  io::FileSystem* writer_fs_ = nullptr;
  const std::string dir_;
  AckLog acks_;
  std::atomic<uint64_t> next_id_{1};
  bool untrimmed_ = false;
  std::set<std::pair<uint64_t, uint64_t>> tolerated_damage_;
  std::set<std::pair<std::string, uint64_t>> tolerated_tails_;
};

// Copies a failing log where it survives the test (bazel's undeclared
// outputs, else /tmp) and lists its files.
std::string KeepForInspection(const std::string& dir) {
  const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  std::string dest = absl::StrCat(out != nullptr ? out : "/tmp",
                                  "/power_loss_failure_", ::getpid());
  std::string cmd = absl::StrCat("rm -rf '", dest, "' && cp -a '", dir, "' '",
                                 dest, "' && ls -l '", dest, "'");
  if (std::system(cmd.c_str()) != 0) return "(copy failed)";
  return dest;
}

CutConfig RandomConfig(std::mt19937_64* rng, uint64_t op_estimate) {
  CutConfig c;
  c.seed = (*rng)();
  static const int kThreads[] = {1, 1, 2, 3, 4, 8};
  c.threads = kThreads[(*rng)() % 6];
  c.commits_per_thread = 1 + static_cast<int>((*rng)() % (c.threads > 4 ? 8 : 20));
  static const uint64_t kSizes[] = {4096, 8192, 16384, 65536};
  c.max_file_size = kSizes[(*rng)() % 4];
  c.checksums = (*rng)() % 4 != 0;
  static const io::PreallocMode kModes[] = {io::PreallocMode::kNone,
                                            io::PreallocMode::kFallocate,
                                            io::PreallocMode::kZeroFill};
  c.prealloc = kModes[(*rng)() % 3];
  c.trim = (*rng)() % 4 != 0;
  static const io::Codec kCodecs[] = {io::Codec::kNone, io::Codec::kNone,
                                      io::Codec::kZstd, io::Codec::kLz4};
  c.compression = kCodecs[(*rng)() % 4];
  c.rotate_p = (*rng)() % 3 == 0 ? 0.1 : 0.0;
  c.purge_p = (*rng)() % 3 == 0 ? 0.05 : 0.0;
  // Mostly inside the workload; some in Open (small values) and some after
  // it (idle cuts, clean closes).
  uint64_t span = op_estimate + op_estimate / 5 + 1;
  c.freeze_after = (*rng)() % 10 == 0 ? (*rng)() % 30 : (*rng)() % span;
  c.close_before_cut = (*rng)() % 2 == 0;
  static const io::PowerLossOptions::Data kData[] = {
      io::PowerLossOptions::Data::kDropUnsynced,
      io::PowerLossOptions::Data::kKeepRandomPrefix,
      io::PowerLossOptions::Data::kTearLastSector,
      io::PowerLossOptions::Data::kRandomSectors};
  c.loss.data = kData[(*rng)() % 4];
  c.loss.keep_random_dir_prefix = (*rng)() % 2 == 0;
  c.loss.seed = (*rng)();
  return c;
}

std::string Describe(const CutConfig& c, const CycleOutcome& o) {
  return absl::StrCat(c.ToString(), "\n  writer ops=", o.ops,
                      " cut_in_open=", o.cut_in_open, " idle=", o.cut_idle,
                      "\n  power loss: ", absl::StrJoin(o.loss.log, "; "),
                      "\n  violations:\n    ",
                      absl::StrJoin(o.violations, "\n    "));
}

TEST(PowerLossTest, RandomCutsKeepEveryAcknowledgedCommit) {
  const uint64_t max_cuts = EnvU64("BINLOG_POWER_LOSS_CUTS", 2000);
  const uint64_t max_seconds = EnvU64("BINLOG_POWER_LOSS_SECONDS", 60);
  uint64_t master = EnvU64("BINLOG_POWER_LOSS_SEED", 0);
  if (master == 0) master = std::random_device()() | 1;
  std::printf("power-loss: master seed %lu (BINLOG_POWER_LOSS_SEED)\n",
              static_cast<unsigned long>(master));
  std::mt19937_64 rng(master);
  const absl::Time deadline = absl::Now() + absl::Seconds(max_seconds);
  uint64_t op_estimate = 200;
  uint64_t cuts = 0, in_open = 0, idle = 0, acked = 0, unacked = 0;
  uint64_t logs = 0, undetectable = 0;
  std::unique_ptr<PowerLossHarness> h;
  int cycles_left = 0;
  while (cuts < max_cuts && absl::Now() < deadline) {
    if (cycles_left == 0) {
      h.reset();
      h = std::make_unique<PowerLossHarness>("random");
      cycles_left = 4;  // cut/reboot cycles per log
      ++logs;
    }
    --cycles_left;
    CutConfig c = RandomConfig(&rng, op_estimate);
    CycleOutcome o = h->RunCycle(c);
    ++cuts;
    if (EnvU64("BINLOG_POWER_LOSS_VERBOSE", 0) != 0) {
      std::printf("cut %lu (log %lu): %s\n", static_cast<unsigned long>(cuts),
                  static_cast<unsigned long>(logs), Describe(c, o).c_str());
    }
    if (o.cut_in_open) ++in_open;
    if (o.cut_idle) {
      ++idle;
      // Learn how many calls a workload takes, so cuts spread over it.
      op_estimate = std::max<uint64_t>(50, (op_estimate * 7 + o.ops * 3) / 10);
    }
    acked += o.acked_checked;
    unacked += o.unacked_found;
    undetectable += static_cast<uint64_t>(o.undetectable_damage);
    if (!o.violations.empty()) {
      std::string kept = KeepForInspection(h->dir());
      ADD_FAILURE() << "cut " << cuts << " of log " << logs << " in "
                    << h->dir() << " (master seed " << master << "):\n  "
                    << Describe(c, o) << "\n  log kept in " << kept;
      break;
    }
  }
  std::printf(
      "power-loss: %lu cuts on %lu logs (%lu during Open, %lu after the "
      "workload), %lu acknowledged transactions checked, %lu unacknowledged "
      "complete transactions found\n",
      static_cast<unsigned long>(cuts), static_cast<unsigned long>(logs),
      static_cast<unsigned long>(in_open), static_cast<unsigned long>(idle),
      static_cast<unsigned long>(acked), static_cast<unsigned long>(unacked));
  std::printf("power-loss: damaged unacknowledged transactions in logs "
              "without checksums, undetectable by any reader (tolerated "
              "unless BINLOG_POWER_LOSS_STRICT=1): %lu\n",
              static_cast<unsigned long>(undetectable));
  // Under sanitizers the time bound stops the loop early; still insist on a
  // meaningful number of cuts.
  EXPECT_GE(cuts, std::min<uint64_t>(max_cuts, 50));
}

// A fixed single-threaded workload with rotations and a purge, cut after
// each of its file-system calls in turn, under each way a disk can react.
TEST(PowerLossTest, CutAfterEveryCallOfAFixedWorkload) {
  CutConfig base;
  base.threads = 1;
  base.commits_per_thread = 12;
  base.max_file_size = 4096;
  base.rotate_p = 0.25;
  base.purge_p = 0.1;
  base.prealloc = io::PreallocMode::kZeroFill;
  base.compression = io::Codec::kZstd;
  // Count the calls of one uncut run (the cut comes after everything).
  uint64_t total = 0;
  {
    PowerLossHarness h("count");
    CutConfig c = base;
    c.freeze_after = 1000000;
    CycleOutcome o = h.RunCycle(c);
    ASSERT_TRUE(o.violations.empty()) << Describe(c, o);
    total = o.ops;
  }
  ASSERT_GT(total, 20u);
  const io::PowerLossOptions::Data kData[] = {
      io::PowerLossOptions::Data::kDropUnsynced,
      io::PowerLossOptions::Data::kKeepRandomPrefix,
      io::PowerLossOptions::Data::kTearLastSector,
      io::PowerLossOptions::Data::kRandomSectors};
  int cuts = 0;
  for (uint64_t k = 0; k <= total; ++k) {
    for (auto data : kData) {
      PowerLossHarness h("every");
      CutConfig c = base;
      c.freeze_after = k;
      c.loss.data = data;
      c.loss.keep_random_dir_prefix = k % 2 == 1;
      c.loss.seed = k;
      // Cut during the first life of the log, then again during recovery
      // and the second workload.
      CycleOutcome o = h.RunCycle(c);
      ASSERT_TRUE(o.violations.empty()) << Describe(c, o);
      c.freeze_after = (k * 7) % (total + 1);
      o = h.RunCycle(c);
      ASSERT_TRUE(o.violations.empty()) << Describe(c, o);
      cuts += 2;
    }
  }
  std::printf("power-loss: %d cuts over %lu calls of the fixed workload\n",
              cuts, static_cast<unsigned long>(total));
}

// --- The oracle must see a forgotten fsync --------------------------------
//
// The production code cannot be edited to forget its fsyncs, so these tests
// put a wrapper between the log and the fault FS that swallows one kind of
// sync (returns OK without syncing), as a buggy log would, and check that
// the cut then breaks the contract in a way the oracle reports. The same
// run without the wrapper is clean.

class SwallowSyncFs : public io::FileSystemWrapper {
 public:
  SwallowSyncFs(io::FileSystem* target, bool dir_syncs, bool file_syncs)
      : io::FileSystemWrapper(target),
        dir_syncs_(dir_syncs),
        file_syncs_(file_syncs) {}

  absl::StatusOr<std::unique_ptr<io::Directory>> OpenDirectory(
      const std::string& path) override {
    auto d = target()->OpenDirectory(path);
    if (!d.ok() || !dir_syncs_) return d;
    return std::unique_ptr<io::Directory>(new NoSyncDir(std::move(*d)));
  }
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode) override {
    auto f = target()->OpenWritable(path, mode);
    if (!f.ok() || !file_syncs_) return f;
    return std::unique_ptr<io::WritableFile>(new NoSyncFile(std::move(*f)));
  }

 private:
  class NoSyncDir : public io::Directory {
   public:
    explicit NoSyncDir(std::unique_ptr<io::Directory> d) : d_(std::move(d)) {}
    absl::Status Sync() override { return absl::OkStatus(); }
    const std::string& path() const override { return d_->path(); }

   private:
    std::unique_ptr<io::Directory> d_;
  };
  class NoSyncFile : public io::WritableFileWrapper {
   public:
    using io::WritableFileWrapper::WritableFileWrapper;
    absl::Status Sync() override { return absl::OkStatus(); }
    absl::Status SyncAll() override { return absl::OkStatus(); }
  };

  const bool dir_syncs_;
  const bool file_syncs_;
};

// Open, commit, rotate, commit, then cut at idle with every unsynced change
// dropped.
CycleOutcome RunWithSwallowedSyncs(bool dir_syncs, bool file_syncs) {
  PowerLossHarness h("swallow");
  SwallowSyncFs wrapper(h.fs(), dir_syncs, file_syncs);
  if (dir_syncs || file_syncs) h.set_writer_fs(&wrapper);
  CutConfig c;
  c.threads = 1;
  c.commits_per_thread = 20;
  c.max_file_size = 4096;  // rotations, so new files and index renames
  c.prealloc = io::PreallocMode::kNone;
  c.freeze_after = 1000000;  // after the workload
  c.loss.data = io::PowerLossOptions::Data::kDropUnsynced;
  return h.RunCycle(c);
}

TEST(PowerLossTest, ForgottenDirectoryFsyncIsCaught) {
  CycleOutcome o = RunWithSwallowedSyncs(/*dir_syncs=*/true, false);
  EXPECT_FALSE(o.violations.empty())
      << "a log that never fsyncs its directory lost nothing in a power cut: "
         "the fault FS does not model directory entries";
  EXPECT_GT(o.loss.entries_undone, 0);
  std::printf("forgotten directory fsync: %s\n",
              o.violations.empty() ? "(none)" : o.violations.front().c_str());
}

TEST(PowerLossTest, ForgottenFdatasyncIsCaught) {
  CycleOutcome o = RunWithSwallowedSyncs(false, /*file_syncs=*/true);
  EXPECT_FALSE(o.violations.empty())
      << "a log that never fdatasyncs lost nothing in a power cut";
  std::printf("forgotten fdatasync: %s\n",
              o.violations.empty() ? "(none)" : o.violations.front().c_str());
}

TEST(PowerLossTest, SameRunWithEverySyncIsClean) {
  CycleOutcome o = RunWithSwallowedSyncs(false, false);
  EXPECT_TRUE(o.violations.empty()) << absl::StrJoin(o.violations, "\n");
  EXPECT_GT(o.acked_checked, 20u);
}

}  // namespace
}  // namespace binlog
