#!/bin/sh
# Runs the binlog_server binary tests (binlog_server_test.py) with python3
# from PATH: Bazel 4's native py_test would need a configured Python
# toolchain, which this offline workspace does not set up.
set -eu
exec python3 "$TEST_SRCDIR/binlog_storage/tests/tools/binlog_server_test.py" "$@"
