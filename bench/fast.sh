#!/usr/bin/env bash
# bench/fast.sh — `ioscope fast` against the memory bound, cat, dd and fio, in one run.
#
#   bench/fast.sh [FILE]          default: a 2 GiB scratch file in the current directory
#   RUNS=5 SMALL_RUNS=100 bench/fast.sh
#   STATIC=0 bench/fast.sh        time the plain (dynamically linked) build instead
#
# Contenders alternate within each round; each figure is the median of RUNS runs.
# Warm: the file is read by cat first (fully cached); cold: it is evicted before every run
# (dd iflag=nocache count=0, i.e. fadvise DONTNEED; no root needed).
# Rates: `fast`, cat and dd by whole-process wall time; fio by its own io_bytes/runtime
# (setup excluded, which favours fio); memxor by its own timing of an in-RAM XOR.
# Targets (issue 4): warm fast >= 0.9x memxor (threads = cores) and >= 1.5x cat;
# cold fast >= 0.95x the best fio shape and >= 1.5x dd bs=1M; small files and /proc
# no slower than cat. Exits 1 when a target is missed, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
SMALL_RUNS=${SMALL_RUNS:-100}
# The statically linked build (see .cargo/config.toml): it starts ~0.6 ms sooner, which the
# small-file targets measure. STATIC=0 times the plain build, target/release/ioscope.
HOST=$(rustc -vV | sed -n 's/^host: //p')
TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
if [ "${STATIC:-1}" = 1 ]; then
    RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet --target "$HOST"
    B=$TARGET_DIR/$HOST/release/ioscope
else
    cargo build --release --quiet
    B=$TARGET_DIR/release/ioscope
fi
CORES=$(nproc)

FILE=${1:-}
SCRATCH=""
cleanup() { [ -n "$SCRATCH" ] && rm -f "$SCRATCH" "$SCRATCH.small"; rm -rf "${TMPB:-}"; }
trap cleanup EXIT INT TERM
TMPB=$(mktemp -d)
if [ -z "$FILE" ]; then
    SCRATCH=$PWD/.ioscope-bench-$$
    "$B" run "$SCRATCH" -w 4m 512 >/dev/null
    FILE=$SCRATCH
fi
SIZE=$(stat -c %s "$FILE")
SMALL=${SCRATCH:-$TMPB/small}.small
head -c 65536 "$FILE" > "$SMALL"

# wall SECONDS of a command, output discarded. $EPOCHREALTIME (bash 5) reads the clock
# without forking, so the figure holds only the command (date +%s%N would add a process).
wall() { local t0 t1; t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; t1=$EPOCHREALTIME; awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'; }
evict() { dd if="$1" iflag=nocache count=0 status=none; }
warm() { cat "$1" >/dev/null; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
gibps() { awk -v b="$SIZE" -v s="$1" 'BEGIN {printf "%.3f", b/s/2^30}'; }
record() { echo "$2" >> "$TMPB/$1"; }
med() { median < "$TMPB/$1"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $CORES cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r)"
echo "file:    $FILE ($SIZE bytes), $(df -T "$FILE" | awk 'NR==2 {print $2, $1}'), $RUNS runs per contender"
echo "xor:     $("$B" fast "$FILE")"

# ---- memory bound
MEMXOR=""
KIT=${IOSCOPE_KIT:-../shared/kit}
if [ -f "$KIT/memxor.c" ] && command -v gcc >/dev/null; then
    gcc -O3 -march=native -pthread -o "$TMPB/memxor" "$KIT/memxor.c"
    MIB=$(( (SIZE + 1048575) / 1048576 ))
    "$TMPB/memxor" xor "$MIB" "$CORES" "$RUNS" | awk '/^xor/ {for (i=1;i<=NF;i++) if ($i ~ /^gibps=/) {sub("gibps=","",$i); print $i}}' > "$TMPB/memxor_rates"
    MEMXOR=$(med memxor_rates)
else
    echo "note: memxor not built (needs gcc and $KIT/memxor.c; set IOSCOPE_KIT)"
fi

# ---- warm: fast and cat, alternating
warm "$FILE"
for r in $(seq "$RUNS"); do
    record warm_fast "$(gibps "$(wall "$B" fast "$FILE")")"
    record warm_cat "$(gibps "$(wall cat "$FILE")")"
done
echo "warm engine chosen: $("$B" fast "$FILE" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["engine"], "-", d["reason"])')"

# ---- cold: fast, dd and every fio shape, alternating, evicted before each run
FIO_SHAPES=()
if ! command -v fio >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get install -y -qq fio >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq fio >/dev/null 2>&1)) || true
fi
if command -v fio >/dev/null; then
    for eng in io_uring libaio; do for bs in 1M 4M; do for qd in 8 32; do for nj in 1 2; do
        FIO_SHAPES+=("$eng:$bs:$qd:$nj")
    done; done; done; done
