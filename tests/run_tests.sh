#!/bin/sh
# Runs every test binary in BUILD/tests and the shell tests, then prints one
# closing line "N passed, M failed" (each cmocka binary or script counts as one).
B=${1:-build}
pass=0; fail=0; failed=""
for t in "$B"/tests/test_*; do
    case "$t" in *.o|*.d) continue ;; esac
    [ -x "$t" ] || continue
    echo "== $t"
    if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
for t in tests/*_test.sh; do
    [ -f "$t" ] || continue
    echo "== $t"
    if BUILD="$B" sh "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
