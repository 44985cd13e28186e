#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with Debian's clang, outside
# Bazel (Bazel's default toolchain here is gcc, which has no libFuzzer).
#
#   tests/fuzz/build_fuzzers.sh [OUT_DIR]
#
# Compiles the library sources the targets need with
# -fsanitize=fuzzer-no-link,address,undefined (coverage-instrumented, ASan +
# UBSan, UB fatal), links each target with -fsanitize=fuzzer and Debian's
# abseil, ISA-L and zlib (the libraries tools/bazel/third_party/*.BUILD name),
# and builds the seed generator make_seeds. OUT_DIR defaults to a new
# temporary directory; the script prints it on its last line.
#
# Environment: CXX (default clang++), JOBS (parallel compiles, default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/binlog-fuzz.XXXXXX")}
mkdir -p "$out/obj"
out=$(cd "$out" && pwd)

# Compile a snapshot of the sources, taken at once: a checkout that others
# edit while the build runs would otherwise mix old and new headers across
# objects (an ODR mismatch that crashes in odd places).
rm -rf "$out/src"
mkdir -p "$out/src/tests"
cp -a binlog io sync tools "$out/src/"
cp -a tests/fuzz "$out/src/tests/"
cd "$out/src"
CXX=${CXX:-clang++}
JOBS=${JOBS:-2}

if ! command -v "$CXX" >/dev/null; then
  echo "build_fuzzers.sh: $CXX not found (tools/setup.sh installs clang)" >&2
  exit 1
fi

# Debian's headers (abseil, ISA-L, zlib) are in /usr/include, a default
# search directory; naming it with -isystem would put it before libstdc++'s
# directories and break their #include_next <stdlib.h>.
common=(-std=c++17 -O1 -g -fno-omit-frame-pointer -I.
        -fsanitize=address,undefined -fno-sanitize-recover=all
        -Wall -Wextra)

# Every library source of binlog/, io/ and sync/, and of tools/
# (binlogtool's commands and printers), globbed so new
# files are picked up without editing this list. Files with their own main()
# (binlogtool, demo, generators) are left out; binlogtool.cc is compiled
# separately with its main renamed, for dump_fuzzer.
shopt -s nullglob
lib_srcs=()
# io/socket.cc and io/tls.cc are the replication server's transport
# (//io:socket, OpenSSL's libssl), which neither the library nor binlogtool
# uses.
for f in binlog/*.cc io/*.cc sync/*.cc tools/*.cc; do
  case "$f" in io/socket.cc | io/tls.cc) continue ;; esac
  grep -qE '^int main\(' "$f" || lib_srcs+=("$f")
done
shopt -u nullglob

# The absl libraries, in the link order of tools/bazel/third_party/absl.BUILD.
mapfile -t absl_libs < <(grep -o '"-l[a-z0-9_]*"' tools/bazel/third_party/absl.BUILD | tr -d '"')
libs=("${absl_libs[@]}" -lisal -lz -lzstd -llz4 -lcrypto -lpthread)

export CXX
export common_str="${common[*]}"

# Library objects (no -Werror: the production code is checked by the gcc
# build; clang may warn about other things).
jobs_list=()
for src in "${lib_srcs[@]}"; do
  jobs_list+=("$src $out/obj/$(echo "$src" | tr / _).o")
done
# binlogtool.cc with its main renamed, for dump_fuzzer.
jobs_list+=("tools/binlogtool.cc $out/obj/binlogtool_as_lib.o -Dmain=binlogtool_main")
for t in reader_fuzzer recovery_fuzzer index_fuzzer payload_fuzzer dump_fuzzer \
         make_seeds; do
  jobs_list+=("tests/fuzz/$t.cc $out/obj/$t.o -Werror")
done

printf '%s\n' "${jobs_list[@]}" |
  xargs -P "$JOBS" -I{} bash -c 'set -e; read -r src obj extra <<<"{}";
    # shellcheck disable=SC2086
    $CXX $common_str -fsanitize=fuzzer-no-link $extra -c "$src" -o "$obj"'

lib_objs=()
for src in "${lib_srcs[@]}"; do lib_objs+=("$out/obj/$(echo "$src" | tr / _).o"); done

link() {  # NAME EXTRA_OBJS...
  local name=$1
  shift
  "$CXX" "${common[@]}" -fsanitize=fuzzer "$out/obj/$name.o" "$@" \
    "${lib_objs[@]}" "${libs[@]}" -o "$out/$name"
}
link reader_fuzzer
link recovery_fuzzer
link index_fuzzer
link payload_fuzzer
link dump_fuzzer "$out/obj/binlogtool_as_lib.o"
# The seed generator has its own main: no libFuzzer runtime.
"$CXX" "${common[@]}" -fsanitize=fuzzer-no-link "$out/obj/make_seeds.o" \
  "${lib_objs[@]}" "${libs[@]}" -o "$out/make_seeds"

echo "$out"
