#!/usr/bin/env python3
"""Turns commit_bench JSON lines into gnuplot data files and a Markdown table.

Usage: commit_bench_plot.py RESULTS.jsonl OUT_DIR

A point is (system, threads, payload, readers, sync_every, prealloc,
reader_wake_us); with several repetitions of a point, tables and plots use
the median of each value and show the spread as min-max.

Writes into OUT_DIR:
  table.md              every point: medians, tps and reader lag with min-max
  tps_<system>.dat      threads, tps median/min/max, p50_us, p99_us (readers
                        0, sync_every 1, the smallest payload, prealloc
                        zerofill or n/a), one file per system
  readers_binlog.dat    readers, writer tps, reader MB/s, reader lag p99 ms
                        (binlog, 64 threads or the largest thread count with
                        readers, reader_wake_us 1000 or the first present)
  wake_binlog.dat       reader_wake_us, writer tps, lag p50 ms, lag p99 ms
                        (binlog, same threads, the most readers)
  prealloc_<system>_<payload>.dat
                        threads, then tps median/min/max for none,
                        fallocate, zerofill (only if the file has several
                        prealloc modes)
"""

import collections
import json
import statistics
import sys

KEY_NAMES = ("system", "threads", "payload", "readers", "sync_every",
             "prealloc", "reader_wake_us")
VALUES = ("tps", "p50_us", "p99_us", "avg_group", "fsyncs",
          "commits_per_fsync", "fsync_us", "reader_mb_s", "cpu_us_per_commit",
          "ctx_switches_per_commit", "invol_ctx_switches_per_commit",
          "reader_lag_p50_us", "reader_lag_p99_us", "reader_lag_max_us",
          "rotations", "files_preallocated", "rotations_from_spare",
          "rotations_waited", "past_prealloc_frac", "loadavg_1m")
MODES = ("none", "fallocate", "zerofill")


def load(path):
    rows = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    if not rows:
        sys.exit("no results in " + path)
    groups = collections.OrderedDict()
    for r in rows:
        r.setdefault("prealloc", "none")  # files from before --prealloc
        r.setdefault("reader_wake_us", -1)
        groups.setdefault(tuple(r[k] for k in KEY_NAMES), []).append(r)
    points = []
    for key, reps in groups.items():
        p = dict(zip(KEY_NAMES, key))
        p["version"] = reps[0].get("version", "")
        for k in VALUES:
            vals = [r[k] for r in reps if k in r]
            if vals:
                p[k] = statistics.median(vals)
                p[k + "_min"] = min(vals)
                p[k + "_max"] = max(vals)
            else:
                p[k] = p[k + "_min"] = p[k + "_max"] = -1
        p["reps"] = len(reps)
        points.append(p)
    return points


def num(v, fmt):
    return "n/a" if v is None or v < 0 else format(v, fmt)


