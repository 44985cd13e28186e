// io::ZeroFrontier: fills ahead of the writer, never below the end the
// writer announced (a claimed chunk in flight holds the writer back), stops
// on errors without touching the writer, and the log uses it for a file
// that did not come from a spare.

#include "io/zero_frontier.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/wait_until.h"

namespace binlog {
namespace io {
namespace {

using testing_util::NewTempDir;
using testing_util::ReadFile;

constexpr uint64_t kMiB = 1 << 20;

// Waits (bounded) until the frontier reached `end` or stopped.
bool WaitZeroed(const ZeroFrontier& f, uint64_t end) {
  testutil::WaitUntil([&] { return f.zeroed_end() >= end || !f.status().ok(); });
  return f.zeroed_end() >= end;
}

// A fallocated file of `size` bytes, like the log's first file.
std::unique_ptr<WritableFile> NewAllocated(FileSystem* fs, const std::string& path,
                                           uint64_t size) {
  auto f = fs->OpenWritable(path, OpenMode::kCreateNew);
  EXPECT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Allocate(0, size, /*keep_size=*/false).ok());
  return std::move(*f);
}

TEST(ZeroFrontierTest, FillsAheadOfTheWriterUpToTheLimitAndKeepsItsData) {
  FileSystem* fs = FileSystem::Default();
  std::string path = NewTempDir("zf") + "/f";
  auto writer = NewAllocated(fs, path, 12 * kMiB);
  ASSERT_TRUE(writer->Write(0, std::string(4096, 'h')).ok());
  auto own = fs->OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_TRUE(own.ok());
  ZeroFrontierOptions o;
  o.chunk = kMiB;
  o.ahead = 4 * kMiB;
  o.limit = 12 * kMiB;
  std::atomic<uint64_t> counter{0};
  o.chunk_counter = &counter;
  // What the writer keeps right after its end (an encrypted file's guard):
  // the frontier leaves ZeroFrontierOptions::writer_tail bytes alone.
  ASSERT_EQ(o.writer_tail, 16u);
  ASSERT_TRUE(writer->Write(4096, std::string(16, 'g')).ok());
  ZeroFrontier zf(std::move(*own), 4096, o);
  // Ahead of the writer by `ahead`, not further.
  ASSERT_TRUE(WaitZeroed(zf, 4096 + 4 * kMiB));
  EXPECT_EQ(ReadFile(path).substr(4096, 17), std::string(16, 'g') + '\0');
  // The writer moves on: the frontier follows, to the limit.
  std::string data(3 * kMiB, 'd');
  zf.BeforeWrite(4096 + data.size());
  ASSERT_TRUE(writer->Write(4096, data).ok());
  zf.BeforeWrite(11 * kMiB);
  ASSERT_TRUE(WaitZeroed(zf, 12 * kMiB));
  zf.Stop();
  EXPECT_TRUE(zf.status().ok());
  EXPECT_EQ(counter.load(), zf.chunks());
  EXPECT_GE(zf.chunks(), 5u);  // 4 ahead of the start, 1+ at the end
  std::string got = ReadFile(path);
  ASSERT_EQ(got.size(), 12 * kMiB);
  EXPECT_EQ(got.substr(0, 4096), std::string(4096, 'h'));
  EXPECT_EQ(got.substr(4096, data.size()), data);
  EXPECT_EQ(got.find_first_not_of('\0', 4096 + data.size()), std::string::npos);
}

// The thread paused right after claiming a chunk; a writer that announces
// an end inside the claim must wait for the chunk to be written, else the
// zeros would land on its data.
TEST(ZeroFrontierTest, AWriterInsideAClaimedChunkWaitsForIt) {
  FileSystem* fs = FileSystem::Default();
  std::string path = NewTempDir("zf_claim") + "/f";
  auto writer = NewAllocated(fs, path, 8 * kMiB);
  auto own = fs->OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_TRUE(own.ok());
  struct Pause {
    std::mutex mu;
    std::condition_variable cv;
    bool claimed = false;
    bool release = false;
    uint64_t begin = 0, len = 0;
  } pause;
  ZeroFrontierOptions o;
  o.chunk = kMiB;
  o.ahead = 2 * kMiB;
  o.limit = 8 * kMiB;
  // Installed before the thread starts: the first piece it claims pauses.
  o.claim_hook = [](void* arg, uint64_t begin, uint64_t len) {
    auto* p = static_cast<Pause*>(arg);
    std::unique_lock<std::mutex> l(p->mu);
    if (p->claimed) return;  // pause the first claim only
    p->claimed = true;
    p->begin = begin;
    p->len = len;
    p->cv.notify_all();
    p->cv.wait(l, [p] { return p->release; });
  };
  o.claim_hook_arg = &pause;
  ZeroFrontier zf(std::move(*own), 0, o);
  {
    std::unique_lock<std::mutex> l(pause.mu);
    pause.cv.wait(l, [&] { return pause.claimed; });
  }
  EXPECT_EQ(pause.begin, o.writer_tail);  // past the writer's tail
  EXPECT_EQ(pause.len, 64u << 10);  // a piece, not the whole chunk
  const uint64_t at = pause.begin + pause.len / 2;
  std::atomic<bool> written{false};
  std::thread w([&] {
    zf.BeforeWrite(at + 5);
    ASSERT_TRUE(writer->Write(at, "DATA!").ok());
    written.store(true);
  });
  // The writer must block in BeforeWrite (the piece is claimed, not
  // written): wait for that state (writer_waits), or for a writer that did
  // not wait to have written (a failure); 60 s bound.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (zf.writer_waits() == 0 && !written.load() && absl::Now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(zf.writer_waits(), 1u) << "the writer did not wait";
  EXPECT_FALSE(written.load());
  {
    std::lock_guard<std::mutex> l(pause.mu);
    pause.release = true;
  }
  pause.cv.notify_all();
  w.join();
  zf.Stop();
  EXPECT_EQ(ReadFile(path).substr(at, 5), "DATA!");
}

TEST(ZeroFrontierTest, AnErrorStopsItAndLeavesTheWriterAlone) {
  FaultInjectionFileSystem fs(FileSystem::Default());
  std::string path = NewTempDir("zf_err") + "/f";
  auto writer = NewAllocated(&fs, path, 8 * kMiB);
  auto own = fs.OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_TRUE(own.ok());
  fs.InjectFault({FaultOp::kWrite, FaultKind::kEnospc, 1, "", true});
  ZeroFrontierOptions o;
  o.chunk = kMiB;
  o.ahead = 2 * kMiB;
  o.limit = 8 * kMiB;
  ZeroFrontier zf(std::move(*own), 0, o);
  EXPECT_FALSE(WaitZeroed(zf, kMiB));
  EXPECT_EQ(zf.status().code(), absl::StatusCode::kResourceExhausted);
  fs.ClearFaults();
  zf.BeforeWrite(3 * kMiB);  // returns: nothing is claimed any more
  ASSERT_TRUE(writer->Write(0, "abc").ok());
  ASSERT_TRUE(writer->Sync().ok());
  zf.Stop();
  EXPECT_EQ(zf.chunks(), 0u);
}

// The writer overtakes a chunk being written: the pieces it overtook are
// skipped, so its data stays (the frontier only waits for a piece).
TEST(ZeroFrontierTest, PiecesTheWriterOvertookAreSkipped) {
  FileSystem* fs = FileSystem::Default();
  std::string path = NewTempDir("zf_overtake") + "/f";
  auto writer = NewAllocated(fs, path, 4 * kMiB);
  auto own = fs->OpenWritable(path, OpenMode::kOpenExisting);
  ASSERT_TRUE(own.ok());
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    int claims = 0;
    bool go = false;
  } gate;
  ZeroFrontierOptions o;
  o.chunk = kMiB;
  o.piece = 64 << 10;
  o.ahead = kMiB;
  o.limit = 4 * kMiB;
  // The second piece of the first chunk waits until the writer has
  // announced (and written) 512 KiB.
  o.claim_hook = [](void* arg, uint64_t, uint64_t) {
    auto* g = static_cast<Gate*>(arg);
    std::unique_lock<std::mutex> l(g->mu);
    if (++g->claims != 2) return;
    g->cv.notify_all();
    g->cv.wait(l, [g] { return g->go; });
  };
  o.claim_hook_arg = &gate;
  ZeroFrontier zf(std::move(*own), 0, o);
  {
    std::unique_lock<std::mutex> l(gate.mu);
    gate.cv.wait(l, [&] { return gate.claims == 2; });
  }
  // The claimed piece is [64 KiB, 128 KiB): the writer waits for it, then
  // writes [0, 512 KiB).
  std::thread w([&] {
    zf.BeforeWrite(512 << 10);
    ASSERT_TRUE(writer->Write(0, std::string(512 << 10, 'w')).ok());
  });
  {
    std::lock_guard<std::mutex> l(gate.mu);
    gate.go = true;
  }
  gate.cv.notify_all();
  w.join();
  ASSERT_TRUE(WaitZeroed(zf, kMiB));  // the first chunk, synced
  zf.Stop();
  std::string got = ReadFile(path);
  EXPECT_EQ(got.substr(0, 512 << 10), std::string(512 << 10, 'w'));
}

// A failed fdatasync of the frontier is a disk error the log must not
// miss: its next commit fails (the model reports the error through the
// log's own descriptor, as Linux does).
TEST(ZeroFrontierTest, AFrontierSyncFailureFailsTheLogsNextCommit) {
  FaultInjectionFileSystem fs(FileSystem::Default());
  std::string dir = NewTempDir("zf_eio");
  Options opt;
  opt.file_system = &fs;
  opt.max_file_size = 64 << 20;
  opt.zero_ahead = 4 << 20;
  // Open syncs the new file once (its header); then the frontier starts
  // zero-filling, and the log syncs nothing until the next commit: the
  // second sync of the file is the frontier's.
  fs.InjectFault({FaultOp::kSync, FaultKind::kEio, 2, "binlog.000001", false});
  auto log = Binlog::Open(dir, "binlog", opt);
  ASSERT_TRUE(log.ok()) << log.status();
  testutil::WaitUntil([&] { return fs.faults_fired() > 0; });
  ASSERT_EQ(fs.faults_fired(), 1u);
  TransactionBuffer txn;
  testing_util::BuildTransaction(&txn, 1, 100);
  auto pos = (*log)->Commit(&txn);
  EXPECT_FALSE(pos.ok());
  (*log)->Close().IgnoreError();
}

TEST(ZeroFrontierTest, TheLogFillsItsFirstFileAheadAndOnlyWhenAsked) {
  for (uint64_t ahead : {uint64_t{0}, uint64_t{4} << 20}) {
    SCOPED_TRACE(ahead);
    std::string dir = NewTempDir("zf_log");
    Options opt;
    opt.max_file_size = 64 << 20;
    opt.zero_ahead = ahead;
    auto log = Binlog::Open(dir, "binlog", opt);
    ASSERT_TRUE(log.ok()) << log.status();
    TransactionBuffer txn;
    for (int i = 0; i < 200; ++i) {
      testing_util::BuildTransaction(&txn, static_cast<uint64_t>(i), 1000);
      ASSERT_TRUE((*log)->Commit(&txn).ok());
    }
    // The frontier runs in the background: wait (bounded) for its chunks.
    if (ahead > 0) {
      testutil::WaitUntil(
          [&] { return (*log)->stats().zero_fill_chunks >= ahead / kMiB; });
    }
    if (ahead == 0) {
      EXPECT_EQ((*log)->stats().zero_fill_chunks, 0u);
    } else {
      EXPECT_GE((*log)->stats().zero_fill_chunks, ahead / kMiB);
    }
    ASSERT_TRUE((*log)->Close().ok());
    // Every transaction reads back; the closed file ends at its Stop event.
    auto r = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
    ASSERT_TRUE(r.ok());
    std::vector<testing_util::EventRef> events;
    ASSERT_TRUE(testing_util::ReadAll(r->get(), &events).ok());
    EXPECT_EQ(events.size(), 2u + 200 * 4 + 1);
    EXPECT_TRUE((*r)->torn_tails().empty());
    EXPECT_EQ(ReadFile(dir + "/binlog.000001").size(), events.back().end);
  }
}

}  // namespace
}  // namespace io
}  // namespace binlog
