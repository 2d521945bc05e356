#!/bin/sh
# Presenter mode on one display (issue 23: both windows opened 1280x720 at the same
# place, the presenter's hidden): under Xvfb (one 1920x1080 screen, no window manager)
# the audience and presenter windows do not overlap and stay on the screen, whether
# they fit side by side as they are (800x600) or not (1280x720: the presenter window
# narrower, the audience's smaller). Then the same on one 1280x720 screen (issue 35: the
# audience window shrank to 640x360 and the presenter window ran 8 px off the screen):
# the audience window keeps at least 800 px and its height, the presenter's 440 px.
# Every wait is bounded and polls; skips (exit 77) only when Xvfb is missing.
if [ -z "${PLACE_SCREEN:-}" ]; then
    PLACE_SCREEN=1280x720 sh "$0" || exit $?
    PLACE_SCREEN=1920x1080
fi
export PLACE_SCREEN
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_placement_test xdotool
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME="window_placement_test ($PLACE_SCREEN)"
. "$3"
SW=${PLACE_SCREEN%x*} SH=${PLACE_SCREEN#*x}
# geometry WINDOW: "X Y W H" of a window on the screen
geometry() {
    xdotool getwindowgeometry --shell "$1" | awk -F= '/^X=/{x=$2} /^Y=/{y=$2} /^WIDTH=/{w=$2} /^HEIGHT=/{h=$2} END {print x, y, w, h}'
}
# launch SIZE: attnviz --presenter at SIZE; PID, and N: its visible top-level windows
# once there are two (or after 30 s). An X client holds the server while attnviz
# connects: Xvfb resets whenever its last client leaves (after the previous window,
# after each xdotool call), and a window opened during a reset could stay unseen.
launch() {
    xprop -root -spy >/dev/null 2>&1 &
    HOLD=$!
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$B/attnviz" --presenter --size "$1" lessons/arange-2x4x4.json \
        >"$TMP/out.txt" 2>"$TMP/err.txt" &
    PID=$!
    N=0
    for _ in $(seq 1 150); do
        N=$(xdotool search --onlyvisible --pid "$PID" 2>/dev/null | wc -l)
        [ "$N" -ge 2 ] && break
        kill -0 "$PID" 2>/dev/null || { kill "$HOLD" 2>/dev/null; fail "exited before its windows opened ($(cat "$TMP/err.txt"))"; }
        sleep 0.2
    done
    kill "$HOLD" 2>/dev/null
}
for size in 800x600 1280x720; do
    rm -f "$STATE" # (the first window's last state would pass for the second's: idle)
    launch "$size"
    if [ "$N" -ne 2 ]; then # seen twice in CI, never reproduced: said, and tried once more
        echo "$NAME: $size: $N top-level windows after 30 s (the screen has $(xwininfo -root -children 2>&1 | grep -c '"')); starting it again"
        kill -9 "$PID" 2>/dev/null; wait "$PID" 2>/dev/null
        launch "$size"
    fi
    [ "$N" -eq 2 ] || fail "$size: $N top-level windows, expected 2 ($(cat "$TMP/err.txt"))"
    A= P=
    for w in $(xdotool search --onlyvisible --pid "$PID"); do
        if xdotool getwindowname "$w" | grep -q presenter; then P=$w; else A=$w; fi
    done
    [ -n "$A" ] && [ -n "$P" ] || fail "$size: no audience and presenter window among the two"
    idle
    set -- $(geometry "$A") $(geometry "$P")
    echo "$NAME: --size $size: audience $3x$4 at $1,$2; presenter $7x$8 at $5,$6"
    # no overlap: one is left of, right of, above or below the other; both on the screen
    [ $(($1 + $3)) -le "$5" ] || [ $(($5 + $7)) -le "$1" ] || [ $(($2 + $4)) -le "$6" ] || [ $(($6 + $8)) -le "$2" ] ||
        fail "$size: the windows overlap (audience $3x$4 at $1,$2; presenter $7x$8 at $5,$6)"
    for v in "$1" "$2" "$5" "$6"; do [ "$v" -ge 0 ] || fail "$size: a window off the screen"; done
    [ $(($1 + $3)) -le "$SW" ] && [ $(($5 + $7)) -le "$SW" ] && [ $(($2 + $4)) -le "$SH" ] && [ $(($6 + $8)) -le "$SH" ] ||
        fail "$size: a window off the $PLACE_SCREEN screen (audience $3x$4 at $1,$2; presenter $7x$8 at $5,$6)"
    [ "$7" -ge 440 ] || fail "$size: the presenter window is only $7 px wide"
    [ "$3" -ge 800 ] || fail "$size: the audience window is only $3 px wide"
    [ "$4" -eq "${size#*x}" ] || fail "$size: the audience window became $3x$4 (its height kept)"
    [ "$size" = 800x600 ] && { [ "$3x$4" = 800x600 ] || fail "800x600: the audience window became $3x$4 (room for both)"; }
    xdotool key --window "$A" ctrl+q 2>/dev/null
    for _ in $(seq 1 25); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$PID" 2>/dev/null && fail "$size: still running 5 s after Ctrl+Q"
    wait "$PID"
    PID=
done
echo "window_placement_test: ok"
INNER
window_test_run 120 "$PLACE_SCREEN"
