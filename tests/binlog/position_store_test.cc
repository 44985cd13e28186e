// PositionStore: round trip of every field, newest valid slot wins, corrupt
// or truncated stores are DataLoss naming the file, sync every N updates or
// T ms, sticky errors, no allocation per update, and power-loss cuts at
// every write (dropping or tearing every unsynced write) always reopen to
// the last durable record or a newer complete one.
//
// The power-loss file system here (PowerLossFs) is local to this test: a
// project-wide fault-injecting file system is being written separately.
// It models lost and torn file data only, not lost directory entries.

#include "binlog/position_store.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

// Allocation counter for the no-allocation promise of Update().
namespace {
std::atomic<long> g_allocations{0};
}  // namespace
// noinline: GCC's -Wmismatched-new-delete fires when it inlines free() into
// a caller that got the pointer from operator new.
__attribute__((noinline)) void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace binlog {
namespace {

using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

// --- PowerLossFs ---------------------------------------------------------

// Records, per file, the content at its last Sync and every write (and
// truncate) since. PowerLoss() puts each such file back to its synced
// content and then re-applies the unsynced operations as a power cut may
// leave them: none of them (kDrop) or each one's random prefix (kTear).
// FreezeAfterWrites(k) lets the k-th write through and then fails every
// later mutating call ("injected: power cut"), so the code under test stops
// where the power went.
class PowerLossFs : public io::FileSystemWrapper {
 public:
  enum class Mode { kDrop, kTear };

  explicit PowerLossFs(io::FileSystem* target) : FileSystemWrapper(target) {}

  void FreezeAfterWrites(int k) { freeze_after_ = k; }
  void Freeze() { frozen_ = true; }
  void FailSyncs(bool fail) { fail_syncs_ = fail; }
  void FailWrites(bool fail) { fail_writes_ = fail; }
  void Unfreeze() {
    frozen_ = false;
    freeze_after_ = -1;
  }
  bool frozen() const { return frozen_; }
  int writes() const { return writes_; }
  int syncs() const { return syncs_; }
  int sync_attempts() const { return sync_attempts_; }

  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    if (frozen_) return Injected("open", path);
    bool existed = target()->Exists(path).value_or(false);
    auto f = target()->OpenWritable(path, mode, permissions);
    if (!f.ok()) return f.status();
    State& st = files_[path];
    if (!st.tracked) {
      st.tracked = true;
      // A file that existed before we saw it is taken as durable.
      st.synced = existed ? testing_util::ReadFile(path) : std::string();
    }
    if (mode == io::OpenMode::kCreateOrTruncate) {
      st.pending.push_back(Op{true, 0, std::string()});
    }
    return std::unique_ptr<io::WritableFile>(
        new File(this, path, std::move(*f)));
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (frozen_) return Injected("rename", from);
    BINLOG_RETURN_IF_ERROR(target()->Rename(from, to));
    auto it = files_.find(from);
    if (it != files_.end()) {
      files_[to] = std::move(it->second);
      files_.erase(it);
    } else {
      files_.erase(to);
    }
    return absl::OkStatus();
  }

  // The power cut: see the class comment.
  void PowerLoss(Mode mode, std::mt19937* rng) {
    for (auto& [path, st] : files_) {
      if (st.pending.empty()) continue;
      std::string content = st.synced;
      for (const Op& op : st.pending) {
        if (op.truncate) {
          if (mode == Mode::kTear && (*rng)() % 2 == 0) content.resize(op.offset);
          continue;
        }
        if (mode == Mode::kDrop) continue;
        size_t keep = (*rng)() % (op.data.size() + 1);
        if (content.size() < op.offset + keep) content.resize(op.offset + keep);
        content.replace(op.offset, keep, op.data.substr(0, keep));
      }
      testing_util::WriteFile(path, content);
      st.synced = content;
      st.pending.clear();
    }
    frozen_ = false;
    freeze_after_ = -1;
  }

 private:
  struct Op {
    bool truncate;
    uint64_t offset;  // new size for a truncate
    std::string data;
  };
  struct State {
    bool tracked = false;
    std::string synced;
    std::vector<Op> pending;
  };

  class File : public io::WritableFileWrapper {
   public:
    File(PowerLossFs* fs, std::string path, std::unique_ptr<io::WritableFile> f)
        : WritableFileWrapper(std::move(f)), fs_(fs), path_(std::move(path)) {}
    absl::Status Write(uint64_t offset, absl::string_view data) override {
      if (fs_->frozen_) return Injected("write", path_);
      if (fs_->fail_writes_) return Injected("write (failing)", path_);
      BINLOG_RETURN_IF_ERROR(target()->Write(offset, data));
      fs_->files_[path_].pending.push_back(
          Op{false, offset, std::string(data)});
      if (++fs_->writes_ == fs_->freeze_after_) fs_->frozen_ = true;
      return absl::OkStatus();
    }
    absl::Status WriteV(uint64_t offset,
                        absl::Span<const absl::string_view> parts) override {
      std::string all;
      for (auto p : parts) all.append(p.data(), p.size());
      return Write(offset, all);
    }
    absl::Status Sync() override {
      fs_->sync_attempts_++;
      if (fs_->frozen_) return Injected("fdatasync", path_);
      if (fs_->fail_syncs_) return Injected("fdatasync (failing)", path_);
      BINLOG_RETURN_IF_ERROR(target()->Sync());
      fs_->MarkSynced(path_);
      return absl::OkStatus();
    }
    absl::Status SyncAll() override { return Sync(); }
    absl::Status Truncate(uint64_t size) override {
      if (fs_->frozen_) return Injected("truncate", path_);
      BINLOG_RETURN_IF_ERROR(target()->Truncate(size));
      fs_->files_[path_].pending.push_back(Op{true, size, std::string()});
      return absl::OkStatus();
    }

   private:
    PowerLossFs* fs_;
    std::string path_;
  };

  static absl::Status Injected(const char* op, const std::string& path) {
    return absl::UnavailableError(absl::StrCat("injected: power cut: ", op,
                                               " ", path));
  }
  void MarkSynced(const std::string& path) {
    syncs_++;
    State& st = files_[path];
    st.synced = testing_util::ReadFile(path);
    st.pending.clear();
  }

  std::map<std::string, State> files_;
  int writes_ = 0;
  int syncs_ = 0;
  int sync_attempts_ = 0;
  int freeze_after_ = -1;
  bool frozen_ = false;
  bool fail_syncs_ = false;
  bool fail_writes_ = false;
};

// --- Helpers ----------------------------------------------------------------

ReplicaPosition MakeRecord(int i) {
  ReplicaPosition r;
  r.source_file = absl::StrCat("binlog.", 100000 + i / 5);
  r.source_pos = 4 + 1000ull * i;
  r.relay_file = absl::StrCat("relay.", 200000 + i / 3);
  r.relay_pos = 4 + 777ull * i;
  // Lengths vary, so newer records are sometimes shorter than older ones.
  r.executed_gtids = absl::StrCat("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-",
                                  1000 + i, std::string(i % 7 * 13, 'x'));
  r.fields = {{"channel", "ch1"},
              {"sql_delay", absl::StrCat(i % 3)},
              {std::string("bin\0key", 7), std::string(i % 4, '\0')}};
  return r;
}

class PositionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::NewTempDir("posstore");
    path_ = dir_ + "/replica.pos";
  }
  PositionStoreOptions Options(io::FileSystem* fs = nullptr) {
    PositionStoreOptions o;
    o.file_system = fs;
    return o;
  }
  std::unique_ptr<PositionStore> OpenOrDie(const PositionStoreOptions& o) {
    auto s = PositionStore::Open(path_, o);
    EXPECT_OK(s.status());
    return s.ok() ? std::move(*s) : nullptr;
  }
  void CorruptByte(uint64_t offset) {
    std::string c = testing_util::ReadFile(path_);
    ASSERT_LT(offset, c.size());
    c[offset] ^= 0x5a;
    testing_util::WriteFile(path_, c);
  }
  void ShrinkTo(size_t size) {
    std::string c = testing_util::ReadFile(path_);
    c.resize(size);
    testing_util::WriteFile(path_, c);
  }

  std::string dir_;
  std::string path_;
};

