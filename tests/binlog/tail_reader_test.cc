// Tailing readers of a live log (Binlog::NewReader, binlog/reader.h).
// Which bytes they verify: bytes this process's writer published are not
// re-verified unless the reader asks (ReaderOptions::
// verify_published_checksums); files read at rest, including the files of
// a log written before this Open, are verified as ChecksumMode says.
// Where they read from: a caught-up reader takes its events from the ring
// of recent bytes (Options::reader_ring_bytes, binlog/tail_ring.h) without
// reading the file; one that falls behind the ring reads the file and
// comes back; no event is missed or repeated at either switch, across
// rotations, in encrypted and compressed logs, and a view a reader holds
// is never overwritten. Single-threaded: the test decides when the
// writer writes and when each reader reads.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/format.h"
#include "binlog/keyring.h"
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

void CommitTransactions(Binlog* log, int first, int n, size_t payload = 200) {
  TransactionBuffer txn;
  for (int i = first; i < first + n; ++i) {
    BuildTransaction(&txn, static_cast<uint64_t>(i), payload);
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

// Bytes a tailing reader reads from a file are verified, the files this
// Binlog wrote included (the disk or the page cache may have changed
// them); the events it takes from the in-memory ring of recent groups are
// not re-verified unless it asks (verify_published_checksums).
TEST(TailReaderTest, RingBytesAreNotReverifiedUnlessAskedFileBytesAlwaysAre) {
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

  // Default, from the first file: DataLoss at the first damaged event.
  {
    std::vector<EventRef> got;
    absl::Status s = ReadTail(log->get(), ReaderOptions(), &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad1.offset)), std::string::npos)
        << s;
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back().end, bad1.offset);
  }
  // Default, from the rotated-to file: its damage is found too.
  {
    ReaderOptions ro;
    ro.start_file = 2;
    std::vector<EventRef> got;
    absl::Status s = ReadTail(log->get(), ro, &got);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", bad2.offset)), std::string::npos)
        << s;
  }
  // ChecksumMode::kReport: the damaged events are kBad, every other event
  // read from the files kOk.
  {
    ReaderOptions ro;
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
  // A caught-up reader takes the groups committed after it from the ring:
  // not re-verified by default (kNone), verified when asked (kOk).
  for (bool asked : {false, true}) {
    SCOPED_TRACE(asked ? "asked" : "default");
    const CommitPosition end = (*log)->VisibleEnd();
    ReaderOptions ro;
    ro.start_file = end.file_number;
    ro.start_offset = end.end;
    ro.verify_published_checksums = asked;
    auto r = (*log)->NewReader(ro);
    ASSERT_TRUE(r.ok()) << r.status();
    // Caught up first (the first events may come from the file window).
    CommitTransactions(log->get(), asked ? 2000 : 1000, 5);
    Event ev;
    while ((*r)->Next(&ev).ok()) {
    }
    const uint64_t reads = (*r)->io_stats().read_calls;
    CommitTransactions(log->get(), asked ? 2100 : 1100, 5);
    int n = 0;
    while ((*r)->Next(&ev).ok()) {
      EXPECT_EQ(ev.checksum, asked ? ChecksumState::kOk : ChecksumState::kNone)
          << "offset " << ev.offset;
      ++n;
    }
    EXPECT_GT(n, 0);
    EXPECT_EQ((*r)->io_stats().read_calls, reads) << "read from the ring, not the file";
  }
  ASSERT_TRUE((*log)->Close().ok());
}

// A tailing reader of a log opened again reads the files of the earlier
// Open at rest: their checksums are verified whatever
// verify_published_checksums says.
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
  // Every event read from a file is verified (kOk): the earlier Open's
  // files and the new one's (committed before any reader existed, so not
  // in the ring).
  {
    ReaderOptions ro;
    ro.start_file = 2;
    auto r = (*log)->NewReader(ro);
    ASSERT_TRUE(r.ok());
    int ok_old = 0, ok_new = 0;
    Event ev;
    absl::Status s;
    while ((s = (*r)->Next(&ev)).ok()) {
      if (ev.offset == kMagicSize) continue;  // Format_description
      EXPECT_EQ(ev.checksum, ChecksumState::kOk) << ev.file_number;
      ++(ev.file_number < first_new ? ok_old : ok_new);
    }
    EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
    EXPECT_GT(ok_old, 0);
    EXPECT_GT(ok_new, 0);
  }
  ASSERT_TRUE((*log)->Close().ok());
}

