#!/usr/bin/env bash
# Coordinated omission on one stall (issue 42): a 300 ms stall injected into a run at a fixed
# rate, measured by fio's rate_iops and by ioscope's open loop, side by side on one file system.
# Every case is random 4 KiB reads, O_DIRECT, io_uring, at most 16 in flight, RATE I/Os per
# second for RUNTIME s on a 256 MiB file; "stall" stops the load generator STALL_AT_S into its
# run with SIGSTOP and resumes it STALL_S later with SIGCONT (fio: its job process(es), found
# with pgrep -P; ioscope: its process, once its scratch file has been filled to full size):
#   fio poisson / fio linear: --rate_iops=RATE --rate_process=poisson|linear --iodepth=16;
#     "latency" is fio's lat_ns (from its issue of the I/O), "service" its clat_ns;
#   ioscope open: disk --rate RATE --arrivals poisson --depth 16; "latency" is the response
#     time (from the I/O's intended start), "service" the service time (from its submission);
#   ioscope closed: disk --rw randread --depth 1 (closed loop, what every tool did before):
#     its one latency is in both columns.
# Rounds alternate which tool goes first; the table holds the medians of the rounds (ms).
# An I/O that arrives during the stall waits the rest of it, so an honest latency p99 carries
# the stall at its weight: of RATE × RUNTIME arrivals, RATE × STALL_S wait 0..STALL_S, and the
# expected percentiles of the stall are printed beside the table. The last lines say, per case,
# where the stall showed: in p99, only in the max, or nowhere.
# Usage: bench/open_loop.sh [DIR]: DIR is the file system to test (default: the current
# directory); a fresh directory is made in it and removed at the end.
# Environment: ROUNDS (3), RATE (2000), RUNTIME (6), STALL_S (0.3), STALL_AT_S (2), IOSCOPE.
set -euo pipefail
DIR=${1:-.}
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-2000}
RUNTIME=${RUNTIME:-6}
STALL_S=${STALL_S:-0.3}
STALL_AT_S=${STALL_AT_S:-2}
SIZE_MIB=256
here=$(cd "$(dirname "$0")/.." && pwd)
io=${IOSCOPE:-$here/target/release/ioscope}
command -v fio >/dev/null || { echo "skipped: fio is not installed"; exit 0; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 0; }
command -v pgrep >/dev/null || { echo "skipped: pgrep (procps) is not installed"; exit 0; }
"$io" disk --help | grep -q -- '--rate' || { echo "skipped: this ioscope has no disk --rate"; exit 0; }
work=$(mktemp -d "$DIR/.bench-open-loop.XXXXXX")
running=() # pids a stall may leave stopped when the script is interrupted
cleanup() {
    local p
    for p in "${running[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
f=$work/fio-file
dd if=/dev/urandom of="$f" bs=1M count="$SIZE_MIB" conv=fsync status=none
echo "dir $work: ${SIZE_MIB} MiB files, $RATE I/O/s, ${RUNTIME}s per run, stall ${STALL_S}s at ${STALL_AT_S}s," \
    "$ROUNDS round(s), $(nproc) CPUs, $(uname -r), $(fio --version)"

stall() { # pid... : stop them, wait STALL_S, resume them
    kill -STOP "$@"
    sleep "$STALL_S"
    kill -CONT "$@"
}
# Each case prints one line: iops lat_p50 lat_p99 lat_p99.9 lat_max serv_p50 serv_p99 serv_p99.9 serv_max (µs)
fio_case() { # linear|poisson stall|base
    local out=$work/fio.json pid kids=""
    fio --name=open --filename="$f" --size="${SIZE_MIB}m" --rw=randread --bs=4k --direct=1 \
        --ioengine=io_uring --iodepth=16 --numjobs=1 --rate_iops="$RATE" --rate_process="$1" \
        --randrepeat=0 --norandommap --lat_percentiles=1 --time_based --runtime="$RUNTIME" \
        --output-format=json --output="$out" >/dev/null 2>&1 &
    pid=$!
    running=("$pid")
    if [[ $2 == stall ]]; then
        while [[ -z $kids ]] && kill -0 "$pid" 2>/dev/null; do # fio forks its job process
            kids=$(pgrep -P "$pid" | tr '\n' ' ' || true)
            [[ -n $kids ]] || sleep 0.01
        done
        sleep "$STALL_AT_S"
        # shellcheck disable=SC2086
        stall $kids
    fi
    wait "$pid"
    running=()
    jq -r '.jobs[0].read | [.iops,
        (.lat_ns.percentile | .["50.000000"], .["99.000000"], .["99.900000"]), .lat_ns.max,
        (.clat_ns.percentile | .["50.000000"], .["99.000000"], .["99.900000"]), .clat_ns.max]
        | [.[0]] + (.[1:] | map(. / 1000)) | map(tostring) | join(" ")' "$out"
}
io_case() { # open|closed stall|base
    local out=$work/ioscope.json pid scratch="" size=0 full=$((SIZE_MIB << 20)) mode
    if [[ $1 == open ]]; then
        mode=(--rate "$RATE" --arrivals poisson --depth 16)
    else
        mode=(--rw randread --bs 4k --depth 1)
    fi
    "$io" disk "$work" --size "${SIZE_MIB}m" --runtime "${RUNTIME}s" --repeat 1 "${mode[@]}" \
        --json -q >"$out" 2>/dev/null &
    pid=$!
    running=("$pid")
    if [[ $2 == stall ]]; then
        # The scratch file is written whole first; the run starts once it has its full size.
        while ((size < full)) && kill -0 "$pid" 2>/dev/null; do
            scratch=$(compgen -G "$work/.ioscope-disk-*" | head -1 || true)
            [[ -n $scratch ]] && size=$(stat -c %s "$scratch" 2>/dev/null || echo 0)
            ((size >= full)) || sleep 0.01
        done
        sleep "$STALL_AT_S"
        stall "$pid"
    fi
    wait "$pid"
    running=()
    if [[ $1 == open ]]; then
        jq -r '.steps[0].row | [.open.achieved_iops,
            (.open.response_us | .p50, .p99, .p99_9, .max), (.latency_us | .p50, .p99, .p99_9, .max)]
            | map(tostring) | join(" ")' "$out"
    else
        jq -r '.rows[0] | [.iops, (.latency_us | .p50, .p99, .p99_9, .max, .p50, .p99, .p99_9, .max)]
            | map(tostring) | join(" ")' "$out"
    fi
}
cases=("fio poisson|fio_case poisson base" "fio poisson|fio_case poisson stall"
    "fio linear|fio_case linear base" "fio linear|fio_case linear stall"
    "ioscope open|io_case open base" "ioscope open|io_case open stall"
    "ioscope closed|io_case closed base" "ioscope closed|io_case closed stall")
