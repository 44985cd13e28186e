// commit_bench's system adapters: the binlog, RocksDB, LevelDB and the two
// hand-written baselines, behind commit_bench::System (commit_bench.h).

#include "benchmarks/commit_bench.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>




#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmarks/baselines.h"
#include "benchmarks/workload.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "io/codec.h"
#include "io/file_system.h"
#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/version.h"
#include "sync/ack_tracker.h"


namespace commit_bench {
namespace {

// ---------------------------------------------------------------------------
// Inputs

// Text that looks like SQL literals, so nothing compresses to nothing.
std::string RandomText(size_t n, std::mt19937_64* rng) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,'()";
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) {
    s[i] = kAlphabet[(*rng)() % (sizeof(kAlphabet) - 1)];
  }
  return s;
}

// xorshift64*: per-thread keys without a shared generator.
struct FastRng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

// A random 8-16 byte printable key.
size_t RandomKey(FastRng* rng, char key[16]) {
  const uint64_t a = rng->Next();
  const uint64_t b = rng->Next();
  const size_t len = 8 + static_cast<size_t>(a % 9);
  for (size_t i = 0; i < len; ++i) {
    key[i] = static_cast<char>('0' + ((b >> (4 * i)) ^ (a >> (i + 8))) % 75);
  }
  return len;
}

// The binlog transaction a committer builds: Anonymous_gtid (or, with
// `assigned`, a CommitGtid the log fills), Query BEGIN, Rows_query whose
// body is a length byte plus `text`, Xid.
void BuildTransaction(binlog::TransactionBuffer* txn, uint32_t thread,
                      uint64_t seq, absl::string_view text,
                      bool assigned = false, bool mariadb = false) {
  const uint32_t now = static_cast<uint32_t>(::time(nullptr));
  txn->Clear();
  if (mariadb && assigned) {
    txn->AppendMariaCommitGtid(now, kServerId, binlog::CommitGtid());
  } else if (mariadb) {
    // The caller's own MariaDB Gtid event: seq_no, domain 0,
    // FL_TRANSACTIONAL | FL_ALLOW_PARALLEL, 6 bytes of padding.
    char* g = txn->AppendEvent(binlog::kMariaGtidEvent, kServerId, now,
                               binlog::kFlagSuppressUse, 19);
    std::memset(g, 0, 19);
    binlog::StoreLe64(g, seq);
    g[12] = 0x0C;
  } else if (assigned) {
    txn->AppendCommitGtid(now, kServerId, binlog::CommitGtid());
  } else {
    binlog::AppendAnonymousGtid(txn, now, kServerId, /*last_committed=*/0,
                                static_cast<int64_t>(seq));
  }
  // MariaDB: the Gtid event takes the place of BEGIN.
  if (!mariadb) binlog::AppendQuery(txn, now, kServerId, thread, "", "BEGIN");
  // MySQL marks Rows_query ignorable; the length byte is stored mod 256.
  char* body = txn->AppendEvent(binlog::kRowsQueryEvent, kServerId, now,
                                binlog::kFlagIgnorable, text.size() + 1);
  body[0] = static_cast<char>(text.size() & 0xff);
  std::memcpy(body + 1, text.data(), text.size());
  binlog::AppendXid(txn, now, kServerId, seq);
}


size_t TransactionBytes(size_t payload, bool mariadb = false) {
  binlog::TransactionBuffer txn(/*checksums=*/true);
  BuildTransaction(&txn, 0, 1, std::string(payload - 1, 'x'), false, mariadb);
  return txn.size();
}

}  // namespace

