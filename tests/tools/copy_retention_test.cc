// Retention of a relay's copy (server/copy_retention.h) without a server:
// the copy (a MirrorLog fed the stream a dump sends) and its named
// consumers only.
//
// A file's age runs from the moment the copy closed it, on the local
// clock: a source whose event timestamps lie in the past cannot make its
// files look expired (the policy, and an operator limit, would purge them
// at once), and one whose timestamps lie in the future cannot keep them
// young. A consumer's position store is only read: never opened for
// writing, created or synced, and a missing one is an error at the start.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/position_store.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"
#include "server/copy_retention.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace server {
namespace {

const char kBase[] = "src-bin";

// Records the mutating calls (and opens for writing) made through it.
class RecordingFs : public io::FileSystemWrapper {
 public:
  RecordingFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    Note("open-writable " + path);
    return io::FileSystemWrapper::OpenWritable(path, mode, permissions);
  }
  absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    ++reads_;
    return io::FileSystemWrapper::OpenReadable(path);
  }
  int reads() {
    std::lock_guard<std::mutex> l(mu_);
    return reads_;
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    Note("rename " + from + " " + to);
    return io::FileSystemWrapper::Rename(from, to);
  }
  absl::Status Remove(const std::string& path) override {
    Note("remove " + path);
    return io::FileSystemWrapper::Remove(path);
  }
  absl::Status SetModificationTime(const std::string& path, absl::Time t) override {
    Note("set-time " + path);
    return io::FileSystemWrapper::SetModificationTime(path, t);
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }

 private:
  void Note(const std::string& c) {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back(c);
  }
  std::mutex mu_;
  std::vector<std::string> calls_;
  int reads_ = 0;
};

class CopyRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_dir_ = TempDir("copy_retention_src");
    copy_dir_ = TempDir("copy_retention_copy");
    Options o;
    o.server_id = 1;
    o.max_file_size = 4096;
    o.preallocate = io::PreallocMode::kNone;
    auto log = Binlog::Open(src_dir_, kBase, o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn(true);
    for (int i = 1; i <= 40; ++i) {
      txn.Clear();
      AppendQuery(&txn, 1, 1, 7, "db", "BEGIN");
      AppendQuery(&txn, 1, 1, 7, "db",
                  absl::StrCat("INSERT INTO t VALUES ('", std::string(300, 'a' + i % 26), "')"));
      AppendXid(&txn, 1, 1, static_cast<uint64_t>(i));
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
    auto idx = ReadIndex(io::FileSystem::Default(), src_dir_, kBase);
    ASSERT_TRUE(idx.ok()) << idx.status();
    for (uint64_t n : *idx) files_.push_back(BinlogFileName(kBase, n));
    ASSERT_GE(files_.size(), 4u);
  }
  void TearDown() override {
    std::string out;
    testing_util::RunCommand("rm -rf '" + src_dir_ + "' '" + copy_dir_ + "'", &out);
  }

  static std::string TempDir(const char* tag) {
    std::string d = absl::StrCat("/tmp/", tag, "_XXXXXX");
    EXPECT_NE(::mkdtemp(&d[0]), nullptr);
    return d;
  }

  // The copy of the whole source, fed the stream of a dump from its first
  // file in which every stored event carries the source timestamp `ts`
  // (its checksum recomputed).
  std::unique_ptr<MirrorLog> CopyWithSourceTime(uint32_t ts) {
    auto m = MirrorLog::Open(copy_dir_, kBase, MirrorOptions());
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return nullptr;
    EXPECT_TRUE((*m)->Append(EncodeRotateTo(0, 1, files_.front(), kMagicSize, 0,
                                            kFlagArtificial, true))
                    .ok());
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    auto r = Reader::OpenDirectory(src_dir_, kBase, ro);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return nullptr;
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      std::string e(ev.data);
      const bool crc = EventChecksumMatches(e);
      StoreLe32(&e[0], ts);
      if (crc) StoreLe32(&e[e.size() - kChecksumSize], ComputeEventChecksum(e));
      absl::Status a = (*m)->Append(e);
      EXPECT_TRUE(a.ok()) << a;
      if (!a.ok()) return nullptr;
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_TRUE((*m)->Sync().ok());
    return std::move(*m);
  }

  std::unique_ptr<CopyRetention> Retention(MirrorLog* m, CopyRetentionOptions o) {
    o.basename = kBase;
    o.log = [this](const std::string& line) { log_.push_back(line); };
    auto r = CopyRetention::Create(m, nullptr, std::move(o));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::move(*r) : nullptr;
  }

  std::string src_dir_, copy_dir_;
  std::vector<std::string> files_;
  std::vector<std::string> log_;
};

