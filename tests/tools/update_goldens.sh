#!/usr/bin/env bash
# Regenerates the golden outputs of tests/tools/golden/ (listed in
# tests/tools/golden/GOLDENS) with the current binlogtool:
#
#   tests/tools/update_goldens.sh [CORPUS_DIR]
#
# CORPUS_DIR defaults to tests/data/mariadb (the in-tree corpus). Review
# the diff (git diff tests/tools/golden) before committing: every change in
# it is a change of binlogtool's output. After regenerating the corpus,
# check that the --start/--stop-position and --datetime arguments in
# GOLDENS still select what their names say (event positions and times
# change with every run of tests/data/mariadb/generate.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
corpus=${1:-$root/tests/data/mariadb}
bazel build //tools:binlogtool
tool=$(bazel info bazel-bin 2>/dev/null)/tools/binlogtool
golden=$root/tests/tools/golden
cd "$corpus"
while read -r name want args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  rc=0
  # shellcheck disable=SC2086
  "$tool" $args >"$golden/$name" || rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "update_goldens.sh: $name: exit status $rc, GOLDENS says $want" >&2
    exit 1
  fi
  echo "wrote $name"
done <"$golden/GOLDENS"
