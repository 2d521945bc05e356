#!/bin/sh
# The real window under Xvfb: opens, changes stage by stage, shows and hides the
# help overlay, survives a resize, saves a PNG with S, exports the lesson with E,
# zooms with the wheel (0 resets), and quits with status 0 on Esc.
# Every wait is bounded; skips (exit 0) only when xvfb-run is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_test xdotool import
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2
fail() { echo "window_test: FAIL: $*"; [ -n "$PID" ] && kill "$PID" 2>/dev/null; exit 1; }
shot() { sleep "${2:-0.4}"; import -window root "$TMP/$1.png" 2>/dev/null || fail "screenshot $1"; }
differ() { ! cmp -s "$TMP/$1.png" "$TMP/$2.png"; }
# Under ASan (make SAN=1) libdbus, libX11 and the X11 modules SDL dlopens leak a
# few hundred bytes at exit, which LeakSanitizer turns into exit status 1; leaks
# in attnviz's own drawing code are checked by test_render. Other ASan/UBSan
# errors still fail this test.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 ATTNVIZ_SAVE_DIR=$TMP "$B/attnviz" --size 1280x720 lessons/arange-2x4x4.json >"$TMP/out.txt" 2>"$TMP/err.txt" &
PID=$!
WID=$(timeout 15 xdotool search --sync --onlyvisible --name attnviz 2>/dev/null | head -n 1)
[ -n "$WID" ] || fail "no window named attnviz within 15 s ($(cat "$TMP/err.txt"))"
xdotool windowactivate --sync "$WID" >/dev/null 2>&1 || xdotool windowfocus "$WID" >/dev/null 2>&1
xdotool mousemove 5 795 # keep the pointer away from the cells (no tooltip)
shot s0 1
prev=s0
for i in 1 2 3 4 5; do
    xdotool key --window "$WID" Right
    shot "s$i" 2.2   # a transition lasts 1.6 s
    differ "$prev" "s$i" || fail "stage $i looks the same as the one before"
    prev="s$i"
done
xdotool key --window "$WID" question
shot help 0.6
differ "$prev" help || fail "the help overlay did not appear on ?"
xdotool key --window "$WID" question
shot nohelp 0.6
cmp -s "$TMP/$prev.png" "$TMP/nohelp.png" || differ help nohelp || fail "the help overlay did not go away"
# the mouse wheel zooms the heatmap under the mouse; 0 shows the whole tensor again
xdotool mousemove 1100 500
shot zoom0 0.6
xdotool click 4
shot zoom1 0.6
differ zoom0 zoom1 || fail "the wheel did not zoom"
xdotool key --window "$WID" 0
shot zoom2 0.6
cmp -s "$TMP/zoom0.png" "$TMP/zoom2.png" || fail "0 did not reset the zoom"
xdotool mousemove 5 795
xdotool key --window "$WID" s
sleep 1
ls "$TMP"/attnviz-*.png >/dev/null 2>&1 || fail "S did not save a PNG in ATTNVIZ_SAVE_DIR"
# E exports the whole lesson into a new folder: one PNG per stage and frames.json
xdotool key --window "$WID" e
EXP=$TMP/attnviz-export-arange-2x4x4-1
for _ in $(seq 1 50); do [ -f "$EXP/frames.json" ] && break; sleep 0.2; done
[ -f "$EXP/frames.json" ] || fail "E did not write $EXP/frames.json within 10 s"
stages=$("$B/attnviz" --dump lessons/arange-2x4x4.json | grep -c '"name"')
pngs=$(ls "$EXP"/*.png 2>/dev/null | wc -l)
[ "$pngs" -eq "$stages" ] || fail "E wrote $pngs PNGs, expected one per stage ($stages)"
grep -q '"complete": true' "$EXP/frames.json" || fail "the export's frames.json is not complete"
grep -q "$EXP" "$TMP/out.txt" || fail "E did not print the export folder"
# the same frames as the command line's export at the window's size: E draws
# offscreen exactly like --export, so the pixels are equal
env -u DISPLAY "$B/attnviz" --export "$TMP/cli" --size 1280x720 lessons/arange-2x4x4.json >/dev/null 2>&1
for f in "$TMP/cli"/*.png; do
    ae=$(compare -metric AE "$f" "$EXP/${f##*/}" null: 2>&1)
    [ "$ae" = 0 ] || fail "E's ${f##*/} differs from attnviz --export's in $ae pixels"
done
xdotool windowsize "$WID" 900 600
shot resized 1
kill -0 "$PID" 2>/dev/null || fail "attnviz died after a resize"
differ nohelp resized || fail "nothing changed after the resize"
xdotool key --window "$WID" Escape
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$PID" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$PID" 2>/dev/null; then fail "still running 5 s after Esc"; fi
wait "$PID"; rc=$?
[ "$rc" -eq 0 ] || fail "exit status $rc after Esc"
echo "window_test: ok"
INNER
timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" sh "$TMP/inner.sh" "$B" "$TMP"
rc=$?
[ $rc -eq 124 ] && echo "window_test: FAIL: timed out after 120 s"
exit $rc
