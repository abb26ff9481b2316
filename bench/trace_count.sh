#!/usr/bin/env bash
# bench/trace_count.sh — issue 24's second target, in one run: `ioscope trace --json` counts
# every call as `strace -f -c` does, failures included, on dd, cp, tar, fio (psync, libaio,
# io_uring) and bonnie++. bench/trace.sh runs it as its second part.
#
# Each command runs under each tracer RUNS times (3), each run in a fresh scratch directory; ioscope
# with `--seccomp` (its seccomp-bpf filter, the default to be; STOPS=every traces with
# `--every-call` instead) and `--vdso keep`, so that the program runs as it does
# under strace: with the vDSO hidden (VDSO=hide, trace's default) the program itself changes
# a little — its clock reads become system calls, which only ioscope then lists, and cp makes
# one anonymous mmap fewer (38 against 39: the dynamic loader has one object less to map for)
# — which is the program's doing, not a miscount. A table per command: every call both tracers list,
# with each one's calls and failed calls, and whether they are equal. A call whose count
# differs between one tracer's own runs varies with timing or address-space layout (malloc
# arenas' munmap in bonnie++'s threads, even with ASLR off; fio's threads and io_uring
# completions): every run of both is shown, marked `varies`, with whether the two tracers'
# ranges overlap; it is not compared. bonnie++ runs with a fixed seed (-z 1), which makes its
# seek phase's lseek and write counts the same in every run. Calls only ioscope lists are shown too (libaio's requests read
# from the iocbs; with VDSO=hide the clock reads); the calls only strace lists are not file I/O and are
# counted in one line. fio runs with --disk_util=0 and writes its JSON to a file: its
# disk-stats thread reads /sys on a timer, so that count depends on the run's length.
# bonnie++ runs with -f (no per-char tests: their 4 million one-byte calls take minutes
# under either tracer here); BONNIE_FLAGS="" runs them too.
#
#   bench/trace_count.sh               in a scratch directory under the current one
#   DIR=/mnt/x STOPS=every bench/trace_count.sh
# Exits 1 when a count that does not vary differs, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
STOPS=${STOPS:-seccomp}
VDSO=${VDSO:-keep}
RUNS=${RUNS:-3}
BONNIE_FLAGS=${BONNIE_FLAGS--f}
for tool in strace dd cp tar python3; do
    command -v "$tool" >/dev/null || { echo "bench/trace_count.sh: needs $tool" >&2; exit 2; }
done
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
B=$(realpath "$B")
WORK=$(realpath "${DIR:-.}")/.ioscope-bench-count-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM
case $STOPS in
seccomp) OURS=("$B" trace --seccomp --vdso "$VDSO" --json --) ;;
every) OURS=("$B" trace --every-call --vdso "$VDSO" --json --) ;;
*) echo "bench/trace_count.sh: STOPS is seccomp or every, not $STOPS" >&2; exit 2 ;;
esac
missed=0

# compare NAME CMD...: @D in the command is a fresh scratch directory for each run.
compare() {
    local name=$1; shift
    local run d a args tracer
    for ((run = 1; run <= RUNS; run++)); do
        for tracer in strace ours; do
            d=$WORK/$tracer$run; rm -rf "$d"; mkdir -p "$d"; args=()
            for a in "$@"; do args+=("${a//@D/$d}"); done
            if [ $tracer = strace ]; then
                (cd "$d" && strace -f -c -o "$WORK/strace$run.txt" -- "${args[@]}" >/dev/null 2>&1) || true
            else
                (cd "$d" && "${OURS[@]}" "${args[@]}" 2>/dev/null >"$WORK/ours$run.json") || true
            fi
            rm -rf "$d"
        done
    done
    python3 - "$name" "$WORK" "$RUNS" <<'PY' || missed=1
import sys, json, re
name, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def strace_counts(path):
    st = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r'^[0-9.]+$', f[0]) and f[-1] != 'total':
            st[f[-1]] = (int(f[3]), int(f[4]) if len(f) == 6 else 0)
    return st
def ours_counts(path):
    doc = json.load(open(path))
    return doc, {k: (v['calls'], v['errors'], v.get('errnos') or {}) for k, v in doc['totals'].items()}
