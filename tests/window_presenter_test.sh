#!/bin/sh
# Presenter mode under Xvfb (a screen wide enough for both windows side by side):
#  - attnviz --presenter opens two top-level windows: the audience's and the presenter's;
#  - the teacher's notes (their box colour) are in the presenter window, never the audience's;
#  - → typed in the presenter window changes both windows (S names the stage: mask);
#  - "." blacks the audience window out and back; End then F5 in the presenter
#    window starts over from the first stage (input);
#  - pinned tooltips (a click on an attention weight; X clears them) and the spotlight (H)
#    are in the audience window's S-save, and so is the laser dot (Ctrl+L);
#  - K holds a transition (the frame stands still), Ctrl+→ steps it, dragging the
#    presenter window's scrub bar moves it;
#  - projector mode (--projector, 1024x768): → steps through a stage's parts, then on;
#  - Esc quits from neither window; Q exits 0 from the presenter window, and (last run) from the audience window.
# Every wait is bounded and polls; skips (exit 77) only when Xvfb is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_presenter_test xdotool import convert
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=window_presenter_test
. "$3"
export ATTNVIZ_SAVE_DIR="$TMP"
# presenter_start ARGS...: sets PID, A (the audience window) and P (the presenter's)
presenter_start() {
    # (under ASan, as window_start: the X11 libraries' own leaks at exit are not ours)
    rm -f "$STATE" # the last window's state file: its "settled" would pass for this one's (idle,
                   # mark), and the next key waited for more events than the new window had
    # (an X client holds the server while it starts: Xvfb resets whenever its last client
    # leaves, as between two windows; see window_placement_test.sh)
    xprop -root -spy >/dev/null 2>&1 &
    hold=$!
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$B/attnviz" --presenter "$@" >"$TMP/out.txt" 2>"$TMP/err.txt" &
    PID=$!
    n=0
    for _ in $(seq 1 300); do # at most 60 s (a loaded machine, a sanitizer build)
        n=$(xdotool search --onlyvisible --pid "$PID" 2>/dev/null | wc -l)
        [ "$n" -ge 2 ] && break
        kill -0 "$PID" 2>/dev/null || { kill "$hold"; fail "exited before its windows opened ($(cat "$TMP/err.txt"))"; }
        sleep 0.2
    done
    kill "$hold" 2>/dev/null
    [ "$n" -eq 2 ] || fail "$n top-level windows, expected 2 ($(cat "$TMP/err.txt"); the screen's: $(xwininfo -root -children 2>&1 | grep -c '"'))"
    A= P=
    for w in $(xdotool search --onlyvisible --pid "$PID"); do
        if xdotool getwindowname "$w" | grep -q presenter; then P=$w; else A=$w; fi
    done
    [ -n "$A" ] && [ -n "$P" ] || fail "no audience and presenter window among the two"
    xdotool windowmove "$A" 0 0; xdotool windowmove "$P" 1300 0
    xdotool mousemove 1290 790 # on neither window: no tooltip
    idle
}
# wshot WINDOW NAME: a screenshot of one window
wshot() { import -window "$1" "$TMP/$2.png" 2>/dev/null || fail "screenshot $2"; }
# has_colour NAME HEX: some pixel of the screenshot has that colour
has_colour() { [ "$(convert "$TMP/$1.png" -fill black +opaque "$2" -format "%[fx:mean]" info: 2>/dev/null)" != 0 ]; }
# saved WINDOW: S typed into WINDOW; the stage the newest save names
saved() {
    n=$(ls "$TMP"/attnviz-*.png 2>/dev/null | wc -l)
    xdotool key --window "$1" s
    for _ in $(seq 1 20); do [ "$(ls "$TMP"/attnviz-*.png 2>/dev/null | wc -l)" -gt "$n" ] && break; sleep 0.2; done
    ls -t "$TMP"/attnviz-*.png | head -n 1 | sed 's/.*attnviz-[0-9]*-//; s/\.png$//; s/-[0-9]*$//'
}
# quit_from WINDOW WHAT: Esc in WINDOW does not quit (issue 35: the usual way out of
# fullscreen ended the lecture); Q then ends the process with status 0 within 5 s
quit_from() {
    xdotool key --window "$1" Escape Escape
    sleep 0.5
    kill -0 "$PID" 2>/dev/null || fail "$2: Esc quit"
    xdotool key --window "$1" q 2>/dev/null # the window may be gone before the key-up
    for _ in $(seq 1 25); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$PID" 2>/dev/null && fail "$2: still running 5 s after Q"
    wait "$PID"; rc=$?
    [ "$rc" -eq 0 ] || fail "$2: exit status $rc after Q ($(tail -n 5 "$TMP/err.txt"))"
    PID=
}

