#!/bin/sh
# test_web.sh — make test-web: the browser build (build/web) driven in Debian's
# headless Chromium by test_web.mjs, against the desktop binary's answers for the
# same lesson: --dump, --describe, the exported frame of stage attn, the one-line
# error of a broken lesson, the backward view, compare and training of the induction lesson. Needs node and chromium (make web-deps installs them).
set -eu
B=${1:-build}
site=build/web
for t in node /usr/bin/chromium; do
    command -v "$t" >/dev/null 2>&1 || { echo "test_web: SKIP: needs $t (make web-deps)"; exit 77; }
done
[ -f "$site/attnviz.wasm" ] || { echo "test_web: no $site/attnviz.wasm: run make web first" >&2; exit 1; }
exp=$(mktemp -d)
trap 'rm -rf "$exp"' EXIT
L=lessons/arange-2x4x4.json
"$B/attnviz" --dump "$L" > "$exp/dump.json"
"$B/attnviz" --describe "$L" --size 1280x720 > "$exp/describe.json"
"$B/attnviz" --describe "$L" --model-view --head 1 --size 1280x720 > "$exp/describe-model.json"
"$B/attnviz" --export "$exp/frames" "$L" --stage attn --size 1280x720 >/dev/null
cp "$exp"/frames/*-attn.png "$exp/attn.png"
# E's animations in the page (export_web.mjs) against the desktop's at the page's size there
for fmt in gif mp4; do
    "$B/attnviz" --export "$exp/$fmt" --format $fmt --animate --size 640x360 "$L" >/dev/null || exit 1
done
# E 5's SVG frames in the page, byte for byte these; E 6, 2, 7's PDFs: the same text and pages
"$B/attnviz" --export "$exp/svg" --format svg --size 640x360 "$L" >/dev/null || exit 1
"$B/attnviz" --export "$exp/pdf" --format pdf --size 640x360 "$L" >/dev/null || exit 1
"$B/attnviz" --handout "$exp/handout.pdf" "$L" >/dev/null || exit 1
"$B/attnviz" --handout "$exp/worksheet.pdf" --worksheet "$L" >/dev/null || exit 1
# the page's stages are named after /attnviz/lessons/…: the desktop's dump of the same
# file names it by title only, so the bytes compare as they are
# a lesson large enough for the core's tiled kernels (a packed product, causal attn·V that
# stops at the last nonzero weight, the softmax's 8-wide exp): the page's core (plain
# WebAssembly) and the desktop's (AVX2 or AVX-512) must give the same bytes
# (a lesson from stdin to $exp/NAME.json, the desktop's --dump of it to $exp/NAME.dump.json)
lesson_and_dump() { cat > "$exp/$1.json" && "$B/attnviz" --dump "$exp/$1.json" > "$exp/$1.dump.json"; }
lesson_and_dump big <<'JSON' || exit 1
{"title": "kernels", "model": {"d_model": 48, "n_heads": 3, "residual_norm": true, "ffn_hidden": 64},
 "input": {"query": {"shape": [2, 40, 48], "arange": [-1, 1, 0.0005208333333333333]}},
 "mask": "causal", "weights": {"init": {"seed": 7}}}
JSON
# and one at the page's tile edges (tiles of 4 rows × 8 columns there, 6 × 16 on the desktop):
# 261 rows, heads of 10 columns, a feed-forward of 300 (its second product sums 300 > 256
# values: two blocks), causal attn·V over 261 keys (two blocks, each stopping at its tail)
lesson_and_dump edges <<'JSON' || exit 1
{"title": "edges", "model": {"d_model": 20, "n_heads": 2, "residual_norm": true, "ffn_hidden": 300},
 "input": {"query": {"shape": [1, 261, 20], "arange": [-1, 1, 0.0003831417624521073]}},
 "mask": "causal", "weights": {"init": {"seed": 11}}}
JSON
# the learning views (issue 38, 5; issue 41, 1) of the induction lesson: the backward view
# (Ctrl+B) as --describe --backward and --dump --backward, the compare view (Ctrl+D: head 0
# of layer 0 zeroed, then head 1 in Chinese) as --compare, and R's training for 20 steps as
# --train 20 with R's optimizer (app_train.h), the trained lesson saved and dumped
I=lessons/induction-heads.json
"$B/attnviz" --describe --backward --size 1280x720 "$I" > "$exp/bw-describe.json"
"$B/attnviz" --dump --backward "$I" > "$exp/bw-dump.json"
"$B/attnviz" --compare ablate:l0.h0 --dump "$I" > "$exp/cmp-dump.json"
"$B/attnviz" --compare ablate:l0.h0 --describe "$I" > "$exp/cmp-describe.json"
"$B/attnviz" --compare ablate:l0.h1 --describe --lang zh "$I" > "$exp/cmp-describe-zh.json"
spec=$(sed -n 's/^#define APP_TRAIN_SPEC "\([^"]*\)".*/\1/p' src/app/app_train.h)
[ -n "$spec" ] || { echo "test_web: no APP_TRAIN_SPEC in src/app/app_train.h" >&2; exit 1; }
"$B/attnviz" --train 20 --step "$spec" --save "$exp/train20.json" "$I" >/dev/null
"$B/attnviz" --dump "$exp/train20.json" > "$exp/train20.dump.json"
cp tests/bad/arange-mismatch.json "$exp/broken.json"
if "$B/attnviz" "$exp/broken.json" 2> "$exp/broken.err.native" >/dev/null; then
    echo "test_web: the broken lesson opened on the desktop" >&2; exit 1
fi
sed "s|$exp/broken.json|/tmp/drop/broken.json|g" "$exp/broken.err.native" > "$exp/broken.err"
# issue 40's acceptance lists the colour-vision simulation in test-web: the palettes under
# protanopia, deuteranopia and tritanopia, the cells' contrast (the page draws the same pixels)
"$B/tests/test_colorvision" > "$exp/colorvision.log" 2>&1 || { cat "$exp/colorvision.log" >&2; echo "test_web: test_colorvision failed" >&2; exit 1; }
echo "ok   the colour-vision simulation (test_colorvision): $(grep -c 'OK \]' "$exp/colorvision.log") tests passed"
# lazy_web.mjs: every shipped lesson's --dump (the page fetches each when opened), and the
# manifest the page lists them from
mkdir -p "$exp/lessons"
for f in lessons/*.json; do
    "$B/attnviz" --dump "$f" > "$exp/lessons/$(basename "$f" .json).dump.json" || { echo "test_web: --dump $f failed" >&2; exit 1; }
done
cp build/web-data/attnviz/lessons/lessons.manifest "$exp/" || exit 1
# and the largest shipped lesson (issue 39's largest model) with "x" typed after its text
largest=$(ls -S lessons/*.json | head -n 1)
text=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).input.text)' "$largest") || exit 1
"$B/attnviz" --dump --text "${text}x" "$largest" > "$exp/lessons/typed.dump.json" || { echo "test_web: --dump --text on $largest failed" >&2; exit 1; }
node_dir=$(sh tests/web/node_setup.sh) || exit 1
cp tests/web/test_web.mjs tests/web/a11y_web.mjs tests/web/touch_web.mjs tests/web/export_web.mjs tests/web/present_web.mjs tests/web/type_web.mjs \
   tests/web/lazy_web.mjs "$node_dir/"
node "$node_dir/test_web.mjs" "$site" "$exp"
