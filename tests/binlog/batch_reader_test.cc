// Reader::NextBatch (binlog/reader.h): the batch API returns exactly the
// events Next() returns with PayloadMode::kRaw, as whole events in spans of
// one file, with the boundaries, the cap, checksum verification on request,
// torn tails and errors as documented.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
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

// Every event through NextBatch, checking each batch's shape.
absl::Status ReadAllBatches(Reader* r, const BatchOptions& bo,
                            std::vector<EventRef>* out, size_t* batches,
                            size_t* largest) {
  EventBatch b;
  for (;;) {
    absl::Status s = r->NextBatch(&b, bo);
    if (absl::IsOutOfRange(s)) return absl::OkStatus();
    if (!s.ok()) return s;
    ++*batches;
    *largest = std::max(*largest, b.size());
    EXPECT_FALSE(b.empty());
    EXPECT_EQ(b.starts[0], 0u);
    EXPECT_EQ(r->position(), b.end_offset());
    EXPECT_EQ(r->file_number(), b.file_number);
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view ev = b.event(i);
      EXPECT_GE(ev.size(), kHeaderSize);
      EventHeader h = DecodeHeader(ev.substr(0, kHeaderSize));
      EXPECT_EQ(h.event_size, ev.size());
      uint64_t off = b.offset + b.starts[i];
      out->push_back(EventRef{b.file_number, off, off + ev.size(), h.type,
                              std::string(ev)});
    }
  }
}

absl::Status ReadAllRaw(Reader* r, std::vector<EventRef>* out) {
  return testing_util::ReadAll(r, out);
}

void ExpectSameEvents(const std::vector<EventRef>& a,
                      const std::vector<EventRef>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].file, b[i].file) << i;
    EXPECT_EQ(a[i].offset, b[i].offset) << i;
    EXPECT_EQ(a[i].end, b[i].end) << i;
    EXPECT_EQ(a[i].type, b[i].type) << i;
    EXPECT_EQ(a[i].bytes, b[i].bytes) << i;
  }
}