// ---- The ring of recent bytes.

constexpr size_t kRing = 64 << 10;

// Drains `r` up to the published end: Next() (decoded) or NextBatch().
absl::Status Drain(Reader* r, bool batch, std::vector<EventRef>* out) {
  if (!batch) {
    absl::Status s = testing_util::ReadAll(r, out);
    return s;
  }
  EventBatch b;
  for (;;) {
    absl::Status s = r->NextBatch(&b);
    if (absl::IsOutOfRange(s)) return absl::OkStatus();
    if (!s.ok()) return s;
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view ev = b.event(i);
      uint64_t off = b.offset + b.starts[i];
      out->push_back(EventRef{b.file_number, off, off + ev.size(),
                              static_cast<uint8_t>(ev[kTypeOffset]),
                              std::string(ev)});
    }
  }
}

uint64_t Reads(const Reader& r) { return r.io_stats().read_calls; }

// `tail` is exactly the events of the log at rest (after Close), in
// order: none missing, none repeated. Format_description events are
// compared but for their in-use flag (cleared by Close).
void ExpectSameAsAtRest(const std::string& dir,
                        const std::vector<EventRef>& tail, bool batch,
                        io::FileSystem* fs = nullptr) {
  ReaderOptions ro;
  if (batch) ro.payloads = PayloadMode::kRaw;
  auto r = Reader::OpenDirectory(dir, "binlog", ro, fs);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<EventRef> rest;
  ASSERT_TRUE(testing_util::ReadAll(r->get(), &rest).ok());
  ASSERT_EQ(tail.size(), rest.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(tail[i].file, rest[i].file) << i;
    EXPECT_EQ(tail[i].offset, rest[i].offset) << i;
    EXPECT_EQ(tail[i].end, rest[i].end) << i;
    EXPECT_EQ(tail[i].type, rest[i].type) << i;
    if (rest[i].type != kFormatDescriptionEvent) {
      EXPECT_EQ(tail[i].bytes, rest[i].bytes) << i;
    }
  }
}

Options RingOptions() {
  Options o;
  o.reader_ring_bytes = kRing;
  o.max_file_size = 1 << 20;
  return o;
}

class TailRingReaderTest : public testing::TestWithParam<bool> {
 protected:
  bool batch() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Api, TailRingReaderTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "NextBatch" : "Next";
                         });

TEST(TailRingOptionTest, RingSizeMustBeZeroOrAPowerOfTwoInRange) {
  const std::string dir = NewTempDir("ring_option");
  for (size_t bad : {size_t{100000}, size_t{32} << 10, size_t{2} << 30}) {
    Options o;
    o.reader_ring_bytes = bad;
    auto log = Binlog::Open(dir, "binlog", o);
    EXPECT_TRUE(absl::IsInvalidArgument(log.status())) << bad;
  }
  // 0: no ring; a caught-up reader reads the file for every group.
  Options o;
  o.reader_ring_bytes = 0;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  CommitTransactions(log->get(), 0, 2);
  ASSERT_TRUE(Drain(r->get(), false, &tail).ok());
  const uint64_t reads = Reads(**r);
  CommitTransactions(log->get(), 2, 2);
  ASSERT_TRUE(Drain(r->get(), false, &tail).ok());
  EXPECT_GT(Reads(**r), reads);
  ASSERT_TRUE((*log)->Close().ok());
}

