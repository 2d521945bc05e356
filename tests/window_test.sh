#!/bin/sh
# The real window under Xvfb: opens, changes stage by stage, shows and hides the
# help overlay, survives a resize, saves a PNG with S, exports the lesson with E,
# zooms with the wheel (0 resets), and quits with status 0 on Ctrl+Q (Esc never quits).
# Every wait is bounded and polls (the window's state file, files written); skips
# (exit 77) only when Xvfb is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_test xdotool import
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=window_test
. "$3"
export ATTNVIZ_SAVE_DIR="$TMP"
window_start "$TMP/out.txt" "$TMP/err.txt" --size 1280x720 lessons/arange-2x4x4.json
idle
shot s0
prev=s0
for i in 1 2 3 4 5; do
    key Right   # (settles: the 1.6 s transition is over)
    shot "s$i"
    differ "$prev" "s$i" || fail "stage $i looks the same as the one before"
    prev="s$i"
done
key question
shot help
differ "$prev" help || fail "the help overlay did not appear on ?"
key question
shot nohelp
cmp -s "$TMP/$prev.png" "$TMP/nohelp.png" || differ help nohelp || fail "the help overlay did not go away"
# the mouse wheel zooms the heatmap under the mouse; 0 shows the whole tensor again
pointer mousemove 1100 500
shot zoom0
pointer click 4
shot zoom1
differ zoom0 zoom1 || fail "the wheel did not zoom"
key 0
shot zoom2
cmp -s "$TMP/zoom0.png" "$TMP/zoom2.png" || fail "0 did not reset the zoom"
pointer mousemove 5 795
key s
ls "$TMP"/attnviz-*.png >/dev/null 2>&1 || fail "S did not save a PNG in ATTNVIZ_SAVE_DIR"
# E offers the formats; 1: the whole lesson as PNGs into a new folder, one per stage, and frames.json
xdotool key --window "$WID" e 1
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
# E then 2: the PDF handout (title page + a page a stage); E then 3: the MP4 of
# every transition, each settled stage held 2 s (60 ticks at 30 fps); E then 4: the GIF; E then Esc: nothing (and the window stays)
xdotool key --window "$WID" e 2
HO=$TMP/attnviz-handout-arange-2x4x4-1.pdf
for _ in $(seq 1 50); do [ -f "$HO" ] && break; sleep 0.2; done
[ "$(pdfinfo "$HO" 2>/dev/null | sed -n 's/^Pages: *//p')" = $((stages + 1)) ] || fail "E 2 did not write a $((stages + 1))-page handout at $HO"
xdotool key --window "$WID" e 3
MP=$TMP/attnviz-export-arange-2x4x4-2
# (a bound against a hang, not a speed test: this MP4 took 20 s alone and over 60 s on the
# two cores under load; the loop ends when frames.json appears or the window has died)
for _ in $(seq 1 3000); do [ -f "$MP/frames.json" ] && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
grep -q '"complete": true' "$MP/frames.json" 2>/dev/null || fail "E 3 did not finish an MP4 export in $MP"
n=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of default=nw=1:nk=1 "$MP/frames.mp4" 2>/dev/null)
# (a held stage is one frame lasting 2 s; the last hold's frame again at its end)
[ "$n" = $((stages * 48 + 1)) ] || fail "E 3: the MP4 has $n frames, expected $((stages * 48 + 1))"
d=$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$MP/frames.mp4" 2>/dev/null)
awk -v d="$d" -v w=$((stages * (48 + 60))) 'BEGIN { exit !(d >= w / 30 - 0.05 && d <= w / 30 + 0.05) }' ||
    fail "E 3: the MP4 lasts $d s, expected $((stages * (48 + 60))) frames of 1/30 s"
xdotool key --window "$WID" e 4
GF=$TMP/attnviz-export-arange-2x4x4-3
for _ in $(seq 1 300); do [ -f "$GF/frames.json" ] && break; sleep 0.2; done
n=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of default=nw=1:nk=1 "$GF/frames.gif" 2>/dev/null)
[ "$n" = $((stages * (48 + 60))) ] || fail "E 4: the GIF has $n frames, expected $((stages * (48 + 60)))"
key e Escape
kill -0 "$PID" 2>/dev/null || fail "Esc after E quit the app (it should only cancel the choice)"
[ -e "$TMP/attnviz-export-arange-2x4x4-4" ] && fail "E then Esc exported"
mark
xdotool windowsize "$WID" 900 600
settle
shot resized
kill -0 "$PID" 2>/dev/null || fail "attnviz died after a resize"
differ nohelp resized || fail "nothing changed after the resize"
window_quit
echo "window_test: ok"
INNER
window_test_run 180
