#!/usr/bin/env bash
# `ioscope disk --preset sync-methods` beside pg_test_fsync on the same directory (issue 41,
# item 4), alternating (pg_test_fsync first in odd rounds, ioscope first in even ones), 8 KiB
# writes, the same seconds per test. Prints per method and writes per sync both tools' ops/s
# (median of the rounds) and their ratio. The methods both run: fdatasync, fsync, and
# pg_test_fsync's open_datasync, which opens O_DSYNC with O_DIRECT where the platform has it
# (as ioscope's O_DIRECT|O_DSYNC row); its open_sync also adds O_DIRECT, which ioscope's
# O_SYNC row does not, so that pair is shown but not a like-for-like comparison. Where
# pg_test_fsync is not installed (the `postgresql` package), it says so and skips.
# REGION=8k makes ioscope rewrite the same block(s) every op, as pg_test_fsync does (by
# default it writes on through 16 MiB, as a WAL segment is written).
# RAW=FILE keeps every round's figures there ("tool writes method ops/s" lines, in order).
# Usage: bench/sync_methods.sh [DIR] [SECONDS] [ROUNDS]; default . 2 3.
set -euo pipefail
DIR=${1:-.}
SECS=${2:-2}
ROUNDS=${3:-3}
REGION=${REGION:-16m}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
pg=$(command -v pg_test_fsync || ls /usr/lib/postgresql/*/bin/pg_test_fsync 2>/dev/null | sort -V | tail -1 || true)
[ -n "$pg" ] && [ -x "$pg" ] || { echo "skipped: pg_test_fsync is not installed (the postgresql package)"; exit 0; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 0; }
work=$(mktemp -d "$DIR/.bench-sync.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$(mktemp)
trap 'rm -rf "$work" "$out"' EXIT

# pg_test_fsync's ops/s as "writes method ops" lines (writes: 1 or 2).
run_pg() {
    "$pg" -f "$work/pg_test_fsync.out" -s "$SECS" 2>/dev/null | awk '
        /using one 8kB write/  { w = 1; next }
        /using two 8kB writes/ { w = 2; next }
        /^Compare open_sync/   { w = 0 }
        w && $2 ~ /^[0-9.]+$/ && $3 == "ops/sec" { print w, $1, $2 }'
}
# ioscope's ops/s as the same lines, its methods named as pg_test_fsync names them.
run_ioscope() {
    "$io" disk "$work" --preset sync-methods --runtime "${SECS}s" --size "$REGION" --json -q |
        jq -r '.rows[] | select(.skipped == null) |
            [.writes_per_op,
             ({"fdatasync": "fdatasync", "fsync": "fsync", "o_direct_dsync": "open_datasync",
               "o_sync": "open_sync"}[.method] // empty),
             .ops_per_second] | @tsv' | tr '\t' ' '
}
echo "dir $DIR ($(df -T "$DIR" | awk 'NR==2 {print $2}')), ${SECS}s per test, $ROUNDS round(s), $pg"
# pg_test_fsync ends with unsynced writes: their writeback would land in the next tool's
# run, so everything is written out (sync) before each.
pg_round() { sync; run_pg | sed 's/^/pg /' >>"$out"; }
io_round() { sync; run_ioscope | sed 's/^/io /' >>"$out"; }
for round in $(seq "$ROUNDS"); do
    if (( round % 2 )); then pg_round; io_round; else io_round; pg_round; fi
    # Each round's ops/s, to see how much the device itself moves between rounds.
    echo "round $round, fdatasync 1x8kB ops/s: $(awk '$2 == 1 && $3 == "fdatasync" { v[$1] = int($4) } END { print "pg", v["pg"], "ioscope", v["io"] }' "$out")" >&2
done
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-14s %6s %12s %12s %7s\n' method writes "pg ops/s" "ios ops/s" ratio
for w in 1 2; do
    for m in open_datasync fdatasync fsync open_sync; do
        p=$(awk -v w="$w" -v m="$m" '$1 == "pg" && $2 == w && $3 == m { print $4 }' "$out" | median)
        i=$(awk -v w="$w" -v m="$m" '$1 == "io" && $2 == w && $3 == m { print $4 }' "$out" | median)
        [ -n "$p" ] && [ -n "$i" ] || continue
        note=""
        [ "$m" = open_sync ] && note="  (pg adds O_DIRECT)"
        printf '%-14s %6s %12.0f %12.0f %6.2fx%s\n' "$m" "$w" "$p" "$i" "$(echo "$i / $p" | bc -l)" "$note"
    done
done
[ -z "${RAW:-}" ] || cp "$out" "$RAW"
