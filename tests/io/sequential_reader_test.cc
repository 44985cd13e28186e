// Tests of io::SequentialReader: window boundaries, ranges larger than the
// window, the limit (never crossed, raised while reading), files truncated or
// replaced under the reader, injected short reads and EIO (clear error,
// nothing skipped), prefetch on and off giving identical bytes, and
// concurrent readers (run under TSan: tag "concurrency").

#include "io/sequential_reader.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/file_system_wrapper.h"
#include "sync/mutex.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace io {
namespace {

using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

constexpr size_t kWindow = SequentialReader::kMinWindow;  // 64 KiB

std::string NewTempDir(const std::string& tag) {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base ? base : "/tmp", "/", tag, "_",
                                 ::getpid(), "_", counter++);
  EXPECT_THAT(FileSystem::Default()->CreateDirectory(dir), IsOk());
  return dir;
}

// Bytes that differ at every offset (a shifted or repeated range shows).
std::string Pattern(size_t n, uint64_t seed = 1) {
  std::string s(n, '\0');
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) {
      s[i + j] = static_cast<char>(v >> (8 * j));
    }
  }
  return s;
}

void WriteWholeFile(const std::string& path, absl::string_view data) {
  auto f = FileSystem::Default()->OpenWritable(path,
                                               OpenMode::kCreateOrTruncate);
  ASSERT_THAT(f, IsOk());
  ASSERT_THAT((*f)->Write(0, data), IsOk());
  ASSERT_THAT((*f)->Close(), IsOk());
}

// Waits until the reader's helper has finished `n` prefetch reads (a
// condition; the 60 s bound turns a prefetch that never comes into a
// failure).
void WaitForPrefetches(const SequentialReader& r, uint64_t n) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (r.stats().prefetch_reads < n) {
    if (absl::Now() > deadline) {
      ADD_FAILURE() << "no prefetch read " << n << " after 60 s ("
                    << r.stats().prefetch_reads << " done)";
      return;
    }
    std::this_thread::yield();
  }
}

// A file system that observes and breaks reads: counts them, records the
// largest end any read asked for and the hints, injects EIO on a byte
// range, a short read (a false end of file), one transient failure, or a
// delay. Local to this test (the shared fault-injection file system models
// power cuts, not read faults).
class ReadFaultFs : public FileSystemWrapper {
 public:
  ReadFaultFs() : FileSystemWrapper(FileSystem::Default()) {}

  std::atomic<int> reads{0};
  std::atomic<uint64_t> max_read_end{0};
  std::atomic<uint64_t> eio_begin{0}, eio_end{0};  // reads touching it fail
  std::atomic<uint64_t> fake_eof{UINT64_MAX};      // reads stop here
  std::atomic<int> fail_read_number{-1};           // that read fails once
  std::atomic<int> delay_us{0};

  struct Hint {
    uint64_t offset, len;
    AccessHint hint;
  };
  std::vector<Hint> hints() {
    sync::MutexLock l(&mu_);
    return hints_;
  }

  class File : public RandomAccessFileWrapper {
   public:
    File(std::unique_ptr<RandomAccessFile> f, ReadFaultFs* fs)
        : RandomAccessFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Read(uint64_t offset, size_t n, char* scratch,
                      size_t* got) const override {
      int number = fs_->reads++;
      uint64_t end = offset + n;
      uint64_t prev = fs_->max_read_end.load();
      while (end > prev && !fs_->max_read_end.compare_exchange_weak(prev, end)) {
      }
      // A slow disk (not synchronization: it widens the time a prefetch is
      // in flight; no assertion depends on its length).
      if (int d = fs_->delay_us.load()) absl::SleepFor(absl::Microseconds(d));
      *got = 0;
      if (number == fs_->fail_read_number.load()) {
        return absl::UnavailableError("injected transient EIO");
      }
      if (offset < fs_->eio_end.load() && end > fs_->eio_begin.load()) {
        return absl::ErrnoToStatus(EIO, absl::StrCat("injected pread ", path()));
      }
      uint64_t eof = fs_->fake_eof.load();
      if (end > eof) n = offset >= eof ? 0 : static_cast<size_t>(eof - offset);
      return RandomAccessFileWrapper::Read(offset, n, scratch, got);
    }
    absl::Status Advise(uint64_t offset, uint64_t len,
                        AccessHint hint) override {
      {
        sync::MutexLock l(&fs_->mu_);
        fs_->hints_.push_back(Hint{offset, len, hint});
      }
      return RandomAccessFileWrapper::Advise(offset, len, hint);
    }