st = [strace_counts(f"{work}/strace{r}.txt") for r in range(1, runs + 1)]
docs, ours = zip(*(ours_counts(f"{work}/ours{r}.json") for r in range(1, runs + 1)))
vdso = (docs[0].get('clock') or {}).get('vdso', '?')
print(f"-- {name}   (ioscope stops: {docs[0].get('stops', '?')}, vDSO {vdso}; {runs} runs of each tracer)")
print(f"   {'call':<16} {'ioscope':>17} {'strace':>17} {'ioscope failed':>22} {'strace failed':>13}  equal")
names = sorted(set().union(*ours))
both = [k for k in names if any(k in s for s in st)]
only = [k for k in names if k not in both]
def fmt(values):
    return str(values[0]) if len(set(values)) == 1 else ",".join(map(str, values))
def errnos(e):
    return " ".join(f"{k} {v}" for k, v in sorted(e.items()))
diff = varies_n = apart = 0
for k in both:
    o = [x.get(k, (0, 0, {})) for x in ours]
    s = [x.get(k, (0, 0)) for x in st]
    oc, sc = [x[0] for x in o], [x[0] for x in s]
    oe, se = [x[1] for x in o], [x[1] for x in s]
    if any(len(set(v)) > 1 for v in (oc, sc, oe, se)):
        # The program's own count changes from run to run: not compared; whether the two
        # tracers' ranges overlap is shown.
        varies_n += 1
        overlap = all(max(min(a), min(b)) <= min(max(a), max(b)) for a, b in ((oc, sc), (oe, se)))
        apart += not overlap
        equal = "varies, " + ("ranges overlap" if overlap else "ranges apart")
    else:
        ok = oc[0] == sc[0] and oe[0] == se[0]
        diff += not ok
        equal = "yes" if ok else "NO"
    failed = fmt(oe) + (f" ({errnos(o[0][2])})" if o[0][2] else "")
    print(f"   {k:<16} {fmt(oc):>17} {fmt(sc):>17} {failed:>22} {fmt(se):>13}  {equal}")
for k in only:
    o = [x.get(k, (0, 0, {})) for x in ours]
    print(f"   {k:<16} {fmt([x[0] for x in o]):>17} {'-':>17} {fmt([x[1] for x in o]):>22} {'-':>13}  (ioscope only)")
det = [k for k in both if k in st[0]]
calls = sum(st[0][k][0] for k in det)
fails = sum(st[0][k][1] for k in det)
others = sorted(set().union(*st) - set(names))
print(f"   {len(both) - varies_n - diff}/{len(both) - varies_n} calls equal"
      + (f", {varies_n} varying run to run ({varies_n - apart} with overlapping ranges)" if varies_n else "")
      + f"; {calls:,} calls, {fails} failed in strace's first run; strace alone lists {len(others)} other calls (not file I/O)")
sys.exit(1 if diff else 0)
PY
}

echo "== counts: ioscope trace against strace -f -c, every call both list, failures included"
head -c 4M /dev/urandom >"$WORK/src"
compare "dd bs=4k conv=fsync" dd if="$WORK/src" of=@D/out bs=4k conv=fsync status=none
compare "dd if=/nonexistent" dd if=/nonexistent of=/dev/null status=none
compare "cp" cp "$WORK/src" @D/copy
compare "tar cf" tar cf @D/a.tar -C "$WORK" src
if command -v fio >/dev/null; then
    for e in psync libaio io_uring; do
        compare "fio $e randrw 16m bs=64k" fio --name=t --directory=@D --size=16m --bs=64k --rw=randrw \
            --ioengine="$e" --iodepth=1 --disk_util=0 --output-format=json --output=@D/fio.json
    done
else
    echo "-- fio: skipped: not installed (apt-get install fio)"
fi
if command -v bonnie++ >/dev/null; then
    # shellcheck disable=SC2086
    compare "bonnie++ -s 2m -r 1m -n 1 -z 1 $BONNIE_FLAGS" bonnie++ -d @D -s 2m -r 1m -n 1 -u "$(id -u)" -q -z 1 $BONNIE_FLAGS
else
    echo "-- bonnie++: skipped: not installed (apt-get install bonnie++)"
fi
exit $missed
