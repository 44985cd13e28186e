// Tailing readers of a live log (Binlog::NewReader, binlog/reader.h).
// Which bytes they verify: bytes this process's writer published are not
// re-verified unless the reader asks (ReaderOptions::
// verify_published_checksums); files read at rest, including the files of
// a log written before this Open, are verified as ChecksumMode says.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using testing_util::BuildTransaction;
using testing_util::EventRef;
using testing_util::NewTempDir;

std::string FilePath(const std::string& dir, uint64_t n) {
  return io::JoinPath(dir, BinlogFileName("binlog", n));
}

// Flips one bit of the byte at `offset` of `path`, in place (the writer
// may have the file open; the rest of the file is untouched).
void FlipByte(const std::string& path, uint64_t offset) {
  std::string old = testing_util::ReadFile(path);
  ASSERT_LT(offset, old.size());
  auto f = io::FileSystem::Default()->OpenWritable(path,
                                                   io::OpenMode::kOpenExisting);
  ASSERT_TRUE(f.ok()) << f.status();
  const char c = static_cast<char>(old[offset] ^ 0x20);
  ASSERT_TRUE((*f)->Write(offset, absl::string_view(&c, 1)).ok());
  ASSERT_TRUE((*f)->Close().ok());
}

void CommitTransactions(Binlog* log, int first, int n) {
  TransactionBuffer txn;
  for (int i = first; i < first + n; ++i) {
    BuildTransaction(&txn, static_cast<uint64_t>(i), 200);
    ASSERT_TRUE(log->Commit(&txn).ok());
  }
}

// The events a tailing reader with `ro` returns up to the published end,
// and the status it stopped with (OK at the end).
absl::Status ReadTail(Binlog* log, ReaderOptions ro,
                      std::vector<EventRef>* out) {
  auto r = log->NewReader(ro);
  if (!r.ok()) return r.status();
  return testing_util::ReadAll(r->get(), out);
}

// The first Rows_query event of file `file` at or after `from`.
EventRef RowsQueryIn(const std::vector<EventRef>& events, uint64_t file,
                     uint64_t from = 0) {
  for (const EventRef& e : events) {
    if (e.file == file && e.type == kRowsQueryEvent && e.offset >= from) {
      return e;
    }
  }
  ADD_FAILURE() << "no Rows_query event in file " << file;
  return EventRef{};
}

Options SmallFiles() {
  Options o;
  o.max_file_size = 64 << 10;
  return o;
}

