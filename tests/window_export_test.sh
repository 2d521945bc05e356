#!/bin/sh
# The window's E export under Xvfb, where it used to go wrong:
#  1. a PNG write that fails near the end (a directory squatting on the last
#     frame's name, so its rename fails with EISDIR) ends the export with one
#     error line naming the file and the cause, writes frames.json for what is
#     complete, and the window keeps answering keys and quits on Ctrl+Q (status 0);
#  2. resizing the window (and F) during an export changes nothing in it: every
#     PNG has the size of the window when E was pressed, the same pixels as
#     attnviz --export at that size, and frames.json says "complete": true;
#  3. Esc during an export (E 4, a GIF) stops it: its folder is gone, the window says
#     so, nothing goes to stderr, and the window keeps answering.
# Every wait is bounded and polls; skips (exit 77) only when Xvfb is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_export_test xdotool compare
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=window_export_test
. "$3"
# PNG width and height from the IHDR chunk (bytes 16..23).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'; }
# start DIR LESSON: the window at 1280x720 saving into DIR; sets PID and WID
start() {
    mkdir -p "$1"
    export ATTNVIZ_SAVE_DIR="$1"
    window_start "$1/out.txt" "$1/err.txt" --size 1280x720 "$2"
}
# wait_file FILE SECONDS
wait_file() {
    i=0; while [ $i -lt $(($2 * 5)) ] && [ ! -f "$1" ]; do sleep 0.2; i=$((i + 1)); done
    [ -f "$1" ]
}

# 1. the last PNG cannot be renamed into place
D=$TMP/fail
start "$D" lessons/arange-2x4x4.json
last=0012-output.png
squatted=
for n in 1 2 3; do  # a new export folder per try, in case E outran the squatter
    EXP=$D/attnviz-export-arange-2x4x4-$n
    # a directory on the last frame's name as soon as E creates the folder
    rm -f "$TMP/squatting"
    ( : >"$TMP/squatting"
      for _ in $(seq 1 3000); do
          mkdir "$EXP/$last" 2>/dev/null && exit 0
          [ -e "$EXP/$last" ] && exit 1     # the PNG got there first
      done; exit 1 ) &
    SQ=$!
    for _ in $(seq 1 100); do [ -e "$TMP/squatting" ] && break; sleep 0.02; done # the squatter runs
    xdotool key --window "$WID" e 1
    wait "$SQ" && { squatted=1; break; }
    wait_file "$EXP/frames.json" 10 || fail "an export without the squatter did not finish"
done
[ -n "$squatted" ] || fail "could not put a directory on $last before E wrote it (3 tries)"
wait_file "$EXP/frames.json" 10 || fail "no frames.json 10 s after a failed write (export hung?)"
for _ in $(seq 1 100); do grep -q "$last" "$D/err.txt" && break; sleep 0.05; done # its error line
kill -0 "$PID" 2>/dev/null || fail "attnviz died after a failed export: $(cat "$D/err.txt")"
grep -q "$last: Is a directory" "$D/err.txt" || fail "no error line naming $last and the cause: '$(cat "$D/err.txt")'"
[ "$(grep -c . "$D/err.txt")" -eq 1 ] || fail "expected one error line, got: $(cat "$D/err.txt")"
grep -q '"complete": false' "$EXP/frames.json" || fail "frames.json of a failed export should say complete: false"
listed=$(grep -o '"file": "[^"]*"' "$EXP/frames.json" | sed 's/.*: "//; s/"$//' | sort)
present=$(cd "$EXP" && find . -maxdepth 1 -type f -name '*.png' | sed 's|^\./||' | sort)
[ -n "$present" ] && [ "$listed" = "$present" ] || fail "frames.json does not list exactly the PNGs written"
ls -a "$EXP" | grep -q 'tmp' && fail "temporary files left: $(ls -a "$EXP" | grep tmp)"
# the window still answers keys: S saves a frame and prints its path
xdotool key --window "$WID" s
i=0; while [ $i -lt 25 ] && ! grep -q 'attnviz-0001-input.png' "$D/out.txt"; do sleep 0.2; i=$((i + 1)); done
grep -q 'attnviz-0001-input.png' "$D/out.txt" && [ -f "$D/attnviz-0001-input.png" ] ||
    fail "S did nothing after the failed export (window not answering?)"
