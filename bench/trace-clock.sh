#!/usr/bin/env bash
# bench/trace-clock.sh — issue 24, items 1-2: what a clock read costs when `trace` hides the
# vDSO, side by side in one run: bench/clockloop.c (N clock_gettime calls, timing itself)
# plain, under `ioscope trace` (vDSO hidden, the default) and under `ioscope trace --vdso
# keep`, alternating, ROUNDS rounds; the median ns per clock read of each. What the hidden
# vDSO shows (iozone's timed regions) is bench/trace_iozone.sh; bench/trace.sh runs both.
#
#   bench/trace-clock.sh
#   N=200000 ROUNDS=7 DIR=/mnt/x bench/trace-clock.sh
# Exits 2 when it cannot run (no cc).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
ROUNDS=${ROUNDS:-5}
command -v cc >/dev/null || { echo "bench/trace-clock.sh: needs cc" >&2; exit 2; }
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
B=$(realpath "$B")
WORK=${DIR:-.}/.ioscope-bench-clock-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM
cc -O2 -o "$WORK/clockloop" bench/clockloop.c
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >"$WORK/plain"; : >"$WORK/hide"; : >"$WORK/keep"
for _ in $(seq "$ROUNDS"); do
    "$WORK/clockloop" "$N" >>"$WORK/plain"
    "$B" trace --json -- "$WORK/clockloop" "$N" 2>&1 >/dev/null | head -1 >>"$WORK/hide"
    "$B" trace --json --vdso keep -- "$WORK/clockloop" "$N" 2>&1 >/dev/null | head -1 >>"$WORK/keep"
done
echo "clock_gettime, ns per call (median of $ROUNDS, $N calls each; $(nproc) CPUs)"
printf '  %-34s %10s\n' "plain (vDSO)" "$(median <"$WORK/plain")"
printf '  %-34s %10s\n' "ioscope trace --vdso keep" "$(median <"$WORK/keep")"
printf '  %-34s %10s\n' "ioscope trace (vDSO hidden)" "$(median <"$WORK/hide")"
