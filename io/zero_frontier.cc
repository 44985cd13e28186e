// ZeroFrontier: see the header for what it guarantees.
//
// The thread picks a chunk [begin, end) with begin >= max(zeroed_end_,
// writer_end_), writes it as pieces, each claimed under mu_ at or above
// writer_end_ (a piece the writer overtook is skipped), then fdatasyncs the
// chunk and publishes zeroed_end_ = end. A writer announcing an end above
// zeroed_end_ raises writer_end_ under mu_ (so no later piece starts below
// it) and waits for an overlapping claimed piece; below zeroed_end_ no
// piece can be claimed, so it only stores writer_end_ (for the target).

#include "io/zero_frontier.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

namespace binlog {
namespace io {

bool WritebackErrorsPerDescriptor() {
  struct utsname u;
  if (::uname(&u) != 0) return false;
  if (std::strcmp(u.sysname, "Linux") != 0) return false;
  int major = 0;
  int minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 4 || (major == 4 && minor >= 13);
}

ZeroFrontier::ZeroFrontier(std::unique_ptr<WritableFile> file, uint64_t start,
                           const ZeroFrontierOptions& options)
    : options_(options),
      file_(std::move(file)),
      zeroed_end_(start + options.writer_tail),
      writer_end_(start + options.writer_tail) {
  const size_t piece = static_cast<size_t>(
      std::min(std::max<uint64_t>(options_.piece, 4096),
               std::max<uint64_t>(options_.chunk, 4096)));
  zeros_.reset(new char[piece]);
  std::memset(zeros_.get(), 0, piece);
  thread_ = std::thread(&ZeroFrontier::Loop, this);
}

ZeroFrontier::~ZeroFrontier() { Stop(); }

absl::Status ZeroFrontier::status() const {
  sync::MutexLock l(&mu_);
  return status_;
}

void ZeroFrontier::BeforeWrite(uint64_t end) {
  end += options_.writer_tail;
  if (end > writer_end_.load(std::memory_order_relaxed)) {
    if (end <= zeroed_end_.load(std::memory_order_acquire)) {
      // No piece can be claimed below zeroed_end_: nothing to wait for.
      writer_end_.store(end, std::memory_order_seq_cst);
    } else {
      sync::MutexLock l(&mu_);
      writer_end_.store(end, std::memory_order_seq_cst);
      if (claim_end_ > claim_begin_ && claim_begin_ < end) {
        writer_waits_.fetch_add(1, std::memory_order_release);
        while (claim_end_ > claim_begin_ && claim_begin_ < end) cv_.Wait(&mu_);
      }
    }
  }
  // Wake the thread if it waits and a whole chunk of work is there.
  if (idle_.load(std::memory_order_seq_cst)) {
    const uint64_t chunk = std::max<uint64_t>(options_.chunk, 4096);
    const uint64_t target = std::min(options_.limit, end + options_.ahead);
    const uint64_t z = std::max(zeroed_end_.load(std::memory_order_acquire), end);
    if (target > z && (target - z >= chunk || target == options_.limit)) {
      sync::MutexLock l(&mu_);
      cv_.SignalAll();
    }
  }
}

void ZeroFrontier::Stop() {
  {
    sync::MutexLock l(&mu_);
    if (stopped_) return;
    stopped_ = true;
    stop_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  if (file_ != nullptr) {
    file_->Close().IgnoreError();  // zeros only: nothing of the log's
    file_.reset();
  }
}

void ZeroFrontier::Loop() {
  const uint64_t chunk = std::max<uint64_t>(options_.chunk, 4096);
  const uint64_t piece = std::min(std::max<uint64_t>(options_.piece, 4096), chunk);
  for (;;) {
    uint64_t begin = 0;
    uint64_t end = 0;
    {
      sync::MutexLock l(&mu_);
      for (;;) {
        if (stop_) return;
        const uint64_t w = writer_end_.load(std::memory_order_seq_cst);
        begin = std::max(zeroed_end_.load(std::memory_order_relaxed), w);
        const uint64_t target = std::min(options_.limit, w + options_.ahead);
        if (target > begin &&
            (target - begin >= chunk || target == options_.limit)) {
          end = std::min(begin + chunk, target);
          break;
        }
        // Nothing worth a write: wait for the writer. idle_ is set before
        // the writer's end is read again (seq_cst both sides), so a
        // writer that moved meanwhile either is seen here or sees idle_
        // and signals (under mu_, so not before this thread waits).
        idle_.store(true, std::memory_order_seq_cst);
        const uint64_t w2 = writer_end_.load(std::memory_order_seq_cst);
        if (w2 == w) cv_.Wait(&mu_);
        idle_.store(false, std::memory_order_relaxed);
      }
    }
    // The chunk's pieces, each claimed above the writer's end.
    uint64_t off = begin;
    absl::Status s;
    while (off < end) {
      uint64_t piece_end;
      {
        sync::MutexLock l(&mu_);
        if (stop_) return;
        off = std::max(off, writer_end_.load(std::memory_order_seq_cst));
        if (off >= end) break;  // the writer overtook the rest
        piece_end = std::min(off + piece, end);
        claim_begin_ = off;
        claim_end_ = piece_end;
      }
      if (options_.claim_hook != nullptr) {
        options_.claim_hook(options_.claim_hook_arg, off, piece_end - off);
      }
      s = file_->Write(
          off, absl::string_view(zeros_.get(), static_cast<size_t>(piece_end - off)));
      {
        sync::MutexLock l(&mu_);
        claim_end_ = claim_begin_;
        cv_.SignalAll();
        if (!s.ok()) {
          status_ = s;
          stop_ = true;
          return;
        }
      }
      off = piece_end;
    }
    // fdatasync writes nothing of its own: no claim needed.
    s = file_->Sync();
    sync::MutexLock l(&mu_);
    if (!s.ok()) {
      status_ = s;
      stop_ = true;
      return;
    }
    if (end > zeroed_end_.load(std::memory_order_relaxed)) {
      zeroed_end_.store(end, std::memory_order_release);
    }
    chunks_.fetch_add(1, std::memory_order_relaxed);
    if (options_.chunk_counter != nullptr) {
      options_.chunk_counter->fetch_add(1, std::memory_order_relaxed);
    }
    cv_.SignalAll();
  }
}

}  // namespace io
}  // namespace binlog
