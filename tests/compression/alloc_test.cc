// Steady-state commits with compression allocate nothing: the transaction
// buffer's packed form, the scratch buffer and the pooled codec contexts
// are reused. Counted with a malloc interposer (every C++ allocation and
// the codec libraries' own mallocs go through it), per thread.
//
// The interposer is left out under sanitizers, which bring their own malloc.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"
#include "io/codec.h"
#include "tests/binlog/log_test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BINLOG_ALLOC_TEST_DISABLED 1
#else
#define BINLOG_ALLOC_TEST_DISABLED 0
#endif

#if !BINLOG_ALLOC_TEST_DISABLED
namespace {
__thread bool t_counting = false;
__thread uint64_t t_allocations = 0;
__thread uint64_t t_largest = 0;
inline void Note(size_t n) {
  if (t_counting) {
    ++t_allocations;
    if (n > t_largest) t_largest = n;
  }
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* malloc(size_t n) {
  Note(n);
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  Note(a * b);
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  Note(n);
  return __libc_realloc(p, n);
}
}  // extern "C"
#endif

namespace binlog {
namespace {

using testing_util::NewTempDir;

struct Counter {
  Counter() {
#if !BINLOG_ALLOC_TEST_DISABLED
    t_allocations = 0;
    t_largest = 0;
    t_counting = true;
#endif
  }
  ~Counter() { Stop(); }
  void Stop() {
#if !BINLOG_ALLOC_TEST_DISABLED
    t_counting = false;
#endif
  }
  uint64_t allocations() const {
#if !BINLOG_ALLOC_TEST_DISABLED
    return t_allocations;
#else
    return 0;
#endif
  }
  uint64_t largest() const {
#if !BINLOG_ALLOC_TEST_DISABLED
    return t_largest;
#else
    return 0;
#endif
  }
};

// A row-like transaction whose size varies with `i` (up to ~6 KiB).
void BuildTxn(TransactionBuffer* t, uint64_t i) {
  t->Clear();
  AppendAnonymousGtid(t, 1700000000, 1, 0, static_cast<int64_t>(i));
  AppendQuery(t, 1700000000, 1, 7, "sbtest", "BEGIN");
  size_t n = 300 + (i * 7919) % 6000;
  char* b = t->AppendEvent(kRowsQueryEvent, 1, 1700000000, kFlagIgnorable, n);
  for (size_t k = 0; k < n; ++k) {
    b[k] = static_cast<char>(k % 11 == 10 ? '-' : '0' + (i * 31 + k * k) % 10);
  }
  AppendXid(t, 1700000000, 1, i);
}

TEST(InterposerTest, CountsAllocations) {
  if (BINLOG_ALLOC_TEST_DISABLED) GTEST_SKIP() << "sanitizer build";
  Counter c;
  std::string* s = new std::string(1000, 'x');
  c.Stop();
  delete s;
  EXPECT_GE(c.allocations(), 1u);
}

class AllocTest : public ::testing::TestWithParam<io::Codec> {};

TEST_P(AllocTest, SteadyStateCommitsAllocateNothing) {
  if (BINLOG_ALLOC_TEST_DISABLED) GTEST_SKIP() << "sanitizer build";
  Options o;
  o.compression = GetParam();
  o.compression_threshold = 0;
  o.preallocate = io::PreallocMode::kNone;
  o.sync_policy = SyncPolicy::kNever;  // allocations, not fdatasyncs
  o.max_file_size = 256 << 20;  // no rotation during the test
  auto log = Binlog::Open(NewTempDir("alloc"), "binlog", o);
  ASSERT_TRUE(log.ok()) << log.status();
  TransactionBuffer txn;
  // Warm-up: every size the measured loop will use.
  for (uint64_t i = 0; i < 2000; ++i) {
    BuildTxn(&txn, i);
    ASSERT_TRUE((*log)->Commit(&txn).ok());
  }
  uint64_t compressed = 0;
  Counter c;
  for (uint64_t i = 0; i < 2000; ++i) {
    BuildTxn(&txn, i);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) break;
    if (txn.compressed()) ++compressed;
  }
  c.Stop();
  EXPECT_EQ(c.allocations(), 0u) << "largest " << c.largest();
  if (GetParam() != io::Codec::kNone) {
    EXPECT_EQ(compressed, 2000u);
  }
  ASSERT_TRUE((*log)->Close().ok());
}

TEST_P(AllocTest, DecodingReaderStopsAllocatingAtItsLargestPayload) {
  if (BINLOG_ALLOC_TEST_DISABLED) GTEST_SKIP() << "sanitizer build";
  if (GetParam() == io::Codec::kNone) GTEST_SKIP() << "no payloads";
  std::string dir = NewTempDir("alloc_read");
  Options o;
  o.compression = GetParam();
  o.compression_threshold = 0;
  o.sync_policy = SyncPolicy::kNever;
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (uint64_t i = 0; i < 3000; ++i) {
      BuildTxn(&txn, i % 2000);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    ASSERT_TRUE((*log)->Close().ok());
  }
  auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  ASSERT_TRUE(r.ok());
  Event ev;
  // The first 2000 transactions hold every size.
  uint64_t xids = 0;
  while (xids < 2000 && (*r)->Next(&ev).ok()) xids += ev.header.type == kXidEvent;
  // Counts the successful calls only: the final OutOfRange status carries
  // a formatted message (allocated), which is not steady state.
  uint64_t allocations = 0;
  absl::Status s;
  for (;;) {
    Counter c;
    s = (*r)->Next(&ev);
    c.Stop();
    if (!s.ok()) break;
    allocations += c.allocations();
    xids += ev.header.type == kXidEvent;
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(xids, 3000u);
  EXPECT_EQ(allocations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, AllocTest,
                         ::testing::Values(io::Codec::kNone, io::Codec::kZstd,
                                           io::Codec::kLz4),
                         [](const ::testing::TestParamInfo<io::Codec>& i) {
                           return std::string(io::CodecName(i.param));
                         });

}  // namespace
}  // namespace binlog
