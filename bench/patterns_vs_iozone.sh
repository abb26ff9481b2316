#!/usr/bin/env bash
# bench/patterns_vs_iozone.sh — issue 24, item 6: `ioscope patterns` against iozone on the
# tests patterns claims to be iozone's, side by side in one run.
#
# Warm, the same directory, file size and record size, back to back: each round runs (in an
# order that rotates every round) `ioscope patterns --cache warm --runs 1` (one run per test,
# as iozone makes), `iozone -i 0 -i 1 -i 2 -i 4` (write, rewrite, read, reread, random read, random
# write, record rewrite; fsync left out of its figures, its default) and the same with `-e`
# (fsync included); OLD=path adds an older ioscope (before/after in one run). The table gives
# the medians over the rounds and their range, and the ratio of the fastest rounds too (on a
# shared machine the least disturbed run of each):
#   - writes without fsync: patterns' "without fsync" (what iozone reports by default)
#     against iozone's figure. Target: >= 0.9 x on write, rewrite, random write, record
#     rewrite.
#   - writes with fsync: patterns' headline against iozone -e.
#   - reads (warm for both): patterns' read, reread, random read against iozone's; they
#     must stay within noise (within 10%, or rounds that overlap).
#
# iozone is not in Debian: bench/iozone.sh finds it (IOZONE, PATH, $TOOLS/bin) or builds it
# from its public source (github.com/luchachen/iozone) outside this repository.
# bench/trace.sh runs this script as its third part.
#
#   bench/patterns_vs_iozone.sh                      in a scratch directory under the current one
#   DIR=/mnt/x SIZE=256m RECORD=64k ROUNDS=5 bench/patterns_vs_iozone.sh
#   IOSCOPE=/path/to/ioscope OLD=/path/to/old/ioscope bench/patterns_vs_iozone.sh
# Exits 1 when the write target is missed or a read is outside noise, 2 when it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-256m}
RECORD=${RECORD:-64k}
ROUNDS=${ROUNDS:-11}
command -v python3 >/dev/null || { echo "bench/patterns_vs_iozone.sh: needs python3" >&2; exit 2; }

# shellcheck source=bench/iozone.sh
. bench/iozone.sh
find_iozone
if [ -n "${IOSCOPE:-}" ]; then
    B=$IOSCOPE
else
    cargo build --release --quiet
    B=${CARGO_TARGET_DIR:-$PWD/target}/release/ioscope
fi
WORK=${DIR:-.}/.ioscope-bench-iozone-$$
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM

TESTS=write,rewrite,read,reread,random-read,random-write,record-rewrite
echo "== patterns against iozone: $SIZE file, $RECORD records, warm, $ROUNDS rounds"
echo "iozone: $("$IOZONE" -v | grep -o 'Revision: [0-9.]*' || echo '?')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

ours() { # binary tag: one patterns run (1 run per test), its JSON kept. Exit 1 (a kernel
    # count off on a busy machine) still leaves a whole result; it is counted and said.
    "$1" patterns "$WORK" --size "$SIZE" --record "$RECORD" --runs 1 --cache warm \
        --tests "$TESTS" --json -q >"$WORK/$2.$ROUND.json" || {
        [ $? -eq 1 ] || exit 2
        echo "round $ROUND: $2's patterns reported a failed check (its JSON says which)"
    }
}
theirs() { # tag flags...: one iozone run, its Excel-style report kept
    local tag=$1
    shift
    (cd "$WORK" && "$IOZONE" -i 0 -i 1 -i 2 -i 4 -s "$SIZE" -r "$RECORD" -f "$WORK/iozone.tmp" -R "$@") \
        >"$WORK/$tag.$ROUND.txt"
}
RUNNERS=("ours $B new" "theirs iozone" "theirs iozone_e -e")
if [ -n "${OLD:-}" ]; then RUNNERS+=("ours $OLD old"); fi
for ((ROUND = 0; ROUND < ROUNDS; ROUND++)); do
    n=${#RUNNERS[@]}
    for ((k = 0; k < n; k++)); do
        eval "${RUNNERS[$(((ROUND + k) % n))]}"
    done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$ROUNDS" "${OLD:+old}" <<'EOF'
import json, statistics, sys
work, rounds, old = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "old"
MIB = 1 << 20
# iozone's -R report names, by patterns' test names.
NAMES = {"write": "Writer report", "rewrite": "Re-writer report", "read": "Reader report",
         "reread": "Re-Reader report", "random_read": "Random read report",
         "random_write": "Random write report", "record_rewrite": "Record rewrite report"}
WRITES = ["write", "rewrite", "random_write", "record_rewrite"]
READS = ["read", "reread", "random_read"]

def iozone(tag, r):
    lines = open(f"{work}/{tag}.{r}.txt").read().splitlines()
    out = {}
    for test, name in NAMES.items():
        i = lines.index(f'"{name}"')
        out[test] = float(lines[i + 2].split()[1]) * 1024 / MIB  # kB/s -> MiB/s
    return out

def ours(tag, r):
    doc = json.load(open(f"{work}/{tag}.{r}.json"))
    out = {}
    for res in doc["results"]:
        t = res["test"]
        out[t] = res["bytes_per_second"]["median"] / MIB
        if res.get("without_fsync"):
            out[t + "/nofsync"] = res["without_fsync"]["median"] / MIB
    return out

series = {"new": [ours("new", r) for r in range(rounds)],
          "iozone": [iozone("iozone", r) for r in range(rounds)],
          "iozone_e": [iozone("iozone_e", r) for r in range(rounds)]}
if old:
    series["old"] = [ours("old", r) for r in range(rounds)]

def fig(tag, key):
    v = [s[key] for s in series[tag]]
    return statistics.median(v), min(v), max(v)

def cell(f):
    return f"{f[0]:9.0f} ({f[1]:.0f}–{f[2]:.0f})"

missed = False
print()
print("MiB/s, median over rounds (min–max), one run of each per round; ratio: of the medians")
print("(fastest: of the fastest rounds)")
hdr = f"{'test':<16} {'what':<14} {'iozone':>24} {'patterns':>24} {'ratio':>6} {'fastest':>7}"
if old:
    hdr += f" {'before':>24} {'ratio':>6} {'fastest':>7}"
print(hdr)
def row(test, what, theirs, key, target=None, noise=False):
    global missed
    t, n = fig(theirs, test), fig("new", key)
    ratio = n[0] / t[0]
    line = f"{test:<16} {what:<14} {cell(t):>24} {cell(n):>24} {ratio:6.2f} {n[2] / t[2]:7.2f}"
    if old:
        o = fig("old", key)
        line += f" {cell(o):>24} {o[0] / t[0]:6.2f} {o[2] / t[2]:7.2f}"
    if target is not None:
        ok = ratio >= target
        missed |= not ok
        line += f"   target >= {target}: {'ok' if ok else 'MISSED'}"
    if noise:
        within = abs(ratio - 1) <= 0.10 or (n[1] <= t[2] and t[1] <= n[2])
        missed |= not within
        line += f"   {'within noise' if within else 'OUTSIDE noise'}"
    print(line)
for t in WRITES:
    row(t, "no fsync", "iozone", t + "/nofsync", target=0.9)
for t in WRITES:
    row(t, "fsync (-e)", "iozone_e", t)
for t in READS:
    row(t, "warm", "iozone", t, noise=True)
sys.exit(1 if missed else 0)
EOF
