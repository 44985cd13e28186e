// TailRing (binlog/tail_ring.h): views of the bytes appended, the ring
// starting anew at a new file or a gap, a pinned view never overwritten
// (the ring empties instead), and a writer racing readers that check every
// byte they read (run under TSAN: the pins keep writer and readers apart).

#include "binlog/tail_ring.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace binlog {
namespace internal {
namespace {

constexpr size_t kCap = 64 << 10;
constexpr uint64_t kNoEnd = ~uint64_t{0};

// The byte at `offset` of file `file`: every byte tells where it belongs.
char ByteAt(uint64_t file, uint64_t offset) {
  return static_cast<char>((offset * 131 + file * 17 + (offset >> 8)) & 0xFF);
}

std::string Bytes(uint64_t file, uint64_t offset, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = ByteAt(file, offset + i);
  return s;
}

void AppendBytes(TailRing* ring, uint64_t file, uint64_t offset, size_t n) {
  std::string a = Bytes(file, offset, n / 2);
  std::string b = Bytes(file, offset + n / 2, n - n / 2);
  absl::string_view parts[2] = {a, b};
  ring->Append(file, offset, parts);
}

TEST(TailRingTest, ViewsHoldTheAppendedBytesUpToTheEndAndTheWrapPoint) {
  TailRing ring(kCap);
  const int slot = ring.Register();
  ASSERT_GE(slot, 0);
  AppendBytes(&ring, 1, 100, 1000);
  AppendBytes(&ring, 1, 1100, 500);
  absl::string_view v = ring.View(slot, 1, 100, kNoEnd, kCap);
  EXPECT_EQ(v, Bytes(1, 100, 1500));
  // Never past the end the reader may read (the published end).
  v = ring.View(slot, 1, 200, 1000, kCap);
  EXPECT_EQ(v, Bytes(1, 200, 800));
  // Not held: before the first byte, at the end, another file.
  EXPECT_TRUE(ring.View(slot, 1, 1600, kNoEnd, kCap).empty());
  EXPECT_TRUE(ring.View(slot, 2, 200, kNoEnd, kCap).empty());
  ring.Unpin(slot);
  EXPECT_TRUE(ring.View(slot, 1, 50, kNoEnd, kCap).empty());
  // Past the capacity: the oldest bytes are gone, the view stops at the
  // wrap point.
  uint64_t off = 1600;
  while (off < 1600 + kCap) {
    AppendBytes(&ring, 1, off, 3000);
    off += 3000;
  }
  EXPECT_TRUE(ring.View(slot, 1, 1000, kNoEnd, kCap).empty());
  const uint64_t from = off - kCap + 10;
  v = ring.View(slot, 1, from, kNoEnd, kCap);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.size(), kCap - (from % kCap));  // up to the wrap point
  EXPECT_EQ(v, Bytes(1, from, v.size()));
  v = ring.View(slot, 1, from + v.size(), kNoEnd, kCap);
  EXPECT_EQ(v, Bytes(1, from + (kCap - from % kCap),
                     off - (from + (kCap - from % kCap))));
  EXPECT_EQ(ring.emptied(), 0u);
  ring.Unregister(slot);
}

TEST(TailRingTest, ANewFileOrAGapStartsTheRingAnew) {
  TailRing ring(kCap);
  const int slot = ring.Register();
  AppendBytes(&ring, 1, 100, 1000);
  // A gap: the bytes [1100, 1200) were written without Append (a Rotate
  // event, a spilled transaction).
  AppendBytes(&ring, 1, 1200, 1000);
  EXPECT_TRUE(ring.View(slot, 1, 100, kNoEnd, kCap).empty());
  EXPECT_TRUE(ring.View(slot, 1, 1100, kNoEnd, kCap).empty());
  EXPECT_EQ(ring.View(slot, 1, 1200, kNoEnd, kCap), Bytes(1, 1200, 1000));
  ring.Unpin(slot);
  AppendBytes(&ring, 2, 500, 700);
  EXPECT_TRUE(ring.View(slot, 1, 1200, kNoEnd, kCap).empty());
  EXPECT_EQ(ring.View(slot, 2, 500, kNoEnd, kCap), Bytes(2, 500, 700));
  ring.Unregister(slot);
}

TEST(TailRingTest, APinnedViewIsNeverOverwrittenTheRingEmptiesInstead) {
  TailRing ring(kCap);
  const int a = ring.Register();
  const int b = ring.Register();
  AppendBytes(&ring, 1, 0, 4096);
  absl::string_view held = ring.View(a, 1, 0, kNoEnd, kCap);
  ASSERT_EQ(held, Bytes(1, 0, 4096));
  // The writer goes round the ring: the group that would reuse the held
  // bytes' slots is not copied, the ring empties at its end.
  uint64_t off = 4096;
  while (off + 4096 <= kCap) {
    AppendBytes(&ring, 1, off, 4096);
    off += 4096;
  }
  EXPECT_EQ(ring.emptied(), 0u);
  AppendBytes(&ring, 1, off, 4096);
  off += 4096;
  EXPECT_EQ(ring.emptied(), 1u);
  EXPECT_EQ(held, Bytes(1, 0, 4096));  // intact
  // Nothing before the emptying point is offered any more.
  EXPECT_TRUE(ring.View(b, 1, 8192, kNoEnd, kCap).empty());
  // Still held: the next group is not copied either.
  AppendBytes(&ring, 1, off, 4096);
  off += 4096;
  EXPECT_EQ(ring.emptied(), 2u);
  EXPECT_EQ(held, Bytes(1, 0, 4096));
  // Released: the ring fills again from the next group on.
  ring.Unpin(a);
  const uint64_t start = off;
  AppendBytes(&ring, 1, off, 4096);
  off += 4096;
  EXPECT_EQ(ring.emptied(), 2u);
  EXPECT_TRUE(ring.View(b, 1, start - 4096, kNoEnd, kCap).empty());
  EXPECT_EQ(ring.View(b, 1, start, kNoEnd, kCap), Bytes(1, start, 4096));
  ring.Unregister(a);
  ring.Unregister(b);
}

TEST(TailRingTest, ReadersSeeOnlyIntactBytesWhileTheWriterWraps) {
  TailRing ring(kCap);
  constexpr int kReaders = 4;
  constexpr uint64_t kTotal = 40 * kCap;
  std::atomic<uint64_t> published{0};
  std::atomic<bool> bad{false};
  std::atomic<uint64_t> from_ring{0};
  // Reader 0's position: the writer keeps within a quarter ring of it, so
  // that reader reads from the ring (the others run free, fall behind and
  // skip ahead, and hold views while the writer wraps).
  std::atomic<uint64_t> pos0{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      const int slot = ring.Register();
      uint64_t pos = 0;
      uint64_t got = 0;
      while (pos < kTotal) {
        const uint64_t end = published.load(std::memory_order_acquire);
        if (pos >= end) {
          std::this_thread::yield();
          continue;
        }
        // Small views for some readers, so their pins move often.
        absl::string_view v =
            ring.View(slot, 1, pos, end, r % 2 == 0 ? 512 : kCap);
        if (v.empty()) {
          // Behind the ring: what a reader does with the file (skip to
          // the published end here; the bytes are checked when in the
          // ring).
          pos = end;
          if (r == 0) pos0.store(pos, std::memory_order_release);
          continue;
        }
        // Check every byte, twice (the writer must not touch them while
        // the pin holds).
        for (int pass = 0; pass < 2; ++pass) {
          for (size_t i = 0; i < v.size(); i += 7) {
            if (v[i] != ByteAt(1, pos + i)) bad.store(true);
          }
        }
        got += v.size();
        pos += v.size();
        if (r == 0) pos0.store(pos, std::memory_order_release);
      }
      if (r == 0) pos0.store(kTotal, std::memory_order_release);
      ring.Unregister(slot);
      from_ring.fetch_add(got);
    });
  }
  uint64_t off = 0;
  while (off < kTotal) {
    const size_t n = 1000 + (off / 1000) % 3000;
    const size_t m = static_cast<size_t>(std::min<uint64_t>(n, kTotal - off));
    AppendBytes(&ring, 1, off, m);
    off += m;
    published.store(off, std::memory_order_release);
    while (off - std::min(off, pos0.load(std::memory_order_acquire)) >
           kCap / 4) {
      std::this_thread::yield();  // a condition, not a delay
    }
  }
  for (std::thread& t : readers) t.join();
  EXPECT_FALSE(bad.load());
  EXPECT_GT(from_ring.load(), 0u);
}

}  // namespace
}  // namespace internal
}  // namespace binlog