class BinlogCommitter : public Committer {
 public:
  BinlogCommitter(binlog::Binlog* log, int thread, size_t payload,
                  uint64_t seed, const PointConfig& p, const RunConfig& run)
      : log_(log), assigned_(p.gtid == "assigned"),
        mariadb_(p.flavor == "mariadb"),
        thread_(static_cast<uint32_t>(thread)) {
    std::mt19937_64 rng(seed);
    text_ = RandomText(payload - 1, &rng);
    seq_ = static_cast<uint64_t>(thread) << 40;
    binlog::bench::WorkloadOptions wo;
    if (binlog::bench::ParseWorkload(p.workload, &wo.kind) &&
        wo.kind != binlog::bench::Workload::kRandom) {
      wo.seed = seed;
      wo.server_id = kServerId;
      wo.min_rows = run.min_rows;
      wo.max_rows = run.max_rows;
      gen_ = std::make_unique<binlog::bench::WorkloadGenerator>(wo);
    }
  }
  void Prepare() override {
    if (gen_ != nullptr) {
      gen_->Next(&txn_);
    } else {
      BuildTransaction(&txn_, thread_, ++seq_, text_, assigned_, mariadb_);
      // A server captures the commit-order clock at its engine prepare.
      if (assigned_ && !mariadb_) txn_.set_commit_parent(log_->CommitClock());
    }
  }
  absl::Status Commit() override {
    absl::StatusOr<binlog::CommitPosition> pos = log_->Commit(&txn_);
    if (!pos.ok()) return pos.status();
    built_bytes += txn_.appended_data().size();
    written_bytes += txn_.size();  // Gtid + payload when compressed
    ++commits;
    new_file_ = file_ != 0 && pos->file_number != file_;
    file_ = pos->file_number;
    return absl::OkStatus();
  }
  bool NewFile() const override { return new_file_; }

 private:
  binlog::Binlog* log_;
  uint64_t file_ = 0;
  bool new_file_ = false;
  bool assigned_ = false;
  bool mariadb_ = false;
  uint32_t thread_;
  uint64_t seq_;
  std::string text_;
  binlog::TransactionBuffer txn_{/*checksums=*/true};
  std::unique_ptr<binlog::bench::WorkloadGenerator> gen_;  // sysbench, wide

 public:
  // This thread's totals (read after it is joined).
  uint64_t built_bytes = 0;
  uint64_t written_bytes = 0;
  uint64_t commits = 0;
};

class BinlogSystem : public System {
 public:
  BinlogSystem(const PointConfig& p, const RunConfig& run)
      : p_(p), run_(run) {}
  ~BinlogSystem() override {
    StopReaders().IgnoreError();  // errors were reported by Close()
    if (log_ != nullptr) log_->Close().IgnoreError();  // idem
    StopReplica().IgnoreError();  // idem
  }

  absl::Status Open(const std::string& dir) override {
    binlog::Options options;
    options.max_file_size = run_.max_file_size;
    if (p_.sync_every == 0) {
      options.sync_policy = binlog::SyncPolicy::kNever;
    } else if (p_.sync_every == 1) {
      options.sync_policy = binlog::SyncPolicy::kEveryGroup;
    } else {
      options.sync_policy = binlog::SyncPolicy::kEveryNGroups;
      options.sync_every_n = p_.sync_every;
    }
    options.preallocate = PreallocModeOf(p_.prealloc);
    options.zero_ahead = p_.zero_ahead;
    if (p_.reader_ring_bytes >= 0) {
      options.reader_ring_bytes = static_cast<size_t>(p_.reader_ring_bytes);
    }
    binlog::io::ParseCodec(p_.compression, &options.compression);
    if (p_.flavor == "mariadb") options.flavor = binlog::LogFlavor::kMariaDB;
    if (p_.dependency == "commit_order") {
      options.dependency_tracking = binlog::Options::DependencyTracking::kCommitOrder;
    } else if (p_.dependency == "writeset") {
      options.dependency_tracking = binlog::Options::DependencyTracking::kWriteset;
    }
    options.background_rotation = p_.background_rotation == "on";
    if (p_.encryption == "on") {
      options.encryption = true;
      options.keyring = &keyring_;
    }
    if (p_.gtid == "assigned") {
      options.server_uuid =
          *binlog::Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
    }
    options.compression_level = run_.compression_level;
    options.compression_threshold =
        run_.compression_threshold;
    options.reader_wake_coalesce_us = static_cast<uint32_t>(p_.reader_wake_us);
    options.reader_wakeups_per_second =
        static_cast<uint32_t>(p_.reader_wakeups_per_s);
    if (p_.readers > 0) {
      // Reader lag: when each group was published. Without readers the
      // writer runs without a callback.
      marks_ = std::make_unique<GroupMarks>();
    }
    if (p_.ack == "semisync") {
      binlog::sync::AckTrackerOptions ao;
      ao.required_acks = 1;
      ao.timeout = absl::Milliseconds(p_.ack_timeout_ms);
      ao.async_on_timeout = true;
      acks_ = std::make_unique<binlog::sync::AckTracker>(ao);
      // The replica must see every group at once: its ack is on the
      // commit path.
      options.reader_wake_coalesce_us = 0;
    }
    if (marks_ != nullptr || acks_ != nullptr) {
      GroupMarks* marks = marks_.get();
      binlog::sync::AckTracker* acks = acks_.get();
      options.on_group_commit = [marks, acks](const binlog::GroupCommitInfo& g) {
        if (marks != nullptr) {
          marks->Record(g.group_seq, GroupMarks::Key(g.file_number, g.end),
                        NowNs());
        }
        if (acks != nullptr) {
          // AFTER_SYNC: once per group, for its last position. A timeout
          // is counted by the tracker (ack_timeouts); the group goes on.
          acks->WaitForAck({g.file_number, g.end}).IgnoreError();
        }
      };
    }
    absl::StatusOr<std::unique_ptr<binlog::Binlog>> log =
        binlog::Binlog::Open(dir, "binlog", options);
    if (!log.ok()) return log.status();
    log_ = std::move(*log);
    if (acks_ != nullptr) {
      // Before any commit (a prefill's too): from the start of the log.
      absl::StatusOr<std::unique_ptr<binlog::Reader>> r =
          log_->NewReader(binlog::ReaderOptions());
      if (!r.ok()) return r.status();
      replica_reader_ = std::move(*r);
      replica_ = std::thread(&BinlogSystem::ReplicaLoop, this);
    }
    if (run_.prefill) return Prefill();
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int thread, uint64_t seed) override {
    auto c = std::make_unique<BinlogCommitter>(log_.get(), thread, p_.payload,
                                               seed, p_, run_);
    committers_.push_back(c.get());
    return c;
  }

