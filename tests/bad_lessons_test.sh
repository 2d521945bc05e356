#!/bin/sh
# Every lesson in tests/bad/ must be rejected by `attnviz --check` with exit
# code 1 and exactly one line on stderr that names the file and contains the
# text listed for it in tests/bad/expected.tsv; nothing on stdout.
B=${BUILD:-build}
bin="$B/attnviz"
fails=0; n=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in tests/bad/*.json; do
    name=$(basename "$f" .json)
    want=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' tests/bad/expected.tsv)
    n=$((n + 1))
    if [ -z "$want" ]; then echo "FAIL $name: no entry in tests/bad/expected.tsv"; fails=$((fails + 1)); continue; fi
    "$bin" --check "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
    lines=$(wc -l <"$tmp/err")
    msg=$(cat "$tmp/err")
    if [ "$rc" -ne 1 ]; then echo "FAIL $name: exit $rc, expected 1 ($msg)"; fails=$((fails + 1)); continue; fi
    if [ "$lines" -ne 1 ]; then echo "FAIL $name: $lines lines on stderr, expected 1"; fails=$((fails + 1)); continue; fi
    if [ -s "$tmp/out" ]; then echo "FAIL $name: unexpected stdout"; fails=$((fails + 1)); continue; fi
    case "$msg" in
        "$f: "*"$want"*) ;;
        *) echo "FAIL $name: got:  $msg"; echo "          want: $f: ...$want..."; fails=$((fails + 1)) ;;
    esac
done
# every listed case has its file
for name in $(awk -F'\t' '!/^#/ { print $1 }' tests/bad/expected.tsv); do
    [ -f "tests/bad/$name.json" ] || { echo "FAIL $name: listed but tests/bad/$name.json is missing"; fails=$((fails + 1)); }
done
# a missing file and a directory are runtime errors with one line too
"$bin" --check tests/bad/does-not-exist.json 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "does-not-exist.json: cannot open" "$tmp/err" || { echo "FAIL missing file: exit $rc"; fails=$((fails + 1)); }
"$bin" --check tests/bad 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL directory: exit $rc"; fails=$((fails + 1)); }
# usage errors exit 2
"$bin" --dump 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL --dump without LESSON should exit 2"; fails=$((fails + 1)); }
"$bin" --bogus 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL unknown option should exit 2"; fails=$((fails + 1)); }
"$bin" --print nosuchstage lessons/arange-2x4x4.json >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL --print unknown stage should exit 2"; fails=$((fails + 1)); }
"$bin" --size 4294967936x4294968016 lessons/arange-2x4x4.json 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL an overflowing --size should exit 2"; fails=$((fails + 1)); }
"$bin" --export "$tmp/x" --check lessons/arange-2x4x4.json 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL two commands at once should exit 2"; fails=$((fails + 1)); }
# --dump output stays valid UTF-8 JSON whatever the file name holds
cp lessons/arange-2x4x4.json "$tmp/$(printf 'caf\351.json')"
"$bin" --dump "$tmp/$(printf 'caf\351.json')" >/dev/null 2>&1 || { echo "FAIL --dump of a Latin-1 file name"; fails=$((fails + 1)); }
echo "bad lessons: $n checked, $fails failures"
[ "$fails" -eq 0 ]
