// Transactions of any size (issue 18): TransactionBuffer spills completed
// events beyond its memory limit to an unlinked temporary file, and Commit
// streams them into the log with log_pos and checksums fixed on the way.
//
// The log's bytes must be exactly those of the same transaction built in
// memory, so most tests commit a transaction both ways, into two logs, and
// compare the bytes; the others check the limits, the errors (fault file
// system) and the interplay with rotation and the unsynced window.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "binlog/format.h"
#include "binlog/status_macros.h"
#include "io/fault_injection_file_system.h"
#include "io/file_system_wrapper.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testing_util::NewTempDir;
using ::binlog::testing_util::ReadFile;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

Options TestOptions() {
  Options o;
  o.now_seconds = [] { return 1700000000u; };
  o.preallocate = io::PreallocMode::kNone;
  return o;
}

std::unique_ptr<Binlog> OpenOrDie(const std::string& dir, const Options& o) {
  auto log = Binlog::Open(dir, "binlog", o);
  EXPECT_TRUE(log.ok()) << log.status();
  return log.ok() ? std::move(*log) : nullptr;
}

TransactionBufferOptions Spilling(const std::string& dir, size_t limit,
                                  bool checksums = true,
                                  io::FileSystem* fs = nullptr) {
  TransactionBufferOptions o;
  o.checksums = checksums;
  o.spill_dir = dir;
  o.memory_limit = limit;
  o.file_system = fs;
  return o;
}

// Anonymous_gtid, BEGIN, Rows_query events of the given sizes (text of
// `sizes[i]` bytes, content from `seed`), Xid.
void BuildSized(TransactionBuffer* txn, uint64_t seed,
                const std::vector<size_t>& sizes) {
  txn->Clear();
  const uint32_t ts = 1700000000;
  AppendAnonymousGtid(txn, ts, 1, 0, 1);
  AppendQuery(txn, ts, 1, 7, "db", "BEGIN");
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t n : sizes) {
    char* body = txn->AppendEvent(kRowsQueryEvent, 1, ts, kFlagIgnorable, n + 1);
    body[0] = static_cast<char>(n > 255 ? 255 : n);
    for (size_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      body[1 + i] = static_cast<char>('a' + x % 26);
    }
  }
  AppendXid(txn, ts, 1, seed);
}

// Sizes that exercise every path of the streaming: small events, events
// above 64 KiB (the checksum correction by operator), one larger than the
// flush stage's 4 MiB chunk (split across pieces), and events that straddle
// the chunk boundaries.
std::vector<size_t> MixedSizes() {
  std::vector<size_t> sizes;
  for (int i = 0; i < 300; ++i) sizes.push_back(40 + (i * 7919) % 3000);
  sizes.push_back(70000);
  sizes.push_back(5 << 20);
  for (int i = 0; i < 40; ++i) sizes.push_back(100000 + i * 1234);
  for (int i = 0; i < 200; ++i) sizes.push_back(200 + (i * 104729) % 9000);
  return sizes;
}

std::string Slice(const std::string& dir, const CommitPosition& p) {
  std::string f = ReadFile(absl::StrCat(dir, "/binlog.00000", p.file_number));
  return f.substr(p.start, p.end - p.start);
}

