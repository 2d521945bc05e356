#!/bin/sh
# Headless export: no DISPLAY, one PNG per stage at 1280×720 with a frames.json
# that lists exactly them; --animate writes every frame; bad directories and
# options give one-line errors; SIGINT leaves only complete PNGs, listed; and an
# exported frame has the same pixels as the window's own save (S) at that size;
# a full disk, a file-size limit and a read-only directory give one line and exit 1.
B=${BUILD:-build}
bin="$B/attnviz"
lesson=lessons/arange-2x4x4.json
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT

# PNG width and height from the IHDR chunk (bytes 16..23).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'; }

# 1. stills, with no display at all
env -u DISPLAY -u WAYLAND_DISPLAY "$bin" --export "$tmp/still" "$lesson" >"$tmp/out" 2>"$tmp/err" || fail "still export exited $?: $(cat "$tmp/err")"
stages=$("$bin" --dump "$lesson" | grep -c '"name"')
pngs=$(ls "$tmp/still"/*.png 2>/dev/null | wc -l)
[ "$pngs" -eq "$stages" ] || fail "expected $stages stills, got $pngs"
for f in "$tmp/still"/*.png; do
    [ "$(png_size "$f")" = 1280x720 ] || { fail "$f is $(png_size "$f"), expected 1280x720"; break; }
done
[ -f "$tmp/still/0007-scores.png" ] || fail "no 0007-scores.png (NNNN-STAGE.png naming)"
listed=$(grep -o '"file": "[^"]*"' "$tmp/still/frames.json" | sed 's/.*: "//; s/"$//' | sort)
present=$(cd "$tmp/still" && ls *.png | sort)
[ "$listed" = "$present" ] || fail "frames.json does not list exactly the PNGs"
grep -q '"complete": true' "$tmp/still/frames.json" || fail "frames.json not marked complete"
grep -q "^exported $stages frames to $tmp/still in .* frames/s)" "$tmp/out" || fail "no summary line: $(cat "$tmp/out")"

# 2. --animate: every frame of every transition (48 per stage at 30 fps)
env -u DISPLAY "$bin" --export "$tmp/anim" --animate --fps 10 --size 640x360 "$lesson" >/dev/null 2>"$tmp/err" || fail "animate exited $?"
per=$(awk 'BEGIN { printf "%d", 1.6 * 10 + 0.999 }')
n=$(ls "$tmp/anim"/*.png | wc -l)
[ "$n" -eq $((per * stages)) ] || fail "animate wrote $n frames, expected $((per * stages))"
[ "$(png_size "$tmp/anim/0000-input.png")" = 640x360 ] || fail "--size not honoured"
# mid-transition frames differ from the settled one
cmp -s "$tmp/anim/0017-q_proj.png" "$tmp/anim/0031-q_proj.png" && fail "animation frames do not change"

# 3. one stage, a batch and a head
env -u DISPLAY "$bin" --export "$tmp/one" --stage attn --batch 1 --head 1 "$lesson" >/dev/null 2>&1 || fail "--stage export failed"
[ "$(ls "$tmp/one"/*.png | wc -l)" -eq 1 ] || fail "--stage attn should write one frame"
grep -q '"batch": 1, "head": 1' "$tmp/one/frames.json" || fail "frames.json lacks batch/head"

# 4. errors: one line, non-zero, nothing half-written
check_err() { # expected-exit pattern args...
    want=$1 pat=$2; shift 2
    env -u DISPLAY "$bin" "$@" >/dev/null 2>"$tmp/err"; rc=$?
    [ "$rc" -eq "$want" ] || fail "$*: exit $rc, expected $want"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$*: $(wc -l <"$tmp/err") lines on stderr"
    grep -q "$pat" "$tmp/err" || fail "$*: message '$(cat "$tmp/err")' lacks '$pat'"
}
check_err 1 "parent does not exist" --export "$tmp/no/such/dir" "$lesson"
touch "$tmp/afile"
check_err 1 "not a directory" --export "$tmp/afile" "$lesson"
check_err 2 'no stage "nope"' --export "$tmp/x1" --stage nope "$lesson"
check_err 2 "heads 0..1" --export "$tmp/x2" --head 5 "$lesson"
check_err 1 "model.n_heads" --export "$tmp/x3" tests/bad/heads-not-dividing.json
check_err 2 "go with --export" --animate "$lesson"

# 5. SIGINT mid-export: exit 130, only complete PNGs, frames.json lists exactly them
env -u DISPLAY "$bin" --export "$tmp/int" --animate --fps 240 "$lesson" >/dev/null 2>"$tmp/err" &
pid=$!
i=0; while [ $i -lt 100 ] && [ "$(ls "$tmp/int" 2>/dev/null | grep -c png)" -lt 20 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT $pid; wait $pid; rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, expected 130"
grep -q "interrupted by SIGINT" "$tmp/err" || fail "SIGINT: no message"
ls -a "$tmp/int" | grep -q 'tmp' && fail "SIGINT left temporary files: $(ls -a "$tmp/int" | grep tmp)"
listed=$(grep -o '"file": "[^"]*"' "$tmp/int/frames.json" | sed 's/.*: "//; s/"$//' | sort)
present=$(cd "$tmp/int" && ls *.png | sort)
[ -n "$present" ] && [ "$listed" = "$present" ] || fail "SIGINT: frames.json does not list exactly the PNGs on disk"
grep -q '"complete": false' "$tmp/int/frames.json" || fail "SIGINT: frames.json should say complete: false"
for f in "$tmp/int"/*.png; do   # every PNG ends with its IEND chunk
    tail -c 8 "$f" | od -An -c | grep -q 'I   E   N   D' || { fail "$f is incomplete"; break; }
done

# 6. a write that fails mid-export: one line naming the file and the cause, exit 1,
#    and only complete PNGs, all listed in frames.json
check_partial() { # dir
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: $(wc -l <"$tmp/err") lines on stderr: $(cat "$tmp/err")"
    ls -a "$1" | grep -q tmp && fail "$1: temporary files left: $(ls -a "$1")"
    listed=$(grep -o '"file": "[^"]*"' "$1/frames.json" 2>/dev/null | sed 's/.*: "//; s/"$//' | sort)
    present=$(cd "$1" && ls *.png 2>/dev/null | sort)
    [ "$listed" = "$present" ] || fail "$1: frames.json does not list exactly the PNGs"
}
# injected: a 40 KiB file-size limit makes the first PNG write fail with EFBIG
( ulimit -f 40; env -u DISPLAY "$bin" --export "$tmp/big" "$lesson" >/dev/null 2>"$tmp/err" ); rc=$?
[ "$rc" -eq 1 ] || fail "file-size limit: exit $rc, expected 1"
grep -q "0000-input.png: File too large" "$tmp/err" || fail "file-size limit: message '$(cat "$tmp/err")'"
check_partial "$tmp/big"
# real: a full 150 KiB tmpfs and a read-only mount (needs root; CI is root)
if [ "$(id -u)" = 0 ] && mkdir -p "$tmp/full" && mount -t tmpfs -o size=150k tmpfs "$tmp/full" 2>/dev/null; then
    env -u DISPLAY "$bin" --export "$tmp/full/out" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
    [ "$rc" -eq 1 ] || fail "full disk: exit $rc, expected 1"
    grep -q "No space left on device" "$tmp/err" || fail "full disk: message '$(cat "$tmp/err")'"
    check_partial "$tmp/full/out"
    mkdir "$tmp/full/ro" && mount -o remount,ro "$tmp/full" 2>/dev/null || fail "cannot remount read-only"
    env -u DISPLAY "$bin" --export "$tmp/full/ro" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
    [ "$rc" -eq 1 ] && grep -q "not writable: Read-only file system" "$tmp/err" || fail "read-only dir: exit $rc, '$(cat "$tmp/err")'"
    umount "$tmp/full"
else
    echo "skip: full-disk and read-only tmpfs tests need root (the file-size-limit test ran)"
fi

# 7. the window's own save (S) has the export's pixels at the same size
if command -v xvfb-run >/dev/null && command -v xdotool >/dev/null && command -v compare >/dev/null; then
    mkdir -p "$tmp/win"
    cat >"$tmp/win.sh" <<EOS
"$bin" --size 1280x720 "$lesson" >"$tmp/win.out" 2>&1 &
p=\$!
xdotool search --sync --onlyvisible --name attnviz >/dev/null 2>&1
xdotool mousemove 1279 799; sleep 1
for k in Right Right Right Right Right Right Right; do xdotool key \$k; sleep 0.1; done
sleep 3; xdotool key s; sleep 1; xdotool key Escape; wait \$p
EOS
    ATTNVIZ_SAVE_DIR="$tmp/win" timeout 60 xvfb-run -a -s "-screen 0 1280x800x24" sh "$tmp/win.sh"
    saved=$(ls "$tmp/win"/*.png 2>/dev/null | head -1)
    if [ -z "$saved" ]; then
        fail "window did not save a frame: $(cat "$tmp/win.out")"
    else
        diff=$(compare -metric AE -fuzz 2% "$saved" "$tmp/still/0007-scores.png" null: 2>&1)
        echo "window save vs export (scores): $diff pixels differ by more than 2%"
        [ "${diff%%.*}" -lt 100 ] 2>/dev/null || fail "window and export differ in $diff pixels"
    fi
else
    echo "skip: window comparison needs xvfb-run, xdotool and ImageMagick"
fi

echo "export: $fails failures"
[ "$fails" -eq 0 ]