// A closed log of `n` transactions over several files.
void WriteLog(const std::string& dir, int n, size_t payload,
              io::Codec compression = io::Codec::kNone,
              uint64_t max_file_size = 256 << 10) {
  Options o;
  o.max_file_size = max_file_size;
  o.compression = compression;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  for (int i = 0; i < n; ++i) {
    BuildTransaction(&txn, static_cast<uint64_t>(i), payload + (i % 7) * 37);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  ASSERT_TRUE((*log)->Close().ok());
}

ReaderOptions RawOptions(size_t buffer_size = 1 << 20, bool prefetch = false) {
  ReaderOptions ro;
  ro.payloads = PayloadMode::kRaw;
  ro.buffer_size = buffer_size;
  ro.prefetch = prefetch;
  return ro;
}

TEST(BatchReaderTest, SameEventsAsNextAtRest) {
  std::string dir = NewTempDir("batch_rest");
  WriteLog(dir, 3000, 300);
  for (size_t window : {size_t{64} << 10, size_t{1} << 20}) {
    for (bool prefetch : {false, true}) {
      SCOPED_TRACE(absl::StrCat("window ", window, " prefetch ", prefetch));
      std::vector<EventRef> want, got;
      auto r1 = Reader::OpenDirectory(dir, "binlog", RawOptions(window, prefetch));
      ASSERT_TRUE(r1.ok());
      ASSERT_TRUE(ReadAllRaw(r1->get(), &want).ok());
      auto r2 = Reader::OpenDirectory(dir, "binlog", RawOptions(window, prefetch));
      ASSERT_TRUE(r2.ok());
      size_t batches = 0, largest = 0;
      ASSERT_TRUE(ReadAllBatches(r2->get(), BatchOptions(), &got, &batches,
                                 &largest).ok());
      ExpectSameEvents(want, got);
      EXPECT_GT(want.size(), 12000u);
      // Many events per batch: a batch is a window's worth, not an event.
      EXPECT_LT(batches * 20, want.size()) << batches;
      EXPECT_GT(largest, 100u);
      EXPECT_EQ((*r1)->torn_tails().size(), (*r2)->torn_tails().size());
    }
  }
}

TEST(BatchReaderTest, PayloadsStayAsStoredWhateverTheReaderOptions) {
  std::string dir = NewTempDir("batch_payload");
  WriteLog(dir, 500, 1000, io::Codec::kZstd);
  std::vector<EventRef> want, got;
  auto r1 = Reader::OpenDirectory(dir, "binlog", RawOptions());
  ASSERT_TRUE(r1.ok());
  ASSERT_TRUE(ReadAllRaw(r1->get(), &want).ok());
  size_t payloads = 0;
  for (const EventRef& e : want) payloads += e.type == kTransactionPayloadEvent;
  EXPECT_EQ(payloads, 500u);
  ReaderOptions decoded;  // kDecoded: Next() would expand them
  auto r2 = Reader::OpenDirectory(dir, "binlog", decoded);
  ASSERT_TRUE(r2.ok());
  size_t batches = 0, largest = 0;
  ASSERT_TRUE(
      ReadAllBatches(r2->get(), BatchOptions(), &got, &batches, &largest).ok());
  ExpectSameEvents(want, got);
}

TEST(BatchReaderTest, MaxBytesCapsABatchButNotASingleLargeEvent) {
  std::string dir = NewTempDir("batch_cap");
  WriteLog(dir, 200, 300);
  // And one event far larger than the cap and the window.
  {
    auto log = Binlog::Open(dir, "binlog", Options());
    ASSERT_TRUE(log.ok());
    TransactionBuffer txn;
    BuildTransaction(&txn, 9999, 300 << 10);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    BuildTransaction(&txn, 10000, 100);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
    ASSERT_TRUE((*log)->Close().ok());
  }
  std::vector<EventRef> want, got;
  auto r1 = Reader::OpenDirectory(dir, "binlog", RawOptions(64 << 10));
  ASSERT_TRUE(r1.ok());
  ASSERT_TRUE(ReadAllRaw(r1->get(), &want).ok());
  auto r2 = Reader::OpenDirectory(dir, "binlog", RawOptions(64 << 10));
  ASSERT_TRUE(r2.ok());
  BatchOptions bo;
  bo.max_bytes = 4096;
  EventBatch b;
  size_t big = 0;
  for (;;) {
    absl::Status s = (*r2)->NextBatch(&b, bo);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    if (b.size() > 1) {
      EXPECT_LE(b.data.size(), 4096u);
    }
    if (b.data.size() > (300u << 10)) {
      EXPECT_EQ(b.size(), 1u);
      ++big;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view ev = b.event(i);
      EventHeader h = DecodeHeader(ev.substr(0, kHeaderSize));
      uint64_t off = b.offset + b.starts[i];
      got.push_back(EventRef{b.file_number, off, off + ev.size(), h.type,
                             std::string(ev)});
    }
  }
  EXPECT_EQ(big, 1u);
  ExpectSameEvents(want, got);
}

TEST(BatchReaderTest, RotateEndsTheBatchAndTheFile) {
  std::string dir = NewTempDir("batch_rotate");
  WriteLog(dir, 2000, 300, io::Codec::kNone, 64 << 10);
  auto r = Reader::OpenDirectory(dir, "binlog", RawOptions());
  ASSERT_TRUE(r.ok());
  EventBatch b;
  size_t rotates = 0;
  for (;;) {
    absl::Status s = (*r)->NextBatch(&b);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view ev = b.event(i);
      uint8_t type = static_cast<uint8_t>(ev[kTypeOffset]);
      if (type == kRotateEvent) {
        ++rotates;
        EXPECT_EQ(i + 1, b.size()) << "a Rotate event ends its batch";
      }
      if (type == kFormatDescriptionEvent) {
        EXPECT_EQ(b.size(), 1u) << "a Format_description comes alone";
        EXPECT_EQ(b.offset, kMagicSize);
      }
    }
  }
  EXPECT_GT(rotates, 5u);
}

