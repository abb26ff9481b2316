#!/usr/bin/env bash
# bench/trace_iozone.sh — issue 24's first target, in one run: `ioscope trace -- iozone -i 0
# -s 64m -r 64k -f F`, with no extra flag, says that iozone's write figure leaves fsync out;
# with `-e`, that it includes it; and iozone's claims are checked against the trace.
#
# ROUNDS runs of each (without and with -e, alternating), each with `trace --json` kept. The
# table gives per iozone figure (write, rewrite): iozone's figure and trace's rate over the
# program's own timed region (medians), the one rule's verdicts, what the traced figure
# covers, and where fsync and close fell (inside the timed region, outside it) in every run.
# Then the claim and region lines of the last run of each, as `ioscope report` prints them.
# Target: without -e, the write figure's fsync outside in every run; with -e, inside; every
# figure checked against its timed region.
#
#   bench/trace_iozone.sh
#   DIR=/mnt/x ROUNDS=5 IOZONE=/path/to/iozone IOSCOPE=/path/to/ioscope bench/trace_iozone.sh
# Exits 1 when the target is missed, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-64m}
RECORD=${RECORD:-64k}
command -v python3 >/dev/null || { echo "bench/trace_iozone.sh: needs python3" >&2; exit 2; }
# shellcheck source=bench/iozone.sh
. bench/iozone.sh
find_iozone
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
B=$(realpath "$B")
WORK=$(realpath "${DIR:-.}")/.ioscope-bench-trace-iozone-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM

echo "== ioscope trace -- iozone -i 0 -s $SIZE -r $RECORD -f F, without and with -e, $ROUNDS rounds"
echo "iozone: $("$IOZONE" -v | grep -o 'Revision: [0-9.]*' || echo '?')"
for ((r = 0; r < ROUNDS; r++)); do
    for e in plain e; do
        [ $((r % 2)) -eq 1 ] && e=$([ $e = plain ] && echo e || echo plain)
        flag=""; [ "$e" = plain ] || flag=-e
        # shellcheck disable=SC2086
        (cd "$WORK" && "$B" trace --json -- "$IOZONE" -i 0 -s "$SIZE" -r "$RECORD" $flag -f F \
            >"$WORK/$e.$r.json" 2>"$WORK/$e.$r.err") ||
            { echo "round $r ${flag:-(no -e)}: ioscope trace failed: $(tail -1 "$WORK/$e.$r.err")" >&2; exit 2; }
        rm -f "$WORK/F"
    done
done

python3 - "$WORK" "$ROUNDS" <<'EOF' || missed=1
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
MIB = 1 << 20
missed = False
print("MiB/s, medians over the rounds; verdict: the one rule (same within 10%, else higher/lower")
print("when repeats do not overlap, else unclear); fsync/close: where each run placed them")
print(f"{'iozone':<8} {'figure':<8} {'iozone says':>11} {'traced':>8} {'ratio':>6}  {'verdicts':<14} "
      f"{'covers':<17} {'fsync':<12} {'close':<12} stops")
for e, name in (("plain", "(no -e)"), ("e", "-e")):
    docs = [json.load(open(f"{work}/{e}.{r}.json")) for r in range(rounds)]
    labels = [f["figure"]["label"] for f in (docs[0]["claim_check"] or {}).get("figures", [])]
    if not labels:
        print(f"{name:<8} no figure read from iozone's output (claim_check empty): target MISSED")
        missed = True
        continue
    for label in labels:
        figs = [next(f for f in d["claim_check"]["figures"] if f["figure"]["label"] == label) for d in docs]
        said = statistics.median(f["figure"]["bytes"] / f["figure"]["seconds"] / MIB for f in figs)
        traced = statistics.median(f["traced"]["bytes"] / f["traced"]["seconds"] / MIB
                                   for f in figs if f["traced"]["seconds"])
        def tally(values):
            out = {}
            for v in values:
                out[v] = out.get(v, 0) + 1
            return ",".join(f"{k} {n}/{rounds}" for k, n in out.items())
        verdicts = tally(f["verdict"] for f in figs)
        covers = tally(f["traced"]["covers"] for f in figs)
        fsync = tally(f["fsync"]["placement"] for f in figs)
        close = tally(f["close"]["placement"] for f in figs)
        stops = tally(d.get("stops") or "?" for d in docs)
        print(f"{name:<8} {label:<8} {said:11.0f} {traced:8.0f} {traced / said:6.2f}  {verdicts:<14} "
              f"{covers:<17} {fsync:<12} {close:<12} {stops}")
        if label == "write":
            want = "inside" if e == "e" else "outside"
            ok = all(f["fsync"]["placement"] == want for f in figs)
            ok &= all(f["traced"]["covers"] == "timed_region" for f in figs)
            print(f"{'':<8} target: write's fsync {want} its timed region in every run, checked against "
                  f"that region: {'met' if ok else 'MISSED'}")
            missed |= not ok
sys.exit(1 if missed else 0)
EOF
for e in plain e; do
    echo
    echo "-- the last run $([ $e = e ] && echo with -e || echo without -e), as ioscope prints it (claim, region, clock, stops lines):"
    "$B" report "$WORK/$e.$((ROUNDS - 1)).json" | awk '
        /^(claim|regions|region |clock|stops)/ { show = 1; print; next }
        /^[a-z]/ { show = 0 }
        show && /^  / { print }'
done
exit "${missed:-0}"
