#!/bin/sh
# Runs binlogtool_gidx_test.py with python3 from PATH (see
# binlogtool_test.sh for why this is an sh_test).
set -eu
exec python3 "$TEST_SRCDIR/binlog_storage/tests/tools/binlogtool_gidx_test.py" "$@"
