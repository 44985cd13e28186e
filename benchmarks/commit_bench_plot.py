#!/usr/bin/env python3
"""Turns commit_bench JSON lines into gnuplot data files and a Markdown table.

Usage: commit_bench_plot.py RESULTS.jsonl OUT_DIR

Writes into OUT_DIR:
  tps_<system>.dat      threads, tps, p50_us, p99_us (readers 0, sync_every 1,
                        the smallest payload in the file), one file per system
  readers_binlog.dat    readers, writer tps, reader MB/s (binlog, 64 threads
                        or the largest thread count present)
  table.md              every point as a Markdown table
With several repetitions of a point, the median of each value is used.
"""

import collections
import json
import statistics
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    rows = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    if not rows:
        sys.exit("no results in " + path)

    # Median over repetitions, keeping first-seen order.
    key_names = ("system", "threads", "payload", "readers", "sync_every")
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault(tuple(r[k] for k in key_names), []).append(r)
    points = []
    for key, reps in groups.items():
        p = dict(zip(key_names, key))
        p["version"] = reps[0].get("version", "")
        for k in ("tps", "p50_us", "p99_us", "avg_group", "fsyncs",
                  "commits_per_fsync", "reader_mb_s", "cpu_us_per_commit"):
            p[k] = statistics.median(r[k] for r in reps)
        p["reps"] = len(reps)
        points.append(p)

    payload = min(p["payload"] for p in points)
    systems = []
    for p in points:
        if p["system"] not in systems:
            systems.append(p["system"])
    # commit_bench interleaves the systems; list each system's points
    # together.
    points.sort(key=lambda p: (systems.index(p["system"]), p["payload"],
                               p["sync_every"], p["readers"], p["threads"]))
    for s in systems:
        sel = sorted((p for p in points if p["system"] == s and
                      p["readers"] == 0 and p["sync_every"] == 1 and
                      p["payload"] == payload), key=lambda p: p["threads"])
        if not sel:
            continue
        with open(f"{out}/tps_{s}.dat", "w") as f:
            f.write(f"# {s} {sel[0]['version']} payload={payload}\n")
            f.write("# threads tps p50_us p99_us\n")
            for p in sel:
                f.write(f"{p['threads']} {p['tps']:.1f} {p['p50_us']:.1f} "
                        f"{p['p99_us']:.1f}\n")

    binlog = [p for p in points if p["system"] == "binlog" and
              p["sync_every"] == 1 and p["payload"] == payload]
    if binlog:
        threads = 64 if any(p["threads"] == 64 for p in binlog) else max(
            p["threads"] for p in binlog)
        sel = sorted((p for p in binlog if p["threads"] == threads),
                     key=lambda p: p["readers"])
        with open(f"{out}/readers_binlog.dat", "w") as f:
            f.write(f"# binlog threads={threads} payload={payload}\n")
            f.write("# readers writer_tps reader_mb_s\n")
            for p in sel:
                f.write(f"{p['readers']} {p['tps']:.1f} "
                        f"{p['reader_mb_s']:.2f}\n")

    def num(v, fmt):
        return "n/a" if v < 0 else format(v, fmt)

    with open(f"{out}/table.md", "w") as f:
        f.write("| system | threads | payload | readers | sync_every | tps | p50 us | "
                "p99 us | avg group | fsyncs | commits/fsync | reader MB/s | "
                "CPU us/commit |\n")
        f.write("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
        for p in points:
            name = p["system"] + (f" {p['version'].split()[-1]}"
                                  if p["version"] else "")
            f.write(f"| {name} | {p['threads']} | {p['payload']} | "
                    f"{p['readers']} | {p['sync_every']} | {p['tps']:.0f} | {p['p50_us']:.0f} | "
                    f"{p['p99_us']:.0f} | {num(p['avg_group'], '.2f')} | "
                    f"{num(p['fsyncs'], '.0f')} | "
                    f"{num(p['commits_per_fsync'], '.2f')} | "
                    f"{p['reader_mb_s']:.1f} | "
                    f"{p['cpu_us_per_commit']:.1f} |\n")


if __name__ == "__main__":
    main()
