// binlog::Reader over io::SequentialReader: events straddling windows,
// events larger than the window, prefetch on and off returning identical
// events, a live file truncated under a tailing reader, and drop_behind.
// Has threads (prefetch helpers): tagged "concurrency" for TSan.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testing_util::EventRef;
using ::binlog::testing_util::NewTempDir;
using ::binlog::testing_util::ReadAll;
using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

constexpr size_t kWindow = 64 << 10;

// Transactions whose Rows_query bodies are sized to land events on, just
// before and just after 64 KiB window boundaries, plus events of several
// windows (3 MiB) and tiny ones.
void WriteLog(const std::string& dir, std::vector<size_t>* sizes) {
  Options o;
  o.max_file_size = 16 << 20;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_THAT(log, IsOk());
  TransactionBuffer txn;
  const size_t payloads[] = {10,        kWindow - 200, kWindow - 19,
                             kWindow,   kWindow + 1,   3 << 20,
                             300,       2 * kWindow,   7,
                             kWindow / 2 + 3};
  for (int i = 0; i < 120; ++i) {
    size_t p = payloads[i % 10];
    testing_util::BuildTransaction(&txn, i, p);
    sizes->push_back(p);
    ASSERT_THAT((*log)->Commit(&txn), IsOk());
  }
  ASSERT_THAT((*log)->Close(), IsOk());
}

std::vector<EventRef> ReadDir(const std::string& dir, const ReaderOptions& o,
                              io::SequentialReaderStats* st = nullptr) {
  auto r = Reader::OpenDirectory(dir, "binlog", o);
  EXPECT_THAT(r, IsOk());
  std::vector<EventRef> events;
  EXPECT_THAT(ReadAll(r->get(), &events), IsOk());
  EXPECT_TRUE((*r)->torn_tails().empty());
  if (st != nullptr) *st = (*r)->io_stats();
  return events;
}

TEST(ReaderWindowsTest, PrefetchOnAndOffReturnIdenticalEvents) {
  std::string dir = NewTempDir("rw_identical");
  std::vector<size_t> sizes;
  WriteLog(dir, &sizes);
  uint64_t total = 0;
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  ASSERT_THAT(names, IsOk());
  for (const std::string& name : *names) {
    if (name.rfind("binlog.0", 0) != 0) continue;
    auto s = io::FileSystem::Default()->FileSize(dir + "/" + name);
    ASSERT_THAT(s, IsOk());
    total += *s;
  }
  std::vector<EventRef> base;
  for (size_t buffer : {kWindow, size_t{1} << 20}) {
    for (bool prefetch : {false, true}) {
      SCOPED_TRACE(absl::StrCat("buffer ", buffer, " prefetch ", prefetch));
      ReaderOptions o;
      o.buffer_size = buffer;
      o.prefetch = prefetch;
      io::SequentialReaderStats st;
      std::vector<EventRef> events = ReadDir(dir, o, &st);
      ASSERT_GE(events.size(), 120u * 4);
      if (base.empty()) {
        base = events;
        continue;
      }
      ASSERT_EQ(events.size(), base.size());
      for (size_t i = 0; i < events.size(); ++i) {
        ASSERT_EQ(events[i].file, base[i].file);
        ASSERT_EQ(events[i].offset, base[i].offset);
        ASSERT_TRUE(events[i].bytes == base[i].bytes) << "event " << i;
      }
      // Nothing read twice (beyond a window of look-ahead per file).
      EXPECT_LE(st.bytes_read, total + 4 * buffer);
      if (prefetch) {
        EXPECT_GT(st.prefetch_reads, 0u);
      }
    }
  }
  // The big events came back whole.
  size_t big = 0;
  for (const auto& e : base) big += e.bytes.size() > (3u << 20);
  EXPECT_EQ(big, 12u);
}

TEST(ReaderWindowsTest, DropBehindReadsTheSameEvents) {
  std::string dir = NewTempDir("rw_drop");
  std::vector<size_t> sizes;
  WriteLog(dir, &sizes);
  ReaderOptions plain;
  ReaderOptions drop;
  drop.drop_behind = true;
  drop.prefetch = true;
  drop.buffer_size = kWindow;
  std::vector<EventRef> a = ReadDir(dir, plain), b = ReadDir(dir, drop);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(a[i].bytes == b[i].bytes);
}

// A tailing reader with prefetch follows a log that grows by big and small
// transactions; every event arrives once, in order.
TEST(ReaderWindowsTest, TailingReaderWithPrefetchSeesEveryEventOnce) {
  std::string dir = NewTempDir("rw_tail");
  Options o;
  o.max_file_size = 8 << 20;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_THAT(log, IsOk());
  ReaderOptions ro;
  ro.buffer_size = kWindow;
  ro.prefetch = true;
  auto r = (*log)->NewReader(ro);
  ASSERT_THAT(r, IsOk());
  TransactionBuffer txn;
  int next_id = 0;
  int seen = 0;
  Event ev;
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 1 + round % 5; ++k) {
      size_t payload = (round * 7 + k) % 6 == 0 ? 5 * kWindow + 11 : 900;
      testing_util::BuildTransaction(&txn, next_id++, payload);
      ASSERT_THAT((*log)->Commit(&txn), IsOk());
    }
    for (;;) {
      absl::Status s = (*r)->Next(&ev);
      if (absl::IsOutOfRange(s)) break;
      ASSERT_THAT(s, IsOk());
      if (ev.header.type == kRowsQueryEvent) {
        std::string body(ev.body().substr(1, 20));
        EXPECT_EQ(body.substr(0, body.find(' ', 4)),
                  absl::StrCat("txn ", seen));
        ++seen;
      }
    }
  }
  EXPECT_EQ(seen, next_id);
  ASSERT_THAT((*log)->Close(), IsOk());
}

// The active file loses bytes below the published end under a tailing
// reader: DataLoss naming the file and offset, not a silent stop.
TEST(ReaderWindowsTest, LiveFileTruncatedUnderTheReaderIsDataLoss) {
  std::string dir = NewTempDir("rw_trunc");
  Options o;
  o.preallocate = io::PreallocMode::kNone;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_THAT(log, IsOk());
  TransactionBuffer txn;
  for (int i = 0; i < 200; ++i) {
    testing_util::BuildTransaction(&txn, i, 2000);
    ASSERT_THAT((*log)->Commit(&txn), IsOk());
  }
  ReaderOptions ro;
  ro.buffer_size = kWindow;
  ro.prefetch = false;  // nothing read ahead before the cut
  auto r = (*log)->NewReader(ro);
  ASSERT_THAT(r, IsOk());
  Event ev;
  ASSERT_THAT((*r)->Next(&ev), IsOk());  // reads the first window
  CommitPosition end = (*log)->VisibleEnd();
  std::string path = dir + "/" + BinlogFileName("binlog", end.file_number);
  {
    auto w = io::FileSystem::Default()->OpenWritable(
        path, io::OpenMode::kOpenExisting);
    ASSERT_THAT(w, IsOk());
    ASSERT_THAT((*w)->Truncate(3 * kWindow), IsOk());
    ASSERT_THAT((*w)->Close(), IsOk());
  }
  absl::Status s;
  int events = 1;
  while ((s = (*r)->Next(&ev)).ok()) {
    ASSERT_LE(ev.end_offset, 3 * kWindow);
    ++events;
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path)));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
  EXPECT_GT(events, 10);
  (void)(*log)->Close();
}

}  // namespace
}  // namespace binlog
