#!/bin/sh
# Soak test of the real window under Xvfb: for SOAK_SECONDS (default 60)
# xdotool sends random keys, clicks, wheel events, drags and window resizes
# (from tiny to 4K) to attnviz. Passes when the app keeps running and
# answering (a screenshot changes after a key), its memory stays flat (RSS is
# read in the same state after each third of the run; a leak grows in every
# interval, so growth over SOAK_MAX_GROWTH_KB (default 4096) in both intervals,
# or over 8× that overall, fails), and Esc still exits 0. Usage: sh tests/soak.sh [BUILD_DIR]   (make soak; CI runs it briefly)
# SOAK_PRESENTER=1: presenter mode (--presenter): two windows, the input goes to either,
# with the presenter keys (F5 . H X K Ctrl+L Ctrl+←/→) and drags on its scrub bar.
B=${1:-${BUILD:-build}}
SECS=${SOAK_SECONDS:-60}
MAXGROW=${SOAK_MAX_GROWTH_KB:-4096}
PRESENTER=${SOAK_PRESENTER:-0}
if ! command -v xvfb-run >/dev/null || ! command -v xdotool >/dev/null || ! command -v import >/dev/null; then
    echo "soak: needs xvfb-run, xdotool and ImageMagick (make deps installs them)"; exit 1
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/inner.sh" <<EOS
set -u
bin="$B/attnviz"; secs=$SECS; maxgrow=$MAXGROW; tmp="$tmp"; presenter=$PRESENTER
EOS
cat >>"$tmp/inner.sh" <<'EOS'
export ATTNVIZ_SAVE_DIR="$tmp/saves"; mkdir -p "$ATTNVIZ_SAVE_DIR"
mode=; [ "$presenter" = 1 ] && mode=--presenter
"$bin" $mode --size 1280x720 lessons/cross-attention-padding.json >"$tmp/app.log" 2>&1 &
pid=$!
wid=$(timeout 20 xdotool search --sync --onlyvisible --pid $pid 2>/dev/null | head -1)
[ -n "$wid" ] || { echo "soak: no window"; kill $pid; exit 1; }
pwid=
if [ "$presenter" = 1 ]; then # the audience window is wid, the presenter's pwid
    for _ in $(seq 1 50); do [ "$(xdotool search --onlyvisible --pid $pid | wc -l)" -ge 2 ] && break; sleep 0.2; done
    for w in $(xdotool search --onlyvisible --pid $pid); do
        if xdotool getwindowname "$w" | grep -q presenter; then pwid=$w; else wid=$w; fi
    done
    [ -n "$pwid" ] || { echo "soak: no presenter window"; kill $pid; exit 1; }
    xdotool windowmove "$pwid" 0 0