// Every event of the log read back (the reader checks each event's
// checksum and that log_pos is its end offset).
std::vector<testing_util::EventRef> ReadBack(Binlog* log) {
  std::vector<testing_util::EventRef> out;
  auto r = log->NewReader(ReaderOptions());
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return out;
  absl::Status s = testing_util::ReadAll(r->get(), &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

class SpillTest : public ::testing::TestWithParam<bool> {};

TEST_P(SpillTest, SpilledTransactionIsWrittenByteForByteAsInMemory) {
  const bool checksums = GetParam();
  Options o = TestOptions();
  o.checksums = checksums;
  const std::string dir_a = NewTempDir("spill_a");
  const std::string dir_b = NewTempDir("spill_b");
  auto a = OpenOrDie(dir_a, o);
  auto b = OpenOrDie(dir_b, o);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  TransactionBuffer mem(checksums);
  TransactionBuffer spill(Spilling(dir_b, 64 << 10, checksums));
  // A small one first, so the big one starts at an offset other than the
  // header's end; then the big one twice (the buffer and its file reused).
  for (int round = 0; round < 3; ++round) {
    std::vector<size_t> sizes =
        round == 0 ? std::vector<size_t>{100, 200} : MixedSizes();
    BuildSized(&mem, round, sizes);
    BuildSized(&spill, round, sizes);
    EXPECT_EQ(spill.size(), mem.size());
    EXPECT_EQ(spill.event_count(), mem.event_count());
    EXPECT_EQ(spill.spilled(), round > 0);
    auto pa = a->Commit(&mem);
    auto pb = b->Commit(&spill);
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    EXPECT_EQ(pa->start, pb->start);
    EXPECT_EQ(pa->end, pb->end);
    EXPECT_EQ(pb->end - pb->start, spill.size());
    EXPECT_TRUE(Slice(dir_a, *pa) == Slice(dir_b, *pb)) << "round " << round;
  }
  EXPECT_EQ(ReadBack(b.get()).size(), ReadBack(a.get()).size());
  ASSERT_OK(a->Close());
  ASSERT_OK(b->Close());
}

INSTANTIATE_TEST_SUITE_P(Checksums, SpillTest, ::testing::Bool());

TEST(SpillTest, CommitGtidIsPatchedInMemoryAndCountsSpilledBytes) {
  Options o = TestOptions();
  o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  const std::string dir = NewTempDir("spill_gtid");
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  txn->Clear();
  CommitGtid g;
  txn->AppendCommitGtid(1700000000, 1, g);
  AppendQuery(txn.get(), 1700000000, 1, 7, "db", "BEGIN");
  std::string text(200000, 'x');
  for (int i = 0; i < 100; ++i) AppendRowsQuery(txn.get(), 1700000000, 1, text);
  AppendXid(txn.get(), 1700000000, 1, 9);
  ASSERT_TRUE(txn->spilled());
  auto pos = log->Commit(txn.get());
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(pos->identity.gno, 1);
  // The reader checks checksums and log_pos; the Gtid event's
  // transaction_length is the whole transaction.
  auto events = ReadBack(log.get());
  uint64_t gtid_at = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == kGtidEvent) gtid_at = i;
  }
  ASSERT_GT(gtid_at, 0u);
  absl::StatusOr<MySqlGtidEvent> ge =
      DecodeMySqlGtidEvent(EventBody(events[gtid_at].bytes, true));
  ASSERT_TRUE(ge.ok()) << ge.status();
  EXPECT_EQ(ge->transaction_length, pos->end - pos->start);
  EXPECT_EQ(events.back().end, pos->end);
  ASSERT_OK(log->Close());
}

