#!/usr/bin/env bash
# What the caveats cost (issue 27): `fast FILE` (no caveats: the plain checksum) against
# `fast FILE --json` (caveats measured after the run: FIEMAP, statfs, 16 sampled 64 KiB
# blocks through LZ4), alternating so the machine's drift falls on both alike; the median
# wall time of each side and their difference. The timed figure itself is not touched:
# caveats are measured after the clock stops.
# Usage: bench/caveats.sh [SIZE_MIB] [ROUNDS]; default 256, 21.
set -euo pipefail
SIZE=${1:-256}
ROUNDS=${2:-21}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
work=$(mktemp -d "$here/.bench-caveats.XXXXXX")
trap 'rm -rf "$work"' EXIT
f=$work/f
head -c "$((SIZE << 20))" /dev/urandom >"$f"
cat "$f" >/dev/null # warm: both sides read from the page cache
ms() { local t0 t1; t0=$(date +%s%N); "$io" fast "$f" "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
: >"$work/plain"
: >"$work/json"
for _ in $(seq "$ROUNDS"); do
    ms >>"$work/plain"
    ms --json >>"$work/json"
done
plain=$(median <"$work/plain")
json=$(median <"$work/json")
"$io" fast "$f" --json | grep -o '"name": *"[a-z_]*"\|"verdict": *"[a-z_]*"' | paste - - | head -3
awk -v p="$plain" -v j="$json" -v n="$ROUNDS" 'BEGIN {
    printf "warm fast of %d MiB, %d rounds alternating, median wall time of the process\n", '"$SIZE"', n
    printf "  plain (no caveats): %8.2f ms\n", p / 1000
    printf "  --json (caveats):   %8.2f ms\n", j / 1000
    printf "  difference: %.2f ms (JSON output included)\n", (j - p) / 1000
}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
