// File: io/sequential_reader.h
//
// SequentialReader: reads one file front to back through large windows,
// with kernel read-ahead hints and optional background prefetch, and hands
// out views of the bytes the caller asks for.
//
// Why: MySQL reads binlogs through a fixed 8 KiB buffer, so a lagging
// replica issues many small preads and loses the kernel's read-ahead under
// memory pressure. Here every read is a whole window (default 1 MiB), the
// kernel is told the access is sequential (posix_fadvise SEQUENTIAL) and
// that the next window will be needed (WILLNEED), and, with prefetch on, a
// helper thread reads the next window while the caller works on the current
// one (double buffering), so the caller does not wait for I/O that could
// have started earlier.
//
// The limit. A reader never reads at or past its limit (SetLimit): for the
// active file of a live log that is the end the writer published, so bytes
// the writer has not published (zeros of a preallocated file, a group being
// written) are never read, prefetched or cached. kReadToEof reads to the
// end of the file. The limit may be raised at any time (the tail grew) and
// the reader continues from where it was, keeping what it buffered.
//
// Windows and large ranges. Peek(offset, n) returns a view of
// [offset, offset + n). A range inside the current window is returned in
// place (no copy). A range that straddles two windows is assembled in a
// separate buffer: its bytes are copied once (at most n bytes, once per
// window boundary). A range larger than the window (a 100 MiB event) takes
// the part already buffered and reads the rest straight into that separate
// buffer with one Read, which grows once to the largest range asked for;
// nothing is read or copied twice.
//
// Prefetch. After a Peek, if at least one whole window is readable past the
// current one (the limit is kReadToEof, or at least `window` bytes below the
// limit), the next window is read by the reader's helper thread (one per
// reader, started at the first prefetch, joined by the destructor). A reader
// close to the limit (a caught-up tail reader) reads synchronously: handing
// a few KiB to a thread costs more than reading them. A Peek that needs the
// prefetched window uses it (a "hit"), or waits for it if it is still being
// read (a "wait"): it never issues a second read for the same bytes.
//
// Drop behind (option). Bytes before the offset of the latest Peek count as
// consumed; with drop_behind they are dropped from the page cache
// (posix_fadvise DONTNEED) a window at a time, so a replica reading an old
// file does not evict the pages hot readers and the writer use.
//
// Errors (absl::Status from Peek). Nothing is skipped: a Peek returns the
// bytes asked for, or fewer only at the end of the file with kReadToEof, or
// an error naming the file and the offset.
//   - DataLoss: the file ends before the limit ("truncated under the
//     reader"); the bytes below the limit were promised to exist.
//   - any other status a Read returned (an I/O error), with its code kept
//     and the message prefixed by "<path>: offset N: read of M bytes: ".
//   A failed window read (prefetched or not) is not reported by itself:
//   the range the caller asked for is then read again on its own, and only
//   that read's error is returned, so an error names the range the caller
//   needs and every readable byte before a bad region is delivered. Errors
//   are not sticky: the next Peek reads again.
//
// A file truncated under the reader: with a finite limit, DataLoss as above.
// With kReadToEof the reader sees the new end of file, except for bytes it
// had already read (buffered or prefetched) before the truncation, which it
// returns as they were. A file replaced (renamed over) under the reader is
// not noticed: the reader keeps reading the file it was given (POSIX open
// file semantics).
//
// Thread safety: thread-compatible (one thread calls a reader's methods at
// a time). The helper thread is internal. Any number of readers may read the
// same file concurrently (RandomAccessFile is thread-safe).
// Lifetime: the file passed to Reset() is not owned; it must stay valid
// until the next Reset() or the destruction of the reader (both wait for an
// in-flight prefetch of it). A view from Peek is valid until the next call
// to Peek, Seek or Reset, or the reader's destruction.

#ifndef BINLOG_IO_SEQUENTIAL_READER_H_
#define BINLOG_IO_SEQUENTIAL_READER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "io/file_system.h"
#include "io/types.h"
#include "sync/mutex.h"