// Source timestamps of 1970: every file would be 56 years old. The copy
// closed them just now: neither the policy nor an operator limit of an
// hour takes any.
TEST_F(CopyRetentionTest, ASourceClockInThePastAgesNoFile) {
  std::unique_ptr<MirrorLog> m = CopyWithSourceTime(1);
  ASSERT_NE(m, nullptr);
  CopyRetentionOptions o;
  o.expire_after = absl::Hours(1);
  o.force_purge_after = absl::Hours(1);
  auto ret = Retention(m.get(), o);
  ASSERT_NE(ret, nullptr);
  auto pass = ret->RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->purged.empty());
  EXPECT_FALSE(pass->forced);
  EXPECT_EQ(m->files(), files_);
  ASSERT_TRUE(m->Close().ok());
}

// Source timestamps of 2096: no file would ever expire. Two hours after
// the copy closed them, an expiry of one hour takes every closed file.
TEST_F(CopyRetentionTest, ASourceClockInTheFutureKeepsNoFileYoung) {
  std::unique_ptr<MirrorLog> m = CopyWithSourceTime(4000000000u);
  ASSERT_NE(m, nullptr);
  CopyRetentionOptions o;
  o.expire_after = absl::Hours(1);
  o.now = [] { return absl::Now() + absl::Hours(2); };
  auto ret = Retention(m.get(), o);
  ASSERT_NE(ret, nullptr);
  auto pass = ret->RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->purged, std::vector<std::string>(files_.begin(), files_.end() - 1));
  EXPECT_EQ(m->files(), std::vector<std::string>{files_.back()});
  ASSERT_TRUE(m->Close().ok());
}

// A consumer's store is read, never written: no call that changes a file
// reaches it, its bytes stay, and it holds its file. A store missing at
// the start is refused, and none is created.
TEST_F(CopyRetentionTest, AConsumersStoreIsOnlyRead) {
  std::unique_ptr<MirrorLog> m = CopyWithSourceTime(1);
  ASSERT_NE(m, nullptr);
  const std::string store_path = copy_dir_ + "/consumer.pos";
  {
    auto store = PositionStore::Open(store_path, PositionStoreOptions());
    ASSERT_TRUE(store.ok()) << store.status();
    ReplicaPosition p;
    p.source_file = files_[2];
    p.source_pos = 4;
    ASSERT_TRUE((*store)->Update(p).ok());
    ASSERT_TRUE((*store)->Update(p).ok());
    ASSERT_TRUE((*store)->Close().ok());
  }
  auto bytes = ReadSmallFile(io::FileSystem::Default(), store_path, 1 << 20);
  ASSERT_TRUE(bytes.ok()) << bytes.status();

  RecordingFs fs;
  CopyRetentionOptions o;
  o.max_total_bytes = 1;
  o.consumers = {{"archiver", store_path}};
  o.file_system = &fs;
  auto ret = Retention(m.get(), o);
  ASSERT_NE(ret, nullptr);
  auto pass = ret->RunOnce();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->purged, (std::vector<std::string>{files_[0], files_[1]}));
  EXPECT_EQ(pass->kept_reason, absl::StrCat("consumer archiver at ", files_[2]));
  EXPECT_GE(fs.reads(), 2);  // Create's check and the pass: through `fs`
  EXPECT_TRUE(fs.calls().empty()) << fs.calls().front();
  auto after = ReadSmallFile(io::FileSystem::Default(), store_path, 1 << 20);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*after == *bytes) << "the consumer's store changed";

  const std::string missing = copy_dir_ + "/no-such.pos";
  o.consumers = {{"late", missing}};
  o.basename = kBase;
  auto refused = CopyRetention::Create(m.get(), nullptr, o);
  EXPECT_TRUE(absl::IsNotFound(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "consumer late")) << refused.status();
  EXPECT_FALSE(io::FileSystem::Default()->Exists(missing).value_or(true));
  EXPECT_TRUE(fs.calls().empty());
  ASSERT_TRUE(m->Close().ok());
}

}  // namespace
}  // namespace server
}  // namespace binlog