  void CompressionStats(double* ratio, double* built) const override {
    uint64_t b = 0, w = 0, n = 0;
    for (const BinlogCommitter* c : committers_) {
      b += c->built_bytes;
      w += c->written_bytes;
      n += c->commits;
    }
    if (w > 0) *ratio = static_cast<double>(b) / static_cast<double>(w);
    if (n > 0 && p_.workload != "random") {
      *built = static_cast<double>(b) / static_cast<double>(n);
    }
  }
  // The committers NewCommitter made (RunPoint owns them; read after the
  // commit threads are joined).
  std::vector<const BinlogCommitter*> committers_;

  Counters counters() const override {
    const binlog::LogStats s = log_->stats();
    Counters c;
    c.commits = static_cast<int64_t>(s.commits);
    c.groups = static_cast<int64_t>(s.groups);
    c.fsyncs = static_cast<int64_t>(s.fsyncs);
    c.fsync_micros = static_cast<int64_t>(s.fsync_micros);
    c.bytes = static_cast<int64_t>(s.bytes_written);
    c.rotations = static_cast<int64_t>(s.rotations);
    c.files_preallocated = static_cast<int64_t>(s.files_preallocated);
    c.rotations_from_spare = static_cast<int64_t>(s.rotations_from_spare);
    c.rotations_waited = static_cast<int64_t>(s.rotations_waited);
    if (acks_ != nullptr) {
      const binlog::sync::AckTracker::Stats a = acks_->stats();
      c.ack_waits = static_cast<int64_t>(a.waits);
      c.ack_timeouts = static_cast<int64_t>(a.timeouts);
      c.ack_async_waits = static_cast<int64_t>(a.waits_async);
    }
    return c;
  }

  absl::Status StartReaders(int n) override {
    readers_ = std::vector<ReaderSlot>(static_cast<size_t>(n));
    // From the current end: a prefill's transactions are not read, and the
    // first group a reader expects is the next one.
    const binlog::CommitPosition end = log_->VisibleEnd();
    binlog::ReaderOptions ro;
    ro.start_file = end.file_number;
    ro.start_offset = end.end;
    const uint64_t next_seq = marks_ != nullptr ? marks_->last_seq() + 1 : 1;
    for (ReaderSlot& slot : readers_) {
      absl::StatusOr<std::unique_ptr<binlog::Reader>> r = log_->NewReader(ro);
      if (!r.ok()) return r.status();
      slot.reader = std::move(*r);
      slot.lag.StartAt(next_seq);
    }
    for (ReaderSlot& slot : readers_) {
      slot.thread = std::thread(&BinlogSystem::ReadLoop, this, &slot);
    }
    return absl::OkStatus();
  }

