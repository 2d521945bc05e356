#!/bin/sh
# --export at its edges:
#  1. a failure before anything is written (a missing --font) leaves no empty
#     export directory behind: the directory is created last;
# (a signal at chosen points of an export, with gdb: export_signals_test.sh)
B=${BUILD:-build}
bin="$B/attnviz"
lesson=lessons/arange-2x4x4.json
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# 1. no fonts, no directory
env -u DISPLAY "$bin" --font /nonexistent/font.ttf --export "$tmp/of" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "--font /nonexistent: exit $rc, expected 1"
grep -q "/nonexistent/font.ttf" "$tmp/err" || fail "--font /nonexistent: message '$(cat "$tmp/err")'"
[ -e "$tmp/of" ] && fail "--font /nonexistent left the export directory $tmp/of behind"

echo "export edges: $fails failures"
[ "$fails" -eq 0 ]
