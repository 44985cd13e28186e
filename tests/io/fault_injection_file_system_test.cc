// Tests of the fault-injecting file system itself: a power-loss test is
// only as strict as the model under it (STYLE.md, pitfall 12: a lenient
// fault env hides bugs). Each test checks one rule of the model on real
// files under TEST_TMPDIR.

#include "io/fault_injection_file_system.h"

#include <sys/stat.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace io {
namespace {

using ::testing::HasSubstr;
using testing_util::NewTempDir;
using testing_util::ReadFile;
using testing_util::WriteFile;

bool PathExists(const std::string& p) {
  return *FileSystem::Default()->Exists(p);
}

class FaultFsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = NewTempDir("faultfs"); }

  std::string P(const std::string& name) { return dir_ + "/" + name; }

  // Creates `name` with `content`, synced, entry synced.
  void DurableFile(const std::string& name, const std::string& content) {
    auto f = fs_.OpenWritable(P(name), OpenMode::kCreateNew);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Write(0, content).ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
    SyncDir();
  }

  void SyncDir() {
    auto d = fs_.OpenDirectory(dir_);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Sync().ok());
  }

  PowerLossReport PowerLoss(PowerLossOptions::Data data =
                                PowerLossOptions::Data::kDropUnsynced,
                            uint64_t seed = 1) {
    PowerLossOptions o;
    o.data = data;
    o.seed = seed;
    auto r = fs_.SimulatePowerLoss(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : PowerLossReport();
  }

  FaultInjectionFileSystem fs_;
  std::string dir_;
};

// Files and directories get the permissions asked for, through the
// fault-injecting wrapper down to POSIX, and the defaults are 0640 / 0750
// (the umask set to 022 here).
TEST_F(FaultFsTest, CreationPermissionsAreHonoured) {
  const mode_t old_umask = ::umask(022);
  auto f = fs_.OpenWritable(dir_ + "/private", OpenMode::kCreateNew, 0600);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*fs_.Permissions(dir_ + "/private"), 0600u);
  auto g = fs_.OpenWritable(dir_ + "/default", OpenMode::kCreateOrTruncate);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)->Close().ok());
  EXPECT_EQ(*fs_.Permissions(dir_ + "/default"), 0640u);
  // An existing file keeps its mode.
  auto h = fs_.OpenWritable(dir_ + "/private", OpenMode::kOpenExisting, 0644);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE((*h)->Close().ok());
  EXPECT_EQ(*fs_.Permissions(dir_ + "/private"), 0600u);
  ASSERT_TRUE(fs_.CreateDirectory(dir_ + "/d700", 0700).ok());
  EXPECT_EQ(*fs_.Permissions(dir_ + "/d700"), 0700u);
  ASSERT_TRUE(fs_.CreateDirectory(dir_ + "/d").ok());
  EXPECT_EQ(*fs_.Permissions(dir_ + "/d"), 0750u);
  {
    auto lock = fs_.LockFile(dir_ + "/lock", 0600);
    ASSERT_TRUE(lock.ok()) << lock.status();
    EXPECT_EQ(*fs_.Permissions(dir_ + "/lock"), 0600u);
  }
  EXPECT_TRUE(absl::IsNotFound(fs_.Permissions(dir_ + "/missing").status()));
  ::umask(old_umask);
}

TEST_F(FaultFsTest, UnsyncedWriteIsReadableBeforeThePowerCut) {
  DurableFile("a", "synced");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(6, "+unsynced").ok());
  auto r = fs_.OpenReadable(P("a"));
  ASSERT_TRUE(r.ok());
  char buf[64];
  size_t got = 0;
  ASSERT_TRUE((*r)->Read(0, sizeof(buf), buf, &got).ok());
  EXPECT_EQ(std::string(buf, got), "synced+unsynced");
  EXPECT_EQ(fs_.UnsyncedBytes(P("a")), 9u);
}

