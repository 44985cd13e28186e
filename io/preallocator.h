// File: io/preallocator.h
//
// Preallocator: keeps a few spare files ready in a directory, prepared by a
// background thread, so that a log rotating to a new file never pays for
// creating and growing it while commits wait.
//
// A spare is prepared under a temporary name (`<prefix>.prealloc.<n>.tmp`),
// sized to `file_size` (mode kFallocate: fallocate, which leaves unwritten
// extents; mode kZeroFill: zeros written through, so later overwrites and
// fdatasyncs change no file metadata), fdatasync'ed, renamed to
// `<prefix>.prealloc.<n>`, and the directory is fsync'ed. Only then is it
// handed out by TakeReady(). The owner renames it to its final name.
//
// Nothing is prepared until the owner first calls Request() (a log asks
// when its active file is half full, so short-lived logs never pay for
// spares); from then on the thread keeps `spares` files ready.
// TakeReady() never waits for the thread: if no spare is ready it returns
// NotFound (the caller creates a file itself) and asks for more.
//
// Thread safety: thread-safe.
// Errors: a failure in the background (for example ENOSPC) is kept in
// last_error() and the thread stops preparing files until Retry(); the
// owner falls back to creating files itself.
// Lifetime: `fs` must outlive the Preallocator. The destructor stops the
// thread and removes spares that were not taken.

#ifndef BINLOG_IO_PREALLOCATOR_H_
#define BINLOG_IO_PREALLOCATOR_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "io/types.h"
#include "sync/mutex.h"

namespace binlog {
namespace io {

// PreallocMode (kNone, kFallocate, kZeroFill) and PreallocModeName are in
// io/types.h.

struct PreallocatorOptions {
  FileSystem* fs = nullptr;
  std::string dir;
  std::string prefix;        // spares are "<prefix>.prealloc.<n>"
  uint64_t file_size = 0;    // bytes per spare
  PreallocMode mode = PreallocMode::kZeroFill;
  // Permission bits of the spare files (the log's Options::file_mode).
  uint32_t file_mode = kDefaultFilePermissions;
  int spares = 1;            // files kept ready (1..8)
};

class Preallocator {
 public:
  // Removes leftover spares of an earlier run (`<prefix>.prealloc.*`: they
  // hold no data), then starts the thread. InvalidArgument for kNone or bad
  // sizes.
  static absl::StatusOr<std::unique_ptr<Preallocator>> Start(
      const PreallocatorOptions& options);
  ~Preallocator();

  // Starts (or keeps) preparing spares. Cheap; call it as often as you like.
  void Request();

  // Path of a ready spare, now owned by the caller, or NotFound if none is
  // ready (then the thread starts preparing one). After a spare is taken,
  // the next is prepared at the next Request().
  absl::StatusOr<std::string> TakeReady();

  // Waits until `n` spares are ready or the thread failed (tests, warm-up).
  absl::Status WaitReady(int n);

  absl::Status last_error() const;
  // Clears last_error() and lets the thread try again.
  void Retry();

  uint64_t files_prepared() const { return prepared_.load(); }

  // Stops the thread and removes the spares not taken. Idempotent; the
  // destructor calls it. TakeReady() finds nothing afterwards.
  void Stop();

 private:
  explicit Preallocator(const PreallocatorOptions& options);
  void Loop();
  absl::Status PrepareOne(uint64_t n, std::string* path);

  const PreallocatorOptions options_;
  mutable sync::Mutex mu_;
  sync::CondVar cv_;  // work to do, a spare became ready, or stop
  std::deque<std::string> ready_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool demand_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> requested_{false};  // fast path of Request()
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  std::atomic<uint64_t> prepared_{0};
  std::thread thread_;
};

// A new log file at `path`. With `use_spare`, a ready spare of
// `preallocator` (sized, synced, its name durable) renamed to `path`
// (*from_spare); else a new file, fallocated to `size` when `preallocator`
// is not null (best effort: *allocated says whether it worked; without it
// the file simply grows). The new name is durable only once the caller
// syncs the directory. A renamed spare that cannot be opened is removed, so
// nothing is left under `path`. Errors: the file system's.
// `file_mode`: the permission bits of a new file.
absl::StatusOr<std::unique_ptr<WritableFile>> CreateLogFileOrTakeSpare(
    FileSystem* fs, Preallocator* preallocator, const std::string& path, uint64_t size,
    bool use_spare, bool* from_spare, bool* allocated,
    uint32_t file_mode = kDefaultFilePermissions);

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_PREALLOCATOR_H_