  uint64_t ReaderCpuNs() const override {
    uint64_t ns = 0;
    for (const ReaderSlot& slot : readers_) {
      clockid_t id;
      struct timespec ts;
      if (::pthread_getcpuclockid(
              const_cast<std::thread&>(slot.thread).native_handle(), &id) == 0 &&
          ::clock_gettime(id, &ts) == 0) {
        ns += static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
              static_cast<uint64_t>(ts.tv_nsec);
      }
    }
    return ns;
  }

  uint64_t ReaderBytes() const override {
    uint64_t total = 0;
    for (const ReaderSlot& slot : readers_) {
      total += slot.bytes.load(std::memory_order_relaxed);
    }
    return total;
  }

  void SetMeasuring(bool on) override {
    measuring_.store(on, std::memory_order_relaxed);
  }

  // After Close() (the reader threads are joined).
  uint64_t ReaderLag(LagHistogram* h) const override {
    uint64_t overruns = 0;
    for (const ReaderSlot& slot : readers_) {
      h->Merge(slot.lag.lag());
      overruns += slot.lag.overrun() ? 1 : 0;
    }
    return overruns;
  }

  absl::Status Close() override {
    absl::Status s = StopReaders();
    absl::Status c = log_->Close();
    absl::Status r = StopReplica();
    if (!s.ok()) return s;
    return c.ok() ? r : c;
  }

  size_t commit_bytes() const override {
    return TransactionBytes(p_.payload, p_.flavor == "mariadb");
  }

 private:
  static binlog::io::PreallocMode PreallocModeOf(const std::string& name) {
    if (name == "none") return binlog::io::PreallocMode::kNone;
    if (name == "fallocate") return binlog::io::PreallocMode::kFallocate;
    return binlog::io::PreallocMode::kZeroFill;
  }

  // Open() fallocates the first file; later files come from the
  // preallocator, which prepares the next spare once the active file is
  // half full. Fill the first file past half (the commit after the half
  // asks for the spare), wait for the spare and rotate onto it, so that the
  // run starts at the head of a preallocated file with no preparation under
  // way; the next spare is then prepared during the run, when this file is
  // half full, as in production. With prealloc none the same fill and
  // rotation happen, without waiting.
  absl::Status Prefill() {
    const uint64_t max = run_.max_file_size;
    const size_t chunk = static_cast<size_t>(
        std::max<uint64_t>(1024, std::min<uint64_t>(1 << 20, max / 8)));
    std::mt19937_64 rng(42);
    const std::string text = RandomText(chunk, &rng);
    binlog::TransactionBuffer txn(/*checksums=*/true);
    uint64_t seq = 0;
    bool past_half = false;
    for (;;) {
      BuildTransaction(&txn, 0, ++seq, text);
      absl::StatusOr<binlog::CommitPosition> pos = log_->Commit(&txn);
      if (!pos.ok()) return pos.status();
      if (past_half) break;
      past_half = pos->end >= max / 2;
    }
    const bool wait = p_.prealloc != "none";
    absl::Status s = wait ? WaitPreallocated(1) : absl::OkStatus();
    if (s.ok()) s = log_->Rotate();
    return s;
  }

