// position_store_bench: updates per second of a replica's position store.
//
//   BM_Batched        binlog::PositionStore: all fields serialized into one
//                     reusable buffer, one pwrite per update
//                     (write_every_update:1) or per sync point
//                     (write_every_update:0), CRC32, two alternating slots,
//                     fdatasync every `sync_every` updates.
//   BM_FieldByField   the old design (a text info file rewritten field by
//                     field, as relay-log.info is): per update, one
//                     snprintf-formatted pwrite per line: a line count, the
//                     5 coordinates and the 4 caller fields (10 pwrites),
//                     fdatasync every `sync_every` updates.
//   BM_RenameStore    the alternative crash-safe layout the issue asks to
//                     measure against the two slots: per update, write the
//                     same binary record to "<path>.tmp" (create/truncate),
//                     close it and rename it over the store; at sync points
//                     fdatasync the temp file before the rename and fsync
//                     the directory after it. (Between sync points this is
//                     NOT crash-safe: a renamed, unsynced file can come back
//                     empty after a power loss. It is crash-safe only with
//                     sync_every = 1.)
//
// sync_every: 0 = never fdatasync (page cache only), 1 = every update,
// 1000 = every 1000 updates. Every benchmark writes through io::FileSystem
// (the same pwrite and fdatasync code), in a fresh directory under
// $POSITION_STORE_BENCH_DIR (default /tmp). Inputs are built outside the
// timed loop; each iteration advances the positions and the GTID set the
// way an applier does per event.
//
// Command (numbers in benchmarks/README.md):
//   bazel run -c opt //benchmarks:position_store_bench --
//       --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "binlog/position_store.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"

namespace binlog {
namespace {

std::string BaseDir() {
  const char* d = std::getenv("POSITION_STORE_BENCH_DIR");
  return d != nullptr && *d != '\0' ? d : "/tmp";
}

std::string FreshDir(const char* tag) {
  static int counter = 0;
  std::string dir = absl::StrCat(BaseDir(), "/position_store_bench_", getpid(),
                                 "_", tag, "_", counter++);
  io::FileSystem::Default()->CreateDirectory(dir).IgnoreError();
  return dir;
}

void RemoveDir(const std::string& dir) {
  io::FileSystem* fs = io::FileSystem::Default();
  auto names = fs->ListDirectory(dir);
  if (names.ok()) {
    for (const auto& n : *names) fs->Remove(io::JoinPath(dir, n)).IgnoreError();
  }
  // The directory itself: removed with rmdir (no FileSystem call for it).
  ::rmdir(dir.c_str());
}

// What an applier holds: a realistic record with 4 caller fields, like
// relay-log.info's sql_delay, number_of_workers, id, channel_name.
struct Applier {
  ReplicaPosition pos;
  size_t gtid_prefix = 0;
  uint64_t n = 0;

  Applier() {
    pos.source_file = "binlog.000123";
    pos.source_pos = 4;
    pos.relay_file = "relay.000045";
    pos.relay_pos = 4;
    pos.executed_gtids = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-";
    gtid_prefix = pos.executed_gtids.size();
    pos.executed_gtids.reserve(gtid_prefix + 32);
    pos.fields = {{"sql_delay", "0"},
                  {"number_of_workers", "4"},
                  {"id", "1"},
                  {"channel_name", "channel_1"}};
    Advance();
  }
  // One applied transaction: new positions and GTID set (no allocation).
  void Advance() {
    ++n;
    pos.source_pos += 317;
    pos.relay_pos += 350;
    pos.executed_gtids.resize(gtid_prefix);
    char num[24];
    int len = std::snprintf(num, sizeof(num), "%" PRIu64, 1000 + n);
    pos.executed_gtids.append(num, static_cast<size_t>(len));
  }
};

// Times every fdatasync / directory fsync, so the report can tell the
// disk's flush cost (which varies by 30x on the shared VM) from the cost of
// the design under test. Every benchmark goes through it.
class SyncTimingFs : public io::FileSystemWrapper {
 public:
  SyncTimingFs() : FileSystemWrapper(io::FileSystem::Default()) {}
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    auto f = target()->OpenWritable(path, mode, permissions);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::WritableFile>(new File(this, std::move(*f)));
  }
  absl::StatusOr<std::unique_ptr<io::Directory>> OpenDirectory(
      const std::string& path) override {
    auto d = target()->OpenDirectory(path);
    if (!d.ok()) return d.status();
    return std::unique_ptr<io::Directory>(new Dir(this, std::move(*d)));
  }
  double sync_ns = 0;
  uint64_t syncs = 0;

