#!/usr/bin/env python3
"""Regenerates the tables of benchmarks/README.md "Round two (issue 17)"
from the raw JSON lines next to this script.

Usage: benchmarks/results/round_two.py [RESULTS_DIR]

One raw file, round2.jsonl; each line's "table" key names the table it
belongs to (the command that wrote each is in the README, above its
table):

  first-file      commit_bench, 1 thread, --zero_ahead=0,8388608,
                               binlog vs naive vs naive-group
  prealloc        commit_bench, 1 thread, --prealloc=none,zerofill
  threads         commit_bench, 64/256 threads, binlog vs
                               naive-group, fresh log
  reader-api      commit_bench, 64 threads, 8/64 readers,
                               --reader_api=decoded,batch
  target-tps      commit_bench --target_tps=50000, 64 readers
  lagging         lagging_replica_bench, --reader_api and
                               --reader_mb_s
  rotation        commit_bench with small max_file_size and
                               --background_rotation=on,off: new_file_p50_us
                               against p99_us (same run, per pass)

Passes are paired by their "rep" (commit_bench) or "pass" key; ratios are
computed per pass, then the median and the range (min-max) are printed.
"""

import collections
import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pass_of(row):
    return row.get("pass", row.get("rep", 0))


def med_range(values, digits=2):
    if not values:
        return "n/a"
    fmt = "%%.%df" % digits
    return "%s (%s-%s)" % (fmt % statistics.median(values), fmt % min(values),
                           fmt % max(values))


def by_pass(rows, **match):
    out = {}
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            out[pass_of(r)] = r
    return out


def ratios(rows, key, num, den):
    a, b = by_pass(rows, **num), by_pass(rows, **den)
    return [a[p][key] / b[p][key] for p in sorted(a) if p in b and b[p][key]]


def median_of(rows, key, **match):
    v = [r[key] for r in by_pass(rows, **match).values()]
    return statistics.median(v) if v else float("nan")


def first_file(rows):
    print("| payload | on/off | on/naive | on/naive-group | tps off / on / naive / ng |")
    print("|--:|--:|--:|--:|---|")
    for payload in sorted({r["payload"] for r in rows}):
        on = dict(system="binlog", payload=payload, zero_ahead=8388608)
        off = dict(system="binlog", payload=payload, zero_ahead=0)
        naive = dict(system="naive", payload=payload)
        ng = dict(system="naive-group", payload=payload)
        tps = " / ".join("%.0f" % median_of(rows, "tps", **m) for m in (off, on, naive, ng))
        print("| %d | %s | %s | %s | %s |" % (
            payload, med_range(ratios(rows, "tps", on, off)),
            med_range(ratios(rows, "tps", on, naive)),
            med_range(ratios(rows, "tps", on, ng)), tps))


def prealloc(rows):
    print("| payload | zerofill/none | tps none / zerofill |")
    print("|--:|--:|---|")
    for payload in sorted({r["payload"] for r in rows}):
        z = dict(payload=payload, prealloc="zerofill")
        n = dict(payload=payload, prealloc="none")
        print("| %d | %s | %.0f / %.0f |" % (
            payload, med_range(ratios(rows, "tps", z, n)),
            median_of(rows, "tps", **n), median_of(rows, "tps", **z)))


def threads(rows):
    print("| threads | binlog/naive-group | tps binlog / naive-group | cpu_us_per_commit binlog / ng |")
    print("|--:|--:|---|---|")
    for t in sorted({r["threads"] for r in rows}):
        b = dict(system="binlog", threads=t)
        g = dict(system="naive-group", threads=t)
        print("| %d | %s | %.0f / %.0f | %.1f / %.1f |" % (
            t, med_range(ratios(rows, "tps", b, g)),
            median_of(rows, "tps", **b), median_of(rows, "tps", **g),
            median_of(rows, "cpu_us_per_commit", **b),
            median_of(rows, "cpu_us_per_commit", **g)))


def reader_rows(rows):
    """Rows with readers, grouped by (api, readers, wake window, wake-ups
    per second; 0: a fixed window, what runs before that option had)."""
    groups = collections.defaultdict(list)
    alone = [r for r in rows if r.get("readers", 0) == 0]
    for r in rows:
        if r.get("readers", 0) > 0:
            key = (r.get("reader_api"), r["readers"], r.get("reader_wake_us"),
                   r.get("reader_wakeups_per_s", 0))
            groups[key].append(r)
    return alone, groups