TEST_F(FaultFsTest, PowerLossDropsWritesAfterTheLastSync) {
  DurableFile("a", "0123456789");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(10, "abc").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Write(2, "XX").ok());   // overwrite in place
  ASSERT_TRUE((*f)->Write(13, "def").ok());  // append
  EXPECT_EQ(ReadFile(P("a")), "01XX456789abcdef");
  PowerLossReport rep = PowerLoss();
  EXPECT_EQ(rep.files_reverted, 1);
  EXPECT_EQ(ReadFile(P("a")), "0123456789abc");
}

TEST_F(FaultFsTest, SyncAllIsASyncToo) {
  DurableFile("a", "x");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(1, "yz").ok());
  ASSERT_TRUE((*f)->SyncAll().ok());
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "xyz");
}

TEST_F(FaultFsTest, SyncedFileWhoseCreationWasNotDirSyncedVanishes) {
  auto f = fs_.OpenWritable(P("new"), OpenMode::kCreateNew);
  ASSERT_TRUE((*f)->Write(0, "data").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  EXPECT_EQ(fs_.UnsyncedEntries(dir_), 1);
  PowerLoss();
  EXPECT_FALSE(PathExists(P("new")));
}

TEST_F(FaultFsTest, DirSyncMakesTheCreationDurable) {
  auto f = fs_.OpenWritable(P("new"), OpenMode::kCreateNew);
  ASSERT_TRUE((*f)->Write(0, "data").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  SyncDir();
  EXPECT_EQ(fs_.UnsyncedEntries(dir_), 0);
  PowerLoss();
  EXPECT_EQ(ReadFile(P("new")), "data");
}

TEST_F(FaultFsTest, DirSyncedButUnsyncedFileIsEmptyAfterThePowerCut) {
  auto f = fs_.OpenWritable(P("new"), OpenMode::kCreateNew);
  ASSERT_TRUE((*f)->Write(0, "data").ok());
  SyncDir();
  PowerLoss();
  EXPECT_TRUE(PathExists(P("new")));
  EXPECT_EQ(ReadFile(P("new")), "");
}

TEST_F(FaultFsTest, RenameWithoutDirSyncIsUndone) {
  // The index update protocol without its final directory fsync.
  DurableFile("index", "old\n");
  auto f = fs_.OpenWritable(P("index.tmp"), OpenMode::kCreateOrTruncate);
  ASSERT_TRUE((*f)->Write(0, "new\n").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(fs_.Rename(P("index.tmp"), P("index")).ok());
  EXPECT_EQ(ReadFile(P("index")), "new\n");
  PowerLossReport rep = PowerLoss();
  EXPECT_EQ(rep.entries_undone, 2);  // the rename, then the create
  EXPECT_EQ(ReadFile(P("index")), "old\n");
  EXPECT_FALSE(PathExists(P("index.tmp")));
}

TEST_F(FaultFsTest, RenameWithDirSyncSurvives) {
  DurableFile("index", "old\n");
  DurableFile("index.tmp", "new\n");
  ASSERT_TRUE(fs_.Rename(P("index.tmp"), P("index")).ok());
  SyncDir();
  PowerLoss();
  EXPECT_EQ(ReadFile(P("index")), "new\n");
  EXPECT_FALSE(PathExists(P("index.tmp")));
}

TEST_F(FaultFsTest, RemoveWithoutDirSyncBringsTheDurableContentBack) {
  DurableFile("a", "durable");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(7, " and not").ok());
  ASSERT_TRUE(fs_.Remove(P("a")).ok());
  EXPECT_FALSE(PathExists(P("a")));
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "durable");
}

TEST_F(FaultFsTest, RemoveWithDirSyncIsDurable) {
  DurableFile("a", "durable");
  ASSERT_TRUE(fs_.Remove(P("a")).ok());
  SyncDir();
  PowerLoss();
  EXPECT_FALSE(PathExists(P("a")));
}

TEST_F(FaultFsTest, FilesWrittenOutsideTheWrapperAreDurable) {
  WriteFile(P("outside"), "as found");
  auto f = fs_.OpenWritable(P("outside"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(0, "AS").ok());
  PowerLoss();
  EXPECT_EQ(ReadFile(P("outside")), "as found");
}

TEST_F(FaultFsTest, UnsyncedTruncateIsUndone) {
  DurableFile("a", std::string(100, 'a'));
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Truncate(10).ok());
  ASSERT_TRUE((*f)->Write(10, "tail").ok());
  EXPECT_EQ(ReadFile(P("a")).size(), 14u);
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), std::string(100, 'a'));
}

