#!/usr/bin/env bash
# Runs the main job: the end-to-end demo, then inspects and verifies what it
# wrote with binlogtool and (if installed) mariadb-binlog.
#
# usage: tools/demo.sh [DIR] [extra demo flags...]
#   DIR   where the log is written; created if missing, must be empty, and
#         kept afterwards. Without DIR a temporary directory is used and
#         removed at exit.
# Exit status: 0 if the demo and every check passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/setup.sh

if [[ $# -ge 1 && "$1" != -* ]]; then
  dir=$1
  shift
  if [[ -e "$dir" && ! -d "$dir" ]]; then
    echo "demo.sh: $dir exists and is not a directory; refusing to use it" >&2
    exit 1
  fi
  if [[ -d "$dir" && -n "$(ls -A "$dir")" ]]; then
    echo "demo.sh: $dir is not empty; give an empty or new directory" >&2
    exit 1
  fi
  mkdir -p "$dir"
  dir=$(realpath "$dir")
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/binlog-demo.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi

# bazel run executes the binary in its runfiles tree, so every path given to
# it must be absolute ($dir is).
brun() {
  bazel run --noshow_progress --ui_event_filters=-info "$@"
}

failed=()

# The library today syncs each commit on its own (about 1 ms per fdatasync
# here), so a 4 MiB file would not fill in 3 s; 512 KiB makes the demo
# rotate several times. Later flags override these.
echo "== demo (log in $dir)"
if brun //tools:demo -- --dir="$dir" --threads=8 --seconds=3 \
     --max_file_size=524288 --payload=512 "$@"; then
  :
else
  failed+=("demo (exit $?)")
fi

if bazel query --noshow_progress --ui_event_filters=-info //tools:binlogtool \
     >/dev/null 2>&1; then
  echo
  echo "== binlogtool list"
  brun //tools:binlogtool -- list "$dir" || failed+=("binlogtool list (exit $?)")

  echo
  echo "== binlogtool dump --format=text binlog.000001 (first 20 lines)"
  # head closes the pipe early: a SIGPIPE exit (141) of the dump is expected.
  set +o pipefail
  brun //tools:binlogtool -- dump --format=text "$dir/binlog.000001" | head -20
  dump_rc=${PIPESTATUS[0]}
  set -o pipefail
  if [[ $dump_rc -ne 0 && $dump_rc -ne 141 ]]; then
    failed+=("binlogtool dump (exit $dump_rc)")
  fi

  echo
  echo "== binlogtool verify"
  verify_rc=0
  brun //tools:binlogtool -- verify "$dir" || verify_rc=$?
  case $verify_rc in
    0) echo "binlogtool verify: clean" ;;
    1) echo "binlogtool verify: PROBLEMS found"; failed+=("binlogtool verify (problems)") ;;
    *) echo "binlogtool verify: failed (exit $verify_rc)"; failed+=("binlogtool verify (exit $verify_rc)") ;;
  esac

  # MySQL 8.4's tagged GTIDs (uuid:tag:gno, Gtid_tagged_log_event) in a log
  # of their own: MariaDB's mariadb-binlog, run on the main log below,
  # cannot read that event type.
  echo
  echo "== demo with tagged GTIDs (--tag=demo) in $dir/tagged"
  if brun //tools:demo -- --dir="$dir/tagged" --threads=2 --seconds=0.5 \
       --max_file_size=524288 --payload=128 --tag=demo >/dev/null; then
    set +o pipefail
    brun //tools:binlogtool -- dump --format=text "$dir/tagged/binlog.000001" |
      grep -m 4 'GTID'
    set -o pipefail
    brun //tools:binlogtool -- verify "$dir/tagged" ||
      failed+=("binlogtool verify of the tagged log (exit $?)")
  else
    failed+=("demo --tag (exit $?)")
  fi
else
  echo
  echo "NOTE: //tools:binlogtool does not exist yet; skipping binlogtool list, dump and verify."
fi

if command -v mariadb-binlog >/dev/null 2>&1; then
  echo
  echo "== mariadb-binlog --verify-binlog-checksum (every file of the log)"
  # Binlog files only (binlog.NNNNNN), not their GTID index files (.gidx).
  files=("$dir"/binlog.[0-9]*[0-9])
  if mariadb-binlog --verify-binlog-checksum "${files[@]}" >/dev/null; then
    echo "mariadb-binlog: pass (${#files[@]} files)"
  else
    echo "mariadb-binlog: FAIL"
    failed+=("mariadb-binlog")
  fi
else
  echo
  echo "NOTE: mariadb-binlog is not installed; skipping the compatibility check."
fi

echo
if [[ ${#failed[@]} -eq 0 ]]; then
  echo "demo.sh: all passed"
else
  echo "demo.sh: FAILED: ${failed[*]}"
  exit 1
fi
