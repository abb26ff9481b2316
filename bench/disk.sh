#!/usr/bin/env bash
# `ioscope disk` beside fio on the same file, row by row, in one run (issue 25): the panel's
# rows (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; read and write), each tool with
# io_uring, O_DIRECT, the same block size, depth, one thread and runtime, alternating (fio
# first in odd rounds, ioscope first in even ones). Prints per row both tools' IOPS and MB/s,
# the ratio, and the latency p50/p99 with one definition for both: from submission to
# completion (fio: `lat`, its slat + clat, --lat_percentiles=1; ioscope: from just before the
# io_uring_enter that submits an I/O to its completion reaped). The test file is written whole first (urandom: incompressible, no unwritten
# extent) and removed at the end.
# Usage: bench/disk.sh [SIZE_MIB] [RUNTIME_S] [ROUNDS]; default 256 2 1.
set -euo pipefail
SIZE=${1:-256}
RUNTIME=${2:-2}
ROUNDS=${3:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
command -v fio >/dev/null || { echo "skipped: fio is not installed"; exit 0; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 0; }
work=$(mktemp -d "$here/.bench-disk.XXXXXX")
trap 'rm -rf "$work"' EXIT
f="$work/file"
dd if=/dev/urandom of="$f" bs=1M count="$SIZE" conv=fsync status=none
echo "file $f: $SIZE MiB, ${RUNTIME}s per row, $ROUNDS round(s), $(nproc) CPUs"
printf '%-12s %-6s %10s %10s %6s %9s %9s %9s %9s %9s %9s\n' row op "fio IOPS" "ios IOPS" ratio \
    "fio MB/s" "ios MB/s" "fio p50" "ios p50" "fio p99" "ios p99"
rows=("read 1m 8 SEQ1M_Q8T1" "write 1m 8 SEQ1M_Q8T1" "read 1m 1 SEQ1M_Q1T1" "write 1m 1 SEQ1M_Q1T1"
    "randread 4k 32 RND4K_Q32T1" "randwrite 4k 32 RND4K_Q32T1" "randread 4k 1 RND4K_Q1T1"
    "randwrite 4k 1 RND4K_Q1T1")
run_fio() { # rw bs depth -> "iops bw_bytes p50_us p99_us"
    local dir=read
    case $1 in *write) dir=write ;; esac
    fio --name=disk --filename="$f" --rw="$1" --bs="$2" --iodepth="$3" --numjobs=1 \
        --ioengine=io_uring --direct=1 --time_based --runtime="$RUNTIME" --size="${SIZE}m" \
        --randrepeat=0 --norandommap --lat_percentiles=1 --output-format=json 2>/dev/null |
        jq -r ".jobs[0].$dir | \"\(.iops) \(.bw_bytes) \(.lat_ns.percentile[\"50.000000\"] / 1000) \(.lat_ns.percentile[\"99.000000\"] / 1000)\""
}
run_ioscope() {
    "$io" disk "$f" --rw "$1" --bs "$2" --depth "$3" --runtime "${RUNTIME}s" --force-write --json -q |
        jq -r '.rows[0] | "\(.iops) \(.bytes_per_second) \(.latency_us.p50) \(.latency_us.p99)"'
}
for ((round = 1; round <= ROUNDS; round++)); do
    for spec in "${rows[@]}"; do
        read -r rw bs depth name <<<"$spec"
        if ((round % 2)); then
            a=$(run_fio "$rw" "$bs" "$depth"); b=$(run_ioscope "$rw" "$bs" "$depth")
        else
            b=$(run_ioscope "$rw" "$bs" "$depth"); a=$(run_fio "$rw" "$bs" "$depth")
        fi
        read -r fi fb f50 f99 <<<"$a"
        read -r ii ib i50 i99 <<<"$b"
        op=read
        case $rw in *write) op=write ;; esac
        awk -v n="${name/_/ }" -v op="$op" -v fi="$fi" -v ii="$ii" -v fb="$fb" -v ib="$ib" \
            -v f50="$f50" -v i50="$i50" -v f99="$f99" -v i99="$i99" 'BEGIN {
            printf "%-12s %-6s %10.0f %10.0f %5.2fx %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                n, op, fi, ii, ii / fi, fb / 1e6, ib / 1e6, f50, i50, f99, i99 }'
    done
done