TEST_F(FaultFsTest, SyncedTruncateStays) {
  DurableFile("a", std::string(100, 'a'));
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Truncate(10).ok());
  ASSERT_TRUE((*f)->Sync().ok());
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), std::string(10, 'a'));
}

TEST_F(FaultFsTest, CreateOrTruncateOfADurableFileIsUndone) {
  DurableFile("a", "old content");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kCreateOrTruncate);
  ASSERT_TRUE((*f)->Write(0, "new").ok());
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "old content");
}

TEST_F(FaultFsTest, UnsyncedAllocateGrowthIsUndone) {
  DurableFile("a", "abc");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Allocate(0, 8192, /*keep_size=*/false).ok());
  EXPECT_EQ(ReadFile(P("a")).size(), 8192u);
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "abc");
}

TEST_F(FaultFsTest, FailedSyncLosesTheDataForGoodEvenAfterALaterSync) {
  DurableFile("a", "durable|");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*f)->Write(8, "lost|").ok());
  fs_.InjectFault({FaultOp::kSync, FaultKind::kEio, 1, "", false});
  absl::Status s = (*f)->Sync();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(s.message()), HasSubstr("injected"));
  // Reads still return the data (the page cache has it) ...
  EXPECT_EQ(ReadFile(P("a")), "durable|lost|");
  // ... and a retried fdatasync "succeeds" ...
  ASSERT_TRUE((*f)->Write(13, "later").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  PowerLoss();
  // ... but the data of the failed sync is gone; what came after is not.
  EXPECT_EQ(ReadFile(P("a")), std::string("durable|\0\0\0\0\0later", 18));
}

TEST_F(FaultFsTest, AFailedSyncIsReportedThroughEveryOtherOpenHandleOnce) {
  DurableFile("a", "durable|");
  auto writer = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  auto other = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  ASSERT_TRUE((*writer)->Write(8, "data|").ok());
  // The other handle's fdatasync hits the writeback error of the
  // writer's data ...
  fs_.InjectFault({FaultOp::kSync, FaultKind::kEio, 1, "", false});
  EXPECT_FALSE((*other)->Sync().ok());
  // ... and the writer's next fdatasync reports it too (once), instead of
  // claiming its lost data durable.
  absl::Status s = (*writer)->Sync();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(s.message()), HasSubstr("another descriptor"));
  EXPECT_TRUE((*writer)->Sync().ok());
  EXPECT_TRUE((*other)->Sync().ok());
  // A handle opened after the error does not report it.
  auto late = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  EXPECT_TRUE((*late)->Sync().ok());
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "durable|");
}

TEST_F(FaultFsTest, KeepRandomPrefixKeepsAPrefixOfTheAppends) {
  const std::string base = "base:";
  const std::string appended = "0123456789abcdefghijklmnopqrstuvwxyz";
  int partial = 0, none = 0, all = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE(seed);
    std::string name = absl::StrCat("f", seed);
    DurableFile(name, base);
    auto f = fs_.OpenWritable(P(name), OpenMode::kOpenExisting);
    for (size_t i = 0; i < appended.size(); i += 6) {
      ASSERT_TRUE((*f)->Write(base.size() + i, appended.substr(i, 6)).ok());
    }
    PowerLoss(PowerLossOptions::Data::kKeepRandomPrefix, seed);
    std::string got = ReadFile(P(name));
    ASSERT_GE(got.size(), base.size());
    ASSERT_EQ(got, (base + appended).substr(0, got.size()));
    size_t kept = got.size() - base.size();
    if (kept == 0) ++none;
    else if (kept == appended.size()) ++all;
    else ++partial;
  }
  // The prefix is really random: every outcome shows up.
  EXPECT_GT(none, 0);
  EXPECT_GT(all, 0);
  EXPECT_GT(partial, 0);
}