// --- Format and open ----------------------------------------------------

TEST_F(PositionStoreTest, NewStoreHoldsAnEmptyRecordInTwoSlots) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->recovered(), ReplicaPosition());
  EXPECT_EQ(store->sequence(), 1u);
  EXPECT_EQ(store->durable_sequence(), 1u);
  EXPECT_EQ(store->slot_size(), 4096u);
  EXPECT_EQ(testing_util::ReadFile(path_).size(), 8192u);
  EXPECT_THAT(store->open_note(), HasSubstr("slot 1: empty"));
  EXPECT_FALSE(io::FileSystem::Default()->Exists(path_ + ".tmp").value());
}

// A new store is rw-r----- by default (it was 0644), or file_mode.
TEST_F(PositionStoreTest, NewStoreGetsTheFileMode) {
  const mode_t old_umask = ::umask(022);
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*io::FileSystem::Default()->Permissions(path_), 0640u);
  store.reset();
  path_ = dir_ + "/private.pos";
  PositionStoreOptions o = Options();
  o.file_mode = 0600;
  store = OpenOrDie(o);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*io::FileSystem::Default()->Permissions(path_), 0600u);
  ::umask(old_umask);
}

TEST_F(PositionStoreTest, EveryFieldRoundTrips) {
  ReplicaPosition r = MakeRecord(6);
  r.fields.push_back({"", ""});
  r.fields.push_back({"workers", "16"});
  {
    auto store = OpenOrDie(Options());
    ASSERT_OK(store->Update(r));
    ASSERT_OK(store->Close());
  }
  auto store = OpenOrDie(Options());
  EXPECT_EQ(store->recovered(), r);
  EXPECT_EQ(store->sequence(), 2u);
}