else
    echo "note: fio not installed: the cold fio target is not checked"
fi
fio_rate() { # own figures: read io_bytes / runtime, all jobs (numjobs split the file in halves)
    IFS=: read -r eng bs qd nj <<< "$1"
    local part=$(( SIZE / nj / 1048576 * 1048576 ))
    fio --name=bench --filename="$FILE" --rw=read --bs="$bs" --ioengine="$eng" --direct=1 --iodepth="$qd" \
        --numjobs="$nj" --size="$part" --offset_increment="$part" --group_reporting --invalidate=0 --readonly \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index("{"):])["jobs"]; b=sum(x["read"]["io_bytes"] for x in j); s=max(x["read"]["runtime"] for x in j)/1000; print("%.3f" % (b/s/2**30))'
}
for r in $(seq "$RUNS"); do
    evict "$FILE"; record cold_fast "$(gibps "$(wall "$B" fast "$FILE")")"
    evict "$FILE"; record cold_dd "$(gibps "$(wall dd if="$FILE" of=/dev/null bs=1M)")"
    for shape in "${FIO_SHAPES[@]}"; do
        evict "$FILE"; record "fio_$shape" "$(fio_rate "$shape")"
    done
done
evict "$FILE"
echo "cold engine chosen: $("$B" fast "$FILE" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["engine"], "-", d["reason"])')"

# ---- small files and /proc: whole-process time, alternating
for r in $(seq "$SMALL_RUNS"); do
    record small_fast "$(wall "$B" fast "$SMALL")"
    record small_cat "$(wall cat "$SMALL")"
    record proc_fast "$(wall "$B" fast /proc/cpuinfo)"
    record proc_cat "$(wall cat /proc/cpuinfo)"
done

# ---- report
FAIL=0
check() { # name value target op(ge|le) unit
    local verdict
    verdict=$(awk -v v="$2" -v t="$3" -v op="$4" 'BEGIN {ok = (op == "ge") ? (v >= t) : (v <= t); print ok ? "ok  " : "MISS"}')
    [ "$verdict" = "MISS" ] && FAIL=1
    printf '%s %-52s %10s %s (target %s %s)\n' "$verdict" "$1" "$2" "$5" "$([ "$4" = ge ] && echo '>=' || echo '<=')" "$3"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
echo
printf '%-14s %s\n' "warm fast" "$(med warm_fast) GiB/s" "warm cat" "$(med warm_cat) GiB/s" "cold fast" "$(med cold_fast) GiB/s" "cold dd 1M" "$(med cold_dd) GiB/s"
[ -n "$MEMXOR" ] && printf '%-14s %s\n' "memxor x$CORES" "$MEMXOR GiB/s (in-RAM XOR, anonymous memory)"
BEST_FIO=0; BEST_SHAPE=""
for shape in "${FIO_SHAPES[@]}"; do
    m=$(med "fio_$shape")
    printf '%-14s %s\n' "fio $shape" "$m GiB/s"
    if awk -v a="$m" -v b="$BEST_FIO" 'BEGIN {exit !(a > b)}'; then BEST_FIO=$m; BEST_SHAPE=$shape; fi
done
echo
[ -n "$MEMXOR" ] && check "warm: fast / memxor" "$(ratio "$(med warm_fast)" "$MEMXOR")" 0.9 ge x
check "warm: fast / cat" "$(ratio "$(med warm_fast)" "$(med warm_cat)")" 1.5 ge x
[ -n "$BEST_SHAPE" ] && check "cold: fast / best fio ($BEST_SHAPE)" "$(ratio "$(med cold_fast)" "$BEST_FIO")" 0.95 ge x
check "cold: fast / dd bs=1M" "$(ratio "$(med cold_fast)" "$(med cold_dd)")" 1.5 ge x
check "64 KiB file: fast time / cat time" "$(ratio "$(med small_fast)" "$(med small_cat)")" 1.0 le x
check "/proc/cpuinfo: fast time / cat time" "$(ratio "$(med proc_fast)" "$(med proc_cat)")" 1.0 le x
exit $FAIL
