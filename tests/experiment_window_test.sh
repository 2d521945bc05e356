#!/bin/sh
# The experiments drawn in the real window under Xvfb (view_experiment.c, issue 41 item 3):
# Shift+D's menu ends with them; choosing the head-ablation table draws it (the screen changes),
# the logit lens after it draws another, Esc (the experiment's row says "Esc or A: back to the
# stages") and A each go back to the very stage shown before, and the window keeps answering keys. Every wait is bounded and polls; skips (exit 77) only when Xvfb
# is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin experiment_window_test xdotool import
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=experiment_window_test
. "$3"
alive() { kill -0 "$PID" 2>/dev/null || fail "attnviz exited: $(cat "$TMP/err.txt")"; }
window_start "$TMP/out.txt" "$TMP/err.txt" --lang en --size 1280x720 lessons/induction-heads.json
idle
shot before
# Shift+D, End: the last entry (direct logit attribution); Up Up: the head-ablation table
key shift+d
shot menu
differ before menu || fail "Shift+D did not open the compare menu"
key End Up Up Return
idle
shot ablation
alive
differ before ablation || fail "choosing the head-ablation table did not draw it"
grep -q . "$TMP/err.txt" && fail "stderr: $(cat "$TMP/err.txt")"
# the logit lens (one entry down): another frame
key shift+d
key End Up Return
idle
shot lens
differ ablation lens || fail "the logit lens looks like the ablation table"
# Esc: back to the stages, as before the experiments; then the lens again
key Escape
idle
shot esc
cmp -s "$TMP/before.png" "$TMP/esc.png" || fail "Esc did not go back to the stage shown before"
key shift+d
key End Up Return
idle
shot lens2
cmp -s "$TMP/lens.png" "$TMP/lens2.png" || fail "the logit lens opened again is not the one shown before"
# A: back to the stages, as before the experiments
key a
idle
shot back
cmp -s "$TMP/before.png" "$TMP/back.png" || fail "A did not go back to the stage shown before"
key Right
shot right
differ back right || fail "no longer answers keys after an experiment"
alive
window_quit
echo "experiment_window_test: ok"
INNER
window_test_run 150