results=$work/results # name|stall|round|figures
: >"$results"
for ((round = 1; round <= ROUNDS; round++)); do
    order=("${cases[@]}")
    if ((round % 2 == 0)); then # ioscope first in even rounds
        order=("${cases[@]:4}" "${cases[@]:0:4}")
    fi
    for c in "${order[@]}"; do
        IFS='|' read -r name run <<<"$c"
        # In this shell, not a subshell: `running` must name what the cleanup resumes and ends.
        # shellcheck disable=SC2086
        $run >"$work/line"
        line=$(<"$work/line")
        echo "${name}|${run##* }|${round}|${line}" >>"$results"
        printf 'round %d %-15s %-5s %s\n' "$round" "$name" "${run##* }" "$line"
    done
done

echo
echo "medians of $ROUNDS rounds; latency: fio lat_ns, ioscope open: response (from the intended start)," \
    "closed: its latency; service: fio clat_ns, ioscope submission to completion; ms"
awk -F'|' -v rate="$RATE" -v runtime="$RUNTIME" -v stall="$STALL_S" '
function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $1 "|" $2
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    n = split($4, v, " ")
    for (i = 1; i <= n; i++) col[key, i] = col[key, i] " " v[i]
    rounds[key]++
    if (v[5] >= 500 * stall * 1000) hit[key]++ # max (µs) at least half the stall
}
END {
    printf "%-15s %-5s %7s | %8s %8s %8s %8s | %8s %8s %8s %8s\n", "case", "stall", "IOPS",
        "lat p50", "p99", "p99.9", "max", "serv p50", "p99", "p99.9", "max"
    for (k = 1; k <= nk; k++) {
        split(keys[k], kv, "|")
        m[keys[k], 1] = median(col[keys[k], 1])
        line = sprintf("%-15s %-5s %7.0f |", kv[1], kv[2] == "stall" ? "yes" : "no", m[keys[k], 1])
        for (i = 2; i <= 9; i++) {
            m[keys[k], i] = median(col[keys[k], i]) / 1000
            line = line sprintf(" %8.3f", m[keys[k], i]) (i == 5 ? " |" : "")
        }
        print line
    }
    # What an honest measure of the stall gives: a share f = stall / runtime of the arrivals
    # waits uniformly 0..stall, so the share q above a percentile waits more than stall (1 - q / f).
    f = stall / runtime
    e99 = f > 0.01 ? stall * (1 - 0.01 / f) * 1000 : 0
    e999 = f > 0.001 ? stall * (1 - 0.001 / f) * 1000 : 0
    printf "\nthe stall: %.0f ms of %g s at %g/s = %.1f%% of arrivals (%.0f) wait 0-%.0f ms; an honest p99 >= %.0f ms, p99.9 >= %.0f ms, max >= %.0f ms\n",
        stall * 1000, runtime, rate, 100 * f, rate * stall, stall * 1000, e99, e999, stall * 1000
    # Where the stall showed, per case: p99 carries it when it reaches half the honest p99
    # (and lies above the run without a stall); the max when it reaches half the stall.
    for (k = 1; k <= nk; k++) {
        split(keys[k], kv, "|")
        if (kv[2] != "stall") continue
        b = kv[1] "|base"
        p99 = m[keys[k], 3]; mx = m[keys[k], 5]; bp99 = m[b, 3]
        if (e99 > 0 && p99 >= 0.5 * e99 && p99 > 2 * bp99)
            verdict = sprintf("shows the stall in its p99: %.1f ms against %.1f ms without it (honest: >= %.0f ms); p99.9 %.1f ms, max %.1f ms", p99, bp99, e99, m[keys[k], 4], mx)
        else if (mx >= 0.5 * stall * 1000)
            verdict = sprintf("shows the stall only in its max (%.1f ms): p99 %.1f ms against %.1f ms without it, where an honest p99 is >= %.0f ms", mx, p99, bp99, e99)
        else
            verdict = sprintf("does not show the stall: p99 %.1f ms, max %.1f ms", p99, mx)
        asked = kv[1] ~ /closed/ ? "(closed loop, no rate)" : sprintf("of %g asked", rate)
        printf "%-15s %s; max >= %.0f ms in %d of %d rounds; %.0f IOPS %s\n", kv[1], verdict,
            stall * 500, hit[keys[k]], rounds[keys[k]], m[keys[k], 1], asked
    }
}' "$results"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
