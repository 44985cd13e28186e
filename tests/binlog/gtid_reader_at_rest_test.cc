// ReadAtRestGtidState, OpenGtidReaderAtRest, OpenMariaGtidReaderAtRest and
// GtidReader::ResumeWith (binlog/gtid_reader.h): the same state, start and
// errors as the live log's readers, read from the files while the log is
// open, and a reader that resumes on a fresh at-rest reader continues
// without repeating or losing a transaction.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/log.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

constexpr uint32_t kTs = 1700000000;

class AtRestTest : public ::testing::TestWithParam<LogFlavor> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gtid_at_rest_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Options o;
    o.flavor = GetParam();
    o.max_file_size = 4096;
    o.sync_policy = SyncPolicy::kNever;
    o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
    auto log = Binlog::Open(dir_, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
  }
  void TearDown() override {
    log_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(cmd.c_str()), 0);
  }
  bool maria() const { return GetParam() == LogFlavor::kMariaDB; }

  void Commit(int n) {
    TransactionBuffer txn;
    for (int i = 0; i < n; ++i) {
      txn.Clear();
      if (maria()) {
        txn.AppendMariaCommitGtid(kTs, 1, CommitGtid());
      } else {
        txn.AppendCommitGtid(kTs, 1, CommitGtid());
        AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      }
      AppendQuery(&txn, kTs, 1, 5, "db", std::string(300, 'q'));
      AppendXid(&txn, kTs, 1, ++xid_);
      ASSERT_TRUE(log_->Commit(&txn).ok());
    }
  }

  // Sequence numbers (GNO or seq_no) of the transactions read until
  // OutOfRange.
  std::vector<int64_t> Drain(GtidReader* g) {
    std::vector<int64_t> got;
    Event ev;
    absl::Status s;
    while ((s = g->Next(&ev)).ok()) {
      if (ev.header.type == kGtidEvent) got.push_back(DecodeMySqlGtidEvent(ev.body())->gno);
      if (ev.header.type == kMariaGtidEvent) {
        got.push_back(static_cast<int64_t>(DecodeMariaGtid(ev.body())->seq_no));
      }
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    return got;
  }

  absl::StatusOr<std::unique_ptr<GtidReader>> Open(int64_t have_upto) {
    auto st = ReadAtRestGtidState(dir_, "binlog", GetParam());
    if (!st.ok()) return st.status();
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    if (maria()) {
      MariaGtidState pos;
      if (have_upto > 0) pos.Add(0, 1, have_upto);
      return OpenMariaGtidReaderAtRest(dir_, "binlog", *st, pos, ro);
    }
    GtidSet have;
    const Uuid u = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
    if (have_upto > 0) have.AddInterval(u, 1, have_upto);
    return OpenGtidReaderAtRest(dir_, "binlog", *st, have, u, ro);
  }

  static std::vector<int64_t> Range(int64_t a, int64_t b) {
    std::vector<int64_t> v;
    for (int64_t i = a; i <= b; ++i) v.push_back(i);
    return v;
  }

  std::string dir_;
  std::unique_ptr<Binlog> log_;
  uint64_t xid_ = 0;
};

TEST_P(AtRestTest, StateMatchesTheOpenLog) {
  Commit(30);
  auto st = ReadAtRestGtidState(dir_, "binlog", GetParam());
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_GT(st->files.size(), 2u);
  if (maria()) {
    EXPECT_EQ(st->maria_state.ToString(), log_->mariadb_gtid_state().ToString());
  } else {
    EXPECT_EQ(st->executed, log_->executed_gtids());
    EXPECT_EQ(st->purged, log_->purged_gtids());
  }
}

TEST_P(AtRestTest, StartsAfterWhatTheReplicaHasAndResumes) {
  Commit(30);
  auto g = Open(12);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Drain(g->get()), Range(13, 30));
  // The writer goes on; a fresh reader where the last one stopped.
  Commit(15);
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  ro.start_file = (*g)->reader()->file_number();
  ro.start_offset = (*g)->reader()->position();
  auto r = Reader::OpenDirectory(dir_, "binlog", ro);
  ASSERT_TRUE(r.ok()) << r.status();
  (*g)->ResumeWith(std::move(*r));
  EXPECT_EQ(Drain(g->get()), Range(31, 45));
}

TEST_P(AtRestTest, ErrorsForPurgedAndUnknownTransactions) {
  Commit(30);
  auto ahead = Open(40);
  ASSERT_FALSE(ahead.ok());
  EXPECT_TRUE(absl::StartsWith(ahead.status().message(), "ahead:")) << ahead.status();
  auto files = log_->ListFiles();
  ASSERT_GT(files.size(), 2u);
  ASSERT_TRUE(log_->PurgeTo(files[2].number).ok());
  auto purged = Open(0);
  ASSERT_FALSE(purged.ok());
  EXPECT_TRUE(absl::StartsWith(purged.status().message(), "purged:")) << purged.status();
  EXPECT_TRUE(Open(29).ok());
}

INSTANTIATE_TEST_SUITE_P(Flavors, AtRestTest,
                         ::testing::Values(LogFlavor::kMySQL, LogFlavor::kMariaDB),
                         [](const ::testing::TestParamInfo<LogFlavor>& i) {
                           return i.param == LogFlavor::kMySQL ? "MySQL" : "MariaDB";
                         });

}  // namespace
}  // namespace binlog
