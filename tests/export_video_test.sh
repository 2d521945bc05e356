#!/bin/sh
# --format gif|mp4 --animate (issue 14): one file for the lesson (or --stage)
# with the right frame count and duration (ffprobe); each settled stage held 2 s or
# --hold SECONDS, --split a file a stage (issue 23), an MP4's hold one frame that lasts
# (issue 43); H.264 High in yuv420p for
# the MP4; the GIF's settled frames keep the PNG's colours (one palette for the
# whole animation, no dithering); every shipped lesson exports in both formats;
# SIGINT leaves no partial file; usage errors are one line.
. "$(dirname "$0")/test_lib.sh"
for tool in ffprobe ffmpeg identify compare; do
    command -v $tool >/dev/null 2>&1 || { echo "export video: no $tool (make deps installs it), skipped"; exit 77; }
done
lesson=lessons/arange-2x4x4.json
stages=$("$bin" --dump "$lesson" | grep -c '"name"')
per=$(awk 'BEGIN { printf "%d", 1.6 * 10 + 0.999 }')   # frames a transition at 10 fps
want=$((per * stages))

probe() { # file entry
    ffprobe -v error -count_frames -select_streams v:0 -show_entries "$2" -of default=nw=1:nk=1 "$1"
}
for fmt in gif mp4; do
    env -u DISPLAY "$bin" --export "$tmp/$fmt" --format $fmt --animate --fps 10 --size 640x360 --hold 0 "$lesson" >/dev/null 2>"$tmp/err" ||
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
env -u DISPLAY "$bin" --export "$tmp/one" --format mp4 --animate --fps 10 --size 640x360 --stage attn --hold 0 "$lesson" >/dev/null 2>&1
[ "$(probe "$tmp/one/frames.mp4" stream=nb_read_frames)" = "$per" ] || fail "--stage attn: not $per frames"

# holds (issue 23: a settled stage lasted 1/30 s, the lesson 20.8 s): by default each
# settled stage is held 2 s, --hold SECONDS another time; the whole lesson lasts
# stages × (transition + hold), and --split writes a file a stage, each one transition
# and its hold
duration() { ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1"; }
near() { awk -v d="$1" -v w="$2" 'BEGIN { exit !(d >= w - 0.05 && d <= w + 0.05) }'; }
for fmt in gif mp4; do
    env -u DISPLAY "$bin" --export "$tmp/hold-$fmt" --format $fmt --animate --fps 10 --size 320x180 "$lesson" >/dev/null 2>"$tmp/err" ||
        fail "$fmt with the default hold: $(cat "$tmp/err")"
    d=$(duration "$tmp/hold-$fmt/frames.$fmt")
    w=$(awk -v n="$stages" -v p="$per" 'BEGIN { print n * (p / 10 + 2) }')
    near "$d" "$w" || fail "$fmt with the default hold lasts $d s, expected $w s ($stages stages × ($per / 10 + 2 s))"
    grep -q '"frames": 21' "$tmp/hold-$fmt/frames.json" || fail "$fmt: frames.json does not say a settled frame lasts 21 frames"
done
# the MP4's holds as variable frame timing (issue 43): a held stage is one frame lasting
# its hold (encoded once), not the frame repeated; the last hold's frame comes again at its last tick (a converter that ignores
# the last frame's length, ffmpeg -vsync cfr, still gets the whole hold). Each frame is
# shown at frames.json's time; the stream's frame times add up to the file's length; a
# constant-rate copy has every tick
f="$tmp/hold-mp4/frames.mp4"
n=$(probe "$f" stream=nb_read_frames)
[ "$n" = "$((want + 1))" ] || fail "mp4 with holds: $n frames encoded, expected $((want + 1)) (each of the $want frames once, the last again at its end)"
sd=$(ffprobe -v error -select_streams v:0 -show_entries stream=duration -of default=nw=1:nk=1 "$f")
near "$sd" "$(duration "$f")" || fail "mp4 with holds: the stream's frame times add up to $sd s, the file lasts $(duration "$f") s"
ffprobe -v error -select_streams v:0 -show_entries frame=key_frame,pts_time -of csv=p=0 "$f" >"$tmp/vfr.csv"
python3 - "$tmp/hold-mp4/frames.json" "$tmp/vfr.csv" <<'PY' || fail "mp4 with holds: frame times (above)"
import json, sys
listed = json.load(open(sys.argv[1]))["frames"]
shown = [line.strip().split(",") for line in open(sys.argv[2]) if line.strip()]
bad = [f"frame {f['index']} shown at {s[1]} s, frames.json says {f['time']}" for f, s in zip(listed, shown)
       if abs(float(s[1]) - f["time"]) > 0.002]
for b in bad[:5]: print("  " + b)
sys.exit(1 if bad else 0)
PY
ticks=$(ffmpeg -v error -i "$f" -vsync cfr -r 10 -f framemd5 - | grep -vc '^#')
[ "$ticks" = "$((stages * (per + 20)))" ] || fail "mp4 with holds: a 10 fps constant-rate copy has $ticks frames, expected $((stages * (per + 20)))"
env -u DISPLAY "$bin" --export "$tmp/hold3" --format mp4 --animate --fps 10 --size 320x180 --hold 0.5 "$lesson" >/dev/null 2>&1
d=$(duration "$tmp/hold3/frames.mp4"); w=$(awk -v n="$stages" -v p="$per" 'BEGIN { print n * (p / 10 + 0.5) }')
near "$d" "$w" || fail "--hold 0.5: $d s, expected $w s"
env -u DISPLAY "$bin" --export "$tmp/split" --format gif --animate --fps 10 --size 320x180 --split "$lesson" >/dev/null 2>"$tmp/err" ||
    fail "--split: $(cat "$tmp/err")"
n=$(ls "$tmp/split" | grep -c '^[0-9][0-9][0-9][0-9]-.*\.gif$')
[ "$n" = "$stages" ] || fail "--split wrote $n GIFs, expected $stages"
d=$(duration "$tmp/split/0007-scores.gif"); w=$(awk -v p="$per" 'BEGIN { print p / 10 + 2 }')
near "$d" "$w" || fail "--split: 0007-scores.gif lasts $d s, expected $w s"
grep -q '"file": "0007-scores.gif", "index": 0,' "$tmp/split/frames.json" || fail "--split: frames.json does not list 0007-scores.gif from its frame 0"
one_line "--hold with PNG" 2 "--hold goes with --export --format gif or mp4" env -u DISPLAY "$bin" --export "$tmp/x" --hold 1 "$lesson"
one_line "--hold -1" 2 "--hold: expected SECONDS" env -u DISPLAY "$bin" --export "$tmp/x" --format mp4 --animate --hold -1 "$lesson"
[ -e "$tmp/x" ] && fail "a usage error made the directory"

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
