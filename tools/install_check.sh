#!/usr/bin/env bash
# Tests an install the way a user meets it (tools/test.sh's "install"
# pass): tools/install.sh into an empty temporary prefix, then
#
#   headers        tools/check_headers.sh on the installed headers
#   version        binlogtool --version, pkg-config --modversion, the
#                  version in the CMake package, binlog/version.h and the
#                  first release in CHANGELOG.md agree
#   cmake-c++17    tests/consumer/cmake with find_package(binlog), built as
#   cmake-c++20    C++17 and C++20, against libbinlog.so and libbinlog.a;
#                  both programs run (open, commit, read back, close)
#   pkgconfig-shared   tests/consumer/consumer.cc with a plain g++ command
#   pkgconfig-static   and pkg-config's flags (binlog / binlog-static)
#
# Prints "install <step>: OK" or "install <step>: FAILED" per step (the
# lines tools/test.sh counts) and exits 1 if any step failed.
#
# Environment: BINLOG_INSTALL_KEEP=1 keeps the temporary directory.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

work=$(mktemp -d "${TMPDIR:-/tmp}/binlog-install.XXXXXX")
if [[ "${BINLOG_INSTALL_KEEP:-0}" == "1" ]]; then
  echo "install: work directory $work (kept)"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix="$work/prefix"   # does not exist yet: an empty prefix
failed=0

# step NAME COMMAND...: runs the command with its output in $work/NAME.log,
# shown only on failure.
step() {
  local name=$1
  shift
  if "$@" >"$work/$name.log" 2>&1; then
    echo "install $name: OK"
  else
    echo "install $name: FAILED"
    sed 's/^/    /' "$work/$name.log" | tail -40
    failed=$((failed + 1))
  fi
}

if ! step install tools/install.sh "$prefix"; then :; fi
if [[ ! -f "$prefix/lib/pkgconfig/binlog.pc" ]]; then
  echo "install: nothing installed; skipping the other steps"
  exit 1
fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

step headers tools/check_headers.sh "$prefix"

check_version() {
  local want tool pc cmake_v changelog
  want=$(for p in MAJOR MINOR PATCH; do
    sed -n "s/^#define BINLOG_VERSION_$p \([0-9]*\)$/\1/p" binlog/version.h
  done | paste -sd.)
  tool=$("$prefix/bin/binlogtool" --version)
  pc=$(pkg-config --modversion binlog)
  cmake_v=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' \
    "$prefix/lib/cmake/binlog/binlogConfigVersion.cmake")
  changelog=$(sed -n 's/^## \([0-9][0-9.]*\)$/\1/p' CHANGELOG.md | head -1)
  echo "version.h $want; binlogtool: $tool; pkg-config: $pc;" \
    "CMake: $cmake_v; CHANGELOG.md: $changelog"
  [[ "$tool" == "binlogtool $want" && "$pc" == "$want" &&
    "$cmake_v" == "$want" && "$changelog" == "$want" ]]
}
step version check_version

cmake_consumer() {
  local std=$1 build="$work/cmake-$1"
  cmake -S tests/consumer/cmake -B "$build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_STANDARD="$std" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" -j 2 &&
    mkdir -p "$build/log-shared" "$build/log-static" &&
    "$build/consumer" "$build/log-shared" &&
    "$build/consumer_static" "$build/log-static" &&
    # The static program must not need libbinlog.so.
    ! ldd "$build/consumer_static" | grep -q libbinlog
}
step cmake-c++17 cmake_consumer 17
step cmake-c++20 cmake_consumer 20

pkgconfig_consumer() {
  local module=$1 out="$work/pc-$1"
  # shellcheck disable=SC2046
  g++ -std=c++17 -Wall -Wextra -Werror tests/consumer/consumer.cc \
    -o "$out" $(pkg-config --cflags --libs "$module") &&
    mkdir -p "$out.dir" &&
    LD_LIBRARY_PATH="$prefix/lib" "$out" "$out.dir"
}
step pkgconfig-shared pkgconfig_consumer binlog
step pkgconfig-static pkgconfig_consumer binlog-static

if [[ $failed -ne 0 ]]; then
  echo "install: $failed step(s) failed"
  exit 1
fi
