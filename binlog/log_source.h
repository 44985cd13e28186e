// File: binlog/log_source.h  (internal)
//
// LogSource: what a Reader needs to know about the files it walks: which
// files exist, where they are, how far each may be read, and how to wait for
// more. Two implementations: the live log of a Binlog (binlog/log.cc) and a
// fixed list of files at rest (binlog/reader.cc).
//
// Thread safety: thread-safe.

#ifndef BINLOG_BINLOG_LOG_SOURCE_H_
#define BINLOG_BINLOG_LOG_SOURCE_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace binlog {
namespace internal {

inline constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

class TailRing;

class LogSource {
 public:
  virtual ~LogSource() = default;

  // Number of the oldest file, or 0 if there is none.
  virtual uint64_t FirstFile() = 0;
  // Number of the file after `n`, or 0 if there is none (yet).
  virtual uint64_t NextFile(uint64_t n) = 0;
  // Base name and full path of file `n`.
  virtual std::string FileName(uint64_t n) = 0;
  virtual std::string FilePath(uint64_t n) = 0;
  // How many bytes of file `n` may be read: kNoLimit for a complete file
  // (read to its end), the published end for the active file of a live log.
  virtual uint64_t Limit(uint64_t n) = 0;
  // True for a live log (more may come).
  virtual bool live() const = 0;
  // True if every byte of file `n` a reader may read was written and
  // published by this process's writer of the log (a file the live log
  // created itself), so a tailing reader may skip re-verifying checksums
  // (ReaderOptions::verify_published_checksums). False for files at rest.
  virtual bool WrittenHere(uint64_t /*n*/) { return false; }
  // The ring of the most recent bytes written (binlog/tail_ring.h), or
  // null. Lives as long as the source.
  virtual TailRing* Ring() { return nullptr; }
  // Waits until the readable end moves past (file, offset) or the deadline.
  virtual absl::Status Wait(uint64_t file, uint64_t offset,
                            absl::Time deadline) = 0;
  // Marks file `n` as open by a reader (purge skips it), and undoes that.
  // Returns false if the file is no longer part of the log (purged).
  virtual bool Pin(uint64_t n) = 0;
  virtual void Unpin(uint64_t n) = 0;
  // A reader of this source was created / destroyed.
  virtual void ReaderOpened() {}
  virtual void ReaderClosed() {}
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_SOURCE_H_
