#!/usr/bin/env bash
# How `fast` and its engines scale with threads, warm and cold, on files written the
# ordinary way (head -c from /dev/urandom: small pieces) and by ioscope (4 MiB pieces).
#
#   bench/scaling.sh [SIZE_GIB]      default 8; needs ~2 x SIZE free in the current directory
#   RUNS=3 bench/scaling.sh
#
# Every figure is the median of RUNS whole-process runs (start-up included), alternating
# contenders within each round. Cold runs evict the file first (fadvise through dd
# iflag=nocache; no root needed). Prints a Markdown table per file.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
GIB=${1:-8}
B=${IOSCOPE:-$PWD/target/release/ioscope}
[ -x "$B" ] || cargo build --release --quiet
CORES=$(nproc)
TMP=$(mktemp -d -p "$PWD" .ioscope-scaling-XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

wall() { local t0 t1; t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; t1=$EPOCHREALTIME; awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
evict() { dd if="$1" iflag=nocache count=0 status=none; }
rate() { awk -v b="$SIZE" -v s="$1" 'BEGIN {printf "%.2f", b/s/2^30}'; }

threads=(1 2 4 8 16 32)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $CORES cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r), $(df -T . | awk 'NR==2 {print $2}')"

head -c "${GIB}G" /dev/urandom > "$TMP/ordinary"
"$B" run "$TMP/shaped" -w 4m $((GIB * 256)) >/dev/null
for f in ordinary shaped; do
    FILE=$TMP/$f
    SIZE=$(stat -c %s "$FILE")
    echo
    echo "## $f file ($GIB GiB, $([ $f = ordinary ] && echo 'head -c from /dev/urandom' || echo 'ioscope run -w 4m')), GiB/s, median of $RUNS"
    # Warm rows first, with no eviction between them: a cold buffered read refills the page
    # cache through readahead, in larger folios than the writer left, and would change
    # what the warm rows measure.
    echo
    echo "| warm reader | GiB/s |"
    echo "|---|---|"
    cat "$FILE" >/dev/null
    warm_row() { # label, command...
        local label=$1; shift
        local w=()
        for _ in $(seq "$RUNS"); do w+=("$(wall "$@")"); done
        printf '| %s | %s |\n' "$label" "$(rate "$(printf '%s\n' "${w[@]}" | median)")"
    }
    cold_row() { # label, command...
        local label=$1; shift
        local c=()
        for _ in $(seq "$RUNS"); do evict "$FILE"; c+=("$(wall "$@")"); done
        printf '| %s | %s |\n' "$label" "$(rate "$(printf '%s\n' "${c[@]}" | median)")"
    }
    chosen() { "$B" fast "$FILE" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["engine"], d["threads"], "threads")'; }
    warm_row "fast (auto: $(chosen))" "$B" fast "$FILE"
    for e in adaptive pread mmap; do
        for t in "${threads[@]}"; do
            warm_row "fast --engine $e --threads $t" "$B" fast "$FILE" --engine "$e" --threads "$t"
        done
    done
    warm_row "cat" cat "$FILE"
    warm_row "dd bs=1M" dd if="$FILE" of=/dev/null bs=1M
    echo
    echo "| cold reader | GiB/s |"
    echo "|---|---|"
    evict "$FILE"
    cold_row "fast (auto: $(chosen))" "$B" fast "$FILE"
    for t in "${threads[@]}"; do
        cold_row "fast --engine direct --threads $t" "$B" fast "$FILE" --engine direct --threads "$t"
    done
    cold_row "fast --engine uring (defaults)" "$B" fast "$FILE" --engine uring
    cold_row "fast --engine pread --threads 16" "$B" fast "$FILE" --engine pread --threads 16
    cold_row "cat" cat "$FILE"
    cold_row "dd bs=1M" dd if="$FILE" of=/dev/null bs=1M
done