namespace binlog {
namespace io {

// A limit meaning "read to the end of the file".
inline constexpr uint64_t kReadToEof = std::numeric_limits<uint64_t>::max();

struct SequentialReaderOptions {
  // Bytes per read. Clamped to [SequentialReader::kMinWindow, kMaxWindow].
  // Memory: one window, plus a second one with prefetch, plus a separate
  // buffer as large as the largest range that straddled windows or exceeded
  // the window.
  size_t window = 1 << 20;
  // Read the next window in a helper thread (see the file comment). Off by
  // default: see ReaderOptions::prefetch (binlog/options.h) for when it
  // pays and the measurements.
  bool prefetch = false;
  // posix_fadvise WILLNEED for the window after the last one read or being
  // prefetched (only when it is a whole window below the limit).
  bool will_need = true;
  // posix_fadvise SEQUENTIAL on the whole file at Reset().
  bool sequential_hint = true;
  // posix_fadvise DONTNEED for consumed bytes (see the file comment).
  bool drop_behind = false;
};

// SequentialReaderStats (the counters, since construction and across
// Reset) is in io/types.h: Reader::io_stats() hands it out.

class SequentialReader {
 public:
  static constexpr size_t kMinWindow = 64 << 10;
  static constexpr size_t kMaxWindow = 64 << 20;

  explicit SequentialReader(const SequentialReaderOptions& options);
  // Waits for an in-flight prefetch and joins the helper thread.
  ~SequentialReader();
  SequentialReader(const SequentialReader&) = delete;
  SequentialReader& operator=(const SequentialReader&) = delete;

  // Starts reading `file` (nullptr: detaches from the current file) with
  // `limit`. Waits for an in-flight prefetch of the previous file and drops
  // what was buffered. Advises SEQUENTIAL on the new file (advisory: errors
  // are ignored). With drop_behind, the consumed part of the previous file
  // is dropped from the page cache.
  void Reset(RandomAccessFile* file, uint64_t limit = kReadToEof);

  // Bytes at and past `limit` are never read. kReadToEof: to the end of the
  // file. Raising it keeps what is buffered; lowering it below bytes already
  // read hides them (they are never returned past the limit).
  void SetLimit(uint64_t limit) {
    if (limit < limit_ && prefetch_ != Prefetch::kNone) {
      LowerLimitWithPrefetch(limit);
      return;
    }
    limit_ = limit;
  }
  uint64_t limit() const { return limit_; }

  // Stores in `*out` a view of the file's bytes [offset, offset + k) with
  // k = min(n, limit - offset) (0 if offset >= limit), or fewer when the
  // file ends first (only with kReadToEof; at a finite limit that is
  // DataLoss). On error `*out` is empty. See the file comment for errors
  // and for how long the view is valid.
  // REQUIRES: a file was given to Reset().
  absl::Status Peek(uint64_t offset, size_t n, absl::string_view* out);

  // Bytes of the current window readable at `offset` in place (no read,
  // no copy), below the limit: the most a Peek(offset, n) can return as a
  // view into the window. 0 when `offset` is not inside the window.
  size_t Buffered(uint64_t offset) const {
    if (file_ == nullptr || offset < cur_.off || offset >= cur_.end()) return 0;
    uint64_t end = cur_.end() < limit_ ? cur_.end() : limit_;
    return end > offset ? static_cast<size_t>(end - offset) : 0;
  }

