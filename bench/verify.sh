#!/usr/bin/env bash
# bench/verify.sh — `ioscope run -r` warm, with and without the check in place, side by side
# in one run: the timed read's rate (the same region either way: the check runs after the
# clock stops), the check's own seconds as ioscope reports them, and each command's wall
# time. Rounds alternate the two, each figure is the median.
#
#   bench/verify.sh                     a 1 GiB file in the current directory, 7 rounds
#   MIB=2048 RUNS=9 BS=1m bench/verify.sh
#   IOSCOPE=/path/to/ioscope bench/verify.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${MIB:-1024}
RUNS=${RUNS:-7}
BS=${BS:-1m}
IOSCOPE=${IOSCOPE:-}
if [ -z "$IOSCOPE" ]; then
    cargo build --release --quiet
    IOSCOPE=$PWD/target/release/ioscope
fi
command -v python3 >/dev/null || { echo "bench/verify.sh: needs python3 to read the JSON" >&2; exit 2; }
FILE=$(mktemp -p . .ioscope-bench-verify.XXXXXX)
trap 'rm -f "$FILE"' EXIT
rm -f "$FILE"
SEED=7
"$IOSCOPE" run "$FILE" -w 1m "$MIB" --seed $SEED >/dev/null
"$IOSCOPE" run "$FILE" -r 1m >/dev/null   # warm
OUT=$(mktemp)
trap 'rm -f "$FILE" "$OUT"' EXIT
for i in $(seq "$RUNS"); do
    for mode in xor inplace; do
        args=(run "$FILE" -r "$BS" --json)
        [ $mode = inplace ] && args+=(--seed $SEED)
        t0=$(date +%s.%N)
        "$IOSCOPE" "${args[@]}" > "$OUT.json" || { echo "bench/verify.sh: $mode run failed" >&2; exit 1; }
        t1=$(date +%s.%N)
        python3 - "$mode" "$t0" "$t1" "$OUT.json" >> "$OUT" <<'PY'
import json, sys
mode, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
v = d.get("verified_in_place") or {}
print(mode, d["seconds"], d["bytes_per_second"], v.get("seconds", 0.0), t1 - t0, v.get("bad_blocks", 0))
PY
    done
done
rm -f "$OUT.json"
python3 - "$OUT" "$MIB" "$BS" "$RUNS" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
mib, bs, runs = sys.argv[2], sys.argv[3], sys.argv[4]
print(f"run -r of a {mib} MiB file, warm, {bs} calls; medians of {runs} rounds")
print(f"{'mode':<22} {'timed s':>9} {'MiB/s':>9} {'check s':>9} {'check/timed':>12} {'wall s':>9}")
for mode, label in [("xor", "XOR only"), ("inplace", "--seed (in place)")]:
    r = [[float(x) for x in row[1:]] for row in rows if row[0] == mode]
    timed = st.median(x[0] for x in r)
    rate = st.median(x[1] for x in r) / 2**20
    check = st.median(x[2] for x in r)
    wall = st.median(x[3] for x in r)
    bad = sum(x[4] for x in r)
    share = f"{100 * check / timed:.0f}%" if check else "-"
    print(f"{label:<22} {timed:>9.3f} {rate:>9.0f} {check:>9.3f} {share:>12} {wall:>9.3f}" + ("  BAD BLOCKS" if bad else ""))
PY
