#!/usr/bin/env bash
# bench/mpi.sh — IOR beside `ioscope mpi` on the same layouts and sizes, in one run (issue 28):
# file per rank, shared contiguous and shared strided, 2 and 4 ranks, 1 MiB transfers, fsync
# in the writes (IOR -e), each repeat's write into new files (IOR's default; ioscope's now),
# the page cache dropped (echo 3 > /proc/sys/vm/drop_caches, root) before every write and
# every cold read. `bench/mpi.sh scaling` runs the older scaling table (bench/mpi_scaling.sh).
#
#   bench/mpi.sh                        64 MiB per rank, 3 repeats, 2 read pairs each
#   SIZE=256m REPEAT=4 PAIRS=3 bench/mpi.sh
#   IOR=/path/to/ior IOSCOPE=/path/to/ioscope-with-mpi bench/mpi.sh
#
# Each repeat: both tools write new files (IOR: -w -e; ioscope: mpi write --keep), caches
# dropped before each, which goes first alternating; then both read ioscope's files (IOR
# through hard links under its names: -r -C; ioscope: mpi read --existing, cold and
# verified), PAIRS times each, caches dropped before every read, order alternating. Figures
# are medians, MiB/s:
#   IOR        IOR's bwMiB (its aggregate: all bytes / (latest close end - earliest open start))
#   ios        ioscope's IOR-formula aggregate (the same definition, from its own clock)
#   ratio      ios / IOR of the medians (target 0.9-1.1); paired: the median of the ratios of
#              runs made side by side
#   range      each tool's own runs, min-max: the machine's noise
#   A/B        how many pairs (ioscope beside IOR, same minute) are within 0.9-1.1x of each other;
#   IOR² ios²  the same for each tool against its own next run (A/A): the noise floor
#   dev        ioscope's IOR formula recomputed here from its JSON (every rank's start and
#              end) against its own figure, the largest relative difference (target 2%)
#   slow       ioscope's slowest-rank aggregate (all bytes / the slowest rank's transfer)
# Exits 2 when it cannot run (no mpirun, no IOR, no jq).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = scaling ]; then
    exec bench/mpi_scaling.sh
fi
SIZE=${SIZE:-64m}
REPEAT=${REPEAT:-3}
PAIRS=${PAIRS:-2}
SETTLE=${SETTLE:-3}
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

# Drops the page cache, then waits SETTLE seconds (default 3) before the next run. On a VM
# whose freed memory goes back to the host within seconds (this one: MACHINE.md), a read
# or write that starts soon after the drop still finds the freed pages backed and runs at
# up to 3x the speed of one that starts later: without the wait, the tool that takes
# longer to reach its first call measured 0.6-0.9x the other on the very same file
# (ioscope, 12 pairs per cell). With it both pay the same re-backing, and agree on one rank
# (960 against 952 MiB/s, 4 pairs) — but re-backing is erratic, so the spread grows.
drop() {
    sync
    if [ -w /proc/sys/vm/drop_caches ]; then
        echo 3 >/proc/sys/vm/drop_caches
    else
        echo "not root: page cache not dropped (ioscope's cold read still evicts and proves it)" >&2
    fi
    sleep "$SETTLE"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

ior_layout() { # IOR's flags for a layout: -b per rank, -s segments (strided: 1 MiB blocks)
    case $1 in
        file-per-rank) echo "-F -b $bytes -s 1" ;;
        shared-contiguous) echo "-b $bytes -s 1" ;;
        shared-strided) echo "-b 1m -s $segments" ;;
    esac
}

ior_run() { # np layout file access(-w -e | -r -C) -> bwMiB
    local np=$1 layout=$2 file=$3
    shift 3
    # shellcheck disable=SC2046
    mpirun --oversubscribe -np "$np" "$IOR" -a POSIX "$@" -k -t 1m $(ior_layout "$layout") -i 1 \
        -o "$file" -O summaryFormat=JSON -O "summaryFile=$work/ior.json" >/dev/null
    jq '.tests[0].Results[0] | if type == "array" then .[0] else . end | .bwMiB' "$work/ior.json"
}

# ioscope's IOR figure, the same recomputed from its ranks' times, and the slowest-rank one.
ioscope_figures() {
    jq -r '.results[0].repeats[0] as $r
        | ($r.aggregate.total_bytes / (([$r.ranks[].times.end_seconds] | max) - ([$r.ranks[].times.start_seconds] | min))) as $re
        | "\($r.aggregate.ior_bytes_per_second / 1048576) \($re / 1048576) \($r.aggregate.bytes_per_second / 1048576)"' "$1"
}

ioscope_write() { # np layout -> "ior recomputed slowest"; leaves $work/w.json and the files
    drop
    mpirun --oversubscribe -np "$1" "$IOSCOPE" mpi write "$work" --layout "$2" --size "$bytes" \
        --block-size 1m --repeat 1 --keep --seed 1 --min-free 0 --json >"$work/w.json"
    ioscope_figures "$work/w.json"
}

ioscope_read() { # np layout name -> "ior recomputed slowest"
    drop
    mpirun --oversubscribe -np "$1" "$IOSCOPE" mpi read "$work" --layout "$2" --size "$bytes" \
        --block-size 1m --repeat 1 --existing "$3" --seed 1 --cache cold --min-free 0 --json >"$work/r.json"
    ioscope_figures "$work/r.json"
}

