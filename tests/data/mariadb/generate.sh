#!/usr/bin/env bash
# Regenerates the MariaDB binlog corpus of the compatibility tests
# (tests/data/mariadb, see README.md) next to this script:
#
#   tests/data/mariadb/generate.sh            # all scenarios
#   tests/data/mariadb/generate.sh s2 s4      # only some (s1 s2 s3 s4)
#
# Needs: mariadb-server + mariadb-client (tested with Debian bookworm's
# 10.11.19-MariaDB-0+deb12u1) and python3 (stdlib only). As root it installs
# the missing ones with apt-get, as tools/setup.sh does; otherwise it prints
# the command to run. The tests never need a server: they read the committed
# output.
# Each scenario starts its own private mariadbd (fresh datadir in a scratch dir,
# unix socket only, --skip-networking) and stops or kill -9's only that process.
# Scratch: $CORPUS_WORK if set, else a new mktemp directory (removed at the end
# unless KEEP_WORK=1).
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3}"

missing=()
for p in mariadb-server mariadb-client python3; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "generate.sh: missing Debian packages: ${missing[*]}" >&2
    echo "Install them as root with:" >&2
    echo "  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "generate.sh: installing ${missing[*]}" >&2
  apt-get update -q
  # The package's own service is not started here (no init system in a
  # container; policy-rc.d may deny it): each scenario runs a private
  # mariadbd of its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

for tool in mariadbd mariadb mariadb-admin mariadb-install-db mariadb-binlog "$PY"; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y mariadb-server mariadb-client)" >&2; exit 1; }
done
WORK="${CORPUS_WORK:-$(mktemp -d -t mariadb-corpus.XXXXXX)}"
mkdir -p "$WORK"
trap '[ "${KEEP_WORK:-0}" = 1 ] || [ -n "${CORPUS_WORK:-}" ] || rm -rf "$WORK"' EXIT

# describe TITLE CMD... -> JSON for scenario.json
describe() { "$PY" -c 'import json,sys; print(json.dumps({"title": sys.argv[1], "workload": sys.argv[2:]}))' "$@"; }

s1() {  # row format, CRC32, 512 KiB files, one restart in the middle
  local name=s1-row-crc32 w="$WORK/s1"
  local wl=(row --seed 1101 --db shop --prefix vis --target-kb 800 --text-max 600 --blob-max 500 --xa --restart-at 0.6)
  rm -rf "$w"; mkdir -p "$w/sql"
  "$PY" tools/workload.py "${wl[@]}" -o "$w/sql/workload.sql"
  "$PY" tools/scenario.py --out "$name" --work "$w/server" --log-bin mariadb-bin \
    --server-opt=--binlog-format=ROW --server-opt=--binlog-checksum=CRC32 \
    --server-opt=--max-binlog-size=524288 --server-opt=--binlog-row-image=FULL \
    --sql "$w/sql/workload.sql" --cwd "$w/sql" \
    --describe "$(describe "row format, CRC32, FULL row image, max_binlog_size=512K, mixed DML + DDL + XA, restart after 60%" "tools/workload.py ${wl[*]}")"
}

s2() {  # statement format, no checksums, 64 KiB files
  local name=s2-statement-nochecksum w="$WORK/s2"
  local wl=(stmt --seed 1202 --db bank --prefix vis --target-kb 250 --big-csv-rows 6000 --csv-dir .)
  rm -rf "$w"; mkdir -p "$w/sql"
  (cd "$w/sql" && "$PY" "$OLDPWD/tools/workload.py" "${wl[@]}" -o workload.sql)
  "$PY" tools/scenario.py --out "$name" --work "$w/server" --log-bin mariadb-bin \
    --server-opt=--binlog-format=STATEMENT --server-opt=--binlog-checksum=NONE \
    --server-opt=--max-binlog-size=65536 \
    --sql "$w/sql/workload.sql" --cwd "$w/sql" \
    --describe "$(describe "statement format, binlog_checksum=NONE, max_binlog_size=64K, Intvar/Rand/User_var/LOAD DATA/MyISAM" "tools/workload.py ${wl[*]}")"
}

s3() {  # row format, no checksums, every column type, one big transaction
  local name=s3-row-wide-nochecksum w="$WORK/s3"
  local wl=(row --seed 1303 --db wide --prefix w --target-kb 150 --text-max 400 --blob-max 400 --wide --big-trx-kb 250)
  rm -rf "$w"; mkdir -p "$w/sql"
  "$PY" tools/workload.py "${wl[@]}" -o "$w/sql/workload.sql"
  "$PY" tools/scenario.py --out "$name" --work "$w/server" --log-bin mariadb-bin \
    --server-opt=--binlog-format=ROW --server-opt=--binlog-checksum=NONE \
    --server-opt=--max-binlog-size=262144 --server-opt=--binlog-row-image=FULL \
    --sql "$w/sql/workload.sql" --cwd "$w/sql" \
    --describe "$(describe "row format, binlog_checksum=NONE, max_binlog_size=256K, every column type the row decoder supports, a table without primary key, one transaction of ~250 KB of SQL" "tools/workload.py ${wl[*]}")"
}

s4() {  # kill -9 during a write load: last file keeps the in-use flag and ends inside an event
  local name=s4-crash-kill9 w="$WORK/s4"
  local wl=(row --seed 1404 --db shop --prefix crash --target-kb 350)
  local ld=(bulk --seed 1405 --db shop --prefix crash --count 6 --rows 3000 --repeat 20)
  rm -rf "$w"; mkdir -p "$w/sql"
  "$PY" tools/workload.py "${wl[@]}" -o "$w/sql/warmup.sql"
  "$PY" tools/workload.py "${ld[@]}" -o "$w/sql/load.sql"
  "$PY" tools/scenario.py --out "$name" --work "$w/server" --log-bin mariadb-bin \
    --server-opt=--binlog-format=ROW --server-opt=--binlog-checksum=CRC32 \
    --server-opt=--max-binlog-size=262144 \
    --sql "$w/sql/warmup.sql" --cwd "$w/sql" \
    --crash-sql "$w/sql/load.sql" --crash-threshold 150000 --require-torn-tail \
    --describe "$(describe "row format, CRC32, max_binlog_size=256K; warm-up, then kill -9 while multi-MB transactions are being written" "tools/workload.py ${wl[*]}" "tools/workload.py ${ld[*]}")"
}

ALL=(s1 s2 s3 s4)
SEL=("$@"); [ ${#SEL[@]} -eq 0 ] && SEL=("${ALL[@]}")
for s in "${SEL[@]}"; do
  case " ${ALL[*]} " in *" $s "*) ;; *) echo "unknown scenario $s (have: ${ALL[*]})" >&2; exit 2;; esac
  echo "=== $s" >&2
  "$s"
done

# No path of the generating machine may end up in the results.
if grep -rIl -e "$WORK" -e "$(pwd)" --include='*.json' --include='*.index' --include='*.md' . ||
   grep -rla -e "$WORK" -e "$(pwd)" -- */binlogs ; then
  echo "ERROR: a machine path leaked into the files above" >&2; exit 1
fi
"$PY" tools/summary.py . >&2
