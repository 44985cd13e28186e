// The relay chained with the library itself (no MySQL server is packaged
// here): a MySQL-flavor log, written in process with untagged and tagged
// GTIDs (and, in the Zstd variant, compressed transactions), served by
// server::Server at rest -> server::Relay (the relay binlog_server --source
// runs) -> an exact copy. The copy must equal the source's files byte for
// byte (the active file but its in-use flag), while the writer goes on,
// across a relay restart, and read back with the library's readers. And
// the relay's semi-sync promise: no ack before the copy's fdatasync.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
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
#include "server/auth.h"
#include "server/relay.h"
#include "server/server.h"
#include "sync/ack_tracker.h"
#include "tests/testutil/external_tools.h"
#include "tests/testutil/wait_until.h"
#include "tests/tools/gated_sync_fs.h"
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

// The relay acknowledges a semi-sync transaction only after the copy's
// fdatasync: with the copy's Sync held at a gate, a committer waiting for
// the relay's ack is not released (its wait times out); once the gate
// opens, the ack comes. The source is a live log served with an ack
// tracker (what a server with semi-sync on runs).
// (GatedSyncFileSystem: tests/tools/gated_sync_fs.h.)
TEST(RelayAckTest, TheAckComesOnlyAfterTheCopysFdatasync) {
  std::string src_tmpl = "/tmp/relay_ack_src_XXXXXX", copy_tmpl = "/tmp/relay_ack_copy_XXXXXX";
  ASSERT_NE(::mkdtemp(&src_tmpl[0]), nullptr);
  ASSERT_NE(::mkdtemp(&copy_tmpl[0]), nullptr);
  auto log = Binlog::Open(src_tmpl, "binlog", ServedLogOptions(io::Codec::kNone));
  ASSERT_TRUE(log.ok()) << log.status();
  sync::AckTrackerOptions ao;
  ao.required_acks = 1;
  ao.async_on_timeout = false;
  sync::AckTracker tracker(ao);
  ServerOptions so;
  so.dir = src_tmpl;
  so.live = log->get();
  so.acks = &tracker;
  so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}}};
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  auto listener = io::Socket::ListenLoopback(0);
  ASSERT_TRUE(listener.ok());
  std::thread runner([&] { (*server)->Run(&*listener); });

  auto commit = [&](int i) -> absl::StatusOr<CommitPosition> {
    TransactionBuffer txn;
    txn.AppendCommitGtid(kServedTs, 1, CommitGtid());
    AppendQuery(&txn, kServedTs, 1, 5, "db", "BEGIN");
    AppendQuery(&txn, kServedTs, 1, 5, "db", absl::StrCat("INSERT INTO t VALUES (", i, ")"));
    AppendXid(&txn, kServedTs, 1, 9000 + i);
    return (*log)->Commit(&txn);
  };
  ASSERT_TRUE(commit(1).ok());

  GatedSyncFileSystem fs;
  RelayOptions ro;
  ro.dir = copy_tmpl;
  ro.basename = "binlog";
  ro.mirror.file_system = &fs;
  ro.source.host = "127.0.0.1";
  ro.source.port = listener->port();
  ro.source.user = "repl";
  ro.source.password = "pw";
  ro.source.server_id = 78;
  ro.source.heartbeat_period = absl::Milliseconds(100);
  ro.silence_timeout = absl::Seconds(30);
  auto relay = Relay::Start(ro);
  ASSERT_TRUE(relay.ok()) << relay.status();
  ASSERT_TRUE(testutil::WaitUntil([&] { return (*relay)->stats().connected; }));
  auto first = commit(2);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(tracker.WaitForAckUntil({first->file_number, first->end},
                                      absl::Now() + absl::Seconds(30))
                  .ok());
  EXPECT_TRUE((*relay)->stats().semisync);

  // The gate shut: the next transaction reaches the copy but its
  // fdatasync waits, and no ack may come.
  fs.Close();
  auto pos = commit(3);
  ASSERT_TRUE(pos.ok());
  ASSERT_TRUE(testutil::WaitUntil([&] { return fs.blocked() > 0; }));
  absl::Status early = tracker.WaitForAckUntil({pos->file_number, pos->end},
                                               absl::Now() + absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(early)) << early;
  fs.Open();
  EXPECT_TRUE(tracker.WaitForAckUntil({pos->file_number, pos->end},
                                      absl::Now() + absl::Seconds(30))
                  .ok());

  EXPECT_TRUE((*relay)->Stop().ok());
  (*server)->Shutdown();
  runner.join();
  server->reset();
  EXPECT_TRUE((*log)->Close().ok());
  std::string out;
  testing_util::RunCommand("rm -rf '" + src_tmpl + "' '" + copy_tmpl + "'", &out);
}

INSTANTIATE_TEST_SUITE_P(Codecs, RelayChainTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kZstd),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(i.param == io::Codec::kNone ? "Plain" : "Zstd");
                         });

}  // namespace
}  // namespace server
}  // namespace binlog