   private:
    ReadFaultFs* fs_;
  };

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    auto f = target()->OpenReadable(path);
    if (!f.ok()) return f.status();
    return std::unique_ptr<RandomAccessFile>(new File(std::move(*f), this));
  }

 private:
  sync::Mutex mu_;
  std::vector<Hint> hints_ ABSL_GUARDED_BY(mu_);
};

SequentialReaderOptions Opts(bool prefetch, size_t window = kWindow) {
  SequentialReaderOptions o;
  o.window = window;
  o.prefetch = prefetch;
  return o;
}

// Reads [0, limit or EOF) in chunks of the given sizes (cycled), checking
// every view against `want`; returns the bytes read.
std::string ReadInChunks(SequentialReader* r, const std::vector<size_t>& sizes,
                         absl::Status* status) {
  std::string got;
  size_t i = 0;
  for (;;) {
    absl::string_view v;
    size_t n = sizes[i++ % sizes.size()];
    *status = r->Peek(got.size(), n, &v);
    if (!status->ok()) return got;
    got.append(v.data(), v.size());
    if (v.size() < n) return got;  // end of file or limit
  }
}

// A file holding Pattern(size) in a new temporary directory: its path and
// content.
std::pair<std::string, std::string> NewPatternFile(const std::string& tag,
                                                   uint64_t size,
                                                   uint64_t seed = 1) {
  std::pair<std::string, std::string> f{NewTempDir(tag) + "/f",
                                        Pattern(size, seed)};
  WriteWholeFile(f.first, f.second);
  return f;
}

class SequentialReaderTest : public ::testing::TestWithParam<bool> {
 protected:
  bool prefetch() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(PrefetchOnOff, SequentialReaderTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Prefetch" : "NoPrefetch";
                         });

TEST_P(SequentialReaderTest, ChunksOfEverySizeAcrossWindowBoundaries) {
  const auto [path, content] = NewPatternFile("seq_chunks", 5 * kWindow + 123);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  const std::vector<std::vector<size_t>> cases = {
      {1},
      {19},
      {19, 400, 31},
      {4095},
      {kWindow - 1},
      {kWindow},
      {kWindow + 1},
      {3 * kWindow + 7, 5},
      {kWindow / 2 + 1, 19, kWindow - 19},
  };
  for (const auto& sizes : cases) {
    SCOPED_TRACE(absl::StrCat("first chunk ", sizes[0]));
    SequentialReader r(Opts(prefetch()));
    r.Reset(f->get());
    absl::Status s;
    std::string got = ReadInChunks(&r, sizes, &s);
    ASSERT_THAT(s, IsOk());
    ASSERT_EQ(got.size(), content.size());
    ASSERT_TRUE(got == content);
    // Nothing read twice beyond the window of look-ahead.
    EXPECT_LE(r.stats().bytes_read, content.size() + 2 * kWindow);
  }
}

TEST_P(SequentialReaderTest, StraddlingRangeCopiesOnlyThatRange) {
  const auto [path, content] = NewPatternFile("seq_straddle", 3 * kWindow);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::string_view v;
  ASSERT_THAT(r.Peek(0, 100, &v), IsOk());
  ASSERT_THAT(r.Peek(kWindow - 10, 20, &v), IsOk());
  EXPECT_EQ(v, absl::string_view(content).substr(kWindow - 10, 20));
  ASSERT_THAT(r.Peek(kWindow + 10, 100, &v), IsOk());
  EXPECT_EQ(v, absl::string_view(content).substr(kWindow + 10, 100));
  SequentialReaderStats st = r.stats();
  EXPECT_LE(st.bytes_copied, 20u);
  EXPECT_LE(st.bytes_read, 3 * kWindow);
}