TEST(BatchReaderTest, ChecksumsVerifiedOnlyWhenAsked) {
  std::string dir = NewTempDir("batch_crc");
  WriteLog(dir, 1500, 300, io::Codec::kNone, 4 << 20);
  // Damage the body of every fifth Rows_query event after the first third:
  // with a 64 KiB window some of them cross a window boundary, where the
  // batch falls back to reading one event alone.
  std::string path = dir + "/binlog.000001";
  std::string bytes = testing_util::ReadFile(path);
  ASSERT_GT(bytes.size(), 400u << 10);
  std::vector<EventRef> events;
  {
    auto r = Reader::OpenDirectory(dir, "binlog", RawOptions());
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(ReadAllRaw(r->get(), &events).ok());
  }
  uint64_t first_bad = 0;
  int k = 0;
  for (const EventRef& e : events) {
    if (e.type != kRowsQueryEvent || e.offset < bytes.size() / 3) continue;
    if (k++ % 5 != 0) continue;
    bytes[e.offset + kHeaderSize + 5] ^= 0x40;
    if (first_bad == 0) first_bad = e.offset;
  }
  ASSERT_GT(k, 100);
  testing_util::WriteFile(path, bytes);

  // Not verified (whatever ReaderOptions::checksum_mode says): every event
  // comes back, as stored, also those read alone across windows.
  for (ChecksumMode mode : {ChecksumMode::kVerify, ChecksumMode::kSkip}) {
    ReaderOptions ro = RawOptions(64 << 10);
    ro.checksum_mode = mode;
    auto r = Reader::OpenDirectory(dir, "binlog", ro);
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> got;
    size_t batches = 0, largest = 0;
    absl::Status s =
        ReadAllBatches(r->get(), BatchOptions(), &got, &batches, &largest);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(got.size(), events.size());
  }
  // Verified: everything before the first damaged event, then DataLoss at
  // its offset, sticky.
  for (ChecksumMode mode : {ChecksumMode::kVerify, ChecksumMode::kSkip}) {
    ReaderOptions ro = RawOptions(64 << 10);
    ro.checksum_mode = mode;
    auto r = Reader::OpenDirectory(dir, "binlog", ro);
    ASSERT_TRUE(r.ok());
    BatchOptions bo;
    bo.verify_checksums = true;
    std::vector<EventRef> got;
    size_t batches = 0, largest = 0;
    absl::Status s = ReadAllBatches(r->get(), bo, &got, &batches, &largest);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", first_bad)),
              std::string::npos)
        << s;
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back().end, first_bad);
    EXPECT_EQ((*r)->position(), first_bad);
    EventBatch b;
    EXPECT_TRUE(absl::IsDataLoss((*r)->NextBatch(&b, bo)));
  }
}

