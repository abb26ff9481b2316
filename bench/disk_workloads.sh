#!/usr/bin/env bash
# `ioscope disk`'s workloads beside fio on the same file (issue 41), alternating (fio first in
# odd rounds, ioscope first in even ones), io_uring, O_DIRECT, 4 KiB, QD16, one thread:
#   randrw 70/30: fio --rw=randrw --rwmixread=70 against ioscope --rw randrw --mix 70 (its
#     mix row; ioscope also runs the pure rows, which are not compared);
#   zipf:1.2 randread: fio --random_distribution=zipf:1.2 against ioscope --dist zipf:1.2
#     (where this ioscope has --dist).
# Prints per round both tools' total IOPS and their ratio, and the p99 of reads and writes
# (fio's lat: submission to completion, --lat_percentiles=1), then the medians. The test file
# is written whole first (urandom) and removed at the end.
# KERNEL=1 (root, perf) also records each run's io_uring tracepoints and prints, per tool and
# direction, the kernel's own latency: from io_uring_submit_req to io_uring_complete of each
# request (mean and p99, µs). It tells a tool's own overhead from the device's: the same
# device time under both tools means a gap in their reported p99 is a tool's. ioscope's
# figure is of its last row (the events of its last `ios` requests; the pure rows run first).
# Usage: bench/disk_workloads.sh [SIZE_MIB] [RUNTIME_S] [ROUNDS]; default 256 3 5.
set -euo pipefail
SIZE=${1:-256}
RUNTIME=${2:-3}
ROUNDS=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
command -v fio >/dev/null || { echo "skipped: fio is not installed"; exit 0; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 0; }
work=$(mktemp -d "$here/.bench-workloads.XXXXXX")
trap 'rm -rf "$work"' EXIT
kernel=${KERNEL:-0}
if [ "$kernel" = 1 ] && ! { command -v perf >/dev/null && command -v python3 >/dev/null &&
    perf list 2>/dev/null | grep io_uring:io_uring_submit_req >/dev/null; }; then
    echo "KERNEL=1 skipped: needs perf with the io_uring tracepoints (root) and python3" >&2
    kernel=0
fi
# Kernel-side latency per opcode from `perf script --ns` lines on stdin, the last N requests.
klat() {
    python3 -c '
import re, sys
last = int(sys.argv[1]); t0 = {}; op = {}; done = []
for line in sys.stdin:
    m = re.search(r"^\s*(\d+\.\d+):?\s.*req (0x[0-9a-f]+)", line)
    if not m:
        continue
    t, r = float(m.group(1)), m.group(2)
    if "submit_req" in line:
        t0[r] = t; op[r] = re.search(r"opcode (\w+)", line).group(1)
    elif "io_uring_complete" in line and r in t0:
        done.append((op[r], (t - t0.pop(r)) * 1e6))
by = {}
for o, d in done[-last:]:
    by.setdefault(o, []).append(d)
print(" ".join("%s mean %.0f p99 %.0f" % (o, sum(v) / len(v), sorted(v)[int(len(v) * 0.99)])
               for o, v in sorted(by.items())))' "$1"
}
# Runs the command, under perf when KERNEL=1 (its events in $work/perf.data, read by klat).
traced() {
    if [ "$kernel" = 1 ]; then
        perf record -q -e io_uring:io_uring_submit_req -e io_uring:io_uring_complete -a \
            -o "$work/perf.data" -- "$@"
    else
        "$@"
    fi
}
f="$work/file"
dd if=/dev/urandom of="$f" bs=1M count="$SIZE" conv=fsync status=none
echo "file $f: $SIZE MiB, ${RUNTIME}s per run, $ROUNDS round(s), $(nproc) CPUs, $(fio --version)"
fio_run() { # extra fio options... -> "iops read_p99_us write_p99_us"
    traced fio --name=w --filename="$f" --bs=4k --iodepth=16 --numjobs=1 --ioengine=io_uring \
        --direct=1 --time_based --runtime="$RUNTIME" --size="${SIZE}m" --randrepeat=0 \
        --norandommap --lat_percentiles=1 --output-format=json "$@" 2>/dev/null |
        jq -r '.jobs[0] | "\(.read.iops + .write.iops) \((.read.lat_ns.percentile["99.000000"] // 0) / 1000) \((.write.lat_ns.percentile["99.000000"] // 0) / 1000)"'
    [ "$kernel" = 0 ] || echo "  fio kernel: $(perf script --ns -i "$work/perf.data" -F time,event,trace 2>/dev/null | klat 100000000)" >&2
}
io_run() { # ioscope options... -> the same, of its last row
    traced "$io" disk "$f" --depth 16 --runtime "${RUNTIME}s" --repeat 1 --force-write --json -q "$@" >"$work/io.json"
    jq -r '.rows[-1] | if .mix then "\(.iops) \(.mix.read.latency_us.p99) \(.mix.write.latency_us.p99)" else "\(.iops) \(.latency_us.p99) 0" end' "$work/io.json"
    [ "$kernel" = 0 ] || echo "  ioscope kernel: $(perf script --ns -i "$work/perf.data" -F time,event,trace 2>/dev/null | klat "$(jq '.rows[-1].ios' "$work/io.json")")" >&2
}
cases=("randrw70|--rw=randrw --rwmixread=70|--rw randrw --bs 4k --mix 70")
if "$io" disk --help | grep -q -- '--dist'; then
    cases+=("zipf1.2|--rw=randread --random_distribution=zipf:1.2|--rw randread --bs 4k --dist zipf:1.2")
fi
printf '%-9s %5s %9s %9s %6s %9s %9s %9s %9s\n' case round "fio IOPS" "ios IOPS" ratio \
    "fio r p99" "ios r p99" "fio w p99" "ios w p99"
for c in "${cases[@]}"; do
    IFS='|' read -r name fopts iopts <<<"$c"
    ratios=()
    for ((round = 1; round <= ROUNDS; round++)); do
        # shellcheck disable=SC2086
        if ((round % 2)); then
            a=$(fio_run $fopts); b=$(io_run $iopts)
        else
            b=$(io_run $iopts); a=$(fio_run $fopts)
        fi
        read -r fi fr fw <<<"$a"
        read -r ii ir iw <<<"$b"
        line=$(awk -v n="$name" -v r="$round" -v fi="$fi" -v ii="$ii" -v fr="$fr" -v ir="$ir" \
            -v fw="$fw" -v iw="$iw" 'BEGIN {
            printf "%-9s %5d %9.0f %9.0f %5.2fx %9.0f %9.0f %9.0f %9.0f", n, r, fi, ii, ii / fi, fr, ir, fw, iw }')
        echo "$line"
        ratios+=("$(awk -v fi="$fi" -v ii="$ii" 'BEGIN { printf "%.3f", ii / fi }')")
    done
    printf '%s\n' "${ratios[@]}" | sort -n |
        awk -v n="$name" '{ v[NR] = $1 } END { printf "%-9s median ratio %.2fx over %d rounds\n", n, v[int((NR + 1) / 2)], NR }'
done