TEST(TailReaderTest, PublishedBytesAreNotReverifiedUnlessAsked) {
  const std::string dir = NewTempDir("tail_crc_live");
  auto log = Binlog::Open(dir, "binlog", SmallFiles());
  ASSERT_TRUE(log.ok()) << log.status();
  // Enough for three files: the first and a rotated-to one are damaged.
  CommitTransactions(log->get(), 0, 500);
  std::vector<EventRef> clean;
  ASSERT_TRUE(ReadTail(log->get(), ReaderOptions(), &clean).ok());
  ASSERT_GE(clean.back().file, 3u);
  const EventRef bad1 = RowsQueryIn(clean, 1, 4096);
  const EventRef bad2 = RowsQueryIn(clean, 2, 4096);
  FlipByte(FilePath(dir, 1), bad1.offset + kHeaderSize + 10);
  FlipByte(FilePath(dir, 2), bad2.offset + kHeaderSize + 10);

  // Default: every event comes back, the damaged ones as stored, with no
  // checksum verdict.
  {
    auto r = (*log)->NewReader(ReaderOptions());
    ASSERT_TRUE(r.ok());
    size_t n = 0;
    int damaged = 0;
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      ASSERT_LT(n, clean.size());
      EXPECT_EQ(ev.offset, clean[n].offset);
      EXPECT_EQ(ev.checksum, ChecksumState::kNone);
      if (ev.data != clean[n].bytes) ++damaged;
      ++n;
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_EQ(n, clean.size());
    EXPECT_EQ(damaged, 2);
  }
  // Asked: DataLoss at the first damaged event, naming it.
  {
    ReaderOptions ro;
    ro.verify_published_checksums = true;
    std::vector<EventRef> got;
    absl::Status s = ReadTail(log->get(), ro, &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad1.offset)),
              std::string::npos)
        << s;
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back().end, bad1.offset);
  }
  // Asked, from the rotated-to file: its damage is found too.
  {
    ReaderOptions ro;
    ro.verify_published_checksums = true;
    ro.start_file = 2;
    std::vector<EventRef> got;
    absl::Status s = ReadTail(log->get(), ro, &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad2.offset)),
              std::string::npos)
        << s;
  }
  // Asked with ChecksumMode::kReport: the damaged events are kBad, the
  // others kOk.
  {
    ReaderOptions ro;
    ro.verify_published_checksums = true;
    ro.checksum_mode = ChecksumMode::kReport;
    auto r = (*log)->NewReader(ro);
    ASSERT_TRUE(r.ok());
    int bad = 0;
    Event ev;
    while ((*r)->Next(&ev).ok()) {
      if (ev.checksum == ChecksumState::kBad) ++bad;
      if (ev.offset > kMagicSize) {
        EXPECT_NE(ev.checksum, ChecksumState::kNone);
      }
    }
    EXPECT_EQ(bad, 2);
  }
  ASSERT_TRUE((*log)->Close().ok());
}

// A tailing reader of a log opened again reads the files of the earlier
// Open at rest: their checksums are verified whatever
// verify_published_checksums says; the new file's are not.
TEST(TailReaderTest, FilesWrittenBeforeThisOpenAreVerified) {
  const std::string dir = NewTempDir("tail_crc_reopen");
  std::vector<EventRef> before;
  {
    auto log = Binlog::Open(dir, "binlog", SmallFiles());
    ASSERT_TRUE(log.ok()) << log.status();
    CommitTransactions(log->get(), 0, 300);
    ASSERT_TRUE(ReadTail(log->get(), ReaderOptions(), &before).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  ASSERT_GE(before.back().file, 2u);
  const EventRef bad = RowsQueryIn(before, 1, 4096);
  FlipByte(FilePath(dir, 1), bad.offset + kHeaderSize + 10);

  // At rest, as always.
  {
    auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<EventRef> got;
    absl::Status s = testing_util::ReadAll(r->get(), &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad.offset)),
              std::string::npos)
        << s;
  }

  auto log = Binlog::Open(dir, "binlog", SmallFiles());
  ASSERT_TRUE(log.ok()) << log.status();
  const uint64_t first_new = before.back().file + 1;
  CommitTransactions(log->get(), 300, 20);
  // The tailing reader of the new Open, default options: DataLoss at the
  // damaged event of the earlier Open's file.
  {
    std::vector<EventRef> got;
    absl::Status s = ReadTail(log->get(), ReaderOptions(), &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad.offset)),
              std::string::npos)
        << s;
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back().end, bad.offset);
  }
  // The files of the earlier Open are verified event by event (kOk), the
  // new file's events are not (kNone).
  {
    ReaderOptions ro;
    ro.start_file = 2;
    auto r = (*log)->NewReader(ro);
    ASSERT_TRUE(r.ok());
    int ok_old = 0, none_new = 0;
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      if (ev.offset == kMagicSize) continue;  // Format_description
      if (ev.file_number < first_new) {
        EXPECT_EQ(ev.checksum, ChecksumState::kOk) << ev.file_number;
        ++ok_old;
      } else {
        EXPECT_EQ(ev.checksum, ChecksumState::kNone) << ev.file_number;
        ++none_new;
      }
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_GT(ok_old, 0);
    EXPECT_GT(none_new, 0);
  }
  ASSERT_TRUE((*log)->Close().ok());
}

}  // namespace
}  // namespace binlog
