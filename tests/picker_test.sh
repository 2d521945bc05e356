#!/bin/sh
# Language switch and lesson picker in the real window under Xvfb: L changes
# every string (and back), the "Lessons…" button and O open the picker, Down +
# Enter opens another lesson, a bad lesson from --lessons DIR is listed and
# choosing it keeps the current lesson running (it still answers keys), Esc
# closes the picker and then quits with status 0. Every wait is bounded and polls;
# skips (exit 77) only when Xvfb is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin picker_test xdotool import
mkdir "$TMP/more"
# sorts after every lesson in lessons/: End selects it
printf '{"title": "bad", "model": {"d_model": 4, "n_heads": 3}, "input": {"query": [[1, 2, 3, 4]]}, "weights": {"init": {"seed": 1}}}\n' \
    >"$TMP/more/zzzz-bad-heads.json"
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=picker_test
. "$3"
alive() { kill -0 "$PID" 2>/dev/null || fail "attnviz exited: $(cat "$TMP/err.txt")"; }
window_start "$TMP/out.txt" "$TMP/err.txt" --lang en --size 1280x720 --lessons "$TMP/more" lessons/arange-2x4x4.json
idle
shot en
title_en=$(xdotool getwindowname "$WID")
# L: Chinese, then English again (after the toast): the same picture as before
key l
shot zh
differ en zh || fail "L did not change the screen"
title_zh=$(xdotool getwindowname "$WID")
[ "$title_zh" != "$title_en" ] || fail "L did not change the window title ($title_en)"
key l
shot en2
cmp -s "$TMP/en.png" "$TMP/en2.png" || fail "L twice does not give the English screen back"
# the "Lessons…" button (right end of the status row) opens the picker; Esc closes it
pointer mousemove --window "$WID" 1215 81 click 1
shot button
differ en2 button || fail "clicking the Lessons… button did not open the picker"
pointer mousemove 5 795
key Escape
shot closed
cmp -s "$TMP/en2.png" "$TMP/closed.png" || fail "Esc did not close the picker"
alive
# O, Down, Enter: the next lesson opens
key o
shot picker
differ en2 picker || fail "O did not open the picker"
key Down
shot moved
differ picker moved || fail "Down did not move the selection"
key Return
shot other
alive
differ en2 other || fail "Enter did not open another lesson"
title_other=$(xdotool getwindowname "$WID")
[ "$title_other" != "$title_en" ] || fail "the window title still names the first lesson ($title_en)"
# the bad lesson is listed (last); choosing it keeps the lesson running
key o
shot picker2
key End
shot bad_sel
differ picker2 bad_sel || fail "End did not move the selection"
key Return
shot bad_chosen
alive
grep -q "zzzz-bad-heads.json: model.n_heads" "$TMP/err.txt" || fail "no error line for the bad lesson on stderr"
key Escape
shot after_bad # (settled: the 8 s error toast is over)
cmp -s "$TMP/other.png" "$TMP/after_bad.png" || fail "the lesson on screen changed after a failed load"
key Right
shot answered
alive
differ after_bad answered || fail "no longer answers keys after a failed load"
window_quit
echo "picker_test: ok"
INNER
window_test_run 150