def spread(p, k, fmt):
    if p[k] < 0:
        return "n/a"
    if p["reps"] == 1:
        return format(p[k], fmt)
    return (f"{format(p[k], fmt)} ({format(p[k + '_min'], fmt)}-"
            f"{format(p[k + '_max'], fmt)})")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    points = load(path)

    payload = min(p["payload"] for p in points)
    systems = []
    for p in points:
        if p["system"] not in systems:
            systems.append(p["system"])
    modes = sorted({p["prealloc"] for p in points if p["prealloc"] != "n/a"},
                   key=lambda m: MODES.index(m) if m in MODES else 9)
    # commit_bench interleaves the systems; list each system's points
    # together.
    points.sort(key=lambda p: (systems.index(p["system"]), p["payload"],
                               p["sync_every"], p["readers"],
                               p["reader_wake_us"], p["threads"],
                               MODES.index(p["prealloc"])
                               if p["prealloc"] in MODES else 9))

    main_mode = "zerofill" if "zerofill" in modes else (modes[0] if modes
                                                        else "n/a")
    for s in systems:
        sel = sorted((p for p in points if p["system"] == s and
                      p["readers"] == 0 and p["sync_every"] == 1 and
                      p["payload"] == payload and
                      p["prealloc"] in (main_mode, "n/a")),
                     key=lambda p: p["threads"])
        if not sel:
            continue
        with open(f"{out}/tps_{s}.dat", "w") as f:
            f.write(f"# {s} {sel[0]['version']} payload={payload} "
                    f"prealloc={sel[0]['prealloc']}\n")
            f.write("# threads tps tps_min tps_max p50_us p99_us\n")
            for p in sel:
                f.write(f"{p['threads']} {p['tps']:.1f} {p['tps_min']:.1f} "
                        f"{p['tps_max']:.1f} {p['p50_us']:.1f} "
                        f"{p['p99_us']:.1f}\n")

    binlog = [p for p in points if p["system"] == "binlog" and
              p["sync_every"] == 1 and p["payload"] == payload and
              p["prealloc"] == main_mode]
    with_readers = [p for p in binlog if p["readers"] > 0]
    if with_readers:
        ts = {p["threads"] for p in with_readers}
        threads = 64 if 64 in ts else max(ts)
        wakes = sorted({p["reader_wake_us"] for p in with_readers})
        wake = 1000 if 1000 in wakes else wakes[0]
        sel = sorted((p for p in binlog if p["threads"] == threads and
                      (p["readers"] == 0 or p["reader_wake_us"] == wake)),
                     key=lambda p: p["readers"])
        with open(f"{out}/readers_binlog.dat", "w") as f:
            f.write(f"# binlog threads={threads} payload={payload} "
                    f"reader_wake_us={wake}\n")
            f.write("# readers writer_tps reader_mb_s reader_lag_p99_ms\n")
            for p in sel:
                lag = p["reader_lag_p99_us"]
                f.write(f"{p['readers']} {p['tps']:.1f} "
                        f"{p['reader_mb_s']:.2f} "
                        f"{lag / 1000 if lag >= 0 else 'NaN'}\n")
        most = max(p["readers"] for p in with_readers if p["threads"] == threads)
        sel = sorted((p for p in with_readers if p["threads"] == threads and
                      p["readers"] == most), key=lambda p: p["reader_wake_us"])
        with open(f"{out}/wake_binlog.dat", "w") as f:
            f.write(f"# binlog threads={threads} readers={most} "
                    f"payload={payload}\n")
            f.write("# reader_wake_us writer_tps lag_p50_ms lag_p99_ms\n")
            for p in sel:
                f.write(f"{p['reader_wake_us']} {p['tps']:.1f} "
                        f"{p['reader_lag_p50_us'] / 1000:.3f} "
                        f"{p['reader_lag_p99_us'] / 1000:.3f}\n")

    if len(modes) > 1:
        for s in systems:
            for pl in sorted({p["payload"] for p in points}):
                sel = [p for p in points if p["system"] == s and
                       p["payload"] == pl and p["readers"] == 0 and
                       p["sync_every"] == 1 and p["prealloc"] in MODES]
                if not sel:
                    continue
                by = {(p["threads"], p["prealloc"]): p for p in sel}
                with open(f"{out}/prealloc_{s}_{pl}.dat", "w") as f:
                    f.write(f"# {s} payload={pl}: tps median min max per "
                            f"mode\n# threads " +
                            " ".join(f"{m} {m}_min {m}_max" for m in MODES) +
                            "\n")
                    for t in sorted({p["threads"] for p in sel}):
                        cols = []
                        for m in MODES:
                            p = by.get((t, m))
                            cols += (["NaN"] * 3 if p is None else
                                     [f"{p['tps']:.1f}", f"{p['tps_min']:.1f}",
                                      f"{p['tps_max']:.1f}"])
                        f.write(f"{t} " + " ".join(cols) + "\n")

    with open(f"{out}/table.md", "w") as f:
        f.write("Medians over repetitions; tps, p99 and reader lag p99 with "
                "(min-max).\n\n")
        f.write("| system | threads | payload | readers | wake us | prealloc "
                "| reps | tps | p50 us | p99 us | avg group | commits/fsync | "
                "fsync us | reader MB/s | reader lag p99 us | CPU us/commit | "
                "ctx sw/commit | rotations (spare/waited) | load |\n")
        f.write("|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"
                "--:|--:|--:|---|--:|\n")
        for p in points:
            name = p["system"] + (f" {p['version'].split()[-1]}"
                                  if p["version"] else "")
            rot = ("n/a" if p["rotations"] < 0 else
                   f"{p['rotations']:.0f} ({p['rotations_from_spare']:.0f}/"
                   f"{p['rotations_waited']:.0f})")
            f.write(f"| {name} | {p['threads']} | {p['payload']} | "
                    f"{p['readers']} | {num(p['reader_wake_us'], '.0f')} | "
                    f"{p['prealloc']} | {p['reps']} | "
                    f"{spread(p, 'tps', '.0f')} | {p['p50_us']:.0f} | "
                    f"{spread(p, 'p99_us', '.0f')} | "
                    f"{num(p['avg_group'], '.2f')} | "
                    f"{num(p['commits_per_fsync'], '.2f')} | "
                    f"{num(p['fsync_us'], '.0f')} | "
                    f"{p['reader_mb_s']:.1f} | "
                    f"{spread(p, 'reader_lag_p99_us', '.0f')} | "
                    f"{p['cpu_us_per_commit']:.1f} | "
                    f"{p['ctx_switches_per_commit']:.2f} | {rot} | "
                    f"{num(p['loadavg_1m'], '.1f')} |\n")


if __name__ == "__main__":
    main()
