// SequentialReader: large-window reads with read-ahead hints and a prefetch
// helper thread. See the header for the contract.
//
// Design notes.
// - Two window buffers, `cur_` (the consumer's) and `next_` (filled by the
//   helper while a prefetch is in flight, the consumer's again once it has
//   been collected). Moving on to a prefetched window is a swap, not a copy.
// - A range that straddles cur_ and next_ is copied into `big_`: the copy
//   is at most the range's size, once per window boundary. Binlog events
//   are mostly far smaller than a window, so this costs less than keeping
//   head room in front of every window (which would double the memory) or
//   mapping a ring buffer twice (Linux-only, and mmap is the wrong tool for
//   files that grow and get truncated, see STYLE.md).
// - A range larger than the window is read straight into big_ after the
//   part already buffered: one Read, no second copy of the file.
// - Without a usable prefetch, a miss refills cur_ in place: the part of
//   the range already buffered moves to the front (memmove of less than the
//   range) and the rest of the window is read behind it with one Read. This
//   is also how a caught-up tail reader reads each small published group.
// - The helper is one thread per reader, not a shared pool: a pool worker
//   stuck on one reader's cold read would delay another reader's prefetch
//   (the consumer would then wait for I/O that could have started earlier).
//   It is started at the first prefetch, so readers that never lag a whole
//   window behind the limit never create it.
// - Only whole windows below the limit are prefetched or hinted: near the
//   limit (a tail reader) a handoff to a thread per few-KiB group would cost
//   more than the read, and WILLNEED calls per group would be wasted
//   syscalls.

