#!/usr/bin/env bash
# Builds the fuzz targets (build_fuzzers.sh), makes the seed corpora
# (make_seeds: files the library writes + prefixes of the MariaDB corpus)
# and runs each target for a bounded time, one after the other, one
# process each (the machine is shared: never more than one fuzzer at once).
#
#   tests/fuzz/run_fuzzers.sh SECONDS [TARGET...]
#
# TARGET: reader_fuzzer recovery_fuzzer index_fuzzer payload_fuzzer
# dump_fuzzer (default: all). Prints one line per target,
#   fuzz <target>: <N> executions in <S> s, <cov> coverage, OK|CRASH (...)
# and exits non-zero if any target crashed, leaked, timed out or hit a
# sanitizer report; the reproducer is kept under the work directory, whose
# path is printed.
#
# Environment:
#   BINLOG_FUZZ_WORK    work directory (build, corpora, artifacts, logs);
#                       default: a new temporary directory, removed on
#                       success unless BINLOG_FUZZ_KEEP=1
#   BINLOG_FUZZ_CORPUS  directory to keep the grown corpora in across runs
#                       (one subdirectory per target)
#   BINLOG_CORPUS_DIR   MariaDB corpus (default tests/data/mariadb)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] ||
  targets=(reader_fuzzer recovery_fuzzer index_fuzzer payload_fuzzer dump_fuzzer)

work=${BINLOG_FUZZ_WORK:-}
cleanup=0
if [[ -z "$work" ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/binlog-fuzz-run.XXXXXX")
  [[ "${BINLOG_FUZZ_KEEP:-0}" == "1" ]] || cleanup=1
fi
mkdir -p "$work"
echo "fuzz: work directory $work"

tests/fuzz/build_fuzzers.sh "$work/build" >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2
  echo "fuzz: build failed" >&2
  exit 1
}
corpus_src=${BINLOG_CORPUS_DIR:-tests/data/mariadb}
"$work/build/make_seeds" "$work/seeds" "$corpus_src"

failed=0
for t in "${targets[@]}"; do
  seed_dir="$work/seeds/${t%_fuzzer}"
  corpus="${BINLOG_FUZZ_CORPUS:+$BINLOG_FUZZ_CORPUS/$t}"
  corpus=${corpus:-$work/corpus/$t}
  artifacts="$work/artifacts/$t/"
  # Inputs that once failed a target, kept in the tree: every run starts by
  # running them (libFuzzer adds new units to the first corpus only).
  dirs=("$corpus" "$seed_dir")
  [[ -d tests/fuzz/regressions/$t ]] && dirs+=("tests/fuzz/regressions/$t")
  mkdir -p "$corpus" "$artifacts"
  log="$work/$t.log"
  rc=0
  # -max_len: the seeds are at most 64 KiB; larger inputs only slow the
  # search down. -timeout: one input taking 25 s is a hang.
  "$work/build/$t" -max_total_time="$seconds" -max_len=65536 -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts" \
    "${dirs[@]}" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  secs=$(grep -o 'stat::number_of_executed_units' "$log" >/dev/null &&
         grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$log" | grep -oE '[0-9]+ second' | grep -oE '[0-9]+' || echo "$seconds")
  if [[ $rc -eq 0 ]]; then
    echo "fuzz $t: $execs executions in $secs s, $cov coverage, OK"
  else
    failed=1
    echo "fuzz $t: $execs executions, CRASH (exit $rc); log $log, reproducer in $artifacts"
    grep -E 'ERROR: |SUMMARY: |check failed|runtime error' "$log" | head -5 || true
  fi
done

if [[ $failed -eq 0 && $cleanup -eq 1 ]]; then
  rm -rf "$work"
fi
exit $failed