TEST_F(PositionStoreTest, OpenPicksTheNewestValidSlot) {
  {
    auto store = OpenOrDie(Options());
    for (int i = 0; i < 5; ++i) ASSERT_OK(store->Update(MakeRecord(i)));
    ASSERT_OK(store->Close());
  }
  auto store = OpenOrDie(Options());
  EXPECT_EQ(store->recovered(), MakeRecord(4));
  EXPECT_EQ(store->sequence(), 6u);
  EXPECT_EQ(store->open_note(), "");  // both slots valid
}

TEST_F(PositionStoreTest, CorruptNewestSlotFallsBackToTheOther) {
  {
    auto store = OpenOrDie(Options());  // seq 1 in slot 0
    ASSERT_OK(store->Update(MakeRecord(1)));  // seq 2 in slot 1
    ASSERT_OK(store->Update(MakeRecord(2)));  // seq 3 in slot 0
    ASSERT_OK(store->Close());
  }
  CorruptByte(40);  // inside slot 0's payload
  auto store = OpenOrDie(Options());
  EXPECT_EQ(store->recovered(), MakeRecord(1));
  EXPECT_EQ(store->sequence(), 2u);
  EXPECT_THAT(store->open_note(), HasSubstr("slot 0: checksum mismatch"));
  // The next write goes to the bad slot, never over the good one.
  ASSERT_OK(store->Update(MakeRecord(3)));
  ASSERT_OK(store->Close());
  store = OpenOrDie(Options());
  EXPECT_EQ(store->recovered(), MakeRecord(3));
}

TEST_F(PositionStoreTest, BothSlotsCorruptIsDataLossNamingTheFile) {
  {
    auto store = OpenOrDie(Options());
    ASSERT_OK(store->Update(MakeRecord(1)));
    ASSERT_OK(store->Close());
  }
  CorruptByte(40);
  CorruptByte(4096 + 20);
  auto s = PositionStore::Open(path_, Options());
  EXPECT_THAT(s.status(), StatusIs(absl::StatusCode::kDataLoss,
                                   HasSubstr(path_)));
  EXPECT_THAT(s.status().message(), HasSubstr("slot 0: checksum mismatch"));
  EXPECT_THAT(s.status().message(), HasSubstr("slot 1: checksum mismatch"));
}

TEST_F(PositionStoreTest, AllZerosIsDataLossNotAnEmptyRecord) {
  testing_util::WriteFile(path_, std::string(8192, '\0'));
  EXPECT_THAT(PositionStore::Open(path_, Options()).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path_)));
}

TEST_F(PositionStoreTest, ForeignFileIsDataLoss) {
  testing_util::WriteFile(path_, std::string(8192, 'A'));
  EXPECT_THAT(PositionStore::Open(path_, Options()).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad magic")));
}

TEST_F(PositionStoreTest, TruncatedFileIsDataLossNamingTheFile) {
  for (size_t size : {0, 1, 4096, 5000, 8191}) {
    {
      io::FileSystem::Default()->Remove(path_).IgnoreError();  // may not exist
      auto store = OpenOrDie(Options());
      ASSERT_OK(store->Update(MakeRecord(1)));
      ASSERT_OK(store->Close());
    }
    ShrinkTo(size);
    EXPECT_THAT(PositionStore::Open(path_, Options()).status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path_)))
        << size;
  }
}

