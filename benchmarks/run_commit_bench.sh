#!/usr/bin/env bash
# Runs the standard commit_bench matrix and renders its plots.
#
#   benchmarks/run_commit_bench.sh [extra commit_bench flags]
#   benchmarks/run_commit_bench.sh --plot-only RESULTS.jsonl
#
# Matrix: binlog, rocksdb, leveldb, naive, naive-group x threads
# 1,4,16,64,256 x payload 256, sync every group; readers 0 for all, and 1, 8
# and 64 tailing readers for binlog; 2 s per point after 0.2 s of warm-up.
# Data goes to a fresh directory under /tmp unless --dir is given.
#
# Writes benchmarks/results/:
#   <date>.jsonl                 one JSON line per point
#   <date>.log                   environment and progress (stderr)
#   <date>.md                    the points as a Markdown table
#   commit_tps_vs_threads.png    tps vs committer threads per system (log x,
#                                log y)
#   binlog_tps_vs_readers.png    binlog writer tps and reader MB/s vs readers
#                                at 64 committer threads
# Needs bazel, python3 and gnuplot (Debian: gnuplot-nox).
set -euo pipefail

cd "$(dirname "$0")/.."
results=benchmarks/results
mkdir -p "$results"

if [[ "${1:-}" == "--plot-only" ]]; then
  jsonl=${2:?usage: $0 --plot-only RESULTS.jsonl}
  day=$(basename "$jsonl" .jsonl)
else
  day=$(date +%F)
  jsonl=$results/$day.jsonl
  bazel build //benchmarks:commit_bench
  bazel-bin/benchmarks/commit_bench \
    --systems=binlog,rocksdb,leveldb,naive,naive-group \
    --threads=1,4,16,64,256 --payload=256 --sync_every=1 \
    --readers=0,1,8,64 --duration_s=2 --format=jsonl "$@" \
    > "$jsonl" 2> >(tee "$results/$day.log" >&2)
fi

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 benchmarks/commit_bench_plot.py "$jsonl" "$data"
cp "$data/table.md" "$results/$day.md"

gnuplot <<GNUPLOT
set terminal pngcairo size 900,560 font "sans,10"
set termoption noenhanced
set grid
set key top left

set output "$results/commit_tps_vs_threads.png"
set title "commit_bench $day: durable commits/s vs committer threads (payload 256 B, fdatasync per group)"
set xlabel "committer threads"
set ylabel "commits/s"
set logscale x 2
set logscale y 10
set xrange [0.8:320]
set xtics (1, 4, 16, 64, 256)
files = system("ls $data/tps_*.dat")
name(f) = f[strstrt(f, "tps_") + 4:strlen(f) - 4]
plot for [f in files] f using 1:2 with linespoints lw 2 pt 7 title name(f)

unset logscale x
unset logscale y
set xrange [*:*]
set xtics autofreq
set output "$results/binlog_tps_vs_readers.png"
set title "commit_bench $day: binlog at 64 committer threads vs tailing readers"
set xlabel "tailing readers"
set ylabel "writer commits/s"
set y2label "reader MB/s (all readers)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set boxwidth 0.9
plot "$data/readers_binlog.dat" using 2:xtic(1) title "writer commits/s" axes x1y1, \
     "" using 3 title "reader MB/s" axes x1y2
GNUPLOT

echo "wrote $results/$day.md and PNGs in $results/ from $jsonl" >&2
