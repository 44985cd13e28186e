// File: tests/testutil/alloc_count.h
//
// Counts the program's heap allocations, for tests and benchmarks that
// promise "no allocation in steady state". Linking this library replaces
// the global operator new / delete (malloc and free underneath, plus a
// relaxed atomic increment per allocation), except under ThreadSanitizer,
// whose runtime provides operator new itself: there nothing is counted and
// CountsAllocations() is false.
//
// Thread safety: thread-safe.

#ifndef BINLOG_TESTS_TESTUTIL_ALLOC_COUNT_H_
#define BINLOG_TESTS_TESTUTIL_ALLOC_COUNT_H_

#include <cstdint>

namespace binlog {
namespace testutil {

// True when operator new is counted (false under TSan).
bool CountsAllocations();

// Calls of operator new since the program started (0 if not counted).
uint64_t AllocationCount();

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_ALLOC_COUNT_H_