  absl::Status WaitPreallocated(uint64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    while (log_->stats().files_preallocated < n) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "prefill: the preallocator made ",
            log_->stats().files_preallocated, " spare files in 120 s, not ",
            n));
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return absl::OkStatus();
  }

  // One tailing reader. bytes: written (relaxed) only by its reader thread,
  // read by the main thread for the snapshots; alignas keeps the readers'
  // counters off each other's cache lines. The rest is the reader thread's
  // own until it is joined.
  struct alignas(64) ReaderSlot {
    std::atomic<uint64_t> bytes{0};
    std::unique_ptr<binlog::Reader> reader;
    std::thread thread;
    absl::Status status;
    ReaderLagSampler lag;  // reader_lag_*
  };

  void Observe(ReaderSlot* slot, uint64_t key, bool txn_end) {
    slot->lag.Observe(*marks_, key, txn_end,
                      measuring_.load(std::memory_order_relaxed));
  }
  void ResolveAll(ReaderSlot* slot) {
    slot->lag.ResolveAll(*marks_, measuring_.load(std::memory_order_relaxed));
  }

  void ReadLoop(ReaderSlot* slot) {
    binlog::Event ev;
    binlog::EventBatch batch;
    const bool use_batch = p_.reader_api == "batch";
    uint64_t bytes = 0;
    const bool lag = marks_ != nullptr;
    while (!stop_readers_.load(std::memory_order_relaxed)) {
      absl::Status s;
      if (use_batch) {
        // What a sender does with a batch: frame each event (here: sum
        // the sizes) and forward the span; the lag is observed at the
        // batch's end, which the writer published as a group end.
        s = slot->reader->NextBatch(&batch);
        if (s.ok()) {
          bytes += batch.data.size();
          slot->bytes.store(bytes, std::memory_order_relaxed);
          if (lag && !slot->lag.overrun()) {
            Observe(slot, GroupMarks::Key(batch.file_number, batch.end_offset()),
                    /*txn_end=*/true);
          }
          continue;
        }
      } else {
        s = slot->reader->Next(&ev);
      }
      if (s.ok()) {
        bytes += ev.data.size();
        slot->bytes.store(bytes, std::memory_order_relaxed);
        // Only a transaction's last event can end a group, so the lag is
        // observed there (every transaction commit_bench writes ends with
        // an Xid, a compressed payload's inner one included): a look at the writer's group marks per event
        // (a cache miss at the tail) was the harness's cost, not the
        // reader's. A group whose end was read before it was recorded is
        // resolved from the pending read's own time, as before.
        if (lag && ev.header.type == binlog::kXidEvent &&
            !slot->lag.overrun()) {
          Observe(slot, GroupMarks::Key(ev.file_number, ev.end_offset),
                  /*txn_end=*/true);
        }
        continue;
      }
      if (!absl::IsOutOfRange(s)) {
        slot->status = s;
        return;
      }
      if (lag) ResolveAll(slot);
      s = slot->reader->WaitForMore(absl::Now() + absl::Milliseconds(100));
      if (absl::IsCancelled(s)) return;  // the log was closed
      if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
        slot->status = s;
        return;
      }
      if (lag) ResolveAll(slot);
    }
  }

  // The simulated semi-sync replica: read what is there, wait the ack
  // delay, acknowledge the end of what was read, wait for more.
  void ReplicaLoop() {
    // Timer slack 1 us for this thread: the default 50 us would turn a
    // 100 us ack delay into about 150 us.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    binlog::Event ev;
    const absl::Duration delay = absl::Microseconds(p_.ack_delay_us);
    for (;;) {
      bool got = false;
      binlog::sync::AckPosition last;
      absl::Status s;
      while ((s = replica_reader_->Next(&ev)).ok()) {
        got = true;
        last = {ev.file_number, ev.end_offset};
      }
      if (!absl::IsOutOfRange(s)) {
        replica_status_ = s;
        return;
      }
      if (got) {
        if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
        s = acks_->Ack(/*replica_id=*/1, last);
        if (!s.ok()) {
          replica_status_ = s;
          return;
        }
      }
      s = replica_reader_->WaitForMore(absl::Now() + absl::Milliseconds(100));
      if (absl::IsCancelled(s)) return;  // the log was closed
      if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
        replica_status_ = s;
        return;
      }
    }
  }

  // After the log is closed (the replica's reader then ends).
  absl::Status StopReplica() {
    if (acks_ != nullptr) acks_->Shutdown();
    if (replica_.joinable()) replica_.join();
    if (replica_status_.ok()) return absl::OkStatus();
    return absl::Status(replica_status_.code(),
                        absl::StrCat("replica: ", replica_status_.message()));
  }

  absl::Status StopReaders() {
    stop_readers_.store(true, std::memory_order_relaxed);
    absl::Status first;
    for (ReaderSlot& slot : readers_) {
      if (slot.thread.joinable()) slot.thread.join();
      if (first.ok() && !slot.status.ok()) {
        first = absl::Status(slot.status.code(),
                             absl::StrCat("reader: ", slot.status.message()));
      }
    }
    return first;
  }

  const PointConfig p_;
  const RunConfig run_;
  std::unique_ptr<GroupMarks> marks_;  // readers > 0 only
  // --ack=semisync only. Declared before log_: the log's callback uses it.
  std::unique_ptr<binlog::sync::AckTracker> acks_;
  binlog::MemoryKeyring keyring_;  // --encryption=on; outlives log_
  std::unique_ptr<binlog::Binlog> log_;
  std::unique_ptr<binlog::Reader> replica_reader_;
  std::thread replica_;
  absl::Status replica_status_;  // the replica thread's, read after join
  std::vector<ReaderSlot> readers_;
  std::atomic<bool> stop_readers_{false};
  std::atomic<bool> measuring_{false};
};

