// File: benchmarks/baselines.h
//
// Two hand-written commit paths that commit_bench runs beside the binlog, on
// the same disk, so the binlog's numbers have a floor and a reference:
//
//   NaiveLog        one global mutex around pwrite + fdatasync per commit at
//                   the tail of one file: the binlog before group commit.
//   GroupCommitLog  a textbook leader/follower group commit: one pwritev of
//                   every queued payload and one fdatasync per group.
//
// Both append to one file (created with O_CREAT|O_TRUNC) that is prepared
// like a binlog file under binlog::Options::preallocate (see Prealloc):
// a plain growing file, a fallocate'd one, or a zero-filled one, all made
// before the clock starts. Past the prepared size the file simply grows.
// They write raw bytes: no framing, no checksums, no recovery. They use raw
// POSIX calls, which the house style allows only here, in a baseline
// (STYLE.md 2.6, 2.10).
//
// Sync policy, as binlog::SyncPolicy: sync_every = 0 never calls fdatasync,
// 1 calls it once per group (per commit for NaiveLog), N once every N groups.
//
// Thread safety: thread-safe; any number of threads may call Commit().
// Errors: errno values map through absl::ErrnoToStatus with the operation and
//   path. After a failed write or fdatasync the log is poisoned: that commit
//   (its whole group) gets the error, later ones FailedPrecondition. An
//   fdatasync is never retried.
// Durability: with sync_every = 1, Commit() returns after the bytes are
//   fdatasync'ed; otherwise they are only in the page cache.
// Lifetime: Close() before destruction; the destructor closes silently.

#ifndef BINLOG_BENCHMARKS_BASELINES_H_
#define BINLOG_BENCHMARKS_BASELINES_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog_bench {

// How the log file is prepared at Open, as binlog::io::PreallocMode:
//   kNone       a plain file that grows with every commit;
//   kFallocate  fallocate(0, size) (unwritten extents, st_size = size), then
//               fdatasync: the first write of each block still converts an
//               extent, a metadata change the next fdatasync must persist;
//   kZeroFill   `size` bytes of zeros written, then fdatasync: later
//               overwrites plus fdatasync persist data only.
enum class Prealloc { kNone, kFallocate, kZeroFill };

// Counters. stats() reads them without the log's mutex: a reader that
// queued on the mutex behind hundreds of committers would see the counters
// of a later moment than it asked for.
struct BaselineStats {
  uint64_t commits = 0;
  uint64_t groups = 0;  // write(+sync) rounds
  uint64_t fsyncs = 0;
  uint64_t bytes = 0;         // bytes written; also the tail offset
  uint64_t fsync_micros = 0;  // time spent in fdatasync
};

namespace internal {
// Written with relaxed atomics by whoever holds the log's mutex (or leads
// the group); read with relaxed loads by stats(). The four values are not
// a consistent snapshot; each is exact on its own.
struct AtomicStats {
  std::atomic<uint64_t> commits{0};
  std::atomic<uint64_t> groups{0};
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> fsync_micros{0};
  void Add(uint64_t c, uint64_t g, uint64_t f, uint64_t b, uint64_t us) {
    commits.fetch_add(c, std::memory_order_relaxed);
    groups.fetch_add(g, std::memory_order_relaxed);
    fsyncs.fetch_add(f, std::memory_order_relaxed);
    bytes.fetch_add(b, std::memory_order_relaxed);
    fsync_micros.fetch_add(us, std::memory_order_relaxed);
  }
  BaselineStats Load() const {
    BaselineStats s;
    s.commits = commits.load(std::memory_order_relaxed);
    s.groups = groups.load(std::memory_order_relaxed);
    s.fsyncs = fsyncs.load(std::memory_order_relaxed);
    s.bytes = bytes.load(std::memory_order_relaxed);
    s.fsync_micros = fsync_micros.load(std::memory_order_relaxed);
    return s;
  }
};
}  // namespace internal

