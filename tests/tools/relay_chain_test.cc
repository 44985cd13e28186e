// The relay chained with the library itself (no MySQL server is packaged
// here): a MySQL-flavor log, written in process with untagged and tagged
// GTIDs (and, in the Zstd variant, compressed transactions), served by
// server::Server at rest -> server::Relay (the relay binlog_server --source
// runs) -> an exact copy. The copy must equal the source's files byte for
// byte (the active file but its in-use flag), while the writer goes on,
// across a relay restart, and read back with the library's readers.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/mirror_log.h"
#include "binlog/reader.h"
#include "binlog/event_builder.h"
#include "binlog/transaction.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "server/relay.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/wait_until.h"
#include "tests/tools/served_log.h"

namespace binlog {
namespace server {
namespace {

std::string Contents(const std::string& path) {
  auto s = ReadSmallFile(io::FileSystem::Default(), path, 1ull << 32);
  return s.ok() ? *s : std::string();
}

class RelayChainTest : public ServedLogTest {
 protected:
  void TearDown() override {
    if (relay_ != nullptr) {
      EXPECT_TRUE(relay_->Stop().ok());
    }
    relay_.reset();
    ServedLogTest::TearDown();
    if (!copy_dir_.empty() && !HasFailure()) {
      std::string out;
      testing_util::RunCommand("rm -rf '" + copy_dir_ + "'", &out);
    }
  }

  RelayOptions Options() const {
    RelayOptions o;
    o.dir = copy_dir_;
    o.basename = "binlog";
    o.source.host = "127.0.0.1";
    o.source.port = port_;
    o.source.user = "repl";
    o.source.password = "pw";
    o.source.server_id = 77;
    o.source.heartbeat_period = absl::Milliseconds(100);
    o.silence_timeout = absl::Seconds(2);
    o.backoff_min = absl::Milliseconds(10);
    return o;
  }

  // Commits `n` transactions, every third one with a tagged GTID.
  void Commit(int n) {
    TransactionBuffer txn;
    auto tag = Tag::Parse("relay");
    ASSERT_TRUE(tag.ok());
    for (int i = 0; i < n; ++i, ++next_) {
      txn.Clear();
      CommitGtid g;
      if (next_ % 3 == 0) g.tag = *tag;
      txn.AppendCommitGtid(kServedTs, 1, g);
      AppendQuery(&txn, kServedTs, 1, 5, "db", "BEGIN");
      AppendQuery(&txn, kServedTs, 1, 5, "db",
                  absl::StrCat("INSERT INTO t VALUES (", next_, ", '",
                               std::string(200 + next_ % 300, 'a' + next_ % 26), "')"));
      AppendXid(&txn, kServedTs, 1, 50000 + next_);
      ASSERT_TRUE(log_->Commit(&txn).ok());
    }
  }

  // Waits until the copy's durable end is the log's end, then compares
  // every file.
  void ExpectCopyEqualsLog() {
    const std::vector<LogFileInfo> files = log_->ListFiles();
    ASSERT_FALSE(files.empty());
    const MirrorPosition want{files.back().name, files.back().size};
    ASSERT_TRUE(testutil::WaitUntil([&] { return relay_->mirror()->durable_end() == want; }))
        << relay_->mirror()->durable_end().file << ":" << relay_->mirror()->durable_end().pos
        << " want " << want.file << ":" << want.pos << "; " << relay_->stats().last_error;
    for (size_t i = 0; i < files.size(); ++i) {
      SCOPED_TRACE(files[i].name);
      std::string source = Contents(dir_ + "/" + files[i].name);
      const std::string copy = Contents(copy_dir_ + "/" + files[i].name);
      if (i + 1 == files.size()) {
        source = source.substr(0, files[i].size);
        source[kInUseFlagFileOffset] &= ~static_cast<char>(kFlagBinlogInUse);
      }
      EXPECT_TRUE(copy == source) << copy.size() << " vs " << source.size();
    }
  }

  std::string copy_dir_;
  std::unique_ptr<Relay> relay_;
  int next_ = 1000;
};

TEST_P(RelayChainTest, TheCopyIsTheSourcesFilesAcrossARestart) {
  StartServedLog("relay_chain_", 30, 1000);
  if (HasFatalFailure()) return;
  Commit(10);
  std::string tmpl = "/tmp/relay_copy_XXXXXX";
  ASSERT_NE(::mkdtemp(&tmpl[0]), nullptr);
  copy_dir_ = tmpl;
  auto r = Relay::Start(Options());
  ASSERT_TRUE(r.ok()) << r.status();
  relay_ = std::move(*r);
  ExpectCopyEqualsLog();
  if (HasFatalFailure()) return;
  // The writer goes on: the relay follows.
  Commit(25);
  ExpectCopyEqualsLog();
  if (HasFatalFailure()) return;
  const uint64_t connects = relay_->stats().connects;
  EXPECT_GE(connects, 1u);
  EXPECT_GT(relay_->stats().syncs, 0u);
  EXPECT_TRUE(relay_->stats().fatal.empty());

  // Stopped and started again, it resumes where its copy ends.
  ASSERT_TRUE(relay_->Stop().ok());
  relay_.reset();
  Commit(20);
  r = Relay::Start(Options());
  ASSERT_TRUE(r.ok()) << r.status();
  relay_ = std::move(*r);
  ExpectCopyEqualsLog();
  if (HasFatalFailure()) return;
  EXPECT_GE(log_->ListFiles().size(), 3u) << "rotations along the way";

  // The copy reads back whole, GTIDs and all.
  auto reader = Reader::OpenDirectory(copy_dir_, "binlog", ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  int gtids = 0, tagged = 0;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    gtids += ev.header.type == 33 || ev.header.type == 42;
    tagged += ev.header.type == 42;
  }
  EXPECT_EQ(gtids, 30 + 10 + 25 + 20);
  EXPECT_GT(tagged, 0);
  EXPECT_EQ(relay_->mirror()->ResumePoint().gtids, log_->executed_gtids());
}

INSTANTIATE_TEST_SUITE_P(Codecs, RelayChainTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kZstd),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Zstd");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
