#!/bin/sh
# The real window under Xvfb, the keys and pointer of the stage recipes:
#  - two digits typed quickly reach steps 10 and 11 (1 then 0, 1 then 1); one digit
#    alone still jumps at once; S names the stage it saves, which tells where we are;
#  - hovering a softmax's Σ cell shows its tooltip (the screen changes);
#  - G cycles the attention colour scale (the frame changes, a toast says which).
# Every wait is bounded; skips (exit 0) only when xvfb-run is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_keys_test xdotool import
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=window_keys_test
. "$3"
# the stage S saves (attnviz-NNNN-STAGE.png: the newest file)
saved() {
    n=$(ls "$TMP"/attnviz-*.png 2>/dev/null | wc -l)
    xdotool key --window "$WID" s
    for _ in $(seq 1 20); do [ "$(ls "$TMP"/attnviz-*.png 2>/dev/null | wc -l)" -gt "$n" ] && break; sleep 0.2; done
    ls -t "$TMP"/attnviz-*.png | head -n 1 | sed 's/.*attnviz-[0-9]*-//; s/\.png$//; s/-[0-9]*$//'
}
export ATTNVIZ_SAVE_DIR="$TMP"
window_start "$TMP/out.txt" "$TMP/err.txt" --size 1280x720 lessons/dk-dv-residual-ffn.json
sleep 1
xdotool key --window "$WID" 1 0
sleep 2.2
st=$(saved); [ "$st" = residual_sum ] || fail "1 then 0 showed $st, expected step 10 (residual_sum)"
xdotool key --window "$WID" 1 1
sleep 2.2
st=$(saved); [ "$st" = ffn_hidden ] || fail "1 then 1 showed $st, expected step 11 (ffn_hidden)"
sleep 1.2 # longer than a second: the next digit starts anew
xdotool key --window "$WID" 6
sleep 2.2
st=$(saved); [ "$st" = attn ] || fail "6 showed $st, expected step 6 (attn)"
# the Σ column of the softmax: its tooltip. The Σ cell of row 0 is right of the
# result panel: find it as the rightmost yellow (Σ = 1) pixel run in the row of cells
sleep 2.5 # the save's toast fades
shot plain 0.2
convert "$TMP/plain.png" -crop 1280x60+0+260 txt:- 2>/dev/null | grep -i "#FDE725\|#FDE724\|#FCE626" | tail -n 1 >"$TMP/sigma.txt"
x=$(sed 's/,.*//' "$TMP/sigma.txt")
[ -n "$x" ] || fail "no Σ cell found on the softmax frame"
xdotool mousemove "$((x - 4))" 285
shot hover 0.6
differ plain hover || fail "hovering the Σ cell at ($x, 285) changed nothing"
# the tooltip's own background colour (255, 255, 250) is on screen only with it
tipbg() { convert "$TMP/$1.png" -fill black +opaque "#FFFFFA" -format "%[fx:mean]" info: 2>/dev/null; }
[ "$(tipbg plain)" = 0 ] || fail "a tooltip is already on screen before hovering"
[ "$(tipbg hover)" != 0 ] || fail "hovering the Σ cell at ($x, 285) showed no tooltip"
xdotool mousemove 5 795
# G: the colour scale of the attention weights (the toast names it; the frame changes)
shot before_g 0.6
xdotool key --window "$WID" g
shot after_g 0.6
differ before_g after_g || fail "G changed nothing"
window_quit
echo "window_keys_test: ok"
INNER
window_test_run 120
