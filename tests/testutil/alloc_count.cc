#include "tests/testutil/alloc_count.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<uint64_t> g_allocs{0};
}  // namespace

#if !defined(__SANITIZE_THREAD__)
// noinline: GCC's -Wmismatched-new-delete fires when it inlines free()
// into a caller that got the pointer from operator new.
__attribute__((noinline)) void* operator new(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
#endif

namespace binlog {
namespace testutil {

bool CountsAllocations() {
#if defined(__SANITIZE_THREAD__)
  return false;
#else
  return true;
#endif
}

uint64_t AllocationCount() { return g_allocs.load(std::memory_order_relaxed); }

}  // namespace testutil
}  // namespace binlog
