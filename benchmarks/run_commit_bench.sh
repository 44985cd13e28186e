#!/usr/bin/env bash
# Runs the standard commit_bench matrices and renders their plots.
#
#   benchmarks/run_commit_bench.sh [extra commit_bench flags, for both runs]
#   benchmarks/run_commit_bench.sh --plot-only GROUP.jsonl [PREALLOC.jsonl]
#
# Two runs, each one commit_bench invocation (its systems side by side):
#
# 1. Group commit and readers (issue 3): binlog, rocksdb, leveldb, naive,
#    naive-group x threads 1,4,16,64,256 x payload 256, sync every group,
#    readers 0; binlog also with 1, 8 and 64 tailing readers at 64 threads,
#    each with reader_wake_us 1000, 2000 and 0. Files prepared as the library
#    default (--prealloc=zerofill), 1 GiB max_file_size. 2 s per point after
#    0.2 s of warm-up.
# 2. Preallocation (issue 4): binlog, naive-group x prealloc none, fallocate,
#    zerofill x threads 1,16,64 x payload 256,4096, readers 0,
#    max_file_size 64 MiB (rotations during the run), --prefill (the binlog's
#    measured commits go to files from the preallocator), 4 s per point
#    after 0.5 s of warm-up.
#
# Data goes to a fresh directory under /tmp unless --dir is given.
# COMMIT_BENCH=PATH runs that binary instead of building
# //benchmarks:commit_bench (for example one built from a clean export).
#
# Writes benchmarks/results/ (TAG = <date>-<short commit>):
#   TAG.jsonl, TAG.log, TAG.md                   run 1: points, environment
#                                                and progress, table
#   TAG-prealloc.jsonl, .log, .md                run 2
#   commit_tps_vs_threads.png    tps vs committer threads per system (run 1)
#   binlog_tps_vs_readers.png    binlog writer tps and reader lag p99 vs
#                                readers at 64 committer threads (run 1)
#   binlog_reader_wake.png       the same with 64 readers vs
#                                reader_wake_us (run 1)
#   prealloc_tps.png             tps per prealloc mode vs threads, 256 B and
#                                4 KiB (run 2)
# Tables use medians over repetitions with min-max; use --repetitions=3.
# Needs bazel, python3 and gnuplot (Debian: gnuplot-nox).
set -euo pipefail

cd "$(dirname "$0")/.."
results=benchmarks/results
mkdir -p "$results"

if [[ "${1:-}" == "--plot-only" ]]; then
  group_jsonl=${2:?usage: $0 --plot-only GROUP.jsonl [PREALLOC.jsonl]}
  prealloc_jsonl=${3:-}
  tag=$(basename "$group_jsonl" .jsonl)
else
  tag=$(date +%F)-$(git rev-parse --short HEAD)
  group_jsonl=$results/$tag.jsonl
  prealloc_jsonl=$results/$tag-prealloc.jsonl
  bench=${COMMIT_BENCH:-}
  if [[ -z "$bench" ]]; then
    bazel build //benchmarks:commit_bench
    bench=bazel-bin/benchmarks/commit_bench
  fi
  { echo "uptime before: $(uptime)"; } > "$results/$tag.log"
  "$bench" \
    --systems=binlog,rocksdb,leveldb,naive,naive-group \
    --threads=1,4,16,64,256 --payload=256 --sync_every=1 \
    --readers=0,1,8,64 --readers_at_threads=64 --reader_wake_us=1000,2000,0 \
    --duration_s=2 --format=jsonl "$@" \
    > "$group_jsonl" 2> >(tee -a "$results/$tag.log" >&2)
  echo "uptime after: $(uptime)" >> "$results/$tag.log"
  { echo "uptime before: $(uptime)"; } > "$results/$tag-prealloc.log"
  "$bench" \
    --systems=binlog,naive-group --prealloc=none,fallocate,zerofill \
    --threads=1,16,64 --payload=256,4096 --sync_every=1 --readers=0 \
    --max_file_size=67108864 --prefill --warmup_s=0.5 --duration_s=4 \
    --format=jsonl "$@" \
    > "$prealloc_jsonl" 2> >(tee -a "$results/$tag-prealloc.log" >&2)
  echo "uptime after: $(uptime)" >> "$results/$tag-prealloc.log"
