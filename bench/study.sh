#!/usr/bin/env bash
# bench/study.sh — how long each study level takes here, against its budget (issue 12:
# quick <= 30 s, standard <= 3 min on the 2-vCPU development VM), on the disk and on tmpfs,
# side by side in one run; then `ioscope report` on the two standard studies.
#
#   bench/study.sh                    quick x3 on disk and tmpfs, standard x1 on each
#   RUNS=5 STANDARD=0 bench/study.sh  quick only, five times
#   IOSCOPE=/path/to/ioscope bench/study.sh
#
# Each time is the whole process's wall time (start-up, scratch file, every part, the report
# written after every part). Prints each level's median and per-part times from study.json.
# Exits 1 when a level misses its budget, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
STANDARD=${STANDARD:-1}
if [ -z "${IOSCOPE:-}" ]; then
    cargo build --release --quiet
    IOSCOPE=$PWD/target/release/ioscope
fi
work=$(mktemp -d "$PWD/.bench-study-XXXXXX")
shm=$(mktemp -d /dev/shm/bench-study-XXXXXX 2>/dev/null || true)
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
mkdir "$work/disk"
media=("disk:$work/disk")
[ -n "$shm" ] && media+=("tmpfs:$shm")
status=0

run_level() { # level budget runs
    local level=$1 budget=$2 runs=$3
    for m in "${media[@]}"; do
        local name=${m%%:*} dir=${m#*:} times=()
        for i in $(seq "$runs"); do
            local out="$work/$level-$name-$i"
            local t0 t1
            t0=$(date +%s.%N)
            "$IOSCOPE" study "$dir" --level "$level" -o "$out" >/dev/null 2>"$out.err" || {
                echo "study $level on $name failed: $(tail -1 "$out.err")"; exit 2; }
            t1=$(date +%s.%N)
            times+=("$(echo "$t1 - $t0" | bc)")
        done
        local median
        median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        local verdict=ok
        if (( $(echo "$median > $budget" | bc) )); then verdict=MISSED; status=1; fi
        printf '%-9s %-6s median %7.1f s of %d run(s) (budget %d s): %s   [%s]\n' \
            "$level" "$name" "$median" "$runs" "$budget" "$verdict" "${times[*]}"
        python3 - "$work/$level-$name-1/study.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
parts = ", ".join(f"{s['part']} {s['seconds']:.1f}" for s in doc["steps"])
print(f"          parts (s): {parts}")
PY
    done
}

run_level quick 30 "$RUNS"
if [ "$STANDARD" = 1 ]; then
    run_level standard 180 1
    if [ -n "$shm" ]; then
        "$IOSCOPE" report "$work/standard-disk-1" "$work/standard-tmpfs-1" -o "$work/both.html" 2>/dev/null
        echo "report of both media: $(wc -c < "$work/both.html") bytes of HTML"
    fi
fi
exit $status
