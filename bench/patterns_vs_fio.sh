#!/usr/bin/env bash
# bench/patterns_vs_fio.sh — issue 10's comparison (until issue 24 the second half of
# bench/trace.sh, whose tracer-overhead half is now bench/trace_overhead.sh):
# `ioscope patterns` against fio running the same pattern (same directory, file size,
# record size, psync engine, buffered, cold start: fio invalidates the file's cache
# before a job, patterns evicts it): sequential write over the existing file (fio's
# write of a file it laid out before, patterns' rewrite; fsync at the end for both:
# fio end_fsync=1, whose time fio's runtime includes; the file left cached for both:
# fio invalidate=0, as patterns does not evict before writes), sequential read, random read,
# random write, mixed 50/50. Each tool writes its file just before (the first read of a
# file just written is slow on a VM while the host writes it back) and runs the
# pattern 3 times, its median per round; rates by each tool's own figure; the table
# gives medians of alternating rounds and their spread.
#
#   bench/patterns_vs_fio.sh                     in a scratch directory under the current one
#   DIR=/mnt/x SIZE=256m RECORD=4k ROUNDS=5 bench/patterns_vs_fio.sh
#   IOSCOPE=/path/to/ioscope bench/patterns_vs_fio.sh
# Exits 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-128m}
RECORD=${RECORD:-64k}
ROUNDS=${ROUNDS:-5}
for tool in fio python3; do
    command -v "$tool" >/dev/null || { echo "bench/patterns_vs_fio.sh: needs $tool" >&2; exit 2; }
done
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
WORK=${DIR:-.}/.ioscope-bench-fio-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "== patterns against fio: $SIZE file, $RECORD records, cold start, $ROUNDS rounds"
FIO=(fio --output-format=json --ioengine=psync --bs="$RECORD" --size="$SIZE" --direct=0)
declare -A FIO_RW=([rewrite]="--rw=write --end_fsync=1 --invalidate=0" [read]="--rw=read" [random_read]="--rw=randread --norandommap=0"
    [random_write]="--rw=randwrite --end_fsync=1 --invalidate=0" [mixed]="--rw=randrw --rwmixread=50 --end_fsync=1")
declare -A OURS=([rewrite]=rewrite [read]=read [random_read]=random-read [random_write]=random-write [mixed]=mixed)
ORDER=(rewrite read random_read random_write mixed)
FF=$WORK/fio.dat
"${FIO[@]}" --name=make --filename="$FF" --rw=write >/dev/null
ours() { # test: that test alone, median of 3 runs (patterns writes its file first, untimed;
    # the first read of a file just written can be slow here while the host writes it back)
    "$B" patterns "$WORK" --size "$SIZE" --record "$RECORD" --runs 3 --cache cold --json \
        --tests "${OURS[$1]}" >"$WORK/p.json"
    python3 - "$WORK/p.json" "$WORK" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
open(f"{sys.argv[2]}/ours.{r['test']}", "a").write(f"{r['bytes_per_second']['median']}\n")
if r.get("without_fsync"):
    open(f"{sys.argv[2]}/nofsync.{r['test']}", "a").write(f"{r['without_fsync']['median']}\n")
EOF
}
theirs() { # test: on a file laid out and synced just before, as patterns writes its own;
    # the median of 3 runs, as patterns gives
    "${FIO[@]}" --name=layout --filename="$FF" --rw=write --end_fsync=1 >/dev/null
    : >"$WORK/f3"
    for _ in 1 2 3; do
        # shellcheck disable=SC2086
        "${FIO[@]}" --name="$1" --filename="$FF" ${FIO_RW[$1]} >"$WORK/f.json"
        python3 - "$WORK/f.json" >>"$WORK/f3" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
b = j["read"]["io_bytes"] + j["write"]["io_bytes"]
ms = max(j["read"]["runtime"], j["write"]["runtime"])
print(b / (ms / 1000) if ms else 0)
EOF
    done
    median <"$WORK/f3" >>"$WORK/fio.$1"
}
# Each pattern: ioscope and fio back to back, the first of the two alternating by round.
for ((i = 0; i < ROUNDS; i++)); do
    for t in "${ORDER[@]}"; do
        if ((i % 2)); then theirs "$t"; ours "$t"; else ours "$t"; theirs "$t"; fi
    done
done
span() { sort -g "$1" | awk '{a[NR]=$1/1048576} END {printf "%.0f..%.0f", a[1], a[NR]}'; }
printf '%-14s %10s %13s %10s %13s %7s %14s\n' test "ioscope" "(min..max)" "fio" "(min..max)" ratio "w/o fsync"
for t in "${ORDER[@]}"; do
    o=$(median <"$WORK/ours.$t"); f=$(median <"$WORK/fio.$t")
    n=$( [ -s "$WORK/nofsync.$t" ] && median <"$WORK/nofsync.$t" || echo "")
    python3 -c 'import sys
o, f = float(sys.argv[2]), float(sys.argv[3]); n = sys.argv[4]
m = 1 << 20
print(f"{sys.argv[1]:<14} {o/m:10.1f} {sys.argv[5]:>13} {f/m:10.1f} {sys.argv[6]:>13} {o/f if f else 0:7.2f} {(float(n)/m if n else 0):14.1f}")' \
        "$t" "$o" "$f" "$n" "($(span "$WORK/ours.$t"))" "($(span "$WORK/fio.$t"))"
done
echo "MiB/s, medians of $ROUNDS rounds; w/o fsync: ioscope's figure without the final fsync (iozone's default)."
