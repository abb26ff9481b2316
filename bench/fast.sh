#!/usr/bin/env bash
# bench/fast.sh — `ioscope fast` against every other reader, on two kinds of file, warm and
# cold, in one run: the memory bound, cat, dd, fio, two simple C readers, and fast's own
# engines forced with --engine. Prints each median, its ratio to fast, and checks issue
# 13's targets.
#
#   bench/fast.sh                 two 2 GiB scratch files in the current directory
#   GIB=4 RUNS=5 COLD_RUNS=3 SMALL_RUNS=100 bench/fast.sh
#   IOSCOPE=/path/to/ioscope BIN=/dir/with/memxor,preadx,mmapx bench/fast.sh
#                                 no cargo or gcc needed (a lent machine: carry them)
#   STATIC=0 bench/fast.sh        time the plain (dynamically linked) build
#
# The files: "small" is written the ordinary way (head -c from /dev/urandom: small pieces,
# so the page cache holds it in 4 KiB pages); "large" is written by `ioscope run -w 4m`
# (4 MiB pieces: large folios). Each is read warm right after it is written, as a user who
# just made it would, and cold after (evicted before every run with fadvise DONTNEED
# through dd iflag=nocache: no root needed).
# Contenders alternate within each round, each round starting one contender later; each
# figure is the median. Rates: fast, cat, dd
# and the C readers by whole-process wall time; fio by its own io_bytes/runtime (setup
# excluded, which favours fio); memxor by its own timing of an in-RAM XOR.
# Exits 1 when a target is missed, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
GIB=${GIB:-2}
RUNS=${RUNS:-5}
COLD_RUNS=${COLD_RUNS:-3}
SMALL_RUNS=${SMALL_RUNS:-100}
CORES=$(nproc)

if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    # The statically linked build starts ~0.6 ms sooner, which the small-file targets see.
    HOST=$(rustc -vV | sed -n 's/^host: //p')
    TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
    if [ "${STATIC:-1}" = 1 ]; then
        RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --quiet --target "$HOST"
        B=$TARGET_DIR/$HOST/release/ioscope
    else
        cargo build --release --quiet
        B=$TARGET_DIR/release/ioscope
    fi
fi

TMPB=$(mktemp -d)
FILES=()
cleanup() { rm -f "${FILES[@]}"; rm -rf "$TMPB"; }
trap cleanup EXIT INT TERM

# ---- the C tools: prebuilt in $BIN, else compiled here
BIN=${BIN:-}
KIT=${IOSCOPE_KIT:-../shared/kit}
tool() { # name source
    if [ -n "$BIN" ] && [ -x "$BIN/$1" ]; then echo "$BIN/$1"; return; fi
    if [ -f "$2" ] && command -v gcc >/dev/null; then
        gcc -O3 -march=native -pthread -o "$TMPB/$1.new" "$2" && mv "$TMPB/$1.new" "$TMPB/$1" && echo "$TMPB/$1" && return
    fi
    echo ""
}
MEMXOR=$(tool memxor "$KIT/memxor.c")
PREADX=$(tool preadx bench/preadx.c)
MMAPX=$(tool mmapx bench/mmapx.c)
[ -n "$PREADX" ] && [ -n "$MMAPX" ] || { echo "fast.sh: cannot build bench/preadx.c and bench/mmapx.c (gcc?)" >&2; exit 2; }

FIO_SHAPES=()
if ! command -v fio >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get install -y -qq fio || (apt-get update -qq && apt-get install -y -qq fio)) >/dev/null 2>&1 || true
fi
if command -v fio >/dev/null; then
    FIO_SHAPES=(io_uring:1M:32:1 io_uring:4M:8:2 libaio:4M:8:1 libaio:1M:32:2)
else
    echo "note: fio not installed: cold readers without fio"
fi