// A 100 MiB event, scaled: a range of 40 windows is read with the part
// already buffered plus one Read, not assembled window by window and not
// read twice.
TEST_P(SequentialReaderTest, RangeLargerThanTheWindowIsReadOnce) {
  const size_t big = 40 * kWindow + 17;
  const auto [path, content] = NewPatternFile("seq_big", big + 3 * kWindow);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::string_view v;
  ASSERT_THAT(r.Peek(0, 1000, &v), IsOk());
  SequentialReaderStats before = r.stats();
  ASSERT_THAT(r.Peek(1000, big, &v), IsOk());
  ASSERT_EQ(v.size(), big);
  EXPECT_TRUE(v == absl::string_view(content).substr(1000, big));
  SequentialReaderStats after = r.stats();
  // At most: the rest of the first window (and the prefetched second one)
  // copied, the remainder read by one call.
  EXPECT_LE(after.bytes_copied - before.bytes_copied, 2 * kWindow);
  EXPECT_LE(after.read_calls - before.read_calls, 3u);
  // Reading goes on after the big range.
  std::string rest;
  for (uint64_t off = 1000 + big; off < content.size();) {
    ASSERT_THAT(r.Peek(off, 333, &v), IsOk());
    ASSERT_FALSE(v.empty());
    rest.append(v.data(), v.size());
    off += v.size();
  }
  EXPECT_TRUE(rest == content.substr(1000 + big));
  EXPECT_LE(r.stats().bytes_read, content.size() + 2 * kWindow);
}

TEST_P(SequentialReaderTest, NeverReadsAtOrPastTheLimitAndResumesWhenRaised) {
  const auto [path, content] = NewPatternFile("seq_limit", 10 * kWindow);
  ReadFaultFs fs;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  const uint64_t limit1 = 3 * kWindow + 500;
  r.Reset(f->get(), limit1);
  absl::Status s;
  std::string got = ReadInChunks(&r, {19, 700}, &s);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(got.size(), limit1);
  EXPECT_LE(fs.max_read_end.load(), limit1);
  for (const auto& h : fs.hints()) {
    if (h.hint == AccessHint::kWillNeed) {
      EXPECT_LE(h.offset + h.len, limit1);
    }
  }
  absl::string_view v;
  ASSERT_THAT(r.Peek(limit1, 10, &v), IsOk());
  EXPECT_TRUE(v.empty());
  ASSERT_THAT(r.Peek(limit1 - 5, 10, &v), IsOk());
  EXPECT_EQ(v.size(), 5u);  // clamped at the limit, not an error

  // The tail grows: the reader continues where it was.
  const uint64_t limit2 = 8 * kWindow + 3;
  r.SetLimit(limit2);
  while (got.size() < limit2) {
    ASSERT_THAT(r.Peek(got.size(), 1234, &v), IsOk());
    ASSERT_FALSE(v.empty());
    got.append(v.data(), v.size());
  }
  EXPECT_EQ(got.size(), limit2);
  EXPECT_TRUE(got == content.substr(0, limit2));
  EXPECT_LE(fs.max_read_end.load(), limit2);
  for (const auto& h : fs.hints()) {
    if (h.hint == AccessHint::kWillNeed) {
      EXPECT_LE(h.offset + h.len, limit2);
    }
  }
  r.SetLimit(kReadToEof);
  for (;;) {
    ASSERT_THAT(r.Peek(got.size(), 4096, &v), IsOk());
    got.append(v.data(), v.size());
    if (v.size() < 4096) break;
  }
  EXPECT_TRUE(got == content);
}

