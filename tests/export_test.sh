#!/bin/sh
# Headless export: no DISPLAY, one PNG per stage at 1280×720 with a frames.json
# that lists exactly them; --animate writes every frame; bad directories and
# options give one-line errors; SIGINT leaves only complete PNGs, listed; a
# file-size limit gives one line and exit 1. --projector: its palette, numbers and parts, a frame a part.
# (A full disk and a read-only directory: export_disk_test.sh; the window's own save (S)
# against an export: test_window.)
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
lesson=lessons/arange-2x4x4.json

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
# injected: a 40 KiB file-size limit makes the first PNG write fail with EFBIG
( ulimit -f 40; env -u DISPLAY "$bin" --export "$tmp/big" "$lesson" >/dev/null 2>"$tmp/err" ); rc=$?
[ "$rc" -eq 1 ] || fail "file-size limit: exit $rc, expected 1"
grep -q "0000-input.png: File too large" "$tmp/err" || fail "file-size limit: message '$(cat "$tmp/err")'"
check_partial "$tmp/big"

# 7. --projector (issue 23: it was ignored, the PNG identical): the high-contrast palette
#    and projector-sized numbers, a stage shown in parts a frame a part (frames.json says
#    which); at 1280x720 the projections of the 8-token ALiBi lesson are in parts, the
#    classic lesson's fit whole (issue 35: x·Wᵀ + b = Q together), at 1920x1080 too
alibi=lessons/alibi-linear-bias.json
env -u DISPLAY "$bin" --export "$tmp/plain" --stage q_proj "$alibi" >/dev/null 2>&1
env -u DISPLAY "$bin" --export "$tmp/proj" --stage q_proj --projector "$alibi" >/dev/null 2>"$tmp/err" ||
    fail "--projector export failed: $(cat "$tmp/err")"
n=$(ls "$tmp/proj"/*-q_proj.png 2>/dev/null | wc -l)
[ "$n" -gt 1 ] || fail "--projector: the projection in $n frame(s), expected its parts"
cmp -s "$tmp/plain/0000-q_proj.png" "$tmp/proj/0000-q_proj.png" && fail "--projector: the same PNG as without it"
grep -q '"part": 0, "parts": '"$n" "$tmp/proj/frames.json" || fail "--projector: frames.json does not give the parts"
last=$(ls "$tmp/proj"/*-q_proj.png | tail -1)
cmp -s "$tmp/proj/0000-q_proj.png" "$last" && fail "--projector: the parts are the same picture"
for size in 1280x720 1920x1080; do
    rm -rf "$tmp/whole" && mkdir "$tmp/whole"
    env -u DISPLAY "$bin" --export "$tmp/whole" --size $size --stage q_proj --projector "$lesson" >/dev/null 2>&1
    n=$(ls "$tmp/whole"/*-q_proj.png 2>/dev/null | wc -l)
    [ "$n" -eq 1 ] || fail "--projector --size $size: the classic projection in $n frame(s), expected it whole"
done
echo "export: $fails failures"
[ "$fails" -eq 0 ]
