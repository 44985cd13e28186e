#!/usr/bin/env python3
"""Prints the regression-guard table of benchmarks/README.md ("Regression
guards") from the raw JSON lines of one guard run.

Usage: benchmarks/results/guards.py [FILE]
(default: round3-guards.jsonl, each line with a "guard" key: one-thread,
threads or rotation; the commands are in the README section)

Passes are paired by "rep"; ratios are per pass, then median (min-max).
"""

import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def by_rep(rows, **match):
    return {r["rep"]: r for r in rows if all(r.get(k) == v for k, v in match.items())}


def med_range(v):
    if not v:
        return "n/a"
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))


def ratios(rows, key, num, den, key_den=None):
    a, b = by_rep(rows, **num), by_rep(rows, **den)
    kd = key_den or key
    return [a[p][key] / b[p][kd] for p in sorted(a) if p in b and b[p][kd]]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rows = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "round3-guards.jsonl"))
    one, threads, rotation = ([r for r in rows if r.get("guard") == g]
                              for g in ("one-thread", "threads", "rotation"))
    print("| guard | target | per-pass ratio, median (min-max) | tps medians |")
    print("|---|--:|--:|---|")
    for payload in (256, 4096):
        b = dict(system="binlog", payload=payload)
        n = dict(system="naive", payload=payload)
        g = dict(system="naive-group", payload=payload)
        tps = " / ".join("%.0f" % statistics.median(r["tps"] for r in by_rep(one, **m).values())
                         for m in (b, n, g))
        print("| 1 thread, %d B: binlog / naive | >= 0.95 | %s | %s (binlog / naive / ng) |"
              % (payload, med_range(ratios(one, "tps", b, n)), tps))
        print("| 1 thread, %d B: binlog / naive-group | >= 1.0 | %s | |"
              % (payload, med_range(ratios(one, "tps", b, g))))
    for t in (64, 256):
        b = dict(system="binlog", threads=t)
        g = dict(system="naive-group", threads=t)
        tps = " / ".join("%.0f" % statistics.median(r["tps"] for r in by_rep(threads, **m).values())
                         for m in (b, g))
        print("| %d threads, 256 B: binlog / naive-group | >= 1.0 | %s | %s (binlog / ng) |"
              % (t, med_range(ratios(threads, "tps", b, g)), tps))
    for t in (1, 64):
        m = dict(system="binlog", threads=t)
        rows = by_rep(rotation, **m)
        # A pass without a rotation in its window (new_file_p50_us -1) has
        # no first commit in a new file to compare.
        rows = {k: r for k, r in rows.items() if r["new_file_p50_us"] >= 0}
        v = [r["new_file_p50_us"] / r["p99_us"] for r in rows.values() if r["p99_us"]]
        print("| first commit in a new file, %d thread(s): new_file_p50 / p99 | <= 2.0 | %s | p50 %s us, p99 %s us |"
              % (t, med_range(v) + " n=%d" % len(v),
                 "%.0f" % statistics.median(r["new_file_p50_us"] for r in rows.values()),
                 "%.0f" % statistics.median(r["p99_us"] for r in rows.values())))


if __name__ == "__main__":
    main()