#include "io/sequential_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace binlog {
namespace io {
namespace {

size_t ClampWindow(size_t w) {
  return std::min(std::max(w, SequentialReader::kMinWindow),
                  SequentialReader::kMaxWindow);
}

constexpr uint64_t kPageSize = 4096;

}  // namespace

SequentialReader::SequentialReader(const SequentialReaderOptions& options)
    : options_(options), window_(ClampWindow(options.window)) {}

SequentialReader::~SequentialReader() {
  {
    sync::MutexLock l(&mu_);
    stop_ = true;  // a queued request is dropped; a running read finishes
    work_cv_.SignalAll();
  }
  if (helper_.joinable()) helper_.join();
}

void SequentialReader::Reset(RandomAccessFile* file, uint64_t limit) {
  DiscardPrefetch(/*wait=*/true);  // the old file may go away after this
  if (file_ != nullptr && options_.drop_behind) {
    MaybeDropBehind(peek_end_, /*all=*/true);
  }
  file_ = file;
  limit_ = limit;
  cur_.off = 0;
  cur_.len = 0;
  cur_.eof = false;
  next_.len = 0;
  hinted_upto_ = 0;
  dropped_upto_ = 0;
  peek_end_ = 0;
  if (file_ != nullptr && options_.sequential_hint) {
    Advise(0, 0, AccessHint::kSequential);
  }
}

void SequentialReader::LowerLimitWithPrefetch(uint64_t limit) {
  if (next_.off + window_ > limit) {
    // A prefetch that reached past the new limit would hand out bytes the
    // caller no longer may read; Peek clamps views to the limit anyway, but
    // drop it so the window is read again if the limit comes back.
    DiscardPrefetch(/*wait=*/true);
  }
  limit_ = limit;
}

absl::Status SequentialReader::Peek(uint64_t offset, size_t n,
                                    absl::string_view* out) {
  *out = absl::string_view();
  if (file_ == nullptr) {
    return absl::FailedPreconditionError("SequentialReader: no file");
  }
  uint64_t room = limit_ == kReadToEof
                      ? kReadToEof
                      : (limit_ > offset ? limit_ - offset : 0);
  size_t want = room < n ? static_cast<size_t>(room) : n;
  if (options_.drop_behind) MaybeDropBehind(offset, /*all=*/false);
  if (want == 0) return absl::OkStatus();
  if (offset >= cur_.off && offset + want <= cur_.end()) {
    // The common case: inside the current window.
    *out = absl::string_view(cur_.mem.get() + (offset - cur_.off), want);
    peek_end_ = offset + want;
    if (prefetch_ == Prefetch::kNone) MaybeStartPrefetch();
    MaybeHint();
    return absl::OkStatus();
  }
  absl::Status s = Refill(offset, want, out);
  if (s.ok()) peek_end_ = offset + out->size();
  MaybeStartPrefetch();
  MaybeHint();
  return s;
}

void SequentialReader::Seek(uint64_t offset) {
  if (file_ == nullptr) return;
  if (!(offset >= cur_.off && offset <= cur_.end())) {
    cur_.off = offset;
    cur_.len = 0;
    cur_.eof = false;
  }
  MaybeStartPrefetch();
  MaybeHint();
}

absl::Status SequentialReader::Refill(uint64_t offset, size_t want,
                                      absl::string_view* out) {
  if (prefetch_ != Prefetch::kNone) {
    bool in_cur = offset >= cur_.off && offset <= cur_.end();
    bool continues = next_.off == cur_.end() && in_cur;
    bool inside_next = offset >= next_.off && offset < next_.off + window_;
    if (continues || inside_next) {
      if (prefetch_ == Prefetch::kInFlight) {
        if (Reap(/*block=*/false)) {
          ++stats_.prefetch_hits;
        } else {
          absl::Time t0 = absl::Now();
          Reap(/*block=*/true);
          ++stats_.prefetch_waits;
          stats_.prefetch_wait_us += static_cast<uint64_t>(
              absl::ToInt64Microseconds(absl::Now() - t0));
        }
      } else {
        ++stats_.prefetch_hits;
      }
      if (!next_status_.ok()) {
        // Read the bytes again below: the error, if it persists, is then
        // reported for the range the caller needs, and everything before
        // it is delivered.
        ++stats_.prefetch_unused;
        prefetch_ = Prefetch::kNone;
        next_.len = 0;
      } else if (continues && offset < cur_.end()) {
        return Assemble(offset, want, /*use_next=*/true, out);
      } else {
        std::swap(cur_, next_);
        prefetch_ = Prefetch::kNone;
        next_.len = 0;
        if (offset >= cur_.off && offset + want <= cur_.end()) {
          *out = absl::string_view(cur_.mem.get() + (offset - cur_.off), want);
          return absl::OkStatus();
        }
        // A short window (the limit or the end of the file when it was
        // read) or a range larger than the window: go on below.
      }
    } else if (prefetch_ == Prefetch::kReady) {
      DiscardPrefetch(/*wait=*/false);  // not where the caller went
    }
    // A prefetch still in flight elsewhere is left alone: waiting for it
    // would make the caller wait for I/O it does not need.
  }
  if (want <= window_) return RefillInPlace(offset, want, out);
  return Assemble(offset, want, /*use_next=*/false, out);
}

absl::Status SequentialReader::RefillInPlace(uint64_t offset, size_t want,
                                             absl::string_view* out) {
  if (cur_.cap < window_) {
    cur_.mem.reset(new char[window_]);
    cur_.cap = window_;
    cur_.len = 0;
  }
  size_t prefix = 0;
  if (offset >= cur_.off && offset < cur_.end()) {
    prefix = static_cast<size_t>(cur_.end() - offset);
    if (offset != cur_.off) {
      std::memmove(cur_.mem.get(), cur_.mem.get() + (offset - cur_.off),
                   prefix);
    }
  }
  cur_.off = offset;
  cur_.len = prefix;
  cur_.eof = false;
  // prefix < want <= window_, and offset + want <= limit_.
  size_t to_read = window_ - prefix;
  if (limit_ != kReadToEof) {
    to_read = static_cast<size_t>(
        std::min<uint64_t>(to_read, limit_ - (offset + prefix)));
  }
  size_t got = 0;
  absl::Status s = ReadAt(offset + prefix, to_read, cur_.mem.get() + prefix,
                          &got);
  if (!s.ok() && to_read > want - prefix) {
    // The window failed somewhere; the caller may need only its readable
    // start. Read exactly the missing part of the range: its error (if
    // any) names the range the caller needs, and the bytes before a bad
    // region are all delivered.
    to_read = want - prefix;
    s = ReadAt(offset + prefix, to_read, cur_.mem.get() + prefix, &got);
  }
  if (!s.ok()) return s;  // cur_ keeps the prefix
  cur_.len += got;
  cur_.eof = got < to_read;
  if (cur_.len < want) {
    if (limit_ != kReadToEof) return ShortRead(offset, want, cur_.len);
    *out = absl::string_view(cur_.mem.get(), cur_.len);  // end of file
    return absl::OkStatus();
  }
  *out = absl::string_view(cur_.mem.get(), want);
  return absl::OkStatus();
}

absl::Status SequentialReader::Assemble(uint64_t offset, size_t want,
                                        bool use_next,
                                        absl::string_view* out) {
  if (big_cap_ < want) {
    size_t cap = std::max(want, window_);
    big_.reset(new char[cap]);
    big_cap_ = cap;
  }
  size_t have = 0;
  if (offset >= cur_.off && offset < cur_.end()) {
    have = static_cast<size_t>(
        std::min<uint64_t>(want, cur_.end() - offset));
    std::memcpy(big_.get(), cur_.mem.get() + (offset - cur_.off), have);
  }
  if (use_next) {
    // next_ starts where cur_ ends, which is offset + have.
    size_t take = std::min(want - have, next_.len);
    std::memcpy(big_.get() + have, next_.mem.get(), take);
    have += take;
    std::swap(cur_, next_);
    prefetch_ = Prefetch::kNone;
    next_.len = 0;
  }
  stats_.bytes_copied += have;
  absl::Status s;
  bool eof = false;
  if (have < want) {
    size_t got = 0;
    s = ReadAt(offset + have, want - have, big_.get() + have, &got);
    if (s.ok()) {
      eof = got < want - have;
      have += got;
    }
  }
  // The caller goes on after the range: a window that ends inside it is
  // spent; the next window (and prefetch) starts at the range's end.
  if (cur_.end() <= offset + have) {
    cur_.off = offset + have;
    cur_.len = 0;
    cur_.eof = eof;
  }
  if (!s.ok()) return s;
  if (have < want && limit_ != kReadToEof) {
    return ShortRead(offset, want, have);
  }
  *out = absl::string_view(big_.get(), have);
  return absl::OkStatus();
}

absl::Status SequentialReader::ReadAt(uint64_t offset, size_t n, char* dst,
                                      size_t* got) {
  *got = 0;
  ++stats_.read_calls;
  absl::Status s = file_->Read(offset, n, dst, got);
  if (!s.ok()) {
    ++stats_.read_errors;
    *got = 0;
    return absl::Status(s.code(),
                        absl::StrCat(file_->path(), ": offset ", offset,
                                     ": read of ", n, " bytes: ", s.message()));
  }
  if (*got > n) *got = n;  // a misbehaving FileSystem must not overrun
  stats_.bytes_read += *got;
  return absl::OkStatus();
}

absl::Status SequentialReader::ShortRead(uint64_t offset, size_t want,
                                         size_t got) const {
  auto size = file_->Size();
  return absl::DataLossError(absl::StrCat(
      file_->path(), ": offset ", offset + got, ": short read: the file ends ",
      size.ok() ? absl::StrCat("at ", *size) : std::string("there"),
      ", before the readable limit ", limit_,
      " (truncated under the reader?); needed bytes [", offset, ", ",
      offset + want, ")"));
}

void SequentialReader::MaybeStartPrefetch() {
  if (!options_.prefetch || file_ == nullptr) return;
  if (prefetch_ == Prefetch::kInFlight) return;
  uint64_t start = cur_.end();
  if (prefetch_ == Prefetch::kReady) {
    if (next_.off == start && next_status_.ok()) return;
    DiscardPrefetch(/*wait=*/false);
  }
  if (cur_.eof) return;  // at the end of the file when last read
  if (limit_ != kReadToEof && (limit_ <= start || limit_ - start < window_)) {
    return;  // less than a window readable: read it when needed
  }
  if (next_.cap < window_) {
    next_.mem.reset(new char[window_]);
    next_.cap = window_;
  }
  next_.off = start;
  next_.len = 0;
  next_.eof = false;
  {
    sync::MutexLock l(&mu_);
    req_file_ = file_;
    req_off_ = start;
    req_len_ = window_;
    req_buf_ = next_.mem.get();
    state_ = HelperState::kQueued;
    work_cv_.Signal();
  }
  if (!helper_.joinable()) helper_ = std::thread([this] { HelperLoop(); });
  prefetch_ = Prefetch::kInFlight;
}

void SequentialReader::MaybeHint() {
  if (!options_.will_need || file_ == nullptr || cur_.eof) return;
  uint64_t from = prefetch_ == Prefetch::kNone ? cur_.end()
                                               : next_.off + window_;
  uint64_t end = from + window_;
  if (limit_ != kReadToEof && end > limit_) return;  // whole windows only
  uint64_t begin = hinted_upto_ > from && hinted_upto_ <= end ? hinted_upto_
                                                              : from;
  if (end - begin < window_ / 4) return;  // (mostly) hinted already
  Advise(begin, end - begin, AccessHint::kWillNeed);
  hinted_upto_ = end;
}

void SequentialReader::MaybeDropBehind(uint64_t offset, bool all) {
  uint64_t end = offset & ~(kPageSize - 1);
  if (end <= dropped_upto_) return;
  if (!all && end - dropped_upto_ < window_) return;  // a window at a time
  Advise(dropped_upto_, end - dropped_upto_, AccessHint::kDontNeed);
  dropped_upto_ = end;
}

void SequentialReader::Advise(uint64_t offset, uint64_t len,
                              AccessHint hint) {
  ++stats_.advise_calls;
  (void)file_->Advise(offset, len, hint).ok();  // advisory
}

bool SequentialReader::Reap(bool block) {
  sync::MutexLock l(&mu_);
  if (state_ != HelperState::kDone) {
    if (!block) return false;
    while (state_ != HelperState::kDone) done_cv_.Wait(&mu_);
  }
  next_.len = res_got_;
  next_.eof = res_status_.ok() && res_got_ < req_len_;
  next_status_ = std::move(res_status_);
  res_status_ = absl::OkStatus();
  state_ = HelperState::kIdle;
  prefetch_ = Prefetch::kReady;
  return true;
}

void SequentialReader::DiscardPrefetch(bool wait) {
  if (prefetch_ == Prefetch::kInFlight && !Reap(wait)) return;
  if (prefetch_ == Prefetch::kReady) {
    ++stats_.prefetch_unused;
    prefetch_ = Prefetch::kNone;
    next_.len = 0;
  }
}

void SequentialReader::HelperLoop() {
  mu_.Lock();
  for (;;) {
    while (!stop_ && state_ != HelperState::kQueued) work_cv_.Wait(&mu_);
    if (stop_) break;
    state_ = HelperState::kRunning;
    const RandomAccessFile* file = req_file_;
    uint64_t off = req_off_;
    size_t len = req_len_;
    char* buf = req_buf_;
    mu_.Unlock();
    size_t got = 0;
    absl::Status s = file->Read(off, len, buf, &got);
    if (!s.ok()) {
      got = 0;
      s = absl::Status(s.code(),
                       absl::StrCat(file->path(), ": offset ", off,
                                    ": read of ", len,
                                    " bytes (prefetch): ", s.message()));
    }
    if (got > len) got = len;
    mu_.Lock();
    ++helper_reads_;
    helper_bytes_ += got;
    if (!s.ok()) ++helper_errors_;
    res_got_ = got;
    res_status_ = std::move(s);
    state_ = HelperState::kDone;
    done_cv_.SignalAll();
  }
  mu_.Unlock();
}

SequentialReaderStats SequentialReader::stats() const {
  SequentialReaderStats s = stats_;
  sync::MutexLock l(&mu_);
  s.read_calls += helper_reads_;
  s.bytes_read += helper_bytes_;
  s.prefetch_reads = helper_reads_;
  s.read_errors += helper_errors_;
  return s;
}

}  // namespace io
}  // namespace binlog
