#!/usr/bin/env bash
# Installs what the project needs on a Debian bookworm machine, from Debian's
# package archive only (Bazel comes from bazel-bootstrap; every third-party
# library from its -dev package; see WORKSPACE).
#
# Idempotent: checks each package with dpkg-query and installs only the
# missing ones. Silent when nothing is missing. As root it installs them with
# apt-get; otherwise it prints the command to run and exits 1.
set -euo pipefail

packages=(
  bazel-bootstrap   # Bazel 4.2.3 (.bazelversion)
  build-essential   # gcc/g++ 12, make, libc headers
  g++
  libasan8          # AddressSanitizer runtime (bazel test --config=asan)
  libubsan1         # UndefinedBehaviorSanitizer runtime
  libtsan2          # ThreadSanitizer runtime (bazel test --config=tsan)
  libabsl-dev
  liblz4-dev
  libzstd-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libisal-dev
  zlib1g-dev
  mariadb-client    # mariadb-binlog, for compatibility checks
  librocksdb-dev    # examples/engine_server's engine; commit_bench peer
  libleveldb-dev    # peer system in benchmarks/commit_bench
  gnuplot-nox       # benchmark plots (benchmarks/run_commit_bench.sh)
  python3           # test data genrules
  cmake             # install check: the CMake consumer (tests/consumer)
  pkg-config        # install check: the pkg-config consumer
  clang             # libFuzzer targets (tests/fuzz/build_fuzzers.sh)
  libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes for clang 14
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "tools/setup.sh: missing Debian packages: ${missing[*]}" >&2
  echo "Install them as root with:" >&2
  echo "  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "tools/setup.sh: installing ${missing[*]}" >&2
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