TEST(TailRingOptionTest, ReadersBeyondTheSlotsReadTheFile) {
  const std::string dir = NewTempDir("ring_slots");
  auto log = Binlog::Open(dir, "binlog", RingOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  std::vector<std::unique_ptr<Reader>> readers;
  ReaderOptions small;
  small.buffer_size = 64 << 10;  // 1025 windows: 64 MiB, not 1 GiB
  for (int i = 0; i < 1025; ++i) {
    auto r = (*log)->NewReader(small);
    ASSERT_TRUE(r.ok());
    readers.push_back(std::move(*r));
  }
  CommitTransactions(log->get(), 0, 2);
  std::vector<uint64_t> reads;
  for (auto& r : readers) {
    std::vector<EventRef> tail;
    ASSERT_TRUE(Drain(r.get(), true, &tail).ok());
    reads.push_back(Reads(*r));
  }
  CommitTransactions(log->get(), 2, 2);
  for (size_t i = 0; i < readers.size(); ++i) {
    std::vector<EventRef> tail;
    ASSERT_TRUE(Drain(readers[i].get(), true, &tail).ok());
    ASSERT_EQ(tail.size(), 8u);
    if (i < 1024) {
      EXPECT_EQ(Reads(*readers[i]), reads[i]) << i;  // from the ring
    } else {
      EXPECT_GT(Reads(*readers[i]), reads[i]) << i;  // no slot: the file
    }
  }
  // A slot freed is taken by the next reader.
  readers[0].reset();
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  ASSERT_TRUE(Drain(r->get(), true, &tail).ok());
  const uint64_t before = Reads(**r);
  CommitTransactions(log->get(), 4, 2);
  ASSERT_TRUE(Drain(r->get(), true, &tail).ok());
  EXPECT_EQ(Reads(**r), before);
  readers.clear();
  r->reset();
  ASSERT_TRUE((*log)->Close().ok());
}

TEST_P(TailRingReaderTest, ACaughtUpReaderDoesNotReadTheFile) {
  const std::string dir = NewTempDir("ring_caught_up");
  auto log = Binlog::Open(dir, "binlog", RingOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  CommitTransactions(log->get(), 0, 5);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  const uint64_t reads = Reads(**r);  // the file's header events
  for (int round = 0; round < 40; ++round) {
    CommitTransactions(log->get(), 5 + round * 3, 3);
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  }
  EXPECT_EQ(Reads(**r), reads);
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());  // the Stop event
  ExpectSameAsAtRest(dir, tail, batch());
}

TEST_P(TailRingReaderTest, AReaderBehindTheRingReadsTheFileAndComesBack) {
  const std::string dir = NewTempDir("ring_behind");
  auto log = Binlog::Open(dir, "binlog", RingOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  ReaderOptions ro;
  ro.buffer_size = 64 << 10;  // file windows smaller than the gap
  auto r = (*log)->NewReader(ro);
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  CommitTransactions(log->get(), 0, 5);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  // Four ring sizes written while the reader does not read: its next
  // events are gone from the ring.
  CommitTransactions(log->get(), 5, 1000);
  uint64_t reads = Reads(**r);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  EXPECT_GT(Reads(**r), reads + 2);  // window after window of the file
  // Caught up: back in the ring, no more reads.
  reads = Reads(**r);
  for (int round = 0; round < 20; ++round) {
    CommitTransactions(log->get(), 1005 + round * 3, 3);
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  }
  EXPECT_EQ(Reads(**r), reads);
  // Behind again, by less than the ring this time, while the writer goes
  // on: part from the file, the rest from the ring.
  CommitTransactions(log->get(), 2000, 100);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  ExpectSameAsAtRest(dir, tail, batch());
}

// A log of 2000 transactions of `payload` bytes, all of them in a 1 MiB
// ring (a reader, `keep`, is registered while they are written: the ring
// copies nothing without one), published by one sync.
enum class RingLogKind { kPlain, kEncrypted, kCompressed };
struct RingLog {
  std::string dir;
  std::unique_ptr<MemoryKeyring> keyring;  // kEncrypted
  std::unique_ptr<Binlog> log;
  std::unique_ptr<Reader> keep;
};
void OpenRingLog(size_t payload, RingLog* out,
                 RingLogKind kind = RingLogKind::kPlain) {
  out->dir = NewTempDir(absl::StrCat("ring_within_", payload, "_",
                                     static_cast<int>(kind)));
  Options o = RingOptions();
  o.reader_ring_bytes = 1 << 20;
  o.max_file_size = 8 << 20;
  o.sync_every_n = 0;
  if (kind == RingLogKind::kEncrypted) {
    out->keyring = std::make_unique<MemoryKeyring>();
    o.keyring = out->keyring.get();
    o.encryption = true;
  }
  if (kind == RingLogKind::kCompressed) o.compression = io::Codec::kZstd;
  auto log = Binlog::Open(out->dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  out->log = std::move(*log);
  auto keep = out->log->NewReader(ReaderOptions());
  ASSERT_TRUE(keep.ok());
  out->keep = std::move(*keep);
  CommitTransactions(out->log.get(), 0, 2000, payload);  // ~700 KiB
  ASSERT_TRUE(out->log->Sync().ok());
}

constexpr uint64_t kSmallWindow = 64 << 10;

// The event of `events` that crosses offset `at` (starts before it, ends
// after it), or null if an event ends exactly there.
const EventRef* Crossing(const std::vector<EventRef>& events, uint64_t at) {
  for (const EventRef& e : events) {
    if (e.offset < at && e.end > at) return &e;
  }
  return nullptr;
}

// A reader behind the writer by less than the ring: it reads the file
// only until its first window ends, wherever that end falls, and takes the
// rest from the ring. Transactions of one size make every window end at
// the same place in a transaction; the sizes here put the first window's
// end inside an event's header for some and inside its body for others.
TEST_P(TailRingReaderTest, AReaderWithinTheRingLeavesTheFileAtItsWindowsEnd) {
  int in_header = 0, in_body = 0;
  for (size_t payload : {200, 220, 250, 280, 310}) {
    SCOPED_TRACE(absl::StrCat("payload ", payload));
    RingLog rl;
    OpenRingLog(payload, &rl);
    ReaderOptions ro;
    ro.buffer_size = kSmallWindow;
    // Created now, the reader starts with a full window of the file.
    auto r = rl.log->NewReader(ro);
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> tail;
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
    EXPECT_EQ(Reads(**r), 1u) << "the first window only";
    if (const EventRef* e = Crossing(tail, kSmallWindow)) {
      (e->offset + kHeaderSize > kSmallWindow ? in_header : in_body)++;
    }
    ASSERT_TRUE(rl.log->Close().ok());
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
    ExpectSameAsAtRest(rl.dir, tail, batch());
  }
  EXPECT_GT(in_header, 0);
  EXPECT_GT(in_body, 0);
}

// The same in an encrypted log (the file window is decrypted, the ring
// holds plaintext) and a compressed one (Transaction_payload events, raw
// for batches, expanded by Next), and for a reader that mixes Next and
// NextBatch.
TEST_P(TailRingReaderTest, EncryptedAndCompressedLogsLeaveTheFileAtTheWindowsEnd) {
  for (RingLogKind kind : {RingLogKind::kEncrypted, RingLogKind::kCompressed}) {
    SCOPED_TRACE(kind == RingLogKind::kEncrypted ? "encrypted" : "compressed");
    RingLog rl;
    OpenRingLog(250, &rl, kind);
    ReaderOptions ro;
    ro.buffer_size = kSmallWindow;
    if (batch()) ro.payloads = PayloadMode::kRaw;
    auto r = rl.log->NewReader(ro);
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> tail;
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
    EXPECT_EQ(Reads(**r), 1u) << "the first window only";
    ASSERT_TRUE(rl.log->Close().ok());
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
    std::unique_ptr<io::FileSystem> fs;
    if (rl.keyring != nullptr) {
      fs = NewDecryptingFileSystem(io::FileSystem::Default(), rl.keyring.get());
    }
    ExpectSameAsAtRest(rl.dir, tail, batch(), fs.get());
  }
}

TEST(TailRingWindowTest, AReaderMixingNextAndNextBatchGetsEveryEventOnce) {
  RingLog rl;
  OpenRingLog(250, &rl);
  ReaderOptions ro;
  ro.buffer_size = kSmallWindow;
  auto r = rl.log->NewReader(ro);
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  EventBatch b;
  Event ev;
  for (int call = 0;; ++call) {
    if (call % 3 == 2) {
      absl::Status s = (*r)->NextBatch(&b);
      if (absl::IsOutOfRange(s)) break;
      ASSERT_TRUE(s.ok()) << s;
      for (size_t i = 0; i < b.size(); ++i) {
        absl::string_view e = b.event(i);
        const uint64_t off = b.offset + b.starts[i];
        tail.push_back(EventRef{b.file_number, off, off + e.size(),
                                static_cast<uint8_t>(e[kTypeOffset]), std::string(e)});
      }
    } else {
      absl::Status s = (*r)->Next(&ev);
      if (absl::IsOutOfRange(s)) break;
      ASSERT_TRUE(s.ok()) << s;
      tail.push_back(EventRef{ev.file_number, ev.offset, ev.end_offset,
                              ev.header.type, std::string(ev.data)});
    }
  }
  EXPECT_EQ(Reads(**r), 1u) << "the first window only";
  ASSERT_TRUE(rl.log->Close().ok());
  ASSERT_TRUE(Drain(r->get(), /*batch=*/false, &tail).ok());
  ExpectSameAsAtRest(rl.dir, tail, /*batch=*/false);
}

// The event across the window's end has its header in the window (file
// bytes) and the rest in the ring. If the file's copy of that header was
// damaged after the write, Next() reports it (DataLoss) instead of acting
// on the damaged header with the ring's bytes. NextBatch() does not look
// at a header it cannot return whole: it takes the whole event, as the
// writer wrote it, from the ring.
TEST_P(TailRingReaderTest, AHeaderDamagedInTheFileIsNotJoinedToTheRingsBody) {
  for (size_t payload : {200, 220, 250, 280, 310}) {
    RingLog rl;
    OpenRingLog(payload, &rl);
    std::vector<EventRef> all;
    {
      auto r = rl.log->NewReader(ReaderOptions());
      ASSERT_TRUE(r.ok());
      ASSERT_TRUE(testing_util::ReadAll(r->get(), &all).ok());
    }
    const EventRef* e = Crossing(all, kSmallWindow);
    if (e == nullptr || e->offset + kHeaderSize > kSmallWindow) continue;
    SCOPED_TRACE(absl::StrCat("payload ", payload, ", event at ", e->offset));
    FlipByte(FilePath(rl.dir, e->file), e->offset + kTypeOffset);
    ReaderOptions ro;
    ro.buffer_size = kSmallWindow;
    auto r = rl.log->NewReader(ro);
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> tail;
    absl::Status s = Drain(r->get(), batch(), &tail);
    if (batch()) {
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_EQ(tail.size(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(tail[i].bytes, all[i].bytes) << "event " << i;
      }
      return;
    }
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", e->offset)),
              std::string::npos) << s;
    ASSERT_FALSE(tail.empty());
    EXPECT_LE(tail.back().end, e->offset);
    return;
  }
  FAIL() << "no transaction size puts the window's end inside a body";
}

TEST_P(TailRingReaderTest, AHeldViewIsNotOverwrittenWhileTheRingWraps) {
  const std::string dir = NewTempDir("ring_pinned");
  auto log = Binlog::Open(dir, "binlog", RingOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  auto holder = (*log)->NewReader(ReaderOptions());
  auto other = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(holder.ok() && other.ok());
  std::vector<EventRef> held_events, other_events;
  CommitTransactions(log->get(), 0, 2);
  ASSERT_TRUE(Drain(holder->get(), batch(), &held_events).ok());
  ASSERT_TRUE(Drain(other->get(), batch(), &other_events).ok());
  CommitTransactions(log->get(), 2, 10);
  // The holder takes one batch (or event) from the ring and keeps it.
  const uint64_t reads = Reads(**holder);
  EventBatch b;
  Event ev;
  absl::string_view view;
  if (batch()) {
    ASSERT_TRUE((*holder)->NextBatch(&b).ok());
    view = b.data;
  } else {
    ASSERT_TRUE((*holder)->Next(&ev).ok());
    view = ev.data;
  }
  ASSERT_EQ(Reads(**holder), reads);  // a view of the ring
  const std::string copy(view);
  // The writer goes round the ring several times; the other reader keeps
  // up, group by group.
  for (int round = 0; round < 60; ++round) {
    CommitTransactions(log->get(), 12 + round * 10, 10);
    ASSERT_TRUE(Drain(other->get(), batch(), &other_events).ok());
  }
  EXPECT_EQ(std::string(view), copy);  // intact
  // Record what the holder held, then let it go on from there.
  if (batch()) {
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view e = b.event(i);
      uint64_t off = b.offset + b.starts[i];
      held_events.push_back(EventRef{b.file_number, off, off + e.size(),
                                     static_cast<uint8_t>(e[kTypeOffset]),
                                     std::string(e)});
    }
  } else {
    held_events.push_back(EventRef{ev.file_number, ev.offset, ev.end_offset,
                                   ev.header.type, std::string(ev.data)});
  }
  ASSERT_TRUE(Drain(holder->get(), batch(), &held_events).ok());
  // The ring fills again once the view is released: both readers keep up
  // from it.
  const uint64_t reads_holder = Reads(**holder);
  const uint64_t reads_other = Reads(**other);
  for (int round = 0; round < 10; ++round) {
    CommitTransactions(log->get(), 700 + round * 3, 3);
    ASSERT_TRUE(Drain(holder->get(), batch(), &held_events).ok());
    ASSERT_TRUE(Drain(other->get(), batch(), &other_events).ok());
  }
  EXPECT_LE(Reads(**holder), reads_holder + 1);
  EXPECT_LE(Reads(**other), reads_other + 1);
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(holder->get(), batch(), &held_events).ok());
  ASSERT_TRUE(Drain(other->get(), batch(), &other_events).ok());
  ExpectSameAsAtRest(dir, held_events, batch());
  ExpectSameAsAtRest(dir, other_events, batch());
}

TEST_P(TailRingReaderTest, EveryEventOnceAcrossRotations) {
  const std::string dir = NewTempDir("ring_rotation");
  Options o = RingOptions();
  o.max_file_size = 48 << 10;  // a file holds less than the ring
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  auto caught_up = (*log)->NewReader(ReaderOptions());
  auto slow = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(caught_up.ok() && slow.ok());
  std::vector<EventRef> a, b;
  for (int round = 0; round < 100; ++round) {
    CommitTransactions(log->get(), round * 8, 8);
    ASSERT_TRUE(Drain(caught_up->get(), batch(), &a).ok());
    if (round % 25 == 24) {
      ASSERT_TRUE(Drain(slow->get(), batch(), &b).ok());
    }
  }
  ASSERT_GE(a.back().file, 4u);
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(caught_up->get(), batch(), &a).ok());
  ASSERT_TRUE(Drain(slow->get(), batch(), &b).ok());
  ExpectSameAsAtRest(dir, a, batch());
  ExpectSameAsAtRest(dir, b, batch());
}

TEST_P(TailRingReaderTest, CompressedLogFromTheRing) {
  const std::string dir = NewTempDir("ring_zstd");
  Options o = RingOptions();
  o.compression = io::Codec::kZstd;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  ReaderOptions ro;
  if (batch()) ro.payloads = PayloadMode::kRaw;
  auto r = (*log)->NewReader(ro);
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  CommitTransactions(log->get(), 0, 3);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  const uint64_t reads = Reads(**r);
  for (int round = 0; round < 30; ++round) {
    CommitTransactions(log->get(), 3 + round * 3, 3);
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  }
  EXPECT_EQ(Reads(**r), reads);
  bool payloads = false;
  for (const EventRef& e : tail) {
    payloads |= e.type == kTransactionPayloadEvent;
  }
  EXPECT_EQ(payloads, batch());  // raw for batches, expanded for Next
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  ExpectSameAsAtRest(dir, tail, batch());
}

TEST_P(TailRingReaderTest, EncryptedLogFromTheRingInPlaintext) {
  const std::string dir = NewTempDir("ring_encrypted");
  MemoryKeyring keyring;
  Options o = RingOptions();
  o.keyring = &keyring;
  o.encryption = true;
  o.max_file_size = 48 << 10;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  auto r = (*log)->NewReader(ReaderOptions());
  ASSERT_TRUE(r.ok());
  std::vector<EventRef> tail;
  CommitTransactions(log->get(), 0, 3);
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  for (int round = 0; round < 150; ++round) {
    CommitTransactions(log->get(), 3 + round * 3, 3);
    ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  }
  ASSERT_GE(tail.back().file, 3u);
  ASSERT_TRUE((*log)->Close().ok());
  ASSERT_TRUE(Drain(r->get(), batch(), &tail).ok());
  std::unique_ptr<io::FileSystem> fs =
      NewDecryptingFileSystem(io::FileSystem::Default(), &keyring);
  ExpectSameAsAtRest(dir, tail, batch(), fs.get());
}

// Committers and tailing readers at once, with a ring small enough that
// the writer goes round it many times and readers fall behind it and come
// back (some hold each view while they check it): every reader gets every
// event once, as stored. Run under TSAN (tagged concurrency).
TEST(TailRingConcurrencyTest, ReadersRacingTheWriterGetEveryEventOnce) {
  const std::string dir = NewTempDir("ring_race");
  Options o = RingOptions();
  o.max_file_size = 256 << 10;
  o.reader_wake_coalesce_us = 0;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  constexpr int kReaders = 4;
  std::vector<std::vector<EventRef>> got(kReaders);
  std::vector<absl::Status> status(kReaders);
  std::vector<std::unique_ptr<Reader>> readers;
  for (int i = 0; i < kReaders; ++i) {
    auto r = (*log)->NewReader(ReaderOptions());
    ASSERT_TRUE(r.ok());
    readers.push_back(std::move(*r));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      const bool batch = i % 2 == 0;
      uint64_t sum = 0;
      for (;;) {
        const size_t before = got[i].size();
        absl::Status s = Drain(readers[i].get(), batch, &got[i]);
        if (!s.ok()) {
          status[i] = s;
          return;
        }
        if (i >= 2) {
          // A slower reader: reads what it got again before moving on.
          for (size_t k = before; k < got[i].size(); ++k) {
            for (char c : got[i][k].bytes) sum += static_cast<uint8_t>(c);
          }
        }
        s = readers[i]->WaitForMore(absl::Now() + absl::Seconds(10));
        if (absl::IsCancelled(s)) {
          status[i] = Drain(readers[i].get(), batch, &got[i]);
          return;
        }
        if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
          status[i] = s;
          return;
        }
      }
    });
  }
  std::vector<std::thread> committers;
  for (int c = 0; c < 2; ++c) {
    committers.emplace_back([&, c] {
      TransactionBuffer txn;
      for (int k = 0; k < 400; ++k) {
        BuildTransaction(&txn, static_cast<uint64_t>(c * 1000 + k),
                         100 + (k % 5) * 200);
        EXPECT_TRUE((*log)->Commit(&txn).ok());
      }
    });
  }
  for (std::thread& t : committers) t.join();
  ASSERT_TRUE((*log)->Close().ok());
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kReaders; ++i) {
    ASSERT_TRUE(status[i].ok()) << i << ": " << status[i];
    ExpectSameAsAtRest(dir, got[i], i % 2 == 0);
  }
}

}  // namespace
}  // namespace binlog