// --- rocksdb ----------------------------------------------------------------

// A synced Put of a random 8-16 byte key and the payload: the committer of
// both key-value peers, whose Put, WriteOptions and Slice have one shape.
template <typename DB, typename WriteOptions, typename Slice>
class KvCommitter : public Committer {
 public:
  KvCommitter(DB* db, bool sync, size_t payload, uint64_t seed,
              const char* name)
      : db_(db), name_(name), rng_{seed | 1} {
    std::mt19937_64 rng(seed);
    value_ = RandomText(payload, &rng);
    options_.sync = sync;
  }
  void Prepare() override { key_len_ = RandomKey(&rng_, key_); }
  absl::Status Commit() override {
    auto s = db_->Put(options_, Slice(key_, key_len_), value_);
    if (!s.ok()) {
      return absl::InternalError(absl::StrCat(name_, " Put: ", s.ToString()));
    }
    return absl::OkStatus();
  }

 private:
  DB* db_;
  const char* name_;
  WriteOptions options_;
  FastRng rng_;
  char key_[16];
  size_t key_len_ = 0;
  std::string value_;
};

using RocksCommitter =
    KvCommitter<rocksdb::DB, rocksdb::WriteOptions, rocksdb::Slice>;

class RocksSystem : public System {
 public:
  explicit RocksSystem(const PointConfig& p) : p_(p) {}

  absl::Status Open(const std::string& dir) override {
    rocksdb::Options o;
    o.create_if_missing = true;
    // Keep memtable flushes out of a 2 s run.
    o.write_buffer_size = 256 << 20;
    o.max_write_buffer_number = 4;
    o.compression = rocksdb::kNoCompression;  // nobody else compresses
    // Tickers only (per-core counters): write groups and WAL syncs.
    o.statistics = rocksdb::CreateDBStatistics();
    o.statistics->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
    stats_ = o.statistics;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, dir, &db);
    if (!s.ok()) return absl::InternalError("rocksdb open: " + s.ToString());
    db_.reset(db);
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<RocksCommitter>(db_.get(), p_.sync_every != 0,
                                            p_.payload, seed, "rocksdb");
  }

  // A write group's leader counts WRITE_DONE_BY_SELF once and its followers
  // as WRITE_DONE_BY_OTHER; the WAL is synced once per group
  // (WAL_FILE_SYNCED).
  Counters counters() const override {
    Counters c;
    const int64_t self =
        static_cast<int64_t>(stats_->getTickerCount(rocksdb::WRITE_DONE_BY_SELF));
    const int64_t other = static_cast<int64_t>(
        stats_->getTickerCount(rocksdb::WRITE_DONE_BY_OTHER));
    c.commits = self + other;
    c.groups = self;
    c.fsyncs =
        static_cast<int64_t>(stats_->getTickerCount(rocksdb::WAL_FILE_SYNCED));
    return c;
  }

  absl::Status Close() override {
    rocksdb::Status s = db_->Close();
    db_.reset();
    if (!s.ok()) return absl::InternalError("rocksdb close: " + s.ToString());
    return absl::OkStatus();
  }

  std::string version() const override {
    return absl::StrCat("rocksdb ", ROCKSDB_MAJOR, ".", ROCKSDB_MINOR, ".",
                        ROCKSDB_PATCH);
  }
  size_t commit_bytes() const override { return p_.payload + 12; }

 private:
  const PointConfig p_;
  std::shared_ptr<rocksdb::Statistics> stats_;
  std::unique_ptr<rocksdb::DB> db_;
};

// --- leveldb ----------------------------------------------------------------

using LevelCommitter =
    KvCommitter<leveldb::DB, leveldb::WriteOptions, leveldb::Slice>;

class LevelSystem : public System {
 public:
  explicit LevelSystem(const PointConfig& p) : p_(p) {}