# wall SECONDS of a command, output discarded. $EPOCHREALTIME (bash 5) reads the clock
# without forking, so the figure holds only the command.
wall() { local t0 t1; t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; t1=$EPOCHREALTIME; awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'; }
evict() { dd if="$1" iflag=nocache count=0 status=none; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
gibps() { awk -v b="$SIZE" -v s="$1" 'BEGIN {printf "%.3f", b/s/2^30}'; }
record() { echo "$2" >> "$TMPB/$1"; }
med() { median < "$TMPB/$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b > 0) ? a/b : 0}'; }
fio_rate() { # FILE SHAPE: own figures, read io_bytes / runtime, all jobs (numjobs split the file)
    IFS=: read -r eng bs qd nj <<< "$2"
    local part=$(( SIZE / nj / 1048576 * 1048576 ))
    fio --name=bench --filename="$1" --rw=read --bs="$bs" --ioengine="$eng" --direct=1 --iodepth="$qd" \
        --numjobs="$nj" --size="$part" --offset_increment="$part" --group_reporting --invalidate=0 --readonly \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index("{"):])["jobs"]; b=sum(x["read"]["io_bytes"] for x in j); s=max(x["read"]["runtime"] for x in j)/1000; print("%.3f" % (b/s/2**30))'
}
json_field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# Readers: NAME COMMAND..., the file is $F. fast's own engines are "engine:NAME".
WARM_READERS=(
    "fast|$B fast \$F"
    "engine:adaptive|$B fast \$F --engine adaptive"
    "engine:mmap|$B fast \$F --engine mmap"
    "engine:pread|$B fast \$F --engine pread"
    "cat|cat \$F"
    "dd bs=1M|dd if=\$F of=/dev/null bs=1M"
    "C pread 16 x 1 MiB|$PREADX \$F 16 1048576"
    "C pread 128 x 128 KiB|$PREADX \$F 128 131072"
    "C mmap $CORES thr, 128 KiB|$MMAPX \$F $CORES 131072"
)
COLD_READERS=(
    "fast|$B fast \$F"
    "engine:direct|$B fast \$F --engine direct"
    "engine:uring|$B fast \$F --engine uring"
    "engine:pread|$B fast \$F --engine pread --threads 16"
    "cat|cat \$F"
    "dd bs=1M|dd if=\$F of=/dev/null bs=1M"
    "C pread 16 x 1 MiB|$PREADX \$F 16 1048576"
)
key() { echo "$1" | tr -c 'a-zA-Z0-9\n' '_'; }
measure() { # PHASE KIND: alternate every reader, RUNS rounds
    local phase=$1 kind=$2 n r entry name cmd
    local -n readers=$( [ "$phase" = warm ] && echo WARM_READERS || echo COLD_READERS )
    n=$( [ "$phase" = warm ] && echo "$RUNS" || echo "$COLD_RUNS" )
    [ "$phase" = warm ] && cat "$F" >/dev/null
    local count=${#readers[@]} i
    for r in $(seq "$n"); do
        # Each round starts one reader later, so none always follows the same one (a
        # reader that mapped the whole file leaves work behind for the next process).
        for i in $(seq 0 $((count - 1))); do
            entry=${readers[$(( (i + r - 1) % count ))]}
            name=${entry%%|*}; cmd=${entry#*|}
            [ "$phase" = cold ] && evict "$F"
            record "$phase-$kind-$(key "$name")" "$(gibps "$(wall eval "$cmd")")"
        done
        if [ "$phase" = cold ]; then
            for shape in "${FIO_SHAPES[@]}"; do
                evict "$F"; record "$phase-$kind-$(key "fio $shape")" "$(fio_rate "$F" "$shape")"
            done
        fi
    done
    [ "$phase" = cold ] && evict "$F"
    "$B" fast "$F" --json > "$TMPB/choice-$phase-$kind.json" || true
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $CORES cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r)"
echo "ioscope: $("$B" --version)"
MEMXOR_RATE=""
if [ -n "$MEMXOR" ]; then
    "$MEMXOR" xor $((GIB * 1024)) "$CORES" "$RUNS" | awk '/^xor/ {for (i=1;i<=NF;i++) if ($i ~ /^gibps=/) {sub("gibps=","",$i); print $i}}' > "$TMPB/memxor_rates"
    MEMXOR_RATE=$(med memxor_rates)
    echo "memory bound: memxor, $CORES threads, $GIB GiB: $MEMXOR_RATE GiB/s"
else
    echo "note: memxor not built (needs gcc and $KIT/memxor.c, or BIN): its targets are not checked"
fi

FAIL=0
check() { # what value target op(ge|le)
    local verdict
    verdict=$(awk -v v="$2" -v t="$3" -v op="$4" 'BEGIN {ok = (op == "ge") ? (v >= t) : (v <= t); print ok ? "ok  " : "MISS"}')
    [ "$verdict" = "MISS" ] && FAIL=1
    printf '%s %-60s %9s (target %s %s)\n' "$verdict" "$1" "$2" "$([ "$4" = ge ] && echo '>=' || echo '<=')" "$3"
}
table() { # PHASE KIND: every reader's median and its ratio to fast
    local phase=$1 kind=$2 f name m fastm
    fastm=$(med "$phase-$kind-fast")
    printf '\n%s, %s file: GiB/s (median) and fast / reader\n' "$phase" "$kind"
    for f in "$TMPB"/"$phase-$kind"-*; do
        name=${f##*/$phase-$kind-}
        m=$(med "${f##*/}")
        printf '  %-28s %8s   %s\n' "$name" "$m" "$(ratio "$fastm" "$m")"
    done
    echo "  chosen: $(json_field 'd["engine"] + " - " + d["reason"]' < "$TMPB/choice-$phase-$kind.json")"
}
best_of() { # PATTERN...: the highest median among the matching keys
    local best=0 f m
    for f in "$@"; do [ -e "$f" ] || continue; m=$(med "${f##*/}"); best=$(awk -v a="$m" -v b="$best" 'BEGIN {print (a > b) ? a : b}'); done
    echo "$best"
}

for kind in small large; do
    F=$PWD/.ioscope-bench-$kind-$$
    FILES+=("$F")
    if [ "$kind" = small ]; then
        head -c $((GIB << 30)) /dev/urandom > "$F"
    else
        "$B" run "$F" -w 4m $((GIB * 256)) >/dev/null
    fi
    SIZE=$(stat -c %s "$F")
    measure warm "$kind"
    # Cold means the bytes come from the device: write back what head -c left dirty first,
    # or the first O_DIRECT reader pays for the writeback (fdatasync) inside its timing.
    sync "$F"
    measure cold "$kind"
    table warm "$kind"
    table cold "$kind"
    # what choosing costs, warm: the time before the run plus the per-chunk tests (summed
    # over threads, so divided by them), against the run
    SHARE=$(json_field '"%.3f" % (100 * (d["choice_seconds"] + d["tests"]["nanos"] / 1e9 / d["threads"]) / max(1e-9, d["seconds"]))' < "$TMPB/choice-warm-$kind.json")
    echo
    FASTW=$(med "warm-$kind-fast")
    OTHER=$(best_of "$TMPB"/warm-"$kind"-{cat,dd_bs_1M,C_*})
    WANT=1.1
    [ -n "$MEMXOR_RATE" ] && awk -v o="$OTHER" -v m="$MEMXOR_RATE" 'BEGIN {exit !(o >= 0.9 * m)}' && WANT=0.97
    check "warm $kind: fast / best other reader ($OTHER GiB/s)" "$(ratio "$FASTW" "$OTHER")" "$WANT" ge
    check "warm $kind: fast / best --engine" "$(ratio "$FASTW" "$(best_of "$TMPB"/warm-"$kind"-engine_*)")" 0.95 ge
    [ -n "$MEMXOR_RATE" ] && [ "$kind" = large ] && check "warm $kind: fast / memory bound" "$(ratio "$FASTW" "$MEMXOR_RATE")" 0.9 ge
    [ "$CORES" -ge 16 ] && [ "$kind" = small ] && check "warm $kind: fast GiB/s on $CORES cores" "$FASTW" 60 ge
    check "warm $kind: choosing (before + chunk tests), % of the run" "$SHARE" 2 le
    FASTC=$(med "cold-$kind-fast")
    check "cold $kind: fast / best reader of any kind" "$(ratio "$FASTC" "$(best_of "$TMPB"/cold-"$kind"-*)")" 0.97 ge
    check "cold $kind: fast / dd bs=1M" "$(ratio "$FASTC" "$(med "cold-$kind-dd_bs_1M")")" 1.1 ge
    rm -f "$F"
done

# ---- small files and /proc: whole-process time, alternating
SMALL=$TMPB/small
head -c 65536 /dev/urandom > "$SMALL"
for r in $(seq "$SMALL_RUNS"); do
    record small_fast "$(wall "$B" fast "$SMALL")"
    record small_cat "$(wall cat "$SMALL")"
    record proc_fast "$(wall "$B" fast /proc/cpuinfo)"
    record proc_cat "$(wall cat /proc/cpuinfo)"
done
echo
check "64 KiB file: fast time / cat time" "$(ratio "$(med small_fast)" "$(med small_cat)")" 1.0 le
check "/proc/cpuinfo: fast time / cat time" "$(ratio "$(med proc_fast)" "$(med proc_cat)")" 1.0 le
exit $FAIL