// InWindow: a view in place when the window holds the whole range below
// the limit, empty otherwise (never a read, so never an error); a caller
// alternating InWindow and Peek reads every byte exactly as Peek alone.
TEST_P(SequentialReaderTest, InWindowServesOnlyBufferedBytesBelowTheLimit) {
  const auto [path, content] = NewPatternFile("seq_inwindow", 4 * kWindow);
  ReadFaultFs fs;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  const uint64_t limit = kWindow + 100;
  r.Reset(f->get(), limit);
  EXPECT_TRUE(r.InWindow(0, 1).empty());  // nothing read yet
  absl::string_view v;
  ASSERT_THAT(r.Peek(0, 10, &v), IsOk());
  const uint64_t reads = r.stats().read_calls;
  // Inside the window: in place, the same bytes, no read.
  v = r.InWindow(10, 500);
  ASSERT_EQ(v.size(), 500u);
  EXPECT_TRUE(v == absl::string_view(content).substr(10, 500));
  // Up to the window's end, then one byte past it: empty.
  const size_t in_window = r.Buffered(0);
  ASSERT_GT(in_window, 10u);
  EXPECT_EQ(r.InWindow(0, in_window).size(), in_window);
  EXPECT_TRUE(r.InWindow(0, in_window + 1).empty());
  EXPECT_TRUE(r.InWindow(in_window + 5, 1).empty());  // past the window
  // (The prefetch helper may read the next window meanwhile.)
  if (!prefetch()) {
    EXPECT_EQ(r.stats().read_calls, reads);
  }
  // A lowered limit hides buffered bytes from InWindow as from Peek.
  r.SetLimit(20);
  EXPECT_EQ(r.InWindow(10, 10).size(), 10u);
  EXPECT_TRUE(r.InWindow(10, 11).empty());
  EXPECT_TRUE(r.InWindow(25, 1).empty());
  r.SetLimit(limit);

  // Alternating, as Reader::ReadEvent does: every byte once, in order.
  std::string got;
  uint64_t off = 0;
  size_t i = 0;
  while (off < limit) {
    const size_t n = (i++ % 3 == 0) ? 19 : 777;
    v = r.InWindow(off, n);
    if (v.empty()) {
      ASSERT_THAT(r.Peek(off, n, &v), IsOk());
      if (v.empty()) break;
    }
    got.append(v.data(), v.size());
    off += v.size();
  }
  EXPECT_EQ(got.size(), limit);
  EXPECT_TRUE(got == content.substr(0, limit));
  EXPECT_LE(fs.max_read_end.load(), limit);
  r.Reset(nullptr);
  EXPECT_TRUE(r.InWindow(0, 1).empty());

  // With drop_behind every range goes through Peek (which drops).
  SequentialReaderOptions o = Opts(prefetch());
  o.drop_behind = true;
  SequentialReader d(o);
  d.Reset(f->get());
  ASSERT_THAT(d.Peek(0, 10, &v), IsOk());
  EXPECT_TRUE(d.InWindow(10, 10).empty());
}

TEST_P(SequentialReaderTest, HintsSequentialAtResetAndWillNeedAhead) {
  const auto [path, content] = NewPatternFile("seq_hints", 6 * kWindow);
  ReadFaultFs fs;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::Status s;
  ReadInChunks(&r, {500}, &s);
  ASSERT_THAT(s, IsOk());
  auto hints = fs.hints();
  ASSERT_FALSE(hints.empty());
  EXPECT_EQ(hints[0].hint, AccessHint::kSequential);
  int will_need = 0;
  for (const auto& h : hints) will_need += h.hint == AccessHint::kWillNeed;
  EXPECT_GE(will_need, 3);
  // One hint per window, not per Peek.
  EXPECT_LE(will_need, 8);
}

TEST_P(SequentialReaderTest, DropBehindDropsOnlyConsumedBytes) {
  const auto [path, content] = NewPatternFile("seq_drop", 8 * kWindow);
  ReadFaultFs fs;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReaderOptions o = Opts(prefetch());
  o.drop_behind = true;
  SequentialReader r(o);
  r.Reset(f->get());
  absl::string_view v;
  uint64_t off = 0;
  uint64_t dropped_end = 0;
  while (off < content.size()) {
    ASSERT_THAT(r.Peek(off, 1000, &v), IsOk());
    ASSERT_TRUE(v == absl::string_view(content).substr(off, v.size()));
    for (const auto& h : fs.hints()) {
      if (h.hint != AccessHint::kDontNeed) continue;
      EXPECT_LE(h.offset + h.len, off) << "dropped bytes not yet consumed";
      EXPECT_EQ(h.offset % 4096, 0u);
      dropped_end = std::max(dropped_end, h.offset + h.len);
    }
    off += v.size();
  }
  EXPECT_GE(dropped_end, content.size() - 2 * kWindow);
  r.Reset(nullptr);  // the rest of the consumed file goes too
  uint64_t final_end = 0;
  for (const auto& h : fs.hints()) {
    if (h.hint == AccessHint::kDontNeed) {
      final_end = std::max(final_end, h.offset + h.len);
    }
  }
  EXPECT_EQ(final_end, content.size() & ~uint64_t{4095});
}