TEST(SpillTest, MariaDbGtidOfASpilledTransactionIsAssignedInMemory) {
  Options o = TestOptions();
  o.flavor = LogFlavor::kMariaDB;
  o.transaction_memory_limit = 16 << 10;
  const std::string dir = NewTempDir("spill_maria");
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  for (int i = 0; i < 2; ++i) {
    txn->Clear();
    CommitGtid g;
    txn->AppendMariaCommitGtid(1700000000, 1, g);
    for (int k = 0; k < 40; ++k) {
      AppendQuery(txn.get(), 1700000000, 1, 7, "db",
                  absl::StrCat("INSERT INTO t VALUES ('", std::string(1000, 'q'), "')"));
    }
    AppendXid(txn.get(), 1700000000, 1, 9 + i);
    ASSERT_TRUE(txn->spilled());
    auto pos = log->Commit(txn.get());
    ASSERT_TRUE(pos.ok()) << pos.status();
    EXPECT_EQ(pos->identity.seq_no, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(pos->end - pos->start, txn->size());
  }
  auto events = ReadBack(log.get());
  int gtids = 0;
  for (const auto& ev : events) gtids += ev.type == kMariaGtidEvent;
  EXPECT_EQ(gtids, 2);
  ASSERT_OK(log->Close());
}

TEST(SpillTest, MemoryStaysBoundedByTheLimit) {
  const std::string dir = NewTempDir("spill_mem");
  TransactionBuffer txn(Spilling(dir, 1 << 20));
  std::vector<size_t> sizes(20000, 3000);  // 60 MB of small events
  BuildSized(&txn, 1, sizes);
  EXPECT_GT(txn.size(), 57u << 20);
  EXPECT_LE(txn.peak_memory(), 2u << 20);
  EXPECT_TRUE(txn.status().ok());
  // An in-memory buffer holds it all.
  TransactionBuffer mem;
  BuildSized(&mem, 1, sizes);
  EXPECT_GE(mem.peak_memory(), mem.size());
}

TEST(SpillTest, LastEventStaysInMemoryForInPlaceEncoders) {
  const std::string dir = NewTempDir("spill_extend");
  TransactionBuffer txn(Spilling(dir, 4096));
  const uint32_t ts = 1700000000;
  AppendAnonymousGtid(&txn, ts, 1, 0, 1);
  AppendQuery(&txn, ts, 1, 7, "db", "BEGIN");
  for (int i = 0; i < 10; ++i) AppendRowsQuery(&txn, ts, 1, std::string(1000, 'a'));
  // This append spills what came before; the new event is writable in
  // place, extendable, and counted among the transaction's events.
  char* body = txn.AppendEvent(kRowsQueryEvent, 1, ts, kFlagIgnorable, 11);
  ASSERT_TRUE(txn.spilled());
  std::memcpy(body, "\x0ahello worl", 11);
  char* more = txn.ExtendLastEvent(20000);
  std::memset(more, 'd', 20000);
  txn.LastEventBody()[0] = 10;
  const size_t last = txn.appended_event_count() - 1;
  EXPECT_EQ(last, 12u);
  EXPECT_TRUE(txn.appended_event_in_memory(last));
  EXPECT_FALSE(txn.appended_event_in_memory(1));
  EXPECT_EQ(txn.appended_event_size(last), 19u + 11 + 20000 + 4);
  EXPECT_EQ(txn.appended_event_type(last), kRowsQueryEvent);
  AppendXid(&txn, ts, 1, 5);
  auto log = OpenOrDie(dir, TestOptions());
  ASSERT_NE(log, nullptr);
  auto pos = log->Commit(&txn);
  ASSERT_TRUE(pos.ok()) << pos.status();
  auto events = ReadBack(log.get());
  ASSERT_GE(events.size(), 14u);
  const auto& ev = events[events.size() - 2];
  EXPECT_EQ(ev.type, kRowsQueryEvent);
  EXPECT_EQ(ev.bytes.size(), 19u + 11 + 20000 + 4);
  EXPECT_EQ(ev.bytes.substr(19, 11), "\x0ahello worl");
  ASSERT_OK(log->Close());
}

TEST(SpillTest, TransactionAboveMaxSizeIsRefusedAndNothingIsWritten) {
  const std::string dir = NewTempDir("spill_max");
  Options o = TestOptions();
  o.transaction_memory_limit = 64 << 10;
  o.max_transaction_size = 1 << 20;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  BuildSized(txn.get(), 1, std::vector<size_t>(1000, 2000));  // 2 MB
  EXPECT_THAT(txn->status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("max_size = 1048576")));
  const CommitPosition before = log->VisibleEnd();
  auto pos = log->Commit(txn.get());
  EXPECT_THAT(pos.status(), StatusIs(absl::StatusCode::kResourceExhausted,
                                     HasSubstr("max_binlog_cache_size")));
  EXPECT_EQ(log->VisibleEnd().end, before.end);
  // The buffer and the log go on.
  BuildSized(txn.get(), 2, std::vector<size_t>(100, 2000));
  EXPECT_TRUE(txn->status().ok());
  auto ok = log->Commit(txn.get());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->start, before.end);
  ASSERT_OK(log->Close());
}

