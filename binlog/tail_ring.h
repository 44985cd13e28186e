// File: binlog/tail_ring.h (internal)
//
// TailRing: the most recent bytes the writer wrote to the active file of a
// live log, kept in memory so that caught-up tailing readers take their
// events from there instead of each reading them from the file (a pread, a
// copy through the kernel and, for an encrypted log, a decryption, once per
// reader). Sized by Options::reader_ring_bytes.
//
// Actors.
//   The writer (the flush stage, one group at a time) copies every group it
//   writes into the ring (Append), after writing it to the file and before
//   the group is published. Bytes it writes otherwise (a new file's header,
//   Rotate and Stop events, spilled transactions) are not copied: the next
//   group then starts the ring anew at its own offset.
//   Readers (Reader, binlog/reader.cc) take views of ring bytes (View),
//   each under its own pin slot; they never read past the published end.
//
// Layout. Capacity C, a power of two. While the ring holds file F, the byte
// at offset x of F is at buf_[x & (C - 1)]. The ring holds F's bytes
// [lo, hi): lo_ = Pack(F, lo) and hi_ = Pack(F, hi) (packed as LiveLog packs
// positions: file << 32 | offset, so positions compare in log order).
//
// Overwrite safety. Readers read ring bytes with plain loads, in place (a
// batch reader hands them to its caller), so a byte must never be stored
// while a reader may still read it. Each reader owns a pin slot: the packed
// position of the oldest ring byte it may read, kUnpinned when none.
//   Reader (View): store pin = Pack(F, x), then load lo_ and hi_; the view
//     [x, min(hi, end)) is used only if lo <= x < hi in file F, else the
//     pin is dropped and the reader reads the file.
//   Writer (Append of [s, e) in F): store lo_ = Pack(F, max(lo, e - C))
//     (Pack(F, s) when the ring starts anew), then load every pin: a pin
//     below the new lo_ belongs to a reader that may be reading bytes whose
//     slots [s, e) reuse. Then nothing is copied and the ring is emptied at
//     e (lo_ = hi_ = Pack(F, e); readers read the file until it refills).
//     Otherwise the bytes are copied and hi_ is stored.
//   All four accesses are seq_cst: of a reader's pin store and the writer's
//   lo_ store, whichever comes second is followed by a load that sees the
//   first, so either the reader sees the raised lo_ and leaves the ring, or
//   the writer sees the pin and does not overwrite (both may happen; both
//   are safe). A pin only moves forward while its reader stays in the ring
//   (each new view starts at or after the previous one), so bytes at or
//   after a pin that was checked stay intact until the pin moves past them.
//   The writer never waits for a reader: a reader that holds a view while
//   the writer writes C bytes past it costs the ring one emptying, and its
//   readers one fall-back to the file.
//
// Thread safety: thread-safe as described (one writer at a time; any
// number of readers, each with its own slot).

#ifndef BINLOG_BINLOG_TAIL_RING_H_
#define BINLOG_BINLOG_TAIL_RING_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

class TailRing {
 public:
  static constexpr uint64_t kUnpinned = std::numeric_limits<uint64_t>::max();
  // Pin slots: readers beyond this many read the file (no ring).
  static constexpr int kMaxSlots = 1024;

  // `capacity`: a power of two (Options::reader_ring_bytes; validated).
  explicit TailRing(size_t capacity)
      : cap_(capacity),
        mask_(capacity - 1),
        buf_(new char[capacity]),
        pins_(new std::atomic<uint64_t>[kMaxSlots]) {
    for (int i = 0; i < kMaxSlots; ++i) {
      pins_[i].store(kUnpinned, std::memory_order_relaxed);
    }
  }

  size_t capacity() const { return cap_; }

  static uint64_t Pack(uint64_t file, uint64_t offset) {
    return (file << 32) | offset;
  }

  // ---- Writer (one at a time).

  // Copies the group `parts`, written at [offset, offset + size) of `file`,
  // into the ring (or empties the ring, see the file comment). Called
  // before the group is published. No allocation, no system call: a
  // handful of atomic operations, one load per used pin slot, and the
  // memcpy of the group's bytes.
  void Append(uint64_t file, uint64_t offset,
              absl::Span<const absl::string_view> parts) {
    uint64_t n = 0;
    for (absl::string_view p : parts) n += p.size();
    if (n == 0) return;
    const uint64_t end = offset + n;
    if (registered_.load(std::memory_order_seq_cst) == 0) {
      // No reader: nothing is copied; the ring is empty at `end`.
      lo_.store(Pack(file, end), std::memory_order_seq_cst);
      hi_.store(Pack(file, end), std::memory_order_release);
      return;
    }
    const uint64_t hi = hi_.load(std::memory_order_relaxed);
    const uint64_t lo = lo_.load(std::memory_order_relaxed);
    uint64_t new_lo;
    if (hi != Pack(file, offset) || n > cap_) {
      // A new file, a gap (bytes written without Append), or a group
      // larger than the ring: start anew at this group (or after it).
      new_lo = Pack(file, n > cap_ ? end : offset);
    } else {
      new_lo = std::max(lo, Pack(file, end > cap_ ? end - cap_ : 0));
    }
    lo_.store(new_lo, std::memory_order_seq_cst);
    if (n > cap_ || Pinned(new_lo)) {
      // Empty at `end`: the next group continues from there.
      lo_.store(Pack(file, end), std::memory_order_seq_cst);
      hi_.store(Pack(file, end), std::memory_order_release);
      ++emptied_;
      return;
    }
    uint64_t at = offset;
    for (absl::string_view p : parts) {
      size_t i = static_cast<size_t>(at & mask_);
      size_t first = std::min<size_t>(p.size(), cap_ - i);
      std::memcpy(buf_.get() + i, p.data(), first);
      if (first < p.size()) {
        std::memcpy(buf_.get(), p.data() + first, p.size() - first);
      }
      at += p.size();
    }
    hi_.store(Pack(file, end), std::memory_order_release);
  }