TEST_P(SequentialReaderTest, RandomOffsetsAndBackwardJumps) {
  const auto [path, content] = NewPatternFile("seq_random", 7 * kWindow + 99);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  std::mt19937_64 rng(42);
  for (int i = 0; i < 500; ++i) {
    uint64_t off = rng() % (content.size() + 10);
    size_t n = rng() % 3 == 0 ? rng() % (3 * kWindow) : rng() % 600;
    if (i % 7 == 0) r.Seek(off);
    absl::string_view v;
    ASSERT_THAT(r.Peek(off, n, &v), IsOk());
    size_t expect = off >= content.size()
                        ? 0
                        : std::min<size_t>(n, content.size() - off);
    ASSERT_EQ(v.size(), expect) << "offset " << off << " n " << n;
    ASSERT_TRUE(v == absl::string_view(content).substr(
                         std::min<size_t>(off, content.size()), expect));
  }
}

// The writer appends and publishes; the reader follows the published end
// (SetLimit) from another thread, as a tailing binlog reader does.
TEST_P(SequentialReaderTest, FollowsALimitRaisedWhileReading) {
  std::string dir = NewTempDir("seq_tail");
  const std::string path = dir + "/f";
  std::string content = Pattern(40 * kWindow + 1);
  auto wf = FileSystem::Default()->OpenWritable(path,
                                                OpenMode::kCreateOrTruncate);
  ASSERT_THAT(wf, IsOk());
  // Preallocated-looking garbage past the published end: a reader that
  // reads past the limit would return it.
  std::string junk(content.size(), '\x5a');
  ASSERT_THAT((*wf)->Write(0, junk), IsOk());
  std::atomic<uint64_t> published{0};
  // The reader waits here for the writer to publish more (a condition, as
  // a tailing reader waits for the log's notification).
  std::mutex publish_mu;
  std::condition_variable publish_cv;
  std::thread writer([&] {
    std::mt19937_64 rng(7);
    uint64_t off = 0;
    while (off < content.size()) {
      size_t n = std::min<size_t>(content.size() - off,
                                  rng() % 4 == 0 ? 3 * kWindow : rng() % 9000);
      ASSERT_THAT((*wf)->Write(off, absl::string_view(content).substr(off, n)),
                  IsOk());
      off += n;
      {
        std::lock_guard<std::mutex> l(publish_mu);
        published.store(off, std::memory_order_release);
      }
      publish_cv.notify_all();
      // Not synchronization: a pause now and then lets the reader catch
      // up with the published end, so both paths (data waiting, limit
      // reached) run; no assertion depends on its length.
      if (rng() % 3 == 0) absl::SleepFor(absl::Microseconds(200));
    }
  });
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get(), 0);
  std::string got;
  std::mt19937_64 rng(9);
  while (got.size() < content.size()) {
    r.SetLimit(published.load(std::memory_order_acquire));
    absl::string_view v;
    ASSERT_THAT(r.Peek(got.size(), 1 + rng() % 2000, &v), IsOk());
    if (v.empty()) {  // caught up with the published end
      std::unique_lock<std::mutex> l(publish_mu);
      publish_cv.wait(l, [&] { return published.load() > got.size(); });
      continue;
    }
    ASSERT_TRUE(v == absl::string_view(content).substr(got.size(), v.size()))
        << "at offset " << got.size();
    got.append(v.data(), v.size());
  }
  writer.join();
  EXPECT_TRUE(got == content);
  ASSERT_THAT((*wf)->Close(), IsOk());
}

