#!/usr/bin/env bash
# Installs the library into PREFIX:
#
#   tools/install.sh PREFIX
#
#   PREFIX/include/binlog/{binlog,io,sync}/*.h   public headers
#                                                (tools/install/headers.txt)
#   PREFIX/lib/libbinlog.a                       static library
#   PREFIX/lib/libbinlog.so.MAJOR.MINOR.PATCH    shared library, SONAME
#   PREFIX/lib/libbinlog.so.MAJOR -> ...         libbinlog.so.MAJOR
#   PREFIX/lib/libbinlog.so -> libbinlog.so.MAJOR
#   PREFIX/lib/pkgconfig/binlog.pc               pkg-config (shared library)
#   PREFIX/lib/pkgconfig/binlog-static.pc        pkg-config (libbinlog.a)
#   PREFIX/lib/cmake/binlog/binlogConfig.cmake   CMake package (binlog::binlog,
#   PREFIX/lib/cmake/binlog/binlogConfigVersion.cmake   binlog::binlog_static)
#   PREFIX/bin/binlogtool                        the inspection tool
#
# The libraries hold the objects of //:binlog's libraries in binlog/, io/
# and sync/ (built by Bazel: //:libbinlog_archive, //:libbinlog.so); abseil,
# zstd, lz4, ISA-L and zlib are dependencies named by binlog.pc and the
# CMake package, not copies inside ours. The installed tree uses relative
# paths and can be moved. Installing over an earlier install replaces the
# files it installs. Consumers: see README.md ("Install and link");
# tools/install_check.sh tests an install.
set -euo pipefail

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: tools/install.sh PREFIX" >&2
  exit 2
fi
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

tools/setup.sh

version_part() {
  sed -n "s/^#define BINLOG_VERSION_$1 \([0-9][0-9]*\)$/\1/p" binlog/version.h
}
major=$(version_part MAJOR)
minor=$(version_part MINOR)
patch=$(version_part PATCH)
if [[ -z "$major" || -z "$minor" || -z "$patch" ]]; then
  echo "install.sh: cannot read the version from binlog/version.h" >&2
  exit 1
fi
version="$major.$minor.$patch"

bazel build --color=no //:libbinlog.so //:libbinlog_archive //tools:binlogtool
bin=$(bazel info bazel-bin 2>/dev/null)

soname=$(readelf -d "$bin/libbinlog.so" |
  sed -n 's/.*Library soname: \[\(.*\)\]$/\1/p')
if [[ "$soname" != "libbinlog.so.$major" ]]; then
  echo "install.sh: //:libbinlog.so has SONAME '$soname', but" \
    "binlog/version.h says MAJOR $major (fix the -soname in BUILD)" >&2
  exit 1
fi

# Headers: the public list, plus the internal headers public ones still
# include (tools/install/headers_transitional.txt; empty when the API is
# clean).
headers() {
  grep -v '^[[:space:]]*\(#\|$\)' tools/install/headers.txt
  grep -v '^[[:space:]]*\(#\|$\)' tools/install/headers_transitional.txt |
    awk '{print $2}'
}
incdir="$prefix/include/binlog"
for h in $(headers | sort -u); do
  install -D -m 0644 "$h" "$incdir/$h"
done

install -d "$prefix/lib" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/binlog" \
  "$prefix/bin"
install -m 0644 "$bin/libbinlog.lo" "$prefix/lib/libbinlog.a"
install -m 0755 "$bin/libbinlog.so" "$prefix/lib/libbinlog.so.$version"
ln -sfn "libbinlog.so.$version" "$prefix/lib/libbinlog.so.$major"
ln -sfn "libbinlog.so.$major" "$prefix/lib/libbinlog.so"
install -m 0755 "$bin/tools/binlogtool" "$prefix/bin/binlogtool"

subst() {
  sed -e "s/@VERSION@/$version/g" -e "s/@MAJOR@/$major/g" \
    -e "s/@MINOR@/$minor/g" -e "s/@PATCH@/$patch/g" "$1" >"$2"
  chmod 0644 "$2"
}
subst tools/install/binlog.pc.in "$prefix/lib/pkgconfig/binlog.pc"
subst tools/install/binlog-static.pc.in \
  "$prefix/lib/pkgconfig/binlog-static.pc"
subst tools/install/binlogConfig.cmake.in \
  "$prefix/lib/cmake/binlog/binlogConfig.cmake"
subst tools/install/binlogConfigVersion.cmake.in \
  "$prefix/lib/cmake/binlog/binlogConfigVersion.cmake"

echo "install.sh: installed binlog $version into $prefix"