TEST(SpillTest, MaxSizeWithoutSpillingStopsTheBufferGrowing) {
  TransactionBufferOptions bo;
  bo.max_size = 256 << 10;
  TransactionBuffer txn(bo);
  BuildSized(&txn, 1, std::vector<size_t>(2000, 1000));  // 2 MB
  EXPECT_THAT(txn.status(), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_LE(txn.peak_memory(), 1u << 20);
  EXPECT_FALSE(txn.spilled() && txn.status().ok());
}

TEST(SpillTest, NewTransactionBufferDefaultsAreTheHeaderConstants) {
  Options o;
  EXPECT_EQ(o.transaction_memory_limit, kDefaultTransactionMemoryLimit);
  EXPECT_EQ(o.max_transaction_size, kMaxTransactionSize);
  o.max_transaction_size = kMaxTransactionSize + 1;
  EXPECT_THAT(Binlog::Open(NewTempDir("spill_opts"), "binlog", o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SpillTest, SpillWriteErrorFailsTheCommitAndWritesNothing) {
  io::FaultInjectionFileSystem fs;
  const std::string dir = NewTempDir("spill_werr");
  Options o = TestOptions();
  o.file_system = &fs;
  o.transaction_memory_limit = 64 << 10;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  fs.InjectFault(io::FaultSpec{io::FaultOp::kTempFile, io::FaultKind::kEio, 3, "", false});
  BuildSized(txn.get(), 1, std::vector<size_t>(300, 2000));
  EXPECT_THAT(txn->status(), StatusIs(absl::StatusCode::kAborted, HasSubstr("injected EIO")));
  const CommitPosition before = log->VisibleEnd();
  auto pos = log->Commit(txn.get());
  EXPECT_THAT(pos.status(),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("temporary file")));
  EXPECT_EQ(log->VisibleEnd().end, before.end);
  // Not poisoned: the next transaction, through the same buffer, commits.
  BuildSized(txn.get(), 2, std::vector<size_t>(300, 2000));
  ASSERT_TRUE(txn->spilled());
  auto ok = log->Commit(txn.get());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->start, before.end);
  ASSERT_OK(log->Close());
}

TEST(SpillTest, SpillReadErrorInTheFlushStagePoisonsTheLog) {
  io::FaultInjectionFileSystem fs;
  const std::string dir = NewTempDir("spill_rerr");
  Options o = TestOptions();
  o.file_system = &fs;
  o.transaction_memory_limit = 64 << 10;
  uint64_t visible_before = 0;
  {
    auto log = OpenOrDie(dir, o);
    ASSERT_NE(log, nullptr);
    auto txn = log->NewTransactionBuffer();
    BuildSized(txn.get(), 1, std::vector<size_t>(3000, 2000));  // 6 MB: 2 chunks
    ASSERT_TRUE(txn->spilled());
    visible_before = log->VisibleEnd().end;
    // The second read of the spill file fails: the first chunk may be
    // written already.
    fs.InjectFault(io::FaultSpec{io::FaultOp::kTempFile, io::FaultKind::kEio, 2, "", false});
    auto pos = log->Commit(txn.get());
    EXPECT_THAT(pos.status(), StatusIs(absl::StatusCode::kUnknown,
                                       HasSubstr("reading a spilled transaction")));
    EXPECT_EQ(log->VisibleEnd().end, visible_before);
    TransactionBuffer small;
    testing_util::BuildTransaction(&small, 2, 100);
    EXPECT_THAT(log->Commit(&small).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_FALSE(log->Close().ok());
  }
  // Reopened, the partial transaction is cut and the log goes on.
  fs.ClearFaults();
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  EXPECT_TRUE(log->recovery().recovered);
  for (const auto& ev : ReadBack(log.get())) {
    EXPECT_NE(ev.type, kRowsQueryEvent);
  }
  ASSERT_OK(log->Close());
}

// A spill file whose bytes change under the buffer (the first spilled
// event's size now reaches past the end of the file): Commit fails with
// DataLoss and poisons the log instead of writing a short transaction, and
// the reopened log holds none of it.
class GrowFirstSpilledEventFs : public io::FileSystemWrapper {
 public:
  GrowFirstSpilledEventFs() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  absl::StatusOr<std::unique_ptr<io::TempFile>> NewTempFile(
      const std::string& dir) override {
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::TempFile> f,
                            io::FileSystemWrapper::NewTempFile(dir));
    return std::unique_ptr<io::TempFile>(new File(std::move(f)));
  }

 private:
  class File : public io::TempFile {
   public:
    explicit File(std::unique_ptr<io::TempFile> f) : f_(std::move(f)) {}
    absl::Status Write(uint64_t offset, absl::string_view data) override {
      return f_->Write(offset, data);
    }
    absl::Status Read(uint64_t offset, size_t n, char* scratch,
                      size_t* bytes_read) const override {
      BINLOG_RETURN_IF_ERROR(f_->Read(offset, n, scratch, bytes_read));
      if (offset == 0 && *bytes_read >= kHeaderSize) {
        uint32_t size = LoadLe32(scratch + kEventSizeOffset);
        StoreLe32(scratch + kEventSizeOffset,
                  size + static_cast<uint32_t>(*bytes_read) + 1000);
      }
      return absl::OkStatus();
    }
    absl::Status Truncate(uint64_t size) override { return f_->Truncate(size); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<io::TempFile> f_;
  };
};

TEST(SpillTest, ASpillFileThatChangedFailsTheCommitInsteadOfWritingItShort) {
  GrowFirstSpilledEventFs fs;
  const std::string dir = NewTempDir("spill_changed");
  Options o = TestOptions();
  o.file_system = &fs;
  o.transaction_memory_limit = 64 << 10;
  {
    auto log = OpenOrDie(dir, o);
    ASSERT_NE(log, nullptr);
    auto txn = log->NewTransactionBuffer();
    BuildSized(txn.get(), 1, std::vector<size_t>(200, 2000));  // 400 KB
    ASSERT_TRUE(txn->spilled());
    const uint64_t visible_before = log->VisibleEnd().end;
    auto pos = log->Commit(txn.get());
    EXPECT_THAT(pos.status(), StatusIs(absl::StatusCode::kDataLoss,
                                       HasSubstr("reading a spilled transaction")));
    EXPECT_EQ(log->VisibleEnd().end, visible_before);
    TransactionBuffer small;
    testing_util::BuildTransaction(&small, 2, 100);
    EXPECT_THAT(log->Commit(&small).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_FALSE(log->Close().ok());
  }
  auto log = OpenOrDie(dir, TestOptions());
  ASSERT_NE(log, nullptr);
  for (const auto& ev : ReadBack(log.get())) {
    EXPECT_NE(ev.type, kRowsQueryEvent);
  }
  ASSERT_OK(log->Close());
}

TEST(SpillTest, TransactionLargerThanMaxFileSizeIsWrittenWholeThenRotates) {
  const std::string dir = NewTempDir("spill_rotate");
  Options o = TestOptions();
  o.max_file_size = 64 << 10;
  o.transaction_memory_limit = 16 << 10;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  BuildSized(txn.get(), 1, {100});
  auto p1 = log->Commit(txn.get());
  ASSERT_TRUE(p1.ok()) << p1.status();
  BuildSized(txn.get(), 2, std::vector<size_t>(500, 1000));  // ~0.5 MB
  ASSERT_TRUE(txn->spilled());
  auto p2 = log->Commit(txn.get());
  ASSERT_TRUE(p2.ok()) << p2.status();
  EXPECT_EQ(p2->file_number, p1->file_number);  // not split, not moved
  EXPECT_EQ(p2->start, p1->end);
  BuildSized(txn.get(), 3, {100});
  auto p3 = log->Commit(txn.get());
  ASSERT_TRUE(p3.ok()) << p3.status();
  EXPECT_EQ(p3->file_number, p1->file_number + 1);  // rotated after it
  ASSERT_OK(log->Close());
  // The closed file holds the whole transaction and ends with Rotate.
  auto reopened = OpenOrDie(dir, o);
  ASSERT_NE(reopened, nullptr);
  auto events = ReadBack(reopened.get());
  int rows = 0;
  uint8_t after_big = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].file == p2->file_number && events[i].type == kRowsQueryEvent) ++rows;
    if (events[i].file == p2->file_number && events[i].offset == p2->end) {
      after_big = events[i].type;
    }
  }
  EXPECT_EQ(rows, 501);
  EXPECT_EQ(after_big, kRotateEvent);
  ASSERT_OK(reopened->Close());
}