TEST_P(SequentialReaderTest, TruncatedUnderTheReaderWithALimitIsDataLoss) {
  const auto [path, content] = NewPatternFile("seq_trunc_limit", 4 * kWindow);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get(), content.size());
  absl::string_view v;
  std::string got;
  while (got.size() < kWindow) {
    ASSERT_THAT(r.Peek(got.size(), 1000, &v), IsOk());
    got.append(v.data(), v.size());
  }
  if (prefetch()) WaitForPrefetches(r, 1);  // the second window is read
  auto wf = FileSystem::Default()->OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_THAT(wf, IsOk());
  const uint64_t cut = kWindow + kWindow / 2;
  ASSERT_THAT((*wf)->Truncate(cut), IsOk());
  ASSERT_THAT((*wf)->Close(), IsOk());
  absl::Status s;
  for (;;) {
    s = r.Peek(got.size(), 1000, &v);
    if (!s.ok()) break;
    ASSERT_EQ(v.size(), 1000u) << "a short view below the limit";
    got.append(v.data(), v.size());
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path)));
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
  // Everything delivered is the file's content, and the reader stopped at
  // the cut or at the end of what it had read before the cut.
  // (Bytes read before the cut, buffered or prefetched, are delivered as
  // they were read: up to three windows here.)
  EXPECT_TRUE(got == content.substr(0, got.size()));
  EXPECT_GE(got.size() + 1000, cut);
  EXPECT_LE(got.size(), 3 * kWindow);
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("ends at ", cut)));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("offset ")));
  EXPECT_TRUE(v.empty());
}

TEST_P(SequentialReaderTest, TruncatedUnderTheReaderToEofEndsEarly) {
  const auto [path, content] = NewPatternFile("seq_trunc_eof", 4 * kWindow);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::string_view v;
  std::string got;
  while (got.size() < kWindow) {
    ASSERT_THAT(r.Peek(got.size(), 1000, &v), IsOk());
    got.append(v.data(), v.size());
  }
  if (prefetch()) WaitForPrefetches(r, 1);  // the second window is read
  auto wf = FileSystem::Default()->OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_THAT(wf, IsOk());
  const uint64_t cut = kWindow + kWindow / 2;
  ASSERT_THAT((*wf)->Truncate(cut), IsOk());
  ASSERT_THAT((*wf)->Close(), IsOk());
  for (;;) {
    ASSERT_THAT(r.Peek(got.size(), 1000, &v), IsOk());
    got.append(v.data(), v.size());
    if (v.size() < 1000) break;
  }
  // No error: the new end of the file is the end. Bytes read before the cut
  // (buffered or prefetched) are delivered as they were read.
  EXPECT_TRUE(got == content.substr(0, got.size()));
  EXPECT_GE(got.size(), cut);
  EXPECT_LE(got.size(), 3 * kWindow);
  // Read again from the start: exactly the truncated file.
  absl::Status s;
  r.Reset(f->get());
  std::string again = ReadInChunks(&r, {1000}, &s);
  ASSERT_THAT(s, IsOk());
  EXPECT_TRUE(again == content.substr(0, cut));
}

TEST_P(SequentialReaderTest, FileReplacedUnderTheReaderKeepsTheOpenFile) {
  const auto [path, content] = NewPatternFile("seq_replace", 4 * kWindow + 5, 1);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::string_view v;
  std::string got;
  while (got.size() < kWindow + 100) {
    ASSERT_THAT(r.Peek(got.size(), 777, &v), IsOk());
    got.append(v.data(), v.size());
  }
  // Rename another file over it (what a rotation or a rewrite does).
  WriteWholeFile(path + ".g", Pattern(8 * kWindow, 2));
  ASSERT_THAT(FileSystem::Default()->Rename(path + ".g", path), IsOk());
  for (;;) {
    ASSERT_THAT(r.Peek(got.size(), 777, &v), IsOk());
    got.append(v.data(), v.size());
    if (v.size() < 777) break;
  }
  EXPECT_TRUE(got == content);
}