def reader_api(rows):
    alone, groups = reader_rows(rows)
    print("| api | readers | wake-ups/s | reader_cpu_ns_per_txn | writer tps / alone | reader lag p99 ms |")
    print("|---|--:|--:|--:|--:|--:|")
    base = {pass_of(r): r["tps"] for r in alone}
    for (api, readers, wake, rate), rs in sorted(groups.items(), key=str):
        rel = [r["tps"] / base[pass_of(r)] for r in rs if pass_of(r) in base]
        print("| %s | %d | %s | %s | %s | %s |" % (
            api, readers, rate or "fixed",
            med_range([r["reader_cpu_ns_per_txn"] for r in rs], 0),
            med_range(rel), med_range([r["reader_lag_p99_us"] / 1000 for r in rs], 1)))


def target_tps(rows):
    alone, groups = reader_rows(rows)
    offered = rows[0].get("target_tps", 0) if rows else 0
    print("| api | readers | reader_wake_us | wake-ups/s | writer tps (offered %.0f) | reader_cpu_ns_per_txn | reader lag p99 ms |" % offered)
    print("|---|--:|--:|--:|--:|--:|--:|")
    if alone:
        print("| - | 0 | - | - | %s | - | - |" % med_range([r["tps"] for r in alone], 0))
    for (api, readers, wake, rate), rs in sorted(groups.items(), key=str):
        print("| %s | %d | %s | %s | %s | %s | %s |" % (
            api, readers, wake, rate or "fixed", med_range([r["tps"] for r in rs], 0),
            med_range([r["reader_cpu_ns_per_txn"] for r in rs], 0),
            med_range([r["reader_lag_p99_us"] / 1000 for r in rs], 1)))


def lagging(rows):
    """Each lagging phase against the mean of the baselines around it (in
    file order), by (reader_api, offered rate)."""
    print("| reader_api | offered MB/s | writer tps / baseline | read MB/s (all readers) | catch-up s (median) |")
    print("|---|--:|--:|--:|--:|")
    rows = [r for r in rows if "phase" in r]  # not the summary lines
    for i, r in enumerate(rows):
        if r["phase"] != "lagging":
            continue
        around = [rows[j]["tps"] for j in (i - 1, i + 1)
                  if 0 <= j < len(rows) and rows[j]["phase"] == "baseline"]
        ratio = r["tps"] / statistics.mean(around) if around else float("nan")
        print("| %s | %s | %.2f | %.0f | %.1f |" % (
            r.get("reader_api", "decoded"),
            "%.0f" % r["reader_mb_s_offered"] if r.get("reader_mb_s_offered") else "unpaced",
            ratio, r["reader_mb_s"], r["catchup_s_median"]))


def rotation(rows):
    print("| background_rotation | threads | new_file_p50_us / p99_us | new_file_p50_us | p99_us | tps |")
    print("|---|--:|--:|--:|--:|--:|")
    keys = sorted({(r.get("background_rotation", "off"), r["threads"]) for r in rows},
                  key=lambda k: (k[0] != "on", k[1]))
    for b, t in keys:
        rs = [r for r in rows if r.get("background_rotation", "off") == b and
              r["threads"] == t and r.get("new_file_p50_us", -1) > 0]
        print("| %s | %d | %s | %s | %s | %s |" % (
            b, t, med_range([r["new_file_p50_us"] / r["p99_us"] for r in rs]),
            med_range([r["new_file_p50_us"] for r in rs], 0),
            med_range([r["p99_us"] for r in rs], 0),
            med_range([r["tps"] for r in rs], 0)))


TABLES = [
    ("first-file", "First file after Open (zero_ahead on/off), 1 thread", first_file),
    ("prealloc", "Preallocation gain, 1 thread", prealloc),
    ("threads", "Many committers, fresh log", threads),
    ("reader-api", "Tailing readers, 64 committers", reader_api),
    ("target-tps", "Offered 50k tps with 64 readers", target_tps),
    ("lagging", "8 lagging replicas", lagging),
    ("rotation", "First commit in a new file", rotation),
]


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(d, "round2.jsonl")
    if not os.path.exists(path):
        print("%s: missing" % path, file=sys.stderr)
        return 1
    rows = load(path)
    missing = 0
    for name, title, fn in TABLES:
        table = [r for r in rows if r.get("table") == name]
        if not table:
            print("%s: no lines of table %s" % (path, name), file=sys.stderr)
            missing += 1
            continue
        print("### %s (`results/round2.jsonl`, \"table\": \"%s\")\n" % (title, name))
        fn(table)
        print()
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
