#!/bin/sh
# --export and signals at its edges (split from export_edges_test.sh):
#  - a signal that arrives while frames.json is being written cannot make the
#    exit status and frames.json disagree (130 with "complete": true); one that
#    arrives while the last PNGs are finishing gives 130 and "complete": false.
#  - issue 15, item 9: a signal very early, while the lesson loads (before the
#    directory exists) or as the directory is being made, is caught too: exit
#    130 with its one-line message, and no directory (or an empty one) left
#    without a word; after the directory, frames.json says "complete": false.
# The signal is delivered at those points with gdb: without gdb, or when gdb cannot
# stop the process (no ptrace), the test is skipped (exit 77).
if ! command -v gdb >/dev/null 2>&1; then
    echo "export_signals_test: SKIP: gdb not found (make deps installs it)"
    exit 77
fi
. "$(dirname "$0")/test_lib.sh"
lesson=lessons/arange-2x4x4.json

# SIGINT at a chosen point of the export's end: FUNCTION EXPECTED-EXIT EXPECTED-COMPLETE
sig_at() {
    rm -rf "$tmp/sig"
    cat >"$tmp/gdb.cmd" <<EOF
set pagination off
handle SIGINT nostop pass
tbreak $1
run
signal SIGINT
EOF
    # detect_leaks=0: LeakSanitizer does not run under ptrace
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 env -u DISPLAY \
        timeout 60 gdb -q -batch -x "$tmp/gdb.cmd" --args "$bin" --export "$tmp/sig" "$lesson" >"$tmp/gdb.out" 2>&1
    if ! grep -qiE "breakpoint 1(\.[0-9]+)?, .*$1" "$tmp/gdb.out"; then # (1.2: one of its locations, inlined)
        echo "SKIP: gdb could not stop attnviz in $1: $(grep -m1 -iE 'error|warning|denied' "$tmp/gdb.out")"
        exit 77
    fi
    code=$(sed -n 's/.*\[Inferior 1 (process [0-9]*) exited with code \([0-7]*\)\].*/\1/p' "$tmp/gdb.out")
    if [ -z "$code" ]; then
        grep -q "exited normally" "$tmp/gdb.out" && code=0 || { fail "$1: no exit status: $(tail -3 "$tmp/gdb.out")"; return; }
    fi
    code=$((0$code))   # gdb prints it in octal
    complete=$(grep -o '"complete": [a-z]*' "$tmp/sig/frames.json" 2>/dev/null | sed 's/.*: //')
    [ "$code" -eq "$2" ] && [ "${complete:-none}" = "$3" ] ||
        fail "SIGINT in $1: exit $code with \"complete\": ${complete:-(no frames.json)}, expected $2 and $3"
    if [ "$code" -eq 130 ]; then
        grep -q "export interrupted by SIGINT" "$tmp/gdb.out" || fail "SIGINT in $1: no message"
    fi
    if [ "$3" = none ] && [ -e "$tmp/sig" ]; then fail "SIGINT in $1: $tmp/sig left behind"; fi
}
sig_at write_index 0 true        # frames.json already decided complete: the signal is ignored
sig_at encoders_stop 130 false   # before the decision: interrupted, and frames.json says so
sig_at session_create 130 none   # item 9: while loading: no directory, a message
sig_at prepare_dir 130 false     # item 9: as the directory is made: frames.json, not complete

echo "export signals: $fails failures"
[ "$fails" -eq 0 ]