TEST(SpillTest, SpilledTransactionIsWrittenOneUnsyncedWindowAtATime) {
  io::FaultInjectionFileSystem fs;
  const std::string dir = NewTempDir("spill_window");
  Options o = TestOptions();
  o.file_system = &fs;
  o.max_group_bytes = 64 << 10;
  o.max_unsynced_bytes = 64 << 10;
  o.transaction_memory_limit = 16 << 10;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  // Before each write of the log file, what is unsynced never exceeds one
  // window (checked in the pause hook, which runs before the write).
  std::mutex mu;
  uint64_t worst = 0;
  const std::string path = dir + "/binlog.000001";
  fs.SetOpHook([&](io::FaultOp op, const std::string& p) {
    if (op != io::FaultOp::kWrite || p != path) return;
    std::lock_guard<std::mutex> l(mu);
    worst = std::max(worst, fs.UnsyncedBytes(path));
  });
  BuildSized(txn.get(), 1, std::vector<size_t>(1000, 1000));  // ~1 MB
  const uint64_t syncs = log->stats().fsyncs;
  auto pos = log->Commit(txn.get());
  ASSERT_TRUE(pos.ok()) << pos.status();
  fs.SetOpHook(nullptr);
  EXPECT_GE(log->stats().fsyncs - syncs, (pos->end - pos->start) / (64 << 10));
  EXPECT_LE(worst, 64u << 10);
  ASSERT_OK(log->Close());
}

