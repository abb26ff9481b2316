#!/usr/bin/env bash
# Baselines against their targets (issue 38, item 5): a warm `sweep` of a file made with
# `head -c`, saved once as a baseline, then
#   - CHECKS A/A checks: the same sweep again with --baseline; a "regressed" is false;
#   - CHECKS checks with a slowdown injected: CPU hogs on every core, each a duty-cycled
#     busy loop (busy DUTY of every PERIOD_MS), started before the sweep and stopped after;
#     a "regressed" is a catch. The slowdown the hogs actually cause is measured: the median
#     over the checks of (median rate of the figures under hogs / median rate without).
# Targets: at most 1 false "regressed" in 20 A/A checks; at least 19 of 20 slowdowns caught.
# Usage: bench/baseline.sh [CHECKS] [SIZE_MIB] [DUTY] [PERIOD_MS]; default 20, 64, 0.05, 5.
# SLOW=cgroup injects the slowdown instead as a CPU quota on the slowed sweep alone (root,
# cgroup v1 or v2 cpu controller): QUOTA (default 0.9) of one CPU per 5 ms period, so each
# ~20 ms run is throttled evenly (a 100 ms period would stall one run in five and leave
# the median alone). On a quiet machine the hogs barely slow a warm sweep (its thread
# preempts them); the quota does, by a known share.
# The sweep: BLOCKS (default 64k,1m), REPEAT runs per point (default 15). PAIRED=1 saves a
# fresh baseline before each pair of checks (the rule's own noise, without the machine's
# drift over the whole script); by default one baseline is saved at the start.
# PROCESSES=N measures each baseline and each check over N processes (`--processes N`),
# REPEAT then being the runs of each process (so PROCESSES=3 REPEAT=5 makes the 15 runs of
# the default in three processes).
# MOMENTS=K saves the one baseline over K moments: --save-baseline, then K-1 runs with
# --add-to-baseline, MOMENT_GAP seconds apart (default 0: the checks' own drift shows from
# one check to the next), so its floor carries the machine's drift between moments.
set -euo pipefail
CHECKS=${1:-20}
SIZE=${2:-64}
DUTY=${3:-0.05}
PERIOD_MS=${4:-5}
BLOCKS=${BLOCKS:-64k,1m}
REPEAT=${REPEAT:-15}
PAIRED=${PAIRED:-0}
PROCESSES=${PROCESSES:-1}
SLOW=${SLOW:-hogs}
QUOTA=${QUOTA:-0.9}
MOMENTS=${MOMENTS:-1}
MOMENT_GAP=${MOMENT_GAP:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
work=$(mktemp -d "$here/.bench-baseline.XXXXXX")
hogs=()
cgroup_dir=""
cleanup() {
    for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$cgroup_dir" ] && rmdir "$cgroup_dir" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
f=$work/f
head -c "$((SIZE << 20))" /dev/urandom >"$f"
# Written back before the baseline: writeback during it made one baseline 12% low.
sync "$f"
cat "$f" >/dev/null
bl=$work/baselines
cg=""
sweep() {
    if [ -n "$cg" ]; then
        # The quota holds this sweep alone: it joins the group, then becomes ioscope.
        sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$cg" \
            "$io" sweep "$f" --block-sizes "$BLOCKS" --repeat "$REPEAT" --processes "$PROCESSES" --baseline-dir "$bl" "$@"
    else
        "$io" sweep "$f" --block-sizes "$BLOCKS" --repeat "$REPEAT" --processes "$PROCESSES" --baseline-dir "$bl" "$@"
    fi
}
quota_group() {
    local us=$(python3 -c "print(int($QUOTA * 5000))")
    if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        local g=/sys/fs/cgroup/ioscope-bench-$$
        mkdir "$g" && echo "$us 5000" >"$g/cpu.max" && echo "$g/cgroup.procs"
    elif [ -d /sys/fs/cgroup/cpu ]; then
        local g=/sys/fs/cgroup/cpu/ioscope-bench-$$
        mkdir "$g" && echo 5000 >"$g/cpu.cfs_period_us" && echo "$us" >"$g/cpu.cfs_quota_us" && echo "$g/tasks"
    fi
}
start_hogs() {
    hogs=()
    for _ in $(seq "$(nproc)"); do
        python3 -c '
import time, sys
duty, period = float(sys.argv[1]), float(sys.argv[2]) / 1000
busy = duty * period
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < busy:
        pass
    time.sleep(period - busy)' "$DUTY" "$PERIOD_MS" &
        hogs+=($!)
    done
    sleep 0.2
}
stop_hogs() {
    for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
    wait "${hogs[@]}" 2>/dev/null || true
    hogs=()
}
# One check: its exit code, the verdicts, and the median of the new medians over the old.
check() {
    set +e
    sweep --baseline "$1" --json >"$work/out.json"
    rc=$?
    set -e
    python3 - "$work/out.json" "$rc" <<'PY'
import json, statistics as st, sys
d = json.load(open(sys.argv[1]))
b = d["baseline"]["figures"]
ratios = [x["new"]["median"] / x["old"]["median"] for x in b]
verdicts = ",".join(x["verdict"] for x in b)
floors = ",".join(f"{x['floor'] * 100:.0f}%" for x in b)
print(sys.argv[2], f"{st.median(ratios):.4f}", verdicts, floors)
PY
}
load() { cut -d' ' -f1 /proc/loadavg; }
if [ "$SLOW" = cgroup ]; then
    slow_group=$(quota_group) || true
    if [ -z "$slow_group" ]; then
        echo "bench/baseline.sh: SLOW=cgroup needs root and a cgroup cpu controller; skipped" >&2
        exit 0
    fi
    cgroup_dir=$(dirname "$slow_group")
    how="a CPU quota of $QUOTA of one CPU per 5 ms on the slowed sweep"
else
    how="hogs: $(nproc) x duty $DUTY of ${PERIOD_MS} ms"
fi
echo "# bench/baseline.sh: PAIRED=$PAIRED, PROCESSES=$PROCESSES, MOMENTS=$MOMENTS, $CHECKS checks, ${SIZE} MiB, sweep --block-sizes $BLOCKS --repeat $REPEAT (warm), $how"
echo "# load at start: $(load)"
sweep --save-baseline base >/dev/null 2>&1
for _ in $(seq 2 "$MOMENTS"); do
    sleep "$MOMENT_GAP"
    sweep --add-to-baseline base >/dev/null 2>&1
done
: >"$work/aa"
: >"$work/slow"
for i in $(seq "$CHECKS"); do
    name=base
    if [ "$PAIRED" = 1 ]; then
        name=base$i
        sweep --save-baseline "$name" >/dev/null 2>&1
    fi
    check "$name" >>"$work/aa"
    if [ "$SLOW" = cgroup ]; then
        cg=$slow_group
        check "$name" >>"$work/slow"
        cg=""
    else
        start_hogs
        check "$name" >>"$work/slow"
        stop_hogs
    fi
done
echo "# load at end: $(load)"
python3 - "$work/aa" "$work/slow" "$CHECKS" <<'PY'
import statistics as st, sys
def rows(p):
    return [l.split() for l in open(p) if l.strip()]
aa, slow, n = rows(sys.argv[1]), rows(sys.argv[2]), int(sys.argv[3])
false = sum(1 for r in aa if r[0] == "1")
caught = sum(1 for r in slow if r[0] == "1")
aa_ratio = st.median(float(r[1]) for r in aa)
slow_ratio = st.median(float(r[1]) for r in slow)
print(f"A/A: {false} of {n} checks said regressed (target: at most 1); median new/old {aa_ratio:.3f}")
print(f"slowdown: {caught} of {n} caught (target: at least 19); median new/old {slow_ratio:.3f}, "
      f"the slowdown's own effect {slow_ratio / aa_ratio - 1:+.1%} against the A/A runs")
print("A/A runs (exit, median new/old, verdicts, floors):")
for r in aa:
    print("  ", " ".join(r))
print("slowed runs:")
for r in slow:
    print("  ", " ".join(r))
PY
