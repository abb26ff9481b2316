#!/usr/bin/env bash
# bench/trace_overhead.sh — issue 24's fourth target, in one run: what tracing costs.
# bench/trace.sh runs it as its fourth part.
#
# One program, bench/mixedcalls.c, timing its own loop (so no tracer's start-up, and not
# ioscope's calibration of its own cost, is in the figure), in two shapes:
#  a. a tight loop of a traced call: CALLS preads of 4 KiB and nothing else. Cost per traced
#     call = (traced loop - plain loop) / CALLS. Target: ioscope's ≤ 1.0 × strace -f's.
#  b. file reads among many other calls: READS preads of 4 KiB, each with OTHER
#     getppid/getuid calls (no tracer counts them as file I/O). Target: the slowdown under
#     `ioscope trace` (traced loop - plain loop) ≤ 0.5 × the slowdown under plain strace -f.
# Each shape runs plain, under `strace -f`, under `strace -f --seccomp-bpf` (with a trace set
# that holds every call ioscope counts and not getppid/getuid: %desc,%file,%memory,%clock,
# sync), under `ioscope trace --seccomp` (its seccomp-bpf filter) and under `ioscope trace`
# with `--every-call` (every call stops); ROUNDS rounds, the order rotating each
# round; medians, and the median of each round's ratio to strace -f ("paired": the runs of
# a round are adjacent in time, so the load of a shared machine is alike for them; the
# targets are judged on the medians). The whole command's wall time is shown beside it: ioscope's holds its
# calibration (20,000 traced calls before the command starts) and its report.
#
#   bench/trace_overhead.sh
#   ROUNDS=7 CALLS=50000 READS=1000 OTHER=50 DIR=/mnt/x bench/trace_overhead.sh
# Exits 1 when a target is missed, 2 when it cannot run.
# Issue 39's part, the slowdown of real programs (fio, iozone, dd) under each tracer and
# each `trace` engine beside strace -f -c and perf trace -s: bench/trace_engines.sh
# (bench/trace.sh runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-20000}
READS=${READS:-1000}
OTHER=${OTHER:-50}
for tool in strace cc python3; do
    command -v "$tool" >/dev/null || { echo "bench/trace_overhead.sh: needs $tool" >&2; exit 2; }
done
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
B=$(realpath "$B")
WORK=$(realpath "${DIR:-.}")/.ioscope-bench-overhead-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM
cc -O2 -o "$WORK/mixedcalls" bench/mixedcalls.c
head -c 1M /dev/urandom >"$WORK/mix"
cat "$WORK/mix" >/dev/null
SET=%desc,%file,%memory,%clock,sync
now() { date +%s%N; }

# run SHAPE RUNNER: one run of the program in SHAPE (loop, mixed) under RUNNER; appends
# "loop_ns wall_ns" to $WORK/SHAPE.RUNNER.
run() {
    local shape=$1 runner=$2 prog s e out
    if [ "$shape" = loop ]; then prog=("$WORK/mixedcalls" "$WORK/mix" "$CALLS" 0)
    else prog=("$WORK/mixedcalls" "$WORK/mix" "$READS" "$OTHER"); fi
    s=$(now)
    case $runner in
    plain) out=$("${prog[@]}") ;;
    strace) out=$(strace -f -o /dev/null -- "${prog[@]}") ;;
    strace_bpf) out=$(strace -f --seccomp-bpf -e trace="$SET" -o /dev/null -- "${prog[@]}") ;;
    ours_seccomp) out=$("$B" trace --seccomp -- "${prog[@]}") ;;
    ours_every) out=$("$B" trace --every-call -- "${prog[@]}") ;;
    esac
    e=$(now)
    echo "$(awk '$1 == "loop_ns" {print $2; exit}' <<<"$out") $((e - s))" >>"$WORK/$shape.$runner"
}
RUNNERS=(plain strace strace_bpf ours_seccomp ours_every)
for shape in loop mixed; do
    for r in "${RUNNERS[@]}"; do : >"$WORK/$shape.$r"; done
