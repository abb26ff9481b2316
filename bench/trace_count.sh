#!/usr/bin/env bash
# bench/trace_count.sh — issue 24 items 4 and 5, side by side in one run:
#  1. Counts: `ioscope trace --json` against `strace -f -c` on the same command, each in a
#     fresh scratch directory: every call both see must have the same count and the same
#     failures (dd, cp, tar, fio psync/libaio/io_uring, bonnie++ where installed). Each tracer
#     runs twice: a call whose count differs between one tracer's own two runs varies with
#     timing or address-space layout (fio's threads, malloc arenas' munmap, bonnie++'s
#     seeks) and is listed with both tracers' figures, not compared. fio runs with
#     --disk_util=0 and writes its JSON to a file: its disk-stats thread reads /sys on a
#     timer, so that count depends on how long the run takes, not on the tracer.
#  2. Overhead per traced call: dd bs=512 over CALLS_MIB (warm), untraced, under ioscope
#     trace and under strace -f; (traced - untraced) / calls, medians of ROUNDS.
#  3. A program mixing file reads with many other calls (bench/mixedcalls.c: per 4 KiB
#     pread, OTHER getppid/getuid calls): plain, strace -f, ioscope trace (seccomp filter) and
#     ioscope trace with IOSCOPE_TRACE_EVERY_CALL=1. Target: ioscope's slowdown ≤ 0.5 ×
#     strace -f's. ioscope's time is its whole run (its calibration included).
#
#   bench/trace_count.sh               in a scratch directory under the current one
#   DIR=/mnt/x ROUNDS=5 bench/trace_count.sh
# Exits 1 when a count differs or the slowdown target is missed, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
CALLS_MIB=${CALLS_MIB:-8}
READS=${READS:-2000}
OTHER=${OTHER:-50}
for tool in strace dd cp tar cc python3; do
    command -v "$tool" >/dev/null || { echo "bench/trace_count.sh: needs $tool" >&2; exit 2; }
done
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
WORK=$(realpath "${DIR:-.}")/.ioscope-bench-count-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM
now() { date +%s%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
missed=0

# compare NAME CMD...: @D in the command is a fresh scratch directory for each tracer.
compare() {
    local name=$1; shift
    local run d a args tracer
    for run in 1 2; do
        for tracer in strace ours; do
            d=$WORK/$tracer$run; rm -rf "$d"; mkdir -p "$d"; args=()
            for a in "$@"; do args+=("${a//@D/$d}"); done
            if [ $tracer = strace ]; then
                (cd "$d" && strace -f -c -o "$WORK/strace$run.txt" -- "${args[@]}" >/dev/null 2>&1) || true
            else
                (cd "$d" && "$B" trace --json -- "${args[@]}" 2>/dev/null >"$WORK/ours$run.json") || true
            fi
            rm -rf "$d"
        done
    done
    python3 - "$name" "$WORK/strace1.txt" "$WORK/strace2.txt" "$WORK/ours1.json" "$WORK/ours2.json" <<'PY' || missed=1
import sys, json, re
name, st_path, st2_path, ours_path, ours2_path = sys.argv[1:]
def counts(path):
    st = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r'^[0-9.]+$', f[0]) and f[-1] != 'total':
            st[f[-1]] = (int(f[3]), int(f[4]) if len(f) == 6 else 0)
    return st
def ours_of(path):
    doc = json.load(open(path))
    return doc, {k: (v['calls'], v['errors']) for k, v in doc['totals'].items()}
st, st2 = counts(st_path), counts(st2_path)
doc, ours = ours_of(ours_path)
_, ours2 = ours_of(ours2_path)
varies = sorted(k for k in set(ours) | set(ours2)
                if k in st or k in st2
                if st.get(k) != st2.get(k) or ours.get(k) != ours2.get(k))
both = sorted(k for k in st if k in ours and k not in varies)
same = [k for k in both if st[k] == ours[k]]
diff = [k for k in both if st[k] != ours[k]]
calls = sum(st[k][0] for k in same)
fails = sum(st[k][1] for k in same)
extra = sorted(k for k in ours if k not in st)
print(f"{name:<16} {doc.get('stops','?'):<9} {len(same)}/{len(both)} calls equal "
      f"({calls} calls, {fails} failed)"
      + (f"; ioscope only: {', '.join(f'{k} {ours[k][0]}' for k in extra)}" if extra else "")
      + (f"\n{'':<16} varies run to run (strace, strace / ioscope, ioscope): " + ", ".join(
          f"{k} {st.get(k, (0, 0))[0]}, {st2.get(k, (0, 0))[0]} / {ours.get(k, (0, 0))[0]}, {ours2.get(k, (0, 0))[0]}"
          for k in varies) if varies else "")
      + "".join(f"\n{'':<16} DIFF {k}: strace {st[k][0]} ({st[k][1]} failed), ioscope {ours[k][0]} ({ours[k][1]} failed)" for k in diff))
sys.exit(1 if diff else 0)
PY
}