presenter_start --size 1200x675 lessons/causal-decoder.json
wshot "$A" a0; wshot "$P" p0
# the notes' box (255, 246, 214) only in the presenter window
has_colour p0 "#FFF6D6" || fail "no teacher's notes box in the presenter window"
has_colour a0 "#FFF6D6" && fail "the audience window shows the teacher's notes box"
# → in the presenter window: both windows change, and the audience's S-save names the next stage
key --window "$P" Right
wshot "$A" a1; wshot "$P" p1
differ a0 a1 || fail "→ in the presenter window did not change the audience window"
differ p0 p1 || fail "→ in the presenter window did not change the presenter window"
st=$(saved "$A"); [ "$st" = mask ] || fail "after → the audience shows $st, expected mask"
idle # the save's toast fades
# . : the audience window goes black (every pixel), and comes back
key --window "$P" period
wshot "$A" black
[ "$(convert "$TMP/black.png" -format "%[fx:maxima]" info: 2>/dev/null)" = 0 ] || fail ". did not black out the audience window"
wshot "$P" pblack
has_colour pblack "#FFF6D6" || fail "the presenter window lost its notes during the black screen"
key --window "$A" period
wshot "$A" back
[ "$(convert "$TMP/back.png" -format "%[fx:maxima]" info: 2>/dev/null)" != 0 ] || fail ". again did not bring the frame back"
# End, then F5 in the presenter window: the first stage again
key --window "$P" End
st=$(saved "$A"); [ "$st" = output ] || fail "End showed $st, expected output"
key --window "$P" F5
st=$(saved "$P"); [ "$st" = input ] || fail "F5 showed $st, expected input (the first stage)"
quit_from "$P" "Esc in the presenter window"
[ -s "$TMP/err.txt" ] && fail "stderr: $(cat "$TMP/err.txt")"

