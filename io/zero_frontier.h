// File: io/zero_frontier.h
//
// ZeroFrontier: zero-fills a file a few MiB ahead of its writer, in a
// background thread, so that the writer's writes and fdatasyncs land on
// blocks that are already written and durable.
//
// Why: a file that is only fallocated has unwritten extents. Every
// fdatasync after a write into one must also commit the extent conversion
// (a journal commit on ext4 and XFS), which makes each durable commit about
// as slow as appending to a growing file. The Preallocator (preallocator.h)
// zero-fills spare files in the background, but the first file after a
// log's Open has no spare: zero-filling it whole would delay Open by
// seconds. The frontier zero-fills only what the writer will reach soon:
// the writer is slow only until the frontier is `ahead` bytes in front of
// it, a few milliseconds after Open.
//
// Safety: the frontier never writes a byte at or below the end the writer
// announced (BeforeWrite), so it cannot overwrite data:
//   - it writes a chunk as pieces (64 KiB by default), each claimed under a
//     mutex at or above the writer's announced end; a piece the writer has
//     overtaken is skipped. The chunk is then fdatasync'ed, which writes
//     nothing of the frontier's own, and only then is zeroed_end() raised;
//   - BeforeWrite(end) with end <= zeroed_end() is a load and a store (no
//     piece can be claimed below zeroed_end()); otherwise it takes the
//     mutex, raises the writer's end and waits for a claimed piece that
//     overlaps [.., end) to be written: at most one piece's write into the
//     page cache, never an fdatasync.
// It writes through a file handle of its own (opened by the caller), so
// that its fdatasync does not consume a write-back error the writer's
// fdatasync must report: Linux (4.13 and later) reports such an error once
// to every open file description (errseq); older kernels report it once per
// file, so a log must not use a frontier there
// (WritebackErrorsPerDescriptor()). An fdatasync failure in the frontier is
// therefore also seen by the writer's next fdatasync (whose data may have
// been among the pages that failed), which then fails as well: the frontier
// adds a way for the writer to learn of a disk error, never a way to miss
// one. Any failure stops the frontier and is kept in status(); a failed
// zero write alone (ENOSPC) leaves the writer unaffected (it then writes
// into unwritten extents, correct and slower).
//
// Thread safety: BeforeWrite() from one writer thread at a time; Stop(),
// status() and zeroed_end() from any thread.
// Lifetime: the frontier owns its file handle; Stop() (or the destructor)
// waits for the piece or sync in flight, after which nothing more is
// written.

#ifndef BINLOG_IO_ZERO_FRONTIER_H_
#define BINLOG_IO_ZERO_FRONTIER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace io {

struct ZeroFrontierOptions {
  // Bytes fdatasync'ed per step (written as pieces first).
  uint64_t chunk = 1 << 20;
  // Bytes per write: the longest a writer that caught up with the
  // frontier waits is one such write into the page cache.
  uint64_t piece = 64 << 10;
  // How far ahead of the writer's end the frontier keeps the zeroed end.
  uint64_t ahead = 8 << 20;
  // Nothing at or past this offset is written (the file's prepared size).
  uint64_t limit = 0;
  // Bytes right after the writer's end (`start`, and every BeforeWrite
  // end) that the frontier never writes: the writer may put something
  // there after its data. An encrypted binlog's writer puts a 16-byte
  // guard there (binlog/encryption.cc), which zeros must not replace.
  uint64_t writer_tail = 16;
  // If set, incremented for every chunk written and synced (must outlive
  // the frontier's Stop()).
  std::atomic<uint64_t>* chunk_counter = nullptr;
  // Tests: called by the thread after it claimed the piece [offset, offset
  // + len) and before writing it (a pause point). Set before the thread
  // starts.
  void (*claim_hook)(void* arg, uint64_t offset, uint64_t len) = nullptr;
  void* claim_hook_arg = nullptr;
};

// Whether this kernel reports a write-back error to every open file
// description (Linux 4.13+, errseq), which a frontier's separate handle
// needs (see the file comment). False when unknown.
bool WritebackErrorsPerDescriptor();

class ZeroFrontier {
 public:
  // Starts zero-filling `file` (a handle of its own on the writer's file)
  // from `start` (the writer's end now) in a background thread.
  ZeroFrontier(std::unique_ptr<WritableFile> file, uint64_t start,
               const ZeroFrontierOptions& options);
  ~ZeroFrontier();  // Stop()
  ZeroFrontier(const ZeroFrontier&) = delete;
  ZeroFrontier& operator=(const ZeroFrontier&) = delete;

  // The writer is about to write below `end`: from now on the frontier
  // writes nothing below `end` + writer_tail. Returns once no zero write below `end` is
  // in flight (at most one piece). Also moves the frontier's target along
  // (end + ahead).
  void BeforeWrite(uint64_t end);

  // Stops the thread after the chunk in flight (if any) and closes the
  // frontier's handle. Idempotent.
  void Stop();

  // Everything in [start + writer_tail, zeroed_end()) that the writer did
  // not write is zeros, written and synced.
  uint64_t zeroed_end() const {
    return zeroed_end_.load(std::memory_order_acquire);
  }
  // OK, or the error that stopped the frontier.
  absl::Status status() const;
  // Chunks written and synced so far.
  uint64_t chunks() const { return chunks_.load(std::memory_order_relaxed); }
  // BeforeWrite calls that waited for a claimed piece (counted before the
  // wait: tests observe a writer that is blocked).
  uint64_t writer_waits() const {
    return writer_waits_.load(std::memory_order_acquire);
  }

 private:
  void Loop();

  const ZeroFrontierOptions options_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<char[]> zeros_;

  std::atomic<uint64_t> zeroed_end_;
  std::atomic<uint64_t> writer_end_;
  std::atomic<bool> idle_{false};  // the thread waits for the writer
  std::atomic<uint64_t> chunks_{0};
  std::atomic<uint64_t> writer_waits_{0};

  mutable sync::Mutex mu_;
  sync::CondVar cv_;  // work for the thread; a claim finished
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t claim_begin_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t claim_end_ ABSL_GUARDED_BY(mu_) = 0;  // == begin: no claim
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_ZERO_FRONTIER_H_
