// Retention of a relay's copy (server/copy_retention.h) without a server:
// the copy (a MirrorLog fed the stream a dump sends) and its named
// consumers only.
//
// A file's age runs from the moment the copy closed it, on the local
// clock: a source whose event timestamps lie in the past cannot make its
// files look expired (the policy, and an operator limit, would purge them
// at once), and one whose timestamps lie in the future cannot keep them
// young.

#include <cstdint>
#include <memory>
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
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "server/copy_retention.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace server {
namespace {

const char kBase[] = "src-bin";

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

}  // namespace
}  // namespace server
}  // namespace binlog