printf '%s per rank, 1 MiB transfers, %s repeats, %s read pairs per repeat, fsync in writes, caches dropped %s s before each run; MiB/s (medians)\n' \
    "$SIZE" "$REPEAT" "$PAIRS" "$SETTLE"
printf '%-3s %-18s | %8s %8s %6s %6s %11s %11s %5s %5s %5s %6s %8s | %8s %8s %6s %6s %11s %11s %5s %5s %5s %8s\n' \
    np layout "IOR w" "ios w" ratio paired "IOR range" "ios range" "A/B" "IOR²" "ios²" dev "slow w" \
    "IOR r" "ios r" ratio paired "IOR range" "ios range" "A/B" "IOR²" "ios²" "slow r"
for np in 2 4; do
    for layout in file-per-rank shared-contiguous shared-strided; do
        iw=() sw=() rw=() lw=() ir=() sr=() rr=() lr=() dev=0
        for k in $(seq "$REPEAT"); do
            # Writes: each tool into new files, which one goes first alternating (the disk
            # and the host's cache drift within a minute; a fixed order hands that to one).
            if [ $((k % 2)) = 0 ]; then read -r a b c <<<"$(ioscope_write "$np" "$layout")"; fi
            drop
            iw+=("$(ior_run "$np" "$layout" "$work/ior.dat" -w -e)")
            rm -f "$work"/ior.dat*
            if [ $((k % 2)) = 1 ]; then read -r a b c <<<"$(ioscope_write "$np" "$layout")"; fi
            sw+=("$a") rw+=("$b") lw+=("$c")
            dev=$(python3 -c "import sys; print(max(float(sys.argv[1]), abs(float(sys.argv[2]) / float(sys.argv[3]) - 1)))" "$dev" "$a" "$b")
            # Reads: both tools read the very file ioscope wrote (hard links under IOR's
            # names), so they differ in nothing but themselves, not in how two writers laid
            # out their files; cold each time (caches dropped), in pairs whose order
            # alternates. A read before the first pair puts the host's cache in the state
            # every later read finds: on this VM (a virtual disk the host caches) the first
            # cold read of a file just written ran up to 2x slower than the next, whatever
            # the tool.
            name=$(jq -r .kept.name "$work/w.json")
            if [ "$layout" = file-per-rank ]; then
                for r in $(seq 0 $((np - 1))); do ln "$work/$name-$r" "$(printf '%s/same.dat.%08d' "$work" "$r")"; done
            else
                ln "$work/$name" "$work/same.dat"
            fi
            drop
            cat "$work/$name"* >/dev/null
            for j in $(seq "$PAIRS"); do
                if [ $(((k + j) % 2)) = 0 ]; then read -r d e f <<<"$(ioscope_read "$np" "$layout" "$name")"; fi
                drop
                ir+=("$(ior_run "$np" "$layout" "$work/same.dat" -r -C)")
                if [ $(((k + j) % 2)) = 1 ]; then read -r d e f <<<"$(ioscope_read "$np" "$layout" "$name")"; fi
                sr+=("$d") rr+=("$e") lr+=("$f")
                dev=$(python3 -c "import sys; print(max(float(sys.argv[1]), abs(float(sys.argv[2]) / float(sys.argv[3]) - 1)))" "$dev" "$d" "$e")
            done
            rm -f "$work/$name" "$work/$name"-* "$work"/same.dat*
        done
        # ratio: of the medians; paired: the median of each pair's own ratio (the two tools
        # in the same minute); ranges: each tool's own runs, min-max. in: how many pairs of
        # runs fall within 0.9-1.1x of each other, for ioscope against IOR (A/B) and for
        # each tool against its own next run (A/A, the same spacing): the machine's noise
        # floor, what any A/B share has to be read against.
        python3 - "$np" "$layout" "$dev" "${iw[*]}" "${sw[*]}" "${lw[*]}" "${ir[*]}" "${sr[*]}" "${lr[*]}" <<'PY'
import statistics as st, sys
np_, layout, dev = sys.argv[1], sys.argv[2], float(sys.argv[3])
iw, sw, lw, ir, sr, lr = ([float(x) for x in a.split()] for a in sys.argv[4:10])
rng = lambda v: f"{min(v):.0f}-{max(v):.0f}"
inside = lambda rs: f"{sum(0.9 <= r <= 1.1 for r in rs)}/{len(rs)}"
aa = lambda v: [b / a for a, b in zip(v, v[1:])]
def part(ior, ios):
    m, o = st.median(ior), st.median(ios)
    ab = [b / a for a, b in zip(ior, ios)]
    return (f"{m:8.1f} {o:8.1f} {o / m:5.2f}x {st.median(ab):5.2f}x {rng(ior):>11} {rng(ios):>11} "
            f"{inside(ab):>5} {inside(aa(ior)):>5} {inside(aa(ios)):>5}")
print(f"{np_:<3} {layout:<18} | {part(iw, sw)} {100 * dev:5.2f}% {st.median(lw):8.1f} | "
      f"{part(ir, sr)} {st.median(lr):8.1f}")
PY
    done
done