TEST_P(SequentialReaderTest, InjectedShortReadBelowTheLimitIsAClearError) {
  const auto [path, content] = NewPatternFile("seq_short", 6 * kWindow);
  ReadFaultFs fs;
  const uint64_t fake_eof = 3 * kWindow + 777;
  fs.fake_eof = fake_eof;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get(), content.size());
  absl::Status s;
  std::string got = ReadInChunks(&r, {100}, &s);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path)));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("offset ", fake_eof)));
  EXPECT_THAT(s.message(), HasSubstr("short read"));
  // Every byte before the false end was delivered, nothing after it.
  EXPECT_EQ(got.size(), fake_eof / 100 * 100);
  EXPECT_TRUE(got == content.substr(0, got.size()));
}

TEST_P(SequentialReaderTest, InjectedEioIsReportedAtTheBadRangeNotBefore) {
  const auto [path, content] = NewPatternFile("seq_eio", 6 * kWindow);
  ReadFaultFs fs;
  const uint64_t bad = 2 * kWindow + 4321;
  fs.eio_begin = bad;
  fs.eio_end = bad + 10;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::Status s;
  std::string got = ReadInChunks(&r, {100}, &s);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::ErrnoToStatus(EIO, "").code());
  EXPECT_THAT(s.message(), HasSubstr(path));
  EXPECT_THAT(s.message(), HasSubstr("injected pread"));
  // The bytes before the chunk holding the bad range were all delivered.
  EXPECT_EQ(got.size(), bad / 100 * 100);
  EXPECT_TRUE(got == content.substr(0, got.size()));
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("offset ", got.size())));
  EXPECT_GT(r.stats().read_errors, 0u);
  // Not sticky: once the disk reads again, so does the reader.
  fs.eio_begin = 0;
  fs.eio_end = 0;
  absl::string_view v;
  ASSERT_THAT(r.Peek(got.size(), 100, &v), IsOk());
  EXPECT_EQ(v, absl::string_view(content).substr(got.size(), 100));
}

TEST_P(SequentialReaderTest, OneFailedReadIsRetriedForTheNeededBytes) {
  const auto [path, content] = NewPatternFile("seq_transient", 6 * kWindow);
  ReadFaultFs fs;
  fs.fail_read_number = 2;  // the third read: a prefetch, or a refill
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(prefetch()));
  r.Reset(f->get());
  absl::Status s;
  std::string got = ReadInChunks(&r, {100}, &s);
  ASSERT_THAT(s, IsOk());
  EXPECT_TRUE(got == content);
  EXPECT_EQ(r.stats().read_errors, 1u);
}

TEST(SequentialReaderPrefetchTest, OnAndOffGiveIdenticalBytes) {
  const auto [path, content] = NewPatternFile("seq_identical", 20 * kWindow + 4567, 3);
  auto f = FileSystem::Default()->OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  for (size_t window : {kWindow, 3 * kWindow + 1000}) {
    std::string out[2];
    for (int p = 0; p < 2; ++p) {
      SequentialReader r(Opts(p == 1, window));
      r.Reset(f->get());
      std::mt19937_64 rng(11);  // the same sizes for both
      uint64_t off = 0;
      for (;;) {
        size_t n = rng() % 50 == 0 ? rng() % (2 * window) : rng() % 900;
        absl::string_view v;
        ASSERT_THAT(r.Peek(off, n, &v), IsOk());
        out[p].append(v.data(), v.size());
        off += v.size();
        if (v.size() < n) break;
      }
      if (p == 1) {
        SequentialReaderStats st = r.stats();
        EXPECT_GT(st.prefetch_reads, 0u);
        EXPECT_GT(st.prefetch_hits + st.prefetch_waits, 0u);
      } else {
        EXPECT_EQ(r.stats().prefetch_reads, 0u);
      }
    }
    EXPECT_TRUE(out[0] == content);
    EXPECT_TRUE(out[1] == content);
  }
}