  // Log Reset (no reader exists): nothing is held.
  void Clear() {
    lo_.store(0, std::memory_order_seq_cst);
    hi_.store(0, std::memory_order_seq_cst);
  }

  // Times Append emptied the ring because a reader held bytes it needed.
  uint64_t emptied() const { return emptied_; }  // writer only

  // ---- Readers.

  // A pin slot for one reader, or -1 if all are taken (it reads the file).
  int Register() {
    sync::MutexLock l(&slots_mu_);
    for (int i = 0; i < kMaxSlots; ++i) {
      if (!taken_[i]) {
        taken_[i] = true;
        registered_.fetch_add(1, std::memory_order_seq_cst);
        if (i + 1 > used_.load(std::memory_order_relaxed)) {
          used_.store(i + 1, std::memory_order_seq_cst);
        }
        return i;
      }
    }
    return -1;
  }
  void Unregister(int slot) {
    pins_[slot].store(kUnpinned, std::memory_order_seq_cst);
    sync::MutexLock l(&slots_mu_);
    taken_[slot] = false;
    registered_.fetch_sub(1, std::memory_order_seq_cst);
  }

  // A view of the ring bytes of `file` from `offset` up to `end` (the
  // published end the reader loaded), shorter at the ring's end, at the
  // wrap point, or at `max` bytes; empty if the ring does not hold
  // `offset`. While non-empty, the view stays intact until the next View or
  // Unpin of `slot`. REQUIRES: the slot's pin, if set, is at or before
  // Pack(file, offset) (views move forward), or the reader Unpin()ed.
  absl::string_view View(int slot, uint64_t file, uint64_t offset,
                         uint64_t end, size_t max) {
    const uint64_t at = Pack(file, offset);
    // Cheap exit for a reader behind the ring (no store to the shared
    // slot line): lo_ only grows, so if it is past `at` now it stays so.
    if (lo_.load(std::memory_order_relaxed) > at) {
      Unpin(slot);
      return absl::string_view();
    }
    pins_[slot].store(at, std::memory_order_seq_cst);
    const uint64_t lo = lo_.load(std::memory_order_seq_cst);
    const uint64_t hi = hi_.load(std::memory_order_acquire);
    if (lo > at || (hi >> 32) != file || hi <= at) {
      Unpin(slot);
      return absl::string_view();
    }
    uint64_t stop = std::min<uint64_t>(hi & 0xFFFFFFFFu, end);
    if (stop <= offset) {
      Unpin(slot);
      return absl::string_view();
    }
    const size_t i = static_cast<size_t>(offset & mask_);
    size_t len = static_cast<size_t>(stop - offset);
    len = std::min(len, cap_ - i);  // up to the wrap point
    len = std::min(len, max);
    return absl::string_view(buf_.get() + i, len);
  }

  void Unpin(int slot) {
    if (pins_[slot].load(std::memory_order_relaxed) != kUnpinned) {
      pins_[slot].store(kUnpinned, std::memory_order_seq_cst);
    }
  }

 private:
  // Some reader's pin is below `lo` (it may read bytes the writer is about
  // to overwrite).
  bool Pinned(uint64_t lo) const {
    const int used = used_.load(std::memory_order_seq_cst);
    for (int i = 0; i < used; ++i) {
      if (pins_[i].load(std::memory_order_seq_cst) < lo) return true;
    }
    return false;
  }

  const size_t cap_;
  const uint64_t mask_;
  const std::unique_ptr<char[]> buf_;

  // Written by the writer (Append, Clear) only; loaded by readers (View).
  // Own cache line: the writer stores them once per group, readers load
  // them once per view.
  alignas(64) std::atomic<uint64_t> lo_{0};
  std::atomic<uint64_t> hi_{0};
  uint64_t emptied_ = 0;  // writer only

  // Pins: each written by its reader only (View, Unpin), loaded by the
  // writer (Pinned). Packed 8 to a cache line: a reader stores its pin once
  // per view, the writer loads the used ones once per group.
  alignas(64) std::unique_ptr<std::atomic<uint64_t>[]> pins_;
  // Slots in use: [0, used_) are scanned. Raised under slots_mu_ (seq_cst:
  // a slot registered before its first pin is scanned by every Append
  // that can see the pin); never lowered.
  std::atomic<int> used_{0};
  std::atomic<int> registered_{0};
  sync::Mutex slots_mu_;
  bool taken_[kMaxSlots] ABSL_GUARDED_BY(slots_mu_) = {};
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_TAIL_RING_H_
