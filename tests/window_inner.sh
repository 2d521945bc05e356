# window_inner.sh — helpers for the part of a window test that runs under Xvfb
# (sourced by each test's inner script; not a test itself). The caller sets NAME
# (the test's name), B (the build directory) and TMP (its temporary directory).
PID=
fail() { echo "$NAME: FAIL: $*"; [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; exit 1; }
# The window runs on a fake clock (ATTNVIZ_TEST_CLOCK: 50 ms a frame, so a 1.6 s
# transition takes as long as 32 frames take to draw) and rewrites $STATE after each
# frame: "FRAMES EVENTS BUSY STAGE KEYUPS" (probe.h). The tests wait for that, never a
# fixed time.
STATE=$TMP/state
export ATTNVIZ_TEST_CLOCK=50 ATTNVIZ_TEST_STATE="$STATE"
MARK=-1 KEYS=0
# mark: remember how many events (and key releases) the window has handled: settle
# waits for more (and key waits for its keys' releases)
mark() {
    set -- $(cat "$STATE" 2>/dev/null)
    MARK=${2:-0} KEYS=${5:-0}
}
# settle: wait (at most 30 s) until the window has handled an event since mark and
# nothing moves (no transition, toast or export running), the same for two polls in a
# row (a key with Shift arrives as two events, maybe in two frames)
settle() {
    seen=
    for _ in $(seq 1 600); do
        set -- $(cat "$STATE" 2>/dev/null)
        if [ $# -ge 5 ] && [ "$2" -gt "$MARK" ] && [ "$3" = 0 ] && [ "$5" -ge "$KEYS" ]; then
            [ "$seen" = "$2" ] && return 0
            seen=$2
        else
            seen=
        fi
        kill -0 "$PID" 2>/dev/null || fail "attnviz exited while waiting for it to settle"
        sleep 0.05
    done
    fail "the window did not settle within 30 s after ${WHAT:-the last step} (state: $(cat "$STATE" 2>/dev/null), mark $MARK)"
}
# drawn N: wait (at most 30 s) until the window has handled an event since mark and
# drawn N frames after it (for modes that keep drawing: the study mode holds a
# transition while a question waits)
drawn() {
    f0= n=$1
    for _ in $(seq 1 600); do
        set -- $(cat "$STATE" 2>/dev/null)
        if [ $# -ge 3 ] && [ "$2" -gt "$MARK" ]; then
            [ -z "$f0" ] && f0=$1
            [ "$1" -ge $((f0 + n)) ] && return 0
        fi
        kill -0 "$PID" 2>/dev/null || fail "attnviz exited while waiting for frames"
        sleep 0.02
    done
    fail "the window drew no $n frames after an event within 30 s (state: $(cat "$STATE" 2>/dev/null))"
}
# idle: wait (at most 30 s) until nothing moves, whatever the events
idle() { MARK=-1 KEYS=0; WHAT="waiting for stillness"; settle; }
# key [--window W] KEYS...: xdotool key to the window (W, or $WID), then settle once
# the last key is released (each KEY's own key comes up before its modifiers: Ctrl,
# or the Shift of "question", are handled before it)
key() {
    w=$WID
    [ "$1" = --window ] && w=$2 && shift 2
    mark
    KEYS=$((KEYS + $#))
    WHAT="key $*"
    xdotool key --window "$w" "$@"
    settle
}
# typein TEXT: the characters typed into the window, then settle
typein() { mark; WHAT="typing $1"; xdotool type --window "$WID" -- "$1"; settle; }
# pointer XDOTOOL-MOUSE-ARGS...: xdotool mousemove … [click N] (screen pixels), then settle
pointer() { mark; WHAT="xdotool $*"; xdotool "$@"; settle; }
# shot NAME: a screenshot of the whole screen into $TMP/NAME.png (after a settle)
shot() { import -window root "$TMP/$1.png" 2>/dev/null || fail "screenshot $1"; }
# differ A B: the screenshots differ
differ() { ! cmp -s "$TMP/$1.png" "$TMP/$2.png"; }
# window_start OUT ERR ARGS...: attnviz ARGS in a window, stdout into OUT, stderr into
# ERR; sets PID and WID, focuses it and keeps the pointer away from the cells; returns
# once it has drawn a frame (idle then waits until nothing moves).
# Under ASan (make SAN=1) libdbus, libX11 and the X11 modules SDL dlopens leak a few
# hundred bytes at exit, which LeakSanitizer would turn into exit status 1; leaks in
# attnviz's own drawing code are checked by test_render. Other errors still fail.
window_start() {
    out=$1 err=$2
    shift 2
    rm -f "$STATE" # (an earlier window's last state would pass for this one's: idle, mark)
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$B/attnviz" "$@" >"$out" 2>"$err" &
    PID=$!
    WID=$(timeout 60 xdotool search --sync --onlyvisible --name attnviz 2>/dev/null | head -n 1)
    [ -n "$WID" ] || fail "no window named attnviz within 60 s ($(cat "$err"))"
    xdotool windowactivate --sync "$WID" >/dev/null 2>&1 || xdotool windowfocus "$WID" >/dev/null 2>&1
    xdotool mousemove 5 795 # no tooltip
    MARK=-1
    drawn 1
}
# window_quit [WHAT]: Ctrl+Q must end the process with status 0 within 5 s (Esc never quits)
window_quit() {
    what=${1:+$1: }
    xdotool key --window "$WID" ctrl+q 2>/dev/null # the window may be gone before the key-up
    for _ in $(seq 1 25); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$PID" 2>/dev/null && fail "${what}still running 5 s after Ctrl+Q"
    wait "$PID"; rc=$?
    [ "$rc" -eq 0 ] || fail "${what}exit status $rc after Ctrl+Q ($(tail -c 400 "$err" 2>/dev/null))"
    PID=
}
