#!/usr/bin/env bash
# bonnie++ side by side with what `ioscope trace` checks each of its figures against, in one
# run (issue 24, hostile review item 6):
#  1. where bonnie++ reads its clock around each test: strace -f -tt with a small preload of
#     our own that turns gettimeofday/clock_gettime into system calls, then per test the
#     calls from the fsync on its file to the next clock read (fsync, close, then the clock:
#     both inside its figure);
#  2. `ioscope trace` on the same command: per figure, bonnie++'s K/sec, the traced rate over
#     its own open-to-close stretch, the ratio, the one rule's verdict, fsync's placement.
# Usage: bench/bonnie_stretches.sh [SIZE_MIB] [extra bonnie++ args]; default 64 and -f (the
# per-char tests take about 3 minutes under trace here: pass "" to run them).
set -euo pipefail
SIZE=${1:-64}
EXTRA=${2--f}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
command -v bonnie++ >/dev/null || { echo "skipped: bonnie++ is not installed"; exit 0; }
work=$(mktemp -d "$here/.bench-bonnie.XXXXXX")
trap 'rm -rf "$work"' EXIT
user=()
[ "$(id -u)" = 0 ] && user=(-u root)
# shellcheck disable=SC2086
run=(bonnie++ -d "$work" -s "$SIZE" -r $((SIZE / 2)) -n 0 -z 1 "${user[@]}" $EXTRA)
echo "== ${run[*]}"
if command -v strace >/dev/null && command -v cc >/dev/null; then
    cat >"$work/clock.c" <<'C'
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
int gettimeofday(struct timeval *tv, void *tz) { return syscall(SYS_gettimeofday, tv, tz); }
int clock_gettime(clockid_t c, struct timespec *ts) { return syscall(SYS_clock_gettime, c, ts); }
C
    cc -shared -fPIC -O2 -o "$work/clock.so" "$work/clock.c"
    strace -f -tt -E LD_PRELOAD="$work/clock.so" -o "$work/s.txt" \
        -e trace=openat,fsync,close,gettimeofday,clock_gettime "${run[@]}" >/dev/null 2>&1
    main=$(head -1 "$work/s.txt" | cut -d' ' -f1)
    echo "-- strace -f -tt (clock reads as system calls): each fsync on the test file and what follows"
    awk -v m="$main" '$1==m && /fsync\(3\)/ {n=3} n>0 && $1==m {print; n--}' "$work/s.txt" |
        sed 's/{tv_sec=[0-9]*, tv_usec=[0-9]*}/{...}/'
else
    echo "-- strace or cc missing: the clock order is not shown"
fi
echo "-- ioscope trace"
"$io" trace --json -- "${run[@]}" >"$work/t.json" 2>/dev/null
python3 - "$work/t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'figure':28} {'said':>12} {'bonnie MiB/s':>12} {'stretch MiB/s':>13} {'ratio':>7} {'verdict':>12}  fsync")
for f in d["claim_check"]["figures"]:
    fig, t = f["figure"], f.get("traced") or {}
    rate = fig["bytes"] / fig["seconds"] / 2**20 if fig.get("seconds") else None
    tr = t["bytes"] / t["seconds"] / 2**20 if t.get("seconds") else None
    cov = t.get("covers", "-")
    print(f"{fig['label']:28} {fig['said'][:12]:>12} {rate if rate is None else round(rate, 3)!s:>12} "
          f"{tr if tr is None else round(tr, 3)!s:>13} {f['ratio'] and round(f['ratio'], 3)!s:>7} "
          f"{f['verdict']:>12}  {(f.get('fsync') or {}).get('placement', '-')} ({cov})")
PY
