#!/usr/bin/env bash
# Compares two builds of commit_bench (say, before and after a change) on
# a noisy, shared machine: the two run interleaved, pass after pass, the
# order swapped every pass, and each point's figure is the median of the
# per-pass ratios new/old, with their spread (min..max), so that load that
# comes and goes hits both builds alike.
#
#   benchmarks/compare_builds.sh OLD_BINARY NEW_BINARY PASSES [ARGS...]
#
# ARGS go to both builds (commit_bench flags: --systems=binlog --threads=1,64
# --readers=0,8 ...); NEW_ARGS (environment) go to the new build only, for
# flags the old one lacks or defaults that changed (e.g.
# NEW_ARGS=--dependency=commit_order). Prints one line per point:
#   threads=T readers=R sync_every=S: tps new/old median M (min..max over P
#   passes), old median O, new median N; the same for p99 latency.
# Raw JSON lines are kept in $COMPARE_DIR (default: a temporary directory).
set -euo pipefail
if [[ $# -lt 3 || ! "$3" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY PASSES [ARGS...]" >&2
  exit 2
fi
old=$1
new=$2
passes=$3
shift 3
out=${COMPARE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/compare_builds.XXXXXX")}
mkdir -p "$out"
echo "compare_builds: raw results in $out" >&2
read -r -a new_args <<<"${NEW_ARGS:-}"
for ((p = 1; p <= passes; ++p)); do
  if ((p % 2 == 1)); then order=(old new); else order=(new old); fi
  for which in "${order[@]}"; do
    if [[ $which == old ]]; then
      "$old" --format=jsonl "$@" >"$out/old.$p.jsonl"
    else
      "$new" --format=jsonl "$@" "${new_args[@]}" >"$out/new.$p.jsonl"
    fi
  done
  echo "compare_builds: pass $p of $passes done" >&2
done
python3 - "$out" "$passes" <<'EOF'
import json, statistics, sys
out, passes = sys.argv[1], int(sys.argv[2])
def load(which, p):
    rows = {}
    for line in open(f"{out}/{which}.{p}.jsonl"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["system"], r["threads"], r["readers"], r["sync_every"], r["payload"])
        rows[key] = r
    return rows
ratios, olds, news, lat = {}, {}, {}, {}
for p in range(1, passes + 1):
    o, n = load("old", p), load("new", p)
    for key in o:
        if key not in n or o[key]["tps"] <= 0:
            continue
        ratios.setdefault(key, []).append(n[key]["tps"] / o[key]["tps"])
        olds.setdefault(key, []).append(o[key]["tps"])
        news.setdefault(key, []).append(n[key]["tps"])
        if o[key]["p99_us"] > 0:
            lat.setdefault(key, []).append(n[key]["p99_us"] / o[key]["p99_us"])
for key in sorted(ratios):
    system, threads, readers, sync_every, payload = key
    r = ratios[key]
    line = (f"{system} threads={threads} readers={readers} sync_every={sync_every} "
            f"payload={payload}: tps new/old median {statistics.median(r):.3f} "
            f"({min(r):.3f}..{max(r):.3f} over {len(r)} passes), old median "
            f"{statistics.median(olds[key]):.0f}, new median {statistics.median(news[key]):.0f}")
    if key in lat:
        l = lat[key]
        line += (f"; p99 new/old median {statistics.median(l):.3f} "
                 f"({min(l):.3f}..{max(l):.3f})")
    print(line)
EOF