fi

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
mkdir -p "$data/group" "$data/prealloc"
python3 benchmarks/commit_bench_plot.py "$group_jsonl" "$data/group"
cp "$data/group/table.md" "$results/$tag.md"
if [[ -n "$prealloc_jsonl" ]]; then
  python3 benchmarks/commit_bench_plot.py "$prealloc_jsonl" "$data/prealloc"
  cp "$data/prealloc/table.md" "$results/$(basename "$prealloc_jsonl" .jsonl).md"
fi

gnuplot <<GNUPLOT
set terminal pngcairo size 900,560 font "sans,10"
set termoption noenhanced
set grid
set key top left

set output "$results/commit_tps_vs_threads.png"
set title "commit_bench $tag: commits/s vs threads (256 B, fdatasync per group; median, bars min-max)"
set xlabel "committer threads"
set ylabel "commits/s"
set logscale x 2
set logscale y 10
set xrange [0.8:320]
set xtics (1, 4, 16, 64, 256)
files = system("ls $data/group/tps_*.dat")
name(f) = f[strstrt(f, "tps_") + 4:strlen(f) - 4]
plot for [f in files] f using 1:2:3:4 with yerrorlines lw 2 pt 7 title name(f)

unset logscale x
unset logscale y
set xrange [*:*]
set xtics autofreq
set output "$results/binlog_tps_vs_readers.png"
set title "commit_bench $tag: binlog at 64 committer threads vs tailing readers (reader_wake_us 1000)"
set xlabel "tailing readers"
set ylabel "writer commits/s"
set y2label "reader lag (ms, log scale)"
set ytics nomirror
set y2tics
set yrange [0:*]
set logscale y2 10
set y2range [0.01:*]
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set boxwidth 0.9
plot "$data/group/readers_binlog.dat" using 2:xtic(1) title "writer commits/s" axes x1y1, \
     "" using 0:4 with linespoints lw 2 pt 7 title "reader lag p99 (ms)" axes x1y2

set output "$results/binlog_reader_wake.png"
set title "commit_bench $tag: binlog, 64 committers, 64 readers vs Options::reader_wake_coalesce_us"
set xlabel "reader_wake_coalesce_us"
plot "$data/group/wake_binlog.dat" using 2:xtic(1) title "writer commits/s" axes x1y1, \
     "" using 0:4 with linespoints lw 2 pt 7 title "reader lag p99 (ms)" axes x1y2, \
     "" using 0:3 with linespoints lw 2 pt 5 title "reader lag p50 (ms)" axes x1y2
GNUPLOT

if [[ -n "$prealloc_jsonl" ]] && ls "$data"/prealloc/prealloc_*.dat > /dev/null 2>&1; then
  gnuplot <<GNUPLOT
set terminal pngcairo size 1200,520 font "sans,10"
set termoption noenhanced
set grid
set key top left
set output "$results/prealloc_tps.png"
set multiplot layout 1,2 title "commit_bench $(basename "$prealloc_jsonl" .jsonl): commits/s by file preparation (max_file_size 64 MiB, fdatasync per group; median, bars min-max)"
set xlabel "committer threads"
set ylabel "commits/s"
set logscale x 2
set logscale y 10
set xrange [0.8:80]
set xtics (1, 16, 64)
f(sys, pl) = sprintf("$data/prealloc/prealloc_%s_%s.dat", sys, pl)
do for [pl in "256 4096"] {
  set title sprintf("payload %s B", pl)
  plot for [i=0:2] f("binlog", pl) \
         using 1:(column(2+3*i)):(column(3+3*i)):(column(4+3*i)) \
         with yerrorlines lw 2 pt 7 dt 1 lc i+1 \
         title "binlog ".word("none fallocate zerofill", i+1), \
       for [i=0:2] f("naive-group", pl) \
         using 1:(column(2+3*i)):(column(3+3*i)):(column(4+3*i)) \
         with yerrorlines lw 2 pt 4 dt 2 lc i+1 \
         title "naive-group ".word("none fallocate zerofill", i+1)
}
unset multiplot
GNUPLOT
fi

echo "wrote $results/$tag*.md and PNGs in $results/" >&2