echo "== 1. counts: ioscope trace against strace -f -c (calls equal / calls both see)"
head -c 4M /dev/urandom >"$WORK/src"
compare "dd" dd if="$WORK/src" of=@D/out bs=4k conv=fsync status=none
compare "dd missing" dd if=/nonexistent of=/dev/null status=none
compare "cp" cp "$WORK/src" @D/copy
compare "tar" tar cf @D/a.tar -C "$WORK" src
if command -v fio >/dev/null; then
    for e in psync libaio io_uring; do
        compare "fio $e" fio --name=t --directory=@D --size=16m --bs=64k --rw=randrw \
            --ioengine="$e" --iodepth=1 --disk_util=0 --output-format=json --output=@D/fio.json
    done
else
    echo "fio              skipped: not installed"
fi
if command -v bonnie++ >/dev/null; then
    compare "bonnie++" bonnie++ -d @D -s 2m -r 1m -n 1 -u "$(id -u)" -q
else
    echo "bonnie++         skipped: not installed (apt-get install bonnie++)"
fi

echo
echo "== 2. overhead per traced call: dd bs=512 over ${CALLS_MIB} MiB (warm), $ROUNDS rounds"
head -c "$((CALLS_MIB << 20))" /dev/urandom >"$WORK/calls"
cat "$WORK/calls" >/dev/null
DD=(dd if="$WORK/calls" of=/dev/null bs=512 status=none)
CALLS=$(( (CALLS_MIB << 20) / 512 * 2 ))
: >"$WORK/t.plain"; : >"$WORK/t.strace"; : >"$WORK/t.ours"
for ((i = 0; i < ROUNDS; i++)); do
    s=$(now); "${DD[@]}"; e=$(now); echo $((e - s)) >>"$WORK/t.plain"
    s=$(now); strace -f -o /dev/null "${DD[@]}"; e=$(now); echo $((e - s)) >>"$WORK/t.strace"
    "$B" trace --json -- "${DD[@]}" 2>/dev/null | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["seconds"]*1e9))' >>"$WORK/t.ours"
done
plain=$(median <"$WORK/t.plain"); st=$(median <"$WORK/t.strace"); ours=$(median <"$WORK/t.ours")
awk -v p="$plain" -v s="$st" -v o="$ours" -v c="$CALLS" 'BEGIN {
    printf "%-16s %10.1f ms\n%-16s %10.1f ms  %6.2f µs per call\n%-16s %10.1f ms  %6.2f µs per call (%.2f x strace'"'"'s)\n",
        "untraced", p/1e6, "strace -f", s/1e6, (s-p)/c/1e3, "ioscope trace", o/1e6, (o-p)/c/1e3, (o-p)/(s-p) }'

echo
echo "== 3. mixed calls: $READS preads of 4 KiB, each with $OTHER getppid/getuid around it, $ROUNDS rounds"
cc -O2 -o "$WORK/mixedcalls" bench/mixedcalls.c
head -c 1M /dev/urandom >"$WORK/mix"
M=("$WORK/mixedcalls" "$WORK/mix" "$READS" "$OTHER")
: >"$WORK/m.plain"; : >"$WORK/m.strace"; : >"$WORK/m.ours"; : >"$WORK/m.every"
for ((i = 0; i < ROUNDS; i++)); do
    s=$(now); "${M[@]}"; e=$(now); echo $((e - s)) >>"$WORK/m.plain"
    s=$(now); strace -f -o /dev/null "${M[@]}"; e=$(now); echo $((e - s)) >>"$WORK/m.strace"
    s=$(now); "$B" trace -- "${M[@]}" >/dev/null; e=$(now); echo $((e - s)) >>"$WORK/m.ours"
    s=$(now); IOSCOPE_TRACE_EVERY_CALL=1 "$B" trace -- "${M[@]}" >/dev/null; e=$(now); echo $((e - s)) >>"$WORK/m.every"
done
plain=$(median <"$WORK/m.plain"); st=$(median <"$WORK/m.strace")
ours=$(median <"$WORK/m.ours"); every=$(median <"$WORK/m.every")
awk -v p="$plain" -v s="$st" -v o="$ours" -v e="$every" 'BEGIN {
    printf "%-30s %9.1f ms\n", "plain", p/1e6
    printf "%-30s %9.1f ms  slowdown %7.1f ms\n", "strace -f", s/1e6, (s-p)/1e6
    printf "%-30s %9.1f ms  slowdown %7.1f ms (%.2f x strace'"'"'s)\n", "ioscope trace (filter)", o/1e6, (o-p)/1e6, (o-p)/(s-p)
    printf "%-30s %9.1f ms  slowdown %7.1f ms (%.2f x strace'"'"'s)\n", "ioscope trace (every call)", e/1e6, (e-p)/1e6, (e-p)/(s-p)
    exit ((o-p) > 0.5*(s-p)) }' || { echo "target missed: slowdown above 0.5 x strace -f's"; missed=1; }
exit $missed
