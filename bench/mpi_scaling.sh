#!/usr/bin/env bash
# bench/mpi_scaling.sh (also `bench/mpi.sh scaling`) — how the aggregate of `ioscope mpi` grows with the ranks on this machine
# (issue 15): 1, 2 and 4 ranks, each beside one process (`ioscope run`) moving the same
# total, write (fsync included) then a cold read, in one run.
#
#   bench/mpi_scaling.sh                     512 MiB in all, 3 repeats
#   TOTAL=1g REPEAT=5 bench/mpi_scaling.sh
#   IOSCOPE=/path/to/ioscope-with-mpi bench/mpi_scaling.sh
#
# mpi columns: the median over the repeats of the aggregate (all ranks' bytes / the slowest
# rank's time), reads by the next rank, cold (evicted, residency proven 0). run columns:
# `ioscope run -w 1m` (fsync included) then `ioscope run -r 1m` after fdatasync + fadvise
# DONTNEED, medians of REPEAT. MiB/s. Exits 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
TOTAL=${TOTAL:-512m}
REPEAT=${REPEAT:-3}
if [ -z "${IOSCOPE:-}" ]; then
    cargo build --release --quiet --features mpi
    IOSCOPE=$PWD/target/release/ioscope
fi
command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin libopenmpi-dev"; exit 2; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "$PWD/.bench-mpi-XXXXXX")
trap 'rm -rf "$work"' EXIT
total=$(python3 -c "
import re,sys
m=re.fullmatch(r'(\d+)([kmg]?)', sys.argv[1].lower())
print(int(m[1]) * {'':1,'k':1<<10,'m':1<<20,'g':1<<30}[m[2]])" "$TOTAL")
mib=$((total >> 20))

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

single() { # one process: write the total, then read it cold
    local w=() r=()
    for _ in $(seq "$REPEAT"); do
        rm -f "$work/single"
        w+=("$("$IOSCOPE" run "$work/single" -w 1m "$mib" --min-free 0 --json | jq '.bytes_per_second / 1048576')")
        python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fdatasync(fd); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)" "$work/single"
        r+=("$("$IOSCOPE" run "$work/single" -r 1m --json | jq '.bytes_per_second / 1048576')")
    done
    rm -f "$work/single"
    echo "$(median "${w[@]}") $(median "${r[@]}")"
}

multi() { # ranks layout
    local np=$1 layout=$2 size=$((total / $1))
    mpirun --oversubscribe -np "$np" "$IOSCOPE" mpi both "$work" --layout "$layout" \
        --size "$size" --block-size 1m --repeat "$REPEAT" --cache cold --min-free 0 --json |
        jq -r '[.results[] | .bytes_per_second.median / 1048576] | map(tostring) | join(" ")'
}

echo "ioscope mpi scaling: $TOTAL in all, $REPEAT repeats, $(nproc) CPUs, $(uname -r)"
printf '%-6s %12s %12s %12s %12s %12s %12s\n' ranks "run write" "N-N write" "N-1 write" \
    "run read" "N-N read" "N-1 read"
for np in 1 2 4; do
    read -r sw sr <<<"$(single)"
    read -r nw nr <<<"$(multi "$np" file-per-rank)"
    read -r sw1 sr1 <<<"$(multi "$np" shared-strided)"
    printf '%-6s %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f\n' "$np" "$sw" "$nw" "$sw1" "$sr" "$nr" "$sr1"
done
