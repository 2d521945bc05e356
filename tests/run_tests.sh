#!/bin/sh
# run_tests.sh BUILD [PATTERN]: runs every test binary in BUILD/tests and the shell tests,
# two at a time (ATTNVIZ_TEST_JOBS=N for another number), and prints one block per
# test as it ends (never interleaved): "== NAME: ok (S s)", or FAIL / SKIP followed by
# the test's output. The closing line, alone on its line: "N passed, N failed, N skipped".
# A test that cannot run (no Xvfb, gdb, root, torch…) exits 77: skipped, not passed.
# ATTNVIZ_FULL=1 (make test-full) makes the tests sweep every frame of every lesson;
# without it they check a representative sample. ATTNVIZ_TEST_VERBOSE=1 prints the
# output of passing tests too. Each test's time goes to BUILD/tests/times.txt, and the
# next run starts the slowest first (fewer seconds with one worker idle at the end).
# PATTERN (a shell pattern, e.g. 'window*') runs only the tests whose names match.
if [ "$1" = --one ]; then # (internal) --one BUILD LOGDIR TEST: run one test, print its block
    B=$2 D=$3 t=$4
    n=${t##*/}
    s=$(date +%s.%N)
    case "$t" in
    *.sh) BUILD="$B" sh "$t" >"$D/$n.log" 2>&1 ;;
    *) "$t" >"$D/$n.log" 2>&1 ;;
    esac
    rc=$?
    secs=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$rc $secs" >"$D/$n.rc"
    case $rc in
    0) what=ok ;;
    77) what=SKIP ;;
    *) what="FAIL (exit $rc)" ;;
    esac
    # a cmocka binary counts as one program; its own skipped tests are named here
    sk=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$D/$n.log" | head -n 1)
    [ -n "$sk" ] && [ "$rc" = 0 ] && what="ok, $sk of its tests skipped"
    {
        echo "== $t: $what ($secs s)"
        if [ "$rc" != 0 ] || [ -n "$ATTNVIZ_TEST_VERBOSE" ]; then
            if [ "$rc" = 77 ]; then tail -n 5 "$D/$n.log"; else cat "$D/$n.log"; fi
        fi
    } >"$D/$n.out"
    flock "$D/print.lock" cat "$D/$n.out"
    exit 0
fi

B=${1:-build}
only=${2:-*}
jobs=${ATTNVIZ_TEST_JOBS:-2}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT INT TERM
list=
for t in "$B"/tests/test_* tests/*_test.sh; do
    case "$t" in *.o|*.d|*.txt) continue ;; esac
    case "$t" in *.sh) [ -f "$t" ] || continue ;; *) [ -x "$t" ] || continue ;; esac
    case "${t##*/}" in $only) ;; *) continue ;; esac
    list="$list $t"
done
# the order: the slowest of the last run first; without times, the window tests first
times="$B/tests/times.txt"
for t in $list; do
    est=$(awk -v t="$t" '$1 == t { print $2 }' "$times" 2>/dev/null)
    if [ -z "$est" ]; then
        case "$t" in *window*|*picker*) est=60 ;; */test_render|*export*) est=20 ;; *) est=1 ;; esac
    fi
    echo "$est $t"
done | sort -k1,1 -g -r | cut -d' ' -f2 >"$D/order"

xargs -P "$jobs" -n 1 sh "$0" --one "$B" "$D" <"$D/order"

pass=0 fail=0 skip=0 failed= skipped=
: >"$D/times"
while read -r t; do
    n=${t##*/}
    read -r rc secs <"$D/$n.rc" 2>/dev/null || rc=1 secs=0
    echo "$t $secs" >>"$D/times"
    case $rc in
    0) pass=$((pass + 1)) ;;
    77) skip=$((skip + 1)); skipped="$skipped $n" ;;
    *) fail=$((fail + 1)); failed="$failed $n" ;;
    esac
done <"$D/order"
[ "$only" = "*" ] && cp "$D/times" "$times" 2>/dev/null
[ -n "$skipped" ] && echo "skipped:$skipped"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
