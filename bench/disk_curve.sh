#!/usr/bin/env bash
# `ioscope disk --depths` beside fio on the same file, depth by depth, in one run (issue 25):
# random 4 KiB reads, io_uring, O_DIRECT, one thread, RUNTIME seconds per depth, alternating
# which tool goes first. Prints per depth both tools' IOPS, the ratio and the p99 (fio: clat
# and lat, submission included; ioscope: queued to reaped), then the knee ioscope marked.
# Then the fsync preset beside etcd's own fio check (`--rw=write --ioengine=sync
# --fdatasync=1 --bs=2300`), fdatasync's p50/p99/p99.9 from both.
# Usage: bench/disk_curve.sh [SIZE_MIB] [RUNTIME_S] [DEPTHS]; default 256 2 1,2,4,...,128.
set -euo pipefail
SIZE=${1:-256}
RUNTIME=${2:-2}
DEPTHS=${3:-1,2,4,8,16,32,64,128}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
command -v fio >/dev/null || { echo "skipped: fio is not installed"; exit 0; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 0; }
work=$(mktemp -d "$here/.bench-curve.XXXXXX")
trap 'rm -rf "$work"' EXIT
f="$work/file"
dd if=/dev/urandom of="$f" bs=1M count="$SIZE" conv=fsync status=none
echo "file $f: $SIZE MiB, ${RUNTIME}s per depth, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %10s %10s %6s %10s %10s %10s\n' depth "fio IOPS" "ios IOPS" ratio "fio clat99" "fio lat99" "ios p99"
run_fio() { # depth -> "iops clat_p99_us lat_p99_us"
    fio --name=qd --filename="$f" --rw=randread --bs=4k --iodepth="$1" --numjobs=1 \
        --ioengine=io_uring --direct=1 --time_based --runtime="$RUNTIME" --size="${SIZE}m" \
        --randrepeat=0 --norandommap --lat_percentiles=1 --output-format=json 2>/dev/null |
        jq -r '.jobs[0].read | "\(.iops) \(.clat_ns.percentile["99.000000"] / 1000) \(.lat_ns.percentile["99.000000"] / 1000)"'
}
run_ioscope() { # depth -> "iops p99_us"
    "$io" disk "$f" --depths "$1" --runtime "${RUNTIME}s" --json -q |
        jq -r '.points[0] | "\(.iops) \(.latency_us.p99)"'
}
i=0
for depth in ${DEPTHS//,/ }; do
    i=$((i + 1))
    if ((i % 2)); then a=$(run_fio "$depth"); b=$(run_ioscope "$depth")
    else b=$(run_ioscope "$depth"); a=$(run_fio "$depth"); fi
    read -r fi fc fl <<<"$a"
    read -r ii ip <<<"$b"
    awk -v d="$depth" -v fi="$fi" -v ii="$ii" -v fc="$fc" -v fl="$fl" -v ip="$ip" 'BEGIN {
        printf "%6d %10.0f %10.0f %5.2fx %10.1f %10.1f %10.1f\n", d, fi, ii, ii / fi, fc, fl, ip }'
done
echo "ioscope's own curve (one run, every depth):"
"$io" disk "$f" --depths "$DEPTHS" --runtime "${RUNTIME}s" -q | grep -E '^(knee|queue) '
echo "fsync: ioscope --preset fsync against fio's etcd check, ${RUNTIME}s each (fdatasync, µs)"
printf '%-8s %10s %10s %10s %10s\n' tool syncs/s p50 p99 p99.9
fio_dir="$work/fio"
mkdir -p "$fio_dir"
fio --name=etcd --directory="$fio_dir" --rw=write --ioengine=sync --fdatasync=1 --size=22m \
    --bs=2300 --time_based --runtime="$RUNTIME" --output-format=json 2>/dev/null |
    jq -r '.jobs[0] | "fio \(.write.iops) \(.sync.lat_ns.percentile["50.000000"] / 1000) \(.sync.lat_ns.percentile["99.000000"] / 1000) \(.sync.lat_ns.percentile["99.900000"] / 1000)"' |
    awk '{ printf "%-8s %10.0f %10.1f %10.1f %10.1f\n", $1, $2, $3, $4, $5 }'
{ "$io" disk "$work" --preset fsync --size 22m --runtime "${RUNTIME}s" --json -q || true; } |
    jq -r '"ioscope \(.syncs_per_second) \(.fdatasync_latency_us.p50) \(.fdatasync_latency_us.p99) \(.fdatasync_latency_us.p99_9)"' |
    awk '{ printf "%-8s %10.0f %10.1f %10.1f %10.1f\n", $1, $2, $3, $4, $5 }'
