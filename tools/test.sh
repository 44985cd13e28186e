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
# per install step and per fuzz target); a FLAKY target (passed only on a
# retry) counts as failed, and so does a pass in which no test ran. Skipped
# counts the test cases that passing targets skipped (GTEST_SKIP), read
# from the targets' test.xml and listed with their reasons
# (tools/list_skipped.py); a skip that tests/expected_skips.txt does not
# list is UNEXPECTED and counts as a failure, so a skip never passes
# silently. Exits non-zero if anything failed.
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
  local passed failed flaky
  passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
  # FLAKY: failed, then passed on a retry. A test that fails sometimes is a
  # failing test.
  flaky=$(grep -cE '^//[^ ]+ +(\(cached\) )?FLAKY' "$log" || true)
  failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|REMOTE FAILURE|BUILD FAILURE|FAILED TO BUILD)' "$log" || true)
  if [[ $flaky -ne 0 ]]; then
    echo "$name: $flaky FLAKY targets (passed only on a retry), counted as failed:"
    grep -E '^//[^ ]+ +(\(cached\) )?FLAKY' "$log" || true
    failed=$((failed + flaky))
  fi
  # Exit 4: the build succeeded but there was no test to run: a pass that
  # tests nothing (a pattern or tag filter that no longer matches) fails.
  if [[ $rc -eq 4 || $((passed + failed)) -eq 0 ]]; then
    echo "$name: no test ran (bazel exit status $rc); counting the pass as one failure"
    failed=$((failed + 1))
  elif [[ $rc -ne 0 && $failed -eq 0 ]]; then
    echo "$name: bazel exited with status $rc without naming a failed test; counting the pass as one failure"
    failed=1
  fi
  # Test cases skipped inside the targets (their test.xml), with reasons;
  # a skip tests/expected_skips.txt does not list fails the pass.
  local opts=() a testlogs skipped_out skipped unexpected list_rc
  for a in "$@"; do [[ $a == --* ]] && opts+=("$a"); done
  testlogs=$(bazel info "${opts[@]}" bazel-testlogs 2>/dev/null || true)
  skipped=0
  unexpected=0
  if [[ -z $testlogs ]]; then
    echo "$name: cannot locate bazel-testlogs to read the skips; counting the pass as one failure"
    failed=$((failed + 1))
  else
    list_rc=0
    skipped_out=$(python3 tools/list_skipped.py "$testlogs" tests/expected_skips.txt < "$log") || list_rc=$?
    grep '^skipped' <<<"$skipped_out" || true
    if [[ $list_rc -ne 0 ]]; then
      echo "$name: tools/list_skipped.py failed (status $list_rc); counting the pass as one failure"
      failed=$((failed + 1))
    else
      skipped=$(tail -n 1 <<<"$skipped_out" | grep -oE '^[0-9]+' || echo 0)
      unexpected=$(tail -n 1 <<<"$skipped_out" | sed -nE 's/.* ([0-9]+) unexpected$/\1/p')
      unexpected=${unexpected:-0}
      if [[ $unexpected -ne 0 ]]; then
        echo "$name: $unexpected unexpected skips (not in tests/expected_skips.txt), counted as failed"
        failed=$((failed + unexpected))
      fi
    fi
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
