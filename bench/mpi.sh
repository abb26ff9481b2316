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

printf '%s per rank, 1 MiB transfers, %s repeats (IOR first in odd repeats, ioscope first in even), fsync in writes, caches dropped; MiB/s (medians)\n' "$SIZE" "$REPEAT"
printf '%-3s %-18s | %8s %8s %6s %6s %13s %6s %8s | %8s %8s %6s %6s %13s %8s\n' \
    np layout "IOR w" "ios w" ratio paired "IOR w range" dev "slow w" "IOR r" "ios r" ratio paired "IOR r range" "slow r"
for np in 2 4; do
    for layout in file-per-rank shared-contiguous shared-strided; do
        iw=() ir=() sw=() sr=() rw=() rr=() lw=() lr=() dev=0
        for k in $(seq "$REPEAT"); do
            # Alternate which tool goes first: the disk and the host's cache drift within
            # a minute, and a fixed order would hand that drift to one tool.
            if [ $((k % 2)) = 0 ]; then
                read -r a b c d e f <<<"$(ioscope_run "$np" "$layout")"
            fi
            drop
            iw+=("$(ior_run "$np" "$layout" -w -e)")
            drop
            ir+=("$(ior_run "$np" "$layout" -r -C)")
            rm -f "$work"/ior.dat*
            if [ $((k % 2)) = 1 ]; then
                read -r a b c d e f <<<"$(ioscope_run "$np" "$layout")"
            fi
            sw+=("$a") rw+=("$b") lw+=("$c") sr+=("$d") rr+=("$e") lr+=("$f")
            dev=$(python3 -c "import sys; v=[float(x) for x in sys.argv[2:]]; print(max(float(sys.argv[1]), abs(v[0]/v[1]-1), abs(v[2]/v[3]-1)))" "$dev" "$a" "$b" "$d" "$e")
        done
        # ratio: of the medians; paired: the median of each repeat's own ratio (the two
        # tools run in the same minute); range: IOR's own repeats, min-max (the noise floor).
        python3 - "$np" "$layout" "$dev" "${iw[*]}" "${sw[*]}" "${rw[*]}" "${lw[*]}" "${ir[*]}" "${sr[*]}" "${rr[*]}" "${lr[*]}" <<'PY'
import statistics as st, sys
np_, layout, dev = sys.argv[1], sys.argv[2], float(sys.argv[3])
iw, sw, rw, lw, ir, sr, rr, lr = ([float(x) for x in a.split()] for a in sys.argv[4:12])
def part(ior, ios, slow):
    m, o = st.median(ior), st.median(ios)
    paired = st.median([b / a for a, b in zip(ior, ios)])
    rng = f"{min(ior):.0f}-{max(ior):.0f}"
    return m, o, o / m, paired, rng, st.median(slow)
w, r = part(iw, sw, lw), part(ir, sr, lr)
print(f"{np_:<3} {layout:<18} | {w[0]:8.1f} {w[1]:8.1f} {w[2]:5.2f}x {w[3]:5.2f}x {w[4]:>13} {100 * dev:5.2f}% {w[5]:8.1f} | "
      f"{r[0]:8.1f} {r[1]:8.1f} {r[2]:5.2f}x {r[3]:5.2f}x {r[4]:>13} {r[5]:8.1f}")
PY
    done
done