  // A view of [offset, offset + n) in place when the current window holds
  // all of it below the limit; an empty view otherwise (then Peek). Like
  // Peek's common case, without its read-ahead hint and prefetch checks:
  // those run at every Peek that reads a window, which a reader reaching
  // the window's end always makes (so a limit raised while the reader is
  // inside a window starts a prefetch at the window's end, not at once).
  // With drop_behind always empty: Peek drops consumed bytes a window at a
  // time. For callers that look at every event (n > 0); valid as long as a
  // Peek's view.
  absl::string_view InWindow(uint64_t offset, size_t n) {
    if (options_.drop_behind || file_ == nullptr || offset < cur_.off ||
        offset > cur_.end() ||
        n > cur_.end() - offset || offset + n > limit_) {
      return absl::string_view();
    }
    peek_end_ = offset + n;
    return absl::string_view(cur_.mem.get() + (offset - cur_.off), n);
  }

  // Declares that reading goes on at `offset`: buffered bytes not covering
  // it are released and, with prefetch, the window at `offset` starts being
  // read now. Peek does not need it (it accepts any offset); call it to
  // start I/O early, e.g. before a jump.
  void Seek(uint64_t offset);

  SequentialReaderStats stats() const;
  size_t window() const { return window_; }
  const SequentialReaderOptions& options() const { return options_; }

 private:
  struct Buffer {
    std::unique_ptr<char[]> mem;
    size_t cap = 0;
    uint64_t off = 0;  // file offset of mem[0]
    size_t len = 0;    // valid bytes
    bool eof = false;  // the read that filled it stopped at end of file
    uint64_t end() const { return off + len; }
  };
  enum class Prefetch { kNone, kInFlight, kReady };
  enum class HelperState { kIdle, kQueued, kRunning, kDone };

  void LowerLimitWithPrefetch(uint64_t limit);
  absl::Status Refill(uint64_t offset, size_t want, absl::string_view* out);
  absl::Status RefillInPlace(uint64_t offset, size_t want,
                             absl::string_view* out);
  absl::Status Assemble(uint64_t offset, size_t want, bool use_next,
                        absl::string_view* out);
  // One Read with error context and counting; `*got` short only at EOF.
  absl::Status ReadAt(uint64_t offset, size_t n, char* dst, size_t* got);
  absl::Status ShortRead(uint64_t offset, size_t want, size_t got) const;
  void MaybeStartPrefetch();
  void MaybeHint();
  void MaybeDropBehind(uint64_t offset, bool all);
  void Advise(uint64_t offset, uint64_t len, AccessHint hint);
  // Collects a finished prefetch into next_ (prefetch_ becomes kReady).
  // With `block`, waits for it. Returns false if not finished (no block).
  bool Reap(bool block);
  void DiscardPrefetch(bool wait);
  void HelperLoop();

  const SequentialReaderOptions options_;
  const size_t window_;

  RandomAccessFile* file_ = nullptr;
  uint64_t limit_ = kReadToEof;
  Buffer cur_;               // the current window (consumer-owned)
  Buffer next_;              // the prefetched window (helper-owned in flight)
  absl::Status next_status_; // result of the prefetch in next_
  Prefetch prefetch_ = Prefetch::kNone;
  std::unique_ptr<char[]> big_;  // assembled ranges
  size_t big_cap_ = 0;
  uint64_t hinted_upto_ = 0;   // WILLNEED issued below this offset
  uint64_t dropped_upto_ = 0;  // DONTNEED issued below this offset
  uint64_t peek_end_ = 0;      // end of the latest view handed out
  SequentialReaderStats stats_;  // consumer-side counters

  // Shared with the helper thread.
  mutable sync::Mutex mu_;
  sync::CondVar work_cv_;  // helper waits for a request or stop
  sync::CondVar done_cv_;  // consumer waits for a result
  HelperState state_ ABSL_GUARDED_BY(mu_) = HelperState::kIdle;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  const RandomAccessFile* req_file_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t req_off_ ABSL_GUARDED_BY(mu_) = 0;
  size_t req_len_ ABSL_GUARDED_BY(mu_) = 0;
  char* req_buf_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t res_got_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status res_status_ ABSL_GUARDED_BY(mu_);
  uint64_t helper_reads_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t helper_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t helper_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread helper_;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_SEQUENTIAL_READER_H_
