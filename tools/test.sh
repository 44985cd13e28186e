#!/usr/bin/env bash
# Runs the whole test suite: every test in the optimized build (the default
# configuration of .bazelrc: -O2 -Wall -Wextra -Werror), then the install
# check (tools/install_check.sh: install into an empty prefix, the public
# header check, CMake and pkg-config consumers), then the tests
# under AddressSanitizer + UndefinedBehaviorSanitizer (--config=asan), then
# the concurrency tests under ThreadSanitizer (--config=tsan), then each
# libFuzzer target of tests/fuzz for a bounded time (clang, ASan + UBSan).
# Tests tagged "manual" (benchmarks, long crash runs, known-bug tests) are
# not part of //...
#
# Environment:
#   BINLOG_TEST_QUICK=1      skip the sanitizer and fuzz passes (local
#                            iteration; the install pass still runs)
#   BINLOG_FUZZ_SECONDS=N    seconds per fuzz target (default 25)
#
# Ends with one line "N passed, N failed, N skipped": passed and failed
# count test targets from bazel's per-test summary over the passes (and one
# per install step and per fuzz target); skipped counts the test cases that
# passing targets skipped (GTEST_SKIP, e.g. the tmpfs test where mounting is
# not allowed), read from the targets' test.xml and listed with their
# reasons, so a skip never passes silently. Exits non-zero if anything
# failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/setup.sh

log=$(mktemp "${TMPDIR:-/tmp}/binlog-test.XXXXXX")
trap 'rm -f "$log"' EXIT

total_passed=0
total_failed=0
total_skipped=0

# run_pass NAME BAZEL_TEST_ARGS...
# --test_summary=short prints one line per test, cached or not:
#   //tests:foo_test        (cached) PASSED in 0.3s
#   //tests:bar_test                 FAILED in 1.2s
# --keep_going runs every test that builds, and lists those that do not.
run_pass() {
  local name=$1
  shift
  echo "==== $name: bazel test $*"
  local rc=0
  bazel test --test_summary=short --keep_going --color=no "$@" 2>&1 |
    tee "$log" || rc=$?
  local passed failed
  passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(PASSED|FLAKY)' "$log" || true)
  failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|REMOTE FAILURE|BUILD FAILURE|FAILED TO BUILD)' "$log" || true)
  # Exit 4: the build succeeded but there was no test to run.
  if [[ $rc -ne 0 && $rc -ne 4 && $failed -eq 0 ]]; then
    echo "$name: bazel exited with status $rc without naming a failed test; counting the pass as one failure"
    failed=1
  fi
  # Test cases skipped inside the targets (their test.xml), with reasons.
  local opts=() a testlogs skipped_out skipped
  for a in "$@"; do [[ $a == --* ]] && opts+=("$a"); done
  testlogs=$(bazel info "${opts[@]}" bazel-testlogs 2>/dev/null || true)
  skipped=0
  if [[ -n $testlogs ]]; then
    skipped_out=$(python3 tools/list_skipped.py "$testlogs" < "$log" || true)
    grep '^skipped: ' <<<"$skipped_out" || true
    skipped=$(tail -n 1 <<<"$skipped_out" | grep -oE '^[0-9]+' || echo 0)
  fi
  echo "==== $name: $passed passed, $failed failed, $skipped skipped"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))
}

run_pass "optimized" //...

# The installed library as users meet it (tools/install_check.sh): install
# into an empty prefix, the header check, the version, and the CMake and
# pkg-config consumers (C++17 and C++20). One line per step.
echo "==== install: tools/install_check.sh"
install_rc=0
tools/install_check.sh 2>&1 | tee "$log" || install_rc=$?
passed=$(grep -cE '^install [a-z0-9+-]+: OK$' "$log" || true)
failed=$(grep -cE '^install [a-z0-9+-]+: FAILED$' "$log" || true)
if [[ $install_rc -ne 0 && $failed -eq 0 ]]; then
  echo "install: install_check.sh exited with status $install_rc without naming a failed step; counting the pass as one failure"
  failed=1
fi
echo "==== install: $passed passed, $failed failed"
total_passed=$((total_passed + passed))
total_failed=$((total_failed + failed))

if [[ "${BINLOG_TEST_QUICK:-0}" == "1" ]]; then
  echo "==== asan: skipped (BINLOG_TEST_QUICK=1)"
else
  # --platform_suffix keeps the sanitizer objects in their own output
  # directory (k8-opt-asan), so switching between the two passes does not
  # throw away the other's build outputs.
  run_pass "asan" --config=asan --platform_suffix=asan //tests/...
  # ThreadSanitizer on the concurrency tests (tag "concurrency"): group
  # commit, tailing readers. The library's locks are std::mutex based
  # (sync/mutex.h) so TSan sees them; Debian's abseil is not instrumented.
  run_pass "tsan" --config=tsan --platform_suffix=tsan \
    --test_tag_filters=concurrency //tests/...

  # libFuzzer targets (tests/fuzz; see tests/README.md): built with
  # Debian's clang outside Bazel, seeded from the MariaDB corpus and from
  # files the library writes, each run for a bounded time. A crash, leak,
  # hang or sanitizer report fails the pass (the reproducer is kept and its
  # path printed).
  fuzz_seconds=${BINLOG_FUZZ_SECONDS:-25}
  echo "==== fuzz: tests/fuzz/run_fuzzers.sh $fuzz_seconds"
  fuzz_rc=0
  tests/fuzz/run_fuzzers.sh "$fuzz_seconds" 2>&1 | tee "$log" || fuzz_rc=$?
  passed=$(grep -cE '^fuzz [a-z_]+: .*, OK$' "$log" || true)
  failed=$(grep -cE '^fuzz [a-z_]+: .*CRASH' "$log" || true)
  if [[ $fuzz_rc -ne 0 && $failed -eq 0 ]]; then
    echo "fuzz: run_fuzzers.sh exited with status $fuzz_rc without naming a failed target; counting the pass as one failure"
    failed=1
  fi
  echo "==== fuzz: $passed passed, $failed failed, 0 skipped"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
fi

echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[[ $total_failed -eq 0 ]]