TEST_F(FaultFsTest, TearLastSectorTearsOnlyTheLastSector) {
  std::string data(2000, 'n');
  int torn = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::string name = absl::StrCat("f", seed);
    DurableFile(name, std::string(100, 'o'));
    auto f = fs_.OpenWritable(P(name), OpenMode::kOpenExisting);
    ASSERT_TRUE((*f)->Write(100, data).ok());
    PowerLoss(PowerLossOptions::Data::kTearLastSector, seed);
    std::string got = ReadFile(P(name));
    // Sectors [0,512), [512,1024), [1024,1536), [1536,2048) fully written;
    // the last one, [2048, 2100), is torn.
    ASSERT_GE(got.size(), 2048u);
    ASSERT_LE(got.size(), 2100u);
    EXPECT_EQ(got.substr(100), std::string(got.size() - 100, 'n'));
    if (got.size() < 2100) ++torn;
  }
  EXPECT_GT(torn, 0);
}

TEST_F(FaultFsTest, RandomSectorsPersistWholeSectorsOutOfOrder) {
  bool saw_hole = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::string name = absl::StrCat("f", seed);
    DurableFile(name, std::string(512, 'o'));
    auto f = fs_.OpenWritable(P(name), OpenMode::kOpenExisting);
    ASSERT_TRUE((*f)->Write(0, std::string(4096, 'n')).ok());
    PowerLoss(PowerLossOptions::Data::kRandomSectors, seed);
    std::string got = ReadFile(P(name));
    ASSERT_EQ(got.size() % 512, 0u);
    bool seen_old = false;
    for (size_t s = 0; s < got.size(); s += 512) {
      std::string sector = got.substr(s, 512);
      bool ok = sector == std::string(512, 'n') ||
                sector == std::string(512, 'o') ||
                sector == std::string(512, '\0');
      ASSERT_TRUE(ok) << "sector at " << s;
      if (sector != std::string(512, 'n')) seen_old = true;
      else if (seen_old) saw_hole = true;  // new data after old: out of order
    }
  }
  EXPECT_TRUE(saw_hole);
}

TEST_F(FaultFsTest, KeepRandomDirPrefixKeepsEntryChangesInOrder) {
  int kept_rename = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::string d = NewTempDir("dirprefix");
    auto put = [&](const std::string& name) {
      auto f = fs_.OpenWritable(d + "/" + name, OpenMode::kCreateNew);
      ASSERT_TRUE((*f)->Sync().ok());
    };
    put("a");
    put("b");
    ASSERT_TRUE(fs_.Rename(d + "/b", d + "/c").ok());
    PowerLossOptions o;
    o.keep_random_dir_prefix = true;
    o.seed = seed;
    ASSERT_TRUE(fs_.SimulatePowerLoss(o).ok());
    bool a = PathExists(d + "/a"), b = PathExists(d + "/b"),
         c = PathExists(d + "/c");
    // Possible states in order: {}, {a}, {a,b}, {a,c}.
    EXPECT_FALSE(b && c);
    if (b || c) {
      EXPECT_TRUE(a);
    }
    if (c) ++kept_rename;
  }
  EXPECT_GT(kept_rename, 0);
}