  absl::Status Open(const std::string& dir) override {
    leveldb::Options o;
    o.create_if_missing = true;
    o.write_buffer_size = 256 << 20;
    o.compression = leveldb::kNoCompression;  // as for rocksdb
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(o, dir, &db);
    if (!s.ok()) return absl::InternalError("leveldb open: " + s.ToString());
    db_.reset(db);
    return absl::OkStatus();
  }

  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<LevelCommitter>(db_.get(), p_.sync_every != 0,
                                            p_.payload, seed, "leveldb");
  }

  // LevelDB groups writers too (DBImpl::BuildBatchGroup) but exposes no
  // counters for it.
  Counters counters() const override { return Counters(); }

  absl::Status Close() override {
    db_.reset();  // LevelDB has no Close(); the destructor waits for work
    return absl::OkStatus();
  }

  std::string version() const override {
    return absl::StrCat("leveldb ", leveldb::kMajorVersion, ".",
                        leveldb::kMinorVersion);
  }
  size_t commit_bytes() const override { return p_.payload + 12; }

 private:
  const PointConfig p_;
  std::unique_ptr<leveldb::DB> db_;
};

// --- naive, naive-group -----------------------------------------------------

template <typename Log>
class RawCommitter : public Committer {
 public:
  RawCommitter(Log* log, size_t bytes, uint64_t seed) : log_(log) {
    std::mt19937_64 rng(seed);
    data_ = RandomText(bytes, &rng);
  }
  absl::Status Commit() override { return log_->Commit(data_); }

 private:
  Log* log_;
  std::string data_;
};

template <typename Log>
class RawSystem : public System {
 public:
  RawSystem(const PointConfig& p, const RunConfig& run)
      : p_(p),
        bytes_(TransactionBytes(p.payload)),
        mode_(p.prealloc == "none"        ? binlog_bench::Prealloc::kNone
              : p.prealloc == "fallocate" ? binlog_bench::Prealloc::kFallocate
                                          : binlog_bench::Prealloc::kZeroFill),
        prealloc_bytes_(mode_ == binlog_bench::Prealloc::kNone
                            ? 0
                            : RawPreallocBytes(run.max_file_size)) {}

  absl::Status Open(const std::string& dir) override {
    absl::StatusOr<std::unique_ptr<Log>> log =
        Log::Open(binlog::io::JoinPath(dir, "log"), p_.sync_every, mode_,
                  prealloc_bytes_);
    if (!log.ok()) return log.status();
    log_ = std::move(*log);
    return absl::OkStatus();
  }
  std::unique_ptr<Committer> NewCommitter(int, uint64_t seed) override {
    return std::make_unique<RawCommitter<Log>>(log_.get(), bytes_, seed);
  }
  Counters counters() const override {
    const binlog_bench::BaselineStats s = log_->stats();
    Counters c;
    c.commits = static_cast<int64_t>(s.commits);
    c.groups = static_cast<int64_t>(s.groups);
    c.fsyncs = static_cast<int64_t>(s.fsyncs);
    c.fsync_micros = static_cast<int64_t>(s.fsync_micros);
    c.bytes = static_cast<int64_t>(s.bytes);
    return c;
  }
  absl::Status Close() override { return log_->Close(); }
  size_t commit_bytes() const override { return bytes_; }
  uint64_t prealloc_bytes() const override { return prealloc_bytes_; }

 private:
  const PointConfig p_;
  const size_t bytes_;
  const binlog_bench::Prealloc mode_;
  const uint64_t prealloc_bytes_;
  std::unique_ptr<Log> log_;
};

std::unique_ptr<System> MakeSystem(const PointConfig& p, const RunConfig& run) {
  if (p.system == "binlog") return std::make_unique<BinlogSystem>(p, run);
  if (p.system == "rocksdb") return std::make_unique<RocksSystem>(p);
  if (p.system == "leveldb") return std::make_unique<LevelSystem>(p);
  if (p.system == "naive") {
    return std::make_unique<RawSystem<binlog_bench::NaiveLog>>(p, run);
  }
  if (p.system == "naive-group") {
    return std::make_unique<RawSystem<binlog_bench::GroupCommitLog>>(p, run);
  }
  return nullptr;
}

}  // namespace commit_bench
