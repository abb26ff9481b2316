#!/usr/bin/env bash
# bench/trace.sh — issue 24's targets for `trace` and `patterns`, side by side in one run,
# a table per target (each part is a script of its own that can run alone):
#  1. bench/trace_iozone.sh: `ioscope trace -- iozone -i 0 -s 64m -r 64k -f F` says, with no
#     extra flag, that iozone's write figure leaves fsync out; with -e, that it includes it;
#     iozone's claims are checked (the verdict lines shown). Before it, bench/trace-clock.sh:
#     what one clock read costs when trace hides the vDSO (what makes the regions visible).
#  2. bench/trace_count.sh: counts equal `strace -f -c` for every call both see, failures
#     included, on dd, cp, tar, fio (psync, libaio, io_uring) and bonnie++.
#  3. bench/patterns_vs_iozone.sh: `patterns` writes without fsync ≥ 0.9 × iozone's (write,
#     rewrite, random write, record rewrite), warm, medians of alternating rounds; reads
#     within noise.
#  4. bench/trace_overhead.sh: per traced call ≤ 1.0 × strace -f's; on a program mixing file
#     reads with many other calls, the slowdown under trace ≤ 0.5 × strace -f's.
#  5. bench/trace_engines.sh (issue 39): untraced, `ioscope trace` (kernel engine, ptrace
#     with the vDSO kept and hidden), strace -f -c and perf trace -s on fio (libaio QD16
#     direct; psync cached), iozone -a and dd: kernel engine ≥ 0.8 × untraced (fio libaio)
#     and ≥ 0.5 × (fio psync); ptrace --vdso keep no slower than strace -f -c. Without a
#     kernel engine its two targets cannot be judged: the part says so, and so does the end.
# At the end, one line per target: met, MISSED, or could not run. About 10 minutes on a
# 2-vCPU VM.
#
#   bench/trace.sh                     scratch directories under the current one
#   DIR=/var/tmp bench/trace.sh        elsewhere (not tmpfs: iozone and patterns write there)
#   IOSCOPE=/path/to/ioscope IOZONE=/path/to/iozone bench/trace.sh
# Rounds per part: IOZONE_ROUNDS=3 COUNT_RUNS=3 PATTERNS_ROUNDS=25 PATTERNS_SIZE=256m
# OVERHEAD_ROUNDS=11 ENGINES_ROUNDS=3 (ENGINES_SHORT=1: its short mode). Exits 1 when a target is missed, 2 when a part could not run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
if [ -z "${IOSCOPE:-}" ]; then
    cargo build --release --quiet || { echo "bench/trace.sh: cargo build --release failed" >&2; exit 2; }
    IOSCOPE=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
IOSCOPE=$(realpath "$IOSCOPE")
export IOSCOPE
export DIR=${DIR:-.}
for tool in strace fio bonnie++ cc python3; do
    command -v "$tool" >/dev/null || echo "note: $tool not found: the parts that need it skip it or cannot run (apt-get install -y $tool)"
done
# shellcheck source=bench/iozone.sh
. bench/iozone.sh
(find_iozone) && { find_iozone; export IOZONE; }

echo "bench/trace.sh: $("$IOSCOPE" --version), $(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
started=$(date +%s)
declare -A RC SECS
TARGETS=([1]="trace shows iozone's write figure leaves fsync out (with -e: includes it); claims checked"
    [2]="counts equal strace -f -c, failures included (dd, cp, tar, fio x3, bonnie++)"
    [3]="patterns writes without fsync >= 0.9 x iozone's; reads within noise"
    [4]="overhead: per call <= 1.0 x strace -f's; mixed slowdown <= 0.5 x strace -f's"
    [5]="engines: kernel >= 0.8x/0.5x untraced (fio libaio/psync); --vdso keep >= strace -c")
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
part() { # number script env...: runs one part, keeps its exit status, time and output
    local t=$1 script=$2 s
    shift 2
    echo
    echo "######## target $t ($script): ${TARGETS[$t]}"
    s=$(date +%s)
    env "$@" "$script" | tee "$LOGS/$t"
    RC[$t]=${PIPESTATUS[0]}
    SECS[$t]=$(($(date +%s) - s))
}
echo
echo "######## what a clock read costs under trace (bench/trace-clock.sh; context for target 1)"
N=20000 ROUNDS=3 bench/trace-clock.sh || true
part 1 bench/trace_iozone.sh ROUNDS="${IOZONE_ROUNDS:-3}"
part 2 bench/trace_count.sh RUNS="${COUNT_RUNS:-3}"
part 3 bench/patterns_vs_iozone.sh ROUNDS="${PATTERNS_ROUNDS:-25}" SIZE="${PATTERNS_SIZE:-256m}"
part 4 bench/trace_overhead.sh ROUNDS="${OVERHEAD_ROUNDS:-11}"
part 5 bench/trace_engines.sh ROUNDS="${ENGINES_ROUNDS:-3}" SHORT="${ENGINES_SHORT:-0}"

echo
echo "== targets ($(($(date +%s) - started)) s; load after: $(cut -d' ' -f1-3 /proc/loadavg))"
worst=0
for t in 1 2 3 4 5; do
    case ${RC[$t]} in
    0) what=met ;;
    1) what=MISSED; ((worst < 1)) && worst=1 ;;
    *) what="could not run (exit ${RC[$t]})"; worst=2 ;;
    esac
    # trace_engines.sh ends "N target(s) missed, M cannot be judged"
    unjudged=$(sed -n 's/.* \([0-9]*\) cannot be judged$/\1/p' "$LOGS/$t" 2>/dev/null | tail -1)
    [ "${unjudged:-0}" = 0 ] || what="$what where judged; $unjudged cannot be judged"
    printf '%s. %-86s %4ss  %s\n' "$t" "${TARGETS[$t]}" "${SECS[$t]}" "$what"
done
exit $worst
