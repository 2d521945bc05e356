#!/bin/sh
# --format gif|mp4 --animate (issue 14): one file for the lesson (or --stage)
# with the right frame count and duration (ffprobe), H.264 High in yuv420p for
# the MP4; the GIF's settled frames keep the PNG's colours (one palette for the
# whole animation, no dithering); every shipped lesson exports in both formats;
# SIGINT leaves no partial file; usage errors are one line.
. "$(dirname "$0")/test_lib.sh"
lesson=lessons/arange-2x4x4.json
stages=$("$bin" --dump "$lesson" | grep -c '"name"')
per=$(awk 'BEGIN { printf "%d", 1.6 * 10 + 0.999 }')   # frames a transition at 10 fps
want=$((per * stages))

probe() { # file entry
    ffprobe -v error -count_frames -select_streams v:0 -show_entries "$2" -of default=nw=1:nk=1 "$1"
}
for fmt in gif mp4; do
    env -u DISPLAY "$bin" --export "$tmp/$fmt" --format $fmt --animate --fps 10 --size 640x360 "$lesson" >/dev/null 2>"$tmp/err" ||
        fail "$fmt export exited $?: $(cat "$tmp/err")"
    [ -s "$tmp/err" ] && fail "$fmt export wrote to stderr: $(head -2 "$tmp/err")"
    f="$tmp/$fmt/frames.$fmt"
    [ -f "$f" ] || { fail "no frames.$fmt"; continue; }
    n=$(probe "$f" stream=nb_read_frames)
    [ "$n" = "$want" ] || fail "$fmt has $n frames, expected $want"
    listed=$(grep -c "\"file\": \"frames.$fmt\"" "$tmp/$fmt/frames.json")
    [ "$listed" = "$want" ] || fail "$fmt: frames.json lists $listed frames, expected $want"
    grep -q "\"format\": \"$fmt\"" "$tmp/$fmt/frames.json" && grep -q '"complete": true' "$tmp/$fmt/frames.json" ||
        fail "$fmt: frames.json format/complete"
    dur=$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$f")
    awk -v d="$dur" -v n="$want" 'BEGIN { exit !(d >= n / 10 - 0.02 && d <= n / 10 + 0.02) }' ||
        fail "$fmt lasts $dur s, expected $(awk -v n="$want" 'BEGIN { print n / 10 }') s"
    [ "$(probe "$f" stream=width)x$(probe "$f" stream=height)" = 640x360 ] || fail "$fmt: not 640x360"
    ls -a "$tmp/$fmt" | grep -q 'tmp-' && fail "$fmt: temporary file left"
done
[ "$(probe "$tmp/mp4/frames.mp4" stream=codec_name)" = h264 ] || fail "MP4 is not H.264"
[ "$(probe "$tmp/mp4/frames.mp4" stream=pix_fmt)" = yuv420p ] || fail "MP4 is not yuv420p (what slide software plays)"
[ "$(probe "$tmp/mp4/frames.mp4" stream=profile)" = High ] || fail "MP4 is not H.264 High"
# GIF frame delays: 10 fps = 10 cs each (ImageMagick reads them)
delays=$(identify -format '%T\n' "$tmp/gif/frames.gif" | sort -u | tr '\n' ' ')
[ "$delays" = "10 " ] || fail "GIF delays are '$delays', expected 10 cs"

# a settled frame of the GIF and of the MP4 against the PNG export of it
env -u DISPLAY "$bin" --export "$tmp/png" --animate --fps 10 --size 640x360 "$lesson" >/dev/null 2>&1
k=$((per * 8 - 1))   # the last frame of the 8th stage (scores), settled
ref=$(ls "$tmp/png" | grep "^$(printf %04d $k)-")
for fmt in gif mp4; do
    ffmpeg -v error -i "$tmp/$fmt/frames.$fmt" -vf "select=eq(n\,$k)" -vframes 1 -y "$tmp/f-$fmt.png" || fail "cannot decode frame $k of the $fmt"
done
# GIF: pixels differ only at text edges (3 % fuzz: a cell's colour is exact)
ae=$(compare -metric AE -fuzz 3% "$tmp/f-gif.png" "$tmp/png/$ref" null: 2>&1)
[ "${ae%% *}" -lt 4600 ] 2>/dev/null || fail "GIF frame $k differs from the PNG in $ae of 230400 pixels"
psnr=$(compare -metric PSNR "$tmp/f-mp4.png" "$tmp/png/$ref" null: 2>&1)
awk -v p="${psnr%% *}" 'BEGIN { exit !(p > 30) }' || fail "MP4 frame $k: PSNR $psnr dB against the PNG"

# --stage: one transition
env -u DISPLAY "$bin" --export "$tmp/one" --format mp4 --animate --fps 10 --size 640x360 --stage attn "$lesson" >/dev/null 2>&1
[ "$(probe "$tmp/one/frames.mp4" stream=nb_read_frames)" = "$per" ] || fail "--stage attn: not $per frames"

# every shipped lesson (make test: a sample, shipped_lessons), both formats (5 fps,
# small: the frames are what is checked above)
mkdir "$tmp/l"
for l in $(shipped_lessons); do
    for fmt in gif mp4; do
        env -u DISPLAY "$bin" --export "$tmp/l/$(basename "$l" .json)-$fmt" --format $fmt --animate --fps 5 --size 480x270 "$l" \
            >/dev/null 2>"$tmp/err" || fail "$l $fmt: exit $?: $(cat "$tmp/err")"
    done
done

# interrupted: no partial file
interrupt_export "$tmp/int" 0.5 --format gif --animate --fps 60 "$lesson"
[ "$rc" -eq 130 ] || fail "interrupted GIF export exited $rc, expected 130"
[ -e "$tmp/int/frames.gif" ] && fail "an interrupted export left frames.gif"
ls -a "$tmp/int" | grep -q 'tmp-' && fail "an interrupted export left a temporary file"
grep -q '"file"' "$tmp/int/frames.json" && fail "interrupted: frames.json lists frames of a file that is not there"

# usage and size errors: one line
env -u DISPLAY "$bin" --export "$tmp/x" --format mp4 "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'needs --animate' "$tmp/err" || fail "mp4 without --animate: exit $rc: $(cat "$tmp/err")"
env -u DISPLAY "$bin" --export "$tmp/odd" --format mp4 --animate --size 641x360 "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'even width and height' "$tmp/err" || fail "odd mp4 size: exit $rc: $(cat "$tmp/err")"
[ -e "$tmp/odd" ] && fail "odd mp4 size made the directory"

[ "$fails" -eq 0 ] && echo "export video: ok"
[ "$fails" -eq 0 ]