TEST(SpillTest, SpilledTransactionsAreNotCompressed) {
  const std::string dir = NewTempDir("spill_zstd");
  Options o = TestOptions();
  o.compression = io::Codec::kZstd;
  o.transaction_memory_limit = 64 << 10;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  auto txn = log->NewTransactionBuffer();
  BuildSized(txn.get(), 1, std::vector<size_t>(10, 2000));
  ASSERT_TRUE(log->Commit(txn.get()).ok());
  EXPECT_TRUE(txn->compressed());
  BuildSized(txn.get(), 2, std::vector<size_t>(100, 2000));
  ASSERT_TRUE(txn->spilled());
  auto pos = log->Commit(txn.get());
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_FALSE(txn->compressed());
  EXPECT_EQ(pos->end - pos->start, txn->size());
  ASSERT_OK(log->Close());
}

// Small commits from several threads while spilled ones commit: every
// transaction is in the log once, whole, in the order of its position.
TEST(SpillTest, SmallCommitsInterleaveWithSpilledOnes) {
  const std::string dir = NewTempDir("spill_mt");
  Options o = TestOptions();
  o.transaction_memory_limit = 64 << 10;
  auto log = OpenOrDie(dir, o);
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> ends;  // (start, end)
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto txn = log->NewTransactionBuffer();
      for (int i = 0; i < kPerThread; ++i) {
        const bool big = t == 0 && i % 10 == 0;
        BuildSized(txn.get(), t * 1000 + i,
                   big ? std::vector<size_t>(400, 1500) : std::vector<size_t>{200});
        auto pos = log->Commit(txn.get());
        if (!pos.ok() || (big && !txn->spilled())) {
          failures.fetch_add(1);
          continue;
        }
        std::lock_guard<std::mutex> l(mu);
        ends.emplace_back(pos->start, pos->end);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::sort(ends.begin(), ends.end());
  for (size_t i = 1; i < ends.size(); ++i) EXPECT_EQ(ends[i].first, ends[i - 1].second);
  auto events = ReadBack(log.get());
  int xids = 0;
  for (const auto& ev : events) xids += ev.type == kXidEvent;
  EXPECT_EQ(xids, kThreads * kPerThread);
  ASSERT_OK(log->Close());
}

TEST(TempFileTest, UnnamedFileLeavesNoEntryAndReadsBack) {
  const std::string dir = NewTempDir("tempfile");
  auto f = io::FileSystem::Default()->NewTempFile(dir);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_OK((*f)->Write(10, "hello"));
  char buf[32];
  size_t got = 0;
  ASSERT_OK((*f)->Read(8, 32, buf, &got));
  EXPECT_EQ(got, 7u);
  EXPECT_EQ(std::string(buf + 2, 5), "hello");
  ASSERT_OK((*f)->Truncate(0));
  ASSERT_OK((*f)->Read(0, 32, buf, &got));
  EXPECT_EQ(got, 0u);
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  EXPECT_THAT(io::FileSystem::Default()->NewTempFile(dir + "/missing").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace binlog
