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
  libssl-dev        # OpenSSL libcrypto: AES for binlog encryption
  openssl           # the openssl command: encryption_test decrypts a file with it
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libisal-dev
  liburing-dev      # benchmarks/uring_trial (the io_uring trial)
  zlib1g-dev
  mariadb-client    # mariadb-binlog, for compatibility checks
  mariadb-server    # mariadbd: tests/compat (apply test, replica of binlog_server)
  librocksdb-dev    # examples/engine_server's engine; commit_bench peer
  libleveldb-dev    # peer system in benchmarks/commit_bench
  gnuplot-nox       # benchmark plots (benchmarks/run_commit_bench.sh)
  python3           # test data genrules
  cmake             # install check: the CMake consumer (tests/consumer)
  pkg-config        # install check: the pkg-config consumer
  clang             # libFuzzer targets (tests/fuzz/build_fuzzers.sh)
  libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes for clang 14
)

# Python packages of the tests (tests/tools/requirements.txt: the
# independent replication client that reads from binlog_server, and
# cryptography, PyMySQL's RSA for caching_sha2_password). Without
# them python_client_test skips, and tools/test.sh fails on that skip (it is
# not in tests/expected_skips.txt).
python_packages() {
  local req
  req="$(dirname "$0")/../tests/tools/requirements.txt"
  if ! python3 -c 'import pymysqlreplication, pymysql, cryptography' 2>/dev/null; then
    python3 -m pip install -q -r "$req" >&2 ||
      echo "tools/setup.sh: could not pip install $req (python_client_test will skip)" >&2
  fi
}

# Go modules of tests/tools/gomysql (go_client_test: go-mysql's
# BinlogSyncer reading from binlog_server), pinned by its go.mod and
# go.sum: downloaded into the module cache, and the program built once
# into the test's build cache (/tmp/binlog_gomysql_gocache_UID) so the
# test, which builds it offline, starts warm. go.mod needs Go 1.21 or
# later; Debian bookworm's golang-go is 1.19, so no package of the archive
# provides it: a Go from elsewhere (PATH, /usr/local/go) is used when there
# is one. Without go the test skips with "no go command", the one skip of
# it tests/expected_skips.txt accepts; with go and without the modules it
# skips and tools/test.sh fails.
go_modules() {
  local dir go
  dir="$(dirname "$0")/../tests/tools/gomysql"
  go=$(command -v go || true)
  if [[ -z $go && -x /usr/local/go/bin/go ]]; then go=/usr/local/go/bin/go; fi
  if [[ -z $go ]]; then
    echo "tools/setup.sh: no go command (go_client_test will skip)" >&2
    return 0
  fi
  if ! (cd "$dir" && GOFLAGS=-mod=readonly "$go" mod download &&
    GOFLAGS='-mod=readonly -buildvcs=false' CGO_ENABLED=0 \
      GOCACHE="/tmp/binlog_gomysql_gocache_$(id -u)" "$go" build -o /dev/null .) >&2; then
    echo "tools/setup.sh: could not download or build $dir's modules (go_client_test will skip)" >&2
  fi
  return 0
}

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  python_packages
  go_modules
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
python_packages
go_modules
