#!/usr/bin/env bash
# What recording a series costs (issues 25 and 27): a warm 4 KiB read of one file with
# `ioscope run`, with and without `--series` (latency recording on in both, as by default),
# alternating so the machine's drift falls on both alike. Per side: the median rate, and
# the median CPU time (user + system) of the timed region, which a loaded machine disturbs
# less than the wall clock; the cost of each as a share and per call.
# Usage: bench/series.sh [SIZE_MIB] [ROUNDS] [BLOCK]; default 256, 31, 4k.
set -euo pipefail
SIZE=${1:-256}
ROUNDS=${2:-31}
BLOCK=${3:-4k}
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
work=$(mktemp -d "$here/.bench-series.XXXXXX")
trap 'rm -rf "$work"' EXIT
f=$work/f
head -c "$((SIZE << 20))" /dev/urandom >"$f"
cat "$f" >/dev/null # warm
# One line per run: bytes/s, CPU seconds of the timed region.
one() {
    "$io" run -r "$f" "$BLOCK" --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["elapsed"]
print(d["bytes_per_second"], e["user_seconds"] + e["system_seconds"])'
}
: >"$work/on"
: >"$work/off"
for _ in $(seq "$ROUNDS"); do
    one >>"$work/off"
    one --force --series "$work/s.jsonl" >>"$work/on"
done
python3 - "$work/off" "$work/on" "$SIZE" "$BLOCK" "$ROUNDS" <<'PY'
import statistics as st, sys
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p)]
    return [r[0] for r in rows], [r[1] for r in rows]
off_rate, off_cpu = load(sys.argv[1])
on_rate, on_cpu = load(sys.argv[2])
size, block, rounds = int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
calls = size * 1024 // int(block.rstrip("k"))
m = lambda v: st.median(v)
print(f"warm {block} read of {size} MiB ({calls} calls), {rounds} rounds alternating")
print(f"  median rate: without --series {m(off_rate)/2**20:8.1f} MiB/s, with {m(on_rate)/2**20:8.1f} MiB/s: cost {100*(m(off_rate)-m(on_rate))/m(off_rate):+.1f}%")
print(f"  median CPU:  without --series {m(off_cpu)*1e3:8.2f} ms, with {m(on_cpu)*1e3:8.2f} ms: cost {100*(m(on_cpu)-m(off_cpu))/m(off_cpu):+.1f}% ({(m(on_cpu)-m(off_cpu))/calls*1e9:+.1f} ns per call)")
print(f"  fastest run: without {max(off_rate)/2**20:.1f}, with {max(on_rate)/2**20:.1f} MiB/s: cost {100*(max(off_rate)-max(on_rate))/max(off_rate):+.1f}%")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