TEST_F(PositionStoreTest, MissingStoreWithoutCreateIsNotFound) {
  PositionStoreOptions o = Options();
  o.create_if_missing = false;
  EXPECT_THAT(PositionStore::Open(path_, o).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path_)));
}

// ReadDurable, for another process than the writer (a relay following a
// consumer): the record that is certainly durable, the older of two valid
// ones (the newer may not be synced yet), or the only valid one; the file
// is only read (no call that opens it for writing, creates, renames or
// syncs anything), and a missing store is NotFound and stays missing.
class OpenForWriteCountingFs : public io::FileSystemWrapper {
 public:
  OpenForWriteCountingFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    ++changes;
    return io::FileSystemWrapper::OpenWritable(path, mode, permissions);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    ++changes;
    return io::FileSystemWrapper::Rename(from, to);
  }
  absl::Status Remove(const std::string& path) override {
    ++changes;
    return io::FileSystemWrapper::Remove(path);
  }
  absl::StatusOr<std::unique_ptr<io::Directory>> OpenDirectory(
      const std::string& path) override {
    ++changes;
    return io::FileSystemWrapper::OpenDirectory(path);
  }
  int changes = 0;
};

TEST_F(PositionStoreTest, ReadDurableReadsTheOlderOfTwoValidRecordsOnly) {
  OpenForWriteCountingFs fs;
  EXPECT_THAT(PositionStore::ReadDurable(path_, &fs).status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(io::FileSystem::Default()->Exists(path_).value());
  {
    auto store = OpenOrDie(Options());  // seq 1 (empty) in slot 0
    ASSERT_NE(store, nullptr);
    auto r = PositionStore::ReadDurable(path_, &fs);
    ASSERT_OK(r.status());
    EXPECT_EQ(*r, ReplicaPosition());  // the only valid record
    ASSERT_OK(store->Update(MakeRecord(1)));  // seq 2 in slot 1
    r = PositionStore::ReadDurable(path_, &fs);
    ASSERT_OK(r.status());
    EXPECT_EQ(*r, ReplicaPosition());  // seq 1: the older one
    ASSERT_OK(store->Update(MakeRecord(2)));  // seq 3 in slot 0
    r = PositionStore::ReadDurable(path_, &fs);
    ASSERT_OK(r.status());
    EXPECT_EQ(*r, MakeRecord(1));
    ASSERT_OK(store->Close());
  }
  CorruptByte(40);  // slot 0 (seq 3) torn: slot 1 is the only valid one
  auto r = PositionStore::ReadDurable(path_, &fs);
  ASSERT_OK(r.status());
  EXPECT_EQ(*r, MakeRecord(1));
  EXPECT_EQ(fs.changes, 0);
  CorruptByte(4096 + 40);  // neither is valid
  EXPECT_THAT(PositionStore::ReadDurable(path_, &fs).status(),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(fs.changes, 0);
}

TEST_F(PositionStoreTest, BadSlotSizeIsInvalidArgument) {
  PositionStoreOptions o = Options();
  for (uint32_t size : {0u, 1000u, 4097u, 32u << 20}) {
    o.slot_size = size;
    EXPECT_THAT(PositionStore::Open(path_, o).status(),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST_F(PositionStoreTest, LargeSlotsHoldLargeGtidSetsAndKeepTheirSize) {
  PositionStoreOptions o = Options();
  o.slot_size = 3 * 4096;
  ReplicaPosition r = MakeRecord(2);
  r.executed_gtids.assign(10000, 'g');
  {
    auto store = OpenOrDie(o);
    ASSERT_OK(store->Update(r));
    ASSERT_OK(store->Close());
  }
  auto store = OpenOrDie(Options());  // default slot_size: the file's wins
  EXPECT_EQ(store->slot_size(), 3u * 4096);
  EXPECT_EQ(store->recovered(), r);
}

TEST_F(PositionStoreTest, RecordTooLargeIsInvalidArgumentAndStoreStaysUsable) {
  auto store = OpenOrDie(Options());
  ReplicaPosition big = MakeRecord(1);
  big.executed_gtids.assign(5000, 'g');
  EXPECT_GT(PositionStore::RecordSize(big), 4096u);
  EXPECT_THAT(store->Update(big), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(store->sequence(), 1u);
  ASSERT_OK(store->Update(MakeRecord(2)));
  ASSERT_OK(store->Close());
  EXPECT_EQ(OpenOrDie(Options())->recovered(), MakeRecord(2));
}

TEST_F(PositionStoreTest, RecordSizeIsTheSerializedSize) {
  ReplicaPosition r;
  EXPECT_EQ(PositionStore::RecordSize(r), 32u + 16 + 4 * 4);
  r.source_file = "abc";
  r.fields = {{"k", "vv"}};
  EXPECT_EQ(PositionStore::RecordSize(r), 32u + 16 + 4 * 4 + 3 + 8 + 3);
}

// --- Durability policy ------------------------------------------------------

TEST_F(PositionStoreTest, SyncsEveryNUpdatesWithOneWritePerUpdate) {
  PowerLossFs fs(io::FileSystem::Default());
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 3;
  auto store = OpenOrDie(o);
  int w0 = fs.writes(), s0 = fs.syncs();
  for (int i = 0; i < 10; ++i) ASSERT_OK(store->Update(MakeRecord(i)));
  EXPECT_EQ(fs.writes() - w0, 10);
  EXPECT_EQ(fs.syncs() - s0, 3);
  EXPECT_EQ(store->sequence(), 11u);
  EXPECT_EQ(store->durable_sequence(), 10u);  // after the 9th update
  EXPECT_EQ(store->stats().updates, 10u);
  EXPECT_EQ(store->stats().writes, 10u);
  ASSERT_OK(store->Flush());
  EXPECT_EQ(fs.syncs() - s0, 4);
  EXPECT_EQ(store->durable_sequence(), 11u);
  ASSERT_OK(store->Flush());  // nothing new: no fdatasync
  EXPECT_EQ(fs.syncs() - s0, 4);
}

TEST_F(PositionStoreTest, SyncsWhenTheIntervalHasPassed) {
  PowerLossFs fs(io::FileSystem::Default());
  int64_t now_us = 1000000;
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 0;
  o.sync_interval_ms = 5;
  o.now_micros = [&] { return now_us; };
  auto store = OpenOrDie(o);
  int s0 = fs.syncs();
  for (int i = 0; i < 4; ++i) {
    now_us += 1000;  // 1..4 ms after the open's sync
    ASSERT_OK(store->Update(MakeRecord(i)));
  }
  EXPECT_EQ(fs.syncs() - s0, 0);
  now_us += 1000;  // 5 ms
  ASSERT_OK(store->Update(MakeRecord(4)));
  EXPECT_EQ(fs.syncs() - s0, 1);
  EXPECT_EQ(store->durable_sequence(), store->sequence());
  now_us += 4999;
  ASSERT_OK(store->Update(MakeRecord(5)));
  EXPECT_EQ(fs.syncs() - s0, 1);
}

TEST_F(PositionStoreTest, WithoutWriteEveryUpdateOnlySyncPointsWrite) {
  PowerLossFs fs(io::FileSystem::Default());
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 4;
  o.write_every_update = false;
  auto store = OpenOrDie(o);
  int w0 = fs.writes(), s0 = fs.syncs();
  for (int i = 0; i < 10; ++i) ASSERT_OK(store->Update(MakeRecord(i)));
  EXPECT_EQ(fs.writes() - w0, 2);  // one pwrite per flush
  EXPECT_EQ(fs.syncs() - s0, 2);
  ASSERT_OK(store->Close());  // writes and syncs the pending record
  EXPECT_EQ(fs.writes() - w0, 3);
  EXPECT_EQ(OpenOrDie(Options())->recovered(), MakeRecord(9));
}

TEST_F(PositionStoreTest, DefaultMakesEveryUpdateDurable) {
  PowerLossFs fs(io::FileSystem::Default());
  auto store = OpenOrDie(Options(&fs));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(store->Update(MakeRecord(i)));
    EXPECT_EQ(store->durable_sequence(), store->sequence());
  }
}

TEST_F(PositionStoreTest, UpdateDoesNotAllocate) {
  PositionStoreOptions o = Options();
  o.sync_every_updates = 50;
  auto store = OpenOrDie(o);
  std::vector<ReplicaPosition> records;
  for (int i = 0; i < 100; ++i) records.push_back(MakeRecord(i));
  absl::Status s;
  long before = g_allocations.load();
  for (const ReplicaPosition& r : records) {
    s = store->Update(r);
    if (!s.ok()) break;
  }
  long after = g_allocations.load();
  ASSERT_OK(s);
  EXPECT_EQ(after - before, 0);
  EXPECT_EQ(store->stats().syncs, 1u + 2);  // open + 2 batches
}

// --- Errors -------------------------------------------------------------------

TEST_F(PositionStoreTest, FailedSyncPoisonsTheStoreAndIsNeverRetried) {
  PowerLossFs fs(io::FileSystem::Default());
  auto store = OpenOrDie(Options(&fs));
  fs.FailSyncs(true);
  EXPECT_THAT(store->Update(MakeRecord(1)),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("injected")));
  int attempts = fs.sync_attempts();
  fs.FailSyncs(false);
  EXPECT_THAT(store->Update(MakeRecord(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("injected")));
  EXPECT_THAT(store->Flush(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Close(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(fs.sync_attempts(), attempts);
  EXPECT_EQ(store->durable_sequence(), 1u);
}

TEST_F(PositionStoreTest, FailedWritePoisonsTheStore) {
  PowerLossFs fs(io::FileSystem::Default());
  auto store = OpenOrDie(Options(&fs));
  fs.FailWrites(true);
  EXPECT_THAT(store->Update(MakeRecord(1)),
              StatusIs(absl::StatusCode::kUnavailable));
  fs.FailWrites(false);
  EXPECT_THAT(store->Update(MakeRecord(2)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(PositionStoreTest, CallsAfterCloseFail) {
  auto store = OpenOrDie(Options());
  ASSERT_OK(store->Close());
  EXPECT_THAT(store->Update(MakeRecord(1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Flush(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Close(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

// --- Power loss -----------------------------------------------------------

TEST_F(PositionStoreTest, DestructorMakesTheLatestRecordDurable) {
  PowerLossFs fs(io::FileSystem::Default());
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 0;
  {
    auto store = OpenOrDie(o);
    ASSERT_OK(store->Update(MakeRecord(5)));
    EXPECT_EQ(store->durable_sequence(), 1u);
  }
  std::mt19937 rng(1);
  fs.PowerLoss(PowerLossFs::Mode::kDrop, &rng);
  EXPECT_EQ(OpenOrDie(Options())->recovered(), MakeRecord(5));
}

TEST_F(PositionStoreTest, UnsyncedUpdatesAreLostOnPowerLossButNotTheDurableOne) {
  PowerLossFs fs(io::FileSystem::Default());
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 4;
  auto store = OpenOrDie(o);
  for (int i = 0; i < 6; ++i) ASSERT_OK(store->Update(MakeRecord(i)));
  fs.Freeze();    // the power goes now
  store.reset();  // (its Close fails: frozen)
  std::mt19937 rng(2);
  fs.PowerLoss(PowerLossFs::Mode::kDrop, &rng);
  EXPECT_EQ(OpenOrDie(Options())->recovered(), MakeRecord(3));
}

// A record that reached only the page cache before a process crash is
// returned by Open(), which makes it durable before the other slot is
// reused: a later power loss cannot take the store back behind it.
TEST_F(PositionStoreTest, OpenMakesTheRecoveredRecordDurableBeforeReuse) {
  PowerLossFs fs(io::FileSystem::Default());
  PositionStoreOptions o = Options(&fs);
  o.sync_every_updates = 0;
  {
    auto store = OpenOrDie(o);
    ASSERT_OK(store->Update(MakeRecord(1)));  // written, not synced
    fs.Freeze();  // process crash: no more I/O from this process
  }
  fs.Unfreeze();  // but no power loss: the page cache survives
  {
    auto store = OpenOrDie(o);
    ASSERT_EQ(store->recovered(), MakeRecord(1));
    ASSERT_OK(store->Update(MakeRecord(2)));  // goes to the other slot
    fs.Freeze();  // power cut now
  }
  std::mt19937 rng(3);
  fs.PowerLoss(PowerLossFs::Mode::kDrop, &rng);
  EXPECT_EQ(OpenOrDie(Options())->recovered(), MakeRecord(1));
}

struct SweepParam {
  bool write_every_update;
  uint32_t sync_every;
};

class PositionStorePowerLossTest
    : public PositionStoreTest,
      public ::testing::WithParamInterface<SweepParam> {};

// Cuts the power after every write of a workload (creation, updates,
// flushes), once dropping every unsynced write and several times tearing
// them (each keeps a random prefix). The reopened store must hold the last
// durable record the store reported before the cut, or a newer record that
// was completely written, and nothing else.
TEST_P(PositionStorePowerLossTest, EveryCutReopensToTheLastDurableRecord) {
  const SweepParam p = GetParam();
  constexpr int kUpdates = 14;
  auto workload = [&](PositionStore* store, std::map<uint64_t, ReplicaPosition>* history,
                      uint64_t* durable) {
    for (int i = 0; i < kUpdates; ++i) {
      // Recorded before the call: a cut during it may leave it on disk.
      (*history)[store->sequence() + 1] = MakeRecord(i);
      if (!store->Update(MakeRecord(i)).ok()) return;
      *durable = store->durable_sequence();
      if (i == 8) {
        if (!store->Flush().ok()) return;
        *durable = store->durable_sequence();
      }
    }
    if (store->Flush().ok()) *durable = store->durable_sequence();
  };

  // Count the writes of an uncut run.
  int total_writes;
  {
    std::string dir = testing_util::NewTempDir("posstore_count");
    PowerLossFs fs(io::FileSystem::Default());
    PositionStoreOptions o = Options(&fs);
    o.write_every_update = p.write_every_update;
    o.sync_every_updates = p.sync_every;
    auto store = PositionStore::Open(dir + "/replica.pos", o);
    ASSERT_OK(store.status());
    std::map<uint64_t, ReplicaPosition> h;
    uint64_t d = 0;
    workload(store->get(), &h, &d);
    ASSERT_OK((*store)->Close());
    total_writes = fs.writes();
  }
  ASSERT_GT(total_writes, 3);

  int runs = 0, newer = 0;
  for (int cut = 1; cut <= total_writes; ++cut) {
    for (int variant = 0; variant < 5; ++variant) {
      PowerLossFs::Mode mode =
          variant == 0 ? PowerLossFs::Mode::kDrop : PowerLossFs::Mode::kTear;
      std::mt19937 rng(cut * 100 + variant);
      std::string dir = testing_util::NewTempDir("posstore_cut");
      std::string path = dir + "/replica.pos";
      PowerLossFs fs(io::FileSystem::Default());
      fs.FreezeAfterWrites(cut);
      PositionStoreOptions o = Options(&fs);
      o.write_every_update = p.write_every_update;
      o.sync_every_updates = p.sync_every;
      std::map<uint64_t, ReplicaPosition> history;
      history[1] = ReplicaPosition();
      uint64_t durable = 0;  // 0: the store was never opened
      {
        auto store = PositionStore::Open(path, o);
        if (store.ok()) {
          durable = (*store)->durable_sequence();
          workload(store->get(), &history, &durable);
        }
      }  // the destructor's Close fails: the file system is frozen
      ASSERT_TRUE(fs.frozen()) << "cut " << cut;
      fs.PowerLoss(mode, &rng);

      PositionStoreOptions plain;
      auto reopened = PositionStore::Open(path, plain);
      ASSERT_OK(reopened.status()) << "cut " << cut << " variant " << variant;
      uint64_t seq = (*reopened)->sequence();
      ASSERT_GE(seq, durable) << "cut " << cut << " variant " << variant;
      ASSERT_TRUE(history.count(seq)) << "cut " << cut << " seq " << seq;
      ASSERT_EQ((*reopened)->recovered(), history[seq])
          << "cut " << cut << " variant " << variant;
      if (seq > durable && durable > 0) newer++;
      runs++;
    }
  }
  std::printf("%d cuts x 5 variants: %d runs, %d reopened to a newer complete "
              "record than the durable one\n",
              total_writes, runs, newer);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, PositionStorePowerLossTest,
    ::testing::Values(SweepParam{true, 1}, SweepParam{true, 3},
                      SweepParam{false, 3}, SweepParam{true, 0}),
    [](const ::testing::TestParamInfo<SweepParam>& info) {
      return absl::StrCat(info.param.write_every_update ? "WriteEach"
                                                        : "WriteAtSync",
                          "_SyncEvery", info.param.sync_every);
    });

}  // namespace
}  // namespace binlog
