#!/bin/sh
# Issue 15 ("Reliability, round two"), the export's part; each check is named
# after the issue's item:
#  item1  links planted at the temporary names an export used to use
#         (DIR/.frames.json.tmp-PID, NNNN-STAGE.png.tmp-PID) are never followed:
#         the file they point to is untouched, the export succeeds
#  item2  a re-export killed with SIGKILL after its first PNGs never leaves the
#         old frames.json saying "complete": true; the next export removes the
#         temporary files it left
#  item3  a second export into a folder being exported to fails at once with
#         one line "DIR is in use by another export"; the first is undisturbed
#  item8  a symbolic link loop or a dangling link as the folder is said as such
B=${BUILD:-build}
bin="$B/attnviz"
lesson=lessons/arange-2x4x4.json
fails=0
fail() { printf "FAIL %s\n" "$*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
bg=""
trap '[ -n "$bg" ] && kill -KILL $bg 2>/dev/null; rm -rf "$tmp"' EXIT
export_() { env -u DISPLAY "$bin" --export "$@"; }
# waits (up to 60 s) until a file matching the glob $1 exists
wait_for() {
    i=0
    while ! ls $1 >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 3000 ] && return 1; sleep 0.02
    done
}
stages="input q_proj k_proj v_proj q_heads k_heads v_heads scores masked_scores attn head_out concat output"

# --- item 1: planted links at the old, predictable temporary names -------------------------
mkdir "$tmp/shared"
printf 'precious\n' >"$tmp/victim"
# exec keeps the shell's PID: the links carry the PID the export will have
sh -c 'd=$1 v=$2; shift 2
       ln -s "$v" "$d/.frames.json.tmp-$$"; i=0
       for s in '"$stages"'; do ln -s "$v" "$d/$(printf %04d $i)-$s.png.tmp-$$"; i=$((i + 1)); done
       exec env -u DISPLAY "$@"' sh "$tmp/shared" "$tmp/victim" "$bin" --export "$tmp/shared" "$lesson" \
    >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 0 ] || fail "item1 export into a folder with planted links: exit $rc: $(head -c 300 "$tmp/err")"
[ "$(cat "$tmp/victim")" = precious ] || fail "item1 a planted link was followed: the victim file now holds $(wc -c <"$tmp/victim") bytes"
for f in "$tmp"/shared/*.png "$tmp/shared/frames.json"; do
    [ -L "$f" ] && fail "item1 $f is a symbolic link"
done
[ "$(ls "$tmp"/shared/*.png | wc -l)" -eq 13 ] || fail "item1 expected 13 PNGs"

# --- item 2: a killed re-export -----------------------------------------------------------
re="$tmp/re"
export_ "$re" lessons/causal-decoder.json >/dev/null 2>&1 || fail "item2 the first export failed"
grep -q '"complete": true' "$re/frames.json" || fail "item2 the first export is not complete"
env -u DISPLAY "$bin" --export "$re" --animate --fps 240 --size 640x360 "$lesson" >/dev/null 2>&1 &
bg=$!
# frame 100 exists only in the re-export: it has written PNGs over the old ones
if wait_for "$re/0100-*.png"; then
    kill -KILL $bg; wait $bg 2>/dev/null; bg=""
    if [ -f "$re/frames.json" ] && grep -q '"complete": true' "$re/frames.json"; then
        fail "item2 killed mid-re-export, frames.json still says complete: $(head -c 200 "$re/frames.json")"
    fi
    export_ "$re" "$lesson" >/dev/null 2>"$tmp/err" || fail "item2 export after a kill: $(cat "$tmp/err")"
    left=$(ls -a "$re" | grep -c '\.tmp-')
    [ "$left" -eq 0 ] || fail "item2 $left temporary files left after the next export: $(ls -a "$re" | grep '\.tmp-' | head -3)"
    grep -q '"complete": true' "$re/frames.json" || fail "item2 the export after a kill is not complete"
else
    fail "item2 the re-export wrote no frame 100 within 60 s"
    kill -KILL $bg; bg=""
fi

# --- item 3: two exports into one folder --------------------------------------------------------
two="$tmp/two"
env -u DISPLAY "$bin" --export "$two" --animate --fps 240 --size 640x360 "$lesson" >/dev/null 2>"$tmp/err1" &
bg=$!
if wait_for "$two/0005-*.png"; then
    export_ "$two" lessons/causal-decoder.json >"$tmp/out2" 2>"$tmp/err2"; rc=$?
    [ "$rc" -eq 1 ] || fail "item3 a second export into $two: exit $rc, expected 1"
    [ "$(wc -l <"$tmp/err2")" -eq 1 ] && grep -qF "$two is in use by another export" "$tmp/err2" ||
        fail "item3 second export said: $(head -c 300 "$tmp/err2")"
    kill -TERM $bg; wait $bg; rc=$?; bg=""
    [ "$rc" -eq 143 ] || fail "item3 the first export, stopped by SIGTERM: exit $rc, expected 143"
    grep -q "\"lesson\": \"$lesson\"" "$two/frames.json" || fail "item3 frames.json is not the first export's"
    n_listed=$(grep -c '"file": ' "$two/frames.json")
    n_png=$(ls "$two" | grep -c '\.png$')
    [ "$n_listed" -eq "$n_png" ] || fail "item3 frames.json lists $n_listed frames, the folder has $n_png PNGs"
    # the lock goes with the process: the folder is free again
    export_ "$two" lessons/causal-decoder.json >/dev/null 2>"$tmp/err2" || fail "item3 export after the first ended: $(cat "$tmp/err2")"
else
    fail "item3 the first export wrote no frame 5 within 60 s"
    kill -KILL $bg; bg=""
fi

# --- item 8: links that lead nowhere as the folder ----------------------------------------------
ln -s "$tmp/loop" "$tmp/loop"
ln -s "$tmp/nowhere/out" "$tmp/dangling"
export_ "$tmp/loop" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "loop: a symbolic link loop" "$tmp/err" && ! grep -q "File exists" "$tmp/err" ||
    fail "item8 a symlink loop as the folder: exit $rc: $(cat "$tmp/err")"
export_ "$tmp/dangling" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "dangling: a dangling symbolic link" "$tmp/err" && ! grep -q "File exists" "$tmp/err" ||
    fail "item8 a dangling link as the folder: exit $rc: $(cat "$tmp/err")"

echo "export hostile: $fails failures"
[ "$fails" -eq 0 ]