// An fd open for writing at the tail of a file. Not thread-safe.
class TailFile {
 public:
  // Creates (truncates) `path` and prepares its first `size` bytes per
  // `mode` (ignored for kNone), including the fdatasync.
  static absl::StatusOr<std::unique_ptr<TailFile>> Create(
      const std::string& path, Prealloc mode = Prealloc::kNone,
      uint64_t size = 0);
  ~TailFile();
  TailFile(const TailFile&) = delete;
  TailFile& operator=(const TailFile&) = delete;

  // pwritev of `parts` at `offset`, IOV_MAX at a time, looping over short
  // writes.
  absl::Status WriteV(uint64_t offset,
                      const std::vector<absl::string_view>& parts);
  absl::Status Write(uint64_t offset, absl::string_view data);
  // fdatasync; adds the time it took to *micros.
  absl::Status SyncData(uint64_t* micros = nullptr);
  absl::Status Close();

 private:
  TailFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

class NaiveLog {
 public:
  static absl::StatusOr<std::unique_ptr<NaiveLog>> Open(
      const std::string& path, uint32_t sync_every,
      Prealloc prealloc = Prealloc::kNone, uint64_t prealloc_size = 0);

  // Appends `data` at the tail and syncs per the policy, all under one
  // mutex.
  absl::Status Commit(absl::string_view data);
  BaselineStats stats() const { return counters_.Load(); }
  absl::Status Close();

 private:
  NaiveLog(std::unique_ptr<TailFile> file, uint32_t sync_every)
      : file_(std::move(file)), sync_every_(sync_every) {}

  mutable std::mutex mu_;
  std::unique_ptr<TailFile> file_;  // guarded by mu_
  const uint32_t sync_every_;
  uint64_t end_ = 0;                // guarded by mu_
  uint32_t since_sync_ = 0;         // guarded by mu_
  absl::Status error_;              // guarded by mu_; sticky
  internal::AtomicStats counters_;
};

// Leader/follower group commit.
//
// A committer pushes a Waiter (on its own stack) onto queue_ under mu_. If no
// leader is active it becomes the leader: it takes the whole queue (itself
// included), reserves the byte range at the tail, drops mu_, does ONE pwritev
// of all the payloads and ONE fdatasync (per the policy), retakes mu_, marks
// every member done and notifies each follower's own condition variable.
// Then it hands leadership on by notifying the first waiter that queued
// while it was writing, and returns. Followers sleep on their own
// std::condition_variable (one per waiter, not a shared one with
// notify_all), so a finished group wakes exactly its members and the next
// leader, nobody else. The leader notifies with mu_ held: a follower that
// sees done may return at once and destroy its condition variable.
class GroupCommitLog {
 public:
  static absl::StatusOr<std::unique_ptr<GroupCommitLog>> Open(
      const std::string& path, uint32_t sync_every,
      Prealloc prealloc = Prealloc::kNone, uint64_t prealloc_size = 0);

  absl::Status Commit(absl::string_view data);
  BaselineStats stats() const { return counters_.Load(); }
  absl::Status Close();

 private:
  struct Waiter {
    absl::string_view data;
    bool done = false;  // guarded by mu_
    absl::Status status;
    std::condition_variable cv;
  };

  GroupCommitLog(std::unique_ptr<TailFile> file, uint32_t sync_every)
      : file_(std::move(file)), sync_every_(sync_every) {}

  mutable std::mutex mu_;
  std::unique_ptr<TailFile> file_;
  const uint32_t sync_every_;
  std::vector<Waiter*> queue_;    // guarded by mu_; waiting for a leader
  std::vector<Waiter*> group_;    // owned by the active leader
  std::vector<absl::string_view> parts_;  // owned by the active leader
  bool leader_active_ = false;    // guarded by mu_
  uint64_t end_ = 0;              // guarded by mu_; reserved tail
  uint32_t since_sync_ = 0;       // guarded by mu_
  absl::Status error_;            // guarded by mu_; sticky
  internal::AtomicStats counters_;
};

}  // namespace binlog_bench

#endif  // BINLOG_BENCHMARKS_BASELINES_H_