 private:
  template <typename F>
  absl::Status Timed(F f) {
    auto t0 = std::chrono::steady_clock::now();
    absl::Status s = f();
    sync_ns += std::chrono::duration<double, std::nano>(
                   std::chrono::steady_clock::now() - t0)
                   .count();
    ++syncs;
    return s;
  }
  class File : public io::WritableFileWrapper {
   public:
    File(SyncTimingFs* fs, std::unique_ptr<io::WritableFile> f)
        : WritableFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Sync() override {
      return fs_->Timed([this] { return target()->Sync(); });
    }

   private:
    SyncTimingFs* fs_;
  };
  class Dir : public io::Directory {
   public:
    Dir(SyncTimingFs* fs, std::unique_ptr<io::Directory> d)
        : fs_(fs), d_(std::move(d)) {}
    absl::Status Sync() override {
      return fs_->Timed([this] { return d_->Sync(); });
    }
    const std::string& path() const override { return d_->path(); }

   private:
    SyncTimingFs* fs_;
    std::unique_ptr<io::Directory> d_;
  };
};

// updates/s; pwrites and syncs per update; the mean flush latency; and the
// time per update spent outside flushes (what the design itself costs).
void SetCounters(benchmark::State& state, uint64_t pwrites, uint64_t syncs,
                 const SyncTimingFs& fs, double sync_ns_before,
                 uint64_t syncs_before, double wall_ns) {
  double it = static_cast<double>(state.iterations());
  double sync_ns = fs.sync_ns - sync_ns_before;
  uint64_t n = fs.syncs - syncs_before;
  state.counters["updates/s"] =
      benchmark::Counter(it, benchmark::Counter::kIsRate);
  state.counters["pwrites/update"] = static_cast<double>(pwrites) / it;
  state.counters["syncs/update"] = static_cast<double>(syncs) / it;
  state.counters["flush_us"] = n > 0 ? sync_ns / n / 1000 : 0;
  state.counters["non_flush_ns/update"] = (wall_ns - sync_ns) / it;
}

double NowNs() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void BM_Batched(benchmark::State& state) {
  const uint32_t sync_every = static_cast<uint32_t>(state.range(0));
  std::string dir = FreshDir("batched");
  SyncTimingFs fs;
  PositionStoreOptions o;
  o.file_system = &fs;
  o.sync_every_updates = sync_every;
  o.write_every_update = state.range(1) != 0;
  auto store = PositionStore::Open(io::JoinPath(dir, "relay.pos"), o);
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return;
  }
  Applier a;
  PositionStore::Stats before = (*store)->stats();
  double sync_ns0 = fs.sync_ns, t0 = NowNs();
  uint64_t syncs0 = fs.syncs;
  for (auto _ : state) {
    a.Advance();
    absl::Status s = (*store)->Update(a.pos);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  double wall = NowNs() - t0;
  PositionStore::Stats after = (*store)->stats();
  SetCounters(state, after.writes - before.writes, after.syncs - before.syncs,
              fs, sync_ns0, syncs0, wall);
  (*store)->Close().IgnoreError();  // outside the timed loop
  RemoveDir(dir);
}

// The old design: each field formatted and written on its own line.
void BM_FieldByField(benchmark::State& state) {
  const uint64_t sync_every = static_cast<uint64_t>(state.range(0));
  std::string dir = FreshDir("fields");
  SyncTimingFs fs;
  auto f = fs.OpenWritable(
      io::JoinPath(dir, "relay-log.info"), io::OpenMode::kCreateOrTruncate);
  if (!f.ok()) {
    state.SkipWithError(std::string(f.status().message()).c_str());
    return;
  }
  constexpr uint64_t kLineWidth = 128;  // lines never move
  Applier a;
  uint64_t pwrites = 0, syncs = 0, since_sync = 0;
  char line[kLineWidth];
  bool failed = false;
  double t0 = NowNs();
  auto put = [&](int index, int len) {
    if (len < 0 || len >= static_cast<int>(sizeof(line))) len = sizeof(line) - 1;
    ++pwrites;
    if (!(*f)->Write(index * kLineWidth, absl::string_view(line, len)).ok()) {
      failed = true;
    }
  };
  for (auto _ : state) {
    a.Advance();
    const ReplicaPosition& p = a.pos;
    int i = 0;
    put(i++, std::snprintf(line, sizeof(line), "%d\n", 10));
    put(i++, std::snprintf(line, sizeof(line), "%s\n", p.relay_file.c_str()));
    put(i++, std::snprintf(line, sizeof(line), "%" PRIu64 "\n", p.relay_pos));
    put(i++, std::snprintf(line, sizeof(line), "%s\n", p.source_file.c_str()));
    put(i++, std::snprintf(line, sizeof(line), "%" PRIu64 "\n", p.source_pos));
    put(i++,
        std::snprintf(line, sizeof(line), "%s\n", p.executed_gtids.c_str()));
    for (const auto& kv : p.fields) {
      put(i++, std::snprintf(line, sizeof(line), "%s\n", kv.second.c_str()));
    }
    if (sync_every > 0 && ++since_sync >= sync_every) {
      since_sync = 0;
      ++syncs;
      if (!(*f)->Sync().ok()) failed = true;
    }
    if (failed) {
      state.SkipWithError("write or sync failed");
      break;
    }
  }
  SetCounters(state, pwrites, syncs, fs, 0, 0, NowNs() - t0);
  (*f)->Close().IgnoreError();
  RemoveDir(dir);
}

// Write-new-then-rename, with the same binary record as the store.
void BM_RenameStore(benchmark::State& state) {
  const uint64_t sync_every = static_cast<uint64_t>(state.range(0));
  SyncTimingFs timing;
  io::FileSystem* fs = &timing;
  std::string dir = FreshDir("rename");
  std::string path = io::JoinPath(dir, "relay.pos");
  std::string tmp = path + ".tmp";
  auto d = fs->OpenDirectory(dir);
  if (!d.ok()) {
    state.SkipWithError(std::string(d.status().message()).c_str());
    return;
  }
  Applier a;
  std::string buf(4096, '\0');
  uint64_t pwrites = 0, syncs = 0, since_sync = 0;
  double t0 = NowNs();
  for (auto _ : state) {
    a.Advance();
    // Serialize (the store's layout: positions, then length-prefixed
    // strings); the CRC is left out, which only flatters this variant.
    const ReplicaPosition& p = a.pos;
    char* o = &buf[0];
    auto put = [&o](absl::string_view s) {
      uint32_t n = static_cast<uint32_t>(s.size());
      std::memcpy(o, &n, 4);
      std::memcpy(o + 4, s.data(), s.size());
      o += 4 + s.size();
    };
    std::memcpy(o, &p.source_pos, 8);
    std::memcpy(o + 8, &p.relay_pos, 8);
    o += 16;
    put(p.source_file);
    put(p.relay_file);
    put(p.executed_gtids);
    for (const auto& kv : p.fields) {
      put(kv.first);
      put(kv.second);
    }
    bool sync = sync_every > 0 && ++since_sync >= sync_every;
    if (sync) since_sync = 0;
    auto f = fs->OpenWritable(tmp, io::OpenMode::kCreateOrTruncate);
    absl::Status s = f.status();
    if (s.ok()) s = (*f)->Write(0, absl::string_view(buf.data(), o - buf.data()));
    ++pwrites;
    if (s.ok() && sync) s = (*f)->Sync();
    if (f.ok()) {
      absl::Status c = (*f)->Close();
      if (s.ok()) s = c;
    }
    if (s.ok()) s = fs->Rename(tmp, path);
    if (s.ok() && sync) {
      s = (*d)->Sync();
      ++syncs;
    }
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  SetCounters(state, pwrites, syncs, timing, 0, 0, NowNs() - t0);
  RemoveDir(dir);
}

BENCHMARK(BM_Batched)
    ->ArgNames({"sync_every", "write_every_update"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({1000, 1})
    ->Args({1000, 0})
    ->UseRealTime();
BENCHMARK(BM_FieldByField)
    ->ArgNames({"sync_every"})
    ->Arg(0)
    ->Arg(1)
    ->Arg(1000)
    ->UseRealTime();
BENCHMARK(BM_RenameStore)
    ->ArgNames({"sync_every"})
    ->Arg(0)
    ->Arg(1)
    ->Arg(1000)
    ->UseRealTime();

// The environment, in the benchmark's context output.
struct Environment {
  Environment() {
    struct utsname u;
    if (uname(&u) == 0) benchmark::AddCustomContext("kernel", u.release);
    std::string dir = BaseDir();
    struct statfs sf;
    if (statfs(dir.c_str(), &sf) == 0) {
      char magic[32];
      std::snprintf(magic, sizeof(magic), "0x%lx",
                    static_cast<unsigned long>(sf.f_type));
      benchmark::AddCustomContext("dir", dir);
      benchmark::AddCustomContext("fs_magic", magic);  // 0xef53: ext2/3/4
    }
#ifdef NDEBUG
    benchmark::AddCustomContext("build", "NDEBUG (optimized)");
#else
    benchmark::AddCustomContext("build", "assertions ON: not a release build");
#endif
  }
} environment;

}  // namespace
}  // namespace binlog