TEST_F(FaultFsTest, FreezeAfterFailsEveryLaterCall) {
  DurableFile("a", "x");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  auto r = fs_.OpenReadable(P("a"));
  fs_.FreezeAfter(2);
  EXPECT_TRUE((*f)->Write(1, "1").ok());
  EXPECT_TRUE((*f)->Write(2, "2").ok());
  absl::Status s = (*f)->Write(3, "3");
  EXPECT_THAT(std::string(s.message()), HasSubstr("injected"));
  EXPECT_TRUE(fs_.frozen());
  EXPECT_FALSE((*f)->Sync().ok());
  EXPECT_FALSE(fs_.Rename(P("a"), P("b")).ok());
  EXPECT_FALSE(fs_.OpenWritable(P("c"), OpenMode::kCreateNew).ok());
  EXPECT_FALSE(fs_.ListDirectory(dir_).ok());
  char c;
  size_t got;
  EXPECT_FALSE((*r)->Read(0, 1, &c, &got).ok());
  EXPECT_EQ(ReadFile(P("a")), "x12");  // nothing happened after the freeze
  PowerLoss();
  EXPECT_FALSE(fs_.frozen());
  EXPECT_EQ(ReadFile(P("a")), "x");
  // Handles from before the power loss stay dead.
  EXPECT_FALSE((*f)->Write(0, "z").ok());
  EXPECT_TRUE(fs_.ListDirectory(dir_).ok());
}

TEST_F(FaultFsTest, NthWriteOnAMatchingPathFails) {
  DurableFile("binlog.000001", "");
  DurableFile("other", "");
  auto a = fs_.OpenWritable(P("binlog.000001"), OpenMode::kOpenExisting);
  auto b = fs_.OpenWritable(P("other"), OpenMode::kOpenExisting);
  fs_.InjectFault({FaultOp::kWrite, FaultKind::kEio, 2, "binlog.", false});
  EXPECT_TRUE((*a)->Write(0, "1").ok());
  EXPECT_TRUE((*b)->Write(0, "x").ok());  // not matching: not counted
  absl::Status s = (*a)->Write(1, "2");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(s.message()), HasSubstr("injected EIO"));
  EXPECT_TRUE((*a)->Write(1, "3").ok());  // fired once
  EXPECT_EQ(ReadFile(P("binlog.000001")), "13");
  EXPECT_EQ(fs_.faults_fired(), 1u);
}

TEST_F(FaultFsTest, WriteVCountsAsAWrite) {
  DurableFile("a", "");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  fs_.InjectFault({FaultOp::kWrite, FaultKind::kEnospc, 1, "", false});
  absl::string_view parts[2] = {"ab", "cd"};
  absl::Status s = (*f)->WriteV(0, parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("injected ENOSPC"));
  EXPECT_EQ(ReadFile(P("a")), "");
  EXPECT_TRUE((*f)->WriteV(0, parts).ok());
  EXPECT_EQ(ReadFile(P("a")), "abcd");
}

TEST_F(FaultFsTest, ShortWriteWritesAPrefixThenFails) {
  DurableFile("a", "");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  fs_.InjectFault({FaultOp::kWrite, FaultKind::kShortWrite, 1, "", false});
  absl::Status s = (*f)->Write(0, "0123456789");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("short write of 5 of 10"));
  EXPECT_EQ(ReadFile(P("a")), "01234");
  // The partial write is unsynced data like any other.
  PowerLoss();
  EXPECT_EQ(ReadFile(P("a")), "");
}

TEST_F(FaultFsTest, PersistentFaultFailsUntilCleared) {
  DurableFile("a", "");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  fs_.InjectFault({FaultOp::kWrite, FaultKind::kEnospc, 1, "", true});
  for (int i = 0; i < 3; ++i) EXPECT_FALSE((*f)->Write(0, "x").ok());
  fs_.ClearFaults();
  EXPECT_TRUE((*f)->Write(0, "x").ok());
}

