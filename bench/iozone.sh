# shellcheck shell=bash
# bench/iozone.sh — sourced by the bench scripts that run iozone (bench/trace_iozone.sh,
# bench/patterns_vs_iozone.sh); not run by itself. `find_iozone` sets IOZONE to an iozone
# binary, or says how to get one and exits 2.
#
# iozone is not in Debian. Tried in order: IOZONE, `iozone` on PATH, $TOOLS/bin/iozone
# (TOOLS=/work/tools), else a build from its public source (github.com/luchachen/iozone,
# 3.471) in $TOOLS/src/iozone — cloned there when missing — with
# `make linux-AMD64 CC="cc -fcommon"`, outside this repository, copied to $TOOLS/bin.

find_iozone() {
    local tools=${TOOLS:-/work/tools} src dir
    if [ -n "${IOZONE:-}" ]; then
        [ -x "$IOZONE" ] || { echo "bench: IOZONE=$IOZONE is not an executable" >&2; exit 2; }
        return
    fi
    if command -v iozone >/dev/null; then
        IOZONE=$(command -v iozone)
        return
    fi
    if [ -x "$tools/bin/iozone" ]; then
        IOZONE=$tools/bin/iozone
        return
    fi
    src=$tools/src/iozone
    local how="get its source (github.com/luchachen/iozone) into $src, run \`make linux-AMD64 CC=\"cc -fcommon\"\` where its makefile is, and copy iozone to $tools/bin (or set IOZONE=path)"
    if [ ! -f "$src/iozone.c" ] && [ ! -f "$src/src/current/iozone.c" ]; then
        mkdir -p "$tools/src"
        git clone --depth 1 https://github.com/luchachen/iozone "$src" >&2 ||
            { echo "bench: no iozone, and its source could not be fetched: $how" >&2; exit 2; }
    fi
    dir=$src
    [ -f "$dir/iozone.c" ] || dir=$src/src/current
    (cd "$dir" && make linux-AMD64 CC="cc -fcommon" >/dev/null) ||
        { echo "bench: building iozone in $dir failed: $how" >&2; exit 2; }
    mkdir -p "$tools/bin"
    cp "$dir/iozone" "$tools/bin/iozone"
    IOZONE=$tools/bin/iozone
}