done
echo "== tracing's cost: a tight loop of $CALLS preads (a), $READS preads each with $OTHER other calls (b); $ROUNDS rounds"
for ((i = 0; i < ROUNDS; i++)); do
    n=${#RUNNERS[@]}
    for ((k = 0; k < n; k++)); do
        r=${RUNNERS[$(((i + k) % n))]}
        run loop "$r"
        run mixed "$r"
    done
done

python3 - "$WORK" "$CALLS" "$READS" "$OTHER" "$ROUNDS" <<'EOF'
import statistics, sys
work, calls, reads, other, rounds = sys.argv[1], *map(int, sys.argv[2:])
NAMES = {"plain": "plain", "strace": "strace -f",
         "strace_bpf": "strace -f --seccomp-bpf",
         "ours_seccomp": "ioscope trace --seccomp", "ours_every": "ioscope trace, every call"}
def col(shape, runner, c):
    return [float(line.split()[c]) for line in open(f"{work}/{shape}.{runner}")]
def med(shape, runner, c):
    v = col(shape, runner, c)
    return statistics.median(v), min(v), max(v)
def paired(shape, runner):
    # Each round's ratio of the time added (runner against strace -f, each over that round's
    # plain run); the runs of a round are adjacent in time, so the load they met is alike.
    p, s, o = col(shape, "plain", 0), col(shape, "strace", 0), col(shape, runner, 0)
    return statistics.median((oi - pi) / (si - pi) for pi, si, oi in zip(p, s, o) if si > pi)
missed = False
print()
print(f"a. per traced call: the program's own loop of {calls:,} pread(4 KiB), medians of {rounds} (min–max)")
print(f"   {'run':<26} {'loop':>22} {'per call added':>15} {'× strace -f':>12} {'paired':>7} {'× --seccomp-bpf':>16} {'whole command':>14}")
p = med("loop", "plain", 0)[0]
per = {r: (med("loop", r, 0)[0] - p) / calls for r in NAMES}
for r, name in NAMES.items():
    m, lo, hi = med("loop", r, 0)
    wall = med("loop", r, 1)[0]
    cells = f"   {name:<26} {m / 1e6:8.1f} ms ({lo / 1e6:.0f}–{hi / 1e6:.0f})"
    if r == "plain":
        plain_call = f"({p / calls / 1e3:.2f} µs a call)"
        print(f"{cells:<52} {plain_call:>15} {'':>12} {'':>7} {'':>16} {wall / 1e6:11.1f} ms")
        continue
    print(f"{cells:<52} {per[r] / 1e3:12.2f} µs {per[r] / per['strace']:12.2f} {paired('loop', r):7.2f} {per[r] / per['strace_bpf']:16.2f} {wall / 1e6:11.1f} ms")
for r in ("ours_seccomp", "ours_every"):
    ok = per[r] <= per["strace"]
    missed |= not ok
    print(f"   target, {NAMES[r]}: per call ≤ 1.0 × strace -f's: {per[r] / per['strace']:.2f} "
          f"(paired by round: {paired('loop', r):.2f}): {'met' if ok else 'MISSED'}")
print()
print(f"b. mixed: the program's own loop of {reads:,} pread(4 KiB), each with {other} getppid/getuid, medians of {rounds} (min–max)")
print(f"   {'run':<26} {'loop':>22} {'slowdown':>12} {'× strace -f':>12} {'paired':>7} {'whole command':>14}")
p = med("mixed", "plain", 0)[0]
slow = {r: med("mixed", r, 0)[0] - p for r in NAMES}
for r, name in NAMES.items():
    m, lo, hi = med("mixed", r, 0)
    wall = med("mixed", r, 1)[0]
    cells = f"   {name:<26} {m / 1e6:8.1f} ms ({lo / 1e6:.0f}–{hi / 1e6:.0f})"
    if r == "plain":
        print(f"{cells:<52} {'':>12} {'':>12} {'':>7} {wall / 1e6:11.1f} ms")
        continue
    print(f"{cells:<52} {slow[r] / 1e6:9.1f} ms {slow[r] / slow['strace']:12.2f} {paired('mixed', r):7.2f} {wall / 1e6:11.1f} ms")
for r in ("ours_seccomp", "ours_every"):
    ok = slow[r] <= 0.5 * slow["strace"]
    if r == "ours_seccomp":
        missed |= not ok
    print(f"   target, {NAMES[r]}: slowdown ≤ 0.5 × strace -f's: {slow[r] / slow['strace']:.2f}: "
          f"{'met' if ok else 'MISSED' if r == 'ours_seccomp' else 'not met (expected: every call stops, as strace -f)'}")
sys.exit(1 if missed else 0)
EOF