window_quit "failed export"

# 2. resize and F during an export of the long lesson
R=$TMP/resize
start "$R" tests/big/long-256.json
EXP=$R/attnviz-export-long-256-1
xdotool key --window "$WID" e 1
xdotool windowsize "$WID" 900 600
xdotool key --window "$WID" f
wait_file "$EXP/frames.json" 30 || fail "the export did not finish within 30 s: $(cat "$R/err.txt")"
grep -qi 'export' "$R/err.txt" && fail "the resized export failed: $(cat "$R/err.txt")"
grep -q '"complete": true' "$EXP/frames.json" || fail "resized export: frames.json not complete"
# (the line is printed once frames.json is in place: poll for it, as for the file)
i=0; while [ $i -lt 25 ] && ! grep -q "$EXP" "$R/out.txt"; do sleep 0.2; i=$((i + 1)); done
grep -q "$EXP" "$R/out.txt" || fail "resized export: the folder was not printed"
env -u DISPLAY "$B/attnviz" --export "$TMP/cli" --size 1280x720 tests/big/long-256.json >/dev/null 2>&1 ||
    fail "attnviz --export of tests/big/long-256.json failed"
stages=$(ls "$TMP/cli"/*.png | wc -l)
pngs=$(ls "$EXP"/*.png 2>/dev/null | wc -l)
[ "$pngs" -eq "$stages" ] || fail "resized export wrote $pngs PNGs, expected $stages"
for f in "$EXP"/*.png; do
    [ "$(png_size "$f")" = 1280x720 ] || fail "${f##*/} is $(png_size "$f"), expected 1280x720 (the size at E)"
done
# drawn offscreen exactly like --export: the same pixels
for f in "$TMP/cli"/*.png; do
    ae=$(compare -metric AE "$f" "$EXP/${f##*/}" null: 2>&1)
    [ "$ae" = 0 ] || fail "E's ${f##*/} differs from attnviz --export's in $ae pixels"
done
window_quit "resized export"

# 3. Esc stops an export and leaves nothing
X=$TMP/stop
start "$X" tests/big/long-256.json
EXP=$X/attnviz-export-long-256-1
xdotool key --window "$WID" e 4
i=0; while [ $i -lt 50 ] && [ ! -d "$EXP" ]; do sleep 0.1; i=$((i + 1)); done
[ -d "$EXP" ] || fail "E 4 made no export folder in 5 s"
xdotool key --window "$WID" Escape
i=0; while [ $i -lt 50 ] && [ -d "$EXP" ]; do sleep 0.1; i=$((i + 1)); done
[ -d "$EXP" ] && fail "Esc did not stop the export: $EXP still there ($(ls "$EXP" | head -3 | tr '\n' ' '))"
ls "$X" | grep -q attnviz-export && fail "an export folder was left: $(ls "$X")"
[ -s "$X/err.txt" ] && fail "stopping the export wrote to stderr: $(cat "$X/err.txt")"
grep -q "$EXP" "$X/out.txt" && fail "a stopped export printed its folder as saved"
xdotool key --window "$WID" s
i=0; while [ $i -lt 25 ] && ! grep -q 'attnviz-0001-input.png' "$X/out.txt"; do sleep 0.2; i=$((i + 1)); done
grep -q 'attnviz-0001-input.png' "$X/out.txt" || fail "S did nothing after Esc stopped the export"
window_quit "stopped export"
echo "window_export_test: ok"
INNER
window_test_run 150