// What a crash leaves in a preallocated file: a torn last event followed
// by zeros, its header whole. NextBatch returns what Next() returns under
// the same checksum rule: with verify_checksums it stops with DataLoss at
// the torn event as Next() does with kVerify; without, the torn event's
// header and log_pos are whole, so it is returned as Next() with kSkip
// returns it (a replica's checksum check rejects it; a log is recovered
// before it is served).
TEST(BatchReaderTest, ATornEventFollowedByZerosIsTreatedAsNextTreatsIt) {
  std::string dir = NewTempDir("batch_torn_zeros");
  WriteLog(dir, 100, 200, io::Codec::kNone, 1 << 20);
  std::string bytes = testing_util::ReadFile(dir + "/binlog.000001");
  std::vector<EventRef> ev;
  {
    auto r = Reader::OpenFiles({dir + "/binlog.000001"}, RawOptions());
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(ReadAllRaw(r->get(), &ev).ok());
  }
  const EventRef* last = nullptr;
  for (const EventRef& e : ev) {
    if (e.type == kRowsQueryEvent) last = &e;
  }
  ASSERT_NE(last, nullptr);
  for (size_t keep : {size_t{10}, size_t{30}}) {  // torn header, torn body
    SCOPED_TRACE(keep);
    std::string torn = bytes.substr(0, last->offset + keep);
    torn.resize(bytes.size() + 4096, '\0');
    torn[kInUseFlagFileOffset] |= 0x01;
    std::string tdir = NewTempDir("batch_torn_zeros_copy");
    testing_util::WriteFile(tdir + "/binlog.000001", torn);
    for (bool verify : {false, true}) {
      SCOPED_TRACE(verify);
      ReaderOptions ro = RawOptions();
      ro.checksum_mode = verify ? ChecksumMode::kVerify : ChecksumMode::kSkip;
      std::vector<EventRef> want, got;
      auto r1 = Reader::OpenFiles({tdir + "/binlog.000001"}, ro);
      ASSERT_TRUE(r1.ok());
      absl::Status s1 = ReadAllRaw(r1->get(), &want);
      ro.checksum_mode = ChecksumMode::kVerify;  // NextBatch ignores it
      auto r2 = Reader::OpenFiles({tdir + "/binlog.000001"}, ro);
      ASSERT_TRUE(r2.ok());
      BatchOptions bo;
      bo.verify_checksums = verify;
      size_t batches = 0, largest = 0;
      absl::Status s2 = ReadAllBatches(r2->get(), bo, &got, &batches, &largest);
      EXPECT_EQ(s1.code(), s2.code()) << s1 << " / " << s2;
      ExpectSameEvents(want, got);
      EXPECT_EQ((*r1)->position(), (*r2)->position());
      EXPECT_EQ((*r1)->torn_tails().size(), (*r2)->torn_tails().size());
      if (verify || keep < kHeaderSize) {
        // Nothing of the torn event is returned.
        ASSERT_FALSE(got.empty());
        EXPECT_EQ(got.back().end, last->offset);
      }
    }
  }
}

TEST(BatchReaderTest, TornTailOfAFileAtRestIsRecordedAsNextRecordsIt) {
  std::string dir = NewTempDir("batch_torn");
  WriteLog(dir, 100, 200, io::Codec::kNone, 1 << 20);
  std::string bytes = testing_util::ReadFile(dir + "/binlog.000001");
  uint64_t cut = 0;
  {
    auto r = Reader::OpenFiles({dir + "/binlog.000001"}, RawOptions());
    ASSERT_TRUE(r.ok());
    std::vector<EventRef> ev;
    ASSERT_TRUE(ReadAllRaw(r->get(), &ev).ok());
    for (const EventRef& e : ev) {
      if (e.type == kXidEvent) cut = e.end;  // the last transaction's end
    }
  }
  ASSERT_GT(cut, 100u);
  // What a crash leaves: the in-use flag set (the Format_description's
  // checksum is computed without it) and the last event cut short.
  std::string head = bytes.substr(0, cut - 10);
  head[kInUseFlagFileOffset] |= 0x01;
  std::string torn = NewTempDir("batch_torn_copy");
  testing_util::WriteFile(torn + "/binlog.000001", head);
  std::vector<EventRef> want, got;
  auto r1 = Reader::OpenFiles({torn + "/binlog.000001"}, RawOptions());
  ASSERT_TRUE(r1.ok());
  ASSERT_TRUE(ReadAllRaw(r1->get(), &want).ok());
  auto r2 = Reader::OpenFiles({torn + "/binlog.000001"}, RawOptions());
  ASSERT_TRUE(r2.ok());
  size_t batches = 0, largest = 0;
  ASSERT_TRUE(ReadAllBatches(r2->get(), BatchOptions(), &got, &batches,
                             &largest).ok());
  ExpectSameEvents(want, got);
  ASSERT_EQ((*r1)->torn_tails().size(), 1u);
  ASSERT_EQ((*r2)->torn_tails().size(), 1u);
  EXPECT_EQ((*r2)->torn_tails()[0].offset, (*r1)->torn_tails()[0].offset);
  EXPECT_EQ((*r2)->torn_tails()[0].trailing_bytes,
            (*r1)->torn_tails()[0].trailing_bytes);
  EXPECT_TRUE((*r2)->torn_tails()[0].in_use);
}

