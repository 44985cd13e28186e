#!/usr/bin/env bash
# Regenerates the golden outputs of tests/tools/golden/ (listed in
# tests/tools/golden/GOLDENS) with the current binlogtool:
#
#   tests/tools/update_goldens.sh [CORPUS_DIR]
#
# CORPUS_DIR defaults to ../shared/corpus/mariadb (the @mariadb_corpus
# repository). Review the diff (git diff tests/tools/golden) before
# committing: every change in it is a change of binlogtool's output.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
corpus=${1:-$root/../shared/corpus/mariadb}
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
