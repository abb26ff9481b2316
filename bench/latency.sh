#!/usr/bin/env bash
# What timing every call costs (issue 25, part 1): a warm 4 KiB read of one file with
# `ioscope run`, latency recording on and off (--no-latency), alternating so the machine's
# drift falls on both alike; the median rate of each side and their ratio.
# Usage: bench/latency.sh [SIZE_MIB] [ROUNDS] [BLOCK]; default 64, 21, 4k.
set -euo pipefail
SIZE=${1:-64}
ROUNDS=${2:-21}
BLOCK=${3:-4k}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
work=$(mktemp -d "$here/.bench-latency.XXXXXX")
trap 'rm -rf "$work"' EXIT
f=$work/f
head -c "$((SIZE << 20))" /dev/urandom >"$f"
cat "$f" >/dev/null # warm
rate() { "$io" run -r "$f" "$BLOCK" --json "$@" | grep -o '"bytes_per_second": *[0-9.e+]*' | head -1 | cut -d: -f2 | tr -d ' '; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
: >"$work/on"
: >"$work/off"
for _ in $(seq "$ROUNDS"); do
    rate >>"$work/on"
    rate --no-latency >>"$work/off"
done
on=$(median <"$work/on")
off=$(median <"$work/off")
# The fastest run of each side: on a shared machine, the one least disturbed.
best_on=$(sort -g "$work/on" | tail -1)
best_off=$(sort -g "$work/off" | tail -1)
calls=$(("$SIZE" * 1024 / ${BLOCK%k}))
"$io" run -r "$f" "$BLOCK" | grep -E '^(calls|latency)'
awk -v on="$on" -v off="$off" -v n="$ROUNDS" -v calls="$calls" 'BEGIN {
    printf "warm %s read of %d MiB, %d rounds alternating, median MiB/s\n", "'"$BLOCK"'", '"$SIZE"', n
    printf "  recording off: %9.1f MiB/s\n", off / 1048576
    printf "  recording on:  %9.1f MiB/s\n", on / 1048576
    printf "  cost: %.1f%% (%.0f ns per call)\n", 100 * (off - on) / off, ('"$SIZE"' * 1048576 / on - '"$SIZE"' * 1048576 / off) / calls * 1e9
    printf "  fastest run: off %.1f, on %.1f MiB/s: cost %.1f%%\n", '"$best_off"' / 1048576, '"$best_on"' / 1048576, 100 * ('"$best_off"' - '"$best_on"') / '"$best_off"'
}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