TEST(BatchReaderTest, RefusedInsideAPayloadThatNextIsExpanding) {
  std::string dir = NewTempDir("batch_mixed");
  WriteLog(dir, 20, 1000, io::Codec::kZstd);
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  do {
    ASSERT_TRUE((*r)->Next(&ev).ok());
  } while (!ev.from_payload);
  EventBatch b;
  EXPECT_TRUE(absl::IsFailedPrecondition((*r)->NextBatch(&b)));
  // At the payload's end the two mix again: NextBatch goes on with the
  // next transaction.
  while (ev.from_payload && ev.payload_index + 1 < ev.payload_events) {
    ASSERT_TRUE((*r)->Next(&ev).ok());
  }
  uint64_t payload_end = ev.end_offset;
  ASSERT_TRUE((*r)->NextBatch(&b).ok());
  EXPECT_EQ(b.offset, payload_end);
}

TEST(BatchReaderTest, TailingReaderGetsEveryEventOnceWithinThePublishedEnd) {
  std::string dir = NewTempDir("batch_tail");
  Options o;
  o.max_file_size = 128 << 10;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_TRUE(log.ok());
  auto reader = (*log)->NewReader(RawOptions(64 << 10));
  ASSERT_TRUE(reader.ok());
  constexpr int kTxns = 3000;
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    TransactionBuffer txn;
    for (int i = 0; i < kTxns; ++i) {
      BuildTransaction(&txn, static_cast<uint64_t>(i), 150 + (i % 13) * 50);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    writer_done.store(true);
  });
  std::vector<EventRef> got;
  size_t xids = 0;
  EventBatch b;
  while (xids < static_cast<size_t>(kTxns)) {
    absl::Status s = (*reader)->NextBatch(&b);
    if (absl::IsOutOfRange(s)) {
      s = (*reader)->WaitForMore(absl::Now() + absl::Seconds(30));
      ASSERT_TRUE(s.ok()) << s;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s;
    CommitPosition visible = (*log)->VisibleEnd();
    EXPECT_TRUE(b.file_number < visible.file_number ||
                b.end_offset() <= visible.end);
    for (size_t i = 0; i < b.size(); ++i) {
      absl::string_view ev = b.event(i);
      EventHeader h = DecodeHeader(ev.substr(0, kHeaderSize));
      uint64_t off = b.offset + b.starts[i];
      EXPECT_EQ(h.log_pos, off + ev.size());  // what a replica checks
      if (h.type == kXidEvent) ++xids;
      got.push_back(EventRef{b.file_number, off, off + ev.size(), h.type,
                             std::string(ev)});
    }
  }
  writer.join();
  ASSERT_TRUE((*log)->Close().ok());
  std::vector<EventRef> want;
  auto r = Reader::OpenDirectory(dir, "binlog", RawOptions());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(ReadAllRaw(r->get(), &want).ok());
  // The tailing reader stopped at the last Xid; the closed log has the Stop
  // event after it.
  // The Format_descriptions differ in the in-use flag alone (set while the
  // tailing reader read them, cleared by Close).
  ASSERT_LE(got.size(), want.size());
  want.resize(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].type == kFormatDescriptionEvent) {
      EXPECT_EQ(got[i].bytes.size(), want[i].bytes.size());
      got[i].bytes = want[i].bytes;
    }
  }
  ExpectSameEvents(want, got);
}

}  // namespace
}  // namespace binlog
