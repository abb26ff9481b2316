#!/usr/bin/env bash
# bench/mpi.sh — IOR beside `ioscope mpi` on the same layouts and sizes, in one run (issue 28):
# file per rank, shared contiguous and shared strided, 2 and 4 ranks, 1 MiB transfers, fsync
# in the writes (IOR -e), each repeat's write into new files (IOR's default; ioscope's now),
# the page cache dropped (echo 3 > /proc/sys/vm/drop_caches, root) before every write and
# every cold read. `bench/mpi.sh scaling` runs the older scaling table (bench/mpi_scaling.sh).
#
#   bench/mpi.sh                        64 MiB per rank, 3 repeats
#   SIZE=128m REPEAT=5 bench/mpi.sh
#   IOR=/path/to/ior IOSCOPE=/path/to/ioscope-with-mpi bench/mpi.sh
#
# Each repeat, per tool: drop caches, write (IOR: -w -e -k; ioscope: mpi write --keep), drop
# caches, read it back (IOR: -r -C -k; ioscope: mpi read --existing, cold and verified),
# remove the files. Figures are medians over the repeats, MiB/s:
#   IOR        IOR's bwMiB (its aggregate: all bytes / (latest close end - earliest open start))
#   ioscope    ioscope's IOR-formula aggregate (the same definition, from its own clock)
#   ratio      ioscope / IOR (target 0.9-1.1)
#   recomputed ioscope's IOR formula recomputed here from its JSON (every rank's start and end),
#              beside its own figure: "dev" is the largest relative difference (target 2%)
#   slowest    ioscope's slowest-rank aggregate (all bytes / the slowest rank's transfer)
# Exits 2 when it cannot run (no mpirun, no IOR, no jq).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = scaling ]; then
    exec bench/mpi_scaling.sh
fi
SIZE=${SIZE:-64m}
REPEAT=${REPEAT:-3}
IOR=${IOR:-$(command -v ior || echo /work/tools/bin/ior)}
command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin libopenmpi-dev"; exit 2; }
command -v jq >/dev/null || { echo "jq missing: apt-get install jq"; exit 2; }
[ -x "$IOR" ] || { echo "IOR missing: build it from https://github.com/hpc/ior (./bootstrap && ./configure && make) and set IOR=path"; exit 2; }
if [ -z "${IOSCOPE:-}" ]; then
    cargo build --release --quiet --features mpi
    IOSCOPE=$PWD/target/release/ioscope
fi
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "$PWD/.bench-mpi-XXXXXX")
trap 'rm -rf "$work"' EXIT
bytes=$(python3 -c "
import re,sys
m=re.fullmatch(r'(\d+)([kmg]?)', sys.argv[1].lower())
print(int(m[1]) * {'':1,'k':1<<10,'m':1<<20,'g':1<<30}[m[2]])" "$SIZE")
segments=$((bytes >> 20))

drop() {
    sync
    if [ -w /proc/sys/vm/drop_caches ]; then
        echo 3 >/proc/sys/vm/drop_caches
    else
        echo "not root: page cache not dropped (ioscope's cold read still evicts and proves it)" >&2
    fi
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

ior_layout() { # IOR's flags for a layout: -b per rank, -s segments (strided: 1 MiB blocks)
    case $1 in
        file-per-rank) echo "-F -b $bytes -s 1" ;;
        shared-contiguous) echo "-b $bytes -s 1" ;;
        shared-strided) echo "-b 1m -s $segments" ;;
    esac
}

ior_run() { # np layout access(-w -e | -r -C) -> bwMiB
    local np=$1 layout=$2
    shift 2
    # shellcheck disable=SC2046
    mpirun --oversubscribe -np "$np" "$IOR" -a POSIX "$@" -k -t 1m $(ior_layout "$layout") -i 1 \
        -o "$work/ior.dat" -O summaryFormat=JSON -O "summaryFile=$work/ior.json" >/dev/null
    jq '.tests[0].Results[0] | if type == "array" then .[0] else . end | .bwMiB' "$work/ior.json"
}

# ioscope's IOR figure, the same recomputed from its ranks' times, and the slowest-rank one.
ioscope_figures() {
    jq -r '.results[0].repeats[0] as $r
        | ($r.aggregate.total_bytes / (([$r.ranks[].times.end_seconds] | max) - ([$r.ranks[].times.start_seconds] | min))) as $re
        | "\($r.aggregate.ior_bytes_per_second / 1048576) \($re / 1048576) \($r.aggregate.bytes_per_second / 1048576)"' "$1"
}

ioscope_run() { # np layout -> "write: ior recomputed slowest" and "read: ..." lines
    local np=$1 layout=$2
    drop
    mpirun --oversubscribe -np "$np" "$IOSCOPE" mpi write "$work" --layout "$layout" --size "$bytes" \
        --block-size 1m --repeat 1 --keep --seed 1 --min-free 0 --json >"$work/w.json"
    local name
    name=$(jq -r .kept.name "$work/w.json")
    drop
    mpirun --oversubscribe -np "$np" "$IOSCOPE" mpi read "$work" --layout "$layout" --size "$bytes" \
        --block-size 1m --repeat 1 --existing "$name" --seed 1 --cache cold --min-free 0 --json >"$work/r.json"
    rm -f "$work/$name" "$work/$name"-*
    echo "$(ioscope_figures "$work/w.json") $(ioscope_figures "$work/r.json")"
}

printf '%s per rank, 1 MiB transfers, %s repeats, fsync in writes, caches dropped; MiB/s (medians)\n' "$SIZE" "$REPEAT"
printf '%-3s %-18s | %8s %8s %6s %9s %6s %8s | %8s %8s %6s %9s %6s %8s\n' \
    np layout "IOR w" "ios w" ratio "recomp w" dev "slow w" "IOR r" "ios r" ratio "recomp r" dev "slow r"
for np in 2 4; do
    for layout in file-per-rank shared-contiguous shared-strided; do
        iw=() ir=() sw=() sr=() rw=() rr=() lw=() lr=() dev=0
        for _ in $(seq "$REPEAT"); do
            drop
            iw+=("$(ior_run "$np" "$layout" -w -e)")
            drop
            ir+=("$(ior_run "$np" "$layout" -r -C)")
            rm -f "$work"/ior.dat*
            read -r a b c d e f <<<"$(ioscope_run "$np" "$layout")"
            sw+=("$a") rw+=("$b") lw+=("$c") sr+=("$d") rr+=("$e") lr+=("$f")
            dev=$(python3 -c "import sys; v=[float(x) for x in sys.argv[2:]]; print(max(float(sys.argv[1]), abs(v[0]/v[1]-1), abs(v[2]/v[3]-1)))" "$dev" "$a" "$b" "$d" "$e")
        done
        mw=$(median "${iw[@]}") mr=$(median "${ir[@]}") ow=$(median "${sw[@]}") or=$(median "${sr[@]}")
        awk -v np="$np" -v l="$layout" -v iw="$mw" -v ow="$ow" -v rw="$(median "${rw[@]}")" -v lw="$(median "${lw[@]}")" \
            -v ir="$mr" -v or="$or" -v rr="$(median "${rr[@]}")" -v lr="$(median "${lr[@]}")" -v dev="$dev" \
            'BEGIN { printf "%-3s %-18s | %8.1f %8.1f %5.2fx %9.1f %5.2f%% %8.1f | %8.1f %8.1f %5.2fx %9.1f %5.2f%% %8.1f\n",
                np, l, iw, ow, ow / iw, rw, 100 * dev, lw, ir, or, or / ir, rr, 100 * dev, lr }'
    done
done
