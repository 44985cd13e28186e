#!/usr/bin/env python3
"""Markdown table of read_bench / lagging_replica_bench JSON lines: median
and range (min-max) over repetitions.

  benchmarks/read_bench_table.py results.jsonl          # read_bench
  benchmarks/read_bench_table.py --lagging results.jsonl
"""
import json
import statistics
import sys
from collections import OrderedDict


def spread(values, fmt):
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return (fmt + " ({}-{})").format(med, fmt.format(min(values)),
                                      fmt.format(max(values)))


def read_bench(rows):
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["cache"], r["mode"], r["case"]), []).append(r)
    print("| cache | mode | case | buffer KiB | prefetch | MB/s median (min-max) "
          "| MB per CPU-s | syscalls/GiB (reads + advises) | events/s median | "
          "prefetch waits |")
    print("|---|---|---|--:|---|--:|--:|--:|--:|--:|")
    for (cache, mode, case), rs in groups.items():
        r0 = rs[0]
        ev = (spread([r["events_s"] / 1e6 for r in rs], "{:.2f}") + " M"
              if mode == "reader" else "-")
        waits = (str(int(statistics.median([r["prefetch_waits"] for r in rs])))
                 if r0["prefetch"] else "-")
        print("| {} | {} | {} | {} | {} | {} | {:.0f} | {:.0f} ({:.0f} + {:.0f}) | {} | {} |".format(
            cache, mode, case, r0["buffer_kib"],
            "yes" if r0["prefetch"] else "no",
            spread([r["mb_s"] for r in rs], "{:.0f}"),
            statistics.median([r["mb_per_cpu_s"] for r in rs]),
            statistics.median([r["syscalls_per_gib"] for r in rs]),
            statistics.median([r["reads_per_gib"] for r in rs]),
            statistics.median([r["advises_per_gib"] for r in rs]),
            ev, waits))


def lagging(rows):
    print("| phase | config | rep | writer tps | tps ratio vs baselines around it "
          "| catch-up s (median / max) | reader MB/s | lag GiB |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    phases = [r for r in rows if "phase" in r]
    summ = {(r["config"], r["rep"]): r for r in rows if r.get("summary")}
    for r in phases:
        s = summ.get((r["config"], r["rep"])) if r["phase"] == "lagging" else None
        print("| {} | {} | {} | {:.0f} | {} | {} | {:.0f} | {:.2f} |".format(
            r["phase"], r["config"], r["rep"], r["tps"],
            "{:.2f}".format(s["tps_ratio"]) if s else "-",
            "{:.1f} / {:.1f}".format(r["catchup_s_median"], r["catchup_s_max"])
            if r["phase"] == "lagging" else "-",
            r["reader_mb_s"], r["lag_bytes"] / 2**30))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = [json.loads(l) for a in args for l in open(a) if l.startswith("{")]
    if "--lagging" in sys.argv:
        lagging(rows)
    else:
        read_bench(rows)


if __name__ == "__main__":
    main()
