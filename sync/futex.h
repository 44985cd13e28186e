// File: sync/futex.h
//
// Thin wrappers over Linux futexes on a std::atomic<uint32_t>: the cheapest
// way to park a thread on a word and wake it. Used by the group-commit
// pipeline (one word per waiting committer) and by the published tail that
// readers sleep on (one word for all of them, woken with one system call).
//
// Waits may return spuriously; callers re-check their condition in a loop.
// Thread safety: thread-safe.

#ifndef BINLOG_SYNC_FUTEX_H_
#define BINLOG_SYNC_FUTEX_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"

namespace binlog {
namespace sync {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futex words must be plain 32-bit words");

// Sleeps while *word == expected, at most `timeout` (InfiniteDuration for no
// limit). Returns at once if *word != expected.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected,
               absl::Duration timeout = absl::InfiniteDuration());

// Wakes up to `count` threads sleeping on `word`.
void FutexWake(std::atomic<uint32_t>* word, int count);

// Wakes every thread sleeping on `word`.
void FutexWakeAll(std::atomic<uint32_t>* word);

}  // namespace sync
}  // namespace binlog

#endif  // BINLOG_SYNC_FUTEX_H_
