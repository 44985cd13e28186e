// WritesetHistory and the key hash: see writeset.h for the rules and the
// contract.
//
// The table holds at most history_size live entries in at least
// 2 * history_size slots (a power of two), probed linearly from the slot
// Home() picks. Entries are never removed one by one, only all at once by a
// new generation, so a probe can stop at the first slot that is not live:
// no tombstones. At a load factor of at most 1/2 a probe looks at about 1.5
// slots when the key is present and 2.5 when it is not (Knuth's linear
// probing estimates), so an Assign costs a few cache misses per hash.

#include "binlog/writeset.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace binlog {

absl::StatusOr<WritesetHistory> WritesetHistory::Create(size_t history_size) {
  if (history_size < 1 || history_size > kMaxWritesetHistorySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "writeset history size must be 1..", kMaxWritesetHistorySize, ", not ",
        history_size));
  }
  int bits = 1;
  while ((size_t{1} << bits) < 2 * history_size) ++bits;
  return WritesetHistory(history_size, bits);
}

WritesetHistory::WritesetHistory(size_t history_size, int bits)
    : history_size_(history_size),
      shift_(64 - bits),
      mask_((size_t{1} << bits) - 1),
      slots_(new Slot[size_t{1} << bits]()) {}

void WritesetHistory::Clear(int64_t floor) {
  floor_ = floor;
  size_ = 0;
  ++clears_;
  generation_ = (generation_ + 1) & 0xffff;
  if (generation_ == 0) {
    // The generation wrapped: slots of generation 1 written 65535 clears
    // ago would look live again. Empty the table for real (once per 65536
    // clears) and start over at 1.
    std::memset(slots_.get(), 0, (mask_ + 1) * sizeof(Slot));
    generation_ = 1;
  }
}

int64_t WritesetHistory::Assign(absl::Span<const uint64_t> hashes,
                                WritesetState state, int64_t sequence_number,
                                int64_t commit_order_last_committed) {
  if (state == WritesetState::kNone || hashes.size() > history_size_ ||
      static_cast<uint64_t>(sequence_number) > kSeqMask) {
    // Nothing usable (or a writeset the history could never hold, as
    // MySQL's per-transaction limit): commit order, and every later
    // transaction depends on this one.
    Clear(sequence_number);
    return commit_order_last_committed;
  }
  const bool exceeds = size_ + hashes.size() > history_size_;
  const uint64_t gen = generation_ << kSeqBits;
  const uint64_t mine = gen | static_cast<uint64_t>(sequence_number);
  int64_t parent = floor_;
  Slot* slots = slots_.get();
  for (uint64_t h : hashes) {
    size_t i = Home(h);
    for (;;) {
      Slot& s = slots[i];
      if ((s.value & ~kSeqMask) != gen) {
        // Not live: the hash is not in the history.
        if (!exceeds) {
          s.hash = h;
          s.value = mine;
          ++size_;
        }
        break;
      }
      if (s.hash == h) {
        const int64_t seq = static_cast<int64_t>(s.value & kSeqMask);
        if (seq > parent && seq < sequence_number) parent = seq;
        s.value = mine;
        break;
      }
      i = (i + 1) & mask_;
    }
  }
  const int64_t result = state == WritesetState::kComplete
                             ? std::min(parent, commit_order_last_committed)
                             : commit_order_last_committed;
  if (exceeds) Clear(sequence_number);
  return result;
}

uint64_t WritesetBytes(const char* data, size_t size) {
  uint64_t h = WritesetMix(0x243f6a8885a308d3ULL, size);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = WritesetMix(h, w);
  }
  if (i < size) {
    uint64_t w = 0;
    std::memcpy(&w, data + i, size - i);
    h = WritesetMix(h, w);
  }
  return h;
}

uint64_t WritesetKeySeed(absl::string_view schema, absl::string_view table,
                         uint32_t key_number) {
  // Lengths are mixed in by WritesetBytes, so ("ab", "c") and ("a", "bc")
  // differ.
  uint64_t h = WritesetMix(WritesetBytes(schema), WritesetBytes(table));
  return WritesetMix(h, key_number);
}

}  // namespace binlog
