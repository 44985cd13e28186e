#include "sync/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace binlog {
namespace sync {

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected,
               absl::Duration timeout) {
  struct timespec ts;
  struct timespec* tsp = nullptr;
  if (timeout != absl::InfiniteDuration()) {
    if (timeout <= absl::ZeroDuration()) return;
    ts = absl::ToTimespec(timeout);
    tsp = &ts;
  }
  // EINTR, EAGAIN (value changed) and ETIMEDOUT all mean "re-check".
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE,
            expected, tsp, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word, int count) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE,
            count, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) { FutexWake(word, INT_MAX); }

}  // namespace sync
}  // namespace binlog