fi
rss() { awk '/VmRSS/ { print $2 }' /proc/$pid/status 2>/dev/null || echo 0; }
alive() { kill -0 $pid 2>/dev/null; }
keys="Right Left space Next Prior Home End p Tab bracketleft bracketright b plus minus v c question F1 1 2 3 4 5 6 7 8 9 l o Down Up Return s e 0"
[ "$presenter" = 1 ] && keys="$keys F5 period h x k ctrl+Right ctrl+Left ctrl+l"
set -- $keys; nkeys=$#
sizes="1280x720 640x400 480x320 1920x1080 3840x2160 800x600 1024x768"
rand() { awk -v s="$(od -An -N4 -tu4 /dev/urandom)" -v n="$1" 'BEGIN { srand(s); print int(rand() * n) }'; }
died() { echo "soak: the app died $1"; wait $pid; echo "soak: exit status $?"; cat "$tmp/app.log"; exit 1; }
# warm-up: every size (up to 4K), every stage, the overlays, then back to
# 1280x720 on the first stage: the memory baseline is taken in that state
# (every stage at every size fills the text and heatmap caches to their bounds)
for sz in $sizes; do
    xdotool windowsize "$wid" ${sz%x*} ${sz#*x}; sleep 0.3
    for i in $(seq 1 16); do xdotool key --window "$wid" Right; sleep 0.05; done
    xdotool key --window "$wid" question; sleep 0.2; xdotool key --window "$wid" question
    xdotool key --window "$wid" Home; sleep 0.2
done
xdotool windowsize "$wid" 1280 720; sleep 0.5
xdotool key --window "$wid" Home; sleep 2
alive || died "during the warm-up"

# One phase of random input for $1 seconds.
random_phase() {
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$1" ]; do
        alive || died "after $events events"
        r=$(rand 100)
        if [ "$r" -lt 55 ]; then
            i=$(( $(rand $nkeys) + 1 )); k=$(echo $keys | cut -d' ' -f$i)
            # never q here: it quits (the end of the test checks Esc and Q)
            kw=$wid; [ -n "$pwid" ] && [ "$(rand 2)" = 0 ] && kw=$pwid # keys in either window drive both
            xdotool key --window "$kw" "$k" 2>/dev/null
        elif [ "$r" -lt 70 ]; then
            xdotool mousemove --window "$wid" $(rand 1280) $(rand 720) click 1 2>/dev/null
        elif [ "$r" -lt 82 ]; then
            xdotool mousemove --window "$wid" $(rand 1280) $(rand 720) click $(( 4 + $(rand 2) )) 2>/dev/null
        elif [ "$r" -lt 86 ] && [ -n "$pwid" ]; then # the presenter window: its scrub bar, its frame
            xdotool mousemove --window "$pwid" $(rand 1280) $(rand 720) mousedown 1 \
                mousemove --window "$pwid" $(rand 1280) $(rand 720) mouseup 1 2>/dev/null
        elif [ "$r" -lt 90 ]; then
            xdotool mousemove --window "$wid" 400 400 mousedown 1 mousemove --window "$wid" $(rand 1280) $(rand 720) mouseup 1 2>/dev/null
        else
            i=$(( $(rand 7) + 1 )); sz=$(echo $sizes | cut -d' ' -f$i)
            xdotool windowsize "$wid" ${sz%x*} ${sz#*x} 2>/dev/null
        fi
        events=$((events + 1))
        sleep 0.02
    done
}
# The same state before each memory reading: 1280x720, first stage, and RSS
# steady (an export started by E has finished, the allocator has trimmed).
settle() {
    alive || died "after $events events"
    # the caches full to their bounds, as after the warm-up: every stage at 4K, then at
    # 1280x720 (what the bounded text and heatmap caches hold no longer depends on the
    # random sizes before; RSS then measures what stays, not what a cache happens to hold)
    # a click beside the heatmaps closes the what-if switches and leaves a selection or a
    # value being typed (which would take the arrow keys)
    xdotool mousemove --window "$wid" 640 140 click 1 2>/dev/null; sleep 0.2
    xdotool mousemove --window "$wid" 640 140 click 1 2>/dev/null; sleep 0.2
    # presenter mode: not black, no pins, no spotlight or laser, time running (F5 reopens
    # the presenter window if a random close shut it); the state before each reading
    if [ -n "$pwid" ]; then
        xdotool key --window "$wid" F5 x; sleep 0.3
    fi
    for sz in 3840x2160 1280x720; do
        xdotool windowsize "$wid" ${sz%x*} ${sz#*x}; sleep 0.3
        for i in $(seq 1 16); do xdotool key --window "$wid" Right; sleep 0.05; done
        xdotool key --window "$wid" Home; sleep 0.2
    done
    xdotool windowsize "$wid" 1280 720; sleep 0.5
    xdotool key --window "$wid" Home; sleep 2
    prev=0; cur=$(rss); n=0
    while [ "$cur" != "$prev" ] && [ $n -lt 16 ]; do sleep 0.5; prev=$cur; cur=$(rss); n=$((n + 1)); done
    alive || died "after $events events"
}

# Three equal phases of random input, a reading after each. Caches and
# allocator arenas fill up to their bounds, and transient states move RSS by a
# few MB either way; a leak grows in every interval. Fail when memory grows in
# both intervals, or by more than 8× the limit overall.
events=0
third=$(( (secs + 2) / 3 ))
random_phase $third; settle; r1=$(rss)
random_phase $third; settle; r2=$(rss)
random_phase $third; settle; r3=$(rss)
warm=$r1
end=$r3; grow=$((end - warm)); g1=$((r2 - r1)); g2=$((r3 - r2))
import -window root "$tmp/a.png"; xdotool key --window "$wid" Right; sleep 2.5; import -window root "$tmp/b.png"
if cmp -s "$tmp/a.png" "$tmp/b.png"; then
    xdotool key --window "$wid" Left; sleep 2.5; import -window root "$tmp/b.png"
fi
if cmp -s "$tmp/a.png" "$tmp/b.png"; then
    # the random input may have left the lesson picker open (O), which takes the arrow
    # keys: Esc closes it (and would quit were nothing open), then the keys must work
    xdotool key --window "$wid" Escape; sleep 1
    alive || { echo "soak: the screen no longer changes on a key (and nothing was open)"; exit 1; }
    import -window root "$tmp/a.png"; xdotool key --window "$wid" Right; sleep 2.5; import -window root "$tmp/b.png"
    cmp -s "$tmp/a.png" "$tmp/b.png" && { echo "soak: the screen no longer changes on a key"; exit 1; }
fi
# Esc closes an open overlay (the picker, the switches, a value being typed, a
# selection) and never quits; then Q quits (asking first when the random keys left an
# unsaved edit: D discards it)
for n in 1 2 3 4 5; do
    alive || { echo "soak: Esc quit"; exit 1; }
    xdotool key --window "$wid" Escape
    sleep 0.2
done
for k in q d; do
    alive || break
    xdotool key --window "$wid" "$k"
    for i in $(seq 1 20); do alive || break; sleep 0.1; done
done
if alive; then echo "soak: Q (then D) did not quit"; kill $pid; exit 1; fi
wait $pid; rc=$?
echo "soak: $events events in ${secs}s, RSS after each third $r1 -> $r2 -> $r3 KB (growth $g1 then $g2 KB; limit $maxgrow KB), exit $rc"
[ "$rc" -eq 0 ] || { echo "soak: exit status $rc"; cat "$tmp/app.log"; exit 1; }
if [ "$g1" -gt "$maxgrow" ] && [ "$g2" -gt "$maxgrow" ]; then echo "soak: memory grew in every interval"; exit 1; fi
[ "$grow" -le $((8 * maxgrow)) ] || { echo "soak: memory grew by $grow KB overall"; exit 1; }
EOS
timeout $((SECS + 120)) xvfb-run -a -s "-screen 0 3840x2160x24" sh "$tmp/inner.sh"