# pins and spotlight: the softmax of the same lesson at 1280x720 (cells at known places)
presenter_start --size 1280x720 lessons/causal-decoder.json
key --window "$P" 6
# the S-save of the newest file, by name
last() { ls -t "$TMP"/attnviz-*.png | head -n 1; }
mean() { convert "$1" -colorspace gray -format "%[fx:mean]" info: 2>/dev/null; }
tip() { [ "$(convert "$1" -fill black +opaque "#FFFFFA" -format "%[fx:mean]" info: 2>/dev/null)" != 0 ]; }
st=$(saved "$A"); [ "$st" = attn ] || fail "6 showed $st, expected attn"
plain=$(last)
tip "$plain" && fail "a tooltip box in the S-save before any pin"
pointer mousemove 700 300 click 1 # attn[0,0,0,0]: not editable, so the click pins it
pointer mousemove 760 420 click 1 # attn[0,0,2,0]
pointer mousemove 1290 790
idle # the first save's toast fades
saved "$A" >/dev/null; pinned=$(last)
tip "$pinned" || fail "no pinned tooltip in the S-save after clicking two weights"
wshot "$P" ppins
tip_w() { convert "$TMP/$1.png" -fill black +opaque "#FFFFFA" -format "%[fx:mean]" info: 2>/dev/null; }
[ "$(tip_w ppins)" != 0 ] || fail "the presenter window's small frame does not show the pins"
key --window "$P" x
saved "$A" >/dev/null; cleared=$(last)
tip "$cleared" && fail "X left a pinned tooltip in the S-save"
# a click on a weight in the presenter window's small frame pins it on the audience window
# (1280x720, the presenter window at x 1300: the small frame at 80-690 x 82-427 in it,
# attn[0,0,0,0] at about (425, 215))
pointer mousemove 1725 215 click 1
pointer mousemove 1290 790
saved "$A" >/dev/null; from_p=$(last)
tip "$from_p" || fail "a click on the presenter window's small frame pinned nothing on the audience window"
key --window "$P" x
pointer mousemove 700 300 click 1
key --window "$A" h
pointer mousemove 300 150 # over the header: the spotlight's disc there, no tooltip
saved "$A" >/dev/null; spot=$(last)
tip "$spot" || fail "the pin is gone from the S-save with the spotlight on"
m0=$(mean "$pinned") m1=$(mean "$spot")
awk -v a="$m0" -v b="$m1" 'BEGIN { exit !(b < 0.75 * a) }' || fail "the spotlight did not dim the S-save (mean $m0 -> $m1)"
# the laser (Ctrl+L): its red dot (230, 20, 30) at the pointer
red() { [ "$(convert "$1" -fill black +opaque "#E6141E" -format "%[fx:mean]" info: 2>/dev/null)" != 0 ]; }
red "$spot" && fail "a laser dot before Ctrl+L"
key --window "$A" h ctrl+l
saved "$A" >/dev/null; laser=$(last)
red "$laser" || fail "no laser dot in the S-save after Ctrl+L"
# the scrub bar: K holds the transition into attn·V where it is (the frame stands
# still), Ctrl+→ steps it one frame, a drag on the presenter window's bar moves it
key --window "$A" ctrl+l x
pointer mousemove 1290 790 # (settled: the last save's toast has faded)
mark
xdotool key --window "$P" 7
drawn 10 # 0.5 s into the 1.6 s transition
key --window "$P" k
wshot "$A" held1; MARK=-1; drawn 4; wshot "$A" held2
cmp -s "$TMP/held1.png" "$TMP/held2.png" || fail "K did not hold the transition (the frame still moves)"
key --window "$P" ctrl+Right
MARK=-1; drawn 3 # (frames drawn since: the stepped one is on the screen before the shot, under load too)
wshot "$A" step1
differ held2 step1 || fail "Ctrl+→ did not step the held transition"
# the presenter's bar is under its small frame: drag from its left end to the right
wshot "$P" pbar
# (1280x720: the small frame spans y 82-427, the bar y 433-455, its track from x 176)
pointer mousemove 1480 444 mousedown 1 mousemove 1800 444 mouseup 1
wshot "$A" dragged
differ step1 dragged || fail "dragging the presenter window's scrub bar did not move the transition"
quit_from "$P" "Esc in the presenter window (pins)"

# projector mode at 1024x768: the masked scores of the ALiBi lesson do not fit together
# with the projector's numbers (the classic lesson's stages do, issue 35), so → shows the
# operands, then the result (same stage), then the next stage
presenter_start --projector --size 1024x768 lessons/alibi-linear-bias.json
key --window "$P" 5
st=$(saved "$A"); [ "$st" = masked_scores ] || fail "projector: 5 showed $st, expected masked_scores"
idle # the save's toast fades
wshot "$A" ops
key --window "$P" Right
wshot "$A" res
differ ops res || fail "projector: → did not show the masked scores' result part"
st=$(saved "$A"); [ "$st" = masked_scores ] || fail "projector: the first → left the masked scores stage ($st)"
key --window "$P" Right
st=$(saved "$A"); [ "$st" = attn ] || fail "projector: the second → showed $st, expected attn"
quit_from "$A" "Esc in the audience window"
echo "window_presenter_test: ok"
INNER
window_test_run 300 2600x800