// With slow reads and a consumer that takes longer per window than a read,
// the next window is ready when the consumer gets there. The consumer's
// "work" is waiting for the helper to have read the next window
// (SequentialReaderStats::prefetch_reads), so every window after the first
// must be a hit, whatever the machine's speed.
TEST(SequentialReaderPrefetchTest, NextWindowIsReadWhileTheConsumerWorks) {
  const auto [path, content] = NewPatternFile("seq_overlap", 12 * kWindow);
  ReadFaultFs fs;
  fs.delay_us = 2000;
  auto f = fs.OpenReadable(path);
  ASSERT_THAT(f, IsOk());
  SequentialReader r(Opts(true));
  r.Reset(f->get());
  absl::string_view v;
  uint64_t off = 0;
  while (off < content.size()) {
    ASSERT_THAT(r.Peek(off, 4096, &v), IsOk());
    ASSERT_TRUE(v == absl::string_view(content).substr(off, v.size()));
    off += v.size();
    if (off % kWindow == 0 && off < content.size()) {
      WaitForPrefetches(r, off / kWindow);  // window off / kWindow is read
    }
  }
  SequentialReaderStats st = r.stats();
  EXPECT_EQ(st.prefetch_hits, 11u);
  EXPECT_EQ(st.prefetch_waits, 0u);
}

TEST(SequentialReaderPrefetchTest, ResetWaitsForAPrefetchOfTheOldFile) {
  std::string dir = NewTempDir("seq_reset");
  std::string a = Pattern(4 * kWindow, 5), b = Pattern(3 * kWindow, 6);
  WriteWholeFile(dir + "/a", a);
  WriteWholeFile(dir + "/b", b);
  ReadFaultFs fs;
  SequentialReader r(Opts(true));
  for (int round = 0; round < 5; ++round) {
    auto fa = fs.OpenReadable(dir + "/a");
    ASSERT_THAT(fa, IsOk());
    r.Reset(fa->get());
    fs.delay_us = 5000;
    absl::string_view v;
    ASSERT_THAT(r.Peek(0, 100, &v), IsOk());  // starts a slow prefetch
    auto fb = fs.OpenReadable(dir + "/b");
    ASSERT_THAT(fb, IsOk());
    r.Reset(fb->get());
    fa->reset();  // must be safe: Reset waited (ASan would see otherwise)
    fs.delay_us = 0;
    absl::Status s;
    std::string got = ReadInChunks(&r, {1000}, &s);
    ASSERT_THAT(s, IsOk());
    EXPECT_TRUE(got == b);
    r.Reset(nullptr);
  }
}

TEST(SequentialReaderOptionsTest, WindowIsClamped) {
  SequentialReaderOptions o;
  o.window = 1;
  EXPECT_EQ(SequentialReader(o).window(), SequentialReader::kMinWindow);
  o.window = size_t{1} << 40;
  EXPECT_EQ(SequentialReader(o).window(), SequentialReader::kMaxWindow);
  o.window = 3 << 20;
  EXPECT_EQ(SequentialReader(o).window(), size_t{3} << 20);
}

TEST(SequentialReaderOptionsTest, PeekWithoutAFileFails) {
  SequentialReader r(SequentialReaderOptions{});
  absl::string_view v;
  EXPECT_THAT(r.Peek(0, 1, &v),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// Several readers, each with its prefetch thread, over one shared file
// object (RandomAccessFile is thread-safe), under TSan.
TEST(SequentialReaderConcurrencyTest, ManyReadersOneFile) {
  // Plain references, not a structured binding: the threads capture them.
  const auto file = NewPatternFile("seq_many", 30 * kWindow + 11, 8);
  const std::string& content = file.second;
  auto f = FileSystem::Default()->OpenReadable(file.first);
  ASSERT_THAT(f, IsOk());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      SequentialReaderOptions o = Opts(t % 3 != 0, kWindow * (1 + t % 2));
      o.drop_behind = t == 5;
      SequentialReader r(o);
      r.Reset(f->get());
      std::mt19937_64 rng(t);
      std::string got;
      for (;;) {
        size_t n = 1 + rng() % 3000;
        absl::string_view v;
        if (!r.Peek(got.size(), n, &v).ok()) return;
        got.append(v.data(), v.size());
        if (v.size() < n) break;
      }
      if (got == content) ok++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 6);
}

}  // namespace
}  // namespace io
}  // namespace binlog