TEST_F(FaultFsTest, EveryOperationKindCanFail) {
  DurableFile("a", "abc");
  auto f = fs_.OpenWritable(P("a"), OpenMode::kOpenExisting);
  auto d = fs_.OpenDirectory(dir_);
  struct Case {
    FaultOp op;
    std::function<absl::Status()> call;
  };
  std::vector<Case> cases = {
      {FaultOp::kSync, [&] { return (*f)->Sync(); }},
      {FaultOp::kAllocate, [&] { return (*f)->Allocate(0, 100, false); }},
      {FaultOp::kTruncate, [&] { return (*f)->Truncate(1); }},
      {FaultOp::kOpenWritable,
       [&] { return fs_.OpenWritable(P("b"), OpenMode::kCreateNew).status(); }},
      {FaultOp::kRename, [&] { return fs_.Rename(P("a"), P("z")); }},
      {FaultOp::kRemove, [&] { return fs_.Remove(P("a")); }},
      {FaultOp::kDirSync, [&] { return (*d)->Sync(); }},
      {FaultOp::kSetTime,
       [&] { return fs_.SetModificationTime(P("a"), absl::FromUnixSeconds(7)); }},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(FaultOpName(c.op));
    fs_.InjectFault({c.op, FaultKind::kEio, 1, "", false});
    absl::Status s = c.call();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnknown) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("injected"));
  }
  // Nothing happened.
  EXPECT_EQ(ReadFile(P("a")), "abc");
  EXPECT_FALSE(PathExists(P("b")));
  EXPECT_FALSE(PathExists(P("z")));
}

// A file's modification time, set and read back through the file system
// (to the nanosecond; the content untouched); a missing file is NotFound.
// Set through the POSIX file system, it is durable when the call returns:
// a power cut keeps it.
TEST_F(FaultFsTest, ModificationTimeIsSetDurablyAndReadBack) {
  DurableFile("a", "abc");
  const absl::Time t = absl::FromUnixNanos(1500000000123456789);
  ASSERT_TRUE(fs_.SetModificationTime(P("a"), t).ok());
  auto got = fs_.ModificationTime(P("a"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, t);
  EXPECT_EQ(ReadFile(P("a")), "abc");
  EXPECT_EQ(fs_.calls(FaultOp::kSetTime), 1u);
  PowerLoss();
  EXPECT_EQ(*FileSystem::Default()->ModificationTime(P("a")), t);
  EXPECT_EQ(fs_.ModificationTime(P("none")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs_.SetModificationTime(P("none"), t).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(PathExists(P("none")));
}

TEST_F(FaultFsTest, FailedDirSyncLeavesTheEntriesUnsynced) {
  auto f = fs_.OpenWritable(P("new"), OpenMode::kCreateNew);
  ASSERT_TRUE((*f)->Sync().ok());
  fs_.InjectFault({FaultOp::kDirSync, FaultKind::kEio, 1, "", false});
  auto d = fs_.OpenDirectory(dir_);
  EXPECT_FALSE((*d)->Sync().ok());
  EXPECT_EQ(fs_.UnsyncedEntries(dir_), 1);
  PowerLoss();
  EXPECT_FALSE(PathExists(P("new")));
}

TEST_F(FaultFsTest, ConcurrentWritersKeepExactlyTheirSyncedPrefix) {
  constexpr int kThreads = 4;
  std::vector<std::string> synced(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto f = fs_.OpenWritable(P(absl::StrCat("t", t)), OpenMode::kCreateNew);
      ASSERT_TRUE(f.ok());
      std::string written;
      for (int i = 0; i < 200; ++i) {
        std::string chunk = absl::StrCat("<", t, ":", i, ">");
        ASSERT_TRUE((*f)->Write(written.size(), chunk).ok());
        written += chunk;
        if (i % 7 == 0) {
          ASSERT_TRUE((*f)->Sync().ok());
          synced[t] = written;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  SyncDir();
  PowerLoss();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ReadFile(P(absl::StrCat("t", t))), synced[t]);
  }
}

}  // namespace
}  // namespace io
}  // namespace binlog
